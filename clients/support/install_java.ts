/**
 * Java's recipe for a program of this checkout
 * (`clients/programs/java/<id>/`): `mvn package` as a Maven user would, on
 * the exact versions its `pom.xml` names, with the local repository in the
 * harness cache (`<cache>/maven/repository`). The program's folder is
 * copied into its cache folder and built there, so nothing is written into
 * this checkout. The pom makes `target/<id>.jar`, runnable with `java -jar`
 * (its manifest names the main class and its dependencies, copied beside
 * it); the executable is a launcher that runs it. `build_once.ts` keys and
 * reuses the build.
 *
 * @module
 */

import { type BuildRecipe, programFiles } from "./build_once.ts";
import { runCaptured, shellQuote, withoutTerminalEscapes } from "./process.ts";

/** `mvn package` gets this long, downloads included. */
const MAVEN_BUILD_TIMEOUT_MS = 900_000;

/**
 * What Maven said when a build failed: its first `[ERROR]` lines that say
 * something (not its help links), joined, cut to 300 characters. Maven 3.8
 * writes colour resets even in batch mode, before the first `[ERROR]`.
 */
export function mavenFailureReason(output: string): string {
  const errors = withoutTerminalEscapes(output).split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("[ERROR]"))
    .map((line) => line.slice("[ERROR]".length).trim())
    .filter((line) =>
      line !== "" && !line.startsWith("->") && !line.startsWith("Re-run") &&
      !line.startsWith("To see the full") && !line.startsWith("For more")
    );
  return (errors.slice(0, 3).join("; ") || "mvn package failed").slice(0, 300);
}

/** Copies the files a build reads into `to`, folders and all. */
async function copyProgram(from: string, paths: string[], to: string) {
  for (const path of paths) {
    const target = `${to}/${path}`;
    await Deno.mkdir(target.slice(0, target.lastIndexOf("/")), {
      recursive: true,
    });
    await Deno.copyFile(`${from}/${path}`, target);
  }
}

/** `mvn package` of the program: its pom and `src/main/`. */
export const MAVEN_BUILD: BuildRecipe = {
  language: "java",
  tool: "mvn package",
  reads: (path) => path === "pom.xml" || path.startsWith("src/main/"),
  async build(program, out) {
    const source = `${out.prefix}/source`;
    await Deno.remove(source, { recursive: true }).catch(() => {});
    await copyProgram(program.dir, await programFiles(program), source);
    const run = await runCaptured("mvn", [
      "--batch-mode",
      "--quiet",
      `-Dmaven.repo.local=${out.cacheDir}/maven/repository`,
      "package",
    ], {
      cwd: source,
      env: Deno.env.toObject(),
      timeoutMs: MAVEN_BUILD_TIMEOUT_MS,
    });
    if (!run.success) return run;
    const jar = `${source}/target/${program.name}.jar`;
    await Deno.writeTextFile(
      out.executable,
      `#!/bin/sh\nexec java -jar ${shellQuote(jar)} "$@"\n`,
      { mode: 0o755 },
    );
    return run;
  },
  failureReason: mavenFailureReason,
  timeoutMs: MAVEN_BUILD_TIMEOUT_MS,
};
