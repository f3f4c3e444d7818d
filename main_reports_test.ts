/**
 * The lab's verdicts and reports: each level and what is missing for the
 * next, `/report`, `/report.md` and the JSON log, the report as a bug report
 * (how to reproduce, one client's, its size bound, the report file), and
 * reports under hostile client names.
 *
 * ```sh
 * deno test -P main_reports_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  cell,
  LAB_VERSION,
  type LabReport,
  loadConfig,
  parseCommandLine,
  REVIEW_URI,
  SDK_VERSION,
} from "./main.ts";
import { prepareTestEnvironment, startLab } from "./testdata/lab.ts";
import {
  assertLinesInOrder,
  assertSequenceDiagram,
  connectClient,
  eventually,
  handleOf,
  inParallel,
  openRawSession,
  postJsonRpc,
  postModern,
  rawRead,
  rawSubscribe,
  readReview,
  reportFor,
  stdioReadOnce,
  subscribeUntilUpdated,
  within,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Verdicts: each level, and what is missing
// ---------------------------------------------------------------------------

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";

  Deno.test(`verdict (${era}): the whole flow reaches level 6`, async () => {
    await using lab = startLab();
    await using client = await connectClient(lab.url, `whole-${mode}`, mode);
    await client.listResources();
    await readReview(client);
    await subscribeUntilUpdated(client);
    await readReview(client);
    const entry = reportFor(lab, `whole-${mode}`);
    assert.equal(entry.level, 6);
    assert.equal(entry.levelName, "re-read after the notification");
    assert.equal(entry.era, era);
    assert.deepEqual(entry.steps, {
      connected: true,
      listed: true,
      readV1: true,
      subscribed: true,
      notificationDelivered: true,
      rereadAfterNotification: true,
      deliveredInline: false,
      contextUpdated: "not observable",
    });
    assert.equal(
      entry.missing,
      "level 7 (the agent's context shows the update) is not observable from the server",
    );
    assert.equal(entry.updatesSent, 1);
    assert.equal(entry.lastVersionRead, 2);
  });

  Deno.test(`verdict (${era}): a client that reads but never subscribes stops at 3`, async () => {
    await using lab = startLab();
    await using client = await connectClient(lab.url, `reader-${mode}`, mode);
    await client.listResources();
    await readReview(client);
    const entry = reportFor(lab, `reader-${mode}`);
    assert.equal(entry.level, 3);
    assert.equal(
      entry.missing,
      mode === "legacy"
        ? `never subscribed to ${REVIEW_URI} (resources/subscribe)`
        : `never opened subscriptions/listen for ${REVIEW_URI}`,
    );
    assert.equal(entry.updatesSent, 0);
  });
}

Deno.test("verdict (2025): a client that never opens the GET stream is told its notification was lost", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.05" });
  const sessionId = await openRawSession(lab.url);
  for (
    const [id, method, params] of [
      [2, "resources/list", {}],
      [3, "resources/read", { uri: REVIEW_URI }],
      [4, "resources/subscribe", { uri: REVIEW_URI }],
    ] as const
  ) {
    const answer = await postJsonRpc(lab.url, {
      jsonrpc: "2.0",
      id,
      method,
      params,
    }, { "mcp-session-id": sessionId });
    assert.equal(answer.status, 200);
  }
  await eventually(
    () => reportFor(lab, "raw-legacy").notificationsLost === 1,
    "the update was not sent",
  );
  const entry = reportFor(lab, "raw-legacy");
  assert.equal(entry.level, 4);
  assert.equal(
    entry.missing,
    "the notification was lost: the client never opened the GET stream it would need",
  );
  const deleted = await fetch(lab.url, {
    method: "DELETE",
    headers: { "mcp-session-id": sessionId },
  });
  await deleted.body?.cancel();
  // The session's end prints its verdict block with the lost notification.
  assertLinesInOrder(lab.lines, [
    `[session/end] session=${handleOf(sessionId)} reason=delete`,
    `[verdict] level=4 client=raw-legacy/0.0.1 era=2025`,
    "  level 4 of 7: subscribed",
    "  next: the notification was lost: the client never opened the GET stream it would need",
    `  evidence: [resources/subscribe] uri=${REVIEW_URI}`,
    `  evidence: [notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=false reason="no GET stream open"`,
  ]);
  const ended = reportFor(lab, "raw-legacy");
  assert.equal(ended.ended, "delete");
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.ok(
    markdown.includes(
      "    L--xC: notifications/resources/updated (lost: no GET stream open)\n",
    ),
    markdown,
  );
});

Deno.test("verdict (2026-07-28): a listen stream that closed before the update is reported", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.3" });
  await using client = await connectClient(lab.url, "early-closer", "auto");
  await client.listResources();
  await readReview(client);
  const subscription = await client.listen({
    resourceSubscriptions: [REVIEW_URI],
  });
  await subscription.close();
  await eventually(
    () => lab.lab.counts().listenStreams === 0,
    "the listen stream did not close",
  );
  const entry = reportFor(lab, "early-closer");
  assert.equal(entry.level, 4);
  assert.equal(entry.missing, "the listen stream closed before the update");
});

Deno.test("2025 era: a GET stream reset right after a notification is written makes the verdict say it may not have arrived", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.1" });
  const sessionId = await openRawSession(lab.url);
  const stream = await Deno.connect({
    hostname: "127.0.0.1",
    port: Number(lab.url.port),
  });
  await stream.write(new TextEncoder().encode(
    `GET /mcp HTTP/1.1\r\nHost: ${lab.url.host}\r\n` +
      `Accept: text/event-stream\r\nMcp-Session-Id: ${sessionId}\r\n\r\n`,
  ));
  await stream.read(new Uint8Array(4096));
  const read = await rawRead(lab.url, sessionId);
  assert.equal(read.status, 200);
  await (await rawSubscribe(lab.url, sessionId)).body?.cancel();
  await eventually(
    () =>
      lab.lines.some((line) =>
        line.startsWith("[notification/send]") &&
        line.includes("delivered=true")
      ),
    "a delivered notification",
  );
  stream.close();
  await eventually(
    () => lab.lines.some((line) => line.startsWith("[stream/get] closed")),
    "the GET stream closing",
  );
  assert.match(
    lab.lines.find((line) => line.startsWith("[stream/get] closed"))!,
    /resetAfterNotificationMs=\d+ /,
  );
  const entry = lab.lab.report().clients.find((c) => c.name === "raw-legacy")!;
  assert.equal(entry.level, 5);
  assert.match(
    entry.missing,
    /^the client reset its GET stream \d+ ms after the notification was written to it: it may not have arrived$/,
  );
});

// ---------------------------------------------------------------------------
// /report, /report.md and the JSON log
// ---------------------------------------------------------------------------

Deno.test("/report.md: a matrix row per client and a sequence diagram of what it did", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.05" });
  await using whole = await connectClient(lab.url, "md-whole");
  await whole.listResources();
  await readReview(whole);
  await subscribeUntilUpdated(whole);
  await readReview(whole);
  await using reader = await connectClient(lab.url, "md-reader", "auto");
  await readReview(reader);

  const response = await fetch(`${lab.base}/report.md`);
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type")!, /^text\/markdown/);
  const markdown = await response.text();
  const rows = markdown.split("\n").filter((line) => line.startsWith("| md-"));
  assert.deepEqual(rows, [
    "| md-whole | 1.0.0 | 2025 (2025-11-25) | streamable-http | ✅ | ✅ | ✅ | ✅ | ✅ | ✅ | not observable | 6 | off | level 7 (the agent's context shows the update) is not observable from the server |",
    `| md-reader | 1.0.0 | 2026-07-28 (2026-07-28) | streamable-http | ✅ | ❌ | ✅ | ❌ | ❌ | ❌ | not observable | 3 | off | never opened subscriptions/listen for ${REVIEW_URI} |`,
  ]);
  const header = markdown.split("\n").find((line) =>
    line.startsWith("| Client |")
  )!;
  assert.equal(header.split("|").length, rows[0].split("|").length);

  const diagrams = [...markdown.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((
    match,
  ) => match[1]);
  assert.equal(diagrams.length, 2);
  for (const diagram of diagrams) assertSequenceDiagram(diagram);
  assert.deepEqual(
    diagrams[0].trim().split("\n").slice(3).map((line) => line.trim()),
    [
      "C->>L: initialize (2025-11-25)",
      "C->>L: GET (opens the notification stream)",
      "C->>L: resources/list",
      "C->>L: resources/read (v1)",
      "C->>L: resources/subscribe",
      "Note over L: resource moves to v2",
      "L-->>C: notifications/resources/updated",
      "C->>L: resources/read (v2)",
    ],
  );
  assert.match(markdown, /^## md-whole\/1\.0\.0 \(2025, [0-9a-f]{8}\)$/m);
  assert.match(markdown, /^Level 6 of 7, re-read after the notification\./m);
});

Deno.test("/report: stable fields for every client", async () => {
  await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0.05" });
  await using client = await connectClient(lab.url, "json-report", "auto");
  await readReview(client);
  const response = await fetch(`${lab.base}/report`);
  assert.equal(response.status, 200);
  const report: LabReport = await response.json();
  assert.equal(report.lab, LAB_VERSION);
  assert.equal(report.sdk, SDK_VERSION);
  assert.deepEqual(report.scenario, {
    era: "both",
    trigger: "subscribe",
    updateDelaySeconds: 0.05,
    updateCount: 1,
    updateIntervalSeconds: 5,
    sendListChanged: false,
    inlineContent: "off",
    catalogChange: "off",
    toolEnabled: false,
    maxWatches: null,
    streamLifetimeSeconds: null,
    streamEnd: "graceful",
  });
  const [entry] = report.clients;
  assert.deepEqual(Object.keys(entry), [
    "id",
    "name",
    "version",
    "era",
    "protocolVersion",
    "transport",
    "firstSeen",
    "lastSeen",
    "ended",
    "trigger",
    "level",
    "levelName",
    "missing",
    "steps",
    "resourceVersion",
    "lastVersionRead",
    "updatesSent",
    "notificationsLost",
    "readVia",
    "waitTool",
    "listenStreamsAtOnce",
    "embedResources",
    "catalog",
    "timeline",
    "timelineDropped",
  ]);
  assert.equal(entry.id, "json-report@1.0.0");
  assert.deepEqual(
    entry.timeline.map((step) => step.kind),
    ["connect", "read"],
  );
  assert.match(
    entry.timeline[1].line,
    /^\[resources\/read\] uri=test:\/\/review\/status version=1 client=json-report\/1\.0\.0 /,
  );
});

Deno.test("MCP_TEST_LOG_FORMAT=json: one object per line with the text line's fields", async () => {
  await using lab = startLab({ MCP_TEST_LOG_FORMAT: "json" });
  await using client = await connectClient(lab.url, "json-logger");
  await readReview(client);
  const events = lab.lines.map((line) => JSON.parse(line));
  const read = events.find((event) => event.event === "resources/read");
  assert.deepEqual(Object.keys(read), [
    "event",
    "uri",
    "version",
    "client",
    "era",
    "protocol",
    "at",
  ]);
  assert.equal(read.uri, REVIEW_URI);
  assert.equal(read.version, 1);
  assert.equal(read.client, "json-logger/1.0.0");
  const connect = events.find((event) => event.event === "initialize");
  assert.equal(connect.text, "client connected");
});

Deno.test("reports and logs name a 2025 session by a hash prefix, never its id, unless MCP_TEST_LOG_SESSION_IDS says so", async () => {
  for (const shown of [false, true]) {
    await using lab = startLab({ MCP_TEST_LOG_SESSION_IDS: String(shown) });
    const sessionId = await openRawSession(lab.url);
    const report = await (await fetch(`${lab.base}/report`)).text();
    const markdown = await (await fetch(`${lab.base}/report.md`)).text();
    const everything = [report, markdown, ...lab.lines].join("\n");
    assert.equal(everything.includes(sessionId), shown);
    const id = (JSON.parse(report) as LabReport).clients[0].id;
    assert.equal(id, shown ? sessionId : handleOf(sessionId));
  }
});

// ---------------------------------------------------------------------------
// The report as a bug report: reproduce, one client, size, report file
// ---------------------------------------------------------------------------

Deno.test("/report.md ends with how to reproduce this lab: its non-default settings as flags, versions, the client's setup line, never the token", async () => {
  const token = "report-secret-91c2";
  await using lab = startLab({
    MCP_TEST_UPDATE_TRIGGER: "read",
    MCP_TEST_ENABLE_TOOL: "true",
    MCP_TEST_INITIAL_STATUS: "waiting on CI",
    MCP_TEST_AUTH_TOKEN: token,
  });
  const auth = { authorization: `Bearer ${token}` };
  const answer = await postModern(lab.url, "resources/read", {
    uri: REVIEW_URI,
  }, { client: "claude-code", headers: auth });
  await answer.body?.cancel();
  const markdown = await (await fetch(`${lab.base}/report.md`, {
    headers: auth,
  })).text();
  const json = await (await fetch(`${lab.base}/report`, { headers: auth }))
    .text();
  const command =
    "deno run -A main.ts --delay=0.2 --trigger=read --initial-status='waiting on CI' --enable-tool --log-level=info";
  const reproduce = markdown.split("## Reproduce\n")[1];
  assert.deepEqual(reproduce.split("\n"), [
    "",
    "Start the same lab:",
    "",
    "```sh",
    command,
    "```",
    "",
    `Started from a local file, lab ${LAB_VERSION}: to be sure of the same lab, run main.ts from a URL pinned at that version (a tag or a commit of the lab's repository).`,
    "",
    "This lab required a bearer token (MCP_TEST_AUTH_TOKEN); set one of your own.",
    "",
    `Lab ${LAB_VERSION}, MCP SDK ${SDK_VERSION}, Deno ${Deno.version.deno}, ${Deno.build.os} ${Deno.build.arch}.`,
    "",
    "How to point Claude Code at the lab: docs/client-setup.md in the lab's repository.",
    "",
    "Where to file this report, and the requests already open: docs/bug-reports.md in the lab's repository.",
    "",
  ]);
  assert.equal(JSON.parse(json).reproduce.command, command);
  assert.ok(!markdown.includes(token) && !json.includes(token));
});

Deno.test("/report.md?client=NAME: that client's row, verdict, evidence and diagram alone; an unknown name is a 404 listing the names", async () => {
  await using lab = startLab();
  for (const name of ["first-client", "second-client"]) {
    const answer = await postModern(lab.url, "resources/read", {
      uri: REVIEW_URI,
    }, { client: name });
    await answer.body?.cancel();
  }
  const one = await fetch(`${lab.base}/report.md?client=second-client`);
  assert.equal(one.status, 200);
  const markdown = await one.text();
  const rows = markdown.split("\n").filter((line) => line.startsWith("| "));
  assert.equal(rows.length, 3);
  assert.ok(rows[2].startsWith("| second-client | 1.0.0 |"), rows[2]);
  assert.ok(!markdown.includes("first-client"));
  assert.match(markdown, /^## second-client\/1\.0\.0 \(2026-07-28, /m);
  assert.match(
    markdown,
    /^- &#91;resources\/read&#93; uri=test:\/\/review\/status version=1 client=second-client\/1\.0\.0 /m,
  );
  assert.match(markdown, /^## Reproduce$/m);
  const unknown = await fetch(`${lab.base}/report.md?client=nobody`);
  assert.equal(unknown.status, 404);
  assert.equal(
    await unknown.text(),
    "Not Found: no client named nobody in the report; it holds first-client, second-client\n",
  );
});

Deno.test("/report.md with 1,000 clients stays within 65,536 characters: the table and verdicts first, the oldest clients' evidence and diagrams trimmed, and it says so", async () => {
  await using lab = startLab({ MCP_TEST_LOG_LEVEL: "silent" });
  await inParallel(1000, 50, async (index) => {
    const answer = await postModern(lab.url, "resources/read", {
      uri: REVIEW_URI,
    }, { client: `client-${String(index).padStart(4, "0")}` });
    await answer.body?.cancel();
  });
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.ok(markdown.length <= 65_536, `${markdown.length}`);
  const note = markdown.split("\n").find((line) => line.startsWith("Trimmed"));
  assert.match(
    note ?? "",
    /^Trimmed to 65536 characters, GitHub's limit on an issue body: the evidence and diagrams of the 1000 oldest client\(s\), the verdicts of the 1000 oldest, and the table rows of the \d+ oldest are left out\. The full report is JSON at \/report\.$/,
  );
  // The newest client's row is kept, and the reproduce section.
  assert.match(markdown, /^\| client-0999 \| 1\.0\.0 \|/m);
  assert.match(markdown, /^## Reproduce$/m);
});

Deno.test("--stdio --report-file: the Markdown report is written when the client ends, whole, with how to start that lab", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/lab-report.md`;
  const { child, writer, stderr } = await stdioReadOnce(
    ["--report-file", path, "--delay", "30"],
    { name: "report-file-client", version: "2.0.0" },
  );
  await writer.close();
  assert.equal((await child.status).code, 0);
  await stderr;
  const report = await Deno.readTextFile(path);
  assert.match(
    report,
    /^\| report-file-client \| 2\.0\.0 \| 2025 \(2025-11-25\) \| stdio \| ✅ \| ❌ \| ✅ \| ❌ /m,
  );
  assert.ok(
    report.includes(
      `\`\`\`sh\ndeno run -A main.ts --stdio --delay=30 --report-file=${path}\n\`\`\``,
    ),
    report,
  );
  // Written whole: no temporary file is left beside it.
  assert.deepEqual(
    [...Deno.readDirSync(dir)].map((entry) => entry.name),
    ["lab-report.md"],
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("MCP_TEST_REPORT_FILE over HTTP: written when a session ends and again at shutdown", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/report.md`;
  const lab = startLab({ MCP_TEST_REPORT_FILE: path });
  const sessionId = await openRawSession(lab.url);
  await fetch(lab.url, {
    method: "DELETE",
    headers: { "mcp-session-id": sessionId },
  });
  await eventually(() => {
    try {
      return Deno.readTextFileSync(path).includes("| raw-legacy | 0.0.1 |");
    } catch {
      return false;
    }
  }, "the report file after the session ended");
  await using client = await connectClient(lab.url, "still-here");
  await client.listResources();
  await lab[Symbol.asyncDispose]();
  const final = await Deno.readTextFile(path);
  assert.match(final, /^\| still-here \| 1\.0\.0 \|/m);
  assert.match(final, /^\| raw-legacy \| 0\.0\.1 \|/m);
  await Deno.remove(dir, { recursive: true });
});

// ---------------------------------------------------------------------------
// Reports under hostile names: prototype keys, links, mentions, long names
// ---------------------------------------------------------------------------

/** A 2026-07-28 client that reads the resource once, under `name`. */
async function readAs(url: URL, name: string) {
  const answer = await postModern(url, "resources/read", { uri: REVIEW_URI }, {
    client: name,
  });
  await answer.body?.cancel();
}

const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype);

Deno.test("clients named after every Object.prototype key: /report.md answers, /report has no null guide, ?client= finds each", async () => {
  await using lab = startLab({ MCP_TEST_LOG_LEVEL: "silent" });
  for (const name of PROTOTYPE_NAMES) await readAs(lab.url, name);
  const markdown = await fetch(`${lab.base}/report.md`);
  assert.equal(markdown.status, 200);
  const text = await markdown.text();
  for (const name of PROTOTYPE_NAMES) {
    assert.match(text, new RegExp(`^\\| ${cell(name)} \\| 1\\.0\\.0 \\|`, "m"));
  }
  const report = await (await fetch(`${lab.base}/report`)).json();
  assert.deepEqual(report.reproduce.clients, []);
  for (const name of ["constructor", "toString", "__proto__"]) {
    const one = await fetch(
      `${lab.base}/report.md?client=${encodeURIComponent(name)}`,
    );
    assert.equal(one.status, 200, name);
    assert.match(
      await one.text(),
      new RegExp(`^## ${cell(name)}/1\\.0\\.0 `, "m"),
    );
  }
});

Deno.test("--stdio --report-file: a client named constructor still gets its report written", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/report.md`;
  const { child, writer, stderr } = await stdioReadOnce(
    ["--report-file", path],
    { name: "constructor", version: "1.0.0" },
  );
  await writer.close();
  assert.equal((await child.status).code, 0);
  await stderr;
  assert.match(await Deno.readTextFile(path), /^\| constructor \| 1\.0\.0 \|/m);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("/report.md: names and versions that GitHub would link or mention stay inert text outside code", async () => {
  await using lab = startLab({ MCP_TEST_LOG_LEVEL: "silent" });
  const names = [
    "https://evil.example/x",
    "HTTP://evil.example",
    "ftp://evil.example",
    "www.evil.example",
    "@team",
    "@org/team",
    "a@b.c",
  ];
  for (const name of names) await readAs(lab.url, name);
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) inFence = !inFence;
    if (inFence) continue;
    assert.doesNotMatch(line, /(https?|ftp):\/\/|www\.|@\w/i, line);
  }
  assert.match(markdown, /^\| https:<wbr>\/\/evil\.example\/x \| 1\.0\.0 \|/m);
  assert.match(markdown, /^\| a@<wbr>b\.c \| 1\.0\.0 \|/m);
  // Asked for as the table shows it, the client is found.
  const one = await fetch(
    `${lab.base}/report.md?client=${encodeURIComponent("a@<wbr>b.c")}`,
  );
  assert.equal(one.status, 200);
});

Deno.test("/report.md?client=: a name as the table shows it is found; an unknown long name is echoed cut to 64 characters", async () => {
  await using lab = startLab({ MCP_TEST_LOG_LEVEL: "silent" });
  await readAs(lab.url, "a|b");
  const shown = await fetch(
    `${lab.base}/report.md?client=${encodeURIComponent("a&#124;b")}`,
  );
  assert.equal(shown.status, 200);
  assert.match(await shown.text(), /^## a&#124;b\/1\.0\.0 /m);
  const long = await fetch(
    `${lab.base}/report.md?client=${"n".repeat(60_000)}`,
  );
  assert.equal(long.status, 404);
  assert.equal(
    await long.text(),
    `Not Found: no client named ${
      "n".repeat(63)
    }… in the report; it holds a|b\n`,
  );
});

Deno.test("Reproduce: a value that starts with - is written --flag=value, and the command reads back the same settings", async () => {
  await using lab = startLab({
    MCP_TEST_INITIAL_STATUS: "-x",
    MCP_TEST_UPDATED_STATUS: "--done",
  });
  const reproduce = lab.lab.report().reproduce!;
  assert.equal(
    reproduce.command,
    "deno run -A main.ts --delay=0.2 --initial-status=-x --updated-status=--done --log-level=info",
  );
  const { flags } = parseCommandLine(reproduce.command.split(" ").slice(4));
  const config = loadConfig({}, flags);
  assert.equal(config.initialStatus, "-x");
  assert.equal(config.updatedStatus, "--done");
});

Deno.test("--report-file never writes through a link planted where its temporary file was predictable", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/report.md`;
  const victim = `${dir}/victim.txt`;
  await Deno.writeTextFile(victim, "precious\n");
  // The name the lab used to write to first: PATH.<pid>.tmp.
  await Deno.symlink(victim, `${path}.${Deno.pid}.tmp`);
  const lab = startLab({ MCP_TEST_REPORT_FILE: path });
  const sessionId = await openRawSession(lab.url);
  await fetch(lab.url, {
    method: "DELETE",
    headers: { "mcp-session-id": sessionId },
  });
  await lab[Symbol.asyncDispose]();
  assert.equal(await Deno.readTextFile(victim), "precious\n");
  assert.match(await Deno.readTextFile(path), /^\| raw-legacy \| 0\.0\.1 \|/m);
  // Nothing of the lab's is left beside it: the report, the planted link,
  // the victim.
  assert.deepEqual(
    [...Deno.readDirSync(dir)].map((entry) => entry.name).sort(),
    ["report.md", `report.md.${Deno.pid}.tmp`, "victim.txt"].sort(),
  );
  assert.ok(Deno.lstatSync(path).isFile);
  await Deno.remove(dir, { recursive: true });
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.test(`--stdio: ${signal} while the client keeps stdin open writes the report file as its EOF would`, async () => {
    const dir = await Deno.makeTempDir();
    const path = `${dir}/report.md`;
    const { child, writer, stderr } = await stdioReadOnce(
      ["--report-file", path, "--log-level", "warn"],
      { name: "signalled", version: "1.0.0" },
    );
    child.kill(signal);
    const status = await within(child.status, 5_000, "the lab's exit");
    await writer.close().catch(() => {});
    assert.equal(status.code, 0);
    assert.deepEqual((await stderr).split("\n").slice(1), [
      `[lab] ${signal}: closing stdio`,
      "",
    ]);
    assert.match(
      await Deno.readTextFile(path),
      /^\| signalled \| 1\.0\.0 \| 2025 \(2025-11-25\) \| stdio \| ✅ \| ❌ \| ✅ \|/m,
    );
    await Deno.remove(dir, { recursive: true });
  });
}
