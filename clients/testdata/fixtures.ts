/**
 * What the clients tests share: builders of a lab's client entry and
 * report, a transcript entry, and a run record, each with fields to
 * override, and a checked run of the harness itself. The builders' defaults
 * are one run of a made-up agent, "Demo CLI", that read version 1 and
 * stopped there (level 3, trigger `read`). Their environment is the lab's
 * tests' (`prepareTestEnvironment` in `../../testdata/lab.ts`).
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  CATALOG_ADDED,
  type CatalogKind,
  type ClientReport,
  type LabReport,
} from "../../main.ts";
import { alive } from "../support/process.ts";
import type { CitedHost } from "../catalog/cited.ts";
import { type MatrixDocument, rowFromRun } from "../report/matrix.ts";
import type { MatrixRow } from "../report/rows.ts";
import type { LabCatalog, RunRecord } from "../runners/run_record.ts";
import type { TranscriptEntry } from "../model/scripted_model.ts";

/** The fixtures' clock: every time is seconds after this instant. */
export const T0 = Date.parse("2026-11-30T10:00:00.000Z");

/** The ISO time `seconds` after `T0`. */
export const at = (seconds: number) =>
  new Date(T0 + seconds * 1000).toISOString();

/** The lab's entry for one client: Demo CLI at level 3 unless overridden. */
export function labClient(fields: Partial<ClientReport> = {}): ClientReport {
  return {
    id: "s1",
    name: "demo",
    version: "1.0.0",
    era: "2025",
    protocolVersion: "2025-06-18",
    transport: "streamable-http",
    firstSeen: at(0),
    lastSeen: at(9),
    ended: null,
    trigger: "read",
    level: 3,
    levelName: "read version 1",
    missing: "never subscribed to test://review/status (resources/subscribe)",
    steps: {
      connected: true,
      listed: true,
      readV1: true,
      subscribed: false,
      notificationDelivered: false,
      rereadAfterNotification: false,
      deliveredInline: false,
      contextUpdated: "not observable",
    },
    resourceVersion: 2,
    lastVersionRead: 1,
    updatesSent: 1,
    notificationsLost: 0,
    readVia: "resource",
    waitTool: { calls: 0, longestWaitSeconds: 0, level: null },
    listenStreamsAtOnce: 0,
    embedResources: false,
    catalog: null,
    timeline: [],
    timelineDropped: 0,
    ...fields,
  };
}

/** What the lab's report says of each catalog kind at each level (`missing`). */
const CATALOG_MISSING: Record<CatalogKind, string[]> = {
  tools: [
    "never listed tools (tools/list)",
    "listed tools only at connect: notifications/tools/list_changed was lost (no GET stream open)",
    "notified, never listed tools again",
    "listed tools again but never used get_review_comments (tools/call)",
    "level 5 (get_review_comments reaching a model request) is not observable from the server",
  ],
  prompts: [
    "never listed prompts (prompts/list)",
    "listed prompts only at connect: notifications/prompts/list_changed was lost (no GET stream open)",
    "notified, never listed prompts again",
    "listed prompts again but never used summarize_review (prompts/get)",
    "level 5 (summarize_review reaching a model request) is not observable from the server",
  ],
  resources: [
    "never listed resources (resources/list)",
    "listed resources only at connect: notifications/resources/list_changed was lost (no GET stream open)",
    "notified, never listed resources again",
    "listed resources again but never used test://review/comments (resources/read)",
    "level 5 (test://review/comments reaching a model request) is not observable from the server",
  ],
};

/** The lab's name of each catalog level, as its report gives it. */
const CLIENT_CATALOG_LEVEL_NAMES: LabCatalog["kinds"][string]["levelName"][] = [
  "never listed",
  "listed",
  "notified of the change",
  "listed again, got the new item",
  "used the new item",
];

/** The lab's catalog record of a client with these levels, in its words. */
export function labCatalog(
  levels: Partial<Record<CatalogKind, number>>,
): LabCatalog {
  const kinds = Object.fromEntries(
    Object.entries(levels).map(([kind, level]) => [kind, {
      added: CATALOG_ADDED[kind as CatalogKind],
      level,
      levelName: CLIENT_CATALOG_LEVEL_NAMES[level],
      missing: CATALOG_MISSING[kind as CatalogKind][level],
      steps: {
        listed: level >= 1,
        notified: level >= 2,
        relisted: level >= 3,
        used: level >= 4,
        reachedModel: "not observable" as const,
      },
    }]),
  );
  const lowest =
    (Object.keys(levels) as CatalogKind[]).toSorted((a, b) =>
      levels[a]! - levels[b]!
    )[0];
  return {
    level: levels[lowest]!,
    missing: `${lowest}: ${kinds[lowest].missing}`,
    kinds,
  };
}

/** Demo CLI's entry in a lab whose catalog changed, at these levels. */
export function catalogLabClient(
  levels: Partial<Record<CatalogKind, number>>,
  fields: Partial<ClientReport> = {},
): ClientReport {
  return { ...labClient(fields), catalog: labCatalog(levels) };
}

/** The lab's report holding `clients`, after one update 3 s in. */
export function labReport(clients: ClientReport[]): LabReport {
  return {
    lab: "0.2.0",
    sdk: "2.4.0",
    generatedAt: at(30),
    scenario: {
      era: "both",
      trigger: "read",
      updateDelaySeconds: 3,
      updateCount: 1,
      updateIntervalSeconds: 5,
      sendListChanged: false,
      inlineContent: "off",
      catalogChange: "off",
      toolEnabled: false,
      maxWatches: null,
      streamLifetimeSeconds: null,
      streamEnd: "graceful",
    },
    clients,
  };
}

/** One request the scripted model answered, `seconds` into the run. */
export function transcriptEntry(
  seconds: number,
  stage: TranscriptEntry["stage"],
  fields: Partial<TranscriptEntry> = {},
): TranscriptEntry {
  return {
    at: at(seconds),
    method: "POST",
    path: "/v1/messages",
    wire: "anthropic-messages",
    stream: true,
    stage,
    answer: "tool read_mcp_resource {}",
    offeredTools: 3,
    readToolOffered: true,
    versionsSeen: [],
    waitSeconds: 0,
    ...fields,
  };
}

/**
 * A run record: Demo CLI on the native route, read version 1, waited,
 * nudged and re-read without ever seeing version 2, unless overridden.
 */
export function runRecord(fields: Partial<RunRecord> = {}): RunRecord {
  return {
    clientId: "demo",
    displayName: "Demo CLI",
    npmPackage: "demo-cli",
    version: "1.0.0",
    mode: "default",
    trigger: "read",
    route: "native",
    longWait: false,
    progressCheck: null,
    delaySeconds: 3,
    ranAt: at(0),
    durationSeconds: 9,
    outcome: "completed",
    exitCode: 0,
    command: 'demo -p "<prompt>"',
    labReport: labReport([labClient()]),
    labReportMarkdown:
      "# MCP resource subscription lab report\n\n## demo/1.0.0",
    transcript: [
      transcriptEntry(0, "read-v1"),
      transcriptEntry(1, "wait-then-nudge", { versionsSeen: [1] }),
      transcriptEntry(6, "check-context-then-reread", {
        versionsSeen: [1],
        contextUpdated: false,
      }),
      transcriptEntry(7, "final", {
        versionsSeen: [1, 1],
        contextUpdated: false,
      }),
    ],
    outputTail: "",
    ...fields,
  };
}

/** A host read from source: a made-up Zed that does not subscribe. */
export function citedHost(fields: Partial<CitedHost> = {}): CitedHost {
  return {
    kind: "cited",
    id: "zed",
    displayName: "Zed",
    what: "code editor",
    version: "0.200.0",
    subscribes: "no",
    onUpdated: "nothing handles it",
    whyNotRun: "not on npm",
    citations: [{
      repository: "zed-industries/zed",
      commit: "0123abcd".padEnd(40, "0"),
      path: "crates/context_server/src/client.rs",
      lines: "10-12",
      says: "sets up the notification handlers; none for resources/updated",
    }],
    ...fields,
  };
}

/** A matrix row: Demo CLI's run record as a row, with fields overridden. */
export function matrixRow(fields: Partial<MatrixRow> = {}): MatrixRow {
  return { ...rowFromRun(runRecord()), ...fields };
}

/**
 * Runs the harness with `--check` as `deno task clients` runs it (a browser
 * driver needs more permissions than the tests have), into a fresh results
 * folder that `use` reads before it is removed; fails with the harness's
 * output when the run does.
 */
export async function withCheckedRun(
  args: string[],
  timeoutMs: number,
  use: (resultsDir: string, document: MatrixDocument) => Promise<void>,
) {
  const resultsDir = await Deno.makeTempDir({ prefix: "harness-results-" });
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../run.ts", import.meta.url).pathname,
        ...args,
        "--results-dir",
        resultsDir,
        "--check",
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(timeoutMs),
    }).output();
    const output = new TextDecoder().decode(run.stdout) +
      new TextDecoder().decode(run.stderr);
    assert.ok(run.success, output);
    await use(
      resultsDir,
      JSON.parse(
        await Deno.readTextFile(`${resultsDir}/matrix.json`),
      ) as MatrixDocument,
    );
  } finally {
    await Deno.remove(resultsDir, { recursive: true });
  }
}

/**
 * Checks what a browser run's evidence file says of its end: each
 * screenshot it links is a PNG beside it, and each PID its Cleanup line
 * names is gone. Resolves with how many of each.
 */
export async function checkBrowserEvidence(
  resultsDir: string,
  evidence: string,
): Promise<{ screenshots: number; pids: number }> {
  const shots = [...evidence.matchAll(/!\[[^\]]*\]\(([^)]+\.png)\)/g)];
  for (const [, name] of shots) {
    const bytes = await Deno.readFile(`${resultsDir}/runs/${name}`);
    // The PNG signature.
    assert.deepEqual([...bytes.slice(1, 4)], [0x50, 0x4e, 0x47]);
  }
  // The line may be wrapped; it ends with the sentence.
  const cleanup = evidence.match(/^Cleanup: [\s\S]*?\.$/m)?.[0] ?? "";
  const pids = [...cleanup.matchAll(/PID (\d+)/g)];
  for (const [, pid] of pids) {
    assert.equal(await alive(Number(pid)), false, cleanup);
  }
  return { screenshots: shots.length, pids: pids.length };
}
