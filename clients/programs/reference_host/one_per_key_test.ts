/**
 * Tests for `OnePerKey` (`one_per_key.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { OnePerKey } from "./one_per_key.ts";

Deno.test("reference host: OnePerKey runs one task per key at a time, and once more after it however often it was asked meanwhile", async () => {
  const keys = new OnePerKey<string>();
  const started: string[] = [];
  const firstA = Promise.withResolvers<void>();
  const task = (key: string) => () => {
    started.push(key);
    return started.length === 1 ? firstA.promise : Promise.resolve();
  };
  keys.run("a", task("a"));
  for (let n = 0; n < 1000; n++) keys.run("a", task("a"));
  // Another key runs at once, beside it.
  keys.run("b", task("b"));
  assert.deepEqual(started, ["a", "b"]);
  const settled = keys.settled();
  firstA.resolve();
  await settled;
  assert.deepEqual(started, ["a", "b", "a"]);
  // Settled, it runs again at once when asked.
  keys.run("a", task("a"));
  await keys.settled();
  assert.deepEqual(started, ["a", "b", "a", "a"]);
});
