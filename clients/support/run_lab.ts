/**
 * The lab of a run: `startLab` starts `main.ts` as a subprocess
 * (`spawnLab` of `testdata/lab.ts`), logs its output for evidence and
 * fetches its reports; the stdio lab a client starts itself, and its report
 * from its log; the deno cache the run's Deno processes share.
 *
 * @module
 */

import {
  CATALOG_KINDS,
  type ClientReport,
  type LabReport,
  type UpdateTrigger,
} from "../../main.ts";
import { printableLine, shellQuote } from "./process.ts";
import { type SpawnedLab, spawnLab } from "../../launch.ts";

/** A free loopback port: the one the lab's side uses too. */
export { freePort } from "../../launch.ts";

export interface LabOptions {
  /** Path to the lab's `main.ts`. */
  mainPath: string;
  trigger: UpdateTrigger;
  delaySeconds: number;
  enableTool: boolean;
  /** Start the lab with `MCP_TEST_ENABLE_WAIT_TOOL=true` (the wait-tool route). */
  enableWaitTool?: boolean;
  /** What the run's mode sets beyond the default lab (`labSettingsOf`). */
  labSettings?: ModeLabSettings;
  logPath: string;
}

export interface RunningLab {
  url: string;
  origin: string;
  report(): Promise<LabReport>;
  reportMarkdown(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * What a run's mode sets in its lab (`labSettingsOf` in `catalog/types.ts`):
 * the update's text, the catalog's change, the era served, the watch cap,
 * the streams' lifetime and end; each absent one is the lab's default.
 */
export interface ModeLabSettings {
  /** `--inline-content`: the new text in every update. */
  inlineContent?: InlineContentSetting;
  /** `--catalog-change`: the catalog kinds that gain an item. */
  catalogChange?: CatalogChangeSetting;
  /** `--era`: the one era served. */
  era?: LabReport["scenario"]["era"];
  /** `--max-watches`: the watches each client may hold. */
  maxWatches?: number;
  /** `--stream-lifetime`: each stream ended this many seconds after it opened. */
  streamLifetimeSeconds?: number;
  /** `--stream-end`: how. */
  streamEnd?: LabReport["scenario"]["streamEnd"];
}

/**
 * The `MCP_TEST_*` settings of a run's lab, over HTTP or stdio: its update
 * (whether it carries the new text, whether the catalog changes with it),
 * the world its mode sets (the era, the watch cap, the streams' lifetime),
 * its tools, every log line. Each is set, so none comes from the harness's
 * own environment.
 */
export function labRunEnv(
  options: Pick<
    LabOptions,
    | "trigger"
    | "delaySeconds"
    | "enableTool"
    | "enableWaitTool"
    | "labSettings"
  >,
): Record<string, string> {
  const lab = options.labSettings ?? {};
  return {
    MCP_TEST_UPDATE_DELAY_SECONDS: String(options.delaySeconds),
    MCP_TEST_UPDATE_TRIGGER: options.trigger,
    MCP_TEST_INLINE_CONTENT: lab.inlineContent ?? "off",
    MCP_TEST_CATALOG_CHANGE: lab.catalogChange ?? "off",
    MCP_TEST_ERA: lab.era ?? "both",
    MCP_TEST_MAX_WATCHES: String(lab.maxWatches ?? ""),
    MCP_TEST_STREAM_LIFETIME_SECONDS: String(lab.streamLifetimeSeconds ?? ""),
    MCP_TEST_STREAM_END: lab.streamEnd ?? "graceful",
    MCP_TEST_ENABLE_TOOL: String(options.enableTool),
    MCP_TEST_ENABLE_WAIT_TOOL: String(options.enableWaitTool ?? false),
    MCP_TEST_LOG_LEVEL: "debug",
  };
}

/** Starts the lab for one run, its stdout and stderr copied to the log. */
export async function startLab(options: LabOptions): Promise<RunningLab> {
  const log = await Deno.open(options.logPath, {
    write: true,
    create: true,
    truncate: true,
  });
  let lab: SpawnedLab;
  try {
    lab = await spawnLab({
      mainPath: options.mainPath,
      env: { MCP_TEST_HOST: "127.0.0.1", ...labRunEnv(options), NO_COLOR: "1" },
      onOutput: async (chunk) => {
        await log.write(chunk);
      },
    });
  } catch (error) {
    log.close();
    throw error;
  }
  const fetchText = async (path: string) => {
    const response = await fetch(`${lab.origin}${path}`);
    return await response.text();
  };
  return {
    url: lab.url,
    origin: lab.origin,
    async report() {
      return JSON.parse(await fetchText("/report")) as LabReport;
    },
    reportMarkdown: () => fetchText("/report.md"),
    async stop() {
      await lab.stop();
      log.close();
    },
  };
}

/**
 * Starts a client run's lab (its log in the run folder), or says in one
 * string why it could not: a lab that fails is a row, not an error.
 */
export async function startRunLab(
  options: {
    labMainPath: string;
    runDir: string;
    delaySeconds: number;
    labSettings?: ModeLabSettings;
  },
  trigger: Exclude<UpdateTrigger, "connect">,
  tools: { enableTool?: boolean; enableWaitTool?: boolean } = {},
): Promise<RunningLab | { failed: string }> {
  try {
    return await startLab({
      mainPath: options.labMainPath,
      trigger,
      delaySeconds: options.delaySeconds,
      enableTool: tools.enableTool ?? false,
      enableWaitTool: tools.enableWaitTool,
      labSettings: options.labSettings,
      logPath: `${options.runDir}/lab.log`,
    });
  } catch (error) {
    return { failed: String(error) };
  }
}

/** The lab's report of a run, as JSON and as Markdown. */
export interface LabReports {
  labReport: LabReport | null;
  labReportMarkdown: string | null;
}

/** A run's reports when the lab gave none. */
export const NO_LAB_REPORTS: Readonly<LabReports> = Object.freeze({
  labReport: null,
  labReportMarkdown: null,
});

/** The lab's report now, as JSON and as Markdown. */
export async function labReports(lab: RunningLab): Promise<LabReports> {
  const labReport = await lab.report();
  return { labReport, labReportMarkdown: await lab.reportMarkdown() };
}

/**
 * The lab's report at the end of a run, after letting it log the last
 * requests (a DELETE, a closed stream); or why there is none.
 */
export async function finalLabReports(
  lab: RunningLab,
): Promise<LabReports | { unavailable: string }> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  try {
    return await labReports(lab);
  } catch (error) {
    return { unavailable: `lab report unavailable: ${error}` };
  }
}

/**
 * A run's lab report at its end: the HTTP lab's own, or, for a lab the
 * client started over stdio, what it printed in the run's `lab.log`.
 */
export async function runLabReports(
  lab: RunningLab | { stdio: StdioLabCommand },
  runDir: string,
  scenario: StdioScenario,
): Promise<LabReports | { unavailable: string }> {
  if (!("stdio" in lab)) return await finalLabReports(lab);
  return stdioLabReports(
    await Deno.readTextFile(`${runDir}/lab.log`).catch(() => ""),
    scenario,
  );
}

/** A run's detail with one more reason after it. */
export function joinedDetail(
  detail: string | undefined,
  more: string,
): string {
  return detail ? `${detail}; ${more}` : more;
}

/** The lab as a client starts it over stdio: a command, its arguments, its environment. */
export interface StdioLabCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The lab over stdio for a client to start: this Deno runs the checkout's
 * `main.ts --stdio` from the harness's deno cache only (`--cached-only`,
 * nothing leaves loopback), with the run's settings and its log as JSON
 * lines; `sh` appends its stderr to `stderrPath`, since the client keeps
 * stdin and stdout and shows stderr only in its own UI. The stderr the
 * client gave stays open in the lab (as fd 3, never written), as any
 * server's does for its life: a client may take its end (the Java SDK's
 * stdio transport does) for the server closing.
 */
export function stdioLabCommand(options: {
  labMainPath: string;
  denoDir: string;
  stderrPath: string;
  trigger: Exclude<UpdateTrigger, "connect">;
  delaySeconds: number;
  enableTool?: boolean;
  enableWaitTool?: boolean;
  labSettings?: ModeLabSettings;
}): StdioLabCommand {
  return {
    command: "sh",
    args: [
      "-c",
      `exec "$0" "$@" 3>&2 2>>${shellQuote(options.stderrPath)}`,
      Deno.execPath(),
      "run",
      "-A",
      "--cached-only",
      options.labMainPath,
      "--stdio",
    ],
    env: {
      ...labRunEnv({ enableTool: false, ...options }),
      MCP_TEST_LOG_FORMAT: "json",
      DENO_DIR: options.denoDir,
      DENO_NO_UPDATE_CHECK: "1",
    },
  };
}

/**
 * The stdio lab as one command line, its settings set by `env` in front:
 * for a client that hands a stdio server only a few safe variables of its
 * own environment (the MCP SDKs' default), never the ones it is given.
 */
export function envCommandLine(lab: StdioLabCommand): string[] {
  return [
    "env",
    ...Object.entries(lab.env).map(([name, value]) => `${name}=${value}`),
    lab.command,
    ...lab.args,
  ];
}

/**
 * Caches a module's dependencies (the lab's `main.ts`, the probe, the
 * reference host) in `denoDir`, for a run that uses it with
 * `--cached-only`; why not, in one line, when that fails.
 */
export async function cacheModules(
  path: string,
  denoDir: string,
): Promise<string | undefined> {
  const { success, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--quiet", path],
    env: { DENO_DIR: denoDir },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  return success
    ? undefined
    : `could not cache ${path.split("/").at(-1)}'s modules: ${
      printableLine(new TextDecoder().decode(stderr), 300)
    }`;
}

/** How many of a stdio lab's stderr lines its report shows. */
const STDIO_LINES_SHOWN = 80;

/** The stdio lab's JSON banner line (`{"event":"lab","transport":"stdio",…}`): its versions. */
function stdioBanner(line: string): { lab: string; sdk: string } | undefined {
  try {
    const event = JSON.parse(line);
    return event?.event === "lab" && event.transport === "stdio"
      ? { lab: String(event.version), sdk: String(event.sdk) }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The settings of a stdio lab's run, for its report: the trigger, the delay, its mode's. */
export type StdioScenario =
  & Pick<LabReport["scenario"], "trigger" | "updateDelaySeconds">
  & { labSettings?: ModeLabSettings };

/**
 * The report of a stdio lab from what it printed on stderr
 * (`stdioLabCommand`): its banner, its events as JSON lines, and the verdict
 * it prints for its client when the client closes its stdin. A client that
 * starts the lab again adds a banner and a verdict each time: every verdict
 * is a client. The scenario is the run's; the settings the run does not set
 * are the lab's defaults.
 */
export function stdioLabReports(
  stderr: string,
  scenario: StdioScenario,
): LabReports | { unavailable: string } {
  const lab = scenario.labSettings ?? {};
  const lines = stderr.split("\n").filter((line) => line.trim() !== "");
  const banner = lines.map(stdioBanner).find((found) => found !== undefined);
  if (!banner) return { unavailable: "the stdio lab never started" };
  const clients = lines.flatMap((line) => {
    const verdict = verdictOf(line);
    return verdict ? [verdict] : [];
  });
  if (clients.length === 0) {
    return {
      unavailable:
        "the stdio lab printed no verdict (it prints one when its client closes its stdin)",
    };
  }
  const shown = lines.slice(-STDIO_LINES_SHOWN).map((line) =>
    printableLine(line, 1000).replaceAll("```", "'''")
  );
  return {
    labReport: {
      lab: banner.lab,
      sdk: banner.sdk,
      generatedAt: new Date().toISOString(),
      scenario: {
        trigger: scenario.trigger,
        updateDelaySeconds: scenario.updateDelaySeconds,
        era: lab.era ?? "both",
        updateCount: 1,
        updateIntervalSeconds: 5,
        sendListChanged: false,
        inlineContent: lab.inlineContent ?? "off",
        // As the lab's own report words it: the kinds, comma-separated.
        catalogChange: lab.catalogChange === "all"
          ? CATALOG_KINDS.join(",")
          : lab.catalogChange ?? "off",
        toolEnabled: false,
        maxWatches: lab.maxWatches ?? null,
        streamLifetimeSeconds: lab.streamLifetimeSeconds ?? null,
        streamEnd: lab.streamEnd ?? "graceful",
        listenAck: "full",
        withoutSubscribe: false,
      },
      clients,
    },
    labReportMarkdown: [
      "# Lab report (stdio)",
      "",
      `The lab ran over stdio as the client started it. Its stderr, JSON lines each escaped and cut to 1000 characters${
        lines.length > STDIO_LINES_SHOWN
          ? ` (the last ${STDIO_LINES_SHOWN} of ${lines.length})`
          : ""
      }, the verdict last:`,
      "",
      "```text",
      ...shown,
      "```",
    ].join("\n"),
  };
}

/** A stdio lab's verdict line as a report entry (without a timeline). */
function verdictOf(line: string): ClientReport | undefined {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof event !== "object" || event === null) return undefined;
  const { event: kind, evidence: _evidence, ...fields } = event as Record<
    string,
    unknown
  >;
  if (
    kind !== "verdict" || typeof fields.level !== "number" ||
    typeof fields.steps !== "object" || fields.steps === null ||
    typeof fields.name !== "string" || typeof fields.version !== "string"
  ) {
    return undefined;
  }
  return {
    ...fields,
    timeline: [],
    timelineDropped: 0,
  } as unknown as ClientReport;
}

/** The lab's `--inline-content` setting (`off`, `sep-3119`, `fastrmcp`). */
export type InlineContentSetting = LabReport["scenario"]["inlineContent"];

/** The lab's `--catalog-change` setting: `off`, one kind, or `all`. */
export type CatalogChangeSetting =
  | "off"
  | "tools"
  | "prompts"
  | "resources"
  | "all";

/**
 * The deno cache the probe uses on the shell-probe route: the client runs
 * in an isolated HOME, so without it the probe would fetch its SDK again.
 */
export function defaultDenoDir(): string {
  return Deno.env.get("DENO_DIR") ??
    `${
      Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`
    }/deno`;
}

/**
 * What a run's lab log shows of the world its mode set: the streams the
 * client opened, those the lab cut at their lifetime and those opened
 * again after the first cut, and the requests the lab refused. Counted
 * over every client of the run's lab (a client may hold several sessions).
 */
export interface LabLogFacts {
  /** 2025 GET streams and acknowledged listens. */
  streamsOpened: number;
  /** Streams the lab ended at `--stream-lifetime` (`by=lab`). */
  streamsCut: number;
  /** Streams opened after the lab's first cut. */
  reopened: number;
  /** Seconds from the first cut to the first stream opened after it. */
  reopenedAfterSeconds: number | null;
  /** Watches refused at `--max-watches` (`Subscription limit reached`). */
  watchesRefused: number;
  /**
   * Requests refused before the lab first knew a client (no `client=` on
   * them, and no line yet with one): in a one-era lab, the other era's (a
   * 2025 `initialize`, a 2026-07-28 request without a session). A refusal
   * inside a session (an unknown method), or one after a client was known
   * (a request to a session that ended), is not counted.
   */
  eraRefusals: number;
  /**
   * The lines counted, as the lab logged them (each escaped and cut to 400
   * characters), the first `LAB_LOG_LINES_KEPT`: the evidence of the counts.
   */
  lines: string[];
}

/** How many of the lines it counted `labLogFacts` keeps. */
export const LAB_LOG_LINES_KEPT = 40;

/** One event of the lab's log, text (`[tag] words key=value …`) or JSON. */
interface LabLogEvent {
  tag: string;
  words: string;
  fields: Record<string, string>;
}

/**
 * A log line as an event: a JSON line's `event`, `text` and fields, or a
 * text line's tag, words, then `key=value` fields (a value bare, or a JSON
 * string, which the lab writes for any value with a space or quote, so no
 * value poses as a field). Indented lines (a verdict's evidence) are none.
 */
function labLogEvent(line: string): LabLogEvent | undefined {
  if (line.startsWith("{")) {
    try {
      const { event, text, ...fields } = JSON.parse(line);
      if (typeof event !== "string") return undefined;
      return {
        tag: event,
        words: typeof text === "string" ? text : "",
        fields: Object.fromEntries(
          Object.entries(fields).map(([key, value]) => [key, String(value)]),
        ),
      };
    } catch {
      return undefined;
    }
  }
  const head = line.match(/^\[([a-z/_-]+)\]/);
  if (!head) return undefined;
  const rest = line.slice(head[0].length);
  const fields: Record<string, string> = {};
  let wordsEnd = rest.length;
  for (
    const match of rest.matchAll(/ ([A-Za-z]+)=("(?:[^"\\]|\\.)*"|[^ ]*)/g)
  ) {
    wordsEnd = Math.min(wordsEnd, match.index);
    fields[match[1]] = fieldValue(match[2]);
  }
  return { tag: head[1], words: rest.slice(0, wordsEnd).trim(), fields };
}

/** A text line's value: bare, or a JSON string (as written, if it is none). */
function fieldValue(text: string): string {
  if (!text.startsWith('"')) return text;
  try {
    return String(JSON.parse(text));
  } catch {
    return text;
  }
}

/** The streams, cuts and refusals in a run's lab log (`LabLogFacts`). */
export function labLogFacts(log: string): LabLogFacts {
  const facts: LabLogFacts = {
    streamsOpened: 0,
    streamsCut: 0,
    reopened: 0,
    reopenedAfterSeconds: null,
    watchesRefused: 0,
    eraRefusals: 0,
    lines: [],
  };
  let firstCut: number | undefined;
  let clientKnown = false;
  const keep = (line: string) => {
    if (facts.lines.length < LAB_LOG_LINES_KEPT) {
      facts.lines.push(printableLine(line, 400));
    }
  };
  for (const line of log.split("\n")) {
    const event = labLogEvent(line);
    if (!event) continue;
    const stream = event.tag === "stream/get" ||
      event.tag === "subscriptions/listen";
    const opened = event.tag === "stream/get"
      ? event.words === "opened"
      : event.tag === "subscriptions/listen" && event.words === "";
    const at = Date.parse(event.fields.at ?? "");
    if (stream && opened) {
      keep(line);
      facts.streamsOpened++;
      if (firstCut === undefined) continue;
      facts.reopened++;
      const after = Math.round((at - firstCut) / 100) / 10;
      if (Number.isFinite(after)) facts.reopenedAfterSeconds ??= after;
    } else if (
      stream && event.words === "closed" && event.fields.by === "lab"
    ) {
      keep(line);
      facts.streamsCut++;
      firstCut ??= at;
    } else if (event.tag === "request/rejected") {
      // The lab may say why after the SDK's words (a client's share).
      if (event.fields.message?.startsWith("Subscription limit reached")) {
        keep(line);
        facts.watchesRefused++;
      } else if (
        // -32022: a 2025 request a 2026-07-28-only lab refused, which the lab
        // names by its clientInfo; the other era's refusals come unnamed.
        event.fields.code === "-32022" ||
        !clientKnown && event.fields.client === undefined
      ) {
        keep(line);
        facts.eraRefusals++;
      }
    }
    // The lab names a client it refused for its era: no client known yet.
    clientKnown ||= event.fields.code !== "-32022" &&
      event.fields.client !== undefined;
  }
  return facts;
}

/** The facts of a run's `lab.log` (`labLogFacts`); none when it left none. */
export async function runLabLogFacts(
  runDir: string,
): Promise<LabLogFacts | undefined> {
  const log = await Deno.readTextFile(`${runDir}/lab.log`).catch(() => null);
  return log === null ? undefined : labLogFacts(log);
}
