/**
 * Tests for the lab: a real MCP SDK client against `createLab`, served
 * in-process on a free loopback port.
 *
 * ```sh
 * deno test -A
 * ```
 */

import assert from "node:assert/strict";
import {
  Client,
  type ClientOptions,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import {
  createLab,
  LAB_VERSION,
  loadConfig,
  REVIEW_URI,
  SDK_VERSION,
} from "./main.ts";

const VERSION_1_TEXT = [
  "status: pending",
  "version: 1",
  "message: Waiting for simulated review result.",
].join("\n");

const VERSION_2_TEXT = [
  "status: reviewed",
  "version: 2",
  "message: Simulated review result is now available.",
].join("\n");

/** A lab on a free port, its captured log lines, and its address. */
async function startLab(env: Record<string, string> = {}) {
  const config = loadConfig({
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
    MCP_TEST_LOG_LEVEL: "info",
    ...env,
  });
  const lines: string[] = [];
  const lab = createLab(config, (line) => lines.push(line));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    lab.fetch,
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  return {
    lab,
    lines,
    base,
    url: new URL(`${base}/mcp`),
    async [Symbol.asyncDispose]() {
      await lab.close();
      await server.shutdown();
    },
  };
}

type Negotiation = NonNullable<ClientOptions["versionNegotiation"]>;

/** An SDK v2 client connected to `url`, legacy (2025) or `auto` (2026-07-28). */
async function connectClient(
  url: URL,
  name: string,
  mode: Negotiation["mode"] = "legacy",
) {
  const client = new Client({ name, version: "1.0.0" }, {
    versionNegotiation: { mode },
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  return Object.assign(client, {
    [Symbol.asyncDispose]: () => client.close(),
  });
}

/** Resolves with the URI of the next `notifications/resources/updated`. */
function nextResourceUpdate(client: Client): Promise<string> {
  return new Promise((resolve) => {
    client.setNotificationHandler(
      "notifications/resources/updated",
      (notification) => resolve(notification.params.uri),
    );
  });
}

async function readReview(client: Client): Promise<string> {
  const result = await client.readResource({ uri: REVIEW_URI });
  assert.equal(result.contents.length, 1);
  const [content] = result.contents;
  assert.equal(content.mimeType, "text/plain");
  assert.ok("text" in content);
  return content.text;
}

/** Asserts that each pattern matches some line, in this order. */
function assertLinesInOrder(lines: string[], patterns: string[]) {
  let from = 0;
  for (const pattern of patterns) {
    const at = lines.findIndex((line, index) =>
      index >= from && line.includes(pattern)
    );
    assert.ok(
      at >= 0,
      `no line containing ${JSON.stringify(pattern)} after line ${from}:\n${
        lines.join("\n")
      }`,
    );
    from = at + 1;
  }
}

Deno.test("2025 era: list, read v1, subscribe, notification, read v2", async () => {
  await using lab = await startLab();
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
  await using lab = await startLab();
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
  await using lab = await startLab();
  const response = await fetch(`${lab.base}/healthz`);
  assert.equal(response.status, 200);
  const health = await response.json();
  assert.equal(health.lab, LAB_VERSION);
  assert.equal(health.sdk, SDK_VERSION);
  assert.equal(health.deno, Deno.version.deno);
});
