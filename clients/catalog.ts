/**
 * The clients the harness runs: the one place that knows about specific
 * agent CLIs. Each entry pins an npm version, says which model API the
 * client speaks and which tools its model reads resources with, and writes
 * the client's per-run configuration into an isolated home.
 *
 * The pinned versions are also listed in `clients/README.md`;
 * `catalog_test.ts` keeps the two in step.
 *
 * @module
 */

import type { ModelScript, Route, ScriptedCall } from "./decide.ts";
import type { WireFormat } from "./scripted_model.ts";

/** `default` is whatever the client negotiates; `2026-07-28` its opt-in. */
export type ModeId = "default" | "2026-07-28";

export interface LaunchContext {
  /** Isolated HOME (XDG folders and TMPDIR live under it). */
  home: string;
  /** The folder the client runs in (its project). */
  workDir: string;
  labUrl: string;
  /** Scripted model origin, `http://127.0.0.1:PORT`. */
  modelOrigin: string;
  prompt: string;
  mode: ModeId;
  route: Route;
  /** Set the client's MCP tool-call timeout to this (the progress check). */
  toolTimeoutSeconds?: number;
}

export interface Launch {
  args: string[];
  env: Record<string, string>;
  /** Files to write before the run, by absolute path. */
  files: Record<string, string>;
}

export interface ClientDefinition {
  /** Short id used on the command line and in file names. */
  id: string;
  displayName: string;
  npmPackage: string;
  version: string;
  /** Executable name in `node_modules/.bin`. */
  bin: string;
  wire: WireFormat;
  /** Resource tools as this client names them for its model. */
  script: Omit<ModelScript, "waitSeconds">;
  modes: ModeId[];
  /** Start the lab with `MCP_TEST_ENABLE_TOOL=true` (tools-only clients). */
  enableTool: boolean;
  /**
   * The client's own shell tool, for the `shell-probe` route: its name as the
   * model sees it and the arguments that run one command; or, for a client
   * that cannot run a shell command headless, why.
   */
  shell: ShellTool | { unavailable: string };
  /** A different loader call per route (Claude Code defers MCP tools). */
  routeLoader?: Partial<Record<Route, ScriptedCall>>;
  launch(context: LaunchContext): Launch;
}

export interface ShellTool {
  name: string;
  input(command: string): Record<string, unknown>;
}

/** The usual shell tool arguments: the command and what it is for. */
const commandWithDescription = (command: string) => ({
  command,
  description: "Run the lab's subscription probe",
});

/** The API key every client gets: a fake, the model is on loopback. */
export const FAKE_API_KEY = "lab-scripted-model-key";

const URI = "test://review/status";
const SERVER = "lab";

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
        input: { server: SERVER, uri: URI },
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
          // Headless approval: only the tools the route needs.
          "--allowedTools",
          [
            "ListMcpResourcesTool",
            "ReadMcpResourceTool",
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
      read: { name: "read_mcp_resource", input: { uri: URI } },
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
      read: { name: "read_mcp_resource", input: { server: SERVER, uri: URI } },
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
    script: {
      read: { name: "read_mcp_resource", input: { server: SERVER, uri: URI } },
      nudge: { name: "list_mcp_resources", input: { server: SERVER } },
    },
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
          }),
        },
      };
    },
  },
  {
    id: "crush",
    displayName: "Crush",
    npmPackage: "@charmland/crush",
    version: "0.96.1",
    bin: "crush",
    wire: "openai-chat",
    script: {
      read: {
        name: "read_mcp_resource",
        input: { mcp_name: SERVER, uri: URI },
      },
      nudge: { name: "list_mcp_resources", input: { mcp_name: SERVER } },
    },
    modes: ["default"],
    enableTool: false,
    shell: { name: "bash", input: commandWithDescription },
    launch({ workDir, labUrl, modelOrigin, prompt }) {
      return {
        args: ["run", "-m", "lab/scripted", "--quiet", prompt],
        env: { CRUSH_DISABLE_PROVIDER_AUTO_UPDATE: "1" },
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
            options: { disable_provider_auto_update: true },
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
];

export function clientById(id: string): ClientDefinition | undefined {
  return CLIENTS.find((client) => client.id === id);
}
