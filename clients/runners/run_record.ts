/**
 * What every kind of client run produces, as plain data: the record the
 * agent, command and browser runners return and the matrix turns into rows,
 * and the options they all take.
 *
 * @module
 */

import type { AnyClient, ClientDefinition, ModeId } from "../catalog/types.ts";
import type { LabLogFacts, ModeLabSettings } from "../support/run_lab.ts";
import type { ClientReport, LabReport } from "../../main.ts";
import type { Route } from "../model/decide.ts";
import type { ProcessOutcome } from "../support/process.ts";
import type { BuildRecipe } from "../support/build_once.ts";
import type { TranscriptEntry } from "../model/scripted_model.ts";

export type Trigger = "subscribe" | "read";

export type Outcome =
  | ProcessOutcome
  | "install-failed"
  | "lab-failed"
  | "not-supported";

/**
 * A progress check of the wait-tool route: with the lab's progress
 * notifications, or without (the control).
 */
export type ProgressCheck = "progress" | "no-progress";

/** What every kind of client run is given: the lab, the folder, the bounds. */
export interface BaseRunOptions {
  labMainPath: string;
  /** Where the run's home, logs and output go (wiped first). */
  runDir: string;
  binPath: string;
  delaySeconds: number;
  timeoutSeconds: number;
  /** What the run's mode sets in its lab (`labSettingsOf`); the defaults when absent. */
  labSettings?: ModeLabSettings;
  /**
   * A catalog run's launch mode: the client starts in it (over stdio, in
   * its era, with its control) rather than in the run's mode.
   */
  launchMode?: ModeId;
  /** Keep the run's home, work and tmp folders (for debugging a client). */
  keepHome?: boolean;
}

/** Everything a run produced, as plain data. */
export interface RunRecord {
  clientId: string;
  displayName: string;
  npmPackage: string;
  version: string;
  mode: ModeId;
  /** A catalog run's launch mode (`ModeOfRun`); absent on other runs. */
  launchMode?: ModeId;
  trigger: Trigger;
  route: Route;
  /** A long-wait run of the wait-tool route (see `RunOptions.longWait`). */
  longWait: boolean;
  /** A progress-check run (see `RunOptions.progressCheck`), else null. */
  progressCheck: ProgressCheck | null;
  /**
   * On a `no-progress` check, how many of the client's requests carried a
   * progressToken that was removed (evidence that the client sends one).
   */
  progressTokensRemoved?: number;
  /**
   * On a `progress` check, how many of the client's tool calls carried a
   * progressToken (none: the lab had no token to send progress with).
   */
  progressTokensSent?: number;
  /** The lab's update delay in this run. */
  delaySeconds: number;
  ranAt: string;
  durationSeconds: number;
  outcome: Outcome;
  exitCode: number | null;
  /** Why the run did not complete, in a few words (install error, crash text). */
  detail?: string;
  /** The command, with the prompt shortened. */
  command: string;
  labReport: LabReport | null;
  labReportMarkdown: string | null;
  /**
   * A world mode's run (`WORLD_MODES`): the streams, cuts and refusals its
   * lab log shows; absent on other runs and where the lab left no log.
   */
  labLog?: LabLogFacts;
  transcript: TranscriptEntry[];
  /** The client's last output lines, for the evidence file. */
  outputTail: string;
  /**
   * `command` for a client no model drives (see `command.ts`),
   * `browser` for a web UI the harness clicks through (`browser.ts`),
   * `editor` for VS Code, whose editor the harness drives and whose chat
   * meets the scripted model (`code_server.ts`).
   */
  kind?: "command" | "browser" | "editor";
  /** A command client's invocations, or a browser client's page actions, in order. */
  steps?: CommandStepRecord[];
  /**
   * A browser client's run after the user's Refresh click: the lab's level
   * then (`labReport` above is the lab's report before the click, so the
   * row's level is the client's own) and what the page showed.
   */
  afterRefresh?: {
    labLevel: number;
    rereadAfterNotification: boolean;
    labReportMarkdown: string | null;
  };
  /** A browser client's screenshots: what each shows, and the PNG file. */
  screenshots?: { caption: string; path: string }[];
  /**
   * An editor run: what the editor showed past the lab's update, and why its
   * chat turn did not happen, when it did not (the turn's model requests
   * are in `transcript`).
   */
  editor?: { shownAfterUpdate: string | null; chatUnavailable?: string };
  /** What the harness did about a daemon the client left behind. */
  daemon?: string;
  /** How the client was installed, when not as published (`PlatformBinary`). */
  installNote?: string;
  /** The command whose failure an install-failed row quotes, when not npm's. */
  installer?: Installer;
}

/** The command an install-failed row quotes, when not npm install. */
export type Installer = "go install" | "pip install" | BuildRecipe["tool"];

/** One invocation of a command client, as evidence. */
export interface CommandStepRecord {
  /** Seconds from the run's start. */
  startedAt: number;
  command: string;
  outcome: Outcome;
  exitCode: number | null;
  detail?: string;
  durationSeconds: number;
  outputTail: string;
}

/** What a run is of: the fields every record of it starts with. */
export type RunHeader = Pick<
  RunRecord,
  | "clientId"
  | "displayName"
  | "npmPackage"
  | "version"
  | "mode"
  | "launchMode"
  | "trigger"
  | "route"
  | "longWait"
  | "progressCheck"
  | "delaySeconds"
  | "ranAt"
  | "installNote"
>;

export function runHeader(
  client:
    & Pick<AnyClient, "id" | "displayName" | "npmPackage" | "version">
    & Pick<Partial<ClientDefinition>, "platformBinary">,
  mode: ModeId,
  trigger: Trigger,
  run: {
    route?: Route;
    longWait?: boolean;
    progressCheck?: ProgressCheck | null;
    delaySeconds?: number;
    launchMode?: ModeId;
  } = {},
): RunHeader {
  return {
    clientId: client.id,
    displayName: client.displayName,
    npmPackage: client.npmPackage,
    version: client.version,
    mode,
    ...(run.launchMode ? { launchMode: run.launchMode } : {}),
    trigger,
    route: run.route ?? "native",
    longWait: run.longWait ?? false,
    progressCheck: run.progressCheck ?? null,
    delaySeconds: run.delaySeconds ?? 0,
    ranAt: new Date().toISOString(),
    ...(client.platformBinary
      ? { installNote: client.platformBinary.note }
      : {}),
  };
}

/** The record of a run whose client never started: all it has is why. */
export function notStarted(
  header: RunHeader,
  outcome: "install-failed" | "lab-failed" | "not-supported",
  detail: string,
  seconds: number,
): RunRecord {
  return {
    ...header,
    durationSeconds: Math.round(seconds),
    outcome,
    exitCode: null,
    detail,
    command: "",
    labReport: null,
    labReportMarkdown: null,
    transcript: [],
    outputTail: "",
  };
}

/** The prompt every client gets, the verification guide's standard prompt. */
export const PROMPT =
  "Read the MCP resource test://review/status from the lab server and tell me its status. " +
  "Then wait for the review to finish: the resource will change by itself. " +
  "When it changes, tell me the new status.";

/**
 * The progress check's numbers: the client's tool timeout, and the update
 * well past it (the lab sends progress every 5 s, so several arrive first).
 */
export const PROGRESS_CHECK = { toolTimeoutSeconds: 20, delaySeconds: 40 };

/** The lab's client name for its probe (what the shell-probe route runs). */
export const PROBE_CLIENT = "mcp-subscription-probe";

/**
 * The lab entry that is this run's client: the one that got furthest (a
 * client may open a probe connection before its working one).
 */
export function mainLabClient(
  clients: ClientReport[],
): ClientReport | undefined {
  // The probe a client runs on the shell-probe route is not the client.
  return clients.filter((client) => client.name !== PROBE_CLIENT).toSorted((
    a,
    b,
  ) => b.level - a.level || b.timeline.length - a.timeline.length)[0];
}

/** The best the lab recorded for the probe a client ran (shell-probe). */
export function probeLabLevel(clients: ClientReport[]): number | null {
  const probes = clients.filter((client) => client.name === PROBE_CLIENT);
  return probes.length === 0
    ? null
    : Math.max(...probes.map((probe) => probe.level));
}

/** A client's `catalog` in the lab's `/report`, when its catalog changes. */
export type LabCatalog = NonNullable<ClientReport["catalog"]>;
