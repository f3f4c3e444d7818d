/**
 * Installs a Python program's pinned requirements (a program of this
 * checkout's, or a package's own) into a virtual environment of its own in
 * the harness cache, once: the machine's `python3 -m venv`, then pip on
 * the requirements file committed in this checkout. A second run finds the
 * environment and installs nothing. A library's app in Python (a command
 * client's `pythonProgram`) runs through a launcher beside its environment.
 *
 * @module
 */

import { exists, type InstallResult } from "./install.ts";
import { shellQuote } from "./process.ts";

/** A virtual environment's pinned requirements: what a Python program runs on. */
export interface PythonEnvironment {
  /** Names the environment in the cache. */
  id: string;
  /** A requirements file with an exact `==` pin for every package, dependencies too. */
  requirements: string;
}

export type PythonInstallResult =
  | {
    ok: true;
    /** The environment's folder. */
    prefix: string;
    /** The environment's Python, which runs the program. */
    python: string;
    seconds: number;
    cached: boolean;
  }
  | { ok: false; reason: string; seconds: number };

const PYTHON_INSTALL_TIMEOUT_MS = 600_000;

/** Written into the environment once pip has installed every requirement. */
const INSTALLED_MARKER = "requirements-installed";

/** The first 16 hex digits of the SHA-256 of `text`. */
async function shortHash(text: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(text),
  );
  return Array.from(new Uint8Array(digest).slice(0, 8))
    .map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The environment's folder: named by its id and a hash of its
 * requirements, so a changed pin makes a new environment, never a mixed one.
 */
export async function pythonEnvDir(
  environment: PythonEnvironment,
  requirementsText: string,
  cacheDir: string,
): Promise<string> {
  return `${cacheDir}/python-${environment.id}-${await shortHash(
    requirementsText,
  )}`;
}

/**
 * The line of pip's (or venv's) output that says why it failed: its last
 * `ERROR:` line, else its last line.
 */
export function pipFailureReason(output: string): string {
  const lines = output.split("\n").map((line) => line.trim())
    .filter((line) => line !== "");
  const error = lines.findLast((line) => line.startsWith("ERROR:"));
  return (error ?? lines.at(-1) ?? "pip install failed").slice(0, 200);
}

/** Runs a command, its output kept; never throws. */
async function runQuiet(
  command: string,
  args: string[],
  timeoutMs: number,
): Promise<{ success: boolean; text: string; timedOut: boolean }> {
  try {
    const output = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(timeoutMs),
    }).output();
    const text = new TextDecoder().decode(output.stdout) +
      new TextDecoder().decode(output.stderr);
    return { success: output.success, text, timedOut: output.signal !== null };
  } catch (error) {
    return { success: false, text: String(error), timedOut: false };
  }
}

/**
 * Creates the environment with `python` (the machine's
 * `python3`) and pip-installs its requirements into it, unless an earlier
 * run finished that (its marker is there): then nothing runs.
 */
export async function installPythonEnvironment(
  environment: PythonEnvironment,
  cacheDir: string,
  python = "python3",
): Promise<PythonInstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  let requirementsText: string;
  try {
    requirementsText = await Deno.readTextFile(environment.requirements);
  } catch (error) {
    return {
      ok: false,
      reason: `cannot read ${environment.requirements}: ${String(error)}`,
      seconds: seconds(),
    };
  }
  const prefix = await pythonEnvDir(environment, requirementsText, cacheDir);
  const envPython = `${prefix}/bin/python`;
  if (
    await exists(`${prefix}/${INSTALLED_MARKER}`) && await exists(envPython)
  ) {
    return {
      ok: true,
      prefix,
      python: envPython,
      seconds: seconds(),
      cached: true,
    };
  }
  // A half-made environment (an install cut short) is made again whole.
  await Deno.remove(prefix, { recursive: true }).catch(() => {});
  await Deno.mkdir(cacheDir, { recursive: true });
  const venv = await runQuiet(python, ["-m", "venv", prefix], 120_000);
  if (!venv.success) {
    return {
      ok: false,
      reason: `${python} -m venv failed: ${pipFailureReason(venv.text)}`,
      seconds: seconds(),
    };
  }
  const pip = await runQuiet(envPython, [
    "-m",
    "pip",
    "install",
    "--no-input",
    "--disable-pip-version-check",
    "-r",
    environment.requirements,
  ], PYTHON_INSTALL_TIMEOUT_MS);
  await Deno.writeTextFile(`${prefix}.install.log`, pip.text);
  if (!pip.success) {
    return {
      ok: false,
      reason: pip.timedOut
        ? `pip install timed out after ${PYTHON_INSTALL_TIMEOUT_MS / 1000} s`
        : pipFailureReason(pip.text),
      seconds: seconds(),
    };
  }
  await Deno.writeTextFile(`${prefix}/${INSTALLED_MARKER}`, requirementsText);
  return {
    ok: true,
    prefix,
    python: envPython,
    seconds: seconds(),
    cached: false,
  };
}

/** A Python program of this checkout that a command client runs (a library's app). */
export interface PythonProgram {
  environment: PythonEnvironment;
  /** The program's path in this checkout, run where it is (its imports beside it). */
  script: string;
  /** The launcher's name, `<environment>/<name>`: the client's bin. */
  name: string;
}

/**
 * Makes (or finds) the program's environment, then writes its launcher, a
 * shell script that execs the environment's Python on the program, at every
 * run (so an edited program is the one that runs); the launcher is the
 * install's binary, as a Go app's build is.
 */
export async function installPythonProgram(
  program: PythonProgram,
  cacheDir: string,
  python = "python3",
): Promise<InstallResult> {
  const installed = await installPythonEnvironment(
    program.environment,
    cacheDir,
    python,
  );
  if (!installed.ok) return installed;
  if (!await exists(program.script)) {
    return {
      ok: false,
      reason: `no program at ${program.script}`,
      seconds: installed.seconds,
    };
  }
  const launcher = `${installed.prefix}/${program.name}`;
  await Deno.writeTextFile(
    launcher,
    // -B: no __pycache__ written into the checkout beside the program.
    `#!/bin/sh\nexec ${shellQuote(installed.python)} -B ${
      shellQuote(program.script)
    } "$@"\n`,
  );
  await Deno.chmod(launcher, 0o755);
  return {
    ok: true,
    prefix: installed.prefix,
    binPath: launcher,
    seconds: installed.seconds,
    cached: installed.cached,
  };
}
