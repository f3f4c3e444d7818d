/**
 * Installs each client's npm package at its pinned version into a cache
 * folder outside the repository, once.
 *
 * @module
 */

import type { ClientDefinition } from "./catalog.ts";
import { shellQuote } from "./process.ts";

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
  }
  | { ok: false; reason: string; seconds: number };

const INSTALL_TIMEOUT_MS = 300_000;

async function exists(path: string): Promise<boolean> {
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
 * The line of npm's output that says why an install failed: the first
 * `Error:` line (a postinstall's own error), else npm's last error line.
 */
export function installFailureReason(output: string): string {
  const lines = output.split("\n").map((line) =>
    line.replace(/^npm (error|ERR!)\s*/, "").trim()
  ).filter((line) => line !== "");
  const error = lines.find((line) => /^(\w*Error|Error):/.test(line));
  // A postinstall that fetches its binary from elsewhere fails offline.
  const download = output.match(/Downloading (https?:\/\/\S+)/)?.[1];
  const reason = (error ?? lines.at(-1) ?? "npm install failed").slice(0, 200);
  return download
    ? `${reason} (its postinstall downloads ${download})`
    : reason;
}

/** What an install needs to know of a package: the catalog's clients, or a server. */
export type Installable = Pick<
  ClientDefinition,
  "id" | "version" | "npmPackage" | "bin" | "platformBinary"
>;

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
  if (platform?.entry) return `${prefix}/${client.bin}`;
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

export async function installClient(
  client: Installable,
  cacheDir: string,
): Promise<InstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const prefix = `${cacheDir}/${client.id}-${client.version}`;
  const platform = client.platformBinary;
  const binPath = executablePath(client, prefix);
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
  const npm = new Deno.Command("npm", {
    args: [
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
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(INSTALL_TIMEOUT_MS),
  });
  let output: Deno.CommandOutput;
  try {
    output = await npm.output();
  } catch (error) {
    return {
      ok: false,
      reason: `npm could not run: ${String(error)}`,
      seconds: seconds(),
    };
  }
  const text = new TextDecoder().decode(output.stdout) +
    new TextDecoder().decode(output.stderr);
  await Deno.writeTextFile(`${prefix}.install.log`, text);
  if (!output.success) {
    return {
      ok: false,
      reason: output.signal
        ? `npm install timed out after ${INSTALL_TIMEOUT_MS / 1000} s`
        : installFailureReason(text),
      seconds: seconds(),
    };
  }
  const launcherFailure = await writeLauncher(client, prefix);
  if (launcherFailure) {
    return { ok: false, reason: launcherFailure, seconds: seconds() };
  }
  if (!await exists(binPath)) {
    return {
      ok: false,
      reason: missingAfterInstall(binPath, prefix),
      seconds: seconds(),
    };
  }
  return { ok: true, prefix, binPath, seconds: seconds(), cached: false };
}
