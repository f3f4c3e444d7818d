// Vercel AI SDK MCP client (@ai-sdk/mcp) against the subscription lab.
//
// Written only from the package's documented API (README and dist/index.d.ts).
import { createMCPClient } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, isStepCount, tool } from "ai";
import { z } from "zod";
import {
  APP_TOOL,
  appClock,
  main,
  messageOf,
  runApp,
  show,
  textOf,
  URI,
} from "./lab_app.mjs";

const PACKAGE = "@ai-sdk/mcp";

function app(url, era, waitSeconds, stdio) {
  let client;
  // MCPClient has no resources/subscribe call and no notification hook: its
  // only resource calls are listResources, readResource and
  // listResourceTemplates (the experimental_events API is webhook "events",
  // not resource subscriptions). So no subscribe or update step.
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      client = await createMCPClient({
        transport: stdio ? new StdioMCPTransport(stdio) : { type: "http", url },
        // The era switch: with discovery (the default) the client probes with
        // server/discover and speaks 2026-07-28; false sends the 2025 initialize.
        protocolVersionDiscovery: era === "2026-07-28",
        // Every message the client cannot route (server notifications included:
        // it answers them with "Unsupported message type") ends up here.
        onUncaughtError: (error) =>
          console.error(`uncaught ${show(messageOf(error))}`),
      });
      return client.initializeResult.protocolVersion === "2026-07-28"
        ? "2026-07-28"
        : "2025";
    },
    async list() {
      const { resources } = await client.listResources();
      return resources.map((resource) => resource.uri);
    },
    async read() {
      return textOf(await client.readResource({ uri: URI }));
    },
    close: () => client?.close(),
  }, stdio ? "stdio" : "http");
}

async function agent(url, modelUrl, prompt) {
  // Library defaults: server/discover first (the 2026-07-28 era when offered).
  const client = await createMCPClient({ transport: { type: "http", url } });
  try {
    const lab = createOpenAICompatible({
      baseURL: modelUrl,
      name: "lab",
      apiKey: process.env.OPENAI_API_KEY,
    });
    const clock = tool({
      description: "Current time from the app's clock.",
      inputSchema: z.object({}),
      execute: () => appClock(),
    });
    const { text } = await generateText({
      model: lab.chatModel("scripted"),
      tools: { ...(await client.tools()), [APP_TOOL]: clock },
      // isStepCount is the current name of stepCountIs (still exported as an
      // alias since the rename in ai 7).
      stopWhen: isStepCount(12),
      prompt,
    });
    return text;
  } finally {
    await client.close();
  }
}

await main("ai-sdk.mjs", { app, agent, stdio: true });
