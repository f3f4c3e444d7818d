/**
 * One run of a command client (a client no model drives, such as the MCP
 * Inspector's CLIs): a fresh lab on a free loopback port, the client's
 * commands one after another in an isolated home, each bounded; then any
 * daemon it left behind stopped by its PID, and the lab's report.
 *
 * @module
 */

import {
  type CommandClientDefinition,
  isStdioMode,
  launchedMode,
  type ModeId,
} from "../catalog/types.ts";
import {
  defaultDenoDir,
  joinedDetail,
  type LabReports,
  NO_LAB_REPORTS,
  runLabReports,
  type RunningLab,
  startRunLab,
  type StdioLabCommand,
  stdioLabCommand,
} from "../support/run_lab.ts";
import {
  commandLine,
  daemonPid,
  endByPid,
  exitsWithin,
  freshRunDir,
  isolatedEnv,
  removeFolders,
  runProcess,
  tail,
} from "../support/process.ts";
import {
  type BaseRunOptions,
  type CommandStepRecord,
  notStarted,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./run_record.ts";

/** A command client's run: `timeoutSeconds` bounds each command. */
export type CommandRunOptions = BaseRunOptions;

/** Seconds the daemon gets to exit after its own stop command. */
const DAEMON_GRACE_SECONDS = 3;

/** The command as evidence: generic paths, the lab's URL as `$LAB_URL`. */
export function stepCommand(
  bin: string,
  args: string[],
  paths: { home: string; workDir: string; labUrl: string },
): string {
  return commandLine(
    bin,
    args.map((arg) =>
      paths.labUrl ? arg.replaceAll(paths.labUrl, "$LAB_URL") : arg
    ),
    paths,
  );
}

/** The run's outcome: the first command that did not complete, else completed. */
export function overallOutcome(
  steps: Pick<
    CommandStepRecord,
    "outcome" | "exitCode" | "detail" | "command"
  >[],
): Pick<RunRecord, "outcome" | "exitCode" | "detail"> {
  const failed = steps.find((step) => step.outcome !== "completed");
  if (failed) {
    return {
      outcome: failed.outcome,
      exitCode: failed.exitCode,
      detail: `${failed.command.split(" ").slice(0, 2).join(" ")}: ${
        failed.detail ?? failed.outcome
      }`,
    };
  }
  return { outcome: "completed", exitCode: steps.at(-1)?.exitCode ?? null };
}

export async function runCommandClient(
  client: CommandClientDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: CommandRunOptions,
): Promise<RunRecord> {
  const started = performance.now();
  const secondsSinceStart = () => (performance.now() - started) / 1000;
  const base = runHeader(client, mode, trigger, {
    delaySeconds: options.delaySeconds,
    launchMode: options.launchMode,
  });
  const launched = launchedMode({ mode, launchMode: options.launchMode });
  const folders = await freshRunDir(options.runDir);
  const lab = await commandLab(launched, trigger, options);
  if ("failed" in lab) {
    return {
      ...notStarted(base, "lab-failed", lab.failed, secondsSinceStart()),
      kind: "command",
    };
  }
  // The daemon's folder: short, private to this run, removed after it.
  const daemonDir = client.daemon
    ? await Deno.makeTempDir({ dir: "/tmp", prefix: "lab-daemon-" })
    : undefined;
  const steps: CommandStepRecord[] = [];
  const labUrl = "url" in lab ? lab.url : "";
  const run = stepRunner(client, options, {
    ...folders,
    labUrl,
    daemonDir,
    steps,
    secondsSinceStart,
  });
  let reports: LabReports | { unavailable: string } = NO_LAB_REPORTS;
  let daemon: string | undefined;
  try {
    const planned = client.steps({
      home: folders.home,
      labUrl,
      ...("stdio" in lab ? { stdioLab: lab.stdio } : {}),
      mode: launched,
      delaySeconds: options.delaySeconds,
    });
    for (const [index, step] of planned.entries()) {
      await run(step.args, index + 1, step.streamSeconds);
    }
    reports = await runLabReports(lab, options.runDir, {
      trigger,
      updateDelaySeconds: options.delaySeconds,
      labSettings: options.labSettings,
    });
  } finally {
    if (client.daemon && daemonDir) {
      daemon = await stopDaemon(client, run, daemonDir, steps.length + 1);
      await Deno.remove(daemonDir, { recursive: true }).catch(() => {});
    }
    if ("stop" in lab) await lab.stop();
  }
  if (!options.keepHome) await removeFolders(Object.values(folders));
  const outcome = overallOutcome(steps);
  return {
    ...base,
    durationSeconds: Math.round(secondsSinceStart()),
    ...outcome,
    ...("unavailable" in reports
      ? { detail: joinedDetail(outcome.detail, reports.unavailable) }
      : {}),
    command: steps.map((step) => step.command).join("\n"),
    ...("unavailable" in reports ? NO_LAB_REPORTS : reports),
    transcript: [],
    outputTail: steps.map((step) => step.outputTail).filter(Boolean).join(
      "\n",
    ),
    kind: "command",
    steps,
    ...(daemon ? { daemon } : {}),
  };
}

/**
 * The run's lab: over HTTP, started here; in a stdio mode, the command the
 * client starts it with, its stderr (and so its verdict) in the run's
 * `lab.log`, the lab's modules from the harness's deno cache.
 */
async function commandLab(
  mode: ModeId,
  trigger: Trigger,
  options: CommandRunOptions,
): Promise<RunningLab | { stdio: StdioLabCommand } | { failed: string }> {
  if (!isStdioMode(mode)) return await startRunLab(options, trigger);
  return {
    stdio: stdioLabCommand({
      labMainPath: options.labMainPath,
      denoDir: defaultDenoDir(),
      stderrPath: `${options.runDir}/lab.log`,
      trigger,
      delaySeconds: options.delaySeconds,
      labSettings: options.labSettings,
    }),
  };
}

/** Runs one of the client's commands; `index` names its log. */
type StepRunner = (
  args: string[],
  index: number,
  streamSeconds?: number,
) => Promise<void>;

/**
 * Runs the client's commands one at a time in its isolated folders (a
 * streaming one stopped as planned), recording each in `run.steps`.
 */
function stepRunner(
  client: CommandClientDefinition,
  options: CommandRunOptions,
  run: {
    home: string;
    workDir: string;
    tmpDir: string;
    labUrl: string;
    daemonDir: string | undefined;
    steps: CommandStepRecord[];
    secondsSinceStart(): number;
  },
): StepRunner {
  const env = {
    ...isolatedEnv(run.home, run.tmpDir),
    ...client.env,
    ...(client.daemon && run.daemonDir
      ? { [client.daemon.dirEnv]: run.daemonDir }
      : {}),
  };
  return async (args, index, streamSeconds) => {
    const startedAt = run.secondsSinceStart();
    const result = await runProcess(options.binPath, args, {
      cwd: run.workDir,
      env,
      outputPath: `${options.runDir}/step-${index}.log`,
      timeoutSeconds: options.timeoutSeconds,
      stopAfterSeconds: streamSeconds === undefined
        ? undefined
        : Math.min(streamSeconds, options.timeoutSeconds),
    });
    run.steps.push({
      startedAt: Math.round(startedAt * 10) / 10,
      command: stepCommand(client.bin, args, run),
      outcome: result.outcome,
      exitCode: result.exitCode,
      detail: result.detail,
      durationSeconds: Math.round((run.secondsSinceStart() - startedAt) * 10) /
        10,
      outputTail: tail(
        run.labUrl
          ? result.output.replaceAll(run.labUrl, "$LAB_URL")
          : result.output,
        20,
      ),
    });
  };
}

/**
 * Ends the daemon the client started: its own stop command, then, if its
 * PID is still alive, SIGTERM and SIGKILL to that PID (never by name).
 */
async function stopDaemon(
  client: CommandClientDefinition,
  run: StepRunner,
  daemonDir: string,
  index: number,
): Promise<string> {
  const daemon = client.daemon!;
  const pid = daemonPid(
    await Deno.readTextFile(`${daemonDir}/${daemon.pidFile}`).catch(() => ""),
  );
  if (pid === undefined) return "no daemon PID file: no daemon was running";
  await run(daemon.stopArgs, index);
  if (await exitsWithin(pid, DAEMON_GRACE_SECONDS * 1000)) {
    return `daemon PID ${pid} ended after \`${client.bin} ${
      daemon.stopArgs.join(" ")
    }\``;
  }
  return `daemon PID ${pid} outlived its stop command; ${await endByPid(
    pid,
    1000,
  )}`;
}
