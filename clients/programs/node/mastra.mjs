// Mastra's MCP client (@mastra/mcp MCPClient) and Mastra Agent against the
// subscription lab.
//
// Written only from the packages' documented API (the reference and migration
// pages shipped in @mastra/mcp/dist/docs, and the .d.ts files).
//
// The era switch is the per-server `protocolVersion` option: '2026-07-28' pins
// the current revision, 'legacy' pins the 2025 `initialize` handshake, and
// leaving it out probes with server/discover. mcp.resources.subscribe() always
// rides a `subscriptions/listen` stream (@mastra/mcp 2.x removed
// resources/subscribe), so on a legacy connection it throws by design.
//
// MastraError wraps the cause; lab_app.mjs's messageOf() shows both, so the
// real reason is visible.
import { MCPClient } from "@mastra/mcp";
import { Agent } from "@mastra/core/agent";
import { createTool } from "@mastra/core/tools";
import { z } from "zod";
import {
  APP_TOOL,
  appClock,
  main,
  runApp,
  signal,
  textOf,
  URI,
} from "./lab_app.mjs";

const PACKAGE = "@mastra/mcp";
const SERVER = "lab"; // the key in `servers`; MCP tools become lab_<name>
// MCPClient's default request timeout is 60 s; the lab's
// wait_for_review_update tool blocks until the update, so allow more.
const TIMEOUT_MS = 180_000;

function app(url, era, waitSeconds, stdio) {
  const mcp = new MCPClient({
    servers: {
      [SERVER]: {
        // A stdio server is a `command` in place of the `url`.
        ...(stdio
          ? { command: stdio.command, args: stdio.args }
          : { url: new URL(url) }),
        protocolVersion: era === "2026-07-28" ? "2026-07-28" : "legacy",
        timeout: TIMEOUT_MS,
      },
    },
  });
  const update = signal();
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      // MCPClient connects lazily, on the first call that needs the server.
      // The docs say to register the update handler before subscribing, so
      // that call is the one that connects here.
      await mcp.resources.onUpdated(SERVER, (params) => {
        if (params.uri === URI) update.resolve(true);
      });
      const negotiated = mcp.getServerProtocolVersions()[SERVER];
      return negotiated === "2026-07-28" ? "2026-07-28" : "2025";
    },
    async list() {
      // list() logs and drops per-server failures; listWithErrors() keeps them.
      const { resources, errors } = await mcp.resources.listWithErrors();
      if (errors[SERVER]) throw new Error(errors[SERVER]);
      return (resources[SERVER] ?? []).map((resource) => resource.uri);
    },
    async read() {
      return textOf(await mcp.resources.read(SERVER, URI));
    },
    subscribe: {
      call: "mcp.resources.subscribe(serverName, uri)",
      run: () => mcp.resources.subscribe(SERVER, URI),
    },
    // runApp waits even when subscribe threw: onUpdated is registered on
    // every revision, so an update the server sends unasked (e.g. --trigger
    // read on the 2025 GET stream) still reaches the handler.
    update: {
      via: "mcp.resources.onUpdated handler",
      received: update.promise,
    },
    close: () => mcp.disconnect(),
  }, stdio ? "stdio" : "http");
}

async function agent(url, modelUrl, prompt) {
  // Library defaults for the era: server/discover first, 2026-07-28 if offered.
  const mcp = new MCPClient({
    servers: { [SERVER]: { url: new URL(url), timeout: TIMEOUT_MS } },
  });
  try {
    const clock = createTool({
      id: APP_TOOL,
      description: "Current time from the app's clock.",
      inputSchema: z.object({}),
      execute: () => appClock(),
    });
    const assistant = new Agent({
      id: "lab-agent",
      name: "Lab Agent",
      instructions: "You are a helpful assistant.",
      // Mastra's OpenAI-compatible model config: with `url` set it builds an
      // @ai-sdk/openai-compatible chat model (api defaults to "chat").
      model: {
        providerId: "lab",
        modelId: "scripted",
        url: modelUrl,
        apiKey: process.env.OPENAI_API_KEY,
      },
      tools: { ...(await mcp.listTools()), [APP_TOOL]: clock },
    });
    const result = await assistant.generate(prompt, { maxSteps: 12 });
    return result.text;
  } finally {
    await mcp.disconnect();
  }
}

await main("mastra.mjs", { app, agent, stdio: true });
