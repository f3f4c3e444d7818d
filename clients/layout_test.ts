/**
 * The checkout's layout, as `deno info --json` and the file tree show it:
 * the harness in layers whose imports run one way, the lab's side free of
 * the harness, every test beside its file, no two files of one name, and
 * `docs/architecture.md` naming every source file.
 *
 * @module
 */

import assert from "node:assert/strict";
import { prepareTestEnvironment } from "../testdata/lab.ts";
import { forwardUses, sectionLengths } from "../testdata/reading_order.ts";

prepareTestEnvironment();

const ROOT = new URL("../", import.meta.url);

/**
 * The harness's layers, lowest first: a module imports only from its own
 * layer or one below. The lab's side (`main.ts`, `probe.ts`, `bus.ts`,
 * `stdio.ts`, `launch.ts`, `testdata/`) and the programs are below them all:
 * they import nothing of the harness.
 */
const LAYERS = [
  [
    "main.ts",
    "probe.ts",
    "bus.ts",
    "stdio.ts",
    "launch.ts",
    "testdata",
    "clients/programs",
  ],
  ["clients/support"],
  ["clients/model"],
  ["clients/catalog"],
  ["clients/runners"],
  ["clients/report"],
  ["clients/watch"],
  ["clients/run.ts", "clients/servers.ts"],
];

/** A module's layer, by the longest folder or file of `LAYERS` it is in. */
function layerOf(path: string): number {
  const matches = LAYERS.flatMap((places, layer) =>
    places.filter((place) => path === place || path.startsWith(`${place}/`))
      .map((place) => ({ layer, length: place.length }))
  );
  if (matches.length === 0) throw new Error(`${path} is in no layer`);
  return matches.toSorted((a, b) => b.length - a.length)[0].layer;
}

/** The checkout's files, by path from its root; not `.git` or `results/`. */
function checkoutFiles(dir = ""): string[] {
  return [...Deno.readDirSync(new URL(dir || ".", ROOT))].flatMap((entry) => {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) {
      return [".git", "results", "node_modules"].includes(path)
        ? []
        : checkoutFiles(`${path}/`);
    }
    return entry.isFile ? [path] : [];
  });
}

const isTest = (path: string) => /_test\.ts$/.test(path);
const isSource = (path: string) => /\.(ts|mjs)$/.test(path);

interface ModuleInfo {
  specifier: string;
  dependencies?: {
    code?: { specifier: string };
    type?: { specifier: string };
  }[];
}

/** The checkout's own import edges from `entries` down, by path. */
async function importEdges(entries: string[]): Promise<[string, string][]> {
  const edges = new Set<string>();
  for (const entry of entries) {
    const { stdout, success, stderr } = await new Deno.Command(
      Deno.execPath(),
      {
        args: ["info", "--json", entry],
        cwd: ROOT,
        env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
      },
    ).output();
    assert.ok(success, new TextDecoder().decode(stderr));
    const { modules } = JSON.parse(new TextDecoder().decode(stdout)) as {
      modules: ModuleInfo[];
    };
    const local = (specifier: string) =>
      specifier.startsWith(ROOT.href)
        ? specifier.slice(ROOT.href.length)
        : undefined;
    for (const module of modules) {
      const from = local(module.specifier);
      if (!from) continue;
      for (const dependency of module.dependencies ?? []) {
        for (const kind of [dependency.code, dependency.type]) {
          const to = kind && local(kind.specifier);
          if (to) edges.add(`${from} ${to}`);
        }
      }
    }
  }
  return [...edges].map((edge) => edge.split(" ") as [string, string]);
}

/** The modules on a circle of `edges`, or none. */
function circle(edges: [string, string][]): string[] {
  const next = Map.groupBy(edges, ([from]) => from);
  const state = new Map<string, "open" | "done">();
  const visit = (path: string[]): string[] => {
    const at = path.at(-1)!;
    state.set(at, "open");
    for (const [, to] of next.get(at) ?? []) {
      if (state.get(to) === "open") return [...path, to];
      if (!state.has(to)) {
        const found = visit([...path, to]);
        if (found.length > 0) return found;
      }
    }
    state.set(at, "done");
    return [];
  };
  for (const [from] of edges) {
    if (!state.has(from)) {
      const found = visit([from]);
      if (found.length > 0) return found.slice(found.indexOf(found.at(-1)!));
    }
  }
  return [];
}

Deno.test("the harness in layers: imports run down or within a layer, never in a circle; every module is reached", async () => {
  const files = checkoutFiles();
  const sources = files.filter((path) =>
    path.startsWith("clients/") && path.endsWith(".ts") && !isTest(path) &&
    !path.startsWith("clients/testdata/")
  );
  const edges = await importEdges([
    "clients/run.ts",
    "clients/servers.ts",
    "clients/programs/reference_host/reference_host.ts",
  ]);
  const upward = edges.filter(([from, to]) => layerOf(to) > layerOf(from))
    .map(([from, to]) => `${from} -> ${to}`);
  assert.deepEqual(upward, []);
  // main.ts's lazy imports of probe.ts, bus.ts and stdio.ts are the one way
  // back.
  const harness = edges.filter(([from]) => from !== "main.ts");
  assert.deepEqual(circle(harness), []);
  const reached = new Set(edges.flat());
  assert.deepEqual(sources.filter((path) => !reached.has(path)), []);
});

Deno.test("the lab's side imports nothing of the harness", async () => {
  // Every module at the top level: the lab, the probe, the launcher, the
  // bench and their tests, a new one too.
  const edges = await importEdges(
    [...Deno.readDirSync(ROOT)].filter((entry) =>
      entry.isFile && entry.name.endsWith(".ts")
    ).map((entry) => entry.name).toSorted(),
  );
  assert.deepEqual(
    edges.filter(([, to]) => to.startsWith("clients/")),
    [],
  );
});

Deno.test("nothing a user task or the harness runs lives under testdata/, which tests alone import", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("deno.json", ROOT)),
  ) as { tasks: Record<string, string> };
  // The files each task runs: `deno run … FILE.ts`, `deno test … FILES`.
  const ran = Object.values(config.tasks).flatMap((task) =>
    [...task.matchAll(/(?:^|\s)([\w./-]+\.ts)\b/g)].map((match) => match[1])
  );
  assert.ok(ran.includes("launch.ts"), Object.values(config.tasks).join("\n"));
  const entries = [
    ...ran,
    "clients/run.ts",
    "clients/servers.ts",
    "clients/programs/reference_host/reference_host.ts",
  ];
  const underTestdata = (path: string) =>
    path.startsWith("testdata/") || path.includes("/testdata/");
  const edges = await importEdges(entries.filter((path) => !isTest(path)));
  assert.deepEqual(
    [...entries, ...edges.flat()].filter(underTestdata),
    [],
  );
});

Deno.test("each test stands beside the file it tests; no two source files share a name", () => {
  const files = checkoutFiles();
  // Tests of more than one file: the catalog as a whole, the workflow file,
  // the layout itself.
  const wholes = [
    "clients/catalog/catalog_test.ts",
    "clients/watch/workflow_test.ts",
    "clients/layout_test.ts",
  ];
  // The file a test tests: `x_test.ts` tests `x.ts`, and the lab's tests by
  // area, `main_<area>_test.ts` at the top level, test `main.ts`.
  const tested = (path: string) =>
    /^main_\w+_test\.ts$/.test(path)
      ? "main.ts"
      : path.replace(/_test\.ts$/, ".ts");
  const orphans = files.filter((path) =>
    isTest(path) && !wholes.includes(path) && !files.includes(tested(path))
  );
  assert.deepEqual(orphans, []);
  const names = Map.groupBy(
    files.filter(isSource),
    (path) => path.split("/").at(-1)!,
  );
  assert.deepEqual(
    [...names].filter(([, paths]) => paths.length > 1),
    [],
  );
});

Deno.test("docs/architecture.md names every source file, and only files that exist", async () => {
  const files = checkoutFiles();
  const page = await Deno.readTextFile(new URL("docs/architecture.md", ROOT));
  const named = new Set(
    [...page.matchAll(/`([\w./-]+\.(?:ts|mjs|md|yaml|yml))`/g)].map((match) =>
      match[1]
    ),
  );
  const sources = files.filter((path) => isSource(path) && !isTest(path));
  assert.deepEqual(sources.filter((path) => !named.has(path)), []);
  // A path in prose may be short for one under clients/ (`runners/agent.ts`).
  const exists = (path: string) => {
    try {
      return Deno.statSync(new URL(path, ROOT)).isFile;
    } catch {
      return false;
    }
  };
  const missing = [...named].filter((name) =>
    name.includes("/") && !name.startsWith("/") && !name.includes("<") &&
    !exists(name) && !exists(`clients/${name}`)
  );
  assert.deepEqual(missing, []);
});

/** The files git tracks, by path from the checkout's root. */
async function trackedFiles(): Promise<string[]> {
  const { stdout, success, stderr } = await new Deno.Command("git", {
    args: ["ls-files", "-z"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(success, new TextDecoder().decode(stderr));
  return new TextDecoder().decode(stdout).split("\0").filter((path) => path);
}

/** What running or building a program leaves beside it, by path. */
const BUILD_OUTPUT =
  /(^|\/)(__pycache__|\.ruff_cache|node_modules|target)\/|\.py[co]$/;

Deno.test("git tracks no bytecode or build output of the programs, and .gitignore keeps it out", async () => {
  assert.deepEqual(
    (await trackedFiles()).filter((path) => BUILD_OUTPUT.test(path)),
    [],
  );
  const left = [
    "clients/programs/python/__pycache__/lab_app.cpython-311.pyc",
    "clients/programs/python/board_server.pyc",
    "clients/programs/python/.ruff_cache/CACHEDIR.TAG",
    "clients/programs/node/ai-sdk/node_modules/ai/package.json",
    "clients/programs/rust/rmcp/target/release/rmcp",
  ];
  for (const path of left) assert.ok(BUILD_OUTPUT.test(path), path);
  const { stdout } = await new Deno.Command("git", {
    args: ["check-ignore", "--no-index", ...left],
    cwd: ROOT,
    stdout: "piped",
  }).output();
  assert.deepEqual(new TextDecoder().decode(stdout).trim().split("\n"), left);
});

Deno.test("every program of another language is locked: each Node app its package.json and package-lock.json, each Go module its go.sum, each Rust package its Cargo.lock (but one whose crate no registry has)", async () => {
  const { SERVER_CATALOG } = await import(
    "./catalog/servers_and_proxies.ts"
  );
  const files = checkoutFiles();
  const under = (folder: string, name: string) =>
    files.filter((path) =>
      path.startsWith(`clients/programs/${folder}/`) &&
      path.endsWith(`/${name}`)
    ).map((path) => path.slice(0, -name.length - 1)).toSorted();
  // A Node app is a program beside lab_app.mjs; its folder bears its name.
  const apps = files.filter((path) =>
    /^clients\/programs\/node\/[^/]+\.mjs$/.test(path) &&
    !path.endsWith("/lab_app.mjs")
  ).map((path) => path.slice(0, -".mjs".length)).toSorted();
  assert.ok(apps.length > 0);
  assert.deepEqual(under("node", "package.json"), apps);
  assert.deepEqual(under("node", "package-lock.json"), apps);
  const modules = under("go", "go.mod");
  assert.ok(modules.length > 0);
  assert.deepEqual(under("go", "go.sum"), modules);
  const unlocked = SERVER_CATALOG.flatMap((server) =>
    server.built?.lockFile === false
      ? [server.built.program.dir.slice(new URL(ROOT).pathname.length)]
      : []
  );
  assert.deepEqual(unlocked, ["clients/programs/rust/fastrmcp-server"]);
  const packages = under("rust", "Cargo.toml");
  assert.deepEqual(
    under("rust", "Cargo.lock"),
    packages.filter((dir) => !unlocked.includes(dir)),
  );
});

Deno.test("every test of the harness, and its fixtures, in sections a reader takes at once (450 lines at most), each using nothing a later one defines", async (t) => {
  const files = checkoutFiles().filter((path) =>
    path.startsWith("clients/") && path.endsWith(".ts") &&
    (isTest(path) || path.startsWith("clients/testdata/"))
  );
  for (const path of files) {
    await t.step(path, () => {
      const file = new URL(path, ROOT).pathname;
      assert.deepEqual(forwardUses(file), []);
      const sections = sectionLengths(Deno.readTextFileSync(file));
      assert.deepEqual(sections.filter(([, lines]) => lines > 450), []);
    });
  }
});

Deno.test("the docs give the reference host's size as it is: its lines, its modules, the largest", async () => {
  const folder = "clients/programs/reference_host/";
  const modules = checkoutFiles().filter((path) =>
    path.startsWith(folder) && path.endsWith(".ts") && !isTest(path)
  );
  const lines = modules.map((path) =>
    Deno.readTextFileSync(new URL(path, ROOT)).split("\n").length - 1
  );
  const total = lines.reduce((sum, count) => sum + count, 0);
  const largest = Math.max(...lines);
  const page = async (name: string) =>
    (await Deno.readTextFile(new URL(`docs/${name}`, ROOT))).replace(
      /\s+/g,
      " ",
    );
  const size = `${
    total.toLocaleString("en-US")
  } lines in ${modules.length} modules, the largest ${largest}.`;
  assert.ok((await page("architecture.md")).includes(size), size);
  assert.ok(
    (await page("client-authors.md")).includes(`none over ${largest} lines`),
  );
});
