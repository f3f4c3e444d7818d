// Cloudflare Agents' MCP client (MCPClientManager from agents/mcp/client)
// against the subscription lab.
//
// Written from the package's own docs (node_modules/agents/docs/mcp-client.md)
// and .d.ts files. The docs install the manager on a Durable Object:
//
//   import { Lifecycle } from "agents/lifecycle";
//   import { MCPClientManager } from "agents/mcp/client";
//   readonly mcp = new MCPClientManager("my-object", "1.0.0");
//   readonly lifecycle = Lifecycle.install(this).use(this.mcp);
//
// (or use `this.mcp` on an `Agent` from "agents"). agents/mcp/client itself
// loads on Node, but every connection path (registerServer, connect) reads
// the Durable Object's SQL storage through the lifecycle and throws
// "MCPClientManager must be installed with Lifecycle.use() before use", and
// agents/lifecycle (like "agents") imports "cloudflare:workers", which Node's
// ESM loader rejects. So on Node the program stops at the import, in connect.
//
// Had it connected: resources come from mcp.listResources() (the catalog
// cached at discovery) and mcp.readResource({ serverId, uri }); the package
// has no resource subscribe call and no resources/updated hook. The version
// is negotiated automatically (server/discover, then initialize).
// There is no `agent` command: AIChatAgent (@cloudflare/ai-chat) extends
// Agent, which needs the Workers runtime.
import { main, runApp } from "./lab_app.mjs";

const PACKAGE = "agents";

function app(url, era, waitSeconds) {
  let mcp;
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      // Imported dynamically so a runtime that cannot load them is reported.
      const { MCPClientManager } = await import("agents/mcp/client");
      await import("agents/lifecycle");
      // Only reached where agents/lifecycle loads (workerd). A plain process
      // has no Durable Object to install the manager on; registering a
      // server on the uninstalled manager shows the error an app would get.
      mcp = new MCPClientManager("lab-library-cloudflare-agents", "1.0.0");
      await mcp.registerServer("lab", { url, name: "lab" });
      // The manager names no era it negotiated (no documented accessor), so
      // there is none to report, and no step after this one.
      throw new Error("registered, but the negotiated era is not exposed");
    },
    async close() {
      await mcp?.dispose().catch(() => {});
    },
  });
}

await main("cloudflare-agents.mjs", { app });
