/**
 * Go's recipe for a program of this checkout (`clients/programs/go/<id>/`):
 * `go build` as a Go user would, with its committed `go.mod` and `go.sum`,
 * the module and build caches in the harness cache (`<cache>/go/mod`,
 * `<cache>/go/build`); `build_once.ts` keys and reuses the binary.
 *
 * @module
 */

import { type BuildRecipe, runBuildCommand } from "./build_once.ts";

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
  reads: (path) =>
    path === "go.mod" || path === "go.sum" ||
    (!path.includes("/") && path.endsWith(".go")),
  build: (program, out) =>
    runBuildCommand("go", ["build", "-trimpath", "-o", out.executable, "."], {
      cwd: program.dir,
      env: goEnv(out.cacheDir, program.toolchain),
      timeoutMs: GO_BUILD_TIMEOUT_MS,
    }),
  failureReason: buildFailureReason,
  timeoutMs: GO_BUILD_TIMEOUT_MS,
};
