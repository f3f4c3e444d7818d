/**
 * The reference host's connection to its MCP server: the SDK's client in
 * the era `--era` asks for (`hostClient`), over Streamable HTTP with each
 * message bounded (`boundedFetch`) or over stdio (`StdioServer`, a Ctrl-C
 * or SIGTERM to the host passed on to it), ended in order
 * (`endConnection`). A 2025 GET stream the server ends is opened again
 * by the SDK when `Reopen` says, which is told once it is open; in
 * 2026-07-28 (`isModern`) what the host follows comes on its one listen
 * (`Listen`, listen_stream.ts).
 *
 * @module
 */

import {
  Client,
  StreamableHTTPClientTransport,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { isEventStream, LAB_VERSION, shutdownSignals } from "../../../main.ts";
import { MAX_MESSAGE_BYTES, REOPEN_MAX_MS, say } from "./host_bounds.ts";
import type { HostOptions } from "./host_args.ts";
import { StdioServer } from "./stdio_server.ts";
import type { Reopen } from "./stream_reopen.ts";

/** The SDK's client, negotiating the era `--era` asks for. */
export function hostClient(era: HostOptions["era"]): Client {
  return new Client({ name: "reference-host", version: LAB_VERSION }, {
    versionNegotiation: {
      mode: era === "auto" ? "auto" : era === "2025" ? "legacy" : { pin: era },
    },
  });
}

/**
 * fetch for the MCP server, each message it sends at most
 * `MAX_MESSAGE_BYTES`: a JSON body whole, an event stream event by event
 * (the bytes since its last blank line). Past that the body fails and no
 * more of it is read; the request it answered fails with it (JSON) or at
 * the SDK's timeout (an event stream).
 */
async function boundedFetch(url: string | URL, init?: RequestInit) {
  const response = await fetch(url, init);
  if (!response.body) return response;
  const events = isEventStream(response);
  let size = 0;
  let previous = 0;
  const bound: Transformer<Uint8Array, Uint8Array> & { fetched: Response } = {
    // Once the Response a fetch returned is garbage collected, Deno no
    // longer ends its body on the signal's abort: the SDK's close of a
    // listen would leave the stream open on the server. The body passed on
    // holds it.
    fetched: response,
    transform(chunk, controller) {
      if (!events) size += chunk.length;
      else {
        for (const byte of chunk) {
          if (byte === 13) continue; // CRLF ends a line as LF does
          size = byte === 10 && previous === 10 ? 0 : size + 1;
          previous = byte;
        }
      }
      if (size <= MAX_MESSAGE_BYTES) return controller.enqueue(chunk);
      const tooLarge =
        `the server sent a message over ${MAX_MESSAGE_BYTES} bytes`;
      say(`${tooLarge}: not read`);
      controller.error(new Error(tooLarge));
    },
  };
  const body = response.body.pipeThrough(new TransformStream(bound));
  return new Response(body, response);
}

/**
 * The server's transport. Over HTTP the SDK opens the 2025 GET stream again
 * after the server ended it, or after a failed attempt, when `reopen` says
 * (its scheduler; the SDK's own wait, a fixed second after each stream,
 * and its limit of two failed attempts in a row, give way to it), and
 * `reopen` is told when a GET stream's response came. A stdio
 * server's process group does not get a Ctrl-C or a SIGTERM sent to the
 * host's, so the host passes it on, and ends (130 or 143, as a shell
 * reports a process the signal ended).
 */
export function transportFor(options: HostOptions, reopen: Reopen): Transport {
  if (options.url) {
    return new StreamableHTTPClientTransport(new URL(options.url), {
      fetch: async (url, init) => {
        const response = await boundedFetch(url, init);
        // A GET stream's response: the stream is open (again, if `reopen`
        // opened it: then what changed in the gap is read).
        if (init?.method === "GET" && response.ok) reopen.established();
        return response;
      },
      reconnectionScheduler: (reconnect) =>
        reopen.after("the GET stream ended", reconnect),
      // The scheduler above decides every wait; no count of failed
      // attempts makes the SDK give up before it.
      reconnectionOptions: {
        initialReconnectionDelay: reopen.firstMs,
        maxReconnectionDelay: REOPEN_MAX_MS,
        reconnectionDelayGrowFactor: 2,
        maxRetries: Infinity,
      },
    });
  }
  const server = new StdioServer(options.stdio!);
  for (const signal of shutdownSignals(Deno.build.os)) {
    try {
      Deno.addSignalListener(signal, async () => {
        say(`${signal}: the host ends its server, then itself`);
        await server.stop(signal);
        Deno.exit(signal === "SIGINT" ? 130 : 143);
      });
    } catch {
      // Not a signal of this system.
    }
  }
  return server;
}

/**
 * Ends the connection, connected or not: the HTTP session (a 2025 one's
 * DELETE), the client, then a stdio server.
 */
export async function endConnection(client: Client, transport: Transport) {
  if (transport instanceof StreamableHTTPClientTransport) {
    await transport.terminateSession().catch(() => {});
  }
  await client.close().catch(() => {});
  // Connected or not, a stdio server ends before the host.
  if (transport instanceof StdioServer) await transport.close();
}

export const isModern = (client: Client) =>
  client.getNegotiatedProtocolVersion() === "2026-07-28";
