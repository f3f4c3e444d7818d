/**
 * Tests for `InlineUpdates` (`inline_updates.ts`), on a transport that
 * goes nowhere: the test hands it the notifications.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { Transport } from "npm:@modelcontextprotocol/client@2.4.0";
import { MAX_CONTENT_CHARS } from "./host_bounds.ts";
import { InlineUpdates } from "./inline_updates.ts";

Deno.test("reference host: InlineUpdates keeps nothing of an update for a resource the conversation never read, and of one it read the latest text, cut", () => {
  const transport: Transport = {
    start: () => Promise.resolve(),
    send: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
  const inline = new InlineUpdates(transport);
  const update = (uri: string, text: string) =>
    transport.onmessage?.({
      jsonrpc: "2.0",
      method: "notifications/resources/updated",
      params: { uri, text },
    });
  for (let n = 0; n < 100; n++) update(`never://read/${n}`, "x".repeat(10_000));
  for (let n = 0; n < 100; n++) {
    const uri = `never://read/${n}`;
    assert.ok(inline.take(uri) === undefined, uri);
  }
  inline.watch("read://a");
  update("read://a", "first");
  update("read://a", `latest ${"y".repeat(MAX_CONTENT_CHARS)}`);
  const kept = inline.take("read://a");
  assert.ok(
    kept ===
      `latest ${"y".repeat(MAX_CONTENT_CHARS - 7)}\n[… 7 more characters]`,
    kept?.slice(-60),
  );
  assert.equal(inline.take("read://a"), undefined);
});
