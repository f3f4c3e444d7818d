/**
 * Builds a Go program of this checkout (`clients/programs/go/<id>/`) as a Go
 * user would, `go build` with its committed `go.mod` and `go.sum`, into the
 * harness cache: the modules and the build cache live there too
 * (`<cache>/go/mod`, `<cache>/go/build`), and the binary's folder is keyed by
 * a hash of the program's files, so a second run downloads and builds
 * nothing, and an edited program is built afresh.
 *
 * Installs a published Go program the same way its users do, `go install
 * module@version`, into a folder of the cache keyed by that module, version
 * and toolchain: a second run installs nothing.
 *
 * @module
 */

import { exists, type InstallResult } from "./install.ts";

/** A Go program of this checkout, built on a pinned module. */
export interface GoProgram {
  /** The program's folder (its `go.mod`, `go.sum` and `.go` files). */
  dir: string;
  /** The binary's name, and its folder's in the cache. */
  name: string;
  /** `GOTOOLCHAIN` for a module that needs a newer Go than the machine's. */
  toolchain?: string;
}

/** `go build` gets this long, module downloads included. */
const BUILD_TIMEOUT_MS = 600_000;

/** The files a build reads: go.mod, go.sum and the sources, sorted. */
export async function programFiles(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (
      entry.isFile &&
      (entry.name === "go.mod" || entry.name === "go.sum" ||
        entry.name.endsWith(".go"))
    ) names.push(entry.name);
  }
  return names.sort();
}

/** A hash of the program's files, names and contents, for its cache folder. */
export async function programKey(program: GoProgram): Promise<string> {
  const parts: Uint8Array[] = [];
  const encoder = new TextEncoder();
  for (const name of await programFiles(program.dir)) {
    parts.push(encoder.encode(`${name}\0`));
    parts.push(await Deno.readFile(`${program.dir}/${name}`));
    parts.push(encoder.encode("\0"));
  }
  parts.push(encoder.encode(program.toolchain ?? ""));
  const joined = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  const digest = await crypto.subtle.digest("SHA-256", joined);
  return [...new Uint8Array(digest).slice(0, 8)]
    .map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Go's environment for a build: this process's, with the module and build
 * caches in the harness cache, `go.mod` and `go.sum` read-only (a missing
 * sum is an error, never a silent update), and the toolchain pinned.
 */
export function goEnv(
  cacheDir: string,
  program: GoProgram | GoInstall,
  inherited: Record<string, string> = Deno.env.toObject(),
): Record<string, string> {
  return {
    ...inherited,
    GOMODCACHE: `${cacheDir}/go/mod`,
    GOCACHE: `${cacheDir}/go/build`,
    GOFLAGS: "-mod=readonly",
    GOTOOLCHAIN: program.toolchain ?? "local",
  };
}

/**
 * What go said when a build failed: its lines but blank ones and the
 * `# package` headers, joined, cut to 300 characters.
 */
export function buildFailureReason(output: string): string {
  const lines = output.split("\n").map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("# "));
  return (lines.join("; ") || "go build failed").slice(0, 300);
}

/** Builds the program once per version of its files; reuses the binary after. */
export async function installGoProgram(
  program: GoProgram,
  cacheDir: string,
): Promise<InstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const prefix = `${cacheDir}/go-programs/${program.name}-${await programKey(
    program,
  )}`;
  const binPath = `${prefix}/${program.name}`;
  if (await exists(binPath)) {
    return { ok: true, prefix, binPath, seconds: seconds(), cached: true };
  }
  await Deno.mkdir(prefix, { recursive: true });
  // Built beside its final name and renamed, so a binary there is whole.
  const building = `${binPath}.building`;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("go", {
      args: ["build", "-trimpath", "-o", building, "."],
      cwd: program.dir,
      clearEnv: true,
      env: goEnv(cacheDir, program),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(BUILD_TIMEOUT_MS),
    }).output();
  } catch (error) {
    return {
      ok: false,
      reason: `go could not run: ${String(error)}`,
      seconds: seconds(),
    };
  }
  const text = new TextDecoder().decode(output.stdout) +
    new TextDecoder().decode(output.stderr);
  await Deno.writeTextFile(`${prefix}.build.log`, text);
  if (!output.success) {
    return {
      ok: false,
      reason: output.signal
        ? `go build timed out after ${BUILD_TIMEOUT_MS / 1000} s`
        : buildFailureReason(text),
      seconds: seconds(),
    };
  }
  await Deno.rename(building, binPath);
  return { ok: true, prefix, binPath, seconds: seconds(), cached: false };
}

/** A published Go program, installed with `go install module@version`. */
export interface GoInstall {
  /** The module path, whose root package is the program. */
  module: string;
  /** The exact version, as the module proxy names it (`v0.96.1`). */
  version: string;
  /** `GOTOOLCHAIN` for a module that needs a newer Go than the machine's. */
  toolchain?: string;
}

/**
 * The binary `go install` writes: the module path's last element, or the
 * one before a major-version suffix (`…/tool/v2` installs `tool`).
 */
export function moduleBinaryName(module: string): string {
  const parts = module.split("/");
  const last = parts.at(-1) ?? module;
  return /^v[0-9]+$/.test(last) && parts.length > 1 ? parts.at(-2)! : last;
}

/** The install's folder in the cache: module@version, plus the toolchain. */
export function moduleInstallDir(cacheDir: string, install: GoInstall): string {
  const name = `${install.module.replaceAll("/", "_")}@${install.version}`;
  return `${cacheDir}/go-modules/${name}${
    install.toolchain ? `+${install.toolchain}` : ""
  }`;
}

/**
 * What go said when an install failed, its download progress left out (a
 * toolchain's and each module's `go: downloading` line).
 */
export function installFailureReason(output: string): string {
  return buildFailureReason(
    output.split("\n").filter((line) => !line.startsWith("go: downloading "))
      .join("\n"),
  ).replace(/^go build failed$/, "go install failed");
}

/**
 * Installs the module's program once per module, version and toolchain;
 * reuses the binary after. `inherited` is the environment go starts from.
 */
export async function installGoModule(
  install: GoInstall,
  cacheDir: string,
  inherited: Record<string, string> = Deno.env.toObject(),
): Promise<InstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const prefix = moduleInstallDir(cacheDir, install);
  const binPath = `${prefix}/${moduleBinaryName(install.module)}`;
  if (await exists(binPath)) {
    return { ok: true, prefix, binPath, seconds: seconds(), cached: true };
  }
  // Installed into a folder beside the final one and renamed, so a binary
  // there is whole; a failed try's folder is cleared by the next.
  const installing = `${prefix}.installing`;
  await Deno.remove(installing, { recursive: true }).catch(() => {});
  await Deno.mkdir(installing, { recursive: true });
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("go", {
      args: ["install", "-trimpath", `${install.module}@${install.version}`],
      // Outside any module: go install module@version reads only its own.
      cwd: installing,
      clearEnv: true,
      env: { ...goEnv(cacheDir, install, inherited), GOBIN: installing },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(BUILD_TIMEOUT_MS),
    }).output();
  } catch (error) {
    return {
      ok: false,
      reason: `go could not run: ${String(error)}`,
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
        ? `go install timed out after ${BUILD_TIMEOUT_MS / 1000} s`
        : installFailureReason(text),
      seconds: seconds(),
    };
  }
  await Deno.remove(prefix, { recursive: true }).catch(() => {});
  await Deno.rename(installing, prefix);
  if (!await exists(binPath)) {
    return {
      ok: false,
      reason: `go install wrote no ${
        moduleBinaryName(install.module)
      } in ${prefix}`,
      seconds: seconds(),
    };
  }
  return { ok: true, prefix, binPath, seconds: seconds(), cached: false };
}
