/**
 * The lab's scenario switches and what each does to a client's flow and
 * verdict: the status words, a second MCP path, when the update starts
 * (`--trigger subscribe`, `read`, `connect`), a series of updates,
 * `list_changed` after the update, and the tool that reads the resource.
 *
 * ```sh
 * deno test -P main_scenarios_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { REVIEW_URI } from "./main.ts";
import {
  prepareTestEnvironment,
  startLab,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  assertLinesInOrder,
  connectClient,
  delay,
  nextResourceUpdate,
  readReview,
  reportFor,
  subscribeUntilUpdated,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Scenario switches: status words, paths, triggers, series, the read tool
// ---------------------------------------------------------------------------

Deno.test("status words come from configuration", async () => {
  await using lab = startLab({
    MCP_TEST_INITIAL_STATUS: "queued",
    MCP_TEST_UPDATED_STATUS: "approved",
  });
  await using client = await connectClient(lab.url, "status-words");
  assert.match(await readReview(client), /^status: queued\nversion: 1\n/);
  const updated = nextResourceUpdate(client);
  await client.subscribeResource({ uri: REVIEW_URI });
  await updated;
  assert.match(await readReview(client), /^status: approved\nversion: 2\n/);
});

Deno.test("MCP_TEST_PATH adds a second path to the same lab", async () => {
  await using lab = startLab({ MCP_TEST_PATH: "/mcp/subscribe-probe" });
  await using client = await connectClient(
    new URL(`${lab.base}/mcp/subscribe-probe`),
    "extra-path",
  );
  assert.equal(await readReview(client), VERSION_1_TEXT);
  await using modern = await connectClient(
    new URL(`${lab.base}/mcp/subscribe-probe`),
    "extra-path-modern",
    "auto",
  );
  assert.equal(await readReview(modern), VERSION_1_TEXT);
  assert.equal(lab.lab.counts().legacySessions, 1);
});

Deno.test("list_changed follows the update when MCP_TEST_SEND_LIST_CHANGED is on", async () => {
  await using lab = startLab({ MCP_TEST_SEND_LIST_CHANGED: "yes" });
  await using client = await connectClient(lab.url, "list-changed");
  const listChanged = new Promise<void>((resolve) =>
    client.setNotificationHandler(
      "notifications/resources/list_changed",
      () => resolve(),
    )
  );
  await client.subscribeResource({ uri: REVIEW_URI });
  await listChanged;
  assertLinesInOrder(lab.lines, [
    `[notification/send] notifications/resources/updated uri=${REVIEW_URI}`,
    "[notification/send] notifications/resources/list_changed",
  ]);
});

Deno.test("MCP_TEST_UPDATE_TRIGGER=read (2025): a client that never subscribed is notified", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_TRIGGER: "read" });
  await using client = await connectClient(lab.url, "unsubscribed-reader");
  const updated = nextResourceUpdate(client);
  assert.equal(await readReview(client), VERSION_1_TEXT);
  assert.equal(await updated, REVIEW_URI);
  assert.equal(await readReview(client), VERSION_2_TEXT);
  const entry = reportFor(lab, "unsubscribed-reader");
  assert.equal(entry.trigger, "read");
  assert.equal(entry.steps.subscribed, false);
  assert.equal(entry.steps.notificationDelivered, true);
  assert.equal(entry.level, 6);
  assert.ok(
    !lab.lines.some((line) => line.startsWith("[resources/subscribe]")),
  );
});

Deno.test("MCP_TEST_UPDATE_TRIGGER=read (2026-07-28): a client listening only for list changes hears of the change", async () => {
  await using lab = startLab({
    MCP_TEST_UPDATE_TRIGGER: "read",
    MCP_TEST_SEND_LIST_CHANGED: "true",
  });
  await using client = await connectClient(lab.url, "list-watcher", "auto");
  const listChanged = new Promise<void>((resolve) =>
    client.setNotificationHandler(
      "notifications/resources/list_changed",
      () => resolve(),
    )
  );
  const subscription = await client.listen({ resourcesListChanged: true });
  assert.equal(await readReview(client), VERSION_1_TEXT);
  await listChanged;
  assert.equal(await readReview(client), VERSION_2_TEXT);
  await subscription.close();
  const entry = reportFor(lab, "list-watcher");
  assert.equal(entry.steps.subscribed, false);
  assert.equal(entry.steps.notificationDelivered, true);
  assert.equal(entry.level, 6);
  // Nothing outside the filter: the resource update itself was not sent.
  assertLinesInOrder(lab.lines, [
    `[notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=false reason="no listen stream watches ${REVIEW_URI}"`,
    "[notification/send] notifications/resources/list_changed delivered=true",
  ]);
});

Deno.test("MCP_TEST_UPDATE_TRIGGER=connect starts the update at initialize", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_TRIGGER: "connect" });
  await using client = await connectClient(lab.url, "connector");
  const updated = nextResourceUpdate(client);
  assert.equal(await updated, REVIEW_URI);
  assert.equal(await readReview(client), VERSION_2_TEXT);
});

Deno.test("MCP_TEST_UPDATE_COUNT: a series of updates, versions 2 to 4", async () => {
  await using lab = startLab({
    MCP_TEST_UPDATE_COUNT: "3",
    MCP_TEST_UPDATE_INTERVAL_SECONDS: "0.1",
  });
  await using client = await connectClient(lab.url, "keeper-upper");
  let notifications = 0;
  const three = new Promise<void>((resolve) =>
    client.setNotificationHandler("notifications/resources/updated", () => {
      if (++notifications === 3) resolve();
    })
  );
  await client.subscribeResource({ uri: REVIEW_URI });
  await three;
  assert.match(await readReview(client), /^status: reviewed\nversion: 4\n/);
  assertLinesInOrder(lab.lines, [
    `[resource/update] uri=${REVIEW_URI} version=2`,
    `[resource/update] uri=${REVIEW_URI} version=3`,
    `[resource/update] uri=${REVIEW_URI} version=4`,
    `[resources/read] uri=${REVIEW_URI} version=4`,
  ]);
  await delay(200);
  assert.equal(reportFor(lab, "keeper-upper").updatesSent, 3);
  assert.equal(lab.lab.counts().pendingUpdates, 0);
});

Deno.test("unsubscribing in the middle of an update series stops it", async () => {
  await using lab = startLab({
    MCP_TEST_UPDATE_COUNT: "5",
    MCP_TEST_UPDATE_INTERVAL_SECONDS: "0.2",
  });
  await using client = await connectClient(lab.url, "quitter");
  await subscribeUntilUpdated(client);
  await client.unsubscribeResource({ uri: REVIEW_URI });
  await delay(500);
  assert.equal(reportFor(lab, "quitter").updatesSent, 1);
  assert.equal(lab.lab.counts().pendingUpdates, 0);
  assert.equal(await readReview(client), VERSION_2_TEXT);
});

Deno.test("MCP_TEST_ENABLE_TOOL: get_review_status reads the same text, recorded as a tool read", async () => {
  await using lab = startLab({ MCP_TEST_ENABLE_TOOL: "true" });
  await using client = await connectClient(lab.url, "tool-user");
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name), ["get_review_status"]);
  assert.equal(tools[0].annotations?.readOnlyHint, true);
  const result = await client.callTool({ name: "get_review_status" });
  assert.deepEqual(result.content, [{ type: "text", text: VERSION_1_TEXT }]);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(
        `[tools/call] name=get_review_status uri=${REVIEW_URI} version=1 client=tool-user/1.0.0`,
      )
    ),
  );
  const entry = reportFor(lab, "tool-user");
  assert.equal(entry.readVia, "tool");
  assert.equal(entry.level, 3);
  assert.equal(
    entry.missing,
    `never subscribed to ${REVIEW_URI} (resources/subscribe) (through the get_review_status tool)`,
  );
});
