/**
 * One run: a fresh lab and scripted model on free loopback ports, the client
 * headless in an isolated home, bounded by a timeout; then the lab's report
 * and the model's transcript. A client that crashes, hangs or refuses the
 * server is a result, not an error.
 *
 * @module
 */

import type { AnyClient, ClientDefinition, ModeId } from "./catalog.ts";
import type { LabReport } from "../main.ts";
import type { ModelScript, Route } from "./decide.ts";
import { type RunningLab, startLab } from "./lab.ts";
import { startScriptedModel, type TranscriptEntry } from "./scripted_model.ts";

export type Trigger = "subscribe" | "read";

export type Outcome =
  | "completed"
  | "exit-nonzero"
  | "timeout"
  | "spawn-failed"
  | "install-failed"
  | "lab-failed"
  | "not-supported";

export interface RunOptions {
  labMainPath: string;
  /** Where the run's home, logs and output go (wiped first). */
  runDir: string;
  binPath: string;
  delaySeconds: number;
  timeoutSeconds: number;
  /** Keep the run's home, work and tmp folders (for debugging a client). */
  keepHome?: boolean;
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

/** Everything a run produced, as plain data. */
export interface RunRecord {
  clientId: string;
  displayName: string;
  npmPackage: string;
  version: string;
  mode: ModeId;
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
  transcript: TranscriptEntry[];
  /** The client's last output lines, for the evidence file. */
  outputTail: string;
  /**
   * `command` for a client no model drives (see `command_runner.ts`),
   * `browser` for a web UI the harness clicks through (`browser_runner.ts`).
   */
  kind?: "command" | "browser";
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
  /** What the harness did about a daemon the client left behind. */
  daemon?: string;
  /** How the client was installed, when not as published (`PlatformBinary`). */
  installNote?: string;
}

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

/** The prompt every client gets, the verification guide's standard prompt. */
export const PROMPT =
  "Read the MCP resource test://review/status from the lab server and tell me its status. " +
  "Then wait for the review to finish: the resource will change by itself. " +
  "When it changes, tell me the new status.";

export type ProgressCheck = "progress" | "no-progress";

/**
 * The progress check's numbers: the client's tool timeout, and the update
 * well past it (the lab sends progress every 5 s, so several arrive first).
 */
export const PROGRESS_CHECK = { toolTimeoutSeconds: 20, delaySeconds: 40 };

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
      try {
        const answer = await fetch(
          `${target.origin}${url.pathname}${url.search}`,
          { method: request.method, headers, body, signal: request.signal },
        );
        return new Response(answer.body, {
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

/** The lab's client name for its probe (what the shell-probe route runs). */
export const PROBE_CLIENT = "mcp-subscription-probe";

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
 * The command the model hands the client's shell tool on the shell-probe
 * route: the lab's probe against this run's lab, from the deno cache only,
 * without deno's own update check (a lookup of dl.deno.land): nothing leaves
 * loopback.
 */
export function probeCommand(
  mainPath: string,
  labUrl: string,
  denoDir: string,
): string {
  return `DENO_DIR=${denoDir} DENO_NO_UPDATE_CHECK=1 deno run -A --cached-only ${mainPath} probe --url ${labUrl} --uri test://review/status --json`;
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
  context: {
    mainPath: string;
    labUrl: string;
    denoDir: string;
    delaySeconds: number;
  },
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
        input: client.shell.input(
          probeCommand(context.mainPath, context.labUrl, context.denoDir),
        ),
      },
    };
  }
  return { route, loader };
}

/** Seconds the model waits past the lab's update delay before its nudge. */
const WAIT_MARGIN_SECONDS = 2;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Signals the process group `pid` leads (clients start with setsid), then
 * the PID itself, for a process that does not lead a group; quietly.
 */
export function signalGroup(pid: number, signal: Deno.Signal) {
  for (const target of [-pid, pid]) {
    try {
      Deno.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

/** The PID a daemon's record holds: a bare number or JSON with `"pid"`. */
export function daemonPid(text: string): number | undefined {
  const match = text.match(/"pid"\s*:\s*(\d+)/) ??
    text.trim().match(/^(\d+)\b/);
  const pid = match ? Number(match[1]) : NaN;
  return Number.isSafeInteger(pid) && pid > 1 ? pid : undefined;
}

/**
 * Whether a PID is a live process: a zombie (exited, waiting for its parent
 * to reap it) counts as gone. Asks `ps`, since reading /proc needs more
 * permissions than the tests have.
 */
export async function alive(pid: number): Promise<boolean> {
  try {
    const { success, stdout } = await new Deno.Command("ps", {
      args: ["-o", "stat=", "-p", String(pid)],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    const state = new TextDecoder().decode(stdout).trim();
    return success && state !== "" && !state.startsWith("Z");
  } catch {
    return false;
  }
}

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
  if (!await alive(pid)) return `daemon PID ${pid} had already ended`;
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    try {
      Deno.kill(pid, signal);
    } catch {
      // Already gone.
    }
    for (let waited = 0; waited < 30; waited++) {
      if (!await alive(pid)) {
        return `daemon PID ${pid} ended with ${signal}`;
      }
      await sleep(100);
    }
  }
  return `daemon PID ${pid} is still running after SIGKILL`;
}

/** The last `lines` lines of a text, without terminal escapes. */
export function tail(text: string, lines: number): string {
  // deno-lint-ignore no-control-regex
  const clean = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");
  return clean.split("\n").filter((line) => line.trim() !== "").slice(-lines)
    .join("\n");
}

/** The first line of output that reads like an error, for a row's notes. */
export function errorLine(output: string): string | undefined {
  const lines = tail(output, 400).split("\n");
  return lines.find((line) =>
    /\b(error|fatal|panic|exception|refus|failed|unauthori[sz]ed)\b/i.test(line)
  )?.trim().slice(0, 200);
}

/** The command as evidence: the prompt shortened, per-run paths generic. */
export function commandLine(
  bin: string,
  args: string[],
  paths: { home: string; workDir: string },
): string {
  return [bin, ...args].map((arg) => {
    if (arg === PROMPT) return '"<prompt>"';
    const generic = arg.replaceAll(paths.home, "$HOME").replaceAll(
      paths.workDir,
      ".",
    );
    return /[\s"'{}]/.test(generic) ? `'${generic}'` : generic;
  }).join(" ");
}

export interface ProcessResult {
  outcome: Outcome;
  exitCode: number | null;
  detail?: string;
  output: string;
}

/**
 * Runs the client in its own process group (setsid), so a timeout or the end
 * of the run can stop it together with anything it started.
 */
export async function runProcess(
  binPath: string,
  args: string[],
  options: {
    cwd: string;
    env: Record<string, string>;
    outputPath: string;
    timeoutSeconds: number;
    /**
     * A command that runs until stopped: SIGTERM after this many seconds is
     * its planned end (the outcome stays `completed`).
     */
    stopAfterSeconds?: number;
  },
): Promise<ProcessResult> {
  const outputFile = await Deno.open(options.outputPath, {
    write: true,
    create: true,
    truncate: true,
  });
  let output = "";
  try {
    const child = new Deno.Command("setsid", {
      args: [binPath, ...args],
      cwd: options.cwd,
      clearEnv: true,
      env: options.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const decoder = new TextDecoder();
    const collect = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) {
        await outputFile.write(chunk);
        output += decoder.decode(chunk, { stream: true });
      }
    };
    const collecting = Promise.all([
      collect(child.stdout),
      collect(child.stderr),
    ]);
    let timedOut = false;
    const timer = setTimeout(async () => {
      timedOut = true;
      signalGroup(child.pid, "SIGTERM");
      await sleep(3000);
      signalGroup(child.pid, "SIGKILL");
    }, options.timeoutSeconds * 1000);
    let stopped = false;
    const stopTimer = options.stopAfterSeconds === undefined
      ? undefined
      : setTimeout(async () => {
        stopped = true;
        signalGroup(child.pid, "SIGTERM");
        await sleep(3000);
        signalGroup(child.pid, "SIGKILL");
      }, options.stopAfterSeconds * 1000);
    const status = await child.status;
    clearTimeout(timer);
    clearTimeout(stopTimer);
    // Helpers the client left behind belong to its group: end them too.
    signalGroup(child.pid, "SIGKILL");
    await Promise.race([collecting, sleep(2000)]);
    if (timedOut) {
      return {
        outcome: "timeout",
        exitCode: status.code,
        detail: `no exit within ${options.timeoutSeconds} s`,
        output,
      };
    }
    if (stopped) {
      return {
        outcome: "completed",
        exitCode: status.code,
        detail: `stopped after ${options.stopAfterSeconds} s, as planned`,
        output,
      };
    }
    if (!status.success) {
      return {
        outcome: "exit-nonzero",
        exitCode: status.code,
        detail: `exit ${status.code}${
          status.signal ? ` (${status.signal})` : ""
        }`,
        output,
      };
    }
    return { outcome: "completed", exitCode: status.code, output };
  } catch (error) {
    return {
      outcome: "spawn-failed",
      exitCode: null,
      detail: String(error),
      output,
    };
  } finally {
    outputFile.close();
  }
}

/**
 * A clean environment: only what a client needs, never the user's own
 * configuration, tokens or proxies; HOME and the XDG folders in the run's.
 */
export function isolatedEnv(
  home: string,
  tmpDir: string,
): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    USER: "lab",
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_STATE_HOME: `${home}/.local/state`,
    TMPDIR: tmpDir,
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
  };
}

/** What a run is of: the fields every record of it starts with. */
type RunHeader = Pick<
  RunRecord,
  | "clientId"
  | "displayName"
  | "npmPackage"
  | "version"
  | "mode"
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
  } = {},
): RunHeader {
  return {
    clientId: client.id,
    displayName: client.displayName,
    npmPackage: client.npmPackage,
    version: client.version,
    mode,
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

/** What every kind of client run is given: the lab, the folder, the bounds. */
export type BaseRunOptions = Pick<
  RunOptions,
  | "labMainPath"
  | "runDir"
  | "binPath"
  | "delaySeconds"
  | "timeoutSeconds"
  | "keepHome"
>;

/**
 * Starts the run's lab (its log in the run folder), or says in one string
 * why it could not.
 */
export async function startRunLab(
  options: Pick<RunOptions, "labMainPath" | "runDir" | "delaySeconds">,
  trigger: Trigger,
  tools: { enableTool?: boolean; enableWaitTool?: boolean } = {},
): Promise<RunningLab | { failed: string }> {
  try {
    return await startLab({
      mainPath: options.labMainPath,
      trigger,
      delaySeconds: options.delaySeconds,
      enableTool: tools.enableTool ?? false,
      enableWaitTool: tools.enableWaitTool,
      logPath: `${options.runDir}/lab.log`,
    });
  } catch (error) {
    return { failed: String(error) };
  }
}

/**
 * A run's folder made afresh, with the isolated home, work and temp folders
 * every kind of client runs in (and any `extra` folder).
 */
export async function freshRunDir(runDir: string, extra: string[] = []) {
  await Deno.remove(runDir, { recursive: true }).catch(() => {});
  const folders = {
    home: `${runDir}/home`,
    workDir: `${runDir}/work`,
    tmpDir: `${runDir}/tmp`,
  };
  for (const dir of [...Object.values(folders), ...extra]) {
    await Deno.mkdir(dir, { recursive: true });
  }
  return folders;
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

export async function runClient(
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
  });
  const seconds = () => Math.round((performance.now() - started) / 1000);
  const { home, workDir, tmpDir } = await freshRunDir(options.runDir);

  const lab = await startRunLab(options, trigger, {
    enableTool: client.enableTool,
    enableWaitTool: route === "wait-tool",
  });
  if ("failed" in lab) {
    return notStarted(base, "lab-failed", lab.failed, seconds());
  }
  const model = startScriptedModel({
    ...client.script,
    waitSeconds: options.delaySeconds + WAIT_MARGIN_SECONDS,
    ...routeScript(client, route, {
      mainPath: options.labMainPath,
      labUrl: lab.url,
      denoDir: options.denoDir ?? defaultDenoDir(),
      delaySeconds: options.delaySeconds,
    }),
  });
  let command = "";
  let result: ProcessResult = {
    outcome: "spawn-failed",
    exitCode: null,
    output: "",
  };
  let labReport: LabReport | null = null;
  let labReportMarkdown: string | null = null;
  let daemon: string | undefined;
  // Both checks relay the client through the counter; only the control
  // removes the progressToken.
  const relay = options.progressCheck
    ? startProgressRelay(lab.url, options.progressCheck === "no-progress")
    : undefined;
  try {
    const launch = client.launch({
      home,
      workDir,
      labUrl: relay?.url ?? lab.url,
      modelOrigin: model.origin,
      prompt: PROMPT,
      mode,
      route,
      toolTimeoutSeconds: options.progressCheck
        ? PROGRESS_CHECK.toolTimeoutSeconds
        : undefined,
    });
    for (const [path, content] of Object.entries(launch.files)) {
      await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), {
        recursive: true,
      });
      await Deno.writeTextFile(path, content);
    }
    command = commandLine(client.bin, launch.args, { home, workDir });
    const env = { ...isolatedEnv(home, tmpDir), ...launch.env };
    result = await runProcess(options.binPath, launch.args, {
      cwd: workDir,
      env,
      outputPath: `${options.runDir}/client-output.log`,
      timeoutSeconds: options.timeoutSeconds,
    });
    if (client.daemonPidFile) {
      daemon = await stopAgentDaemon(`${home}/${client.daemonPidFile}`);
    }
    // Let the lab log the last requests (a DELETE, a closed stream).
    await sleep(500);
    try {
      labReport = await lab.report();
      labReportMarkdown = await lab.reportMarkdown();
    } catch (error) {
      result.detail = `${
        result.detail ? `${result.detail}; ` : ""
      }lab report unavailable: ${error}`;
    }
  } finally {
    await relay?.close();
    await model.close();
    await lab.stop();
  }
  await Deno.writeTextFile(
    `${options.runDir}/transcript.json`,
    JSON.stringify(model.transcript, null, 2),
  );
  if (!options.keepHome) {
    // Clients fill their homes with caches and packages (hundreds of MB);
    // the logs and transcript beside them are what a later look needs.
    for (const dir of [home, workDir, tmpDir]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  return {
    ...base,
    durationSeconds: seconds(),
    outcome: result.outcome,
    exitCode: result.exitCode,
    detail: result.detail,
    command,
    labReport,
    labReportMarkdown,
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
