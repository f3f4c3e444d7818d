/**
 * Installs each client's npm package at its pinned version into a cache
 * folder outside the repository, once.
 *
 * @module
 */

import type { ClientDefinition } from "./catalog.ts";

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

export async function installClient(
  client: Installable,
  cacheDir: string,
): Promise<InstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const prefix = `${cacheDir}/${client.id}-${client.version}`;
  const platform = client.platformBinary;
  const binPath = platform
    ? `${prefix}/node_modules/${platform.npmPackage}/${platform.binary}`
    : `${prefix}/node_modules/.bin/${client.bin}`;
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
      // package npm does not have; the published one goes in beside it.
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
  if (!await exists(binPath)) {
    return {
      ok: false,
      reason: `installed, but ${binPath.slice(prefix.length + 1)} is missing`,
      seconds: seconds(),
    };
  }
  return { ok: true, prefix, binPath, seconds: seconds(), cached: false };
}
