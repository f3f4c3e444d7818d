// An app and an agent written with mcp-use's TypeScript client (`MCPClient`,
// `MCPSession`, `MCPAgent`), from the package's README and .d.ts only.
//
// Pinned to mcp-use 1.34.6, the newest release that ships the client and the
// agent: mcp-use 2.x is a server framework only; its README sends client and
// agent users to `@mcp-use/client` and `@mcp-use/agent`, which the npm
// registry does not have (404).
//
// What it offers (clients/catalog/libraries.ts cites the package's files and lines):
// - resources: `session.listAllResources()`, `session.readResource(uri)`;
// - subscribe: `session.subscribeToResource(uri)` (documented);
// - update: `session.on("notification", handler)` gets every server
//   notification, notifications/resources/updated included;
// - era: mcp-use 1.34.6 pins MCP SDK 1.26.0 (2025 protocol versions only)
//   and has no protocol-version option.
import process from "node:process";
import { MCPAgent, MCPClient } from "mcp-use";
import { ChatOpenAI } from "@langchain/openai";
import { tool } from "langchain";
import {
  APP_TOOL,
  appClock,
  main,
  runApp,
  signal,
  textOf,
  URI,
} from "./lab_app.mjs";

const PACKAGE = "mcp-use";
const SERVER = "lab";

// mcp-use sends anonymized telemetry unless this documented variable says
// "false"; the lab's machines reach no telemetry host, so keep it off.
process.env.MCP_USE_ANONYMIZED_TELEMETRY ??= "false";

function app(url, era, waitSeconds, stdio) {
  const client = new MCPClient({
    mcpServers: { [SERVER]: stdio ?? { url } },
  });
  const update = signal();
  let session;
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      // createSession connects and initializes (autoInitialize defaults to true).
      session = await client.createSession(SERVER);
      // The documented update API: every server notification reaches this
      // handler; keep the ones for our resource.
      session.on("notification", (notification) => {
        if (
          notification.method === "notifications/resources/updated" &&
          notification.params?.uri === URI
        ) update.resolve(true);
      });
      // No protocol-version option: its MCP SDK 1.26.0 speaks 2025 only.
      return "2025";
    },
    async list() {
      const { resources } = await session.listAllResources();
      return resources.map((resource) => resource.uri);
    },
    async read() {
      return textOf(await session.readResource(URI));
    },
    subscribe: {
      call: "session.subscribeToResource(uri)",
      run: () => session.subscribeToResource(URI),
    },
    update: {
      via: 'session.on("notification") handler',
      received: update.promise,
    },
    close: () => client.closeAllSessions(),
  }, stdio ? "stdio" : "http");
}

async function agent(url, modelUrl, prompt) {
  const client = new MCPClient({
    mcpServers: { [SERVER]: { url } },
  });
  // An app-defined tool, as a LangChain tool: MCPAgent takes extra tools
  // through its documented `additionalTools` option.
  const clock = tool(
    () => appClock(),
    {
      name: APP_TOOL,
      description: "Returns the current time as ISO 8601.",
      schema: { type: "object", properties: {} },
    },
  );
  const llm = new ChatOpenAI({
    model: "scripted",
    apiKey: process.env.OPENAI_API_KEY,
    configuration: { baseURL: modelUrl },
    timeout: 180_000,
  });
  // Note: mcp-use's LangChain adapter calls MCP tools with no request
  // options, so a tool call gets the MCP SDK's default 60 s timeout; no
  // documented option raises it.
  const mcpAgent = new MCPAgent({
    llm,
    client,
    maxSteps: 20,
    additionalTools: [clock],
  });
  try {
    return String(await mcpAgent.run({ prompt }));
  } finally {
    await mcpAgent.close();
  }
}

await main("mcp-use.mjs", { app, agent, stdio: true });
