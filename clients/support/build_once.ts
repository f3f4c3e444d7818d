/**
 * Builds a program of this checkout in a compiled language (Go, Rust, Java)
 * as a user of that language would, from its committed lock file, into the
 * harness cache, once: the binary's folder is keyed by a hash of the files
 * the build reads, so a second run builds nothing and an edited program is
 * built afresh. Each language's recipe (`install_go.ts`, `install_rust.ts`,
 * `install_java.ts`) says which files count and how to build.
 *
 * @module
 */

import { exists, type InstallResult } from "./install.ts";
import type { CapturedRun } from "./process.ts";

/** Where a recipe puts what it builds. */
export interface BuildOutput {
  /** The program's folder in the cache, for anything beside the executable. */
  prefix: string;
  /** Where the executable goes (renamed to its final name once whole). */
  executable: string;
  /** The harness cache, where the language's own caches live. */
  cacheDir: string;
}

/** How one language builds a program of this checkout. */
export interface BuildRecipe {
  language: "go" | "rust" | "java";
  /** The command a failed build's row quotes (`go build failed: …`). */
  tool: "go build" | "cargo build" | "mvn package";
  /** Whether the build reads a file, by its path inside the program's folder. */
  reads(path: string): boolean;
  /** Builds the program; an executable at `out.executable` when it succeeds. */
  build(program: BuiltProgram, out: BuildOutput): Promise<CapturedRun>;
  /** The part of a failed build's output that says why, one line. */
  failureReason(output: string): string;
  /** How long a build may take, downloads included. */
  timeoutMs: number;
}

/** A program of this checkout, built on pinned packages of its language. */
export interface BuiltProgram {
  /** The program's folder: its manifest, lock file and sources. */
  dir: string;
  /** The executable's name, and its folder's in the cache. */
  name: string;
  recipe: BuildRecipe;
  /** Go's `GOTOOLCHAIN`, for a module that needs a newer Go than the machine's. */
  toolchain?: string;
}

/** Folders a build writes into the program's own folder: never read. */
const BUILD_OUTPUT_FOLDERS = new Set(["target", "node_modules", ".venv"]);

/** The files a build reads, by path inside the program's folder, sorted. */
export async function programFiles(program: BuiltProgram): Promise<string[]> {
  const paths: string[] = [];
  const walk = async (relative: string) => {
    for await (const entry of Deno.readDir(`${program.dir}/${relative}`)) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isDirectory && !BUILD_OUTPUT_FOLDERS.has(entry.name)) {
        await walk(path);
      } else if (entry.isFile && program.recipe.reads(path)) {
        paths.push(path);
      }
    }
  };
  await walk("");
  return paths.sort();
}

/** A hash of the program's files, paths and contents, for its cache folder. */
export async function programKey(program: BuiltProgram): Promise<string> {
  const encoder = new TextEncoder();
  const parts: BlobPart[] = [];
  for (const path of await programFiles(program)) {
    parts.push(encoder.encode(`${path}\0`));
    parts.push(await Deno.readFile(`${program.dir}/${path}`));
    parts.push(encoder.encode("\0"));
  }
  parts.push(encoder.encode(program.toolchain ?? ""));
  const digest = await crypto.subtle.digest(
    "SHA-256",
    await new Blob(parts).arrayBuffer(),
  );
  return [...new Uint8Array(digest).slice(0, 8)]
    .map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The program's folder in the cache: by language, name and key. */
export async function programPrefix(
  program: BuiltProgram,
  cacheDir: string,
): Promise<string> {
  return `${cacheDir}/${program.recipe.language}-programs/${program.name}-${await programKey(
    program,
  )}`;
}

/** Builds the program once per version of its files; reuses it after. */
export async function buildOnce(
  program: BuiltProgram,
  cacheDir: string,
): Promise<InstallResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const prefix = await programPrefix(program, cacheDir);
  const binPath = `${prefix}/${program.name}`;
  if (await exists(binPath)) {
    return { ok: true, prefix, binPath, seconds: seconds(), cached: true };
  }
  await Deno.mkdir(prefix, { recursive: true });
  // Built beside its final name and renamed, so an executable there is whole.
  const executable = `${binPath}.building`;
  const run = await program.recipe.build(program, {
    prefix,
    executable,
    cacheDir,
  });
  await Deno.writeTextFile(`${prefix}.build.log`, run.output);
  if (!run.success) {
    return {
      ok: false,
      reason: run.timedOut
        ? `the build timed out after ${program.recipe.timeoutMs / 1000} s`
        : program.recipe.failureReason(run.output),
      seconds: seconds(),
    };
  }
  await Deno.rename(executable, binPath);
  return { ok: true, prefix, binPath, seconds: seconds(), cached: false };
}
