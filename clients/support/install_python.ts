/**
 * Installs a Python program's pinned requirements (a program of this
 * checkout's, or a package's own) into a virtual environment of its own in
 * the harness cache, once: the machine's `python3 -m venv` (or, for an
 * environment that needs a newer Python, the interpreter `findPython`
 * finds as a user would: on PATH, else among pyenv's versions), then pip on
 * the requirements file committed in this checkout. A second run finds the
 * environment and installs nothing. A library's app in Python (a command
 * client's `pythonProgram`) runs through a launcher beside its environment;
 * an agent published on PyPI (`pypiInstall`) runs its console script there.
 *
 * @module
 */

import { exists, type InstallResult } from "./install.ts";
import { runCaptured, shellQuote } from "./process.ts";

/** A virtual environment's pinned requirements: what a Python program runs on. */
export interface PythonEnvironment {
  /** Names the environment in the cache. */
  id: string;
  /** A requirements file with an exact `==` pin for every package, dependencies too. */
  requirements: string;
  /**
   * The Pythons it runs on, when the machine's `python3` may not be one:
   * the environment is then made with the interpreter `findPython` finds.
   */
  python?: PythonRange;
}

/** Python minor versions, both ends included: `{ oldest: "3.12", newest: "3.14" }`. */
export interface PythonRange {
  oldest: string;
  newest: string;
}

/** Where to look for a Python: a PATH, and pyenv's root if one is set. */
export interface PythonSearch {
  /** Folders separated by `:`, as in `PATH`. */
  path: string;
  /** `PYENV_ROOT`; when unset, `pyenv root` (pyenv on `path`) names it. */
  pyenvRoot?: string;
}

/** The harness's own PATH and `PYENV_ROOT`. */
export function machinePythonSearch(): PythonSearch {
  const pyenvRoot = Deno.env.get("PYENV_ROOT");
  return {
    path: Deno.env.get("PATH") ?? "",
    ...(pyenvRoot ? { pyenvRoot } : {}),
  };
}

export type FoundPython =
  | { ok: true; python: string; version: string }
  | { ok: false; reason: string };

const VERSION_TIMEOUT_MS = 15_000;

/** `[major, minor]` of "3.12" or "3.12.1"; undefined for anything else. */
function minorOf(version: string): [number, number] | undefined {
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(version.trim());
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

function inRange(version: string, range: PythonRange): boolean {
  const [minor, oldest, newest] = [version, range.oldest, range.newest].map(
    minorOf,
  );
  if (!minor || !oldest || !newest) return false;
  const rank = ([major, sub]: [number, number]) => major * 1000 + sub;
  return rank(minor) >= rank(oldest) && rank(minor) <= rank(newest);
}

/** The first executable file named `name` in the folders of `path`. */
async function onPath(name: string, path: string): Promise<string | undefined> {
  for (const dir of path.split(":").filter((dir) => dir !== "")) {
    const candidate = `${dir}/${name}`;
    try {
      const info = await Deno.stat(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) {
        return candidate;
      }
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/** The version an interpreter says it is, if it runs at all (a pyenv shim for a version not selected does not). */
async function versionOf(python: string): Promise<string | undefined> {
  const ran = await runCaptured(python, [
    "-c",
    "import sys; print('%d.%d.%d' % sys.version_info[:3])",
  ], { timeoutMs: VERSION_TIMEOUT_MS });
  // Its stdout comes first; a warning on stderr may follow.
  const version = ran.output.split("\n")[0].trim();
  return ran.success && minorOf(version) ? version : undefined;
}

/** pyenv's root: `PYENV_ROOT`, else what `pyenv root` prints. */
async function pyenvRootOf(search: PythonSearch): Promise<string | undefined> {
  if (search.pyenvRoot) return search.pyenvRoot;
  const pyenv = await onPath("pyenv", search.path);
  if (!pyenv) return undefined;
  const ran = await runCaptured(pyenv, ["root"], {
    timeoutMs: VERSION_TIMEOUT_MS,
  });
  const root = ran.output.trim();
  return ran.success && root !== "" && !root.includes("\n") ? root : undefined;
}

/** The minor versions of a range, oldest first: 3.12, 3.13, 3.14. */
function minorsOf(range: PythonRange): string[] {
  const oldest = minorOf(range.oldest);
  const newest = minorOf(range.newest);
  if (!oldest || !newest || oldest[0] !== newest[0]) return [];
  const minors: string[] = [];
  for (let minor = oldest[1]; minor <= newest[1]; minor++) {
    minors.push(`${oldest[0]}.${minor}`);
  }
  return minors;
}

/**
 * An interpreter in `range`, found as a user would: `python3.12`,
 * `python3.13`… then `python3` on PATH, the first of each name that runs
 * and says a version in range; else pyenv's installed versions
 * (`<root>/versions/<version>/bin/python3`). Oldest first: requirements are
 * frozen on the oldest Python they support. None: one line naming what was
 * looked for.
 */
export async function findPython(
  range: PythonRange,
  search: PythonSearch,
): Promise<FoundPython> {
  const names = [
    ...minorsOf(range).map((minor) => `python${minor}`),
    "python3",
  ];
  for (const name of names) {
    const python = await onPath(name, search.path);
    const version = python && await versionOf(python);
    if (python && version && inRange(version, range)) {
      return { ok: true, python, version };
    }
  }
  const root = await pyenvRootOf(search);
  const installed: string[] = [];
  if (root) {
    try {
      for await (const entry of Deno.readDir(`${root}/versions`)) {
        if (minorOf(entry.name)) installed.push(entry.name);
      }
    } catch {
      // No versions folder: pyenv has installed none.
    }
  }
  const rank = (version: string) => {
    const [major, minor, micro = "0"] = version.split(".");
    return (Number(major) * 1000 + Number(minor)) * 1000 + Number(micro);
  };
  installed.sort((a, b) => rank(a) - rank(b));
  for (const name of installed.filter((name) => inRange(name, range))) {
    const python = `${root}/versions/${name}/bin/python3`;
    const version = await versionOf(python);
    if (version && inRange(version, range)) {
      return { ok: true, python, version };
    }
  }
  const wanted = `Python ${range.oldest} to ${range.newest}`;
  const pyenv = root
    ? `pyenv at ${root} has ${installed.join(", ") || "no versions"}`
    : "no pyenv (PYENV_ROOT unset, no pyenv on PATH)";
  return {
    ok: false,
    reason: `no ${wanted} found: none of ${
      names.join(", ")
    } on PATH runs one, and ${pyenv}`.slice(0, 300),
  };
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

/**
 * Creates the environment with `python` (the machine's `python3`), or, for
 * an environment with a `python` range, with the interpreter `findPython`
 * finds in `search`, and pip-installs its requirements into it, unless an
 * earlier run finished that (its marker is there): then nothing runs.
 */
export async function installPythonEnvironment(
  environment: PythonEnvironment,
  cacheDir: string,
  python = "python3",
  search: PythonSearch = machinePythonSearch(),
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
  let interpreter = python;
  if (environment.python) {
    const found = await findPython(environment.python, search);
    if (!found.ok) {
      return { ok: false, reason: found.reason, seconds: seconds() };
    }
    interpreter = found.python;
  }
  await Deno.mkdir(cacheDir, { recursive: true });
  const venv = await runCaptured(interpreter, ["-m", "venv", prefix], {
    timeoutMs: 120_000,
  });
  if (!venv.success) {
    return {
      ok: false,
      reason: `${interpreter} -m venv failed: ${pipFailureReason(venv.output)}`,
      seconds: seconds(),
    };
  }
  const pip = await runCaptured(envPython, [
    "-m",
    "pip",
    "install",
    "--no-input",
    "--disable-pip-version-check",
    "-r",
    environment.requirements,
  ], { timeoutMs: PYTHON_INSTALL_TIMEOUT_MS });
  await Deno.writeTextFile(`${prefix}.install.log`, pip.output);
  if (!pip.success) {
    return {
      ok: false,
      reason: pip.timedOut
        ? `pip install timed out after ${PYTHON_INSTALL_TIMEOUT_MS / 1000} s`
        : pipFailureReason(pip.output),
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

/**
 * An agent its users install from PyPI (`pip install <package>==<version>`):
 * its environment's requirements pin the package and everything it needs,
 * and it runs as its console script there.
 */
export interface PypiInstall {
  /** The package on PyPI, as `pip install` names it. */
  package: string;
  version: string;
  environment: PythonEnvironment;
  /** The console script the package installs, in the environment's `bin/`. */
  bin: string;
}

/**
 * Makes (or finds) the package's environment; the install's binary is its
 * console script there.
 */
export async function installPypiPackage(
  install: PypiInstall,
  cacheDir: string,
  search: PythonSearch = machinePythonSearch(),
): Promise<InstallResult> {
  const installed = await installPythonEnvironment(
    install.environment,
    cacheDir,
    "python3",
    search,
  );
  if (!installed.ok) return installed;
  const binPath = `${installed.prefix}/bin/${install.bin}`;
  if (!await exists(binPath)) {
    return {
      ok: false,
      reason:
        `${install.package} ${install.version} installed no ${install.bin}`,
      seconds: installed.seconds,
    };
  }
  return {
    ok: true,
    prefix: installed.prefix,
    binPath,
    seconds: installed.seconds,
    cached: installed.cached,
  };
}
