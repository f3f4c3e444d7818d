/**
 * Tests for the comparison of two runs (`compare.ts`) and for `deno task
 * clients --compare` and `deno task servers --compare` on fixture tables
 * (`testdata/matrix_before.json`, `testdata/servers_before.json`): a level
 * that changed, a new client, a client gone, an install failure, nothing
 * changed, and their exit statuses.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  changesSection,
  comparedPaths,
  type ComparedRow,
  compareRows,
  comparisonStatus,
  withSection,
} from "./compare.ts";
import type { MatrixDocument } from "../report/matrix.ts";
import { main as clients } from "../run.ts";
import { main as servers, type ServersDocument } from "../servers.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: a row, the fixture matrix, what a run printed, hostile text
// ---------------------------------------------------------------------------

const row = (fields: Partial<ComparedRow> = {}): ComparedRow => ({
  key: "demo|default|native|subscribe",
  what: ["Demo CLI", "default", "native", "subscribe"],
  era: "2025",
  version: "1.0.0",
  level: 3,
  outcome: "completed",
  notes: ["never subscribed to test://review/status (resources/subscribe)"],
  ...fields,
});

/** A Markdown text with every run of spaces and line breaks as one space. */
const flat = (text: string) => text.replace(/\s+/g, " ");

const BEFORE = JSON.parse(
  await Deno.readTextFile(
    new URL("../testdata/matrix_before.json", import.meta.url),
  ),
) as MatrixDocument;

/** The fixture matrix with `change` made to a copy of its rows. */
function matrixAfter(
  change: (rows: MatrixDocument["rows"]) => MatrixDocument["rows"],
): MatrixDocument {
  return {
    ...BEFORE,
    generatedAt: "2026-12-08T06:00:00.000Z",
    rows: change(structuredClone(BEFORE.rows)),
  };
}

/** What `run` printed, each console call as one string, and its status. */
async function printed(run: () => Promise<number>) {
  const lines: string[] = [];
  const { log, error } = console;
  console.log = console.error = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  try {
    return { status: await run(), lines };
  } finally {
    Object.assign(console, { log, error });
  }
}

/**
 * Terminal escapes and a bell, then what opens a block in Markdown (a
 * heading, list items, a fence, a rule) and raw HTML, each on a new line.
 */
const HOSTILE =
  "\u001b[31m\u001b]0;title\u0007\n## Injected\n- item\n1. item\n~~~\n===\n<img src=x onerror=alert(1)><script>alert(1)</script>\r\n";

/** Control characters a terminal or a Markdown reader would act on. */
// deno-lint-ignore no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

// ---------------------------------------------------------------------------
// Helpers: a Deno cache without registry metadata, a proxy that refuses
// ---------------------------------------------------------------------------

/** Hard-links `from`'s files into `to` (copies them across file systems). */
async function linkTree(from: string, to: string) {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const [source, target] = [`${from}/${entry.name}`, `${to}/${entry.name}`];
    if (entry.isDirectory) await linkTree(source, target);
    else if (entry.isSymlink) {
      await Deno.symlink(await Deno.readLink(source), target);
    } else {await Deno.link(source, target).catch(() =>
        Deno.copyFile(source, target)
      );}
  }
}

/**
 * A Deno cache holding the lockfile's npm packages as this test's Deno
 * has them, but none of their registry metadata (`registry.json`): what
 * `deno task` leaves on a fresh machine, where it installs the lockfile's
 * tarballs alone. Files are linked (Deno would see through a symlinked
 * folder to this cache); the caller removes the folder.
 */
async function cacheWithoutMetadata(): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "--no-config"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout)) as {
    npmCache: string;
  };
  const lock = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.lock", import.meta.url)),
  ) as { npm: Record<string, unknown> };
  // `name@version` as the cache's folders: `name/version`.
  const packages = Object.keys(lock.npm).map((key) =>
    key.replace(/(.)@([^@]+)$/, "$1/$2")
  );
  const denoDir = await Deno.makeTempDir({ prefix: "metadata-free-cache-" });
  for await (const registry of Deno.readDir(npmCache)) {
    for (const folder of packages) {
      const source = `${npmCache}/${registry.name}/${folder}`;
      if (!await Deno.stat(source).then(() => true, () => false)) continue;
      await linkTree(source, `${denoDir}/npm/${registry.name}/${folder}`);
    }
  }
  return denoDir;
}

/** A loopback HTTP proxy that refuses every request, and lists them. */
function refusingProxy() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const asked: string[] = [];
  const served = (async () => {
    for await (const conn of listener) {
      const head = new Uint8Array(1024);
      const read = await conn.read(head).catch(() => null);
      asked.push(
        new TextDecoder().decode(head.subarray(0, read ?? 0)).split("\r\n")[0],
      );
      await conn.write(
        new TextEncoder().encode(
          "HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        ),
      ).catch(() => {});
      conn.close();
    }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    asked,
    async close() {
      listener.close();
      await served.catch(() => {});
    },
  };
}

// ---------------------------------------------------------------------------
// compareRows, changesSection and withSection
// ---------------------------------------------------------------------------

Deno.test("compareRows: a level, an outcome, a row new or gone are changes; durations in notes are not; versions moved are listed", () => {
  const same = row({ key: "same", notes: ["the longest blocked 3 s"] });
  const comparison = compareRows(
    [row(), same, row({ key: "gone", what: ["Gone CLI"] })],
    [
      row({ version: "1.1.0", level: 5, notes: ["never read it again"] }),
      { ...same, version: "1.1.0", notes: ["the longest blocked 2.9 s"] },
      row({ key: "new", what: ["New CLI"], version: "0.1.0" }),
    ],
  );
  assert.deepEqual(
    comparison.changes.map((
      change,
    ) => [
      change.what[0],
      change.version,
      change.level,
      change.note,
      change.decisive,
    ]),
    [
      ["Demo CLI", "1.0.0 → 1.1.0", "3 → 5", "never read it again", true],
      ["New CLI", "— → 0.1.0", "— → 3", comparison.changes[1].note, true],
      ["Gone CLI", "1.0.0 → —", "3 → —", comparison.changes[2].note, true],
    ],
  );
  assert.equal(
    comparison.changes[2].note,
    "no longer: never subscribed to test://review/status (resources/subscribe)",
  );
  assert.deepEqual(comparison.versions, ["Demo CLI 1.0.0 → 1.1.0"]);
  assert.equal(comparison.compared, 4);
  assert.equal(comparisonStatus(comparison), 3);
  // Notes or an era alone: listed, exit status 0.
  const notes = compareRows([row(), row({ key: "era" })], [
    row({ notes: ["something else"] }),
    row({ key: "era", era: "2026-07-28" }),
  ]);
  assert.deepEqual(
    notes.changes.map((change) => [change.era, change.note, change.decisive]),
    [["2025", "something else", false], ["2025 → 2026-07-28", "(none)", false]],
  );
  assert.equal(comparisonStatus(notes), 0);
});

Deno.test("changesSection and withSection: one section per table, the other kept", () => {
  const comparison = compareRows([row()], [
    row({
      level: 0,
      outcome: "install-failed",
      notes: ["npm install failed: E404"],
    }),
  ]);
  const section = changesSection(comparison, [
    "Client",
    "Mode",
    "Route",
    "Trigger",
  ], {
    before: "`results/matrix.json`",
    after: "the newest versions",
    extra: ["demo 1.1.0 did not install or start, so its pin stays."],
  });
  assert.ok(
    section.includes(
      "| Demo CLI | default | native | subscribe | 2025 | 1.0.0 | 3 → 0 | completed → install-failed | npm install failed: E404 |",
    ),
  );
  assert.ok(
    section.includes(
      "1 rows compared: 1 changed in level or outcome, 0 in their era or notes alone (exit status 3).",
    ),
  );
  const both = withSection(
    withSection("", "Clients", section),
    "Servers and proxies",
    "Nothing changed.",
  );
  const again = withSection(both, "Clients", "Every version as before.");
  assert.match(
    again,
    /## Clients\n\nEvery version as before\.\n\n## Servers and proxies\n\nNothing changed\.\n$/,
  );
  assert.deepEqual(comparedPaths([], "C"), ["C", "C"]);
  assert.deepEqual(comparedPaths(["new.json"], "C"), ["C", "new.json"]);
  assert.deepEqual(comparedPaths(["old.json", "-"], "C"), ["old.json", "C"]);
});

// ---------------------------------------------------------------------------
// deno task clients --compare: changes, hostile files, files of the wrong shape
// ---------------------------------------------------------------------------

Deno.test("deno task clients --compare: the fixture matrix against itself and four changes of it", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "clients-compare-test-" });
  const before = `${dir}/before.json`;
  await Deno.writeTextFile(before, JSON.stringify(BEFORE));
  const cases: [string, MatrixDocument, number, string[]][] = [
    ["nothing changed", BEFORE, 0, [
      "Nothing changed in 6 rows compared (exit status 0).",
    ]],
    [
      "a level that changed",
      matrixAfter((rows) =>
        rows.map((r) =>
          r.clientId !== "mcpdo"
            ? r
            : r.trigger === "read"
            ? { ...r, version: "2.13.0" }
            : {
              ...r,
              version: "2.13.0",
              level: 4,
              notificationDelivered: false,
              notes: "no notification delivered",
            }
        )
      ),
      3,
      [
        "New versions: mcpdo (MCP Inspector) 2.12.0 → 2.13.0.",
        "| mcpdo (MCP Inspector) | default | native | subscribe | 2025 | 2.12.0 → 2.13.0 | 5 → 4 | completed | no notification delivered |",
      ],
    ],
    [
      "a new client",
      matrixAfter((
        rows,
      ) => [...rows, {
        ...rows[0],
        clientId: "newcli",
        client: "New CLI",
        version: "0.1.0",
      }]),
      3,
      [
        "| New CLI | default | native | subscribe | — → 2026-07-28 | — → 0.1.0 | — → 3 | — → completed | opened subscriptions/listen without test://review/status in resourceSubscriptions |",
      ],
    ],
    [
      "a client gone",
      matrixAfter((rows) => rows.filter((r) => r.clientId !== "pi")),
      3,
      [
        "| pi coding agent | default | native | subscribe | — | 0.73.1 → — | 0 → — | not-supported → — |",
      ],
    ],
    [
      "an install failure",
      matrixAfter((rows) =>
        rows.map((r) =>
          r.clientId === "copilot"
            ? {
              ...r,
              version: "1.0.103",
              outcome: "install-failed",
              level: 0,
              labLevel: 0,
              era: null,
              notes:
                "npm install failed: No matching version found for @github/copilot@1.0.103.",
            }
            : r
        )
      ),
      3,
      [
        "New versions: Copilot CLI 1.0.102 → 1.0.103.",
        "| Copilot CLI | default | native | subscribe | 2026-07-28 → — | 1.0.102 → 1.0.103 | 3 → 0 | completed → install-failed | npm install failed: No matching version found for @<wbr>github/copilot@<wbr>1.0.103. |",
        "6 rows compared: 3 changed in level or outcome, 0 in their era or notes alone (exit status 3).",
      ],
    ],
  ];
  try {
    for (const [name, after, status, lines] of cases) {
      await t.step(`${name}: exit ${status}`, async () => {
        await Deno.writeTextFile(`${dir}/after.json`, JSON.stringify(after));
        assert.equal(
          await clients([
            "--compare",
            before,
            `${dir}/after.json`,
            "--results-dir",
            dir,
          ]),
          status,
        );
        const changes = flat(await Deno.readTextFile(`${dir}/changes.md`));
        for (const line of lines) {
          assert.ok(changes.includes(line), `${line}\nnot in\n${changes}`);
        }
      });
    }
    await t.step("a file that is not there: exit 1", async () => {
      assert.equal(
        await clients([
          "--compare",
          before,
          `${dir}/none.json`,
          "--results-dir",
          dir,
        ]),
        1,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task clients --compare: what a matrix file says is inert and bounded in changes.md and on the terminal", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-compare-inert-" });
  const before = `${dir}/before.json`;
  const after = `${dir}/after.json`;
  await Deno.writeTextFile(before, JSON.stringify(BEFORE));
  await Deno.writeTextFile(
    after,
    JSON.stringify({
      ...matrixAfter((rows) =>
        rows.map((r) =>
          r.clientId !== "mcpdo" ? r : {
            ...r,
            client: `mcpdo${HOSTILE}`,
            version: `2.13.0${HOSTILE}`,
            level: 4,
            notes: `no notification${HOSTILE}${"x".repeat(100_000)}`,
          }
        )
      ),
      generatedAt: `2026-12-08${HOSTILE}`,
    }),
  );
  const fixture =
    new URL("../testdata/servers_before.json", import.meta.url).pathname;
  try {
    const run = await printed(() =>
      clients(["--compare", before, after, "--results-dir", dir])
    );
    assert.equal(run.status, 3);
    // The servers' section written after it: each table one section.
    await printed(() =>
      servers(["--compare", fixture, fixture, "--results-dir", dir])
    );
    const changes = await Deno.readTextFile(`${dir}/changes.md`);
    // deno fmt rewraps the paragraphs: no line may open a block.
    assert.deepEqual(
      changes.split("\n").filter((line) =>
        /^\s*([#*+=_~-]|\d+[.)]( |$))/.test(line)
      ),
      ["# What changed", "## Clients", "## Servers and proxies"],
    );
    assert.ok(!/<img|<script/.test(changes), changes);
    assert.ok(!RAW_CONTROL.test(changes), changes);
    assert.ok(changes.length < 10_000, `${changes.length} characters`);
    assert.ok(changes.includes("New versions: mcpdo"), changes);
    for (const line of run.lines) {
      assert.ok(!RAW_CONTROL.test(line), JSON.stringify(line));
      assert.ok(line.length < 1_000, `${line.length} characters`);
    }
    assert.ok(run.lines.some((line) => line.startsWith("changed: mcpdo")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task clients --compare: a file that is not JSON is one inert line naming it, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-compare-not-json-" });
  const path = `${dir}/not-json.json`;
  await Deno.writeTextFile(path, `${HOSTILE}{"rows": [`);
  try {
    const run = await printed(() =>
      clients(["--compare", path, path, "--results-dir", dir])
    );
    assert.equal(run.status, 1);
    assert.equal(run.lines.length, 1, run.lines.join("\n"));
    const [line] = run.lines;
    assert.ok(line.startsWith(`clients error: cannot read ${path}: `), line);
    assert.ok(!RAW_CONTROL.test(line), JSON.stringify(line));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task clients and servers --compare: a file of the wrong shape is one line naming the file and the problem, exit 1", async () => {
  const dir = await Deno.makeTempDir({ prefix: "compare-shape-" });
  const servers_ = JSON.parse(
    await Deno.readTextFile(
      new URL("../testdata/servers_before.json", import.meta.url),
    ),
  ) as ServersDocument;
  const matrixRow = BEFORE.rows[0];
  const serverRow = servers_.rows[0];
  const cases: [
    "clients" | "servers",
    string,
    unknown,
    RegExp,
  ][] = [
    ["clients", "rows an object", { ...BEFORE, rows: {} }, /\brows\b.*array/],
    [
      "clients",
      "a row null",
      { ...BEFORE, rows: [matrixRow, null] },
      /rows\[1\].*object/,
    ],
    [
      "clients",
      "notes a number",
      { ...BEFORE, rows: [{ ...matrixRow, notes: 3 }] },
      /rows\[0\]\.notes.*string/,
    ],
    ["clients", "no document", null, /object/],
    [
      "clients",
      "no date",
      { ...BEFORE, generatedAt: 7 },
      /generatedAt.*string/,
    ],
    [
      "servers",
      "a result's level a word",
      {
        ...servers_,
        rows: [{ ...serverRow, result: { ...serverRow.result, level: "7" } }],
      },
      /rows\[0\]\.result\.level.*number/,
    ],
    ["servers", "rows missing", { generatedAt: "today" }, /\brows\b/],
  ];
  try {
    for (const [task, name, document, problem] of cases) {
      const path = `${dir}/${name.replaceAll(" ", "-")}.json`;
      await Deno.writeTextFile(path, JSON.stringify(document));
      const entry = task === "clients" ? clients : servers;
      const fixture = task === "clients"
        ? `${dir}/before.json`
        : new URL("../testdata/servers_before.json", import.meta.url).pathname;
      if (task === "clients") {
        await Deno.writeTextFile(fixture, JSON.stringify(BEFORE));
      }
      const run = await printed(() =>
        entry(["--compare", fixture, path, "--results-dir", dir])
      );
      assert.equal(run.status, 1, name);
      assert.equal(run.lines.length, 1, `${name}: ${run.lines.join("\n")}`);
      const [line] = run.lines;
      assert.ok(line.startsWith(`${task} error: `), `${name}: ${line}`);
      assert.ok(line.includes(path), `${name}: ${line}`);
      assert.match(line, problem, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// deno task servers --compare, and both from a cache without registry metadata
// ---------------------------------------------------------------------------

Deno.test("deno task servers --compare: a proxy that stopped passing the update through, beside the clients' section", async () => {
  const dir = await Deno.makeTempDir({ prefix: "servers-compare-test-" });
  const fixture =
    new URL("../testdata/servers_before.json", import.meta.url).pathname;
  const before = JSON.parse(
    await Deno.readTextFile(fixture),
  ) as ServersDocument;
  const after: ServersDocument = {
    ...before,
    rows: before.rows.map((r) =>
      r.slug === "mcp-remote-2025"
        ? {
          ...r,
          version: "0.16.0",
          result: {
            ...r.result!,
            level: 5,
            exitStatus: 17,
            errorCode: "reread-unchanged",
            missing: "notified, but no re-read showed a change",
          },
        }
        : r
    ),
  };
  try {
    await Deno.writeTextFile(
      `${dir}/changes.md`,
      withSection("", "Clients", "Nothing changed."),
    );
    await Deno.writeTextFile(`${dir}/after.json`, JSON.stringify(after));
    assert.equal(
      await servers(["--compare", fixture, fixture, "--results-dir", dir]),
      0,
    );
    assert.equal(
      await servers([
        "--compare",
        fixture,
        `${dir}/after.json`,
        "--results-dir",
        dir,
      ]),
      3,
    );
    const changes = flat(await Deno.readTextFile(`${dir}/changes.md`));
    assert.ok(changes.includes("## Clients Nothing changed. ## Servers"));
    assert.ok(
      changes.includes(
        "| mcp-remote | — | stdio | 2025 (2025-11-25) | 0.15.1 → 0.16.0 | 7 → 5 | exit 0 → exit 17 (reread-unchanged) | notified, but no re-read showed a change |",
      ),
      changes,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task clients and servers --compare from a cache without registry metadata: no request, exit 0", async () => {
  const denoDir = await cacheWithoutMetadata();
  const dir = await Deno.makeTempDir({ prefix: "warm-start-test-" });
  const proxy = refusingProxy();
  const fixtures = new URL("../testdata/", import.meta.url).pathname;
  try {
    for (
      const [task, fixture] of [
        ["clients", "matrix_before.json"],
        ["servers", "servers_before.json"],
      ]
    ) {
      const { code, stderr } = await new Deno.Command(Deno.execPath(), {
        args: [
          "task",
          task,
          "--compare",
          `${fixtures}${fixture}`,
          `${fixtures}${fixture}`,
          "--results-dir",
          dir,
        ],
        cwd: new URL("../..", import.meta.url).pathname,
        env: {
          DENO_DIR: denoDir,
          // Every request, a loopback registry's too, goes to the proxy.
          ...Object.fromEntries(
            ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"].flatMap((name) => [
              [name, proxy.url],
              [name.toLowerCase(), proxy.url],
            ]),
          ),
          NO_PROXY: "",
          no_proxy: "",
        },
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).output();
      const output = new TextDecoder().decode(stderr);
      assert.deepEqual(proxy.asked, [], `${task}:\n${output}`);
      assert.equal(code, 0, `${task}:\n${output}`);
    }
  } finally {
    await proxy.close();
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(denoDir, { recursive: true });
  }
});
