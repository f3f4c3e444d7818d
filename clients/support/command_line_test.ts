/**
 * Tests for the harness's own command lines: `deno task clients` and `deno
 * task servers` run as processes, for `--help`, a bad flag and a bad value
 * (one line on stderr, exit status 2); and the runs `deno task clients`
 * plans from its flags.
 *
 * @module
 */

import assert from "node:assert/strict";
import { ALL_CLIENTS, selectClients } from "../catalog/select.ts";
import { clientById } from "../catalog/agents.ts";
import {
  GROUPS,
  isBrowserClient,
  isCommandClient,
  isUnsupportedClient,
  isWorldMode,
  labSettingsOf,
  type ModeId,
  modeLabel,
  MODES,
  WORLD_MODES,
} from "../catalog/types.ts";
import { matrixMarkdown, mergeRows, rowFromRun } from "../report/matrix.ts";
import { catalogLevels } from "../report/summary.ts";
import {
  catalogDisagreement,
  checkPublished,
  CLIENTS_USAGE,
  parseClientsArgs,
  plannedRuns,
} from "../run.ts";
import {
  catalogLabClient,
  labClient,
  labReport,
  runRecord,
  transcriptEntry,
} from "../testdata/fixtures.ts";
import { SERVERS_USAGE } from "../servers.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The entries: --help, and a bad flag or value, in one line
// ---------------------------------------------------------------------------

/** Runs a harness entry with `args`: its exit status, stdout and stderr. */
async function runEntry(entry: "run.ts" | "servers.ts", args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL(`../${entry}`, import.meta.url).pathname,
      ...args,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code,
    stdout: decoder.decode(stdout),
    stderr: decoder.decode(stderr),
  };
}

Deno.test("deno task clients: --help prints the usage and exits 0", async () => {
  assert.deepEqual(await runEntry("run.ts", ["--help"]), {
    code: 0,
    stdout: `${CLIENTS_USAGE}\n`,
    stderr: "",
  });
  assert.match(CLIENTS_USAGE, /^Usage: deno task clients \[options\]/);
});

Deno.test("deno task clients: a bad flag or value is one line naming it, exit 2", async (t) => {
  const cases: [string[], string][] = [
    [
      ["--bogus"],
      "clients error: Unknown option '--bogus'; see --help",
    ],
    [
      ["--timeout", "soon"],
      'clients error: --timeout "soon" is not a non-negative number',
    ],
    [
      ["--route", "native,teleport"],
      'clients error: --route "native,teleport" is not a comma-separated list of native, wait-tool, shell-probe',
    ],
    [
      ["--mode", "inline"],
      'clients error: --mode "inline" is not a comma-separated list of default, 2026-07-28, notifications, stdio, stdio-2026-07-28, no-updates, inline-content, cut, 2026-07-28-only, 2025-only, refused, catalog',
    ],
    [
      ["--min-catalog-level", "6"],
      'clients error: --min-catalog-level "6" is not a catalog level (0 to 5)',
    ],
  ];
  for (const [args, line] of cases) {
    await t.step(args.join(" "), async () => {
      assert.deepEqual(await runEntry("run.ts", args), {
        code: 2,
        stdout: "",
        stderr: `${line}\n`,
      });
    });
  }
});

Deno.test("deno task clients: results/README.md names every --only group, as --help does", async () => {
  const readme = await Deno.readTextFile(
    new URL("../../results/README.md", import.meta.url),
  );
  assert.ok(readme.includes(`\`--only ${GROUPS.join("|")}\``));
  for (const group of GROUPS) {
    assert.ok(readme.includes(`deno task clients --only ${group} `), group);
    assert.match(CLIENTS_USAGE, new RegExp(`\\b${group} \\(`), group);
  }
});

Deno.test("deno task servers: --help prints the usage, a bad flag or value is one line, exit 2", async (t) => {
  assert.deepEqual(await runEntry("servers.ts", ["--help"]), {
    code: 0,
    stdout: `${SERVERS_USAGE}\n`,
    stderr: "",
  });
  const file = await Deno.makeTempFile({ prefix: "servers-cli-" });
  try {
    const cases: [string[], string][] = [
      [["--bogus"], "servers error: Unknown option '--bogus'; see --help"],
      [
        ["--results-dir", file],
        `servers error: --results-dir "${file}" is not a folder`,
      ],
      [
        ["--cache-dir"],
        "servers error: Option '--cache-dir <value>' argument missing; see --help",
      ],
      [
        ["extra"],
        "servers error: Unexpected argument 'extra'. This command does not take positional arguments; see --help",
      ],
    ];
    for (const [args, line] of cases) {
      await t.step(args.join(" "), async () => {
        assert.deepEqual(await runEntry("servers.ts", args), {
          code: 2,
          stdout: "",
          stderr: `${line}\n`,
        });
      });
    }
  } finally {
    await Deno.remove(file);
  }
});

// ---------------------------------------------------------------------------
// plannedRuns: the modes, routes and triggers of each client's runs
// ---------------------------------------------------------------------------

/**
 * The runs `deno task clients ARGS` plans for a client, as "mode route
 * trigger", a catalog run's mode with its launch mode: "catalog (stdio)".
 */
function planned(args: string[], id: string): string[] {
  const options = parseClientsArgs(args);
  assert.ok(options !== "help");
  const client = selectClients([id])[0];
  return plannedRuns(client, options).map((run) =>
    `${modeLabel(run)} ${run.route} ${run.trigger}${
      run.longWait ? " long" : ""
    }${run.progressCheck ? ` ${run.progressCheck}` : ""}`
  );
}

/** The run in each world mode, as the plan orders them. */
const WORLD_RUNS = [
  "inline-content native subscribe",
  "cut native subscribe",
  "2026-07-28-only native subscribe",
  "2025-only native subscribe",
  "refused native subscribe",
];

/** Every route under both triggers, in one mode, as the plan orders them. */
const everyRoute = (mode: string) =>
  ["native", "wait-tool", "shell-probe"].flatMap((route) => [
    `${mode} ${route} subscribe`,
    `${mode} ${route} read`,
  ]);

Deno.test("plannedRuns: every client that runs gets one run in each world mode (inline-content, cut, 2026-07-28-only, 2025-only, refused), natively under trigger subscribe, and a catalog run launched in each of its modes, natively under trigger read for an agent and subscribe for the others, after its own modes", () => {
  assert.deepEqual(planned([], "claude-code"), [
    ...everyRoute("default"),
    ...WORLD_RUNS,
    "catalog (default) native read",
  ]);
  // The reference host: both eras over HTTP and stdio, and the control.
  assert.deepEqual(planned([], "reference-host"), [
    ...clientById("reference-host")!.modes.flatMap(everyRoute),
    ...WORLD_RUNS,
    "catalog (default) native read",
    "catalog (2026-07-28) native read",
    "catalog (stdio) native read",
    "catalog (stdio-2026-07-28) native read",
    "catalog (no-updates) native read",
  ]);
  // Grok CLI speaks stdio alone: its catalog is measured there too.
  assert.deepEqual(
    planned(["--mode", "catalog"], "grok-cli"),
    ["catalog (default) native read", "catalog (stdio) native read"],
  );
  // Command and browser clients run natively, in each of their modes.
  for (
    const [id, modes] of [
      ["mcpdo", ["default", "2026-07-28"]],
      ["inspector-web", ["default", "2026-07-28"]],
      ["vscode", ["default", "stdio"]],
    ] as const
  ) {
    assert.deepEqual(planned([], id), [
      ...modes.flatMap((mode) => [
        `${mode} native subscribe`,
        `${mode} native read`,
      ]),
      ...WORLD_RUNS,
      ...modes.map((mode) => `catalog (${mode}) native subscribe`),
    ], id);
  }
  // pi does not run: its one row says why, with no world-mode run.
  assert.deepEqual(planned([], "pi"), ["default native subscribe"]);
  for (const client of ALL_CLIENTS) {
    const agent = !isUnsupportedClient(client) && !isCommandClient(client) &&
      !isBrowserClient(client);
    assert.deepEqual(
      planned([], client.id).filter((run) =>
        isWorldMode(run.split(" ")[0]) || run.startsWith("catalog")
      ),
      isUnsupportedClient(client) ? [] : [
        ...WORLD_RUNS,
        ...client.modes.map((mode) =>
          `catalog (${mode}) native ${agent ? "read" : "subscribe"}`
        ),
      ],
      client.id,
    );
  }
});

Deno.test("plannedRuns: --mode picks modes; a world mode needs the native route and the subscribe trigger, and is no long wait or progress check", () => {
  for (const id of ["codex", "mcpdo", "vscode", "reference-host"]) {
    for (const mode of WORLD_MODES) {
      assert.deepEqual(planned(["--mode", mode], id), [
        `${mode} native subscribe`,
      ], `${id} ${mode}`);
      assert.deepEqual(planned(["--mode", mode], "pi"), [], mode);
      assert.deepEqual(
        planned(["--mode", mode, "--trigger", "read"], id),
        [],
        `${id} ${mode} read`,
      );
      assert.deepEqual(
        planned(["--mode", mode, "--route", "wait-tool"], id),
        [],
        `${id} ${mode} wait-tool`,
      );
    }
  }
  assert.deepEqual(planned(["--mode", "cut,2025-only"], "mcp-client"), [
    "cut native subscribe",
    "2025-only native subscribe",
  ]);
  for (const [id, trigger] of [["codex", "read"], ["mcpdo", "subscribe"]]) {
    assert.deepEqual(planned(["--mode", "catalog"], id), [
      `catalog (default) native ${trigger}`,
      `catalog (2026-07-28) native ${trigger}`,
    ], id);
    // Its trigger must be among those the command line asks for.
    assert.deepEqual(
      planned([
        "--mode",
        "catalog",
        "--trigger",
        trigger === "read" ? "subscribe" : "read",
      ], id),
      [],
      id,
    );
  }
  assert.deepEqual(planned(["--mode", "catalog"], "pi"), []);
  assert.deepEqual(planned(["--mode", "2026-07-28,inline-content"], "codex"), [
    ...everyRoute("2026-07-28"),
    "inline-content native subscribe",
  ]);
  assert.deepEqual(planned(["--mode", "2026-07-28"], "claude-code"), []);
  assert.deepEqual(
    planned(["--route", "native", "--trigger", "subscribe"], "codex"),
    [
      "default native subscribe",
      "2026-07-28 native subscribe",
      ...WORLD_RUNS,
    ],
  );
  assert.deepEqual(planned(["--trigger", "read"], "mcpdo"), [
    "default native read",
    "2026-07-28 native read",
  ]);
  assert.deepEqual(
    planned(["--trigger", "read", "--route", "native"], "codex"),
    [
      "default native read",
      "2026-07-28 native read",
      "catalog (default) native read",
      "catalog (2026-07-28) native read",
    ],
  );
  assert.deepEqual(planned(["--route", "wait-tool"], "claude-code"), [
    "default wait-tool subscribe",
    "default wait-tool read",
  ]);
  assert.deepEqual(planned(["--long-wait"], "claude-code"), [
    "default wait-tool subscribe long",
  ]);
  assert.deepEqual(planned(["--progress-check"], "claude-code"), [
    "default wait-tool subscribe progress",
    "default wait-tool subscribe no-progress",
  ]);
  // --help names every mode --mode takes.
  for (const mode of MODES) assert.match(CLIENTS_USAGE, new RegExp(mode));
});

Deno.test("plannedRuns: mode cut's update comes at 3.5 s, after its cut at 2 s, whatever --delay says; every other run keeps --delay", () => {
  for (const id of ["codex", "mcpdo", "mcp-client", "reference-host"]) {
    const options = parseClientsArgs(["--delay", "4"]);
    assert.ok(options !== "help");
    const runs = plannedRuns(selectClients([id])[0], options);
    assert.deepEqual(
      runs.filter((run) => run.delaySeconds !== 4).map((run) => [
        run.mode,
        run.delaySeconds,
      ]),
      [["cut", 3.5]],
      id,
    );
    const cut = runs.find((run) => run.mode === "cut")!;
    assert.ok(cut.delaySeconds > labSettingsOf("cut").streamLifetimeSeconds!);
  }
});

// ---------------------------------------------------------------------------
// Checks: --check holds a catalog row to its lab's levels
// ---------------------------------------------------------------------------

Deno.test("catalogDisagreement: --check holds a catalog row's levels to the lab's, tools 5 only on the lab's 4 and the model's call, and to --min-catalog-level", () => {
  const record = (
    levels: Parameters<typeof catalogLabClient>[0],
    called = false,
  ) =>
    runRecord({
      mode: "catalog",
      labReport: labReport([catalogLabClient(levels)]),
      transcript: called
        ? [
          transcriptEntry(0, "read-v1"),
          transcriptEntry(5, "call-new-tool", {
            newTool: "get_review_comments",
          }),
        ]
        : [transcriptEntry(0, "read-v1")],
    });
  const levels = { tools: 4, prompts: 2, resources: 3 };
  assert.equal(
    catalogDisagreement(record(levels), "tools 4, prompts 2, resources 3", 0),
    undefined,
  );
  assert.equal(
    catalogDisagreement(
      record(levels, true),
      "tools 5, prompts 2, resources 3",
      2,
    ),
    undefined,
  );
  assert.equal(
    catalogDisagreement(record(levels), "tools 5, prompts 2, resources 3", 0),
    `the row's catalog is "tools 5, prompts 2, resources 3", the lab's tools 4, prompts 2, resources 3`,
  );
  assert.equal(
    catalogDisagreement(record(levels, true), "tools 4, prompts 2", 0),
    `the row's catalog is "tools 4, prompts 2", the lab's tools 5, prompts 2, resources 3 (tools 4, and the model's call of the new tool)`,
  );
  assert.equal(
    catalogDisagreement(record(levels), "tools 4, prompts 2, resources 3", 3),
    "catalog level 2, expected at least 3",
  );
  assert.equal(
    catalogDisagreement(
      runRecord({ mode: "catalog", labReport: labReport([labClient()]) }),
      "no record",
      0,
    ),
    "the lab recorded no catalog (scenario off)",
  );
});

Deno.test("checkPublished: --check finds each of the reference host's catalog rows by its launch mode and holds it to its own lab's levels", async () => {
  const host = clientById("reference-host")!;
  const called = [
    transcriptEntry(0, "read-v1"),
    transcriptEntry(5, "call-new-tool", { newTool: "get_review_comments" }),
  ];
  // Every mode follows the change to the model but the control.
  const record = (
    launchMode: ModeId,
    tools = launchMode === "no-updates" ? 2 : 4,
  ) =>
    runRecord({
      clientId: host.id,
      displayName: host.displayName,
      version: host.version,
      mode: "catalog",
      launchMode,
      labReport: labReport([
        catalogLabClient({ tools, prompts: 3, resources: 3 }),
      ]),
      transcript: tools === 4 ? called : [transcriptEntry(0, "read-v1")],
    });
  const records = host.modes.map((mode) => record(mode));
  const rows = mergeRows([], records.map(rowFromRun), [host.id]);
  assert.deepEqual(
    rows.map((
      row,
    ) => [modeLabel(row), row.catalog && catalogLevels(row.catalog)]),
    [
      ["catalog (default)", "tools 5, prompts 3, resources 3"],
      ["catalog (2026-07-28)", "tools 5, prompts 3, resources 3"],
      ["catalog (stdio)", "tools 5, prompts 3, resources 3"],
      ["catalog (stdio-2026-07-28)", "tools 5, prompts 3, resources 3"],
      ["catalog (no-updates)", "tools 2, prompts 3, resources 3"],
    ],
  );
  const resultsDir = await Deno.makeTempDir({ prefix: "check-catalog-" });
  try {
    await Deno.writeTextFile(
      `${resultsDir}/compatibility-matrix.md`,
      matrixMarkdown({
        generatedAt: "2026-12-01T10:00:00.000Z",
        labVersion: host.version,
        delaySeconds: 3,
        rows,
        cited: [],
        requests: {},
        libraries: [],
      }),
    );
    const minimum = { level: 0, catalogLevel: 0 };
    assert.deepEqual(await checkPublished(resultsDir, records, minimum), []);
    // A control that reached the model is held to its own row, not the
    // default row's tools 5.
    assert.deepEqual(
      await checkPublished(resultsDir, [record("no-updates", 4)], minimum),
      [
        `reference-host/catalog (no-updates)/native/read: the row's catalog is "tools 2, prompts 3, resources 3", the lab's tools 5, prompts 3, resources 3 (tools 4, and the model's call of the new tool)`,
      ],
    );
  } finally {
    await Deno.remove(resultsDir, { recursive: true });
  }
});
