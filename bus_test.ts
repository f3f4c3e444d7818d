/**
 * The lab's replicas on Redis (`main.ts --bus`): two labs behind HAProxy
 * give a client the verdict one process gives, a 2025 request on the wrong
 * replica, Redis lost and back, Redis full, a replica killed, bad `--bus`
 * values, the catalog credited alike on both replicas, one update per series
 * however many replicas start it, a series taken over from a replica killed,
 * and eviction across replicas; `bus.ts` fetched from a URL only with
 * `--bus`, and a `main.ts` alone saying what is missing. On Debian's real
 * `redis-server` and HAProxy, started by `launch.ts` on free ports; skipped,
 * saying which is missing, where they are not installed (`.ci/run` installs
 * both).
 *
 * ```sh
 * deno test -P bus_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import {
  CATALOG_ADDED,
  type ClientReport,
  type LabReport,
  REVIEW_URI,
} from "./main.ts";
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
  inParallel,
  openRawSession,
  postJsonRpc,
  postModern,
  rawRead,
  readJsonRpcAnswer,
  readReview,
  reportFor,
  subscribeUntilUpdated,
} from "./testdata/lab_clients.ts";
import {
  freePort,
  MAIN_PATH,
  missingReplicaPrograms,
  redisCommand,
  redisInfoNumber,
  redisServerCommand,
  spawnLab,
  startReplicaSet,
} from "./launch.ts";
import {
  BUS_CLIENT_BYTES,
  BUS_MAX_ENTRY_BYTES,
  BUS_MAX_ENTRY_REDIS_BYTES,
  BUS_MAX_EVENTS,
} from "./bus.ts";
import { outsideFolder, serveCheckoutAsText } from "./testdata/from_url.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Replicas on Redis (`--bus`): Debian's redis-server and HAProxy, for real
// ---------------------------------------------------------------------------

/** Why the replica tests cannot run here; `.ci/run` installs both. */
const replicasMissing = (await missingReplicaPrograms()).join("; ");
if (replicasMissing) console.warn(`--bus tests skipped: ${replicasMissing}`);

/**
 * A Redis of its own, saving nothing, on `port` (a free one by default),
 * once it answers PING; disposed, it stops.
 */
async function redisOfItsOwn(port = freePort()) {
  const [program, ...args] = redisServerCommand(port);
  const child = new Deno.Command(program, {
    args,
    stdout: "null",
    stderr: "null",
  }).spawn();
  const answers = () => redisCommand(port, ["PING"], 500).catch(() => null);
  for (let tries = 0; await answers() !== "PONG"; tries++) {
    if (tries === 100) {
      throw new Error(`redis-server on ${port} never answered`);
    }
    await delay(50);
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async [Symbol.asyncDispose]() {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

/** `/report` of one replica, as JSON. */
async function replicaReport(lab: { origin: string }): Promise<LabReport> {
  const response = await fetch(`${lab.origin}/report`);
  assert.equal(response.status, 200);
  return await response.json();
}

/** The client's entry in a report, and the report minus what differs by replica. */
function sharedPart(report: LabReport) {
  const { generatedAt: _, reproduce, ...rest } = report;
  return { ...rest, reproduce: { ...reproduce, command: undefined } };
}

/** Whether two values have the same JSON, keys in the same order. */
const equalJson = (a: unknown, b: unknown) =>
  JSON.stringify(a) === JSON.stringify(b);

/**
 * The steps a replica logged for a client, by their tags; not its verdict,
 * which every replica prints when the client ends.
 */
function taggedLines(lines: string[], name: string) {
  return lines.filter((line) =>
    line.startsWith("[") && !line.startsWith("[verdict]") &&
    line.includes(`client=${name}/`)
  ).map((line) => line.split(" ")[0]);
}

/** The flow of `subscribeUntilUpdated`, with the reads around it. */
async function replicaFlow(client: Client) {
  await client.listResources();
  assert.equal(await readReview(client), VERSION_1_TEXT);
  await subscribeUntilUpdated(client);
  assert.equal(await readReview(client), VERSION_2_TEXT);
}

for (
  const [era, mode, routing] of [
    ["2026-07-28", "auto", "round-robin"],
    ["2025", "legacy", "sticky"],
  ] as const
) {
  Deno.test({
    name:
      `--bus: two replicas behind HAProxy (${routing}) give a ${era} client the verdict one process gives, and the same /report from each`,
    ignore: replicasMissing !== "",
    async fn() {
      const name = `replicated-${era}`;
      await using set = await startReplicaSet({
        routing,
        labArgs: ["--delay", "1"],
      });
      // A 2025 session ends with its DELETE, so the lab itself closes its
      // stream, on one process as on a replica.
      const end = async (client: Client) => {
        if (mode === "legacy") {
          await (client.transport as StreamableHTTPClientTransport)
            .terminateSession();
        }
        await client.close();
      };
      await using client = await connectClient(new URL(set.url), name, mode);
      await replicaFlow(client);
      await end(client);

      await using lab = startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "1" });
      await using alone = await connectClient(lab.url, name, mode);
      await replicaFlow(alone);
      await end(alone);
      // In time order; the last steps of a 2025 session (its stream closed,
      // its DELETE) may come in either order, on one process too.
      const kinds = (entry: ClientReport) =>
        entry.timeline.map((step) => step.kind).toSorted().join(" ");
      // A closed stream is recorded once the lab sees it end: poll until
      // both replicas hold the whole run, alike, as the single lab does.
      let reports: LabReport[] = [];
      const same = async () => {
        reports = await Promise.all(set.replicas.map(replicaReport));
        const one = kinds(reportFor(lab, name));
        return reports.every((report) =>
          report.clients.length === 1 && kinds(report.clients[0]) === one
        ) && equalJson(sharedPart(reports[0]), sharedPart(reports[1]));
      };
      const until = Date.now() + 10_000;
      let held = await same();
      while (!held && Date.now() < until) {
        await delay(50);
        held = await same();
      }
      const one = reportFor(lab, name);
      assert.ok(
        held,
        JSON.stringify({
          replicas: reports.map((report) => report.clients.map(kinds)),
          one: kinds(one),
        }),
      );
      const [a, b] = reports;
      assert.deepEqual(sharedPart(a), sharedPart(b));
      const [entry] = a.clients.filter((client) => client.name === name);
      assert.equal(entry.level, 6);
      assert.deepEqual(
        [entry.level, entry.steps, entry.missing, entry.resourceVersion],
        [one.level, one.steps, one.missing, one.resourceVersion],
      );
      assert.equal(kinds(entry), kinds(one));
      // Round robin spreads one client's requests over both replicas;
      // sticky keeps a session's on the replica that opened it.
      const logged = set.replicas.map((replica) =>
        taggedLines(replica.lines, name).length
      );
      if (routing === "round-robin") assert.ok(logged.every((n) => n > 0));
      else assert.equal(logged.filter((n) => n > 0).length, 1);
    },
  });
}

Deno.test({
  name:
    "--bus: a 2025 request reaching a replica other than its session's is 404 saying the balancer is not sticky",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({ routing: "round-robin" });
    const [a, b] = set.replicas;
    const sessionId = await openRawSession(new URL(a.url));
    const response = await rawRead(new URL(b.url), sessionId);
    assert.equal(response.status, 404);
    assert.deepEqual((response.json as { error: unknown }).error, {
      code: -32001,
      message:
        `Session not found on this replica: ${sessionId} lives on another; a balancer must send each request to the replica of its Mcp-Session-Id (sticky sessions)`,
    });
  },
});

Deno.test({
  name:
    "--bus: Redis lost mid-run is a [bus/lost] line, /healthz and a report caveat; the replica serves on alone, and shares again once Redis is back",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({ labArgs: ["--delay", "0.2"] });
    const [a] = set.replicas;
    const redis = set.processes.find((process) => process.name === "redis")!;
    Deno.kill(redis.pid, "SIGKILL");
    await eventually(
      () => a.lines.some((line) => line.startsWith("[bus/lost] ")),
      "a [bus/lost] line",
    );
    const health = await (await fetch(`${a.origin}/healthz`)).json();
    assert.equal(health.bus.lost, true);
    // Alone, the replica still gives a client its whole flow.
    await using client = await connectClient(new URL(a.url), "alone", "auto");
    await replicaFlow(client);
    const markdown = await (await fetch(`${a.origin}/report.md`)).text();
    assert.match(
      markdown,
      /^> Replica [0-9a-f]{8} lost its bus \(Redis\) at \S+ and has not got it back: \d+ message\(s\) never reached the other replicas/m,
    );
    assert.equal((await replicaReport(a)).clients[0].level, 6);

    await using _again = await redisOfItsOwn(set.redisPort);
    await eventually(
      () =>
        set.replicas.every((replica) =>
          replica.lines.some((line) => line.startsWith("[bus/restored] "))
        ),
      "[bus/restored] on both replicas",
    );
  },
});

Deno.test({
  name:
    "--bus: a write Redis refuses (out of memory) is one [bus/refused] line, counted in /healthz, and a caveat in the reports",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet();
    const [a] = set.replicas;
    // Past its bound, Redis refuses every write with OOM.
    await redisCommand(set.redisPort, ["CONFIG", "SET", "maxmemory", "1"]);
    await using client = await connectClient(new URL(a.url), "full", "auto");
    await replicaFlow(client);
    const refusals = a.lines.filter((line) =>
      line.startsWith("[bus/refused] ")
    );
    assert.equal(refusals.length, 1);
    assert.match(
      refusals[0],
      /^\[bus\/refused\] Redis refused a write: the others no longer hear of what fails reason="OOM command not allowed when used memory > 'maxmemory'\." at=/,
    );
    const health = await (await fetch(`${a.origin}/healthz`)).json();
    assert.equal(health.bus.lost, false);
    assert.ok(health.bus.dropped > 0);
    const { caveats } = await replicaReport(a);
    assert.match(
      caveats?.[0] ?? "",
      /^Redis refused this replica's writes from \S+ \(OOM command not allowed when used memory > 'maxmemory'\.\): \d+ message\(s\) never reached the other replicas/,
    );
  },
});

Deno.test({
  name:
    "--bus: a replica killed mid-run leaves its clients in the others' reports, as far as it recorded them, and the others serve on",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({ routing: "round-robin" });
    const [a, b] = set.replicas;
    await using client = await connectClient(new URL(a.url), "orphan", "auto");
    assert.equal(await readReview(client), VERSION_1_TEXT);
    const { bus } = await (await fetch(`${a.origin}/healthz`)).json();
    await a.stop(0);
    await eventually(
      () =>
        b.lines.some((line) =>
          line.startsWith("[bus/replica-gone] ") &&
          line.includes(`replica=${bus.replica} `)
        ),
      "[bus/replica-gone] naming replica A",
    );
    const [orphan] = (await replicaReport(b)).clients;
    assert.equal(orphan.name, "orphan");
    assert.equal(orphan.level, 3);
    await using other = await connectClient(new URL(b.url), "survivor", "auto");
    await replicaFlow(other);
  },
});

Deno.test("--bus: a value that is not a redis:// URL, a Redis that cannot be reached, or --stdio is one line and exit 2, the password (or a user part alone) hidden", async () => {
  const closed = freePort();
  const cases: [string[], Record<string, string>, string][] = [
    [
      ["--bus", "http://cache:6379"],
      {},
      `config error: --bus="http://cache:6379" is not allowed: expected redis://[user:password@]host[:port][/db], or empty`,
    ],
    [
      [],
      { MCP_TEST_BUS: "redis://u:hunter2@cache:6379/x" },
      `config error: MCP_TEST_BUS="redis://u:***@cache:6379/x" is not allowed: expected redis://[user:password@]host[:port][/db], or empty`,
    ],
    [
      ["--bus", `redis://u:hunter2@127.0.0.1:${closed}`],
      {},
      `config error: --bus redis://u:***@127.0.0.1:${closed}: cannot reach Redis: connect ECONNREFUSED 127.0.0.1:${closed}`,
    ],
    [
      [],
      { MCP_TEST_BUS: "redis://hunter2@cache:6379/x" },
      `config error: MCP_TEST_BUS="redis://***@cache:6379/x" is not allowed: expected redis://[user:password@]host[:port][/db], or empty`,
    ],
    [
      ["--bus", `redis://hunter2@127.0.0.1:${closed}`],
      {},
      `config error: --bus redis://***@127.0.0.1:${closed}: cannot reach Redis: connect ECONNREFUSED 127.0.0.1:${closed}`,
    ],
    [
      ["--stdio", "--bus", "redis://127.0.0.1:6379"],
      {},
      "config error: --bus (MCP_TEST_BUS) shares clients between replicas over HTTP; --stdio serves one client",
    ],
  ];
  for (const [args, env, line] of cases) {
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN_PATH, "--port", "0", ...args],
      env,
      stdin: "null",
    }).output();
    const text = new TextDecoder();
    assert.deepEqual([code, text.decode(stdout), text.decode(stderr)], [
      2,
      "",
      `${line}\n`,
    ]);
  }
});

// ---------------------------------------------------------------------------
// Update series and eviction across replicas: one owner, taken over, one record
// ---------------------------------------------------------------------------

/** A 2026-07-28 client on one replica, counting the updates it is sent. */
async function countingClient(url: string, name: string) {
  const client = await connectClient(new URL(url), name, "auto");
  const counted = Object.assign(client, { updates: 0 });
  client.setNotificationHandler(
    "notifications/resources/updated",
    () => void counted.updates++,
  );
  return counted;
}

/** Polls until `check` holds, for up to `ms`. */
async function holds(
  check: () => boolean | Promise<boolean>,
  ms: number,
  what: string,
) {
  const until = Date.now() + ms;
  while (!await check() && Date.now() < until) await delay(50);
  assert.ok(await check(), what);
}

/** The steps of one kind in the report's entry for `name`, on each replica. */
async function stepsOnEach(
  replicas: { origin: string }[],
  name: string,
  kind: string,
) {
  const reports = await Promise.all(replicas.map(replicaReport));
  return reports.map((report) =>
    report.clients.filter((client) => client.name === name).flatMap((client) =>
      client.timeline.filter((step) => step.kind === kind)
    )
  );
}

for (const seconds of ["0", "0.05"]) {
  Deno.test({
    name:
      `--bus: 30 identities listening on two replicas at the same moment (--delay ${seconds}, --update-count 1) are sent exactly one update each, by the replica that claimed the series`,
    ignore: replicasMissing !== "",
    async fn() {
      await using set = await startReplicaSet({
        labArgs: ["--delay", seconds, "--update-count", "1"],
      });
      const names = Array.from({ length: 30 }, (_, i) => `twice-${i}`);
      const pairs = await Promise.all(
        names.map((name) =>
          Promise.all(
            set.replicas.map((replica) => countingClient(replica.url, name)),
          )
        ),
      );
      try {
        // Each replica hears of the others' discoveries before the listens.
        await delay(500);
        const listens = await Promise.all(
          pairs.flat().map((client) =>
            client.listen({ resourceSubscriptions: [REVIEW_URI] })
          ),
        );
        // Each update reaches every stream of its client, on any replica.
        const sent = () => pairs.map((pair) => pair.map((one) => one.updates));
        await eventually(
          () => sent().flat().every((count) => count >= 1),
          "an update on each stream",
        );
        // A second update, if one were coming, comes within this.
        await delay(1500);
        assert.deepEqual(sent(), names.map(() => [1, 1]));
        for (const name of names) {
          const made = await stepsOnEach(set.replicas, name, "update");
          assert.deepEqual(made.map((steps) => steps.length), [1, 1], name);
        }
        await Promise.all(listens.map((listen) => listen.close()));
      } finally {
        await Promise.all(pairs.flat().map((client) => client.close()));
      }
    },
  });
}

Deno.test({
  name:
    "--bus: the replica holding a client's update series killed, a survivor takes the series over (one of two), and the client listening again on it gets its update",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({
      replicas: 3,
      labArgs: ["--delay", "3"],
    });
    const [a, b, c] = set.replicas;
    const name = "handed-over";
    await using onA = await countingClient(a.url, name);
    assert.equal(await readReview(onA), VERSION_1_TEXT);
    await onA.listen({ resourceSubscriptions: [REVIEW_URI] });
    // The others know the series started before its owner goes.
    await eventually(
      () => a.lines.some((line) => line.startsWith("[subscriptions/listen]")),
      "the listen on A",
    );
    await delay(300);
    Deno.kill(a.child.pid, "SIGKILL");
    await using onB = await countingClient(b.url, name);
    await onB.listen({ resourceSubscriptions: [REVIEW_URI] });
    await holds(() => onB.updates > 0, 20_000, "the update on B");
    assert.equal(await readReview(onB), VERSION_2_TEXT);
    await delay(1000);
    assert.equal(onB.updates, 1);
    const takers = [b, c].filter((replica) =>
      replica.lines.some((line) =>
        line.startsWith("[bus/takeover] ") && line.includes(`client=${name}/`)
      )
    );
    assert.equal(takers.length, 1);
    const [entry] = (await replicaReport(b)).clients.filter((client) =>
      client.name === name
    );
    const sends = entry.timeline.filter((step) => step.kind === "notify");
    assert.equal(sends.length, 1);
    assert.match(sends[0].line, /delivered=true/);
    assert.equal(entry.updatesSent, 1);
    assert.equal(entry.level, 6);
  },
});

Deno.test({
  name:
    "--bus: of two replicas that start a series at once, the one that lost the claim holds no timer, and takes the series over when the owner is killed",
  ignore: replicasMissing !== "",
  async fn() {
    // The update is due after the survivor notices the owner gone.
    await using set = await startReplicaSet({ labArgs: ["--delay", "8"] });
    const name = "claimed-twice";
    const clients = await Promise.all(
      set.replicas.map((replica) => countingClient(replica.url, name)),
    );
    try {
      await delay(500);
      await Promise.all(
        clients.map((client) =>
          client.listen({ resourceSubscriptions: [REVIEW_URI] })
        ),
      );
      const key = `mcp-lab:series:${name}@1.0.0`;
      let owner: unknown = null;
      await holds(
        async () => {
          owner = await redisCommand(set.redisPort, ["HGET", key, "owner"]);
          return owner !== null;
        },
        5_000,
        "a claim in Redis",
      );
      const health = await Promise.all(
        set.replicas.map(async (replica) =>
          await (await fetch(`${replica.origin}/healthz`)).json()
        ),
      );
      const ownerIndex = health.findIndex(({ bus }) => bus.replica === owner);
      assert.notEqual(ownerIndex, -1);
      // One timer: the loser stopped its own.
      await holds(
        async () =>
          (await Promise.all(
            set.replicas.map(async (replica) =>
              (await (await fetch(`${replica.origin}/healthz`)).json())
                .pendingUpdates
            ),
          )).join() === set.replicas.map((_, i) => i === ownerIndex ? 1 : 0)
            .join(),
        5_000,
        "one pending update, on the owner",
      );
      Deno.kill(set.replicas[ownerIndex].child.pid, "SIGKILL");
      const survivor = set.replicas[1 - ownerIndex];
      const onSurvivor = clients[1 - ownerIndex];
      await holds(
        () =>
          survivor.lines.some((line) =>
            line.startsWith("[bus/takeover] ") &&
            line.includes(`client=${name}/`)
          ),
        10_000,
        "[bus/takeover] on the survivor",
      );
      await holds(() => onSurvivor.updates > 0, 15_000, "the update");
      await delay(1000);
      assert.equal(onSurvivor.updates, 1);
      const [made] = await stepsOnEach([survivor], name, "update");
      assert.equal(made.length, 1);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  },
});

Deno.test({
  name:
    "--bus: 100 identities on B never end a client whose run goes on on A: one record of it on each replica, the same level, not evicted",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({
      labArgs: ["--delay", "0.2", "--max-sessions", "100"],
    });
    const [a, b] = set.replicas;
    const name = "kept-across";
    // Seen first on B, so B's least recently seen; then its run is on A.
    await using _onB = await connectClient(new URL(b.url), name, "auto");
    await using onA = await connectClient(new URL(a.url), name, "auto");
    await onA.listResources();
    assert.equal(await readReview(onA), VERSION_1_TEXT);
    await subscribeUntilUpdated(onA);
    const flood = Array.from({ length: 100 }, (_, i) => `flood-${i}`);
    for (const client of flood) {
      const response = await postModern(
        new URL(b.url),
        "server/discover",
        {},
        { client },
      );
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    assert.equal(await readReview(onA), VERSION_2_TEXT);
    const entries = async () =>
      (await Promise.all(set.replicas.map(replicaReport))).map((report) =>
        report.clients.filter((client) => client.name === name)
      );
    await holds(
      async () => (await entries()).every((kept) => kept[0]?.level === 6),
      10_000,
      "level 6 on both replicas",
    );
    for (const kept of await entries()) {
      assert.deepEqual(
        kept.map((entry) => [entry.level, entry.ended]),
        [[6, null]],
      );
    }
    const verdicts = [a, b].map((replica) =>
      replica.lines.filter((line) =>
        line.startsWith("[verdict]") && line.includes(`client=${name}/`)
      )
    );
    assert.deepEqual(verdicts, [[], []]);
  },
});

// ---------------------------------------------------------------------------
// bus.ts beside main.ts: fetched from a URL only with --bus, missing said so
// ---------------------------------------------------------------------------

Deno.test({
  name:
    "from a URL served as text/plain: with --bus the lab fetches bus.ts from its own base and joins the bus; served without bus.ts it says so in one line, exit 2",
  ignore: replicasMissing !== "",
  async fn() {
    await using redis = await redisOfItsOwn();
    await using folder = await outsideFolder();
    {
      await using files = serveCheckoutAsText();
      const lab = await spawnLab({
        mainPath: `${files.origin}/lab/main.ts`,
        runFlags: [await folder.lockFlag("lab.lock")],
        args: ["--bus", redis.url],
        cwd: folder.cwd,
      });
      try {
        const health = await (await fetch(`${lab.origin}/healthz`)).json();
        assert.equal(health.bus.replicas, 1);
        assert.equal(health.bus.lost, false);
      } finally {
        await lab.stop();
      }
      assert.deepEqual(files.requested, ["/lab/main.ts", "/lab/bus.ts"]);
    }
    await using alone = serveCheckoutAsText(["main.ts"]);
    const source = `${alone.origin}/alone/main.ts`;
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", await folder.lockFlag("alone.lock"), source],
      env: { MCP_TEST_BUS: redis.url, MCP_TEST_PORT: "0" },
      cwd: folder.cwd,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(code, 2);
    assert.equal(new TextDecoder().decode(stdout), "");
    const lines = new TextDecoder().decode(stderr).trimEnd().split("\n")
      .filter((line) => !line.startsWith("Download "));
    assert.deepEqual(lines, [
      `config error: --bus needs bus.ts beside main.ts: Module not found "${alone.origin}/alone/bus.ts".`,
    ]);
    assert.deepEqual(alone.requested, ["/alone/main.ts", "/alone/bus.ts"]);
  },
});

Deno.test("main.ts copied alone: it serves, and --bus, --stdio or probe is one line naming the file beside it that is missing, exit 2", async () => {
  const folder = await Deno.makeTempDir({ prefix: "main-alone-" });
  try {
    await Deno.copyFile(MAIN_PATH, `${folder}/main.ts`);
    const lock = `${folder}/deno.lock`;
    await Deno.copyFile(new URL("./deno.lock", import.meta.url), lock);
    const run = async (args: string[]) => {
      const { code, stdout, stderr } = await new Deno.Command(
        Deno.execPath(),
        {
          args: ["run", "-A", `--lock=${lock}`, `${folder}/main.ts`, ...args],
          cwd: folder,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        },
      ).output();
      const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
      return { code, stdout: text(stdout), stderr: text(stderr) };
    };
    const missing = (file: string, use: string) => ({
      code: 2,
      stdout: "",
      stderr:
        `config error: ${use} needs ${file} beside main.ts: Module not found "file://${folder}/${file}".\n`,
    });
    assert.deepEqual(
      await run(["--bus", "redis://127.0.0.1:1"]),
      missing("bus.ts", "--bus"),
    );
    assert.deepEqual(
      await run(["probe", "--help"]),
      missing("probe.ts", "main.ts probe"),
    );
    assert.deepEqual(
      await run(["--stdio"]),
      missing("stdio.ts", "--stdio"),
    );
    const version = await run(["--version"]);
    assert.equal(version.code, 0, version.stderr);
    assert.match(version.stdout, /^mcp-subscription-lab \d+\.\d+\.\d+ /);
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// The catalog across replicas: every replica credits the same re-list
// ---------------------------------------------------------------------------

/**
 * One 2026-07-28 client on two replicas: it lists tools on B, listens on A
 * asking for tools list changes, and on the notification lists again and
 * calls the new tool on B, at once.
 */
async function relistElsewhere(name: string, a: string, b: string) {
  await using onA = await connectClient(new URL(a), name, "auto");
  await using onB = await connectClient(new URL(b), name, "auto");
  await onB.listTools();
  const changed = Promise.withResolvers<void>();
  onA.setNotificationHandler(
    "notifications/tools/list_changed",
    () => changed.resolve(),
  );
  const listen = await onA.listen({
    resourceSubscriptions: [REVIEW_URI],
    toolsListChanged: true,
  });
  await changed.promise;
  const { tools } = await onB.listTools();
  assert.ok(tools.some((tool) => tool.name === CATALOG_ADDED.tools), name);
  await onB.callTool({ name: CATALOG_ADDED.tools });
  await listen.close();
}

Deno.test({
  name:
    "--bus: five clients that listen on A, then list again and call the new tool on B, are at catalog level 4 on both replicas, on the same re-list, and --require-catalog-level 3 exits 0 on both",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({
      labArgs: ["--delay", "0.2", "--catalog-change", "tools"].concat(
        ["--require-catalog-level", "3"],
      ),
    });
    const [a, b] = set.replicas;
    const names = [1, 2, 3, 4, 5].map((n) => `catalog-across-${n}`);
    await Promise.all(names.map((name) => relistElsewhere(name, a.url, b.url)));
    // Each replica has applied every client's call (B's own, A's mirrored).
    const catalogs = async () => {
      const reports = await Promise.all([a, b].map(replicaReport));
      return reports.map((report) =>
        names.map((name) => {
          const entry = report.clients.find((client) => client.name === name);
          const called = entry?.timeline.some((step) =>
            step.kind === "catalog-use"
          );
          return called ? entry?.catalog : undefined;
        })
      );
    };
    let both = await catalogs();
    for (
      let tries = 0;
      both.flat().includes(undefined) && tries < 100;
      tries++
    ) {
      await delay(100);
      both = await catalogs();
    }
    const [onA, onB] = both;
    assert.deepEqual(
      [
        onA.map((catalog) => catalog?.level),
        onB.map((catalog) => catalog?.level),
      ],
      [[4, 4, 4, 4, 4], [4, 4, 4, 4, 4]],
    );
    assert.deepEqual(onA, onB);
    const [statusA, statusB] = await Promise.all(
      [a, b].map(async (replica) => {
        await replica.stop();
        return (await replica.child.status).code;
      }),
    );
    const verdicts = (lines: string[]) =>
      lines.filter((line) => line.startsWith("verdict ")).toSorted();
    const passes = names.map((name) =>
      `verdict client=${name}/1.0.0 catalog=4 required=3 pass missing=`
    );
    for (const replica of [a, b]) {
      assert.deepEqual(
        verdicts(replica.lines).map((line) =>
          line.split("missing=")[0] + "missing="
        ),
        passes,
      );
    }
    // The evidence of the re-list each replica credited: the same steps.
    const relists = (lines: string[]) =>
      lines.filter((line) => line.startsWith("  evidence: [tools/list] "))
        .toSorted();
    assert.equal(relists(a.lines).length, 5, a.lines.join("\n"));
    assert.deepEqual(relists(a.lines), relists(b.lines));
    assert.deepEqual([statusA, statusB], [0, 0]);
  },
});

// ---------------------------------------------------------------------------
// The bus's bounds: entry size, each client's share, partial views said so
// ---------------------------------------------------------------------------

/** The stream's entries, oldest first: their ids and JSON text. */
async function busEntries(port: number) {
  const entries = await redisCommand(port, [
    "XRANGE",
    "mcp-lab:events",
    "-",
    "+",
  ]) as [string, string[]][];
  return entries.map(([id, [, text]]) => ({ id, text }));
}

/** Appends `count` copies of `entry` to the stream, trimmed as `trim` says. */
function fillStream(port: number, entry: string, count: number, trim = "") {
  const script = trim
    ? "for i=1,ARGV[1] do redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[2]) end"
    : "for i=1,ARGV[1] do redis.call('XADD', KEYS[1], '*', 'm', ARGV[2]) end";
  return redisCommand(port, [
    "EVAL",
    script,
    "1",
    "mcp-lab:events",
    String(count),
    entry,
    trim,
  ], 60_000);
}

/** Bytes of a text in UTF-8, as Redis holds it. */
const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/** `/healthz` of one replica: its status and JSON. */
async function replicaHealth(lab: { origin: string }) {
  const response = await fetch(`${lab.origin}/healthz`);
  return { status: response.status, body: await response.json() };
}

/** The gate's `caveat "…"` lines a stopped replica printed. */
const caveatLines = (lines: string[]) =>
  lines.filter((line) => line.startsWith("caveat "));

/**
 * The lab's resource as a 2026-07-28 client reads it on `url` with one raw
 * request (no `server/discover`, which would start a new run there).
 */
async function rawModernRead(url: URL, client: string): Promise<string> {
  const response = await postModern(url, "resources/read", {
    uri: REVIEW_URI,
  }, { client });
  const answer = await readJsonRpcAnswer(response);
  return answer.result.contents[0].text;
}

/** One 2026-07-28 read of a URI the lab does not know, as `client`. */
async function readUnknown(url: URL, client: string, uri: string) {
  const response = await postModern(url, "resources/read", { uri }, {
    client,
  });
  await response.body?.cancel();
}

Deno.test({
  name:
    "--bus: no entry is over BUS_MAX_ENTRY_BYTES, whatever names and URIs a client sends, and the stream at its cap of such entries fits in Redis's 64 MB with room to spare",
  ignore: replicasMissing !== "",
  async fn() {
    await using redis = await redisOfItsOwn();
    const port = Number(new URL(redis.url).port);
    const lab = await spawnLab({
      mainPath: MAIN_PATH,
      args: ["--bus", redis.url],
    });
    try {
      const url = new URL(lab.url);
      // The longest names and URIs a client can give, in characters JSON
      // escapes to six bytes each, in both eras.
      const odd = "\u0001";
      await readUnknown(url, "n".repeat(80), `test://x/${"u".repeat(300)}`);
      const initialize = await postJsonRpc(
        url,
        initializeMessage(
          { name: odd.repeat(80), version: odd.repeat(80) },
          odd.repeat(80),
        ),
      );
      const sessionId = initialize.headers.get("mcp-session-id")!;
      const read = await postJsonRpc(url, {
        jsonrpc: "2.0",
        id: 2,
        method: "resources/read",
        params: { uri: odd.repeat(300) },
      }, { "mcp-session-id": sessionId });
      assert.equal(read.status, 200);
      // Each step goes out as it is recorded, before its answer.
      await delay(500);
      const sizes = (await busEntries(port)).map(({ text }) => utf8Bytes(text));
      assert.ok(sizes.length >= 2, `${sizes}`);
      assert.ok(Math.max(...sizes) <= BUS_MAX_ENTRY_BYTES, `${sizes}`);
      assert.ok(
        lab.lines.some((line) => line.startsWith("[bus/partial] ")),
        "a [bus/partial] line for the client whose step was too big",
      );
    } finally {
      await lab.stop();
    }
    // The stream at its cap: the lab's trim, entries of the largest size.
    await redisCommand(port, ["CONFIG", "SET", "maxmemory", "64mb"]);
    await redisCommand(port, ["DEL", "mcp-lab:events"]);
    const before = await redisInfoNumber(port, "memory", "used_memory");
    await fillStream(
      port,
      "x".repeat(BUS_MAX_ENTRY_BYTES),
      BUS_MAX_EVENTS + 5_000,
      String(BUS_MAX_EVENTS),
    );
    const used = await redisInfoNumber(port, "memory", "used_memory");
    const length = Number(await redisCommand(port, ["XLEN", "mcp-lab:events"]));
    assert.ok(length <= BUS_MAX_EVENTS + 100, `${length}`);
    assert.ok((used - before) / length <= BUS_MAX_ENTRY_REDIS_BYTES);
    // Room left for the heartbeats, the others' keys and Redis itself.
    assert.ok(used <= 56 * 1024 * 1024, `${used}`);
  },
});

Deno.test({
  name:
    "--bus: a client flooding the bus goes past its share, is named partial on every replica, and leaves Redis room: a bystander's update made on A is seen on B",
  ignore: replicasMissing !== "",
  async fn() {
    // A small Redis, which the flood would fill without the share.
    await using set = await startReplicaSet({
      routing: "round-robin",
      redisMaxMemory: "4mb",
      labArgs: ["--delay", "0.3"],
    });
    const [a, b] = set.replicas;
    const flooder = "f".repeat(64);
    const uri = `test://flood/${"u".repeat(240)}`;
    const url = new URL(a.url);
    await inParallel(4_000, 8, () => readUnknown(url, flooder, uri));
    // A client whose listen is on A and whose re-read is on B.
    await using bystander = await connectClient(
      new URL(a.url),
      "bystander",
      "auto",
    );
    await subscribeUntilUpdated(bystander);
    assert.equal(
      await rawModernRead(new URL(b.url), "bystander"),
      VERSION_2_TEXT,
    );
    const shared = (await busEntries(set.redisPort)).filter(({ text }) =>
      text.includes(`"id":"${flooder}@1.0.0"`)
    ).reduce((sum, { text }) => sum + utf8Bytes(text), 0);
    assert.ok(shared <= BUS_CLIENT_BYTES, `${shared}`);
    assert.equal(
      a.lines.filter((line) => line.startsWith("[bus/partial] ")).length,
      1,
    );
    for (const replica of set.replicas) {
      const { caveats } = await replicaReport(replica);
      assert.match(
        caveats?.join("\n") ?? "",
        /^1 client\(s\) went past their share of the bus \(1 MiB each, or a step over 2000 bytes\): what each did next is kept only by the replica that served it/m,
      );
      assert.equal((await replicaHealth(replica)).body.bus.partial, true);
    }
  },
});

Deno.test({
  name:
    "--bus: a Redis too small for the stream's cap makes room from the stream's oldest events ([bus/full]): a bystander's update made on A is still read on B, and no write is refused",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({
      routing: "round-robin",
      redisMaxMemory: "8mb",
      labArgs: ["--delay", "0.3"],
    });
    const [a, b] = set.replicas;
    // Old events fill Redis until it refuses the next.
    let full = false;
    for (let batch = 0; batch < 20 && !full; batch++) {
      full = await fillStream(set.redisPort, "x".repeat(2000), 500).then(
        () => false,
        (error) => /OOM/.test(error.message),
      );
    }
    assert.ok(full, "Redis never filled");
    await using bystander = await connectClient(
      new URL(a.url),
      "bystander",
      "auto",
    );
    await subscribeUntilUpdated(bystander);
    assert.equal(
      await rawModernRead(new URL(b.url), "bystander"),
      VERSION_2_TEXT,
    );
    const lines = set.replicas.flatMap((replica) => replica.lines);
    assert.ok(lines.some((line) => line.startsWith("[bus/full] ")));
    assert.deepEqual(
      lines.filter((line) => line.startsWith("[bus/refused] ")),
      [],
    );
    for (const replica of [a, b]) {
      const { bus } = (await replicaHealth(replica)).body;
      assert.deepEqual([bus.refused, bus.dropped], [false, 0]);
    }
  },
});

Deno.test({
  name:
    "--bus: a full Redis is seen by every replica, also one that wrote nothing since: /healthz says refused, the reports and the gate's lines carry the caveat",
  ignore: replicasMissing !== "",
  async fn() {
    await using set = await startReplicaSet({
      labArgs: ["--require-level", "1"],
    });
    await redisCommand(set.redisPort, ["CONFIG", "SET", "maxmemory", "1"]);
    // Only heartbeats go to Redis now: each replica writes one a second.
    for (const replica of set.replicas) {
      const since = Date.now();
      let health = await replicaHealth(replica);
      while (!health.body.bus.refused && Date.now() - since < 10_000) {
        await delay(100);
        health = await replicaHealth(replica);
      }
      assert.equal(health.status, 200);
      assert.deepEqual(
        [
          health.body.bus.lost,
          health.body.bus.refused,
          health.body.bus.partial,
        ],
        [false, true, true],
      );
      const { caveats } = await replicaReport(replica);
      assert.match(
        caveats?.[0] ?? "",
        /^Redis refused this replica's writes from \S+ \(OOM command not allowed when used memory > 'maxmemory'\.\): \d+ message\(s\) never reached the other replicas, and theirs may be missing here/,
      );
    }
    for (const replica of set.replicas) {
      await replica.stop();
      const [caveat, ...more] = caveatLines(replica.lines);
      assert.deepEqual(more, []);
      assert.match(
        caveat ?? "",
        /^caveat "Redis refused this replica's writes from /,
      );
    }
  },
});

Deno.test({
  name:
    "--bus: a replica started on a stream that had dropped its oldest events says so in its reports and its gate",
  ignore: replicasMissing !== "",
  async fn() {
    await using redis = await redisOfItsOwn();
    const port = Number(new URL(redis.url).port);
    const first = await spawnLab({
      mainPath: MAIN_PATH,
      args: ["--bus", redis.url],
    });
    try {
      await using client = await connectClient(
        new URL(first.url),
        "early",
        "auto",
      );
      await client.listResources();
      assert.equal(await readReview(client), VERSION_1_TEXT);
    } finally {
      await first.stop();
    }
    const length = Number(await redisCommand(port, ["XLEN", "mcp-lab:events"]));
    assert.ok(length > 2, `${length}`);
    await redisCommand(port, ["XTRIM", "mcp-lab:events", "MAXLEN", "2"]);
    const late = await spawnLab({
      mainPath: MAIN_PATH,
      args: ["--bus", redis.url, "--require-level", "1"],
    });
    const said = `This replica started after the bus had dropped its ${
      length - 2
    } oldest event(s) (the stream keeps about ${BUS_MAX_EVENTS}): clients that came before may be missing here or graded low`;
    try {
      const { caveats } = await replicaReport(late);
      assert.ok(caveats?.[0]?.startsWith(said), JSON.stringify(caveats));
      assert.equal((await replicaHealth(late)).body.bus.partial, true);
    } finally {
      await late.stop();
    }
    const [caveat] = caveatLines(late.lines);
    assert.ok(caveat?.startsWith(`caveat "${said}`), caveat);
  },
});

Deno.test({
  name:
    "--bus: a replica started on a long stream answers /healthz 503 (catching up) until it has replayed it, and its first answer already knows what the stream holds",
  ignore: replicasMissing !== "",
  async fn() {
    await using redis = await redisOfItsOwn();
    const port = Number(new URL(redis.url).port);
    const first = await spawnLab({
      mainPath: MAIN_PATH,
      args: ["--bus", redis.url, "--delay", "0.2"],
    });
    try {
      await readUnknown(new URL(first.url), "filler", "test://filler");
      await using client = await connectClient(
        new URL(first.url),
        "notified",
        "auto",
      );
      await replicaFlow(client);
    } finally {
      await first.stop();
    }
    // A long stream (labs before the cap of 24,000 kept 100,000) of another
    // client's reads, then the run of a client notified of version 2, as
    // Redis takes them, untrimmed.
    const run = await busEntries(port);
    await redisCommand(port, ["DEL", "mcp-lab:events"]);
    await fillStream(port, run[0].text, 100_000);
    for (const { text } of run) {
      await redisCommand(port, ["XADD", "mcp-lab:events", "*", "m", text]);
    }
    const started = performance.now();
    const late = await spawnLab({
      mainPath: MAIN_PATH,
      args: ["--bus", redis.url],
    });
    try {
      const early = await replicaHealth(late);
      assert.equal(early.status, 503);
      assert.equal(early.body.status, "catching up");
      assert.equal(early.body.bus.ready, false);
      // A request meanwhile waits for the replay, and so knows version 2.
      assert.equal(
        await rawModernRead(new URL(late.url), "notified"),
        VERSION_2_TEXT,
      );
      const ready = await replicaHealth(late);
      assert.deepEqual([ready.status, ready.body.status], [200, "ok"]);
      console.log(
        `replayed 100,000 entries in ${
          ((performance.now() - started) / 1000).toFixed(1)
        } s`,
      );
    } finally {
      await late.stop();
    }
  },
});

Deno.test({
  name:
    "--bus: a forged entry (a time of 1e300, a count below 0, a kind no replica writes) is skipped: /report and /report.md answer 200 on every replica, and the lab ends cleanly",
  ignore: replicasMissing !== "",
  async fn() {
    await using redis = await redisOfItsOwn();
    const port = Number(new URL(redis.url).port);
    const a = await spawnLab({
      mainPath: MAIN_PATH,
      args: ["--bus", redis.url],
    });
    let b: Awaited<ReturnType<typeof spawnLab>> | undefined;
    try {
      await readUnknown(new URL(a.url), "real", "test://real");
      const [{ text }] = await busEntries(port);
      const entry = { ...JSON.parse(text), from: "forger00" };
      const forged = (id: string, change: (message: typeof entry) => void) => {
        const message = structuredClone(entry);
        message.client.id = id;
        message.client.name = id;
        change(message);
        return JSON.stringify(message);
      };
      const forgeries = [
        forged("at", (message) => message.step.at = 1e300),
        forged("first-seen", (message) => message.client.firstSeen = 1e300),
        forged("future", (message) => message.step.at = Date.now() + 3e9),
        forged("kind", (message) => message.step.kind = "bogus"),
        forged("counts", (message) => message.listens.open = -1),
        forged("version", (message) => message.facts.reviewVersion = 1e300),
        forged("field", (message) => message.step.evidence.fields.n = 1e300),
      ];
      for (const forgery of forgeries) {
        await redisCommand(port, ["XADD", "mcp-lab:events", "*", "m", forgery]);
      }
      await redisCommand(port, [
        "XADD",
        "mcp-lab:events",
        "*",
        "m",
        forged("canary", () => {}),
      ]);
      b = await spawnLab({ mainPath: MAIN_PATH, args: ["--bus", redis.url] });
      for (const replica of [a, b]) {
        const report = await replicaReport(replica);
        assert.deepEqual(
          report.clients.map((client) => client.name).toSorted(),
          ["canary", "real"],
        );
        const markdown = await fetch(`${replica.origin}/report.md`);
        assert.equal(markdown.status, 200);
        await markdown.body?.cancel();
      }
    } finally {
      await b?.stop();
      await a.stop();
    }
    for (const replica of [a, b!]) {
      assert.equal((await replica.child.status).code, 0);
    }
  },
});
