/**
 * Rust's recipe for a program of this checkout
 * (`clients/programs/rust/<id>/`): `cargo build --release --locked` as a
 * Rust user would, on its committed `Cargo.lock`, with cargo's registry
 * and the build's target folder in the harness cache (`<cache>/cargo/…`);
 * `build_once.ts` keys and reuses the binary.
 *
 * @module
 */

import type { BuildRecipe } from "./build_once.ts";
import { runCaptured } from "./process.ts";

/** `cargo build` gets this long, crate downloads included. */
const CARGO_BUILD_TIMEOUT_MS = 1_200_000;

/**
 * Cargo's environment for a build: this process's, with its home (the
 * registry's index and crates) and the target folder in the harness cache.
 * The toolchain stays the machine's (rustup's, if that is where cargo is).
 */
export function cargoEnv(
  cacheDir: string,
  name: string,
  inherited: Record<string, string> = Deno.env.toObject(),
): Record<string, string> {
  return {
    ...inherited,
    CARGO_HOME: `${cacheDir}/cargo/home`,
    CARGO_TARGET_DIR: `${cacheDir}/cargo/target/${name}`,
    // rustup's proxies find their toolchains here, whatever CARGO_HOME says.
    RUSTUP_HOME: inherited.RUSTUP_HOME ??
      `${inherited.HOME ?? "/root"}/.rustup`,
    CARGO_TERM_COLOR: "never",
  };
}

/**
 * What cargo said when a build failed: its `error` lines (with the line
 * after each, which says where), joined, cut to 300 characters.
 */
export function cargoFailureReason(output: string): string {
  const lines = output.split("\n").map((line) => line.trim())
    .filter((line) => line !== "");
  const errors = lines.flatMap((line, index) =>
    line.startsWith("error")
      ? [
        line,
        ...(lines[index + 1]?.startsWith("-->") ? [lines[index + 1]] : []),
      ]
      : []
  );
  return (errors.join("; ") || lines.at(-1) || "cargo build failed")
    .slice(0, 300);
}

/** `cargo build` of the program: its manifest, lock file and `src/`. */
export const CARGO_BUILD: BuildRecipe = {
  language: "rust",
  tool: "cargo build",
  reads: (path) =>
    path === "Cargo.toml" || path === "Cargo.lock" ||
    (path.startsWith("src/") && path.endsWith(".rs")),
  async build(program, out) {
    const env = cargoEnv(out.cacheDir, program.name);
    const run = await runCaptured(
      "cargo",
      ["build", "--release", "--locked", "--quiet"],
      { cwd: program.dir, env, timeoutMs: CARGO_BUILD_TIMEOUT_MS },
    );
    if (!run.success) return run;
    await Deno.copyFile(
      `${env.CARGO_TARGET_DIR}/release/${program.name}`,
      out.executable,
    );
    return run;
  },
  failureReason: cargoFailureReason,
  timeoutMs: CARGO_BUILD_TIMEOUT_MS,
};
