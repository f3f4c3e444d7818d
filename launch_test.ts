/**
 * Tests of `launch.ts`: loopback reached past any proxy
 * (`bypassProxyForLoopback`), the balancer's config (`haproxyConfig`), and a
 * replica set started and stopped for real (`startReplicaSet`, on Debian's
 * `redis-server` and HAProxy; skipped, saying which is missing, where they
 * are not installed).
 *
 * ```sh
 * deno test -P launch_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { prepareTestEnvironment, VERSION_1_TEXT } from "./testdata/lab.ts";
import {
  keepingVariables,
  openRawSession,
  rawRead,
} from "./testdata/lab_clients.ts";
import {
  bypassProxyForLoopback,
  haproxyConfig,
  missingReplicaPrograms,
  redisCommand,
  startReplicaSet,
} from "./launch.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Loopback past any proxy
// ---------------------------------------------------------------------------

Deno.test("bypassProxyForLoopback: the loopback hosts join NO_PROXY and no_proxy, once, after what they held", async () => {
  await keepingVariables(["NO_PROXY", "no_proxy"], () => {
    Deno.env.set("NO_PROXY", "example.com, 127.0.0.1");
    Deno.env.delete("no_proxy");
    bypassProxyForLoopback();
    bypassProxyForLoopback();
    assert.equal(
      Deno.env.get("NO_PROXY"),
      "example.com,127.0.0.1,localhost,::1",
    );
    assert.equal(Deno.env.get("no_proxy"), "127.0.0.1,localhost,::1");
    return Promise.resolve();
  });
});

Deno.test("bypassProxyForLoopback: a process with a dead proxy in HTTP_PROXY still fetches loopback", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("direct"),
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  // Fetches `url` in a child, after bypassProxyForLoopback or without it.
  const fetchInChild = async (bypass: boolean) => {
    const launchUrl = new URL("./launch.ts", import.meta.url).href;
    const code = `${
      bypass
        ? `(await import(${
          JSON.stringify(launchUrl)
        })).bypassProxyForLoopback();`
        : ""
    } try { console.log(await (await fetch(${
      JSON.stringify(url)
    })).text()); } catch { console.log("failed"); }`;
    const { stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["eval", code],
      env: {
        HTTP_PROXY: "http://127.0.0.1:9",
        http_proxy: "http://127.0.0.1:9",
        NO_PROXY: "",
        no_proxy: "",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(stdout).trim();
  };
  try {
    assert.equal(await fetchInChild(false), "failed");
    assert.equal(await fetchInChild(true), "direct");
  } finally {
    await server.shutdown();
  }
});

// ---------------------------------------------------------------------------
// Replica set launcher
// ---------------------------------------------------------------------------

/** Why the replica set test cannot run here; `.ci/run` installs both. */
const replicasMissing = (await missingReplicaPrograms()).join("; ");
if (replicasMissing !== "") {
  console.log(
    `launch_test.ts: the replica set test is skipped: ${replicasMissing}`,
  );
}

Deno.test("haproxyConfig: round robin sends each request to the next replica; sticky adds a table of Mcp-Session-Id, stored from answers and matched on requests; eventStreams lets each SSE event through at once and a closed stream go; healthChecks asks each replica's /healthz every second", () => {
  const head = (idle: number, port: number, eventStreams = false) => [
    "defaults",
    "  mode http",
    ...eventStreams ? ["  option http-no-delay", "  option abortonclose"] : [],
    "  timeout connect 5s",
    `  timeout client ${idle}s`,
    `  timeout server ${idle}s`,
    "frontend board",
    `  bind 127.0.0.1:${port}`,
    "  default_backend replicas",
    "backend replicas",
    "  balance roundrobin",
  ];
  assert.equal(
    haproxyConfig(4324, [4321, 4322]),
    [
      ...head(120, 4324),
      "  server replicaA 127.0.0.1:4321",
      "  server replicaB 127.0.0.1:4322",
      "",
    ].join("\n"),
  );
  assert.equal(
    haproxyConfig(9000, [9001, 9002, 9003], "sticky", {
      idleSeconds: 3600,
      eventStreams: true,
      healthChecks: true,
    }),
    [
      ...head(3600, 9000, true),
      "  stick-table type string len 64 size 100k expire 1h",
      "  stick store-response res.hdr(Mcp-Session-Id)",
      "  stick match req.hdr(Mcp-Session-Id)",
      "  option httpchk",
      "  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1",
      "  default-server check inter 1s fall 1 rise 1",
      "  server replicaA 127.0.0.1:9001",
      "  server replicaB 127.0.0.1:9002",
      "  server replicaC 127.0.0.1:9003",
      "",
    ].join("\n"),
  );
});

Deno.test({
  name:
    "startReplicaSet: Redis bounded and saving nothing, two labs on it each seeing the other, HAProxy sticky; 2025 sessions open round robin and stay on their replica; stop() leaves no process, folder or port",
  ignore: replicasMissing !== "",
  async fn() {
    const set = await startReplicaSet({
      labEnv: { MCP_TEST_LOG_LEVEL: "silent" },
    });
    try {
      assert.equal(set.url, `http://127.0.0.1:${set.balancerPort}/mcp`);
      assert.equal(set.redisUrl, `redis://127.0.0.1:${set.redisPort}`);
      assert.deepEqual(set.processes.map(({ name }) => name), [
        "redis",
        "replicaA",
        "replicaB",
        "haproxy",
      ]);
      assert.equal(await redisCommand(set.redisPort, ["PING"]), "PONG");
      assert.deepEqual(
        await redisCommand(set.redisPort, ["CONFIG", "GET", "maxmemory"]),
        { maxmemory: String(64 * 1024 * 1024) },
      );
      assert.deepEqual(
        await redisCommand(set.redisPort, ["CONFIG", "GET", "save"]),
        { save: "" },
      );
      assert.equal(
        await Deno.readTextFile(`${set.workDir}/haproxy.cfg`),
        haproxyConfig(
          set.balancerPort,
          set.replicas.map((replica) => replica.port),
          "sticky",
          { idleSeconds: 3600, eventStreams: true, healthChecks: true },
        ),
      );
      const health = () =>
        Promise.all(
          set.replicas.map(async (replica) =>
            await (await fetch(`${replica.origin}/healthz`)).json()
          ),
        );
      const buses = (await health()).map((each) => each.bus);
      assert.deepEqual(buses.map((bus) => bus.replicas), [2, 2]);
      assert.notEqual(buses[0].replica, buses[1].replica);
      const url = new URL(set.url);
      const sessions = [await openRawSession(url), await openRawSession(url)];
      assert.deepEqual(
        (await health()).map((each) => each.legacySessions),
        [1, 1],
      );
      // Round robin would send every other read to the replica that does
      // not know the session.
      for (const sessionId of sessions) {
        for (let read = 0; read < 3; read++) {
          const answer = await rawRead(url, sessionId);
          assert.equal(answer.status, 200);
          assert.equal(answer.json.result.contents[0].text, VERSION_1_TEXT);
        }
      }
    } finally {
      await set.stop();
    }
    const left = await new Deno.Command("ps", {
      args: ["-o", "pid=", "-p", set.processes.map(({ pid }) => pid).join()],
      stdout: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(left.stdout).trim(), "");
    await assert.rejects(Deno.stat(set.workDir), Deno.errors.NotFound);
    Deno.listen({ hostname: "127.0.0.1", port: set.balancerPort }).close();
  },
});
