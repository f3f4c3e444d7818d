// An app on the MCP TypeScript SDK v2 client (@modelcontextprotocol/client),
// the baseline: it connects over Streamable HTTP (or starts the server over
// stdio), lists, reads, subscribes, waits for notifications/resources/updated
// and reads again.
//
// 2025: the default negotiation ('legacy', a plain initialize), then
// client.subscribeResource({ uri }). 2026-07-28: versionNegotiation pinned
// to it, then client.listen({ resourceSubscriptions: [uri] }), which opens
// subscriptions/listen and resolves once the server acknowledges the
// filter. One setNotificationHandler gets the update in both eras.
import {
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { main, runApp, signal, textOf, URI } from "./lab_app.mjs";

const PACKAGE = "@modelcontextprotocol/client";

function app(url, era, waitSeconds, stdio) {
  const client = new Client(
    { name: "lab-library-mcp-client", version: "1.0.0" },
    era === "2026-07-28"
      ? { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      : {},
  );
  // Registered before connecting, as the SDK asks of handlers.
  const update = signal();
  client.setNotificationHandler(
    "notifications/resources/updated",
    (notification) => {
      if (notification.params.uri === URI) update.resolve(true);
    },
  );
  let listen;
  return runApp(PACKAGE, era, waitSeconds, {
    async connect() {
      await client.connect(
        stdio
          ? new StdioClientTransport(stdio)
          : new StreamableHTTPClientTransport(new URL(url)),
      );
      return client.getProtocolEra() === "modern" ? "2026-07-28" : "2025";
    },
    async list() {
      const { resources } = await client.listResources();
      return resources.map((resource) => resource.uri);
    },
    async read() {
      return textOf(await client.readResource({ uri: URI }));
    },
    subscribe: era === "2026-07-28"
      ? {
        call: "client.listen({ resourceSubscriptions: [uri] })",
        async run() {
          listen = await client.listen({ resourceSubscriptions: [URI] });
        },
      }
      : {
        call: "client.subscribeResource({ uri })",
        run: () => client.subscribeResource({ uri: URI }),
      },
    update: {
      via: 'setNotificationHandler("notifications/resources/updated")',
      received: update.promise,
    },
    async close() {
      await listen?.close();
      await client.close();
    },
  }, stdio ? "stdio" : "http");
}

await main("mcp-client.mjs", { app, stdio: true });
