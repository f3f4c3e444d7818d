import assert from "node:assert/strict";
import { REVIEW_TOOL } from "../../main.ts";
import { ALL_CLIENTS, selectClients } from "./select.ts";
import { groupsOf } from "./types.ts";
import { NODE_24, splitPinned } from "../support/install.ts";
import { GO_BUILD } from "../support/install_go.ts";
import { CARGO_BUILD } from "../support/install_rust.ts";
import {
  APP_TOOL,
  builtProgramDir,
  LIBRARIES,
  LIBRARY_CLIENTS,
  libraryAgent,
  libraryApp,
  libraryOf,
  programPath,
  SHARED_MODULE,
} from "./libraries.ts";
import { FAKE_API_KEY } from "../model/scripted_model.ts";

// The programs run by this Deno say nothing of certificate variables.
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

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
    "rmcp",
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
    // A built app is a binary of its own: no Node, no npm program.
    const built = libraryOf(client.id)?.language !== undefined;
    assert.equal(client.runtime, built ? undefined : NODE_24);
    assert.equal(
      built
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

/** A count as the docs spell it. */
const COUNT_WORDS =
  "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen"
    .split(" ");

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
      assert.match(path, /^[\w./-]+\.(m?js|d\.ts|md)$/, library.id);
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

/**
 * Runs a program on `lab_app.mjs` the way the harness lays it out (the
 * module beside it, a `node_modules` with the library's manifest), by this
 * Deno: its exit status and output.
 */
async function runFakeProgram(
  program: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "lab-app-test-" });
  try {
    await Deno.copyFile(programPath(SHARED_MODULE), `${dir}/lab_app.mjs`);
    await Deno.mkdir(`${dir}/node_modules/fake-lib`, { recursive: true });
    await Deno.writeTextFile(
      `${dir}/node_modules/fake-lib/package.json`,
      JSON.stringify({ name: "fake-lib", version: "1.2.3" }),
    );
    await Deno.writeTextFile(`${dir}/fake.mjs`, program);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", `${dir}/fake.mjs`, ...args],
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
