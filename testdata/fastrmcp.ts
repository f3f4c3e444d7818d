/**
 * A server in FastRMCP's dialect for the probe's tests, from the wire shapes
 * its documentation gives (its Subscriptions page and counter example):
 * `resources/subscribe` answers `{id, uri, created_at, client_id}`;
 * `notifications/resources/updated` carries `subscription_id`, `uri`,
 * `content` and `timestamp`; `resources/unsubscribe` takes only
 * `{subscriptionId}`; `resources/list_subscriptions` lists. 2025, without
 * sessions: its `increment` tool's answer comes after the notification.
 *
 * The test serves `fastRmcp` over HTTP; run as a program, it speaks stdio,
 * one message a line, its options as JSON in its first argument:
 *
 * ```sh
 * deno run testdata/fastrmcp.ts '{"listBytes":40000000}'
 * ```
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test.
 *
 * @module
 */

export const COUNTER_URI = "counter://value";
export const FASTRMCP_ID = "6f1c2a9e-0b7d-4e55-9a61-2c8f4d7e1b00";

/** How this server departs from FastRMCP's own. */
export interface FastRmcpOptions {
  /** Pads the `resources/list_subscriptions` answer to about this many bytes. */
  listBytes?: number;
  /** Over HTTP: sends the second half of that answer this late. */
  listDelayMs?: number;
  /** The notification's params in place of FastRMCP's, from the counter's text. */
  params?: (text: string) => Record<string, unknown>;
  /**
   * Over stdio: this long after subscribing, the counter goes up by itself
   * and is notified (over HTTP only `increment` notifies: no GET stream).
   */
  notifyAfterMs?: number;
}

type Message = {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
};

/**
 * The server's state, and what it sends for each message it is sent;
 * `push` sends what it says unasked.
 */
export function fastRmcp(
  options: FastRmcpOptions = {},
  push: (message: unknown) => void = () => {},
) {
  let counter = 0;
  let subscribed = false;
  const text = () => JSON.stringify({ value: counter });
  const notification = () => ({
    jsonrpc: "2.0",
    method: "notifications/resources/updated",
    params: options.params?.(text()) ?? {
      subscription_id: FASTRMCP_ID,
      uri: COUNTER_URI,
      content: {
        uri: COUNTER_URI,
        mimeType: "application/json",
        text: text(),
      },
      timestamp: 1699565000,
    },
  });
  const results: Record<string, (params: Record<string, unknown>) => unknown> =
    {
      initialize: () => ({
        protocolVersion: "2025-11-25",
        capabilities: { resources: { subscribe: true }, tools: {} },
        serverInfo: { name: "subs", version: "1.0.0" },
      }),
      "tools/list": () => ({
        tools: [{ name: "increment", inputSchema: { type: "object" } }],
      }),
      "resources/list": () => ({
        resources: [{ uri: COUNTER_URI, name: "counter" }],
      }),
      "resources/read": () => ({
        contents: [{
          uri: COUNTER_URI,
          mimeType: "application/json",
          text: text(),
        }],
      }),
      "resources/subscribe": () => {
        subscribed = true;
        if (options.notifyAfterMs !== undefined) {
          setTimeout(() => {
            counter++;
            if (subscribed) push(notification());
          }, options.notifyAfterMs);
        }
        return {
          id: FASTRMCP_ID,
          uri: COUNTER_URI,
          created_at: "2026-12-01T10:00:00Z",
          client_id: "client-1",
        };
      },
      "resources/unsubscribe": ({ subscriptionId }) => {
        if (subscriptionId !== FASTRMCP_ID) return undefined;
        subscribed = false;
        return {};
      },
      "resources/list_subscriptions": () => ({
        subscriptions: [{
          id: FASTRMCP_ID,
          uri: COUNTER_URI,
          ...options.listBytes ? { note: "x".repeat(options.listBytes) } : {},
        }],
      }),
      "tools/call": () => ({
        content: [{ type: "text", text: `${++counter}` }],
      }),
    };
  /** The messages to send for `message`: none for a notification. */
  return (message: Message): unknown[] => {
    const { id, method = "", params = {} } = message;
    if (id === undefined) return [];
    const result = results[method]?.(params);
    const answer = result === undefined
      ? {
        jsonrpc: "2.0",
        id,
        error: { code: -32602, message: `${method}: invalid params` },
      }
      : { jsonrpc: "2.0", id, result };
    if (method !== "tools/call" || !subscribed) return [answer];
    return [notification(), answer];
  };
}

/** Serves `fastRmcp` over HTTP on a free loopback port; no GET stream. */
export function serveFastRmcp(options: FastRmcpOptions = {}) {
  const answer = fastRmcp(options);
  const event = (message: unknown) =>
    `event: message\ndata: ${JSON.stringify(message)}\n\n`;
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (request.method !== "POST") return new Response(null, { status: 405 });
      const asked = await request.json();
      const messages = answer(asked);
      if (messages.length === 0) return new Response(null, { status: 202 });
      if (
        asked.method === "resources/list_subscriptions" &&
        options.listDelayMs !== undefined
      ) return lateJson(messages[0], options.listDelayMs);
      if (messages.length === 1) return Response.json(messages[0]);
      return new Response(messages.map(event).join(""), {
        headers: { "content-type": "text/event-stream" },
      });
    },
  );
  return {
    url: new URL(`http://127.0.0.1:${http.addr.port}/mcp`),
    [Symbol.asyncDispose]: () => http.shutdown(),
  };
}

/** A JSON body whose second half comes `ms` after its first. */
function lateJson(message: unknown, ms: number): Response {
  const text = new TextEncoder().encode(JSON.stringify(message));
  const half = Math.floor(text.length / 2);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(text.subarray(0, half));
      timer = setTimeout(() => {
        try {
          controller.enqueue(text.subarray(half));
          controller.close();
        } catch {
          // The client went away first.
        }
      }, ms);
    },
    cancel: () => clearTimeout(timer),
  });
  return new Response(body, {
    headers: { "content-type": "application/json" },
  });
}

/** Over stdio: one JSON-RPC message a line each way, until stdin ends. */
async function serveStdio(options: FastRmcpOptions) {
  const encoder = new TextEncoder();
  const stdout = Deno.stdout.writable.getWriter();
  const send = (message: unknown) =>
    stdout.write(encoder.encode(`${JSON.stringify(message)}\n`));
  const answer = fastRmcp(options, (message) => void send(message));
  let pending = "";
  for await (
    const chunk of Deno.stdin.readable.pipeThrough(
      new TextDecoderStream(),
    )
  ) {
    const lines = (pending + chunk).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines.filter((line) => line.trim())) {
      for (const message of answer(JSON.parse(line))) await send(message);
    }
  }
}

if (import.meta.main) await serveStdio(JSON.parse(Deno.args[0] ?? "{}"));
