/**
 * Tests for `Listen` (`listen_stream.ts`) on a client written here, whose
 * `listen` answers as a test says and records what the host did: one
 * listen at a time, a narrowed acknowledgement, one that honours nothing,
 * a refusal never asked again, a listen opened again after its end.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  type Client,
  type McpSubscription,
  ProtocolError,
  type SubscriptionFilter,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { Listen } from "./listen_stream.ts";
import { Reopen } from "./stream_reopen.ts";

type Cause = "local" | "graceful" | "remote";

/**
 * A client whose `listen` acknowledges what `honour` gives for the filter
 * asked (or throws what it throws); `events` records each listen opened and
 * closed, `ends` ends a listen from the server's side.
 */
function fakeClient(honour: (asked: SubscriptionFilter) => SubscriptionFilter) {
  const events: string[] = [];
  const ends: ((cause: Cause) => void)[] = [];
  const listens: SubscriptionFilter[] = [];
  const client = {
    listen(filter: SubscriptionFilter): Promise<McpSubscription> {
      const n = listens.push(filter);
      events.push(`open ${n}`);
      const honoredFilter = honour(filter);
      const closed = Promise.withResolvers<Cause>();
      ends.push(closed.resolve);
      return Promise.resolve({
        honoredFilter,
        closed: closed.promise,
        close() {
          events.push(`close ${n}`);
          closed.resolve("local");
          return Promise.resolve();
        },
      });
    },
  };
  return { client: client as unknown as Client, events, ends, listens };
}

/** A listen on `fake`, with what it unwatched; its lines kept off stderr. */
function listenOn(fake: { client: Client }) {
  const listen = new Listen(fake.client, new Reopen(true));
  const unwatched: [string[], string][] = [];
  listen.onUnwatched = (uris, why) => void unwatched.push([uris, why]);
  return { listen, unwatched };
}

const quiet = () => {
  const error = console.error;
  console.error = () => {};
  return () => void (console.error = error);
};

Deno.test("Listen: asking for more closes the open listen, then opens one with the whole filter", async () => {
  const restore = quiet();
  try {
    const fake = fakeClient((asked) => asked);
    const { listen, unwatched } = listenOn(fake);
    await listen.ask({ toolsListChanged: true });
    await listen.ask({ resourceSubscriptions: ["a://1"] });
    await listen.ask({ resourceSubscriptions: ["a://2"] });
    assert.deepEqual(fake.events, [
      "open 1",
      "close 1",
      "open 2",
      "close 2",
      "open 3",
    ]);
    assert.deepEqual(fake.listens[2], {
      toolsListChanged: true,
      resourceSubscriptions: ["a://1", "a://2"],
    });
    assert.deepEqual(unwatched, []);
    await listen.close();
    assert.deepEqual(fake.events.at(-1), "close 3");
  } finally {
    restore();
  }
});

Deno.test("Listen: what a narrowed acknowledgement left out is unwatched and never asked again; a listen that honours nothing is closed", async () => {
  const restore = quiet();
  try {
    const fake = fakeClient(({ toolsListChanged }) => ({ toolsListChanged }));
    const { listen, unwatched } = listenOn(fake);
    await listen.ask({
      toolsListChanged: true,
      resourceSubscriptions: ["a://1"],
    });
    assert.deepEqual(unwatched, [[
      ["a://1"],
      "the server's acknowledgement of the listen left it out",
    ]]);
    assert.deepEqual(fake.events, ["open 1"]);
    await listen.ask({ resourceSubscriptions: ["a://2"] });
    assert.deepEqual(fake.listens[1], {
      toolsListChanged: true,
      resourceSubscriptions: ["a://2"],
    });
    await listen.close();
    const nothing = fakeClient(() => ({}));
    const empty = listenOn(nothing);
    await empty.listen.ask({ resourceSubscriptions: ["a://1"] });
    assert.deepEqual(nothing.events, ["open 1", "close 1"]);
    assert.deepEqual(empty.unwatched.map(([uris]) => uris), [["a://1"]]);
  } finally {
    restore();
  }
});

Deno.test("Listen: a refused listen is never asked again; every resource asked for, then or later, is unwatched with the server's refusal", async () => {
  const restore = quiet();
  try {
    const fake = fakeClient(() => {
      throw new ProtocolError(-32600, "Listen not permitted");
    });
    const { listen, unwatched } = listenOn(fake);
    await listen.ask({ toolsListChanged: true });
    await listen.ask({ resourceSubscriptions: ["a://1"] });
    const why = "the server refused (error -32600: Listen not permitted)";
    assert.deepEqual(fake.events, ["open 1"]);
    assert.deepEqual(unwatched, [[[], why], [["a://1"], why]]);
  } finally {
    restore();
  }
});

Deno.test("Listen: a listen the server ended is opened again with the same filter once the wait is over, not after a local close", async () => {
  const restore = quiet();
  try {
    const fake = fakeClient((asked) => asked);
    const { listen } = listenOn(fake);
    await listen.ask({ resourceSubscriptions: ["a://1"] });
    const reopened = Promise.withResolvers<void>();
    const listenOnce = fake.client.listen.bind(fake.client);
    fake.client.listen = (filter) => {
      reopened.resolve();
      return listenOnce(filter);
    };
    fake.ends[0]("graceful");
    await reopened.promise;
    assert.deepEqual(fake.listens, [
      { resourceSubscriptions: ["a://1"] },
      { resourceSubscriptions: ["a://1"] },
    ]);
    await listen.close();
    assert.deepEqual(fake.events, ["open 1", "open 2", "close 2"]);
  } finally {
    restore();
  }
});
