/**
 * The lab's scenario switches and what each does to a client's flow and
 * verdict: the status words, a second MCP path, when the update starts
 * (`--trigger subscribe`, `read`, `connect`), a series of updates,
 * `list_changed` after the update, the tool that reads the resource, and
 * watches refused past `--max-watches` (both eras, HTTP and stdio).
 *
 * ```sh
 * deno test -P main_scenarios_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
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
  eventually,
  initializeMessage,
  labCommand,
  linesOf,
  modernMeta,
  nextResourceUpdate,
  openRawSession,
  postModern,
  rawSubscribe,
  readJsonRpcAnswer,
  readReview,
  reportFor,
  stdioClient,
  subscribeUntilUpdated,
  within,
} from "./testdata/lab_clients.ts";
import { MAIN_PATH } from "./launch.ts";

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

// ---------------------------------------------------------------------------
// Refused watches: --max-watches, both eras, HTTP and stdio
// ---------------------------------------------------------------------------

/** The TypeScript SDK's answer past its `maxSubscriptions`, word for word. */
const WATCH_LIMIT = { code: -32603, message: "Subscription limit reached" };

const ERAS = { "2025": "legacy", "2026-07-28": "auto" } as const;

/** Watches `uri` the client's era's way: a subscribe, or a listen left open. */
function watch(client: Client, uri = REVIEW_URI): Promise<unknown> {
  return client.getNegotiatedProtocolVersion() === "2026-07-28"
    ? client.listen({ resourceSubscriptions: [uri] })
    : client.subscribeResource({ uri });
}

/** The watch was refused with the SDK's code and message, exactly. */
async function assertWatchRefused(watching: Promise<unknown>) {
  await assert.rejects(watching, (error: Error & { code?: number }) => {
    assert.deepEqual(
      { code: error.code, message: error.message },
      WATCH_LIMIT,
    );
    return true;
  });
}

/** The `[request/rejected]` lines a client's refused watches left. */
const refusalLines = (lines: string[], name: string) =>
  lines.filter((line) =>
    line.startsWith("[request/rejected]") &&
    line.includes(' code=-32603 message="Subscription limit reached" ') &&
    line.includes(` client=${name}/1.0.0 `)
  );

/** What the verdict says a client that was refused its only watch never did. */
const neverWatched = (era: string) =>
  era === "2025"
    ? `never subscribed to ${REVIEW_URI} (resources/subscribe)`
    : `never opened subscriptions/listen for ${REVIEW_URI}`;

Deno.test("MCP_TEST_MAX_WATCHES=0 (HTTP): the first subscribe (2025) and the first listen (2026-07-28) are refused with the SDK's subscription limit, one line each; the verdict, report and reproduce command say so", async (t) => {
  await using lab = startLab({ MCP_TEST_MAX_WATCHES: "0" });
  for (const [era, mode] of Object.entries(ERAS)) {
    await t.step(era, async () => {
      const name = `refused-${mode}`;
      await using client = await connectClient(lab.url, name, mode);
      assert.equal(await readReview(client), VERSION_1_TEXT);
      await assertWatchRefused(watch(client));
      // The client is refused a watch, not served less: it still reads.
      assert.equal(await readReview(client), VERSION_1_TEXT);
      assert.equal(refusalLines(lab.lines, name).length, 1);
      const entry = reportFor(lab, name);
      assert.equal(entry.level, 3);
      assert.equal(entry.missing, neverWatched(era));
    });
  }
  const report = lab.lab.report();
  assert.equal(report.scenario.maxWatches, 0);
  assert.match(report.reproduce?.command ?? "", / --max-watches=0( |$)/);
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(markdown, /, at most 0 watches\./);
});

Deno.test("MCP_TEST_MAX_WATCHES=0 (HTTP, raw): resources/subscribe and subscriptions/listen are answered with -32603 'Subscription limit reached'", async () => {
  await using lab = startLab({ MCP_TEST_MAX_WATCHES: "0" });
  const sessionId = await openRawSession(lab.url, "2025-11-25", "raw-refused");
  const subscribe = await rawSubscribe(lab.url, sessionId);
  assert.equal(subscribe.status, 200);
  assert.deepEqual(await readJsonRpcAnswer(subscribe), {
    jsonrpc: "2.0",
    id: 2,
    error: WATCH_LIMIT,
  });
  const notifications = { resourceSubscriptions: [REVIEW_URI] };
  const listen = await postModern(lab.url, "subscriptions/listen", {
    notifications,
  }, { id: 7, client: "raw-refused-modern" });
  assert.equal(listen.status, 200);
  assert.deepEqual(await listen.json(), {
    jsonrpc: "2.0",
    id: 7,
    error: WATCH_LIMIT,
  });
});

Deno.test("MCP_TEST_MAX_WATCHES=1 (HTTP): one watch is accepted and the second refused; the refused client and a bystander still get their updates", async (t) => {
  await using lab = startLab({ MCP_TEST_MAX_WATCHES: "1" });
  for (const [era, mode] of Object.entries(ERAS)) {
    await t.step(era, async () => {
      const name = `capped-${mode}`;
      await using client = await connectClient(lab.url, name, mode);
      await using bystander = await connectClient(lab.url, `by-${mode}`, mode);
      await readReview(client);
      const updated = nextResourceUpdate(client);
      const first = await watch(client);
      // 2025: the same URI again is no second watch; another URI is one.
      if (era === "2025") await watch(client);
      await assertWatchRefused(watch(client, "test://review/other"));
      assert.equal(refusalLines(lab.lines, name).length, 1);
      assert.equal(await updated, REVIEW_URI);
      assert.equal(await readReview(client), VERSION_2_TEXT);
      assert.equal(reportFor(lab, name).level, 6);
      await readReview(bystander);
      await subscribeUntilUpdated(bystander);
      assert.equal(await readReview(bystander), VERSION_2_TEXT);
      assert.equal(refusalLines(lab.lines, `by-${mode}`).length, 0);
      if (era === "2026-07-28") {
        // Open listens are counted: once the first ends, another is taken.
        await (first as { close(): Promise<void> }).close();
        const again = await client.listen({ resourceSubscriptions: [] });
        await again.close();
      } else {
        // Unsubscribed, the next URI is no longer over the cap: not found.
        await client.unsubscribeResource({ uri: REVIEW_URI });
        await assert.rejects(
          watch(client, "test://review/other"),
          /Resource not found: test:\/\/review\/other/,
        );
      }
      assert.equal(refusalLines(lab.lines, name).length, 1);
    });
  }
});

Deno.test("--max-watches over stdio: 0 refuses the first watch, 1 the second, with the SDK's code and message, in both eras; the refusal is one line before the verdict", async (t) => {
  for (const [era, mode] of Object.entries(ERAS)) {
    for (const cap of [0, 1]) {
      await t.step(`${era}, --max-watches ${cap}`, async () => {
        const name = `stdio-${mode}-${cap}`;
        const { client, verdictLog } = await stdioClient(
          name,
          mode,
          "--max-watches",
          String(cap),
        );
        await readReview(client);
        if (cap === 1) await watch(client);
        await assertWatchRefused(watch(client, "test://review/other"));
        // Still served (at version 2 once an accepted watch's update came).
        assert.match(await readReview(client), /^status: /);
        await client.close();
        const lines = (await verdictLog()).split("\n");
        assert.equal(refusalLines(lines, name).length, 1);
        const next = lines.find((line) => line.startsWith("  next: "));
        // Refused its only watch, it stops where the ladder stops a client
        // that never watched (level 3); with one accepted, it goes on.
        const level = lines.find((line) => line.startsWith("[verdict] "));
        assert.match(level ?? "", cap === 0 ? / level=3 / : / level=[4-6] /);
        if (cap === 0) assert.equal(next, `  next: ${neverWatched(era)}`);
        else assert.notEqual(next, `  next: ${neverWatched(era)}`);
      });
    }
  }
});

Deno.test("--max-watches 0 over stdio, raw lines: a subscribe and a listen get the exact error, and the lab goes on answering", async (t) => {
  const _meta = modernMeta("raw-stdio");
  const eras = {
    "2025": [
      initializeMessage({ name: "raw-stdio", version: "1.0.0" }),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "resources/subscribe",
        params: { uri: REVIEW_URI },
      },
    ],
    "2026-07-28": [
      { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } },
      {
        jsonrpc: "2.0",
        id: 2,
        method: "subscriptions/listen",
        params: {
          notifications: { resourceSubscriptions: [REVIEW_URI] },
          _meta,
        },
      },
    ],
  };
  for (const [era, messages] of Object.entries(eras)) {
    await t.step(era, async () => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", MAIN_PATH, "--stdio", "--max-watches", "0"],
        stdin: "piped",
        stdout: "piped",
        stderr: "null",
      }).spawn();
      const writer = child.stdin.getWriter();
      const answers = linesOf(child.stdout);
      const read = {
        jsonrpc: "2.0",
        id: 3,
        method: "resources/read",
        params: { uri: REVIEW_URI, ...era === "2025" ? {} : { _meta } },
      };
      const lines = [...messages, read]
        .map((message) => `${JSON.stringify(message)}\n`);
      await writer.write(new TextEncoder().encode(lines.join("")));
      const byId = new Map<number, unknown>();
      while (!byId.has(2) || !byId.has(3)) {
        const { value } = await within(answers.next(), 30_000, "answers");
        const answer = JSON.parse(value as string);
        if ("id" in answer) byId.set(answer.id, answer);
      }
      assert.deepEqual(byId.get(2), {
        jsonrpc: "2.0",
        id: 2,
        error: WATCH_LIMIT,
      });
      const readAnswer = byId.get(3) as {
        result: { contents: { text: string }[] };
      };
      assert.equal(readAnswer.result.contents[0].text, VERSION_1_TEXT);
      await writer.close();
      assert.equal((await child.status).code, 0);
    });
  }
});

Deno.test("--max-watches: a bad value exits 2 with one line, over HTTP and stdio", async (t) => {
  const expected = "expected empty, or an integer from 0 to 1000000";
  for (const value of ["-1", "1.5", "two", "1000001"]) {
    await t.step(value, async () => {
      for (const stdio of [[], ["--stdio"]]) {
        const flag = await labCommand([...stdio, `--max-watches=${value}`], {
          MCP_TEST_PORT: "0",
        }).output();
        assert.equal(flag.code, 2);
        assert.equal(
          new TextDecoder().decode(flag.stderr),
          `config error: --max-watches="${value}" is not allowed: ${expected}\n`,
        );
        assert.equal(new TextDecoder().decode(flag.stdout), "");
      }
      const variable = await labCommand([], {
        MCP_TEST_PORT: "0",
        MCP_TEST_MAX_WATCHES: value,
      }).output();
      assert.equal(variable.code, 2);
      assert.equal(
        new TextDecoder().decode(variable.stderr),
        `config error: MCP_TEST_MAX_WATCHES="${value}" is not allowed: ${expected}\n`,
      );
    });
  }
});

// ---------------------------------------------------------------------------
// Stream lifetime: --stream-lifetime, --stream-end, both eras, HTTP and stdio
// ---------------------------------------------------------------------------

/** How an HTTP/1.1 response read off a raw socket ended, and its body. */
type RawEnd = { end: "clean" | "dropped"; ms: number; body: string };

/**
 * Sends `request` over a raw socket and reads the response to its end: the
 * chunked body's last chunk (`0\r\n\r\n`: clean) or the connection closed
 * without it (dropped). `ms` from the response head to that end; `body`
 * de-chunked.
 */
async function rawHttp(port: number, request: string): Promise<RawEnd> {
  const connection = await Deno.connect({ hostname: "127.0.0.1", port });
  await connection.write(new TextEncoder().encode(request));
  const decoder = new TextDecoder();
  let text = "";
  let headAt: number | undefined;
  let end: RawEnd["end"] = "dropped";
  for await (const chunk of connection.readable) {
    text += decoder.decode(chunk, { stream: true });
    if (headAt === undefined && text.includes("\r\n\r\n")) headAt = Date.now();
    if (text.endsWith("\r\n0\r\n\r\n")) {
      end = "clean";
      break;
    }
  }
  // Leaving the loop closed the connection (a clean end); or the lab did.
  const ms = Date.now() - (headAt ?? NaN);
  const [head, ...rest] = text.split("\r\n\r\n");
  assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(head, /\r\ntransfer-encoding: chunked\r\n/);
  let chunked = rest.join("\r\n\r\n");
  let body = "";
  for (let size; (size = parseInt(chunked, 16)) > 0;) {
    const start = chunked.indexOf("\r\n") + 2;
    body += chunked.slice(start, start + size);
    chunked = chunked.slice(start + size + 2);
  }
  return { end, ms, body };
}

/** A raw HTTP/1.1 request to the lab's `/mcp`. */
function rawRequest(
  method: string,
  headers: Record<string, string>,
  body = "",
) {
  const lines = Object.entries({ Host: "127.0.0.1", ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`).join("");
  const length = body ? `Content-Length: ${body.length}\r\n` : "";
  return `${method} /mcp HTTP/1.1\r\n${lines}${length}\r\n${body}`;
}

/** The SSE frame the lab writes for `message`. */
const sseFrame = (message: unknown) =>
  `event: message\ndata: ${JSON.stringify(message)}\n\n`;

Deno.test("--stream-lifetime 0.5 (HTTP, raw sockets): the GET stream and the listen end at the lifetime; graceful is the chunked body's clean end, the listen's result its last frame; abrupt drops the connection, no result; the close step says by=lab end=…", async (t) => {
  for (const end of ["graceful", "abrupt"]) {
    await t.step(end, async () => {
      await using lab = startLab({
        MCP_TEST_STREAM_LIFETIME_SECONDS: "0.5",
        MCP_TEST_STREAM_END: end,
        // The update falls after the cut: the streams carry no more frames.
        MCP_TEST_UPDATE_DELAY_SECONDS: "5",
      });
      const port = Number(new URL(lab.base).port);
      const name = `raw-cut-${end}`;
      const sessionId = await openRawSession(lab.url, "2025-11-25", name);
      const get = await rawHttp(
        port,
        rawRequest("GET", {
          Accept: "text/event-stream",
          "Mcp-Session-Id": sessionId,
          "MCP-Protocol-Version": "2025-11-25",
        }),
      );
      assert.equal(get.end, end === "graceful" ? "clean" : "dropped");
      assert.equal(get.body, "");
      assert.ok(get.ms >= 450 && get.ms < 2000, `${get.ms} ms`);
      const listen = JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "subscriptions/listen",
        params: {
          _meta: modernMeta(`${name}-modern`),
          notifications: { resourceSubscriptions: [REVIEW_URI] },
        },
      });
      const listened = await rawHttp(
        port,
        rawRequest("POST", {
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
          "MCP-Protocol-Version": "2026-07-28",
          "Mcp-Method": "subscriptions/listen",
        }, listen),
      );
      const subscriptionId = { "io.modelcontextprotocol/subscriptionId": 7 };
      const ack = sseFrame({
        jsonrpc: "2.0",
        method: "notifications/subscriptions/acknowledged",
        params: {
          notifications: { resourceSubscriptions: [REVIEW_URI] },
          _meta: subscriptionId,
        },
      });
      const result = sseFrame({
        jsonrpc: "2.0",
        id: 7,
        result: { resultType: "complete", _meta: subscriptionId },
      });
      assert.equal(listened.end, end === "graceful" ? "clean" : "dropped");
      assert.equal(listened.body, end === "graceful" ? ack + result : ack);
      assert.ok(listened.ms >= 450 && listened.ms < 2000, `${listened.ms} ms`);
      const closes = lab.lines.filter((line) => line.includes(" closed "));
      assert.equal(closes.length, 2, closes.join("\n"));
      assert.match(
        closes[0],
        new RegExp(
          `^\\[stream/get\\] closed session=[0-9a-f]{8} by=lab end=${end} client=${name}/0\\.0\\.1 era=2025 `,
        ),
      );
      assert.match(
        closes[1],
        new RegExp(
          `^\\[subscriptions/listen\\] closed by=lab end=${end} client=${name}-modern/1\\.0\\.0 era=2026-07-28 `,
        ),
      );
    });
  }
});

/** What the verdict says a client missed whose update fell after the cut. */
const NOT_NOTIFIED = {
  "2025":
    "the notification was lost: the client's GET stream was closed when it was sent",
  "2026-07-28":
    `the notification was not delivered: no listen stream watches ${REVIEW_URI}`,
};

/**
 * An SDK client in `mode`'s era that watches the resource and, when
 * `reopens`, opens its stream again after the lab ends it: in 2025 the SDK
 * transport re-opens its GET stream (after 50 ms here; `maxRetries: 0`
 * never), in 2026-07-28 the client listens again once its listen closed.
 */
async function cutClient(
  url: URL,
  name: string,
  mode: "legacy" | "auto",
  reopens: boolean,
) {
  const client = new Client({ name, version: "1.0.0" }, {
    versionNegotiation: { mode },
  });
  const reconnectionOptions = {
    initialReconnectionDelay: 50,
    maxReconnectionDelay: 50,
    reconnectionDelayGrowFactor: 1,
    maxRetries: reopens ? 1_000 : 0,
  };
  await client.connect(
    new StreamableHTTPClientTransport(url, { reconnectionOptions }),
  );
  const updated = nextResourceUpdate(client);
  assert.equal(await readReview(client), VERSION_1_TEXT);
  if (mode === "legacy") await client.subscribeResource({ uri: REVIEW_URI });
  else {
    const filter = { resourceSubscriptions: [REVIEW_URI] };
    // Ended by the lab ("graceful": its result; "remote": dropped), not by
    // the client's own close ("local", or its transport gone).
    const listenAgain = async (listen: { closed: Promise<unknown> }) => {
      const cause = await listen.closed;
      if (reopens && cause !== "local" && client.transport) {
        listenAgain(await client.listen(filter));
      }
    };
    listenAgain(await client.listen(filter));
  }
  return { client, updated };
}

Deno.test("--stream-lifetime 1 (HTTP, SDK v2 client): the update falls after the cut; a client that opens its stream again gets it and reaches 6, one that does not stays at 4, graceful and abrupt, both eras; the report, its first line and the reproduce command name the lifetime", async (t) => {
  for (const end of ["graceful", "abrupt"]) {
    await t.step(end, async () => {
      await using lab = startLab({
        MCP_TEST_STREAM_LIFETIME_SECONDS: "1",
        MCP_TEST_STREAM_END: end,
        MCP_TEST_UPDATE_DELAY_SECONDS: "1.5",
      });
      await Promise.all(
        Object.entries(ERAS).flatMap(([era, mode]) =>
          [true, false].map(async (reopens) => {
            const name = `cut-${end}-${mode}-${reopens ? "reopens" : "not"}`;
            const { client, updated } = await cutClient(
              lab.url,
              name,
              mode,
              reopens,
            );
            const closeTag = era === "2025"
              ? "[stream/get] closed"
              : "[subscriptions/listen] closed";
            const mine = (line: string) =>
              line.includes(` client=${name}/1.0.0 `);
            const update = `[resource/update] uri=${REVIEW_URI} version=2`;
            await eventually(
              () =>
                lab.lines.some((line) => mine(line) && line.startsWith(update)),
              `${name}'s update`,
            );
            const cutLine = lab.lines.find((line) =>
              mine(line) && line.startsWith(closeTag)
            );
            assert.match(cutLine ?? "", new RegExp(` by=lab end=${end} `));
            assertLinesInOrder(lab.lines.filter(mine), [closeTag, update]);
            if (reopens) {
              assert.equal(await within(updated, 5_000, name), REVIEW_URI);
              assert.equal(await readReview(client), VERSION_2_TEXT);
              assert.equal(reportFor(lab, name).level, 6);
            } else {
              await eventually(
                () =>
                  lab.lines.some((line) =>
                    mine(line) && line.startsWith("[notification/send]")
                  ),
                `${name}'s notification`,
              );
              const entry = reportFor(lab, name);
              assert.equal(entry.level, 4);
              assert.equal(
                entry.missing,
                NOT_NOTIFIED[era as keyof typeof ERAS],
              );
            }
            await within(client.close(), 5_000, `${name} closed`);
          })
        ),
      );
      const report = lab.lab.report();
      assert.equal(report.scenario.streamLifetimeSeconds, 1);
      assert.equal(report.scenario.streamEnd, end);
      const flags = end === "abrupt" ? " --stream-end=abrupt" : "";
      assert.match(
        report.reproduce?.command ?? "",
        new RegExp(` --stream-lifetime=1${flags}( |$)`),
      );
      const markdown = await (await fetch(`${lab.base}/report.md`)).text();
      assert.match(
        markdown,
        new RegExp(`, streams ended after 1 s \\(${end}\\)\\.`),
      );
    });
  }
});

Deno.test("--stream-lifetime 1 over stdio (2026-07-28): the listen ends by its result; a client that listens again gets the update that fell after the cut and reaches 6, one that does not stays at 4 and is told so", async (t) => {
  for (const reopens of [true, false]) {
    await t.step(reopens ? "listens again" : "does not", async () => {
      const name = `stdio-cut-${reopens ? "reopens" : "not"}`;
      const { client, verdictLog } = await stdioClient(
        name,
        "auto",
        "--stream-lifetime",
        "1",
        "--delay",
        "1.5",
      );
      const updated = nextResourceUpdate(client);
      assert.equal(await readReview(client), VERSION_1_TEXT);
      const filter = { resourceSubscriptions: [REVIEW_URI] };
      const first = await client.listen(filter);
      // The lab's result settles the listen as the spec's graceful close.
      assert.equal(await first.closed, "graceful");
      if (reopens) {
        const again = await client.listen(filter);
        assert.equal(await within(updated, 5_000, "the update"), REVIEW_URI);
        assert.equal(await readReview(client), VERSION_2_TEXT);
        await again.close();
      } else await delay(1_000);
      await client.close();
      const lines = (await verdictLog()).split("\n");
      const closes = lines.filter((line) =>
        line.startsWith("[subscriptions/listen] closed ")
      );
      assert.match(
        closes[0] ?? "",
        new RegExp(
          `^\\[subscriptions/listen\\] closed by=lab end=graceful client=${name}/1\\.0\\.0 era=2026-07-28 `,
        ),
      );
      const level = lines.find((line) => line.startsWith("[verdict] "));
      assert.match(level ?? "", reopens ? / level=6 / : / level=4 /);
      if (!reopens) {
        assert.ok(
          lines.includes(`  next: ${NOT_NOTIFIED["2026-07-28"]}`),
          lines.join("\n"),
        );
      }
    });
  }
});

Deno.test("--stream-lifetime and --stream-end: a bad value exits 2 with one line; --stream-end abrupt is refused over --stdio, saying why", async (t) => {
  const seconds =
    "expected empty, or a number of seconds above 0 up to 86400, fractions allowed";
  const cases = [
    ...["0", "-1", "1s", "86401"].map((value) =>
      ["--stream-lifetime", value, seconds] as const
    ),
    ["--stream-end", "sudden", "expected graceful/abrupt"] as const,
  ];
  for (const [flag, value, expected] of cases) {
    await t.step(`${flag}=${value}`, async () => {
      const output = await labCommand([`${flag}=${value}`], {
        MCP_TEST_PORT: "0",
      }).output();
      assert.equal(output.code, 2);
      assert.equal(
        new TextDecoder().decode(output.stderr),
        `config error: ${flag}="${value}" is not allowed: ${expected}\n`,
      );
      assert.equal(new TextDecoder().decode(output.stdout), "");
    });
  }
  await t.step("MCP_TEST_STREAM_LIFETIME_SECONDS=0", async () => {
    const output = await labCommand([], {
      MCP_TEST_PORT: "0",
      MCP_TEST_STREAM_LIFETIME_SECONDS: "0",
    }).output();
    assert.equal(output.code, 2);
    assert.equal(
      new TextDecoder().decode(output.stderr),
      `config error: MCP_TEST_STREAM_LIFETIME_SECONDS="0" is not allowed: ${seconds}\n`,
    );
  });
  await t.step("--stdio --stream-end abrupt", async () => {
    const output = await labCommand(
      ["--stdio", "--stream-lifetime", "300", "--stream-end", "abrupt"],
      {},
    ).output();
    assert.equal(output.code, 2);
    assert.equal(
      new TextDecoder().decode(output.stderr),
      "config error: --stream-end abrupt (MCP_TEST_STREAM_END) drops a stream's connection; over --stdio the only connection is the process's pipes: use graceful\n",
    );
    assert.equal(new TextDecoder().decode(output.stdout), "");
  });
});

Deno.test("--stream-lifetime 0.5 over stdio, raw lines: the listen's acknowledgement, then at the lifetime its result, exactly; nothing more for it; the lab goes on answering", async () => {
  const _meta = modernMeta("raw-stdio-cut");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "--stdio", "--stream-lifetime", "0.5"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const answers = linesOf(child.stdout);
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  const next = async () =>
    JSON.parse(
      (await within(answers.next(), 10_000, "a line")).value as string,
    );
  await send({
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: { _meta },
  });
  assert.equal((await next()).id, 1);
  const notifications = { resourceSubscriptions: [REVIEW_URI] };
  await send({
    jsonrpc: "2.0",
    id: "L",
    method: "subscriptions/listen",
    params: { notifications, _meta },
  });
  const subscriptionId = { "io.modelcontextprotocol/subscriptionId": "L" };
  const started = Date.now();
  assert.deepEqual(await next(), {
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { notifications, _meta: subscriptionId },
  });
  assert.deepEqual(await next(), {
    jsonrpc: "2.0",
    id: "L",
    result: { resultType: "complete", _meta: subscriptionId },
  });
  const took = Date.now() - started;
  assert.ok(took >= 400 && took < 2000, `${took} ms`);
  await send({
    jsonrpc: "2.0",
    id: 3,
    method: "resources/read",
    params: { uri: REVIEW_URI, _meta },
  });
  const read = await next();
  assert.equal(read.id, 3);
  assert.equal(read.result.contents[0].text, VERSION_1_TEXT);
  await writer.close();
  assert.equal((await child.status).code, 0);
});
