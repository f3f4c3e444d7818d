import assert from "node:assert/strict";
import { exists } from "./install.ts";
import {
  buildOnce,
  type BuiltProgram,
  programFiles,
  programKey,
} from "./build_once.ts";
import {
  buildFailureReason,
  GO_BUILD,
  goEnv,
  installFailureReason,
  installGoModule,
  moduleBinaryName,
  moduleInstallDir,
} from "./install_go.ts";

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

/** Whether `go` runs here; the go install tests skip, saying so, when not. */
async function goRuns(): Promise<boolean> {
  try {
    return (await new Deno.Command("go", { args: ["version"] }).output())
      .success;
  } catch {
    return false;
  }
}

/** CRC-32 (IEEE), which every zip entry carries. */
function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) {
      crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
    }
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A zip of stored (uncompressed) files, as a module proxy serves a module. */
function zipOf(files: Record<string, string>): Uint8Array {
  const encoder = new TextEncoder();
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const nameBytes = encoder.encode(name);
    const data = encoder.encode(text);
    const header = (size: number) => {
      const bytes = new Uint8Array(size + nameBytes.length);
      bytes.set(nameBytes, size);
      return { bytes, view: new DataView(bytes.buffer) };
    };
    const local = header(30);
    local.view.setUint32(0, 0x04034b50, true);
    local.view.setUint16(4, 20, true);
    local.view.setUint32(14, crc32(data), true);
    local.view.setUint32(18, data.length, true);
    local.view.setUint32(22, data.length, true);
    local.view.setUint16(26, nameBytes.length, true);
    const central = header(46);
    central.view.setUint32(0, 0x02014b50, true);
    central.view.setUint16(4, 20, true);
    central.view.setUint16(6, 20, true);
    central.view.setUint32(16, crc32(data), true);
    central.view.setUint32(20, data.length, true);
    central.view.setUint32(24, data.length, true);
    central.view.setUint16(28, nameBytes.length, true);
    central.view.setUint32(42, offset, true);
    locals.push(local.bytes, data);
    centrals.push(central.bytes);
    offset += local.bytes.length + data.length;
  }
  const centralSize = centrals.reduce((sum, c) => sum + c.length, 0);
  const end = new Uint8Array(22);
  const endView = new DataView(end.buffer);
  endView.setUint32(0, 0x06054b50, true);
  endView.setUint16(8, centrals.length, true);
  endView.setUint16(10, centrals.length, true);
  endView.setUint32(12, centralSize, true);
  endView.setUint32(16, offset, true);
  const parts = [...locals, ...centrals, end];
  const zip = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0));
  let at = 0;
  for (const part of parts) {
    zip.set(part, at);
    at += part.length;
  }
  return zip;
}

/**
 * A module proxy in a folder (GOPROXY=file://…) serving one version of
 * `example.com/tools/demo/v2`, whose program prints `installed`: go
 * installs it offline, as it would from the real proxy.
 */
async function demoProxy(): Promise<string> {
  const proxy = await Deno.makeTempDir({ prefix: "lab-go-proxy-" });
  const module = "example.com/tools/demo/v2";
  const version = "v2.0.1";
  const dir = `${proxy}/${module}/@v`;
  await Deno.mkdir(dir, { recursive: true });
  const goMod = `module ${module}\n\ngo 1.26\n`;
  await Deno.writeTextFile(`${dir}/list`, `${version}\n`);
  await Deno.writeTextFile(
    `${dir}/${version}.info`,
    JSON.stringify({ Version: version, Time: "2026-01-02T03:04:05Z" }),
  );
  await Deno.writeTextFile(`${dir}/${version}.mod`, goMod);
  await Deno.writeFile(
    `${dir}/${version}.zip`,
    zipOf({
      [`${module}@${version}/go.mod`]: goMod,
      [`${module}@${version}/main.go`]:
        'package main\n\nfunc main() { println("installed") }\n',
    }),
  );
  return proxy;
}

/** This environment with go reading only the folder proxy. */
function proxyEnv(proxy: string): Record<string, string> {
  return {
    ...Deno.env.toObject(),
    GOPROXY: `file://${proxy}`,
    GOSUMDB: "off",
  };
}

Deno.test("install_go: go install of a published module installs once into a folder keyed by module, version and toolchain, and reuses it", async () => {
  if (!await goRuns()) {
    console.log("skipped: go is not on PATH");
    return;
  }
  const cacheDir = await Deno.makeTempDir({ prefix: "lab-go-cache-" });
  const proxy = await demoProxy();
  const install = { module: "example.com/tools/demo/v2", version: "v2.0.1" };
  try {
    const first = await installGoModule(install, cacheDir, proxyEnv(proxy));
    assert.ok(first.ok, JSON.stringify(first));
    assert.equal(first.cached, false);
    assert.equal(
      first.prefix,
      `${cacheDir}/go-modules/example.com_tools_demo_v2@v2.0.1`,
    );
    assert.equal(first.binPath, `${first.prefix}/demo`);
    assert.equal(await stderrOf(first.binPath), "installed\n");
    // The module and its build are in the harness's caches.
    assert.ok(
      await exists(`${cacheDir}/go/mod/example.com/tools/demo/v2@v2.0.1`),
    );
    assert.equal(await exists(`${first.prefix}.installing`), false);
    // A second run asks no proxy: with none at all it still succeeds.
    await Deno.remove(`${first.prefix}.install.log`);
    const second = await installGoModule(install, cacheDir, {
      ...proxyEnv(proxy),
      GOPROXY: "off",
    });
    assert.deepEqual({ ...second, seconds: 0 }, {
      ...first,
      seconds: 0,
      cached: true,
    });
    assert.equal(await exists(`${first.prefix}.install.log`), false);
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
    await Deno.remove(proxy, { recursive: true });
  }
});

Deno.test("install_go: a failed go install is go's own message, and leaves no binary to reuse", async () => {
  if (!await goRuns()) {
    console.log("skipped: go is not on PATH");
    return;
  }
  const cacheDir = await Deno.makeTempDir({ prefix: "lab-go-cache-" });
  const proxy = await demoProxy();
  const install = { module: "example.com/tools/demo/v2", version: "v2.9.9" };
  try {
    const failed = await installGoModule(install, cacheDir, proxyEnv(proxy));
    assert.deepEqual({ ...failed, seconds: 0 }, {
      ok: false,
      reason:
        `go: example.com/tools/demo/v2@v2.9.9: example.com/tools/demo/v2@v2.9.9: reading file://${proxy}/example.com/tools/demo/v2/@v/v2.9.9.info: no such file or directory`,
      seconds: 0,
    });
    assert.equal(
      await exists(`${moduleInstallDir(cacheDir, install)}/demo`),
      false,
    );
  } finally {
    await Deno.remove(cacheDir, { recursive: true });
    await Deno.remove(proxy, { recursive: true });
  }
});

Deno.test("install_go: a module's binary name, its cache folder, an install failure's lines", () => {
  assert.equal(moduleBinaryName("github.com/charmbracelet/crush"), "crush");
  assert.equal(moduleBinaryName("example.com/tools/demo/v2"), "demo");
  assert.equal(
    moduleInstallDir("/c", {
      module: "github.com/charmbracelet/crush",
      version: "v0.96.1",
    }),
    "/c/go-modules/github.com_charmbracelet_crush@v0.96.1",
  );
  assert.equal(
    moduleInstallDir("/c", {
      module: "github.com/charmbracelet/crush",
      version: "v0.96.1",
      toolchain: "go1.27.3",
    }),
    "/c/go-modules/github.com_charmbracelet_crush@v0.96.1+go1.27.3",
  );
  assert.equal(
    installFailureReason(
      "go: downloading go1.27.3 (linux/amd64)\ngo: downloading example.com/m v1.0.0\ngo: example.com/m@v1.0.0: 403 Forbidden\n",
    ),
    "go: example.com/m@v1.0.0: 403 Forbidden",
  );
  assert.equal(installFailureReason("\n"), "go install failed");
});
