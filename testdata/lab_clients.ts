/**
 * What the lab's tests (`main_test.ts`, `main_<area>_test.ts`,
 * `bus_test.ts`, `launch_test.ts`) share: waiting and polling, raw JSON-RPC
 * requests in both eras, the MCP SDK v2 client and what the lab recorded of
 * it, and the lab as a command, over HTTP or stdio. What one test file alone
 * uses stays in that file.
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test;
 * nothing but tests imports it.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  Client,
  type ClientOptions,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { type ClientReport, type Lab, REVIEW_URI } from "../main.ts";
import { denoChildEnv } from "./lab.ts";
import { MAIN_PATH } from "../launch.ts";

// ---------------------------------------------------------------------------
// Waiting, polling and the environment
// ---------------------------------------------------------------------------

/** Resolves after `ms`. */
export function delay(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `promise`, or a rejection naming `what` after `ms`; no timer left behind. */
export async function within<T>(promise: Promise<T>, ms: number, what: string) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls until `check` holds (the lab records some steps after answering). */
export async function eventually(check: () => boolean, what: string) {
  // Up to 10 s: a lab in a child process under a loaded machine (the whole
  // suite at once) may take seconds; a check that holds returns at once.
  const until = Date.now() + 10_000;
  while (!check() && Date.now() < until) await delay(10);
  assert.ok(check(), what);
}

/** Runs `task` `count` times with at most `width` at once. */
export async function inParallel(
  count: number,
  width: number,
  task: (index: number) => Promise<void>,
) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/**
 * Runs `use`, then puts the environment variables `names` back as they
 * were (tests in a file run one at a time).
 */
export async function keepingVariables(
  names: string[],
  use: () => Promise<void>,
) {
  const saved = names.map((name) => [name, Deno.env.get(name)] as const);
  try {
    await use();
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
}

/**
 * V8's full collection: `gc` when `--v8-flags=--expose-gc` gave it, else
 * exposed here through the flag's runtime switch; undefined where neither
 * works, and the heap cannot be measured without garbage.
 */
export function garbageCollector(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  const gc: unknown = runInNewContext("gc");
  return typeof gc === "function" ? () => gc() : undefined;
}

// ---------------------------------------------------------------------------
// Raw requests in both eras
// ---------------------------------------------------------------------------

/**
 * Reads the JSON-RPC answer from a response: its JSON body, or the first
 * `data:` line of an SSE body. A stream that stays open without one (a GET
 * stream) is let go after `waitMs`, with no answer; an empty body has none.
 */
export async function readJsonRpcAnswer(response: Response, waitMs = 1_000) {
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith("text/event-stream") || !response.body) {
    const text = await response.text();
    return text ? JSON.parse(text) : undefined;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream())
    .getReader();
  let buffered = "";
  const timeout = setTimeout(() => reader.cancel(), waitMs);
  try {
    while (!/^data: .*\n/m.test(buffered)) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += value;
    }
  } finally {
    clearTimeout(timeout);
    await reader.cancel().catch(() => {});
  }
  const data = buffered.match(/^data: (.*)$/m);
  return data ? JSON.parse(data[1]) : undefined;
}

/** A JSON-RPC POST's headers: a JSON body, the answer as JSON or SSE. */
export const JSON_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** Posts a body as a JSON-RPC client would, with `headers` added or replaced. */
export function rawPost(
  url: URL,
  body: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body,
  });
}

/** Posts one JSON-RPC message and reads its answer. */
export async function postJsonRpc(
  url: URL,
  message: unknown,
  headers: Record<string, string> = {},
) {
  const response = await rawPost(url, JSON.stringify(message), headers);
  return {
    status: response.status,
    headers: response.headers,
    json: await readJsonRpcAnswer(response),
  };
}

/** The `_meta` envelope a 2026-07-28 client puts on every request. */
export function modernMeta(name: string) {
  return {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": { name, version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {},
  };
}

/** Who sends a 2026-07-28 request, and the headers it sets its own way. */
interface ModernOptions {
  id?: number | string;
  client?: string;
  /** Added to the headers the era requires, or replacing them. */
  headers?: Record<string, string>;
}

/**
 * A 2026-07-28 request: its body, with the `_meta` envelope, and the headers
 * that era requires (`Mcp-Name` too when the params name a URI).
 */
export function modernRequest(
  method: string,
  params: Record<string, unknown>,
  { id = 1, client = "raw-modern", headers = {} }: ModernOptions = {},
) {
  const required: Record<string, string> = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": method,
  };
  if (typeof params.uri === "string") required["mcp-name"] = params.uri;
  return {
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: { ...params, _meta: modernMeta(client) },
    }),
    headers: { ...required, ...headers },
  };
}

/** Posts a 2026-07-28 request built by `modernRequest`. */
export function postModern(
  url: URL,
  method: string,
  params: Record<string, unknown>,
  options?: ModernOptions,
): Promise<Response> {
  const { body, headers } = modernRequest(method, params, options);
  return rawPost(url, body, headers);
}

/** What logs and reports call a 2025 session: its id's SHA-256, 8 digits. */
export function handleOf(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("hex").slice(0, 8);
}

/** A 2025 `initialize` request from `clientInfo`. */
export function initializeMessage(
  clientInfo: { name: string; version: string },
  protocolVersion = "2025-06-18",
) {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo },
  };
}

/** Opens a raw 2025 session and returns its id. */
export async function openRawSession(
  url: URL,
  protocolVersion = "2025-06-18",
  name = "raw-legacy",
) {
  const initialize = await postJsonRpc(
    url,
    initializeMessage({ name, version: "0.0.1" }, protocolVersion),
  );
  assert.equal(initialize.status, 200);
  const sessionId = initialize.headers.get("mcp-session-id");
  assert.ok(sessionId);
  const initialized = await postJsonRpc(
    url,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { "mcp-session-id": sessionId },
  );
  assert.equal(initialized.status, 202);
  return sessionId;
}

/** Reads the lab's resource in a raw 2025 session. */
export function rawRead(url: URL, sessionId: string) {
  return postJsonRpc(url, {
    jsonrpc: "2.0",
    id: 2,
    method: "resources/read",
    params: { uri: REVIEW_URI },
  }, { "mcp-session-id": sessionId });
}

/** Subscribes a raw 2025 session to the lab's resource. */
export function rawSubscribe(url: URL, sessionId: string): Promise<Response> {
  return rawPost(
    url,
    JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "resources/subscribe",
      params: { uri: REVIEW_URI },
    }),
    { "mcp-session-id": sessionId },
  );
}

// ---------------------------------------------------------------------------
// SDK clients, and what the lab recorded of them
// ---------------------------------------------------------------------------

type Negotiation = NonNullable<ClientOptions["versionNegotiation"]>;

/** An SDK v2 client connected to `url`, legacy (2025) or `auto` (2026-07-28). */
export async function connectClient(
  url: URL,
  name: string,
  mode: Negotiation["mode"] = "legacy",
) {
  const client = new Client({ name, version: "1.0.0" }, {
    versionNegotiation: { mode },
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  return Object.assign(client, {
    [Symbol.asyncDispose]: () => client.close(),
  });
}

/**
 * Subscribes the client's era's way (subscribe in 2025, a listen in
 * 2026-07-28), waits for the update, and ends the listen.
 */
export async function subscribeUntilUpdated(client: Client) {
  const updated = nextResourceUpdate(client);
  if (client.getNegotiatedProtocolVersion() === "2026-07-28") {
    const listen = await client.listen({ resourceSubscriptions: [REVIEW_URI] });
    assert.equal(await updated, REVIEW_URI);
    await listen.close();
  } else {
    await client.subscribeResource({ uri: REVIEW_URI });
    assert.equal(await updated, REVIEW_URI);
  }
}

/** Resolves with the URI of the next `notifications/resources/updated`. */
export function nextResourceUpdate(client: Client): Promise<string> {
  return new Promise((resolve) => {
    client.setNotificationHandler(
      "notifications/resources/updated",
      (notification) => resolve(notification.params.uri),
    );
  });
}

/** The lab's resource as the client reads it: its one text. */
export async function readReview(client: Client): Promise<string> {
  const result = await client.readResource({ uri: REVIEW_URI });
  assert.equal(result.contents.length, 1);
  const [content] = result.contents;
  assert.equal(content.mimeType, "text/plain");
  assert.ok("text" in content);
  return content.text;
}

/** The report's entry for the client named `name`, which must be there. */
export function reportFor(lab: { lab: Lab }, name: string): ClientReport {
  const entry = lab.lab.report().clients.find((client) => client.name === name);
  assert.ok(entry, `no report entry for ${name}`);
  return entry;
}

/** Asserts that each pattern matches some line, in this order. */
export function assertLinesInOrder(lines: string[], patterns: string[]) {
  let from = 0;
  for (const pattern of patterns) {
    const at = lines.findIndex((line, index) =>
      index >= from && line.includes(pattern)
    );
    assert.ok(
      at >= 0,
      `no line containing ${JSON.stringify(pattern)} after line ${from}:\n${
        lines.join("\n")
      }`,
    );
    from = at + 1;
  }
}

/**
 * Checks a mermaid block is a well-formed sequence diagram: declared
 * participants, and only arrows and notes between them.
 */
export function assertSequenceDiagram(block: string, actors = ["C", "L"]) {
  const [first, ...lines] = block.trim().split("\n");
  assert.equal(first, "sequenceDiagram");
  const participants = new Set<string>();
  for (const line of lines) {
    // Labels may hold mermaid's entity codes (#59; for ";"), never a bare ; or #.
    const participant = line.match(
      /^ {4}participant (\w+) as (?:[^;#]|#\d+;)+$/,
    );
    if (participant) {
      participants.add(participant[1]);
      continue;
    }
    const arrow = line.match(
      /^ {4}(\w+)(->>|-->>|--x)(\w+): (?:[^;#]|#\d+;)+$/,
    );
    const note = line.match(
      /^ {4}Note over (\w+)(?:,(\w+))?: (?:[^;#]|#\d+;)+$/,
    );
    assert.ok(arrow || note, `not a sequence diagram line: ${line}`);
    for (const actor of arrow ? [arrow[1], arrow[3]] : [note![1], note![2]]) {
      if (actor) assert.ok(participants.has(actor), `undeclared ${actor}`);
    }
  }
  assert.deepEqual([...participants], actors);
}

// ---------------------------------------------------------------------------
// The lab as a command, over HTTP and over stdio
// ---------------------------------------------------------------------------

/** `deno run -A main.ts ARGS` (or `-P`): stdin closed, output piped. */
export function labCommand(
  args: string[],
  env: Record<string, string> = {},
  permissions: "-A" | "-P" = "-A",
) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", permissions, MAIN_PATH, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** Lines of a child's stdout, as they come. */
export async function* linesOf(stream: ReadableStream<Uint8Array>) {
  let buffered = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    const parts = buffered.split("\n");
    buffered = parts.pop()!;
    yield* parts;
  }
}

/**
 * The lab as a child process on a free port (`deno run -A main.ts`, after
 * `wrapper` when given: a program that ends by running its arguments),
 * resolved once it listens. `lines` holds its stdout as it comes; `read`
 * settles when stdout ends, `stderr` with all it printed there.
 */
export async function spawnLabProcess(
  env: Record<string, string> = {},
  wrapper: string[] = [],
) {
  const [program, ...args] = [
    ...wrapper,
    Deno.execPath(),
    "run",
    "-A",
    MAIN_PATH,
  ];
  const child = new Deno.Command(program, {
    args,
    env: { MCP_TEST_PORT: "0", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const listening = Promise.withResolvers<string>();
  const read = (async () => {
    for await (const line of linesOf(child.stdout)) {
      lines.push(line);
      // The banner's line, in text or (MCP_TEST_LOG_FORMAT=json) as JSON.
      const match = line.match(
        /^(?:listening on |\{"event":"listening","url":")(http:\/\/127\.0\.0\.1:\d+)\/mcp(?: \(bound to 0\.0\.0\.0: every interface\)|"?\}?)$/,
      );
      if (match) listening.resolve(match[1]);
    }
    listening.reject(new Error(`the lab ended first:\n${lines.join("\n")}`));
  })();
  const stderr = new Response(child.stderr).text();
  try {
    const origin = await within(listening.promise, 30_000, "the lab listening");
    return {
      child,
      url: new URL(`${origin}/mcp`),
      origin,
      lines,
      read,
      stderr,
    };
  } catch (error) {
    child.kill("SIGKILL");
    await Promise.all([child.status, read, stderr]);
    throw error;
  }
}

/** The gate's lab as a command: its exit status, stdout lines and stderr. */
export async function gateRun(
  env: Record<string, string>,
  client?: (url: URL) => Promise<void>,
) {
  const lab = await spawnLabProcess({
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
    MCP_TEST_LOG_LEVEL: "warn",
    ...env,
  });
  await client?.(lab.url);
  const status = await within(lab.child.status, 30_000, "the gate's exit");
  await lab.read;
  return { code: status.code, lines: lab.lines, stderr: await lab.stderr };
}

/**
 * A client transport to `main.ts --stdio FLAGS` in a subprocess. The SDK
 * hands it only a few variables of ours (HOME, PATH, …); `denoChildEnv()`
 * adds what it needs to find the packages this process found.
 */
export function stdioLab(stderr: "pipe" | "ignore", ...flags: string[]) {
  return new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "-A", MAIN_PATH, "--stdio", ...flags],
    env: denoChildEnv(),
    stderr,
  });
}

/**
 * `stdioLab("pipe", …)` with its stderr kept: `verdictLog()` waits for the
 * lab's verdict there and resolves with all it printed.
 */
export function loggedStdioLab(...flags: string[]) {
  const transport = stdioLab("pipe", ...flags);
  const logs: string[] = [];
  transport.stderr?.on(
    "data",
    (chunk: Uint8Array) => logs.push(new TextDecoder().decode(chunk)),
  );
  const verdictLog = async () => {
    await eventually(
      () => logs.join("").includes("[verdict]"),
      "no verdict on stderr",
    );
    return logs.join("");
  };
  return { transport, verdictLog };
}

/**
 * An SDK client named `name`, in one era, connected to the lab over stdio
 * with a 0.1 s delay and `flags`; `verdictLog` as `loggedStdioLab`'s.
 */
export async function stdioClient(
  name: string,
  mode: "legacy" | "auto",
  ...flags: string[]
) {
  const { transport, verdictLog } = loggedStdioLab("--delay", "0.1", ...flags);
  const client = new Client({ name, version: "1.0.0" }, {
    versionNegotiation: { mode },
  });
  await client.connect(transport);
  return { client, verdictLog };
}

/**
 * The lab over stdio (`main.ts --stdio FLAGS`) after a 2025 client, by raw
 * lines, initialized and read version 1; its stdin is still open.
 */
export async function stdioReadOnce(
  flags: string[],
  clientInfo: { name: string; version: string },
  { drain = true } = {},
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "--stdio", ...flags],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const answers = linesOf(child.stdout);
  const stderr = new Response(child.stderr).text();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  await send(initializeMessage(clientInfo, "2025-11-25"));
  await within(answers.next(), 10_000, "the initialize answer");
  await send({ jsonrpc: "2.0", method: "notifications/initialized" });
  await send({
    jsonrpc: "2.0",
    id: 2,
    method: "resources/read",
    params: { uri: REVIEW_URI },
  });
  await within(answers.next(), 10_000, "the read answer");
  if (!drain) return { child, writer, answers, stderr };
  // The rest of stdout is drained, so the lab never waits on it.
  const drained = (async () => {
    for await (const _ of answers) { /* drained */ }
  })();
  return { child, writer, answers, stderr: drained.then(() => stderr) };
}
