// The MCP TypeScript SDK v1 client (@modelcontextprotocol/sdk) used as an app
// author would: connect over Streamable HTTP (or start the server over stdio),
// list, read, subscribe, wait for notifications/resources/updated, read again.
//
// v1 speaks the 2025 protocol only: its README says 2026-07-28 support "is not
// planned for v1.x" (it is in the v2 packages, @modelcontextprotocol/client),
// so connect always speaks 2025.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { main, runApp, signal, textOf, URI } from "./lab_app.mjs";

const PACKAGE = "@modelcontextprotocol/sdk";

function app(url, era, waitSeconds, stdio) {
  const client = new Client({
    name: "lab-library-mcp-sdk",
    version: "1.0.0",
  });
  // v1 registers notification handlers by zod schema, not by method name.
  const update = signal();
  client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (notification) => {
      if (notification.params.uri === URI) update.resolve(true);
    },
  );
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      await client.connect(
        stdio
          ? new StdioClientTransport(stdio)
          : new StreamableHTTPClientTransport(new URL(url)),
      );
      return "2025";
    },
    async list() {
      const { resources } = await client.listResources();
      return resources.map((resource) => resource.uri);
    },
    async read() {
      return textOf(await client.readResource({ uri: URI }));
    },
    subscribe: {
      call: "client.subscribeResource({ uri })",
      run: () => client.subscribeResource({ uri: URI }),
    },
    update: {
      via: "setNotificationHandler(ResourceUpdatedNotificationSchema)",
      received: update.promise,
    },
    close: () => client.close(),
  }, stdio ? "stdio" : "http");
}

await main("mcp-sdk.mjs", { app, stdio: true });
