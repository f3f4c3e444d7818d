/**
 * One run of a command client (a client no model drives, such as the MCP
 * Inspector's CLIs): a fresh lab on a free loopback port, the client's
 * commands one after another in an isolated home, each bounded; then any
 * daemon it left behind stopped by its PID, and the lab's report.
 *
 * @module
 */

import type { CommandClientDefinition, ModeId } from "./catalog.ts";
import type { LabReport } from "../main.ts";
import { startRunLab } from "./lab.ts";
import {
  alive,
  commandLine,
  daemonPid,
  freshRunDir,
  isolatedEnv,
  type ProcessResult,
  runProcess,
  sleep,
  tail,
} from "./process.ts";
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
    args.map((arg) => arg.replaceAll(paths.labUrl, "$LAB_URL")),
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
  });
  const { home, workDir, tmpDir } = await freshRunDir(options.runDir);
  const lab = await startRunLab(options, trigger);
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
  const env = {
    ...isolatedEnv(home, tmpDir),
    ...client.env,
    ...(client.daemon && daemonDir
      ? { [client.daemon.dirEnv]: daemonDir }
      : {}),
  };
  const paths = { home, workDir, labUrl: lab.url };
  const steps: CommandStepRecord[] = [];
  const run = async (args: string[], index: number, streamSeconds?: number) => {
    const startedAt = secondsSinceStart();
    const result: ProcessResult = await runProcess(options.binPath, args, {
      cwd: workDir,
      env,
      outputPath: `${options.runDir}/step-${index}.log`,
      timeoutSeconds: options.timeoutSeconds,
      stopAfterSeconds: streamSeconds === undefined
        ? undefined
        : Math.min(streamSeconds, options.timeoutSeconds),
    });
    steps.push({
      startedAt: Math.round(startedAt * 10) / 10,
      command: stepCommand(client.bin, args, paths),
      outcome: result.outcome,
      exitCode: result.exitCode,
      detail: result.detail,
      durationSeconds: Math.round((secondsSinceStart() - startedAt) * 10) / 10,
      outputTail: tail(result.output.replaceAll(lab.url, "$LAB_URL"), 20),
    });
  };
  let labReport: LabReport | null = null;
  let labReportMarkdown: string | null = null;
  let daemon: string | undefined;
  let reportError: string | undefined;
  try {
    const planned = client.steps({
      home,
      labUrl: lab.url,
      mode,
      delaySeconds: options.delaySeconds,
    });
    for (const [index, step] of planned.entries()) {
      await run(step.args, index + 1, step.streamSeconds);
    }
    // Let the lab log the last requests (a DELETE, a closed stream).
    await sleep(500);
    try {
      labReport = await lab.report();
      labReportMarkdown = await lab.reportMarkdown();
    } catch (error) {
      reportError = `lab report unavailable: ${error}`;
    }
  } finally {
    if (client.daemon && daemonDir) {
      daemon = await stopDaemon(client, run, daemonDir, steps.length + 1);
      await Deno.remove(daemonDir, { recursive: true }).catch(() => {});
    }
    await lab.stop();
  }
  if (!options.keepHome) {
    for (const dir of [home, workDir, tmpDir]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  const outcome = overallOutcome(steps);
  return {
    ...base,
    durationSeconds: Math.round(secondsSinceStart()),
    ...outcome,
    ...(reportError
      ? {
        detail: outcome.detail
          ? `${outcome.detail}; ${reportError}`
          : reportError,
      }
      : {}),
    command: steps.map((step) => step.command).join("\n"),
    labReport,
    labReportMarkdown,
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
 * Ends the daemon the client started: its own stop command, then, if its
 * PID is still alive, SIGTERM and SIGKILL to that PID (never by name).
 */
async function stopDaemon(
  client: CommandClientDefinition,
  run: (args: string[], index: number) => Promise<void>,
  daemonDir: string,
  index: number,
): Promise<string> {
  const daemon = client.daemon!;
  const pid = daemonPid(
    await Deno.readTextFile(`${daemonDir}/${daemon.pidFile}`).catch(() => ""),
  );
  if (pid === undefined) return "no daemon PID file: no daemon was running";
  await run(daemon.stopArgs, index);
  for (let waited = 0; waited < DAEMON_GRACE_SECONDS * 10; waited++) {
    if (!await alive(pid)) {
      return `daemon PID ${pid} ended after \`${client.bin} ${
        daemon.stopArgs.join(" ")
      }\``;
    }
    await sleep(100);
  }
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    try {
      Deno.kill(pid, signal);
    } catch {
      // Already gone.
    }
    await sleep(1000);
    if (!await alive(pid)) {
      return `daemon PID ${pid} outlived its stop command; ended with ${signal}`;
    }
  }
  return `daemon PID ${pid} is still running after SIGKILL`;
}
