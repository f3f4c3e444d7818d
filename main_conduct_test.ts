/**
 * A client's conduct beside the ladders: the diagnosis judged from
 * constructed records (each diagnosis with a record that shows the defect and
 * one that does not), then end to end with the SDK v2 client and raw clients:
 * `/report`'s `conduct`, `/report.md`'s block, the verdict block, and the CI
 * gate's conduct bounds (`--require-max-streams`, `--require-max-reopens`).
 *
 * ```sh
 * deno test -P main_conduct_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  conductOf,
  type ConductRecord,
  type LabReport,
  REVIEW_URI,
  type Step,
  type StepKind,
} from "./main.ts";
import { MAIN_PATH } from "./launch.ts";
import { prepareTestEnvironment, startLab } from "./testdata/lab.ts";
import {
  connectClient,
  eventually,
  gateRun,
  initializeMessage,
  openRawSession,
  postModern,
  rawSubscribe,
  readReview,
  reportFor,
  subscribeUntilUpdated,
  within,
} from "./testdata/lab_clients.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The diagnosis, from constructed records
// ---------------------------------------------------------------------------

const T0 = Date.parse("2026-12-03T12:00:00.000Z");

/** A step `seconds` after T0, with its evidence line's fields. */
function step(
  seconds: number,
  kind: StepKind,
  fields: NonNullable<Step["evidence"]["fields"]> = {},
): Step {
  return { at: T0 + seconds * 1000, kind, evidence: { tag: kind, fields } };
}

function record(
  steps: Step[],
  more: Partial<ConductRecord> = {},
): ConductRecord {
  return {
    era: "2026-07-28",
    connected: true,
    steps,
    peakListens: 0,
    labEra: "both",
    now: T0 + 600_000,
    ...more,
  };
}

const connect = step(0, "connect");
const watching = { uris: REVIEW_URI };

Deno.test("a client that listens once, is notified and re-reads has good conduct", () => {
  const conduct = conductOf(record([
    connect,
    step(1, "listen", watching),
    step(5, "update"),
    step(5, "notify", { delivered: true }),
    step(6, "read"),
  ], { peakListens: 1 }));
  assert.deepEqual(conduct.diagnoses, []);
  assert.deepEqual(conduct.listens, {
    opened: 1,
    mostAtOnce: 1,
    endedByLab: { graceful: 0, abrupt: 0 },
    endedByClient: 0,
    reopensAMinute: 0,
    backoff: null,
    afterLabEnd: null,
  });
  assert.equal(conduct.updateAfterCut, null);
  assert.deepEqual(conduct.era, { settled: "2026-07-28", refusedRequests: 0 });
});

Deno.test("never listening again after the lab ended the stream is diagnosed, with the update lost", () => {
  const conduct = conductOf(record([
    connect,
    step(1, "listen", watching),
    step(2, "listen-closed", { by: "lab", end: "graceful" }),
    step(5, "update"),
    step(5, "notify", { delivered: false, reason: "no listen stream open" }),
  ]));
  assert.deepEqual(conduct.listens.endedByLab, { graceful: 1, abrupt: 0 });
  assert.equal(conduct.listens.endedByClient, 0);
  assert.equal(conduct.listens.afterLabEnd, "never");
  assert.deepEqual(conduct.updateAfterCut, {
    at: "2026-12-03T12:00:05.000Z",
    received: false,
  });
  assert.deepEqual(conduct.diagnoses, [
    "never listened again after the stream ended: the update at 2026-12-03T12:00:05.000Z was lost",
  ]);
});

Deno.test("a listen opened again after the lab ended it receives the update: no diagnosis", () => {
  const conduct = conductOf(record([
    connect,
    step(1, "listen", watching),
    step(2, "listen-closed", { by: "lab", end: "abrupt" }),
    step(3.5, "listen", watching),
    step(5, "update"),
    step(5, "notify", { delivered: true }),
  ]));
  assert.deepEqual(conduct.listens.endedByLab, { graceful: 0, abrupt: 1 });
  assert.deepEqual(conduct.listens.afterLabEnd, { reopenedAfterSeconds: 1.5 });
  assert.deepEqual(conduct.updateAfterCut, {
    at: "2026-12-03T12:00:05.000Z",
    received: true,
  });
  assert.deepEqual(conduct.diagnoses, []);
});

Deno.test("a 2025 GET stream the lab ended and never opened again is diagnosed; a close by the client is not the lab's", () => {
  const cut = conductOf(record([
    connect,
    step(1, "stream-opened"),
    step(2, "stream-closed", { by: "lab", end: "abrupt" }),
  ], { era: "2025" }));
  assert.deepEqual(cut.diagnoses, [
    "never opened its GET stream again after the stream ended",
  ]);
  const byClient = conductOf(record([
    connect,
    step(1, "stream-opened"),
    step(2, "stream-closed"),
  ], { era: "2025" }));
  assert.equal(byClient.getStreams.endedByClient, 1);
  assert.equal(byClient.getStreams.afterLabEnd, null);
  assert.deepEqual(byClient.diagnoses, []);
});

/** A listen opened every `gap(i)` seconds and closed by the client at once. */
function relistens(count: number, gap: (index: number) => number) {
  const steps = [connect];
  let at = 1;
  for (let index = 0; index < count; index++) {
    steps.push(step(at, "listen", watching), step(at, "listen-closed"));
    at += gap(index);
  }
  return steps;
}

Deno.test("re-opening a listen in a tight loop is hammering, with no backoff", () => {
  const conduct = conductOf(record(relistens(241, () => 0.25)));
  assert.equal(conduct.listens.reopensAMinute, 240);
  assert.equal(conduct.listens.backoff, false);
  assert.deepEqual(conduct.diagnoses, [
    "re-opened the listen 240 times a minute (no backoff)",
  ]);
});

Deno.test("re-opening below the hammering rate, or backing off, is no defect", () => {
  const slow = conductOf(record(relistens(30, () => 2)));
  assert.equal(slow.listens.reopensAMinute, 29);
  assert.deepEqual(slow.diagnoses, []);
  const backingOff = conductOf(record(relistens(8, (index) => 2 ** index)));
  assert.equal(backingOff.listens.backoff, true);
  assert.deepEqual(backingOff.diagnoses, []);
  const limit = 60;
  const fast = conductOf(record(relistens(limit + 1, () => 0.5)));
  assert.equal(fast.listens.reopensAMinute, limit);
  assert.deepEqual(fast.diagnoses, [
    `re-opened the listen ${limit} times a minute (no backoff)`,
  ]);
});

Deno.test("several listens open at once are diagnosed, counted across replicas too", () => {
  const four = conductOf(record([
    connect,
    step(1, "listen", watching),
    step(1, "listen", watching),
    step(1, "listen", watching),
    step(1, "listen", watching),
  ]));
  assert.equal(four.listens.mostAtOnce, 4);
  assert.deepEqual(four.diagnoses, ["4 listens open at once"]);
  const replicas = conductOf(record([connect, step(1, "listen", watching)], {
    peakListens: 2,
  }));
  assert.deepEqual(replicas.diagnoses, ["2 listens open at once"]);
  const oneAtATime = conductOf(record(relistens(3, () => 30)));
  assert.equal(oneAtATime.listens.mostAtOnce, 1);
  assert.deepEqual(oneAtATime.diagnoses, []);
});

Deno.test("a listen whose acknowledgement honoured nothing, held, is diagnosed; one with a list change is not", () => {
  const useless = conductOf(record([
    connect,
    step(1, "listen", { uris: "", ignored: "file:///other" }),
    step(31, "listen-closed"),
  ]));
  assert.deepEqual(useless.uselessListens, { count: 1, longestSeconds: 30 });
  assert.deepEqual(useless.diagnoses, [
    "held a listen whose acknowledgement honoured nothing (30 s)",
  ]);
  const stillOpen = conductOf(record([connect, step(590, "listen", {})]));
  assert.deepEqual(stillOpen.uselessListens, { count: 1, longestSeconds: 10 });
  const dropped = conductOf(record([
    connect,
    step(1, "listen", { uris: "" }),
    step(2, "listen-closed"),
  ]));
  assert.deepEqual(dropped.diagnoses, []);
  const lists = conductOf(record([
    connect,
    step(1, "listen", { uris: "", listChanged: "tools" }),
  ]));
  assert.deepEqual(lists.uselessListens, { count: 0, longestSeconds: 0 });
  assert.deepEqual(lists.diagnoses, []);
});

/** A listen refused `count` times, `gap` seconds apart. */
function refusedListens(count: number, gap: number) {
  return [
    connect,
    ...Array.from(
      { length: count },
      (_, index) => step(1 + index * gap, "refused", { code: -32603 }),
    ),
  ];
}

Deno.test("retrying a refused listen often is diagnosed; once, or reading instead, is not", () => {
  const hammering = conductOf(record(refusedListens(61, 1)));
  assert.equal(hammering.refusedWatches, 61);
  assert.equal(hammering.afterRefusal, "retried");
  assert.equal(hammering.retriesAMinute, 60);
  assert.deepEqual(hammering.diagnoses, [
    "retried a refused listen 60 times a minute",
  ]);
  const subscribes = conductOf(record(refusedListens(11, 1), { era: "2025" }));
  assert.deepEqual(subscribes.diagnoses, [
    "retried a refused subscribe 10 times a minute",
  ]);
  const politely = conductOf(record(refusedListens(5, 30)));
  assert.equal(politely.afterRefusal, "retried");
  assert.deepEqual(politely.diagnoses, []);
  const reads = conductOf(record([...refusedListens(1, 1), step(3, "read")]));
  assert.equal(reads.afterRefusal, "read the resource");
  assert.deepEqual(reads.diagnoses, []);
  const nothing = conductOf(record(refusedListens(1, 1)));
  assert.equal(nothing.afterRefusal, "nothing");
  assert.equal(conductOf(record([connect])).afterRefusal, null);
});

Deno.test("a client refused in its era that never got through is diagnosed; one that fell back is not", () => {
  const eraRefused = step(0, "refused", { code: -32022 });
  const stuck = conductOf(record([eraRefused, eraRefused], {
    era: "2025",
    connected: false,
    labEra: "2026-07-28",
  }));
  assert.deepEqual(stuck.era, { settled: null, refusedRequests: 2 });
  assert.equal(stuck.refusedWatches, 0);
  assert.deepEqual(stuck.diagnoses, [
    "could not talk to a 2026-07-28-only server",
  ]);
  const fellBack = conductOf(record([eraRefused, step(1, "connect")], {
    labEra: "2026-07-28",
  }));
  assert.deepEqual(fellBack.era, { settled: "2026-07-28", refusedRequests: 1 });
  assert.deepEqual(fellBack.diagnoses, []);
});

// ---------------------------------------------------------------------------
// End to end: the SDK v2 client and raw clients against the lab
// ---------------------------------------------------------------------------

/** A raw 2026-07-28 listen for the lab's resource, as `client`. */
function rawListen(url: URL, client: string) {
  return postModern(url, "subscriptions/listen", {
    notifications: { resourceSubscriptions: [REVIEW_URI] },
  }, { client, headers: { accept: "application/json, text/event-stream" } });
}

/** Opens a listen and drops it at once, `count` times in a row. */
async function relistenInALoop(url: URL, client: string, count: number) {
  for (let index = 0; index < count; index++) {
    const listen = await rawListen(url, client);
    assert.equal(listen.headers.get("content-type"), "text/event-stream");
    await listen.body!.cancel();
  }
}

Deno.test("conduct: the SDK v2 client that watches once, in either era, has no diagnosis; the reports say so", async () => {
  await using lab = startLab();
  for (
    const [name, mode] of [["polite-2025", "legacy"], [
      "polite-2026",
      "auto",
    ]] as const
  ) {
    await using client = await connectClient(lab.url, name, mode);
    await readReview(client);
    await subscribeUntilUpdated(client);
    await readReview(client);
    const { conduct, level } = reportFor(lab, name);
    assert.equal(level, 6);
    assert.deepEqual(conduct.diagnoses, []);
    assert.equal(conduct.refusedWatches, 0);
    assert.deepEqual(conduct.era, {
      settled: mode === "auto" ? "2026-07-28" : "2025",
      refusedRequests: 0,
    });
    const streams = mode === "auto" ? conduct.listens : conduct.getStreams;
    assert.equal(streams.opened, 1);
    assert.equal(streams.mostAtOnce, 1);
    assert.equal(streams.reopensAMinute, 0);
  }
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(
    markdown,
    /^## polite-2026\/1\.0\.0 [^]*?^Conduct: no defect seen\.$/m,
  );
  assert.match(
    markdown,
    /^- listens: `\{"opened":1,"mostAtOnce":1,"endedByLab":\{"graceful":0,"abrupt":0\},"endedByClient":1,"reopensAMinute":0,"backoff":null,"afterLabEnd":null\}`$/m,
  );
});

Deno.test("conduct: a raw client re-opening a listen in a tight loop is diagnosed, in /report and /report.md", async () => {
  await using lab = startLab();
  await relistenInALoop(lab.url, "hammer", 70);
  await eventually(
    () => reportFor(lab, "hammer").conduct.listens.endedByClient === 70,
    "every listen closed",
  );
  const { conduct } = reportFor(lab, "hammer");
  assert.equal(conduct.listens.opened, 70);
  assert.equal(conduct.listens.reopensAMinute, 69);
  assert.equal(conduct.listens.backoff, false);
  assert.ok(
    conduct.diagnoses.includes(
      "re-opened the listen 69 times a minute (no backoff)",
    ),
    conduct.diagnoses.join("\n"),
  );
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(
    markdown,
    /^Conduct: (.*; )?re-opened the listen 69 times a minute \(no backoff\)(; .*)?\.$/m,
  );
});

Deno.test("conduct: the gate fails a client that re-opens past --require-max-reopens, naming the bound, and passes a polite one under both bounds", async () => {
  const hammered = await gateRun({
    MCP_TEST_REQUIRE_MAX_REOPENS: "10",
    MCP_TEST_DEADLINE_SECONDS: "3",
  }, (url) => relistenInALoop(url, "hammer", 30));
  assert.equal(hammered.code, 1, hammered.lines.join("\n"));
  assert.deepEqual(
    hammered.lines.filter((line) => line.startsWith("verdict ")),
    [
      'verdict client=hammer/1.0.0 reopensAMinute=29 allowed=10 fail missing="29 re-opens within a minute, at most 10 allowed"',
    ],
  );
  const polite = await gateRun({
    MCP_TEST_REQUIRE_MAX_STREAMS: "1",
    MCP_TEST_REQUIRE_MAX_REOPENS: "0",
    MCP_TEST_DEADLINE_SECONDS: "3",
  }, async (url) => {
    await using client = await connectClient(url, "polite", "legacy");
    await subscribeUntilUpdated(client);
  });
  assert.equal(polite.code, 0, polite.lines.join("\n"));
  assert.deepEqual(polite.lines.filter((line) => line.startsWith("verdict ")), [
    'verdict client=polite/1.0.0 streamsAtOnce=1 allowed=1 pass missing="1 streams open at once, at most 1 allowed"',
    'verdict client=polite/1.0.0 reopensAMinute=0 allowed=0 pass missing="0 re-opens within a minute, at most 0 allowed"',
  ]);
});

Deno.test("conduct: a client refused by --max-watches that retries is diagnosed, in both eras; one that reads instead is not", async () => {
  await using lab = startLab({ MCP_TEST_MAX_WATCHES: "0" });
  for (let index = 0; index < 12; index++) {
    const listen = await rawListen(lab.url, "retrier");
    assert.equal(
      (await listen.json()).error.message,
      "Subscription limit reached",
    );
  }
  const sessionId = await openRawSession(lab.url, "2025-11-25", "resubscriber");
  for (let index = 0; index < 12; index++) {
    await (await rawSubscribe(lab.url, sessionId)).body?.cancel();
  }
  const listens = reportFor(lab, "retrier").conduct;
  assert.equal(listens.refusedWatches, 12);
  assert.equal(listens.afterRefusal, "retried");
  assert.deepEqual(listens.diagnoses, [
    "retried a refused listen 11 times a minute",
  ]);
  const subscribes = reportFor(lab, "resubscriber").conduct;
  assert.equal(subscribes.refusedWatches, 12);
  assert.deepEqual(subscribes.diagnoses, [
    "retried a refused subscribe 11 times a minute",
  ]);
  await using reader = await connectClient(lab.url, "reader", "auto");
  await assert.rejects(
    reader.listen({ resourceSubscriptions: [REVIEW_URI] }),
    /Subscription limit reached/,
  );
  await readReview(reader);
  const read = reportFor(lab, "reader").conduct;
  assert.equal(read.refusedWatches, 1);
  assert.equal(read.afterRefusal, "read the resource");
  assert.deepEqual(read.diagnoses, []);
});

Deno.test("conduct: against --era 2026-07-28 a 2025 client that cannot talk to it is at level 0 and diagnosed; one that falls back settles on 2026-07-28", async () => {
  await using lab = startLab({ MCP_TEST_ERA: "2026-07-28" });
  await assert.rejects(connectClient(lab.url, "stuck-2025", "legacy"));
  const stuck = reportFor(lab, "stuck-2025");
  assert.equal(stuck.level, 0);
  assert.equal(stuck.era, "2025");
  assert.deepEqual(stuck.conduct.era, { settled: null, refusedRequests: 1 });
  assert.deepEqual(stuck.conduct.diagnoses, [
    "could not talk to a 2026-07-28-only server",
  ]);
  const refused = await fetch(lab.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "falls-back", version: "1.0.0" },
      },
    }),
  });
  assert.equal(refused.status, 400);
  await refused.body?.cancel();
  await using client = await connectClient(lab.url, "falls-back", "auto");
  await readReview(client);
  const fell = reportFor(lab, "falls-back");
  assert.equal(fell.era, "2026-07-28");
  assert.equal(fell.level, 3);
  assert.deepEqual(fell.conduct.era, {
    settled: "2026-07-28",
    refusedRequests: 1,
  });
  assert.deepEqual(fell.conduct.diagnoses, []);
});

Deno.test("conduct: over stdio a 2025 client that cannot talk to --era 2026-07-28 is diagnosed in its verdict block and the JSON report file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/report.json`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "--stdio", "--era", "2026-07-28"],
    env: { MCP_TEST_REPORT_FILE: path },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const initialize = initializeMessage({ name: "stuck", version: "1.0.0" });
  const twice = [initialize, { ...initialize, id: 2 }];
  await writer.write(
    new TextEncoder().encode(
      twice.map((message) => `${JSON.stringify(message)}\n`).join(""),
    ),
  );
  await writer.close();
  const output = await within(child.output(), 30_000, "the lab's exit");
  assert.equal(output.code, 0);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.match(
    stderr,
    /^ {2}conduct: 0 listen\(s\) and 0 GET stream\(s\) opened, at most 0 at once; could not talk to a 2026-07-28-only server$/m,
  );
  const report = JSON.parse(await Deno.readTextFile(path)) as LabReport;
  const [entry] = report.clients;
  assert.equal(entry.level, 0);
  assert.deepEqual(entry.conduct.era, { settled: null, refusedRequests: 2 });
  assert.deepEqual(entry.conduct.diagnoses, [
    "could not talk to a 2026-07-28-only server",
  ]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("conduct: a gate with only a conduct bound and no client fails, naming the bound", async () => {
  const run = await gateRun({
    MCP_TEST_REQUIRE_MAX_STREAMS: "1",
    MCP_TEST_DEADLINE_SECONDS: "0.5",
  });
  assert.equal(run.code, 1, run.lines.join("\n"));
  assert.deepEqual(run.lines.filter((line) => line.startsWith("verdict ")), [
    'verdict clients=0 streamsAtOnce=1 fail missing="no client came before the lab shut down"',
  ]);
});
