/**
 * Tests for the servers table (`servers.ts`): its flags, the tables and
 * the paragraph it writes, `--check` against a published table, and one
 * real run of the reference everything server, installed from npm at its
 * pinned version into the harness's cache on first run.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { CatalogKind } from "../main.ts";
import type { CatalogListResult, ProbeResult } from "../probe.ts";
import {
  checkAgainstPublished,
  deploymentCell,
  findings,
  installPypiServer,
  main,
  missingProgram,
  parseServersArgs,
  selectedRows,
  type ServerRow,
  serversMarkdown,
  type StartedProcess,
  startHttpTarget,
  stopAll,
} from "./servers.ts";
import {
  type RowContext,
  type RowTarget,
  SERVER_CATALOG,
} from "./catalog/servers_and_proxies.ts";
import { defaultCacheDir } from "./support/install.ts";
import { freePort } from "./support/run_lab.ts";
import { alive } from "./support/process.ts";
import { GO_BUILD } from "./support/install_go.ts";
import { prepareTestEnvironment } from "../testdata/lab.ts";
import {
  HAPROXY_PATH,
  haproxyConfig,
  REDIS_SERVER_PATH,
  redisServerCommand,
} from "../launch.ts";
import { CARGO_BUILD } from "./support/install_rust.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: probe and catalog results, the fixture rows
// ---------------------------------------------------------------------------

/** A probe result with the fields the table reads. */
function result(
  level: number,
  missing: string,
  errorCode: ProbeResult["errorCode"] = null,
  exitStatus = 0,
  extra: Partial<ProbeResult> = {},
): ProbeResult {
  return {
    level,
    missing,
    errorCode,
    exitStatus,
    protocolVersion: "2025-11-25",
    unsolicited: { count: 0, uris: [] },
    ...extra,
  } as ProbeResult;
}

/** A catalog check's result with each list at its level, the lowest the catalog's. */
function catalog(
  levels: Partial<Record<CatalogKind, number>>,
  missing: string,
): ProbeResult["catalog"] {
  const kinds = Object.fromEntries(
    Object.entries(levels).map((
      [kind, level],
    ) => [kind, { level } as CatalogListResult]),
  );
  const level = Math.min(...Object.values(levels));
  return { level, levelName: "", missing, kinds };
}

const EVERY_LIST_CHANGED =
  "nothing: each list watched changed, was notified and listed again with the change";

const ROWS: ServerRow[] = [
  {
    table: "servers",
    slug: "demo-stdio-2025",
    name: "demo-server",
    version: "1.0.0",
    transport: "stdio",
    era: "2025",
    result: result(
      7,
      "nothing: the server delivers the update and stops cleanly",
    ),
    seconds: 1,
  },
  {
    table: "servers",
    slug: "demo-catalog-stdio-2025",
    name: "demo-server",
    version: "1.0.0",
    transport: "stdio",
    era: "2025",
    mode: "catalog only",
    result: result(
      1,
      "no resource watched (--catalog-only)",
      null,
      0,
      { uri: null, catalog: catalog({ resources: 3 }, EVERY_LIST_CHANGED) },
    ),
    seconds: 1,
  },
  {
    table: "servers",
    slug: "notifier-stdio-2025",
    name: "notifier|server",
    version: "2.0.0",
    transport: "stdio",
    era: "2025",
    result: result(
      1,
      "the server does not advertise resources.subscribe",
      "subscribe-not-advertised",
      13,
      { unsolicited: { count: 2, uris: ["console://logs"] } },
    ),
    seconds: 1,
  },
  {
    table: "servers",
    slug: "browserless-stdio-2025",
    name: "browserless",
    version: "3.0.0",
    transport: "stdio",
    era: "2025",
    reason: "needs Chromium at /usr/bin/chromium",
    seconds: 0,
  },
  {
    table: "proxies",
    slug: "gateway-default-2025",
    name: "gateway",
    version: "4.0.0",
    transport: "streamable-http",
    era: "2025",
    mode: "default",
    behind: "the lab over stdio",
    result: result(
      4,
      "no notifications/resources/updated for test://review/status within 8 s",
      "notification-timeout",
      16,
      {
        catalog: catalog(
          { tools: 1, prompts: 1, resources: 1 },
          "tools: no notifications/tools/list_changed within 8 s; tools/list did not change either",
        ),
      },
    ),
    seconds: 9,
  },
  {
    table: "proxies",
    slug: "gateway-stateful-2025",
    name: "gateway",
    version: "4.0.0",
    transport: "streamable-http",
    era: "2025",
    mode: "stateful",
    behind: "the lab over stdio",
    result: result(
      7,
      "nothing: the server delivers the update and stops cleanly",
      null,
      0,
      {
        catalog: catalog(
          { tools: 3, prompts: 3, resources: 3 },
          EVERY_LIST_CHANGED,
        ),
        serverFacts: {
          bound: 10,
          eras: {
            "2025": { spoken: true, detail: "initialize answered 2025-11-25" },
            "2026-07-28": { spoken: false, detail: "HTTP 404, no answer" },
          },
          getStream: {
            ended: "graceful",
            seconds: 1.5,
            detail: "the server ended the stream cleanly",
          },
          listen: {
            ended: "not-opened",
            seconds: null,
            detail: "the server does not speak 2026-07-28",
          },
          gracefulListenEnd: "not-seen",
          listenCap: null,
        },
      },
    ),
    seconds: 2,
  },
];

// ---------------------------------------------------------------------------
// Helpers: a run of chosen rows, a row's context
// ---------------------------------------------------------------------------

/**
 * `deno task servers --only ROWS` into a folder of its own, then `check`
 * with each row's line of the table and its report, by slug.
 */
async function withServerRows(
  rows: string[],
  check: (run: {
    row(slug: string): string;
    report(slug: string): Promise<string>;
  }) => void | Promise<void>,
) {
  const resultsDir = await Deno.makeTempDir();
  try {
    assert.equal(
      await main(["--only", rows.join(","), "--results-dir", resultsDir]),
      0,
    );
    const table = await Deno.readTextFile(`${resultsDir}/servers.md`);
    await check({
      row: (slug) =>
        table.split("\n").find((line) =>
          line.includes(`(servers/${slug}.md)`)
        ) ?? "",
      report: (slug) => Deno.readTextFile(`${resultsDir}/servers/${slug}.md`),
    });
  } finally {
    await Deno.remove(resultsDir, { recursive: true });
  }
}

/** A row's context as the runner fills it in, on fixed ports and paths. */
function rowContext(overrides: Partial<RowContext>): RowContext {
  return {
    bin: "",
    node: "node",
    python: "python3",
    deno: "deno",
    labMain: "main.ts",
    labUrl: "http://127.0.0.1:1/mcp",
    workDir: "/tmp/row",
    port: 4321,
    ports: [4322, 4323, 4324],
    ...overrides,
  };
}

// ---------------------------------------------------------------------------
// What this machine has: Redis, HAProxy and Python, Go, cargo
// ---------------------------------------------------------------------------

/** Debian's Redis and HAProxy and the board's Python: the replica rows' needs. */
const replicaNeeds = [
      [REDIS_SERVER_PATH, "redis-server"],
      [HAPROXY_PATH, "haproxy"],
    ].filter(([path]) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    }).length === 2 && await (async () => {
    try {
      return (await new Deno.Command("python3", { args: ["--version"] })
        .output()).success;
    } catch {
      return false;
    }
  })();
if (!replicaNeeds) {
  console.log(
    `servers_test.ts: the replica rows are skipped: they need ${REDIS_SERVER_PATH}, ${HAPROXY_PATH} and python3`,
  );
}

/** Whether `go version` runs here. */
async function goRuns(): Promise<boolean> {
  try {
    const output = await new Deno.Command("go", {
      args: ["version"],
      stdout: "null",
      stderr: "null",
    }).output();
    return output.success;
  } catch {
    return false;
  }
}

const hasGo = await goRuns();
if (!hasGo) {
  console.log("servers_test.ts: the Go SDK's board server is skipped: no go");
}

const hasCargo = await (async () => {
  try {
    const command = new Deno.Command("cargo", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    });
    return (await command.output()).success;
  } catch {
    return false;
  }
})();
if (!hasCargo) {
  console.log("servers_test.ts: the rmcp server's run is skipped: no cargo");
}

// ---------------------------------------------------------------------------
// The table: flags, cells, Markdown, --check, --rewrite, the everything server
// ---------------------------------------------------------------------------

Deno.test("servers --only: ids and row names; an unknown one is a one-line error", () => {
  const options = parseServersArgs(["--only", "mcp-remote-2025,memory"]);
  assert.ok(options !== "help");
  assert.deepEqual(
    selectedRows(options.only).map(({ row }) => row.slug),
    ["memory-stdio-2025", "mcp-remote-2025"],
  );
  assert.throws(
    () => parseServersArgs(["--only", "nonesuch"]),
    { message: '--only: no server or row named "nonesuch" (see --help)' },
  );
  // Every row name is unique: it names the row's report.
  const slugs = SERVER_CATALOG.flatMap((server) =>
    server.rows.map((row) => row.slug)
  );
  assert.equal(new Set(slugs).size, slugs.length);
});

Deno.test("missingProgram: a row process whose absolute path is missing is the row's reason, naming it and Debian's package", async () => {
  const target = (program: string): RowTarget => ({
    kind: "http",
    url: "http://127.0.0.1:1/mcp",
    processes: [{ name: "redis-server", command: [program], port: 1 }],
  });
  assert.equal(
    await missingProgram(target("/nonexistent/bin/redis-server")),
    "needs redis-server at /nonexistent/bin/redis-server (Debian's redis-server package), which this machine lacks",
  );
  assert.equal(await missingProgram(target(Deno.execPath())), undefined);
  assert.equal(
    await missingProgram({ kind: "stdio", command: ["/nonexistent"] }),
    undefined,
  );
});

Deno.test("deploymentCell and --check: a row across replicas shows delivered or lost, a gated one each watch's answer; --check holds them", () => {
  const row = (mode: string, extra: Partial<ProbeResult>): ServerRow => ({
    table: "servers",
    slug: `board-${mode.replaceAll(" ", "-")}`,
    name: "board",
    version: "1.0.0",
    transport: "streamable-http",
    era: "2026-07-28",
    mode,
    result: result(7, "nothing", null, 0, extra),
    seconds: 1,
  });
  const check = (uri: string, watch: "accepted" | "refused" | null) => ({
    uri,
    read: watch === null ? "served" as const : "refused" as const,
    watch,
    detail: "",
  });
  const delivered = row("2 replicas", {
    changeVia: { url: "http://127.0.0.1:2/mcp", delivered: true },
  });
  const lost = row("one bus each", {
    changeVia: { url: "http://127.0.0.1:2/mcp", delivered: false },
  });
  const gated = row("gate", {
    watchGate: {
      unknownUri: check("board://x", "refused"),
      unreadableUri: check("board://secret", null),
    },
  });
  assert.deepEqual([delivered, lost, gated].map(deploymentCell), [
    "2 replicas: change-via delivered",
    "one bus each: change-via lost",
    "gate: unreadable untested, unknown refused",
  ]);
  assert.equal(deploymentCell(ROWS[0]), "—");
  const published = serversMarkdown([delivered, gated], "2026-12-02");
  assert.deepEqual(checkAgainstPublished([delivered, gated], published), []);
  assert.deepEqual(
    checkAgainstPublished([{ ...lost, slug: delivered.slug }], published),
    [
      "board-2-replicas: level 7, exit 0, catalog —, one bus each: change-via lost; published: level 7, exit 0, catalog —, 2 replicas: change-via delivered",
    ],
  );
});

Deno.test("serversMarkdown: the servers table, the proxies table, and the paragraph from the rows", () => {
  const markdown = serversMarkdown(ROWS, "2026-11-30T00:00:00.000Z");
  const lines = markdown.split("\n");
  const servers = lines.indexOf("## Servers");
  const proxies = lines.indexOf("## Proxies");
  assert.ok(servers > 0 && proxies > servers);
  assert.deepEqual(lines.slice(servers + 4, servers + 8), [
    "| demo-server | 1.0.0 | stdio | 2025 (2025-11-25) | — | 7 | nothing: the server delivers the update and stops cleanly | — | — | 0 | [report](servers/demo-stdio-2025.md) |",
    "| demo-server | 1.0.0 | stdio | 2025 (2025-11-25) | — | — | no resource watched (--catalog-only) | resources 3 | — | 0 | [report](servers/demo-catalog-stdio-2025.md) |",
    "| notifier&#124;server | 2.0.0 | stdio | 2025 (2025-11-25) | — | 1 | the server does not advertise resources.subscribe | — | — | 13 (subscribe-not-advertised) | [report](servers/notifier-stdio-2025.md) |",
    "| browserless | 3.0.0 | stdio | 2025 (none) | — | — | could not run: needs Chromium at /usr/bin/chromium | — | — | — | — |",
  ]);
  assert.deepEqual(lines.slice(proxies + 7, proxies + 9), [
    "| gateway | 4.0.0 | default | the lab over stdio | streamable-http | 2025 (2025-11-25) | no | 4 | no notifications/resources/updated for test://review/status within 8 s | tools 1, prompts 1, resources 1 | — | 16 (notification-timeout) | [report](servers/gateway-default-2025.md) |",
    "| gateway | 4.0.0 | stateful | the lab over stdio | streamable-http | 2025 (2025-11-25) | yes | 7 | nothing: the server delivers the update and stops cleanly | tools 3, prompts 3, resources 3 | eras 2025; GET stream graceful 1.5 s | 0 | [report](servers/gateway-stateful-2025.md) |",
  ]);
  assert.deepEqual(findings(ROWS), [
    "- **demo-server** 1.0.0: delivers over stdio 2025; its catalog change reaches a client over stdio 2025 (catalog only).",
    "- **notifier&#124;server** 2.0.0: not over stdio 2025: the server does not advertise resources.subscribe (level 1); sent 2 notification(s) nobody subscribed to.",
    "- **browserless** 3.0.0: could not run here: needs Chromium at /usr/bin/chromium.",
    "- **gateway** 4.0.0: passes the update through over HTTP 2025 (stateful); not over HTTP 2025 (default): no notifications/resources/updated for test://review/status within 8 s (level 4); passes the catalog change through over HTTP 2025 (stateful); the catalog change not over HTTP 2025 (default): tools: no notifications/tools/list_changed within 8 s; tools/list did not change either (catalog 1).",
  ]);
  for (const finding of findings(ROWS)) assert.ok(markdown.includes(finding));
});

Deno.test("checkAgainstPublished: each row must have run with the published level, exit status and catalog", () => {
  const published = serversMarkdown(ROWS, "2026-11-30T00:00:00.000Z");
  const [demo, demoCatalog, notifier, browserless, gatewayDefault] = ROWS;
  assert.deepEqual(
    checkAgainstPublished(
      [demo, demoCatalog, notifier, gatewayDefault],
      published,
    ),
    [],
  );
  assert.deepEqual(
    checkAgainstPublished([
      { ...gatewayDefault, result: result(7, "nothing") },
      browserless,
      { ...demo, slug: "demo-http-2025" },
      {
        ...demoCatalog,
        result: {
          ...demoCatalog.result!,
          catalog: catalog({ resources: 1 }, "resources: …"),
        },
      },
    ], published),
    [
      "gateway-default-2025: level 7, exit 0, catalog —; published: level 4, exit 16, catalog tools 1, prompts 1, resources 1",
      "browserless-stdio-2025: could not run: needs Chromium at /usr/bin/chromium",
      "demo-http-2025: no row in the published table",
      "demo-catalog-stdio-2025: level —, exit 0, catalog resources 1; published: level —, exit 0, catalog resources 3",
    ],
  );
  assert.deepEqual(checkAgainstPublished([], published), ["no row ran"]);
});

Deno.test("deno task servers --rewrite probes nothing and writes the committed servers.md from servers.json, which it leaves as it was", async () => {
  assert.throws(() => parseServersArgs(["--rewrite", "--check"]), {
    message: "--rewrite probes nothing: it goes with --results-dir alone",
  });
  const results = new URL("../results/", import.meta.url);
  const json = await Deno.readTextFile(new URL("servers.json", results));
  const resultsDir = await Deno.makeTempDir({ prefix: "servers-rewrite-" });
  try {
    await Deno.writeTextFile(`${resultsDir}/servers.json`, json);
    assert.equal(await main(["--rewrite", "--results-dir", resultsDir]), 0);
    assert.equal(await Deno.readTextFile(`${resultsDir}/servers.json`), json);
    // Compared as a boolean: no diff of two whole tables when it fails.
    const same = await Deno.readTextFile(`${resultsDir}/servers.md`) ===
      await Deno.readTextFile(new URL("servers.md", results));
    assert.ok(same, "results/servers.md is not what --rewrite writes");
  } finally {
    await Deno.remove(resultsDir, { recursive: true });
  }
});

Deno.test("deno task servers --only everything: its dynamic resource changes on the second notification, level 7 over HTTP and stdio; its gzip tool's resource is announced and listed, catalog resources 3", async () => {
  const resultsDir = await Deno.makeTempDir();
  try {
    assert.equal(
      await main(["--only", "everything", "--results-dir", resultsDir]),
      0,
    );
    const table = await Deno.readTextFile(`${resultsDir}/servers.md`);
    for (const slug of ["everything-http-2025", "everything-stdio-2025"]) {
      const row = table.split("\n").find((line) =>
        line.includes(`(servers/${slug}.md)`)
      );
      assert.match(
        row ?? "",
        /^\| @modelcontextprotocol\/server-everything \| 2026\.8\.31 \| (streamable-http|stdio) +\| 2025 \(2025-11-25\) \| — +\| 7 +\| nothing: the server delivers the update and stops cleanly \| — +\| eras 2025(; GET stream open-at-bound 10(\.\d+)? s)? +\| 0 +\|/,
      );
      const report = await Deno.readTextFile(
        `${resultsDir}/servers/${slug}.md`,
      );
      assert.match(
        report,
        /S-->>P: notifications\/resources\/updated demo:\/\/resource\/dynamic\/text\/1\n {4}P->>S: resources\/read \((changed|unchanged)\)/,
      );
      assert.match(report, /P->>S: resources\/read \(changed\)/);
    }
    for (
      const slug of [
        "everything-catalog-http-2025",
        "everything-catalog-stdio-2025",
      ]
    ) {
      const row = table.split("\n").find((line) =>
        line.includes(`(servers/${slug}.md)`)
      );
      assert.match(
        row ?? "",
        /^\| @modelcontextprotocol\/server-everything \| 2026\.8\.31 \| (streamable-http|stdio) +\| 2025 \(2025-11-25\) \| — +\| — +\| no resource watched \(--catalog-only\) +\| resources 3 +\| eras 2025(; GET stream open-at-bound 10(\.\d+)? s)? +\| 0 +\|/,
      );
      const report = await Deno.readTextFile(
        `${resultsDir}/servers/${slug}.md`,
      );
      assert.match(
        report,
        /S-->>P: notifications\/resources\/list_changed\n {4}P->>S: resources\/list again \(8 listed: added \["demo:\/\/resource\/session\/probe\.txt\.gz"\], removed \[\]\)/,
      );
    }
  } finally {
    await Deno.remove(resultsDir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// Python servers and proxies: python-sdk, PyPI pins, mcp-proxy-python
// ---------------------------------------------------------------------------

Deno.test("python-sdk: the board server in both eras over HTTP and stdio, the resource via complete_task and the tools list via enable_reports, on its venv's Python", () => {
  const server = SERVER_CATALOG.find((item) => item.id === "python-sdk")!;
  assert.equal(server.table, "servers");
  assert.deepEqual(server.pypi, {
    package: "mcp",
    version: "2.3.0",
    environment: {
      id: "board-server",
      requirements: "clients/programs/python/requirements.txt",
    },
    program: "clients/programs/python/board_server.py",
  });
  const context = rowContext({
    bin: "/repo/board_server.py",
    python: "/cache/venv/bin/python",
  });
  const plan = server.rows.slice(0, 8).map((row) => ({
    slug: row.slug,
    era: row.era,
    mode: row.mode,
    target: row.target(context),
    probeArgs: row.probeArgs(context).join(" "),
  }));
  const http = {
    kind: "http",
    url: "http://127.0.0.1:4321/mcp",
    command: [
      "/cache/venv/bin/python",
      "/repo/board_server.py",
      "http",
      "4321",
    ],
  };
  const stdio = {
    kind: "stdio",
    command: ["/cache/venv/bin/python", "/repo/board_server.py", "stdio"],
  };
  const resource =
    '--uri board://sprint --skip-list-check --call complete_task --call-args {"board":"sprint","task":"design"} --timeout 8';
  const tools =
    "--catalog tools --catalog-only --call enable_reports --timeout 8";
  assert.deepEqual(
    plan,
    (["2025", "2026-07-28"] as const).flatMap((era) =>
      ([["http", http], ["stdio", stdio]] as const).flatMap((
        [transport, target],
      ) => [
        {
          slug: `python-sdk-${transport}-${era}`,
          era,
          mode: undefined,
          target,
          probeArgs: resource,
        },
        {
          slug: `python-sdk-catalog-${transport}-${era}`,
          era,
          mode: "catalog only",
          target,
          probeArgs: tools,
        },
      ])
    ),
  );
});

Deno.test("PyPI servers and proxies: their requirements pin every package exactly, the package at the table's version", async () => {
  const pypi = SERVER_CATALOG.flatMap((server) =>
    server.pypi ? [server.pypi] : []
  );
  assert.deepEqual(pypi.map((item) => `${item.package}==${item.version}`), [
    "mcp==2.3.0",
    "mcp-proxy==0.13.0",
  ]);
  for (const { package: name, version, environment } of pypi) {
    const text = await Deno.readTextFile(
      new URL(`../${environment.requirements}`, import.meta.url),
    );
    const pins = text.split("\n").filter((line) =>
      line.trim() !== "" && !line.startsWith("#")
    );
    for (const pin of pins) assert.match(pin, /^[A-Za-z0-9_.-]+==[^=\s]+$/);
    assert.ok(pins.includes(`${name}==${version}`));
    // Its dependencies too: the SDK itself, the HTTP server.
    assert.ok(pins.some((pin) => pin.startsWith("mcp==")));
    assert.ok(pins.some((pin) => pin.startsWith("uvicorn==")));
  }
});

Deno.test("installPypiServer: a failed pip is the row's reason, pip's own ERROR line; once installed, the program in the checkout on the environment's Python", async () => {
  const dir = await Deno.makeTempDir({ prefix: "servers-pypi-test-" });
  try {
    // A python3 whose venv's Python, as pip, fails or succeeds as asked.
    const python = `${dir}/python3`;
    await Deno.writeTextFile(
      python,
      [
        "#!/bin/sh",
        'mkdir -p "$3/bin"',
        `printf '#!/bin/sh\\necho "ERROR: No matching distribution found for mcp==2.3.0"\\n[ -e ${dir}/pip-ok ]\\n' > "$3/bin/python"`,
        'chmod +x "$3/bin/python"',
      ].join("\n"),
    );
    await Deno.chmod(python, 0o755);
    const server = SERVER_CATALOG.find((item) => item.id === "python-sdk")!;
    assert.deepEqual(
      await installPypiServer(server.pypi!, `${dir}/cache`, python),
      {
        reason:
          "pip install -r clients/programs/python/requirements.txt failed: ERROR: No matching distribution found for mcp==2.3.0",
      },
    );
    await Deno.writeTextFile(`${dir}/pip-ok`, "");
    const installed = await installPypiServer(
      server.pypi!,
      `${dir}/cache`,
      python,
    );
    assert.ok("python" in installed);
    assert.match(
      installed.python!,
      /\/cache\/python-board-server-[0-9a-f]{16}\/bin\/python$/,
    );
    assert.equal(
      installed.bin,
      new URL("programs/python/board_server.py", import.meta.url).pathname,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("mcp-proxy-python: the module on its venv's Python, on loopback, the lab over stdio behind it with the proxy's environment, both eras", () => {
  const proxy = SERVER_CATALOG.find((item) => item.id === "mcp-proxy-python")!;
  assert.equal(proxy.table, "proxies");
  assert.equal(proxy.pypi?.program, undefined);
  const context = rowContext({
    python: "/cache/venv/bin/python",
    deno: "/bin/deno",
    labMain: "/repo/main.ts",
  });
  assert.deepEqual(
    proxy.rows.map((row) => [row.slug, row.era, row.target(context)]),
    (["2025", "2026-07-28"] as const).map((era) => [
      `mcp-proxy-python-${era}`,
      era,
      {
        kind: "http",
        url: "http://127.0.0.1:4321/mcp",
        command: [
          "/cache/venv/bin/python",
          "-m",
          "mcp_proxy",
          "--host",
          "127.0.0.1",
          "--port",
          "4321",
          "--pass-environment",
          "--",
          "/bin/deno",
          "run",
          "-A",
          "/repo/main.ts",
          "--stdio",
          "--delay",
          "1",
          "--catalog-change",
          "all",
        ],
      },
    ]),
  );
});

// ---------------------------------------------------------------------------
// Replica rows: ports, processes, the change lost or delivered through Redis
// ---------------------------------------------------------------------------

Deno.test("python-sdk across replicas: A on the row's port, B on ports[0], Redis on ports[1] for bus and board, HAProxy on ports[2] as the probe's --url; the change always made on B", () => {
  const server = SERVER_CATALOG.find((item) => item.id === "python-sdk")!;
  const context = rowContext({
    bin: "/repo/board_server.py",
    python: "/venv/python",
  });
  const rows = server.rows.filter((row) => row.slug.includes("-replicas-"));
  const replica = (port: number, redis: boolean, store = redis) => [
    "/venv/python",
    "/repo/board_server.py",
    "http",
    String(port),
    ...redis ? ["--bus", "redis://127.0.0.1:4323"] : [],
    ...store ? ["--store", "redis://127.0.0.1:4323"] : [],
  ];
  const redisServer = {
    name: "redis-server",
    command: [
      "/usr/bin/redis-server",
      ...["--save", "", "--appendonly", "no", "--port", "4323"],
      ...["--bind", "127.0.0.1"],
    ],
    port: 4323,
  };
  const replicaB = (redis: boolean, store = redis) => ({
    name: "replica B",
    command: replica(4322, redis, store),
    port: 4322,
  });
  const haproxy = {
    name: "haproxy",
    command: ["/usr/sbin/haproxy", "-db", "-f", "haproxy.cfg"],
    port: 4324,
    files: { "haproxy.cfg": haproxyConfig(4324, [4321, 4322]) },
  };
  assert.deepEqual(
    rows.map((row) => [row.slug, row.era, row.mode, row.target(context)]),
    [
      [
        "python-sdk-replicas-memory-2026-07-28",
        "2026-07-28",
        "2 replicas, in-memory bus",
        {
          kind: "http",
          url: "http://127.0.0.1:4321/mcp",
          command: replica(4321, false),
          processes: [replicaB(false)],
        },
      ],
      [
        "python-sdk-replicas-redis-bus-only-2026-07-28",
        "2026-07-28",
        "2 replicas, Redis bus, board in each",
        {
          kind: "http",
          url: "http://127.0.0.1:4321/mcp",
          command: replica(4321, true, false),
          processes: [redisServer, replicaB(true, false)],
        },
      ],
      [
        "python-sdk-replicas-redis-2026-07-28",
        "2026-07-28",
        "2 replicas, Redis bus and board",
        {
          kind: "http",
          url: "http://127.0.0.1:4321/mcp",
          command: replica(4321, true),
          processes: [redisServer, replicaB(true)],
        },
      ],
      [
        "python-sdk-replicas-redis-2025",
        "2025",
        "2 replicas, Redis bus and board",
        {
          kind: "http",
          url: "http://127.0.0.1:4321/mcp",
          command: replica(4321, true),
          processes: [redisServer, replicaB(true)],
        },
      ],
      [
        "python-sdk-replicas-haproxy-redis-2026-07-28",
        "2026-07-28",
        "2 replicas behind HAProxy, Redis bus and board",
        {
          kind: "http",
          url: "http://127.0.0.1:4324/mcp",
          command: replica(4321, true),
          processes: [redisServer, replicaB(true), haproxy],
        },
      ],
    ],
  );
  for (const row of rows) {
    assert.equal(
      row.probeArgs(context).join(" "),
      '--uri board://sprint --skip-list-check --call complete_task --call-args {"board":"sprint","task":"design"} --change-via http://127.0.0.1:4322/mcp --timeout 8',
    );
  }
  assert.equal(
    haproxyConfig(4324, [4321, 4322]),
    [
      "defaults",
      "  mode http",
      "  timeout connect 5s",
      "  timeout http-request 10s",
      "  timeout client 120s",
      "  timeout server 120s",
      "frontend board",
      "  bind 127.0.0.1:4324",
      "  default_backend replicas",
      "backend replicas",
      "  balance roundrobin",
      "  server replicaA 127.0.0.1:4321",
      "  server replicaB 127.0.0.1:4322",
      "",
    ].join("\n"),
  );
  const gates = server.rows.filter((row) => row.slug.includes("-gate-"));
  assert.deepEqual(
    gates.map((row) => [
      row.slug,
      row.mode,
      row.target(context),
      row.probeArgs(context).join(" "),
    ]),
    (["2025", "2026-07-28"] as const).flatMap((era) =>
      ([false, true] as const).map((gate) => [
        `python-sdk-gate-${gate ? "on" : "off"}-${era}`,
        gate ? "listen gate" : "no listen gate",
        {
          kind: "http",
          url: "http://127.0.0.1:4321/mcp",
          command: [...replica(4321, false), ...gate ? ["--gate"] : []],
        },
        '--uri board://sprint --skip-list-check --call complete_task --call-args {"board":"sprint","task":"design"} --watch-gate --unreadable-uri board://secret --timeout 8',
      ])
    ),
  );
});

Deno.test({
  name:
    "the HAProxy row's processes: Redis, replica B, HAProxy and replica A each started and listening, the board served through the balancer; each stopped by its PID, none left",
  ignore: !replicaNeeds,
  async fn() {
    const server = SERVER_CATALOG.find((item) => item.id === "python-sdk")!;
    const installed = await installPypiServer(
      server.pypi!,
      defaultCacheDir(),
    );
    assert.ok("python" in installed, JSON.stringify(installed));
    const workDir = await Deno.makeTempDir({ prefix: "servers-replicas-" });
    const row = server.rows.find((row) =>
      row.slug === "python-sdk-replicas-haproxy-redis-2026-07-28"
    )!;
    const context: RowContext = {
      bin: installed.bin,
      node: "node",
      python: installed.python!,
      deno: Deno.execPath(),
      labMain: "main.ts",
      labUrl: "http://127.0.0.1:1/mcp",
      workDir,
      port: freePort(),
      ports: [freePort(), freePort(), freePort()],
    };
    const target = row.target(context);
    assert.equal(target.kind, "http");
    let started: StartedProcess[] = [];
    try {
      started = await startHttpTarget(
        target as Extract<RowTarget, { kind: "http" }>,
        context,
      );
      assert.equal(started.length, 4);
      for (const { pid } of started) assert.ok(await alive(pid), `${pid}`);
      assert.equal(
        await Deno.readTextFile(`${workDir}/haproxy.cfg`),
        haproxyConfig(context.ports[2], [context.port, context.ports[0]]),
      );
      // A request through the balancer reaches a replica: the MCP endpoint
      // answers a GET without a session as the SDK does, not the balancer's 503.
      const response = await fetch(target.url);
      await response.body?.cancel();
      assert.notEqual(response.status, 503);
    } finally {
      await stopAll(started);
      await Deno.remove(workDir, { recursive: true });
    }
    for (const { pid } of started) assert.equal(await alive(pid), false);
  },
});

Deno.test({
  name:
    "startHttpTarget: a process that exits before listening fails the row with its name and output, and the ones started before it are ended",
  ignore: !replicaNeeds,
  async fn() {
    const workDir = await Deno.makeTempDir({ prefix: "servers-replicas-" });
    const redisPort = freePort();
    try {
      await assert.rejects(
        startHttpTarget({
          kind: "http",
          url: "http://127.0.0.1:1/mcp",
          processes: [
            {
              name: "redis-server",
              command: redisServerCommand(redisPort),
              port: redisPort,
            },
            {
              name: "replica B",
              command: [
                "python3",
                "-c",
                "print('no bus'); raise SystemExit(3)",
              ],
              port: freePort(),
            },
          ],
        }, {
          bin: "",
          node: "node",
          python: "python3",
          deno: Deno.execPath(),
          labMain: "main.ts",
          labUrl: "http://127.0.0.1:1/mcp",
          workDir,
          port: freePort(),
          ports: [],
        }),
        { message: "replica B exited before listening: no bus" },
      );
      // Redis, started first, no longer accepts connections.
      await assert.rejects(
        Deno.connect({ hostname: "127.0.0.1", port: redisPort }),
      );
    } finally {
      await Deno.remove(workDir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "deno task servers --only the in-memory and the HAProxy replica rows: the change made on B is lost with each replica's memory (level 4, exit 16) and delivered through Redis behind the balancer (level 7)",
  ignore: !replicaNeeds,
  async fn() {
    const rows = [
      "python-sdk-replicas-memory-2026-07-28",
      "python-sdk-replicas-haproxy-redis-2026-07-28",
    ];
    await withServerRows(rows, ({ row }) => {
      assert.match(
        row(rows[0]),
        /^\| mcp \(PyPI\), board_server\.py \| 2\.3\.0 +\| streamable-http \| 2026-07-28 \(2026-07-28\) \| 2 replicas, in-memory bus: change-via lost +\| 4 +\| no notifications\/resources\/updated for board:\/\/sprint within 8 s: lost, the change made through http:<wbr>\/\/127\.0\.0\.1:\d+\/mcp never reached the stream held through http:<wbr>\/\/127\.0\.0\.1:\d+\/mcp \| — +\| eras 2025, 2026-07-28; GET stream open-at-bound 10(\.\d+)? s; listen open-at-bound 10(\.\d+)? s; listen cap at least 8 +\| 16 \(notification-timeout\) \|/,
      );
      assert.match(
        row(rows[1]),
        /^\| mcp \(PyPI\), board_server\.py \| 2\.3\.0 +\| streamable-http \| 2026-07-28 \(2026-07-28\) \| 2 replicas behind HAProxy, Redis bus and board: change-via delivered \| 7 +\| nothing: the server delivers the update and stops cleanly +\| — +\| eras 2025, 2026-07-28; listen open-at-bound 10(\.\d+)? s; listen cap at least 8 +\| 0 +\|/,
      );
    });
  },
});

// ---------------------------------------------------------------------------
// Go and Rust servers: go-sdk-server, rmcp, fastrmcp, built and run
// ---------------------------------------------------------------------------

Deno.test("go-sdk-server: the Go SDK's board server built from its module folder, both eras over HTTP and stdio, its listed resource via complete_task and the tools list via enable_reports", async () => {
  const server = SERVER_CATALOG.find((item) => item.id === "go-sdk-server")!;
  assert.equal(server.table, "servers");
  const dir = new URL("programs/go/go-sdk-server", import.meta.url).pathname;
  assert.deepEqual(server.built, {
    package: "github.com/modelcontextprotocol/go-sdk",
    version: "1.8.0",
    program: { dir, name: "go-sdk-server", recipe: GO_BUILD },
  });
  // The module pins the SDK at the table's version, go.sum beside it.
  const goMod = await Deno.readTextFile(`${dir}/go.mod`);
  assert.match(
    goMod,
    /^require github\.com\/modelcontextprotocol\/go-sdk v1\.8\.0$/m,
  );
  assert.match(
    await Deno.readTextFile(`${dir}/go.sum`),
    /^github\.com\/modelcontextprotocol\/go-sdk v1\.8\.0 h1:/m,
  );
  const context = rowContext({
    bin: "/cache/go-programs/go-sdk-server-0123/go-sdk-server",
  });
  const http = {
    kind: "http",
    url: "http://127.0.0.1:4321/mcp",
    command: [context.bin, "http", "4321"],
  };
  const stdio = { kind: "stdio", command: [context.bin, "stdio"] };
  const resource =
    '--uri board://sprint --call complete_task --call-args {"task":"design"} --timeout 8';
  const tools =
    "--catalog tools --catalog-only --call enable_reports --timeout 8";
  assert.deepEqual(
    server.rows.map((row) => ({
      slug: row.slug,
      era: row.era,
      mode: row.mode,
      target: row.target(context),
      probeArgs: row.probeArgs(context).join(" "),
    })),
    (["2025", "2026-07-28"] as const).flatMap((era) =>
      ([["http", http], ["stdio", stdio]] as const).flatMap((
        [transport, target],
      ) => [
        {
          slug: `go-sdk-server-${transport}-${era}`,
          era,
          mode: undefined,
          target,
          probeArgs: resource,
        },
        {
          slug: `go-sdk-server-catalog-${transport}-${era}`,
          era,
          mode: "catalog only",
          target,
          probeArgs: tools,
        },
      ])
    ),
  );
});

Deno.test({
  name:
    "deno task servers --only go-sdk-server rows: built with go, its resource delivered over stdio in 2025 (level 7), its new tool announced over HTTP in 2026-07-28 (tools 3)",
  ignore: !hasGo,
  async fn() {
    const rows = [
      "go-sdk-server-stdio-2025",
      "go-sdk-server-catalog-http-2026-07-28",
    ];
    await withServerRows(rows, async ({ row, report }) => {
      assert.match(
        row("go-sdk-server-stdio-2025"),
        /^\| go-sdk \(Go\), go-sdk-server \| 1\.8\.0 +\| stdio +\| 2025 \(2025-11-25\) +\| — +\| 7 +\| nothing: the server delivers the update and stops cleanly +\| — +\| eras 2025, 2026-07-28 +\| 0 +\|/,
      );
      assert.match(
        row("go-sdk-server-catalog-http-2026-07-28"),
        /^\| go-sdk \(Go\), go-sdk-server \| 1\.8\.0 +\| streamable-http \| 2026-07-28 \(2026-07-28\) +\| — +\| — +\| no resource watched \(--catalog-only\) +\| tools 3 +\| eras 2025, 2026-07-28; GET stream open-at-bound 10(\.\d+)? s; listen open-at-bound 10(\.\d+)? s; listen cap at least 8 +\| 0 +\|/,
      );
      assert.match(
        await report("go-sdk-server-catalog-http-2026-07-28"),
        /added \["sprint_report"\]/,
      );
    });
  },
});

Deno.test("rmcp-server: the board on rmcp in both eras over HTTP and stdio, its board listed, the program itself the command; Cargo.toml pins rmcp and Cargo.lock holds it", async () => {
  const server = SERVER_CATALOG.find((item) => item.id === "rmcp-server")!;
  assert.equal(server.table, "servers");
  const dir = new URL("programs/rust/rmcp-server", import.meta.url).pathname;
  assert.deepEqual(server.built, {
    package: "rmcp",
    version: "3.11.0",
    program: { dir, name: "rmcp-server", recipe: CARGO_BUILD },
  });
  const manifest = await Deno.readTextFile(`${dir}/Cargo.toml`);
  assert.match(manifest, /^rmcp = \{ version = "=3\.11\.0"/m);
  assert.ok(
    (await Deno.readTextFile(`${dir}/Cargo.lock`)).includes(
      '[[package]]\nname = "rmcp"\nversion = "3.11.0"\n',
    ),
  );
  const context = rowContext({
    bin: "/cache/rust-programs/rmcp-server-0/rmcp-server",
  });
  const plan = server.rows.map((row) => ({
    slug: row.slug,
    mode: row.mode,
    target: row.target(context),
    probeArgs: row.probeArgs(context).join(" "),
  }));
  const http = {
    kind: "http",
    url: "http://127.0.0.1:4321/mcp",
    command: [context.bin, "http", "4321"],
  };
  const stdio = { kind: "stdio", command: [context.bin, "stdio"] };
  const resource =
    '--uri board://sprint --call complete_task --call-args {"board":"sprint","task":"design"} --timeout 8';
  const tools =
    "--catalog tools --catalog-only --call enable_reports --timeout 8";
  assert.deepEqual(
    plan,
    (["2025", "2026-07-28"] as const).flatMap((era) =>
      ([["http", http], ["stdio", stdio]] as const).flatMap((
        [transport, target],
      ) => [
        {
          slug: `rmcp-server-${transport}-${era}`,
          mode: undefined,
          target,
          probeArgs: resource,
        },
        {
          slug: `rmcp-server-catalog-${transport}-${era}`,
          mode: "catalog only",
          target,
          probeArgs: tools,
        },
      ])
    ),
  );
});

Deno.test({
  name:
    "deno task servers --only rmcp-server's HTTP 2026-07-28 and stdio 2025 catalog rows: the board built with cargo delivers its update (level 7) and its new tool (tools 3)",
  ignore: !hasCargo,
  async fn() {
    const rows = [
      "rmcp-server-http-2026-07-28",
      "rmcp-server-catalog-stdio-2025",
    ];
    await withServerRows(rows, ({ row }) => {
      assert.match(
        row(rows[0]),
        /^\| rmcp \(crates\.io\), rmcp-server +\| 3\.11\.0 +\| streamable-http +\| 2026-07-28 \(2026-07-28\) \| — +\| 7 +\| nothing: the server delivers the update and stops cleanly +\| — +\| eras 2025, 2026-07-28; GET stream open-at-bound 10(\.\d+)? s; listen open-at-bound 10(\.\d+)? s; listen cap at least 8 +\| 0 +\|/,
      );
      assert.match(
        row(rows[1]),
        /^\| rmcp \(crates\.io\), rmcp-server +\| 3\.11\.0 +\| stdio +\| 2025 \(2025-11-25\) +\| — +\| — +\| no resource watched \(--catalog-only\) +\| tools 3 +\| eras 2025, 2026-07-28 +\| 0 +\|/,
      );
    });
  },
});

Deno.test("fastrmcp-server: the wiki's dependency and one stdio row in 2025; no Cargo.lock, since cargo can resolve no fastrmcp to write one", async () => {
  const server = SERVER_CATALOG.find((item) => item.id === "fastrmcp-server")!;
  const dir = new URL("programs/rust/fastrmcp-server", import.meta.url)
    .pathname;
  assert.deepEqual(server.built, {
    package: "fastrmcp",
    version: "0.2",
    program: { dir, name: "fastrmcp-server", recipe: CARGO_BUILD },
    lockFile: false,
  });
  const manifest = await Deno.readTextFile(`${dir}/Cargo.toml`);
  assert.match(manifest, /^fastrmcp = "0\.2"$/m);
  await assert.rejects(Deno.stat(`${dir}/Cargo.lock`), Deno.errors.NotFound);
  assert.deepEqual(
    server.rows.map((row) => ({
      slug: row.slug,
      era: row.era,
      target: row.target({ bin: "/b/fastrmcp-server" } as RowContext),
    })),
    [{
      slug: "fastrmcp-server-stdio-2025",
      era: "2025",
      target: { kind: "stdio", command: ["/b/fastrmcp-server"] },
    }],
  );
});
