/**
 * `StdioServer`: the reference host's `--stdio` transport, the server it
 * starts in a process group of its own and ends with all it started, its
 * lines each way bounded, its stderr passed on as `[server] …`.
 *
 * @module
 */

import {
  deserializeMessage,
  type JSONRPCMessage,
  serializeMessage,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { getDefaultEnvironment } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { boundedLines, within } from "../../../main.ts";
import {
  MAX_MESSAGE_BYTES,
  printable,
  say,
  STOP_GRACE_MS,
} from "./host_bounds.ts";

/**
 * The `--stdio` server, one JSON-RPC message a line each way (a line over
 * `MAX_MESSAGE_BYTES` is not read), its stderr passed on as `[server] …`
 * lines. It runs in a process group of its own, so that `close` ends it
 * and all it started: stdin closed, then SIGTERM, then SIGKILL to the
 * group, `STOP_GRACE_MS` apart. (The SDK's `StdioClientTransport` signals
 * the server alone, and under Deno its SIGKILL after a SIGTERM is never
 * sent: a server that ignores both outlives the host.)
 */
export class StdioServer implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #child?: Deno.ChildProcess;
  #stdin?: WritableStreamDefaultWriter<Uint8Array>;
  #stderrPassed?: Promise<void>;
  #closing?: Promise<void>;

  constructor(private readonly command: string[]) {}

  start(): Promise<void> {
    const [program, ...args] = this.command;
    this.#child = new Deno.Command(program, {
      args,
      // The SDK's few safe variables (HOME, PATH, …), never the key.
      clearEnv: true,
      env: getDefaultEnvironment(),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#read(this.#child.stdout).catch((error) => this.onerror?.(error));
    this.#stderrPassed = this.#passOn(this.#child.stderr).catch(() => {});
    this.#child.status.then(() => this.onclose?.());
    return Promise.resolve();
  }

  async #read(stdout: ReadableStream<Uint8Array>) {
    for await (const read of boundedLines(stdout, MAX_MESSAGE_BYTES)) {
      if ("tooLong" in read) {
        say(
          `the server sent a message over ${MAX_MESSAGE_BYTES} bytes: not read`,
        );
        continue;
      }
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(read.line);
      } catch {
        say(`the server printed a line that is not JSON-RPC: ${read.line}`);
        continue;
      }
      this.onmessage?.(message);
    }
  }

  async #passOn(stderr: ReadableStream<Uint8Array>) {
    for await (const read of boundedLines(stderr, MAX_MESSAGE_BYTES)) {
      console.error(
        "line" in read
          ? `[server] ${printable(read.line)}`
          : `[server] (a line of ${read.tooLong} bytes, not shown)`,
      );
    }
  }

  async send(message: JSONRPCMessage) {
    if (!this.#stdin) throw new Error("the server is not running");
    await this.#stdin.write(
      new TextEncoder().encode(serializeMessage(message)),
    );
  }

  /** Ends the server, however often it is called: EOF, then `stop`. */
  close(): Promise<void> {
    return this.#closing ??= this.#end();
  }

  async #end() {
    if (!this.#child) return;
    // Not awaited: a server that reads nothing would hold it for ever.
    this.#stdin?.close().catch(() => {});
    if (await within(this.#child.status, STOP_GRACE_MS) === "late") {
      await this.stop("SIGTERM");
    }
    // What the server started and left behind is in its group.
    this.#signal("SIGKILL");
    // Its last lines (the lab's verdict) are printed before the host ends.
    await within(this.#stderrPassed!, STOP_GRACE_MS);
  }

  /** `signal` to the server's group, then SIGKILL if it has not exited. */
  async stop(signal: Deno.Signal) {
    if (!this.#child) return;
    this.#signal(signal);
    if (await within(this.#child.status, STOP_GRACE_MS) === "late") {
      this.#signal("SIGKILL");
    }
    await this.#child.status;
  }

  /** A signal to the server's process group (Windows has none: to it). */
  #signal(signal: Deno.Signal) {
    try {
      if (Deno.build.os === "windows") this.#child?.kill(signal);
      else if (this.#child) Deno.kill(-this.#child.pid, signal);
    } catch {
      // Gone already.
    }
  }
}
