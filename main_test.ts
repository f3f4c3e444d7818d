/**
 * Tests of the lab (`main.ts`) as a whole: its configuration, flags and
 * command line, its start and stop, the errors it survives, and the
 * checkout's modules held to their reading order. The lab's other tests
 * stand beside it by area, `main_<area>_test.ts` (docs/testing.md lists
 * them).
 *
 * ```sh
 * deno test -P main_test.ts                  # this file
 * deno test -P main_test.ts main_*_test.ts   # the lab's tests, every area
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  ConfigError,
  createLab,
  LAB_VERSION,
  loadConfig,
  parseCommandLine,
  REVIEW_URI,
  SDK_VERSION,
  shutdownSignals,
} from "./main.ts";
import { forwardUses, sectionLengths } from "./testdata/reading_order.ts";
import {
  prepareTestEnvironment,
  startLab,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  connectClient,
  delay,
  eventually,
  labCommand,
  openRawSession,
  postJsonRpc,
  postModern,
  readReview,
  spawnLabProcess,
  subscribeUntilUpdated,
} from "./testdata/lab_clients.ts";
import { MAIN_PATH } from "./launch.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Configuration, flags and the command line
// ---------------------------------------------------------------------------

Deno.test("loadConfig: defaults, fractions, boolean words", () => {
  assert.deepEqual(loadConfig({}), {
    port: 8089,
    host: "127.0.0.1",
    path: "/mcp",
    era: "both",
    updateDelaySeconds: 5,
    updateCount: 1,
    updateIntervalSeconds: 5,
    updateTrigger: "subscribe",
    initialStatus: "pending",
    updatedStatus: "reviewed",
    sendListChanged: false,
    inlineContent: "off",
    catalogChange: [],
    enableTool: false,
    enableWaitTool: false,
    allowedHosts: [],
    authToken: "",
    sessionTtlSeconds: 1800,
    bodyTimeoutSeconds: 10,
    maxSessions: 1000,
    maxWatches: null,
    streamLifetimeSeconds: null,
    streamEnd: "graceful",
    logLevel: "debug",
    logFormat: "text",
    reportFile: "",
    exitAfterClients: 0,
    deadlineSeconds: 0,
    requireLevel: null,
    requireCatalogLevel: null,
    gateClient: "",
    logSessionIds: false,
    bus: "",
  });
  const config = loadConfig({
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.25",
    MCP_TEST_SEND_LIST_CHANGED: "ON",
    MCP_TEST_INITIAL_STATUS: "queued",
    MCP_TEST_UPDATED_STATUS: "approved",
    MCP_TEST_LOG_LEVEL: "silent",
    MCP_TEST_PORT: "",
  });
  assert.equal(config.updateDelaySeconds, 0.25);
  assert.equal(config.sendListChanged, true);
  assert.equal(config.logLevel, "silent");
  assert.equal(config.port, 8089);
  for (const word of ["0", "no", "off", "false"]) {
    assert.equal(
      loadConfig({ MCP_TEST_SEND_LIST_CHANGED: word }).sendListChanged,
      false,
    );
  }
});

Deno.test("flags mirror the environment and win over it", () => {
  const { help, stdio, flags } = parseCommandLine([
    "--port",
    "9001",
    "--delay",
    "0.5",
    "--list-changed",
    "--trigger",
    "read",
    "--stdio",
  ]);
  assert.equal(help, false);
  assert.equal(stdio, true);
  const config = loadConfig(
    { MCP_TEST_PORT: "8000", MCP_TEST_UPDATE_TRIGGER: "connect" },
    flags,
  );
  assert.equal(config.port, 9001);
  assert.equal(config.updateDelaySeconds, 0.5);
  assert.equal(config.sendListChanged, true);
  assert.equal(config.updateTrigger, "read");
  assert.throws(
    () => loadConfig({}, parseCommandLine(["--trigger", "poll"]).flags),
    (error: Error) =>
      error.message ===
        '--trigger="poll" is not allowed: expected subscribe/read/connect/wait',
  );
  assert.throws(
    () => parseCommandLine(["--colour"]),
    (error: Error) =>
      error instanceof ConfigError && /--colour/.test(error.message),
  );
});

const BAD_VALUES: [string, string, string][] = [
  [
    "MCP_TEST_PORT",
    "http",
    'config error: MCP_TEST_PORT="http" is not allowed: expected an integer from 0 to 65535',
  ],
  [
    "MCP_TEST_PORT",
    "70000",
    'config error: MCP_TEST_PORT="70000" is not allowed: expected an integer from 0 to 65535',
  ],
  [
    "MCP_TEST_UPDATE_DELAY_SECONDS",
    "-1",
    'config error: MCP_TEST_UPDATE_DELAY_SECONDS="-1" is not allowed: expected a number of seconds from 0 to 86400, fractions allowed',
  ],
  [
    "MCP_TEST_SEND_LIST_CHANGED",
    "maybe",
    'config error: MCP_TEST_SEND_LIST_CHANGED="maybe" is not allowed: expected true/false/1/0/yes/no/on/off',
  ],
  [
    "MCP_TEST_ERA",
    "2026",
    'config error: MCP_TEST_ERA="2026" is not allowed: expected both/2025/2026-07-28',
  ],
  [
    "MCP_TEST_LOG_LEVEL",
    "loud",
    'config error: MCP_TEST_LOG_LEVEL="loud" is not allowed: expected debug/info/warn/error/silent',
  ],
  [
    "MCP_TEST_PATH",
    "mcp",
    'config error: MCP_TEST_PATH="mcp" is not allowed: expected a path starting with / (not /healthz or /report), without spaces, ? or #',
  ],
  [
    "MCP_TEST_REQUIRE_LEVEL",
    "7",
    'config error: MCP_TEST_REQUIRE_LEVEL="7" is not allowed: expected a level from 1 to 6 (level 7, the agent\'s context, is not observable by the lab)',
  ],
  [
    "MCP_TEST_REQUIRE_LEVEL",
    "0",
    'config error: MCP_TEST_REQUIRE_LEVEL="0" is not allowed: expected a level from 1 to 6 (level 7, the agent\'s context, is not observable by the lab)',
  ],
  [
    "MCP_TEST_EXIT_AFTER_CLIENTS",
    "-1",
    'config error: MCP_TEST_EXIT_AFTER_CLIENTS="-1" is not allowed: expected an integer from 0 to 1000000',
  ],
  [
    "MCP_TEST_DEADLINE_SECONDS",
    "soon",
    'config error: MCP_TEST_DEADLINE_SECONDS="soon" is not allowed: expected a number of seconds from 0 to 86400, fractions allowed',
  ],
];

for (const [name, value, message] of BAD_VALUES) {
  Deno.test(`bad ${name}=${value} exits 2 with one line before listening`, async () => {
    const output = await labCommand([], { MCP_TEST_PORT: "0", [name]: value })
      .output();
    assert.equal(output.code, 2);
    assert.equal(new TextDecoder().decode(output.stderr), `${message}\n`);
    assert.equal(new TextDecoder().decode(output.stdout), "");
  });
}

Deno.test("a bad --era exits 2 with one line, over HTTP and over stdio", async () => {
  for (const args of [["--era", "modern"], ["--stdio", "--era=modern"]]) {
    const output = await labCommand(args, { MCP_TEST_PORT: "0" }).output();
    assert.equal(output.code, 2);
    assert.equal(
      new TextDecoder().decode(output.stderr),
      'config error: --era="modern" is not allowed: expected both/2025/2026-07-28\n',
    );
    assert.equal(new TextDecoder().decode(output.stdout), "");
  }
});

Deno.test("--help prints the configuration table and exits 0", async () => {
  const output = await labCommand(["--help"]).output();
  assert.equal(output.code, 0);
  const help = new TextDecoder().decode(output.stdout);
  assert.match(help, /^Usage: deno run -A main\.ts \[--stdio\] \[options\]$/m);
  assert.match(help, /^ {2}--port +MCP_TEST_PORT +8089 +TCP port/m);
  assert.match(help, /^ {2}--delay +MCP_TEST_UPDATE_DELAY_SECONDS +5 +/m);
  assert.match(
    help,
    /^ {2}--list-changed +MCP_TEST_SEND_LIST_CHANGED +false +/m,
  );
  assert.match(help, /^ {2}--trigger +MCP_TEST_UPDATE_TRIGGER +subscribe +/m);
  assert.match(help, /^ {2}--log-format +MCP_TEST_LOG_FORMAT +text +/m);
});

/** The README's configuration rows: variable, flag and default. */
async function readmeSettings(): Promise<string[]> {
  const readme = await Deno.readTextFile(
    new URL("./README.md", import.meta.url),
  );
  const rows: string[] = [];
  for (const line of readme.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    if (!/^`MCP_TEST_\w+`$/.test(cells[1] ?? "")) continue;
    const plain = (cell: string) => cell.replaceAll("`", "");
    const fallback = plain(cells[3]) === "(empty)" ? '""' : plain(cells[3]);
    rows.push(`${plain(cells[2])} ${plain(cells[1])} ${fallback}`);
  }
  return rows;
}

/** Runs `deno run -P main.ts ARGS`: deno.json's permission set, nothing more. */
function runWithPermissionSet(...args: string[]) {
  return labCommand(args, {}, "-P").output();
}

Deno.test("the README's configuration table lists exactly what --help prints, with the same defaults", async () => {
  const output = await runWithPermissionSet("--help");
  assert.equal(output.code, 0);
  const help = new TextDecoder().decode(output.stdout).split("\n")
    .map((line) => line.match(/^ {2}(--[\w-]+) +(MCP_TEST_\w+) +(\S+) /))
    .filter((match) => match !== null)
    .map(([, flag, variable, fallback]) => `${flag} ${variable} ${fallback}`);
  assert.equal(help.length, 33);
  assert.deepEqual(await readmeSettings(), help);
});

Deno.test("main.ts probe runs with -P alone: deno.json lets it read probe.ts and reach loopback", async () => {
  await using lab = startLab();
  const output = await runWithPermissionSet(
    "probe",
    "--url",
    lab.url.href,
    "--era",
    "2025",
  );
  assert.equal(output.code, 0);
  assert.match(
    new TextDecoder().decode(output.stdout),
    /^summary level=7 era=2025 notifications=1\/1 error-code=null exit=0$/m,
  );
});

Deno.test("--version prints the lab, SDK and Deno versions with -P alone", async () => {
  const output = await runWithPermissionSet("--version");
  assert.equal(output.code, 0);
  assert.equal(
    new TextDecoder().decode(output.stdout),
    `mcp-subscription-lab ${LAB_VERSION} (MCP SDK ${SDK_VERSION}, Deno ${Deno.version.deno})\n`,
  );
});

// ---------------------------------------------------------------------------
// Start and stop: the banner, signals, the exit status
// ---------------------------------------------------------------------------

Deno.test("bound to 0.0.0.0, the banner names the loopback URL a user can open", async () => {
  const lab = await spawnLabProcess({ MCP_TEST_HOST: "0.0.0.0" });
  try {
    const port = new URL(lab.origin).port;
    assert.equal(
      lab.lines[0],
      `listening on http://127.0.0.1:${port}/mcp (bound to 0.0.0.0: every interface)`,
    );
    const report =
      `[lab] report at http://127.0.0.1:${port}/report.md (JSON: /report)`;
    await eventually(() => lab.lines.includes(report), lab.lines.join("\n"));
    const health = await fetch(`${lab.origin}/healthz`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    lab.child.kill("SIGTERM");
    await lab.child.status;
    await lab.read;
    await lab.stderr;
  }
});

Deno.test("SIGTERM ends listen streams gracefully and exits within 2 s", async () => {
  const lab = await spawnLabProcess({ MCP_TEST_UPDATE_DELAY_SECONDS: "60" });
  const isBanner = (line: string) => /^\[lab\] version=/.test(line);
  await eventually(() => lab.lines.some(isBanner), "no [lab] version= line");
  assert.equal(
    lab.lines.find(isBanner),
    `[lab] version=${LAB_VERSION} sdk=${SDK_VERSION} deno=${Deno.version.deno} resource=${REVIEW_URI}`,
  );
  const modern = await connectClient(lab.url, "shutdown-watcher", "auto");
  const subscription = await modern.listen({
    resourceSubscriptions: [REVIEW_URI],
  });
  const legacy = await connectClient(lab.url, "shutdown-legacy");
  await legacy.subscribeResource({ uri: REVIEW_URI });

  const signalledAt = performance.now();
  lab.child.kill("SIGTERM");
  assert.equal(await subscription.closed, "graceful");
  const status = await lab.child.status;
  const elapsed = performance.now() - signalledAt;
  assert.equal(status.code, 0);
  assert.ok(elapsed < 2000, `exit took ${elapsed} ms`);
  await lab.read;
  assert.equal(await lab.stderr, "");
  assert.ok(lab.lines.some((line) => line.startsWith("[lab] SIGTERM")));
  await modern.close();
  await legacy.close();
});

Deno.test("shutdown signals: Ctrl+Break too on Windows", () => {
  assert.deepEqual(shutdownSignals("linux"), ["SIGINT", "SIGTERM"]);
  assert.deepEqual(shutdownSignals("darwin"), ["SIGINT", "SIGTERM"]);
  assert.deepEqual(shutdownSignals("windows"), [
    "SIGINT",
    "SIGBREAK",
    "SIGTERM",
  ]);
});

Deno.test("a second SIGTERM while closing neither closes twice nor changes the exit status", async () => {
  const lab = await spawnLabProcess({ MCP_TEST_LOG_LEVEL: "info" });
  const client = await connectClient(lab.url, "twice-signalled");
  lab.child.kill("SIGTERM");
  lab.child.kill("SIGTERM");
  const status = await lab.child.status;
  await lab.read;
  await client.close().catch(() => {});
  assert.equal(status.code, 0);
  const count = (prefix: string) =>
    lab.lines.filter((line) => line.startsWith(prefix)).length;
  assert.equal(count("[lab] SIGTERM: closing"), 1, lab.lines.join("\n"));
  assert.equal(
    count("[verdict] level=1 client=twice-signalled/1.0.0"),
    1,
    lab.lines.join("\n"),
  );
});

// ---------------------------------------------------------------------------
// Error paths: the lab keeps serving whatever one request or timer does
// ---------------------------------------------------------------------------

/** A lab whose log sink throws on the lines `explodes` picks. */
function startLabWithFailingLog(
  explodes: (line: string) => boolean,
  env: Record<string, string> = {},
) {
  const lines: string[] = [];
  const lab = createLab(
    loadConfig({
      MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
      MCP_TEST_LOG_LEVEL: "info",
      ...env,
    }),
    (line) => {
      lines.push(line);
      if (explodes(line)) throw new Error("the log cannot be written");
    },
  );
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    lab.fetch,
  );
  return {
    lab,
    lines,
    url: new URL(`http://127.0.0.1:${server.addr.port}/mcp`),
    async [Symbol.asyncDispose]() {
      await lab.close();
      await server.shutdown();
    },
  };
}

Deno.test("a throw while serving a request answers 500 with -32603 and its id, logs [server/error], and others carry on", async () => {
  await using lab = startLabWithFailingLog((line) =>
    line.startsWith("[server/discover]") && line.includes("client=explosive/")
  );
  const response = await postModern(lab.url, "server/discover", {}, {
    id: 41,
    client: "explosive",
  });
  assert.equal(response.status, 500);
  assert.deepEqual(await response.json(), {
    jsonrpc: "2.0",
    error: { code: -32603, message: "Internal error" },
    id: 41,
  });
  const errors = lab.lines.filter((line) => line.startsWith("[server/error]"));
  assert.equal(errors.length, 1, lab.lines.join("\n"));
  assert.match(
    errors[0],
    /^\[server\/error\] message="the log cannot be written" at=/,
  );

  for (const mode of ["legacy", "auto"] as const) {
    await using bystander = await connectClient(
      lab.url,
      `bystander-${mode}`,
      mode,
    );
    assert.equal(await readReview(bystander), VERSION_1_TEXT);
    await subscribeUntilUpdated(bystander);
    assert.equal(await readReview(bystander), VERSION_2_TEXT);
  }
});

Deno.test("an update that cannot be sent is logged and named in the verdict, without ending the process", async () => {
  await using lab = startLabWithFailingLog((line) =>
    line.startsWith("[resource/update]")
  );
  await using client = await connectClient(lab.url, "unlucky");
  assert.equal(await readReview(client), VERSION_1_TEXT);
  await client.subscribeResource({ uri: REVIEW_URI });
  await eventually(
    () => lab.lines.some((line) => line.startsWith("[update/error]")),
    "an [update/error] line",
  );
  const failed = lab.lines.find((line) => line.startsWith("[update/error]"))!;
  assert.match(
    failed,
    /^\[update\/error\] the update could not be sent message="the log cannot be written" client=unlucky\/1\.0\.0 era=2025 /,
  );
  const entry = lab.lab.report().clients.find((c) => c.name === "unlucky")!;
  assert.equal(entry.level, 4);
  assert.equal(
    entry.missing,
    "the update could not be sent: the log cannot be written",
  );
  assert.equal(lab.lab.counts().pendingUpdates, 0);
});

Deno.test("an error the SDK reports inside a 2025 session is a warn line, not silence", async () => {
  await using lab = startLab({ MCP_TEST_LOG_LEVEL: "warn" });
  const sessionId = await openRawSession(lab.url);
  const answer = await postJsonRpc(
    lab.url,
    { jsonrpc: "2.0", id: 999, result: {} },
    { "mcp-session-id": sessionId },
  );
  assert.equal(answer.status, 202);
  await eventually(
    () => lab.lines.some((line) => line.startsWith("[mcp/error]")),
    "an [mcp/error] line",
  );
  assert.match(
    lab.lines.find((line) => line.startsWith("[mcp/error]"))!,
    /^\[mcp\/error\] message=".*unknown message ID.*" at=/,
  );
});

Deno.test("out of file descriptors, the lab logs one line, keeps its state and accepts again", async () => {
  // The shell lowers the limit for the lab only; exec keeps the lab's PID
  // ours. /bin/sh by its path: PATH may hold anything. Without
  // SSL_CERT_FILE: out of descriptors, a lab given one once printed a
  // certificate warning on the stderr this test holds to be empty (the lab
  // downloads nothing; its packages are in the cache this process used).
  const { child, origin, lines, read, stderr } = await spawnLabProcess(
    { MCP_TEST_LOG_LEVEL: "info" },
    [
      "/bin/sh",
      "-c",
      'unset SSL_CERT_FILE; ulimit -n 64 && exec "$@"',
      "lab",
    ],
  );
  await using before = await connectClient(
    new URL(`${origin}/mcp`),
    "before-flood",
  );
  assert.equal(await readReview(before), VERSION_1_TEXT);

  const port = Number(new URL(origin).port);
  const flood: Deno.TcpConn[] = [];
  for (let i = 0; i < 200; i++) {
    try {
      flood.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    } catch {
      break; // refused: the accept loop has stopped
    }
  }
  await delay(300);
  for (const connection of flood) connection.close();
  await eventually(
    () => lines.some((line) => line.startsWith("[server/listening] again")),
    `a [server/listening] again line:\n${lines.join("\n")}`,
  );
  const health = await (await fetch(`${origin}/healthz`)).json();
  assert.equal(health.legacySessions, 1);
  const fresh = await connectClient(new URL(`${origin}/mcp`), "after-flood");
  assert.equal(await readReview(fresh), VERSION_1_TEXT);
  await fresh.close();

  const errors = lines.filter((line) => line.startsWith("[server/error]"));
  assert.equal(errors.length, 1, lines.join("\n"));
  assert.match(
    errors[0],
    /^\[server\/error\] not accepting connections; listening again when possible message=".*Too many open files.*" at=/,
  );
  child.kill("SIGTERM");
  assert.equal((await child.status).code, 0);
  await read;
  assert.equal(await stderr, "");
});

// ---------------------------------------------------------------------------
// The modules: reading order, exports, the SDK's version
// ---------------------------------------------------------------------------

/**
 * The modules of the lab's side, by path: every `.ts` file at the top level
 * (the lab, the probe, the launcher, the bench, their tests) and in
 * `testdata/`, read from the folders so that a new one is held too.
 */
function labSideModules(): string[] {
  return ["", "testdata/"].flatMap((folder) =>
    [...Deno.readDirSync(new URL(`./${folder}`, import.meta.url))]
      .filter((entry) => entry.isFile && entry.name.endsWith(".ts"))
      .map((entry) => `${folder}${entry.name}`)
  ).toSorted();
}

Deno.test("every module of the lab's side reads in order: no section uses a name a later section defines, none is over 450 lines; main.ts has one section for each part of the lab, and at most 4,900 lines", async (t) => {
  for (const file of labSideModules()) {
    await t.step(file, () => {
      const path = new URL(file, import.meta.url).pathname;
      assert.deepEqual(forwardUses(path), []);
      const text = Deno.readTextFileSync(path);
      const sections = sectionLengths(text);
      assert.deepEqual(sections.filter(([, lines]) => lines > 450), []);
      if (path !== MAIN_PATH) return;
      assert.ok(text.split("\n").length - 1 <= 4900);
      const titles = sections.map(([title]) => title.split(":")[0]);
      assert.equal(new Set(titles).size, titles.length, titles.join("\n"));
    });
  }
});

Deno.test("main.ts's module doc names every section in order, and every export by its section, and nothing else", () => {
  const text = Deno.readTextFileSync(MAIN_PATH);
  const doc = text.slice(0, text.indexOf(" * @module"));
  const map = doc.slice(doc.indexOf("The sections, in reading order"))
    .replace(/\n \* {2,}/g, " ");
  // "N. Title: `export`, …" (or "; N+1. Title" for a section without one).
  const named = [...map.matchAll(/(\d+)\. ([^:;\n]+?)(?::|;|\n)/g)];
  const sections = sectionLengths(text).slice(1).map(([title]) =>
    title.split(":")[0]
  );
  assert.deepEqual(named.map(([, n, title]) => [Number(n), title]), [
    ...sections.map((title, index) => [index + 1, title]),
  ]);
  for (const [index, title] of sections.entries()) {
    const item = map.slice(map.indexOf(`${index + 1}. ${title}`)).split(
      /; \d+\. |\n/,
    )[0];
    const exported = [
      ...text.slice(
        text.indexOf(`// ${title}`),
        sections[index + 1]
          ? text.indexOf(`// ${sections[index + 1]}`)
          : undefined,
      ).matchAll(
        /^export (?:async function\*?|function|const|type|interface|class) (\w+)/gm,
      ),
    ].map((match) => match[1]);
    const listed = [...item.matchAll(/`(\w+)`/g)].map((match) => match[1]);
    // The head's two versions are listed with the first section.
    const head = index === 0 ? ["LAB_VERSION", "SDK_VERSION"] : [];
    assert.deepEqual(
      listed.toSorted(),
      [...head, ...exported].toSorted(),
      title,
    );
  }
});

Deno.test("SDK_VERSION is the version of every MCP SDK package imported here, server and client", async (t) => {
  // The lab, the probe, and the clients their tests connect with import it;
  // any other module of the lab's side may, at the same version.
  const importers = [
    "main.ts",
    "probe.ts",
    "probe_test.ts",
    "testdata/lab_clients.ts",
  ];
  const packages = new Set<string>();
  for (const file of labSideModules()) {
    await t.step(file, async () => {
      const source = await Deno.readTextFile(new URL(file, import.meta.url));
      const specifiers = source.matchAll(
        /"npm:@modelcontextprotocol\/(\w+)@([^"/]+)(\/\w+)?"/g,
      );
      let count = 0;
      for (const [specifier, name, version] of specifiers) {
        assert.equal(version, SDK_VERSION, specifier);
        packages.add(name);
        count++;
      }
      if (!importers.includes(file)) return;
      assert.ok(count > 0, `${file} imports no MCP SDK package`);
    });
  }
  assert.deepEqual([...packages].toSorted(), ["client", "server"]);
});
