// OpenAI Agents SDK (@openai/agents) MCP client against the subscription lab.
//
// Written only from the package's documented API (README and the .d.ts files
// of @openai/agents-core and @openai/agents-openai).
import {
  Agent,
  MCPServerStdio,
  MCPServerStreamableHttp,
  run,
  setDefaultOpenAIClient,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import OpenAI from "openai";
import { z } from "zod";
import { APP_TOOL, appClock, main, runApp, textOf, URI } from "./lab_app.mjs";

const PACKAGE = "@openai/agents";

function app(url, era, waitSeconds, stdio) {
  // MCPServerStreamableHttp has no protocol-version option: connect() always
  // probes with server/discover and speaks 2026-07-28 when the server offers
  // it, the 2025 initialize otherwise. The only public trace of the outcome
  // is sessionId: a 2025 Streamable HTTP session has one, 2026-07-28 has none.
  // Over stdio nothing public tells the era: the lab's report shows it.
  const server = stdio
    ? new MCPServerStdio({ ...stdio, name: "lab" })
    : new MCPServerStreamableHttp({ url, name: "lab" });
  // The MCP server classes offer listResources, listResourceTemplates and
  // readResource, but no subscribe call and no notification hook.
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      await server.connect();
      if (stdio) return era;
      return server.sessionId === undefined ? "2026-07-28" : "2025";
    },
    async list() {
      const { resources } = await server.listResources();
      return resources.map((resource) => resource.uri);
    },
    async read() {
      return textOf(await server.readResource(URI));
    },
    close: () => server.close(),
  }, stdio ? "stdio" : "http");
}

async function agent(url, modelUrl, prompt) {
  // Keep everything on loopback: no trace export to OpenAI.
  setTracingDisabled(true);
  // The SDK's default OpenAI route is the Responses API over HTTP.
  setDefaultOpenAIClient(
    new OpenAI({ baseURL: modelUrl, apiKey: process.env.OPENAI_API_KEY }),
  );

  // timeout (ms) bounds each MCP tool call; the MCP SDK default is 60 s and the
  // lab's wait_for_review_update may block longer.
  const server = new MCPServerStreamableHttp({
    url,
    name: "lab",
    timeout: 300_000,
  });
  await server.connect();
  try {
    const clock = tool({
      name: APP_TOOL,
      description: "Current time from the app's clock.",
      parameters: z.object({}),
      execute: () => appClock(),
    });
    const assistant = new Agent({
      name: "Assistant",
      instructions: "You are a helpful assistant.",
      model: "scripted",
      mcpServers: [server],
      tools: [clock],
    });
    const result = await run(assistant, prompt, { maxTurns: 12 });
    return result.finalOutput ?? "";
  } finally {
    await server.close();
  }
}

await main("openai-agents.mjs", { app, agent, stdio: true });
