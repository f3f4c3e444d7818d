/**
 * `ResourceWatch`, the heart of the reference host: the update → model
 * path. A resource the model reads is watched (`resources/subscribe` in
 * 2025, named on the listen in 2026-07-28); on its
 * `notifications/resources/updated` the host takes the text the
 * notification carried (`InlineUpdates`) or reads it again; once a stream
 * the server ended is open again (`Reopen`), it reads each watched
 * resource again, kept only if it differs from what the model has, as an
 * update sent in the gap was lost. Before the next model request
 * `takeUpdates` gives one message per changed resource, opening with
 * `UPDATE_MARK`, and one per resource the server would not watch (refused,
 * or left out of the listen's acknowledgement).
 *
 * @module
 */

import type { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { bounded, say } from "./host_bounds.ts";
import { OnePerKey } from "./one_per_key.ts";
import type { Message } from "./chat_model.ts";
import { isModern } from "./mcp_connection.ts";
import { type Listen, refusalWords } from "./listen_stream.ts";
import type { InlineUpdates } from "./inline_updates.ts";
import type { Reopen } from "./stream_reopen.ts";

/** Opens every update message, so a reader of a transcript finds them. */
export const UPDATE_MARK = "[Update from the MCP server]";

/** How the host came by an update's text, as the model is told. */
const CAME_BY = {
  inline: "the server sent the new content with its notification",
  notified: "the server notified the host, which read it again",
  reopened:
    "the host's stream to the server was cut, and the host read it again once the stream was open again",
};
type CameBy = keyof typeof CAME_BY;

/**
 * The heart of the host: the resources the conversation has read, how the
 * server watches them, and the updates the model has not seen yet (the
 * latest per resource, its text cut to `MAX_CONTENT_CHARS` as it is kept).
 */
export class ResourceWatch {
  #read = new Set<string>();
  /** The latest text of each: what the model was given, or is to be given. */
  #known = new Map<string, string>();
  #pending = new Map<string, { at: Date; text: string; cameBy: CameBy }>();
  #rereads = new OnePerKey<string>();
  /** Why the next re-read of a resource runs. */
  #rereadFor = new Map<string, "notified" | "reopened">();
  /** Resources the server will not watch, and why; those the model was not told of yet. */
  #unwatched = new Map<string, string>();
  #untold: string[] = [];

  constructor(
    private readonly client: Client,
    private readonly on: boolean,
    private readonly listen: Listen,
    reopen: Reopen,
    private readonly inline?: InlineUpdates,
  ) {
    if (!on) return;
    reopen.onReopened = () => this.#readAgain();
    listen.onUnwatched = (uris, why) => {
      for (const uri of uris) this.#unwatch(uri, why);
    };
    client.setNotificationHandler(
      "notifications/resources/updated",
      ({ params }) => this.#updated(params.uri),
    );
  }

  /** Reads a resource for the model; the first time, asks to be told of changes. */
  async read(uri: string): Promise<string> {
    const text = await this.#text(uri);
    this.#known.set(uri, bounded(text));
    if (!this.on || this.#read.has(uri)) return text;
    this.#read.add(uri);
    this.inline?.watch(uri);
    if (!this.client.getServerCapabilities()?.resources?.subscribe) {
      // A server that does not offer it is not asked.
      this.#unwatch(uri, "the server does not offer resources.subscribe");
    } else if (!isModern(this.client)) {
      // Refused, it is not asked again: the model is told, and can read it.
      await this.client.subscribeResource({ uri }).catch((error) =>
        this.#unwatch(uri, refusalWords(error))
      );
    } else {
      // The listen names every resource read so far.
      await this.listen.ask({ resourceSubscriptions: [uri] });
    }
    if (!this.#unwatched.has(uri)) say(`watching ${JSON.stringify(uri)}`);
    return text;
  }

  /** The server will not watch `uri`: said now, told the model next. */
  #unwatch(uri: string, why: string) {
    if (this.#unwatched.has(uri)) return;
    this.#unwatched.set(uri, why);
    this.#untold.push(uri);
    say(`${JSON.stringify(uri)} is not watched: ${why}`);
  }

  async #text(uri: string): Promise<string> {
    const { contents } = await this.client.readResource({ uri });
    return contents.map((part) => "text" in part ? part.text : "(binary)")
      .join("\n");
  }

  /** A notification: the text it carried, or a re-read, is the update. */
  #updated(uri: string) {
    if (!this.#read.has(uri)) return;
    const inline = this.inline?.take(uri);
    if (inline === undefined) return this.#reread(uri, "notified");
    say(`${JSON.stringify(uri)}: the notification carried its content`);
    this.#keep(uri, inline, "inline");
  }

  /**
   * The stream is open again: each resource watched is read again, as an
   * update the server sent while it was closed was lost.
   */
  #readAgain() {
    const watched = [...this.#read].filter((uri) => !this.#unwatched.has(uri));
    if (watched.length === 0) return;
    say(
      `the stream is open again: the host reads ${watched.length} watched resource(s) again`,
    );
    for (const uri of watched) this.#reread(uri, "reopened");
  }

  /**
   * Reads `uri` again and keeps the text: after a notification always,
   * after a re-open only if it differs from what the host has. One re-read
   * per resource at a time (`OnePerKey`), so a flood costs two reads and
   * the text kept is the latest; a notification's reason outranks a
   * re-open's.
   */
  #reread(uri: string, why: "notified" | "reopened") {
    if (why === "notified" || !this.#rereadFor.has(uri)) {
      this.#rereadFor.set(uri, why);
    }
    this.#rereads.run(uri, async () => {
      const reason = this.#rereadFor.get(uri) ?? why;
      this.#rereadFor.delete(uri);
      try {
        const text = bounded(await this.#text(uri));
        if (reason === "notified" || text !== this.#known.get(uri)) {
          this.#keep(uri, text, reason);
        }
      } catch (error) {
        say(`re-reading ${JSON.stringify(uri)} failed: ${error}`);
      }
    });
  }

  /** The latest text of `uri`, for the model's next request. */
  #keep(uri: string, text: string, cameBy: CameBy) {
    this.#known.set(uri, text);
    this.#pending.set(uri, { at: new Date(), text, cameBy });
  }

  /**
   * The messages for the next model request: one per resource the server
   * would not watch, then one update per changed resource.
   */
  async takeUpdates(): Promise<Message[]> {
    await this.#rereads.settled();
    const unwatched = this.#untold.splice(0).map((uri) => ({
      role: "user" as const,
      content: bounded(
        `${UPDATE_MARK} ${uri} is not watched: ${this.#unwatched.get(uri)}. ` +
          "The host will not hear when it changes: read it again to see its content now.",
      ),
    }));
    const updates = [...this.#pending].map(([uri, { at, text, cameBy }]) => {
      say(`${JSON.stringify(uri)} changed: the update goes to the model`);
      return {
        role: "user" as const,
        content: `${UPDATE_MARK} ${uri} changed at ${at.toISOString()} ` +
          `(${CAME_BY[cameBy]}). Its content now:\n${text}`,
      };
    });
    this.#pending.clear();
    return [...unwatched, ...updates];
  }

  /** 2025: stops watching, each resource unsubscribed (the listen: `Listen`). */
  async stop() {
    if (isModern(this.client)) return;
    for (const uri of this.#read) {
      if (!this.#unwatched.has(uri)) {
        await this.client.unsubscribeResource({ uri });
      }
    }
  }
}
