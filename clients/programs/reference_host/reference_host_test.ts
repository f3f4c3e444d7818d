/**
 * Tests for the reference host (`reference_host.ts`), run as a command
 * against the lab (over HTTP from `spawnLab`, or over stdio as the host
 * starts it) and a small Chat Completions model written here, which answers
 * each request from a fixed list and keeps the requests it saw.
 *
 * @module
 */

import assert from "node:assert/strict";
import { CATALOG_ADDED, REVIEW_URI } from "../../../main.ts";
import { denoChildEnv, prepareTestEnvironment } from "../../../testdata/lab.ts";
import { MAIN_PATH, spawnLab } from "../../../launch.ts";
import {
  DEFAULT_REOPEN_WAIT_SECONDS,
  MAX_CONTENT_CHARS,
  MAX_LINE_CHARS,
  MAX_MESSAGE_BYTES,
  MAX_REASON_CHARS,
  MAX_TOOL_CALLS,
  MAX_TOOLS,
  REOPEN_JITTER,
  REOPEN_MAX_MS,
  REOPEN_RESET_MS,
} from "./host_bounds.ts";
import { HOST_USAGE } from "./host_args.ts";
import { UPDATE_MARK } from "./resource_watch.ts";
import { LegacySessions } from "../../../testdata/legacy_sessions.ts";
import { Server } from "npm:@modelcontextprotocol/server@2.4.0";
import { alive, exitsWithin, sleep } from "../../support/process.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: the host as a command, a model that reads and lists, the lab's env
// ---------------------------------------------------------------------------

const HOST_PATH = new URL("./reference_host.ts", import.meta.url).pathname;
const API_KEY = "test-key-never-printed";
/** How long a run of the host may take before the test ends it (SIGTERM). */
const HOST_DEADLINE_MS = 30_000;

interface ChatMessage {
  role: string;
  content: string | null;
}

/**
 * A Chat Completions endpoint that reads the resource (`uri`), waits
 * `waitMs` (or until `wait` resolves) and lists resources (time for the
 * lab's updates to arrive), then answers.
 */
function startModel(wait: number | (() => Promise<void>), uri = REVIEW_URI) {
  const requests: ChatMessage[][] = [];
  const calls = [
    { name: "read_resource", arguments: { uri } },
    { name: "list_resources", arguments: {} },
  ];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const body = await request.json();
      const turn = requests.push(body.messages) - 1;
      if (turn === 1) {
        await (typeof wait === "number" ? sleep(wait) : wait());
      }
      const call = calls[turn];
      return Response.json({
        choices: [{
          message: call
            ? {
              role: "assistant",
              content: null,
              tool_calls: [{
                id: `call_${turn}`,
                type: "function",
                function: {
                  name: call.name,
                  arguments: JSON.stringify(call.arguments),
                },
              }],
            }
            : { role: "assistant", content: "done" },
        }],
      });
    },
  );
  return {
    requests,
    baseUrl: `http://127.0.0.1:${server.addr.port}/v1`,
    close: () => server.shutdown(),
  };
}

/**
 * Runs the host to its end: exit status, stdout, stderr. With `baseUrl`
 * undefined, the command line names no model: `env` does.
 */
async function runHost(
  args: string[],
  baseUrl: string | undefined,
  env: Record<string, string> = { OPENAI_API_KEY: API_KEY },
) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      HOST_PATH,
      ...baseUrl === undefined ? [] : ["--base-url", baseUrl, "--model", "m"],
      ...args,
    ],
    env,
    stdin: "null",
    // A host that hangs fails its test instead of the whole run.
    signal: AbortSignal.timeout(HOST_DEADLINE_MS),
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * This Deno as a stdio server's command: the host hands its server only the
 * SDK's few variables (HOME, PATH, …), as real hosts do, so `env` (by its
 * path: PATH may hold anything) sets in front what the lab needs to find
 * this process's packages, as the harness sets its settings. Never a token
 * or a proxy (whose URL may hold a password): a command line shows in `ps`,
 * and with this cache the lab downloads nothing.
 */
function denoChildCommand(): string[] {
  const shown = Object.entries(denoChildEnv()).filter(([name]) =>
    !/PROXY|TOKEN/i.test(name)
  );
  return [
    "/usr/bin/env",
    ...shown.map(([name, value]) => `${name}=${value}`),
    Deno.execPath(),
  ];
}

/** The update messages of one request to the model. */
function updatesIn(messages: ChatMessage[]): string[] {
  return messages.flatMap((message) =>
    message.role === "user" && message.content?.startsWith(UPDATE_MARK)
      ? [message.content]
      : []
  );
}

const labEnv = (extra: Record<string, string> = {}) => ({
  MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
  MCP_TEST_LOG_LEVEL: "warn",
  ...extra,
});

// ---------------------------------------------------------------------------
// Helpers: servers and models written here, answer by answer
// ---------------------------------------------------------------------------

/**
 * A 2025 server of two resources, `big://a` (20,000 characters) and
 * `other://b`: a subscribe to `big://a` makes it send an update for
 * `other://b`, which the conversation never read, then change `big://a`
 * and send its update.
 */
function startTwoResourceServer() {
  let version = 1;
  const text = () => `version ${version} ${"x".repeat(20_000)}`;
  const build = () => {
    const server = new Server({ name: "two", version: "0.0.1" }, {
      capabilities: { resources: { subscribe: true } },
    });
    server.setRequestHandler("resources/list", () => ({
      resources: [
        { uri: "big://a", name: "a" },
        { uri: "other://b", name: "b" },
      ],
    }));
    server.setRequestHandler("resources/read", ({ params }) => ({
      contents: [{
        uri: params.uri,
        text: params.uri === "big://a" ? text() : "b",
      }],
    }));
    server.setRequestHandler("resources/subscribe", () => {
      setTimeout(async () => {
        await server.sendResourceUpdated({ uri: "other://b" });
        version = 2;
        await server.sendResourceUpdated({ uri: "big://a" });
      }, 300);
      return {};
    });
    server.setRequestHandler("resources/unsubscribe", () => ({}));
    return server;
  };
  const sessions = new LegacySessions(build);
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) =>
      sessions.handle(
        request,
        request.method === "POST" ? await request.json() : undefined,
      ),
  );
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    async close() {
      await sessions.close();
      await http.shutdown();
    },
  };
}

/** A handler on a free loopback port: its origin, and `close`. */
function serveLocal(
  handler: (request: Request) => Response | Promise<Response>,
) {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    handler,
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

/**
 * A 2025 MCP server over HTTP written out by hand, so that a test controls
 * every byte: each request answered with JSON, no session, no GET stream.
 * Its tools are `tools`; its one resource, `big://a`, holds `text`. With
 * `streamTools`, `tools/list` is answered as an event stream, after five
 * notifications of 1 MiB each: each under the host's bound, more in all.
 * With `endlessTools`, `tools/list` never ends: page N holds `page<N>` and
 * `filler<N>`, described in that many characters, and points to page N + 1.
 * With `refuseSubscribe`, `resources/subscribe` is answered with error
 * -32603 and that message; with `withoutSubscribe`, the capabilities do
 * not offer it.
 */
function startJsonServer(
  options: {
    tools?: object[];
    text?: string;
    streamTools?: boolean;
    endlessTools?: number;
    refuseSubscribe?: string;
    withoutSubscribe?: boolean;
  } = {},
) {
  type Params = Record<string, unknown>;
  const page = (params: Params) => Number(params?.cursor ?? 0);
  const inputSchema = { type: "object" };
  const results: Record<string, (params: Params) => object> = {
    initialize: (params) => ({
      protocolVersion: params.protocolVersion,
      capabilities: {
        tools: {},
        resources: options.withoutSubscribe ? {} : { subscribe: true },
      },
      serverInfo: { name: "json", version: "0.0.1" },
    }),
    "tools/list": (params) =>
      options.endlessTools === undefined ? { tools: options.tools ?? [] } : {
        tools: [{ name: `page${page(params)}`, inputSchema }, {
          name: `filler${page(params)}`,
          description: "x".repeat(options.endlessTools),
          inputSchema,
        }],
        nextCursor: String(page(params) + 1),
      },
    "resources/list": () => ({ resources: [{ uri: "big://a", name: "a" }] }),
    "resources/read": ({ uri }) => ({
      contents: [{ uri, text: options.text ?? "a" }],
    }),
    "tools/call": () => ({ content: [{ type: "text", text: "called" }] }),
  };
  const server = serveLocal(async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const { id, method, params } = await request.json();
    if (id === undefined) return new Response(null, { status: 202 });
    if (method === "resources/subscribe" && options.refuseSubscribe) {
      const error = { code: -32603, message: options.refuseSubscribe };
      return Response.json({ jsonrpc: "2.0", id, error });
    }
    const result = results[method]?.(params) ?? {};
    if (method !== "tools/list" || !options.streamTools) {
      return Response.json({ jsonrpc: "2.0", id, result });
    }
    const event = (message: object) => `data: ${JSON.stringify(message)}\n\n`;
    const notice = event({
      jsonrpc: "2.0",
      method: "notifications/message",
      params: { level: "info", data: "x".repeat(1024 * 1024) },
    });
    return new Response(
      notice.repeat(5) + event({ jsonrpc: "2.0", id, result }),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  return { url: `${server.origin}/mcp`, close: server.close };
}

/** A Chat Completions answer: these tool calls, or with none the text. */
function chatAnswer(
  calls: { name: string; arguments?: object }[],
  content = "done",
) {
  const message = calls.length === 0 ? { role: "assistant", content } : {
    role: "assistant",
    content: null,
    tool_calls: calls.map((call, index) => ({
      id: `call_${index}`,
      type: "function",
      function: {
        name: call.name,
        arguments: JSON.stringify(call.arguments ?? {}),
      },
    })),
  };
  return Response.json({ choices: [{ message }] });
}

interface ChatRequest {
  messages: (ChatMessage & { tool_calls?: unknown[] })[];
  tools: { function: { name: string } }[];
}

/**
 * A Chat Completions endpoint that answers its requests with `answers` in
 * turn (then "done"), keeping each request and its size in bytes.
 */
function startChatModel(
  answers: ((request: Request) => Response | Promise<Response>)[],
) {
  const requests: ChatRequest[] = [];
  const sizes: number[] = [];
  const server = serveLocal(async (request) => {
    const body = await request.text();
    sizes.push(body.length);
    const turn = requests.push(JSON.parse(body)) - 1;
    return await answers[turn]?.(request) ?? chatAnswer([]);
  });
  return {
    requests,
    sizes,
    baseUrl: `${server.origin}/v1`,
    close: server.close,
  };
}

// ---------------------------------------------------------------------------
// Helpers: stdio servers that will not stop, or flood the host with changes
// ---------------------------------------------------------------------------

/**
 * A 2025 stdio MCP server that ignores SIGTERM and the end of its stdin,
 * and starts a child that would outlive it (`sleep`). It writes both PIDs
 * to the file its argument names, an escape sequence on stderr, and after
 * its answer to `initialize` a line over `MAX_MESSAGE_BYTES` on stdout.
 */
const STUBBORN_SERVER = `
Deno.addSignalListener("SIGTERM", () => {});
const child = new Deno.Command("sleep", { args: ["60"] }).spawn();
Deno.writeTextFileSync(Deno.args[0], JSON.stringify([Deno.pid, child.pid]));
console.error("\\x1b[31mstarted");
const decoder = new TextDecoder();
let buffered = "";
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk);
  const lines = buffered.split("\\n");
  buffered = lines.pop();
  for (const line of lines) {
    const { id, method, params } = JSON.parse(line);
    if (method !== "initialize") continue;
    console.log(JSON.stringify({ jsonrpc: "2.0", id, result: {
      protocolVersion: params.protocolVersion,
      capabilities: {},
      serverInfo: { name: "stubborn", version: "0.0.1" },
    } }));
    console.log("x".repeat(${MAX_MESSAGE_BYTES + 1}));
  }
}
setInterval(() => {}, 1000);
`;

/**
 * A 2025 stdio MCP server of tools only, `listChanged` among its
 * capabilities, that prints `tools/list N` on stderr as it answers its Nth
 * list: the first list holds `flood`; calling it sends 1000
 * `notifications/tools/list_changed`, then its result. The second list
 * holds 300 tools `grow_0` … (more than the host keeps), the third `late`
 * before them.
 */
const FLOOD_SERVER = `
const decoder = new TextDecoder();
const send = (message) => console.log(JSON.stringify({ jsonrpc: "2.0", ...message }));
const tool = (name) => ({ name, inputSchema: { type: "object" } });
const grown = Array.from({ length: 300 }, (_, n) => tool("grow_" + n));
let lists = 0;
let buffered = "";
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk);
  const lines = buffered.split("\\n");
  buffered = lines.pop();
  for (const line of lines) {
    const { id, method, params } = JSON.parse(line);
    if (id === undefined) continue;
    if (method === "initialize") {
      send({ id, result: {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: "flood", version: "0.0.1" },
      } });
    } else if (method === "tools/list") {
      console.error("tools/list " + ++lists);
      const tools = lists === 1 ? [tool("flood")]
        : lists === 2 ? grown : [tool("late"), ...grown];
      send({ id, result: { tools } });
    } else if (method === "tools/call") {
      const changed = JSON.stringify({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      console.log(Array(1000).fill(changed).join("\\n"));
      send({ id, result: { content: [{ type: "text", text: "flooded" }] } });
    } else {
      send({ id, error: { code: -32601, message: "Method not found" } });
    }
  }
}
`;

// ---------------------------------------------------------------------------
// Helpers: the catalog change: its new tool, a model that calls it, a run
// ---------------------------------------------------------------------------

/** The tool the lab's `--catalog-change tools` adds, as the host offers it. */
const NEW_TOOL = `mcp__${CATALOG_ADDED.tools}`;

/** The names of the tools a model request offers. */
const offeredIn = (request: ChatRequest) =>
  request.tools.map((tool) => tool.function.name);

/**
 * A model as the scripted one plays it: reads the resource, waits `waitMs`
 * (the lab's update and catalog change land meanwhile), lists resources,
 * then calls the new tool if its request offers it, then answers.
 */
function startCatalogModel(waitMs: number) {
  const model = startChatModel([
    () =>
      chatAnswer([{ name: "read_resource", arguments: { uri: REVIEW_URI } }]),
    () => sleep(waitMs).then(() => chatAnswer([{ name: "list_resources" }])),
    () =>
      chatAnswer(
        offeredIn(model.requests[2]).includes(NEW_TOOL)
          ? [{ name: NEW_TOOL }]
          : [],
      ),
  ]);
  return model;
}

/**
 * The host against the lab with `--catalog-change CHANGE`: over HTTP (a
 * lab of its own, `/report` read at the end) or over stdio (the host
 * starts the lab; its verdict comes on the host's stderr).
 */
async function runCatalogChange(
  setup: {
    era: string;
    stdio: boolean;
    change: string;
    hostFlags?: string[];
    labFlags?: string[];
  },
  model: { baseUrl: string },
) {
  const lab = [
    ...["--delay", "0.5", "--catalog-change", setup.change],
    ...setup.labFlags ?? [],
  ];
  const host = [...setup.hostFlags ?? [], "--era", setup.era];
  if (setup.stdio) {
    const run = await runHost([
      ...[...host, "Go", "--stdio", "--", ...denoChildCommand()],
      ...["run", "-A", MAIN_PATH, "--stdio", ...lab],
    ], model.baseUrl);
    return { run, report: undefined, labLines: [] };
  }
  const spawned = await spawnLab({
    mainPath: MAIN_PATH,
    args: lab,
    env: { MCP_TEST_LOG_LEVEL: "info" },
  });
  try {
    const run = await runHost(
      [...host, "--url", spawned.url, "Go"],
      model.baseUrl,
    );
    const report = await (await fetch(`${spawned.origin}/report`)).json();
    return { run, report, labLines: spawned.lines };
  } finally {
    await spawned.stop();
  }
}

// ---------------------------------------------------------------------------
// Against the lab: the update in both eras, and the control
// ---------------------------------------------------------------------------

Deno.test("reference host (2025, HTTP): three notifications before the next request give one update message with the latest text", async () => {
  const lab = await spawnLab({
    mainPath: MAIN_PATH,
    env: labEnv({
      // Past the host's next request, so all three come during the wait.
      MCP_TEST_UPDATE_DELAY_SECONDS: "1",
      MCP_TEST_UPDATE_COUNT: "3",
      MCP_TEST_UPDATE_INTERVAL_SECONDS: "0.3",
    }),
  });
  const model = startModel(3500);
  try {
    const run = await runHost(
      ["--era", "2025", "--url", lab.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "done\n");
    assert.ok(!run.stderr.includes(API_KEY));
    assert.equal(model.requests.length, 3);
    assert.deepEqual(updatesIn(model.requests[1]), []);
    const [update, ...more] = updatesIn(model.requests[2]);
    assert.deepEqual(more, []);
    assert.match(
      update,
      /^\[Update from the MCP server\] test:\/\/review\/status changed at \d{4}-\d\d-\d\dT[\d:.]+Z \(the server notified the host, which read it again\)\. Its content now:\nstatus: reviewed\nversion: 4\n/,
    );
    const report = await (await fetch(`${lab.origin}/report`)).json();
    assert.equal(report.clients[0].name, "reference-host");
    assert.equal(report.clients[0].level, 6);
  } finally {
    await model.close();
    await lab.stop();
  }
});

Deno.test("reference host (2026-07-28, stdio): it listens for what it read, asks for the content in the update, and brings version 2 to the model without a re-read", async () => {
  const model = startModel(2500);
  try {
    const run = await runHost([
      "--era",
      "2026-07-28",
      "Go",
      "--stdio",
      "--",
      ...denoChildCommand(),
      "run",
      "-A",
      MAIN_PATH,
      "--stdio",
      "--delay",
      "0.5",
    ], model.baseUrl);
    assert.equal(run.code, 0, run.stderr);
    const [update] = updatesIn(model.requests[2]);
    assert.match(
      update,
      /\(the server sent the new content with its notification\)\. Its content now:\nstatus: reviewed\nversion: 2\n/,
    );
    assert.match(run.stderr, /^\[host\] watching "test:\/\/review\/status"$/m);
    assert.match(
      run.stderr,
      /^\[host\] "test:\/\/review\/status": the notification carried its content$/m,
    );
    // The lab's verdict, on the stderr the host passed on.
    assert.match(
      run.stderr,
      /^\[server\] \[verdict\] level=6 client=reference-host\/[\d.]+ era=2026-07-28 /m,
    );
    assert.match(
      run.stderr,
      /^\[server\] {3}level 6 of 7: version 2 delivered inline, not re-read$/m,
    );
    assert.doesNotMatch(run.stderr, /\[resources\/read\] uri=\S+ version=2/);
  } finally {
    await model.close();
  }
});

Deno.test("reference host --no-updates: no subscription and no update message (level 3, the control)", async () => {
  const lab = await spawnLab({ mainPath: MAIN_PATH, env: labEnv() });
  const model = startModel(1000);
  try {
    const run = await runHost(
      ["--era", "2025", "--no-updates", "--url", lab.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(model.requests.flatMap(updatesIn), []);
    const report = await (await fetch(`${lab.origin}/report`)).json();
    assert.equal(report.clients[0].level, 3);
    assert.equal(
      report.clients[0].missing,
      `never subscribed to ${REVIEW_URI} (resources/subscribe)`,
    );
  } finally {
    await model.close();
    await lab.stop();
  }
});

// ---------------------------------------------------------------------------
// The command line: flags, --help, the key, a local model without one
// ---------------------------------------------------------------------------

Deno.test("reference host: a bad flag is one line and exit 2; a failing model is exit 1 without the key", async (t) => {
  const cases: [string[], string][] = [
    [["Go"], "give --url URL or --stdio -- COMMAND…, one of them"],
    [["--url", "file:///x", "Go"], "--url is not an http(s) URL"],
    [["--url", "http://127.0.0.1:9/mcp"], "no prompt: give it as an argument"],
    // A prompt after `--stdio --` is one more word of the server's command.
    [
      ["--stdio", "--", "deno", "run", "-A", "main.ts", "--stdio", "Go"],
      "no prompt: give it before --stdio (what follows -- is the server's command)",
    ],
    [
      ["--url", "http://127.0.0.1:9/mcp", "--", "Go"],
      "-- COMMAND… goes with --stdio only",
    ],
    // Node's advice after an unknown option, with its open quote, is gone.
    [["--bogus", "Go"], "Unknown option '--bogus'; see --help"],
    [
      ["--era", "2024", "--url", "http://127.0.0.1:9/mcp", "Go"],
      "--era must be auto, 2025 or 2026-07-28",
    ],
    [["--stdio", "Go"], "--stdio needs -- COMMAND…"],
    [
      ["--model-timeout", "0", "--url", "http://127.0.0.1:9/mcp", "Go"],
      "--model-timeout must be a number of seconds, above 0 and at most 3600",
    ],
    [
      ["--reopen-wait", "61", "--url", "http://127.0.0.1:9/mcp", "Go"],
      "--reopen-wait must be a number of seconds, above 0 and at most 60",
    ],
  ];
  for (const [args, message] of cases) {
    await t.step(args.join(" "), async () => {
      const run = await runHost(args, "http://127.0.0.1:9/v1");
      assert.equal(run.code, 2);
      assert.equal(run.stderr, `reference-host error: ${message}\n`);
      assert.equal(run.stdout, "");
    });
  }
  await t.step("the model answers 401", async () => {
    const lab = await spawnLab({ mainPath: MAIN_PATH, env: labEnv() });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (request) =>
        new Response(
          `no: ${request.headers.get("authorization") === `Bearer ${API_KEY}`}`,
          {
            status: 401,
          },
        ),
    );
    try {
      const run = await runHost(
        ["--url", lab.url, "Go"],
        `http://127.0.0.1:${server.addr.port}/v1`,
      );
      assert.equal(run.code, 1);
      assert.equal(
        run.stderr,
        "[host] failed: the model answered 401: no: true\n",
      );
      assert.ok(!run.stderr.includes(API_KEY));
    } finally {
      await server.shutdown();
      await lab.stop();
    }
  });
});

Deno.test("reference host --help: the usage on stdout, exit 0, whatever else the command line holds", async () => {
  for (
    const args of [["--help"], ["--url", "http://127.0.0.1:9/mcp", "--help"]]
  ) {
    const run = await runHost(args, "http://127.0.0.1:9/v1");
    assert.deepEqual(run, { code: 0, stdout: `${HOST_USAGE}\n`, stderr: "" });
  }
  assert.match(HOST_USAGE, /^Usage: deno run -A reference_host\.ts /);
  // Every flag the parser takes is in the usage.
  for (
    const flag of [
      "url",
      "stdio",
      "era",
      "base-url",
      "model",
      "no-updates",
      "no-reopen",
      "reopen-wait",
      "model-timeout",
    ]
  ) {
    assert.match(HOST_USAGE, new RegExp(`^  --${flag} `, "m"), flag);
  }
  // And every bound, as the constants have it.
  const usage = HOST_USAGE.replace(/\s+/g, " ");
  const count = (n: number) => n.toLocaleString("en");
  for (
    const bound of [
      `${MAX_MESSAGE_BYTES / 1024 / 1024} MiB of one message`,
      `${count(MAX_CONTENT_CHARS)} characters of any text`,
      `${MAX_TOOLS} tools, none over ${count(MAX_CONTENT_CHARS)} characters`,
      `the first ${MAX_TOOL_CALLS} tool calls`,
      `cut to ${count(MAX_LINE_CHARS)} characters`,
      `opened again after --reopen-wait (${DEFAULT_REOPEN_WAIT_SECONDS} s unless given)`,
      `lived under ${REOPEN_RESET_MS / 1000} s, at most ${
        REOPEN_MAX_MS / 1000
      } s`,
      `each wait cut by up to ${REOPEN_JITTER * 100}%`,
      `cut to ${MAX_REASON_CHARS} characters`,
    ]
  ) {
    assert.ok(usage.includes(bound), bound);
  }
});

Deno.test("reference host: a local model named by the environment alone, with no key, gets no Authorization header", async () => {
  const lab = await spawnLab({ mainPath: MAIN_PATH, env: labEnv() });
  const seen: { model: string; authorization: string | null }[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      seen.push({
        model: (await request.json()).model,
        authorization: request.headers.get("authorization"),
      });
      return Response.json({
        choices: [{ message: { role: "assistant", content: "done" } }],
      });
    },
  );
  try {
    const run = await runHost(["--url", lab.url, "Go"], undefined, {
      OPENAI_BASE_URL: `http://127.0.0.1:${server.addr.port}/v1`,
      OPENAI_MODEL: "local-model",
      // Empty, as unset: whatever key this machine's environment holds.
      OPENAI_API_KEY: "",
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "done\n");
    assert.deepEqual(seen, [{ model: "local-model", authorization: null }]);
  } finally {
    await server.shutdown();
    await lab.stop();
  }
});

// ---------------------------------------------------------------------------
// Bounds: what reaches the model, the model's timeout, the key never shown
// ---------------------------------------------------------------------------

Deno.test("reference host: an update for a resource it never read is ignored; what reaches the model is cut to 16,000 characters", async () => {
  const server = startTwoResourceServer();
  const model = startModel(1500, "big://a");
  try {
    const run = await runHost(
      ["--era", "2025", "--url", server.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    // 20,010 characters cut to 16,000, compared as booleans (no diff of
    // 16,000 x's when it fails).
    const cut = (version: number) =>
      `version ${version} ${
        "x".repeat(MAX_CONTENT_CHARS - 10)
      }\n[… 4010 more characters]`;
    const firstRead = model.requests[1].at(-1)?.content ?? "";
    assert.ok(firstRead === cut(1), firstRead.slice(-80));
    const updates = updatesIn(model.requests[2]);
    assert.equal(updates.length, 1, updates.map((u) => u.slice(0, 60)).join());
    assert.match(updates[0], /^\[Update from the MCP server\] big:\/\/a /);
    assert.ok(
      updates[0].endsWith(`Its content now:\n${cut(2)}`),
      updates[0].slice(-80),
    );
    assert.ok(
      !model.requests.flat().some((message) =>
        message.content?.includes("other://b changed")
      ),
    );
  } finally {
    await model.close();
    await server.close();
  }
});

Deno.test("reference host --model-timeout: a model that never answers, or never ends its answer, fails the run at the timeout", async (t) => {
  const server = startJsonServer();
  // Answered once the host has gone, for the server to shut down.
  const ended = Promise.withResolvers<void>();
  const hangs: Record<string, () => Promise<Response>> = {
    "no answer": () => ended.promise.then(() => new Response(null)),
    "an answer that never ends": () =>
      Promise.resolve(
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"choices": ['));
            },
          }),
          { headers: { "content-type": "application/json" } },
        ),
      ),
  };
  try {
    for (const [name, hang] of Object.entries(hangs)) {
      await t.step(name, async () => {
        const model = startChatModel([hang]);
        try {
          const run = await runHost(
            [
              "--era",
              "2025",
              "--model-timeout",
              "0.5",
              "--url",
              server.url,
              "Go",
            ],
            model.baseUrl,
          );
          assert.equal(
            run.stderr,
            "[host] failed: the model did not answer within 0.5 s (--model-timeout)\n",
          );
          assert.equal(run.code, 1);
        } finally {
          ended.resolve();
          await model.close();
        }
      });
    }
  } finally {
    await server.close();
  }
});

Deno.test("reference host: the key is never printed, whatever the model's endpoint sends back, and the model's text is escaped and cut", async (t) => {
  const server = startJsonServer();
  const echo = (request: Request) =>
    [...request.headers].map(([name, value]) => `${name}: ${value}`)
      .join("\n");
  // The key where a cut falls: where the host cut the body (300
  // characters), and where it cuts a line.
  const endsInKey = (padding: number) => () =>
    new Response(`${"x".repeat(padding)} Bearer ${API_KEY}`, { status: 401 });
  const cases: [string, ((request: Request) => Response)[]][] = [
    ["a 401 that echoes the request's headers", [
      (request) => new Response(echo(request), { status: 401 }),
    ]],
    ["a 401 whose first 300 characters end inside the key", [endsInKey(280)]],
    ["a 401 whose first line's worth ends inside the key", [
      endsInKey(MAX_LINE_CHARS - 50),
    ]],
    ["an answer that is not JSON, the key first", [
      () => new Response(`${API_KEY} and more`),
    ]],
    [
      "a tool called by the key, a name of 100,000 characters, the key in the answer",
      [
        () =>
          chatAnswer([
            { name: API_KEY },
            { name: `\u001b[2J${"x".repeat(100_000)}` },
          ]),
        () => chatAnswer([], `the key: ${API_KEY}`),
      ],
    ],
  ];
  try {
    for (const [name, answers] of cases) {
      await t.step(name, async () => {
        const model = startChatModel(answers);
        try {
          const run = await runHost(
            ["--era", "2025", "--url", server.url, "Go"],
            model.baseUrl,
          );
          for (const output of [run.stdout, run.stderr]) {
            // Not even the start of it.
            assert.ok(!output.includes(API_KEY.slice(0, 8)), output);
            for (const line of output.split("\n")) {
              assert.ok(line.length < MAX_LINE_CHARS + 20, `${line.length}`);
              assert.doesNotMatch(line, /\p{Cc}/u);
            }
          }
          if (name.startsWith("a 401 that echoes")) {
            assert.match(
              run.stderr,
              /authorization: Bearer \[OPENAI_API_KEY\]/,
            );
          }
        } finally {
          await model.close();
        }
      });
    }
  } finally {
    await server.close();
  }
});

Deno.test("reference host: of the tool calls in one answer it runs the first 16, and only those stay in the conversation", async () => {
  const server = startJsonServer();
  const asked = MAX_TOOL_CALLS * 10;
  const model = startChatModel([() =>
    chatAnswer(
      Array.from({ length: asked }, () => ({ name: "list_resources" })),
    )]);
  try {
    const run = await runHost(
      ["--era", "2025", "--url", server.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    const [prompt, assistant, ...results] = model.requests[1].messages;
    assert.equal(prompt.content, "Go");
    assert.equal(assistant.tool_calls?.length, MAX_TOOL_CALLS);
    assert.deepEqual(
      results.map((message) => message.role),
      Array(MAX_TOOL_CALLS).fill("tool"),
    );
    assert.equal(
      run.stderr.match(/^\[host\] the model calls /gm)?.length,
      MAX_TOOL_CALLS,
    );
    assert.match(
      run.stderr,
      new RegExp(
        `^\\[host\\] the model asked for ${asked} tool calls at once: the host runs the first ${MAX_TOOL_CALLS}$`,
        "m",
      ),
    );
  } finally {
    await model.close();
    await server.close();
  }
});

Deno.test("reference host: it reads at most 4 MiB of one message from the server, and offers the model at most 128 tools, none described in over 16,000 characters", async () => {
  const tool = (name: string, description = "") => ({
    name,
    description,
    inputSchema: { type: "object" },
  });
  const many = Array.from({ length: MAX_TOOLS + 50 }, (_, n) => tool(`t${n}`));
  const server = startJsonServer({
    tools: [tool("huge", "x".repeat(MAX_CONTENT_CHARS)), ...many],
    text: "x".repeat(MAX_MESSAGE_BYTES),
    streamTools: true,
  });
  const model = startChatModel([
    () =>
      chatAnswer([{ name: "read_resource", arguments: { uri: "big://a" } }]),
  ]);
  try {
    const run = await runHost(
      ["--era", "2025", "--url", server.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    // The tools' list came whole: its stream is bounded event by event.
    const offered = model.requests[0].tools.map((tool) => tool.function.name);
    assert.deepEqual(offered, [
      "read_resource",
      "list_resources",
      ...many.slice(0, MAX_TOOLS - 2).map((tool) => `mcp__${tool.name}`),
    ]);
    assert.match(
      run.stderr,
      new RegExp(
        `^\\[host\\] the server offers ${
          many.length + 1
        } tools: the model is offered ${MAX_TOOLS - 2} of them `,
        "m",
      ),
    );
    const read = model.requests[1].messages.at(-1)?.content ?? "";
    assert.match(
      read.slice(0, 200),
      new RegExp(`^The call failed: .*over ${MAX_MESSAGE_BYTES} bytes`),
    );
    assert.match(
      run.stderr,
      new RegExp(
        `^\\[host\\] the server sent a message over ${MAX_MESSAGE_BYTES} bytes`,
        "m",
      ),
    );
  } finally {
    await model.close();
    await server.close();
  }
});

Deno.test("reference host: a tools list of endless pages of 3.9 MB each is cut at 8 MiB as a whole; the model is asked with the tools before the cut, and the cut said; a tool past it is never called", async () => {
  const server = startJsonServer({ endlessTools: 3_900_000 });
  // page5 is on the server, past the cut: never offered, never called.
  const model = startChatModel([
    () => chatAnswer([{ name: "mcp__page0" }, { name: "mcp__page5" }]),
  ]);
  try {
    const run = await runHost(
      ["--era", "2025", "--url", server.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "done\n");
    assert.deepEqual(
      model.requests[0].tools.map((tool) => tool.function.name),
      ["read_resource", "list_resources", "mcp__page0", "mcp__page1"],
    );
    assert.deepEqual(run.stderr.split("\n").filter(Boolean), [
      "[host] the server's tools/list was cut, over 8388608 bytes at page 3: the host keeps the 4 tools read before it and reads no more of it",
      `[host] the server offers 4 tools: the model is offered 2 of them (at most ${MAX_TOOLS} tools in all, none over ${MAX_CONTENT_CHARS} characters)`,
      '[host] the model calls "mcp__page0"',
      '[host] the model calls "mcp__page5"',
    ]);
    assert.deepEqual(
      model.requests[1].messages.slice(-2).map((message) => message.content),
      [
        JSON.stringify([{ type: "text", text: "called" }]),
        "The call failed: no tool mcp__page5 was offered",
      ],
    );
  } finally {
    await model.close();
    await server.close();
  }
});

// ---------------------------------------------------------------------------
// Stdio servers: one that will not stop, one that floods its list changes
// ---------------------------------------------------------------------------

Deno.test("reference host --stdio: a server that ignores the end of its stdin and SIGTERM is ended with its process group, as the host ends or is ended", async (t) => {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/stubborn.ts`;
  await Deno.writeTextFile(script, STUBBORN_SERVER);
  // The first run's model answers at once, the second's once the host has
  // gone.
  const ended = Promise.withResolvers<void>();
  const model = startChatModel([
    () => chatAnswer([]),
    () => ended.promise.then(() => chatAnswer([])),
  ]);
  const hostCommand = (pidsFile: string) =>
    new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        HOST_PATH,
        ...["--base-url", model.baseUrl, "--model", "m", "--era", "2025"],
        "Go",
        "--stdio",
        "--",
        ...denoChildCommand(),
        ...["run", "-A", script, pidsFile],
      ],
      env: { OPENAI_API_KEY: API_KEY },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(HOST_DEADLINE_MS),
    });
  /**
   * A run of the host: its exit status as it exits, what it printed once
   * all that holds its pipes has gone (a server left running holds them).
   */
  const startHost = (pidsFile: string) => {
    const host = hostCommand(pidsFile).spawn();
    return {
      host,
      stdout: new Response(host.stdout).text(),
      stderr: new Response(host.stderr).text(),
    };
  };
  const started: number[] = [];
  /** What `ready` gives, asked every 100 ms for at most 10 s. */
  const until = async <T>(
    ready: () => T | undefined | Promise<T | undefined>,
  ) => {
    for (let waited = 0; waited < 10_000; waited += 100) {
      const value = await ready();
      if (value !== undefined) return value;
      await sleep(100);
    }
    throw new Error(`still waiting after 10 s: ${ready}`);
  };
  /** The server's and its child's PIDs, once it has written them. */
  const pidsIn = async (path: string) => {
    const pids = await until(async () => {
      try {
        return JSON.parse(await Deno.readTextFile(path)) as number[];
      } catch {
        return undefined; // not written yet, or not all of it
      }
    });
    started.push(...pids);
    return pids;
  };
  try {
    await t.step("the host ends: EOF, SIGTERM, then SIGKILL", async () => {
      const run = startHost(`${dir}/first`);
      const { code } = await run.host.status;
      for (const pid of await pidsIn(`${dir}/first`)) {
        assert.ok(await exitsWithin(pid, 1000), `${pid} is still running`);
      }
      const stderr = await run.stderr;
      assert.equal(code, 0, stderr);
      assert.equal(await run.stdout, "done\n");
      // Its stderr passed on escaped; its long line not read.
      assert.match(stderr, /^\[server\] \\u001b\[31mstarted$/m);
      assert.match(
        stderr,
        new RegExp(
          `^\\[host\\] the server sent a message over ${MAX_MESSAGE_BYTES} bytes: not read$`,
          "m",
        ),
      );
    });
    await t.step(
      "the host is sent SIGTERM while it waits for the model",
      async () => {
        const run = startHost(`${dir}/second`);
        const pids = await pidsIn(`${dir}/second`);
        await until(() => model.requests[1]); // the host waits for the model
        run.host.kill("SIGTERM");
        const { code } = await run.host.status;
        for (const pid of pids) {
          assert.ok(await exitsWithin(pid, 1000), `${pid} is still running`);
        }
        const stderr = await run.stderr;
        assert.equal(code, 143, stderr);
        assert.equal(await run.stdout, "");
      },
    );
  } finally {
    ended.resolve();
    await model.close();
    // Whatever a failed step left running.
    for (const pid of started) {
      if (await alive(pid)) Deno.kill(pid, "SIGKILL");
    }
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reference host (2025, stdio): 1000 notifications/tools/list_changed cost two lists, and the next model request offers the tools as the last list has them, at most 128", async () => {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/flood.ts`;
  await Deno.writeTextFile(script, FLOOD_SERVER);
  const model = startChatModel([() => chatAnswer([{ name: "mcp__flood" }])]);
  try {
    const run = await runHost(
      [
        ...["--era", "2025", "Go", "--stdio", "--"],
        ...denoChildCommand(),
        ...["run", "-A", script],
      ],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    const offered = (request: ChatRequest) =>
      request.tools.map((tool) => tool.function.name);
    assert.deepEqual(offered(model.requests[0]), [
      "read_resource",
      "list_resources",
      "mcp__flood",
    ]);
    assert.deepEqual(offered(model.requests[1]), [
      "read_resource",
      "list_resources",
      "mcp__late",
      ...Array.from({ length: MAX_TOOLS - 3 }, (_, n) => `mcp__grow_${n}`),
    ]);
    assert.deepEqual(run.stderr.match(/^\[server\] tools\/list \d+$/gm), [
      "[server] tools/list 1",
      "[server] tools/list 2",
      "[server] tools/list 3",
    ]);
    const changes = run.stderr.match(
      /^\[host\] the server's tools changed: .*/gm,
    );
    assert.equal(changes?.length, 2, run.stderr);
    assert.match(
      changes[0],
      /^\[host\] the server's tools changed: 126 kept, new: "grow_0", "grow_1", /,
    );
    assert.equal(
      changes[1],
      `[host] the server's tools changed: 126 kept, new: "late"`,
    );
  } finally {
    await model.close();
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// The catalog that changes: the new tool reaches the model, or not
// ---------------------------------------------------------------------------

Deno.test("reference host --catalog-change: the model request after the lab's change offers get_review_comments, and the model's call of it is tools level 4 (both eras, HTTP and stdio)", async (t) => {
  const setups = [
    { era: "2025", stdio: false, change: "tools" },
    { era: "2026-07-28", stdio: false, change: "tools" },
    { era: "2025", stdio: true, change: "all" },
    { era: "2026-07-28", stdio: true, change: "all" },
  ];
  for (const setup of setups) {
    const name = `${setup.era}, ${
      setup.stdio ? "stdio" : "HTTP"
    }, ${setup.change}`;
    await t.step(name, async () => {
      const model = startCatalogModel(2000);
      try {
        const { run, report } = await runCatalogChange(setup, model);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(model.requests.length, 4, run.stderr);
        const before = [
          "read_resource",
          "list_resources",
          "mcp__get_review_status",
        ];
        assert.deepEqual(offeredIn(model.requests[0]), before);
        assert.deepEqual(offeredIn(model.requests[2]), [...before, NEW_TOOL]);
        assert.deepEqual(offeredIn(model.requests[3]), [...before, NEW_TOOL]);
        const result = model.requests[3].messages.at(-1);
        assert.equal(result?.role, "tool");
        assert.match(result?.content ?? "", /comments: 2/);
        const line =
          `[host] the server's tools changed: 2 kept, new: "${CATALOG_ADDED.tools}"`;
        assert.ok(run.stderr.split("\n").includes(line), run.stderr);
        if (setup.change === "all") {
          for (const kind of ["prompts", "resources"] as const) {
            const line = `[host] the server's ${kind} changed: 2 kept, new: "${
              CATALOG_ADDED[kind]
            }"`;
            assert.ok(run.stderr.split("\n").includes(line), line);
          }
          // Tools used; prompts and resources listed again, not used.
          assert.match(
            run.stderr,
            /^\[server\] {3}catalog: level 3 of 5 \(tools 4, prompts 3, resources 3\); next: /m,
          );
        }
        if (report) {
          const [client] = report.clients;
          assert.equal(client.level, 6);
          assert.equal(client.catalog.level, 4);
          assert.deepEqual(client.catalog.kinds.tools.steps, {
            listed: true,
            notified: true,
            relisted: true,
            used: true,
            reachedModel: "not observable",
          });
        }
      } finally {
        await model.close();
      }
    });
  }
});

Deno.test("reference host --no-updates --catalog-change tools: it follows no list change, so get_review_comments never reaches the model (the control, both eras)", async (t) => {
  const missing: Record<string, [number, string]> = {
    "2025": [2, "notified, never listed tools again"],
    "2026-07-28": [
      1,
      "2026-07-28: never asked for tools list changes on a listen (toolsListChanged)",
    ],
  };
  for (const [era, [level, next]] of Object.entries(missing)) {
    await t.step(era, async () => {
      const model = startCatalogModel(2000);
      try {
        const { run, report, labLines } = await runCatalogChange({
          era,
          stdio: false,
          change: "tools",
          hostFlags: ["--no-updates"],
          // It subscribes to nothing: its first read starts the update, and
          // with it the change.
          labFlags: ["--trigger", "read"],
        }, model);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(model.requests.length, 3, run.stderr);
        for (const request of model.requests) {
          assert.ok(!offeredIn(request).includes(NEW_TOOL));
        }
        assert.doesNotMatch(run.stderr, /changed/);
        assert.ok(
          labLines.some((line) =>
            line.startsWith(
              `[catalog/change] kind=tools added=${CATALOG_ADDED.tools} `,
            )
          ),
          labLines.join("\n"),
        );
        const tools = report.clients[0].catalog.kinds.tools;
        assert.equal(tools.level, level);
        assert.equal(tools.missing, next);
      } finally {
        await model.close();
      }
    });
  }
});

// ---------------------------------------------------------------------------
// The world as it is: streams the lab cuts, watches it refuses, one era only
// ---------------------------------------------------------------------------

/**
 * Widening its listen, the host closes the old one and at once opens the
 * new: a loaded lab may record the new one before it notices the old one's
 * close, two listens at once for a moment. The cap test below holds that
 * order; the tests that hold other conduct set that one diagnosis aside.
 */
const besidesOverlap = (diagnoses: string[]) =>
  diagnoses.filter((text) => text !== "2 listens open at once");

/**
 * The host against a lab run with `labFlags` (`--delay 2.5` first): over
 * HTTP (a lab of its own, its `/report` and lines read at the end) or over
 * stdio (the host starts it; its log comes on the host's stderr). The model
 * reads the resource, waits `waitMs`, lists resources, then answers.
 */
async function runWithLab(
  setup: { stdio: boolean; labFlags: string[]; hostFlags: string[] },
  waitMs: number,
) {
  const model = startModel(waitMs);
  const lab = ["--delay", "2.5", ...setup.labFlags];
  try {
    if (setup.stdio) {
      const run = await runHost([
        ...[...setup.hostFlags, "Go", "--stdio", "--", ...denoChildCommand()],
        ...["run", "-A", MAIN_PATH, "--stdio", "--log-level", "info", ...lab],
      ], model.baseUrl);
      return { run, requests: model.requests, report: undefined, labLines: [] };
    }
    const spawned = await spawnLab({
      mainPath: MAIN_PATH,
      args: lab,
      env: { MCP_TEST_LOG_LEVEL: "info" },
    });
    try {
      const run = await runHost(
        [...setup.hostFlags, "--url", spawned.url, "Go"],
        model.baseUrl,
      );
      const report = await (await fetch(`${spawned.origin}/report`)).json();
      return { run, requests: model.requests, report, labLines: spawned.lines };
    } finally {
      await spawned.stop();
    }
  } finally {
    await model.close();
  }
}

/** The one update message of the model's third request: version 2. */
function assertUpdateReached(requests: ChatMessage[][], stderr: string) {
  assert.equal(requests.length, 3, stderr);
  assert.deepEqual(updatesIn(requests[1]), []);
  const [update, ...more] = updatesIn(requests[2]);
  assert.deepEqual(more, []);
  assert.match(
    update ?? "",
    /^\[Update from the MCP server\] test:\/\/review\/status changed at .*Its content now:\nstatus: reviewed\nversion: 2\n/s,
  );
}

/** The host's lines about a stream the server ended, in order. */
const endedLines = (stderr: string) =>
  stderr.match(/^\[host\] the (GET stream|listen).* after \d+ ms: .*$/gm) ??
    [];

Deno.test("reference host through a cut: the lab ends every stream 1 s after it opened, the update comes at 2.5 s; the host opens it again after 0.75-1 s and the update reaches the model (both eras, graceful and abrupt, HTTP and stdio)", async (t) => {
  const setups = [
    { era: "2025", end: "graceful", stdio: false },
    { era: "2025", end: "abrupt", stdio: false },
    { era: "2026-07-28", end: "graceful", stdio: false },
    { era: "2026-07-28", end: "abrupt", stdio: false },
    // Over stdio only a listen can end, and only gracefully.
    { era: "2026-07-28", end: "graceful", stdio: true },
  ];
  for (const { era, end, stdio } of setups) {
    await t.step(`${era}, ${end}, ${stdio ? "stdio" : "HTTP"}`, async () => {
      const { run, requests, report, labLines } = await runWithLab({
        stdio,
        labFlags: ["--stream-lifetime", "1", "--stream-end", end],
        hostFlags: ["--era", era],
      }, 4000);
      assert.equal(run.code, 0, run.stderr);
      assertUpdateReached(requests, run.stderr);
      const how = era === "2025"
        ? "the GET stream ended"
        : end === "graceful"
        ? "the listen ended with its result"
        : "the listen's stream ended without a result";
      const [first, ...later] = endedLines(run.stderr);
      const match = first?.match(
        /^\[host\] (.*) after \d+ ms: opened again in (\d+) ms$/,
      );
      assert.equal(match?.[1], how, run.stderr);
      const wait = Number(match?.[2]);
      assert.ok(wait >= 750 && wait <= 1000, `${wait} ms`);
      // Each next wait, after a stream as short, is twice as long.
      later.forEach((line, n) => {
        const next = Number(line.match(/opened again in (\d+) ms$/)?.[1]);
        const ceiling = 1000 * 2 ** (n + 1);
        assert.ok(next >= ceiling * 0.75 && next <= ceiling, line);
      });
      if (!report) {
        assert.match(
          run.stderr,
          /^\[server\] \[verdict\] level=6 client=reference-host\/[\d.]+ era=2026-07-28 /m,
        );
        return;
      }
      assert.equal(report.clients[0].level, 6);
      assert.equal(report.clients[0].era, era);
      // Its conduct as the lab records it: one stream, nothing to diagnose.
      const { conduct } = report.clients[0];
      assert.equal(conduct.getStreams.mostAtOnce, era === "2025" ? 1 : 0);
      assert.equal(conduct.updateAfterCut.received, true);
      assert.deepEqual(besidesOverlap(conduct.diagnoses), []);
      const tag = era === "2025" ? "stream/get" : "subscriptions/listen";
      const cut = labLines.findIndex((line) =>
        line.startsWith(`[${tag}] closed `) &&
        line.includes(` by=lab end=${end} `)
      );
      assert.ok(cut >= 0, labLines.join("\n"));
      assert.ok(
        labLines.slice(cut).some((line) =>
          line.startsWith(
            era === "2025"
              ? "[stream/get] opened "
              : "[subscriptions/listen] uris=test://review/status ",
          )
        ),
        labLines.join("\n"),
      );
    });
  }
});

Deno.test("reference host --no-reopen through a cut: it never opens the stream again, the update is lost and never reaches the model (below level 6, the control)", async (t) => {
  const missing: Record<string, string> = {
    "2025":
      "the notification was lost: the client's GET stream was closed when it was sent",
    "2026-07-28":
      "the notification was not delivered: no listen stream watches test://review/status",
  };
  for (const [era, next] of Object.entries(missing)) {
    for (const end of ["graceful", "abrupt"]) {
      await t.step(`${era}, ${end}`, async () => {
        const { run, requests, report, labLines } = await runWithLab({
          stdio: false,
          labFlags: ["--stream-lifetime", "1", "--stream-end", end],
          hostFlags: ["--era", era, "--no-reopen"],
        }, 4000);
        assert.equal(run.code, 0, run.stderr);
        assert.equal(requests.length, 3);
        assert.deepEqual(requests.flatMap(updatesIn), []);
        for (const line of endedLines(run.stderr)) {
          assert.match(line, / not opened again \(--no-reopen\)$/);
        }
        assert.ok(endedLines(run.stderr).length >= 1, run.stderr);
        assert.equal(report.clients[0].level, 4);
        assert.equal(report.clients[0].missing, next);
        const [diagnosis, ...more] = besidesOverlap(
          report.clients[0].conduct.diagnoses,
        );
        assert.deepEqual(more, []);
        assert.match(
          diagnosis,
          era === "2025"
            ? /^never opened its GET stream again after the stream ended: the update at \S+ was lost$/
            : /^never listened again after the stream ended: the update at \S+ was lost$/,
        );
        const opened = labLines.filter((line) =>
          line.startsWith(
            era === "2025"
              ? "[stream/get] opened "
              : "[subscriptions/listen] uris=test://review/status ",
          )
        );
        assert.equal(opened.length, 1, labLines.join("\n"));
      });
    }
  }
});

/** What the model is told of a resource the server will not watch. */
const notWatched = (why: string) =>
  `${UPDATE_MARK} ${REVIEW_URI} is not watched: ${why}. The host will not hear when it changes: read it again to see its content now.`;

Deno.test("reference host against --max-watches 0: one watch request, refused, never asked again; the model gets the content it read and is told, in an update message, that the resource is not watched and why (both eras)", async (t) => {
  const refused =
    "the server refused (error -32603: Subscription limit reached)";
  for (const era of ["2025", "2026-07-28"]) {
    await t.step(era, async () => {
      const { run, requests, report, labLines } = await runWithLab({
        stdio: false,
        labFlags: ["--max-watches", "0"],
        hostFlags: ["--era", era],
      }, 3000);
      assert.equal(run.code, 0, run.stderr);
      const rejected = labLines.filter((line) =>
        line.startsWith("[request/rejected] ")
      );
      assert.equal(rejected.length, 1, labLines.join("\n"));
      assert.match(
        rejected[0],
        /code=-32603 message="Subscription limit reached" client=reference-host\//,
      );
      assert.equal(requests.length, 3);
      const read = requests[1].find((message) => message.role === "tool");
      assert.match(read?.content ?? "", /^status: pending\nversion: 1\n/);
      assert.deepEqual(updatesIn(requests[1]), [notWatched(refused)]);
      assert.deepEqual(updatesIn(requests[2]), [notWatched(refused)]);
      assert.ok(
        run.stderr.split("\n").includes(
          `[host] "${REVIEW_URI}" is not watched: ${refused}`,
        ),
        run.stderr,
      );
      assert.doesNotMatch(run.stderr, /watching/);
      assert.equal(report.clients[0].level, 3);
      const { conduct } = report.clients[0];
      assert.equal(conduct.refusedWatches, 1);
      assert.equal(conduct.retriesAMinute, 0);
      assert.deepEqual(conduct.diagnoses, []);
    });
  }
});

Deno.test("reference host: a refusal's message reaches the model escaped and cut to 300 characters", async () => {
  const server = startJsonServer({
    refuseSubscribe: `\u001b[31mno ${"x".repeat(400)}`,
  });
  const model = startModel(200, "big://a");
  try {
    const run = await runHost(
      ["--era", "2025", "--url", server.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    const why = `the server refused (error -32603: \\u001b[31mno ${
      "x".repeat(MAX_REASON_CHARS - 8)
    }…)`;
    assert.deepEqual(updatesIn(model.requests[1]), [
      `${UPDATE_MARK} big://a is not watched: ${why}. The host will not hear when it changes: read it again to see its content now.`,
    ]);
  } finally {
    await model.close();
    await server.close();
  }
});

Deno.test("reference host: a server whose capabilities do not offer resources.subscribe is not asked to watch; the model is told", async () => {
  const server = startJsonServer({
    withoutSubscribe: true,
    // Asked all the same, the refusal would be the reason told.
    refuseSubscribe: "asked",
  });
  const model = startModel(200, "big://a");
  try {
    const run = await runHost(
      ["--era", "2025", "--url", server.url, "Go"],
      model.baseUrl,
    );
    assert.equal(run.code, 0, run.stderr);
    const why = "the server does not offer resources.subscribe";
    assert.deepEqual(updatesIn(model.requests[1]), [
      `${UPDATE_MARK} big://a is not watched: ${why}. The host will not hear when it changes: read it again to see its content now.`,
    ]);
    assert.ok(
      run.stderr.split("\n").includes(
        `[host] "big://a" is not watched: ${why}`,
      ),
      run.stderr,
    );
  } finally {
    await model.close();
    await server.close();
  }
});

Deno.test("reference host --era auto against a one-era lab: 2025 against --era 2025, 2026-07-28 against --era 2026-07-28, and the update reaches the model (HTTP and stdio)", async (t) => {
  for (const era of ["2025", "2026-07-28"]) {
    for (const stdio of [false, true]) {
      await t.step(`${era}, ${stdio ? "stdio" : "HTTP"}`, async () => {
        const { run, requests, report } = await runWithLab({
          stdio,
          labFlags: ["--era", era],
          hostFlags: [],
        }, 4000);
        assert.equal(run.code, 0, run.stderr);
        assertUpdateReached(requests, run.stderr);
        if (report) {
          assert.equal(report.clients.length, 1);
          assert.equal(report.clients[0].era, era);
          assert.equal(report.clients[0].level, 6);
        } else {
          assert.match(
            run.stderr,
            new RegExp(
              `^\\[server\\] \\[verdict\\] level=6 client=reference-host/[\\d.]+ era=${era} `,
              "m",
            ),
          );
        }
      });
    }
  }
});

Deno.test("reference host against --max-watches 1 (2026-07-28, HTTP and stdio): it closes its listen before it opens the wider one, so the cap never refuses it, and the update reaches the model", async (t) => {
  for (const stdio of [false, true]) {
    await t.step(stdio ? "stdio" : "HTTP", async () => {
      const { run, requests, report, labLines } = await runWithLab({
        stdio,
        labFlags: ["--max-watches", "1"],
        hostFlags: ["--era", "2026-07-28"],
      }, 4000);
      assert.equal(run.code, 0, run.stderr);
      assertUpdateReached(requests, run.stderr);
      assert.doesNotMatch(run.stderr, /refused|\[request\/rejected\]/);
      const lines = stdio
        ? run.stderr.split("\n").map((line) => line.replace(/^\[server\] /, ""))
        : labLines;
      // The lists' listen closed, then the resource's opened.
      const listens = lines.filter((line) =>
        line.startsWith("[subscriptions/listen] ")
      ).map((line) => line.split(" ")[1]);
      assert.deepEqual(listens.slice(0, 3), [
        "uris=",
        "closed",
        `uris=${REVIEW_URI}`,
      ]);
      if (report) {
        assert.equal(report.clients[0].level, 6);
        assert.equal(report.clients[0].conduct.streamsAtOnce, 1);
      } else {
        assert.match(
          run.stderr,
          /^\[server\] \[verdict\] level=6 client=reference-host\/[\d.]+ era=2026-07-28 /m,
        );
      }
    });
  }
});

// ---------------------------------------------------------------------------
// Acknowledgements narrowed, listens not permitted, no resources.subscribe
// ---------------------------------------------------------------------------

Deno.test("reference host against --listen-ack and --without-subscribe: a resource the server will not watch is not asked again and the model is told why; a listen that honours nothing is closed, not held", async (t) => {
  const leftOut = "the server's acknowledgement of the listen left it out";
  const cases = [
    { era: "2026-07-28", flags: ["--listen-ack", "lists"], why: leftOut },
    { era: "2026-07-28", flags: ["--listen-ack", "none"], why: leftOut },
    {
      era: "2026-07-28",
      flags: ["--listen-ack", "not-permitted"],
      why:
        "the server refused (error -32600: not permitted to watch the requested resources)",
    },
    ...["2025", "2026-07-28"].map((era) => ({
      era,
      flags: ["--without-subscribe"],
      why: "the server does not offer resources.subscribe",
    })),
  ];
  for (const { era, flags, why } of cases) {
    await t.step(`${era}, ${flags.join(" ")}`, async () => {
      const { run, requests, report, labLines } = await runWithLab({
        stdio: false,
        labFlags: flags,
        hostFlags: ["--era", era],
      }, 500);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(updatesIn(requests[1]), [notWatched(why)]);
      assert.ok(
        run.stderr.split("\n").includes(
          `[host] "${REVIEW_URI}" is not watched: ${why}`,
        ),
        run.stderr,
      );
      assert.doesNotMatch(run.stderr, /watching/);
      assert.equal(report.clients[0].level, 3);
      // The lists' listen and the resource's, each honouring nothing.
      const closed = run.stderr.match(
        /^\[host\] the listen's acknowledgement honours nothing: the host closes it$/gm,
      );
      assert.equal(closed?.length ?? 0, flags[1] === "none" ? 2 : 0);
      const listsLeftOut = run.stderr.match(
        /^\[host\] the listen's acknowledgement left out resourcesListChanged$/gm,
      );
      assert.equal(listsLeftOut?.length ?? 0, flags[1] === "none" ? 1 : 0);
      // One refusal at most, and none asked again.
      const rejected = labLines.filter((line) =>
        line.startsWith("[request/rejected] ")
      );
      assert.equal(rejected.length, flags[1] === "not-permitted" ? 1 : 0);
      // Without the capability, no watch of the resource is asked at all.
      if (flags[0] === "--without-subscribe") {
        assert.deepEqual(
          labLines.filter((line) =>
            /^\[resources\/subscribe\]|^\[subscriptions\/listen\] uris=test/
              .test(line)
          ),
          [],
        );
      }
    });
  }
});

// ---------------------------------------------------------------------------
// A cut stream's gap: the update the lab sent while the stream was closed
// ---------------------------------------------------------------------------

/**
 * Resolves once `seen` holds a line `matches` accepts (the lab's, as it
 * comes), or at the host's deadline: the test's assertions then fail.
 */
async function lineIn(seen: string[], matches: (line: string) => boolean) {
  const end = Date.now() + HOST_DEADLINE_MS;
  while (!seen.some(matches) && Date.now() < end) await sleep(50);
}

/** The lab's line for a read of version 2 of the resource. */
const readsVersion2 = (line: string) =>
  line.startsWith("[resources/read] ") && / version=2( |$)/.test(line);

/** The lab's lines for its update's notification: ` delivered=false …` if lost. */
const updateSent = (lines: string[]) =>
  lines.filter((line) =>
    line.startsWith("[notification/send] notifications/resources/updated ")
  ).map((line) => line.match(/ delivered=\S+/)?.[0]);

/**
 * The host against a lab that ends every stream 1 s after it opened and
 * sends its update 2 s after the watch, the host's first re-open 3.75-5 s
 * after a cut (`--reopen-wait 5`): the update falls in the first gap, so no
 * stream can deliver it, however slow the machine. In the lab the two
 * times count from one moment: in 2026-07-28 the listen's acknowledgement
 * (the stream's open starts its lifetime, and a listen watching the
 * resource counts as the subscribe that starts the update's delay), so the
 * update comes 1 s after the cut; in 2025 the GET stream's open and the
 * `resources/subscribe` (the SDK opens the stream right after
 * `initialize`, the subscribe follows the model's first answer and the
 * read, some 40 ms later), so the update comes 1 s and that much after the
 * cut: 2.75 s of it to spare before the re-open, which load only delays.
 * The model answers its second request once the lab's line `until`
 * accepts came.
 */
async function runThroughGap(
  era: string,
  hostFlags: string[],
  until: (line: string) => boolean,
) {
  const spawned = await spawnLab({
    mainPath: MAIN_PATH,
    args: ["--delay", "2", "--stream-lifetime", "1"],
    env: { MCP_TEST_LOG_LEVEL: "info" },
  });
  const model = startModel(() => lineIn(spawned.lines, until));
  try {
    const run = await runHost(
      [
        "--era",
        era,
        "--reopen-wait",
        "5",
        ...hostFlags,
        "--url",
        spawned.url,
        "Go",
      ],
      model.baseUrl,
    );
    const report = await (await fetch(`${spawned.origin}/report`)).json();
    return { run, requests: model.requests, report, labLines: spawned.lines };
  } finally {
    await model.close();
    await spawned.stop();
  }
}

/** The host's lines saying the stream is open again and what it reads. */
const reopenedLines = (stderr: string) =>
  stderr.match(/^\[host\] the stream is open again: .*$/gm) ?? [];

Deno.test("reference host: an update the lab sent while the stream was cut reaches the model, as the host reads what it watches again once the stream is open again; with --no-reopen it never does (both eras, HTTP)", async (t) => {
  const lost: Record<string, string> = {
    "2025":
      "the notification was lost: the client's GET stream was closed when it was sent",
    "2026-07-28":
      "the notification was not delivered: no listen stream watches test://review/status",
  };
  const opens: Record<string, string> = {
    "2025": "[stream/get] opened ",
    "2026-07-28": `[subscriptions/listen] uris=${REVIEW_URI} `,
  };
  for (const era of ["2025", "2026-07-28"]) {
    await t.step(`${era}: the re-read after the re-open`, async () => {
      const { run, requests, report, labLines } = await runThroughGap(
        era,
        [],
        readsVersion2,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(requests.length, 3, run.stderr);
      assert.deepEqual(updatesIn(requests[1]), []);
      const [update, ...more] = updatesIn(requests[2]);
      assert.deepEqual(more, []);
      assert.match(
        update ?? "",
        /^\[Update from the MCP server\] test:\/\/review\/status changed at \S+ \(the host's stream to the server was cut, and the host read it again once the stream was open again\)\. Its content now:\nstatus: reviewed\nversion: 2\n/,
      );
      // One re-open before the update went to the model: its re-read
      // found version 2.
      const before = run.stderr.slice(
        0,
        run.stderr.indexOf("changed: the update goes to the model"),
      );
      assert.deepEqual(reopenedLines(before), [
        "[host] the stream is open again: the host reads 1 watched resource(s) again",
      ]);
      // The lab sent the update to no stream: it was in the gap.
      assert.deepEqual(updateSent(labLines), [" delivered=false"]);
      const [client] = report.clients;
      assert.equal(client.level, 4);
      assert.equal(client.missing, lost[era]);
      assert.equal(client.conduct.updateAfterCut.received, false);
      assert.deepEqual(besidesOverlap(client.conduct.diagnoses), []);
      // Version 2 read on the second stream: the first, and its re-open.
      const read = labLines.findIndex(readsVersion2);
      assert.ok(read >= 0, labLines.join("\n"));
      assert.equal(
        labLines.slice(0, read).filter((line) => line.startsWith(opens[era]))
          .length,
        2,
        labLines.join("\n"),
      );
    });
    await t.step(`${era}: --no-reopen, the control`, async () => {
      const { run, requests, report, labLines } = await runThroughGap(
        era,
        ["--no-reopen"],
        (line) => updateSent([line]).length > 0,
      );
      assert.equal(run.code, 0, run.stderr);
      assert.equal(requests.length, 3, run.stderr);
      assert.deepEqual(requests.flatMap(updatesIn), []);
      assert.deepEqual(reopenedLines(run.stderr), []);
      const [client] = report.clients;
      assert.equal(client.level, 4);
      assert.equal(client.missing, lost[era]);
      assert.equal(client.conduct.updateAfterCut.received, false);
      assert.equal(
        besidesOverlap(client.conduct.diagnoses).length,
        1,
        client.conduct.diagnoses.join("; "),
      );
      assert.deepEqual(updateSent(labLines), [" delivered=false"]);
      assert.equal(labLines.filter(readsVersion2).length, 0);
      assert.equal(
        labLines.filter((line) => line.startsWith(opens[era])).length,
        1,
        labLines.join("\n"),
      );
    });
  }
});
