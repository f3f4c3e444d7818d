// The Claude Agent SDK (@anthropic-ai/claude-agent-sdk) against the lab.
//
// query() runs Claude Code (the SDK's bundled native binary) as a child
// process and the MCP client lives inside it: the app never holds an MCP
// client. Its public MCP surface for a configured server is the Query control
// methods: mcpServerStatus() (connection state and tools, no resources),
// readMcpResource() (ui:// URIs only, refused for anything else), reconnect
// and toggle. There is no list-resources, subscribe or resource-update API,
// so `app` reports the connection and says which steps have no API. The SDK
// has no protocol-version option either: --era sets Claude Code's own
// MCP_PROTOCOL_NEGOTIATION through the documented `env` option.
//
// `agent` speaks the Anthropic Messages wire: ANTHROPIC_BASE_URL is the model's
// origin WITHOUT /v1 (Claude Code appends /v1/messages) and the key comes from
// ANTHROPIC_API_KEY in the environment. MCP tools reach the model as
// mcp__<server>__<tool>, so the lab's read tool is mcp__lab__get_review_status
// and the app's own tool (an in-process SDK MCP server) is mcp__app__app_clock.
import process from "node:process";
import {
  createSdkMcpServer,
  query,
  tool,
} from "@anthropic-ai/claude-agent-sdk";
import { APP_TOOL, appClock, main, runApp } from "./lab_app.mjs";

const PACKAGE = "@anthropic-ai/claude-agent-sdk";
const SERVER = "lab";
/** Tool calls may block on wait_for_review_update: allow 180 s. */
const TOOL_TIMEOUT_MS = 180_000;

/**
 * The Claude Code child's environment. `env` REPLACES the child's environment
 * (it is not merged), so it starts from process.env; the rest keeps Claude
 * Code offline apart from the model.
 */
function childEnv(extra = {}) {
  return {
    ...process.env,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    MCP_TOOL_TIMEOUT: String(TOOL_TIMEOUT_MS),
    ...extra,
  };
}

/**
 * A prompt stream that yields nothing until `signal` aborts: it keeps query()
 * in streaming-input mode, which the control methods (mcpServerStatus(), ...)
 * need, without starting a model turn.
 */
function idleInput(signal) {
  return {
    [Symbol.asyncIterator]() {
      return {
        next: () =>
          new Promise((resolve) =>
            signal.addEventListener(
              "abort",
              () => resolve({ done: true, value: undefined }),
              { once: true },
            )
          ),
      };
    },
  };
}

function app(url, era, waitSeconds, stdio) {
  const stop = new AbortController();
  const session = query({
    prompt: idleInput(stop.signal),
    options: {
      mcpServers: {
        [SERVER]: stdio
          ? { type: "stdio", command: stdio.command, args: stdio.args }
          : { type: "http", url },
      },
      strictMcpConfig: true,
      settingSources: [],
      // Claude Code's documented MCP_PROTOCOL_NEGOTIATION picks the era:
      // legacy = plain initialize; auto = server/discover first (2026-07-28
      // when the server has it). The SDK has no option of its own for this.
      env: childEnv({
        MCP_PROTOCOL_NEGOTIATION: era === "2026-07-28" ? "auto" : "legacy",
      }),
    },
  });
  // Drain the message stream so the session runs; nothing is expected on it.
  const drained = (async () => {
    for await (const _message of session) { /* no model turn is started */ }
  })().catch(() => {});

  // No resource list for the app (McpServerStatus has tools only) and no
  // read of a test:// URI (readMcpResource() takes ui:// URIs only), so no
  // list or read step (and no resource-found/initial/final fact); no
  // subscribe or update step either.
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      // Claude Code connects MCP servers in the background: poll the status.
      const deadline = Date.now() + Math.max(waitSeconds, 15) * 1000;
      let status;
      for (;;) {
        status = (await session.mcpServerStatus()).find((server) =>
          server.name === SERVER
        );
        if (status?.status !== "pending" || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      if (status?.status !== "connected") {
        throw new Error(
          `mcpServerStatus(): ${status?.status ?? "absent"} ${
            status?.error ?? ""
          }`.trim(),
        );
      }
      // McpServerStatus carries no protocol version: the era is the one
      // MCP_PROTOCOL_NEGOTIATION asked for (the lab's report shows the one
      // spoken).
      return era;
    },
    async close() {
      stop.abort();
      session.close();
      await drained;
    },
  }, stdio ? "stdio" : "http");
}

async function agent(url, modelUrl, prompt) {
  // The app's own tool, defined with the SDK's tool() and served to Claude
  // Code as an in-process MCP server.
  const clock = tool(
    APP_TOOL,
    "The current time (ISO 8601).",
    {},
    () => Promise.resolve({ content: [{ type: "text", text: appClock() }] }),
  );
  const appServer = createSdkMcpServer({
    name: "app",
    version: "1.0.0",
    tools: [clock],
    // Offer the tool up front instead of deferring it behind ToolSearch.
    alwaysLoad: true,
  });

  let finalAnswer = "";
  let failure;
  for await (
    const message of query({
      prompt,
      options: {
        model: "claude-sonnet-4-5",
        maxTurns: 12,
        mcpServers: {
          [SERVER]: {
            type: "http",
            url,
            alwaysLoad: true,
            timeout: TOOL_TIMEOUT_MS,
          },
          app: appServer,
        },
        strictMcpConfig: true,
        settingSources: [],
        // Claude Code's own resource tools stay (they are its MCP resource
        // integration); no shell or file tools.
        tools: ["ListMcpResourcesTool", "ReadMcpResourceTool"],
        // Headless approval for the MCP tools (every tool of each server).
        allowedTools: [
          "ListMcpResourcesTool",
          "ReadMcpResourceTool",
          `mcp__${SERVER}`,
          "mcp__app",
        ],
        env: childEnv({ ANTHROPIC_BASE_URL: modelUrl }),
        stderr: (data) => process.stderr.write(data),
      },
    })
  ) {
    if (message.type !== "result") continue;
    if (message.subtype === "success" && !message.is_error) {
      finalAnswer = message.result;
    } else {
      failure = message.subtype === "success"
        ? message.result
        : `${message.subtype} ${(message.errors ?? []).join("; ")}`;
    }
  }
  if (failure !== undefined) throw new Error(failure);
  return finalAnswer;
}

await main("claude-agent-sdk.mjs", { app, agent, stdio: true });
