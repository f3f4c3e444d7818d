/**
 * Content in the update: a 2026-07-28 listen that asks for it (SEP-3119's
 * `embedResources`), and `--inline-content` sending it unasked (SEP-3119's
 * shape or FastRMCP's), over HTTP and stdio, with the verdicts that follow.
 *
 * ```sh
 * deno test -P main_inline_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  Client,
  type JSONRPCMessage,
  StreamableHTTPClientTransport,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { ConfigError, loadConfig, REVIEW_URI } from "./main.ts";
import {
  prepareTestEnvironment,
  startLab,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  assertLinesInOrder,
  eventually,
  loggedStdioLab,
  nextResourceUpdate,
  readReview,
  reportFor,
  subscribeUntilUpdated,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Content in the update: SEP-3119's embedResources, --inline-content
// ---------------------------------------------------------------------------

const VERSION_2_BYTES = new TextEncoder().encode(VERSION_2_TEXT).length;

/**
 * The params of every `notifications/resources/updated` a transport
 * receives, as sent: the SDK's client drops what it does not know.
 */
function rawUpdates(transport: {
  onmessage?: (message: JSONRPCMessage) => void;
}) {
  const seen: Record<string, unknown>[] = [];
  transport.onmessage = (message) => {
    if (
      "method" in message &&
      message.method === "notifications/resources/updated"
    ) {
      seen.push(message.params ?? {});
    }
  };
  return seen;
}

/**
 * Asks for the content in each update: `embedResources: true` on every
 * `subscriptions/listen` the transport sends (the SDK's client has no
 * option for it). Called before `connect`.
 */
function embedResourcesOnListen(transport: Transport) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) =>
    send(
      "id" in message && "method" in message &&
        message.method === "subscriptions/listen"
        ? { ...message, params: { ...message.params, embedResources: true } }
        : message,
      options,
    );
}

/** The text the last update for `uri` carried in its params, if any. */
function inlineText(updates: Record<string, unknown>[], uri: string) {
  return updates.findLast((params) => params.uri === uri)?.text;
}

Deno.test("2026-07-28 era: a listen with embedResources gets version 2 inline, and level 6 needs no re-read", async () => {
  await using lab = startLab();
  const transport = new StreamableHTTPClientTransport(lab.url);
  embedResourcesOnListen(transport);
  const raw = rawUpdates(transport);
  const client = new Client({ name: "embedder", version: "1.0.0" }, {
    versionNegotiation: { mode: "auto" },
  });
  await client.connect(transport);
  await client.listResources();
  assert.equal(await readReview(client), VERSION_1_TEXT);
  const updated = nextResourceUpdate(client);
  const listen = await client.listen({ resourceSubscriptions: [REVIEW_URI] });
  assert.equal(await updated, REVIEW_URI);
  assert.equal(inlineText(raw, REVIEW_URI), VERSION_2_TEXT);
  await eventually(
    () => reportFor(lab, "embedder").steps.deliveredInline,
    "no inline delivery in the report",
  );
  let entry = reportFor(lab, "embedder");
  assert.equal(entry.level, 6);
  assert.equal(entry.levelName, "version 2 delivered inline, not re-read");
  assert.equal(entry.embedResources, true);
  assert.equal(entry.steps.rereadAfterNotification, false);
  assertLinesInOrder(lab.lines, [
    `[subscriptions/listen] uris=${REVIEW_URI} embedResources=true client=embedder/1.0.0`,
    `[notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=true inline=sep-3119 bytes=${VERSION_2_BYTES} embedResources=true client=embedder/1.0.0`,
  ]);
  // The content is the resource's, never a log line's.
  assert.ok(
    !lab.lines.some((line) => line.includes("Simulated review result is now")),
  );
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(markdown, /\| ✅ \| inline \| not observable \| 6 \|/);
  assert.match(
    markdown,
    /Level 6 of 7, version 2 delivered inline, not re-read\./,
  );
  assert.match(
    markdown,
    /L-->>C: notifications\/resources\/updated, new text inline \(sep-3119\)/,
  );

  assert.equal(await readReview(client), VERSION_2_TEXT);
  entry = reportFor(lab, "embedder");
  assert.equal(entry.levelName, "version 2 delivered inline, re-read anyway");
  await listen.close();
  await client.close();
});

Deno.test("2026-07-28 era: without embedResources a listen's updates carry uri and _meta only, and a client is judged as before", async () => {
  await using lab = startLab();
  const transport = new StreamableHTTPClientTransport(lab.url);
  const raw = rawUpdates(transport);
  await using client = Object.assign(
    new Client({ name: "plain-listener", version: "1.0.0" }, {
      versionNegotiation: { mode: "auto" },
    }),
    { [Symbol.asyncDispose]: () => client.close() },
  );
  await client.connect(transport);
  await readReview(client);
  await subscribeUntilUpdated(client);
  assert.deepEqual(Object.keys(raw[0]).sort(), ["_meta", "uri"]);
  const entry = reportFor(lab, "plain-listener");
  assert.equal(entry.level, 5);
  assert.equal(entry.embedResources, false);
  assert.equal(entry.steps.deliveredInline, false);
});

for (
  const [mode, shape] of [["legacy", "fastrmcp"], ["auto", "sep-3119"]] as const
) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`--inline-content ${shape} (${era}): every update carries the text unasked; a client that did not ask stays at level 5`, async () => {
    await using lab = startLab({ MCP_TEST_INLINE_CONTENT: shape });
    const transport = new StreamableHTTPClientTransport(lab.url);
    const raw = rawUpdates(transport);
    await using client = Object.assign(
      new Client({ name: `unasked-${shape}`, version: "1.0.0" }, {
        versionNegotiation: { mode },
      }),
      { [Symbol.asyncDispose]: () => client.close() },
    );
    await client.connect(transport);
    await readReview(client);
    await subscribeUntilUpdated(client);
    const [params] = raw;
    if (shape === "sep-3119") {
      assert.equal(params.mimeType, "text/plain");
      assert.equal(params.text, VERSION_2_TEXT);
    } else {
      assert.deepEqual(params.content, {
        uri: REVIEW_URI,
        mimeType: "text/plain",
        text: VERSION_2_TEXT,
      });
      assert.equal(params.subscription_id, client.transport?.sessionId);
      assert.ok(!Number.isNaN(Date.parse(String(params.timestamp))));
      assert.equal(params.text, undefined);
    }
    assert.ok(
      lab.lines.some((line) =>
        line.startsWith(
          `[notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=true inline=${shape} bytes=${VERSION_2_BYTES} client=unasked-${shape}/`,
        )
      ),
      lab.lines.join("\n"),
    );
    const entry = reportFor(lab, `unasked-${shape}`);
    assert.equal(entry.level, 5);
    assert.equal(entry.steps.deliveredInline, false);
    const report = lab.lab.report();
    assert.equal(report.scenario.inlineContent, shape);
    const markdown = await (await fetch(`${lab.base}/report.md`)).text();
    assert.match(markdown, new RegExp(`content inline \\(${shape}\\)`));
    assert.match(markdown, new RegExp(`--inline-content=${shape}`));
  });
}

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`stdio (${era}): inline content over stdio, asked in 2026-07-28, unasked with --inline-content in 2025`, async () => {
    const flags = mode === "legacy" ? ["--inline-content", "fastrmcp"] : [];
    const { transport, verdictLog } = loggedStdioLab(
      "--delay",
      "0.1",
      ...flags,
    );
    if (mode === "auto") embedResourcesOnListen(transport);
    const raw = rawUpdates(transport);
    const client = new Client({
      name: `stdio-inline-${mode}`,
      version: "1.0.0",
    }, {
      versionNegotiation: {
        mode: mode === "auto" ? { pin: "2026-07-28" } : mode,
      },
    });
    await client.connect(transport);
    assert.equal(await readReview(client), VERSION_1_TEXT);
    const updated = nextResourceUpdate(client);
    const listen = mode === "auto"
      ? await client.listen({ resourceSubscriptions: [REVIEW_URI] })
      : undefined;
    if (!listen) await client.subscribeResource({ uri: REVIEW_URI });
    assert.equal(await updated, REVIEW_URI);
    if (mode === "auto") {
      assert.equal(inlineText(raw, REVIEW_URI), VERSION_2_TEXT);
    } else {
      assert.equal(
        (raw[0].content as { text: string }).text,
        VERSION_2_TEXT,
      );
      assert.equal(raw[0].subscription_id, "stdio");
    }
    await listen?.close();
    await client.close();
    const log = await verdictLog();
    if (mode === "auto") {
      assert.match(
        log,
        /^\[verdict\] level=6 client=stdio-inline-auto\/1\.0\.0 /m,
      );
      assert.match(
        log,
        /^ {2}level 6 of 7: version 2 delivered inline, not re-read$/m,
      );
      assert.match(log, / inline=sep-3119 bytes=\d+ embedResources=true /);
    } else {
      assert.match(
        log,
        /^\[verdict\] level=5 client=stdio-inline-legacy\/1\.0\.0 /m,
      );
      assert.match(log, / inline=fastrmcp bytes=\d+ client=/);
    }
  });
}

Deno.test("--inline-content takes off, sep-3119 or fastrmcp, and says so otherwise", () => {
  assert.equal(loadConfig({}).inlineContent, "off");
  assert.equal(
    loadConfig({ MCP_TEST_INLINE_CONTENT: "fastrmcp" }).inlineContent,
    "fastrmcp",
  );
  assert.throws(
    () => loadConfig({}, { "inline-content": "yes" }),
    (error) =>
      error instanceof ConfigError &&
      error.message ===
        '--inline-content="yes" is not allowed: expected off/sep-3119/fastrmcp',
  );
});
