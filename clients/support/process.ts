/**
 * Process utilities every runner uses: a client run in its own process group
 * with an isolated environment and a timeout, processes ended by PID, and
 * what a process printed, cut down for evidence.
 *
 * @module
 */

/** How a client process ended. */
export type ProcessOutcome =
  | "completed"
  | "exit-nonzero"
  | "timeout"
  | "spawn-failed";

export interface ProcessResult {
  outcome: ProcessOutcome;
  exitCode: number | null;
  detail?: string;
  output: string;
}

export function sleep(ms: number): Promise<void> {
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

/** Whether `pid` is gone within `ms` milliseconds (polled every 100 ms). */
export async function exitsWithin(pid: number, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (!await alive(pid)) return true;
    await sleep(100);
  }
  return !await alive(pid);
}

/**
 * Ends a process and the group it leads, by its PID (never by name):
 * SIGTERM, then SIGKILL if it is still alive `graceMs` later. Says how, to
 * follow "PID N": "ended with SIGTERM", "had exited"…
 */
export async function endByPid(pid: number, graceMs = 3000): Promise<string> {
  if (!await alive(pid)) return "had exited";
  signalGroup(pid, "SIGTERM");
  if (await exitsWithin(pid, graceMs)) return "ended with SIGTERM";
  signalGroup(pid, "SIGKILL");
  return await exitsWithin(pid, 3000)
    ? "ended with SIGKILL"
    : "is still running after SIGKILL";
}

/**
 * Ends a process group by its leader's PID (`endByPid`), then with SIGKILL
 * any of the group that outlived the leader (a server's children keep its
 * group). Says how, to follow "PID N".
 */
export async function endGroupByPid(pid: number): Promise<string> {
  const ended = await endByPid(pid);
  const left = await groupMembers(pid);
  if (left.length === 0) return ended;
  signalGroup(pid, "SIGKILL");
  const gone = await Promise.all(
    left.map((member) => exitsWithin(member, 3000)),
  );
  const still = gone.filter((exited) => !exited).length;
  return `${ended}; ${left.length} more of its process group ended with SIGKILL${
    still > 0 ? ` (${still} still running)` : ""
  }`;
}

/** The live PIDs of a process group, by its id (`pgrep -g`), never by name. */
async function groupMembers(pgid: number): Promise<number[]> {
  const { stdout } = await new Deno.Command("pgrep", {
    args: ["-g", String(pgid)],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output().catch(() => ({ stdout: new Uint8Array() }));
  const pids = new TextDecoder().decode(stdout).split("\n").map(Number)
    .filter((member) => member > 0);
  const live = await Promise.all(pids.map(alive));
  return pids.filter((_, index) => live[index]);
}

/**
 * Terminal escape sequences: CSI (colours, cursor moves), OSC (titles,
 * links) and the two-character ones.
 */
const TERMINAL_ESCAPE =
  // deno-lint-ignore no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]/g;

/** Control and format characters (bidi overrides among them). */
const UNPRINTABLE = /[\p{Cc}\p{Cf}]/gu;

/** Text without the terminal escape sequences in it. */
export function withoutTerminalEscapes(text: string): string {
  return text.replace(TERMINAL_ESCAPE, "");
}

/**
 * Untrusted text (what a client, a shell or a user typed) as one line that
 * is safe in a log, a report or a terminal: escape sequences dropped, runs
 * of white space as one space, any other control or format character shown
 * as `\u{…}`, and at most `max` characters, "…" marking a cut.
 */
export function printableLine(text: string, max: number): string {
  const line = withoutTerminalEscapes(text).replace(/\s+/g, " ").trim()
    .replace(
      UNPRINTABLE,
      (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`,
    );
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The last `lines` lines of a text, without terminal escapes. */
export function tail(text: string, lines: number): string {
  return withoutTerminalEscapes(text).split("\n").filter((line) =>
    line.trim() !== ""
  ).slice(-lines).join("\n");
}

/**
 * The line of output that says why a client stopped, for a row's notes: the
 * first that asks for a login or credentials (a vendor's CLI says that
 * before the generic failure it ends on), else the first that reads like
 * an error.
 */
export function errorLine(output: string): string | undefined {
  const lines = tail(output, 400).split("\n");
  const line = lines.find((line) => LOGIN_NEEDED.test(line)) ??
    lines.find((line) =>
      /\b(error|fatal|panic|exception|refus|failed|unauthori[sz]ed)\b/i.test(
        line,
      )
    );
  return line === undefined ? undefined : printableLine(line, 200);
}

/** Words of a line that asks the user to log in or give credentials. */
const LOGIN_NEEDED =
  /\b(not logged in|log ?in\b|sign ?in\b|no auth|unauthori[sz]ed|authenticat\w*|api key)/i;

/**
 * The command as evidence: per-run paths generic, arguments with spaces or
 * quotes quoted, and each argument in `shownAs` (the prompt) as it says.
 */
export function commandLine(
  bin: string,
  args: string[],
  paths: { home: string; workDir: string },
  shownAs: Record<string, string> = {},
): string {
  return [bin, ...args].map((arg) => {
    if (Object.hasOwn(shownAs, arg)) return shownAs[arg];
    const generic = arg.replaceAll(paths.home, "$HOME").replaceAll(
      paths.workDir,
      ".",
    );
    return /[\s"'{}]/.test(generic) ? `'${generic}'` : generic;
  }).join(" ");
}

// The lab quotes its reproduce command the same way.
export { shellQuote } from "../../main.ts";

/**
 * Stops a process group `seconds` from now (SIGTERM, SIGKILL 3 s later)
 * unless cancelled first; says whether it did.
 */
function stopGroupAfter(pid: number, seconds: number) {
  let fired = false;
  const timer = setTimeout(async () => {
    fired = true;
    signalGroup(pid, "SIGTERM");
    await sleep(3000);
    signalGroup(pid, "SIGKILL");
  }, seconds * 1000);
  return { cancel: () => clearTimeout(timer), fired: () => fired };
}

/** What a command printed, stdout then stderr, and how it ended. */
export interface CapturedRun {
  success: boolean;
  output: string;
  timedOut: boolean;
}

/**
 * Runs a command to its end with its output kept, bounded by `timeoutMs`,
 * stdin closed; never throws: one that cannot start is a failure saying
 * why. With `env`, that is its whole environment; else it inherits this
 * process's.
 */
export async function runCaptured(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs: number },
): Promise<CapturedRun> {
  try {
    const output = await new Deno.Command(command, {
      args,
      cwd: options.cwd,
      ...(options.env ? { clearEnv: true, env: options.env } : {}),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(options.timeoutMs),
    }).output();
    return {
      success: output.success,
      output: new TextDecoder().decode(output.stdout) +
        new TextDecoder().decode(output.stderr),
      timedOut: output.signal !== null,
    };
  } catch (error) {
    return {
      success: false,
      output: `${command} could not run: ${String(error)}`,
      timedOut: false,
    };
  }
}

/**
 * Starts `command` as the leader of a process group of its own (so that
 * the harness can end it with everything it starts), with exactly `env`
 * as its environment, stdin closed and its output piped.
 */
export function spawnInGroup(
  command: string[],
  options: { cwd: string; env: Record<string, string> },
): Deno.ChildProcess {
  return new Deno.Command("setsid", {
    args: command,
    cwd: options.cwd,
    clearEnv: true,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
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
    const child = spawnInGroup([binPath, ...args], options);
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
    const timeout = stopGroupAfter(child.pid, options.timeoutSeconds);
    const planned = options.stopAfterSeconds === undefined
      ? undefined
      : stopGroupAfter(child.pid, options.stopAfterSeconds);
    const status = await child.status;
    timeout.cancel();
    planned?.cancel();
    const timedOut = timeout.fired();
    const stopped = planned?.fired() ?? false;
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

/**
 * Removes a run's isolated folders: clients fill their homes with caches
 * and packages (hundreds of MB); the logs beside them are what a later look
 * needs.
 */
export async function removeFolders(folders: string[]) {
  for (const dir of folders) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Formats files the harness wrote for `results/`: they are committed, so
 * they must pass `deno fmt --check`. Run from `dir`, by this Deno.
 */
export async function formatFiles(dir: string, files: string[]) {
  await new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--quiet", ...files],
    cwd: dir,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
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
