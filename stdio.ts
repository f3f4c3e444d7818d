/**
 * The lab over stdio: one client over stdin/stdout, in either era, with the
 * same state, evidence and verdicts as over HTTP. `main.ts` loads this file
 * only with `--stdio`, as it loads `bus.ts` only with `--bus`, so a
 * `main.ts` copied alone still serves HTTP.
 *
 * ```sh
 * deno run -A main.ts --stdio --report-file /tmp/lab-report.md
 * ```
 *
 * @module
 */

import {
  CLIENT_INFO_META_KEY,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type RequestId,
  type Server,
  SUBSCRIPTION_ID_META_KEY,
  type Transport,
  type TransportSendOptions,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { serveStdio } from "npm:@modelcontextprotocol/server@2.4.0/stdio";
import {
  acknowledgement,
  atLifetime,
  boundedLines,
  buildLabServer,
  type ChangeNotification,
  createLabContext,
  type Delivery,
  type Era,
  errorAnswer,
  LAB_VERSION,
  type LabClient,
  type LabConfig,
  type LabContext,
  labLine,
  type ListenFilter,
  listenResult,
  ListenSet,
  type ListenStream,
  logRefusal,
  logSdkErrors,
  MAX_BODY_BYTES,
  modernIdentity,
  modernMessageSchema,
  nameClient,
  narrowListenFilter,
  newLabClient,
  parseMessage,
  recordListen,
  type Refusal,
  refused,
  REVIEW_URI,
  SDK_VERSION,
  sendLegacyChange,
  sendThrough,
  shutdownSignalled,
  VERSIONS,
  within,
} from "./main.ts";

// ---------------------------------------------------------------------------
// Serving stdio: one client over stdin/stdout
// ---------------------------------------------------------------------------

/** Requests or replies in waiting at which the lab stops reading stdin. */
const STDIO_BACKLOG = 256;

/**
 * The lab's stdio wire: one JSON-RPC message per line. A bad line (a line
 * over `MAX_BODY_BYTES` is never held) gets an error with id null, logged
 * through `refused`. Input waits at `STDIO_BACKLOG`, so a client that never
 * reads cannot grow the lab; a closed stdout is `outputClosed`, then EOF.
 */
class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #encoder = new TextEncoder();
  #closed = false;
  /** Requests read and not answered yet, and replies not written yet. */
  #backlog = 0;
  /** Listens read and not ended: they count apart from the backlog. */
  #listens = new Set<RequestId>();
  #room?: () => void;
  #outputGone = false;

  constructor(
    private readonly input: ReadableStream<Uint8Array>,
    output: WritableStream<Uint8Array>,
    private readonly refused: (refusal: Refusal) => void,
    private readonly outputClosed: (message: string) => void = () => {},
  ) {
    this.#writer = output.getWriter();
  }

  start(): Promise<void> {
    this.#read();
    return Promise.resolve();
  }

  async #read() {
    try {
      for await (const read of boundedLines(this.input, MAX_BODY_BYTES)) {
        if (this.#closed) break;
        const parsed = "line" in read ? parseMessage(read.line) : refused(
          413,
          -32700,
          `Parse error: the line is ${read.tooLong} bytes, over the ${MAX_BODY_BYTES}-byte limit`,
        );
        if ("message" in parsed) {
          const message = parsed.message as JSONRPCMessage;
          // A listen is answered when it ends: an open stream, not a wait.
          if (isJSONRPCRequest(message)) {
            if (message.method === "subscriptions/listen") {
              this.#listens.add(message.id);
            } else this.#backlog++;
          }
          this.onmessage?.(message);
        } else {
          this.refused(parsed.refusal);
          this.#write(errorAnswer(null, parsed.refusal));
        }
        await this.#until(() => this.#backlog < STDIO_BACKLOG || this.#closed);
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(error as Error);
    }
    await this.close();
  }

  async #write(message: unknown): Promise<void> {
    if (this.#outputGone) return;
    const line = this.#encoder.encode(`${JSON.stringify(message)}\n`);
    this.#backlog++;
    try {
      await this.#writer.write(line);
    } catch (error) {
      if (this.#outputGone) return;
      this.#outputGone = true;
      this.outputClosed((error as Error).message);
      this.close();
    } finally {
      this.#backlog--;
      this.#room?.();
    }
  }

  /** Settles once `done()`, asked again as each reply goes out. */
  async #until(done: () => boolean) {
    while (!done()) await new Promise<void>((resolve) => this.#room = resolve);
  }

  send(message: JSONRPCMessage): Promise<void> {
    // A reply settles the request it answers (a listen's, its stream).
    if (
      "id" in message && ("result" in message || "error" in message) &&
      !this.#listens.delete(message.id as RequestId)
    ) {
      this.#backlog = Math.max(0, this.#backlog - 1);
    }
    return this.#write(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#room?.();
    // Requests read are answered, replies written, before the SDK hears of
    // the end (it drops answers then): a moment, as the client may not read.
    const answered = () => this.#backlog === 0 || this.#outputGone;
    await within(this.#until(answered), 1000);
    this.#outputGone = true;
    this.#writer.releaseLock();
    this.onclose?.();
  }
}

/** The `_meta` object of a message's params, if it has one. */
const metaOf = (message: JSONRPCMessage) =>
  modernMessageSchema.safeParse(message).data?.params?._meta;

/**
 * Serves one client over stdin/stdout, either era, logging to `sink`; resolves
 * with the exit status once the client has gone and the report is written.
 */
export async function serveLabOverStdio(config: LabConfig): Promise<number> {
  // stdout carries the protocol, so every log line goes to stderr.
  const sink = (line: string) => console.error(line);
  labLine(
    config,
    `[lab] stdio version=${LAB_VERSION} sdk=${SDK_VERSION} deno=${Deno.version.deno} resource=${REVIEW_URI}`,
    { transport: "stdio", ...VERSIONS },
    sink,
  );
  const context = createLabContext(config, sink, "stdio");
  const transport = new LineTransport(
    Deno.stdin.readable,
    Deno.stdout.writable,
    (refusal) => logRefusal(context.log, refusal),
    (message) =>
      context.log.write("warn", {
        tag: "stdio/closed",
        words: "the client closed its end of stdout: no more replies",
        fields: { message },
      }),
  );
  const served = new StdioLab(context, transport).serve();
  // A signal ends the client as its EOF would, report file written.
  const signalled = shutdownSignalled(config, sink, context.gate.due);
  const ending = await Promise.race([
    served.then(() => null),
    signalled.ending,
  ]);
  if (ending !== null) {
    labLine(config, `[lab] ${ending.why}: closing stdio`, {
      ...ending.fields,
      closing: true,
    }, sink);
    await transport.close();
    await served;
  }
  signalled.remove();
  context.gate.stop();
  // The client's verdict has been printed; its report must reach the file.
  await context.reportFile?.flush();
  return context.gate.status(context.state, sink, context.caveats());
}

/**
 * The one client of a stdio connection, as a transport around its wire: the
 * SDK's stdio entry serves listens itself, so the lab watches messages here.
 */
class StdioLab implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #client: LabClient;
  #server?: Server;
  #listens: ListenSet;
  /** Listens asked for, by request id; `stream` once acknowledged. */
  #asked = new Map<RequestId, ListenFilter & { stream?: ListenStream }>();
  #gone = Promise.withResolvers<void>();

  constructor(
    private readonly ctx: LabContext,
    private readonly wire: Transport,
  ) {
    this.#listens = new ListenSet(ctx.state, ctx.config);
    this.#client = ctx.state.track(newLabClient({
      id: "stdio",
      era: "2025",
      transport: "stdio",
      protocolVersion: "unknown",
    }));
    this.#client.deliver = (notification) => this.#deliver(notification);
    wire.onmessage = (message, extra) => {
      const passed = this.#inbound(message);
      if (passed) this.onmessage?.(passed, extra);
    };
    wire.onerror = (error) => this.onerror?.(error);
    wire.onclose = async () => {
      await ctx.state.endClient(this.#client, "closed");
      this.#gone.resolve();
      this.onclose?.();
    };
  }

  /** Serves the client; resolves once it has gone; the SDK caps listens. */
  serve(): Promise<void> {
    const { era, maxSessions, maxWatches } = this.ctx.config;
    // A 2025-only lab is the SDK's 2025 server alone, as such servers are.
    if (era === "2025") this.#buildServer("legacy").connect(this);
    else {
      serveStdio((context) => this.#buildServer(context.era), {
        transport: this,
        legacy: era === "2026-07-28" ? "reject" : "serve",
        maxSubscriptions: Math.min(maxSessions, maxWatches ?? Infinity),
        onerror: logSdkErrors(this.ctx.log),
      });
    }
    return this.#gone.promise;
  }

  start(): Promise<void> {
    return this.wire.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions) {
    return this.wire.send(this.#outbound(message), options);
  }

  close(): Promise<void> {
    return this.wire.close();
  }

  #buildServer(sdkEra: "modern" | "legacy"): Server {
    const client = this.#client;
    const era: Era = sdkEra === "modern" ? "2026-07-28" : "2025";
    client.era = era;
    const server = buildLabServer(this.ctx, client, era);
    if (era === "2025") {
      server.oninitialized = () => {
        nameClient(client, server.getClientVersion());
        client.protocolVersion = server.getNegotiatedProtocolVersion() ??
          client.protocolVersion;
        this.ctx.state.connected(client);
      };
    }
    this.#server = server;
    return server;
  }

  async #deliver(notification: ChangeNotification): Promise<Delivery> {
    const server = this.#server;
    if (!server) return { delivered: false, reason: "no server yet" };
    const { config } = this.ctx;
    const client = this.#client;
    // The SDK's entry routes these to listens; `#outbound` adds inline text.
    if (client.era === "2026-07-28") {
      return await this.#listens.deliver(
        client,
        notification,
        () => sendThrough(server, notification),
      );
    }
    const inline = await sendLegacyChange(server, notification, config, client);
    return { delivered: true, inline };
  }

  /** Names the client, sees discover and listens, narrows listen filters. */
  #inbound(message: JSONRPCMessage): JSONRPCMessage | null {
    if (this.ctx.config.era === "2025") return message;
    const client = this.#client;
    const meta = metaOf(message);
    if (meta?.[CLIENT_INFO_META_KEY]) {
      const identity = modernIdentity(meta);
      nameClient(client, identity.clientInfo);
      client.protocolVersion = identity.protocolVersion;
    }
    const request = isJSONRPCRequest(message) ? message : undefined;
    if (request?.method === "server/discover") {
      client.era = "2026-07-28";
      this.ctx.state.connected(client);
    }
    if (request?.method === "subscriptions/listen") {
      const listen = narrowListenFilter(this.ctx.config, request);
      if (listen && "refusal" in listen) {
        // Answered here: the SDK never sees a filter the lab refuses.
        const refusal = { ...listen.refusal, status: 200 }; // no HTTP here
        this.#refused(refusal);
        this.wire.send(errorAnswer(request.id, refusal));
        return null;
      }
      if (listen) {
        this.#asked.set(request.id, listen.filter);
        return { ...request, params: listen.params };
      }
    }
    const notification = isJSONRPCNotification(message) ? message : undefined;
    if (notification?.method === "notifications/cancelled") {
      const id = (notification.params as { requestId?: RequestId }).requestId;
      if (id !== undefined) this.#endListen(id);
    }
    return message;
  }

  /** A listen opens when acknowledged, ends with its response; adds inline. */
  #outbound(message: JSONRPCMessage): JSONRPCMessage {
    const refused = isJSONRPCErrorResponse(message) ? message.error : null;
    // -32022 (unsupported version): the SDK's entry refused a 2025 request.
    if (refused?.code === -32022 && this.ctx.config.era === "2026-07-28") {
      this.#refused({ status: 200, ...refused });
    }
    const id = metaOf(message)?.[SUBSCRIPTION_ID_META_KEY] as RequestId;
    const notification = isJSONRPCNotification(message) ? message : undefined;
    if (notification?.method === "notifications/resources/updated") {
      const stream = this.#asked.get(id)?.stream;
      const inline = stream && this.#listens.inlineOn(this.#client, stream);
      const params = { ...notification.params, ...inline?.params };
      return inline ? { ...notification, params } : message;
    }
    if (notification?.method === "notifications/subscriptions/acknowledged") {
      const listen = this.#asked.get(id);
      if (listen && !listen.stream) {
        recordListen(this.ctx.state, this.#client, listen);
        const stream: ListenStream = listen.stream = { ...listen };
        this.#listens.open(this.#client, stream);
        // At its lifetime, the spec's deliberate close: the SDK's entry forgets
        // a listen only on a `notifications/cancelled`, handed to it here so
        // nothing more is routed to it; then the listen's result.
        atLifetime(this.ctx.config, () => {
          if (this.#asked.get(id)?.stream !== stream) return;
          stream.end = "graceful";
          const method = "notifications/cancelled";
          this.onmessage?.({
            jsonrpc: "2.0",
            method,
            params: { requestId: id },
          });
          this.send(listenResult(id));
        });
      }
      return acknowledgement(this.ctx.config, notification);
    } else if ("id" in message && this.#asked.has(message.id as RequestId)) {
      // The listen's own response (an error, or the graceful end).
      if (isJSONRPCErrorResponse(message)) {
        this.#refused({ status: 200, ...message.error });
      }
      this.#endListen(message.id as RequestId);
    }
    return message;
  }

  /** A refusal of this client: logged, and kept as its conduct. */
  #refused(refusal: Refusal) {
    logRefusal(this.ctx.log, refusal, undefined, this.#client, this.ctx.state);
  }

  #endListen(id: RequestId) {
    const stream = this.#asked.get(id)?.stream;
    this.#asked.delete(id);
    if (stream) this.#listens.close(this.#client, stream);
  }
}
