/**
 * Tests for the servers table (`servers.ts`): the probe, run as the table
 * runs it, against the reference everything server, installed from npm at
 * its pinned version into the harness's cache on first run.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  EVERYTHING_URI,
  installEverything,
  runProbe,
  startEverythingHttp,
} from "./servers.ts";
import { prepareTestEnvironment } from "./testdata/fixtures.ts";

prepareTestEnvironment();

const PROBE_PATH = new URL("../probe.ts", import.meta.url).pathname;

Deno.test("the reference everything server notifies, but its document never changes: level 5 over HTTP and stdio", async (t) => {
  const entry = await installEverything();
  const everything = await startEverythingHttp(entry);
  const targets = {
    HTTP: ["--url", everything.url],
    stdio: ["--stdio", "--", "node", entry, "stdio"],
  };
  try {
    for (const [transport, target] of Object.entries(targets)) {
      await t.step(transport, async () => {
        const result = await runProbe(PROBE_PATH, [
          "--uri",
          EVERYTHING_URI,
          "--call",
          "toggle-subscriber-updates",
          ...target,
        ]);
        assert.equal(result.era, "2025");
        assert.equal(result.server?.name, "mcp-servers/everything");
        assert.deepEqual(result.capabilities, {
          subscribe: true,
          listChanged: true,
        });
        assert.equal(result.resourceFound, true);
        assert.equal(result.subscribed, true);
        assert.deepEqual(result.call, {
          name: "toggle-subscriber-updates",
          ok: true,
        });
        assert.equal(result.updates.length, 1);
        assert.equal(result.updates[0].uri, EVERYTHING_URI);
        assert.equal(result.updates[0].changed, false);
        assert.equal(result.level, 5);
        assert.equal(result.errorCode, "reread-unchanged");
        assert.equal(result.exitStatus, 17);
      });
    }
  } finally {
    await everything.stop();
  }
});
