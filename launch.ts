/**
 * The lab as processes on loopback: one lab as a subprocess (`spawnLab`,
 * which the harness, the tests and the benchmark start), or a replica set:
 * Debian's Redis (nothing saved, its memory bounded), N labs sharing it as
 * their `--bus`, and HAProxy in front, round robin or sticky by
 * `Mcp-Session-Id`. The tests and the benchmark start the set
 * (`startReplicaSet`), the servers table's replica rows write their balancer
 * with `haproxyConfig`, and `deno task replicas` runs this file:
 *
 * ```sh
 * deno task replicas                          # balancer on :8090, sticky
 * deno task replicas --routing round-robin --port 9000 -- --delay 2
 * ```
 *
 * Every process it starts is stopped by its PID, and a set's temporary
 * folder removed, by `stop()` (or, for the command, any of
 * `ENDING_SIGNALS`: Ctrl-C, a closed terminal, SIGTERM).
 *
 * @module
 */

import { ConfigError, parseFlags } from "./main.ts";
import { createClient } from "npm:@redis/client@6.3.1";

// ---------------------------------------------------------------------------
// Loopback: past any proxy, on a free port
// ---------------------------------------------------------------------------

/** The lab's entry point, as a path for `deno run`. */
export const MAIN_PATH = new URL("./main.ts", import.meta.url).pathname;

/** The loopback hosts: the lab, the scripted model and the relays. */
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"];

/**
 * Makes this process, and every child that inherits its environment, reach
 * loopback directly whatever proxy HTTP_PROXY, HTTPS_PROXY or ALL_PROXY
 * names: Deno's fetch sends even 127.0.0.1 through them, unless NO_PROXY
 * lists it. Adds the loopback hosts to NO_PROXY and no_proxy, keeping what
 * they held, so the registries are still reached through the proxy. Must
 * run before the first fetch, which reads them once.
 */
export function bypassProxyForLoopback() {
  for (const name of ["NO_PROXY", "no_proxy"]) {
    const listed = (Deno.env.get(name) ?? "").split(",").map((host) =>
      host.trim()
    ).filter(Boolean);
    const missing = LOOPBACK_HOSTS.filter((host) => !listed.includes(host));
    if (missing.length > 0) {
      Deno.env.set(name, [...listed, ...missing].join(","));
    }
  }
}

/** A free loopback port, for servers that cannot pick their own. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

// ---------------------------------------------------------------------------
// One lab as a subprocess
// ---------------------------------------------------------------------------

/** Each whole line of a stream of chunks, as it comes. */
function lineSplitter(take: (line: string) => void) {
  const decoder = new TextDecoder();
  let partial = "";
  return (chunk: Uint8Array) => {
    const parts = (partial + decoder.decode(chunk, { stream: true })).split(
      "\n",
    );
    partial = parts.pop()!.slice(-16 * 1024);
    for (const part of parts) take(part.replace(/\r$/, ""));
  };
}

/** Signals a child this module started (a lab, Redis, HAProxy), if it is still there. */
function signalChild(child: Deno.ChildProcess, name: Deno.Signal) {
  try {
    child.kill(name);
  } catch {
    // Already gone.
  }
}

/** How to run the lab: its `main.ts`, flags and environment. */
export interface LabCommandOptions {
  /** Path to the lab's `main.ts`. */
  mainPath: string;
  /** Flags after `main.ts`. */
  args?: string[];
  /** Deno flags before `main.ts`, after `-A` (the benchmark's `--inspect`). */
  runFlags?: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
  cwd?: string;
}

/** `deno run -A main.ts [args]`, stdin closed, stdout and stderr piped. */
export function labCommand(options: LabCommandOptions): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...options.runFlags ?? [],
      options.mainPath,
      ...options.args ?? [],
    ],
    env: options.env,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

export interface SpawnLabOptions extends LabCommandOptions {
  /** Each chunk of the lab's stdout and stderr, as it comes. */
  onOutput?: (
    chunk: Uint8Array,
    stream: "stdout" | "stderr",
  ) => void | Promise<void>;
  /** How long the lab may take to print its listening line (60 s). */
  timeoutMs?: number;
  /** Aborting it kills a lab that is still starting. */
  signal?: AbortSignal;
  /** Whether `lines` keeps every stdout line (true); false keeps none. */
  keepLines?: boolean;
}

/** A lab subprocess that is listening. */
export interface SpawnedLab {
  child: Deno.ChildProcess;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** The MCP endpoint, `${origin}/mcp`. */
  url: string;
  /** Every stdout line so far, the listening line included, until it exits. */
  lines: string[];
  /** Settles once the lab's stdout and stderr have ended. */
  drained: Promise<void>;
  /** SIGTERM, SIGKILL after `graceMs` (5 s); resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** The line the lab prints on stdout once it listens. */
const LISTENING = /^listening on (http:\/\/127\.0\.0\.1:(\d+))\/mcp$/;

/**
 * Runs the lab on a free port (`MCP_TEST_PORT=0` unless `env` says
 * otherwise) and resolves once it prints its listening line. A lab that
 * exits first, is too slow, or is aborted is killed, and the promise rejects.
 */
export async function spawnLab(options: SpawnLabOptions): Promise<SpawnedLab> {
  const { onOutput, timeoutMs = 60_000 } = options;
  options.signal?.throwIfAborted();
  const child = labCommand({
    ...options,
    env: { MCP_TEST_PORT: "0", ...options.env },
  }).spawn();
  const lines: string[] = [];
  const listening = Promise.withResolvers<RegExpMatchArray>();
  const readStdout = async () => {
    const decoder = new TextDecoder();
    let partial = "";
    const take = (line: string) => {
      if (options.keepLines ?? true) lines.push(line);
      const match = line.match(LISTENING);
      if (match) listening.resolve(match);
    };
    for await (const chunk of child.stdout) {
      await onOutput?.(chunk, "stdout");
      const parts = (partial + decoder.decode(chunk, { stream: true }))
        .split("\n");
      partial = parts.pop()!;
      parts.forEach(take);
    }
    partial += decoder.decode();
    if (partial) take(partial);
  };
  const readStderr = async () => {
    for await (const chunk of child.stderr) await onOutput?.(chunk, "stderr");
  };
  const stdoutRead = readStdout();
  const drained = Promise.all([stdoutRead, readStderr()]).then(
    () => {},
    () => {},
  );
  // Resolving first makes these rejections no-ops.
  stdoutRead.then(async () => {
    const { code } = await child.status;
    listening.reject(new Error(`the lab exited (${code}) before listening`));
  }, (error) => listening.reject(error));
  const timeout = setTimeout(
    () =>
      listening.reject(
        new Error(`the lab did not listen within ${timeoutMs / 1000} s`),
      ),
    timeoutMs,
  );
  const abort = () =>
    listening.reject(new Error("the lab was stopped while starting"));
  options.signal?.addEventListener("abort", abort);
  let match: RegExpMatchArray;
  try {
    match = await listening.promise;
  } catch (error) {
    signalChild(child, "SIGKILL");
    await child.status;
    await drained;
    throw error;
  } finally {
    clearTimeout(timeout);
    options.signal?.removeEventListener("abort", abort);
  }
  const [, origin, port] = match;
  return {
    child,
    origin,
    port: Number(port),
    url: `${origin}/mcp`,
    lines,
    drained,
    async stop(graceMs = 5_000) {
      signalChild(child, "SIGTERM");
      const forced = setTimeout(() => signalChild(child, "SIGKILL"), graceMs);
      await child.status;
      clearTimeout(forced);
      await drained;
    },
  };
}

// ---------------------------------------------------------------------------
// The replica set's programs: Redis and HAProxy, and the balancer's config
// ---------------------------------------------------------------------------

/** Debian's Redis and HAProxy, where the replica set looks for them. */
export const REDIS_SERVER_PATH = "/usr/bin/redis-server";
export const HAPROXY_PATH = "/usr/sbin/haproxy";

/**
 * Redis on a loopback port, saving nothing (the replicas' state lives as
 * long as the run), and with `maxMemory`, bounded: past it, writes fail.
 */
export function redisServerCommand(port: number, maxMemory?: string) {
  return [
    REDIS_SERVER_PATH,
    ...["--save", "", "--appendonly", "no"],
    ...["--port", String(port), "--bind", "127.0.0.1"],
    ...maxMemory
      ? ["--maxmemory", maxMemory, "--maxmemory-policy", "noeviction"]
      : [],
  ];
}

/**
 * How the balancer picks a replica: each request to the next one, or a
 * 2025 session's requests to the replica that answered its `initialize`.
 */
export type Routing = "round-robin" | "sticky";
export const ROUTINGS: readonly Routing[] = ["round-robin", "sticky"];

/** A replica's name in the balancer and in logs: replicaA, replicaB, … */
export function replicaName(index: number): string {
  return `replica${String.fromCharCode(65 + index)}`;
}

/**
 * How long the balancer waits for a request's head (its line and headers),
 * as compose.yaml's does: a connection that has not sent it whole by then
 * is answered 408 and closed, so connections that never finish theirs hold
 * a place in HAProxy's connection limit for this long at most, not for an
 * idle timeout (an hour). Also how long a kept-alive connection may wait
 * for its next request.
 */
export const HTTP_REQUEST_TIMEOUT_SECONDS = 10;

/** How HAProxy treats the streams it carries. */
export interface BalancerOptions {
  /**
   * Client and server idle timeouts (120 s): longer than a stream stays
   * quiet, so the balancer never cuts the stream it carries.
   */
  idleSeconds?: number;
  /**
   * The two options event streams need (false), both measured. `option
   * http-no-delay`: HAProxy otherwise waits to fill packets of a chunked
   * body, holding each SSE event about 200 ms (a 2025 update's lag p50 212
   * ms through it). `option abortonclose`: otherwise a listen stream its
   * client closed stays open on the replica until its next write.
   */
  eventStreams?: boolean;
  /**
   * Ask each replica's `/healthz` every second (false): a replica that
   * answers 503 (still catching up with the bus) or nothing gets no traffic
   * until it answers 200 again.
   */
  healthChecks?: boolean;
}

/**
 * HAProxy in front of the replicas. Round robin: each request (a
 * 2026-07-28 listen, each read, each call) to the next replica. Sticky: a
 * table remembers which replica answered with each `Mcp-Session-Id` and
 * sends every request carrying that id there; a request without one (an
 * `initialize`, any 2026-07-28 request) goes round robin.
 */
export function haproxyConfig(
  port: number,
  replicas: number[],
  routing: Routing = "round-robin",
  { idleSeconds = 120, eventStreams = false, healthChecks = false }:
    BalancerOptions = {},
): string {
  // Session ids are UUIDs (36 characters); a longer one is cut to 64 on
  // both sides of the match, so it still sticks.
  const sticky = routing === "sticky"
    ? [
      "  stick-table type string len 64 size 100k expire 1h",
      "  stick store-response res.hdr(Mcp-Session-Id)",
      "  stick match req.hdr(Mcp-Session-Id)",
    ]
    : [];
  return [
    "defaults",
    "  mode http",
    ...eventStreams ? ["  option http-no-delay", "  option abortonclose"] : [],
    "  timeout connect 5s",
    `  timeout http-request ${HTTP_REQUEST_TIMEOUT_SECONDS}s`,
    `  timeout client ${idleSeconds}s`,
    `  timeout server ${idleSeconds}s`,
    "frontend board",
    `  bind 127.0.0.1:${port}`,
    "  default_backend replicas",
    "backend replicas",
    "  balance roundrobin",
    ...sticky,
    ...healthChecks
      ? [
        "  option httpchk",
        "  http-check send meth GET uri /healthz ver HTTP/1.1 hdr Host 127.0.0.1",
        "  default-server check inter 1s fall 1 rise 1",
      ]
      : [],
    ...replicas.map((replica, index) =>
      `  server ${replicaName(index)} 127.0.0.1:${replica}`
    ),
    "",
  ].join("\n");
}

/** A line for each program the replica set needs and this machine lacks. */
export async function missingReplicaPrograms(): Promise<string[]> {
  const missing: string[] = [];
  for (
    const [path, name, pkg] of [
      [REDIS_SERVER_PATH, "redis-server", "redis-server"],
      [HAPROXY_PATH, "haproxy", "haproxy"],
    ]
  ) {
    const found = await Deno.stat(path).then(
      (info) => info.isFile,
      () => false,
    );
    if (!found) {
      missing.push(
        `${name} not found at ${path} (Debian: apt-get install ${pkg})`,
      );
    }
  }
  return missing;
}

// ---------------------------------------------------------------------------
// Redis: one command, on a fresh connection of the lab's own client
// ---------------------------------------------------------------------------

/** A Redis reply (RESP3): text, integer, nil, an array or a map of them. */
export type RedisReply =
  | string
  | number
  | null
  | RedisReply[]
  | { [key: string]: RedisReply };

/**
 * Sends one command to the Redis on `port` and reads its reply, within
 * `timeoutMs`; an error reply rejects with its text.
 */
export async function redisCommand(
  port: number,
  args: string[],
  timeoutMs = 5_000,
): Promise<RedisReply> {
  const redis = createClient({
    url: `redis://127.0.0.1:${port}`,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: false },
  });
  redis.on("error", () => {});
  const timer = setTimeout(() => redis.destroy(), timeoutMs);
  try {
    await redis.connect();
    return await redis.sendCommand(args) as RedisReply;
  } finally {
    clearTimeout(timer);
    await redis.destroy();
  }
}

/** A field of `INFO`'s answer (`used_memory`), as a number. */
export async function redisInfoNumber(
  port: number,
  section: string,
  field: string,
): Promise<number> {
  const info = await redisCommand(port, ["INFO", section]);
  const match = String(info).match(new RegExp(`^${field}:(\\d+)\\r?$`, "m"));
  if (!match) throw new Error(`no ${field} in redis INFO ${section}`);
  return Number(match[1]);
}

// ---------------------------------------------------------------------------
// Processes: Redis, the labs, HAProxy
// ---------------------------------------------------------------------------

/** Redis's memory bound unless told otherwise: past it, writes fail. */
export const REDIS_MAX_MEMORY = "64mb";

/** What the replica set is made of, and how. */
export interface ReplicaSetOptions {
  /** Lab processes, 1 to 26 (2). */
  replicas?: number;
  /** The balancer's routing ("sticky"). */
  routing?: Routing;
  /** The balancer's port (0, the default: a free one). */
  balancerPort?: number;
  /**
   * Start each lab with `--bus redis://…` (true); false starts them on their
   * own memory, Redis still running beside them.
   */
  bus?: boolean;
  /** Flags after each lab's `main.ts`. */
  labArgs?: string[];
  /** Added to each lab's environment. */
  labEnv?: Record<string, string>;
  /** Redis's `--maxmemory` (`REDIS_MAX_MEMORY`); nothing is evicted. */
  redisMaxMemory?: string;
  /** The balancer's idle timeouts, in seconds (3600). */
  idleSeconds?: number;
  /** The balancer's options for event streams (true). */
  eventStreams?: boolean;
  /** Each line a process prints, with its name (redis, replicaA, haproxy). */
  onLine?: (source: string, line: string) => void;
  /**
   * Whether each lab's `lines` keeps all it prints (true); a set that runs
   * for hours and prints through `onLine` keeps none.
   */
  keepLines?: boolean;
  /** How long the whole set may take to start (60 s). */
  timeoutMs?: number;
  /** Aborting it stops a set that is still starting. */
  signal?: AbortSignal;
}

/** A running replica set. */
export interface ReplicaSet {
  /** The balancer's MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  /** `http://127.0.0.1:PORT`, the balancer. */
  origin: string;
  balancerPort: number;
  routing: Routing;
  /** `redis://127.0.0.1:PORT` */
  redisUrl: string;
  redisPort: number;
  /** The labs, in the balancer's order (replicaA first). */
  replicas: SpawnedLab[];
  /** Every process it started, by name: redis, replicaA, …, haproxy. */
  processes: { name: string; pid: number }[];
  /** The temporary folder holding haproxy.cfg (Redis's working folder). */
  workDir: string;
  /** Settles with a line naming the first process that exits unasked. */
  exited: Promise<string>;
  /** Stops what it started, by PID, and removes `workDir`; idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The last lines a process printed, kept to explain a failed start. */
class OutputTail {
  #text = "";
  add(line: string) {
    this.#text = `${this.#text}${line}\n`.slice(-2000);
  }
  toString() {
    return this.#text.trimEnd();
  }
}

/** A program the set started (not a lab), with its output drained. */
interface Program {
  name: string;
  child: Deno.ChildProcess;
  tail: OutputTail;
  drained: Promise<void>;
}

function startProgram(
  name: string,
  command: string[],
  cwd: string,
  onLine?: (source: string, line: string) => void,
): Program {
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const tail = new OutputTail();
  const read = async (stream: ReadableStream<Uint8Array>) => {
    const split = lineSplitter((line) => {
      tail.add(line);
      onLine?.(name, line);
    });
    for await (const chunk of stream) split(chunk);
  };
  const drained = Promise.all([read(child.stdout), read(child.stderr)]).then(
    () => {},
    () => {},
  );
  return { name, child, tail, drained };
}

/** SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
async function stopProgram(program: Program, graceMs = 3_000) {
  signalChild(program.child, "SIGTERM");
  const forced = setTimeout(
    () => signalChild(program.child, "SIGKILL"),
    graceMs,
  );
  await program.child.status;
  clearTimeout(forced);
  await program.drained;
}

/**
 * `GET path` on a loopback port over one HTTP/1.1 connection, read to its
 * end (at most 64 KiB) within `timeoutMs`: no fetch, so no proxy.
 */
export async function httpGet(
  port: number,
  path: string,
  timeoutMs = 5_000,
): Promise<{ status: number; body: string }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  try {
    await conn.write(
      new TextEncoder().encode(
        `GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: close\r\n\r\n`,
      ),
    );
    const chunks: Uint8Array[] = [];
    let size = 0;
    const buffer = new Uint8Array(16 * 1024);
    for (let count = await conn.read(buffer); count !== null;) {
      chunks.push(buffer.slice(0, count));
      size += count;
      if (size > 64 * 1024) throw new Error(`GET ${path}: over 64 KiB`);
      count = await conn.read(buffer);
    }
    const text = new TextDecoder().decode(
      chunks.reduce((all, chunk) => {
        const joined = new Uint8Array(all.length + chunk.length);
        joined.set(all);
        joined.set(chunk, all.length);
        return joined;
      }, new Uint8Array(0)),
    );
    const split = text.indexOf("\r\n\r\n");
    const status = Number(text.slice(0, text.indexOf("\r\n")).split(" ")[1]);
    const head = text.slice(0, split).toLowerCase();
    const raw = text.slice(split + 4);
    return {
      status,
      body: head.includes("transfer-encoding: chunked") ? unchunk(raw) : raw,
    };
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // Closed by the timer.
    }
  }
}

/** A chunked body's data (sizes in hex, each chunk's CRLF dropped). */
function unchunk(raw: string): string {
  let body = "";
  let at = 0;
  while (at < raw.length) {
    const lineEnd = raw.indexOf("\r\n", at);
    const size = parseInt(raw.slice(at, lineEnd), 16);
    if (!(size > 0)) break;
    body += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
  return body;
}

/**
 * Polls `ready` every 50 ms until it says yes; fails with `what` and the
 * process's last lines once `deadline` passes or the process exits.
 */
async function waitUntil(
  what: string,
  ready: () => Promise<boolean>,
  deadline: number,
  process: { child: Deno.ChildProcess; tail: () => string },
  signal?: AbortSignal,
) {
  let exitCode: number | undefined;
  process.child.status.then(({ code }) => exitCode = code);
  while (true) {
    if (signal?.aborted) throw new Error(`${what}: stopped while starting`);
    if (await ready().catch(() => false)) return;
    if (exitCode !== undefined) {
      throw new Error(`${what}: exited (${exitCode}) first\n${process.tail()}`);
    }
    if (performance.now() > deadline) {
      throw new Error(`${what}: not ready in time\n${process.tail()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** `/healthz`'s `bus` object, once the lab has one. */
interface HealthBus {
  replica: string;
  replicas: number;
}

/** A lab's `/healthz`, read straight from it. */
async function labHealth(
  port: number,
): Promise<{ status?: string; bus?: HealthBus }> {
  const { status, body } = await httpGet(port, "/healthz");
  if (status !== 200) throw new Error(`/healthz answered ${status}`);
  return JSON.parse(body);
}

/**
 * Starts Redis, `replicas` labs on it and HAProxy in front, each on a free
 * loopback port (the balancer on `balancerPort` if given), and resolves once
 * Redis answers PING, every lab's `/healthz` is ok (and, with a bus, counts
 * every replica) and the balancer answers `/healthz`. A step that fails
 * stops everything started so far and rejects with the process's last lines.
 */
export async function startReplicaSet(
  options: ReplicaSetOptions = {},
): Promise<ReplicaSet> {
  const {
    replicas: count = 2,
    routing = "sticky",
    bus = true,
    labArgs = [],
    labEnv = {},
    redisMaxMemory = REDIS_MAX_MEMORY,
    idleSeconds = 3600,
    eventStreams = true,
    onLine,
    timeoutMs = 60_000,
    signal,
  } = options;
  if (!Number.isInteger(count) || count < 1 || count > 26) {
    throw new RangeError(`replicas: 1 to 26, not ${count}`);
  }
  const missing = await missingReplicaPrograms();
  if (missing.length > 0) throw new Error(missing.join("; "));
  const deadline = performance.now() + timeoutMs;
  const workDir = await Deno.makeTempDir({ prefix: "mcp-replicas-" });
  let redis: Program | undefined;
  let haproxy: Program | undefined;
  const labs: SpawnedLab[] = [];
  let stopping = false;
  let stopped: Promise<void> | undefined;
  // The balancer first, so no request reaches a lab that is stopping.
  const stop = () =>
    stopped ??= (async () => {
      stopping = true;
      if (haproxy) await stopProgram(haproxy);
      await Promise.all(labs.map((lab) => lab.stop()));
      if (redis) await stopProgram(redis);
      await Deno.remove(workDir, { recursive: true }).catch(() => {});
    })();
  const exited = Promise.withResolvers<string>();
  const watch = (name: string, child: Deno.ChildProcess) =>
    child.status.then(({ code, signal }) => {
      if (!stopping) {
        exited.resolve(`${name} exited (${signal ?? code}) while serving`);
      }
    });

  try {
    const redisPort = freePort();
    const redisProgram = startProgram(
      "redis",
      redisServerCommand(redisPort, redisMaxMemory),
      workDir,
      onLine,
    );
    redis = redisProgram;
    await waitUntil(
      `redis-server on port ${redisPort}`,
      async () => await redisCommand(redisPort, ["PING"], 1_000) === "PONG",
      deadline,
      { child: redisProgram.child, tail: () => String(redisProgram.tail) },
      signal,
    );
    watch("redis", redisProgram.child);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;

    const started = await Promise.allSettled(
      Array.from({ length: count }, (_, index) => {
        const name = replicaName(index);
        const tail = new OutputTail();
        const splitters = {
          stdout: lineSplitter((line) => onLine?.(name, line)),
          stderr: lineSplitter((line) => {
            tail.add(line);
            onLine?.(name, line);
          }),
        };
        return spawnLab({
          mainPath: MAIN_PATH,
          args: [...bus ? ["--bus", redisUrl] : [], ...labArgs],
          env: labEnv,
          onOutput: (chunk, stream) => splitters[stream](chunk),
          timeoutMs: Math.max(1, deadline - performance.now()),
          signal,
          keepLines: options.keepLines,
        }).catch((error) => {
          throw new Error(`${name}: ${error.message}\n${tail}`);
        });
      }),
    );
    for (const result of started) {
      if (result.status === "fulfilled") labs.push(result.value);
    }
    const failed = started.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
    for (const [index, lab] of labs.entries()) {
      const name = replicaName(index);
      await waitUntil(
        `${name}'s /healthz`,
        async () => {
          const health = await labHealth(lab.port);
          return health.status === "ok" &&
            (health.bus === undefined || health.bus.replicas >= count);
        },
        deadline,
        { child: lab.child, tail: () => lab.lines.slice(-10).join("\n") },
        signal,
      );
      watch(name, lab.child);
    }

    const balancerPort = options.balancerPort || freePort();
    await Deno.writeTextFile(
      `${workDir}/haproxy.cfg`,
      haproxyConfig(
        balancerPort,
        labs.map((lab) => lab.port),
        routing,
        { idleSeconds, eventStreams, healthChecks: true },
      ),
    );
    const haproxyProgram = startProgram(
      "haproxy",
      [HAPROXY_PATH, "-db", "-f", "haproxy.cfg"],
      workDir,
      onLine,
    );
    haproxy = haproxyProgram;
    await waitUntil(
      `haproxy on port ${balancerPort}`,
      async () =>
        (await httpGet(balancerPort, "/healthz", 1_000)).status === 200,
      deadline,
      { child: haproxyProgram.child, tail: () => String(haproxyProgram.tail) },
      signal,
    );
    watch("haproxy", haproxyProgram.child);

    const origin = `http://127.0.0.1:${balancerPort}`;
    return {
      url: `${origin}/mcp`,
      origin,
      balancerPort,
      routing,
      redisUrl,
      redisPort,
      replicas: labs,
      processes: [
        { name: "redis", pid: redisProgram.child.pid },
        ...labs.map((lab, index) => ({
          name: replicaName(index),
          pid: lab.child.pid,
        })),
        { name: "haproxy", pid: haproxyProgram.child.pid },
      ],
      workDir,
      exited: exited.promise,
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

// ---------------------------------------------------------------------------
// deno task replicas
// ---------------------------------------------------------------------------

const USAGE = [
  "Usage: deno task replicas [--port 8090] [--routing sticky|round-robin]",
  "                          [--replicas 2] [-- LAB FLAGS...]",
  "",
  "Starts Redis, the labs (each with --bus on that Redis, and LAB FLAGS) and",
  "HAProxy in front of them on 127.0.0.1:PORT; Ctrl-C stops them all.",
  "  --port      the balancer's port (default 8090)",
  "  --routing   sticky: a 2025 session's requests to the replica that opened",
  "              it, by Mcp-Session-Id, others round robin (default);",
  "              round-robin: every request to the next replica",
  "  --replicas  how many labs, 1 to 26 (default 2)",
].join("\n");

/** An integer flag from `min` to `max`, or a one-line `ConfigError`. */
function integerFlag(
  flag: string,
  value: string,
  min: number,
  max: number,
): number {
  const number = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(number >= min && number <= max)) {
    throw new ConfigError(
      `--${flag} must be an integer from ${min} to ${max}, not ${
        JSON.stringify(value.slice(0, 40))
      }`,
    );
  }
  return number;
}

/** The command line: the set's own flags, and the labs' after `--`. */
function parseReplicasCommandLine(args: string[]) {
  const split = args.indexOf("--");
  const { values } = parseFlags(split < 0 ? args : args.slice(0, split), {
    help: { type: "boolean" },
    port: { type: "string" },
    routing: { type: "string" },
    replicas: { type: "string" },
  }, { help: "deno task replicas --help" });
  const routing = values.routing ?? "sticky";
  if (!(ROUTINGS as readonly string[]).includes(routing)) {
    throw new ConfigError(
      `--routing must be sticky or round-robin, not ${
        JSON.stringify(routing.slice(0, 40))
      }`,
    );
  }
  return {
    help: values.help === true,
    balancerPort: integerFlag("port", values.port ?? "8090", 1, 65535),
    routing: routing as Routing,
    replicas: integerFlag("replicas", values.replicas ?? "2", 1, 26),
    labArgs: split < 0 ? [] : args.slice(split + 1),
  };
}

/**
 * The signals that end `deno task replicas`, all by one path: Ctrl-C
 * (SIGINT), Ctrl-\ (SIGQUIT), a closed terminal (SIGHUP) and `kill`
 * (SIGTERM). A terminal sends them to the whole process group, so the
 * processes the set started get them too; Redis ignores SIGHUP and HAProxy
 * SIGHUP and SIGQUIT, and keep their ports unless they are stopped.
 */
export const ENDING_SIGNALS: readonly Deno.Signal[] = [
  "SIGHUP",
  "SIGINT",
  "SIGQUIT",
  "SIGTERM",
];

/**
 * How long a process of the set that exits is given to turn out to be
 * ending on a signal sent to the whole group, which this process may hear
 * of after the child's exit.
 */
const GROUP_SIGNAL_SETTLE_MS = 500;

/**
 * Prints a line, or nothing once the terminal is gone: after a closed
 * terminal's SIGHUP every write fails (EIO), and the set must still stop.
 */
function print(line: string, stream: "stdout" | "stderr" = "stdout") {
  try {
    (stream === "stdout" ? console.log : console.error)(line);
  } catch {
    // Nowhere to print to.
  }
}

/**
 * Listens for the ending signals: `signal` aborts on the first and `came`
 * settles then; `cameWithin(ms)` waits that long for one, if none has come.
 */
function listenForEndingSignals() {
  const controller = new AbortController();
  const listeners = ENDING_SIGNALS.map((name) => {
    const listener = () => controller.abort();
    Deno.addSignalListener(name, listener);
    return [name, listener] as const;
  });
  const came = new Promise<void>((resolve) =>
    controller.signal.addEventListener("abort", () => resolve())
  );
  return {
    signal: controller.signal,
    came,
    async cameWithin(ms: number): Promise<boolean> {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        came,
        new Promise((resolve) => timer = setTimeout(resolve, ms)),
      ]);
      clearTimeout(timer);
      return controller.signal.aborted;
    },
    remove() {
      for (const [name, listener] of listeners) {
        Deno.removeSignalListener(name, listener);
      }
    },
  };
}

/**
 * `deno task replicas`: starts the set, prints where it listens and every
 * line its processes print (by name), and stops it all on an ending signal
 * (exit 0), while starting too, or when one of its processes exits (exit
 * 1). The signal listeners stay until everything has stopped, so a second
 * Ctrl-C does not cut the stop short.
 */
export async function replicasMain(args: string[]): Promise<number> {
  let commandLine: ReturnType<typeof parseReplicasCommandLine>;
  try {
    commandLine = parseReplicasCommandLine(args);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    print(`replicas: ${error.message}`, "stderr");
    return 2;
  }
  if (commandLine.help) {
    print(USAGE);
    return 0;
  }
  const missing = await missingReplicaPrograms();
  if (missing.length > 0) {
    print(`replicas: ${missing.join("; ")}`, "stderr");
    return 1;
  }
  const ending = listenForEndingSignals();
  const width = replicaName(commandLine.replicas - 1).length + 1;
  try {
    const set = await startReplicaSet({
      ...commandLine,
      onLine: (source, line) => print(`${source.padEnd(width)}| ${line}`),
      keepLines: false,
      signal: ending.signal,
    });
    print(
      [
        `redis    ${set.redisUrl} (maxmemory ${REDIS_MAX_MEMORY}, nothing saved)`,
        ...set.replicas.map((lab, index) =>
          `${replicaName(index).padEnd(8)} ${lab.url}`
        ),
        `balancer ${set.url} (${set.routing}${
          set.routing === "sticky" ? " by Mcp-Session-Id" : ""
        })`,
        "Ctrl-C stops them all.",
      ].join("\n"),
    );
    const exited = await Promise.race([ending.came, set.exited]);
    const unasked = exited !== undefined &&
      !await ending.cameWithin(GROUP_SIGNAL_SETTLE_MS);
    if (unasked) print(`replicas: ${exited}; stopping the rest`, "stderr");
    await set.stop();
    return unasked ? 1 : 0;
  } catch (error) {
    // startReplicaSet has stopped what it started.
    if (await ending.cameWithin(GROUP_SIGNAL_SETTLE_MS)) return 0;
    print(
      `replicas: ${error instanceof Error ? error.message : error}`,
      "stderr",
    );
    return 1;
  } finally {
    ending.remove();
  }
}

if (import.meta.main) Deno.exit(await replicasMain(Deno.args));
