/**
 * Turns runs into matrix rows and writes the published files: the matrix
 * (`results/compatibility-matrix.md`, with `results/matrix.json` as its
 * machine-readable twin) and one evidence file per client and mode
 * (`results/runs/<client>-<version>-<mode>.md`). Pure functions, so the
 * tests need no client.
 *
 * @module
 */

import {
  CATALOG_KINDS,
  cell,
  type ClientReport,
  type LabReport,
} from "../../main.ts";
import {
  isWorldMode,
  launchedMode,
  modeFileName,
  type ModeId,
  modeLabel,
  MODES,
  STREAM_CUT,
  type WorldMode,
} from "../catalog/types.ts";
import { catalogToolsLevel, type Route } from "../model/decide.ts";
import {
  type CommandStepRecord,
  mainLabClient,
  probeLabLevel,
  PROGRESS_CHECK,
  type RunRecord,
  type Trigger,
} from "../runners/run_record.ts";
import { errorLine, printableLine } from "../support/process.ts";
import type { LabLogFacts } from "../support/run_lab.ts";
import { observe, type TranscriptEntry } from "../model/scripted_model.ts";
import type {
  CitedHost,
  PackageCitation,
  SourceCitation,
  UpstreamRequest,
} from "../catalog/cited.ts";
import { catalogLevels, summaryMarkdown, summaryRows } from "./summary.ts";
import { librariesMarkdown, packageLine } from "./library_summary.ts";
import { libraryOf } from "../catalog/libraries.ts";
import {
  type CatalogKindRow,
  type CatalogRow,
  type LibraryRow,
  type MatrixRow,
  type StepFields,
  type VersusDefault,
} from "./rows.ts";

/**
 * `results/matrix.json`: everything `compatibility-matrix.md` shows, for
 * scripts: the runs, the hosts read from source (evidence kind `source`),
 * and the clients' tracker requests the summary links.
 */
export interface MatrixDocument {
  generatedAt: string;
  labVersion: string | null;
  delaySeconds: number;
  rows: MatrixRow[];
  cited: CitedHost[];
  requests: Record<string, UpstreamRequest[]>;
  /** The Libraries section: each library's API facts and levels. */
  libraries: LibraryRow[];
}

/** A row's evidence kind: a row without a run is documentation's. */
export function evidenceKindOf(
  row: Pick<MatrixRow, "outcome">,
): MatrixRow["evidenceKind"] {
  return row.outcome === "not-supported" ? "documentation" : "run";
}

/**
 * `results/runs/<client>-<version>-<mode>.md` for the native route,
 * `…-<mode>-<route>.md` for the others; a catalog run's launch mode is
 * part of its mode's name (`modeFileName`: `…-catalog-stdio.md`).
 */
export function evidenceFile(
  run: Pick<RunRecord, "clientId" | "version" | "mode" | "launchMode"> & {
    route?: Route;
  },
): string {
  const route = run.route ?? "native";
  return `runs/${run.clientId}-${run.version}-${modeFileName(run)}${
    route === "native" ? "" : `-${route}`
  }.md`;
}

type SectionOf = Pick<RunRecord, "trigger" | "longWait"> & {
  progressCheck?: RunRecord["progressCheck"];
};

/** The evidence section of a run: its trigger, and the kind of wait. */
export function sectionTitle(run: SectionOf) {
  return [
    run.trigger,
    ...(run.longWait ? ["long wait"] : []),
    ...(run.progressCheck === "progress"
      ? [`tool timeout ${PROGRESS_CHECK.toolTimeoutSeconds} s`]
      : run.progressCheck === "no-progress"
      ? [`tool timeout ${PROGRESS_CHECK.toolTimeoutSeconds} s, no progress`]
      : []),
  ].join(", ");
}

/** The section's anchor, as Markdown renderers make it. */
export function sectionAnchor(run: SectionOf) {
  return `trigger ${sectionTitle(run)}`.toLowerCase().replace(
    /[^a-z0-9 -]/g,
    "",
  ).replaceAll(" ", "-");
}

/** Where a run's row links: its evidence file and section. */
export function evidenceLink(run: RunRecord): string {
  return `${evidenceFile(run)}#${sectionAnchor(run)}`;
}

/**
 * The row's level: natively, 7 needs the update in the context after a
 * notification; on the other routes, 7 is the model seeing version 2 in the
 * result of its route call (`--check` holds it against the lab's record).
 */
export function rowLevel(
  labLevel: number,
  notificationDelivered: boolean,
  contextUpdated: boolean | null,
  route: Route = "native",
): number {
  if (route !== "native") return contextUpdated === true ? 7 : labLevel;
  return contextUpdated === true && notificationDelivered ? 7 : labLevel;
}

/** What a row's route notes read of its run. */
type RouteRun =
  & Pick<RunRecord, "route" | "longWait" | "delaySeconds" | "transcript">
  & {
    progressCheck?: RunRecord["progressCheck"];
    progressTokensRemoved?: number;
    progressTokensSent?: number;
  };

/** What the route itself showed, for a row's notes. */
export function routeNotes(
  run: RouteRun,
  labClient: ClientReport | undefined,
  probeLevel: number | null,
  contextUpdated: boolean | null,
): string[] {
  const unavailable = run.transcript.find((entry) =>
    entry.stage === "no-route-tool"
  );
  // The note may name the tools the client offered: its words, escaped.
  const notes = unavailable
    ? [
      `cannot take this route: ${
        printableLine(unavailable.note ?? unavailable.answer, 1000)
      }`,
    ]
    : [];
  if (run.route === "wait-tool" && labClient) {
    notes.push(
      ...waitToolNotes(run, labClient.waitTool, contextUpdated, !unavailable),
    );
  }
  if (run.route === "shell-probe" && !unavailable) {
    notes.push(...shellProbeNotes(run, probeLevel, contextUpdated));
  }
  return notes;
}

/**
 * The lab's record of the wait tool, and what the long wait or progress
 * check showed. `offered`: the model could call it.
 */
function waitToolNotes(
  run: RouteRun,
  wait: ClientReport["waitTool"],
  contextUpdated: boolean | null,
  offered: boolean,
): string[] {
  const notes: string[] = [];
  if (wait.calls === 0) {
    if (offered) notes.push("the wait tool was never called");
  } else {
    notes.push(
      `wait tool: ${wait.calls} call(s), the longest blocked ${wait.longestWaitSeconds} s${
        wait.level === 6 ? ", version 2 delivered through it" : ""
      }`,
    );
  }
  const survived = wait.level === 6 && contextUpdated === true;
  if (run.progressCheck && wait.calls > 0) {
    notes.push(progressCheckNote(run, wait, survived));
  }
  if (run.longWait) {
    notes.push(
      survived
        ? `long wait: the update came after ${run.delaySeconds} s and the call survived that long`
        : wait.calls === 0
        ? `long wait: no call to judge`
        : `long wait: the update came after ${run.delaySeconds} s; the call ended after ${wait.longestWaitSeconds} s without it (the client's tool-call timeout)`,
    );
  }
  return notes;
}

/** Whether the client reset its tool timeout on progress, or the control. */
function progressCheckNote(
  run: RouteRun,
  wait: ClientReport["waitTool"],
  survived: boolean,
): string {
  const limit = PROGRESS_CHECK.toolTimeoutSeconds;
  // Without a progressToken the lab has nothing to send progress with.
  if (run.progressCheck === "progress" && run.progressTokensSent === 0) {
    return `progress check: the client sent no progressToken with its call, so no progress notifications came; with its tool timeout at ${limit} s the call ${
      survived
        ? `still lasted until the update after ${run.delaySeconds} s: the timeout setting did not apply`
        : `ended after ${wait.longestWaitSeconds} s`
    }`;
  }
  if (run.progressCheck === "progress") {
    return survived
      ? `progress check: with the client's tool timeout at ${limit} s and progress notifications every 5 s, the call lasted until the update after ${run.delaySeconds} s: the client resets its timeout on progress`
      : `progress check: with the client's tool timeout at ${limit} s, the call ended after ${wait.longestWaitSeconds} s although progress notifications came every 5 s: the client does not reset its timeout on progress`;
  }
  return `progress check, control: ${
    run.progressTokensRemoved
      ? `the client sent a progressToken with ${run.progressTokensRemoved} request(s), removed on its way to the lab`
      : "the client sent no progressToken, so none was removed"
  }; without progress the call ${
    survived
      ? `still lasted until the update after ${run.delaySeconds} s: the ${limit} s timeout setting did not apply`
      : `ended after ${wait.longestWaitSeconds} s: the ${limit} s timeout setting applies`
  }`;
}

/**
 * How far the probe the client's shell ran got, and, when its result did
 * not bring version 2, what the shell tool returned.
 */
function shellProbeNotes(
  run: RouteRun,
  probeLevel: number | null,
  contextUpdated: boolean | null,
): string[] {
  const called = run.transcript.some((entry) => entry.stage === "run-probe");
  const printed = run.transcript.findLast((entry) =>
    entry.routeResult !== undefined
  )?.routeResult;
  return [
    !called
      ? "the model never got to run the probe"
      : probeLevel === null
      ? "the probe never reached the lab (the shell command did not run it)"
      : `the probe reached level ${probeLevel} in the lab${
        contextUpdated === true
          ? ", and its result with version 2 reached the model"
          : contextUpdated === false
          ? ", but its result with version 2 did not reach the model"
          : ""
      }`,
    ...(printed !== undefined && contextUpdated !== true
      ? [`the shell tool returned ${quotedOutput(printed)}`]
      : []),
  ];
}

/**
 * What a client or its shell printed, quoted in a row or an evidence table:
 * one escaped line of at most 200 characters, without backticks.
 */
export function quotedOutput(text: string): string {
  return `"${printableLine(text, 200).replaceAll("`", "'")}"`;
}

function modelNote(transcript: TranscriptEntry[]): string | undefined {
  const seen = observe(transcript);
  const noReadTool = transcript.find((entry) => entry.stage === "no-read-tool");
  if (noReadTool) {
    return `its model was offered no resource-read tool (${
      printableLine(noReadTool.note ?? "", 1000)
    })`;
  }
  const failed = transcript.find((entry) => entry.stage === "read-failed");
  if (failed) return `the model's reads returned no resource text`;
  if (seen.agentRequests === 0 && transcript.length > 0) {
    return "the client never sent the model an agent turn with tools";
  }
  if (seen.unhandledPaths.length > 0 && seen.agentRequests === 0) {
    return `the client called model routes the lab's model lacks: ${
      seen.unhandledPaths.join(", ")
    }`;
  }
  return undefined;
}

const VERSION_READ = /^\[(?:resources\/read|tools\/call)\] .*\bversion=(\d+)/;

/**
 * Whether the client read version 2 before the scripted model asked for it
 * again (a native re-read), or only because the model asked; null when it
 * never read version 2 or the model never asked.
 */
export function rereadByItself(
  labClient: ClientReport,
  transcript: TranscriptEntry[],
): boolean | null {
  const firstUpdatedRead = labClient.timeline.find((step) => {
    const match = step.line.match(VERSION_READ);
    return match !== null && Number(match[1]) >= 2;
  });
  const modelAsked = transcript.find((entry) =>
    entry.stage === "check-context-then-reread"
  );
  if (firstUpdatedRead === undefined) return null;
  if (modelAsked === undefined) return true;
  return Date.parse(firstUpdatedRead.at) < Date.parse(modelAsked.at);
}

/** The host's notice that the resource changed, as a row reports it. */
export interface HostNoticeFact {
  /** Whether one reached the model; null when no model drove the client. */
  reached: boolean | null;
  /** Seconds after the lab's update it first did (when both are known). */
  seconds: number | null;
  /** A notice carried version 2 itself. */
  withVersion2: boolean;
}

/**
 * Whether the host's notice that the resource changed reached the model
 * unasked, and how long after the lab's update (the first `update` step in
 * the client's timeline) the first request holding it came.
 */
export function hostNoticeFact(
  run: Pick<RunRecord, "kind" | "transcript">,
  labClient: ClientReport | undefined,
): HostNoticeFact {
  const seen = observe(run.transcript);
  if (run.kind !== undefined || seen.agentRequests === 0) {
    return { reached: null, seconds: null, withVersion2: false };
  }
  if (seen.hostNotice === null) {
    return { reached: false, seconds: null, withVersion2: false };
  }
  const update = labClient?.timeline.find((step) => step.kind === "update");
  return {
    reached: true,
    seconds: update === undefined ? null : Math.round(
      (Date.parse(seen.hostNotice.at) - Date.parse(update.at)) / 100,
    ) / 10,
    withVersion2: seen.hostNotice.withVersion2,
  };
}

/** What a row's notes say of the host's notice, when one came. */
export function hostNoticeNote(fact: HostNoticeFact): string | undefined {
  if (fact.reached !== true) return undefined;
  const when = fact.seconds === null
    ? ""
    : ` (notice ${fact.seconds} s after the update)`;
  return fact.withVersion2
    ? `the host's notice brought version 2 to the model${when}`
    : `the host told the model the resource changed${when}, without its content`;
}

/**
 * What a command client's row says of itself: no model drives it, so the
 * context column and the two model-driven routes do not apply.
 */
export const COMMAND_NOTE =
  "no model: a fixed command sequence drives it, so no context to update, and the wait-tool and shell-probe routes (a model's calls) do not apply";

/**
 * What a library's app row says of itself: its program drives the library
 * with no model; the agent row, where the library has an agent loop, is
 * the one with a model.
 */
export const LIBRARY_APP_NOTE =
  "an app on the library (clients/programs/node/): no model drives it, so no context to update; the library's agent loop, where it has one, is its (agent) row";

/**
 * What a browser client's row says of itself: no model, a harness clicking
 * through the UI, and the level is what the UI did before any Refresh.
 */
export const BROWSER_NOTE =
  "no model: the harness clicked through the web UI in headless Chromium (connect, open the resource, Subscribe, wait past the update); the level is the UI's own, before any Refresh click";

/**
 * The separate note on a user's Refresh click: what the lab recorded after
 * it, which is never the client's own re-read.
 */
export function refreshNote(
  afterRefresh: NonNullable<RunRecord["afterRefresh"]>,
): string {
  return `after a user's Refresh click: level ${afterRefresh.labLevel}${
    afterRefresh.rereadAfterNotification
      ? " (version 2 re-read by that click, not by the client)"
      : " (the click re-read nothing the lab counts)"
  }`;
}

/**
 * What an editor row (VS Code) says of itself: how the harness drove it,
 * and that a re-read the lab counts is the editor's, never a model's.
 */
export const EDITOR_NOTE =
  "the harness opened test://review/status in VS Code's editor (F1, MCP: Browse Resources) in headless Chromium and waited past the update: a re-read the lab counts is the editor's, for the open file, not a model's, so it is no level 7";

/** What an editor row over stdio adds: who started the lab, where the level comes from. */
export const STDIO_EDITOR_NOTE =
  "the lab over stdio, started by VS Code itself (deno run -A --cached-only main.ts --stdio, its stderr to the run's log): the level is the verdict it printed when VS Code's Stop Server closed its stdin";

/**
 * Whether the chat's scripted model saw version 2 before it asked again
 * (level 7), judged only when its first request held version 1 alone: a
 * prompt sent after the update proves nothing.
 */
export function chatContextUpdated(
  transcript: TranscriptEntry[],
): boolean | null {
  const first = transcript.find((entry) => entry.readToolOffered !== undefined);
  if (first === undefined || first.versionsSeen.join() !== "1") return null;
  return observe(transcript).contextUpdated;
}

/** What VS Code's chat turn showed, for an editor row. */
export function chatNote(
  run: Pick<RunRecord, "mode" | "launchMode" | "transcript" | "editor">,
  contextUpdated: boolean | null,
): string {
  const unavailable = run.editor?.chatUnavailable;
  if (unavailable) {
    return `VS Code's chat took no turn: ${printableLine(unavailable, 300)}`;
  }
  if (launchedMode(run) === "stdio") {
    return "VS Code's chat: tried in the default (HTTP) rows, since it does not depend on the lab's transport";
  }
  const first = run.transcript.find((entry) =>
    entry.readToolOffered !== undefined
  );
  if (first === undefined) {
    return "VS Code's chat sent the scripted model no request with tools";
  }
  const custom =
    "VS Code's chat took the scripted model as a custom endpoint without a sign-in";
  if (contextUpdated === null) {
    return `${custom}; its first request held version(s) ${
      first.versionsSeen.join(", ") || "none"
    }, not version 1 alone, so it cannot say whether the update would have reached the model`;
  }
  if (contextUpdated) {
    return `${custom}; the resource went out attached at version 1, and the model's next request after the update held version 2 without the model asking: level 7 through the chat's attachment`;
  }
  const reread = run.transcript.findLast((entry) => entry.stage === "final");
  return `${custom}; the resource went out attached at version 1, and the model's next request after the update still held version 1 only: the chat does not refresh an attachment${
    reread?.versionsSeen.includes(2)
      ? ", so version 2 reached the model only when it read the resource itself (read_file)"
      : ""
  }`;
}

/** The notes an editor row (VS Code) ends with. */
export function editorNotes(
  run: Pick<RunRecord, "mode" | "launchMode" | "transcript" | "editor">,
  contextUpdated: boolean | null,
): string[] {
  const shown = run.editor?.shownAfterUpdate;
  return [
    EDITOR_NOTE,
    ...(launchedMode(run) === "stdio" ? [STDIO_EDITOR_NOTE] : []),
    ...(shown
      ? [`past the update the editor showed ${quotedOutput(shown)}`]
      : []),
    chatNote(run, contextUpdated),
  ];
}

/** One line saying what blocked the client (or that nothing did). */
export function rowNotes(
  run: RunRecord,
  labClient: ClientReport | undefined,
  contextUpdated: boolean | null,
): string {
  const notes: string[] = run.installNote ? [run.installNote] : [];
  if (run.outcome === "install-failed") {
    notes.push(
      `${run.installer ?? "npm install"} failed: ${
        run.detail ?? "unknown reason"
      }`,
    );
    return notes.join("; ");
  }
  if (run.outcome === "not-supported") {
    return `not run: ${run.detail ?? "unknown reason"}`;
  }
  if (run.outcome === "lab-failed") {
    notes.push(`harness: the lab did not start (${run.detail ?? ""})`);
    return notes.join("; ");
  }
  if (run.outcome === "timeout") notes.push(`timed out (${run.detail})`);
  if (run.outcome === "spawn-failed") {
    notes.push(`could not start: ${run.detail}`);
  }
  if (run.outcome === "exit-nonzero") {
    const line = errorLine(run.outputTail);
    notes.push(`${run.detail}${line ? `: ${line}` : ""}`);
  }
  if (labClient === undefined) {
    notes.push("never reached the lab");
  } else {
    notes.push(...deliveryNotes(run, labClient, contextUpdated));
  }
  if (labClient?.readVia === "tool") {
    notes.push("reads through the lab's get_review_status tool");
  }
  if (run.kind === "command") {
    const library = libraryOf(run.clientId);
    notes.push(
      !library ? COMMAND_NOTE : library.language
        ? LIBRARY_APP_NOTE.replace(
          "programs/node/",
          `programs/${library.language}/`,
        )
        : LIBRARY_APP_NOTE,
    );
    return notes.join("; ").replaceAll("\n", " ");
  }
  if (run.kind === "browser") {
    notes.push(BROWSER_NOTE);
    if (run.afterRefresh) notes.push(refreshNote(run.afterRefresh));
    return notes.join("; ").replaceAll("\n", " ");
  }
  if (run.kind === "editor") {
    notes.push(...editorNotes(run, contextUpdated));
    return notes.join("; ").replaceAll("\n", " ");
  }
  const fromModel = modelNote(run.transcript);
  if (fromModel) notes.push(fromModel);
  const notice = hostNoticeNote(hostNoticeFact(run, labClient));
  if (notice) notes.push(notice);
  if ((run.route ?? "native") !== "native") {
    notes.push(
      ...routeNotes(
        run,
        labClient,
        run.labReport ? probeLabLevel(run.labReport.clients) : null,
        contextUpdated,
      ),
    );
    return notes.join("; ").replaceAll("\n", " ");
  }
  if (contextUpdated === true) {
    notes.push("version 2 reached the agent's context before it asked again");
  } else if (contextUpdated === false && labClient && labClient.level >= 5) {
    notes.push("version 2 was not in the agent's context until it asked");
  }
  return notes.join("; ").replaceAll("\n", " ");
}

/**
 * Whether an update delivered to the client carried version 2's text: as
 * it asked (`embedResources`), or unasked (the lab's `--inline-content`).
 */
export function updateCarriedText(
  run: Pick<RunRecord, "labReport">,
  labClient: ClientReport,
): boolean {
  const unasked = (run.labReport?.scenario.inlineContent ?? "off") !== "off";
  return labClient.steps.deliveredInline === true ||
    unasked && labClient.steps.notificationDelivered;
}

/**
 * Whether the client re-read version 2 by itself: the lab's re-read for a
 * client no model drives; natively, one before the model asked (its own
 * read comes after its check); null where that cannot be told (another
 * route, or a stdio lab's report, which has no timeline).
 */
function clientReread(
  run: RunRecord,
  labClient: ClientReport,
): boolean | null {
  if (!labClient.steps.rereadAfterNotification) return false;
  if (run.kind !== undefined) return true;
  if ((run.route ?? "native") !== "native") return null;
  return rereadByItself(labClient, run.transcript);
}

/**
 * What the client did with the update, in the lab's words and the
 * transcript's: the step that stopped it, the text the update carried and
 * whether it stood in for a re-read, or a re-read only the model asked for.
 */
function deliveryNotes(
  run: RunRecord,
  labClient: ClientReport,
  contextUpdated: boolean | null,
): string[] {
  const notes = labClient.level < 6 ? [labClient.missing] : [];
  const reread = clientReread(run, labClient);
  if (labClient.steps.deliveredInline) {
    notes.push(
      `version 2 came inside the notification, as the client asked (embedResources)${
        reread === null
          ? ""
          : reread
          ? ", and the client re-read it anyway"
          : ", and the client did not re-read it"
      }`,
    );
    return notes;
  }
  if (!updateCarriedText(run, labClient)) {
    if (labClient.level >= 6 && reread === false) {
      notes.push(
        "notified, but read version 2 only when the model asked: the client did not re-read by itself",
      );
    }
    return notes;
  }
  notes.push(
    `the update carried version 2's text, unasked (--inline-content ${run.labReport?.scenario.inlineContent})`,
  );
  if (reread === false && contextUpdated !== null) {
    notes.push(
      contextUpdated
        ? "the client passed that text on to the model without a re-read"
        : "the client did not re-read by itself, nor pass the text on to the model",
    );
  }
  return notes;
}

/**
 * A catalog run's ladder: the lab's level per kind, and for tools the
 * model's side (`catalogToolsLevel`): level 5 when the new tool reached a
 * model request and the model called it. Null when the lab kept no
 * catalog record of the client.
 */
export function catalogRow(
  run: Pick<RunRecord, "kind" | "transcript">,
  labClient: ClientReport | undefined,
): CatalogRow | null {
  const lab = labClient?.catalog;
  if (!lab) return null;
  const seen = observe(run.transcript);
  // A command client or web UI has no model; VS Code's chat has one when
  // it sent the scripted model a request with tools.
  const newTool = run.kind === "command" || run.kind === "browser" ||
      run.kind === "editor" && seen.agentRequests === 0
    ? null
    : seen.newTool;
  const kinds: CatalogRow["kinds"] = {};
  for (const kind of CATALOG_KINDS) {
    const record = lab.kinds[kind];
    if (!record) continue;
    const step = kind === "tools"
      ? catalogToolsLevel(record, newTool)
      : { level: record.level, missing: record.missing };
    kinds[kind] = {
      added: record.added,
      labLevel: record.level,
      level: step.level,
      missing: step.missing,
    };
  }
  const levels = Object.values(kinds).map((kind) => kind.level);
  return {
    level: levels.length ? Math.min(...levels) : lab.level,
    kinds,
    newTool,
    updatesSent: labClient.updatesSent,
  };
}

/** What a catalog kind's level says: what stopped it, or what its 5 is. */
function catalogKindWhy(kind: string, record: CatalogKindRow): string {
  if (record.level === 5) {
    return `${record.added} reached a model request after the change, and the model called it`;
  }
  return printableLine(record.missing || `${kind}: no step missing`, 300);
}

/**
 * A catalog row's notes: why the catalog may never have changed, then each
 * kind's level and what stopped it.
 */
export function catalogNotes(
  run: Pick<RunRecord, "trigger">,
  catalog: CatalogRow | null,
): string[] {
  if (catalog === null) {
    return ["catalog: the lab kept no catalog record of the client"];
  }
  // The lab's own words say so for a kind it saw listed (level 1).
  const said = Object.values(catalog.kinds).some((kind) =>
    kind.missing.includes("did not change")
  );
  const notes = catalog.updatesSent === 0 && !said
    ? [
      `catalog: never changed, as the lab sent the client no update (trigger ${run.trigger}), and the change comes with the first`,
    ]
    : [];
  notes.push(
    `catalog ${catalogLevels(catalog)}: ${
      CATALOG_KINDS.flatMap((kind) => {
        const record = catalog.kinds[kind];
        return record
          ? [`${kind} ${record.level} (${catalogKindWhy(kind, record)})`]
          : [];
      }).join(", ")
    }`,
  );
  return notes;
}

/** `n thing` or `n things` (or another plural ending). */
function counted(count: number, thing: string, plural = "s"): string {
  return `${count} ${thing}${count === 1 ? "" : plural}`;
}

/**
 * What a world mode's lab did to the client and what the client did next,
 * from the run's lab log (`labLog`) and the lab's record of the client:
 * whether it opened its stream again after the cut and got the update that
 * fell after it; which era it settled on against a one-era lab, after how
 * many refused requests of the other; how often it asked for a refused
 * watch. None for inline-content (its notes say what the text did) and
 * other modes.
 */
export function worldNotes(
  run: Pick<RunRecord, "mode" | "labLog" | "labReport">,
  labClient: ClientReport | undefined,
): string[] {
  if (run.mode === "inline-content" || !isWorldMode(run.mode)) return [];
  const log = run.labLog;
  if (!log) return ["the lab left no log to read what happened from"];
  const scenario = run.labReport?.scenario;
  if (run.mode === "cut") return cutNotes(log, labClient, scenario);
  if (run.mode === "refused") {
    if (log.watchesRefused === 0) {
      return [
        "never asked for a watch (no subscribe, no listen): nothing to refuse",
      ];
    }
    return [
      log.watchesRefused === 1
        ? "its one watch was refused (Subscription limit reached), and it did not ask again"
        : `asked for a watch ${log.watchesRefused} times, each refused (Subscription limit reached)`,
    ];
  }
  const era = run.mode === "2025-only" ? "2025" : "2026-07-28";
  const refusals = counted(log.eraRefusals, "request");
  // Refused for its era, a client is in the lab's report at level 0.
  if (!labClient || labClient.level === 0) {
    // Else the row's notes say it never reached the lab.
    return log.eraRefusals > 0
      ? [
        `could not talk to a ${era}-only server: the lab refused ${refusals} of the other era`,
      ]
      : [];
  }
  return [
    log.eraRefusals > 0
      ? `fell back to ${era} after the lab refused ${refusals} of the other era`
      : `spoke ${era}, the lab's one era, from its first request`,
  ];
}

/** Mode cut's notes: the streams cut, those opened again, the update after. */
function cutNotes(
  log: LabLogFacts,
  labClient: ClientReport | undefined,
  scenario: LabReport["scenario"] | undefined,
): string[] {
  const lifetime = `${scenario?.streamLifetimeSeconds ?? "?"} s`;
  if (log.streamsCut === 0) {
    return [
      log.streamsOpened === 0
        ? "opened no stream the lab could cut (no GET stream, no listen)"
        : `the lab cut none of its ${
          counted(log.streamsOpened, "stream")
        }: each ended before ${lifetime}`,
    ];
  }
  const cut = `the lab ended ${
    counted(log.streamsCut, "stream")
  } at ${lifetime} (${scenario?.streamEnd ?? "graceful"})`;
  const delivered = labClient?.steps.notificationDelivered === true;
  if (log.reopened === 0) {
    return [
      `${cut}; the client never opened one again${
        delivered ? "" : ": the update after the cut was lost"
      }`,
    ];
  }
  return [
    `${cut}; the client opened ${
      counted(log.reopened, "stream")
    } again, the first ${log.reopenedAfterSeconds} s after the cut${
      delivered
        ? ", and got the update after the cut"
        : ", and still missed the update"
    }`,
  ];
}

export function rowFromRun(run: RunRecord): MatrixRow {
  const labClient = run.labReport
    ? mainLabClient(run.labReport.clients)
    : undefined;
  const route = run.route ?? "native";
  // With no update sent, there was nothing to bring into the context (on
  // the other routes the route's call asks for the update itself).
  // A command client has no model, so no context to judge; VS Code's chat
  // is judged only when it sent version 1 first.
  const contextUpdated = run.kind === "editor"
    ? chatContextUpdated(run.transcript)
    : run.kind !== undefined ||
        route === "native" && labClient !== undefined &&
          labClient.updatesSent === 0
    ? null
    : observe(run.transcript).contextUpdated;
  const steps = labClient?.steps;
  const labLevel = labClient?.level ?? 0;
  const notificationDelivered = steps?.notificationDelivered ?? false;
  const notice = hostNoticeFact(run, labClient);
  const catalog = run.mode === "catalog" && run.labReport
    ? catalogRow(run, labClient)
    : undefined;
  const notes = rowNotes(run, labClient, contextUpdated);
  return {
    clientId: run.clientId,
    client: run.displayName,
    npmPackage: run.npmPackage,
    version: run.version,
    mode: run.mode,
    ...(run.launchMode ? { launchMode: run.launchMode } : {}),
    trigger: run.trigger,
    route,
    longWait: run.longWait ?? false,
    progressCheck: run.progressCheck ?? null,
    ...(run.longWait || run.progressCheck
      ? { delaySeconds: run.delaySeconds }
      : {}),
    ranAt: run.ranAt,
    durationSeconds: run.durationSeconds,
    outcome: run.outcome,
    labVersion: run.labReport?.lab ?? null,
    labClient: labClient ? `${labClient.name}/${labClient.version}` : null,
    era: labClient?.era ?? null,
    protocolVersion: labClient?.protocolVersion ?? null,
    connected: steps?.connected ?? false,
    listed: steps?.listed ?? false,
    readV1: steps?.readV1 ?? false,
    subscribed: steps?.subscribed ?? false,
    notificationDelivered,
    rereadAfterNotification: steps?.rereadAfterNotification ?? false,
    deliveredInline: steps?.deliveredInline ?? false,
    contextUpdated,
    hostNotice: notice.reached,
    hostNoticeSeconds: notice.seconds,
    labLevel,
    waitTool: route === "wait-tool" ? labClient?.waitTool ?? null : null,
    probeLevel: route === "shell-probe" && run.labReport
      ? probeLabLevel(run.labReport.clients)
      : null,
    level: rowLevel(labLevel, notificationDelivered, contextUpdated, route),
    notes: [
      notes,
      ...worldNotes(run, labClient),
      ...catalog === undefined ? [] : catalogNotes(run, catalog),
    ].filter(Boolean).join("; "),
    ...(catalog === undefined ? {} : { catalog }),
    evidence: evidenceLink(run),
    evidenceKind: evidenceKindOf(run),
  };
}

/** The routes in the order the matrix lists them. */
const ROUTE_ORDER: Route[] = ["native", "wait-tool", "shell-probe"];

/**
 * New rows replace old rows of the same client, mode (with a catalog
 * row's launch mode: `modeLabel`), route and trigger.
 */
export function mergeRows(
  previous: MatrixRow[],
  fresh: MatrixRow[],
  order: string[],
): MatrixRow[] {
  // Rows written before routes existed are native.
  const routeOf = (row: MatrixRow) => row.route ?? "native";
  const checkRank = (row: MatrixRow) =>
    row.progressCheck === "progress"
      ? 1
      : row.progressCheck === "no-progress"
      ? 2
      : 0;
  const key = (row: MatrixRow) =>
    `${row.clientId}|${modeLabel(row)}|${routeOf(row)}|${row.trigger}|${
      row.longWait ? "long" : ""
    }|${row.progressCheck ?? ""}`;
  const merged = new Map(previous.map((row) => [key(row), row]));
  for (const row of fresh) merged.set(key(row), row);
  const rank = (row: MatrixRow) => {
    const index = order.indexOf(row.clientId);
    return index < 0 ? order.length : index;
  };
  const modeRank = (mode: ModeId) => MODES.indexOf(mode);
  // Catalog rows in the order of their launch modes, as the modes' rows.
  const launchRank = (row: MatrixRow) =>
    row.mode === "catalog" ? modeRank(row.launchMode ?? "default") : 0;
  const triggerRank = (trigger: Trigger) => trigger === "subscribe" ? 0 : 1;
  return [...merged.values()].sort((a, b) =>
    rank(a) - rank(b) || a.clientId.localeCompare(b.clientId) ||
    modeRank(a.mode) - modeRank(b.mode) || launchRank(a) - launchRank(b) ||
    ROUTE_ORDER.indexOf(routeOf(a)) - ROUTE_ORDER.indexOf(routeOf(b)) ||
    Number(a.longWait ?? false) - Number(b.longWait ?? false) ||
    checkRank(a) - checkRank(b) ||
    triggerRank(a.trigger) - triggerRank(b.trigger)
  );
}

const MARK = (reached: boolean) => reached ? "✅" : "❌";

/**
 * The Re-read v2 cell: "inline" where version 2 came inside the
 * notification as the client asked (its Notes say whether it re-read too).
 */
function rereadCell(row: MatrixRow): string {
  return row.deliveredInline ? "inline" : MARK(row.rereadAfterNotification);
}

/** The steps a row marks, in the lab's order, as the matrix titles them. */
const STEP_TITLES: [keyof StepFields, string][] = [
  ["connected", "connected"],
  ["listed", "listed"],
  ["readV1", "read v1"],
  ["subscribed", "subscribed"],
  ["notificationDelivered", "notified"],
  ["rereadAfterNotification", "re-read v2"],
];

/**
 * What a world mode takes from every client, so no break: the level it
 * allows at most (refused watches stop the ladder at 3, read version 1)
 * and the steps it may cost (the re-read the inline text stands in for; a
 * refused watch's subscribe and all it would have brought).
 */
const WORLD_COSTS: Record<
  WorldMode,
  { ceiling: number; steps: (keyof StepFields)[] }
> = {
  "inline-content": { ceiling: 7, steps: ["rereadAfterNotification"] },
  cut: { ceiling: 7, steps: [] },
  "2026-07-28-only": { ceiling: 7, steps: [] },
  "2025-only": { ceiling: 7, steps: [] },
  refused: {
    ceiling: 3,
    steps: ["subscribed", "notificationDelivered", "rereadAfterNotification"],
  },
};

/**
 * How a world mode's row compares with its default row (`undefined`:
 * none): it broke where it did not complete where the default row did,
 * fell below the default's level (or the mode's ceiling, if lower), or
 * lost a step the mode does not cost.
 */
export function versusDefault(
  row: MatrixRow & { mode: WorldMode },
  defaultRow: MatrixRow | undefined,
): VersusDefault {
  if (defaultRow === undefined) {
    return { defaultLevel: null, differences: [], broke: false };
  }
  const lost = STEP_TITLES.filter(([step]) => defaultRow[step] && !row[step]);
  const gained = STEP_TITLES.filter(([step]) => !defaultRow[step] && row[step]);
  const worseOutcome = defaultRow.outcome === "completed" &&
    row.outcome !== "completed";
  const { ceiling, steps } = WORLD_COSTS[row.mode];
  return {
    defaultLevel: defaultRow.level,
    differences: [
      ...(row.level === defaultRow.level
        ? []
        : [`level ${row.level} (default ${defaultRow.level})`]),
      ...(lost.length
        ? [`lost ${lost.map(([, title]) => title).join(", ")}`]
        : []),
      ...(gained.length
        ? [`gained ${gained.map(([, title]) => title).join(", ")}`]
        : []),
      ...(row.outcome === defaultRow.outcome
        ? []
        : [`ended ${row.outcome} (default ${defaultRow.outcome})`]),
    ],
    broke: worseOutcome || row.level < Math.min(defaultRow.level, ceiling) ||
      lost.some(([step]) => !steps.includes(step)),
  };
}

/** Whether a row is of a world mode (`WORLD_MODES`). */
function isWorldRow(row: MatrixRow): row is MatrixRow & { mode: WorldMode } {
  return isWorldMode(row.mode);
}

/**
 * Whether a world mode's row can be held to its default row: not when the
 * client never ran (no install, no lab); in mode inline-content, not when
 * it never reached the lab, whose extra fields it then never saw. In the
 * other modes a client the lab's world kept out (a one-era lab refusing
 * its `initialize`) broke there.
 */
function comparable(row: MatrixRow & { mode: WorldMode }): boolean {
  if (row.mode === "inline-content") return row.labClient !== null;
  return !["install-failed", "lab-failed", "not-supported"].includes(
    row.outcome,
  );
}

/**
 * The rows with each world mode's row compared with its client's default
 * row under the same route and trigger: recomputed whenever the matrix is
 * written, so a fresher default row counts.
 */
export function withDefaultComparison(rows: MatrixRow[]): MatrixRow[] {
  const plain = (row: MatrixRow) => !row.longWait && !row.progressCheck;
  return rows.map((row) => {
    if (!isWorldRow(row)) return row;
    const { versusDefault: _stale, ...fresh } = row;
    if (!comparable(row)) return fresh;
    const defaultRow = rows.find((other) =>
      other.clientId === row.clientId && other.mode === "default" &&
      (other.route ?? "native") === row.route &&
      other.trigger === row.trigger && plain(other)
    );
    return { ...fresh, versusDefault: versusDefault(row, defaultRow) };
  });
}

/** What broke a world mode's client, as its Notes say it. */
const BROKE_ON: Record<WorldMode, string> = {
  "inline-content": "broke on the extra fields",
  cut: "broke on the cut stream",
  "2026-07-28-only": "broke against a 2026-07-28-only server",
  "2025-only": "broke against a 2025-only server",
  refused: "broke on the refusal",
};

/** What a world mode's row's Notes say of its default row. */
export function versusDefaultNote(
  versus: VersusDefault,
  mode: WorldMode,
): string {
  if (versus.defaultLevel === null) {
    return "no default row under this route and trigger to compare with";
  }
  if (versus.differences.length === 0) {
    return `as in its default row: level ${versus.defaultLevel}, the same steps`;
  }
  return `${
    versus.broke
      ? `${BROKE_ON[mode]}, against its default row`
      : "against its default row, no break"
  }: ${versus.differences.join(", ")}`;
}

/** A row's Notes cell: its run's notes, and a world mode's comparison. */
function notesCell(row: MatrixRow): string {
  const notes = [
    row.notes,
    isWorldRow(row) && row.versusDefault &&
    versusDefaultNote(row.versusDefault, row.mode),
  ].filter(Boolean).join("; ");
  return notes || "—";
}

function eraCell(row: MatrixRow): string {
  if (row.era === null) return "—";
  return row.era === row.protocolVersion
    ? row.era
    : `${row.era} (${row.protocolVersion})`;
}

/** The Catalog cell: a catalog row's levels per kind, "—" on other rows. */
export function catalogCell(row: MatrixRow): string {
  if (row.catalog === undefined) return "—";
  return row.catalog === null ? "no record" : catalogLevels(row.catalog);
}

function contextCell(row: MatrixRow): string {
  if (row.contextUpdated === null) return "—";
  return MARK(row.contextUpdated);
}

/**
 * What the Route column means, in two sentences (above the table, since a
 * header cell cannot hold them).
 */
export const ROUTE_TEXT =
  "Route: `native` is the client as it ships, left to subscribe and bring the update in by itself, while `wait-tool` has the model call the lab's blocking `wait_for_review_update` tool after reading version 1, and `shell-probe` has it run the lab's probe (`probe.ts --json`) through the client's own shell tool. On those two routes level 7 means the route's call brought version 2 to the model, which the lab's report confirms (the wait tool's level 6 for the client, or the probe client's level 6), and Notes say how long the client let the call block.";

function routeCell(row: MatrixRow): string {
  const route = row.route ?? "native";
  if (row.progressCheck) {
    return `${route} (tool timeout ${PROGRESS_CHECK.toolTimeoutSeconds} s, update after ${
      row.delaySeconds ?? "?"
    } s${row.progressCheck === "no-progress" ? ", no progress" : ""})`;
  }
  return row.longWait
    ? `${route} (long wait, ${row.delaySeconds ?? "?"} s)`
    : route;
}

/** The May 2026 hand-run round, kept as history below the measured matrix. */
export const HISTORY = `## History: the original lab's hand-run round (May 2026)

Before this harness, the original lab's matrix was filled in by hand, one
client at a time, against a lab that served the resource and no tools. No
client got past level 3 natively (read version 1): none subscribed, none opened
a stream that would carry the update, none re-read the resource after it
changed. Codex CLI and Crush refused the server outright, because its
\`tools/list\` answered \`-32601\` (method not found); the lab now answers every
list method with an empty list for that reason. Those runs recorded no
versions, prompts or reports, so they are kept here as context, not as
comparable rows.`;

/** What mode catalog and the Catalog column are, above the tables. */
export const CATALOG_TEXT =
  "Mode `catalog` is each client launched in each of its modes, one run per mode, the Mode column naming it (`catalog (default)`, `catalog (stdio)`), natively, against a lab whose tools, prompts and resources each gain an item at the client's first update (`--catalog-change all`: the tool `get_review_comments`, the prompt `summarize_review`, the resource `test://review/comments`), under trigger read for a client a model drives and subscribe for the others. Its Catalog cell gives each kind's level: 0 never listed, 1 listed, 2 notified of the change, 3 listed again and got the new item, 4 used it (the lab's levels), 5 the new tool reached a model request after the change and the model called it (the scripted model's side, tools only); its Notes say what stopped each kind.";

/** What the world modes are, above the tables. */
export const WORLD_TEXT =
  `The world modes run each client as in its default mode, natively under trigger subscribe, against a lab set as some servers in the world are, one row each: \`cut\` ends every GET stream and listen ${STREAM_CUT.lifetimeSeconds} s after it opened, ${STREAM_CUT.end}ly (the body's clean end, a listen's result last), with the update at ${STREAM_CUT.delaySeconds} s, after the cut (\`--stream-lifetime ${STREAM_CUT.lifetimeSeconds} --delay ${STREAM_CUT.delaySeconds}\`); \`2026-07-28-only\` and \`2025-only\` serve one era and answer the other as such servers do (\`--era\`); \`refused\` refuses every watch with the SDK's \`Subscription limit reached\` (\`--max-watches 0\`). Their Notes say what the lab's log shows: whether the client opened its stream again after the cut and got the update, which era it settled on after how many refused requests, how often it asked for a refused watch; then how the row compares with the client's default row. A refused watch stops the ladder at 3 (read version 1), so a refused row below its default is no break unless it fell below 3.`;

/** The picture of the summary, beside the matrix in `results/`. */
export const SUMMARY_SVG = "compatibility-summary.svg";

/**
 * A citation as a link to the lines on GitHub, or a package's file and line
 * (no link: npm serves the tarball, not its files).
 */
function citationLink(citation: SourceCitation | PackageCitation): string {
  if ("package" in citation) return packageLine(citation);
  const [start, end = start] = citation.lines.split("-");
  return `[${citation.repository}@${
    citation.commit.slice(0, 8)
  } ${citation.path}:${citation.lines}](https://github.com/${citation.repository}/blob/${citation.commit}/${citation.path}#L${start}-L${end})`;
}

/** A measured row's evidence: the kind, then its file. */
function evidenceCell(row: MatrixRow): string {
  return row.evidenceKind === "documentation"
    ? `documentation: [why](${row.evidence})`
    : `run: [report](${row.evidence})`;
}

/**
 * A host read from source, as a full-matrix row without levels: its
 * citations' links as written (the catalog's test holds them to no pipe).
 */
function citedMatrixRow(host: CitedHost): string {
  const notes = [
    `subscribes: ${host.subscribes}`,
    `on notifications/resources/updated: ${host.onUpdated}`,
    `not run here: ${host.whyNotRun}`,
  ].join("; ");
  return `| ${
    [
      cell(host.displayName),
      cell(host.version ?? "—"),
      "—",
      "—",
      "—",
      "—",
      ...Array(7).fill("—"),
      "—",
      "—",
      cell(notes),
      `source, not run: ${host.citations.map(citationLink).join(", ")}`,
    ].join(" | ")
  } |`;
}

export function matrixMarkdown(document: MatrixDocument): string {
  const { cited, requests } = document;
  const summary = summaryRows({ rows: document.rows, cited, requests });
  const lines = [
    "# Compatibility matrix",
    "",
    `Generated by \`deno task clients\` on ${
      document.generatedAt.slice(0, 10)
    } with lab ${
      document.labVersion ?? "(unknown)"
    }. Every client ran headless against a scripted model on loopback (no network, no API key), on each route under both update triggers, with the lab's update delay at ${document.delaySeconds} s (a long-wait row says its own). The MCP Inspector's command clients (mcpdo, the Inspector CLI) have no model: a fixed command sequence drove them, natively only. Its web UI has none either: the harness clicked through it in headless Chromium, and its rows give the level before a user's Refresh click, with the level after that click in a separate note. Mode \`inline-content\` is each client as in its default mode, natively under trigger subscribe, against a lab that puts version 2's text in every update notification unasked (\`--inline-content sep-3119\`); its Notes compare it with the default row. A Re-read v2 cell says \`inline\` where version 2 came inside the notification because the client asked for it (\`embedResources\`, SEP-3119). [How to read a row and re-run](README.md).`,
    "",
    "Levels: 1 connected, 2 listed, 3 read version 1, 4 subscribed (or listened for the resource), 5 a change notification delivered, 6 re-read version 2 after it, 7 the update reached the agent's context without the model asking.",
    "",
    WORLD_TEXT,
    "",
    CATALOG_TEXT,
    "",
    ...summaryMarkdown(summary, SUMMARY_SVG),
    "",
    ...librariesMarkdown(document.libraries),
    "",
    "## Every run",
    "",
    ROUTE_TEXT,
    "",
    "| Client | Version | Mode | Route | Trigger | Era (protocol) | Connected | Listed | Read v1 | Subscribed / listened | Notified | Re-read v2 | Context updated | Level | Catalog | Notes | Evidence |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  // Text goes through the lab's cell; the harness's own Markdown (the
  // trigger's code span, the marks, the evidence link) is written as it is.
  for (const row of document.rows) {
    lines.push(
      `| ${
        [
          cell(row.client),
          cell(row.version),
          cell(modeLabel(row)),
          cell(routeCell(row)),
          `\`${row.trigger}\``,
          cell(eraCell(row)),
          MARK(row.connected),
          MARK(row.listed),
          MARK(row.readV1),
          MARK(row.subscribed),
          MARK(row.notificationDelivered),
          rereadCell(row),
          contextCell(row),
          String(row.level),
          cell(catalogCell(row)),
          cell(notesCell(row)),
          evidenceCell(row),
        ].join(" | ")
      } |`,
    );
  }
  lines.push(...cited.map(citedMatrixRow));
  lines.push(
    "",
    "Rows whose evidence is `source, not run` were read from each host's own source at the commit linked; the harness cannot run them here (each row says why). Goose is one: check it by hand with [the verification guide](../docs/verification-guide.md#goose-not-on-npm).",
    "",
    HISTORY,
    "",
  );
  return lines.join("\n");
}

/** Lowers every heading outside code fences by `levels`. */
export function demoteHeadings(markdown: string, levels: number): string {
  let inFence = false;
  return markdown.split("\n").map((line) => {
    if (/^(`{3,}|~{3,})/.test(line)) inFence = !inFence;
    if (!inFence && /^#{1,6} /.test(line)) return "#".repeat(levels) + line;
    return line;
  }).join("\n");
}

function transcriptTable(transcript: TranscriptEntry[]): string[] {
  if (transcript.length === 0) {
    return ["The client sent the scripted model no request."];
  }
  const start = Date.parse(transcript[0].at);
  const firstNotice = transcript.findIndex((entry) => entry.hostNotice);
  const lines = [
    "| # | At (s) | Request | Stage | Versions seen | Context updated | Answer |",
    "| --- | --- | --- | --- | --- | --- | --- |",
  ];
  transcript.forEach((entry, index) => {
    lines.push(
      `| ${
        [
          String(index + 1),
          ((Date.parse(entry.at) - start) / 1000).toFixed(1),
          `${entry.method} ${entry.path}${entry.stream ? " (stream)" : ""}${
            index === firstNotice
              ? ", the first with the host's notice that the resource changed"
              : ""
          }${
            entry.newTool === undefined
              ? ""
              : `, offered the new tool as ${printableLine(entry.newTool, 100)}`
          }`,
          entry.stage,
          entry.versionsSeen.join(", ") || "—",
          entry.contextUpdated === undefined
            ? "—"
            : entry.contextUpdated
            ? "yes"
            : "no",
          `${entry.answer}${
            entry.waitSeconds ? ` after ${entry.waitSeconds} s` : ""
          }${entry.note ? ` (${printableLine(entry.note, 1000)})` : ""}${
            entry.routeResult === undefined
              ? ""
              : ` (the call returned ${quotedOutput(entry.routeResult)})`
          }`,
        ].map(cell).join(" | ")
      } |`,
    );
  });
  return lines;
}

/**
 * A command client's invocations: when each started, how it ended and what
 * it printed (`$LAB_URL` is the run's lab, `$HOME` its isolated home).
 */
export function commandTable(steps: CommandStepRecord[]): string[] {
  if (steps.length === 0) return ["No command ran."];
  const lines = [
    "| # | At (s) | Command | Outcome | Took (s) | Output |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  steps.forEach((step, index) => {
    lines.push(
      `| ${
        [
          String(index + 1),
          step.startedAt.toFixed(1),
          cell(step.command),
          cell(
            `${step.outcome}${
              step.exitCode === null ? "" : ` (exit ${step.exitCode})`
            }${step.detail ? `, ${step.detail}` : ""}`,
          ),
          step.durationSeconds.toFixed(1),
          cell(
            step.outputTail.split("\n").filter((line) =>
              !line.startsWith("[mcp-inspector]")
            ).join(" / ").slice(0, 300) || "—",
          ),
        ].join(" | ")
      } |`,
    );
  });
  return lines;
}

/**
 * A library app's output, each line whole up to 300 characters (its fact
 * lines, server text already escaped by the program), as a block: the
 * table's cell is too short.
 */
function appOutput(steps: CommandStepRecord[]): string[] {
  const output = steps.flatMap((step) =>
    step.outputTail ? step.outputTail.split("\n") : []
  ).map((line) => printableLine(line, 300)).join("\n");
  return output
    ? [
      "### The app's output",
      "",
      "```text",
      output.replaceAll("```", "'''"),
      "```",
      "",
    ]
    : [];
}

/**
 * A world mode's evidence from the lab's log: the counts its row's Notes
 * come from, and the lines counted.
 */
export function labLogSection(log: LabLogFacts): string[] {
  return [
    "### What the lab's log showed",
    "",
    `${
      counted(log.streamsOpened, "stream")
    } opened (GET streams and listens), ${log.streamsCut} ended by the lab at their lifetime, ${log.reopened} opened after the first cut${
      log.reopenedAfterSeconds === null
        ? ""
        : ` (the first ${log.reopenedAfterSeconds} s after it)`
    }; ${counted(log.watchesRefused, "watch", "es")} refused; ${
      counted(log.eraRefusals, "request")
    } refused before the lab first knew a client (in a one-era lab, the other era's).${
      log.lines.length ? " The lines counted:" : ""
    }`,
    "",
    ...log.lines.length
      ? [
        "```text",
        ...log.lines.map((line) => line.replaceAll("```", "'''")),
        "```",
        "",
      ]
      : [],
  ];
}

/** The evidence file for one client, mode and route: a section per trigger. */
export function evidenceMarkdown(runs: RunRecord[]): string {
  const first = runs[0];
  const route = first.route ?? "native";
  const lines = [
    `# ${first.displayName} ${first.version}, mode ${modeLabel(first)}${
      route === "native" ? "" : `, route ${route}`
    }`,
    "",
    `\`${first.npmPackage}@${first.version}\`, run by \`deno task clients${
      route === "native" ? "" : ` --route ${route}`
    }${
      isWorldMode(first.mode) || first.mode === "catalog"
        ? ` --mode ${first.mode}`
        : ""
    } ${first.clientId}\` on ${first.ranAt.slice(0, 10)}.`,
    "",
  ];
  if (first.command && first.kind === undefined) {
    lines.push("Command:", "", "```sh", first.command, "```", "");
  }
  for (const run of runs) {
    const row = rowFromRun(run);
    lines.push(
      `## Trigger ${sectionTitle(run)}`,
      "",
      `Outcome: ${run.outcome}${
        run.exitCode === null ? "" : ` (exit ${run.exitCode})`
      } after ${run.durationSeconds} s. Level ${row.level} (lab: ${row.labLevel}). ${
        row.notes ? `Notes: ${row.notes}.` : ""
      }`,
      "",
      ...(run.kind === "browser" || run.kind === "editor"
        ? [
          "### Page actions",
          "",
          ...commandTable(run.steps ?? []),
          "",
          ...(run.screenshots ?? []).flatMap((shot) => {
            const name = shot.path.split("/").at(-1) ?? shot.path;
            return [`![${shot.caption}](${name})`, ""];
          }),
          ...(run.kind === "editor" && run.transcript.length > 0
            ? [
              "### Scripted model transcript (VS Code's chat)",
              "",
              ...transcriptTable(run.transcript),
              "",
            ]
            : []),
          ...(run.daemon ? [`Cleanup: ${run.daemon}.`, ""] : []),
        ]
        : run.kind === "command"
        ? [
          "### Commands",
          "",
          ...commandTable(run.steps ?? []),
          "",
          ...(run.daemon ? [`Daemon: ${run.daemon}.`, ""] : []),
          ...(libraryOf(run.clientId) ? appOutput(run.steps ?? []) : []),
        ]
        : [
          "### Scripted model transcript",
          "",
          ...transcriptTable(run.transcript),
          "",
          ...(run.daemon ? [`Daemon: ${run.daemon}.`, ""] : []),
        ]),
    );
    if (run.outcome !== "completed" && run.outputTail && !run.steps) {
      lines.push(
        "### Client output (last lines)",
        "",
        "```text",
        run.outputTail.replaceAll("```", "'''"),
        "```",
        "",
      );
    }
    if (run.labLog) lines.push(...labLogSection(run.labLog));
    lines.push("### Lab report", "");
    lines.push(
      ...(run.kind === "browser"
        ? ["Before the Refresh click (the row's level):", ""]
        : []),
      run.labReportMarkdown
        ? demoteHeadings(run.labReportMarkdown.trim(), 3)
        : "The lab produced no report.",
      "",
    );
    if (run.afterRefresh) {
      lines.push(
        "### Lab report after the user's Refresh click",
        "",
        `${refreshNote(run.afterRefresh)}.`,
        "",
        run.afterRefresh.labReportMarkdown
          ? demoteHeadings(run.afterRefresh.labReportMarkdown.trim(), 3)
          : "The lab produced no report.",
        "",
      );
    }
  }
  return lines.join("\n");
}

/**
 * Keeps the sections of triggers this run did not cover (`--trigger read`
 * leaves the `subscribe` evidence in place), so every row's link still lands.
 */
export function mergeEvidence(previous: string, fresh: string): string {
  const split = (text: string) => {
    const [header, ...sections] = text.split(/\n(?=## Trigger )/);
    return {
      header,
      sections: new Map(sections.map((section) => [
        section.slice("## Trigger ".length).split("\n")[0].trim(),
        section,
      ])),
    };
  };
  const old = split(previous);
  const next = split(fresh);
  // The plain triggers first, then the long waits and checks by name.
  const rank = (title: string) => {
    const plain = ["subscribe", "read"].indexOf(title);
    return plain < 0 ? 2 : plain;
  };
  const triggers = [
    ...new Set([...old.sections.keys(), ...next.sections.keys()]),
  ]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return [
    next.header,
    ...triggers.map((trigger) =>
      next.sections.get(trigger) ?? old.sections.get(trigger) ?? ""
    ),
  ].map((part) => part.replace(/\n+$/, "")).join("\n\n") + "\n";
}
