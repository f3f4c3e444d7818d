/**
 * The agent CLIs the harness runs against the scripted model, the
 * reference host among them, and the one that cannot run (no MCP). Each
 * entry pins an npm version, says which model API the client speaks and
 * which tools its model reads resources with, and writes the client's
 * per-run configuration into an isolated home.
 *
 * The pinned versions are also listed in `clients/README.md`;
 * `catalog_test.ts` keeps the two in step.
 *
 * @module
 */

import { CATALOG_ADDED, LAB_VERSION, REVIEW_URI } from "../../main.ts";
import { envCommandLine } from "../support/run_lab.ts";
import { FAKE_API_KEY } from "../model/scripted_model.ts";
import {
  type ClientDefinition,
  isWorldMode,
  SERVER,
  type UnsupportedClientDefinition,
} from "./types.ts";

/** The usual shell tool arguments: the command and what it is for. */
const commandWithDescription = (command: string) => ({
  command,
  description: "Run the lab's subscription probe",
});

/** OpenCode's resource tools, which Kilo Code CLI kept. */
const OPENCODE_SCRIPT = {
  read: {
    name: "read_mcp_resource",
    input: { server: SERVER, uri: REVIEW_URI },
  },
  nudge: { name: "list_mcp_resources", input: { server: SERVER } },
};

/**
 * The provider and MCP server of an OpenCode-style config (OpenCode's
 * `opencode.json`, and Kilo Code CLI's `kilo.json`, which kept its shape).
 */
function openCodeConfig(
  modelOrigin: string,
  labUrl: string,
  toolTimeoutSeconds: number | undefined,
) {
  return {
    provider: {
      lab: {
        npm: "@ai-sdk/openai-compatible",
        name: "Scripted lab model",
        options: { baseURL: `${modelOrigin}/v1`, apiKey: FAKE_API_KEY },
        models: { scripted: { name: "Scripted lab model" } },
      },
    },
    mcp: {
      [SERVER]: {
        type: "remote",
        url: labUrl,
        oauth: false,
        ...(toolTimeoutSeconds === undefined
          ? {}
          : { timeout: toolTimeoutSeconds * 1000 }),
      },
    },
  };
}

/**
 * The lab as a `type: "http"` MCP server entry, with the tool timeout of a
 * progress check in `timeout`, in milliseconds (Droid's and oh-my-pi's
 * shape).
 */
function httpServer(labUrl: string, toolTimeoutSeconds: number | undefined) {
  return {
    type: "http",
    url: labUrl,
    ...(toolTimeoutSeconds === undefined
      ? {}
      : { timeout: toolTimeoutSeconds * 1000 }),
  };
}

/** fast-agent's pins: the package and every dependency (`pip freeze`). */
const FAST_AGENT_REQUIREMENTS = new URL(
  "../programs/python/fast_agent_requirements.txt",
  import.meta.url,
).pathname;

/** A closed loopback port as a proxy: a request off loopback fails at once. */
const CLOSED_PROXY = "http://127.0.0.1:9";

/** The reference host's script, in this checkout. */
const REFERENCE_HOST_SCRIPT = new URL(
  "../programs/reference_host/reference_host.ts",
  import.meta.url,
).pathname;

/**
 * The reference host (`programs/reference_host/reference_host.ts`): what
 * level 7 looks like, run by this Deno from the checkout against the
 * scripted model, in both eras over HTTP and stdio, and with its update
 * handling off as the control.
 */
const REFERENCE_HOST: ClientDefinition = {
  id: "reference-host",
  displayName: "Reference host",
  npmPackage: "(this repository)",
  version: LAB_VERSION,
  // This Deno runs it (`launch` names the script first).
  bin: "deno",
  wire: "openai-chat",
  script: {
    read: { name: "read_resource", input: { uri: REVIEW_URI } },
    nudge: { name: "list_resources", input: {} },
  },
  modes: ["default", "2026-07-28", "stdio", "stdio-2026-07-28", "no-updates"],
  enableTool: false,
  shell: {
    unavailable:
      "the reference host offers its model no shell tool, only resources and the server's tools",
  },
  localScript: REFERENCE_HOST_SCRIPT,
  launch({ labUrl, stdioLab, denoDir, modelOrigin, prompt, mode }) {
    // Its era rows pin one era each; against the servers of the world modes
    // it runs as a user runs it, `--era auto`, so a one-era server shows
    // whether it falls back (inline-content stays its default row's 2025).
    const era = mode.endsWith("2026-07-28")
      ? "2026-07-28"
      : isWorldMode(mode) && mode !== "inline-content"
      ? "auto"
      : "2025";
    // The host hands a stdio server only the SDK's safe variables, so the
    // lab's settings and deno cache travel on its command line, through env.
    const server = stdioLab
      ? ["--stdio", "--", ...envCommandLine(stdioLab)]
      : ["--url", labUrl];
    return {
      args: [
        "run",
        "-A",
        "--cached-only",
        REFERENCE_HOST_SCRIPT,
        "--era",
        era,
        "--base-url",
        `${modelOrigin}/v1`,
        "--model",
        "scripted",
        ...(mode === "no-updates" ? ["--no-updates"] : []),
        prompt,
        ...server,
      ],
      env: {
        OPENAI_API_KEY: FAKE_API_KEY,
        DENO_DIR: denoDir,
        DENO_NO_UPDATE_CHECK: "1",
      },
      files: {},
    };
  },
};

export const CLIENTS: ClientDefinition[] = [
  {
    id: "claude-code",
    displayName: "Claude Code",
    npmPackage: "@anthropic-ai/claude-code",
    version: "2.1.332",
    bin: "claude",
    wire: "anthropic-messages",
    script: {
      read: {
        name: "ReadMcpResourceTool",
        input: { server: SERVER, uri: REVIEW_URI },
      },
      nudge: { name: "ListMcpResourcesTool", input: { server: SERVER } },
      // Claude Code defers MCP tools until the model searches for them.
      loader: {
        name: "ToolSearch",
        input: { query: "select:ListMcpResourcesTool,ReadMcpResourceTool" },
      },
    },
    modes: ["default"],
    enableTool: false,
    shell: { name: "Bash", input: commandWithDescription },
    routeLoader: {
      "wait-tool": {
        name: "ToolSearch",
        input: {
          query:
            "select:ListMcpResourcesTool,ReadMcpResourceTool,mcp__lab__wait_for_review_update",
        },
      },
    },
    launch({ home, labUrl, modelOrigin, prompt, route, toolTimeoutSeconds }) {
      const mcpConfig = `${home}/lab-mcp.json`;
      return {
        args: [
          "-p",
          prompt,
          "--output-format",
          "stream-json",
          "--verbose",
          "--mcp-config",
          mcpConfig,
          "--strict-mcp-config",
          "--model",
          "claude-sonnet-4-5",
          // Headless approval: only the tools the route needs, and the
          // tool the lab's catalog change adds (absent from every other
          // lab), which a user would have to approve as it appears.
          "--allowedTools",
          [
            "ListMcpResourcesTool",
            "ReadMcpResourceTool",
            `mcp__${SERVER}__${CATALOG_ADDED.tools}`,
            ...(route === "wait-tool"
              ? ["mcp__lab__wait_for_review_update"]
              : []),
            ...(route === "shell-probe" ? ["Bash"] : []),
          ].join(","),
        ],
        env: {
          ANTHROPIC_BASE_URL: modelOrigin,
          ANTHROPIC_API_KEY: FAKE_API_KEY,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_TELEMETRY: "1",
          ...(toolTimeoutSeconds === undefined
            ? {}
            : { MCP_TOOL_TIMEOUT: String(toolTimeoutSeconds * 1000) }),
        },
        files: {
          [mcpConfig]: JSON.stringify({
            mcpServers: { [SERVER]: { type: "http", url: labUrl } },
          }),
        },
      };
    },
  },
  {
    id: "gemini-cli",
    displayName: "Gemini CLI",
    npmPackage: "@google/gemini-cli",
    version: "0.61.0",
    bin: "gemini",
    wire: "gemini",
    script: {
      read: { name: "read_mcp_resource", input: { uri: REVIEW_URI } },
      nudge: { name: "list_mcp_resources", input: { serverName: SERVER } },
    },
    modes: ["default"],
    enableTool: false,
    // --yolo approves it headless.
    shell: { name: "run_shell_command", input: commandWithDescription },
    launch({ home, labUrl, modelOrigin, prompt, toolTimeoutSeconds }) {
      return {
        args: [
          "-p",
          prompt,
          "--yolo",
          "--skip-trust",
          "--output-format",
          "stream-json",
          "-m",
          "gemini-2.5-flash",
        ],
        env: {
          GOOGLE_GEMINI_BASE_URL: modelOrigin,
          GEMINI_API_KEY: FAKE_API_KEY,
          GEMINI_CLI_TRUST_WORKSPACE: "true",
        },
        files: {
          [`${home}/.gemini/settings.json`]: JSON.stringify({
            mcpServers: {
              [SERVER]: {
                httpUrl: labUrl,
                trust: true,
                ...(toolTimeoutSeconds === undefined
                  ? {}
                  : { timeout: toolTimeoutSeconds * 1000 }),
              },
            },
            security: { auth: { selectedType: "gemini-api-key" } },
            privacy: { usageStatisticsEnabled: false },
            general: { disableAutoUpdate: true },
          }),
        },
      };
    },
  },
  {
    id: "codex",
    displayName: "Codex CLI",
    npmPackage: "@openai/codex",
    version: "0.171.0",
    bin: "codex",
    wire: "openai-responses",
    script: {
      read: {
        name: "read_mcp_resource",
        input: { server: SERVER, uri: REVIEW_URI },
      },
      nudge: { name: "list_mcp_resources", input: { server: SERVER } },
    },
    // Codex speaks 2025 unless its `mcp_2026_07_28` feature is on.
    modes: ["default", "2026-07-28"],
    enableTool: false,
    // --dangerously-bypass-approvals-and-sandbox approves it headless.
    shell: { name: "exec_command", input: (command) => ({ cmd: command }) },
    launch({ home, labUrl, modelOrigin, prompt, mode, toolTimeoutSeconds }) {
      const codexHome = `${home}/.codex`;
      return {
        args: [
          "exec",
          "--skip-git-repo-check",
          "--json",
          "--dangerously-bypass-approvals-and-sandbox",
          ...(mode === "2026-07-28" ? ["--enable", "mcp_2026_07_28"] : []),
          prompt,
        ],
        env: { CODEX_HOME: codexHome, LAB_MODEL_KEY: FAKE_API_KEY },
        files: {
          [`${codexHome}/config.toml`]: [
            `model = "gpt-5.1-codex"`,
            `model_provider = "lab"`,
            ``,
            `[model_providers.lab]`,
            `name = "Scripted lab model"`,
            `base_url = "${modelOrigin}/v1"`,
            `env_key = "LAB_MODEL_KEY"`,
            `wire_api = "responses"`,
            ``,
            `[mcp_servers.${SERVER}]`,
            `url = "${labUrl}"`,
            ...(toolTimeoutSeconds === undefined
              ? []
              : [`tool_timeout_sec = ${toolTimeoutSeconds}`]),
            ``,
          ].join("\n"),
        },
      };
    },
  },
  {
    id: "opencode",
    displayName: "OpenCode",
    npmPackage: "opencode-ai",
    version: "1.18.33",
    bin: "opencode",
    wire: "openai-chat",
    script: OPENCODE_SCRIPT,
    modes: ["default"],
    enableTool: false,
    // OPENCODE_PERMISSION allows it headless.
    shell: { name: "bash", input: commandWithDescription },
    launch({ workDir, labUrl, modelOrigin, prompt, toolTimeoutSeconds }) {
      return {
        args: ["run", "-m", "lab/scripted", "--format", "json", prompt],
        env: {
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          OPENCODE_DISABLE_SHARE: "1",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
          OPENCODE_DISABLE_CLAUDE_CODE: "1",
          OPENCODE_PERMISSION: JSON.stringify({ "*": "allow" }),
        },
        files: {
          [`${workDir}/opencode.json`]: JSON.stringify({
            $schema: "https://opencode.ai/config.json",
            ...openCodeConfig(modelOrigin, labUrl, toolTimeoutSeconds),
          }),
        },
      };
    },
  },
  {
    // An OpenCode fork: the same config shape in `kilo.json`, KILO_* variables.
    id: "kilo",
    displayName: "Kilo Code CLI",
    npmPackage: "@kilocode/cli",
    version: "7.8.1",
    bin: "kilo",
    wire: "openai-chat",
    script: OPENCODE_SCRIPT,
    modes: ["default"],
    enableTool: false,
    // KILO_PERMISSION allows it headless.
    shell: { name: "bash", input: commandWithDescription },
    platformBinary: {
      npmPackage: "@kilocode/cli-linux-x64",
      version: "7.7.9",
      binary: "bin/kilo",
      note:
        "ran @kilocode/cli-linux-x64 7.7.9's binary: @kilocode/cli 7.8.1 asks for cli-linux-x64 7.8.1, which npm does not have",
    },
    launch({ workDir, labUrl, modelOrigin, prompt, toolTimeoutSeconds }) {
      return {
        args: ["run", "-m", "lab/scripted", "--format", "json", prompt],
        env: {
          KILO_DISABLE_AUTOUPDATE: "1",
          KILO_DISABLE_MODELS_FETCH: "1",
          KILO_DISABLE_SHARE: "1",
          KILO_DISABLE_SESSION_INGEST: "1",
          KILO_DISABLE_LSP_DOWNLOAD: "1",
          KILO_DISABLE_CLAUDE_CODE: "1",
          // Any level but "all" turns its PostHog telemetry off.
          KILO_TELEMETRY_LEVEL: "off",
          // Never hand the run to a kilo daemon: only this run's own process.
          KILO_NO_DAEMON: "1",
          KILO_PERMISSION: JSON.stringify({ "*": "allow" }),
        },
        files: {
          [`${workDir}/kilo.json`]: JSON.stringify({
            $schema: "https://app.kilo.ai/config.json",
            // Else it also loads its Kilo Gateway provider and asks
            // api.kilo.ai for that one's models.
            enabled_providers: ["lab"],
            ...openCodeConfig(modelOrigin, labUrl, toolTimeoutSeconds),
          }),
        },
      };
    },
  },
  {
    id: "crush",
    displayName: "Crush",
    // Its README's install: npm's package only downloads the same binary
    // from GitHub in its postinstall.
    npmPackage: "github.com/charmbracelet/crush",
    version: "0.96.1",
    goInstall: { module: "github.com/charmbracelet/crush", version: "v0.96.1" },
    bin: "crush",
    wire: "openai-chat",
    script: {
      read: {
        name: "read_mcp_resource",
        input: { mcp_name: SERVER, uri: REVIEW_URI },
      },
      nudge: { name: "list_mcp_resources", input: { mcp_name: SERVER } },
    },
    modes: ["default"],
    enableTool: false,
    shell: { name: "bash", input: commandWithDescription },
    launch({ workDir, labUrl, modelOrigin, prompt }) {
      return {
        args: ["run", "-m", "lab/scripted", "--quiet", prompt],
        // Nothing beyond the lab: no providers list from Catwalk, no
        // bundled providers, no metrics (internal/config/load.go,
        // internal/cmd/root.go).
        env: {
          CRUSH_DISABLE_PROVIDER_AUTO_UPDATE: "1",
          CRUSH_DISABLE_DEFAULT_PROVIDERS: "1",
          CRUSH_DISABLE_METRICS: "1",
        },
        files: {
          [`${workDir}/crush.json`]: JSON.stringify({
            $schema: "https://charm.land/crush.json",
            providers: {
              lab: {
                type: "openai-compat",
                base_url: `${modelOrigin}/v1`,
                api_key: FAKE_API_KEY,
                models: [{
                  id: "scripted",
                  name: "Scripted lab model",
                  context_window: 128000,
                  default_max_tokens: 4096,
                }],
              },
            },
            mcp: { [SERVER]: { type: "http", url: labUrl } },
            permissions: {
              allowed_tools: ["list_mcp_resources", "read_mcp_resource"],
            },
            options: {
              disable_provider_auto_update: true,
              disable_default_providers: true,
              disable_metrics: true,
            },
          }),
        },
      };
    },
  },
  {
    id: "fast-agent",
    displayName: "fast-agent",
    // PyPI's package, pip-installed with its dependencies pinned, on a
    // Python 3.12 to 3.14 (its Requires-Python) found as a user would.
    npmPackage: "fast-agent-mcp",
    version: "0.10.9",
    pypiInstall: {
      package: "fast-agent-mcp",
      version: "0.10.9",
      environment: {
        id: "fast-agent",
        requirements: FAST_AGENT_REQUIREMENTS,
        python: { oldest: "3.12", newest: "3.14" },
      },
      bin: "fast-agent",
    },
    bin: "fast-agent",
    wire: "openai-chat",
    // `fast-agent go` offers its model MCP tools only (its get_resource
    // tool is an opt-in harness tool), so the lab adds its read-only tool.
    // Its one harmless tool, the shell's, comes only with --shell: natively
    // the model has no call between the update and its re-read.
    script: {
      read: { name: "get_review_status", input: {} },
      nudge: { name: "bash", input: { command: "true" } },
    },
    modes: ["default"],
    enableTool: true,
    // --shell (see launch) adds its local shell tool.
    shell: { name: "bash", input: (command) => ({ command }) },
    launch({ workDir, labUrl, modelOrigin, prompt, route }) {
      return {
        args: [
          "--no-update-check",
          "go",
          "--model",
          "generic.scripted",
          "--servers",
          SERVER,
          ...(route === "shell-probe" ? ["--shell"] : []),
          "--message",
          prompt,
        ],
        // Anything but loopback goes to a closed loopback port and fails
        // at once (httpx reads these); loopback bypasses it.
        env: {
          HTTP_PROXY: CLOSED_PROXY,
          HTTPS_PROXY: CLOSED_PROXY,
          NO_PROXY: "127.0.0.1,localhost",
        },
        // Its config in the folder it runs in (YAML, written as JSON).
        files: {
          [`${workDir}/fastagent.config.yaml`]: JSON.stringify({
            default_model: "generic.scripted",
            generic: { api_key: FAKE_API_KEY, base_url: `${modelOrigin}/v1` },
            mcp: { servers: { [SERVER]: { transport: "http", url: labUrl } } },
            otel: { enabled: false },
          }),
        },
      };
    },
  },
  {
    id: "copilot",
    displayName: "Copilot CLI",
    npmPackage: "@github/copilot",
    version: "1.0.102",
    bin: "copilot",
    wire: "openai-chat",
    // Its model sees MCP tools only, so the lab adds its read-only tool.
    script: {
      read: { name: "get_review_status", input: {} },
      nudge: { name: "glob", input: { pattern: "*.md" } },
    },
    modes: ["default"],
    enableTool: true,
    // --yolo approves it headless (see launch).
    shell: { name: "bash", input: commandWithDescription },
    launch({ home, labUrl, modelOrigin, prompt, route, toolTimeoutSeconds }) {
      const copilotHome = `${home}/.copilot`;
      return {
        args: [
          "-p",
          prompt,
          // --allow-all-tools alone still refuses a command that names paths
          // outside the work folder (the lab's main.ts, the deno cache):
          // the probe needs --yolo (tools, paths and URLs).
          route === "shell-probe" ? "--yolo" : "--allow-all-tools",
          "--disable-client-telemetry",
          "--model",
          "gpt-4.1",
        ],
        env: {
          COPILOT_HOME: copilotHome,
          COPILOT_OFFLINE: "true",
          COPILOT_PROVIDER_BASE_URL: `${modelOrigin}/v1`,
          COPILOT_PROVIDER_TYPE: "openai",
          COPILOT_PROVIDER_API_KEY: FAKE_API_KEY,
          COPILOT_MODEL: "gpt-4.1",
        },
        files: {
          [`${copilotHome}/mcp-config.json`]: JSON.stringify({
            mcpServers: {
              [SERVER]: {
                type: "http",
                url: labUrl,
                tools: ["*"],
                ...(toolTimeoutSeconds === undefined
                  ? {}
                  : { timeout: toolTimeoutSeconds * 1000 }),
              },
            },
          }),
        },
      };
    },
  },
  {
    id: "qwen-code",
    displayName: "Qwen Code",
    npmPackage: "@qwen-code/qwen-code",
    version: "0.24.4",
    bin: "qwen",
    wire: "openai-chat",
    script: {
      read: {
        name: "read_mcp_resource",
        input: { server_name: SERVER, uri: REVIEW_URI },
      },
      // It has no resource-list tool: a glob is its harmless call.
      nudge: { name: "glob", input: { pattern: "*.md" } },
    },
    modes: ["default"],
    enableTool: false,
    // --yolo approves it headless.
    shell: { name: "run_shell_command", input: commandWithDescription },
    launch({ home, labUrl, modelOrigin, prompt, route, toolTimeoutSeconds }) {
      return {
        args: [
          "--yolo",
          "--auth-type",
          "openai",
          "-m",
          "qwen3-coder-plus",
          "-o",
          "text",
          prompt,
        ],
        env: {
          OPENAI_BASE_URL: `${modelOrigin}/v1`,
          OPENAI_API_KEY: FAKE_API_KEY,
          OPENAI_MODEL: "qwen3-coder-plus",
        },
        files: {
          [`${home}/.qwen/settings.json`]: JSON.stringify({
            mcpServers: {
              [SERVER]: {
                httpUrl: labUrl,
                trust: true,
                ...(toolTimeoutSeconds === undefined
                  ? {}
                  : { timeout: toolTimeoutSeconds * 1000 }),
              },
            },
            // Tools not listed here hide behind its tool search, MCP tools
            // (the wait tool) and the resource-read tool among them.
            tools: {
              visible: [
                "read_mcp_resource",
                "glob",
                "run_shell_command",
                ...(route === "wait-tool"
                  ? [`mcp__${SERVER}__wait_for_review_update`]
                  : []),
              ],
            },
            privacy: { usageStatisticsEnabled: false },
            general: { disableAutoUpdate: true },
          }),
        },
      };
    },
  },
  {
    id: "continue",
    displayName: "Continue CLI",
    npmPackage: "@continuedev/cli",
    version: "1.5.47",
    bin: "cn",
    wire: "openai-chat",
    // Its model sees MCP tools only, so the lab adds its read-only tool.
    script: {
      read: { name: "get_review_status", input: {} },
      nudge: { name: "List", input: { dirpath: "." } },
    },
    modes: ["default"],
    enableTool: true,
    // --auto allows every tool headless.
    shell: { name: "Bash", input: (command) => ({ command }) },
    launch({ home, workDir, labUrl, modelOrigin, prompt }) {
      const config = `${workDir}/config.yaml`;
      return {
        args: ["-p", "--auto", "--config", config, prompt],
        env: {
          CONTINUE_GLOBAL_DIR: `${home}/.continue`,
          CONTINUE_CLI_ENABLE_TELEMETRY: "0",
          CONTINUE_METRICS_ENABLED: "0",
          CONTINUE_CLI_AUTO_UPDATED: "1",
        },
        files: {
          [config]: [
            "name: Lab",
            "version: 0.0.1",
            "schema: v1",
            "models:",
            "  - name: Scripted lab model",
            "    provider: openai",
            "    model: gpt-4.1",
            `    apiBase: ${modelOrigin}/v1`,
            `    apiKey: ${FAKE_API_KEY}`,
            "    roles: [chat, edit, apply]",
            "    capabilities: [tool_use]",
            "mcpServers:",
            `  - name: ${SERVER}`,
            "    type: streamable-http",
            `    url: ${labUrl}`,
            "",
          ].join("\n"),
        },
      };
    },
  },
  {
    id: "cline",
    displayName: "Cline CLI",
    npmPackage: "cline",
    version: "3.0.65",
    bin: "cline",
    wire: "openai-chat",
    // Its model sees MCP tools only, so the lab adds its read-only tool.
    script: {
      read: { name: "get_review_status", input: {} },
      // Its harmless call: a listing through its command tool.
      nudge: { name: "run_commands", input: { commands: ["ls"] } },
    },
    modes: ["default"],
    enableTool: true,
    // Headless runs approve every tool (`--auto-approve` defaults to true).
    shell: {
      name: "run_commands",
      input: (command) => ({ commands: [command] }),
    },
    // Its hub daemon outlives the run in its own session and would serve the
    // next run with this run's provider settings.
    daemonPidFile: ".cline/data/locks/hub/production.json",
    launch({ home, labUrl, modelOrigin, prompt }) {
      const settings = `${home}/.cline/data/settings`;
      return {
        args: [
          "--json",
          "-t",
          "80",
          prompt,
        ],
        env: {},
        files: {
          // What `cline auth -p openai -k KEY -m MODEL -b URL` writes.
          [`${settings}/providers.json`]: JSON.stringify({
            version: 1,
            lastUsedProvider: "openai-compatible",
            modes: {},
            providers: {
              "openai-compatible": {
                settings: {
                  provider: "openai-compatible",
                  apiKey: FAKE_API_KEY,
                  model: "gpt-4.1",
                  baseUrl: `${modelOrigin}/v1`,
                },
                updatedAt: "2026-01-01T00:00:00.000Z",
                tokenSource: "manual",
              },
            },
          }),
          [`${settings}/cline_mcp_settings.json`]: JSON.stringify({
            mcpServers: {
              [SERVER]: {
                type: "streamableHttp",
                url: labUrl,
                disabled: false,
              },
            },
          }),
        },
      };
    },
  },
  {
    id: "droid",
    displayName: "Factory Droid",
    npmPackage: "@factory/cli",
    version: "0.225.1",
    bin: "droid",
    wire: "openai-chat",
    // Its model sees MCP tools only, so the lab adds its read-only tool.
    script: {
      read: { name: "get_review_status", input: {} },
      nudge: { name: "LS", input: {} },
      // Droid defers MCP tools (`lab___<tool>`, listed by name under
      // "Deferred tools:") until the model loads them with its ToolSearch.
      loader: {
        name: "ToolSearch",
        input: { query: `select:${SERVER}___get_review_status` },
      },
    },
    modes: ["default"],
    enableTool: true,
    // --auto high approves it headless; its schema requires the summary
    // (3-8 words, sentence case) and a risk level with its reason.
    shell: {
      name: "Execute",
      input: (command) => ({
        summary: "Run the lab subscription probe",
        command,
        riskLevelReason:
          "It runs the lab's probe against a server on 127.0.0.1 and changes no files.",
        riskLevel: "low",
      }),
    },
    routeLoader: {
      "wait-tool": {
        name: "ToolSearch",
        input: {
          query:
            `select:${SERVER}___get_review_status,${SERVER}___wait_for_review_update`,
        },
      },
    },
    platformBinary: {
      npmPackage: "@factory/cli-linux-x64",
      version: "0.225.2",
      binary: "bin/droid",
      note:
        "ran Droid 0.225.2: @factory/cli 0.225.1 wants @factory/cli-linux-x64 0.225.1, which npm does not have, so the harness runs the binary of the newest published platform package, 0.225.2",
    },
    launch({ home, labUrl, modelOrigin, prompt, toolTimeoutSeconds }) {
      const factoryDir = `${home}/.factory`;
      return {
        args: ["exec", "--auto", "high", "-m", "custom:lab-scripted", prompt],
        env: {
          // Airgap Mode: no Factory API (org settings, cloud session sync,
          // connectors) and no Factory telemetry; BYOK models still run.
          FACTORY_AIRGAP_ENABLED: "true",
          FACTORY_DROID_AUTO_UPDATE_ENABLED: "false",
        },
        files: {
          [`${factoryDir}/settings.json`]: JSON.stringify({
            customModels: [{
              model: "lab-scripted",
              displayName: "Scripted lab model",
              baseUrl: `${modelOrigin}/v1`,
              apiKey: FAKE_API_KEY,
              provider: "generic-chat-completion-api",
              maxOutputTokens: 4096,
            }],
            // Without it the first request can go out before the lab's
            // tools are listed.
            blockOnMcpLoad: true,
            cloudSessionSync: false,
          }),
          [`${factoryDir}/mcp.json`]: JSON.stringify({
            // Its tool timeout is 180 s when unset.
            mcpServers: { [SERVER]: httpServer(labUrl, toolTimeoutSeconds) },
          }),
        },
      };
    },
  },
  {
    // A fork of the pi coding agent with MCP support. With its
    // `mcp.notifications` setting on (off as shipped) it subscribes to every
    // listed resource and, on an update, tells its model so, leaving the
    // re-read to it.
    id: "omp",
    displayName: "oh-my-pi",
    npmPackage: "@oh-my-pi/pi-coding-agent",
    version: "18.2.3",
    bin: "omp",
    wire: "openai-chat",
    // `i` (the call's intent, in a few words) is required by its tools.
    script: {
      // Its read tool reads MCP resources as mcp://<uri>.
      read: {
        name: "read",
        input: { path: `mcp://${REVIEW_URI}`, i: "Read the review status" },
      },
      // It has no resource-list tool: a glob is its harmless call.
      nudge: {
        name: "glob",
        input: { path: "*.md", i: "List the Markdown files" },
      },
    },
    modes: ["default", "notifications"],
    enableTool: false,
    // Its default approval mode (yolo) runs it headless.
    shell: {
      name: "bash",
      input: (command) => ({ command, i: "Run the lab's subscription probe" }),
    },
    platformBinary: {
      npmPackage: "@oven/bun-linux-x64",
      version: "1.4.3",
      binary: "bin/bun",
      entry: "dist/cli.js",
      note:
        "ran @oh-my-pi/pi-coding-agent 18.2.3's dist/cli.js with Bun 1.4.3 from @oven/bun-linux-x64 (its executable is a Bun script, for Bun 1.3.14 or later); the newer 18.2.9 and 18.3.4 pin @oh-my-pi packages at versions npm does not have",
    },
    launch(
      { home, labUrl, modelOrigin, prompt, mode, route, toolTimeoutSeconds },
    ) {
      const agentDir = `${home}/.omp/agent`;
      // Its `.yml` files are written as JSON, which is YAML.
      return {
        args: ["-p", "--model", "lab/scripted", prompt],
        env: {
          // Its model discovery for built-in providers (the models.dev
          // catalog, Kilo, Venice…) looks up hosts on the internet; through
          // this proxy, a closed loopback port, each fails at once.
          // Loopback (the lab, the scripted model) always bypasses it.
          PI_PROXY: "http://127.0.0.1:9",
        },
        files: {
          [`${agentDir}/models.yml`]: JSON.stringify({
            providers: {
              lab: {
                baseUrl: `${modelOrigin}/v1`,
                apiKey: FAKE_API_KEY,
                api: "openai-completions",
                models: [{ id: "scripted", name: "Scripted lab model" }],
              },
            },
          }),
          [`${agentDir}/mcp.json`]: JSON.stringify({
            // Its MCP request timeout is 30 s when unset.
            mcpServers: { [SERVER]: httpServer(labUrl, toolTimeoutSeconds) },
          }),
          [`${agentDir}/config.yml`]: JSON.stringify({
            // Else it probes these local servers' default loopback ports.
            disabledProviders: ["ollama", "llama.cpp", "lm-studio"],
            ...(mode === "notifications"
              ? { mcp: { notifications: true } }
              : {}),
            // It mounts MCP tools as xd:// devices its model calls through
            // its write tool; on the wait-tool route the wait tool is
            // offered as a tool of its own instead.
            ...(route === "wait-tool" ? { tools: { xdev: false } } : {}),
          }),
        },
      };
    },
  },
  {
    // Its MCP client lists tools only (no resources), so the lab adds its
    // read-only tool. Its `http` transport POSTs to `<url>/rpc` and its
    // `streamable_http` one throws on send, so over HTTP it never connects;
    // `stdio`, the one transport it implements, is a mode of its own.
    id: "grok-cli",
    displayName: "Grok CLI",
    npmPackage: "@vibe-kit/grok-cli",
    version: "0.0.34",
    bin: "grok",
    wire: "openai-chat",
    script: {
      read: { name: `mcp__${SERVER}__get_review_status`, input: {} },
      nudge: { name: "view_file", input: { path: "." } },
    },
    modes: ["default", "stdio"],
    enableTool: true,
    // Headless mode (-p) approves every operation.
    shell: { name: "bash", input: (command) => ({ command }) },
    launch({ home, workDir, labUrl, stdioLab, modelOrigin, prompt }) {
      // Its MCP servers are read from the project's .grok/settings.json only.
      const transport = stdioLab
        ? {
          type: "stdio",
          command: stdioLab.command,
          args: stdioLab.args,
          env: stdioLab.env,
        }
        : { type: "streamable_http", url: labUrl };
      return {
        args: ["-p", prompt, "--max-tool-rounds", "20"],
        env: {
          GROK_API_KEY: FAKE_API_KEY,
          GROK_BASE_URL: `${modelOrigin}/v1`,
          GROK_MODEL: "grok-code-fast-1",
        },
        files: {
          [`${home}/.grok/user-settings.json`]: JSON.stringify({
            apiKey: FAKE_API_KEY,
            baseURL: `${modelOrigin}/v1`,
            defaultModel: "grok-code-fast-1",
          }),
          [`${workDir}/.grok/settings.json`]: JSON.stringify({
            model: "grok-code-fast-1",
            mcpServers: { [SERVER]: { name: SERVER, transport } },
          }),
        },
      };
    },
  },
  {
    id: "auggie",
    displayName: "Auggie",
    npmPackage: "@augmentcode/auggie",
    version: "0.36.0",
    bin: "auggie",
    wire: "openai-chat",
    vendorLogin:
      "an Augment account: `auggie login`, or its session in AUGMENT_SESSION_AUTH",
    script: OPENCODE_SCRIPT,
    modes: ["default"],
    enableTool: false,
    shell: { name: "launch-process", input: (command) => ({ command }) },
    launch({ home, labUrl, prompt }) {
      const mcpConfig = `${home}/lab-mcp.json`;
      return {
        args: [
          "--print",
          "--quiet",
          "--augment-cache-dir",
          `${home}/.augment`,
          "--mcp-config",
          mcpConfig,
          prompt,
        ],
        env: { AUGMENT_DISABLE_AUTO_UPDATE: "1" },
        files: {
          [mcpConfig]: JSON.stringify({
            mcpServers: { [SERVER]: { type: "http", url: labUrl } },
          }),
        },
      };
    },
  },
  {
    id: "amp",
    displayName: "Amp",
    npmPackage: "@ampcode/cli",
    version: "0.0.1790712063-gb89205",
    bin: "amp",
    wire: "openai-chat",
    // Its model runs on the Amp server (AMP_URL, https://ampcode.com/ by
    // default), which takes an Amp API key; without one it starts a browser
    // login and waits for a pasted code. The key here is the fake one, so the
    // run stops at that server, which this machine cannot reach.
    vendorLogin:
      "an Amp account: its model runs on the Amp server (ampcode.com), with an Amp API key",
    script: OPENCODE_SCRIPT,
    modes: ["default"],
    enableTool: false,
    shell: { name: "Bash", input: (command) => ({ cmd: command }) },
    platformBinary: {
      npmPackage: "@ampcode/cli-linux-x64",
      version: "0.0.1790142911-g7618fb",
      binary: "amp",
      note:
        "ran @ampcode/cli-linux-x64 0.0.1790142911-g7618fb's binary: @ampcode/cli 0.0.1790712063-gb89205 asks for cli-linux-x64 at its own version, which npm does not have",
    },
    launch({ home, labUrl, prompt }) {
      const settings = `${home}/.config/amp/settings.json`;
      return {
        args: [
          "--settings-file",
          settings,
          "--no-ide",
          "--no-notifications",
          "-x",
          prompt,
        ],
        env: { AMP_API_KEY: FAKE_API_KEY },
        files: {
          [settings]: JSON.stringify({
            "amp.mcpServers": { [SERVER]: { url: labUrl } },
            "amp.dangerouslyAllowAll": true,
            "amp.updates.mode": "disabled",
          }),
        },
      };
    },
  },
  {
    id: "letta-code",
    displayName: "Letta Code",
    npmPackage: "@letta-ai/letta-code",
    version: "0.32.18",
    bin: "letta",
    wire: "openai-chat",
    vendorLogin:
      "a Letta server: Letta Cloud (LETTA_API_KEY) or a self-hosted one (LETTA_BASE_URL), which runs the agent",
    script: OPENCODE_SCRIPT,
    modes: ["default"],
    enableTool: false,
    shell: { name: "Bash", input: commandWithDescription },
    launch({ home, labUrl, prompt }) {
      return {
        args: ["-p", prompt, "--yolo"],
        env: {},
        files: {
          [`${home}/.letta/settings.json`]: JSON.stringify({
            mcpServers: [{
              name: SERVER,
              type: "streamable_http",
              url: labUrl,
            }],
          }),
        },
      };
    },
  },
  {
    id: "qoder",
    displayName: "Qoder CLI",
    npmPackage: "@qoder-ai/qodercli",
    version: "1.1.52",
    bin: "qodercli",
    wire: "openai-chat",
    // Its custom (BYOK) providers are allowed only for a signed-in account
    // whose feature switches allow them.
    vendorLogin: "a Qoder account: `qodercli login` (or /login)",
    script: OPENCODE_SCRIPT,
    modes: ["default"],
    enableTool: false,
    shell: { name: "Bash", input: commandWithDescription },
    launch({ home, labUrl, prompt }) {
      const mcpConfig = `${home}/lab-mcp.json`;
      return {
        args: [
          "-p",
          prompt,
          "--config-dir",
          `${home}/.qoder`,
          "--mcp-config",
          mcpConfig,
          "--strict-mcp-config",
          "--dangerously-skip-permissions",
        ],
        env: {},
        files: {
          [mcpConfig]: JSON.stringify({
            mcpServers: { [SERVER]: { type: "http", url: labUrl } },
          }),
        },
      };
    },
  },
  REFERENCE_HOST,
];

export function clientById(id: string): ClientDefinition | undefined {
  return CLIENTS.find((client) => client.id === id);
}

export const UNSUPPORTED_CLIENTS: UnsupportedClientDefinition[] = [{
  kind: "unsupported",
  id: "pi",
  displayName: "pi coding agent",
  npmPackage: "@mariozechner/pi-coding-agent",
  version: "0.73.1",
  modes: ["default"],
  reason:
    'no MCP support by design: its npm README says "No MCP. Build CLI tools with READMEs (see Skills), or build an extension that adds MCP support."',
}];
