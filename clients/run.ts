/**
 * `deno task clients [name...]`: installs each client at its pinned version,
 * runs it against a fresh lab and scripted model in every mode, on every
 * route and under both triggers, and regenerates `results/`.
 *
 * Options:
 *   --results-dir DIR  where to write (default: the repository's results/)
 *   --cache-dir DIR    installs and run folders (default: see install.ts)
 *   --timeout S        seconds per client run (default 120)
 *   --delay S          the lab's update delay (default 3)
 *   --trigger T        only this trigger (subscribe or read; default both)
 *   --route R[,R…]     these routes (native, wait-tool, shell-probe; default
 *                      all three); command clients run on native only
 *   --only G[,G…]      these groups: agents (the agent CLIs, with the
 *                      scripted model), inspector (the MCP Inspector's
 *                      command clients, mcpdo and the Inspector CLI, and its
 *                      web UI), browser (the web UI alone, driven in
 *                      headless Chromium); default all
 *   --install-browser  when /usr/bin/chromium is missing, install Debian's
 *                      chromium with apt-get (as root) before the browser
 *                      runs; without it, the runs are skipped and the
 *                      command that installs it is printed
 *   --long-wait        instead: one wait-tool run per client (mode default,
 *                      trigger subscribe) with the update after
 *                      --long-wait-delay S (default 90): does the call
 *                      survive the client's tool-call timeout? The clients
 *                      run side by side, since each run takes minutes.
 *   --progress-check   instead: two wait-tool runs per client with its MCP
 *                      tool timeout set to 20 s and the update after 40 s,
 *                      one with the lab's progress notifications, one with
 *                      the call's progressToken removed on its way to the
 *                      lab (the control): does the client reset its tool
 *                      timeout on progress? Side by side, like --long-wait.
 *   --budget S         start no run after S seconds (default 1800)
 *   --min-level N      with --check: each row must reach at least level N
 *   --keep-homes       keep each run's isolated home (for debugging a client)
 *   --check            exit 1 unless every run produced its row and the
 *                      row's level matches what the lab recorded (on the
 *                      wait-tool and shell-probe routes, a 7 needs the lab's
 *                      wait-tool level 6 or its probe client at level 6)
 *
 * @module
 */

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  ALL_CLIENTS,
  type AnyClient,
  type Group,
  GROUPS,
  isBrowserClient,
  isCommandClient,
  isUnsupportedClient,
  selectClients,
} from "./catalog.ts";
import {
  browserInstalled,
  CHROMIUM_PATH,
  INSTALL_BROWSER_COMMAND,
  runBrowserClient,
} from "./browser_runner.ts";
import { runCommandClient } from "./command_runner.ts";
import { type Route, ROUTES } from "./decide.ts";
import { defaultCacheDir, installClient } from "./install.ts";
import {
  evidenceFile,
  evidenceLink,
  evidenceMarkdown,
  mainLabClient,
  type MatrixDocument,
  matrixMarkdown,
  mergeEvidence,
  mergeRows,
  probeLabLevel,
  refreshNote,
  rowFromRun,
} from "./matrix.ts";
import type { ModeId } from "./catalog.ts";
import { PROGRESS_CHECK, runAgentClient } from "./agent_runner.ts";
import {
  notStarted,
  type ProgressCheck,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./run_record.ts";

const repoRoot = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    "results-dir": { type: "string", default: `${repoRoot}/results` },
    "cache-dir": { type: "string", default: defaultCacheDir() },
    timeout: { type: "string", default: "120" },
    delay: { type: "string", default: "3" },
    trigger: { type: "string" },
    route: { type: "string", default: ROUTES.join(",") },
    "long-wait": { type: "boolean", default: false },
    "progress-check": { type: "boolean", default: false },
    "long-wait-delay": { type: "string", default: "90" },
    budget: { type: "string", default: "1800" },
    "min-level": { type: "string", default: "0" },
    check: { type: "boolean", default: false },
    "keep-homes": { type: "boolean", default: false },
    only: { type: "string" },
    "install-browser": { type: "boolean", default: false },
  },
});

function positiveNumber(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name} ${raw}: expected a non-negative number`);
    Deno.exit(2);
  }
  return value;
}

const timeoutSeconds = positiveNumber("timeout", values.timeout);
const delaySeconds = positiveNumber("delay", values.delay);
const budgetSeconds = positiveNumber("budget", values.budget);
const minLevel = positiveNumber("min-level", values["min-level"]);
const triggers: Trigger[] = values.trigger === undefined
  ? ["subscribe", "read"]
  : values.trigger === "subscribe" || values.trigger === "read"
  ? [values.trigger]
  : (() => {
    console.error(`--trigger ${values.trigger}: expected subscribe or read`);
    return Deno.exit(2);
  })();
const routes = values.route.split(",").map((route) => route.trim());
const badRoutes = routes.filter((route) => !ROUTES.includes(route as Route));
if (badRoutes.length > 0 || routes.length === 0) {
  console.error(
    `--route ${values.route}: expected a comma-separated list of ${
      ROUTES.join(", ")
    }`,
  );
  Deno.exit(2);
}
const selectedRoutes = ROUTES.filter((route) => routes.includes(route));
const longWait = values["long-wait"];
const longWaitDelay = positiveNumber(
  "long-wait-delay",
  values["long-wait-delay"],
);
if (longWait && longWaitDelay <= 60) {
  console.error(
    `--long-wait-delay ${longWaitDelay}: must be above 60 s, past the usual tool-call timeouts`,
  );
  Deno.exit(2);
}
const progressCheck = values["progress-check"];
if (longWait && progressCheck) {
  console.error("--long-wait and --progress-check are separate runs: pick one");
  Deno.exit(2);
}
/** Runs that wait for minutes go side by side, one per client. */
const sideBySide = longWait || progressCheck;
const unknown = positionals.filter((id) =>
  !ALL_CLIENTS.some((client) => client.id === id)
);
if (unknown.length > 0) {
  console.error(
    `unknown client(s): ${unknown.join(", ")}; known: ${
      ALL_CLIENTS.map((client) => client.id).join(", ")
    }`,
  );
  Deno.exit(2);
}
const onlyGroups = (values.only ?? "").split(",").map((group) => group.trim())
  .filter((group) => group !== "");
const badGroups = onlyGroups.filter((group) =>
  !GROUPS.includes(group as Group)
);
if (
  badGroups.length > 0 || (values.only !== undefined && onlyGroups.length === 0)
) {
  console.error(
    `--only ${values.only}: expected a comma-separated list of ${
      GROUPS.join(", ")
    }`,
  );
  Deno.exit(2);
}
const selected = selectClients(positionals, onlyGroups as Group[]);
if (selected.length === 0) {
  console.error("no client matches the names and --only groups given");
  Deno.exit(2);
}
// Absolute, because `deno fmt` below runs inside the results folder.
const resultsDir = resolve(values["results-dir"]);
const cacheDir = resolve(values["cache-dir"]);
const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;

interface PlannedRun {
  mode: ModeId;
  route: Route;
  trigger: Trigger;
  longWait: boolean;
  progressCheck?: ProgressCheck;
  delaySeconds: number;
}

/**
 * A client's runs: every mode, route and trigger, or its one long wait. A
 * command client has no model to take the wait-tool or shell-probe route,
 * nor to wait on a tool call, so it runs natively or not at all.
 */
function plannedRuns(client: AnyClient): PlannedRun[] {
  if (isUnsupportedClient(client)) {
    // One row, no run: it says why.
    return sideBySide ? [] : [{
      mode: "default",
      route: "native",
      trigger: "subscribe",
      longWait: false,
      delaySeconds,
    }];
  }
  if (isCommandClient(client) || isBrowserClient(client)) {
    if (sideBySide || !selectedRoutes.includes("native")) return [];
    return client.modes.flatMap((mode) =>
      triggers.map((trigger) => ({
        mode,
        route: "native" as const,
        trigger,
        longWait: false,
        delaySeconds,
      }))
    );
  }
  if (progressCheck) {
    return (["progress", "no-progress"] as const).map((check) => ({
      mode: "default",
      route: "wait-tool",
      trigger: "subscribe",
      longWait: false,
      progressCheck: check,
      delaySeconds: PROGRESS_CHECK.delaySeconds,
    }));
  }
  if (longWait) {
    return [{
      mode: "default",
      route: "wait-tool",
      trigger: "subscribe",
      longWait: true,
      delaySeconds: longWaitDelay,
    }];
  }
  return client.modes.flatMap((mode) =>
    selectedRoutes.flatMap((route) =>
      triggers.map((trigger) => ({
        mode,
        route,
        trigger,
        longWait: false,
        delaySeconds,
      }))
    )
  );
}

/**
 * Whether Chromium is there for the browser clients: installed with apt-get
 * when `--install-browser` says so, else the command that would.
 */
async function ensureBrowser(): Promise<boolean> {
  if (await browserInstalled()) return true;
  if (!values["install-browser"]) {
    console.log(
      `   ${CHROMIUM_PATH} is missing: install it with \`${INSTALL_BROWSER_COMMAND}\` (as root), or pass --install-browser; skipped`,
    );
    return false;
  }
  console.log(
    `   ${CHROMIUM_PATH} is missing; running: ${INSTALL_BROWSER_COMMAND}`,
  );
  const { success } = await new Deno.Command("sh", {
    args: ["-c", INSTALL_BROWSER_COMMAND],
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!success || !await browserInstalled()) {
    console.log(`   the install did not leave ${CHROMIUM_PATH}; skipped`);
    return false;
  }
  return true;
}

const records: RunRecord[] = [];
const sideBySideRuns: Promise<RunRecord>[] = [];
const skipped: string[] = [];
for (const client of selected) {
  if (elapsed() > budgetSeconds) {
    skipped.push(client.id);
    continue;
  }
  if (plannedRuns(client).length === 0) {
    console.log(
      `== ${client.displayName}: skipped (a command client runs only on the native route, and has no long-wait or progress check)`,
    );
    continue;
  }
  console.log(
    `== ${client.displayName} (${client.npmPackage}@${client.version})`,
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
    continue;
  }
  if (isBrowserClient(client) && !await ensureBrowser()) continue;
  const install = await installClient(client, cacheDir);
  if (!install.ok) {
    console.log(
      `   install failed after ${install.seconds} s: ${install.reason}`,
    );
    for (const run of plannedRuns(client)) {
      records.push(
        notStarted(
          runHeader(client, run.mode, run.trigger, run),
          "install-failed",
          install.reason,
          install.seconds,
        ),
      );
    }
    continue;
  }
  console.log(
    `   ${install.cached ? "cached" : `installed in ${install.seconds} s`}`,
  );
  const binPath = install.binPath;
  const runOne = async (run: PlannedRun) => {
    const label = `${run.mode} ${run.route}${
      run.longWait ? " (long wait)" : ""
    }${
      run.progressCheck ? ` (progress check: ${run.progressCheck})` : ""
    } ${run.trigger}`;
    const runDir =
      `${cacheDir}/runs/${client.id}-${client.version}-${run.mode}-${
        run.route === "native" ? "" : `${run.route}-`
      }${run.longWait ? "long-wait-" : ""}${
        run.progressCheck ? `${run.progressCheck}-check-` : ""
      }${run.trigger}`;
    const record = isBrowserClient(client)
      ? await runBrowserClient(client, run.mode, run.trigger, {
        labMainPath: `${repoRoot}/main.ts`,
        runDir,
        binPath,
        delaySeconds: run.delaySeconds,
        timeoutSeconds: Math.min(timeoutSeconds, 60),
        keepHome: values["keep-homes"],
      })
      : isCommandClient(client)
      ? await runCommandClient(client, run.mode, run.trigger, {
        labMainPath: `${repoRoot}/main.ts`,
        runDir,
        binPath,
        delaySeconds: run.delaySeconds,
        timeoutSeconds,
        keepHome: values["keep-homes"],
      })
      : await runAgentClient(client, run.mode, run.trigger, {
        labMainPath: `${repoRoot}/main.ts`,
        runDir,
        binPath,
        delaySeconds: run.delaySeconds,
        // A long wait needs the update delay plus the rest of the run.
        timeoutSeconds: run.longWait || run.progressCheck
          ? Math.max(timeoutSeconds, run.delaySeconds + 90)
          : timeoutSeconds,
        keepHome: values["keep-homes"],
        route: run.route,
        longWait: run.longWait,
        progressCheck: run.progressCheck,
      });
    const row = rowFromRun(record);
    console.log(
      `   ${label}: ${record.outcome} in ${record.durationSeconds} s, level ${row.level}${
        row.era ? `, era ${row.era}` : ""
      }${row.notes ? ` — ${row.notes}` : ""}`,
    );
    return record;
  };
  if (sideBySide) {
    sideBySideRuns.push(...plannedRuns(client).map(runOne));
    continue;
  }
  for (const run of plannedRuns(client)) {
    if (elapsed() > budgetSeconds) {
      skipped.push(`${client.id}/${run.mode}/${run.route}/${run.trigger}`);
      continue;
    }
    records.push(await runOne(run));
  }
}
records.push(...await Promise.all(sideBySideRuns));

// Evidence: one file per client, mode and route.
await Deno.mkdir(`${resultsDir}/runs`, { recursive: true });
const written: string[] = [];
const groups = Map.groupBy(
  records,
  (record) =>
    evidenceFile(record.clientId, record.version, record.mode, record.route),
);
for (const [file, runs] of groups) {
  const previousEvidence = await Deno.readTextFile(`${resultsDir}/${file}`)
    .catch(() => "");
  await Deno.writeTextFile(
    `${resultsDir}/${file}`,
    mergeEvidence(previousEvidence, evidenceMarkdown(runs)),
  );
  written.push(`${resultsDir}/${file}`);
  // A browser run's screenshots sit beside its evidence file.
  for (const run of runs) {
    for (const shot of run.screenshots ?? []) {
      await Deno.copyFile(
        shot.path,
        `${resultsDir}/runs/${shot.path.split("/").at(-1)}`,
      );
    }
  }
}

// The matrix: fresh rows replace their old selves, other rows stay.
const matrixJson = `${resultsDir}/matrix.json`;
let previous: MatrixDocument | undefined;
try {
  previous = JSON.parse(await Deno.readTextFile(matrixJson)) as MatrixDocument;
} catch {
  previous = undefined;
}
const freshRows = records.map(rowFromRun);
const rows = mergeRows(
  previous?.rows ?? [],
  freshRows,
  ALL_CLIENTS.map((client) => client.id),
);
const document: MatrixDocument = {
  generatedAt: new Date().toISOString(),
  labVersion: freshRows.find((row) => row.labVersion)?.labVersion ??
    previous?.labVersion ?? null,
  // A long-wait or progress-check run leaves the usual delay as it was.
  delaySeconds: sideBySide
    ? previous?.delaySeconds ?? delaySeconds
    : delaySeconds,
  rows,
};
await Deno.writeTextFile(matrixJson, JSON.stringify(document, null, 2) + "\n");
await Deno.writeTextFile(
  `${resultsDir}/compatibility-matrix.md`,
  matrixMarkdown(document),
);
written.push(matrixJson, `${resultsDir}/compatibility-matrix.md`);
// The files are committed, so they must pass `deno fmt --check`.
await new Deno.Command(Deno.execPath(), {
  args: ["fmt", "--quiet", ...written],
  cwd: resultsDir,
  stdout: "inherit",
  stderr: "inherit",
}).output();

console.log(
  `wrote ${resultsDir}/compatibility-matrix.md (${freshRows.length} fresh row(s), ${rows.length} in all) in ${
    Math.round(elapsed())
  } s`,
);
if (skipped.length > 0) {
  console.log(`time budget reached; not run: ${skipped.join(", ")}`);
}

if (values.check) {
  // Read back what was published and compare it with the lab's own report.
  const published = await Deno.readTextFile(
    `${resultsDir}/compatibility-matrix.md`,
  );
  const failures: string[] = [];
  const lines = published.split("\n");
  // The Level column, found by its header rather than by position.
  // (`deno fmt` pads the cells, so the header is matched loosely.)
  const header = lines.find((text) => /^\|\s*Client\s*\|/.test(text)) ?? "";
  const levelColumn = header.split("|").map((text) => text.trim()).indexOf(
    "Level",
  );
  for (const record of records) {
    const label = `${record.clientId}/${record.mode}/${record.route}${
      record.longWait ? " (long wait)" : ""
    }${
      record.progressCheck ? ` (progress check: ${record.progressCheck})` : ""
    }/${record.trigger}`;
    const evidence = `(${evidenceLink(record)})`;
    const line = lines.find((text) => text.includes(evidence));
    if (line === undefined) {
      failures.push(`${label}: no row in the matrix`);
      continue;
    }
    const level = Number(
      line.split("|").map((text) => text.trim())[levelColumn],
    );
    const labClient = record.labReport
      ? mainLabClient(record.labReport.clients)
      : undefined;
    const labLevel = record.labReport ? labClient?.level ?? 0 : undefined;
    // What the lab itself recorded for a 7 on this route.
    const labSeven = record.route === "native"
      ? labLevel === 6
      : record.route === "wait-tool"
      ? labClient?.waitTool.level === 6
      : (probeLabLevel(record.labReport?.clients ?? []) ?? 0) >= 6;
    const labSays = record.route === "native"
      ? `the lab ${labLevel}`
      : record.route === "wait-tool"
      ? `the lab ${labLevel}, wait tool level ${
        labClient?.waitTool.level ?? null
      }`
      : `the lab ${labLevel}, probe level ${
        probeLabLevel(record.labReport?.clients ?? [])
      }`;
    if (labLevel === undefined) {
      failures.push(`${label}: the lab recorded nothing (${record.outcome})`);
    } else if (level !== labLevel && !(level === 7 && labSeven)) {
      failures.push(`${label}: the row says level ${level}, ${labSays}`);
    } else if (level < minLevel) {
      failures.push(`${label}: level ${level}, expected at least ${minLevel}`);
    } else if (
      record.kind === "browser" &&
      (!record.afterRefresh || !line.includes(refreshNote(record.afterRefresh)))
    ) {
      failures.push(
        `${label}: the row does not say the lab's level after the Refresh click (${
          record.afterRefresh
            ? `lab ${record.afterRefresh.labLevel}`
            : "no click happened"
        })`,
      );
    } else {
      console.log(
        `check ${label}: row level ${level} agrees with ${labSays}${
          record.afterRefresh
            ? `; after the Refresh click the lab ${record.afterRefresh.labLevel}, as the row says`
            : ""
        }`,
      );
    }
  }
  if (records.length === 0) failures.push("no run happened");
  if (failures.length > 0) {
    for (const failure of failures) console.error(`check failed: ${failure}`);
    Deno.exit(1);
  }
}
