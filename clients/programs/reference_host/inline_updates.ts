/**
 * `InlineUpdates`: the reference host asks each `subscriptions/listen` for
 * the new content in its notifications (`embedResources`, the SEP-3119
 * proposal) and keeps the text an update for a resource the conversation
 * read carries, on the transport itself, before the SDK's client sees it.
 *
 * @module
 */

import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { bounded } from "./host_bounds.ts";

/**
 * Asks every `subscriptions/listen` on a transport for the new content in
 * its notifications (`embedResources: true`, SEP-3119), and keeps the text
 * an update for a watched resource carries (the latest, cut to
 * `MAX_CONTENT_CHARS`) until `take` claims it. The SDK's client has
 * no option for either: it sends only the filter, and drops a
 * notification's params beyond `uri` and `_meta` before a handler sees
 * them. So both happen on the transport, before `connect`: the SDK chains
 * a handler already set there, and `send` adds the flag.
 */
export class InlineUpdates {
  #watched = new Set<string>();
  #texts = new Map<string, string>();

  constructor(transport: Transport) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) =>
      send(
        isJSONRPCRequest(message) && message.method === "subscriptions/listen"
          ? { ...message, params: { ...message.params, embedResources: true } }
          : message,
        options,
      );
    transport.onmessage = (message) => this.#keep(message);
  }

  /** Keeps, from now on, the text that updates for `uri` carry. */
  watch(uri: string) {
    this.#watched.add(uri);
  }

  /** The text the last update for `uri` carried, once; else undefined. */
  take(uri: string): string | undefined {
    const text = this.#texts.get(uri);
    this.#texts.delete(uri);
    return text;
  }

  #keep(message: JSONRPCMessage) {
    if (
      !isJSONRPCNotification(message) ||
      message.method !== "notifications/resources/updated"
    ) return;
    const { uri, text } = message.params ?? {};
    // A resource the conversation never read: nothing would take its text.
    if (typeof uri !== "string" || !this.#watched.has(uri)) return;
    if (typeof text === "string") this.#texts.set(uri, bounded(text));
  }
}
