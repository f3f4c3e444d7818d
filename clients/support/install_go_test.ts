import assert from "node:assert/strict";
import { exists } from "./install.ts";
import {
  buildOnce,
  type BuiltProgram,
  programFiles,
  programKey,
} from "./build_once.ts";
import { buildFailureReason, GO_BUILD, goEnv } from "./install_go.ts";

/** A Go program of one file with no modules: it builds offline. */
async function demoProgram(source: string): Promise<BuiltProgram> {
  const dir = await Deno.makeTempDir({ prefix: "lab-go-program-" });
  await Deno.writeTextFile(`${dir}/go.mod`, "module demo\n\ngo 1.26\n");
  await Deno.writeTextFile(`${dir}/main.go`, source);
  await Deno.writeTextFile(`${dir}/notes.txt`, "not read by go build\n");
  return { dir, name: "demo", recipe: GO_BUILD };
}

const PRINTS_BUILT = 'package main\n\nfunc main() { println("built") }\n';

async function stderrOf(binPath: string): Promise<string> {
  const output = await new Deno.Command(binPath, { stderr: "piped" }).output();
  return new TextDecoder().decode(output.stderr);
}

Deno.test("install_go: the first run builds into the cache, a second builds nothing, an edited program is built afresh", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "lab-go-cache-" });
  const program = await demoProgram(PRINTS_BUILT);
  try {
    const first = await buildOnce(program, cacheDir);
    assert.ok(first.ok);
    assert.equal(first.cached, false);
    const key = await programKey(program);
    assert.match(key, /^[0-9a-f]{16}$/);
    assert.equal(first.prefix, `${cacheDir}/go-programs/demo-${key}`);
    assert.equal(first.binPath, `${first.prefix}/demo`);
    assert.equal(await stderrOf(first.binPath), "built\n");
    // Go's own caches are the harness's, not the user's.
    assert.ok(await exists(`${cacheDir}/go/build`));
    // go writes the log on every build: gone, and not written again.
    await Deno.remove(`${first.prefix}.build.log`);
    const second = await buildOnce(program, cacheDir);
    assert.deepEqual({ ...second, seconds: 0 }, {
      ...first,
      seconds: 0,
      cached: true,
    });
    assert.equal(await exists(`${first.prefix}.build.log`), false);
    // A file go does not read leaves the key alone; a source edit moves it.
    await Deno.writeTextFile(`${program.dir}/notes.txt`, "edited\n");
    assert.equal(await programKey(program), key);
    await Deno.writeTextFile(
      `${program.dir}/main.go`,
      PRINTS_BUILT.replace('"built"', '"edited"'),
    );
    const edited = await buildOnce(program, cacheDir);
    assert.ok(edited.ok);
    assert.equal(edited.cached, false);
    assert.notEqual(edited.binPath, first.binPath);
    assert.equal(await stderrOf(edited.binPath), "edited\n");
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
    await Deno.remove(program.dir, { recursive: true });
  }
});

Deno.test("install_go: a failed build is go's own message, and leaves no binary to reuse", async () => {
  const cacheDir = await Deno.makeTempDir({ prefix: "lab-go-cache-" });
  const program = await demoProgram(
    "package main\n\nfunc main() { undefinedName() }\n",
  );
  try {
    const failed = await buildOnce(program, cacheDir);
    assert.deepEqual({ ...failed, seconds: 0 }, {
      ok: false,
      reason: "./main.go:3:15: undefined: undefinedName",
      seconds: 0,
    });
    const key = await programKey(program);
    assert.equal(
      await exists(`${cacheDir}/go-programs/demo-${key}/demo`),
      false,
    );
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
    await Deno.remove(program.dir, { recursive: true });
  }
});

Deno.test("install_go: the files a build reads, go's environment, a failure's lines", async () => {
  const program = await demoProgram(PRINTS_BUILT);
  try {
    assert.deepEqual(await programFiles(program), ["go.mod", "main.go"]);
  } finally {
    await Deno.remove(program.dir, { recursive: true });
  }
  assert.deepEqual(
    goEnv("/c", "go1.27.3", {
      PATH: "/bin",
      GOFLAGS: "-mod=mod",
    }),
    {
      PATH: "/bin",
      GOMODCACHE: "/c/go/mod",
      GOCACHE: "/c/go/build",
      GOFLAGS: "-mod=readonly",
      GOTOOLCHAIN: "go1.27.3",
    },
  );
  assert.equal(goEnv("/c", undefined, {}).GOTOOLCHAIN, "local");
  assert.equal(
    buildFailureReason(
      "go: downloading example.com/m v1.0.0\n# demo\n./main.go:3:15: undefined: x\n\n",
    ),
    "go: downloading example.com/m v1.0.0; ./main.go:3:15: undefined: x",
  );
  assert.equal(buildFailureReason("\n"), "go build failed");
  assert.equal(buildFailureReason("e".repeat(400)).length, 300);
});
