import assert from "node:assert/strict";
import {
  buildOnce,
  type BuildRecipe,
  type BuiltProgram,
  programFiles,
  programKey,
} from "./build_once.ts";
import { exists } from "./install.ts";
import { runCaptured } from "./process.ts";
import { CARGO_BUILD, cargoEnv, cargoFailureReason } from "./install_rust.ts";
import { MAVEN_BUILD, mavenFailureReason } from "./install_java.ts";

/**
 * A recipe with no toolchain: `sh` writes an executable that prints the
 * program's `message.txt`, or fails with `fail.txt`'s text.
 */
const SHELL_BUILD: BuildRecipe = {
  language: "go",
  tool: "go build",
  reads: (path) => path.endsWith(".txt") && !path.startsWith("docs/"),
  build: (program, out) =>
    runCaptured("sh", [
      "-c",
      'if [ -f fail.txt ]; then cat fail.txt >&2; exit 1; fi; printf \'#!/bin/sh\\necho %s\\n\' "$(cat message.txt)" >"$1"; chmod +x "$1"',
      "sh",
      out.executable,
    ], { cwd: program.dir, env: { PATH: "/usr/bin:/bin" }, timeoutMs: 10_000 }),
  failureReason: (output) => `failed: ${output.trim()}`,
  timeoutMs: 10_000,
};

async function shellProgram(): Promise<BuiltProgram> {
  const dir = await Deno.makeTempDir({ prefix: "lab-built-program-" });
  await Deno.writeTextFile(`${dir}/message.txt`, "first");
  await Deno.mkdir(`${dir}/docs`);
  await Deno.writeTextFile(`${dir}/docs/notes.txt`, "not read");
  await Deno.mkdir(`${dir}/target/deep`, { recursive: true });
  await Deno.writeTextFile(`${dir}/target/deep/out.txt`, "a build's output");
  return { dir, name: "demo", recipe: SHELL_BUILD };
}

async function printed(binPath: string): Promise<string> {
  const output = await new Deno.Command(binPath, { stdout: "piped" }).output();
  return new TextDecoder().decode(output.stdout);
}

Deno.test("build_once: built once into <cache>/<language>-programs/<name>-<key>, reused after, built afresh when a file it reads changes", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "lab-built-cache-" });
  const program = await shellProgram();
  try {
    // Only what the recipe reads, and never a build's output folder.
    assert.deepEqual(await programFiles(program), ["message.txt"]);
    const key = await programKey(program);
    assert.match(key, /^[0-9a-f]{16}$/);
    const first = await buildOnce(program, cacheDir);
    assert.ok(first.ok);
    assert.equal(first.cached, false);
    assert.equal(first.prefix, `${cacheDir}/go-programs/demo-${key}`);
    assert.equal(first.binPath, `${first.prefix}/demo`);
    assert.equal(await printed(first.binPath), "first\n");
    assert.equal(await exists(`${first.binPath}.building`), false);
    const second = await buildOnce(program, cacheDir);
    assert.deepEqual({ ...second, seconds: 0 }, {
      ...first,
      seconds: 0,
      cached: true,
    });
    await Deno.writeTextFile(`${program.dir}/docs/notes.txt`, "edited");
    assert.equal(await programKey(program), key);
    await Deno.writeTextFile(`${program.dir}/message.txt`, "second");
    const edited = await buildOnce(program, cacheDir);
    assert.ok(edited.ok && !edited.cached);
    assert.notEqual(edited.binPath, first.binPath);
    assert.equal(await printed(edited.binPath), "second\n");
    // A toolchain pin is part of the key.
    assert.notEqual(
      await programKey({ ...program, toolchain: "go1.27.3" }),
      await programKey(program),
    );
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
    await Deno.remove(program.dir, { recursive: true });
  }
});

Deno.test("build_once: a failed build is the recipe's reason from the build's output, its log kept, no executable left to reuse", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "lab-built-cache-" });
  const program = await shellProgram();
  try {
    await Deno.writeTextFile(`${program.dir}/fail.txt`, "no such package");
    const failed = await buildOnce(program, cacheDir);
    assert.deepEqual({ ...failed, seconds: 0 }, {
      ok: false,
      reason: "failed: no such package",
      seconds: 0,
    });
    const prefix = `${cacheDir}/go-programs/demo-${await programKey(program)}`;
    assert.equal(await exists(`${prefix}/demo`), false);
    assert.equal(
      await Deno.readTextFile(`${prefix}.build.log`),
      "no such package",
    );
    const missing = await runCaptured("no-such-build-tool", [], {
      cwd: program.dir,
      env: {},
      timeoutMs: 1000,
    });
    assert.equal(missing.success, false);
    assert.match(missing.output, /^no-such-build-tool could not run: /);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
    await Deno.remove(program.dir, { recursive: true });
  }
});

/** Whether `command --version` runs here. */
async function runs(command: string): Promise<boolean> {
  try {
    return (await new Deno.Command(command, {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    }).output()).success;
  } catch {
    return false;
  }
}

const hasCargo = await runs("cargo");
if (!hasCargo) {
  console.log("build_once_test.ts: cargo's builds are skipped: no cargo");
}

Deno.test({
  name:
    "install_rust: cargo builds a crate on its Cargo.lock into the cache; without its lock file cargo refuses (--locked) and the reason is cargo's own line",
  ignore: !hasCargo,
  async fn() {
    const cacheDir = await Deno.makeTempDir({ prefix: "lab-rust-cache-" });
    const dir = await Deno.makeTempDir({ prefix: "lab-rust-program-" });
    const program: BuiltProgram = { dir, name: "demo", recipe: CARGO_BUILD };
    try {
      await Deno.writeTextFile(
        `${dir}/Cargo.toml`,
        '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n',
      );
      await Deno.mkdir(`${dir}/src`);
      await Deno.writeTextFile(
        `${dir}/src/main.rs`,
        'fn main() {\n    println!("built");\n}\n',
      );
      const unlocked = await buildOnce(program, cacheDir);
      assert.deepEqual({ ...unlocked, seconds: 0 }, {
        ok: false,
        reason:
          `error: cannot create the lock file ${dir}/Cargo.lock because --locked was passed to prevent this`,
        seconds: 0,
      });
      await Deno.writeTextFile(
        `${dir}/Cargo.lock`,
        'version = 4\n\n[[package]]\nname = "demo"\nversion = "0.1.0"\n',
      );
      assert.deepEqual(await programFiles(program), [
        "Cargo.lock",
        "Cargo.toml",
        "src/main.rs",
      ]);
      const built = await buildOnce(program, cacheDir);
      assert.ok(built.ok && !built.cached);
      assert.equal(await printed(built.binPath), "built\n");
      assert.ok(await exists(`${cacheDir}/cargo/target/demo/release`));
      assert.equal(await exists(`${dir}/target`), false);
      const again = await buildOnce(program, cacheDir);
      assert.ok(again.ok && again.cached);
    } finally {
      await Deno.remove(cacheDir, { recursive: true });
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("install_rust, install_java: the environment a build gets, and the line a failure says", () => {
  assert.deepEqual(
    cargoEnv("/c", "app", { PATH: "/bin", HOME: "/h", CARGO_HOME: "/x" }),
    {
      PATH: "/bin",
      HOME: "/h",
      CARGO_HOME: "/c/cargo/home",
      CARGO_TARGET_DIR: "/c/cargo/target/app",
      RUSTUP_HOME: "/h/.rustup",
      CARGO_TERM_COLOR: "never",
    },
  );
  assert.equal(
    cargoFailureReason(
      "   Compiling demo v0.1.0\nerror[E0425]: cannot find function `x` in this scope\n --> src/main.rs:2:5\n  |\nerror: could not compile `demo`\n",
    ),
    "error[E0425]: cannot find function `x` in this scope; --> src/main.rs:2:5; error: could not compile `demo`",
  );
  assert.equal(cargoFailureReason("\n"), "cargo build failed");
  assert.equal(
    mavenFailureReason(
      "[INFO] Scanning\n[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project lab:app:jar:1: io.modelcontextprotocol.sdk:mcp:jar:9.9.9 was not found in https://repo.maven.apache.org/maven2\n[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n[ERROR] -> [Help 1]\n",
    ),
    "Failed to execute goal on project app: Could not resolve dependencies for project lab:app:jar:1: io.modelcontextprotocol.sdk:mcp:jar:9.9.9 was not found in https://repo.maven.apache.org/maven2",
  );
  // Maven 3.8.7's own output for a compile error, colour resets and all.
  assert.equal(
    mavenFailureReason(
      "\u001b[0m\u001b[0m[ERROR] COMPILATION ERROR : \n[ERROR] /p/src/main/java/lab/App.java:[86,18] cannot find symbol\n  symbol:   variable undefinedName\n[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project java-sdk: Compilation failure\n",
    ),
    "COMPILATION ERROR :; /p/src/main/java/lab/App.java:[86,18] cannot find symbol; Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:compile (default-compile) on project java-sdk: Compilation failure",
  );
  assert.equal(mavenFailureReason(""), "mvn package failed");
  assert.deepEqual(
    [CARGO_BUILD, MAVEN_BUILD].map((recipe) => [
      recipe.language,
      recipe.reads("src/main.rs"),
      recipe.reads("src/main/java/lab/App.java"),
      recipe.reads("README.md"),
    ]),
    [["rust", true, false, false], ["java", false, true, false]],
  );
});
