/**
 * `deno task clients [name...]`: installs each client at its pinned version,
 * runs it against a fresh lab and scripted model in every mode, on every
 * route and under both triggers, and regenerates `results/`. `--help` prints
 * the options (`CLIENTS_USAGE`); a bad flag or value is one line on stderr,
 * `clients error: …`, and exit status 2.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import { ConfigError, parseFlags } from "../main.ts";
import { ALL_CLIENTS, selectClients } from "./catalog/select.ts";
import {
  type AnyClient,
  GROUPS,
  isBrowserClient,
  isCommandClient,
  isUnsupportedClient,
  isWorldMode,
  labSettingsOf,
  modeDelaySeconds,
  modeFileName,
  type ModeId,
  modeLabel,
  MODES,
  type UnsupportedClientDefinition,
  WORLD_MODES,
} from "./catalog/types.ts";
import {
  browserInstalled,
  CHROMIUM_PATH,
  runBrowserClient,
} from "./runners/browser.ts";
import { CITED_HOSTS, UPSTREAM_REQUESTS } from "./catalog/cited.ts";
import {
  changesSection,
  type ComparedRow,
  compareFiles,
  compareRows,
  fileLabel,
  proseShown,
  readJson,
  reportChanges,
  tableFile,
} from "./watch/compare.ts";
import { runCodeServer } from "./runners/code_server.ts";
import {
  failureLine,
  folderFlag,
  optionsOrExit,
  shown,
} from "./support/command_line.ts";
import { summaryRows, summarySvg } from "./report/summary.ts";
import { libraryRows } from "./report/library_summary.ts";
import { runCommandClient } from "./runners/command.ts";
import { type Route, ROUTES } from "./model/decide.ts";
import { observe } from "./model/scripted_model.ts";
import {
  aptInstallCommand,
  defaultCacheDir,
  installClient,
  type InstallResult,
  missingDebianPackages,
} from "./support/install.ts";
import { buildOnce } from "./support/build_once.ts";
import { installGoModule } from "./support/install_go.ts";
import {
  installPypiPackage,
  installPythonProgram,
} from "./support/install_python.ts";
import {
  evidenceFile,
  evidenceKindOf,
  evidenceLink,
  evidenceMarkdown,
  type MatrixDocument,
  matrixMarkdown,
  mergeEvidence,
  mergeRows,
  refreshNote,
  rowFromRun,
  SUMMARY_SVG,
  withDefaultComparison,
} from "./report/matrix.ts";
import {
  mainLabClient,
  notStarted,
  probeLabLevel,
  PROGRESS_CHECK,
  type ProgressCheck,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./runners/run_record.ts";
import type { MatrixRow } from "./report/rows.ts";
import {
  cacheModules,
  defaultDenoDir,
  runLabLogFacts,
} from "./support/run_lab.ts";
import { runAgentClient } from "./runners/agent.ts";
import {
  atNewest,
  fixtureLookups,
  lockedPinsOf,
  newestLocked,
  PIN_FILES,
  pinMoves,
  REGISTRY_LOOKUPS,
  withReadmeVersions,
  writePins,
} from "./watch/latest.ts";
import { formatFiles, printableLine } from "./support/process.ts";
import { bypassProxyForLoopback } from "../launch.ts";

const repoRoot = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

export const CLIENTS_USAGE = `Usage: deno task clients [options] [client...]

Installs each client (all, or those named) at its pinned version, runs it
against a fresh lab and scripted model in every mode, on every route and
under both triggers, and regenerates results/. Every client that runs also
gets a run in each world mode, as in its default mode, natively under
trigger subscribe, against a lab set as some servers are: inline-content,
the new text in every update (--inline-content sep-3119); cut, every GET
stream and listen ended 2 s after it opened, gracefully, the update at
3.5 s (--stream-lifetime 2 --delay 3.5); 2026-07-28-only and 2025-only,
one era served (--era 2026-07-28, --era 2025); refused, every watch
refused (--max-watches 0). And mode catalog: one run launched in each
mode the client lists (a row each, catalog (default), catalog (stdio)…),
natively, against a lab whose tools, prompts and resources each gain an
item at the client's first update (--catalog-change all), under trigger
read for a client a model drives (its model reads, then waits past the
update) and subscribe for the others.

Options:
  --results-dir DIR  where to write (default: the repository's results/)
  --cache-dir DIR    installs and run folders (default: see install.ts)
  --timeout S        seconds per client run (default 120)
  --delay S          the lab's update delay (default 3)
  --trigger T        only this trigger (subscribe or read; default both)
  --route R[,R…]     these routes (native, wait-tool, shell-probe, or all;
                     default all, or native with --latest; --routes is the
                     same flag); command clients run on native only
  --mode M[,M…]      only the runs in these modes (default all: default,
                     2026-07-28, notifications, stdio, stdio-2026-07-28,
                     no-updates, inline-content, cut, 2026-07-28-only,
                     2025-only, refused, catalog); --mode cut (or another
                     world mode) runs that mode alone, --mode catalog
                     the catalog runs in every mode the client lists
  --only G[,G…]      these groups: agents (the agent CLIs, with the
                     scripted model), inspector (the MCP Inspector's
                     command clients, mcpdo and the Inspector CLI, and its
                     web UI), browser (the clients driven in headless
                     Chromium: the Inspector's web UI, VS Code),
                     libraries (an app on each client library, and its
                     agent loop with the scripted model); default all
  --install-browser  prepare the machine for the browser clients: install
                     what they miss with apt-get (as root) before they
                     run, Debian's chromium when ${CHROMIUM_PATH} is
                     missing and the Debian packages VS Code's install
                     builds with; without it, their runs are skipped and
                     the command that installs them is printed
  --long-wait        instead: one wait-tool run per client (mode default,
                     trigger subscribe) with the update after
                     --long-wait-delay S (default 90): does the call
                     survive the client's tool-call timeout? The clients
                     run side by side, since each run takes minutes.
  --progress-check   instead: two wait-tool runs per client with its MCP
                     tool timeout set to ${PROGRESS_CHECK.toolTimeoutSeconds} s and the update after ${PROGRESS_CHECK.delaySeconds} s,
                     one with the lab's progress notifications, one with
                     the call's progressToken removed on its way to the
                     lab (the control): does the client reset its tool
                     timeout on progress? Side by side, like --long-wait.
  --budget S         start no run after S seconds (default 1800); 0 runs
                     nothing and writes the Markdown and the picture anew
                     from RESULTS/matrix.json, which stays as it was
  --min-level N      with --check: each row must reach at least level N
  --min-catalog-level N
                     with --check: each catalog row must reach at least
                     catalog level N (the lowest of its kinds, 0 to 5)
  --keep-homes       keep each run's isolated home (for debugging a client)
  --check            exit 1 unless every run produced its row and the
                     row's level matches what the lab recorded (on the
                     wait-tool and shell-probe routes, a 7 needs the lab's
                     wait-tool level 6 or its probe client at level 6; a
                     catalog row's kinds must carry the lab's catalog
                     levels, tools 5 only on the lab's 4 and the model's
                     call of the new tool)
  --latest           instead of the pins, each client at its newest version
                     on npm (a runtime or platform package it pins: the
                     newest of that major version; a pin behind a lock file,
                     a Go, Rust or Java program's: its registry's newest
                     reported, run at the pin), natively unless --route
                     says otherwise (--route all: every route); the run goes
                     to CACHE/latest/, and its rows are compared with
                     RESULTS/matrix.json: the changes are printed and
                     written to RESULTS/changes.md
  --write            with --latest: also merge the new rows into RESULTS and
                     move the pins in clients/catalog/ (Node's in
                     clients/support/install.ts) and clients/README.md,
                     except for a client whose newest version did not
                     install or start (its pin stays)
  --versions FILE    with --latest: the newest versions from FILE (a JSON
                     object of npm package names and versions, another
                     registry's as go:MODULE, crates:NAME, maven:G:A), not
                     the registries
  --compare [OLD] [NEW]
                     only compare two matrix.json files and write
                     RESULTS/changes.md; one file is NEW; an omitted file,
                     or -, is RESULTS/matrix.json
  --help             print this help

Exit status: 0 done (--latest, --compare: no level or outcome changed), 1 a
--check failed (--latest: the run itself failed), 2 a bad flag or value, 3
(--latest, --compare) a level or an outcome changed.`;

/** What the command line asks for. */
export interface ClientsOptions {
  clients: AnyClient[];
  resultsDir: string;
  cacheDir: string;
  timeoutSeconds: number;
  delaySeconds: number;
  budgetSeconds: number;
  minLevel: number;
  /** With `--check`: the catalog level every catalog row must reach. */
  minCatalogLevel: number;
  triggers: Trigger[];
  routes: Route[];
  /** Runs in other modes are not planned (`--mode`). */
  modes: ModeId[];
  /** Set for `--long-wait`: the update delay of its runs. */
  longWaitDelay?: number;
  progressCheck: boolean;
  check: boolean;
  keepHomes: boolean;
  installBrowser: boolean;
  /** `--latest`: each client at its newest version, compared. */
  latest: boolean;
  /** `--write`: a `--latest` run's rows and pins accepted. */
  write: boolean;
  /** `--versions`: the newest versions from this file, not npm. */
  versionsFile?: string;
  /** `--compare`: the matrix files to compare (none, one or two). */
  compare?: string[];
}

/** A flag's value as a non-negative number, or a `ConfigError`. */
function nonNegative(flag: string, raw: string): number {
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(
      `--${flag} "${shown(raw)}" is not a non-negative number`,
    );
  }
  return value;
}

/** `--min-catalog-level`: a level of the catalog ladder, 0 to 5. */
function catalogLevelFlag(raw: string): number {
  if (!/^[0-5]$/.test(raw.trim())) {
    throw new ConfigError(
      `--min-catalog-level "${shown(raw)}" is not a catalog level (0 to 5)`,
    );
  }
  return Number(raw);
}

/** A comma-separated flag's values, each one of `allowed`. */
function listOf<Word extends string>(
  flag: string,
  raw: string,
  allowed: readonly Word[],
): Word[] {
  const words = raw.split(",").map((word) => word.trim()).filter(Boolean);
  if (
    words.length === 0 || words.some((word) => !allowed.includes(word as Word))
  ) {
    throw new ConfigError(
      `--${flag} "${shown(raw)}" is not a comma-separated list of ${
        allowed.join(", ")
      }`,
    );
  }
  return allowed.filter((word) => words.includes(word));
}

/** Reads `deno task clients` flags; throws a `ConfigError` naming what is wrong. */
export function parseClientsArgs(args: string[]): ClientsOptions | "help" {
  const { values, positionals } = parseFlags(args, {
    help: { type: "boolean", short: "h" },
    "results-dir": { type: "string", default: `${repoRoot}/results` },
    "cache-dir": { type: "string", default: defaultCacheDir() },
    timeout: { type: "string", default: "120" },
    delay: { type: "string", default: "3" },
    trigger: { type: "string" },
    route: { type: "string" },
    routes: { type: "string" },
    mode: { type: "string", default: MODES.join(",") },
    only: { type: "string" },
    "long-wait": { type: "boolean", default: false },
    "long-wait-delay": { type: "string", default: "90" },
    "progress-check": { type: "boolean", default: false },
    budget: { type: "string", default: "1800" },
    "min-level": { type: "string", default: "0" },
    "min-catalog-level": { type: "string", default: "0" },
    check: { type: "boolean", default: false },
    "keep-homes": { type: "boolean", default: false },
    "install-browser": { type: "boolean", default: false },
    latest: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    versions: { type: "string" },
    compare: { type: "boolean", default: false },
  }, { allowPositionals: true });
  if (values.help) return "help";
  const { latest, compare } = values;
  if (latest && compare) {
    throw new ConfigError(
      "--latest runs and compares; --compare only compares: pick one",
    );
  }
  if (!latest && (values.write || values.versions !== undefined)) {
    throw new ConfigError(
      `--${values.write ? "write" : "versions"} goes with --latest`,
    );
  }
  if (compare && positionals.length > 2) {
    throw new ConfigError("--compare takes at most two files, OLD and NEW");
  }
  const route = values.routes ?? values.route ?? (latest ? "native" : "all");
  const { trigger } = values;
  if (trigger !== undefined && trigger !== "subscribe" && trigger !== "read") {
    throw new ConfigError(
      `--trigger "${shown(trigger)}" is not subscribe or read`,
    );
  }
  const longWait = values["long-wait"];
  const longWaitDelay = nonNegative(
    "long-wait-delay",
    values["long-wait-delay"],
  );
  if (longWait && longWaitDelay <= 60) {
    throw new ConfigError(
      `--long-wait-delay ${longWaitDelay} is not above 60 s, past the usual tool-call timeouts`,
    );
  }
  if (longWait && values["progress-check"]) {
    throw new ConfigError(
      "--long-wait and --progress-check are separate runs: pick one",
    );
  }
  return {
    clients: compare ? [] : chosenClients(positionals, values.only),
    resultsDir: folderFlag("results-dir", values["results-dir"]),
    cacheDir: folderFlag("cache-dir", values["cache-dir"]),
    timeoutSeconds: nonNegative("timeout", values.timeout),
    delaySeconds: nonNegative("delay", values.delay),
    budgetSeconds: nonNegative("budget", values.budget),
    minLevel: nonNegative("min-level", values["min-level"]),
    minCatalogLevel: catalogLevelFlag(values["min-catalog-level"]),
    triggers: trigger === undefined ? ["subscribe", "read"] : [trigger],
    routes: route === "all" ? [...ROUTES] : listOf("route", route, ROUTES),
    modes: listOf("mode", values.mode, MODES),
    longWaitDelay: longWait ? longWaitDelay : undefined,
    progressCheck: values["progress-check"],
    check: values.check,
    keepHomes: values["keep-homes"],
    installBrowser: values["install-browser"],
    latest,
    write: values.write,
    versionsFile: values.versions,
    compare: compare ? positionals : undefined,
  };
}

/** The clients named (all when none is) within the `--only` groups. */
function chosenClients(names: string[], only: string | undefined) {
  const unknown = names.filter((id) =>
    !ALL_CLIENTS.some((client) => client.id === id)
  );
  if (unknown.length > 0) {
    throw new ConfigError(
      `unknown client(s): ${shown(unknown.join(", "))}; known: ${
        ALL_CLIENTS.map((client) => client.id).join(", ")
      }`,
    );
  }
  const groups = only === undefined ? [] : listOf("only", only, GROUPS);
  const selected = selectClients(names, groups);
  if (selected.length === 0) {
    throw new ConfigError(
      "no client matches the names and --only groups given",
    );
  }
  return selected;
}

export interface PlannedRun {
  mode: ModeId;
  /** A catalog run's launch mode: one of the client's own modes. */
  launchMode?: ModeId;
  route: Route;
  trigger: Trigger;
  longWait: boolean;
  progressCheck?: ProgressCheck;
  delaySeconds: number;
}

/** Whether the runs wait for minutes, and so go side by side. */
function sideBySide(options: ClientsOptions): boolean {
  return options.longWaitDelay !== undefined || options.progressCheck;
}

/** A client's runs in the modes `--mode` asks for (all by default). */
export function plannedRuns(
  client: AnyClient,
  options: ClientsOptions,
): PlannedRun[] {
  return runsOf(client, options).filter((run) =>
    options.modes.includes(run.mode)
  );
}

/**
 * A client's runs: every mode, route and trigger, then its world-mode and
 * catalog runs, or its one long wait. A command client has no model to
 * take the wait-tool or shell-probe route, nor to wait on a tool call, so
 * it runs natively or not at all.
 */
function runsOf(client: AnyClient, options: ClientsOptions): PlannedRun[] {
  const plain = { longWait: false, delaySeconds: options.delaySeconds };
  if (isUnsupportedClient(client)) {
    // One row, no run: it says why.
    return sideBySide(options)
      ? []
      : [{ mode: "default", route: "native", trigger: "subscribe", ...plain }];
  }
  if (isCommandClient(client) || isBrowserClient(client)) {
    if (sideBySide(options) || !options.routes.includes("native")) return [];
    return [
      ...client.modes.flatMap((mode) =>
        options.triggers.map((trigger) => ({
          mode,
          route: "native" as const,
          trigger,
          ...plain,
        }))
      ),
      ...worldRuns(options),
      ...catalogRuns(client.modes, options, "subscribe"),
    ];
  }
  if (options.progressCheck) {
    return (["progress", "no-progress"] as const).map((check) => ({
      mode: "default",
      route: "wait-tool",
      trigger: "subscribe",
      longWait: false,
      progressCheck: check,
      delaySeconds: PROGRESS_CHECK.delaySeconds,
    }));
  }
  if (options.longWaitDelay !== undefined) {
    return [{
      mode: "default",
      route: "wait-tool",
      trigger: "subscribe",
      longWait: true,
      delaySeconds: options.longWaitDelay,
    }];
  }
  return [
    ...client.modes.flatMap((mode) =>
      options.routes.flatMap((route) =>
        options.triggers.map((trigger) => ({ mode, route, trigger, ...plain }))
      )
    ),
    ...worldRuns(options),
    ...catalogRuns(client.modes, options, "read"),
  ];
}

/**
 * The run in each world mode every client that runs gets (inline-content,
 * cut, 2026-07-28-only, 2025-only, refused): natively under trigger
 * subscribe, where its default row shows what it does against the friendly
 * lab, when the command line asks for that route and trigger; mode cut
 * with its own update delay, after the cut.
 */
function worldRuns(options: ClientsOptions): PlannedRun[] {
  if (
    !options.routes.includes("native") ||
    !options.triggers.includes("subscribe")
  ) return [];
  return WORLD_MODES.map((mode) => ({
    mode,
    route: "native",
    trigger: "subscribe",
    longWait: false,
    delaySeconds: modeDelaySeconds(mode, options.delaySeconds),
  }));
}

/**
 * The catalog runs every client that runs gets: one launched in each mode
 * it lists, since an era or a transport is another path for a list
 * change (the GET stream, a listen that asks for it, stdout) and an
 * opt-in may be the only path a client has (Grok CLI speaks stdio alone);
 * natively, under the trigger that brings the change while it is
 * connected. An agent's model reads version 1 and then waits past the
 * update delay, so under `read` the change lands inside that wait whether
 * or not the client subscribes; a command or browser client follows a
 * fixed sequence that subscribes and then waits, as in inline-content, so
 * `subscribe` (mcpdo never reads at all).
 */
function catalogRuns(
  launchModes: ModeId[],
  options: ClientsOptions,
  trigger: Trigger,
): PlannedRun[] {
  if (
    !options.routes.includes("native") || !options.triggers.includes(trigger)
  ) return [];
  return launchModes.map((launchMode) => ({
    mode: "catalog",
    launchMode,
    route: "native",
    trigger,
    longWait: false,
    delaySeconds: options.delaySeconds,
  }));
}

/**
 * Whether the machine is ready for a browser client: Chromium, and the
 * Debian packages the client's install builds with. What is missing is
 * installed with apt-get when `--install-browser` says so, else the command
 * that would is printed.
 */
async function ensureBrowser(
  install: boolean,
  debianPackages: string[],
): Promise<boolean> {
  const missing = async () => [
    ...await browserInstalled() ? [] : ["chromium"],
    ...await missingDebianPackages(debianPackages),
  ];
  const before = await missing();
  if (before.length === 0) return true;
  const command = aptInstallCommand(before);
  const what = before.includes("chromium")
    ? `${CHROMIUM_PATH} is missing`
    : `Debian package(s) missing: ${before.join(", ")}`;
  if (!install) {
    console.log(
      `   ${what}: install with \`${command}\` (as root), or pass --install-browser; skipped`,
    );
    return false;
  }
  console.log(`   ${what}; running: ${command}`);
  const started = performance.now();
  const { success } = await new Deno.Command("sh", {
    args: ["-c", command],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  const after = await missing();
  if (!success || after.length > 0) {
    console.log(
      `   the install did not leave ${
        after.join(", ") || "what was missing"
      }; skipped`,
    );
    return false;
  }
  console.log(
    `   installed in ${Math.round((performance.now() - started) / 1000)} s`,
  );
  return true;
}

/** A run's kind of wait, in words: its long wait or progress check. */
function waitLabel(
  run: { longWait: boolean; progressCheck?: ProgressCheck | null },
): string {
  return `${run.longWait ? " (long wait)" : ""}${
    run.progressCheck ? ` (progress check: ${run.progressCheck})` : ""
  }`;
}

/** One planned run of an installed client, by the runner for its kind. */
async function runOne(
  client: Exclude<AnyClient, UnsupportedClientDefinition>,
  installed: Installed,
  run: PlannedRun,
  options: ClientsOptions,
): Promise<RunRecord> {
  const runDir = `${options.cacheDir}/runs/${client.id}-${client.version}-${
    modeFileName(run)
  }-${run.route === "native" ? "" : `${run.route}-`}${
    run.longWait ? "long-wait-" : ""
  }${run.progressCheck ? `${run.progressCheck}-check-` : ""}${run.trigger}`;
  const base = {
    labMainPath: `${repoRoot}/main.ts`,
    runDir,
    binPath: installed.binPath,
    delaySeconds: run.delaySeconds,
    timeoutSeconds: options.timeoutSeconds,
    labSettings: labSettingsOf(run.mode),
    launchMode: run.launchMode,
    keepHome: options.keepHomes,
  };
  const browserBase = {
    ...base,
    timeoutSeconds: Math.min(options.timeoutSeconds, 60),
  };
  const ran = isBrowserClient(client)
    ? client.ui === "code-server"
      ? await runCodeServer(client, run.mode, run.trigger, {
        ...browserBase,
        // Installed with its runtime, which install.ts always names.
        runtimePath: installed.runtimePath!,
      })
      : await runBrowserClient(client, run.mode, run.trigger, browserBase)
    : isCommandClient(client)
    ? await runCommandClient(client, run.mode, run.trigger, base)
    : await runAgentClient(client, run.mode, run.trigger, {
      ...base,
      // A long wait needs the update delay plus the rest of the run.
      timeoutSeconds: run.longWait || run.progressCheck
        ? Math.max(options.timeoutSeconds, run.delaySeconds + 90)
        : options.timeoutSeconds,
      route: run.route,
      longWait: run.longWait,
      progressCheck: run.progressCheck,
    });
  // What the world did to the client is in its lab's log.
  const labLog = isWorldMode(run.mode)
    ? await runLabLogFacts(runDir)
    : undefined;
  const record = labLog ? { ...ran, labLog } : ran;
  const row = rowFromRun(record);
  console.log(
    `   ${modeLabel(run)} ${run.route}${
      waitLabel(run)
    } ${run.trigger}: ${record.outcome} in ${record.durationSeconds} s, level ${row.level}${
      row.era ? `, era ${row.era}` : ""
    }${row.notes ? ` — ${row.notes}` : ""}`,
  );
  return record;
}

/**
 * On the shell-probe route the client's shell runs `probe.ts` with
 * `--cached-only` (nothing may leave loopback), so its modules are cached
 * first, once, from here (where the npm registry may be reached).
 */
async function cacheProbeModules(options: ClientsOptions) {
  const agents = options.clients.some((client) =>
    !isCommandClient(client) && !isBrowserClient(client) &&
    !isUnsupportedClient(client)
  );
  if (!agents || !options.routes.includes("shell-probe")) return;
  const failed = await cacheModules(`${repoRoot}/probe.ts`, defaultDenoDir());
  if (failed) console.log(`   ${failed} (shell-probe runs will say why)`);
}

/** What the runs of every selected client produced, and what the budget cut. */
interface Runs {
  records: RunRecord[];
  skipped: string[];
}

/**
 * Installs and runs each selected client in turn (side by side for long
 * waits and progress checks), until the time budget is spent.
 */
async function runClients(options: ClientsOptions): Promise<Runs> {
  const started = performance.now();
  const overBudget = () =>
    (performance.now() - started) / 1000 > options.budgetSeconds;
  const runs: Runs = { records: [], skipped: [] };
  const sideBySideRuns: Promise<RunRecord>[] = [];
  for (const client of options.clients) {
    if (overBudget()) {
      runs.skipped.push(client.id);
      continue;
    }
    const planned = plannedRuns(client, options);
    const installed = await readyToRun(client, planned, options, runs.records);
    if (installed === undefined || isUnsupportedClient(client)) continue;
    if (sideBySide(options)) {
      sideBySideRuns.push(
        ...planned.map((run) => runOne(client, installed, run, options)),
      );
      continue;
    }
    for (const run of planned) {
      if (overBudget()) {
        runs.skipped.push(
          `${client.id}/${modeLabel(run)}/${run.route}/${run.trigger}`,
        );
        continue;
      }
      runs.records.push(await runOne(client, installed, run, options));
    }
  }
  runs.records.push(...await Promise.all(sideBySideRuns));
  return runs;
}

/** An installed client: its binary, and the runtime it runs on, if any. */
interface Installed {
  binPath: string;
  runtimePath?: string;
}

/**
 * Says what is about to run and installs the client, or undefined when it
 * does not run (nothing planned, no browser; a client without MCP or a
 * failed install is a row of its own, in `records`).
 */
async function readyToRun(
  client: AnyClient,
  planned: PlannedRun[],
  options: ClientsOptions,
  records: RunRecord[],
): Promise<Installed | undefined> {
  if (planned.length === 0) {
    console.log(
      `== ${client.displayName}: skipped (no run in the routes, triggers and modes asked; a command or browser client runs only on the native route, and has no long-wait or progress check)`,
    );
    return undefined;
  }
  const local = "localScript" in client ? client.localScript : undefined;
  console.log(
    `== ${client.displayName} (${
      local
        ? `${
          local.slice(repoRoot.length + 1)
        } of this checkout, lab ${client.version}`
        : "goInstall" in client && client.goInstall
        ? `go install ${client.goInstall.module}@${client.goInstall.version}`
        : "pypiInstall" in client && client.pypiInstall
        ? `pip install ${client.pypiInstall.package}==${client.pypiInstall.version}`
        : `${client.npmPackage}@${client.version}`
    })`,
  );
  if (isUnsupportedClient(client)) {
    console.log(`   not run: ${client.reason}`);
    records.push(
      notStarted(
        runHeader(client, "default", "subscribe"),
        "not-supported",
        client.reason,
        0,
      ),
    );
    return undefined;
  }
  if (
    isBrowserClient(client) &&
    !await ensureBrowser(
      options.installBrowser,
      client.ui === "code-server" ? client.debianPackages : [],
    )
  ) {
    return undefined;
  }
  const builtProgram = "builtProgram" in client
    ? client.builtProgram
    : undefined;
  const goInstall = "goInstall" in client ? client.goInstall : undefined;
  const pythonProgram = "pythonProgram" in client
    ? client.pythonProgram
    : undefined;
  const pypiInstall = "pypiInstall" in client ? client.pypiInstall : undefined;
  const install = local
    ? await cacheLocalClient(local)
    : builtProgram
    ? await buildOnce(builtProgram, options.cacheDir)
    : goInstall
    ? await installGoModule(goInstall, options.cacheDir)
    : pythonProgram
    ? await installPythonProgram(pythonProgram, options.cacheDir)
    : pypiInstall
    ? await installPypiPackage(pypiInstall, options.cacheDir)
    : await installClient(client, options.cacheDir);
  if (!install.ok) {
    console.log(
      `   install failed after ${install.seconds} s: ${install.reason}`,
    );
    const installer = builtProgram
      ? builtProgram.recipe.tool
      : goInstall
      ? "go install"
      : pythonProgram || pypiInstall
      ? "pip install"
      : undefined;
    for (const run of planned) {
      records.push({
        ...notStarted(
          runHeader(client, run.mode, run.trigger, run),
          "install-failed",
          install.reason,
          install.seconds,
        ),
        ...(installer ? { installer } : {}),
      });
    }
    return undefined;
  }
  console.log(
    `   ${
      install.cached
        ? "cached"
        : `${
          local
            ? "modules cached"
            : builtProgram
            ? "built"
            : goInstall
            ? "built with go install"
            : pypiInstall
            ? "pip-installed"
            : "installed"
        } in ${install.seconds} s`
    }`,
  );
  return { binPath: install.binPath, runtimePath: install.runtimePath };
}

/**
 * A client of this checkout (the reference host) installs nothing: its
 * modules, and the lab's for its stdio modes, are cached where it runs from
 * with `--cached-only`, and this Deno runs it.
 */
async function cacheLocalClient(script: string): Promise<InstallResult> {
  const started = performance.now();
  const failed = await cacheModules(script, defaultDenoDir()) ??
    await cacheModules(`${repoRoot}/main.ts`, defaultDenoDir());
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  return failed ? { ok: false, reason: failed, seconds } : {
    ok: true,
    prefix: repoRoot,
    binPath: Deno.execPath(),
    seconds,
    cached: false,
  };
}

/**
 * Writes one evidence file per client, mode and route (keeping sections of
 * other triggers), with a browser run's screenshots beside it; the paths.
 */
async function writeEvidence(
  resultsDir: string,
  records: RunRecord[],
): Promise<string[]> {
  await Deno.mkdir(`${resultsDir}/runs`, { recursive: true });
  const written: string[] = [];
  const groups = Map.groupBy(records, evidenceFile);
  for (const [file, runs] of groups) {
    const previousEvidence = await Deno.readTextFile(`${resultsDir}/${file}`)
      .catch(() => "");
    await Deno.writeTextFile(
      `${resultsDir}/${file}`,
      mergeEvidence(previousEvidence, evidenceMarkdown(runs)),
    );
    written.push(`${resultsDir}/${file}`);
    for (const run of runs) {
      for (const shot of run.screenshots ?? []) {
        await Deno.copyFile(
          shot.path,
          `${resultsDir}/runs/${shot.path.split("/").at(-1)}`,
        );
      }
    }
  }
  return written;
}

/**
 * Writes the matrix (JSON and Markdown): fresh rows replace their old
 * selves, other rows stay. Resolves with the count of rows in all.
 */
async function writeMatrix(
  options: ClientsOptions,
  records: RunRecord[],
): Promise<number> {
  const matrixJson = `${options.resultsDir}/matrix.json`;
  let previous: MatrixDocument | undefined;
  try {
    previous = JSON.parse(
      await Deno.readTextFile(matrixJson),
    ) as MatrixDocument;
  } catch {
    previous = undefined;
  }
  const freshRows = records.map(rowFromRun);
  const rows = withDefaultComparison(mergeRows(
    previous?.rows ?? [],
    freshRows,
    ALL_CLIENTS.map((client) => client.id),
  )).map((row) => ({ ...row, evidenceKind: evidenceKindOf(row) }));
  // Nothing ran (--budget 0): the rows, their date and delay stay as they
  // were, and only what is written from them is written anew.
  const kept = freshRows.length === 0 ? previous : undefined;
  const document: MatrixDocument = {
    generatedAt: kept?.generatedAt ?? new Date().toISOString(),
    labVersion: freshRows.find((row) => row.labVersion)?.labVersion ??
      previous?.labVersion ?? null,
    // A long-wait or progress-check run leaves the usual delay as it was.
    delaySeconds: kept?.delaySeconds ??
      (sideBySide(options)
        ? previous?.delaySeconds ?? options.delaySeconds
        : options.delaySeconds),
    rows,
    cited: CITED_HOSTS,
    requests: UPSTREAM_REQUESTS,
    libraries: libraryRows(rows),
  };
  await Deno.writeTextFile(
    matrixJson,
    JSON.stringify(document, null, 2) + "\n",
  );
  await Deno.writeTextFile(
    `${options.resultsDir}/compatibility-matrix.md`,
    matrixMarkdown(document),
  );
  await Deno.writeTextFile(
    `${options.resultsDir}/${SUMMARY_SVG}`,
    summarySvg(
      summaryRows({ rows, cited: CITED_HOSTS, requests: UPSTREAM_REQUESTS }),
      document.generatedAt,
      document.libraries,
    ),
  );
  return rows.length;
}

/**
 * `--check`: reads back the published matrix and holds each run's row (found
 * by its evidence link, which names a catalog run's launch mode) to the
 * lab's own report. Prints each agreement; resolves with the failures.
 */
export async function checkPublished(
  resultsDir: string,
  records: RunRecord[],
  minimum: { level: number; catalogLevel: number },
): Promise<string[]> {
  const lines = (await Deno.readTextFile(
    `${resultsDir}/compatibility-matrix.md`,
  )).split("\n");
  // The Level column, found by its header rather than by position.
  // (`deno fmt` pads the cells, so the header is matched loosely.)
  const header =
    lines.find((text) =>
      /^\|\s*Client\s*\|/.test(text) && /\|\s*Level\s*\|/.test(text)
    ) ?? "";
  const titles = header.split("|").map((text) => text.trim());
  const levelColumn = titles.indexOf("Level");
  const catalogColumn = titles.indexOf("Catalog");
  const failures: string[] = [];
  for (const record of records) {
    const label = `${record.clientId}/${modeLabel(record)}/${record.route}${
      waitLabel(record)
    }/${record.trigger}`;
    const line = lines.find((text) =>
      text.includes(`(${evidenceLink(record)})`)
    );
    if (line === undefined) {
      failures.push(`${label}: no row in the matrix`);
      continue;
    }
    const cells = line.split("|").map((text) => text.trim());
    const level = Number(cells[levelColumn]);
    const failure = rowDisagreement(record, line, level, minimum.level) ??
      (record.mode === "catalog"
        ? catalogDisagreement(
          record,
          cells[catalogColumn] ?? "",
          minimum.catalogLevel,
        )
        : undefined);
    if (failure) failures.push(`${label}: ${failure}`);
    else {
      console.log(
        `check ${label}: ${rowAgreement(record, level)}${
          record.mode === "catalog"
            ? `; catalog ${cells[catalogColumn]} agrees with ${
              labCatalogWords(record)
            }`
            : ""
        }`,
      );
    }
  }
  if (records.length === 0) failures.push("no run happened");
  return failures;
}

/**
 * The levels a catalog row should carry, per kind: the lab's, and for
 * tools 5 where the lab recorded 4 and the model called the new tool; or
 * why there are none.
 */
function labCatalogLevels(
  record: RunRecord,
): Map<string, number> | string {
  const labClient = record.labReport
    ? mainLabClient(record.labReport.clients)
    : undefined;
  const catalog = labClient?.catalog;
  if (!catalog) {
    return `the lab recorded no catalog (${
      labClient
        ? `scenario ${record.labReport?.scenario.catalogChange}`
        : record.outcome
    })`;
  }
  const called = observe(record.transcript).newTool.called &&
    record.kind !== "command" && record.kind !== "browser";
  return new Map(
    Object.entries(catalog.kinds).map(([kind, { level }]) => [
      kind,
      kind === "tools" && level === 4 && called ? 5 : level,
    ]),
  );
}

/** The lab's catalog levels, in the words `--check` prints. */
function labCatalogWords(record: RunRecord): string {
  const levels = labCatalogLevels(record);
  return typeof levels === "string"
    ? levels
    : `the lab's ${
      [...levels].map(([kind, level]) => `${kind} ${level}`).join(", ")
    }${
      levels.get("tools") === 5
        ? " (tools 4, and the model's call of the new tool)"
        : ""
    }`;
}

/**
 * Why a catalog row's Catalog cell (`tools 5, prompts 2, resources 3`)
 * does not carry the lab's catalog levels, or is below `--min-catalog-level`;
 * undefined when it does and is not.
 */
export function catalogDisagreement(
  record: RunRecord,
  cell: string,
  minCatalogLevel: number,
): string | undefined {
  const expected = labCatalogLevels(record);
  if (typeof expected === "string") return expected;
  const published = new Map(
    cell.split(", ").flatMap((part) => {
      const match = part.match(/^(\w+) (\d)$/);
      return match ? [[match[1], Number(match[2])] as const] : [];
    }),
  );
  const same = published.size === expected.size &&
    [...expected].every(([kind, level]) => published.get(kind) === level);
  if (!same) {
    return `the row's catalog is "${cell}", ${labCatalogWords(record)}`;
  }
  const lowest = Math.min(...expected.values());
  return lowest < minCatalogLevel
    ? `catalog level ${lowest}, expected at least ${minCatalogLevel}`
    : undefined;
}

/** What the lab itself recorded for a run: its level, and whether it backs a 7. */
function labSays(record: RunRecord) {
  const labClient = record.labReport
    ? mainLabClient(record.labReport.clients)
    : undefined;
  const labLevel = record.labReport ? labClient?.level ?? 0 : undefined;
  const probeLevel = probeLabLevel(record.labReport?.clients ?? []);
  if (record.route === "native") {
    return { labLevel, seven: labLevel === 6, words: `the lab ${labLevel}` };
  }
  if (record.route === "wait-tool") {
    const waitLevel = labClient?.waitTool.level ?? null;
    return {
      labLevel,
      seven: waitLevel === 6,
      words: `the lab ${labLevel}, wait tool level ${waitLevel}`,
    };
  }
  return {
    labLevel,
    seven: (probeLevel ?? 0) >= 6,
    words: `the lab ${labLevel}, probe level ${probeLevel}`,
  };
}

/** Why a published row does not match its run, or undefined when it does. */
function rowDisagreement(
  record: RunRecord,
  line: string,
  level: number,
  minLevel: number,
): string | undefined {
  const lab = labSays(record);
  if (lab.labLevel === undefined) {
    return `the lab recorded nothing (${record.outcome})`;
  }
  if (level !== lab.labLevel && !(level === 7 && lab.seven)) {
    return `the row says level ${level}, ${lab.words}`;
  }
  if (level < minLevel) return `level ${level}, expected at least ${minLevel}`;
  if (
    record.kind === "browser" &&
    (!record.afterRefresh || !line.includes(refreshNote(record.afterRefresh)))
  ) {
    return `the row does not say the lab's level after the Refresh click (${
      record.afterRefresh
        ? `lab ${record.afterRefresh.labLevel}`
        : "no click happened"
    })`;
  }
  return undefined;
}

/** The line `--check` prints for a row that matches its run. */
function rowAgreement(record: RunRecord, level: number): string {
  return `row level ${level} agrees with ${labSays(record).words}${
    record.afterRefresh
      ? `; after the Refresh click the lab ${record.afterRefresh.labLevel}, as the row says`
      : ""
  }`;
}

/**
 * Writes the runs' evidence and rows into `options.resultsDir`, fresh rows
 * replacing their old selves, and formats what it wrote.
 */
async function writeResults(options: ClientsOptions, records: RunRecord[]) {
  const written = await writeEvidence(options.resultsDir, records);
  const rowCount = await writeMatrix(options, records);
  written.push(
    `${options.resultsDir}/matrix.json`,
    `${options.resultsDir}/compatibility-matrix.md`,
    `${options.resultsDir}/${SUMMARY_SVG}`,
  );
  await formatFiles(options.resultsDir, written);
  console.log(
    `wrote ${options.resultsDir}/compatibility-matrix.md (${records.length} fresh row(s), ${rowCount} in all)`,
  );
}

/** Runs the selected clients and writes what they did. */
async function runAndWrite(options: ClientsOptions): Promise<Runs> {
  const started = performance.now();
  await cacheProbeModules(options);
  const runs = await runClients(options);
  await writeResults(options, runs.records);
  console.log(
    `ran in ${Math.round((performance.now() - started) / 1000)} s`,
  );
  if (runs.skipped.length > 0) {
    console.log(`time budget reached; not run: ${runs.skipped.join(", ")}`);
  }
  return runs;
}

/**
 * A `matrix.json` as `--compare` and `--latest` read it: what
 * `comparedClientRow` takes of each row, checked before it does (a file
 * given on the command line may be anything).
 */
const MATRIX_FILE = tableFile(z.object({
  clientId: z.string(),
  client: z.string(),
  mode: z.string(),
  launchMode: z.string().optional(),
  route: z.string().nullish(),
  trigger: z.string(),
  longWait: z.boolean().optional(),
  progressCheck: z.string().nullish(),
  era: z.string().nullish(),
  version: z.string(),
  level: z.number().nullable(),
  outcome: z.string(),
  notes: z.string(),
}));

/** A matrix row as `--compare` and `--latest` match and compare it. */
export function comparedClientRow(row: MatrixRow): ComparedRow {
  const route = row.route ?? "native";
  return {
    key: [
      row.clientId,
      modeLabel(row),
      route,
      row.trigger,
      row.longWait ? "long wait" : "",
      row.progressCheck ?? "",
    ].join("|"),
    what: [
      row.client,
      modeLabel(row),
      `${route}${waitLabel(row)}`,
      row.trigger,
    ],
    era: row.era ?? "—",
    version: row.version,
    level: row.level,
    outcome: row.outcome,
    // Which versions ran ("ran … with …", a platform pair's note) is the
    // Version column's to say: such notes go last.
    notes: row.notes.split("; ").toSorted((a, b) =>
      Number(a.startsWith("ran ")) - Number(b.startsWith("ran "))
    ),
  };
}

const CLIENT_HEADERS = ["Client", "Mode", "Route", "Trigger"];

/** `--compare`: two matrix files' rows; the exit status. */
function compareMatrices(options: ClientsOptions): Promise<number> {
  return compareFiles(
    options.compare ?? [],
    `${options.resultsDir}/matrix.json`,
    {
      resultsDir: options.resultsDir,
      title: "Clients",
      headers: CLIENT_HEADERS,
    },
    { file: MATRIX_FILE, compared: comparedClientRow },
  );
}

/**
 * Whether a run's client never got going: its install failed, it could
 * not be spawned, or it ended badly before the lab saw it.
 */
function didNotStart(record: RunRecord): boolean {
  return record.outcome === "install-failed" ||
    record.outcome === "spawn-failed" ||
    record.outcome !== "completed" && record.outcome !== "not-supported" &&
      !record.labReport?.clients.length;
}

/**
 * `--latest`: each client at its newest version, run into CACHE/latest/
 * (a copy of the committed matrix with the new rows merged in), compared
 * with the committed matrix; with `--write`, accepted. The exit status.
 */
async function runLatest(options: ClientsOptions): Promise<number> {
  const lookups = options.versionsFile
    ? await fixtureLookups(options.versionsFile)
    : REGISTRY_LOOKUPS;
  const newest = await atNewest(options.clients, lookups.npm);
  const locked = await newestLocked(
    options.clients.flatMap(lockedPinsOf),
    lookups.locked,
  );
  const { items: clients } = newest;
  const failures = [...newest.failures, ...locked.failures];
  for (const failure of failures) console.error(printableLine(failure, 500));
  const committedPath = `${options.resultsDir}/matrix.json`;
  const committed = await readJson<MatrixDocument>(committedPath, MATRIX_FILE);
  const freshDir = `${options.cacheDir}/latest`;
  await Deno.remove(freshDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(freshDir, { recursive: true });
  await Deno.copyFile(committedPath, `${freshDir}/matrix.json`);
  const { records, skipped } = await runAndWrite({
    ...options,
    clients,
    resultsDir: freshDir,
  });
  const after = await readJson<MatrixDocument>(
    `${freshDir}/matrix.json`,
    MATRIX_FILE,
  );
  const comparison = compareRows(
    committed.rows.map(comparedClientRow),
    after.rows.map(comparedClientRow),
  );
  const stuck = Map.groupBy(records.filter(didNotStart), (run) => run.clientId);
  const status = await reportChanges(
    options.resultsDir,
    "Clients",
    changesSection(comparison, CLIENT_HEADERS, {
      before: fileLabel(committedPath, committed),
      after: `the newest versions, run by \`deno task clients --latest\` on ${
        proseShown(after.generatedAt.slice(0, 10))
      }`,
      extra: [
        `Run again: ${
          [...new Set(records.map((run) => `${run.clientId} ${run.version}`))]
            .join(", ") || "nothing"
        } (${records.length} runs)`,
        ...locked.lines,
        ...failures,
        ...skipped.length > 0
          ? [`Not run, past the time budget: ${skipped.join(", ")}`]
          : [],
        ...[...stuck].map(([id, [run]]) =>
          `${id} ${run.version} did not install or start, so its pin stays: ${
            run.detail ?? run.outcome
          }`
        ),
      ],
    }),
    comparison,
  );
  if (options.write) {
    await acceptLatest(
      options,
      clients.filter((client) => !stuck.has(client.id)),
      records.filter((run) => !stuck.has(run.clientId)),
    );
  }
  const failed = failures.length > 0 || skipped.length > 0 ||
    records.some((run) => run.outcome === "lab-failed");
  return failed ? 1 : status;
}

/**
 * `--latest --write`: the accepted runs' rows and evidence into RESULTS
 * (the evidence of a version no row names any more removed), and the
 * accepted clients' pins moved in `catalog/` and `clients/README.md`.
 */
async function acceptLatest(
  options: ClientsOptions,
  clients: AnyClient[],
  records: RunRecord[],
) {
  if (records.length === 0) return;
  await writeResults(options, records);
  const pinned = new Map(ALL_CLIENTS.map((client) => [client.id, client]));
  const ran = clients.filter((client) =>
    records.some((run) => run.clientId === client.id)
  );
  const moves = ran.flatMap((client) =>
    pinMoves(pinned.get(client.id)!, client)
  );
  const readme = `${repoRoot}/clients/README.md`;
  const files = PIN_FILES.map((name) => `${repoRoot}/clients/${name}`);
  for (const move of await writePins(files, moves)) {
    console.log(
      `no pin of ${move.npmPackage} ${move.from} in ${
        PIN_FILES.join(", ")
      }: move it to ${move.to} by hand`,
    );
  }
  await Deno.writeTextFile(
    readme,
    withReadmeVersions(
      await Deno.readTextFile(readme),
      new Map(ran.map((client) => [client.id, client.version])),
    ),
  );
  await formatFiles(repoRoot, [...files, readme]);
  for (const move of moves) {
    console.log(`pin moved: ${move.npmPackage} ${move.from} → ${move.to}`);
  }
  const { rows } = await readJson<MatrixDocument>(
    `${options.resultsDir}/matrix.json`,
    MATRIX_FILE,
  );
  const runsDir = `${options.resultsDir}/runs`;
  for (const client of ran) {
    const stale = `${client.id}-${pinned.get(client.id)!.version}-`;
    if (
      client.version === pinned.get(client.id)!.version ||
      rows.some((row) => row.evidence.startsWith(`runs/${stale}`))
    ) continue;
    for await (const entry of Deno.readDir(runsDir)) {
      if (entry.name.startsWith(stale)) {
        await Deno.remove(`${runsDir}/${entry.name}`);
      }
    }
  }
  if (moves.length > 0) {
    console.log(
      "the prose of README.md and results/README.md names versions: read it again",
    );
  }
}

/** `deno task clients`: runs, writes `results/`, checks; the exit status. */
export async function main(args: string[]): Promise<number> {
  const options = optionsOrExit(
    args,
    parseClientsArgs,
    CLIENTS_USAGE,
    "clients",
  );
  if ("exitStatus" in options) return options.exitStatus;
  // The lab, the scripted model and the relays are all on loopback.
  bypassProxyForLoopback();
  try {
    if (options.compare) return await compareMatrices(options);
    if (options.latest) return await runLatest(options);
  } catch (error) {
    console.error(failureLine("clients", error));
    return 1;
  }
  const { records } = await runAndWrite(options);
  if (!options.check) return 0;
  const failures = await checkPublished(options.resultsDir, records, {
    level: options.minLevel,
    catalogLevel: options.minCatalogLevel,
  });
  for (const failure of failures) console.error(`check failed: ${failure}`);
  return failures.length > 0 ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
