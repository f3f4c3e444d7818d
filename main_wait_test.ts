/**
 * The lab's wait tool (`--enable-wait-tool`): an update reaches a client
 * that cannot subscribe, in both eras and over stdio; its timeout, its
 * progress notifications, every way a wait ends, and `--trigger wait`.
 *
 * ```sh
 * deno test -P main_wait_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { ConfigError, lineValue, loadConfig, REVIEW_URI } from "./main.ts";
import {
  prepareTestEnvironment,
  startLab,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  connectClient,
  delay,
  eventually,
  initializeMessage,
  JSON_HEADERS,
  nextResourceUpdate,
  openRawSession,
  postModern,
  rawPost,
  readJsonRpcAnswer,
  readReview,
  reportFor,
  stdioLab,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The wait tool: an update reaches a client that cannot subscribe
// ---------------------------------------------------------------------------

/** The text of a tool answer. */
function toolText(result: unknown): string {
  const { content } = result as { content: { type: string; text: string }[] };
  return content.map((block) => block.text).join("\n");
}

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`wait tool (${era}): blocks until this client's update and returns version 2; the report says it came that way`, async () => {
    await using lab = startLab({
      MCP_TEST_ENABLE_WAIT_TOOL: "true",
      MCP_TEST_UPDATE_DELAY_SECONDS: "0.3",
    });
    await using client = await connectClient(lab.url, `waiter-${mode}`, mode);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((tool) => tool.name), [
      "wait_for_review_update",
    ]);
    assert.equal(await readReview(client), VERSION_1_TEXT);
    const started = performance.now();
    const answer = await client.callTool({
      name: "wait_for_review_update",
      arguments: {},
    });
    assert.ok(performance.now() - started >= 250);
    assert.equal(toolText(answer), VERSION_2_TEXT);
    assert.ok(
      lab.lines.some((line) =>
        /^\[tools\/call\] name=wait_for_review_update since=1 waited=0\.\ds version=2 client=waiter-/
          .test(line)
      ),
      lab.lines.join("\n"),
    );
    const entry = lab.lab.report().clients.find((c) =>
      c.name === `waiter-${mode}`
    )!;
    // The wait started the update series, whose notification still goes
    // out the native way: a 2025 client's open GET stream gets it (level 5
    // natively); a 2026-07-28 client without a listen stream does not.
    const native = era === "2025" ? 5 : 3;
    assert.equal(entry.level, native);
    assert.equal(entry.steps.notificationDelivered, era === "2025");
    assert.equal(entry.steps.rereadAfterNotification, false);
    assert.deepEqual(entry.waitTool.level, 6);
    assert.equal(entry.waitTool.calls, 1);
    assert.match(
      entry.missing,
      /; the update \(version 2\) reached it through the wait_for_review_update tool instead \(level 6 via wait tool\)$/,
    );
    const markdown = await (await fetch(`${lab.base}/report.md`)).text();
    assert.match(
      markdown,
      new RegExp(
        `^\\| waiter-${mode} \\|.*\\| ${
          era === "2025" ? "✅" : "via wait tool"
        } \\| via wait tool \\| not observable \\| ${native} \\(6 via wait tool\\) \\|`,
        "m",
      ),
    );
    assert.match(
      markdown,
      /C->>L: tools\/call wait_for_review_update since v1, answered v2 after 0\.\ds/,
    );
    assert.equal(lab.lab.counts().waitingCalls, 0);
  });
}

/** Calls the wait tool in a raw 2025 session (no GET stream); the answer's text. */
async function rawWait(
  url: URL,
  sessionId: string,
  args: Record<string, unknown>,
  signal?: AbortSignal,
) {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...JSON_HEADERS, "mcp-session-id": sessionId },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "wait_for_review_update", arguments: args },
    }),
    signal,
  });
  return await readJsonRpcAnswer(response, 10_000) as {
    result?: unknown;
    error?: { code: number; message: string };
  };
}

Deno.test("wait tool (2025): no GET stream needed; at once when already newer; the timeout is text, not an error", async () => {
  await using lab = startLab({
    MCP_TEST_ENABLE_WAIT_TOOL: "true",
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
  });
  const sessionId = await openRawSession(lab.url);
  const first = await rawWait(lab.url, sessionId, { since_version: 0 });
  assert.equal(toolText(first.result), VERSION_1_TEXT);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(
        "[tools/call] name=wait_for_review_update since=0 waited=0s version=1 ",
      )
    ),
  );
  const second = await rawWait(lab.url, sessionId, {});
  assert.equal(toolText(second.result), VERSION_2_TEXT);
  const third = await rawWait(lab.url, sessionId, { timeout_seconds: 0.3 });
  assert.equal(
    toolText(third.result),
    `no update within 0.3 s: version 2 is still current\n${VERSION_2_TEXT}`,
  );
  assert.ok(
    lab.lines.some((line) =>
      /^\[tools\/call\] name=wait_for_review_update since=2 waited=0\.\ds version=2 ended=timeout /
        .test(line)
    ),
  );
  const bad = await rawWait(lab.url, sessionId, { timeout_seconds: 601 });
  assert.equal(bad.error?.code, -32602);
  assert.match(
    bad.error!.message,
    /^Invalid arguments for wait_for_review_update: /,
  );
  assert.equal(lab.lab.counts().waitingCalls, 0);
});

Deno.test("wait tool: progress notifications with a progressToken, none without", async () => {
  await using lab = startLab({
    MCP_TEST_ENABLE_WAIT_TOOL: "true",
    MCP_TEST_UPDATE_DELAY_SECONDS: "30",
  });
  await using client = await connectClient(lab.url, "patient");
  const progress: number[] = [];
  await client.callTool(
    {
      name: "wait_for_review_update",
      arguments: { since_version: 1, timeout_seconds: 1 },
    },
    { onprogress: (update) => progress.push(update.progress) },
  );
  assert.ok(progress.length >= 3, `progress: ${progress}`);
  // The log line says a token came and how many notifications went out.
  assert.ok(
    lab.lines.some((line) =>
      new RegExp(
        `^\\[tools/call\\] name=wait_for_review_update since=1 waited=1(\\.\\d)?s version=1 ended=timeout progress=${progress.length} `,
      ).test(line)
    ),
    lab.lines.join("\n"),
  );
  assert.ok(
    progress.every((seconds, i) => i === 0 || seconds > progress[i - 1]),
  );
  let unasked = 0;
  client.setNotificationHandler("notifications/progress", () => {
    unasked++;
  });
  await client.callTool({
    name: "wait_for_review_update",
    arguments: { since_version: 1, timeout_seconds: 0.6 },
  });
  assert.equal(unasked, 0);
  const untokened = lab.lines.filter((line) =>
    line.startsWith(
      "[tools/call] name=wait_for_review_update since=1 waited=0.6s",
    )
  );
  assert.equal(untokened.length, 1, lab.lines.join("\n"));
  assert.ok(!untokened[0].includes("progress="));
  assert.equal(lab.lab.counts().waitingCalls, 0);
});

Deno.test("wait tool: a cancel, a client that leaves, a session end and shutdown each end the wait and leave no timer", async () => {
  await using lab = startLab({
    MCP_TEST_ENABLE_WAIT_TOOL: "true",
    MCP_TEST_UPDATE_DELAY_SECONDS: "60",
  });
  const waiting = () => lab.lab.counts().waitingCalls;
  const endedWith = (why: string) =>
    lab.lines.filter((line) =>
      line.startsWith("[tools/call] name=wait_for_review_update") &&
      line.includes(` ended=${lineValue(why)} `)
    ).length;

  // notifications/cancelled, from the SDK client's abort.
  await using client = await connectClient(lab.url, "canceller");
  const abort = new AbortController();
  const call = client.callTool(
    { name: "wait_for_review_update", arguments: { since_version: 1 } },
    { signal: abort.signal },
  );
  await eventually(() => waiting() === 1, "one wait in progress");
  abort.abort();
  await call.catch(() => {});
  await eventually(() => waiting() === 0, "the cancelled wait ended");
  assert.equal(endedWith("cancelled"), 1, lab.lines.join("\n"));

  // A client that drops its connection mid-wait.
  const sessionId = await openRawSession(lab.url);
  const dropped = new AbortController();
  const leaving = rawWait(
    lab.url,
    sessionId,
    { since_version: 1 },
    dropped.signal,
  );
  await eventually(() => waiting() === 1, "a raw wait in progress");
  dropped.abort();
  await leaving.catch(() => {});
  await eventually(() => waiting() === 0, "the abandoned wait ended");
  assert.equal(endedWith("cancelled"), 2, lab.lines.join("\n"));

  // The session ends (DELETE) while its wait is in progress.
  const ending = rawWait(lab.url, sessionId, { since_version: 1 });
  await eventually(() => waiting() === 1, "a wait in a session");
  const deleted = await fetch(lab.url, {
    method: "DELETE",
    headers: { "mcp-session-id": sessionId },
  });
  await deleted.body?.cancel();
  await ending.catch(() => {});
  await eventually(() => waiting() === 0, "the session's wait ended");
  assert.equal(endedWith("session ended"), 1, lab.lines.join("\n"));

  // Shutdown.
  const other = await openRawSession(lab.url);
  const closing = rawWait(lab.url, other, { since_version: 1 });
  await eventually(() => waiting() === 1, "a wait at shutdown");
  await lab.lab.close();
  await closing.catch(() => {});
  assert.equal(waiting(), 0);
  // Shutdown ends the session first, and the session its wait.
  assert.equal(endedWith("session ended"), 2, lab.lines.join("\n"));
});

Deno.test("wait tool over stdio: version 2 through the tool", async () => {
  const client = new Client({ name: "stdio-waiter", version: "1.0.0" });
  await client.connect(
    stdioLab("ignore", "--enable-wait-tool", "--delay", "0.2"),
  );
  assert.equal(await readReview(client), VERSION_1_TEXT);
  const answer = await client.callTool({
    name: "wait_for_review_update",
    arguments: {},
  });
  assert.equal(toolText(answer), VERSION_2_TEXT);
  await client.close();
});

Deno.test("wait tool (2025): a session waiting on the tool is neither idle nor evictable", async () => {
  await using lab = startLab({
    MCP_TEST_ENABLE_WAIT_TOOL: "true",
    MCP_TEST_UPDATE_DELAY_SECONDS: "60",
    MCP_TEST_SESSION_TTL_SECONDS: "0.2",
    MCP_TEST_MAX_SESSIONS: "1",
  });
  const sessionId = await openRawSession(lab.url);
  const waiting = rawWait(lab.url, sessionId, {
    since_version: 1,
    timeout_seconds: 0.8,
  });
  await eventually(() => lab.lab.counts().waitingCalls === 1, "a wait");
  const refused = await rawPost(
    lab.url,
    JSON.stringify(initializeMessage({ name: "newcomer", version: "1" })),
  );
  assert.equal(refused.status, 503);
  await refused.body?.cancel();
  const answer = await waiting;
  assert.equal(
    toolText(answer.result),
    `no update within 0.8 s: version 1 is still current\n${VERSION_1_TEXT}`,
  );
  // The session ends as idle only once the wait is over.
  const waited = lab.lines.findIndex((line) =>
    line.startsWith("[tools/call] name=wait_for_review_update")
  );
  assert.ok(waited >= 0);
  assert.ok(
    !lab.lines.slice(0, waited).some((line) =>
      line.startsWith("[session/end]")
    ),
    lab.lines.join("\n"),
  );
});

Deno.test("wait tool (2026-07-28): a client waiting on the tool is never evicted, so 100 strangers past the cap cannot cut its wait under --trigger wait", async () => {
  await using lab = startLab({
    MCP_TEST_ENABLE_WAIT_TOOL: "true",
    MCP_TEST_UPDATE_TRIGGER: "wait",
    MCP_TEST_UPDATE_DELAY_SECONDS: "4",
    MCP_TEST_MAX_SESSIONS: "2",
  });
  await using client = await connectClient(lab.url, "waiter", "auto");
  const waiting = client.callTool({
    name: "wait_for_review_update",
    arguments: { since_version: 1, timeout_seconds: 30 },
  });
  await eventually(() => lab.lab.counts().waitingCalls === 1, "a wait");
  for (let i = 0; i < 100; i++) {
    const read = await postModern(lab.url, "resources/read", {
      uri: REVIEW_URI,
    }, { client: `stranger-${i}` });
    assert.equal(read.status, 200);
    await read.body?.cancel();
  }
  assert.equal(toolText(await waiting), VERSION_2_TEXT);
  assert.equal(reportFor(lab, "waiter").ended, null);
  const evicted = lab.lines.filter((line) =>
    line.startsWith("[session/end] reason=evicted")
  );
  assert.equal(evicted.length, 99, evicted.join("\n"));
  assert.ok(!evicted.some((line) => line.includes("client=waiter/")));
});

Deno.test("--trigger wait: only a wait tool call starts a client's updates, and the lab refuses it without the tool", async () => {
  assert.throws(
    () => loadConfig({ MCP_TEST_UPDATE_TRIGGER: "wait" }),
    new ConfigError(
      "--trigger wait (MCP_TEST_UPDATE_TRIGGER) needs --enable-wait-tool (MCP_TEST_ENABLE_WAIT_TOOL): only its calls would start updates",
    ),
  );
  await using lab = startLab({
    MCP_TEST_UPDATE_TRIGGER: "wait",
    MCP_TEST_ENABLE_WAIT_TOOL: "true",
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
  });
  await using client = await connectClient(lab.url, "wait-trigger", "auto");
  assert.equal(await readReview(client), VERSION_1_TEXT);
  const updated = nextResourceUpdate(client);
  const listen = await client.listen({ resourceSubscriptions: [REVIEW_URI] });
  await delay(600);
  assert.equal(lab.lab.counts().pendingUpdates, 0);
  assert.equal(await readReview(client), VERSION_1_TEXT);
  const answer = await client.callTool({
    name: "wait_for_review_update",
    arguments: { timeout_seconds: 5 },
  });
  assert.equal(toolText(answer), VERSION_2_TEXT);
  assert.equal(await updated, REVIEW_URI);
  await listen.close();
  assert.equal(reportFor(lab, "wait-trigger").level, 5);
});
