/**
 * A small MCP server for tests, in the 2025 era: each session gets a fresh
 * SDK `Server` from `build`, over the SDK's Web-standard Streamable HTTP
 * transport, on a free loopback port. The probe's and the reference host's
 * tests serve their odd servers with it.
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test.
 *
 * @module
 */

import {
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "npm:@modelcontextprotocol/server@2.4.0";

/** A 2025 session's answer to one request, by its session id. */
export class LegacySessions {
  #sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();

  constructor(private readonly build: () => Server) {}

  /** Answers a request of a known session, or opens a new one with it. */
  async handle(request: Request, body: unknown): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    const known = id ? this.#sessions.get(id) : undefined;
    if (known) return known.handleRequest(request, { parsedBody: body });
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sessionId) => {
          this.#sessions.set(sessionId, transport);
        },
      });
    await this.build().connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  async close() {
    for (const transport of this.#sessions.values()) await transport.close();
  }
}
