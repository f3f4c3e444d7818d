/**
 * One run: a fresh lab and scripted model on free loopback ports, the client
 * headless in an isolated home, bounded by a timeout; then the lab's report
 * and the model's transcript. A client that crashes, hangs or refuses the
 * server is a result, not an error.
 *
 * @module
 */

import { dirname, join, relative } from "node:path";
import {
  type ClientDefinition,
  isStdioMode,
  type LaunchContext,
  launchedMode,
  type ModeId,
} from "../catalog/types.ts";
import { REVIEW_URI, whenStreamEnds } from "../../main.ts";
import type { ModelScript, Route } from "../model/decide.ts";
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
  freshRunDir,
  isolatedEnv,
  type ProcessResult,
  removeFolders,
  runProcess,
  shellQuote,
  sleep,
  tail,
} from "../support/process.ts";
import {
  type BaseRunOptions,
  notStarted,
  PROGRESS_CHECK,
  type ProgressCheck,
  PROMPT,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./run_record.ts";
import { startScriptedModel } from "../model/scripted_model.ts";

/** An agent run: its route, and the slower checks of the wait-tool route. */
export interface RunOptions extends BaseRunOptions {
  /** The route the model takes (`native` when absent). */
  route?: Route;
  /**
   * A long-wait run: the wait-tool route with an update delay above a
   * minute, to see whether the client lets the call block that long.
   */
  longWait?: boolean;
  /**
   * A progress-check run of the wait-tool route: the client's MCP tool
   * timeout set short (`PROGRESS_CHECK.toolTimeoutSeconds`), the update
   * after it; `no-progress` also removes the call's progressToken on its way
   * to the lab, so no progress notification is sent (the control).
   */
  progressCheck?: ProgressCheck;
  /** Where the probe on the shell-probe route finds its cached modules. */
  denoDir?: string;
}

/**
 * A JSON-RPC body with the `progressToken` of any `tools/call` removed, so
 * the lab sends that call no progress notifications; other bodies as they
 * were.
 */
export function withoutProgressToken(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  let changed = false;
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const meta = message?.method === "tools/call"
      ? message.params?._meta
      : undefined;
    if (meta && typeof meta === "object" && "progressToken" in meta) {
      delete meta.progressToken;
      changed = true;
    }
  }
  return changed ? JSON.stringify(parsed) : body;
}

/**
 * A loopback relay to the lab that passes everything through (streams
 * included), counting the tool calls that carry a progressToken, and with
 * `strip` removing that token on the way.
 */
export function startProgressRelay(
  labUrl: string,
  strip = true,
): { url: string; tokens(): number; close(): Promise<void> } {
  const target = new URL(labUrl);
  const shutdown = new AbortController();
  let withToken = 0;
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      signal: shutdown.signal,
      onListen() {},
    },
    async (request) => {
      const url = new URL(request.url);
      const original = request.body === null ? undefined : await request.text();
      const stripped = original === undefined
        ? undefined
        : withoutProgressToken(original);
      if (stripped !== original) withToken++;
      const body = strip ? stripped : original;
      const headers = new Headers(request.headers);
      headers.delete("host");
      headers.delete("content-length");
      // The upstream call ends when the client leaves, never when its
      // answer has merely started: Deno's legacy behaviour aborts
      // `request.signal` after every successful response, which would cut
      // a streamed answer short, and the next behaviour does not.
      const upstream = new AbortController();
      let answered = false;
      request.signal.addEventListener("abort", () => {
        if (!answered) upstream.abort();
      }, { once: true });
      try {
        const answer = await fetch(
          `${target.origin}${url.pathname}${url.search}`,
          { method: request.method, headers, body, signal: upstream.signal },
        );
        answered = true;
        const passed = answer.body &&
          whenStreamEnds(answer.body, (byClient) => {
            if (byClient) upstream.abort();
          });
        return new Response(passed, {
          status: answer.status,
          headers: answer.headers,
        });
      } catch {
        return new Response("lab unreachable", { status: 502 });
      }
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}${target.pathname}`,
    /** How many requests carried a progressToken (removed, with `strip`). */
    tokens: () => withToken,
    async close() {
      shutdown.abort();
      await server.finished;
    },
  };
}

/** The name the lab gives its blocking tool. */
export const WAIT_TOOL = "wait_for_review_update";

/** How the client's shell runs the probe on the shell-probe route. */
export interface ProbeInvocation {
  /** The Deno binary that runs the harness, by its full path. */
  denoPath: string;
  /** The checkout's `probe.ts`. */
  probePath: string;
  /** The deno cache the probe's modules come from. */
  denoDir: string;
}

/** The probe as the harness's own Deno and checkout run it. */
export function harnessProbe(labMainPath: string, denoDir: string) {
  return {
    denoPath: Deno.execPath(),
    probePath: join(dirname(labMainPath), "probe.ts"),
    denoDir,
  };
}

/**
 * The command the model hands the client's shell tool on the shell-probe
 * route: the lab's probe against this run's lab, from the deno cache only,
 * without deno's own update check (a lookup of dl.deno.land): nothing leaves
 * loopback. Deno is named by its full path, since the client's shell may
 * not find it on its PATH (a Deno from `npx deno` lives in a cache folder).
 */
export function probeCommand(probe: ProbeInvocation, labUrl: string): string {
  return [
    `DENO_DIR=${shellQuote(probe.denoDir)}`,
    "DENO_NO_UPDATE_CHECK=1",
    shellQuote(probe.denoPath),
    "run",
    "-A",
    "--cached-only",
    shellQuote(probe.probePath),
    "--url",
    shellQuote(labUrl),
    "--uri",
    shellQuote(REVIEW_URI),
    "--json",
  ].join(" ");
}

/**
 * The wait tool's arguments: version 1 is what the model read, and the
 * timeout is past the lab's update delay (a minute past it on a long wait).
 */
export function waitArguments(
  delaySeconds: number,
): { since_version: number; timeout_seconds: number } {
  return {
    since_version: 1,
    timeout_seconds: Math.min(600, Math.max(60, Math.ceil(delaySeconds) + 60)),
  };
}

/** What the model needs for this client on this route. */
export function routeScript(
  client: ClientDefinition,
  route: Route,
  context: { probe: ProbeInvocation; labUrl: string; delaySeconds: number },
): Pick<ModelScript, "route" | "routeCall" | "routeUnavailable" | "loader"> {
  const loader = client.routeLoader?.[route] ?? client.script.loader;
  if (route === "wait-tool") {
    return {
      route,
      loader,
      routeCall: {
        name: WAIT_TOOL,
        input: waitArguments(context.delaySeconds),
      },
    };
  }
  if (route === "shell-probe") {
    if ("unavailable" in client.shell) {
      return { route, loader, routeUnavailable: client.shell.unavailable };
    }
    return {
      route,
      loader,
      routeCall: {
        name: client.shell.name,
        input: client.shell.input(probeCommand(context.probe, context.labUrl)),
      },
    };
  }
  return { route, loader };
}

/** Seconds the model waits past the lab's update delay before its nudge. */
const WAIT_MARGIN_SECONDS = 2;

/**
 * Ends the daemon an agent left behind, by the PID its record holds:
 * SIGTERM, then SIGKILL if it is still alive 3 s later. Says what it did.
 */
export async function stopAgentDaemon(recordPath: string): Promise<string> {
  // A client that exits quickly may leave the daemon still writing it.
  let pid: number | undefined;
  for (let waited = 0; waited < 50 && pid === undefined; waited++) {
    pid = daemonPid(await Deno.readTextFile(recordPath).catch(() => ""));
    if (pid === undefined) await sleep(100);
  }
  if (pid === undefined) return "no daemon PID record: no daemon was running";
  return `daemon PID ${pid} ${await endByPid(pid)}`;
}

export async function runAgentClient(
  client: ClientDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: RunOptions,
): Promise<RunRecord> {
  const started = performance.now();
  const route = options.route ?? "native";
  const base = runHeader(client, mode, trigger, {
    route,
    longWait: options.longWait,
    progressCheck: options.progressCheck,
    delaySeconds: options.delaySeconds,
    launchMode: options.launchMode,
  });
  const launched = launchedMode({ mode, launchMode: options.launchMode });
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const folders = await freshRunDir(options.runDir);
  const denoDir = options.denoDir ?? defaultDenoDir();
  const lab = await runLab(client, launched, trigger, options, denoDir);
  if ("failed" in lab) {
    return notStarted(base, "lab-failed", lab.failed, seconds());
  }
  const labUrl = "url" in lab ? lab.url : "";
  const model = startScriptedModel({
    ...client.script,
    waitSeconds: options.delaySeconds + WAIT_MARGIN_SECONDS,
    ...routeScript(client, route, {
      probe: harnessProbe(options.labMainPath, denoDir),
      labUrl,
      delaySeconds: options.delaySeconds,
    }),
  });
  // Both checks relay the client through the counter; only the control
  // removes the progressToken.
  const relay = options.progressCheck
    ? startProgressRelay(labUrl, options.progressCheck === "no-progress")
    : undefined;
  let ran: AgentProcess = { command: "", result: NOT_SPAWNED };
  let reports: LabReports | { unavailable: string } = NO_LAB_REPORTS;
  let daemon: string | undefined;
  try {
    ran = await launchAgent(client, launched, options, folders, {
      labUrl: relay?.url ?? labUrl,
      stdioLab: "stdio" in lab ? lab.stdio : undefined,
      denoDir,
      modelOrigin: model.origin,
    });
    if (client.daemonPidFile) {
      daemon = await stopAgentDaemon(`${folders.home}/${client.daemonPidFile}`);
    }
    reports = await runLabReports(lab, options.runDir, {
      trigger,
      updateDelaySeconds: options.delaySeconds,
      labSettings: options.labSettings,
    });
  } finally {
    await relay?.close();
    await model.close();
    if ("stop" in lab) await lab.stop();
  }
  await Deno.writeTextFile(
    `${options.runDir}/transcript.json`,
    JSON.stringify(model.transcript, null, 2),
  );
  await Deno.writeTextFile(
    `${options.runDir}/requests.json`,
    JSON.stringify(model.requests, null, 2),
  );
  if (!options.keepHome) await removeFolders(Object.values(folders));
  const { result } = ran;
  return {
    ...base,
    durationSeconds: seconds(),
    outcome: result.outcome,
    exitCode: result.exitCode,
    detail: "unavailable" in reports
      ? joinedDetail(result.detail, reports.unavailable)
      : result.detail,
    command: ran.command,
    ...("unavailable" in reports ? NO_LAB_REPORTS : reports),
    transcript: model.transcript,
    outputTail: tail(result.output, 40),
    ...(relay
      ? options.progressCheck === "no-progress"
        ? { progressTokensRemoved: relay.tokens() }
        : { progressTokensSent: relay.tokens() }
      : {}),
    ...(daemon ? { daemon } : {}),
  };
}

/**
 * The run's lab: over HTTP, started here; in a stdio mode, the command the
 * client starts it with, its stderr (and so its verdict) in the run's
 * `lab.log`.
 */
async function runLab(
  client: ClientDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: RunOptions,
  denoDir: string,
): Promise<RunningLab | { stdio: StdioLabCommand } | { failed: string }> {
  const tools = {
    enableTool: client.enableTool,
    enableWaitTool: options.route === "wait-tool",
  };
  if (!isStdioMode(mode)) return await startRunLab(options, trigger, tools);
  return {
    stdio: stdioLabCommand({
      labMainPath: options.labMainPath,
      denoDir,
      stderrPath: `${options.runDir}/lab.log`,
      trigger,
      delaySeconds: options.delaySeconds,
      labSettings: options.labSettings,
      ...tools,
    }),
  };
}

/** An agent's process: its command as evidence, and how it ended. */
interface AgentProcess {
  command: string;
  result: ProcessResult;
}

/** How a run reads whose client never got to start. */
const NOT_SPAWNED: ProcessResult = {
  outcome: "spawn-failed",
  exitCode: null,
  output: "",
};

/**
 * Writes the client's configuration into its isolated folders and runs it
 * headless against the lab and the scripted model, bounded by the timeout.
 */
async function launchAgent(
  client: ClientDefinition,
  mode: ModeId,
  options: RunOptions,
  folders: { home: string; workDir: string; tmpDir: string },
  endpoints: Pick<
    LaunchContext,
    "labUrl" | "stdioLab" | "denoDir" | "modelOrigin"
  >,
): Promise<AgentProcess> {
  const { home, workDir, tmpDir } = folders;
  const launch = client.launch({
    home,
    workDir,
    ...endpoints,
    prompt: PROMPT,
    mode,
    route: options.route ?? "native",
    toolTimeoutSeconds: options.progressCheck
      ? PROGRESS_CHECK.toolTimeoutSeconds
      : undefined,
  });
  for (const [path, content] of Object.entries(launch.files)) {
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, content);
  }
  // A script of this checkout is shown by its path in it, this Deno as deno.
  const command = commandLine(client.bin, launch.args, { home, workDir }, {
    [PROMPT]: '"<prompt>"',
    [Deno.execPath()]: "deno",
    ...client.localScript
      ? {
        [client.localScript]: relative(
          dirname(options.labMainPath),
          client.localScript,
        ),
      }
      : {},
  });
  const result = await runProcess(options.binPath, launch.args, {
    cwd: workDir,
    env: { ...isolatedEnv(home, tmpDir), ...launch.env },
    outputPath: `${options.runDir}/client-output.log`,
    timeoutSeconds: options.timeoutSeconds,
  });
  return { command, result };
}
