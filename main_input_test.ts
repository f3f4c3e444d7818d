/**
 * Input the lab must refuse or bound, and serve on: each row of the README's
 * bad-input table, the Host, Origin and bearer-token checks, the limits on
 * sessions, listen streams and names, bodies that stall or stop half-way, a
 * seeded fuzz test and a churn test, and hostile clients whose names and
 * URIs pose as the lab's own lines.
 *
 * ```sh
 * deno test -P main_input_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import fc from "npm:fast-check@4.11.0";
import {
  Client,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { type LabReport, REVIEW_URI } from "./main.ts";
import {
  prepareTestEnvironment,
  startLab,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  assertSequenceDiagram,
  connectClient,
  delay,
  eventually,
  garbageCollector,
  handleOf,
  initializeMessage,
  inParallel,
  JSON_HEADERS,
  modernMeta,
  modernRequest,
  nextResourceUpdate,
  openRawSession,
  postJsonRpc,
  postModern,
  rawPost,
  rawRead,
  rawSubscribe,
  readJsonRpcAnswer,
  readReview,
  spawnLabProcess,
  subscribeUntilUpdated,
  within,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Bad input: each row of the README's table
// ---------------------------------------------------------------------------

/** One row of the README's bad-input table. */
interface BadInput {
  name: string;
  send: (lab: { base: string; url: URL; sessionId: string }) => Promise<
    Response
  >;
  status: number;
  /** The JSON-RPC error code, or undefined for a plain-text answer. */
  code?: number;
}

/** The bad-input table's 2026-07-28 client. */
const BAD_INPUT_CLIENT = { client: "bad-input" };

/**
 * Posts with a Host header of our choosing (fetch always sends the real
 * one), over a plain TCP connection.
 */
async function postWithHost(
  url: URL,
  host: string,
  body: string,
): Promise<Response> {
  const connection = await Deno.connect({
    hostname: url.hostname,
    port: Number(url.port),
  });
  const bytes = new TextEncoder().encode(body);
  await connection.write(new TextEncoder().encode(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${host}\r\n` +
      "Content-Type: application/json\r\n" +
      "Accept: application/json, text/event-stream\r\n" +
      `Content-Length: ${bytes.length}\r\nConnection: close\r\n\r\n`,
  ));
  await connection.write(bytes);
  const raw = await new Response(connection.readable).text();
  const [head, ...rest] = raw.split("\r\n\r\n");
  const [statusLine, ...fields] = head.split("\r\n");
  const headers = new Headers(fields.map((field): [string, string] => {
    const colon = field.indexOf(":");
    return [field.slice(0, colon), field.slice(colon + 1).trim()];
  }));
  return new Response(rest.join("\r\n\r\n"), {
    status: Number(statusLine.split(" ")[1]),
    headers,
  });
}

const BAD_INPUTS: BadInput[] = [
  {
    name: "malformed JSON",
    send: ({ url }) => rawPost(url, '{"jsonrpc": "2.0", "id": 1,'),
    status: 400,
    code: -32700,
  },
  {
    name: "JSON that is not JSON-RPC",
    send: ({ url }) => rawPost(url, '{"hello": "world"}'),
    status: 400,
    code: -32600,
  },
  {
    name: "wrong Content-Type",
    send: ({ url }) =>
      rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
        "content-type": "text/plain",
      }),
    status: 415,
    code: -32000,
  },
  {
    name: "POST whose Accept lacks text/event-stream (2025)",
    send: ({ url, sessionId }) =>
      rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"resources/list"}', {
        accept: "application/json",
        "mcp-session-id": sessionId,
      }),
    status: 406,
    code: -32000,
  },
  {
    name: "GET whose Accept lacks text/event-stream (2025)",
    send: ({ url, sessionId }) =>
      fetch(url, {
        headers: { accept: "application/json", "mcp-session-id": sessionId },
      }),
    status: 406,
    code: -32000,
  },
  {
    name: "body over the 256 KiB limit",
    send: ({ url }) =>
      rawPost(
        url,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "ping",
          params: { padding: "x".repeat(256 * 1024) },
        }),
      ),
    status: 413,
    code: -32000,
  },
  {
    name: "JSON-RPC batch",
    send: ({ url }) =>
      rawPost(url, '[{"jsonrpc":"2.0","id":1,"method":"ping"}]'),
    status: 400,
    code: -32600,
  },
  {
    name: "unknown session id",
    send: ({ url }) =>
      rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"resources/list"}', {
        "mcp-session-id": "00000000-0000-0000-0000-000000000000",
      }),
    status: 404,
    code: -32001,
  },
  {
    name: "terminated session id",
    async send({ url }) {
      const sessionId = await openRawSession(url);
      const deleted = await fetch(url, {
        method: "DELETE",
        headers: { "mcp-session-id": sessionId },
      });
      await deleted.body?.cancel();
      return rawPost(
        url,
        '{"jsonrpc":"2.0","id":1,"method":"resources/list"}',
        { "mcp-session-id": sessionId },
      );
    },
    status: 404,
    code: -32001,
  },
  {
    name: "missing session id",
    send: ({ url }) =>
      rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'),
    status: 400,
    code: -32000,
  },
  {
    name: "second GET stream on one session",
    async send({ url }) {
      const sessionId = await openRawSession(url);
      const headers = {
        accept: "text/event-stream",
        "mcp-session-id": sessionId,
      };
      const first = await fetch(url, { headers });
      assert.equal(first.status, 200);
      const second = await fetch(url, { headers });
      await first.body?.cancel();
      return second;
    },
    status: 409,
    code: -32000,
  },
  {
    name: "unknown method (2025)",
    send: ({ url, sessionId }) =>
      rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"review/approve"}', {
        "mcp-session-id": sessionId,
      }),
    status: 200,
    code: -32601,
  },
  {
    name: "unknown method (2026-07-28)",
    send: ({ url }) => postModern(url, "review/approve", {}, BAD_INPUT_CLIENT),
    status: 404,
    code: -32601,
  },
  {
    name: "invalid params (2025)",
    send: ({ url, sessionId }) =>
      rawPost(
        url,
        '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":5}}',
        { "mcp-session-id": sessionId },
      ),
    status: 200,
    code: -32602,
  },
  {
    name: "invalid params (2026-07-28)",
    send: ({ url }) =>
      postModern(url, "resources/read", { uri: 5 }, BAD_INPUT_CLIENT),
    status: 200,
    code: -32602,
  },
  {
    name: "listen whose id is over 256 characters (2026-07-28)",
    send: ({ url }) =>
      postModern(url, "subscriptions/listen", {
        notifications: { resourceSubscriptions: [REVIEW_URI] },
      }, { ...BAD_INPUT_CLIENT, id: "i".repeat(257) }),
    status: 200,
    code: -32602,
  },
  {
    name: "unknown resource URI (2025)",
    send: ({ url, sessionId }) =>
      rawPost(
        url,
        '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"test://nope"}}',
        { "mcp-session-id": sessionId },
      ),
    status: 200,
    code: -32002,
  },
  {
    name: "unknown resource URI (2026-07-28)",
    send: ({ url }) =>
      postModern(
        url,
        "resources/read",
        { uri: "test://nope" },
        BAD_INPUT_CLIENT,
      ),
    status: 200,
    code: -32602,
  },
  {
    name: "2026-07-28 header and _meta disagree on the version",
    send: ({ url }) =>
      postModern(url, "resources/list", {}, {
        ...BAD_INPUT_CLIENT,
        headers: { "mcp-protocol-version": "2025-06-18" },
      }),
    status: 400,
    code: -32020,
  },
  {
    name: "2026-07-28 Mcp-Method header disagrees with the body",
    send: ({ url }) =>
      postModern(url, "resources/list", {}, {
        ...BAD_INPUT_CLIENT,
        headers: { "mcp-method": "tools/list" },
      }),
    status: 400,
    code: -32020,
  },
  {
    name: "GET in the 2026-07-28 era",
    send: ({ url }) =>
      fetch(url, { headers: { "mcp-protocol-version": "2026-07-28" } }),
    status: 405,
    code: -32000,
  },
  {
    name: "DELETE in the 2026-07-28 era",
    send: ({ url }) =>
      fetch(url, {
        method: "DELETE",
        headers: { "mcp-protocol-version": "2026-07-28" },
      }),
    status: 405,
    code: -32000,
  },
  {
    name: "OPTIONS on the MCP path (a browser's preflight)",
    send: ({ url }) => fetch(url, { method: "OPTIONS" }),
    status: 405,
    code: -32000,
  },
  {
    name: "PUT on the MCP path",
    send: ({ url, sessionId }) =>
      fetch(url, {
        method: "PUT",
        headers: { "mcp-session-id": sessionId },
        body: "{}",
      }),
    status: 405,
    code: -32000,
  },
  ...["::1", "localhost:99999", "localhost:abc"].map((host) => ({
    name: `Host header that is not a valid host[:port]: ${host}`,
    send: ({ url }: { url: URL }) =>
      postWithHost(url, host, '{"jsonrpc":"2.0","id":1,"method":"ping"}'),
    status: 400,
    code: -32000,
  })),
  {
    name: "unknown path",
    send: ({ base }) => fetch(`${base}/.well-known/oauth-authorization-server`),
    status: 404,
  },
  {
    name: "foreign Host header",
    send: ({ url }) =>
      postWithHost(
        url,
        "evil.example.com",
        '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      ),
    status: 403,
    code: -32000,
  },
  {
    name: "foreign Origin header",
    send: ({ url }) =>
      rawPost(url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
        origin: "http://evil.example.com",
      }),
    status: 403,
    code: -32000,
  },
];

Deno.test("bad input: each row answers its status and code, logs one line, and harms no one", async (t) => {
  await using lab = startLab();
  await using bystander = await connectClient(lab.url, "bystander");
  const sessionId = await openRawSession(lab.url);
  for (const row of BAD_INPUTS) {
    await t.step(row.name, async () => {
      const before = lab.lines.filter((line) =>
        line.startsWith("[request/rejected]")
      ).length;
      const response = await row.send({ ...lab, sessionId });
      assert.equal(response.status, row.status);
      if (row.code === undefined) {
        assert.equal(
          await response.text(),
          "Not Found: the MCP endpoint is /mcp\n",
        );
      } else {
        const answer = await readJsonRpcAnswer(response);
        assert.equal(answer.jsonrpc, "2.0");
        assert.equal(answer.error.code, row.code);
        assert.equal(typeof answer.error.message, "string");
        assert.ok(answer.error.message.length > 0);
      }
      const rejected = lab.lines.filter((line) =>
        line.startsWith("[request/rejected]")
      );
      assert.equal(rejected.length, before + 1, rejected.join("\n"));
      assert.match(
        rejected.at(-1)!,
        new RegExp(
          `status=${row.status}${row.code ? ` code=${row.code}` : ""} `,
        ),
      );
      assert.equal(await readReview(bystander), VERSION_1_TEXT);
    });
  }
  const updated = nextResourceUpdate(bystander);
  await bystander.subscribeResource({ uri: REVIEW_URI });
  await updated;
  assert.equal(await readReview(bystander), VERSION_2_TEXT);
});

// ---------------------------------------------------------------------------
// Hosts, tokens and limits
// ---------------------------------------------------------------------------

Deno.test("MCP_TEST_ALLOWED_HOSTS opens named hosts; * opens any", async (t) => {
  const ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
  await t.step("a named host", async () => {
    await using lab = startLab({ MCP_TEST_ALLOWED_HOSTS: "lab.internal" });
    const named = await postWithHost(lab.url, "lab.internal:8089", ping);
    assert.notEqual(named.status, 403);
    await named.body?.cancel();
    const other = await postWithHost(lab.url, "evil.example.com", ping);
    assert.equal(other.status, 403);
    await other.body?.cancel();
  });
  await t.step("*", async () => {
    await using lab = startLab({ MCP_TEST_ALLOWED_HOSTS: "*" });
    const any = await postWithHost(lab.url, "evil.example.com", ping);
    assert.notEqual(any.status, 403);
    await any.body?.cancel();
  });
});

Deno.test("MCP_TEST_AUTH_TOKEN: 401 with WWW-Authenticate without it, full flow with it", async () => {
  await using lab = startLab({ MCP_TEST_AUTH_TOKEN: "s3cret-token" });
  for (const authorization of [undefined, "Bearer wrong", "s3cret-token"]) {
    const response = await rawPost(
      lab.url,
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      authorization ? { authorization } : {},
    );
    assert.equal(response.status, 401);
    assert.match(response.headers.get("www-authenticate")!, /^Bearer /);
    assert.equal((await response.json()).error.code, -32000);
  }
  const health = await fetch(`${lab.base}/healthz`);
  assert.equal(health.status, 200);
  await health.body?.cancel();

  const headers = { Authorization: "Bearer s3cret-token" };
  for (const mode of ["legacy", "auto"] as const) {
    const client = new Client({ name: `token-${mode}`, version: "1.0.0" }, {
      versionNegotiation: { mode },
    });
    await client.connect(
      new StreamableHTTPClientTransport(lab.url, { requestInit: { headers } }),
    );
    assert.equal(await readReview(client), VERSION_1_TEXT);
    await client.close();
  }
});

Deno.test("the Bearer scheme is matched without regard to case; the token is not", async (t) => {
  await using lab = startLab({ MCP_TEST_AUTH_TOKEN: "s3cret-token" });
  for (
    const [authorization, status] of [
      ["Bearer s3cret-token", 200],
      ["bearer s3cret-token", 200],
      ["BEARER s3cret-token", 200],
      ["Bearer S3CRET-TOKEN", 401],
      ["Basic s3cret-token", 401],
      ["s3cret-token", 401],
    ] as const
  ) {
    await t.step(authorization, async () => {
      const response = await fetch(`${lab.base}/report`, {
        headers: { authorization },
      });
      assert.equal(response.status, status);
      await response.body?.cancel();
    });
  }
});

Deno.test("2025 era: an idle session ends after MCP_TEST_SESSION_TTL_SECONDS, not while its GET stream is open", async () => {
  await using lab = startLab({ MCP_TEST_SESSION_TTL_SECONDS: "0.2" });
  const idle = await openRawSession(lab.url);
  const watching = await openRawSession(lab.url);
  const stream = await fetch(lab.url, {
    headers: { accept: "text/event-stream", "mcp-session-id": watching },
  });
  assert.equal(stream.status, 200);
  await delay(400);
  assert.equal(lab.lab.counts().legacySessions, 1);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(`[session/end] session=${handleOf(idle)} reason=idle`)
    ),
  );
  const expired = await rawPost(
    lab.url,
    '{"jsonrpc":"2.0","id":2,"method":"resources/list"}',
    { "mcp-session-id": idle },
  );
  assert.equal(expired.status, 404);
  await expired.body?.cancel();

  await stream.body?.cancel();
  await delay(400);
  assert.equal(lab.lab.counts().legacySessions, 0);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(`[session/end] session=${handleOf(watching)} reason=idle`)
    ),
  );
});

Deno.test("MCP_TEST_MAX_SESSIONS caps sessions (503) and listen streams (-32603); existing clients carry on", async () => {
  await using lab = startLab({ MCP_TEST_MAX_SESSIONS: "2" });
  await using first = await connectClient(lab.url, "first-in");
  // Busy sessions (a GET stream open) are never evicted to make room.
  const busy = await openRawSession(lab.url);
  const stream = await fetch(lab.url, {
    headers: { accept: "text/event-stream", "mcp-session-id": busy },
  });
  assert.equal(stream.status, 200);
  const refused = await rawPost(
    lab.url,
    JSON.stringify(initializeMessage({ name: "one-too-many", version: "1" })),
  );
  assert.equal(refused.status, 503);
  const answer = await refused.json();
  assert.equal(answer.error.code, -32603);
  assert.match(answer.error.message, /limit reached/);
  assert.equal(await readReview(first), VERSION_1_TEXT);

  // Two identities, a listen each (each holds its share of one); a third
  // listen is over the cap.
  await using modern = await connectClient(lab.url, "listener", "auto");
  await using other = await connectClient(lab.url, "other-listener", "auto");
  const listens = [
    await modern.listen({ resourceSubscriptions: [REVIEW_URI] }),
    await other.listen({ resourceSubscriptions: [REVIEW_URI] }),
  ];
  await using third = await connectClient(lab.url, "third-listener", "auto");
  await assert.rejects(
    third.listen({ resourceSubscriptions: [REVIEW_URI] }),
    (error: { code?: number; message: string }) =>
      error.code === -32603 && /limit reached/.test(error.message),
  );
  for (const listen of listens) await listen.close();
  await stream.body?.cancel();
});

Deno.test("MCP_TEST_MAX_SESSIONS: at the cap the least recently seen idle session is evicted and the new one served", async () => {
  await using lab = startLab({ MCP_TEST_MAX_SESSIONS: "5" });
  const abandoned: string[] = [];
  for (let i = 0; i < 5; i++) abandoned.push(await openRawSession(lab.url));
  const list = '{"jsonrpc":"2.0","id":2,"method":"resources/list"}';
  // Seen again, the first is no longer the least recently seen.
  const seen = await rawPost(lab.url, list, {
    "mcp-session-id": abandoned[0],
  });
  assert.equal(seen.status, 200);
  await seen.body?.cancel();

  await openRawSession(lab.url);
  assert.equal(lab.lab.counts().legacySessions, 5);
  const ended = lab.lines.filter((line) => line.startsWith("[session/end]"));
  assert.equal(ended.length, 1, ended.join("\n"));
  assert.match(
    ended[0],
    new RegExp(
      `^\\[session/end\\] session=${handleOf(abandoned[1])} reason=evicted `,
    ),
  );
  const evicted = await rawPost(lab.url, list, {
    "mcp-session-id": abandoned[1],
  });
  assert.equal(evicted.status, 404);
  await evicted.body?.cancel();
  const kept = await rawPost(lab.url, list, { "mcp-session-id": abandoned[0] });
  assert.equal(kept.status, 200);
  await kept.body?.cancel();
});

Deno.test("2026-07-28 era: the lab keeps at most MCP_TEST_MAX_SESSIONS client identities", async () => {
  await using lab = startLab({ MCP_TEST_MAX_SESSIONS: "2" });
  for (const name of ["first-id", "second-id", "third-id"]) {
    const read = await readJsonRpcAnswer(
      await postModern(lab.url, "resources/read", { uri: REVIEW_URI }, {
        client: name,
      }),
    );
    assert.equal(read.result.contents[0].text, VERSION_1_TEXT);
  }
  const clients = lab.lab.report().clients;
  assert.deepEqual(
    clients.map((client) => [client.name, client.ended]),
    [["first-id", "evicted"], ["second-id", null], ["third-id", null]],
  );
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith("[session/end] reason=evicted client=first-id/1.0.0")
    ),
  );
});

Deno.test("clientInfo names and versions are cut to 64 characters; the report stays small", async () => {
  await using lab = startLab();
  // Name and version together fill most of a body's 256 KiB.
  const huge = "n".repeat(120_000);
  for (let id = 1; id <= 3; id++) {
    const response = await postModern(lab.url, "resources/read", {
      uri: REVIEW_URI,
    }, { id, client: huge });
    assert.equal(response.status, 200);
    await response.body?.cancel();
  }
  const initialize = await postJsonRpc(
    lab.url,
    initializeMessage({ name: huge, version: huge }),
  );
  assert.equal(initialize.status, 200);

  const cut = `${"n".repeat(63)}…`;
  const response = await fetch(`${lab.base}/report`);
  assert.equal(response.status, 200);
  const text = await response.text();
  assert.ok(text.length < 64 * 1024, `/report is ${text.length} bytes`);
  const names = (JSON.parse(text) as LabReport).clients.map((c) => c.name);
  assert.deepEqual(names, [cut, cut]);
  const markdown = await fetch(`${lab.base}/report.md`);
  assert.equal(markdown.status, 200);
  assert.ok((await markdown.text()).length < 64 * 1024);
  assert.ok(lab.lines.every((line) => line.length < 4096));
});

Deno.test("OPTIONS and PUT on the MCP path are 405 with Allow, not a session error", async (t) => {
  await using lab = startLab();
  for (const method of ["OPTIONS", "PUT", "PATCH"]) {
    await t.step(method, async () => {
      const before = lab.lines.length;
      const response = await fetch(lab.url, { method });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get("allow"), "GET, POST, DELETE");
      const answer = await response.json();
      assert.equal(answer.error.code, -32000);
      assert.match(answer.error.message, /^Method Not Allowed/);
      const rejected = lab.lines.slice(before).filter((line) =>
        line.startsWith(`[request/rejected] ${method} /mcp status=405`)
      );
      assert.equal(rejected.length, 1, lab.lines.slice(before).join("\n"));
    });
  }
});

Deno.test("a client that drops its GET or listen stream mid-way leaves nothing behind", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.3" });
  const sessionId = await openRawSession(lab.url);
  const subscribe = await rawSubscribe(lab.url, sessionId);
  await subscribe.body?.cancel();
  const getAbort = new AbortController();
  const getStream = await fetch(lab.url, {
    headers: { accept: "text/event-stream", "mcp-session-id": sessionId },
    signal: getAbort.signal,
  });
  assert.equal(getStream.status, 200);

  const listenAbort = new AbortController();
  const { body, headers } = modernRequest("subscriptions/listen", {
    notifications: { resourceSubscriptions: [REVIEW_URI] },
  }, { id: 9, client: "dropper" });
  const listen = await fetch(lab.url, {
    method: "POST",
    headers: { ...JSON_HEADERS, ...headers },
    body,
    signal: listenAbort.signal,
  });
  assert.equal(listen.status, 200);
  assert.equal(lab.lab.counts().listenStreams, 1);

  getAbort.abort();
  listenAbort.abort();
  await getStream.body?.cancel().catch(() => {});
  await listen.body?.cancel().catch(() => {});
  for (let i = 0; i < 100 && lab.lab.counts().listenStreams > 0; i++) {
    await delay(10);
  }
  assert.equal(lab.lab.counts().listenStreams, 0);
  await delay(400);
  // The 2025 session stays (it may reconnect its stream); its update found
  // no stream and said so.
  assert.ok(
    lab.lines.some((line) =>
      line.includes('delivered=false reason="no GET stream open"')
    ),
  );
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(`[stream/get] closed session=${handleOf(sessionId)}`)
    ),
  );
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith("[subscriptions/listen] closed client=dropper/1.0.0")
    ),
  );
  assert.equal(lab.lab.counts().pendingUpdates, 0);
});

// ---------------------------------------------------------------------------
// Bodies that stall or stop half-way
// ---------------------------------------------------------------------------

/**
 * Sends a POST head and part of its body over a plain TCP connection, then
 * either waits for the answer's status or hangs up mid-body.
 */
async function postPartBody(
  url: URL,
  framing: "length" | "chunked",
  then: "wait" | "hang-up",
): Promise<number | undefined> {
  const connection = await Deno.connect({
    hostname: url.hostname,
    port: Number(url.port),
  });
  const length = framing === "length"
    ? "Content-Length: 1000\r\n"
    : "Transfer-Encoding: chunked\r\n";
  const part = framing === "length" ? '{"jsonrpc"' : 'a\r\n{"jsonrpc"\r\n';
  await connection.write(new TextEncoder().encode(
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n` +
      "Content-Type: application/json\r\n" +
      "Accept: application/json, text/event-stream\r\n" +
      `${length}\r\n${part}`,
  ));
  if (then === "hang-up") {
    connection.close();
    return undefined;
  }
  const reader = connection.readable.getReader();
  const { value } = await reader.read();
  await reader.cancel();
  return Number(new TextDecoder().decode(value).split(" ")[1]);
}

Deno.test("a body that stalls is given up after MCP_TEST_BODY_TIMEOUT_SECONDS with 408 and one refusal line", async (t) => {
  await using lab = startLab({ MCP_TEST_BODY_TIMEOUT_SECONDS: "0.3" });
  for (const framing of ["length", "chunked"] as const) {
    await t.step(framing, async () => {
      const before = lab.lines.length;
      const started = performance.now();
      assert.equal(
        await within(postPartBody(lab.url, framing, "wait"), 5000, "a 408"),
        408,
      );
      assert.ok(performance.now() - started >= 250);
      const rejected = lab.lines.slice(before).filter((line) =>
        line.startsWith("[request/rejected] POST /mcp status=408 code=-32000 ")
      );
      assert.equal(rejected.length, 1, lab.lines.slice(before).join("\n"));
      assert.match(
        rejected[0],
        /message="Request Timeout: the body did not arrive within 0\.3 s/,
      );
    });
  }
  await using bystander = await connectClient(lab.url, "after-stall");
  assert.equal(await readReview(bystander), VERSION_1_TEXT);
});

/**
 * Starts a 2026-07-28 listen whose body would be 4,000,000 characters of
 * `embedResources` (declared, or chunked without an end), sends 300 KiB of
 * it and stops; resolves with the answer's status and JSON body.
 */
async function postOversized(url: URL, framing: "length" | "chunked") {
  const connection = await Deno.connect({
    hostname: url.hostname,
    port: Number(url.port),
  });
  const { headers } = modernRequest("subscriptions/listen", {});
  const all = { ...JSON_HEADERS, ...headers, host: url.host };
  const fields = Object.entries(all).map((
    [name, value],
  ) => `${name}: ${value}\r\n`).join("");
  const length = framing === "length"
    ? "Content-Length: 4000000\r\n"
    : "Transfer-Encoding: chunked\r\n";
  const encoder = new TextEncoder();
  await connection.write(
    encoder.encode(`POST ${url.pathname} HTTP/1.1\r\n${fields}${length}\r\n`),
  );
  const part =
    `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"embedResources":"${
      "x".repeat(300 * 1024)
    }`;
  await connection.write(encoder.encode(
    framing === "length" ? part : `${part.length.toString(16)}\r\n${part}\r\n`,
  ));
  let raw = "";
  const decoder = new TextDecoder();
  for await (const chunk of connection.readable) {
    raw += decoder.decode(chunk, { stream: true });
    const [head, body] = raw.split("\r\n\r\n");
    const declared = Number(head.match(/content-length: (\d+)/i)?.[1]);
    if (body !== undefined && body.length >= declared) break;
  }
  const [head, body] = raw.split("\r\n\r\n");
  return { status: Number(head.split(" ")[1]), answer: JSON.parse(body) };
}

Deno.test("a body over 256 KiB is refused before it is read (413, -32000), declared or chunked, and the lab goes on serving", async (t) => {
  await using lab = startLab();
  for (const framing of ["length", "chunked"] as const) {
    await t.step(framing, async () => {
      const before = lab.lines.length;
      // The rest of the 4,000,000 characters never comes: only a lab that
      // stops at its bound can answer.
      const { status, answer } = await within(
        postOversized(lab.url, framing),
        5000,
        "a 413",
      );
      assert.equal(status, 413);
      assert.deepEqual(answer, {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32000,
          message: "Payload Too Large: the body exceeds 262144 bytes",
        },
      });
      const rejected = lab.lines.slice(before).filter((line) =>
        line.startsWith("[request/rejected] POST /mcp status=413 code=-32000 ")
      );
      assert.equal(rejected.length, 1, lab.lines.slice(before).join("\n"));
    });
  }
  await using bystander = await connectClient(lab.url, "after-oversized");
  assert.equal(await readReview(bystander), VERSION_1_TEXT);
});

Deno.test("a client that leaves mid-body is one refusal line, not a 500 and a stack", async (t) => {
  await using lab = startLab();
  for (const framing of ["length", "chunked"] as const) {
    await t.step(framing, async () => {
      const before = lab.lines.length;
      await postPartBody(lab.url, framing, "hang-up");
      await eventually(
        () =>
          lab.lines.slice(before).some((line) =>
            line.startsWith("[request/rejected]")
          ),
        `a refusal line for the ${framing} body`,
      );
      const added = lab.lines.slice(before);
      assert.equal(added.length, 1, added.join("\n"));
      assert.match(
        added[0],
        /^\[request\/rejected\] POST \/mcp status=400 code=-32000 message="Bad Request: the client left before its body ended \(/,
      );
    });
  }
  assert.ok(!lab.lines.some((line) => line.startsWith("[server/error]")));
  await using bystander = await connectClient(lab.url, "after-hang-up");
  assert.equal(await readReview(bystander), VERSION_1_TEXT);
});

Deno.test("MCP_TEST_LOG_FORMAT=json: hostile input never puts a stack trace or a plain line in the output", async () => {
  const lab = await spawnLabProcess({
    MCP_TEST_LOG_FORMAT: "json",
    MCP_TEST_BODY_TIMEOUT_SECONDS: "0.2",
  });
  const { url } = lab;
  for (const host of ["::1", "localhost:99999", "localhost:abc"]) {
    const answer = await postWithHost(
      url,
      host,
      '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    );
    assert.equal(answer.status, 400);
  }
  for (const framing of ["length", "chunked"] as const) {
    await postPartBody(url, framing, "hang-up");
    assert.equal(
      await within(postPartBody(url, framing, "wait"), 5000, "a 408"),
      408,
    );
  }
  await delay(200);
  lab.child.kill("SIGTERM");
  assert.equal((await lab.child.status).code, 0);
  await lab.read;
  assert.equal(await lab.stderr, "");
  // Every line is JSON, the banner's and the shutdown's too.
  const events = lab.lines.filter((line) =>
    !/^\{"event":"(listening|lab)"/.test(line)
  );
  assert.ok(events.length >= 7, events.join("\n"));
  for (const line of lab.lines) {
    assert.doesNotThrow(() => JSON.parse(line), line);
  }
  assert.deepEqual(
    lab.lines.slice(0, 4).map((line) => Object.keys(JSON.parse(line))),
    [
      ["event", "url"],
      ["event", "version", "sdk", "deno", "resource"],
      ["event", "report", "json"],
      ["event", "config"],
    ],
  );
  const rejected = events.map((line) => JSON.parse(line)).filter((event) =>
    event.event === "request/rejected"
  );
  assert.deepEqual(rejected.map((event) => event.status), [
    400,
    400,
    400,
    400,
    408,
    400,
    408,
  ]);
});

// ---------------------------------------------------------------------------
// Fuzz and churn: bounded in count and time, loopback only
// ---------------------------------------------------------------------------

const KNOWN_METHODS = [
  "initialize",
  "notifications/initialized",
  "ping",
  "server/discover",
  "resources/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "resources/templates/list",
  "subscriptions/listen",
  "tools/list",
  "tools/call",
  "prompts/list",
  "notifications/cancelled",
];

/**
 * One fuzz answer is well formed: none at all (an accepted notification, a
 * quiet stream) only below 400; otherwise a JSON-RPC 2.0 message with a
 * result, or with an error of integer code and string message, which every
 * refusal carries.
 */
function assertWellFormedAnswer(status: number, answer: unknown) {
  const seen = `${status} ${JSON.stringify(answer)}`;
  if (answer === undefined) {
    assert.ok(status < 400, `a refusal without a JSON-RPC error: ${seen}`);
    return;
  }
  const message = answer as {
    jsonrpc?: unknown;
    result?: unknown;
    error?: { code?: unknown; message?: unknown };
  };
  assert.equal(message.jsonrpc, "2.0", seen);
  if (status >= 400 || message.error !== undefined) {
    assert.ok(Number.isInteger(message.error?.code), seen);
    assert.equal(typeof message.error?.message, "string", seen);
  } else {
    assert.ok("result" in message, seen);
  }
}

Deno.test("fuzz: thousands of random and mutated requests get well-formed answers", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.05" });
  const sessionId = await openRawSession(lab.url);
  const validMessage = fc.record({
    jsonrpc: fc.constantFrom("2.0", "2.0", "2.0", "1.0", 2),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)),
    method: fc.oneof(
      fc.constantFrom(...KNOWN_METHODS),
      fc.string({ maxLength: 20 }),
    ),
    params: fc.oneof(
      fc.record({
        uri: fc.oneof(fc.constant(REVIEW_URI), fc.string(), fc.integer()),
      }, { requiredKeys: [] }),
      fc.record({
        notifications: fc.record({
          resourceSubscriptions: fc.array(
            fc.oneof(fc.constant(REVIEW_URI), fc.string()),
            { maxLength: 3 },
          ),
          resourcesListChanged: fc.boolean(),
        }, { requiredKeys: [] }),
      }),
      fc.jsonValue({ maxDepth: 3 }),
    ),
    _meta: fc.boolean(),
  }, { requiredKeys: ["jsonrpc", "method"] });
  const body = fc.oneof(
    validMessage.map(({ _meta, ...message }) =>
      JSON.stringify(
        _meta && typeof message.params === "object" &&
          message.params !== null &&
          !Array.isArray(message.params)
          ? {
            ...message,
            params: { ...message.params, _meta: modernMeta("fuzzer") },
          }
          : message,
      )
    ),
    fc.json({ maxDepth: 3 }),
    fc.string({ maxLength: 60 }),
    validMessage.map((message) => JSON.stringify(message)).chain((text) =>
      fc.nat(text.length).map((cut) => text.slice(0, cut))
    ),
  );
  const request = fc.record({
    httpMethod: fc.constantFrom("POST", "POST", "POST", "GET", "DELETE", "PUT"),
    body,
    contentType: fc.constantFrom(
      "application/json",
      "application/json; charset=utf-8",
      "text/plain",
      "",
    ),
    accept: fc.constantFrom(
      "application/json, text/event-stream",
      "application/json",
      "text/event-stream",
      "",
    ),
    protocolVersion: fc.constantFrom(
      "",
      "2025-06-18",
      "2025-11-25",
      "2026-07-28",
      "1999-01-01",
    ),
    session: fc.constantFrom("none", "valid", "unknown"),
    mcpMethod: fc.oneof(
      fc.constant(""),
      fc.constantFrom(...KNOWN_METHODS),
    ),
  });

  let sent = 0;
  await fc.assert(
    fc.asyncProperty(request, async (shape) => {
      const headers: Record<string, string> = {};
      if (shape.contentType) headers["content-type"] = shape.contentType;
      if (shape.accept) headers.accept = shape.accept;
      if (shape.protocolVersion) {
        headers["mcp-protocol-version"] = shape.protocolVersion;
      }
      if (shape.mcpMethod) headers["mcp-method"] = shape.mcpMethod;
      if (shape.session === "valid") headers["mcp-session-id"] = sessionId;
      if (shape.session === "unknown") headers["mcp-session-id"] = "nope";
      const response = await fetch(lab.url, {
        method: shape.httpMethod,
        headers,
        body: ["POST", "PUT"].includes(shape.httpMethod)
          ? shape.body
          : undefined,
      });
      sent++;
      assert.ok(
        response.status < 500,
        `${shape.httpMethod} ${
          JSON.stringify(headers)
        } ${shape.body} -> ${response.status}`,
      );
      assertWellFormedAnswer(
        response.status,
        await readJsonRpcAnswer(response),
      );
    }),
    { numRuns: 2500, seed: 20261130 },
  );
  assert.equal(sent, 2500);

  for (const mode of ["legacy", "auto"] as const) {
    await using client = await connectClient(
      lab.url,
      `after-fuzz-${mode}`,
      mode,
    );
    assert.equal(await readReview(client), VERSION_1_TEXT);
    await subscribeUntilUpdated(client);
    assert.equal(await readReview(client), VERSION_2_TEXT);
  }
});

const collectGarbage = garbageCollector();
if (!collectGarbage) {
  console.log("churn: skipped, this V8 gives no gc() to measure the heap with");
}

Deno.test({
  name:
    "churn: thousands of sessions and listen streams leave no sessions, timers or memory behind",
  ignore: !collectGarbage,
}, async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "30" });
  const heapUsed = () => {
    collectGarbage!();
    return Deno.memoryUsage().heapUsed;
  };
  // Warm up once so lazily loaded code does not count as growth.
  await openRawSession(lab.url);
  const baseline = heapUsed();

  await inParallel(2000, 16, async (index) => {
    const sessionId = await openRawSession(lab.url);
    const subscribe = await rawSubscribe(lab.url, sessionId);
    await subscribe.body?.cancel();
    const deleted = await fetch(lab.url, {
      method: "DELETE",
      headers: { "mcp-session-id": sessionId },
    });
    await deleted.body?.cancel();

    const listen = await postModern(lab.url, "subscriptions/listen", {
      notifications: { resourceSubscriptions: [REVIEW_URI] },
    }, { id: index, client: `churner-${index % 50}` });
    assert.equal(listen.status, 200);
    await readJsonRpcAnswer(listen);
  });
  for (let i = 0; i < 100 && lab.lab.counts().listenStreams > 0; i++) {
    await delay(10);
  }
  assert.deepEqual(lab.lab.counts(), {
    legacySessions: 1,
    listenStreams: 0,
    pendingUpdates: 0,
    waitingCalls: 0,
  });
  const growth = heapUsed() - baseline;
  console.log(
    `heap after 2000 sessions and 2000 listen streams: ${
      (growth / 1024 / 1024).toFixed(1)
    } MiB over baseline`,
  );
  assert.ok(growth < 16 * 1024 * 1024, `heap grew by ${growth} bytes`);
});

// ---------------------------------------------------------------------------
// Hostile clients: what they send never forges a log line or a report line
// ---------------------------------------------------------------------------

/** A name that clears the screen, breaks lines, and poses as the lab's own output. */
const HOSTILE_NAME =
  "\x1b[2J\x1b[H\r\u2028\u202eevil|`x`<img src=x onerror=alert(1)>\n```\n" +
  "<script>alert(1)</script>\nparticipant X as Evil\nX->>L: resources/read (v2)\n" +
  "[verdict] level=6 client=claude-code/2.1.332";

/** A URI that would add a version-2 read to the log. */
const HOSTILE_URI =
  "test://x\n[resources/read] uri=test://review/status version=2 client=claude-code/2.1.332";

/** A 2025 session under a hostile name: a hostile read, the real read, subscribe, DELETE. */
async function hostileSession(url: URL) {
  const initialize = await postJsonRpc(
    url,
    initializeMessage({ name: HOSTILE_NAME, version: "1\n[verdict] level=7" }),
  );
  const sessionId = initialize.headers.get("mcp-session-id")!;
  const session = { "mcp-session-id": sessionId };
  await postJsonRpc(
    url,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    session,
  );
  const bad = await postJsonRpc(url, {
    jsonrpc: "2.0",
    id: 2,
    method: "resources/read",
    params: { uri: HOSTILE_URI },
  }, session);
  assert.equal(bad.json.error.code, -32002);
  assert.equal((await rawRead(url, sessionId)).status, 200);
  await (await rawSubscribe(url, sessionId)).body?.cancel();
  await fetch(url, { method: "DELETE", headers: session });
}

Deno.test("a hostile client's name and URIs: every text log line is one line of the lab's, nothing raw reaches the terminal", async () => {
  await using lab = startLab();
  await hostileSession(lab.url);
  await eventually(
    () => lab.lines.some((line) => line.startsWith("[verdict]")),
    "the verdict",
  );
  for (const line of lab.lines) {
    assert.doesNotMatch(line, /[\p{Cc}\u2028\u2029\u202e]/u, line);
    // An event, or a line of the verdict block under it.
    assert.match(line, /^(\[[a-z/]+\] | {2})/, line);
  }
  const verdicts = lab.lines.filter((line) => line.startsWith("[verdict]"));
  assert.equal(verdicts.length, 1);
  assert.match(
    verdicts[0],
    /^\[verdict\] level=4 client="\\u001b\\u005b2J\\u001b\\u005bH\\r\\u2028\\u202eevil\|/,
  );
  // The docs' greps, unanchored as a user types them, find no forged event:
  // a bracket inside a value or a verdict's words is an escape.
  for (
    const grep of [
      /\[resources\/read\] uri=test:\/\/review\/status version=2/,
      /\[verdict\] level=[67]/,
    ]
  ) {
    assert.deepEqual(lab.lines.filter((line) => grep.test(line)), []);
  }
  for (const line of lab.lines) {
    const tags = [...line.matchAll(/\[[a-z/]+\]/g)].map((tag) => tag.index);
    // One tag per line: the event's, or the evidence under a verdict.
    assert.ok(
      tags.length === 0 ||
        (tags.length === 1 &&
          (tags[0] === 0 || line.startsWith("  evidence: ["))),
      line,
    );
  }
  assert.equal(
    lab.lines.filter((line) =>
      line.startsWith("[resources/read] uri=test://review/status version=2")
    ).length,
    0,
  );
  const unknown = lab.lines.find((line) =>
    line.startsWith("[resources/read] uri=")
  )!;
  assert.ok(
    unknown.startsWith(
      String
        .raw`[resources/read] uri="test://x\n\u005bresources/read\u005d uri=test://review/status version=2 client=claude-code/2.1.332" `,
    ),
    unknown,
  );
});

Deno.test("a hostile client in the JSON log: one object per line, U+2028 and escapes never raw", async () => {
  await using lab = startLab({ MCP_TEST_LOG_FORMAT: "json" });
  await hostileSession(lab.url);
  await eventually(
    () => lab.lines.some((line) => line.startsWith('{"event":"verdict"')),
    "the verdict",
  );
  for (const line of lab.lines) {
    assert.doesNotMatch(line, /[\p{Cc}\u2028\u2029\u202e]/u, line);
    const event = JSON.parse(line);
    assert.equal(typeof event.event, "string");
  }
  const verdict = JSON.parse(
    lab.lines.find((line) => line.startsWith('{"event":"verdict"'))!,
  );
  // As sent, cut to the lab's 64 characters.
  assert.equal(verdict.name, `${HOSTILE_NAME.slice(0, 63)}…`);
});

Deno.test("/report.md with a hostile client: no HTML, no broken table or fence, no participant or arrow it did not earn", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.05" });
  await hostileSession(lab.url);
  await using honest = await connectClient(lab.url, "honest");
  await readReview(honest);
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.doesNotMatch(markdown, /<(script|img)/i);
  assert.doesNotMatch(markdown, /(?!\n)[\p{Cc}\u2028\u2029\u202e]/u);
  const lines = markdown.split("\n");
  // Fences: a mermaid block per client, each closed once, and the
  // reproduce command's.
  assert.deepEqual(
    lines.filter((line) => line.startsWith("```")),
    ["```mermaid", "```", "```mermaid", "```", "```sh", "```"],
  );
  // Table rows: 13 cells each, none split by a pipe it holds.
  const rows = lines.filter((line) => line.startsWith("| "));
  assert.equal(rows.length, 4);
  for (const row of rows) {
    assert.equal(row.split("|").length, 16, row);
  }
  assert.ok(
    rows[2].startsWith(
      "| \\u001b&#91;2J\\u001b&#91;H ⏎  ⏎ \\u202eevil&#124;&#96;x&#96;&lt;img",
    ),
    rows[2],
  );
  // Each diagram declares the lab's two participants and nothing else.
  for (const block of markdown.split("```mermaid\n").slice(1)) {
    assertSequenceDiagram(block.split("```")[0]);
  }
  assert.equal(
    lines.filter((line) => line.startsWith("## ")).length,
    3,
  );
});

Deno.test("/report.md with a hostile 2026-07-28 client: its identity in the heading is escaped too", async () => {
  await using lab = startLab();
  const answer = await postModern(lab.url, "resources/read", {
    uri: REVIEW_URI,
  }, { client: "x\n## forged\n<b>`|" });
  assert.equal(answer.status, 200);
  await answer.body?.cancel();
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  const headings = markdown.split("\n").filter((line) =>
    line.startsWith("## ") && line !== "## Reproduce"
  );
  assert.deepEqual(headings, [
    "## x ⏎ ## forged ⏎ &lt;b&gt;&#96;&#124;/1.0.0 (2026-07-28, x ⏎ ## forged ⏎ &lt;b&gt;&#96;&#124;@<wbr>1.0.0)",
  ]);
});
