/**
 * Tests of `launch.ts`: loopback reached past any proxy
 * (`bypassProxyForLoopback`), the balancer's config (`haproxyConfig`, held
 * to compose.yaml's timeouts), a replica set started and stopped for real
 * (`startReplicaSet`), and `deno task replicas` as a terminal runs it: ended
 * by each ending signal sent to its process group or by its terminal
 * closing, and its balancer under connections that never finish their
 * request (on Debian's `redis-server` and HAProxy; skipped, saying which is
 * missing, where they are not installed).
 *
 * ```sh
 * deno test -P launch_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { prepareTestEnvironment, VERSION_1_TEXT } from "./testdata/lab.ts";
import { existsSync } from "node:fs";
import {
  delay,
  keepingVariables,
  linesOf,
  openRawSession,
  rawRead,
  within,
} from "./testdata/lab_clients.ts";
import {
  bypassProxyForLoopback,
  freePort,
  haproxyConfig,
  HTTP_REQUEST_TIMEOUT_SECONDS,
  httpGet,
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
    "  timeout http-request 10s",
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

/**
 * The `defaults` lines of an HAProxy config, trimmed, each timeout in
 * seconds (`1h` as `3600s`), so two ways of writing one config compare.
 */
function haproxyDefaults(config: string): string[] {
  const lines = config.split("\n").map((line) => line.trim());
  const start = lines.indexOf("defaults");
  const end = lines.findIndex((line, index) =>
    index > start &&
    /^(global|defaults|frontend|backend|listen|resolvers)\b/.test(line)
  );
  const factor: Record<string, number> = { s: 1, m: 60, h: 3600 };
  return lines.slice(start + 1, end).filter(Boolean).map((line) =>
    line.replace(
      /^(timeout [\w-]+) (\d+)([smh])$/,
      (_, what, count, unit) => `${what} ${Number(count) * factor[unit]}s`,
    )
  );
}

Deno.test("haproxyConfig as deno task replicas writes it times out as compose.yaml's balancer does (connect, a request's head, client and server idle), and its other defaults are compose's too", async () => {
  const compose = await Deno.readTextFile(
    new URL("./compose.yaml", import.meta.url),
  );
  const written = compose.match(
    /cat >\/tmp\/haproxy\.cfg <<'EOF'\n([\s\S]*?)\n\s*EOF\n/,
  );
  assert.ok(written, "compose.yaml writes /tmp/haproxy.cfg");
  const composed = haproxyDefaults(written[1]);
  const launched = haproxyDefaults(
    haproxyConfig(8090, [8091, 8092], "sticky", {
      idleSeconds: 3600,
      eventStreams: true,
    }),
  );
  const timeouts = (lines: string[]) =>
    lines.filter((line) => line.startsWith("timeout ")).sort();
  assert.deepEqual(timeouts(launched), [
    "timeout client 3600s",
    "timeout connect 5s",
    "timeout http-request 10s",
    "timeout server 3600s",
  ]);
  assert.deepEqual(timeouts(composed), timeouts(launched));
  // Compose adds what containers need (retries, redispatch).
  for (const line of launched) assert.ok(composed.includes(line), line);
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

// ---------------------------------------------------------------------------
// deno task replicas, as a terminal runs it
// ---------------------------------------------------------------------------

/** The checkout, where `deno task` finds deno.json. */
const CHECKOUT = new URL(".", import.meta.url).pathname;

/** `deno task replicas` leading its own process group, once it serves. */
interface Launcher {
  child: Deno.ChildProcess;
  /** The ports it printed: Redis's, each replica's, the balancer's. */
  ports: { redis: number; replicas: number[]; balancer: number };
  /** Everything it printed on stderr, once it has exited. */
  stderr: Promise<string>;
}

/**
 * The PIDs, states and program names of the processes left in a process
 * group (`-g`) or a session (`-s`), zombies included.
 */
async function processesIn(
  kind: "-g" | "-s",
  id: number,
): Promise<string[]> {
  const { stdout } = await new Deno.Command("ps", {
    args: ["-o", "pid=,stat=,comm=", kind, String(id)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(stdout).split("\n").map((line) => line.trim())
    .filter(Boolean);
}

/**
 * Runs `deno task replicas args…` as a shell runs a job, `wrap` around it
 * (`nohup`, a `ulimit`, a terminal): the leader of a new process group, so
 * a signal can reach the whole of it as a terminal's do. Resolves once it
 * prints that it serves; what it prints later is read and dropped.
 */
async function startLauncher(
  args: string[],
  wrap: (task: string[]) => string[] = (task) => task,
): Promise<Launcher> {
  const command = wrap([Deno.execPath(), "task", "replicas", ...args]);
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: CHECKOUT,
    env: { MCP_TEST_LOG_LEVEL: "silent" },
    detached: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const ports = { redis: 0, replicas: [] as number[], balancer: 0 };
  const serving = Promise.withResolvers<void>();
  (async () => {
    for await (const endOfLine of linesOf(child.stdout)) {
      // A terminal ends its lines with CR LF.
      const line = endOfLine.replace(/\r$/, "");
      const [, name, port] = line.match(
        /^(redis|replica[A-Z]|balancer) +(?:redis|http):\/\/127\.0\.0\.1:(\d+)/,
      ) ?? [];
      if (name === "redis" || name === "balancer") ports[name] = Number(port);
      else if (name) ports.replicas.push(Number(port));
      if (line === "Ctrl-C stops them all.") serving.resolve();
    }
    serving.reject(new Error(`it exited before serving: ${await stderr}`));
  })();
  try {
    await within(serving.promise, 60_000, "deno task replicas serves");
  } catch (error) {
    endGroup(child.pid);
    await child.status;
    throw error;
  }
  return { child, ports, stderr };
}

/** SIGKILL to what is left of a launcher's group, after a failed test. */
function endGroup(group: number) {
  try {
    Deno.kill(-group, "SIGKILL");
  } catch {
    // Nothing left.
  }
}

/** Throws unless a loopback listener can take `port` (it is free). */
function assertPortFree(port: number, what: string) {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
  } catch (error) {
    throw new Error(`${what}'s port ${port} is still taken: ${error}`);
  }
}

/** Throws unless the launcher's ports are all free. */
function assertPortsFree({ ports }: Launcher) {
  assert.equal(ports.replicas.length, 2);
  assertPortFree(ports.redis, "redis-server");
  assertPortFree(ports.balancer, "haproxy");
  for (const port of ports.replicas) assertPortFree(port, "a replica");
}

/**
 * Throws unless `members` are a launcher's: the task, the launcher and
 * two replicas (Deno), redis-server and haproxy, none a zombie.
 */
function assertWholeSet(members: string[]) {
  const names = members.map((member) => member.split(/\s+/)[2]).sort();
  assert.deepEqual(
    names,
    ["deno", "deno", "deno", "deno", "haproxy", "redis-server"],
    members.join("\n"),
  );
  assert.ok(
    members.every((member) => !/^\d+ Z/.test(member)),
    members.join("\n"),
  );
}

for (const signal of ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM"] as const) {
  Deno.test({
    name: `deno task replicas: ${signal} to its whole process group (${
      signal === "SIGHUP" ? "a closed terminal" : "a terminal's key or kill"
    }) stops Redis, HAProxy and every replica, frees their ports, and exits 0 without calling it a crash`,
    ignore: replicasMissing !== "",
    async fn() {
      const launcher = await startLauncher(["--port", String(freePort())]);
      const group = launcher.child.pid;
      try {
        assertWholeSet(await processesIn("-g", group));
        Deno.kill(-group, signal);
        const status = await within(
          launcher.child.status,
          30_000,
          `deno task replicas exits on ${signal}`,
        );
        const stderr = await launcher.stderr;
        assert.deepEqual(
          { code: status.code, signal: status.signal },
          { code: 0, signal: null },
          stderr,
        );
        assert.doesNotMatch(stderr, /^replicas: /m);
        assert.deepEqual(await processesIn("-g", group), []);
        assertPortsFree(launcher);
      } finally {
        endGroup(group);
      }
    },
  });
}

Deno.test({
  name:
    "deno task replicas in a terminal that closes (script's pseudo-terminal, its master gone): Redis, HAProxy and every replica stop and free their ports though nothing it prints reaches anyone",
  ignore: replicasMissing !== "" || !existsSync("/usr/bin/script"),
  async fn() {
    const launcher = await startLauncher(
      ["--port", String(freePort())],
      (task) => [
        "/usr/bin/script",
        "-qfec",
        `exec ${task.map((arg) => `'${arg}'`).join(" ")}`,
        "/dev/null",
      ],
    );
    // script runs the task as the leader of a session on the terminal.
    const { stdout } = await new Deno.Command("ps", {
      args: ["-o", "pid=", "--ppid", String(launcher.child.pid)],
      stdout: "piped",
    }).output();
    const session = Number(new TextDecoder().decode(stdout).trim());
    try {
      assertWholeSet(await processesIn("-s", session));
      // Its parent, script, gone: its exit status goes to no one.
      Deno.kill(launcher.child.pid, "SIGKILL");
      await launcher.child.status;
      const live = async () =>
        (await processesIn("-s", session)).filter((member) =>
          !/^\d+ Z/.test(member)
        );
      const until = Date.now() + 30_000;
      while ((await live()).length > 0 && Date.now() < until) await delay(100);
      assert.deepEqual(await live(), []);
      assertPortsFree(launcher);
    } finally {
      endGroup(session);
    }
  },
});

// ---------------------------------------------------------------------------
// The balancer and clients that never finish their request
// ---------------------------------------------------------------------------

/**
 * The launcher's open-file limit in the test below: a terminal's usual
 * soft limit, from which HAProxy sets its connection limit (about half of
 * it), and more connections than HAProxy can take under it.
 */
const OPEN_FILES = 1024;

/** A connection that sent part of a request's head, then nothing. */
interface Stalled {
  conn: Deno.TcpConn;
  openedAt: number;
  /** When the balancer closed it. */
  closedAt?: number;
  /** The start of what the balancer answered. */
  answer: string;
  /** Settles once it is closed, by either side. */
  done: Promise<void>;
}

/** Connects to `port` and sends a request line and one header, no more. */
async function stall(port: number): Promise<Stalled> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(
    new TextEncoder().encode(
      `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`,
    ),
  );
  const stalled: Stalled = {
    conn,
    openedAt: performance.now(),
    answer: "",
    done: Promise.resolve(),
  };
  stalled.done = (async () => {
    const buffer = new Uint8Array(1024);
    for (let count = await conn.read(buffer); count !== null;) {
      stalled.answer = (stalled.answer +
        new TextDecoder().decode(buffer.subarray(0, count))).slice(0, 200);
      count = await conn.read(buffer);
    }
    stalled.closedAt = performance.now();
  })().catch(() => {});
  return stalled;
}

/**
 * How many connections wait for the listener on `port` to accept them:
 * Linux's /proc/net/tcp gives a listening socket's queue as its rx_queue
 * (read by `cat`: Deno reads /proc's files only with every permission).
 */
async function acceptQueue(port: number): Promise<number> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const { stdout } = await new Deno.Command("cat", {
    args: ["/proc/net/tcp"],
    stdout: "piped",
  }).output();
  let queued = 0;
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const [, local, , state, queues] = line.trim().split(/\s+/);
    if (local?.endsWith(`:${hexPort}`) && state === "0A") {
      queued += parseInt(queues.split(":")[1], 16);
    }
  }
  return queued;
}

Deno.test({
  name:
    "deno task replicas: connections that never finish their request's head fill HAProxy (its limit from ulimit -n 1024) and are answered 408 and closed after timeout http-request (10 s); a client queued behind them is served then, not after the hour-long idle timeout",
  ignore: replicasMissing !== "",
  async fn() {
    const launcher = await startLauncher(
      ["--port", String(freePort())],
      (
        task,
      ) => ["sh", "-c", `ulimit -n ${OPEN_FILES} && exec "$0" "$@"`, ...task],
    );
    const group = launcher.child.pid;
    const port = launcher.ports.balancer;
    const stalled: Stalled[] = [];
    try {
      // Fifty at a time until HAProxy takes no more: the rest wait in its
      // listener's queue, and stay there.
      let queued = 0;
      while (queued === 0 && stalled.length < OPEN_FILES) {
        stalled.push(
          ...await Promise.all(Array.from({ length: 50 }, () => stall(port))),
        );
        await delay(200);
        const waiting = await acceptQueue(port);
        if (waiting === 0) continue;
        await delay(1_000);
        if (await acceptQueue(port) >= waiting) queued = waiting;
      }
      assert.ok(queued > 0, `HAProxy took all ${stalled.length} connections`);
      const taken = stalled.length - queued;
      const firstOpened = stalled[0].openedAt;
      const lastOpened = stalled.at(-1)!.openedAt;
      const timeoutMs = HTTP_REQUEST_TIMEOUT_SECONDS * 1000;

      const answer = await httpGet(port, "/healthz", 40_000).catch((error) => {
        throw new Error(`a client behind them not served in 40 s: ${error}`);
      });
      const servedAt = performance.now();
      assert.equal(answer.status, 200);
      // Held until the first stalled connections were cut: it was full.
      assert.ok(
        servedAt >= firstOpened + timeoutMs - 1_000,
        `served ${Math.round(servedAt - firstOpened)} ms after the first`,
      );
      assert.ok(
        servedAt <= lastOpened + timeoutMs + 10_000,
        `served ${Math.round(servedAt - lastOpened)} ms after the last`,
      );

      const closed = () => stalled.filter((each) => each.closedAt);
      const until = lastOpened + timeoutMs + 10_000;
      while (closed().length < taken && performance.now() < until) {
        await delay(100);
      }
      assert.ok(
        closed().length >= taken,
        `${closed().length} of the ${taken} connections HAProxy took closed`,
      );
      for (const each of closed()) {
        assert.match(each.answer, /^HTTP\/1\.[01] 408 /);
        assert.ok(each.closedAt! - each.openedAt >= timeoutMs - 1_000);
      }
    } finally {
      for (const { conn } of stalled) {
        try {
          conn.close();
        } catch {
          // Closed by the balancer.
        }
      }
      await Promise.all(stalled.map(({ done }) => done));
      Deno.kill(-group, "SIGTERM");
      await within(launcher.child.status, 30_000, "it stops").finally(() =>
        endGroup(group)
      );
    }
  },
});
