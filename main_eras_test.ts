/**
 * The lab's two protocol eras end to end, a real MCP SDK v2 client against
 * the lab served in this process: 2025 (a session, subscribe, the GET
 * stream) and 2026-07-28 (discover, a listen stream), and each era's
 * methods, answers and errors, as the client sees them and the lab logs
 * them.
 *
 * ```sh
 * deno test -P main_eras_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { LAB_VERSION, REVIEW_URI, SDK_VERSION } from "./main.ts";
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
  eventually,
  initializeMessage,
  nextResourceUpdate,
  openRawSession,
  postJsonRpc,
  postModern,
  rawPost,
  rawRead,
  rawSubscribe,
  readJsonRpcAnswer,
  readReview,
  reportFor,
  subscribeUntilUpdated,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Both eras, end to end
// ---------------------------------------------------------------------------

Deno.test("2025 era: list, read v1, subscribe, notification, read v2", async () => {
  await using lab = startLab();
  await using client = await connectClient(lab.url, "legacy-flow");
  assert.equal(client.getNegotiatedProtocolVersion(), "2025-11-25");

  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((resource) => resource.uri), [REVIEW_URI]);
  assert.equal(resources[0].mimeType, "text/plain");
  assert.equal(await readReview(client), VERSION_1_TEXT);

  const updated = nextResourceUpdate(client);
  await client.subscribeResource({ uri: REVIEW_URI });
  assert.equal(await updated, REVIEW_URI);
  assert.equal(await readReview(client), VERSION_2_TEXT);

  assertLinesInOrder(lab.lines, [
    "[initialize] client connected",
    "[resources/list] requested",
    `[resources/read] uri=${REVIEW_URI} version=1`,
    `[resources/subscribe] uri=${REVIEW_URI}`,
    `[resource/update] uri=${REVIEW_URI} version=2`,
    `[notification/send] notifications/resources/updated uri=${REVIEW_URI}`,
    `[resources/read] uri=${REVIEW_URI} version=2`,
  ]);
  assert.match(
    lab.lines.find((line) => line.startsWith("[resources/read]"))!,
    /^\[resources\/read\] uri=test:\/\/review\/status version=1 client=legacy-flow\/1\.0\.0 era=2025 protocol=2025-11-25 at=\S+$/,
  );
});

Deno.test("2026-07-28 era: discover, list, read v1, listen, notification, read v2", async () => {
  await using lab = startLab();
  await using client = await connectClient(lab.url, "modern-flow", "auto");
  assert.equal(client.getNegotiatedProtocolVersion(), "2026-07-28");

  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((resource) => resource.uri), [REVIEW_URI]);
  assert.equal(await readReview(client), VERSION_1_TEXT);

  const updated = nextResourceUpdate(client);
  const subscription = await client.listen({
    resourceSubscriptions: [REVIEW_URI, "test://not/served"],
  });
  assert.deepEqual(subscription.honoredFilter, {
    resourceSubscriptions: [REVIEW_URI],
  });
  assert.equal(await updated, REVIEW_URI);
  assert.equal(await readReview(client), VERSION_2_TEXT);
  await subscription.close();

  assertLinesInOrder(lab.lines, [
    "[server/discover] requested",
    "[resources/list] requested",
    `[resources/read] uri=${REVIEW_URI} version=1`,
    `[subscriptions/listen] uris=${REVIEW_URI} ignored=test://not/served`,
    `[resource/update] uri=${REVIEW_URI} version=2`,
    `[notification/send] notifications/resources/updated uri=${REVIEW_URI}`,
    `[resources/read] uri=${REVIEW_URI} version=2`,
  ]);
  assert.ok(
    lab.lines.some((line) =>
      line.includes("client=modern-flow/1.0.0 era=2026-07-28")
    ),
  );
});

Deno.test("/healthz reports versions", async () => {
  await using lab = startLab();
  const response = await fetch(`${lab.base}/healthz`);
  assert.equal(response.status, 200);
  const health = await response.json();
  assert.equal(health.lab, LAB_VERSION);
  assert.equal(health.sdk, SDK_VERSION);
  assert.equal(health.deno, Deno.version.deno);
});

// ---------------------------------------------------------------------------
// Each era's methods, answers and errors
// ---------------------------------------------------------------------------

Deno.test("2025 era: unsubscribe before the delay cancels the update", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.3" });
  await using client = await connectClient(lab.url, "unsubscriber");
  let notified = false;
  client.setNotificationHandler("notifications/resources/updated", () => {
    notified = true;
  });
  await client.subscribeResource({ uri: REVIEW_URI });
  assert.equal(lab.lab.counts().pendingUpdates, 1);
  await client.unsubscribeResource({ uri: REVIEW_URI });
  assert.equal(lab.lab.counts().pendingUpdates, 0);
  await delay(500);
  assert.equal(notified, false);
  assert.equal(await readReview(client), VERSION_1_TEXT);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(`[resources/unsubscribe] uri=${REVIEW_URI}`)
    ),
  );
  assert.ok(!lab.lines.some((line) => line.startsWith("[resource/update]")));
});

for (const mode of ["legacy", "auto"] as const) {
  const who = mode === "legacy"
    ? "2025 era: each session"
    : "2026-07-28 era: each client identity";
  Deno.test(`${who} has its own resource version`, async () => {
    await using lab = startLab();
    await using first = await connectClient(lab.url, `first-${mode}`, mode);
    await subscribeUntilUpdated(first);
    assert.equal(await readReview(first), VERSION_2_TEXT);

    await using second = await connectClient(lab.url, `second-${mode}`, mode);
    assert.equal(await readReview(second), VERSION_1_TEXT);
    assert.equal(await readReview(first), VERSION_2_TEXT);
  });
}

Deno.test("2026-07-28 era: server/discover starts a client's run at version 1", async () => {
  await using lab = startLab();
  {
    await using run = await connectClient(lab.url, "rerun", "auto");
    await subscribeUntilUpdated(run);
    assert.equal(await readReview(run), VERSION_2_TEXT);
  }
  // A listen's close travels as a dropped connection: until the lab has seen
  // it, a discover is taken for another copy's (docs/protocol-eras.md).
  await eventually(
    () => lab.lab.counts().listenStreams === 0,
    "the listen stream still open",
  );
  await using again = await connectClient(lab.url, "rerun", "auto");
  assert.equal(await readReview(again), VERSION_1_TEXT);
});

Deno.test("2026-07-28 era: closing the listen stream cancels its update", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.3" });
  await using client = await connectClient(lab.url, "listen-closer", "auto");
  const subscription = await client.listen({
    resourceSubscriptions: [REVIEW_URI],
  });
  assert.deepEqual(lab.lab.counts(), {
    legacySessions: 0,
    listenStreams: 1,
    pendingUpdates: 1,
    waitingCalls: 0,
  });
  await subscription.close();
  assert.equal(await subscription.closed, "local");
  // The server sees the stream end once the cancel reaches it.
  for (let i = 0; i < 50 && lab.lab.counts().listenStreams > 0; i++) {
    await delay(10);
  }
  assert.deepEqual(lab.lab.counts(), {
    legacySessions: 0,
    listenStreams: 0,
    pendingUpdates: 0,
    waitingCalls: 0,
  });
  await delay(400);
  assert.ok(!lab.lines.some((line) => line.startsWith("[resource/update]")));
  assert.equal(await readReview(client), VERSION_1_TEXT);
});

Deno.test("list methods answer empty lists; unknown tools and prompts are -32602", async (t) => {
  await using lab = startLab();
  for (const mode of ["legacy", "auto"] as const) {
    await t.step(mode, async () => {
      await using client = await connectClient(lab.url, `lists-${mode}`, mode);
      assert.deepEqual((await client.listTools()).tools, []);
      assert.deepEqual((await client.listPrompts()).prompts, []);
      assert.deepEqual(
        (await client.listResourceTemplates()).resourceTemplates,
        [],
      );
      await assert.rejects(
        client.callTool({ name: "test_simple_text", arguments: {} }),
        (error: { code?: number }) => error.code === -32602,
      );
      await assert.rejects(
        client.getPrompt({ name: "test_simple_prompt" }),
        (error: { code?: number }) => error.code === -32602,
      );
    });
  }
});

Deno.test("2025 era: unknown URI is -32002 with data.uri on read and subscribe", async (t) => {
  await using lab = startLab();
  const sessionId = await openRawSession(lab.url);
  for (const method of ["resources/read", "resources/subscribe"]) {
    await t.step(method, async () => {
      const answer = await postJsonRpc(lab.url, {
        jsonrpc: "2.0",
        id: 2,
        method,
        params: { uri: "test://missing" },
      }, { "mcp-session-id": sessionId });
      assert.equal(answer.json.error.code, -32002, method);
      assert.deepEqual(answer.json.error.data, { uri: "test://missing" });
    });
  }
  assert.equal(lab.lab.counts().pendingUpdates, 0);
});

Deno.test("2025 era: the conformance suite's test://watched-resource may be subscribed and unsubscribed, one line each, and counts for nothing", async () => {
  await using lab = startLab();
  await using client = await connectClient(lab.url, "fixture-watcher");
  const fixture = "test://watched-resource";
  assert.deepEqual(await client.subscribeResource({ uri: fixture }), {});
  assert.deepEqual(await client.unsubscribeResource({ uri: fixture }), {});
  await assert.rejects(
    client.readResource({ uri: fixture }),
    { message: `Resource not found: ${fixture}` },
  );
  assertLinesInOrder(lab.lines, [
    `[resources/subscribe] uri=${fixture} fixture=conformance client=fixture-watcher/1.0.0 era=2025 `,
    `[resources/unsubscribe] uri=${fixture} fixture=conformance client=fixture-watcher/1.0.0 era=2025 `,
  ]);
  const entry = reportFor(lab, "fixture-watcher");
  assert.equal(entry.level, 1);
  assert.equal(entry.steps.subscribed, false);
  assert.deepEqual(
    entry.timeline.map((step) => step.kind).filter((kind) =>
      kind !== "stream-opened"
    ),
    ["connect", "read-unknown"],
  );
  assert.equal(lab.lab.counts().pendingUpdates, 0);
  assert.deepEqual((await client.listResources()).resources.map((r) => r.uri), [
    REVIEW_URI,
  ]);
});

Deno.test("2026-07-28 era: unknown URI read is -32602 with data.uri; resources/subscribe is gone", async () => {
  await using lab = startLab();
  const read = await readJsonRpcAnswer(
    await postModern(lab.url, "resources/read", { uri: "test://missing" }, {
      id: 2,
    }),
  );
  assert.equal(read.error.code, -32602);
  assert.deepEqual(read.error.data, { uri: "test://missing" });

  const subscribe = await postModern(lab.url, "resources/subscribe", {
    uri: REVIEW_URI,
  }, { id: 3 });
  assert.equal(subscribe.status, 404);
  assert.equal((await readJsonRpcAnswer(subscribe)).error.code, -32601);
});

Deno.test("2025 era: requests without MCP-Protocol-Version are served", async () => {
  await using lab = startLab();
  const sessionId = await openRawSession(lab.url, "2025-03-26");
  const read = await rawRead(lab.url, sessionId);
  assert.equal(read.status, 200);
  assert.equal(read.json.result.contents[0].text, VERSION_1_TEXT);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(
        `[resources/read] uri=${REVIEW_URI} version=1 client=raw-legacy/0.0.1 era=2025 protocol=2025-03-26`,
      )
    ),
  );
});

Deno.test("2025 era: unknown session is 404, missing session is 400", async () => {
  await using lab = startLab();
  const unknown = await postJsonRpc(lab.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "resources/list",
  }, { "mcp-session-id": "no-such-session" });
  assert.equal(unknown.status, 404);
  assert.match(unknown.json.error.message, /Session not found/);

  const missing = await postJsonRpc(lab.url, {
    jsonrpc: "2.0",
    id: 2,
    method: "resources/list",
  });
  assert.equal(missing.status, 400);
  assert.match(missing.json.error.message, /Mcp-Session-Id header is required/);
});

Deno.test("2025 era: a session that ends before its update leaves no timer", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.2" });
  {
    await using client = await connectClient(lab.url, "early-leaver");
    await client.subscribeResource({ uri: REVIEW_URI });
    assert.equal(lab.lab.counts().pendingUpdates, 1);
    // Closing the client sends DELETE, which ends the session.
    await (client.transport as StreamableHTTPClientTransport)
      .terminateSession();
  }
  assert.deepEqual(lab.lab.counts(), {
    legacySessions: 0,
    listenStreams: 0,
    pendingUpdates: 0,
    waitingCalls: 0,
  });
  await delay(300);
  assert.ok(!lab.lines.some((line) => line.startsWith("[resource/update]")));
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith("[session/end]") && line.includes("reason=delete")
    ),
  );
});

Deno.test("any other path is a plain 404 naming the MCP path", async (t) => {
  await using lab = startLab();
  for (
    const path of [
      "/.well-known/oauth-authorization-server",
      "/.well-known/oauth-protected-resource/mcp",
      "/",
      "/mcpx",
    ]
  ) {
    await t.step(path, async () => {
      const response = await fetch(`${lab.base}${path}`);
      assert.equal(response.status, 404);
      assert.equal(
        await response.text(),
        "Not Found: the MCP endpoint is /mcp\n",
      );
    });
  }
});

Deno.test("2026-07-28 era: GET and DELETE are 405", async (t) => {
  await using lab = startLab();
  for (const method of ["GET", "DELETE"]) {
    await t.step(method, async () => {
      const response = await fetch(lab.url, {
        method,
        headers: { "mcp-protocol-version": "2026-07-28" },
      });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get("allow"), "POST");
      await response.body?.cancel();
    });
  }
});

Deno.test("2025 era: a notification sent with no GET stream open is reported as lost", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.05" });
  const sessionId = await openRawSession(lab.url);
  const subscribe = await rawSubscribe(lab.url, sessionId);
  assert.equal(subscribe.status, 200);
  await subscribe.body?.cancel();
  await delay(200);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(
        `[notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=false reason="no GET stream open"`,
      )
    ),
    lab.lines.join("\n"),
  );
});

Deno.test("2025 era: the SDK client's notification is logged as delivered on its GET stream", async () => {
  await using lab = startLab();
  await using client = await connectClient(lab.url, "stream-opener");
  const updated = nextResourceUpdate(client);
  await client.subscribeResource({ uri: REVIEW_URI });
  await updated;
  assertLinesInOrder(lab.lines, [
    "[stream/get] opened session=",
    `[notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=true`,
  ]);
});

// ---------------------------------------------------------------------------
// One-era labs (--era): the other era answered as a server of one era does
// ---------------------------------------------------------------------------

/** The `[request/rejected]` lines a lab logged, without their times. */
const refusalLines = (lines: string[]) =>
  lines.filter((line) => line.startsWith("[request/rejected]"))
    .map((line) => line.replace(/ at=\S+$/, ""));

/** An SDK client in `mode` reaches level 6 in the one era the lab serves. */
async function reachesTheTop(
  lab: ReturnType<typeof startLab>,
  name: string,
  mode: "auto" | "legacy",
  era: string,
) {
  await using client = await connectClient(lab.url, name, mode);
  assert.equal(client.getNegotiatedProtocolVersion(), era);
  assert.equal(await readReview(client), VERSION_1_TEXT);
  await subscribeUntilUpdated(client);
  assert.equal(await readReview(client), VERSION_2_TEXT);
  const entry = reportFor(lab, name);
  assert.equal(entry.era, era === "2026-07-28" ? era : "2025");
  assert.equal(entry.level, 6);
}

Deno.test("--era 2026-07-28: the falling-back client reaches 6; a 2025 client fails as on the SDK's legacy: 'reject' server", async () => {
  await using lab = startLab({ MCP_TEST_ERA: "2026-07-28" });
  await reachesTheTop(lab, "modern-only-auto", "auto", "2026-07-28");
  await assert.rejects(
    connectClient(lab.url, "modern-only-legacy", "legacy"),
    (error: Error) => {
      assert.equal(
        error.message,
        'Error POSTing to endpoint: {"jsonrpc":"2.0","error":{"code":-32022,"message":"Unsupported protocol version: 2025-11-25","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}},"id":0}',
      );
      return true;
    },
  );
  assert.deepEqual(refusalLines(lab.lines), [
    '[request/rejected] POST /mcp status=400 code=-32022 message="Unsupported protocol version: 2025-11-25" client=modern-only-legacy/1.0.0 era=2025 protocol=2025-11-25',
  ]);
  assert.equal(lab.lab.report().scenario.era, "2026-07-28");
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(
    markdown,
    /^Lab .*; trigger `subscribe`, .*, era 2026-07-28 only\.$/m,
  );
  assert.match(
    lab.lab.report().reproduce?.command ?? "",
    / --era=2026-07-28( |$)/,
  );
});

Deno.test("--era 2026-07-28: initialize, a GET stream and a session's request get the SDK's exact refusals, one line each", async () => {
  await using lab = startLab({ MCP_TEST_ERA: "2026-07-28" });
  const initialize = await postJsonRpc(
    lab.url,
    initializeMessage({ name: "raw", version: "1" }, "2025-06-18"),
  );
  assert.equal(initialize.status, 400);
  assert.deepEqual(initialize.json, {
    jsonrpc: "2.0",
    id: 1,
    error: {
      code: -32022,
      message: "Unsupported protocol version: 2025-06-18",
      data: { supported: ["2026-07-28"], requested: "2025-06-18" },
    },
  });
  const get = await fetch(lab.url, {
    headers: { accept: "text/event-stream" },
  });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  assert.deepEqual(await get.json(), {
    jsonrpc: "2.0",
    id: null,
    error: { code: -32000, message: "Method not allowed." },
  });
  const deleted = await fetch(lab.url, { method: "DELETE" });
  assert.equal(deleted.status, 405);
  assert.equal((await deleted.json()).error.message, "Method not allowed.");
  const initialized = await rawPost(
    lab.url,
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  );
  assert.equal(initialized.status, 202);
  assert.equal(await initialized.text(), "");
  const inSession = await postJsonRpc(
    lab.url,
    { jsonrpc: "2.0", id: 2, method: "resources/list" },
    { "mcp-session-id": "a-2025-session" },
  );
  assert.equal(inSession.status, 400);
  assert.deepEqual(inSession.json.error, {
    code: -32022,
    message:
      "Unsupported protocol version: the request did not name a protocol version",
    data: { supported: ["2026-07-28"] },
  });
  assert.deepEqual(refusalLines(lab.lines), [
    '[request/rejected] POST /mcp status=400 code=-32022 message="Unsupported protocol version: 2025-06-18" client=raw/1 era=2025 protocol=2025-06-18',
    '[request/rejected] GET /mcp status=405 code=-32000 message="Method not allowed."',
    '[request/rejected] DELETE /mcp status=405 code=-32000 message="Method not allowed."',
    '[request/rejected] POST /mcp status=400 code=-32022 message="Unsupported protocol version: the request did not name a protocol version"',
  ]);
  assert.equal(
    lab.lines.filter((line) => line.startsWith("[mcp/error]")).length,
    0,
  );
  assert.equal(lab.lab.counts().legacySessions, 0);
});

Deno.test("--era 2025: the falling-back client reaches 6 in 2025; a client pinned to 2026-07-28 fails", async () => {
  await using lab = startLab({ MCP_TEST_ERA: "2025" });
  await reachesTheTop(lab, "legacy-only-auto", "auto", "2025-11-25");
  await assert.rejects(
    connectClient(lab.url, "legacy-only-pinned", { pin: "2026-07-28" }),
    (error: Error) => {
      assert.equal(
        error.message,
        "Version negotiation failed: the server did not offer pinned protocol version 2026-07-28 via server/discover (no fallback in pin mode)",
      );
      return true;
    },
  );
  const refused =
    '[request/rejected] POST /mcp status=400 code=-32000 message="Bad Request: Mcp-Session-Id header is required; send initialize first"';
  assert.deepEqual(refusalLines(lab.lines), [refused, refused]);
  assert.equal(lab.lab.report().scenario.era, "2025");
  assert.match(lab.lab.report().reproduce?.command ?? "", / --era=2025( |$)/);
});

Deno.test("--era 2025: server/discover and listens are a 2025 server's answers: 400 without a session, -32601 in one", async () => {
  await using lab = startLab({ MCP_TEST_ERA: "2025" });
  const discover = await postModern(lab.url, "server/discover", {});
  assert.equal(discover.status, 400);
  assert.deepEqual(await readJsonRpcAnswer(discover), {
    jsonrpc: "2.0",
    id: null,
    error: {
      code: -32000,
      message:
        "Bad Request: Mcp-Session-Id header is required; send initialize first",
    },
  });
  const get = await fetch(lab.url, {
    headers: {
      accept: "text/event-stream",
      "mcp-protocol-version": "2026-07-28",
    },
  });
  assert.equal(get.status, 400);
  await get.body?.cancel();
  const sessionId = await openRawSession(lab.url);
  for (const method of ["server/discover", "subscriptions/listen"]) {
    const inSession = await postJsonRpc(
      lab.url,
      { jsonrpc: "2.0", id: 7, method, params: {} },
      { "mcp-session-id": sessionId },
    );
    assert.equal(inSession.status, 200);
    assert.deepEqual(inSession.json, {
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32601, message: "Method not found" },
    });
  }
  const lines = refusalLines(lab.lines);
  assert.equal(lines.length, 4);
  assert.match(lines[1], /^\[request\/rejected\] GET \/mcp status=400 /);
  assert.match(
    lines[3],
    /^\[request\/rejected\] status=200 code=-32601 message="Method not found" client=raw-legacy\/0\.0\.1 era=2025 /,
  );
});
