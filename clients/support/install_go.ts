/**
 * Go's recipe for a program of this checkout (`clients/programs/go/<id>/`):
 * `go build` as a Go user would, with its committed `go.mod` and `go.sum`,
 * the module and build caches in the harness cache (`<cache>/go/mod`,
 * `<cache>/go/build`); `build_once.ts` keys and reuses the binary. And
 * installs a published Go program the same way its users do, `go install
 * module@version`, into a folder of the cache keyed by that module, version
 * and toolchain: a second run installs nothing.
 *
 * @module
 */

import type { BuildRecipe } from "./build_once.ts";
import { runCaptured } from "./process.ts";
import { exists, type InstallResult } from "./install.ts";

/**
 * Go's environment for a build: this process's, with the module and build
 * caches in the harness cache, `go.mod` and `go.sum` read-only (a missing
 * sum is an error, never a silent update), and the toolchain pinned.
 */
export function goEnv(
  cacheDir: string,
  toolchain: string | undefined,
  inherited: Record<string, string> = Deno.env.toObject(),
): Record<string, string> {
  return {
    ...inherited,
    GOMODCACHE: `${cacheDir}/go/mod`,
    GOCACHE: `${cacheDir}/go/build`,
    GOFLAGS: "-mod=readonly",
    GOTOOLCHAIN: toolchain ?? "local",
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

/** `go build` gets this long, module downloads included. */
const GO_BUILD_TIMEOUT_MS = 600_000;

/** `go build` of the program's folder: go.mod, go.sum and the `.go` files. */
export const GO_BUILD: BuildRecipe = {
  language: "go",
  tool: "go build",
  reads: (path) =>
    path === "go.mod" || path === "go.sum" ||
    (!path.includes("/") && path.endsWith(".go")),
  build: (program, out) =>
    runCaptured("go", ["build", "-trimpath", "-o", out.executable, "."], {
      cwd: program.dir,
      env: goEnv(out.cacheDir, program.toolchain),
      timeoutMs: GO_BUILD_TIMEOUT_MS,
    }),
  failureReason: buildFailureReason,
  timeoutMs: GO_BUILD_TIMEOUT_MS,
};

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
  const run = await runCaptured(
    "go",
    ["install", "-trimpath", `${install.module}@${install.version}`],
    {
      // Outside any module: go install module@version reads only its own.
      cwd: installing,
      env: {
        ...goEnv(cacheDir, install.toolchain, inherited),
        GOBIN: installing,
      },
      timeoutMs: GO_BUILD_TIMEOUT_MS,
    },
  );
  await Deno.writeTextFile(`${prefix}.install.log`, run.output);
  if (!run.success) {
    return {
      ok: false,
      reason: run.timedOut
        ? `go install timed out after ${GO_BUILD_TIMEOUT_MS / 1000} s`
        : installFailureReason(run.output),
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
