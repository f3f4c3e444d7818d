/**
 * Tests for the probe (`probe.ts`): the real probe against the lab in both
 * eras and transports, against small servers written here that each get one
 * thing wrong, and as a command: on its own and as `main.ts probe`, from a
 * checkout and from a URL that serves the files as plain text.
 *
 * ```sh
 * deno test -P probe_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  createMcpHandler,
  InMemoryServerEventBus,
  isLegacyRequest,
  ProtocolError,
  Server,
} from "npm:@modelcontextprotocol/server@2.4.0";
import {
  CATALOG_ADDED,
  CATALOG_KINDS,
  cell,
  jsonText,
  LAB_VERSION,
  REVIEW_URI,
} from "./main.ts";
import {
  prepareTestEnvironment,
  PROBE_PATH,
  startLab,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import { MAIN_PATH } from "./launch.ts";
import {
  COUNTER_URI,
  type FastRmcpOptions,
  serveFastRmcp,
} from "./testdata/fastrmcp.ts";
import { LegacySessions } from "./testdata/legacy_sessions.ts";
import { outsideFolder, serveCheckoutAsText } from "./testdata/from_url.ts";
import { forwardUses, sectionLengths } from "./testdata/reading_order.ts";
import {
  PROBE_EXIT_STATUS,
  probeLines,
  probeMarkdown,
  type ProbeOptions,
  type ProbeResult,
  probeServer,
  unchangedSummary,
  unknownUri,
} from "./probe.ts";

prepareTestEnvironment();

const CHECKOUT = new URL("./", import.meta.url);
const FASTRMCP_PATH = new URL("./testdata/fastrmcp.ts", import.meta.url)
  .pathname;

// ---------------------------------------------------------------------------
// Helpers: the probe's options, the probe as a command, its lines and diagram
// ---------------------------------------------------------------------------

/** Probe options for `target`, as `probe --url` (or `--stdio`) would set them. */
function probeOptions(
  target: { url?: URL; command?: string[] },
  overrides: Partial<ProbeOptions> = {},
): ProbeOptions {
  return {
    ...target,
    uri: REVIEW_URI,
    uriDefaulted: false,
    era: "auto",
    timeoutSeconds: 5,
    maxBytes: 4 * 1024 * 1024,
    count: 1,
    skipListCheck: false,
    headers: {},
    embed: false,
    catalog: [],
    catalogOnly: false,
    watchGate: false,
    json: false,
    ...overrides,
  };
}

/** How to start the probe as a command; the default is `probe.ts` here. */
interface ProbeCommand {
  /** Deno's flags and the entry, e.g. `main.ts probe`; `-A` comes first. */
  entry?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/** Runs the probe as a command and returns its exit status and streams. */
async function runProbeCommand(
  args: string[],
  { entry = [PROBE_PATH], env = {}, cwd }: ProbeCommand = {},
) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...entry, ...args],
    env,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: output.code,
    stdout: new TextDecoder().decode(output.stdout),
    stderr: new TextDecoder().decode(output.stderr),
  };
}

/** Every line of a probe diagram is a participant, an arrow or a note. */
function assertProbeDiagram(
  markdown: string,
  server = `mcp-resource-subscription-lab/${LAB_VERSION}`,
) {
  const diagram = markdown.split("```mermaid\n")[1].split("```")[0];
  const [first, ...lines] = diagram.trimEnd().split("\n");
  assert.equal(first, "sequenceDiagram");
  assert.deepEqual(lines.slice(0, 2), [
    "    participant P as probe",
    `    participant S as ${server}`,
  ]);
  for (const line of lines.slice(2)) {
    assert.match(line, /^ {4}(P->>S|S-->>P|Note over P,S): [^;#\n]+$/);
  }
  return diagram;
}

/** The probe's lines for `result`, the notification's arrival time as `T`. */
function timelessLines(result: ProbeResult): string[] {
  return probeLines(result).map((line) =>
    line.replace(/ after=\d+(\.\d+)?s /, " after=Ts ")
  );
}

// ---------------------------------------------------------------------------
// The lab probed: level 7, the command's outputs, and each way a run fails
// ---------------------------------------------------------------------------

for (const era of ["2025", "2026-07-28"] as const) {
  Deno.test(`probe (${era}): the lab delivers, re-reads changed and stops cleanly: level 7`, async () => {
    await using lab = startLab();
    const result = await probeServer(probeOptions({ url: lab.url }, { era }));
    assert.equal(result.level, 7);
    assert.equal(result.errorCode, null);
    assert.equal(result.exitStatus, 0);
    assert.equal(result.era, era);
    assert.equal(result.initial, VERSION_1_TEXT);
    assert.equal(result.updates.length, 1);
    assert.equal(result.updates[0].final, VERSION_2_TEXT);
    assert.equal(result.updates[0].changed, true);
    assert.equal(result.quietAfterStop, true);
    // Every line, exactly; only the notification's arrival time varies.
    const lines = timelessLines(result);
    const protocol = era === "2025" ? "2025-11-25" : "2026-07-28";
    assert.deepEqual(lines, [
      `target ${lab.url.href}`,
      `uri ${REVIEW_URI}`,
      `era ${era} (${protocol})`,
      `server mcp-resource-subscription-lab ${LAB_VERSION}`,
      'capabilities {"subscribe":true,"listChanged":true}',
      "resource-found true",
      `initial ${JSON.stringify(VERSION_1_TEXT)}`,
      "subscribed true",
      ...era === "2026-07-28"
        ? [`acknowledged {"resourceSubscriptions":["${REVIEW_URI}"]}`]
        : ["list-subscriptions unsupported"],
      `notification-received true after=Ts uri=${REVIEW_URI}`,
      "changed true",
      `final ${JSON.stringify(VERSION_2_TEXT)}`,
      "inline-content none",
      "unchanged-notifications 0",
      "unsolicited-notifications 0",
      "unsubscribed true",
      "quiet-after-unsubscribe true",
      "level 7 stops cleanly",
      "missing nothing: the server delivers the update and stops cleanly",
      "error-code null",
      `summary level=7 era=${era} notifications=1/1 error-code=null exit=0`,
    ]);
    const markdown = probeMarkdown(result);
    assert.match(
      markdown,
      new RegExp(
        `^\\| mcp-resource-subscription-lab \\| ${LAB_VERSION} \\| ${era} \\(${protocol}\\) \\| streamable-http \\| (✅ \\| ){7}7 \\| `,
        "m",
      ),
    );
    assert.match(
      assertProbeDiagram(markdown),
      /S-->>P: notifications\/resources\/updated test:\/\/review\/status/,
    );
    // The lab saw the same run: level 6 from its side.
    const entry = lab.lab.report().clients.find((c) =>
      c.name === "mcp-subscription-probe"
    )!;
    assert.equal(entry.level, 6);
  });
}

Deno.test("probe command: lines on stdout, progress on stderr, --json and --report the same facts", async (t) => {
  await using lab = startLab();
  await t.step("key value lines on stdout, progress on stderr", async () => {
    const plain = await runProbeCommand([
      "--url",
      lab.url.href,
      "--era",
      "2025",
    ]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.ok(
      plain.stdout.split("\n").every((line) => !line.startsWith("[probe]")),
    );
    assert.match(plain.stderr, /^\[probe\] -> resources\/subscribe$/m);
    assert.match(
      plain.stdout,
      /^summary level=7 era=2025 notifications=1\/1 error-code=null exit=0$/m,
    );
    assert.match(
      plain.stdout,
      /^uri test:\/\/review\/status \(the default: this lab's resource/m,
    );
  });

  await t.step("--json on stdout, --report FILE beside it", async () => {
    const report = await Deno.makeTempFile({ suffix: ".md" });
    const json = await runProbeCommand([
      "--url",
      lab.url.href,
      "--json",
      "--report",
      report,
    ]);
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout) as ProbeResult;
    assert.equal(result.level, 7);
    assert.equal(result.era, "2026-07-28");
    assert.equal(result.exitStatus, 0);
    const markdown = await Deno.readTextFile(report);
    await Deno.remove(report);
    assert.match(markdown, /^# MCP subscription probe report$/m);
    assert.match(markdown, /^Level 7 of 7, stops cleanly\./m);
  });

  await t.step(
    "--report - puts the report on stdout instead of lines",
    async () => {
      const toStdout = await runProbeCommand([
        "--url",
        lab.url.href,
        "--report",
        "-",
      ]);
      assert.equal(toStdout.code, 0);
      assert.match(toStdout.stdout, /^# MCP subscription probe report$/m);
      assert.doesNotMatch(toStdout.stdout, /^summary /m);
    },
  );
});

Deno.test("probe: an update later than --timeout is notification-timeout, exit 16", async (t) => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "30" });
  for (const era of ["2025", "2026-07-28"] as const) {
    await t.step(era, async () => {
      const result = await probeServer(
        probeOptions({ url: lab.url }, { era, timeoutSeconds: 0.3 }),
      );
      assert.equal(result.errorCode, "notification-timeout");
      assert.equal(result.exitStatus, 16);
      assert.equal(result.level, 4);
      assert.equal(
        result.missing,
        `no notifications/resources/updated for ${REVIEW_URI} within 0.3 s`,
      );
      assert.ok(probeLines(result).includes("notification-received false"));
    });
  }
});

Deno.test("probe: a token-guarded lab is auth-required (exit 12) without MCP_PROBE_AUTH_TOKEN, level 7 with it, and the token is never printed", async () => {
  const token = "probe-secret-7f3a";
  await using lab = startLab({ MCP_TEST_AUTH_TOKEN: token });
  const refused = await runProbeCommand(["--url", lab.url.href, "--json"]);
  assert.equal(refused.code, 12);
  const result = JSON.parse(refused.stdout) as ProbeResult;
  assert.equal(result.errorCode, "auth-required");
  assert.equal(
    result.error?.wwwAuthenticate,
    'Bearer realm="mcp-subscription-lab", error="invalid_token"',
  );
  // The header as the server sent it, quoted: it holds spaces and quotes.
  assert.equal(
    result.missing,
    `the server requires authentication (HTTP 401, WWW-Authenticate: ${
      JSON.stringify(result.error?.wwwAuthenticate)
    })`,
  );
  for (const form of [["--json"], []]) {
    const allowed = await runProbeCommand(["--url", lab.url.href, ...form], {
      env: { MCP_PROBE_AUTH_TOKEN: token },
    });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.ok(
      !allowed.stdout.includes(token) && !allowed.stderr.includes(token),
    );
  }
  const flagged = await runProbeCommand([
    "--url",
    lab.url.href,
    "--auth-token",
    token,
    "--report",
    "-",
  ]);
  assert.equal(flagged.code, 0);
  assert.ok(!flagged.stdout.includes(token) && !flagged.stderr.includes(token));
});

Deno.test("probe: unreachable (exit 10), not MCP (exit 11), resource not found (exit 15), failed call (exit 19)", async (t) => {
  await using lab = startLab();
  await t.step("unreachable", async () => {
    const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = closed.addr.port;
    closed.close();
    const unreachable = await probeServer(
      probeOptions({ url: new URL(`http://127.0.0.1:${port}/mcp`) }),
    );
    assert.equal(unreachable.errorCode, "unreachable");
    assert.equal(unreachable.exitStatus, 10);
    assert.equal(unreachable.level, 0);
  });

  await t.step("not MCP", async () => {
    const notMcp = await probeServer(
      probeOptions({ url: new URL(`${lab.base}/elsewhere`) }, { era: "2025" }),
    );
    assert.equal(notMcp.errorCode, "not-mcp");
    assert.equal(notMcp.exitStatus, 11);
    assert.match(notMcp.missing, /^not an MCP endpoint: HTTP 404 /);
  });

  for (const era of ["2025", "2026-07-28"] as const) {
    await t.step(`resource not found (${era})`, async () => {
      const missing = await probeServer(
        probeOptions({ url: lab.url }, {
          era,
          uri: "test://review/missing",
          skipListCheck: true,
        }),
      );
      assert.equal(missing.errorCode, "resource-not-found");
      assert.equal(missing.exitStatus, 15);
      assert.equal(missing.error?.code, era === "2025" ? -32002 : -32602);
      const unlisted = await probeServer(
        probeOptions({ url: lab.url }, { era, uri: "test://review/missing" }),
      );
      assert.equal(unlisted.errorCode, "resource-not-found");
      assert.equal(unlisted.resourceFound, false);
    });
  }

  await t.step("failed call", async () => {
    const call = await probeServer(
      probeOptions({ url: lab.url }, {
        call: { name: "no_such_tool", arguments: {} },
      }),
    );
    assert.equal(call.errorCode, "call-failed");
    assert.equal(call.exitStatus, 19);
    assert.equal(call.level, 4);
    assert.match(
      call.missing,
      /^tools\/call no_such_tool failed: .*Unknown tool: no_such_tool/,
    );
  });
});

Deno.test("probe: a listen stream that closes before the update is stream-closed (exit 18)", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "30" });
  let closing: Promise<void> | undefined;
  const result = await probeServer(
    probeOptions({ url: lab.url }, { era: "2026-07-28" }),
    (line) => {
      // The lab shuts down once the listen is acknowledged: a graceful end.
      if (line.startsWith("<- acknowledged")) closing ??= lab.lab.close();
    },
  );
  await closing;
  assert.equal(result.errorCode, "stream-closed");
  assert.equal(result.exitStatus, 18);
  assert.equal(result.missing, "the stream closed before the update");
});

Deno.test("probe --stdio: the lab over stdio reaches level 7 in both eras", async (t) => {
  for (const era of ["2025", "2026-07-28"]) {
    await t.step(era, async () => {
      const run = await runProbeCommand([
        "--era",
        era,
        "--json",
        "--stdio",
        "--",
        Deno.execPath(),
        "run",
        "-A",
        MAIN_PATH,
        "--stdio",
        "--delay",
        "0.2",
      ]);
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout) as ProbeResult;
      assert.equal(result.transport, "stdio");
      assert.equal(result.era, era);
      assert.equal(result.level, 7);
    });
  }
  await t.step(
    "the server gets the probe's environment, without its token",
    async () => {
      const run = await runProbeCommand([
        "--json",
        "--stdio",
        "--",
        "/bin/sh",
        "-c",
        'printf "token=[%s] status=[%s]\\n" "$MCP_PROBE_AUTH_TOKEN" "$MCP_TEST_INITIAL_STATUS" >&2; exec "$LAB_DENO" run -A "$0" --stdio --delay 0.2',
        MAIN_PATH,
      ], {
        env: {
          MCP_TEST_INITIAL_STATUS: "queued",
          MCP_PROBE_AUTH_TOKEN: "probe-secret",
          // The server finds Deno by the probe's environment, too.
          LAB_DENO: Deno.execPath(),
        },
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /^\[server\] token=\[\] status=\[queued\]$/m);
      assert.ok(!run.stderr.includes("probe-secret"));
      const result = JSON.parse(run.stdout) as ProbeResult;
      assert.match(result.initial ?? "", /^status: queued\n/);
    },
  );
});

Deno.test("probe --count: waits for each update and re-reads it; fewer than asked is a timeout naming how many came", async (t) => {
  await t.step("three updates, each re-read", async () => {
    await using lab = startLab({
      MCP_TEST_UPDATE_COUNT: "3",
      MCP_TEST_UPDATE_INTERVAL_SECONDS: "0.2",
    });
    const result = await probeServer(
      probeOptions({ url: lab.url }, { era: "2025", count: 3 }),
    );
    assert.equal(result.level, 7);
    assert.deepEqual(
      result.updates.map((update) => update.final?.split("\n")[1]),
      ["version: 2", "version: 3", "version: 4"],
    );
    const lines = probeLines(result);
    assert.equal(
      lines.filter((line) => line.startsWith("notification-received true"))
        .length,
      3,
    );
    assert.ok(
      lines.includes(
        "summary level=7 era=2025 notifications=3/3 error-code=null exit=0",
      ),
    );
  });
  await t.step("two asked for, one came", async () => {
    await using lab = startLab();
    const result = await probeServer(
      probeOptions({ url: lab.url }, { count: 2, timeoutSeconds: 0.5 }),
    );
    assert.equal(result.errorCode, "notification-timeout");
    assert.equal(result.exitStatus, 16);
    // It still unsubscribed cleanly: the ladder says so, the exit status not.
    assert.equal(result.level, 7);
    assert.equal(
      result.missing,
      `no notifications/resources/updated for ${REVIEW_URI} within 0.5 s (1 of 2 came)`,
    );
  });
});

Deno.test("probe --header: extra headers reach the server (a bearer token given as a header)", async () => {
  await using lab = startLab({ MCP_TEST_AUTH_TOKEN: "header-token" });
  const result = await probeServer(
    probeOptions({ url: lab.url }, {
      headers: { Authorization: "Bearer header-token" },
    }),
  );
  assert.equal(result.level, 7);
  // A lab of its own: the same clientInfo again would continue the first run.
  await using second = startLab({ MCP_TEST_AUTH_TOKEN: "header-token" });
  const run = await runProbeCommand([
    "--url",
    second.url.href,
    "--header",
    "Authorization: Bearer header-token",
    "--header",
    "X-Probe: yes",
  ]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
});

// ---------------------------------------------------------------------------
// Odd servers: small servers that each get one thing wrong
// ---------------------------------------------------------------------------

/** What an odd test server does wrong. */
interface OddServer {
  advertiseSubscribe?: boolean;
  refuseSubscribe?: boolean;
  /** Each read answers new text. */
  changing?: boolean;
  notifyAfterUnsubscribe?: boolean;
  /** 2026-07-28 only: acknowledge listens without any resource. */
  dropListenFilter?: boolean;
  /**
   * The text stays "version 1" through this many notifications, then each
   * one changes it; the next notification follows each read, so the count
   * holds however slow the machine.
   */
  unchangedFirst?: number;
  /** 2025: on subscribe, first notify these URIs, which nobody asked for. */
  unsolicited?: string[];
  /** The text is this file's; a change to it is notified. */
  file?: string;
  /** A `poke` tool that notifies the resource whether subscribed or not. */
  pokeTool?: boolean;
  /** Its `poke` tool answers this JSON-RPC error message instead. */
  pokeError?: string;
  /** How it introduces itself (default odd 0.0.1). */
  serverInfo?: { name: string; version: string };
  /** Put before every text it reads out. */
  textPrefix?: string;
  /** 2025: once subscribed, notifies a URI nobody asked for every millisecond. */
  flood?: boolean;
  /** 2025: once subscribed, notifies the watched URI every millisecond. */
  floodWatched?: boolean;
  /** Called as each subscribe comes in. */
  onSubscribe?: () => void;
  /** 2025: notifies the watched URI once, as it subscribes, and never again. */
  notifyOnSubscribeOnly?: boolean;
  /** 2025: notifies the watched URI once, this many ms after the subscribe, and never again. */
  notifyOnceAfter?: number;
  /** 2025: a subscribe starts nothing; only its `poke` tool notifies. */
  quietUntilPoked?: boolean;
  /** Also serve on a second port, sharing everything: a second endpoint. */
  secondPort?: boolean;
  /** Reads of any URI but these are refused, not found (default: every URI reads). */
  readable?: string[];
  /**
   * A watch gate: a subscribe, or a listen, naming a URI outside `readable`
   * is refused with this message before it is acknowledged.
   */
  watchGate?: string;
  /**
   * 2026-07-28, SEP-3119: its text is "version N", its `poke` tool changes
   * it and notifies the listen streams, and a listen that asked with
   * `embedResources` gets the text inline.
   */
  embed?: boolean;
  /** Inline in place of the text: content that its own read contradicts. */
  inlineText?: string;
}

const ODD_URI = "odd://thing";

/**
 * A small server that gets one thing wrong: 2025 sessions over the SDK's
 * transport, or 2026-07-28 through `createMcpHandler`.
 */
function startOddServer(odd: OddServer) {
  let reads = 0;
  let sent = 0;
  let pokes = 0;
  let embedAsked = false;
  const bus = new InMemoryServerEventBus();
  const timers = new Set<ReturnType<typeof setInterval>>();
  const text = () => {
    if (odd.embed) return `version ${pokes + 1}`;
    if (odd.file) return Deno.readTextFileSync(odd.file);
    if (odd.unchangedFirst !== undefined) {
      return `version ${Math.max(1, sent - odd.unchangedFirst + 1)}`;
    }
    return `${odd.textPrefix ?? ""}${
      odd.changing ? `read ${++reads}` : "always the same"
    }`;
  };
  const build = () => {
    const server = new Server(
      odd.serverInfo ?? { name: "odd", version: "0.0.1" },
      {
        capabilities: {
          resources: { subscribe: odd.advertiseSubscribe ?? true },
          tools: {},
        },
      },
    );
    const notify = (uri = ODD_URI) => {
      if (uri === ODD_URI) sent++;
      return server.sendResourceUpdated({ uri }).catch(() => {});
    };
    let subscribed = false;
    server.setRequestHandler("resources/list", () => ({
      resources: [{ uri: ODD_URI, name: "thing" }],
    }));
    server.setRequestHandler("resources/read", (request) => {
      if (odd.readable && !odd.readable.includes(request.params.uri)) {
        throw new ProtocolError(-32002, `not found: ${request.params.uri}`);
      }
      const answer = { contents: [{ uri: ODD_URI, text: text() }] };
      // The next notification, until the one that changes the text.
      if (
        subscribed && odd.unchangedFirst !== undefined &&
        sent <= odd.unchangedFirst
      ) {
        timers.add(setTimeout(notify, 50));
      }
      return answer;
    });
    server.setRequestHandler("tools/list", () => ({
      tools: odd.pokeTool
        ? [{ name: "poke", inputSchema: { type: "object" as const } }]
        : [],
    }));
    server.setRequestHandler("tools/call", async () => {
      if (odd.pokeError) throw new ProtocolError(-32603, odd.pokeError);
      if (odd.embed) {
        pokes++;
        const inline = {
          mimeType: "text/plain",
          text: odd.inlineText ?? text(),
        };
        bus.publish({
          kind: "resource_updated",
          uri: ODD_URI,
          params: embedAsked ? inline : undefined,
        });
        return { content: [] };
      }
      await notify();
      return { content: [] };
    });
    if (odd.advertiseSubscribe !== false) {
      let timer: ReturnType<typeof setInterval> | undefined;
      server.setRequestHandler("resources/subscribe", async (request) => {
        if (request.params.uri !== ODD_URI) {
          if (odd.watchGate) throw new ProtocolError(-32001, odd.watchGate);
          return {};
        }
        if (odd.refuseSubscribe) {
          throw new ProtocolError(-32603, "subscriptions are switched off");
        }
        subscribed = true;
        odd.onSubscribe?.();
        for (const uri of odd.unsolicited ?? []) await notify(uri);
        if (odd.flood) {
          timers.add(setInterval(() => notify("other://flood"), 1));
        }
        if (odd.floodWatched) timers.add(setInterval(notify, 1));
        if (odd.quietUntilPoked) return {};
        if (odd.notifyOnceAfter !== undefined) {
          timers.add(setTimeout(notify, odd.notifyOnceAfter));
          return {};
        }
        if (odd.notifyOnSubscribeOnly) {
          await notify();
          return {};
        }
        timer = odd.unchangedFirst !== undefined
          ? setTimeout(notify, 50)
          : odd.file
          ? fileWatcher(odd.file, notify)
          : setInterval(notify, 100);
        timers.add(timer);
        return {};
      });
      server.setRequestHandler("resources/unsubscribe", (request) => {
        if (request.params.uri !== ODD_URI) return {};
        subscribed = false;
        if (!odd.notifyAfterUnsubscribe) clearInterval(timer);
        return {};
      });
    }
    return server;
  };
  const sessions = new LegacySessions(build);
  const modern = createMcpHandler(build, { legacy: "reject", bus });
  const handler = async (request: Request) => {
    const body = request.method === "POST" ? await request.json() : undefined;
    const forwarded = new Request(request.url, {
      method: request.method,
      headers: request.headers,
    });
    if (!await isLegacyRequest(forwarded, body)) {
      if (body?.method === "subscriptions/listen") {
        embedAsked = body.params?.embedResources === true;
        const uris: string[] =
          body.params?.notifications?.resourceSubscriptions ?? [];
        if (odd.watchGate && uris.some((uri) => uri !== ODD_URI)) {
          return Response.json({
            jsonrpc: "2.0",
            id: body.id,
            error: { code: -32001, message: odd.watchGate },
          });
        }
      }
      const listen = odd.dropListenFilter &&
        body?.method === "subscriptions/listen";
      const parsedBody = listen
        ? {
          ...body,
          params: {
            ...body.params,
            notifications: { resourceSubscriptions: [] },
          },
        }
        : body;
      return modern.fetch(forwarded, { parsedBody });
    }
    return sessions.handle(forwarded, body);
  };
  const listen = { hostname: "127.0.0.1", port: 0, onListen() {} };
  const http = Deno.serve(listen, handler);
  // The same server on a second port: one deployment, two endpoints.
  const second = odd.secondPort ? Deno.serve(listen, handler) : undefined;
  return {
    url: new URL(`http://127.0.0.1:${http.addr.port}/mcp`),
    secondUrl: second && new URL(`http://127.0.0.1:${second.addr.port}/mcp`),
    async [Symbol.asyncDispose]() {
      for (const timer of timers) clearInterval(timer);
      await sessions.close();
      await modern.close();
      await http.shutdown();
      await second?.shutdown();
    },
  };
}

/** Notifies whenever `path`'s text changes, checking every 50 ms. */
function fileWatcher(path: string, notify: () => void) {
  let last = Deno.readTextFileSync(path);
  return setInterval(() => {
    const now = Deno.readTextFileSync(path);
    if (now !== last) notify();
    last = now;
  }, 50);
}

/** Probes an odd server that gets `odd` wrong, then stops it. */
async function probeOdd(
  odd: OddServer,
  era: "2025" | "2026-07-28",
  overrides: Partial<ProbeOptions> = {},
) {
  await using server = startOddServer(odd);
  return await probeServer(
    probeOptions({ url: server.url }, { era, uri: ODD_URI, ...overrides }),
  );
}

// ---------------------------------------------------------------------------
// Odd servers probed: refusals, stray or unchanged notifications, --change
// ---------------------------------------------------------------------------

Deno.test("probe: subscribe not advertised (13), subscribe refused (14), unchanged re-read (17)", async (t) => {
  await t.step("subscribe not advertised", async () => {
    const result = await probeOdd({ advertiseSubscribe: false }, "2025");
    assert.equal(result.errorCode, "subscribe-not-advertised");
    assert.equal(result.exitStatus, 13);
    assert.equal(result.level, 1);
    assert.equal(result.initial, "always the same");
  });
  await t.step("subscribe refused", async () => {
    const result = await probeOdd({ refuseSubscribe: true }, "2025");
    assert.equal(result.errorCode, "subscribe-refused");
    assert.equal(result.exitStatus, 14);
    assert.equal(result.level, 3);
    assert.equal(result.error?.code, -32603);
    assert.match(result.missing, /subscriptions are switched off/);
  });
  await t.step("unchanged re-read", async () => {
    const result = await probeOdd({}, "2025", { timeoutSeconds: 1 });
    assert.equal(result.errorCode, "reread-unchanged");
    assert.equal(result.exitStatus, 17);
    assert.equal(result.level, 5);
    // Notified every 100 ms for the whole second, each re-read the same:
    // all counted, the first five kept.
    const unchanged = result.unchangedNotifications;
    assert.ok(unchanged >= 3, `${unchanged}`);
    assert.equal(result.updates.length, Math.min(unchanged, 5));
    assert.ok(result.updates.every((update) => update.changed === false));
    assert.equal(
      result.missing,
      `notified ${unchanged} time(s), but no re-read of ${ODD_URI} showed a change within 1 s`,
    );
    assert.equal(
      probeLines(result).find((line) => line.startsWith("unchanged-")),
      `unchanged-notifications ${unchanged}`,
    );
  });
});

Deno.test("probe: a listen acknowledged without the URI is subscribe-refused with the acknowledgement as it came", async () => {
  const result = await probeOdd({ dropListenFilter: true }, "2026-07-28");
  assert.equal(result.era, "2026-07-28");
  assert.equal(result.errorCode, "subscribe-refused");
  assert.equal(result.exitStatus, 14);
  assert.deepEqual(result.acknowledged, {});
  assert.equal(
    result.missing,
    `the listen was acknowledged without ${ODD_URI}: {}`,
  );
});

Deno.test("probe: notifications without a change are recorded and the wait goes on to the one with a change", async (t) => {
  // The odd server notifies on 2025 subscriptions; the waiting is the same in both eras.
  await t.step("two unchanged, then the change: level 7", async () => {
    const era = "2025";
    const result = await probeOdd({ unchangedFirst: 2 }, era);
    assert.equal(result.level, 7);
    assert.equal(result.errorCode, null);
    assert.deepEqual(
      result.updates.map(({ changed, final }) => [changed, final]),
      [[false, "version 1"], [false, "version 1"], [true, "version 2"]],
    );
    const lines = probeLines(result);
    assert.ok(lines.includes("unchanged-notifications 2"));
    assert.equal(lines.filter((line) => line === "changed false").length, 2);
    assert.equal(
      lines.at(-1),
      `summary level=7 era=${era} notifications=1/1 error-code=null exit=0`,
    );
    const markdown = probeMarkdown(result);
    assert.match(
      markdown,
      /^2 notifications without a change before the change \(after \d+(\.\d+)? s, \d+(\.\d+)? s\)\.$/m,
    );
    assert.match(
      assertProbeDiagram(markdown, "odd/0.0.1"),
      /Note over P,S: 2 notifications without a change before the change/,
    );
  });
  await t.step(
    "--count 2: one with a change came, then none: a timeout naming it",
    async () => {
      const result = await probeOdd({ unchangedFirst: 1 }, "2025", {
        count: 2,
        timeoutSeconds: 1,
      });
      // After its one change this server stops: the second never comes.
      assert.equal(result.errorCode, "notification-timeout");
      assert.equal(
        result.missing,
        `no notifications/resources/updated for ${ODD_URI} within 1 s (1 of 2 came)`,
      );
      assert.equal(
        unchangedSummary(result),
        "1 notification without a change before the change",
      );
    },
  );
});

Deno.test("probe: notifications for URIs it did not subscribe to are counted, never the update", async () => {
  const result = await probeOdd(
    {
      changing: true,
      unsolicited: ["odd://thingy", "other://x", "odd://thingy"],
    },
    "2025",
  );
  assert.equal(result.level, 7);
  assert.deepEqual(result.unsolicited, {
    count: 3,
    uris: ["odd://thingy", "other://x"],
  });
  assert.ok(result.updates.every((update) => update.uri === ODD_URI));
  const lines = probeLines(result);
  assert.ok(
    lines.includes(
      'unsolicited-notifications 3 uris=["odd://thingy","other://x"]',
    ),
  );
  assert.match(
    probeMarkdown(result),
    /^3 notification\(s\) for resources the probe had not subscribed to: odd:\/\/thingy, other:\/\/x\.$/m,
  );
});

Deno.test("probe: a server that does not advertise subscribe but notifies anyway: the --call's notification is unsolicited", async () => {
  const result = await probeOdd(
    { advertiseSubscribe: false, pokeTool: true },
    "2025",
    { call: { name: "poke", arguments: {} } },
  );
  assert.equal(result.errorCode, "subscribe-not-advertised");
  assert.equal(result.level, 1);
  assert.equal(result.call?.ok, true);
  assert.deepEqual(result.unsolicited, { count: 1, uris: [ODD_URI] });
  assert.deepEqual(result.updates, []);
  assert.match(
    assertProbeDiagram(probeMarkdown(result), "odd/0.0.1"),
    /Note over P,S: 1 notification\(s\) without a subscription/,
  );
});

Deno.test("probe --change: a shell command changes a file-backed resource after subscribing", async (t) => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/thing.txt`;
  await t.step("the change is notified and re-read: level 7", async () => {
    await Deno.writeTextFile(file, "first\n");
    const result = await probeOdd({ file }, "2025", {
      change: `echo second >> '${file}' && echo appended`,
    });
    assert.equal(result.level, 7);
    assert.equal(result.initial, "first\n");
    assert.equal(result.updates[0].final, "first\nsecond\n");
    assert.equal(result.change?.exitCode, 0);
    assert.equal(result.change?.output, "appended\n");
    assert.match(
      probeLines(result).find((line) => line.startsWith("change ")) ?? "",
      /^change exit=0 seconds=\d+(\.\d+)? output="appended\\n"$/,
    );
    const markdown = probeMarkdown(result);
    assert.match(
      markdown,
      /^`--change` ran for .* s: exit status 0; its output:\n\n```text\nappended\n```$/m,
    );
  });
  await t.step(
    "a failing command is change-failed, exit 20, its output kept",
    async () => {
      const result = await probeOdd({ file }, "2025", {
        change: "echo 'no such file' >&2; exit 3",
      });
      assert.equal(result.errorCode, "change-failed");
      assert.equal(result.exitStatus, 20);
      // Subscribed, never notified, then unsubscribed.
      assert.equal(result.level, 4);
      assert.equal(result.unsubscribed, true);
      assert.equal(result.change?.exitCode, 3);
      assert.equal(result.change?.output, "no such file\n");
      assert.equal(result.missing, "--change exited with status 3");
    },
  );
  await t.step(
    "a command that outlasts --timeout is stopped: change-failed",
    async () => {
      const result = await probeOdd({ file }, "2025", {
        change: "sleep 30",
        timeoutSeconds: 0.5,
      });
      assert.equal(result.errorCode, "change-failed");
      assert.equal(result.change?.exitCode, null);
      assert.equal(result.missing, "--change did not finish within 0.5 s");
      assert.ok(result.change!.seconds < 5, `${result.change!.seconds}`);
    },
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("probe: a notification after unsubscribe keeps the server at level 6", async () => {
  const result = await probeOdd(
    { changing: true, notifyAfterUnsubscribe: true },
    "2025",
  );
  assert.equal(result.level, 6);
  assert.equal(result.exitStatus, 0);
  assert.equal(result.quietAfterStop, false);
  assert.equal(
    result.missing,
    "a notification arrived after the probe unsubscribed",
  );
});

// ---------------------------------------------------------------------------
// --watch-gate: a URI the server does not serve, one it refuses to read
// ---------------------------------------------------------------------------

const SECRET_URI = "odd://secret";
const GATE_REFUSAL = "you may not watch what you may not read";

/** The probe's `watch-` lines, and the summary beside them. */
function gateLines(result: ProbeResult): string[] {
  return probeLines(result).filter((line) =>
    line.startsWith("watch-") || line.startsWith("summary ")
  );
}

Deno.test("probe --watch-gate: without a gate a server lets the probe watch a URI it does not serve and one it refuses to read; with one it refuses both; the level never moves", async (t) => {
  const unknown = unknownUri(ODD_URI);
  assert.equal(unknown, "odd://mcp-subscription-probe.invalid/unknown");
  const gate = {
    watchGate: true,
    unreadableUri: SECRET_URI,
    timeoutSeconds: 2,
  };
  for (const era of ["2025", "2026-07-28"] as const) {
    await t.step(era, async () => {
      const plain = await probeOdd({ readable: [ODD_URI] }, era, {
        timeoutSeconds: 2,
      });
      const open = await probeOdd({ readable: [ODD_URI] }, era, gate);
      const gated = await probeOdd(
        { readable: [ODD_URI], watchGate: GATE_REFUSAL },
        era,
        gate,
      );
      const summary = probeLines(plain).at(-1)!;
      const accepted = (uri: string) =>
        era === "2025"
          ? "resources/subscribe answered with a result"
          : `acknowledged {"resourceSubscriptions":["${uri}"]}`;
      assert.deepEqual(gateLines(open), [
        `watch-unknown-uri accepted uri=${unknown} ${accepted(unknown)}`,
        `watch-unreadable-uri accepted uri=${SECRET_URI} ${
          accepted(SECRET_URI)
        }`,
        summary,
      ]);
      assert.deepEqual(gateLines(gated), [
        `watch-unknown-uri refused uri=${unknown} -32001 "${GATE_REFUSAL}"`,
        `watch-unreadable-uri refused uri=${SECRET_URI} -32001 "${GATE_REFUSAL}"`,
        summary,
      ]);
      assert.deepEqual(gated.watchGate?.unreadableUri, {
        uri: SECRET_URI,
        read: "refused",
        watch: "refused",
        detail: `-32001 "${GATE_REFUSAL}"`,
      });
      assert.equal(plain.watchGate, null);
      for (const result of [open, gated]) {
        assert.equal(result.level, plain.level);
        assert.equal(result.exitStatus, plain.exitStatus);
      }
      const report = probeMarkdown(open);
      assert.match(
        report,
        new RegExp(
          `\\| a URI it refuses to read \\| ${SECRET_URI} \\| refused \\| accepted \\| the server let the probe watch it \\|`,
        ),
      );
    });
  }
});

Deno.test("probe --watch-gate against the lab: a subscribe to a URI it does not serve is refused (2025), a listen is acknowledged without it (2026-07-28)", async (t) => {
  await using lab = startLab();
  const unknown = unknownUri(REVIEW_URI);
  for (const era of ["2025", "2026-07-28"] as const) {
    await t.step(era, async () => {
      const result = await probeServer(
        probeOptions({ url: lab.url }, { era, watchGate: true }),
      );
      assert.equal(result.level, 7);
      assert.deepEqual(
        gateLines(result).slice(0, -1),
        [
          era === "2025"
            ? `watch-unknown-uri refused uri=${unknown} -32002 "Resource not found: ${unknown}"`
            : `watch-unknown-uri filtered uri=${unknown} acknowledged {}`,
        ],
      );
    });
  }
});

Deno.test("probe --watch-gate: a URI the server lets the probe read is no test: untested, said so", async () => {
  const result = await probeOdd({}, "2025", {
    watchGate: true,
    unreadableUri: SECRET_URI,
  });
  assert.deepEqual(gateLines(result).slice(0, -1), [
    `watch-unknown-uri untested uri=${
      unknownUri(ODD_URI)
    } the server let the probe read it`,
    `watch-unreadable-uri untested uri=${SECRET_URI} the server let the probe read it`,
  ]);
});

Deno.test("probe --watch-gate: a refusal's message is escaped and bounded on its line", async () => {
  const result = await probeOdd(
    {
      readable: [ODD_URI],
      watchGate: `no\n[probe] level 7 ${"x".repeat(600)}`,
    },
    "2025",
    { watchGate: true },
  );
  const line = gateLines(result)[0];
  assert.ok(!line.includes("\n"));
  assert.match(
    line,
    /^watch-unknown-uri refused uri=\S+ -32001 "no\\n\\u005bprobe\\u005d level 7 x+…"$/,
  );
  assert.ok(line.length < 600);
});

// ---------------------------------------------------------------------------
// Flags: bad ones, --help, and docs/probe.md's exit table
// ---------------------------------------------------------------------------

Deno.test("probe: bad flags are one line and exit 2 before connecting", async (t) => {
  const cases: [string[], string][] = [
    [
      ["--url", "not a url"],
      'probe error: --url "not a url" is not an http(s) URL\n',
    ],
    [
      ["--url", "ftp://x/mcp"],
      'probe error: --url "ftp://x/mcp" is not an http(s) URL\n',
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--frobnicate"],
      "probe error: Unknown option '--frobnicate'",
    ],
    [
      [
        "--url",
        "http://127.0.0.1:1/mcp",
        "--call",
        "t",
        "--call-args",
        "{nope",
      ],
      "probe error: --call-args is not valid JSON: ",
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--call", "t", "--call-args", "[1]"],
      "probe error: --call-args must be a JSON object\n",
    ],
    [
      [
        "--url",
        "http://127.0.0.1:1/mcp",
        "--change-via",
        "http://127.0.0.1:2/mcp",
      ],
      "probe error: --change-via URL goes with --url and --call TOOL: the tool is called there\n",
    ],
    [
      [
        "--url",
        "http://127.0.0.1:1/mcp",
        "--call",
        "t",
        "--change-via",
        "ftp://x",
      ],
      'probe error: --change-via "ftp://x" is not an http(s) URL\n',
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--unreadable-uri", ""],
      "probe error: --unreadable-uri must not be empty\n",
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--timeout", "-1"],
      "probe error: --timeout must be a number of seconds above 0\n",
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--max-bytes", "10"],
      "probe error: --max-bytes must be at least 1024\n",
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--change", " "],
      "probe error: --change must not be empty\n",
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--era", "2024"],
      "probe error: --era must be auto, 2025 or 2026-07-28\n",
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--header", "no colon"],
      'probe error: --header "no colon" is not "Name: value"\n',
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--catalog", "tools,widgets"],
      'probe error: --catalog "tools,widgets" is not a comma-separated list of tools, prompts, resources\n',
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--catalog", ""],
      'probe error: --catalog "" is not a comma-separated list of tools, prompts, resources\n',
    ],
    [
      ["--url", "http://127.0.0.1:1/mcp", "--catalog-only"],
      "probe error: --catalog-only needs --catalog LISTS\n",
    ],
    [
      [
        "--url",
        "http://127.0.0.1:1/mcp",
        "--catalog",
        "tools",
        "--catalog-only",
        "--uri",
        "x://y",
      ],
      "probe error: --catalog-only watches no resource: --uri does not go with it\n",
    ],
    [
      [],
      "probe error: give either --url URL or --stdio -- COMMAND [ARGS...]\n",
    ],
    [["--stdio"], "probe error: --stdio needs the server command after --\n"],
  ];
  for (const [args, message] of cases) {
    await t.step(args.join(" ") || "(no flags)", async () => {
      const run = await runProbeCommand(args);
      assert.equal(run.code, 2);
      assert.equal(run.stdout, "");
      assert.ok(run.stderr.startsWith(message), run.stderr);
      assert.equal(run.stderr.trimEnd().split("\n").length, 1);
    });
  }
});

Deno.test("probe --help: every flag, the same through probe.ts and main.ts probe", async () => {
  const help = await runProbeCommand(["--help"]);
  assert.equal(help.code, 0);
  const viaLab = await runProbeCommand(["--help"], {
    entry: [MAIN_PATH, "probe"],
  });
  assert.equal(viaLab.code, 0);
  assert.equal(viaLab.stdout, help.stdout);
  assert.match(help.stdout, /^Usage: deno run -A probe\.ts --url URL/m);
  assert.match(
    help.stdout,
    /^ {7}\(or main\.ts probe in place of probe\.ts, with the same flags\)$/m,
  );
  for (
    const flag of [
      "--uri",
      "--era",
      "--timeout",
      "--count",
      "--call",
      "--call-args",
      "--skip-list-check",
      "--embed",
      "--catalog",
      "--catalog-only",
      "--change",
      "--max-bytes",
      "--header",
      "--auth-token",
      "--json",
      "--report",
      "--stdio",
    ]
  ) {
    assert.match(help.stdout, new RegExp(`^ {2}${flag} `, "m"));
  }
});

Deno.test("docs/probe.md's exit table is the probe's: every error code with its status, 0 for none, 2 for bad flags", async () => {
  const page = await Deno.readTextFile(new URL("docs/probe.md", CHECKOUT));
  const table = page.split("## Exit status and error codes")[1]
    .split("\n## ")[0];
  const rows = table.split("\n").flatMap((line) => {
    const match = line.match(/^\| (\d+) +\| (?:`([\w-]+)`)? *\|/);
    return match ? [[Number(match[1]), match[2] ?? ""]] : [];
  });
  assert.deepEqual(rows, [
    [0, "null"],
    [2, ""],
    ...Object.entries(PROBE_EXIT_STATUS).map(([code, status]) => [
      status,
      code,
    ]),
  ]);
});

// ---------------------------------------------------------------------------
// From a URL, as `deno run -A https://raw.githubusercontent.com/…/probe.ts`
// ---------------------------------------------------------------------------

Deno.test("from a URL served as text/plain: probe.ts on its own probes the lab", async () => {
  await using files = serveCheckoutAsText();
  await using folder = await outsideFolder();
  await using lab = startLab();
  const run = await runProbeCommand(["--url", lab.url.href, "--era", "2025"], {
    entry: [
      await folder.lockFlag("probe.lock"),
      `${files.origin}/cli/probe.ts`,
    ],
    cwd: folder.cwd,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^summary level=7 era=2025 notifications=1\/1 error-code=null exit=0$/m,
  );
  assert.deepEqual(files.requested, ["/cli/probe.ts", "/cli/main.ts"]);
});

Deno.test("from a URL served as text/plain: the lab over stdio fetches stdio.ts beside it and main.ts probe reaches level 7; the lab never loads probe.ts, nor bus.ts without --bus", async () => {
  await using files = serveCheckoutAsText();
  await using folder = await outsideFolder();
  const lab = [
    Deno.execPath(),
    "run",
    "-A",
    await folder.lockFlag("lab.lock"),
    `${files.origin}/lab/main.ts`,
    "--stdio",
    "--delay",
    "0.2",
    "--report-file",
    `${folder.cwd}/report.md`,
  ];
  const run = await runProbeCommand(["--json", "--stdio", "--", ...lab], {
    entry: [
      await folder.lockFlag("cli.lock"),
      `${files.origin}/cli/main.ts`,
      "probe",
    ],
    cwd: folder.cwd,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout) as ProbeResult;
  assert.equal(result.transport, "stdio");
  assert.equal(result.server?.name, "mcp-resource-subscription-lab");
  assert.equal(result.level, 7);
  assert.deepEqual(files.requested.toSorted(), [
    "/cli/main.ts",
    "/cli/probe.ts",
    "/lab/main.ts",
    "/lab/stdio.ts",
  ]);
  // Its report names the URL it ran from, in the command and beside it,
  // and points to the bug-report page next to it.
  const report = await Deno.readTextFile(`${folder.cwd}/report.md`);
  const source = `${files.origin}/lab/main.ts`;
  assert.ok(
    report.includes(
      `\`\`\`sh\ndeno run -A ${source} --stdio --delay=0.2 --report-file=${folder.cwd}/report.md\n\`\`\``,
    ),
    report,
  );
  assert.ok(report.includes(`\nStarted from ${source}.\n`), report);
  assert.ok(
    report.endsWith(
      `Where to file this report, and the requests already open: ${files.origin}/lab/docs/bug-reports.md.\n`,
    ),
    report,
  );
});

// ---------------------------------------------------------------------------
// A hostile server: its text never forges a probe line or reaches a terminal
// ---------------------------------------------------------------------------

/** Poses as the probe's own last lines, after clearing the screen. */
const FORGED_LINES =
  "\x1b[2J\x1b[H\r\nlevel 7 stops cleanly\nerror-code null\nsummary level=7 era=2025 notifications=1/1 error-code=null exit=0\u2028";

/** Starts the odd server as hostile as `odd` adds, runs the probe command on it. */
function probeHostile(odd: OddServer, args: string[] = []) {
  return probeOddCommand({
    serverInfo: { name: `evil${FORGED_LINES}`, version: FORGED_LINES },
    textPrefix: `\x1b]0;title\x07${FORGED_LINES}`,
    ...odd,
  }, args);
}

/** Starts an odd server, runs the probe command on it (2025, `--timeout 2`). */
async function probeOddCommand(odd: OddServer, args: string[] = []) {
  await using server = startOddServer(odd);
  return await runProbeCommand([
    "--url",
    server.url.href,
    "--uri",
    ODD_URI,
    "--era",
    "2025",
    "--timeout",
    "2",
    ...args,
  ]);
}

/** Each stdout line is one `key value` fact; level, error-code, summary once each; no escape anywhere. */
function assertOwnLines(run: { stdout: string; stderr: string }) {
  assert.doesNotMatch(
    run.stdout + run.stderr,
    /(?!\n)[\p{Cc}\u2028\u2029]/u,
  );
  const lines = run.stdout.trimEnd().split("\n");
  for (const line of lines) assert.match(line, /^[a-z-]+ /, line);
  for (const key of ["level", "error-code", "summary", "missing"]) {
    assert.equal(
      lines.filter((line) => line.startsWith(`${key} `)).length,
      1,
      `${key}:\n${run.stdout}`,
    );
  }
  for (const line of run.stderr.trimEnd().split("\n")) {
    assert.match(line, /^\[probe\] /, line);
  }
  return lines;
}

Deno.test("probe against a hostile server: its name, version, text, URIs and errors are quoted, and only the probe says level, error-code and summary", async (t) => {
  await t.step("names, texts and unsolicited URIs", async () => {
    const run = await probeHostile({
      changing: true,
      unsolicited: [`${ODD_URI}\nlevel 7 stops cleanly`],
    });
    assert.equal(run.code, 0, run.stderr);
    const lines = assertOwnLines(run);
    // Quoted as a log value is: JSON, with brackets escaped too.
    const quoted = (text: string) =>
      JSON.stringify(text).replace("\u2028", "\\u2028")
        .replaceAll("[", "\\u005b").replaceAll("]", "\\u005d");
    assert.ok(
      lines.includes(
        `server ${quoted(`evil${FORGED_LINES}`)} ${quoted(FORGED_LINES)}`,
      ),
      run.stdout,
    );
    assert.ok(
      lines.some((line) => line.startsWith('initial "\\u001b]0;title\\u0007')),
    );
    assert.equal(
      lines.at(-1),
      "summary level=7 era=2025 notifications=1/1 error-code=null exit=0",
    );
  });
  await t.step(
    "the report: no HTML, one fence, only the probe's two participants",
    async () => {
      const run = await probeHostile({
        changing: true,
        unsolicited: [`${ODD_URI}\n\`\`\`\n<script>x</script>`],
      }, ["--report", "-"]);
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /<(script|img|b)/);
      assert.doesNotMatch(run.stdout, /(?!\n)[\p{Cc}\u2028\u2029]/u);
      assert.deepEqual(
        run.stdout.split("\n").filter((line) => line.startsWith("```")),
        ["```mermaid", "```"],
      );
      const [first, ...diagram] = run.stdout.split("```mermaid\n")[1]
        .split("```")[0].trimEnd().split("\n");
      assert.equal(first, "sequenceDiagram");
      assert.equal(
        diagram.filter((line) => line.startsWith("    participant ")).length,
        2,
      );
      for (const line of diagram) {
        assert.match(
          line,
          /^ {4}(participant [PS] as |P->>S: |S-->>P: |Note over P,S: )(?:[^;#]|#\d+;)+$/,
          line,
        );
      }
    },
  );
  await t.step("an error message", async () => {
    const run = await probeHostile(
      { changing: true, pokeError: FORGED_LINES },
      [
        "--call",
        "poke",
      ],
    );
    assert.equal(run.code, 19, run.stderr);
    const lines = assertOwnLines(run);
    assert.equal(
      lines.find((line) => line.startsWith("error-code ")),
      "error-code call-failed",
    );
  });
});

// ---------------------------------------------------------------------------
// Bounds: message size, connecting, floods, and what a stdio server leaves
// ---------------------------------------------------------------------------

/** Whether a PID is still a live process (a zombie counts as gone). */
async function alive(pid: number): Promise<boolean> {
  const { stdout } = await new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).output();
  const state = new TextDecoder().decode(stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

Deno.test("probe --max-bytes: a message over the limit stops the probe as too-large (exit 21), over HTTP and stdio", async (t) => {
  await t.step("HTTP: a 2 MB resource", async () => {
    await using server = startOddServer({
      changing: true,
      textPrefix: "x".repeat(2_000_000),
    });
    const run = await runProbeCommand([
      "--url",
      server.url.href,
      "--uri",
      ODD_URI,
      "--max-bytes",
      "1048576",
    ]);
    assert.equal(run.code, 21, run.stderr);
    assert.match(
      run.stdout,
      /^missing the server sent a message over --max-bytes \(1048576 bytes\): \d+ bytes$/m,
    );
    assert.match(run.stdout, /^error-code too-large$/m);
    assert.ok(run.stdout.length < 10_000, `${run.stdout.length}`);
  });
  await t.step("stdio: a 2 MB line, and the server is stopped", async () => {
    const dir = await Deno.makeTempDir();
    const started = performance.now();
    const run = await runProbeCommand([
      "--max-bytes",
      "1048576",
      "--stdio",
      "--",
      "/bin/sh",
      "-c",
      `echo $$ > ${dir}/pid; read line; head -c 2000000 /dev/zero | tr '\\0' a; echo; exec sleep 60`,
    ]);
    assert.equal(run.code, 21, run.stderr);
    assert.match(
      run.stdout,
      /^missing the server sent a message over --max-bytes \(1048576 bytes\): 2000000 bytes$/m,
    );
    assert.ok(performance.now() - started < 15_000);
    const pid = Number(await Deno.readTextFile(`${dir}/pid`));
    assert.equal(await alive(pid), false);
    await Deno.remove(dir, { recursive: true });
  });
});

Deno.test("probe --timeout bounds connecting: a server that never answers initialize is unreachable (exit 10) after it", async (t) => {
  await t.step("HTTP", async () => {
    // Holds every request unanswered until the test lets it go.
    const held: (() => void)[] = [];
    const never = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () =>
        new Promise<Response>((resolve) =>
          held.push(() => resolve(new Response(null, { status: 503 })))
        ),
    );
    const started = performance.now();
    const run = await runProbeCommand([
      "--url",
      `http://127.0.0.1:${never.addr.port}/mcp`,
      "--timeout",
      "1",
    ]);
    assert.equal(run.code, 10, run.stderr);
    assert.match(
      run.stdout,
      /^missing the server did not answer initialize \(or server\/discover\) within 1 s$/m,
    );
    assert.ok(performance.now() - started < 10_000);
    for (const release of held) release();
    await never.shutdown();
  });
  await t.step(
    "stdio: a server that ignores stdin's end and SIGTERM, and its child, are gone after",
    async () => {
      const dir = await Deno.makeTempDir();
      const started = performance.now();
      const run = await runProbeCommand([
        "--timeout",
        "1",
        "--stdio",
        "--",
        "/bin/sh",
        "-c",
        `trap '' TERM; (sleep 60) & echo $! > ${dir}/child; echo $$ > ${dir}/pid; exec sleep 61`,
      ]);
      assert.equal(run.code, 10, run.stderr);
      assert.match(
        run.stdout,
        /^missing the server did not answer initialize \(or server\/discover\) within 1 s$/m,
      );
      assert.ok(performance.now() - started < 15_000);
      for (const name of ["pid", "child"]) {
        const pid = Number(await Deno.readTextFile(`${dir}/${name}`));
        assert.equal(await alive(pid), false, `${name} ${pid}`);
      }
      await Deno.remove(dir, { recursive: true });
    },
  );
});

Deno.test("probe: a flood of notifications for other URIs is counted, not kept, and told at most once a second", async () => {
  await using server = startOddServer({ changing: true, flood: true });
  const run = await runProbeCommand([
    "--url",
    server.url.href,
    "--uri",
    ODD_URI,
    "--era",
    "2025",
    "--json",
  ]);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout) as ProbeResult;
  assert.ok(result.unsolicited.count > 100, `${result.unsolicited.count}`);
  assert.deepEqual(result.unsolicited.uris, ["other://flood"]);
  assert.equal(
    result.steps.filter((step) => step.text.includes("other://flood")).length,
    5,
  );
  const told = run.stderr.split("\n").filter((line) =>
    line.includes("notifications for resources not subscribed to so far")
  );
  assert.ok(told.length <= 4, told.join("\n"));
});

Deno.test("probe: a flood of notifications for an unchanged 1 MB resource keeps stdout under 4 MiB, in lines and in JSON, and says which texts were cut", async (t) => {
  const bytes = (text: string) => new TextEncoder().encode(text).length;
  // The first read, one update and five unchanged re-reads share 1 MiB.
  const share = Math.floor(1024 * 1024 / 7);
  for (const form of ["lines", "json"]) {
    await t.step(form, async () => {
      const run = await probeOddCommand(
        { floodWatched: true, textPrefix: "x".repeat(1_000_000) },
        form === "json" ? ["--json"] : [],
      );
      assert.equal(run.code, 17, run.stderr.slice(-500));
      assert.ok(bytes(run.stdout) < 4 * 1024 * 1024, `${bytes(run.stdout)}`);
      const result = form === "json"
        ? JSON.parse(run.stdout) as ProbeResult
        : undefined;
      const texts = result
        ? [result.initial, ...result.updates.map((update) => update.final)]
        : run.stdout.split("\n").filter((line) =>
          /^(initial|final) /.test(line)
        ).map((line) => JSON.parse(line.slice(line.indexOf(" ") + 1)));
      assert.equal(texts.length, 6);
      for (const text of texts) {
        assert.ok(bytes(jsonText(text)) <= share, `${bytes(jsonText(text))}`);
        assert.match(text ?? "", /^x{1000}.*…$/);
      }
      if (result) {
        assert.deepEqual(result.textsCut, { count: 6, bytesEach: share });
      } else {
        assert.ok(
          run.stdout.split("\n").includes(
            `texts-cut 6 bytes-each=${share}`,
          ),
          run.stdout.slice(-2000),
        );
      }
    });
  }
});

// ---------------------------------------------------------------------------
// Bounds on a whole list: its bytes, its pages, --timeout across them
// ---------------------------------------------------------------------------

/**
 * A 2025 server written out by hand whose `tools/list` and `resources/list`
 * never end: page N names `page<N>` (a resource `page://<N>`) with a
 * description of `fillerChars` characters, points to page N + 1, and comes
 * `delayMs` late. It counts the pages it was asked for.
 */
function startEndlessLists(fillerChars: number, delayMs = 0) {
  const asked = { tools: 0, resources: 0 };
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (request.method !== "POST") return new Response(null, { status: 405 });
      const { id, method, params } = await request.json();
      if (id === undefined) return new Response(null, { status: 202 });
      const page = Number(params?.cursor ?? 0);
      const description = "x".repeat(fillerChars);
      const inputSchema = { type: "object" };
      const results: Record<string, () => object> = {
        initialize: () => ({
          protocolVersion: params.protocolVersion,
          capabilities: { tools: { listChanged: true }, resources: {} },
          serverInfo: { name: "endless", version: "0.0.1" },
        }),
        "tools/list": () => ({
          tools: [{ name: `page${page}`, description, inputSchema }],
          nextCursor: String(page + 1),
        }),
        "resources/list": () => ({
          resources: [{ uri: `page://${page}`, name: "page", description }],
          nextCursor: String(page + 1),
        }),
      };
      if (method === "tools/list") asked.tools++;
      if (method === "resources/list") asked.resources++;
      if (method.endsWith("/list")) {
        await new Promise((done) => setTimeout(done, delayMs));
      }
      const result = results[method]?.() ?? { content: [] };
      return Response.json({ jsonrpc: "2.0", id, result });
    },
  );
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    asked,
    [Symbol.asyncDispose]: () => http.shutdown(),
  };
}

Deno.test("probe: a list of endless pages of 3.9 MB each is cut at 8 MiB as a whole, the tools' catalog-not-listed (exit 22), the resource's resource-not-found (exit 15)", async (t) => {
  await using server = startEndlessLists(3_900_000);
  const probe = (args: string[]) =>
    runProbeCommand(["--url", server.url, "--era", "2025", ...args]);
  const cut = "over 8388608 bytes at page 3 (the bound on a whole list)";
  await t.step("--catalog tools", async () => {
    const run = await probe(
      ["--catalog", "tools", "--catalog-only", "--call", "poke"],
    );
    assert.equal(run.code, 22, run.stderr.slice(-2000));
    assert.ok(
      run.stdout.split("\n").includes(
        `catalog-missing tools: tools/list failed: ${cut}`,
      ),
      run.stdout,
    );
    assert.equal(server.asked.tools, 3);
  });
  await t.step("the resource's resources/list", async () => {
    const run = await probe(["--uri", "page://100"]);
    assert.equal(run.code, 15, run.stderr.slice(-2000));
    assert.ok(
      run.stdout.split("\n").includes(`missing resources/list failed: ${cut}`),
      run.stdout,
    );
    assert.equal(server.asked.resources, 3);
  });
});

Deno.test("probe: a list of endless small pages ends at 64 pages, catalog-not-listed (exit 22)", async () => {
  await using server = startEndlessLists(10);
  const run = await runProbeCommand(
    ["--url", server.url, "--era", "2025", "--catalog", "tools"].concat(
      ["--catalog-only", "--call", "poke"],
    ),
  );
  assert.equal(run.code, 22, run.stderr.slice(-2000));
  assert.ok(
    run.stdout.split("\n").includes(
      "catalog-missing tools: tools/list failed: more than 64 pages (the bound on a whole list)",
    ),
    run.stdout,
  );
  assert.equal(server.asked.tools, 64);
});

Deno.test("probe: --timeout holds across a list's pages: endless pages 300 ms apart end the list at 2 s, not at 64 pages", async () => {
  await using server = startEndlessLists(10, 300);
  const started = performance.now();
  const run = await runProbeCommand([
    "--url",
    server.url,
    "--era",
    "2025",
    "--catalog",
    "tools",
    "--catalog-only",
    "--call",
    "poke",
    "--timeout",
    "2",
  ]);
  const seconds = (performance.now() - started) / 1000;
  assert.equal(run.code, 22, run.stderr.slice(-2000));
  assert.match(
    run.stdout,
    /^catalog-missing tools: tools\/list failed: not whole within 2 s \(\d+ pages read\) \(the bound on a whole list\)$/m,
  );
  // 64 pages would take 19 s; the list ends at 2 s, the run a little after.
  assert.ok(server.asked.tools < 10, `${server.asked.tools} pages`);
  assert.ok(seconds < 2 + 5, `${seconds} s`);
});

// ---------------------------------------------------------------------------
// The probe's wait and --change under pressure
// ---------------------------------------------------------------------------

Deno.test("probe --change: a notification that came before the change began is not counted", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/thing.txt`;
  await Deno.writeTextFile(file, "first\n");
  // The server notifies once as the probe subscribes, never again; the
  // change then alters the file, so a re-read would show a change.
  const result = await probeOdd({ file, notifyOnSubscribeOnly: true }, "2025", {
    change: `echo second >> ${file}`,
    timeoutSeconds: 1,
  });
  assert.equal(result.errorCode, "notification-timeout");
  assert.equal(result.exitStatus, 16);
  assert.equal(result.level, 4);
  assert.deepEqual(result.updates, []);
  assert.ok(
    result.steps.some((step) =>
      step.text === "1 notification(s) before the change began, not counted"
    ),
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("probe --change: a notification while the command runs is credited only if a re-read made on it shows the change, and the probe says which", async (t) => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/thing.txt`;
  // The server notifies once, 0.3 s after the subscribe, never again: while
  // the command runs, before or after it changes the file.
  const cases = [
    {
      name: "before the command changed the file: unchanged, none after: 17",
      change: `sleep 1; echo "version: 2" > ${file}`,
      changed: false,
      note: "its re-read shows no change: counted as unchanged",
    },
    {
      name: "after the command changed the file: the update, level 7",
      change: `echo "version: 2" > ${file}; sleep 1`,
      changed: true,
      note: "its re-read shows the change: counted",
    },
  ];
  for (const { name, change, changed, note } of cases) {
    await t.step(name, async () => {
      await Deno.writeTextFile(file, "version: 1\n");
      const result = await probeOdd({ file, notifyOnceAfter: 300 }, "2025", {
        change,
        timeoutSeconds: 2,
      });
      assert.equal(result.change?.exitCode, 0);
      assert.equal(result.errorCode, changed ? null : "reread-unchanged");
      assert.equal(result.exitStatus, changed ? 0 : 17);
      assert.equal(result.level, changed ? 7 : 5);
      assert.equal(result.unchangedNotifications, changed ? 0 : 1);
      assert.deepEqual(
        result.updates.map((update) => [update.changed, update.duringChange]),
        [[changed, true]],
      );
      assert.ok(
        result.steps.some((step) =>
          step.text === `notification while --change ran: ${note}`
        ),
        JSON.stringify(result.steps),
      );
      const lines = timelessLines(result);
      assert.ok(
        lines.includes(
          `notification-received true after=Ts uri=${ODD_URI} during=change`,
        ),
        lines.join("\n"),
      );
      assert.ok(lines.includes(`changed ${changed}`));
    });
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("probe: a flood of notifications for an unchanged resource ends at --timeout, collapsed, counted and bounded", async () => {
  const started = performance.now();
  const run = await probeOddCommand({
    floodWatched: true,
    textPrefix: "x".repeat(100_000),
  });
  const seconds = (performance.now() - started) / 1000;
  assert.equal(run.code, 17, run.stderr.slice(-500));
  // The wait ends at --timeout whatever is queued (then unsubscribe, a
  // second of quiet, close).
  assert.ok(seconds < 10, `${seconds} s`);
  const lines = run.stdout.trimEnd().split("\n");
  assert.ok(
    lines.filter((line) => line.startsWith("changed false")).length <= 5,
  );
  const unchanged = Number(
    lines.find((line) => line.startsWith("unchanged-notifications "))
      ?.split(" ")[1],
  );
  assert.ok(unchanged > 5, `${unchanged}`);
  assert.ok(run.stdout.length < 1_000_000, `${run.stdout.length}`);
  assert.ok(run.stderr.split("\n").length < 400, "progress lines bounded");
});

Deno.test("probe: under a flood of notifications for an unchanged resource, the run ends within a second of --timeout", async () => {
  let subscribedAt: number | undefined;
  await using server = startOddServer({
    floodWatched: true,
    textPrefix: "x".repeat(256 * 1024),
    onSubscribe: () => subscribedAt ??= performance.now(),
  });
  const run = await runProbeCommand([
    "--url",
    server.url.href,
    "--uri",
    ODD_URI,
    "--era",
    "2025",
    "--timeout",
    "2",
  ]);
  // Measured here, from the subscribe the server saw to the probe's exit:
  // the wait ends at --timeout, and all after it (unsubscribing, the stray
  // notification that settles quiet-after-unsubscribe, closing, printing)
  // must fit in the second after.
  const seconds = (performance.now() - subscribedAt!) / 1000;
  assert.equal(run.code, 17, run.stderr.slice(-500));
  assert.match(run.stdout, /^quiet-after-unsubscribe false$/m);
  assert.ok(seconds < 2 + 1, `${seconds} s after the subscribe`);
});

Deno.test("probe --change: its process group is ended with it, at the timeout a command that ignores SIGTERM is killed, and a flood of output is drained, not kept", async (t) => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/thing.txt`;
  await Deno.writeTextFile(file, "first\n");
  /** Whether `pid` still runs (a zombie does not) after up to 3 s. */
  const alive = async (pid: number) => {
    const running = () => {
      try {
        // Linux: a killed process lingers as a zombie until it is reaped.
        return !/^\d+ \(.*\) Z/.test(
          Deno.readTextFileSync(`/proc/${pid}/stat`),
        );
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return false;
        try {
          Deno.kill(pid, "SIGCONT");
          return true;
        } catch {
          return false;
        }
      }
    };
    for (let tries = 0; tries < 30 && running(); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return running();
  };
  await t.step("a background child does not outlive the probe", async () => {
    const pidFile = `${dir}/background.pid`;
    const result = await probeOdd({ file }, "2025", {
      change: `sleep 300 & echo $! > ${pidFile}; echo second >> ${file}`,
    });
    assert.equal(result.level, 7);
    const pid = Number(await Deno.readTextFile(pidFile));
    assert.equal(await alive(pid), false, `background sleep ${pid} runs`);
  });
  await t.step(
    "a command that ignores SIGTERM ends at the timeout plus a grace",
    async () => {
      const started = performance.now();
      const result = await probeOdd({ file }, "2025", {
        change: "trap '' TERM; while :; do sleep 0.1; done",
        timeoutSeconds: 1,
      });
      assert.equal(result.errorCode, "change-failed");
      assert.equal(result.missing, "--change did not finish within 1 s");
      const seconds = (performance.now() - started) / 1000;
      assert.ok(seconds < 8, `${seconds} s`);
    },
  );
  await t.step(
    "100 MB of output: the first 4,000 characters kept",
    async () => {
      const result = await probeOdd({ file }, "2025", {
        change:
          `head -c 100000000 /dev/zero | tr '\\0' x; echo third >> ${file}`,
      });
      assert.equal(result.change?.exitCode, 0);
      assert.equal(result.change?.output, "x".repeat(4000));
    },
  );
  await Deno.remove(dir, { recursive: true });
});

// ---------------------------------------------------------------------------
// Content in the update: SEP-3119's embedResources, the lab's; --change-via
// ---------------------------------------------------------------------------

const POKE = { name: "poke", arguments: {} };

/** The odd server's lines in 2026-07-28, from `uri` to the listen's acknowledgement. */
const oddLines2026 = [
  `uri ${ODD_URI}`,
  "era 2026-07-28 (2026-07-28)",
  "server odd 0.0.1",
  'capabilities {"subscribe":true,"listChanged":false}',
  "resource-found true",
  'initial "version 1"',
  "subscribed true",
  `acknowledged {"resourceSubscriptions":["${ODD_URI}"]}`,
];

/** Its last lines when it reaches level 7 with one update. */
const oddLevel7Lines2026 = [
  "unchanged-notifications 0",
  "unsolicited-notifications 0",
  "unsubscribed true",
  "quiet-after-unsubscribe true",
  "level 7 stops cleanly",
  "missing nothing: the server delivers the update and stops cleanly",
  "error-code null",
  "summary level=7 era=2026-07-28 notifications=1/1 error-code=null exit=0",
];

Deno.test("probe --change-via: the --call made through another endpoint of the deployment is delivered when the two share their updates, lost when they do not", async (t) => {
  await t.step("one server on two ports (2026-07-28): delivered", async () => {
    await using server = startOddServer({ embed: true, secondPort: true });
    const result = await probeServer(
      probeOptions({ url: server.url }, {
        era: "2026-07-28",
        uri: ODD_URI,
        call: POKE,
        changeVia: server.secondUrl,
      }),
    );
    assert.equal(result.level, 7);
    assert.equal(result.exitStatus, 0);
    assert.deepEqual(result.changeVia, {
      url: server.secondUrl!.href,
      delivered: true,
    });
    assert.ok(
      probeLines(result).includes(
        `change-via ${server.secondUrl!.href} delivered`,
      ),
    );
    assert.ok(
      result.steps.some(({ text }) =>
        text === `connects to ${server.secondUrl!.href} (--change-via)`
      ),
    );
    assert.match(probeMarkdown(result), /: delivered across them\./);
  });
  for (const era of ["2025", "2026-07-28"] as const) {
    await t.step(`two servers, each its own (${era}): lost`, async () => {
      // Each notifies only when poked: in 2025 its own session, in
      // 2026-07-28 the listens on its own bus.
      const odd = {
        embed: era === "2026-07-28",
        pokeTool: true,
        quietUntilPoked: true,
      };
      await using watched = startOddServer(odd);
      await using other = startOddServer(odd);
      const result = await probeServer(
        probeOptions({ url: watched.url }, {
          era,
          uri: ODD_URI,
          call: POKE,
          changeVia: other.url,
          timeoutSeconds: 2,
        }),
      );
      assert.equal(result.call?.ok, true);
      assert.equal(result.errorCode, "notification-timeout");
      assert.equal(result.exitStatus, 16);
      assert.equal(
        result.missing,
        `no notifications/resources/updated for ${ODD_URI} within 2 s: lost, the change made through ${other.url.href} never reached the stream held through ${watched.url.href}`,
      );
      assert.ok(
        probeLines(result).includes(`change-via ${other.url.href} lost`),
      );
      assert.match(
        probeMarkdown(result),
        /: lost, the update never left the endpoint it was published on\./,
      );
    });
  }
  await t.step(
    "an endpoint that cannot be reached: change-failed",
    async () => {
      await using watched = startOddServer({ embed: true });
      const result = await probeServer(
        probeOptions({ url: watched.url }, {
          era: "2026-07-28",
          uri: ODD_URI,
          call: POKE,
          changeVia: new URL("http://127.0.0.1:1/mcp"),
        }),
      );
      assert.equal(result.errorCode, "change-failed");
      assert.match(
        result.missing,
        /^--change-via http:\/\/127\.0\.0\.1:1\/mcp: could not connect: /,
      );
      assert.ok(
        probeLines(result).includes(
          "change-via http://127.0.0.1:1/mcp not-made",
        ),
      );
    },
  );
});

Deno.test("probe --embed (2026-07-28): a server that honours embedResources sends the content inline, matching the re-read; without --embed, none", async (t) => {
  for (const embed of [true, false]) {
    await t.step(embed ? "--embed" : "without --embed", async () => {
      const result = await probeOdd({ embed: true }, "2026-07-28", {
        call: POKE,
        embed,
      });
      assert.equal(result.level, 7);
      assert.equal(result.exitStatus, 0);
      assert.equal(result.embed, embed ? "asked" : null);
      assert.equal(result.inlineDefect, null);
      assert.deepEqual(
        result.updates[0].inline,
        embed
          ? {
            status: "matches-reread",
            shape: "sep-3119",
            mimeType: "text/plain",
            chars: 9,
            bytes: 9,
            defect: false,
            extraParams: [],
          }
          : {
            status: "none",
            shape: null,
            mimeType: null,
            chars: 0,
            bytes: 0,
            defect: false,
            extraParams: [],
          },
      );
      assert.deepEqual(timelessLines(result).slice(1), [
        ...oddLines2026,
        ...embed ? ["embed asked"] : [],
        "called poke ok",
        `notification-received true after=Ts uri=${ODD_URI}`,
        "changed true",
        'final "version 2"',
        embed
          ? "inline-content matches-reread shape=sep-3119 mime=text/plain chars=9 bytes=9"
          : "inline-content none",
        ...oddLevel7Lines2026,
      ]);
    });
  }
});

Deno.test("probe --embed: inline content that contradicts the server's own resources/read is a server defect, said in the lines, the JSON and the report", async () => {
  const result = await probeOdd(
    { embed: true, inlineText: "version 99" },
    "2026-07-28",
    { call: POKE, embed: true },
  );
  // A defect in the content, not in the delivery: level and exit stay.
  assert.equal(result.level, 7);
  assert.equal(result.exitStatus, 0);
  const defect =
    "1 notification(s) carried content that contradicts the server's own resources/read after it (the first from character 8): a server defect";
  assert.equal(result.inlineDefect, defect);
  assert.deepEqual(result.updates[0].inline, {
    status: "differs-from-reread",
    shape: "sep-3119",
    mimeType: "text/plain",
    chars: 10,
    bytes: 10,
    differsAt: 8,
    inlineThere: "99",
    defect: true,
    extraParams: [],
  });
  assert.deepEqual(timelessLines(result).slice(1), [
    ...oddLines2026,
    "embed asked",
    "called poke ok",
    `notification-received true after=Ts uri=${ODD_URI}`,
    "changed true",
    'final "version 2"',
    'inline-content differs-from-reread shape=sep-3119 mime=text/plain chars=10 bytes=10 at=8 inline="99" defect=true',
    "unchanged-notifications 0",
    "unsolicited-notifications 0",
    `inline-defect ${defect}`,
    ...oddLevel7Lines2026.slice(2),
  ]);
  const markdown = probeMarkdown(result);
  assert.ok(markdown.includes(`\n**Server defect:** ${defect}.\n`), markdown);
  assert.ok(
    markdown.includes(
      '\nContent in the notifications (`--embed`: asked): 1. differs-from-reread shape=sep-3119 mime=text/plain chars=10 bytes=10 at=8 inline="99" defect=true.\n',
    ),
    markdown,
  );
  assert.match(
    assertProbeDiagram(markdown, "odd/0.0.1"),
    /S-->>P: notifications\/resources\/updated odd:\/\/thing \(content inline, sep-3119\)/,
  );
});

Deno.test("probe --embed in the 2025 era: nothing to ask with, a note and no failure", async () => {
  const result = await probeOdd({ changing: true }, "2025", { embed: true });
  assert.equal(result.level, 7);
  assert.equal(result.embed, "unavailable");
  assert.ok(
    probeLines(result).includes(
      "embed unavailable: the 2025 era has no subscriptions/listen to carry embedResources",
    ),
  );
});

Deno.test("probe against the lab's content in the update: version 2 inline matches the re-read, asked with --embed (2026-07-28) and unasked with --inline-content fastrmcp (2025)", async (t) => {
  const matches = (shape: string) =>
    `inline-content matches-reread shape=${shape} mime=text/plain chars=${VERSION_2_TEXT.length} bytes=${VERSION_2_TEXT.length}`;
  await t.step("2026-07-28: a listen with embedResources", async () => {
    await using lab = startLab();
    const result = await probeServer(
      probeOptions({ url: lab.url }, { era: "2026-07-28", embed: true }),
    );
    assert.equal(result.level, 7);
    assert.equal(result.exitStatus, 0);
    assert.equal(result.embed, "asked");
    assert.equal(result.inlineDefect, null);
    const lines = probeLines(result);
    assert.ok(lines.includes("embed asked"), lines.join("\n"));
    assert.ok(lines.includes(matches("sep-3119")), lines.join("\n"));
  });
  await t.step(
    "2026-07-28: asked, and FastRMCP's shape beside it: the flat one is read",
    async () => {
      await using lab = startLab({ MCP_TEST_INLINE_CONTENT: "fastrmcp" });
      const result = await probeServer(
        probeOptions({ url: lab.url }, { era: "2026-07-28", embed: true }),
      );
      assert.ok(probeLines(result).includes(matches("sep-3119")));
    },
  );
  await t.step("2025: FastRMCP's shape, unasked", async () => {
    await using lab = startLab({ MCP_TEST_INLINE_CONTENT: "fastrmcp" });
    const result = await probeServer(
      probeOptions({ url: lab.url }, { era: "2025" }),
    );
    assert.equal(result.level, 7);
    assert.ok(probeLines(result).includes(matches("fastrmcp")));
  });
});

// ---------------------------------------------------------------------------
// FastRMCP's dialect: content inline, its subscribe result, list_subscriptions
// ---------------------------------------------------------------------------

/**
 * The probe's lines for the FastRMCP-like server at `target` with `--call
 * increment`, as `timelessLines` gives them: level 6, since only FastRMCP's
 * own unsubscribe stops it.
 */
function fastRmcpLines(target: string, listSubscriptions = "supported") {
  return [
    `target ${target}`,
    `uri ${COUNTER_URI}`,
    "era 2025 (2025-11-25)",
    "server subs 1.0.0",
    'capabilities {"subscribe":true,"listChanged":false}',
    "resource-found true",
    'initial "{\\"value\\":0}"',
    "subscribed true",
    "subscribe-result id,uri,created_at,client_id",
    `list-subscriptions ${listSubscriptions}`,
    "called increment ok",
    `notification-received true after=Ts uri=${COUNTER_URI}`,
    "changed true",
    'final "{\\"value\\":1}"',
    "inline-content matches-reread shape=fastrmcp mime=application/json chars=11 bytes=11",
    "unchanged-notifications 0",
    "unsolicited-notifications 0",
    "unsubscribed true by=subscriptionId",
    "quiet-after-unsubscribe true",
    "level 6 re-read shows the change",
    "missing the server refused resources/unsubscribe {uri}; only FastRMCP's {subscriptionId} stopped the subscription",
    "error-code null",
    "summary level=6 era=2025 notifications=1/1 error-code=null exit=0",
  ];
}

/** Runs the probe command on a FastRMCP-like server, `--call increment`. */
async function probeFastRmcp(
  options: FastRmcpOptions = {},
  args: string[] = ["--json"],
) {
  await using server = serveFastRmcp(options);
  const run = await runProbeCommand([
    "--url",
    server.url.href,
    "--uri",
    COUNTER_URI,
    "--era",
    "2025",
    "--call",
    "increment",
    ...args,
  ]);
  return { ...run, url: server.url };
}

Deno.test("probe against FastRMCP's dialect: its content inline, subscribe result, list_subscriptions and unsubscribe by subscriptionId are reported, never graded", async () => {
  const run = await probeFastRmcp();
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout) as ProbeResult;
  assert.deepEqual(result.nonStandard, {
    subscribeResult: ["id", "uri", "created_at", "client_id"],
    listSubscriptions: "supported",
    unsubscribedBy: "subscriptionId",
  });
  assert.equal(result.updates[0].inline.status, "matches-reread");
  // The spec's unsubscribe was refused: level 6, as without the dialect.
  assert.deepEqual(timelessLines(result), fastRmcpLines(run.url.href));
  assert.ok(
    probeMarkdown(result).includes(
      "\nNot in the spec (FastRMCP's dialect), reported and not graded: resources/subscribe answered with fields id, uri, created_at, client_id; resources/list_subscriptions answered; resources/unsubscribe {uri} was refused and {subscriptionId} accepted.\n",
    ),
  );
});

Deno.test("probe: FastRMCP's resources/list_subscriptions answered over --max-bytes is a fact, never the outcome: the level, the exit status and the time stay, over HTTP and stdio", async (t) => {
  // Over 4 MiB, the default --max-bytes.
  const listBytes = 5_000_000;
  await t.step("HTTP, --call increment", async () => {
    const started = performance.now();
    const run = await probeFastRmcp({ listBytes }, [
      "--timeout",
      "8",
      "--json",
    ]);
    const seconds = (performance.now() - started) / 1000;
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as ProbeResult;
    assert.deepEqual(
      timelessLines(result),
      fastRmcpLines(run.url.href, "too-large"),
    );
    assert.ok(seconds < 8, `${seconds} s`);
  });
  await t.step("stdio, the server notifying by itself", async () => {
    const command = [
      Deno.execPath(),
      "run",
      "-A",
      FASTRMCP_PATH,
      JSON.stringify({ listBytes, notifyAfterMs: 300 }),
    ];
    const started = performance.now();
    const run = await runProbeCommand([
      "--uri",
      COUNTER_URI,
      "--era",
      "2025",
      "--timeout",
      "8",
      "--json",
      "--stdio",
      "--",
      ...command,
    ]);
    const seconds = (performance.now() - started) / 1000;
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as ProbeResult;
    assert.deepEqual(
      timelessLines(result),
      fastRmcpLines(command.join(" "), "too-large").filter((line) =>
        line !== "called increment ok"
      ),
    );
    // The update came at once: no wait for it to the timeout.
    assert.ok(seconds < 8, `${seconds} s`);
  });
  await t.step(
    "HTTP, the answer over the limit after its time (--timeout 1)",
    async () => {
      const run = await probeFastRmcp(
        { listBytes, listDelayMs: 1200 },
        ["--timeout", "1", "--json"],
      );
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout) as ProbeResult;
      // No answer within its time: unsupported, as for a server that never
      // answers; its late answer then is said, never the run's failure.
      assert.deepEqual(
        timelessLines(result),
        fastRmcpLines(run.url.href, "unsupported"),
      );
      assert.ok(
        result.steps.some(({ text }) =>
          /^the answer to resources\/list_subscriptions \(not in the spec\) was over --max-bytes \(\d+ bytes\): dropped$/
            .test(text)
        ),
        run.stderr,
      );
    },
  );
});

Deno.test("probe: FastRMCP content is compared only for the URI it names and the subscription it belongs to; a mismatch is reported as such, never graded", async (t) => {
  const cases = [
    {
      name: "content for another URI, with another subscription's id",
      contentUri: "other://x",
      subscription: "another-subscription",
      line:
        "inline-content uri-mismatch shape=fastrmcp mime=application/json chars=11 bytes=11 content-uri=other://x subscription=another-subscription",
    },
    {
      name: "content for the URI, with another subscription's id",
      contentUri: COUNTER_URI,
      subscription: "another-subscription",
      line:
        "inline-content subscription-mismatch shape=fastrmcp mime=application/json chars=11 bytes=11 subscription=another-subscription",
    },
  ];
  for (const { name, contentUri, subscription, line } of cases) {
    await t.step(name, async () => {
      const run = await probeFastRmcp({
        params: (text) => ({
          subscription_id: subscription,
          uri: COUNTER_URI,
          content: { uri: contentUri, mimeType: "application/json", text },
          timestamp: 1699565000,
        }),
      });
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout) as ProbeResult;
      assert.equal(result.inlineDefect, null);
      // The same lines as for FastRMCP's own content, but for the content's.
      assert.deepEqual(
        timelessLines(result),
        fastRmcpLines(run.url.href).map((expected) =>
          expected.startsWith("inline-content ") ? line : expected
        ),
      );
    });
  }
  await t.step(
    "a forged URI and subscription: quoted on their line",
    async () => {
      const run = await probeFastRmcp({
        params: (text) => ({
          subscription_id: FORGED_LINES,
          uri: COUNTER_URI,
          content: { uri: FORGED_LINES, text },
        }),
      }, []);
      assert.equal(run.code, 0, run.stderr);
      const lines = assertOwnLines(run);
      const quoted = JSON.stringify(FORGED_LINES).replace("\u2028", "\\u2028")
        .replaceAll("[", "\\u005b").replaceAll("]", "\\u005d");
      assert.ok(
        lines.includes(
          `inline-content uri-mismatch shape=fastrmcp chars=11 bytes=11 content-uri=${quoted} subscription=${quoted}`,
        ),
        run.stdout,
      );
    },
  );
});

Deno.test("probe: an update whose content nests 200,000 levels deep still counts; its content is refused as too deep, said with what came", async () => {
  const depth = 200_000;
  const deep = "[".repeat(depth) + "]".repeat(depth);
  const run = await probeFastRmcp({
    params: () => ({
      uri: COUNTER_URI,
      structuredContent: JSON.parse(deep),
    }),
  }, ["--json", "--timeout", "5"]);
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout) as ProbeResult;
  assert.deepEqual(
    timelessLines(result),
    fastRmcpLines(run.url.href).map((expected) =>
      expected.startsWith("inline-content ")
        ? `inline-content too-deep shape=sep-3119 chars=${deep.length} bytes=${deep.length} depth=${depth}`
        : expected
    ),
  );
  assert.ok(
    result.steps.some((step) =>
      step.text ===
        `notifications/resources/updated ${COUNTER_URI} (content inline, sep-3119, refused: ${depth} levels deep, over 1000)`
    ),
    run.stderr,
  );
});

Deno.test("probe: a notification's other params are named, bounded and escaped, never printed, and hostile inline content stays on its line", async (t) => {
  await t.step(
    "params it does not know: their names, ten at most",
    async () => {
      const names = ["type", "data", `${"n".repeat(60)}`, "a4", "a5", "a6"];
      const run = await probeFastRmcp({
        params: () =>
          Object.fromEntries([
            ["uri", COUNTER_URI],
            ...[...names, "a7", "a8", "a9", "a10", "a11"].map((name) => [
              name,
              "secret value",
            ]),
          ]),
      });
      assert.equal(run.code, 0, run.stderr);
      assert.ok(!run.stdout.includes("secret value"));
      const result = JSON.parse(run.stdout) as ProbeResult;
      assert.deepEqual(result.updates[0].inline.extraParams, [
        "type",
        "data",
        `${"n".repeat(39)}…`,
        "a4",
        "a5",
        "a6",
        "a7",
        "a8",
        "a9",
        "a10",
        "(1 more)",
      ]);
      assert.ok(
        timelessLines(result).includes(
          `inline-content none extra-params=["type","data","${
            "n".repeat(39)
          }…","a4","a5","a6","a7","a8","a9","a10","(1 more)"]`,
        ),
      );
    },
  );
  await t.step("forged lines in its content and its MIME type", async () => {
    const run = await probeFastRmcp({
      params: (text) => ({
        uri: COUNTER_URI,
        content: { mimeType: FORGED_LINES, text: `${text}${FORGED_LINES}` },
      }),
    }, []);
    assert.equal(run.code, 0, run.stderr);
    const lines = assertOwnLines(run);
    // The MIME type quoted as server text on a line is, the content's
    // size, and at most 40 characters of it as a JSON string.
    const inline = `{"value":1}${FORGED_LINES}`;
    assert.ok(
      lines.includes(
        `inline-content differs-from-reread shape=fastrmcp mime=${
          JSON.stringify(FORGED_LINES.slice(0, 100)).replaceAll("[", "\\u005b")
        } chars=${inline.length} bytes=${
          new TextEncoder().encode(inline).length
        } at=11 inline=${
          JSON.stringify(FORGED_LINES.slice(0, 40))
        } defect=true`,
      ),
      run.stdout,
    );
  });
});

// ---------------------------------------------------------------------------
// The catalog: a tool list that changes or not, and says so or not
// ---------------------------------------------------------------------------

/** What a catalog server does each time its `poke` tool is called. */
interface CatalogServer {
  /** The tools a poke adds; none: the list stays as it was. */
  adds: string[];
  /**
   * A poke sends notifications/tools/list_changed: 2025 on the session's
   * GET stream, 2026-07-28 to the listens that asked for it.
   */
  announces: boolean;
  /** Advertises `tools.listChanged` (true unless false); the SDK honours `toolsListChanged` only then. */
  advertises?: boolean;
  /** 2025: the answer to the first tools/list comes after a list_changed, on its own stream. */
  announcesAtFirstList?: boolean;
}

/**
 * A server with tools alone, in both eras (2025 sessions, 2026-07-28
 * through `createMcpHandler`), whose tool list a `poke` changes or not.
 */
function startCatalogServer(catalog: CatalogServer) {
  const tool = (name: string) => ({
    name,
    inputSchema: { type: "object" as const },
  });
  const tools = [tool("poke")];
  let listed = false;
  const bus = new InMemoryServerEventBus();
  const build = (era: "2025" | "2026-07-28") => () => {
    const server = new Server({ name: "catalog", version: "0.0.1" }, {
      capabilities: { tools: { listChanged: catalog.advertises ?? true } },
    });
    server.setRequestHandler("tools/list", async (_request, context) => {
      if (catalog.announcesAtFirstList && !listed) {
        await context.mcpReq.notify({
          method: "notifications/tools/list_changed",
        });
      }
      listed = true;
      return { tools };
    });
    server.setRequestHandler("tools/call", async () => {
      for (const name of catalog.adds) {
        if (!tools.some((known) => known.name === name)) tools.push(tool(name));
      }
      if (catalog.announces && era === "2025") {
        await server.sendToolListChanged().catch(() => {});
      }
      if (catalog.announces && era === "2026-07-28") {
        bus.publish({ kind: "tools_list_changed" });
      }
      return { content: [] };
    });
    return server;
  };
  const sessions = new LegacySessions(build("2025"));
  const modern = createMcpHandler(build("2026-07-28"), {
    legacy: "reject",
    bus,
  });
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const body = request.method === "POST" ? await request.json() : undefined;
      const forwarded = new Request(request.url, {
        method: request.method,
        headers: request.headers,
      });
      return await isLegacyRequest(forwarded, body)
        ? sessions.handle(forwarded, body)
        : modern.fetch(forwarded, { parsedBody: body });
    },
  );
  return {
    url: new URL(`http://127.0.0.1:${http.addr.port}/mcp`),
    async [Symbol.asyncDispose]() {
      await sessions.close();
      await modern.close();
      await http.shutdown();
    },
  };
}

/** Probes a catalog server's tools alone (`--catalog tools --catalog-only --call poke --timeout 1`). */
async function probeCatalog(
  catalog: CatalogServer,
  era: "2025" | "2026-07-28",
  overrides: Partial<ProbeOptions> = {},
) {
  await using server = startCatalogServer(catalog);
  const result = await probeServer(
    probeOptions({ url: server.url }, {
      era,
      catalog: ["tools"],
      catalogOnly: true,
      call: POKE,
      timeoutSeconds: 1,
      ...overrides,
    }),
  );
  return { result, target: server.url.href };
}

/** The lines every catalog-only run against a catalog server begins with. */
function catalogServerLines(target: string, era: "2025" | "2026-07-28") {
  return [
    `target ${target}`,
    "uri none (--catalog-only)",
    `era ${era} (${era === "2025" ? "2025-11-25" : era})`,
    "server catalog 0.0.1",
    'capabilities {"subscribe":false,"listChanged":false}',
    "called poke ok",
    "unsolicited-notifications 0",
  ];
}

for (const era of ["2025", "2026-07-28"] as const) {
  const asked = era === "2026-07-28" ? " asked=true" : "";
  Deno.test(`probe --catalog (${era}): a server that changes its tool list and says so is catalog level 3, exit 0`, async () => {
    const { result, target } = await probeCatalog(
      { adds: ["added_tool"], announces: true },
      era,
    );
    assert.deepEqual(timelessLines(result), [
      ...catalogServerLines(target, era),
      `catalog tools level=3 listed=1 notifications=1 after=Ts listed-again=2 added=["added_tool"] removed=[] list-changed=true${asked}`,
      "catalog-level 3 listed again with a difference",
      "catalog-missing nothing: each list watched changed, was notified and listed again with the change",
      "level 1 connected",
      "missing no resource watched (--catalog-only)",
      "error-code null",
      `summary level=1 era=${era} notifications=0/0 catalog=3 error-code=null exit=0`,
    ]);
    assert.equal(result.exitStatus, 0);
    assert.deepEqual(result.catalog?.kinds.tools?.first, {
      count: 1,
      names: ["poke"],
    });
    const markdown = probeMarkdown(result);
    assert.ok(
      markdown.includes(
        `| tools | ✅ 1 | ✅ | ${
          era === "2025" ? "—" : "✅"
        } | ✅ 1 | ✅ 2 | added_tool | — | 3 | nothing: tools/list changed, the server said so, and listed again it shows the change |`,
      ),
      markdown,
    );
    assert.match(
      assertProbeDiagram(markdown, "catalog/0.0.1"),
      /S-->>P: notifications\/tools\/list_changed\n {4}P->>S: tools\/list again \(2 listed: added \["added_tool"\], removed \[\]\)/,
    );
  });

  Deno.test(`probe --catalog (${era}): a server that says its tool list changed but did not change it is catalog level 2, catalog-unchanged (exit 24)`, async () => {
    const { result, target } = await probeCatalog(
      { adds: [], announces: true },
      era,
    );
    const missing =
      "tools: notified 1 time(s), but tools/list after it held what it first did";
    assert.deepEqual(timelessLines(result), [
      ...catalogServerLines(target, era),
      `catalog tools level=2 listed=1 notifications=1 after=Ts listed-again=1 added=[] removed=[] unchanged=1 list-changed=true${asked}`,
      "catalog-level 2 notified",
      `catalog-missing ${missing}`,
      "level 1 connected",
      "missing no resource watched (--catalog-only)",
      "error-code catalog-unchanged",
      `summary level=1 era=${era} notifications=0/0 catalog=2 error-code=catalog-unchanged exit=24`,
    ]);
    assert.equal(result.exitStatus, 24);
    assert.deepEqual(result.error, { message: missing });
  });

  Deno.test(`probe --catalog (${era}): a server that changes its tool list without saying so is catalog level 1, catalog-not-notified (exit 23), the change named`, async () => {
    const { result, target } = await probeCatalog(
      { adds: ["added_tool"], announces: false },
      era,
    );
    const missing =
      'tools: no notifications/tools/list_changed within 1 s; tools/list changed without one: added ["added_tool"], removed []';
    assert.deepEqual(timelessLines(result), [
      ...catalogServerLines(target, era),
      `catalog tools level=1 listed=1 notifications=0 listed-again=2 added=["added_tool"] removed=[] list-changed=true${asked}`,
      "catalog-level 1 listed",
      `catalog-missing ${missing}`,
      "level 1 connected",
      "missing no resource watched (--catalog-only)",
      "error-code catalog-not-notified",
      `summary level=1 era=${era} notifications=0/0 catalog=1 error-code=catalog-not-notified exit=23`,
    ]);
  });
}

for (const era of ["2025", "2026-07-28"] as const) {
  const asked = (honoured: boolean) =>
    era === "2026-07-28" ? ` asked=${honoured}` : "";
  Deno.test(`probe --catalog (${era}): the lab with --catalog-change all: each list gains its item, notified and listed again: catalog level 3 beside the resource's 7, exit 0`, async () => {
    await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "all" });
    const result = await probeServer(
      probeOptions({ url: lab.url }, { era, catalog: [...CATALOG_KINDS] }),
    );
    const lines = timelessLines(result);
    assert.deepEqual(
      lines.filter((line) => line.startsWith("catalog")),
      [
        ...CATALOG_KINDS.map((kind) =>
          `catalog ${kind} level=3 listed=1 notifications=1 after=Ts listed-again=2 added=["${
            CATALOG_ADDED[kind]
          }"] removed=[] list-changed=true${asked(true)}`
        ),
        "catalog-level 3 listed again with a difference",
        "catalog-missing nothing: each list watched changed, was notified and listed again with the change",
      ],
    );
    assert.equal(
      lines.at(-1),
      `summary level=7 era=${era} notifications=1/1 catalog=3 error-code=null exit=0`,
    );
    if (era === "2026-07-28") {
      // One listen asks for the resource and every list.
      assert.deepEqual(result.acknowledged, {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: [REVIEW_URI],
      });
    }
    // The lab saw the same: listed, notified, listed again, never used.
    const entry = lab.lab.report().clients.find((client) =>
      client.name === "mcp-subscription-probe"
    )!;
    assert.equal(entry.catalog?.level, 3);
  });

  Deno.test(`probe --catalog (${era}): the lab without --catalog-change: each list listed, none notified or changed: catalog level 1, catalog-not-notified (exit 23), the resource still 7`, async () => {
    await using lab = startLab();
    const result = await probeServer(
      probeOptions({ url: lab.url }, {
        era,
        catalog: [...CATALOG_KINDS],
        timeoutSeconds: 1,
      }),
    );
    assert.deepEqual(
      timelessLines(result).filter((line) => line.startsWith("catalog")),
      [
        `catalog tools level=1 listed=0 notifications=0 listed-again=0 added=[] removed=[] list-changed=false${
          asked(false)
        }`,
        `catalog prompts level=1 listed=0 notifications=0 listed-again=0 added=[] removed=[] list-changed=false${
          asked(false)
        }`,
        `catalog resources level=1 listed=1 notifications=0 listed-again=1 added=[] removed=[] list-changed=true${
          asked(true)
        }`,
        "catalog-level 1 listed",
        `catalog-missing tools: ${
          era === "2025"
            ? "no notifications/tools/list_changed within 1 s"
            : "the listen was acknowledged without toolsListChanged"
        }; tools/list did not change either`,
      ],
    );
    assert.equal(result.level, 7);
    assert.equal(
      result.missing,
      "nothing: the server delivers the update and stops cleanly",
    );
    assert.equal(result.errorCode, "catalog-not-notified");
    assert.equal(result.exitStatus, 23);
    assert.equal(
      result.catalog?.kinds.resources?.missing,
      "no notifications/resources/list_changed within 1 s; resources/list did not change either",
    );
  });
}

Deno.test("probe --catalog: a list the server does not advertise is catalog level 0, catalog-not-listed (exit 22); the lowest list is the catalog's", async () => {
  const { result } = await probeCatalog(
    { adds: ["added_tool"], announces: true },
    "2025",
    { catalog: ["tools", "prompts"] },
  );
  assert.equal(result.catalog?.kinds.tools?.level, 3);
  assert.equal(result.catalog?.kinds.prompts?.level, 0);
  assert.equal(result.catalog?.level, 0);
  assert.equal(
    result.catalog?.missing,
    "prompts: the server does not advertise prompts",
  );
  assert.equal(result.errorCode, "catalog-not-listed");
  assert.equal(result.exitStatus, 22);
  assert.ok(
    probeLines(result).includes(
      "catalog prompts level=0 listed=none notifications=0 list-changed=false",
    ),
  );
});

Deno.test("probe --catalog (2026-07-28): a listen acknowledged without toolsListChanged is said, and the change that came without a notification named", async () => {
  const { result } = await probeCatalog(
    { adds: ["added_tool"], announces: true, advertises: false },
    "2026-07-28",
  );
  assert.equal(result.catalog?.kinds.tools?.asked, false);
  assert.equal(result.catalog?.level, 1);
  assert.equal(
    result.catalog?.missing,
    'tools: the listen was acknowledged without toolsListChanged; tools/list changed without one: added ["added_tool"], removed []',
  );
  assert.equal(result.exitStatus, 23);
});

Deno.test("probe --catalog: a list_changed that came before the --call began is not counted", async () => {
  // Sent with the answer to the first tools/list, before the probe calls poke.
  const { result } = await probeCatalog(
    { adds: ["added_tool"], announces: false, announcesAtFirstList: true },
    "2025",
  );
  assert.ok(
    result.steps.some(({ text }) =>
      text ===
        "1 list_changed notification(s) before the change began, not counted"
    ),
  );
  assert.equal(result.catalog?.kinds.tools?.notifications, 0);
  assert.equal(result.catalog?.level, 1);
  assert.equal(result.exitStatus, 23);
});

Deno.test("probe --catalog: a server's tool names are kept bounded (ten, each cut, then how many more) and escaped in the lines and the report", async (t) => {
  const hostile = `evil${FORGED_LINES}`;
  const adds = [hostile, ...Array.from({ length: 11 }, (_, i) => `tool_${i}`)];
  const kept = [
    `${hostile.slice(0, 39)}…`,
    ...adds.slice(1, 10),
    "(2 more)",
  ];
  const probeNames = async (extra: string[] = []) => {
    await using server = startCatalogServer({ adds, announces: true });
    return await runProbeCommand([
      "--url",
      server.url.href,
      "--era",
      "2025",
      "--catalog",
      "tools",
      "--catalog-only",
      "--call",
      "poke",
      ...extra,
    ]);
  };
  await t.step("the lines", async () => {
    const run = await probeNames();
    assert.equal(run.code, 0, run.stderr);
    const line = assertOwnLines(run).find((line) =>
      line.startsWith("catalog tools ")
    );
    assert.equal(
      line?.replace(/ after=\d+(\.\d+)?s /, " after=Ts "),
      `catalog tools level=3 listed=1 notifications=1 after=Ts listed-again=13 added=${
        jsonText(kept)
      } removed=[] list-changed=true`,
    );
  });
  await t.step("the report", async () => {
    const run = await probeNames(["--report", "-"]);
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, /(?!\n)[\p{Cc}\u2028\u2029]/u);
    assert.deepEqual(
      run.stdout.split("\n").filter((line) => line.startsWith("```")),
      ["```mermaid", "```"],
    );
    const row = run.stdout.split("\n").find((line) =>
      line.startsWith("| tools |")
    );
    assert.equal(
      row,
      `| tools | ✅ 1 | ✅ | — | ✅ 1 | ✅ 13 | ${
        cell(kept.join(", "))
      } | — | 3 | nothing: tools/list changed, the server said so, and listed again it shows the change |`,
    );
    assertProbeDiagram(run.stdout, "catalog/0.0.1");
  });
});

Deno.test("probe.ts reads in order: no section uses a name a later section defines, none is over 450 lines", () => {
  assert.deepEqual(forwardUses(PROBE_PATH), []);
  const sections = sectionLengths(Deno.readTextFileSync(PROBE_PATH));
  assert.deepEqual(sections.filter(([, lines]) => lines > 450), []);
});
