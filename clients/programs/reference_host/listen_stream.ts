/**
 * `Listen`: the reference host's one `subscriptions/listen` in 2026-07-28,
 * asking for all it follows (list changes, the resources read), opened
 * again when the server ends it (`Reopen`, told once it is open again),
 * never again once refused, and narrowed to what its acknowledgement
 * honoured. What the server will not watch goes to `onUnwatched`, which
 * tells the model.
 *
 * @module
 */

import {
  type Client,
  type McpSubscription,
  ProtocolError,
  type SubscriptionFilter,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { MAX_REASON_CHARS, printable, say } from "./host_bounds.ts";
import type { Reopen } from "./stream_reopen.ts";

/** Why a watch failed, in words for a line and for the model, escaped and cut. */
export function refusalWords(error: unknown): string {
  const message = printable(
    error instanceof Error ? error.message : String(error),
    MAX_REASON_CHARS,
  );
  return error instanceof ProtocolError
    ? `the server refused (error ${error.code}: ${message})`
    : `the request failed (${message})`;
}

/** The list changes a listen may ask for. */
type ListFlag =
  | "toolsListChanged"
  | "promptsListChanged"
  | "resourcesListChanged";

/**
 * The host's one listen. Asking for more closes the open listen first, then
 * opens one with the whole filter: a server that caps listens counts the
 * old one until it is closed. A listen the server ends (its result, or the
 * stream dropped) is opened again after `Reopen`'s wait. An error answer
 * is a refusal: no listen is asked again, and every resource asked for, then
 * or later, is unwatched. What the acknowledgement left out is unwatched
 * and never asked again; a listen that honours nothing is closed.
 */
export class Listen {
  /** Told of resources the server will not watch, and why. */
  onUnwatched: (uris: string[], why: string) => void = () => {};
  #lists = new Set<ListFlag>();
  #uris = new Set<string>();
  #open?: McpSubscription;
  #refusal?: string;
  #reopening?: () => void;
  #closed = false;
  #turn = Promise.resolve();

  constructor(
    private readonly client: Client,
    private readonly reopen: Reopen,
  ) {}

  /** Asks for more: once the wait of a re-open under way is over, or now. */
  async ask(more: SubscriptionFilter) {
    const uris = more.resourceSubscriptions ?? [];
    if (this.#refusal) return this.onUnwatched(uris, this.#refusal);
    for (const uri of uris) this.#uris.add(uri);
    for (const [key, on] of Object.entries(more)) {
      if (on === true) this.#lists.add(key as ListFlag);
    }
    if (!this.#reopening) await this.#openAgain();
  }

  /** Closes the listen; nothing is opened again. */
  async close() {
    this.#closed = true;
    this.#reopening?.();
    await this.#turn;
    await this.#open?.close();
  }

  /** One open at a time, in the order asked. */
  #openAgain() {
    return this.#turn = this.#turn.then(() => this.#openNow()).catch(
      (error) => say(`the listen failed: ${(error as Error).message}`),
    );
  }

  async #openNow() {
    const previous = this.#open;
    this.#open = undefined;
    await previous?.close();
    if (this.#closed || (this.#lists.size === 0 && this.#uris.size === 0)) {
      return;
    }
    const filter: SubscriptionFilter = {
      ...Object.fromEntries([...this.#lists].map((flag) => [flag, true])),
      ...this.#uris.size > 0 && { resourceSubscriptions: [...this.#uris] },
    };
    let subscription: McpSubscription;
    try {
      this.reopen.opened();
      subscription = await this.client.listen(filter);
    } catch (error) {
      if (!(error instanceof ProtocolError)) {
        const failure = refusalWords(error);
        return this.#ended(undefined, `the listen could not open: ${failure}`);
      }
      this.#refusal = refusalWords(error);
      say(`the listen was refused: ${this.#refusal}; none is asked again`);
      return this.onUnwatched([...this.#uris], this.#refusal);
    }
    if (!this.#honoured(subscription.honoredFilter)) {
      say("the listen's acknowledgement honours nothing: the host closes it");
      return await subscription.close();
    }
    this.#open = subscription;
    this.reopen.established();
    subscription.closed.then((cause) => {
      if (cause === "local") return;
      this.#ended(
        subscription,
        cause === "graceful"
          ? "the listen ended with its result"
          : "the listen's stream ended without a result",
      );
    });
  }

  /**
   * Keeps what the acknowledgement honoured, unwatches the resources it
   * left out; whether it honoured anything.
   */
  #honoured(honoured: SubscriptionFilter): boolean {
    const kept = new Set(honoured.resourceSubscriptions ?? []);
    const left = [...this.#uris].filter((uri) => !kept.has(uri));
    for (const flag of this.#lists) {
      if (honoured[flag] === true) continue;
      say(`the listen's acknowledgement left out ${flag}`);
      this.#lists.delete(flag);
    }
    for (const uri of left) this.#uris.delete(uri);
    if (left.length > 0) {
      this.onUnwatched(
        left,
        "the server's acknowledgement of the listen left it out",
      );
    }
    return this.#lists.size > 0 || this.#uris.size > 0;
  }

  /** The open listen ended, or an attempt failed: open it again after the wait. */
  #ended(subscription: McpSubscription | undefined, how: string) {
    if (this.#closed || subscription !== this.#open) return;
    this.#open = undefined;
    this.#reopening = this.reopen.after(how, () => {
      this.#reopening = undefined;
      this.#openAgain();
    });
  }
}
