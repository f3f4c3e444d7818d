import assert from "node:assert/strict";
import type { ClientReport } from "../../main.ts";
import type { Route } from "../model/decide.ts";
import {
  labSettingsOf,
  type ModeId,
  modeLabel,
  WORLD_MODES,
} from "../catalog/types.ts";
import type { LabLogFacts } from "../support/run_lab.ts";
import { installFailureReason } from "../support/install.ts";
import {
  COMMAND_NOTE,
  commandTable,
  demoteHeadings,
  evidenceFile,
  evidenceKindOf,
  evidenceMarkdown,
  HISTORY,
  hostNoticeFact,
  hostNoticeNote,
  type MatrixDocument,
  matrixMarkdown,
  mergeEvidence,
  mergeRows,
  quotedOutput,
  rereadByItself,
  ROUTE_TEXT,
  rowFromRun,
  rowLevel,
  SUMMARY_SVG,
  versusDefaultNote,
  withDefaultComparison,
} from "./matrix.ts";
import {
  mainLabClient,
  probeLabLevel,
  runHeader,
} from "../runners/run_record.ts";
import type { MatrixRow } from "./rows.ts";
import {
  at,
  catalogLabClient,
  citedHost,
  labClient,
  labReport,
  matrixRow as row,
  runRecord,
  transcriptEntry,
} from "../testdata/fixtures.ts";

// ---------------------------------------------------------------------------
// Helpers: the full table's lines and a row's cells, a Markdown row's cells
// ---------------------------------------------------------------------------

/** The lines of the matrix's full table section ("Every run"), after the summary. */
function everyRunLines(markdown: string): string[] {
  const start = markdown.indexOf("\n## Every run\n");
  assert.ok(start > 0, "no Every run section");
  return markdown.slice(start).split("\n");
}

/** The cells of a row's line in the matrix's full table. */
function tableCells(matrixRowFields: MatrixRow): string[] {
  const markdown = matrixMarkdown(
    {
      generatedAt: at(0),
      labVersion: "0.2.0",
      delaySeconds: 3,
      rows: [matrixRowFields],
      cited: [],
      requests: {},
      libraries: [],
    },
  );
  const line = everyRunLines(markdown).find((text) =>
    text.startsWith("| Demo CLI")
  )!;
  return line.split(/(?<!\\)\|/).map((text) => text.trim()).slice(1, 17);
}

/** A Markdown table row's cells, trimmed (`deno fmt` pads them). */
function trimmedCells(line: string): string[] {
  return line.split(/(?<!\\)\|/).map((text) => text.trim())
    .map((text) => /^-+$/.test(text) ? "---" : text);
}

// ---------------------------------------------------------------------------
// Helpers: runs and transcripts of the wait tool, a notice, inline, a catalog
// ---------------------------------------------------------------------------

const waitTranscript = (version: number) => [
  transcriptEntry(0, "read-v1"),
  transcriptEntry(1, "call-wait-tool", {
    versionsSeen: [1],
    answer: 'tool mcp__lab__wait_for_review_update {"since_version":1}',
  }),
  transcriptEntry(5, "final", {
    versionsSeen: [1, version],
    contextUpdated: version >= 2,
  }),
];

/**
 * A client that subscribes and is notified (the update 3.5 s in), whose
 * host tells its model the resource changed and leaves the re-read to it:
 * oh-my-pi with `mcp.notifications` on. `withVersion2`: its notice carries
 * the new text.
 */
function noticeRun(withVersion2: boolean) {
  const notified = labClient({
    level: 6,
    missing: "level 7 (the agent's context shows the update) is not observable",
    steps: {
      ...labClient({}).steps,
      subscribed: true,
      notificationDelivered: true,
      rereadAfterNotification: true,
    },
    timeline: [
      {
        at: at(3.5),
        kind: "update",
        line: "[resource/update] uri=test://review/status version=2",
      },
      {
        at: at(6.1),
        kind: "read",
        line:
          "[resources/read] uri=test://review/status version=2 client=demo/1.0.0",
      },
    ],
  });
  const hostNotice = { withVersion2 };
  const seen = withVersion2 ? [1, 2] : [1];
  return runRecord({
    labReport: labReport([notified]),
    transcript: [
      transcriptEntry(0, "read-v1"),
      transcriptEntry(1, "wait-then-nudge", { versionsSeen: [1] }),
      transcriptEntry(6, "check-context-then-reread", {
        versionsSeen: seen,
        contextUpdated: withVersion2,
        hostNotice,
      }),
      transcriptEntry(7, "final", {
        versionsSeen: [...seen, 2],
        contextUpdated: withVersion2,
        hostNotice,
      }),
    ],
  });
}

/** The lab's record of a client notified at 3 s whose first read of version 2 came `rereadAt` s in. */
function notifiedClient(
  rereadAt: number,
  fields: Partial<ClientReport> = {},
): ClientReport {
  return labClient({
    trigger: "subscribe",
    level: 6,
    levelName: "re-read version 2 after the notification",
    missing: "level 7 … not observable",
    steps: {
      ...labClient({}).steps,
      subscribed: true,
      notificationDelivered: true,
      rereadAfterNotification: true,
    },
    timeline: [
      { at: at(3), kind: "update", line: "[update] version=2" },
      {
        at: at(rereadAt),
        kind: "read",
        line:
          "[resources/read] uri=test://review/status version=2 client=demo/1.0.0",
      },
    ],
    ...fields,
  });
}

/** A transcript whose check at 6 s found version 2 already in the context. */
const CONTEXT_UPDATED = [
  transcriptEntry(0, "read-v1"),
  transcriptEntry(1, "wait-then-nudge", { versionsSeen: [1] }),
  transcriptEntry(6, "check-context-then-reread", {
    versionsSeen: [1, 2],
    contextUpdated: true,
  }),
  transcriptEntry(7, "final", {
    versionsSeen: [1, 2, 2],
    contextUpdated: true,
  }),
];

/** Demo CLI in mode catalog: the lab's catalog levels, and what its model saw. */
function catalogRun(
  levels: Parameters<typeof catalogLabClient>[0],
  transcript = runRecord().transcript,
  fields: Partial<Parameters<typeof runRecord>[0]> = {},
  client: Partial<ClientReport> = {},
) {
  return runRecord({
    mode: "catalog",
    labReport: labReport([catalogLabClient(levels, client)]),
    transcript,
    ...fields,
  });
}

/** A transcript whose third request offered the new tool, which the model called. */
const NEW_TOOL_TRANSCRIPT = [
  transcriptEntry(0, "read-v1"),
  transcriptEntry(1, "wait-then-nudge", { versionsSeen: [1] }),
  transcriptEntry(6, "call-new-tool", {
    versionsSeen: [1],
    newTool: "mcp__lab__get_review_comments",
    answer: "tool mcp__lab__get_review_comments {}",
  }),
  transcriptEntry(7, "check-context-then-reread", {
    versionsSeen: [1],
    contextUpdated: false,
    newTool: "mcp__lab__get_review_comments",
  }),
  transcriptEntry(8, "final", { versionsSeen: [1, 2], contextUpdated: false }),
];

// ---------------------------------------------------------------------------
// rowFromRun: steps, era and level, failures and their reasons, tool reads
// ---------------------------------------------------------------------------

Deno.test("rowFromRun: steps, era and level come from the lab's report", () => {
  const row = rowFromRun(runRecord({}));
  assert.equal(row.labClient, "demo/1.0.0");
  assert.equal(row.era, "2025");
  assert.equal(row.protocolVersion, "2025-06-18");
  assert.deepEqual(
    [
      row.connected,
      row.listed,
      row.readV1,
      row.subscribed,
      row.notificationDelivered,
    ],
    [true, true, true, false, false],
  );
  assert.equal(row.labLevel, 3);
  assert.equal(row.level, 3);
  assert.equal(row.contextUpdated, false);
  assert.equal(row.labVersion, "0.2.0");
  assert.equal(row.notes, labClient({}).missing);
  assert.equal(row.evidence, "runs/demo-1.0.0-default.md#trigger-read");
});

Deno.test("rowFromRun: a probe connection does not hide the working one", () => {
  const probe = labClient({ id: "probe", level: 1, missing: "never listed" });
  const row = rowFromRun(
    runRecord({ labReport: labReport([probe, labClient({})]) }),
  );
  assert.equal(row.labLevel, 3);
  assert.equal(mainLabClient([probe])?.id, "probe");
  assert.equal(mainLabClient([]), undefined);
});

Deno.test("rowLevel: 7 only when the context showed the update after a notification", () => {
  assert.equal(rowLevel(6, true, true), 7);
  assert.equal(rowLevel(6, true, false), 6);
  assert.equal(rowLevel(3, false, true), 3);
  assert.equal(rowLevel(3, false, null), 3);
});

Deno.test("rowFromRun: level 6 reached only because the model asked says so", () => {
  const notified = labClient({
    level: 6,
    missing: "level 7 … not observable",
    steps: {
      ...labClient({}).steps,
      notificationDelivered: true,
      rereadAfterNotification: true,
    },
    timeline: [
      {
        at: at(0.5),
        kind: "read",
        line:
          "[resources/read] uri=test://review/status version=1 client=demo/1.0.0",
      },
      {
        at: at(6.2),
        kind: "read",
        line:
          "[resources/read] uri=test://review/status version=2 client=demo/1.0.0",
      },
    ],
  });
  const row = rowFromRun(runRecord({ labReport: labReport([notified]) }));
  assert.equal(row.level, 6);
  assert.match(row.notes, /read version 2 only when the model asked/);
  assert.match(row.notes, /not in the agent's context until it asked/);
  assert.equal(rereadByItself(notified, runRecord({}).transcript), false);
});

Deno.test("rowFromRun: a client that re-reads and shows the update by itself reaches 7", () => {
  const native = labClient({
    level: 6,
    steps: {
      ...labClient({}).steps,
      subscribed: true,
      notificationDelivered: true,
      rereadAfterNotification: true,
    },
    timeline: [
      {
        at: at(4),
        kind: "read",
        line:
          "[resources/read] uri=test://review/status version=2 client=demo/1.0.0",
      },
    ],
  });
  const transcript = [
    transcriptEntry(0, "read-v1"),
    transcriptEntry(1, "wait-then-nudge", { versionsSeen: [1] }),
    transcriptEntry(6, "check-context-then-reread", {
      versionsSeen: [1, 2],
      contextUpdated: true,
    }),
    transcriptEntry(7, "final", {
      versionsSeen: [1, 2, 2],
      contextUpdated: true,
    }),
  ];
  const row = rowFromRun(
    runRecord({ labReport: labReport([native]), transcript }),
  );
  assert.equal(row.level, 7);
  assert.equal(row.labLevel, 6);
  assert.equal(row.contextUpdated, true);
  assert.equal(rereadByItself(native, transcript), true);
  assert.match(row.notes, /reached the agent's context before it asked/);
});

Deno.test("rowFromRun: crashes, timeouts and failed installs are rows with their reason", () => {
  const crashed = rowFromRun(runRecord({
    outcome: "exit-nonzero",
    exitCode: 1,
    detail: "exit 1",
    labReport: labReport([]),
    transcript: [],
    outputTail:
      "starting\nError: MCP server lab refused: tools/list failed\nbye",
  }));
  assert.equal(crashed.level, 0);
  assert.equal(crashed.connected, false);
  assert.equal(
    crashed.notes,
    "exit 1: Error: MCP server lab refused: tools/list failed; never reached the lab",
  );
  const hung = rowFromRun(runRecord({
    outcome: "timeout",
    detail: "no exit within 120 s",
  }));
  assert.match(
    hung.notes,
    /^timed out \(no exit within 120 s\); never subscribed/,
  );
  assert.equal(hung.level, 3);
  const install = rowFromRun(runRecord({
    outcome: "install-failed",
    detail: "Error: getaddrinfo ENOTFOUND github.com",
    labReport: null,
    transcript: [],
  }));
  assert.equal(
    install.notes,
    "npm install failed: Error: getaddrinfo ENOTFOUND github.com",
  );
  assert.equal(install.era, null);
  assert.equal(install.level, 0);
  const unsupported = rowFromRun(runRecord({
    outcome: "not-supported",
    detail: "no MCP support by design",
    labReport: null,
    transcript: [],
  }));
  assert.equal(unsupported.notes, "not run: no MCP support by design");
  assert.equal(unsupported.level, 0);
});

Deno.test("rowFromRun: a client run from another platform package's binary says so first in every row", () => {
  const note =
    "ran demo-cli-linux-x64 0.9.0's binary: demo-cli 1.0.0 asks for 1.0.0, which npm does not have";
  const header = runHeader(
    {
      id: "demo",
      displayName: "Demo CLI",
      npmPackage: "demo-cli",
      version: "1.0.0",
      platformBinary: {
        npmPackage: "demo-cli-linux-x64",
        version: "0.9.0",
        binary: "bin/demo",
        note,
      },
    },
    "default",
    "read",
  );
  assert.equal(header.installNote, note);
  const completed = rowFromRun(runRecord({ ...header }));
  assert.equal(completed.level, 3);
  assert.equal(
    completed.notes,
    `${note}; never subscribed to test://review/status (resources/subscribe)`,
  );
  for (
    const [outcome, said] of [
      ["install-failed", "npm install failed: ETARGET"],
      ["lab-failed", "harness: the lab did not start (ETARGET)"],
    ] as const
  ) {
    const row = rowFromRun(runRecord({
      ...header,
      outcome,
      detail: "ETARGET",
      labReport: null,
      transcript: [],
    }));
    assert.equal(row.notes, `${note}; ${said}`, outcome);
  }
  const published = runHeader(
    {
      id: "demo",
      displayName: "Demo CLI",
      npmPackage: "demo-cli",
      version: "1.0.0",
    },
    "default",
    "read",
  );
  assert.equal("installNote" in published, false);
});

Deno.test("rowFromRun: a failed go install or go build quotes go's command, not npm's", () => {
  for (const installer of ["go install", "go build"] as const) {
    const row = rowFromRun(runRecord({
      outcome: "install-failed",
      installer,
      detail: "go: example.com/m@v1.0.0: 403 Forbidden",
      labReport: null,
      transcript: [],
    }));
    assert.equal(
      row.notes,
      `${installer} failed: go: example.com/m@v1.0.0: 403 Forbidden`,
    );
    assert.equal(row.level, 0);
  }
});

Deno.test("installFailureReason: a postinstall download failure names the error and the URL", () => {
  const log = [
    "npm error code 1",
    "npm error command sh -c node install.js",
    "npm error Downloading https://github.com/charmbracelet/crush/releases/download/v0.96.1/crush.tar.gz to archive/crush.tar.gz...",
    "npm error Error: Installation failed: Request failed: getaddrinfo ENOTFOUND github.com",
    "npm error     at install (lib.js:162:9)",
  ].join("\n");
  assert.equal(
    installFailureReason(log),
    "Error: Installation failed: Request failed: getaddrinfo ENOTFOUND github.com (its postinstall downloads https://github.com/charmbracelet/crush/releases/download/v0.96.1/crush.tar.gz)",
  );
  assert.equal(
    installFailureReason("npm error 404 Not Found"),
    "404 Not Found",
  );
});

Deno.test("rowFromRun: no update sent means nothing to judge in the context; tool reads are named", () => {
  const quiet = rowFromRun(runRecord({
    trigger: "subscribe",
    labReport: labReport([labClient({ updatesSent: 0, readVia: "tool" })]),
  }));
  assert.equal(quiet.contextUpdated, null);
  assert.equal(quiet.level, 3);
  assert.match(quiet.notes, /reads through the lab's get_review_status tool/);
});

Deno.test("rowFromRun: a model offered no read tool is named in the notes", () => {
  const row = rowFromRun(runRecord({
    transcript: [
      transcriptEntry(0, "no-read-tool", {
        readToolOffered: false,
        note: "offered tools: Bash, Edit",
      }),
    ],
  }));
  assert.match(
    row.notes,
    /offered no resource-read tool \(offered tools: Bash, Edit\)/,
  );
});

// ---------------------------------------------------------------------------
// The other routes: the wait tool, the shell probe, the progress check
// ---------------------------------------------------------------------------

Deno.test("rowFromRun (wait-tool): version 2 through the call is 7, with the lab's wait-tool record in the notes", () => {
  const record = runRecord({
    route: "wait-tool",
    labReport: labReport([
      labClient({
        waitTool: { calls: 1, longestWaitSeconds: 2.9, level: 6 },
      }),
    ]),
    transcript: waitTranscript(2),
  });
  const row = rowFromRun(record);
  assert.equal(row.route, "wait-tool");
  assert.equal(row.labLevel, 3);
  assert.equal(row.contextUpdated, true);
  assert.equal(row.level, 7);
  assert.deepEqual(row.waitTool, {
    calls: 1,
    longestWaitSeconds: 2.9,
    level: 6,
  });
  assert.equal(row.probeLevel, null);
  assert.match(
    row.notes,
    /wait tool: 1 call\(s\), the longest blocked 2\.9 s, version 2 delivered through it$/,
  );
  assert.equal(
    row.evidence,
    "runs/demo-1.0.0-default-wait-tool.md#trigger-read",
  );
});

Deno.test("rowFromRun (wait-tool): a long wait cut off by the client says so, at the lab's level", () => {
  const row = rowFromRun(runRecord({
    route: "wait-tool",
    longWait: true,
    delaySeconds: 90,
    trigger: "subscribe",
    labReport: labReport([
      labClient({
        waitTool: { calls: 1, longestWaitSeconds: 60, level: null },
      }),
    ]),
    transcript: waitTranscript(1),
  }));
  assert.equal(row.level, 3);
  assert.equal(row.delaySeconds, 90);
  assert.match(
    row.notes,
    /long wait: the update came after 90 s; the call ended after 60 s without it \(the client's tool-call timeout\)/,
  );
  assert.equal(
    row.evidence,
    "runs/demo-1.0.0-default-wait-tool.md#trigger-subscribe-long-wait",
  );
});

Deno.test("rowFromRun (shell-probe): the probe client is not the client; its level is kept for --check", () => {
  const probe = labClient({
    id: "p",
    name: "mcp-subscription-probe",
    level: 6,
    steps: { ...labClient({}).steps, subscribed: true },
  });
  const record = runRecord({
    route: "shell-probe",
    labReport: labReport([probe, labClient({})]),
    transcript: [
      transcriptEntry(0, "read-v1"),
      transcriptEntry(1, "run-probe", { versionsSeen: [1] }),
      transcriptEntry(9, "final", {
        versionsSeen: [1, 1, 2],
        contextUpdated: true,
      }),
    ],
  });
  const row = rowFromRun(record);
  assert.equal(row.labClient, "demo/1.0.0");
  assert.equal(row.labLevel, 3);
  assert.equal(row.probeLevel, 6);
  assert.equal(row.level, 7);
  assert.match(
    row.notes,
    /the probe reached level 6 in the lab, and its result with version 2 reached the model/,
  );
  assert.equal(probeLabLevel([labClient({})]), null);
});

Deno.test("rowFromRun (shell-probe): a client that cannot run the probe says why", () => {
  const row = rowFromRun(runRecord({
    route: "shell-probe",
    transcript: [
      transcriptEntry(0, "read-v1"),
      transcriptEntry(1, "no-route-tool", {
        versionsSeen: [1],
        note: "its shell tool asks for approval in headless runs",
      }),
    ],
  }));
  assert.equal(row.level, 3);
  assert.match(
    row.notes,
    /cannot take this route: its shell tool asks for approval in headless runs$/,
  );
});

Deno.test("rowFromRun (shell-probe): a shell command that failed is quoted in the row and the evidence, escaped and bounded", () => {
  const printed = `sh: 1: deno: not found\n\x1b[31m| \`rm\` ${"x".repeat(300)}`;
  const record = runRecord({
    route: "shell-probe",
    transcript: [
      transcriptEntry(0, "read-v1"),
      transcriptEntry(1, "run-probe", { versionsSeen: [1] }),
      transcriptEntry(2, "final", {
        versionsSeen: [1],
        contextUpdated: false,
        routeResult: printed,
      }),
    ],
  });
  const quoted = `"sh: 1: deno: not found | 'rm' ${"x".repeat(169)}…"`;
  assert.equal(quotedOutput(printed), quoted);
  const row = rowFromRun(record);
  assert.equal(row.level, 3);
  assert.equal(
    row.notes,
    `never subscribed to test://review/status (resources/subscribe); the probe never reached the lab (the shell command did not run it); the shell tool returned ${quoted}`,
  );
  const cells = everyRunLines(matrixMarkdown(
    {
      generatedAt: at(0),
      labVersion: "0.2.0",
      delaySeconds: 3,
      rows: [row],
      cited: [],
      requests: {},
      libraries: [],
    },
  )).find((line) => line.startsWith("| Demo CLI"));
  assert.ok(cells?.includes(quoted.replace("|", "&#124;")));
  assert.match(
    evidenceMarkdown([record]),
    /\| final \| 1 \| no \| tool read_mcp_resource \{\} \(the call returned "sh: 1: deno: not found &#124; 'rm' x+…"\) \|/,
  );
});

Deno.test("rowLevel: on the other routes, 7 is the model's observation alone", () => {
  assert.equal(rowLevel(3, false, true, "wait-tool"), 7);
  assert.equal(rowLevel(3, false, false, "shell-probe"), 3);
  assert.equal(rowLevel(3, false, true, "native"), 3);
});

Deno.test("rowFromRun (progress check): whether the client resets its tool timeout on progress, and the control", () => {
  const check = (
    progressCheck: "progress" | "no-progress",
    wait: ClientReport["waitTool"],
    version: number,
    tokens = 1,
  ) =>
    rowFromRun(runRecord({
      route: "wait-tool",
      progressCheck,
      delaySeconds: 40,
      trigger: "subscribe",
      labReport: labReport([labClient({ waitTool: wait })]),
      transcript: waitTranscript(version),
      ...(progressCheck === "no-progress"
        ? { progressTokensRemoved: tokens }
        : { progressTokensSent: tokens }),
    }));
  const resets = check(
    "progress",
    { calls: 1, longestWaitSeconds: 40, level: 6 },
    2,
  );
  assert.equal(resets.level, 7);
  assert.match(resets.notes, /the client resets its timeout on progress$/);
  assert.equal(
    resets.evidence,
    "runs/demo-1.0.0-default-wait-tool.md#trigger-subscribe-tool-timeout-20-s",
  );
  const cut = check(
    "progress",
    { calls: 1, longestWaitSeconds: 20, level: null },
    1,
  );
  assert.equal(cut.level, 3);
  assert.match(
    cut.notes,
    /the call ended after 20 s although progress notifications came every 5 s: the client does not reset its timeout on progress$/,
  );
  // A client that sends no progressToken gets no progress to judge by.
  const cutAtTimeout = { calls: 1, longestWaitSeconds: 20, level: null };
  const tokenless = check("progress", cutAtTimeout, 1, 0);
  const tokenlessControl = check("no-progress", cutAtTimeout, 1, 0);
  assert.match(
    tokenlessControl.notes,
    /progress check, control: the client sent no progressToken, so none was removed; without progress the call ended after 20 s: the 20 s timeout setting applies$/,
  );
  assert.match(
    tokenless.notes,
    /progress check: the client sent no progressToken with its call, so no progress notifications came; with its tool timeout at 20 s the call ended after 20 s$/,
  );
  const control = check(
    "no-progress",
    { calls: 1, longestWaitSeconds: 20, level: null },
    1,
  );
  assert.match(
    control.notes,
    /the client sent a progressToken with 1 request\(s\), removed on its way to the lab; without progress the call ended after 20 s: the 20 s timeout setting applies$/,
  );
  assert.equal(
    control.evidence,
    "runs/demo-1.0.0-default-wait-tool.md#trigger-subscribe-tool-timeout-20-s-no-progress",
  );
  const markdown = matrixMarkdown(
    {
      generatedAt: at(0),
      labVersion: "0.2.0",
      delaySeconds: 3,
      rows: mergeRows([], [control, resets, row({ route: "wait-tool" })], [
        "demo",
      ]),
      cited: [],
      requests: {},
      libraries: [],
    },
  );
  const routeCells = everyRunLines(markdown).filter((text) =>
    text.startsWith("| Demo CLI")
  ).map((text) => text.split("|").map((cell) => cell.trim())[4]);
  assert.deepEqual(routeCells, [
    "wait-tool",
    "wait-tool (tool timeout 20 s, update after 40 s)",
    "wait-tool (tool timeout 20 s, update after 40 s, no progress)",
  ]);
});

// ---------------------------------------------------------------------------
// The host's notice and inline content: facts, levels, the default's row
// ---------------------------------------------------------------------------

Deno.test("rowFromRun: the host's notice without the content is its own fact, in the row and its notes, and not level 7", () => {
  const row = rowFromRun(noticeRun(false));
  assert.equal(row.hostNotice, true);
  assert.equal(row.hostNoticeSeconds, 2.5);
  assert.equal(row.contextUpdated, false);
  assert.equal(row.labLevel, 6);
  assert.equal(row.level, 6);
  assert.equal(
    row.notes,
    "notified, but read version 2 only when the model asked: the client did not re-read by itself; the host told the model the resource changed (notice 2.5 s after the update), without its content; version 2 was not in the agent's context until it asked",
  );
  // In matrix.json as in the row.
  const json = JSON.parse(JSON.stringify(row));
  assert.equal(json.hostNotice, true);
  assert.equal(json.hostNoticeSeconds, 2.5);
});

Deno.test("rowFromRun: a notice that brought version 2 is level 7, and says so", () => {
  const row = rowFromRun(noticeRun(true));
  assert.equal(row.hostNotice, true);
  assert.equal(row.hostNoticeSeconds, 2.5);
  assert.equal(row.contextUpdated, true);
  assert.equal(row.level, 7);
  assert.equal(
    row.notes,
    "notified, but read version 2 only when the model asked: the client did not re-read by itself; the host's notice brought version 2 to the model (notice 2.5 s after the update); version 2 reached the agent's context before it asked again",
  );
});

Deno.test("hostNoticeFact: none came, no model drove the client, or the lab's update time is unknown", () => {
  const plain = rowFromRun(runRecord({}));
  assert.equal(plain.hostNotice, false);
  assert.equal(plain.hostNoticeSeconds, null);
  assert.doesNotMatch(plain.notes, /host/);
  const noticed = noticeRun(false);
  assert.deepEqual(hostNoticeFact({ ...noticed, kind: "command" }, undefined), {
    reached: null,
    seconds: null,
    withVersion2: false,
  });
  assert.deepEqual(hostNoticeFact({ ...noticed, transcript: [] }, undefined), {
    reached: null,
    seconds: null,
    withVersion2: false,
  });
  const fact = hostNoticeFact(noticed, labClient({ timeline: [] }));
  assert.deepEqual(fact, { reached: true, seconds: null, withVersion2: false });
  assert.equal(
    hostNoticeNote(fact),
    "the host told the model the resource changed, without its content",
  );
  assert.equal(
    hostNoticeNote({ reached: false, seconds: null, withVersion2: false }),
    undefined,
  );
});

Deno.test("evidenceMarkdown: the transcript marks the first request that held the host's notice", () => {
  const markdown = evidenceMarkdown([noticeRun(false)]);
  assert.equal(
    markdown.split("the first with the host's notice").length - 1,
    1,
  );
  assert.match(
    markdown,
    /\| 3 \| 6\.0 \| POST \/v1\/messages \(stream\), the first with the host's notice that the resource changed \| check-context-then-reread \| 1 \| no \|/,
  );
});

Deno.test("rowFromRun: version 2 delivered inline as the client asked: the re-read cell says inline, level 7 from the transcript", () => {
  const asked = (rereadAt: number, route: Route = "native") =>
    rowFromRun(runRecord({
      mode: "2026-07-28",
      trigger: "subscribe",
      route,
      labReport: labReport([notifiedClient(rereadAt, {
        levelName: "version 2 delivered inline, re-read anyway",
        embedResources: true,
        steps: {
          ...notifiedClient(0).steps,
          deliveredInline: true,
        },
      })]),
      transcript: CONTEXT_UPDATED,
    }));
  // The only read of version 2 is the model's, after it asked at 6 s.
  const inline = asked(6.2);
  assert.deepEqual(
    [inline.deliveredInline, inline.labLevel, inline.level],
    [true, 6, 7],
  );
  assert.equal(
    inline.notes,
    "version 2 came inside the notification, as the client asked (embedResources), and the client did not re-read it; version 2 reached the agent's context before it asked again",
  );
  assert.deepEqual(tableCells(inline).slice(9, 14), [
    "✅",
    "✅",
    "inline",
    "✅",
    "7",
  ]);
  // A client that re-read at 4 s, before the model asked, did so anyway.
  assert.match(
    asked(4).notes,
    /as the client asked \(embedResources\), and the client re-read it anyway;/,
  );
  // Who re-read cannot be told on another route (the wait tool's answer
  // is a read of version 2 too), nor from a stdio lab's verdict, which has
  // no timeline: the note says nothing of a re-read there.
  const unknown =
    "version 2 came inside the notification, as the client asked (embedResources)";
  assert.equal(
    asked(4, "wait-tool").notes.split("; ")[0],
    unknown,
  );
  const stdio = notifiedClient(6.2, {
    timeline: [],
    steps: { ...notifiedClient(0).steps, deliveredInline: true },
  });
  assert.equal(
    rowFromRun(runRecord({
      mode: "stdio-2026-07-28",
      labReport: labReport([stdio]),
      transcript: CONTEXT_UPDATED,
    })).notes.split("; ")[0],
    unknown,
  );
  // Without an inline delivery the cell is the lab's mark.
  assert.equal(tableCells(row({ rereadAfterNotification: true }))[11], "✅");
});

Deno.test("rowFromRun (inline-content): the text the update carried unasked, and whether it reached the model without a re-read", () => {
  const inlineRun = (
    client: ClientReport,
    transcript = runRecord().transcript,
  ) => {
    const report = labReport([client]);
    return rowFromRun(runRecord({
      mode: "inline-content",
      trigger: "subscribe",
      labReport: {
        ...report,
        scenario: {
          ...report.scenario,
          trigger: "subscribe",
          inlineContent: "sep-3119",
        },
      },
      transcript,
    }));
  };
  const passedOn = inlineRun(notifiedClient(6.2), CONTEXT_UPDATED);
  assert.deepEqual([passedOn.labLevel, passedOn.level], [6, 7]);
  assert.equal(passedOn.deliveredInline, false);
  assert.equal(
    passedOn.notes,
    "the update carried version 2's text, unasked (--inline-content sep-3119); the client passed that text on to the model without a re-read; version 2 reached the agent's context before it asked again",
  );
  const ignored = inlineRun(notifiedClient(6.2));
  assert.deepEqual([ignored.labLevel, ignored.level], [6, 6]);
  assert.equal(
    ignored.notes,
    "the update carried version 2's text, unasked (--inline-content sep-3119); the client did not re-read by itself, nor pass the text on to the model; version 2 was not in the agent's context until it asked",
  );
  // A client that re-read by itself needs no word on the text's use.
  assert.equal(
    inlineRun(notifiedClient(4), CONTEXT_UPDATED).notes,
    "the update carried version 2's text, unasked (--inline-content sep-3119); version 2 reached the agent's context before it asked again",
  );
  // A client no model drives: the lab's step and the text, nothing of a model.
  const commandRow = rowFromRun(runRecord({
    kind: "command",
    mode: "inline-content",
    trigger: "subscribe",
    labReport: {
      ...labReport([notifiedClient(0, {
        level: 5,
        missing: "never read test://review/status again after the notification",
        steps: { ...notifiedClient(0).steps, rereadAfterNotification: false },
        timeline: [],
      })]),
      scenario: { ...labReport([]).scenario, inlineContent: "sep-3119" },
    },
    transcript: [],
  }));
  assert.equal(
    commandRow.notes,
    `never read test://review/status again after the notification; the update carried version 2's text, unasked (--inline-content sep-3119); ${COMMAND_NOTE}`,
  );
  // Never subscribed: no update, so no text, and the lab's missing step.
  assert.equal(
    inlineRun(labClient({ trigger: "subscribe", updatesSent: 0 })).notes,
    labClient().missing,
  );
});

Deno.test("withDefaultComparison: each inline-content row against its client's default row, native under trigger subscribe", () => {
  const steps = {
    subscribed: true,
    notificationDelivered: true,
    rereadAfterNotification: true,
  };
  const defaultRow = row({ trigger: "subscribe", level: 6, ...steps });
  const inlineRow = (fields: Partial<MatrixRow>) =>
    row({ mode: "inline-content", trigger: "subscribe", ...steps, ...fields });
  const compared = (fields: Partial<MatrixRow>, others = [defaultRow]) =>
    withDefaultComparison([...others, inlineRow(fields)]).at(-1)!
      .versusDefault;
  assert.deepEqual(compared({ level: 6 }), {
    defaultLevel: 6,
    differences: [],
    broke: false,
  });
  assert.deepEqual(
    compared({ level: 5, labLevel: 5, rereadAfterNotification: false }),
    {
      defaultLevel: 6,
      differences: ["level 5 (default 6)", "lost re-read v2"],
      broke: true,
    },
  );
  // The text stood in for the re-read: version 2 still reached the model.
  assert.deepEqual(
    compared({ level: 7, labLevel: 5, rereadAfterNotification: false }),
    {
      defaultLevel: 6,
      differences: ["level 7 (default 6)", "lost re-read v2"],
      broke: false,
    },
  );
  assert.deepEqual(
    compared({
      level: 3,
      labLevel: 3,
      outcome: "exit-nonzero",
      subscribed: false,
      notificationDelivered: false,
      rereadAfterNotification: false,
    }),
    {
      defaultLevel: 6,
      differences: [
        "level 3 (default 6)",
        "lost subscribed, notified, re-read v2",
        "ended exit-nonzero (default completed)",
      ],
      broke: true,
    },
  );
  assert.deepEqual(
    compared({ level: 6, subscribed: true }, [
      row({ trigger: "subscribe", level: 3 }),
    ])?.differences,
    ["level 6 (default 3)", "gained subscribed, notified, re-read v2"],
  );
  // Only the default mode's native subscribe row counts.
  assert.deepEqual(
    compared({ level: 6 }, [
      row({ trigger: "read", level: 6, ...steps }),
      row({ mode: "2026-07-28", trigger: "subscribe", level: 6, ...steps }),
      row({ route: "wait-tool", trigger: "subscribe", level: 7, ...steps }),
    ]),
    { defaultLevel: null, differences: [], broke: false },
  );
  // A row that never reached the lab compares nothing; a stale comparison goes.
  const unreached = withDefaultComparison([
    defaultRow,
    inlineRow({
      labClient: null,
      outcome: "install-failed",
      versusDefault: { defaultLevel: 1, differences: ["old"], broke: true },
    }),
  ])[1];
  assert.equal("versusDefault" in unreached, false);
  // Other rows are left as they were.
  assert.deepEqual(withDefaultComparison([defaultRow]), [defaultRow]);
});

Deno.test("versusDefaultNote: the comparison in an inline-content row's Notes cell", () => {
  const note = (versus: Parameters<typeof versusDefaultNote>[0]) =>
    versusDefaultNote(versus, "inline-content");
  assert.equal(
    note({ defaultLevel: null, differences: [], broke: false }),
    "no default row under this route and trigger to compare with",
  );
  assert.equal(
    note({ defaultLevel: 5, differences: [], broke: false }),
    "as in its default row: level 5, the same steps",
  );
  assert.equal(
    note({
      defaultLevel: 6,
      differences: ["level 7 (default 6)", "lost re-read v2"],
      broke: false,
    }),
    "against its default row, no break: level 7 (default 6), lost re-read v2",
  );
  assert.equal(
    note({
      defaultLevel: 5,
      differences: ["level 1 (default 5)", "lost listed"],
      broke: true,
    }),
    "broke on the extra fields, against its default row: level 1 (default 5), lost listed",
  );
  const [, inline] = withDefaultComparison([
    row({ trigger: "subscribe", notes: "read only" }),
    row({ mode: "inline-content", trigger: "subscribe", notes: "read only" }),
  ]);
  assert.equal(
    tableCells(inline)[15],
    "read only; as in its default row: level 3, the same steps",
  );
});

// ---------------------------------------------------------------------------
// The world modes: what the lab's log shows, and the client's default row
// ---------------------------------------------------------------------------

/** A run's lab-log facts: nothing seen unless `fields` says so. */
function logFacts(fields: Partial<LabLogFacts> = {}): LabLogFacts {
  return {
    streamsOpened: 0,
    streamsCut: 0,
    reopened: 0,
    reopenedAfterSeconds: null,
    watchesRefused: 0,
    eraRefusals: 0,
    lines: [],
    ...fields,
  };
}

/** A world mode's run: its lab set as the mode sets it, its log's facts. */
function worldRun(
  mode: ModeId,
  clients: ClientReport[],
  labLog: LabLogFacts | undefined,
): MatrixRow {
  const report = labReport(clients);
  const { era = "both", maxWatches, streamLifetimeSeconds, streamEnd } =
    labSettingsOf(mode);
  return rowFromRun(runRecord({
    kind: "command",
    mode,
    trigger: "subscribe",
    labReport: {
      ...report,
      scenario: {
        ...report.scenario,
        trigger: "subscribe",
        era,
        maxWatches: maxWatches ?? null,
        streamLifetimeSeconds: streamLifetimeSeconds ?? null,
        streamEnd: streamEnd ?? "graceful",
      },
    },
    transcript: [],
    ...(labLog ? { labLog } : {}),
  }));
}

/** A row's notes without the command client's own note among them. */
const worldNote = (row: MatrixRow) =>
  row.notes.split(COMMAND_NOTE).map((part) => part.replace(/^; |; $/g, ""))
    .filter(Boolean).join("; ");

Deno.test("rowFromRun (cut): a client that opened its stream again after the cut got the update; one that did not lost it, and one that opened none had nothing to cut", () => {
  const missed = labClient({
    trigger: "subscribe",
    level: 4,
    missing:
      "the notification was lost: the client's GET stream was closed when it was sent",
    steps: { ...labClient({}).steps, subscribed: true },
  });
  const reopened = worldRun(
    "cut",
    [notifiedClient(6)],
    logFacts({
      streamsOpened: 2,
      streamsCut: 1,
      reopened: 1,
      reopenedAfterSeconds: 1,
    }),
  );
  assert.equal(reopened.level, 6);
  assert.equal(
    worldNote(reopened),
    "the lab ended 1 stream at 2 s (graceful); the client opened 1 stream again, the first 1 s after the cut, and got the update after the cut",
  );
  const never = worldRun(
    "cut",
    [missed],
    logFacts({ streamsOpened: 1, streamsCut: 1 }),
  );
  assert.equal(never.level, 4);
  assert.equal(
    worldNote(never),
    "the notification was lost: the client's GET stream was closed when it was sent; the lab ended 1 stream at 2 s (graceful); the client never opened one again: the update after the cut was lost",
  );
  // Opened again, yet the update found no stream open.
  assert.match(
    worldNote(
      worldRun(
        "cut",
        [missed],
        logFacts({
          streamsOpened: 3,
          streamsCut: 2,
          reopened: 2,
          reopenedAfterSeconds: 4.5,
        }),
      ),
    ),
    /the lab ended 2 streams at 2 s \(graceful\); the client opened 2 streams again, the first 4.5 s after the cut, and still missed the update$/,
  );
  assert.match(
    worldNote(worldRun("cut", [labClient()], logFacts())),
    /; opened no stream the lab could cut \(no GET stream, no listen\)$/,
  );
  assert.match(
    worldNote(worldRun("cut", [labClient()], logFacts({ streamsOpened: 2 }))),
    /; the lab cut none of its 2 streams: each ended before 2 s$/,
  );
  // No log, no word on the cut beyond saying so.
  assert.match(
    worldNote(worldRun("cut", [notifiedClient(6)], undefined)),
    /the lab left no log to read what happened from$/,
  );
});

Deno.test("rowFromRun (2026-07-28-only, 2025-only): a client that fell back after the lab refused the other era, one that spoke the lab's era at once, and one that could not talk to it", () => {
  const modern = labClient({
    era: "2026-07-28",
    protocolVersion: "2026-07-28",
  });
  const fellBack = worldRun(
    "2026-07-28-only",
    [modern],
    logFacts({ eraRefusals: 2 }),
  );
  assert.equal(fellBack.era, "2026-07-28");
  assert.match(
    worldNote(fellBack),
    /; fell back to 2026-07-28 after the lab refused 2 requests of the other era$/,
  );
  assert.match(
    worldNote(worldRun("2025-only", [labClient()], logFacts())),
    /; spoke 2025, the lab's one era, from its first request$/,
  );
  const unreached = worldRun(
    "2026-07-28-only",
    [],
    logFacts({ eraRefusals: 1 }),
  );
  assert.deepEqual([unreached.level, unreached.connected], [0, false]);
  assert.equal(
    worldNote(unreached),
    "never reached the lab; could not talk to a 2026-07-28-only server: the lab refused 1 request of the other era",
  );
  // No refusal and no client: the row's own words say it never reached the lab.
  assert.equal(
    worldNote(worldRun("2025-only", [], logFacts())),
    "never reached the lab",
  );
});

Deno.test("rowFromRun (refused): a client asked for a watch once, or again and again, or never", () => {
  const refusedClient = labClient({ trigger: "subscribe" });
  assert.match(
    worldNote(
      worldRun("refused", [refusedClient], logFacts({ watchesRefused: 1 })),
    ),
    /; its one watch was refused \(Subscription limit reached\), and it did not ask again$/,
  );
  assert.match(
    worldNote(
      worldRun("refused", [refusedClient], logFacts({ watchesRefused: 61 })),
    ),
    /; asked for a watch 61 times, each refused \(Subscription limit reached\)$/,
  );
  assert.match(
    worldNote(worldRun("refused", [refusedClient], logFacts())),
    /; never asked for a watch \(no subscribe, no listen\): nothing to refuse$/,
  );
  // Other modes say nothing of a world, even with a log.
  for (const mode of ["default", "inline-content", "catalog"] as const) {
    assert.equal(
      worldRun(mode, [refusedClient], logFacts({ watchesRefused: 3 })).notes
        .includes("watch"),
      false,
      mode,
    );
  }
});

Deno.test("withDefaultComparison: each world mode's row against the default row; a cut that lost the update or an era the client could not speak broke it, a refusal that stopped it at 3 did not", () => {
  const steps = {
    subscribed: true,
    notificationDelivered: true,
    rereadAfterNotification: true,
  };
  const defaultRow = row({ trigger: "subscribe", level: 6, ...steps });
  const compared = (mode: ModeId, fields: Partial<MatrixRow>) =>
    withDefaultComparison([
      defaultRow,
      row({ mode, trigger: "subscribe", ...steps, ...fields }),
    ])[1].versusDefault;
  // Cut: re-opened and re-read, as by default; or lost the update.
  assert.deepEqual(compared("cut", { level: 6 }), {
    defaultLevel: 6,
    differences: [],
    broke: false,
  });
  assert.deepEqual(
    compared("cut", {
      level: 4,
      labLevel: 4,
      notificationDelivered: false,
      rereadAfterNotification: false,
    }),
    {
      defaultLevel: 6,
      differences: ["level 4 (default 6)", "lost notified, re-read v2"],
      broke: true,
    },
  );
  // A one-era lab: the client fell back and reached 6, or never connected.
  assert.equal(compared("2026-07-28-only", { level: 6 })?.broke, false);
  assert.equal(compared("2025-only", { level: 6 })?.broke, false);
  const unspoken = {
    level: 0,
    labLevel: 0,
    connected: false,
    listed: false,
    readV1: false,
    subscribed: false,
    notificationDelivered: false,
    rereadAfterNotification: false,
  };
  assert.deepEqual(compared("2026-07-28-only", unspoken), {
    defaultLevel: 6,
    differences: [
      "level 0 (default 6)",
      "lost connected, listed, read v1, subscribed, notified, re-read v2",
    ],
    broke: true,
  });
  assert.equal(compared("2025-only", unspoken)?.broke, true);
  // Kept out by the lab's one era, the client never reached it: still held
  // to its default row, as it broke there. One that never ran is not, nor
  // an inline-content row that never reached the lab its text came from.
  assert.deepEqual(
    compared("2026-07-28-only", {
      ...unspoken,
      labClient: null,
      outcome: "exit-nonzero",
    }),
    {
      defaultLevel: 6,
      differences: [
        "level 0 (default 6)",
        "lost connected, listed, read v1, subscribed, notified, re-read v2",
        "ended exit-nonzero (default completed)",
      ],
      broke: true,
    },
  );
  for (const outcome of ["install-failed", "lab-failed"] as const) {
    assert.equal(
      compared("2025-only", { ...unspoken, labClient: null, outcome }),
      undefined,
      outcome,
    );
  }
  assert.equal(
    compared("inline-content", {
      ...unspoken,
      labClient: null,
      outcome: "exit-nonzero",
    }),
    undefined,
  );
  // Refused: level 3 is the most the lab allows, so its lost watch is no break.
  const refusedAt3 = {
    level: 3,
    labLevel: 3,
    subscribed: false,
    notificationDelivered: false,
    rereadAfterNotification: false,
  };
  assert.deepEqual(compared("refused", refusedAt3), {
    defaultLevel: 6,
    differences: [
      "level 3 (default 6)",
      "lost subscribed, notified, re-read v2",
    ],
    broke: false,
  });
  // Below 3, or a run that no longer completed (it hammered until the timeout).
  assert.equal(
    compared("refused", { ...refusedAt3, level: 2, labLevel: 2, readV1: false })
      ?.broke,
    true,
  );
  assert.equal(
    compared("refused", { ...refusedAt3, outcome: "timeout" })?.broke,
    true,
  );
  // A client at 2 by default is no worse at 2 with its watch refused.
  assert.equal(
    withDefaultComparison([
      row({ trigger: "subscribe", level: 2, readV1: false }),
      row({ mode: "refused", trigger: "subscribe", level: 2, readV1: false }),
    ])[1].versusDefault?.broke,
    false,
  );
});

Deno.test("versusDefaultNote: a world mode's break names the world it broke in", () => {
  const broke = {
    defaultLevel: 6,
    differences: ["level 4 (default 6)"],
    broke: true,
  };
  assert.deepEqual(
    WORLD_MODES.map((mode) => versusDefaultNote(broke, mode)),
    [
      "broke on the extra fields, against its default row: level 4 (default 6)",
      "broke on the cut stream, against its default row: level 4 (default 6)",
      "broke against a 2026-07-28-only server, against its default row: level 4 (default 6)",
      "broke against a 2025-only server, against its default row: level 4 (default 6)",
      "broke on the refusal, against its default row: level 4 (default 6)",
    ],
  );
  assert.equal(
    versusDefaultNote({ ...broke, broke: false }, "refused"),
    "against its default row, no break: level 4 (default 6)",
  );
  const [, cut] = withDefaultComparison([
    row({ trigger: "subscribe", level: 6, notes: "" }),
    row({
      mode: "cut",
      trigger: "subscribe",
      level: 4,
      labLevel: 4,
      notes: "the lab ended 1 stream at 2 s (graceful)",
    }),
  ]);
  assert.equal(
    tableCells(cut)[15],
    "the lab ended 1 stream at 2 s (graceful); broke on the cut stream, against its default row: level 4 (default 6)",
  );
});

Deno.test("evidenceMarkdown: a world mode's evidence says the --mode that runs it again, and what the lab's log showed, its lines inert; a run without a log has no such part", () => {
  for (
    const mode of ["cut", "2026-07-28-only", "2025-only", "refused"] as const
  ) {
    assert.match(
      evidenceMarkdown([runRecord({ mode, trigger: "subscribe" })]),
      new RegExp(`run by \`deno task clients --mode ${mode} demo\``),
      mode,
    );
  }
  const cut = evidenceMarkdown([runRecord({
    mode: "cut",
    trigger: "subscribe",
    labLog: logFacts({
      streamsOpened: 2,
      streamsCut: 1,
      reopened: 1,
      reopenedAfterSeconds: 1,
      lines: [
        "[stream/get] closed session=a by=lab end=graceful client=demo/1.0.0",
        '[stream/get] opened session=a client="```x"',
      ],
    }),
  })]);
  const part = cut.slice(cut.indexOf("### What the lab's log showed"));
  assert.equal(
    part.slice(0, part.indexOf("### Lab report")),
    [
      "### What the lab's log showed",
      "",
      "2 streams opened (GET streams and listens), 1 ended by the lab at their lifetime, 1 opened after the first cut (the first 1 s after it); 0 watches refused; 0 requests refused before the lab first knew a client (in a one-era lab, the other era's). The lines counted:",
      "",
      "```text",
      "[stream/get] closed session=a by=lab end=graceful client=demo/1.0.0",
      `[stream/get] opened session=a client="'''x"`,
      "```",
      "",
      "",
    ].join("\n"),
  );
  const refused = evidenceMarkdown([runRecord({
    mode: "refused",
    trigger: "subscribe",
    labLog: logFacts({ watchesRefused: 1 }),
  })]);
  assert.match(refused, /; 1 watch refused; 0 requests refused before/);
  assert.ok(!refused.includes("The lines counted"));
  assert.ok(
    !evidenceMarkdown([runRecord({ mode: "cut", trigger: "subscribe" })])
      .includes("### What the lab's log showed"),
  );
});

// ---------------------------------------------------------------------------
// Catalog rows: levels per kind, the new tool, a catalog that never changed
// ---------------------------------------------------------------------------

Deno.test("rowFromRun (catalog): the lab's levels per kind, tools at 5 where the new tool reached a model request and the model called it; every kind's note says what stopped it", () => {
  const record = catalogRun(
    { tools: 4, prompts: 2, resources: 3 },
    NEW_TOOL_TRANSCRIPT,
  );
  const catalogRow = rowFromRun(record);
  assert.deepEqual(catalogRow.catalog, {
    level: 2,
    kinds: {
      tools: {
        added: "get_review_comments",
        labLevel: 4,
        level: 5,
        missing: "",
      },
      prompts: {
        added: "summarize_review",
        labLevel: 2,
        level: 2,
        missing: "notified, never listed prompts again",
      },
      resources: {
        added: "test://review/comments",
        labLevel: 3,
        level: 3,
        missing:
          "listed resources again but never used test://review/comments (resources/read)",
      },
    },
    newTool: { offeredAs: "mcp__lab__get_review_comments", called: true },
    updatesSent: 1,
  });
  assert.equal(
    catalogRow.notes.split("; ").at(-1),
    "catalog tools 5, prompts 2, resources 3: tools 5 (get_review_comments reached a model request after the change, and the model called it), prompts 2 (notified, never listed prompts again), resources 3 (listed resources again but never used test://review/comments (resources/read))",
  );
  const line = everyRunLines(
    matrixMarkdown({
      generatedAt: at(0),
      labVersion: "0.2.0",
      delaySeconds: 3,
      rows: [catalogRow, rowFromRun(runRecord())],
      cited: [],
      requests: {},
      libraries: [],
    }),
  ).filter((text) => text.startsWith("| Demo CLI"));
  assert.deepEqual(line.map((text) => text.split(" | ")[14]), [
    "tools 5, prompts 2, resources 3",
    "—",
  ]);
  // The evidence file names the mode's command, and the request that
  // offered the new tool.
  const evidence = evidenceMarkdown([record]);
  assert.match(evidence, /deno task clients --mode catalog demo/);
  assert.match(
    evidence,
    /offered the new tool as mcp__lab__get_review_comments/,
  );
  // Other rows carry no catalog at all.
  assert.equal("catalog" in rowFromRun(runRecord()), false);
});

Deno.test("rowFromRun (catalog): listed again and even used, but no model request carried the new tool: the harness's diagnosis; no model: 4 is the top", () => {
  for (const tools of [3, 4]) {
    const catalogRow = rowFromRun(catalogRun({ tools }));
    assert.deepEqual(catalogRow.catalog?.kinds.tools, {
      added: "get_review_comments",
      labLevel: tools,
      level: tools,
      missing: "listed again, but the new tool never reached a model request",
    });
    assert.equal(catalogRow.catalog?.level, tools);
  }
  // Below 3 the lab's diagnosis stands.
  assert.equal(
    rowFromRun(catalogRun({ tools: 1 })).catalog?.kinds.tools?.missing,
    "listed tools only at connect: notifications/tools/list_changed was lost (no GET stream open)",
  );
  const command = rowFromRun(
    catalogRun({ tools: 4 }, [], { kind: "command", steps: [] }),
  );
  assert.deepEqual(command.catalog?.newTool, null);
  assert.equal(command.catalog?.kinds.tools?.level, 4);
  assert.match(
    command.catalog?.kinds.tools?.missing ?? "",
    /^no model drives the client, so level 5/,
  );
});

Deno.test("rowFromRun (catalog): a client the lab sent no update has a catalog that never changed, and says so; no record, no levels", () => {
  const unchanged = rowFromRun(
    catalogRun(
      { tools: 1, resources: 1 },
      undefined,
      { trigger: "subscribe" },
      {
        updatesSent: 0,
      },
    ),
  );
  assert.ok(
    unchanged.notes.includes(
      "catalog: never changed, as the lab sent the client no update (trigger subscribe), and the change comes with the first",
    ),
    unchanged.notes,
  );
  assert.equal(unchanged.catalog?.level, 1);
  // The lab knew no such client: no record to read.
  const gone = rowFromRun(
    runRecord({ mode: "catalog", labReport: labReport([]) }),
  );
  assert.equal(gone.catalog, null);
  assert.match(
    gone.notes,
    /catalog: the lab kept no catalog record of the client/,
  );
  // A run that never reached a lab has no catalog field.
  const failed = rowFromRun(
    runRecord({ mode: "catalog", outcome: "install-failed", labReport: null }),
  );
  assert.equal("catalog" in failed, false);
});

// ---------------------------------------------------------------------------
// Merging: rows in catalog order, evidence kept, a catalog run's file
// ---------------------------------------------------------------------------

Deno.test("mergeRows: fresh rows replace their old selves, others stay, catalog order", () => {
  const old = [
    row({ clientId: "b", trigger: "read", notes: "old b" }),
    row({ clientId: "a", trigger: "read", notes: "old a" }),
    row({ clientId: "a", trigger: "subscribe", notes: "old a sub" }),
  ];
  const merged = mergeRows(old, [
    row({ clientId: "a", trigger: "read", notes: "new a" }),
    row({
      clientId: "a",
      mode: "2026-07-28",
      trigger: "read",
      notes: "new a 2026",
    }),
  ], ["a", "b"]);
  assert.deepEqual(merged.map((each) => each.notes), [
    "old a sub",
    "new a",
    "new a 2026",
    "old b",
  ]);
});

Deno.test("mergeRows: routes and long waits are rows of their own, ordered native, wait-tool, shell-probe", () => {
  const merged = mergeRows([
    row({ route: "shell-probe", notes: "shell" }),
    row({ notes: "old native" }),
  ], [
    row({ route: "wait-tool", longWait: true, notes: "long" }),
    row({ route: "wait-tool", notes: "wait" }),
    row({ notes: "new native" }),
  ], ["demo"]);
  assert.deepEqual(merged.map((each) => each.notes), [
    "new native",
    "wait",
    "long",
    "shell",
  ]);
  // A row written before routes existed counts as native.
  const legacy = { ...row({ notes: "legacy" }) } as Partial<MatrixRow>;
  delete legacy.route;
  assert.deepEqual(
    mergeRows([legacy as MatrixRow], [row({ notes: "fresh" })], ["demo"]).map(
      (each) => each.notes,
    ),
    ["fresh"],
  );
});

Deno.test("mergeRows: a client's modes in catalog order: default, 2026-07-28, notifications, stdio, inline-content", () => {
  const merged = mergeRows([], [
    row({ mode: "inline-content" }),
    row({ mode: "stdio" }),
    row({ mode: "notifications" }),
    row({ mode: "2026-07-28" }),
    row({ mode: "default" }),
  ], ["demo"]);
  assert.deepEqual(merged.map((each) => each.mode), [
    "default",
    "2026-07-28",
    "notifications",
    "stdio",
    "inline-content",
  ]);
});

Deno.test("mergeRows: a catalog row is keyed by its launch mode, after the client's other modes in its modes' order; a fresh one launched as default replaces one recorded before launch modes", () => {
  const catalog = (launchMode?: ModeId, ranAt = at(0)) =>
    row({ mode: "catalog", ...(launchMode ? { launchMode } : {}), ranAt });
  const previous = [row({ mode: "default" }), catalog()];
  const merged = mergeRows(previous, [
    catalog("no-updates"),
    catalog("stdio"),
    catalog("2026-07-28"),
    catalog("default", at(60)),
    row({ mode: "inline-content" }),
  ], ["demo"]);
  assert.deepEqual(merged.map((each) => [modeLabel(each), each.ranAt]), [
    ["default", at(0)],
    ["inline-content", at(0)],
    ["catalog (default)", at(60)],
    ["catalog (2026-07-28)", at(0)],
    ["catalog (stdio)", at(0)],
    ["catalog (no-updates)", at(0)],
  ]);
  // The Mode column names the launch mode; an old row's is default.
  assert.equal(tableCells(catalog("stdio"))[2], "catalog (stdio)");
  assert.equal(tableCells(catalog())[2], "catalog (default)");
});

Deno.test("mergeEvidence: a single-trigger run keeps the other trigger's section", () => {
  const both = evidenceMarkdown([
    runRecord({ trigger: "subscribe", durationSeconds: 11 }),
    runRecord({ trigger: "read", durationSeconds: 12 }),
  ]);
  const readOnly = evidenceMarkdown([
    runRecord({ trigger: "read", durationSeconds: 99 }),
  ]);
  const merged = mergeEvidence(both, readOnly);
  assert.match(
    merged,
    /## Trigger subscribe\n\nOutcome: completed \(exit 0\) after 11 s/,
  );
  assert.match(
    merged,
    /## Trigger read\n\nOutcome: completed \(exit 0\) after 99 s/,
  );
  assert.ok(
    merged.indexOf("## Trigger subscribe") < merged.indexOf("## Trigger read"),
  );
  assert.equal(merged.split("## Trigger").length, 3);
  assert.equal(mergeEvidence("", both), both.replace(/\n+$/, "") + "\n");
});

Deno.test("evidenceFile: a catalog run's launch mode is in its file's name, but default's, whose file keeps the plain name", () => {
  const file = (mode: ModeId, launchMode?: ModeId) =>
    evidenceFile({
      clientId: "reference-host",
      version: "0.2.0",
      mode,
      ...(launchMode ? { launchMode } : {}),
    });
  assert.deepEqual(
    [
      file("catalog", "default"),
      file("catalog"),
      file("catalog", "stdio-2026-07-28"),
      file("catalog", "no-updates"),
      file("stdio"),
    ],
    [
      "runs/reference-host-0.2.0-catalog.md",
      "runs/reference-host-0.2.0-catalog.md",
      "runs/reference-host-0.2.0-catalog-stdio-2026-07-28.md",
      "runs/reference-host-0.2.0-catalog-no-updates.md",
      "runs/reference-host-0.2.0-stdio.md",
    ],
  );
  const record = runRecord({ mode: "catalog", launchMode: "stdio" });
  assert.equal(
    rowFromRun(record).evidence,
    "runs/demo-1.0.0-catalog-stdio.md#trigger-read",
  );
  assert.equal(rowFromRun(record).launchMode, "stdio");
  assert.match(
    evidenceMarkdown([record]),
    /^# Demo CLI 1\.0\.0, mode catalog \(stdio\)\n/,
  );
});

// ---------------------------------------------------------------------------
// The Markdown: the matrix's table and routes, commands, evidence, headings
// ---------------------------------------------------------------------------

Deno.test("matrixMarkdown: one row per run with marks, level, notes and evidence; hosts read from source; history below", () => {
  const zed = citedHost();
  const markdown = matrixMarkdown(
    {
      generatedAt: at(0),
      labVersion: "0.2.0",
      delaySeconds: 3,
      rows: [row({ notes: "pipes | escaped" })],
      cited: [zed],
      requests: {},
      libraries: [],
    },
  );
  assert.match(markdown, /on 2026-11-30 with lab 0\.2\.0/);
  const line = everyRunLines(markdown).find((text) =>
    text.startsWith("| Demo CLI")
  );
  assert.ok(line);
  const cells = line.split(/(?<!\\)\|/).map((text) => text.trim());
  assert.deepEqual(cells.slice(1, 18), [
    "Demo CLI",
    "1.0.0",
    "default",
    "native",
    "`read`",
    "2025 (2025-06-18)",
    "✅",
    "✅",
    "✅",
    "❌",
    "❌",
    "❌",
    "❌",
    "3",
    "—",
    "pipes &#124; escaped",
    "run: [report](runs/demo-1.0.0-default.md#trigger-read)",
  ]);
  assert.ok(markdown.indexOf(HISTORY) > markdown.indexOf(line));
  const cited = everyRunLines(markdown).find((text) =>
    text.startsWith("| Zed |")
  );
  assert.ok(cited, "no row for the host read from source");
  assert.deepEqual(cited.split(/(?<!\\)\|/).map((text) => text.trim()), [
    "",
    "Zed",
    "0.200.0",
    ...Array(13).fill("—"),
    "subscribes: no; on notifications/resources/updated: nothing handles it; not run here: not on npm",
    `source, not run: [zed-industries/zed@0123abcd crates/context_server/src/client.rs:10-12](https://github.com/zed-industries/zed/blob/${
      "0123abcd".padEnd(40, "0")
    }/crates/context_server/src/client.rs#L10-L12)`,
    "",
  ]);
  assert.ok(markdown.indexOf(cited) > markdown.indexOf(line));
  assert.match(HISTORY, /May 2026/);
  assert.match(HISTORY, /Codex CLI and Crush refused/);
});

Deno.test("matrixMarkdown: a host read from its npm bundle cites package, file and line, the quote kept in the JSON only", () => {
  const host = citedHost({
    id: "demo-source",
    displayName: "Demo Bundle",
    citations: [{
      package: "@demo/cli@1.2.3",
      path: "dist/cli.js",
      line: 42,
      quote: "setNotificationHandler(a|b,`x`)",
      says: "handles tools/list_changed only",
    }],
  });
  const markdown = matrixMarkdown({
    generatedAt: at(0),
    labVersion: "0.2.0",
    delaySeconds: 3,
    rows: [],
    cited: [host],
    requests: {},
    libraries: [],
  });
  const line = everyRunLines(markdown).find((text) =>
    text.startsWith("| Demo Bundle |")
  );
  assert.ok(line, "no row for the host read from its bundle");
  const cells = line.split(/(?<!\\)\|/).map((text) => text.trim());
  assert.equal(
    cells.at(-2),
    "source, not run: `@demo/cli@1.2.3` `dist/cli.js:42`",
  );
  assert.doesNotMatch(line, /setNotificationHandler/);
});

Deno.test("matrixMarkdown: the Route column, explained in two sentences above the table", () => {
  const markdown = matrixMarkdown(
    {
      generatedAt: at(0),
      labVersion: "0.2.0",
      delaySeconds: 3,
      rows: [
        row({}),
        row({
          route: "wait-tool",
          level: 7,
          evidence: "runs/w.md#trigger-read",
        }),
        row({
          route: "wait-tool",
          longWait: true,
          delaySeconds: 90,
          trigger: "subscribe",
          evidence: "runs/w.md#trigger-subscribe-long-wait",
        }),
        row({ route: "shell-probe", evidence: "runs/s.md#trigger-read" }),
      ],
      cited: [citedHost()],
      requests: {},
      libraries: [],
    },
  );
  const lines = everyRunLines(markdown);
  const header = lines.find((text) => text.startsWith("| Client |"));
  assert.ok(header);
  const columns = header.split("|").map((text) => text.trim());
  assert.equal(columns.indexOf("Route"), columns.indexOf("Mode") + 1);
  assert.ok(markdown.indexOf(ROUTE_TEXT) < markdown.indexOf(header));
  assert.equal(ROUTE_TEXT.split(/\. (?=[A-Z])/).length, 2);
  for (const route of ["native", "wait-tool", "shell-probe"]) {
    assert.match(ROUTE_TEXT, new RegExp(`\`${route}\``));
  }
  const routeCells = lines.filter((text) => text.startsWith("| Demo CLI"))
    .map((text) => text.split("|").map((cell) => cell.trim())[4]);
  assert.deepEqual(routeCells, [
    "native",
    "wait-tool",
    "wait-tool (long wait, 90 s)",
    "shell-probe",
  ]);
  const cited = lines.find((text) => text.startsWith("| Zed |"));
  assert.equal(cited?.split("|").length, header.split("|").length);
});

Deno.test("commandTable: each command, its outcome and its output through the lab's cell: pipes, backticks, mentions and links inert, the output's lines on one row", () => {
  assert.deepEqual(
    commandTable([{
      startedAt: 0.2,
      command: "demo --call 'a|b' `x` 2>>$HOME/lab.log",
      outcome: "exit-nonzero",
      exitCode: 1,
      detail: "see @demo/cli",
      durationSeconds: 1.5,
      outputTail:
        "[mcp-inspector] noise\nfirst | line\nsee https://example.com/x `y`",
    }]),
    [
      "| # | At (s) | Command | Outcome | Took (s) | Output |",
      "| --- | --- | --- | --- | --- | --- |",
      "| 1 | 0.2 | demo --call 'a&#124;b' &#96;x&#96; 2&gt;&gt;$HOME/lab.log | exit-nonzero (exit 1), see @<wbr>demo/cli | 1.5 | first &#124; line / see https:<wbr>//example.com/x &#96;y&#96; |",
    ],
  );
});

Deno.test("evidenceMarkdown: a section per trigger with transcript and the lab's report", () => {
  const markdown = evidenceMarkdown([
    runRecord({ trigger: "subscribe" }),
    runRecord({
      outcome: "timeout",
      detail: "no exit within 120 s",
      outputTail: "stuck",
    }),
  ]);
  assert.match(markdown, /^# Demo CLI 1\.0\.0, mode default/);
  assert.match(markdown, /## Trigger subscribe[\s\S]*## Trigger read/);
  assert.match(
    markdown,
    /\| 3 \| 6\.0 \| POST \/v1\/messages \(stream\) \| check-context-then-reread \| 1 \| no \|/,
  );
  assert.match(
    markdown,
    /### Client output \(last lines\)\n\n```text\nstuck\n```/,
  );
  assert.equal(
    markdown.split("#### MCP resource subscription lab report").length,
    3,
  );
  assert.match(markdown, /##### demo\/1\.0\.0/);
});

Deno.test("evidenceMarkdown: a route's file names its route; long-wait sections merge after the others", () => {
  const markdown = evidenceMarkdown([
    runRecord({ route: "wait-tool", trigger: "read" }),
  ]);
  assert.match(markdown, /^# Demo CLI 1\.0\.0, mode default, route wait-tool/);
  assert.match(markdown, /deno task clients --route wait-tool demo/);
  const long = evidenceMarkdown([
    runRecord({ route: "wait-tool", trigger: "subscribe", longWait: true }),
  ]);
  assert.match(long, /## Trigger subscribe, long wait/);
  const merged = mergeEvidence(markdown, long);
  assert.ok(
    merged.indexOf("## Trigger read") <
      merged.indexOf("## Trigger subscribe, long wait"),
  );
});

Deno.test("demoteHeadings: headings move down, code fences stay as they are", () => {
  assert.equal(
    demoteHeadings("# A\n```sh\n# comment\n```\n## B", 2),
    "### A\n```sh\n# comment\n```\n#### B",
  );
});

// ---------------------------------------------------------------------------
// The committed results: matrix.json, the README's quotes, --budget 0
// ---------------------------------------------------------------------------

Deno.test("results/matrix.json is the Markdown's twin: every table row of compatibility-matrix.md, cell by cell, comes from it, with each row's evidence kind and the cited hosts' sources", async () => {
  const results = new URL("../../results/", import.meta.url);
  const document = JSON.parse(
    await Deno.readTextFile(new URL("matrix.json", results)),
  ) as MatrixDocument;
  const committed = await Deno.readTextFile(
    new URL("compatibility-matrix.md", results),
  );
  const rows = (markdown: string) =>
    markdown.split("\n").filter((line) => line.startsWith("|"))
      .map(trimmedCells);
  assert.deepEqual(rows(committed), rows(matrixMarkdown(document)));
  for (const row of document.rows) {
    assert.equal(row.evidenceKind, evidenceKindOf(row), row.evidence);
    assert.ok(row.evidence.startsWith("runs/"), row.evidence);
  }
  assert.ok(document.cited.length > 0);
  for (const host of document.cited) {
    for (const citation of host.citations) {
      if ("package" in citation) {
        assert.match(citation.package, /^(@[\w.-]+\/)?[\w.-]+@[\d.]+$/);
        assert.ok(Number.isInteger(citation.line));
        assert.notEqual(citation.quote, "");
        continue;
      }
      assert.match(citation.repository, /^[\w.-]+\/[\w.-]+$/);
      assert.match(citation.commit, /^[0-9a-f]{40}$/);
      assert.match(citation.lines, /^\d+(-\d+)?$/);
    }
  }
  assert.ok(Object.keys(document.requests).length > 0);
});

Deno.test("results/README.md quotes as many inline-content rows as results/matrix.json holds", async () => {
  const results = new URL("../../results/", import.meta.url);
  const { rows } = JSON.parse(
    await Deno.readTextFile(new URL("matrix.json", results)),
  ) as MatrixDocument;
  const readme = (await Deno.readTextFile(new URL("README.md", results)))
    .replaceAll(/\s+/g, " ");
  const quoted = readme.match(
    /Mode `inline-content` came after it: one run per client that runs, (\d+) in all today\./,
  );
  assert.ok(quoted, "results/README.md quotes no count of inline-content rows");
  assert.equal(
    Number(quoted[1]),
    rows.filter((row) => row.mode === "inline-content").length,
  );
});

Deno.test("results/README.md quotes as many rows of each world mode, and of each level in it, as results/matrix.json holds; each row's Notes say what the lab's log showed", async () => {
  const results = new URL("../../results/", import.meta.url);
  const { rows } = JSON.parse(
    await Deno.readTextFile(new URL("matrix.json", results)),
  ) as MatrixDocument;
  const readme = (await Deno.readTextFile(new URL("README.md", results)))
    .replaceAll(/\s+/g, " ");
  for (const mode of ["cut", "2026-07-28-only", "2025-only", "refused"]) {
    const quoted = readme.match(
      new RegExp(
        `Mode \`${mode}\`: (\\d+) rows, by level ((?:\\d+ at \\d+(?:, )?)+)[.;]`,
      ),
    );
    assert.ok(quoted, `results/README.md quotes no count of ${mode} rows`);
    const modeRows = rows.filter((row) => row.mode === mode);
    assert.equal(Number(quoted[1]), modeRows.length, mode);
    // "12 at 3, 4 at 6": how many rows reached each level, highest first.
    const levels = [...new Set(modeRows.map((row) => row.level))]
      .sort((a, b) => b - a)
      .map((level) =>
        `${modeRows.filter((row) => row.level === level).length} at ${level}`
      );
    assert.equal(quoted[2], levels.join(", "), mode);
    // A row that reached the lab says what the world did to it.
    for (const row of modeRows.filter((row) => row.labClient !== null)) {
      assert.match(
        row.notes,
        /stream|the lab cut none|era|watch|the lab left no log/,
        `${row.clientId} ${mode}`,
      );
    }
  }
});

Deno.test("results/README.md quotes as many catalog rows as results/matrix.json holds, and every one has its catalog or says why not", async () => {
  const results = new URL("../../results/", import.meta.url);
  const { rows } = JSON.parse(
    await Deno.readTextFile(new URL("matrix.json", results)),
  ) as MatrixDocument;
  const readme = (await Deno.readTextFile(new URL("README.md", results)))
    .replaceAll(/\s+/g, " ");
  const quoted = readme.match(
    /Mode `catalog` came after that: one run per client that runs in each mode it lists, (\d+) in all today/,
  );
  assert.ok(quoted, "results/README.md quotes no count of catalog rows");
  const catalogRows = rows.filter((row) => row.mode === "catalog");
  assert.equal(Number(quoted[1]), catalogRows.length);
  for (const row of catalogRows) {
    assert.ok(
      row.catalog
        ? /catalog (tools|prompts|resources) \d/.test(row.notes)
        : row.notes !== "",
      row.clientId,
    );
  }
});

Deno.test("deno task clients --budget 0 runs nothing and writes the committed compatibility-matrix.md and picture from matrix.json, which it leaves as it was", async () => {
  const results = new URL("../../results/", import.meta.url);
  const files = ["matrix.json", "compatibility-matrix.md", SUMMARY_SVG];
  const dir = await Deno.makeTempDir({ prefix: "budget-0-" });
  try {
    await Deno.mkdir(`${dir}/cache`);
    await Deno.copyFile(new URL("matrix.json", results), `${dir}/matrix.json`);
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../run.ts", import.meta.url).pathname,
        "--results-dir",
        dir,
        "--cache-dir",
        `${dir}/cache`,
        "--budget",
        "0",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    for (const file of files) {
      // Compared as booleans: no diff of a whole matrix when it fails.
      const same = await Deno.readTextFile(`${dir}/${file}`) ===
        await Deno.readTextFile(new URL(file, results));
      assert.ok(same, `results/${file} is not what --budget 0 writes`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
