// An app and an agent written with LangChain's MCP adapters
// (`@langchain/mcp-adapters`, `MultiServerMCPClient`), from the package's
// README and .d.ts only.
//
// What it offers (clients/catalog/libraries.ts cites the package's files and lines):
// - resources: `client.listResources(server)` and
//   `client.readResource(server, uri)` are the library's own calls;
// - subscribe: the library has no call for `resources/subscribe`;
// - update: the documented `onResourcesUpdated` hook receives
//   `notifications/resources/updated` (it is only useful when something else
//   subscribed, or the server sends updates unasked);
// - era: the library speaks whatever its bundled MCP SDK 1.x negotiates and
//   has no option for the 2026-07-28 era.
import process from "node:process";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createAgent, tool } from "langchain";
import { ChatOpenAI } from "@langchain/openai";
import {
  APP_TOOL,
  appClock,
  main,
  runApp,
  signal,
  textOf,
  URI,
} from "./lab_app.mjs";

const PACKAGE = "@langchain/mcp-adapters";
const SERVER = "lab";
// MCP tool calls may block (the lab's wait_for_review_update): the MCP SDK's
// default request timeout is 60 s, so raise it through the library's option.
const TOOL_TIMEOUT_MS = 180_000;

function app(url, era, waitSeconds, stdio) {
  // The documented update hook: called with `{ uri }` for every
  // notifications/resources/updated the server sends.
  const update = signal();
  const client = new MultiServerMCPClient({
    mcpServers: {
      [SERVER]: stdio
        ? { transport: "stdio", command: stdio.command, args: stdio.args }
        : { transport: "http", url },
    },
    onResourcesUpdated: (resource) => {
      if (resource.uri === URI) update.resolve(true);
    },
  });
  // No library call sends resources/subscribe (only list/read exist), so
  // no subscribe step.
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      await client.initializeConnections();
      // No protocol-version option: its MCP SDK 1.x speaks 2025 only.
      return "2025";
    },
    async list() {
      const listed = await client.listResources(SERVER);
      return (listed[SERVER] ?? []).map((resource) => resource.uri);
    },
    async read() {
      // readResource answers with the contents array itself.
      return textOf({ contents: await client.readResource(SERVER, URI) });
    },
    update: { via: "onResourcesUpdated hook", received: update.promise },
    close: () => client.close(),
  }, stdio ? "stdio" : "http");
}

async function agent(url, modelUrl, prompt) {
  const client = new MultiServerMCPClient({
    mcpServers: {
      [SERVER]: { transport: "http", url },
    },
    defaultToolTimeout: TOOL_TIMEOUT_MS,
  });
  try {
    // The lab's MCP tools, as LangChain tools (names unprefixed by default).
    const mcpTools = await client.getTools();
    const clock = tool(
      () => appClock(),
      {
        name: APP_TOOL,
        description: "Returns the current time as ISO 8601.",
        schema: { type: "object", properties: {} },
      },
    );
    const model = new ChatOpenAI({
      model: "scripted",
      apiKey: process.env.OPENAI_API_KEY,
      configuration: { baseURL: modelUrl },
      timeout: TOOL_TIMEOUT_MS,
    });
    const reactAgent = createAgent({ model, tools: [...mcpTools, clock] });
    const result = await reactAgent.invoke(
      { messages: [{ role: "user", content: prompt }] },
      { recursionLimit: 40 },
    );
    const last = result.messages.at(-1);
    return typeof last?.content === "string"
      ? last.content
      : JSON.stringify(last?.content ?? "");
  } finally {
    await client.close();
  }
}

await main("langchain.mjs", { app, agent, stdio: true });
