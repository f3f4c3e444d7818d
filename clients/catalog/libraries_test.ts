import assert from "node:assert/strict";
import { REVIEW_TOOL } from "../../main.ts";
import { ALL_CLIENTS, selectClients } from "./select.ts";
import { groupsOf } from "./types.ts";
import { NODE_24, splitPinned } from "../support/install.ts";
import { GO_BUILD } from "../support/install_go.ts";
import { CARGO_BUILD } from "../support/install_rust.ts";
import { MAVEN_BUILD } from "../support/install_java.ts";
import {
  APP_TOOL,
  builtProgramDir,
  LIBRARIES,
  LIBRARY_CLIENTS,
  libraryAgent,
  libraryApp,
  libraryOf,
  nodePackageDir,
  programPath,
  pythonProgramPath,
  SHARED_MODULE,
} from "./libraries.ts";
import { installPythonEnvironment } from "../support/install_python.ts";
import { defaultCacheDir } from "../support/install.ts";
import { withCheckedRun } from "../testdata/fixtures.ts";
import { FAKE_API_KEY } from "../model/scripted_model.ts";

// The programs run by this Deno say nothing of certificate variables.
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: a count in words, a program's run, a fake library on lab_app.mjs
// ---------------------------------------------------------------------------

/** A count as the docs spell it. */
const COUNT_WORDS =
  "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty"
    .split(" ");

/** A fake app's run: its exit status, stdout and stderr apart. */
type AppRun = { code: number; stdout: string; stderr: string };

/** Runs a command, stdin closed, to its exit status and output. */
async function exitAndOutput(command: string, args: string[]): Promise<AppRun> {
  const output = await new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * Runs a program on `lab_app.mjs` the way the harness lays it out (the
 * module beside it, a `node_modules` with the library's manifest), by this
 * Deno: its exit status and output.
 */
async function runFakeProgram(
  program: string,
  args: string[],
): Promise<AppRun> {
  const dir = await Deno.makeTempDir({ prefix: "lab-app-test-" });
  try {
    await Deno.copyFile(programPath(SHARED_MODULE), `${dir}/lab_app.mjs`);
    await Deno.mkdir(`${dir}/node_modules/fake-lib`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/node_modules/fake-lib/package.json`,
      JSON.stringify({ name: "fake-lib", version: "1.2.3" }),
    );
    await Deno.writeTextFile(`${dir}/fake.mjs`, program);
    return await exitAndOutput(Deno.execPath(), [
      "run",
      "--allow-read",
      `${dir}/fake.mjs`,
      ...args,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A fake library's app: `subscribe` is given as `SUBSCRIBE` says. */
function fakeApp(subscribe: "works" | "throws" | "none", spoken = "2025") {
  return `import { main, runApp, signal, URI } from "./lab_app.mjs";
const update = signal();
await main("fake.mjs", {
  app: (url, era, wait) => runApp("fake-lib", era, wait, {
    connect: async () => "${spoken}",
    list: async () => [URI, "test://other"],
    read: async () => "status: pending\\nversion: 1 \\u001b[31m",
    ${
    subscribe === "none" ? "" : `subscribe: {
      call: "fake.subscribe(uri)",
      run: async () => {
        ${
      subscribe === "throws"
        ? 'throw new Error("not in this era");'
        : "setTimeout(() => update.resolve(true), 10);"
    }
      },
    },
    update: { via: "fake handler", received: update.promise },`
  }
    close: async () => {},
  }),
});
`;
}

const APP_ARGS = ["app", "--url", "http://127.0.0.1:9/mcp", "--wait", "0.2"];

// ---------------------------------------------------------------------------
// The catalog's libraries: programs and pins, the docs' counts, apps, agents
// ---------------------------------------------------------------------------

Deno.test("libraries: each has its program, exact pins, and an app (plus an agent where it has a loop) in the libraries group", async () => {
  assert.deepEqual(LIBRARIES.map((library) => library.id), [
    "mcp-client",
    "mcp-sdk",
    "ai-sdk",
    "langchain",
    "mastra",
    "mcp-use",
    "openai-agents",
    "cloudflare-agents",
    "claude-agent-sdk",
    "go-sdk",
    "python-sdk",
    "fastmcp",
    "rmcp",
    "java-sdk",
  ]);
  for (const library of LIBRARIES) {
    const source = await Deno.readTextFile(programPath(library.id));
    // The program names the library it is built on.
    assert.ok(source.includes(library.npmPackage), library.id);
    for (const pinned of [library.version, ...library.dependencies]) {
      const version = pinned.includes("@")
        ? splitPinned(pinned).version
        : pinned;
      assert.match(version, /^\d+\.\d+\.\d+$/, `${library.id}: ${pinned}`);
    }
    assert.ok(library.modes.length > 0, library.id);
  }
  assert.deepEqual(
    LIBRARY_CLIENTS.map((client) => client.id),
    LIBRARIES.flatMap((library) =>
      library.agent ? [library.id, `${library.id}-agent`] : [library.id]
    ),
  );
  for (const client of LIBRARY_CLIENTS) {
    assert.deepEqual(groupsOf(client), ["libraries"], client.id);
    // A built or Python app is a program of its own: no Node, no npm program.
    const language = libraryOf(client.id)?.language;
    assert.equal(client.runtime, language ? undefined : NODE_24);
    assert.equal(
      language === "python"
        ? "pythonProgram" in client && client.pythonProgram?.name
        : language
        ? "builtProgram" in client && client.builtProgram?.name
        : client.program?.library,
      libraryOf(client.id)?.id,
    );
  }
  assert.deepEqual(
    selectClients([], ["libraries"]).map((client) => client.id),
    LIBRARY_CLIENTS.map((client) => client.id),
  );
  // Libraries come last, after every agent CLI, command and browser client.
  assert.deepEqual(
    ALL_CLIENTS.slice(-LIBRARY_CLIENTS.length),
    LIBRARY_CLIENTS,
  );
});

Deno.test("libraries: the docs count them as the catalog does (the libraries, and their rows after VS Code in clients/README.md's table)", async () => {
  const text = async (path: string) =>
    (await Deno.readTextFile(new URL(path, import.meta.url)))
      .replaceAll(/\s+/g, " ");
  const libraries = COUNT_WORDS[LIBRARIES.length];
  assert.ok(
    (await text("../../README.md")).includes(
      `Of ${libraries} [client libraries]`,
    ),
  );
  assert.ok(
    (await text("../../docs/client-authors.md")).includes(`ran ${libraries} (`),
  );
  assert.ok(
    (await text("../README.md")).includes(
      `the ${COUNT_WORDS[LIBRARY_CLIENTS.length]} rows after VS Code above`,
    ),
  );
  const table =
    (await Deno.readTextFile(new URL("../README.md", import.meta.url)))
      .split("## Pinned clients")[1].split("\n## ")[0];
  const ids = [...table.matchAll(/^\| `([\w-]+)` /gm)].map(([, id]) => id);
  assert.deepEqual(
    ids.slice(ids.indexOf("vscode") + 1),
    LIBRARY_CLIENTS.map((client) => client.id),
  );
});

Deno.test("libraries: a step without an API cites its package's file and line; an era not run says why", () => {
  for (const library of LIBRARIES) {
    for (const api of [library.subscribe, library.update]) {
      if ("call" in api) {
        assert.ok(api.call.length > 0, library.id);
        continue;
      }
      const { package: pinned, path, line, quote, says } = api.none;
      assert.match(pinned, /^(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/, library.id);
      assert.match(path, /^[\w./-]+\.(m?js|d\.ts|md|py)$/, library.id);
      assert.ok(Number.isInteger(line) && line > 0, library.id);
      assert.ok(quote.length > 0 && quote.length <= 120, library.id);
      assert.ok(says.length > 0, library.id);
    }
    for (const era of ["2025", "2026-07-28"] as const) {
      const mode = era === "2025" ? "default" : era;
      assert.equal(
        library.modes.includes(mode),
        library.gaps?.[era] === undefined,
        `${library.id} ${era}: run, or say why not`,
      );
    }
    const stdio = library.modes.some((mode) => mode.startsWith("stdio"));
    assert.equal(
      stdio,
      library.gaps?.stdio === undefined,
      `${library.id} stdio: run, or say why not`,
    );
    // The program accepts --stdio exactly when the catalog runs it so.
    const program = Deno.readTextFileSync(programPath(library.id));
    assert.equal(
      library.language === "go"
        ? program.includes('flags.Bool("stdio", false, "")')
        : library.language === "rust"
        ? program.includes('"--stdio" => stdio = true,')
        : library.language === "python"
        ? program.includes("options.server[0]")
        : library.language === "java"
        ? program.includes('arg.equals("--stdio")')
        : /await main\("[\w-]+\.mjs", \{[^}]*\bstdio: true\b/.test(program),
      stdio,
      `${library.id}: main(…, { stdio }) matches its modes`,
    );
  }
});

Deno.test("libraries: the app's one command names the era of its mode, and waits past the lab's delay", () => {
  const baseline = LIBRARIES.find((library) => library.id === "mcp-client")!;
  const app = libraryApp(baseline);
  const steps = (
    mode: "default" | "2026-07-28" | "inline-content" | "catalog",
  ) =>
    app.steps({
      home: "/h",
      labUrl: "http://127.0.0.1:9/mcp",
      mode,
      delaySeconds: 3,
    });
  assert.deepEqual(steps("default"), [{
    args: [
      "app",
      "--era",
      "2025",
      "--wait",
      "8",
      "--url",
      "http://127.0.0.1:9/mcp",
    ],
  }]);
  assert.equal(steps("2026-07-28")[0].args[2], "2026-07-28");
  // Over stdio the app starts the lab, its settings set by env in front.
  assert.deepEqual(
    app.steps({
      home: "/h",
      labUrl: "",
      stdioLab: { command: "sh", args: ["-c", "x"], env: { MCP_TEST_A: "1" } },
      mode: "stdio-2026-07-28",
      delaySeconds: 3,
    })[0].args,
    [
      "app",
      "--era",
      "2026-07-28",
      "--wait",
      "8",
      "--stdio",
      "--",
      "env",
      "MCP_TEST_A=1",
      "sh",
      "-c",
      "x",
    ],
  );
  // inline-content and catalog are launched as default.
  assert.deepEqual(steps("inline-content"), steps("default"));
  assert.deepEqual(steps("catalog"), steps("default"));
  assert.equal(app.bin, "mcp-client");
  assert.equal(app.program?.path, programPath("mcp-client"));
  // A library that cannot speak 2025 runs inline-content in 2026-07-28.
  const agents = LIBRARIES.find((library) => library.id === "openai-agents")!;
  assert.equal(
    libraryApp(agents).steps({
      home: "/h",
      labUrl: "u",
      mode: "inline-content",
      delaySeconds: 3,
    })[0].args[2],
    "2026-07-28",
  );
});

Deno.test("libraries: the agent reads with the lab's tool, nudges with the app's, and gets the model's address as its wire wants", () => {
  for (const library of LIBRARIES) {
    if (!library.agent) continue;
    const agent = libraryAgent(library, library.agent);
    assert.equal(agent.script.read.name, REVIEW_TOOL);
    assert.equal(agent.script.nudge.name, APP_TOOL);
    assert.equal(agent.enableTool, true);
    const launch = agent.launch({
      home: "/h",
      workDir: "/w",
      labUrl: "http://127.0.0.1:9/mcp",
      denoDir: "/d",
      modelOrigin: "http://127.0.0.1:8",
      prompt: "P",
      mode: "default",
      route: "native",
    });
    assert.deepEqual(launch.args, [
      "agent",
      "--url",
      "http://127.0.0.1:9/mcp",
      "--model-url",
      library.agent.wire === "anthropic-messages"
        ? "http://127.0.0.1:8"
        : "http://127.0.0.1:8/v1",
      "--prompt",
      "P",
    ]);
    assert.deepEqual(launch.env, { [library.agent.keyEnv]: FAKE_API_KEY });
  }
});

// ---------------------------------------------------------------------------
// The Node apps: lab_app.mjs's facts and eras, package.json and its lock
// ---------------------------------------------------------------------------

Deno.test("lab_app.mjs: every fact line in the contract's order, server text escaped, exit 0", async () => {
  const { code, stdout } = await runFakeProgram(fakeApp("works"), APP_ARGS);
  assert.equal(code, 0);
  assert.equal(
    stdout,
    [
      "library fake-lib@1.2.3",
      "connected http 2025",
      "resource-found test://review/status",
      'initial "status: pending\\nversion: 1 \\u001b[31m"',
      "subscribed fake.subscribe(uri)",
      "notification-received test://review/status via=fake handler",
      'final "status: pending\\nversion: 1 \\u001b[31m"',
      "",
    ].join("\n"),
  );
});

Deno.test("lab_app.mjs: a library without a subscribe or update API says so; one whose subscribe throws waits anyway and exits 1", async () => {
  const none = await runFakeProgram(fakeApp("none"), APP_ARGS);
  assert.equal(none.code, 0);
  assert.match(none.stdout, /\nsubscribe-api none\nupdate-api none\nfinal /);
  const throws = await runFakeProgram(fakeApp("throws"), APP_ARGS);
  assert.equal(throws.code, 1);
  assert.match(
    throws.stdout,
    /\nerror subscribe "not in this era"\nnotification-received none after=0\.2s\nfinal /,
  );
});

Deno.test("lab_app.mjs: another era than asked is the connect step's error; a bad command line is exit 2", async () => {
  const mismatch = await runFakeProgram(fakeApp("works"), [
    ...APP_ARGS,
    "--era",
    "2026-07-28",
  ]);
  assert.equal(mismatch.code, 1);
  assert.equal(
    mismatch.stdout,
    'library fake-lib@1.2.3\nerror connect "asked for 2026-07-28, spoke 2025"\n',
  );
  for (
    const args of [
      ["app"],
      ["app", "--url", "u", "--era", "2024"],
      ["agent", "--url", "u", "--model-url", "m", "--prompt", "p"],
    ]
  ) {
    const bad = await runFakeProgram(fakeApp("works"), args);
    assert.equal(bad.code, 2, args.join(" "));
    assert.match(bad.stderr, /^usage: fake\.mjs app --url URL/, args.join(" "));
    assert.equal(bad.stdout, "");
  }
});

/** A Node app's manifest and lock, as `npm ci` reads them. */
interface NodeAppPackage {
  manifest: Record<string, unknown> & { dependencies?: Record<string, string> };
  lock: {
    lockfileVersion: number;
    packages: Record<
      string,
      {
        version?: string;
        integrity?: string;
        resolved?: string;
        inBundle?: boolean;
        dependencies?: Record<string, string>;
      }
    >;
  };
}

async function nodeAppPackage(id: string): Promise<NodeAppPackage> {
  const dir = nodePackageDir(id);
  return {
    manifest: JSON.parse(await Deno.readTextFile(`${dir}/package.json`)),
    lock: JSON.parse(await Deno.readTextFile(`${dir}/package-lock.json`)),
  };
}

Deno.test("libraries: each Node app installs from its folder's package.json and package-lock.json, which pin the catalog's versions exactly, every package under them by its hash, and every package the program imports", async () => {
  const node = LIBRARIES.filter((library) => !library.language);
  assert.equal(node.length, 9);
  for (const library of node) {
    const app = libraryApp(library);
    assert.equal(app.program?.packageDir, nodePackageDir(library.id));
    if (library.agent) {
      assert.equal(
        libraryAgent(library, library.agent).program?.packageDir,
        nodePackageDir(library.id),
      );
    }
    const { manifest, lock } = await nodeAppPackage(library.id);
    const pinned = Object.fromEntries(
      [`${library.npmPackage}@${library.version}`, ...library.dependencies]
        .map(splitPinned).map(({ name, version }) => [name, version]),
    );
    // Only the pins, exact; nothing npm would add or float.
    assert.deepEqual(
      Object.keys(manifest).toSorted(),
      ["dependencies", "description", "name", "private"],
      library.id,
    );
    assert.equal(manifest.private, true);
    assert.deepEqual(manifest.dependencies, pinned, library.id);
    // The lock is in step with the manifest (npm ci refuses it otherwise)
    // and installs each pin at its version.
    assert.equal(lock.lockfileVersion, 3);
    assert.deepEqual(lock.packages[""].dependencies, pinned, library.id);
    for (const [name, version] of Object.entries(pinned)) {
      assert.equal(
        lock.packages[`node_modules/${name}`]?.version,
        version,
        `${library.id}: ${name}`,
      );
    }
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (path === "") continue;
      assert.match(
        entry.version ?? "",
        /^\d+\.\d+\.\d+/,
        `${library.id}: ${path}`,
      );
      // A bundled package comes inside its parent's tarball, and its hash.
      if (!entry.inBundle) {
        assert.match(
          entry.integrity ?? "",
          /^sha512-/,
          `${library.id}: ${path}`,
        );
      }
      // From npm's registry: no address (the installing npm's registry), or
      // that registry's.
      assert.ok(
        entry.resolved === undefined ||
          entry.resolved.startsWith("https://registry.npmjs.org/"),
        `${library.id}: ${path} ${entry.resolved}`,
      );
    }
    // Every package the program imports is one its manifest pins.
    const source = await Deno.readTextFile(programPath(library.id));
    const imported = [
      ...source.matchAll(/(?:from|import\()\s*"([^".][^"]*)"/g),
    ].map((match) => match[1]).filter((name) => !name.startsWith("node:"))
      .map((name) =>
        name.split("/").slice(0, name.startsWith("@") ? 2 : 1).join("/")
      );
    assert.ok(imported.includes(library.npmPackage), library.id);
    for (const name of imported) {
      assert.ok(name in pinned, `${library.id} imports ${name}`);
    }
  }
});

// ---------------------------------------------------------------------------
// The Go and Rust SDKs' apps: a go build and a cargo build, and their pins
// ---------------------------------------------------------------------------

Deno.test("libraries: the Go SDK's app is its go build of clients/programs/go/go-sdk, in both eras over HTTP and stdio, its go.mod pinning the version the row names", async () => {
  const library = LIBRARIES.find((library) => library.id === "go-sdk")!;
  const app = libraryApp(library);
  assert.equal(library.language, "go");
  assert.deepEqual(app.modes, [
    "default",
    "2026-07-28",
    "stdio",
    "stdio-2026-07-28",
  ]);
  assert.deepEqual("builtProgram" in app && app.builtProgram, {
    dir: builtProgramDir("go", "go-sdk"),
    name: "go-sdk",
    recipe: GO_BUILD,
  });
  assert.equal(app.program, undefined);
  assert.equal(
    programPath("go-sdk"),
    `${builtProgramDir("go", "go-sdk")}/main.go`,
  );
  const goMod = await Deno.readTextFile(
    `${builtProgramDir("go", "go-sdk")}/go.mod`,
  );
  assert.ok(
    goMod.includes(`require ${library.npmPackage} v${library.version}\n`),
  );
  const goSum = await Deno.readTextFile(
    `${builtProgramDir("go", "go-sdk")}/go.sum`,
  );
  assert.ok(goSum.includes(`${library.npmPackage} v${library.version} h1:`));
  // The same command line as a Node app's, in each era and over stdio.
  const steps = (mode: "default" | "stdio-2026-07-28") =>
    app.steps({
      home: "/h",
      labUrl: mode === "default" ? "http://127.0.0.1:9/mcp" : "",
      ...(mode === "default"
        ? {}
        : { stdioLab: { command: "lab", args: [], env: {} } }),
      mode,
      delaySeconds: 3,
    })[0].args;
  assert.deepEqual(steps("default"), [
    "app",
    "--era",
    "2025",
    "--wait",
    "8",
    "--url",
    "http://127.0.0.1:9/mcp",
  ]);
  assert.deepEqual(steps("stdio-2026-07-28"), [
    "app",
    "--era",
    "2026-07-28",
    "--wait",
    "8",
    "--stdio",
    "--",
    "env",
    "lab",
  ]);
});

Deno.test("libraries: the Rust SDK's app is its cargo build of clients/programs/rust/rmcp, in both eras over HTTP and stdio; Cargo.toml pins rmcp and the app's other crates exactly, and the committed Cargo.lock holds those versions", async () => {
  const library = LIBRARIES.find((library) => library.id === "rmcp")!;
  const app = libraryApp(library);
  const dir = builtProgramDir("rust", "rmcp");
  assert.equal(library.language, "rust");
  assert.equal(library.npmPackage, "rmcp");
  assert.deepEqual(app.modes, [
    "default",
    "2026-07-28",
    "stdio",
    "stdio-2026-07-28",
  ]);
  assert.deepEqual("builtProgram" in app && app.builtProgram, {
    dir,
    name: "rmcp",
    recipe: CARGO_BUILD,
  });
  assert.equal(programPath("rmcp"), `${dir}/src/main.rs`);
  const manifest = await Deno.readTextFile(`${dir}/Cargo.toml`);
  // The binary is named as the catalog's id; the package cannot be: it
  // depends on rmcp.
  assert.ok(manifest.includes('[[bin]]\nname = "rmcp"\n'));
  const lock = await Deno.readTextFile(`${dir}/Cargo.lock`);
  for (
    const pinned of [`${library.npmPackage}@${library.version}`].concat(
      library.dependencies,
    )
  ) {
    const { name, version } = splitPinned(pinned);
    assert.match(
      manifest,
      new RegExp(`^${name} = (\\{ version = )?"=${version}"`, "m"),
      pinned,
    );
    assert.ok(
      lock.includes(`[[package]]\nname = "${name}"\nversion = "${version}"\n`),
      pinned,
    );
  }
  // The command line is every app's.
  assert.deepEqual(
    app.steps({
      home: "/h",
      labUrl: "",
      stdioLab: { command: "lab", args: [], env: {} },
      mode: "stdio",
      delaySeconds: 3,
    })[0].args,
    ["app", "--era", "2025", "--wait", "8", "--stdio", "--", "env", "lab"],
  );
});

// ---------------------------------------------------------------------------
// The Python apps: their environments, lab_app.py, the Python SDK's run
// ---------------------------------------------------------------------------

Deno.test("libraries: the Python apps run their scripts on a virtual environment of their own requirements, each pinned exactly, the library at the row's version", async () => {
  const python = LIBRARIES.filter((library) => library.language === "python");
  assert.deepEqual(python.map((library) => library.id), [
    "python-sdk",
    "fastmcp",
  ]);
  for (const library of python) {
    const app = libraryApp(library);
    assert.deepEqual(app.modes, [
      "default",
      "2026-07-28",
      "stdio",
      "stdio-2026-07-28",
    ]);
    assert.equal(app.program, undefined);
    const script = pythonProgramPath(`${library.id.replace("-", "_")}_app.py`);
    assert.deepEqual("pythonProgram" in app && app.pythonProgram, {
      environment: {
        id: library.id,
        requirements: pythonProgramPath(library.requirements!),
      },
      script,
      name: library.id,
    });
    assert.equal(programPath(library.id), script);
    // The app imports what every Python app shares, beside it.
    assert.match(
      await Deno.readTextFile(script),
      /^from lab_app import .*\brun_app\b/m,
    );
    const pins = (await Deno.readTextFile(
      pythonProgramPath(library.requirements!),
    )).split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    for (const pin of pins) {
      assert.match(pin, /^[\w.-]+==[\w.]+$/, `${library.id}: ${pin}`);
    }
    assert.ok(pins.includes(`${library.npmPackage}==${library.version}`));
    // Both stand on the Python SDK v2 the server table's board server runs.
    assert.ok(pins.includes("mcp==2.3.0"), library.id);
  }
});

/** A fake library on lab_app.py: `subscribe` as asked, lists that grow. */
const FAKE_PYTHON_APP = `
import asyncio, sys
from lab_app import URI, Notified, parse_options, run_app

class Fake:
    package = "fake-lib"
    update_via = "fake hook"
    def __init__(self, notified, subscribe):
        self.notified = notified
        self.subscribe_call = None if subscribe == "none" else "fake.subscribe(uri)"
        self.failing = subscribe == "throws"
        self.grown = False
    def changed_via(self, kind):
        return f"fake {kind} hook"
    async def connect(self):
        return "2025"
    async def list(self, kind):
        names = {"tools": ["t1"], "prompts": ["p1"], "resources": [URI]}[kind]
        return names + ([f"new-{kind}"] if self.grown else [])
    async def read(self, uri):
        return "status: pending\\nversion: 1 \\x1b[31m"
    async def subscribe(self):
        if self.failing:
            raise RuntimeError("not in this era")
        self.grown = True
        self.notified.updated.set()
        self.notified.changed["tools"].set()
    async def use(self, kind, name):
        pass
    async def close(self):
        pass

async def main():
    options = parse_options("fake.py", sys.argv[2:])
    notified = Notified()
    return await run_app(Fake(notified, sys.argv[1]), notified, options)

sys.exit(asyncio.run(main()))
`;

const python3Missing = await new Deno.Command("python3", { args: ["-V"] })
  .output().then((output) => !output.success, () => true);
if (python3Missing) {
  console.log(
    "catalog/libraries_test.ts: the Python apps' tests are skipped: no python3 on PATH",
  );
}

/** Runs the fake library beside lab_app.py with the machine's python3. */
async function runFakePythonApp(
  subscribe: "works" | "throws" | "none",
  args: string[],
): Promise<AppRun> {
  const dir = await Deno.makeTempDir({ prefix: "lab-app-py-test-" });
  try {
    await Deno.copyFile(pythonProgramPath("lab_app.py"), `${dir}/lab_app.py`);
    await Deno.writeTextFile(`${dir}/fake.py`, FAKE_PYTHON_APP);
    // The library's installed metadata, found beside the program.
    await Deno.mkdir(`${dir}/fake_lib-1.2.3.dist-info`);
    await Deno.writeTextFile(
      `${dir}/fake_lib-1.2.3.dist-info/METADATA`,
      "Metadata-Version: 2.1\nName: fake-lib\nVersion: 1.2.3\n",
    );
    return await exitAndOutput("python3", [
      `${dir}/fake.py`,
      subscribe,
      ...args,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name:
    "lab_app.py: the Node apps' fact lines, then the catalog's; a missing subscribe says so, a failing one waits and exits 1; a bad command line is exit 2",
  ignore: python3Missing,
  async fn() {
    const works = await runFakePythonApp("works", APP_ARGS);
    assert.equal(works.code, 0, works.stderr);
    assert.equal(
      works.stdout,
      [
        "library fake-lib@1.2.3",
        "connected http 2025",
        "tools-listed 1",
        "prompts-listed 1",
        "resource-found test://review/status",
        'initial "status: pending\\nversion: 1 \\u001b[31m"',
        "subscribed fake.subscribe(uri)",
        "notification-received test://review/status via=fake hook",
        'final "status: pending\\nversion: 1 \\u001b[31m"',
        "tools-changed via=fake tools hook",
        'tools-new "new-tools"',
        'tools-used "new-tools"',
        "prompts-changed none",
        "resources-changed none",
        "",
      ].join("\n"),
    );
    const none = await runFakePythonApp("none", APP_ARGS);
    assert.equal(none.code, 0);
    assert.match(
      none.stdout,
      /\nsubscribe-api none\nnotification-received none after=0\.2s\nfinal /,
    );
    const throws = await runFakePythonApp("throws", APP_ARGS);
    assert.equal(throws.code, 1);
    assert.match(
      throws.stdout,
      /\nerror subscribe "not in this era"\nnotification-received none after=0\.2s\nfinal /,
    );
    const mismatch = await runFakePythonApp("works", [
      ...APP_ARGS,
      "--era",
      "2026-07-28",
    ]);
    assert.equal(mismatch.code, 1);
    assert.equal(
      mismatch.stdout,
      `library fake-lib@1.2.3\nerror connect "asked for 2026-07-28, spoke 2025"\n`,
    );
    for (
      const args of [
        ["app"],
        ["app", "--url", "u", "--era", "2024"],
        ["app", "--stdio", "--url", "u"],
        ["agent", "--url", "u"],
      ]
    ) {
      const bad = await runFakePythonApp("works", args);
      assert.equal(bad.code, 2, args.join(" "));
      assert.match(
        bad.stderr,
        /^usage: fake\.py app --url URL/,
        args.join(" "),
      );
      assert.equal(bad.stdout, "");
    }
  },
});

/**
 * Why the Python SDK's app cannot run end to end here (no python3, or its
 * environment cannot be made in the harness's cache), else undefined. Made
 * once there, it is found by the run.
 */
async function pythonSdkUnavailable(): Promise<string | undefined> {
  if (python3Missing) return "no python3 on PATH";
  const library = LIBRARIES.find((library) => library.id === "python-sdk")!;
  const app = libraryApp(library);
  if (!("pythonProgram" in app) || !app.pythonProgram) {
    return "no Python program";
  }
  const installed = await installPythonEnvironment(
    app.pythonProgram.environment,
    defaultCacheDir(),
  );
  return installed.ok ? undefined : installed.reason;
}

const pythonSdkSkip = await pythonSdkUnavailable();
if (pythonSdkSkip) {
  console.log(
    `catalog/libraries_test.ts: the Python SDK's app run is skipped: ${pythonSdkSkip}`,
  );
}

Deno.test({
  name:
    "deno task clients python-sdk --check: the Python SDK v2's app listens for the resource in 2026-07-28 over HTTP and re-reads version 2, level 6",
  ignore: pythonSdkSkip !== undefined,
  async fn() {
    await withCheckedRun(
      [
        "python-sdk",
        "--mode",
        "2026-07-28",
        "--trigger",
        "subscribe",
        "--delay",
        "1",
        "--timeout",
        "60",
        "--min-level",
        "6",
      ],
      180_000,
      async (resultsDir, document) => {
        const [row] = document.rows;
        assert.equal(document.rows.length, 1);
        assert.equal(row.clientId, "python-sdk");
        assert.equal(row.level, 6);
        const evidence = await Deno.readTextFile(
          `${resultsDir}/runs/python-sdk-2.3.0-2026-07-28.md`,
        );
        assert.match(evidence, /connected http 2026-07-28/);
        assert.match(
          evidence,
          /notification-received test:\/\/review\/status via=client\.listen\(…\) ResourceUpdated event/,
        );
      },
    );
  },
});

// ---------------------------------------------------------------------------
// The Java SDK's app: its mvn package, its pom's pins, a run to level 6
// ---------------------------------------------------------------------------

Deno.test("libraries: the Java SDK's app is its mvn package of clients/programs/java/java-sdk, over HTTP and stdio in both eras, its pom pinning every version exactly", async () => {
  const library = LIBRARIES.find((library) => library.id === "java-sdk")!;
  const app = libraryApp(library);
  assert.equal(library.language, "java");
  assert.deepEqual(app.modes, [
    "default",
    "2026-07-28",
    "stdio",
    "stdio-2026-07-28",
  ]);
  assert.equal(library.gaps, undefined);
  const dir = builtProgramDir("java", "java-sdk");
  // Each era on its own client of the SDK: 2025 on io.modelcontextprotocol.
  // client, 2026-07-28 on io.modelcontextprotocol.modern.client's listen.
  const lab = `${dir}/src/main/java/lab`;
  const legacy = await Deno.readTextFile(`${lab}/LegacyClient.java`);
  const modern = await Deno.readTextFile(`${lab}/ModernClient.java`);
  assert.ok(
    legacy.includes("import io.modelcontextprotocol.client.McpClient;"),
  );
  assert.ok(legacy.includes("client.subscribeResource("));
  assert.ok(
    modern.includes("import io.modelcontextprotocol.modern.client.McpClient;"),
  );
  assert.ok(modern.includes(".listen()\n            .resourceUpdates(uri)"));
  assert.deepEqual("builtProgram" in app && app.builtProgram, {
    dir,
    name: "java-sdk",
    recipe: MAVEN_BUILD,
  });
  assert.equal(app.program, undefined);
  assert.equal(programPath("java-sdk"), `${dir}/src/main/java/lab/App.java`);
  const pom = await Deno.readTextFile(`${dir}/pom.xml`);
  // The SDK at the row's version, the jar java -jar runs named for the app.
  assert.ok(pom.includes(
    "<artifactId>mcp</artifactId>\n      <version>2.2.0</version>",
  ));
  assert.equal(library.version, "2.2.0");
  assert.ok(pom.includes("<finalName>java-sdk</finalName>"));
  assert.ok(pom.includes("<mainClass>lab.App</mainClass>"));
  assert.ok(pom.includes("<classpathPrefix>lib/</classpathPrefix>"));
  assert.ok(
    pom.includes(
      "<outputDirectory>${project.build.directory}/lib</outputDirectory>",
    ),
  );
  // Every dependency and plugin names one exact release: no range, no
  // SNAPSHOT, no property, none left to Maven's defaults. The one release
  // candidate is the reactor-core mcp-core 2.2.0's pom names.
  const versions = [...pom.matchAll(/<version>([^<]*)<\/version>/g)]
    .map((match) => match[1]);
  assert.deepEqual(
    versions.filter((version) => !/^\d+(\.\d+)*$/.test(version)),
    ["3.9.0-RC1"],
  );
  assert.ok(pom.includes(
    "<artifactId>reactor-core</artifactId>\n        <version>3.9.0-RC1</version>",
  ));
  const elements = (tag: string) =>
    [...pom.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))]
      .map((match) => match[1]);
  const plugins = elements("plugin");
  const dependencies = elements("dependency");
  assert.ok(plugins.length >= 7 && dependencies.length >= 12);
  for (const element of [...plugins, ...dependencies]) {
    assert.match(element, /<version>[^<]+<\/version>/, element);
  }
  // The project's own version plus one a plugin or dependency.
  assert.equal(versions.length, 1 + plugins.length + dependencies.length);
});

/** Why the Java app cannot be built and run here, or undefined. */
async function missingForJava(): Promise<string | undefined> {
  for (const tool of ["mvn", "java"]) {
    try {
      await new Deno.Command(tool, {
        args: ["-version"],
        stdout: "null",
        stderr: "null",
      }).output();
    } catch {
      return `no ${tool} on PATH`;
    }
  }
  return undefined;
}

const javaMissing = await missingForJava();
if (javaMissing) {
  console.log(
    `catalog/libraries_test.ts: the Java SDK app's run is skipped: ${javaMissing}`,
  );
}

Deno.test({
  name:
    "deno task clients java-sdk --check: the Java SDK's app, built once, reaches level 6 over HTTP in 2025 and, listening, in 2026-07-28",
  ignore: javaMissing !== undefined,
  async fn() {
    // Built into the harness's cache the first time (Maven downloads
    // included), reused after.
    await withCheckedRun(
      [
        "java-sdk",
        "--mode",
        "default,2026-07-28",
        "--trigger",
        "subscribe",
        "--delay",
        "1",
        "--timeout",
        "60",
      ],
      900_000,
      async (resultsDir, document) => {
        assert.deepEqual(
          document.rows.map((row) => [
            row.clientId,
            row.mode,
            row.era,
            row.labClient,
            row.rereadAfterNotification,
            row.level,
          ]),
          [
            [
              "java-sdk",
              "default",
              "2025",
              "lab-library-java-sdk/1.0.0",
              true,
              6,
            ],
            [
              "java-sdk",
              "2026-07-28",
              "2026-07-28",
              "lab-library-java-sdk/1.0.0",
              true,
              6,
            ],
          ],
        );
        const evidence = await Deno.readTextFile(
          `${resultsDir}/runs/java-sdk-2.2.0-2026-07-28.md`,
        );
        assert.match(evidence, /connected http 2026-07-28/);
        assert.match(
          evidence,
          /subscribed client\.listen\(\)\.resourceUpdates\(uri\)/,
        );
        assert.match(
          evidence,
          /notification-received test:\/\/review\/status via=McpSyncSubscriptionListener\.onEvent\(SubscriptionEvent\.ResourceUpdated\)/,
        );
      },
    );
  },
});
