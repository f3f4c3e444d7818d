/**
 * The 2026-07-28 listen (`subscriptions/listen`): its filter (duplicates,
 * size, each client identity's share of the streams), two copies of one
 * client, and its stream: what the lab keeps of a listen's params, the id it
 * echoes in every frame, and a stream (a 2025 GET stream too) its client
 * does not read.
 *
 * ```sh
 * deno test -P main_listen_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  Client,
  type JSONRPCMessage,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { createLab, loadConfig, REVIEW_URI } from "./main.ts";
import {
  prepareTestEnvironment,
  startLab,
  VERSION_1_TEXT,
} from "./testdata/lab.ts";
import {
  assertLinesInOrder,
  connectClient,
  eventually,
  garbageCollector,
  handleOf,
  initializeMessage,
  JSON_HEADERS,
  modernMeta,
  modernRequest,
  nextResourceUpdate,
  postJsonRpc,
  postModern,
  rawPost,
  readJsonRpcAnswer,
  readReview,
  reportFor,
  stdioLab,
  within,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Listen filters: duplicates, size, and each identity's share
// ---------------------------------------------------------------------------

/** A raw 2026-07-28 listen naming `uris`, as `client`. */
function rawListen(url: URL, uris: string[], client = "filter-client") {
  return postModern(url, "subscriptions/listen", {
    notifications: { resourceSubscriptions: uris },
  }, { client, headers: { accept: "application/json, text/event-stream" } });
}

Deno.test("a listen naming the lab's URI a hundred times is acknowledged with it once, and its log line stays short", async () => {
  await using lab = startLab();
  await using client = await connectClient(lab.url, "duplicates", "auto");
  const uris = [
    ...Array(99).fill(REVIEW_URI),
    ...Array.from({ length: 1 }, () => "other://x".repeat(100)),
  ];
  const listen = await client.listen({ resourceSubscriptions: uris });
  assert.deepEqual(listen.honoredFilter, {
    resourceSubscriptions: [REVIEW_URI],
  });
  await listen.close();
  const line = lab.lines.find((line) =>
    line.startsWith("[subscriptions/listen] uris=")
  )!;
  assert.ok(line.length < 600, `${line.length}: ${line}`);
  assert.match(
    line,
    /^\[subscriptions\/listen\] uris=test:\/\/review\/status ignored=other:\/\/x\S+… client=duplicates\/1\.0\.0 /,
  );
});

Deno.test("a listen filter of more than 100 URIs is refused with -32602 saying so, over HTTP and stdio, and the lab goes on", async () => {
  await using lab = startLab();
  const uris = Array(10_000).fill(REVIEW_URI);
  const answer = await rawListen(lab.url, uris);
  assert.equal(answer.status, 200);
  assert.deepEqual(await answer.json(), {
    jsonrpc: "2.0",
    id: 1,
    error: {
      code: -32602,
      message:
        "Invalid params: resourceSubscriptions names 10000 URIs; at most 100",
    },
  });
  assert.ok(lab.lines.every((line) => line.length < 2000));
  const transport = stdioLab("ignore");
  const client = new Client({ name: "stdio-filter", version: "1.0.0" }, {
    versionNegotiation: { mode: "auto" },
  });
  await client.connect(transport);
  await assert.rejects(
    client.listen({ resourceSubscriptions: uris.slice(0, 101) }),
    (error: { code?: number; message: string }) =>
      error.code === -32602 &&
      error.message.includes("names 101 URIs; at most 100"),
  );
  assert.equal(await readReview(client), VERSION_1_TEXT);
  await client.close();
});

Deno.test("each client identity holds at most a tenth of the listen streams, so one cannot take them all", async () => {
  await using lab = startLab({ MCP_TEST_MAX_SESSIONS: "20" });
  await using greedy = await connectClient(lab.url, "greedy", "auto");
  const held = [
    await greedy.listen({ resourceSubscriptions: [REVIEW_URI] }),
    await greedy.listen({ resourceSubscriptions: [REVIEW_URI] }),
  ];
  await assert.rejects(
    greedy.listen({ resourceSubscriptions: [REVIEW_URI] }),
    (error: { code?: number; message: string }) =>
      error.code === -32603 &&
      error.message ===
        "Subscription limit reached for this client: 2 listen streams are open under its clientInfo",
  );
  await using modest = await connectClient(lab.url, "modest", "auto");
  const own = await modest.listen({ resourceSubscriptions: [REVIEW_URI] });
  assert.deepEqual(own.honoredFilter, { resourceSubscriptions: [REVIEW_URI] });
  for (const listen of [...held, own]) await listen.close();
});

Deno.test("2026-07-28 era: two copies of one client (same clientInfo) are both notified, and the report says they shared it", async () => {
  await using lab = startLab({
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.3",
    MCP_TEST_UPDATE_COUNT: "2",
    MCP_TEST_UPDATE_INTERVAL_SECONDS: "0.5",
  });
  await using copyA = await connectClient(lab.url, "twin", "auto");
  const firstA = nextResourceUpdate(copyA);
  const listenA = await copyA.listen({ resourceSubscriptions: [REVIEW_URI] });
  // Copy B starts while A waits: its discover and read must not call off
  // the update owed to A's open stream.
  await using copyB = await connectClient(lab.url, "twin", "auto");
  assert.equal(await readReview(copyB), VERSION_1_TEXT);
  assert.equal(await within(firstA, 3000, "copy A notified"), REVIEW_URI);

  const secondA = nextResourceUpdate(copyA);
  const secondB = nextResourceUpdate(copyB);
  const listenB = await copyB.listen({ resourceSubscriptions: [REVIEW_URI] });
  assert.equal(
    await within(secondA, 3000, "copy A notified again"),
    REVIEW_URI,
  );
  assert.equal(await within(secondB, 3000, "copy B notified"), REVIEW_URI);
  await listenA.close();
  await listenB.close();

  assert.ok(
    lab.lines.some((line) =>
      line.startsWith("[server/discover] requested openListens=1 client=twin/")
    ),
    lab.lines.join("\n"),
  );
  const twins = lab.lab.report().clients.filter((c) => c.name === "twin");
  assert.equal(twins.length, 1);
  assert.equal(twins[0].listenStreamsAtOnce, 2);
  assert.equal(twins[0].steps.notificationDelivered, true);
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(
    markdown,
    /2 listen streams were open at once under this clientInfo/,
  );
});

// ---------------------------------------------------------------------------
// Listen streams: what the lab keeps, the id it echoes, streams nobody reads
// ---------------------------------------------------------------------------

/** The JSON-RPC messages of an event stream, as they come. */
async function* sseMessages(body: ReadableStream<Uint8Array>) {
  let buffered = "";
  for await (const chunk of body.pipeThrough(new TextDecoderStream())) {
    buffered += chunk;
    const frames = buffered.split("\n\n");
    buffered = frames.pop()!;
    for (const frame of frames) {
      const data = frame.match(/^data: (.*)$/m);
      if (data) yield JSON.parse(data[1]);
    }
  }
}

/** V8's full collection, to measure the heap with (`garbageCollector`). */
const collectGarbage = garbageCollector();

Deno.test({
  name:
    "a listen's stream keeps its filter, not what else its params carried: twenty 240 KB listens hold no more than twenty bare ones while open",
  ignore: !collectGarbage,
}, async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "3600" });
  const heapUsed = () => {
    collectGarbage!();
    return Deno.memoryUsage().heapUsed;
  };
  // 60,000 characters in each of four places a client may put them, as
  // much as a body may carry (256 KiB).
  const listen = (index: number, size: number) => {
    const padding = () => `${index}`.padEnd(size, "x");
    return rawPost(
      lab.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id: index,
        method: "subscriptions/listen",
        params: {
          notifications: {
            resourceSubscriptions: [REVIEW_URI],
            padding: padding(),
          },
          embedResources: padding(),
          padding: padding(),
          _meta: { ...modernMeta(`keeper-${index}`), padding: padding() },
        },
      }),
      {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "subscriptions/listen",
      },
    );
  };
  const open = async (index: number, size: number) => {
    const response = await listen(index, size);
    const messages = sseMessages(response.body!);
    const acknowledged = await messages.next();
    assert.equal(
      acknowledged.value?.method,
      "notifications/subscriptions/acknowledged",
    );
    return messages;
  };
  // Warmed up once, so lazily loaded code does not count.
  const streams = [await open(0, 1)];
  // What 20 open streams cost that carried nothing (both ends are here),
  // then 20 that carried 240 KB each: the second must cost about the same.
  const costOf = async (from: number, size: number) => {
    const before = heapUsed();
    for (let index = from; index < from + 20; index++) {
      streams.push(await open(index, size));
    }
    return heapUsed() - before;
  };
  const bare = await costOf(1, 1);
  const carried = await costOf(21, 60_000);
  assert.equal(lab.lab.counts().listenStreams, 41);
  for (const stream of streams) await stream.return(undefined);
  const growth = carried - bare;
  assert.ok(
    growth < 1024 * 1024,
    `20 open listens hold ${growth} bytes more of the 4.8 MB they were sent than 20 that were sent nothing (${bare} bytes)`,
  );
});

/** A request to a lab served in this process (`lab.fetch`), from loopback. */
function inProcess(
  init: { method?: string; body?: string; headers?: Record<string, string> },
) {
  return new Request("http://127.0.0.1/mcp", {
    ...init,
    headers: { host: "127.0.0.1", ...JSON_HEADERS, ...init.headers },
  });
}

/**
 * A lab in this process whose event streams end past `maxUnread` unread
 * bytes, with a series of 50 updates in FastRMCP's shape, at once: no
 * socket between it and the test, so a stream nobody reads stays unread.
 */
function unreadLab(maxUnread: number) {
  const lines: string[] = [];
  const config = loadConfig({
    MCP_TEST_UPDATE_DELAY_SECONDS: "0",
    MCP_TEST_UPDATE_COUNT: "50",
    MCP_TEST_UPDATE_INTERVAL_SECONDS: "0",
    MCP_TEST_INLINE_CONTENT: "fastrmcp",
    MCP_TEST_LOG_LEVEL: "info",
  });
  const lab = createLab(config, (line) => lines.push(line), maxUnread);
  return Object.assign(lab, {
    lines,
    stalled: () => lines.filter((line) => line.startsWith("[stream/stalled]")),
    [Symbol.asyncDispose]: () => lab.close(),
  });
}

Deno.test("a listen stream its client does not read ends past its bound: one [stream/stalled] line, no more frames, nothing held", async () => {
  await using lab = unreadLab(4096);
  const { body, headers } = modernRequest("subscriptions/listen", {
    notifications: { resourceSubscriptions: [REVIEW_URI] },
  }, { id: 7, client: "non-reader" });
  const response = await lab.fetch(
    inProcess({ method: "POST", body, headers }),
  );
  assert.equal(response.status, 200);
  await eventually(() => lab.stalled().length > 0, "no [stream/stalled] line");
  const [line] = lab.stalled();
  const unread = Number(line.match(/ unread=(\d+) /)?.[1]);
  assert.match(
    line,
    /^\[stream\/stalled\] no more frames: the client stopped reading unread=\d+ client=non-reader\/1\.0\.0 /,
  );
  // Past the bound by less than one frame: it stopped at the first.
  assert.ok(unread > 4096 && unread < 4096 + 1024, line);
  assertLinesInOrder(lab.lines, [
    "[stream/stalled]",
    "[subscriptions/listen] closed client=non-reader/1.0.0",
  ]);
  // The frames it held are dropped: the stream fails at once, empty.
  await assert.rejects(response.body!.getReader().read(), /left unread/);
  assert.equal(lab.counts().listenStreams, 0);
  assert.equal(lab.counts().pendingUpdates, 0);
  assert.ok(reportFor({ lab }, "non-reader").updatesSent < 50);
  assert.equal(lab.stalled().length, 1);
});

Deno.test("a 2025 GET stream its client does not read ends past its bound too, and the session may open another", async () => {
  await using lab = unreadLab(4096);
  const post = async (message: unknown, sessionId?: string) => {
    const response = await lab.fetch(inProcess({
      method: "POST",
      body: JSON.stringify(message),
      headers: sessionId ? { "mcp-session-id": sessionId } : {},
    }));
    await readJsonRpcAnswer(response);
    return response.headers.get("mcp-session-id") ?? sessionId!;
  };
  const sessionId = await post(
    initializeMessage({ name: "get-non-reader", version: "1.0.0" }),
  );
  await post(
    { jsonrpc: "2.0", method: "notifications/initialized" },
    sessionId,
  );
  const get = () =>
    lab.fetch(inProcess({
      headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
    }));
  const stream = await get();
  assert.equal(stream.status, 200);
  await post({
    jsonrpc: "2.0",
    id: 2,
    method: "resources/subscribe",
    params: { uri: REVIEW_URI },
  }, sessionId);
  await eventually(() => lab.stalled().length > 0, "no [stream/stalled] line");
  const session = handleOf(sessionId);
  assert.match(
    lab.stalled()[0],
    new RegExp(
      `^\\[stream/stalled\\] no more frames: the client stopped reading unread=\\d+ client=get-non-reader/1\\.0\\.0 `,
    ),
  );
  await eventually(
    () =>
      lab.lines.some((line) =>
        line.includes('delivered=false reason="no GET stream open"')
      ),
    "no update found the GET stream gone",
  );
  assertLinesInOrder(lab.lines, [
    "[stream/stalled]",
    `[stream/get] closed session=${session}`,
    'delivered=false reason="no GET stream open"',
  ]);
  await assert.rejects(stream.body!.getReader().read(), /left unread/);
  const again = await get();
  assert.equal(again.status, 200);
  await again.body!.cancel();
  assert.equal(lab.stalled().length, 1);
});

Deno.test("a listen's id is echoed in every frame, so one over 256 characters is refused with -32602, over HTTP and stdio; 256 is echoed whole", async () => {
  await using lab = startLab({
    MCP_TEST_INLINE_CONTENT: "fastrmcp",
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.05",
  });
  const refusal = {
    code: -32602,
    message:
      "Invalid params: a listen's id is 257 characters; at most 256, as every notification on its stream carries it",
  };
  const listen = (id: string, client: string) => ({
    jsonrpc: "2.0" as const,
    id,
    method: "subscriptions/listen",
    params: {
      notifications: { resourceSubscriptions: [REVIEW_URI] },
      _meta: modernMeta(client),
    },
  });
  const headers = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "subscriptions/listen",
  };
  const tooLong = "i".repeat(257);
  const answer = await postJsonRpc(
    lab.url,
    listen(tooLong, "long-id"),
    headers,
  );
  assert.equal(answer.status, 200);
  assert.deepEqual(answer.json, {
    jsonrpc: "2.0",
    id: tooLong,
    error: refusal,
  });
  assert.equal(lab.lab.counts().listenStreams, 0);

  const longest = "i".repeat(256);
  const accepted = await rawPost(
    lab.url,
    JSON.stringify(listen(longest, "longest-id")),
    headers,
  );
  for await (const message of sseMessages(accepted.body!)) {
    assert.equal(
      message.params._meta["io.modelcontextprotocol/subscriptionId"],
      longest,
    );
    if (message.method !== "notifications/resources/updated") continue;
    assert.equal(message.params.subscription_id, longest);
    break;
  }

  const transport = stdioLab("ignore");
  const answered = Promise.withResolvers<JSONRPCMessage>();
  transport.onmessage = (message) => answered.resolve(message);
  await transport.start();
  await transport.send(listen(tooLong, "stdio-long-id"));
  assert.deepEqual(
    await within(answered.promise, 30_000, "an answer over stdio"),
    { jsonrpc: "2.0", id: tooLong, error: refusal },
  );
  await transport.close();
});
