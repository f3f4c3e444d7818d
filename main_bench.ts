/**
 * Benchmark for the MCP resource subscription lab (`main.ts`).
 *
 * Starts the lab as a subprocess with `MCP_TEST_LOG_LEVEL=silent`, drives it
 * over raw HTTP/1.1 on loopback, prints one table and writes it as JSON:
 *
 * 1. full-flow throughput in the 2025 era at concurrency 1, 16, 64 and 256;
 * 2. notification lag with 1,000 subscribed 2025 sessions and with 1,000
 *    open 2026-07-28 listen streams;
 * 3. resident memory per idle subscribed 2025 session, idle listen stream
 *    and wait-tool call in progress, each beside the floor: a bare
 *    `Deno.serve` holding as many SSE responses (`main_bench.ts --sse-floor`),
 *    so each figure reads as floor + the lab's share; then five rounds of
 *    1,000 sessions opened and closed in one lab (churn);
 * 4. cold start: process spawn to the first successful `initialize`;
 * 5. the replica set (`launch.ts`): two labs on Redis behind
 *    HAProxy, sticky by `Mcp-Session-Id`: full 2025 flows at concurrency 16
 *    and 64 and the lag of 1,000 subscribed 2025 sessions through the
 *    balancer, beside one process, and Redis's `used_memory` per session;
 *    skipped, with a line saying so, without redis-server or haproxy.
 *
 * Every phase is bounded in count and time and the run stops by itself. It
 * exits non-zero only when the harness fails, never for a missed target.
 *
 * ```sh
 * deno task bench                          # writes bench-results.json
 * deno run -A main_bench.ts out/results.json
 * ```
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import {
  httpGet,
  missingReplicaPrograms,
  redisInfoNumber,
  type ReplicaSet,
  type Routing,
  type SpawnedLab,
  spawnLab,
  startReplicaSet,
} from "./launch.ts";
import type { LabCounts } from "./main.ts";

// ---------------------------------------------------------------------------
// Bounds and targets
// ---------------------------------------------------------------------------

const FLOW_CONCURRENCY_LEVELS = [1, 16, 64, 256];
/** Each throughput level runs this long or this many flows, whichever first. */
const FLOW_LEVEL_SECONDS = 4;
const FLOW_LEVEL_MAX_FLOWS = 20_000;
/** Sessions, and listen streams, held open at once for lag and memory. */
const LOAD_SIZE = 1000;
/**
 * How each lag phase arms its updates. The delay is long enough that every
 * subscribe (or listen) is answered before the first update fires, so the
 * updates meet a quiet lab. Subscribes go one at a time, which keeps their
 * round trip, and so the uncertainty of the scheduled time, to a few ms.
 * Listens cost the lab several ms each: one at a time would spread the 1,000
 * updates over ~10 s, so four go at once to keep the lab busy and the
 * updates as close together as the lab can schedule them.
 */
const LAG_PHASES = {
  legacy: { updateDelaySeconds: 4, armConcurrency: 1 },
  listen: { updateDelaySeconds: 8, armConcurrency: 4 },
};
/** How many sessions are set up (or torn down) at once. */
const SETUP_CONCURRENCY = 32;
/** Memory phases must not see an update fire. */
const MEMORY_UPDATE_DELAY_SECONDS = 3600;
/** Times LOAD_SIZE sessions are opened and closed in the churn phase. */
const CHURN_ROUNDS = 5;
const COLD_START_RUNS = 5;
/** No single request may take longer than this. */
const REQUEST_TIMEOUT_MS = 15_000;
/** No stream may stay open longer than this. */
const STREAM_TIMEOUT_MS = 60_000;
/** The whole run is abandoned (as a harness error) after this. */
const RUN_BUDGET_MS = 240_000;
/** Other processes using more CPU than this during a phase get a warning. */
const OTHER_LOAD_WARNING_CORES = 0.25;

const TARGETS = {
  flowsPerSecondAt64: 1000,
  lagP99Ms: 20,
  /** The lab's share above the floor's. */
  shareBytesPerIdleSession: 30 * 1024,
  shareBytesPerIdleListenStream: 20 * 1024,
  /** Later churn rounds may retain this much more than the second. */
  churnGrowthFraction: 0.02,
  coldStartMs: 300,
};

const LAB_SCRIPT = fileURLToPath(new URL("./main.ts", import.meta.url));
const BENCH_SCRIPT = fileURLToPath(import.meta.url);
/** `main_bench.ts --sse-floor` serves the floor (see `serveSseFloor`). */
const FLOOR_FLAG = "--sse-floor";
/**
 * The lab's resource, from the lab itself, loaded only by the bench: the
 * floor process must stay a bare `Deno.serve`, and with the lab's modules in
 * its heap it measured 2-3 KB less per SSE response.
 */
const REVIEW_URI = Deno.args[0] === FLOOR_FLAG
  ? ""
  : (await import("./main.ts")).REVIEW_URI;
const LAB_DIR = fileURLToPath(new URL(".", import.meta.url));
const LEGACY_PROTOCOL = "2025-11-25";
const MODERN_PROTOCOL = "2026-07-28";
const UPDATED = "notifications/resources/updated";
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

function sleep(ms: number) {
  return new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/** Runs `task` for 0..count-1 with at most `width` at once, in index order. */
async function inParallel<T>(
  count: number,
  width: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (next < count) {
        const index = next++;
        results[index] = await task(index);
      }
    }),
  );
  return results;
}

/** Nearest-rank percentile of unsorted samples. */
function percentile(samples: number[], fraction: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil(fraction * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

function median(samples: number[]): number {
  return percentile(samples, 0.5);
}

const round = (value: number, digits = 1) =>
  Math.round(value * 10 ** digits) / 10 ** digits;
const MIB = 1024 * 1024;

// ---------------------------------------------------------------------------
// CPU accounting (Linux /proc, USER_HZ = 100)
// ---------------------------------------------------------------------------

/** utime + stime from a /proc/<pid>/stat line, in seconds. */
function processCpuSeconds(stat: string): number {
  // Fields after the parenthesised command name; utime and stime are the
  // 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** CPU seconds all processes have spent in user and system mode. */
async function machineCpuSeconds(): Promise<number> {
  const total = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  const [user, nice, system] = total.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system) / 100;
}

// ---------------------------------------------------------------------------
// Raw HTTP/1.1 on loopback
// ---------------------------------------------------------------------------

/*
 * `fetch` costs the client ~0.25 ms of CPU per request: at 9 requests a
 * flow it would take more than one of the machine's two cores just to drive
 * the lab (measured: ~480 flows/s against a do-nothing stub). A hand-parsed
 * keep-alive HTTP/1.1 client leaves the lab the CPU it is being measured on.
 * It speaks only what Deno.serve answers with: a Content-Length or a chunked
 * body.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const LF = 10;
const CR = 13;

/** One TCP connection to the lab, with its read buffer. */
class HttpConnection {
  readonly #conn: Deno.TcpConn;
  #buffer = new Uint8Array(16 * 1024);
  #start = 0;
  #end = 0;
  #closed = false;

  constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  async write(bytes: Uint8Array) {
    let written = 0;
    while (written < bytes.length) {
      written += await this.#conn.write(bytes.subarray(written));
    }
  }

  /** Ends the connection; a read waiting on it fails. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed by the other side.
    }
  }

  /** Reads more bytes into the buffer, compacting or growing it first. */
  async #fill() {
    if (this.#start === this.#end) {
      this.#start = this.#end = 0;
    } else if (this.#end === this.#buffer.length) {
      if (this.#start > 0) {
        this.#buffer.copyWithin(0, this.#start, this.#end);
      } else {
        const bigger = new Uint8Array(this.#buffer.length * 2);
        bigger.set(this.#buffer);
        this.#buffer = bigger;
      }
      this.#end -= this.#start;
      this.#start = 0;
    }
    const count = await this.#conn.read(this.#buffer.subarray(this.#end));
    if (count === null) throw new Error("the lab closed the connection");
    this.#end += count;
  }

  /** One line, without its CRLF. */
  async readLine(): Promise<string> {
    while (true) {
      const lf = this.#buffer.indexOf(LF, this.#start);
      if (lf >= 0 && lf < this.#end) {
        const end = lf > this.#start && this.#buffer[lf - 1] === CR
          ? lf - 1
          : lf;
        const line = decoder.decode(this.#buffer.subarray(this.#start, end));
        this.#start = lf + 1;
        return line;
      }
      await this.#fill();
    }
  }

  /** Whatever has arrived, at most `limit` bytes (waits for at least one). */
  async readSome(limit: number): Promise<Uint8Array> {
    if (this.#start === this.#end) await this.#fill();
    const end = this.#start + Math.min(limit, this.#end - this.#start);
    const bytes = this.#buffer.slice(this.#start, end);
    this.#start = end;
    return bytes;
  }

  async readExactly(count: number): Promise<Uint8Array> {
    while (this.#end - this.#start < count) await this.#fill();
    const bytes = this.#buffer.slice(this.#start, this.#start + count);
    this.#start += count;
    return bytes;
  }
}

/** A response body, read piece by piece as it arrives. */
class HttpBody {
  readonly #connection: HttpConnection;
  readonly #chunked: boolean;
  #remaining: number;
  #done = false;
  readonly #onEnd: (reusable: boolean) => void;

  constructor(
    connection: HttpConnection,
    headers: Map<string, string>,
    onEnd: (reusable: boolean) => void,
  ) {
    this.#connection = connection;
    this.#chunked = headers.get("transfer-encoding") === "chunked";
    this.#remaining = Number(headers.get("content-length") ?? 0);
    this.#onEnd = onEnd;
  }

  /** The next piece of the body, or null once it has ended. */
  async next(): Promise<Uint8Array | null> {
    if (this.#done) return null;
    try {
      if (this.#chunked) {
        const size = parseInt(await this.#connection.readLine(), 16);
        if (size === 0) {
          while (await this.#connection.readLine() !== "");
          return this.#finish(true);
        }
        const bytes = await this.#connection.readExactly(size);
        await this.#connection.readLine();
        return bytes;
      }
      if (this.#remaining === 0) return this.#finish(true);
      const bytes = await this.#connection.readSome(this.#remaining);
      this.#remaining -= bytes.length;
      return bytes;
    } catch (error) {
      this.#finish(false);
      throw error;
    }
  }

  async text(): Promise<string> {
    let bytes: Uint8Array = new Uint8Array(0);
    for (let piece = await this.next(); piece; piece = await this.next()) {
      bytes = concat(bytes, piece);
    }
    return decoder.decode(bytes);
  }

  /** Drops the connection: the lab sees the client go away. */
  cancel() {
    this.#finish(false);
  }

  #finish(reusable: boolean): null {
    if (!this.#done) {
      this.#done = true;
      if (!reusable) this.#connection.close();
      this.#onEnd(reusable);
    }
    return null;
  }
}

interface HttpHead {
  status: number;
  headers: Map<string, string>;
  body: HttpBody;
}

interface HttpAnswer {
  status: number;
  headers: Map<string, string>;
  text: string;
}

/** Keep-alive connections to one lab, opened as concurrency needs them. */
class HttpPool {
  readonly #port: number;
  readonly #idle: HttpConnection[] = [];
  readonly #open = new Set<HttpConnection>();

  constructor(port: number) {
    this.#port = port;
  }

  /** A request whose answer is read in full. */
  request(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<HttpAnswer> {
    return this.#exchange(method, path, headers, body, async (head) => ({
      status: head.status,
      headers: head.headers,
      text: await head.body.text(),
    }));
  }

  /** A request whose answer body the caller reads as it arrives. */
  stream(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
  ): Promise<HttpHead> {
    return this.#exchange(
      method,
      path,
      headers,
      body,
      (head) => Promise.resolve(head),
    );
  }

  close() {
    for (const connection of this.#open) connection.close();
    this.#open.clear();
    this.#idle.length = 0;
  }

  /**
   * Sends one request on an idle connection (or a new one) and hands its
   * answer to `use`, all within REQUEST_TIMEOUT_MS.
   */
  async #exchange<Result>(
    method: string,
    path: string,
    headers: Record<string, string>,
    body: string | undefined,
    use: (head: HttpHead) => Promise<Result>,
  ): Promise<Result> {
    const bodyBytes = body === undefined ? undefined : encoder.encode(body);
    let head =
      `${method} ${path} HTTP/1.1\r\nhost: 127.0.0.1:${this.#port}\r\n`;
    for (const [name, value] of Object.entries(headers)) {
      head += `${name}: ${value}\r\n`;
    }
    if (bodyBytes) head += `content-length: ${bodyBytes.length}\r\n`;
    const headBytes = encoder.encode(head + "\r\n");
    const bytes = bodyBytes ? concat(headBytes, bodyBytes) : headBytes;

    for (let attempt = 0;; attempt++) {
      const reused = this.#idle.pop();
      const connection = reused ?? await this.#connect();
      // Bounded: a stuck exchange closes its connection, failing its reads.
      const timer = setTimeout(() => connection.close(), REQUEST_TIMEOUT_MS);
      let answered = false;
      try {
        await connection.write(bytes);
        const answer = await readHead(connection, (reusable) => {
          if (reusable) this.#idle.push(connection);
          else this.#open.delete(connection);
        });
        answered = true;
        return await use(answer);
      } catch (error) {
        connection.close();
        this.#open.delete(connection);
        // A kept-alive connection the lab closed meanwhile: retry once.
        if (answered || !reused || attempt > 0) throw error;
      } finally {
        clearTimeout(timer);
      }
    }
  }

  async #connect(): Promise<HttpConnection> {
    const conn = await Deno.connect({
      hostname: "127.0.0.1",
      port: this.#port,
    });
    conn.setNoDelay(true);
    const connection = new HttpConnection(conn);
    this.#open.add(connection);
    return connection;
  }
}

function concat(first: Uint8Array, second: Uint8Array): Uint8Array {
  const joined = new Uint8Array(first.length + second.length);
  joined.set(first);
  joined.set(second, first.length);
  return joined;
}

async function readHead(
  connection: HttpConnection,
  onEnd: (reusable: boolean) => void,
): Promise<HttpHead> {
  const statusLine = await connection.readLine();
  const status = Number(statusLine.split(" ")[1]);
  const headers = new Map<string, string>();
  for (
    let line = await connection.readLine();
    line;
    line = await connection.readLine()
  ) {
    const colon = line.indexOf(":");
    headers.set(
      line.slice(0, colon).trim().toLowerCase(),
      line.slice(colon + 1).trim(),
    );
  }
  const reusable = headers.get("connection")?.toLowerCase() !== "close";
  const body = new HttpBody(
    connection,
    headers,
    (ended) => onEnd(ended && reusable),
  );
  return { status, headers, body };
}

// ---------------------------------------------------------------------------
// The lab as a subprocess
// ---------------------------------------------------------------------------

/** A running lab (or floor) subprocess. */
interface LabProcess {
  /** The MCP endpoint's path, `/mcp`. */
  path: string;
  http: HttpPool;
  pid: number;
  /** Resident set size of the lab process, from /proc. */
  residentBytes(): Promise<number>;
  /** User + system CPU seconds the lab process has used so far. */
  cpuSeconds(): Promise<number>;
  counts(): Promise<LabCounts>;
  /**
   * A full, memory-reducing garbage collection in the process, through its
   * V8 inspector (only for a process started with `inspect`).
   */
  collectGarbage(): Promise<void>;
  stop(): Promise<void>;
}

/** How a measured process is started. */
interface StartOptions {
  /** Run the bare `Deno.serve` SSE floor instead of the lab. */
  floor?: boolean;
  /** Open the V8 inspector, so memory phases can collect garbage. */
  inspect?: boolean;
}

/** Labs still running, so an interrupted or failed run stops them. */
const runningLabs = new Set<LabProcess>();
/** Aborted when the run is cut short: kills labs that are still starting. */
const starting = new AbortController();

/**
 * Starts `deno run -A main.ts` (or the floor) on a free port and waits until
 * it listens.
 */
async function startLab(
  env: Record<string, string>,
  options: StartOptions = {},
): Promise<LabProcess> {
  // The lab is silent; what it says on stderr explains a failed start.
  let stderrTail = "";
  const stderr = new TextDecoder();
  let spawned: SpawnedLab;
  try {
    spawned = await spawnLab({
      mainPath: options.floor ? BENCH_SCRIPT : LAB_SCRIPT,
      args: options.floor ? [FLOOR_FLAG] : [],
      runFlags: options.inspect ? ["--inspect=127.0.0.1:0"] : [],
      cwd: LAB_DIR,
      env: {
        MCP_TEST_LOG_LEVEL: "silent",
        MCP_TEST_MAX_SESSIONS: String(LOAD_SIZE * 5),
        ...env,
      },
      onOutput(chunk, stream) {
        if (stream !== "stderr") return;
        stderrTail = (stderrTail + stderr.decode(chunk, { stream: true }))
          .slice(-2000);
      },
      signal: starting.signal,
    });
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : error}\n${stderrTail}`,
    );
  }

  const { child } = spawned;
  const http = new HttpPool(spawned.port);
  const inspector = options.inspect
    ? await openInspector(() => stderrTail).catch(async (error) => {
      await spawned.stop(3000);
      throw error;
    })
    : undefined;
  const lab: LabProcess = {
    path: new URL(spawned.url).pathname,
    http,
    pid: child.pid,
    async residentBytes() {
      const status = await Deno.readTextFile(`/proc/${child.pid}/status`);
      const kib = status.match(/^VmRSS:\s+(\d+) kB$/m);
      if (!kib) throw new Error("no VmRSS line in /proc status");
      return Number(kib[1]) * 1024;
    },
    async cpuSeconds() {
      return processCpuSeconds(
        await Deno.readTextFile(`/proc/${child.pid}/stat`),
      );
    },
    async counts() {
      const answer = await http.request("GET", "/healthz");
      const health = JSON.parse(answer.text) as LabCounts;
      return {
        legacySessions: health.legacySessions,
        listenStreams: health.listenStreams,
        pendingUpdates: health.pendingUpdates,
        waitingCalls: health.waitingCalls,
      };
    },
    async collectGarbage() {
      if (!inspector) throw new Error("started without the inspector");
      await inspector.call("HeapProfiler.collectGarbage");
    },
    async stop() {
      if (!runningLabs.delete(lab)) return;
      http.close();
      inspector?.close();
      // The lab closes everything on SIGTERM and exits within 2 s.
      await spawned.stop(3000);
    },
  };
  runningLabs.add(lab);
  return lab;
}

/** One Chrome DevTools Protocol connection to a process's V8 inspector. */
interface Inspector {
  /** Sends `method` and resolves with its answer (or fails with its error). */
  call(method: string): Promise<void>;
  close(): void;
}

/**
 * Connects to the inspector whose address Deno printed on stderr
 * (`Debugger listening on ws://…`), waiting up to 5 s for that line.
 */
async function openInspector(stderr: () => string): Promise<Inspector> {
  const deadline = performance.now() + 5000;
  let address: string | undefined;
  while (
    !(address = stderr().match(/ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/)?.[0])
  ) {
    if (performance.now() > deadline) {
      throw new Error(`no inspector address on stderr:\n${stderr()}`);
    }
    await sleep(20);
  }
  const socket = new WebSocket(address);
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error(`cannot reach ${address}`));
  });
  const answers = new Map<number, PromiseWithResolvers<void>>();
  let nextId = 1;
  socket.onmessage = (event) => {
    const answer = JSON.parse(String(event.data)) as {
      id?: number;
      error?: { message: string };
    };
    const waiter = answer.id === undefined ? undefined : answers.get(answer.id);
    if (!waiter) return;
    answers.delete(answer.id!);
    if (answer.error) waiter.reject(new Error(answer.error.message));
    else waiter.resolve();
  };
  return {
    call(method) {
      const id = nextId++;
      const waiter = Promise.withResolvers<void>();
      answers.set(id, waiter);
      socket.send(JSON.stringify({ id, method }));
      return waiter.promise;
    },
    close: () => socket.close(),
  };
}

async function stopAllLabs() {
  starting.abort();
  await Promise.all([...runningLabs].map((lab) => lab.stop()));
}

// ---------------------------------------------------------------------------
// Watching the lab: the cores it uses, and its counts
// ---------------------------------------------------------------------------

/** Cores used by the lab, by this harness and by everything else. */
interface CpuShare {
  labCores: number;
  harnessCores: number;
  /** Other processes on the machine: a busy neighbour skews every number. */
  otherCores: number;
}

async function watchCpu(lab: LabProcess): Promise<() => Promise<CpuShare>> {
  const read = async () => ({
    at: performance.now(),
    lab: await lab.cpuSeconds(),
    harness: processCpuSeconds(await Deno.readTextFile("/proc/self/stat")),
    machine: await machineCpuSeconds(),
  });
  const before = await read();
  return async () => {
    const after = await read();
    const seconds = (after.at - before.at) / 1000;
    const lab = after.lab - before.lab;
    const harness = after.harness - before.harness;
    const other = after.machine - before.machine - lab - harness;
    return {
      labCores: round(lab / seconds, 2),
      harnessCores: round(harness / seconds, 2),
      otherCores: round(Math.max(0, other) / seconds, 2),
    };
  };
}

/** Polls `/healthz` until `done` holds, or fails after `timeoutMs`. */
async function waitForCounts(
  lab: LabProcess,
  done: (counts: LabCounts) => boolean,
  timeoutMs: number,
): Promise<LabCounts> {
  const deadline = performance.now() + timeoutMs;
  let counts = await lab.counts();
  while (!done(counts)) {
    if (performance.now() > deadline) {
      throw new Error(`lab counts stuck at ${JSON.stringify(counts)}`);
    }
    await sleep(50);
    counts = await lab.counts();
  }
  return counts;
}

// ---------------------------------------------------------------------------
// JSON-RPC over SSE
// ---------------------------------------------------------------------------

interface JsonRpcMessage {
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

function asMessage(value: unknown): JsonRpcMessage {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`not a JSON-RPC message: ${JSON.stringify(value)}`);
  }
  return value as JsonRpcMessage;
}

/** The `data:` payloads of one or more SSE events. */
function sseMessages(text: string): JsonRpcMessage[] {
  const messages: JsonRpcMessage[] = [];
  for (const event of text.split("\n\n")) {
    const data = event.split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (data) messages.push(asMessage(JSON.parse(data)));
  }
  return messages;
}

const JSON_RPC_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

interface PostAnswer {
  status: number;
  headers: Map<string, string>;
  /** The JSON-RPC answer, from a JSON body or the SSE body's frames. */
  message?: JsonRpcMessage;
}

async function postJsonRpc(
  lab: LabProcess,
  message: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<PostAnswer> {
  const answer = await lab.http.request(
    "POST",
    lab.path,
    { ...JSON_RPC_HEADERS, ...headers },
    JSON.stringify(message),
  );
  const { status, text } = answer;
  if (!text) return { status, headers: answer.headers };
  const isSse = answer.headers.get("content-type")?.startsWith(
    "text/event-stream",
  );
  return {
    status,
    headers: answer.headers,
    message: isSse
      ? sseMessages(text).find((frame) => frame.id !== undefined)
      : asMessage(JSON.parse(text)),
  };
}

interface SseFrame {
  message: JsonRpcMessage;
  /** `performance.now()` when the bytes carrying the frame arrived. */
  receivedAt: number;
}

/**
 * Reads an SSE response body as it arrives, stamping each frame with its
 * arrival time, and hands frames to whoever waits for a method.
 */
class SseStream {
  readonly #body: HttpBody;
  readonly #frames: SseFrame[] = [];
  #waiter?: {
    method: string;
    resolve: (frame: SseFrame) => void;
    reject: (error: Error) => void;
  };
  #ended = false;
  /** Settles when the body ends, fails or is cancelled. */
  readonly ended: Promise<void>;

  constructor(body: HttpBody) {
    this.#body = body;
    // No stream outlives the run's bounds, even if nobody closes it.
    const lifetime = setTimeout(() => this.close(), STREAM_TIMEOUT_MS);
    this.ended = this.#pump().finally(() => clearTimeout(lifetime));
  }

  async #pump() {
    const streamDecoder = new TextDecoder();
    let buffer = "";
    try {
      for (
        let piece = await this.#body.next();
        piece;
        piece = await this.#body.next()
      ) {
        // Stamped before decoding, so parsing is not counted as lag.
        const receivedAt = performance.now();
        buffer += streamDecoder.decode(piece, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          for (const message of sseMessages(buffer.slice(0, end))) {
            this.#deliver({ message, receivedAt });
          }
          buffer = buffer.slice(end + 2);
        }
      }
    } catch {
      // A closed or reset stream simply ends; waiters learn below.
    } finally {
      this.#ended = true;
      this.#waiter?.reject(new Error("the stream ended"));
      this.#waiter = undefined;
    }
  }

  #deliver(frame: SseFrame) {
    if (this.#waiter && frame.message.method === this.#waiter.method) {
      this.#waiter.resolve(frame);
      this.#waiter = undefined;
    } else {
      this.#frames.push(frame);
    }
  }

  /** The next frame carrying `method` (earlier frames of it included). */
  next(method: string, timeoutMs: number): Promise<SseFrame> {
    const index = this.#frames.findIndex((frame) =>
      frame.message.method === method
    );
    if (index >= 0) return Promise.resolve(this.#frames.splice(index, 1)[0]);
    if (this.#ended) return Promise.reject(new Error("the stream ended"));
    return new Promise<SseFrame>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = undefined;
        reject(new Error(`no ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#waiter = {
        method,
        resolve: (frame) => {
          clearTimeout(timer);
          resolve(frame);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
    });
  }

  /**
   * Waits up to `graceMs` for the lab to end the stream (its connection
   * then goes back to the pool), then drops the connection.
   */
  async close(graceMs = 0) {
    if (graceMs > 0) await Promise.race([this.ended, sleep(graceMs)]);
    if (!this.#ended) this.#body.cancel();
    await this.ended;
  }
}

/** Opens an SSE response; fails unless the answer is 200 `text/event-stream`. */
async function openSse(
  lab: LabProcess,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<SseStream> {
  const head = await lab.http.stream(method, lab.path, headers, body);
  const type = head.headers.get("content-type") ?? "";
  if (head.status !== 200 || !type.startsWith("text/event-stream")) {
    const text = await head.body.text();
    throw new Error(`stream refused: ${head.status} ${text.slice(0, 200)}`);
  }
  return new SseStream(head.body);
}

// ---------------------------------------------------------------------------
// Protocol clients: a raw 2025 session, a raw 2026-07-28 listen stream
// ---------------------------------------------------------------------------

/** A 2025-era session driven with raw requests. */
class LegacySession {
  readonly #lab: LabProcess;
  readonly #headers: Record<string, string>;
  #nextId = 2;

  private constructor(lab: LabProcess, sessionId: string) {
    this.#lab = lab;
    this.#headers = {
      "mcp-session-id": sessionId,
      "mcp-protocol-version": LEGACY_PROTOCOL,
    };
  }

  /** initialize + notifications/initialized. */
  static async open(
    lab: LabProcess,
    clientName: string,
  ): Promise<LegacySession> {
    const initialize = await postJsonRpc(lab, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LEGACY_PROTOCOL,
        capabilities: {},
        clientInfo: { name: clientName, version: "1.0.0" },
      },
    }, {});
    const sessionId = initialize.headers.get("mcp-session-id");
    if (
      initialize.status !== 200 || !initialize.message?.result || !sessionId
    ) {
      throw new Error(
        `initialize failed: ${initialize.status} ${
          JSON.stringify(initialize.message)
        }`,
      );
    }
    const session = new LegacySession(lab, sessionId);
    const initialized = await postJsonRpc(lab, {
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }, session.#headers);
    if (initialized.status !== 202) {
      throw new Error(`initialized answered ${initialized.status}`);
    }
    return session;
  }

  async request(
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const answer = await postJsonRpc(this.#lab, {
      jsonrpc: "2.0",
      id: this.#nextId++,
      method,
      params,
    }, this.#headers);
    if (answer.status !== 200 || !answer.message?.result) {
      throw new Error(
        `${method} failed: ${answer.status} ${JSON.stringify(answer.message)}`,
      );
    }
    return answer.message.result;
  }

  /** A request whose answer is held open: its SSE response, as it comes. */
  streamRequest(
    request: { method: string; params: Record<string, unknown> },
  ): Promise<SseStream> {
    return openSse(
      this.#lab,
      "POST",
      { ...JSON_RPC_HEADERS, ...this.#headers },
      JSON.stringify({ jsonrpc: "2.0", id: this.#nextId++, ...request }),
    );
  }

  /** The GET stream, where the session's notifications arrive. */
  openGetStream(): Promise<SseStream> {
    return openSse(this.#lab, "GET", {
      accept: "text/event-stream",
      ...this.#headers,
    });
  }

  /** DELETE: ends the session, and with it the session's GET stream. */
  async delete() {
    const answer = await this.#lab.http.request(
      "DELETE",
      this.#lab.path,
      this.#headers,
    );
    if (answer.status !== 200) {
      throw new Error(`DELETE answered ${answer.status}`);
    }
  }
}

/** Fails unless a resources/read result is the review resource at `version`. */
function expectVersion(result: Record<string, unknown>, version: number) {
  const text = JSON.stringify(result.contents ?? null);
  if (!text.includes(`version: ${version}`)) {
    throw new Error(`expected version ${version}, read ${text.slice(0, 200)}`);
  }
}

interface ListenStream {
  stream: SseStream;
  /** When the listen request was sent. */
  sentAt: number;
  /** When its acknowledgement frame arrived. */
  acknowledgedAt: number;
}

/** A 2026-07-28 `subscriptions/listen` request for the review resource. */
function listenRequest(clientName: string, id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "subscriptions/listen",
    params: {
      notifications: { resourceSubscriptions: [REVIEW_URI] },
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {
          name: clientName,
          version: "1.0.0",
        },
        "io.modelcontextprotocol/clientCapabilities": {},
      },
    },
  };
}

/**
 * Opens a 2026-07-28 `subscriptions/listen` on the review resource. Each
 * `clientName` is its own lab client with its own update timer.
 */
async function openListenStream(
  lab: LabProcess,
  clientName: string,
  id: number,
): Promise<ListenStream> {
  const sentAt = performance.now();
  const stream = await openSse(
    lab,
    "POST",
    {
      ...JSON_RPC_HEADERS,
      "mcp-protocol-version": MODERN_PROTOCOL,
      "mcp-method": "subscriptions/listen",
    },
    JSON.stringify(listenRequest(clientName, id)),
  );
  const ack = await stream.next(ACKNOWLEDGED, REQUEST_TIMEOUT_MS).catch(
    async (error) => {
      await stream.close();
      throw error;
    },
  );
  return { stream, sentAt, acknowledgedAt: ack.receivedAt };
}

// ---------------------------------------------------------------------------
// 1. Full-flow throughput, 2025 era
// ---------------------------------------------------------------------------

/**
 * One complete 2025 client run: initialize, initialized, GET stream, list,
 * read v1, subscribe, the update on the GET stream, read v2, DELETE.
 */
async function runLegacyFlow(lab: LabProcess) {
  const session = await LegacySession.open(lab, "bench-flow");
  const stream = await session.openGetStream();
  try {
    await session.request("resources/list");
    expectVersion(
      await session.request("resources/read", { uri: REVIEW_URI }),
      1,
    );
    // Waiting starts before the subscribe: at zero delay the update can
    // arrive before the subscribe's answer.
    const updated = stream.next(UPDATED, REQUEST_TIMEOUT_MS);
    await session.request("resources/subscribe", { uri: REVIEW_URI });
    await updated;
    expectVersion(
      await session.request("resources/read", { uri: REVIEW_URI }),
      2,
    );
    await session.delete();
  } finally {
    // DELETE ends the GET stream on the lab's side, which hands its
    // connection back to the pool.
    await stream.close(1000);
  }
}

interface ThroughputResult extends CpuShare {
  concurrency: number;
  flows: number;
  failed: number;
  firstError?: string;
  seconds: number;
  flowsPerSecond: number;
  flowLatencyP50Ms: number;
  flowLatencyP99Ms: number;
}

async function measureThroughput(
  lab: LabProcess,
  concurrency: number,
): Promise<ThroughputResult> {
  const latencies: number[] = [];
  let started = 0;
  let failed = 0;
  let firstError: string | undefined;
  const cpu = await watchCpu(lab);
  const start = performance.now();
  const deadline = start + FLOW_LEVEL_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline && started < FLOW_LEVEL_MAX_FLOWS) {
        started++;
        const flowStart = performance.now();
        try {
          await runLegacyFlow(lab);
          latencies.push(performance.now() - flowStart);
        } catch (error) {
          failed++;
          firstError ??= String(error);
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const share = await cpu();
  // Every flow ended with DELETE: nothing may be left behind.
  await waitForCounts(lab, (counts) => counts.legacySessions === 0, 5000);
  return {
    concurrency,
    flows: latencies.length,
    failed,
    firstError,
    seconds: round(seconds, 2),
    flowsPerSecond: round(latencies.length / seconds),
    flowLatencyP50Ms: round(percentile(latencies, 0.5), 2),
    flowLatencyP99Ms: round(percentile(latencies, 0.99), 2),
    ...share,
  };
}

// ---------------------------------------------------------------------------
// 2. Notification lag
// ---------------------------------------------------------------------------

/**
 * The lab logs nothing at `silent`, so each update's scheduled time is
 * derived. The lab starts the timer while it handles the subscribe (or,
 * for a listen, right before it writes the acknowledgement frame), which
 * lies between the request being sent and its answer arriving. Lag from
 * "answer arrived + delay" (the headline, and what targets are judged on)
 * is therefore slightly too low, by the answer's trip back; lag from
 * "request sent + delay" is an upper bound that also counts the request's
 * trip in and any queueing. Both are kept; `armRoundTripP99Ms` says how far
 * apart they can be.
 */
interface LagResult extends CpuShare {
  subject: string;
  updateDelaySeconds: number;
  armConcurrency: number;
  expected: number;
  received: number;
  lost: number;
  /** Frame arrival minus (answer arrived + delay). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Upper bound: frame arrival minus (request sent + delay). */
  upperBoundP50Ms: number;
  upperBoundP99Ms: number;
  upperBoundMaxMs: number;
  /** p99 of (answer arrived − request sent). */
  armRoundTripP99Ms: number;
  /** First to last scheduled update: how close together they fired. */
  fireWindowMs: number;
  /** True if arming took longer than the delay (updates met arming load). */
  armingOverlappedUpdates: boolean;
  /**
   * Longest the harness's own event loop was blocked while the updates
   * arrived: a frame can be stamped late by up to this much on our side.
   */
  harnessStallMaxMs: number;
}

interface ArmedUpdate {
  sentAt: number;
  answeredAt: number;
  /** Arrival time of the update frame, or undefined if it never came. */
  received: Promise<number | undefined>;
}

/** How long after its delay an update may come before it counts as lost. */
const LOST_AFTER_MS = 10_000;

/**
 * The harness's own garbage collector, reached without a command-line flag
 * (a context created after `--expose-gc` is set sees `gc`). Collecting just
 * before updates are due keeps a client-side GC pause, which would stamp
 * frames late, out of the measured window.
 */
const collectHarnessGarbage: () => void = (() => {
  setFlagsFromString("--expose-gc");
  const gc: unknown = runInNewContext("gc");
  return typeof gc === "function" ? () => gc() : () => {};
})();

/**
 * Watches the harness's own event loop with a 1 ms ticker and keeps the
 * longest gap, so client-side stalls are not mistaken for lab lag.
 */
function watchEventLoop(): () => number {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return () => {
    clearInterval(ticker);
    return longest;
  };
}

async function collectLag(
  lab: LabProcess,
  subject: string,
  phase: { updateDelaySeconds: number; armConcurrency: number },
  armed: ArmedUpdate[],
): Promise<LagResult> {
  const delayMs = phase.updateDelaySeconds * 1000;
  const sent = armed.map((update) => update.sentAt);
  const answered = armed.map((update) => update.answeredAt);
  // Collect our garbage, then watch our loop and the CPU, just before the
  // first update is due.
  const firstDue = Math.min(...answered) + delayMs;
  await sleep(Math.max(0, firstDue - performance.now() - 500));
  collectHarnessGarbage();
  await sleep(Math.max(0, firstDue - performance.now() - 200));
  const cpu = await watchCpu(lab);
  const stopWatching = watchEventLoop();
  const arrivals = await Promise.all(armed.map((update) => update.received));
  const harnessStallMaxMs = stopWatching();
  const share = await cpu();

  const lags: number[] = [];
  const upper: number[] = [];
  armed.forEach((update, index) => {
    const arrivedAt = arrivals[index];
    if (arrivedAt === undefined) return;
    lags.push(arrivedAt - (update.answeredAt + delayMs));
    upper.push(arrivedAt - (update.sentAt + delayMs));
  });
  return {
    subject,
    ...phase,
    expected: armed.length,
    received: lags.length,
    lost: armed.length - lags.length,
    p50Ms: round(percentile(lags, 0.5), 2),
    p99Ms: round(percentile(lags, 0.99), 2),
    maxMs: round(Math.max(...lags), 2),
    upperBoundP50Ms: round(percentile(upper, 0.5), 2),
    upperBoundP99Ms: round(percentile(upper, 0.99), 2),
    upperBoundMaxMs: round(Math.max(...upper), 2),
    armRoundTripP99Ms: round(
      percentile(answered.map((at, index) => at - sent[index]), 0.99),
      2,
    ),
    fireWindowMs: round(Math.max(...answered) - Math.min(...answered)),
    armingOverlappedUpdates: Math.max(...answered) >
      Math.min(...sent) + delayMs,
    harnessStallMaxMs: round(harnessStallMaxMs, 1),
    ...share,
  };
}

/** What a lag phase may read around its sessions (the replica set's Redis). */
interface LagHooks {
  /** Once warmed up, before the measured sessions open. */
  beforeSessions?(): Promise<void>;
  /** Once every update came (or was lost), before the sessions end. */
  afterUpdates?(): Promise<void>;
  /** Once every session has ended. */
  afterSessions?(): Promise<void>;
}

/**
 * 1,000 2025 sessions, each with its GET stream open, subscribe; updates
 * fire. `lab` was started with `LAG_PHASES.legacy`'s delay; it is stopped.
 */
async function measureLegacyLag(
  lab: LabProcess,
  subject = `${LOAD_SIZE} subscribed 2025 sessions`,
  hooks: LagHooks = {},
): Promise<LagResult> {
  const phase = LAG_PHASES.legacy;
  const sessions: { session: LegacySession; stream: SseStream }[] = [];
  try {
    // The GET stream is open before the subscribe: the lab can only
    // deliver the update there.
    const openSession = async (index: number) => {
      const session = await LegacySession.open(lab, `bench-lag-${index}`);
      const stream = await session.openGetStream();
      sessions.push({ session, stream });
      return { session, stream };
    };
    // Warm-up: compile the lab's code paths before anything is timed.
    await inParallel(20, 4, openSession);
    await endSessions(sessions);
    await hooks.beforeSessions?.();
    const open = await inParallel(LOAD_SIZE, SETUP_CONCURRENCY, openSession);
    const counts = await waitForCounts(
      lab,
      (counts) => counts.legacySessions === LOAD_SIZE,
      5000,
    );
    if (counts.pendingUpdates !== 0) {
      throw new Error(
        `updates pending before any subscribe: ${JSON.stringify(counts)}`,
      );
    }
    const waitMs = phase.updateDelaySeconds * 1000 + LOST_AFTER_MS;
    const armed = await inParallel(
      LOAD_SIZE,
      phase.armConcurrency,
      async (index): Promise<ArmedUpdate> => {
        const { session, stream } = open[index];
        const received = stream.next(UPDATED, waitMs).then(
          (frame) => frame.receivedAt,
          () => undefined,
        );
        const sentAt = performance.now();
        await session.request("resources/subscribe", { uri: REVIEW_URI });
        return { sentAt, answeredAt: performance.now(), received };
      },
    );
    const result = await collectLag(lab, subject, phase, armed);
    await hooks.afterUpdates?.();
    if (hooks.afterSessions) {
      await endSessions(sessions);
      await waitForCounts(lab, (counts) => counts.legacySessions === 0, 5000);
      await hooks.afterSessions();
    }
    return result;
  } finally {
    await endSessions(sessions);
    await lab.stop();
  }
}

/** DELETE each session and let its GET stream end; the list is emptied. */
async function endSessions(
  sessions: { session: LegacySession; stream: SseStream }[],
) {
  const ending = sessions.splice(0);
  await inParallel(ending.length, SETUP_CONCURRENCY, async (index) => {
    const { session, stream } = ending[index];
    await session.delete().catch(() => {});
    await stream.close(1000);
  });
}

/** 1,000 listen streams, one client name each, whose updates fire together. */
async function measureListenLag(): Promise<LagResult> {
  const phase = LAG_PHASES.listen;
  const lab = await startLab({
    MCP_TEST_UPDATE_DELAY_SECONDS: String(phase.updateDelaySeconds),
  });
  const listens: ListenStream[] = [];
  try {
    // Warm-up: compile the lab's code paths before anything is timed.
    const warm = await inParallel(
      20,
      4,
      (index) => openListenStream(lab, `bench-warm-${index}`, index + 1),
    );
    await Promise.all(warm.map((listen) => listen.stream.close()));
    await waitForCounts(lab, (counts) => counts.listenStreams === 0, 5000);

    const waitMs = phase.updateDelaySeconds * 1000 + LOST_AFTER_MS;
    const armed = await inParallel(
      LOAD_SIZE,
      phase.armConcurrency,
      async (index): Promise<ArmedUpdate> => {
        // Its own client name: in 2026-07-28 each clientInfo has its own
        // resource version and update timer.
        const listen = await openListenStream(
          lab,
          `bench-listen-${index}`,
          index + 1,
        );
        listens.push(listen);
        return {
          sentAt: listen.sentAt,
          answeredAt: listen.acknowledgedAt,
          received: listen.stream.next(UPDATED, waitMs).then(
            (frame) => frame.receivedAt,
            () => undefined,
          ),
        };
      },
    );
    const counts = await lab.counts();
    if (counts.listenStreams !== LOAD_SIZE) {
      throw new Error(
        `expected ${LOAD_SIZE} listen streams, lab has ${counts.listenStreams}`,
      );
    }
    return await collectLag(
      lab,
      `${LOAD_SIZE} 2026-07-28 listen streams`,
      phase,
      armed,
    );
  } finally {
    await Promise.all(listens.map((listen) => listen.stream.close()));
    await lab.stop();
  }
}

// ---------------------------------------------------------------------------
// 3. Memory: held-open items in the lab and on the floor; churn
// ---------------------------------------------------------------------------

/*
 * Every reading follows a full garbage collection that also shrinks V8's
 * young generation (HeapProfiler.collectGarbage, through the inspector), in
 * the lab and on the floor alike. Without it a reading says how far V8 grew
 * its nursery while 1,000 items were being opened, tens of MB either way.
 * Left alone, V8 collects and shrinks by itself after 10-30 s of quiet: the
 * readings are that idle state, reached within the bench's time.
 */

interface MemoryResult {
  baselineBytes: number;
  /** With the items open, before the garbage collection. */
  loadedBeforeCollectionBytes: number;
  loadedBytes: number;
  afterCloseBytes: number;
  bytesPerItem: number;
}

/** One kind of held-open item, in the lab and on the floor. */
interface MemoryComparison {
  subject: string;
  lab: MemoryResult;
  /** The same number of bare `Deno.serve` SSE responses held open. */
  floor: MemoryResult;
  /** The lab's bytes per item above the floor's. */
  shareBytes: number;
}

/** Resident memory after a full, memory-reducing garbage collection. */
async function retainedBytes(server: LabProcess): Promise<number> {
  await server.collectGarbage();
  return await server.residentBytes();
}

/**
 * Measures one kind of held-open item in a fresh process: retained memory
 * after a warm-up (the baseline), with LOAD_SIZE items open, and after
 * closing them all.
 */
async function measureHeld<Item>(
  server: LabProcess,
  openItem: (index: number) => Promise<Item>,
  closeItem: (item: Item) => Promise<void>,
  isOpen: (counts: LabCounts) => number,
): Promise<MemoryResult> {
  // Warm-up: lazily compiled code and first-use allocations are not load.
  for (let round = 0; round < 3; round++) {
    const warm = await inParallel(20, 4, (index) => openItem(index));
    await Promise.all(warm.map(closeItem));
  }
  await waitForCounts(server, (counts) => isOpen(counts) === 0, 5000);
  const baselineBytes = await retainedBytes(server);
  const items = await inParallel(
    LOAD_SIZE,
    SETUP_CONCURRENCY,
    (index) => openItem(1000 + index),
  );
  await waitForCounts(server, (counts) => isOpen(counts) === LOAD_SIZE, 5000);
  const loadedBeforeCollectionBytes = await server.residentBytes();
  const loadedBytes = await retainedBytes(server);
  await inParallel(
    LOAD_SIZE,
    SETUP_CONCURRENCY,
    (index) => closeItem(items[index]),
  );
  await waitForCounts(server, (counts) => isOpen(counts) === 0, 5000);
  const afterCloseBytes = await retainedBytes(server);
  return {
    baselineBytes,
    loadedBeforeCollectionBytes,
    loadedBytes,
    afterCloseBytes,
    bytesPerItem: Math.round((loadedBytes - baselineBytes) / LOAD_SIZE),
  };
}

/** A kind of item the lab holds open, and the floor's stand-in for it. */
interface HeldKind<Item> {
  subject: string;
  labEnv: Record<string, string>;
  openInLab(lab: LabProcess, index: number): Promise<Item>;
  closeInLab(item: Item): Promise<void>;
  /** The request the floor gets instead (its answer is held open). */
  floorRequest(
    index: number,
  ): { method: string; headers: Record<string, string>; body?: string };
  isOpen(counts: LabCounts): number;
}

/** Measures `kind` in the lab and on the floor at once, each in its own process. */
async function compareWithFloor<Item>(
  kind: HeldKind<Item>,
): Promise<MemoryComparison> {
  const [lab, floor] = await Promise.all([
    startLab({
      MCP_TEST_UPDATE_DELAY_SECONDS: String(MEMORY_UPDATE_DELAY_SECONDS),
      ...kind.labEnv,
    }, { inspect: true }),
    startLab({}, { floor: true, inspect: true }),
  ]);
  try {
    const [labResult, floorResult] = await Promise.all([
      measureHeld(
        lab,
        (index) => kind.openInLab(lab, index),
        kind.closeInLab,
        kind.isOpen,
      ),
      measureHeld(
        floor,
        (index) => {
          const { method, headers, body } = kind.floorRequest(index);
          return openSse(floor, method, headers, body);
        },
        (stream) => stream.close(),
        kind.isOpen,
      ),
    ]);
    return {
      subject: kind.subject,
      lab: labResult,
      floor: floorResult,
      shareBytes: labResult.bytesPerItem - floorResult.bytesPerItem,
    };
  } finally {
    await Promise.all([lab.stop(), floor.stop()]);
  }
}

/** An idle, subscribed 2025 session with its GET stream open. */
async function openIdleSession(lab: LabProcess, index: number) {
  const session = await LegacySession.open(lab, `bench-idle-${index}`);
  await session.request("resources/subscribe", { uri: REVIEW_URI });
  return { session, stream: await session.openGetStream() };
}

async function closeIdleSession(
  { session, stream }: Awaited<ReturnType<typeof openIdleSession>>,
) {
  await session.delete();
  await stream.close(1000);
}

const IDLE_SESSIONS: HeldKind<Awaited<ReturnType<typeof openIdleSession>>> = {
  subject: "idle 2025 session (subscribed, GET stream open)",
  labEnv: {},
  openInLab: openIdleSession,
  closeInLab: closeIdleSession,
  floorRequest: () => ({
    method: "GET",
    headers: { accept: "text/event-stream" },
  }),
  isOpen: (counts) => counts.legacySessions,
};

const IDLE_LISTENS: HeldKind<ListenStream> = {
  subject: "idle 2026-07-28 listen stream",
  labEnv: {},
  openInLab: (lab, index) =>
    openListenStream(lab, `bench-idle-${index}`, index + 1),
  closeInLab: (listen) => listen.stream.close(),
  floorRequest: (index) => ({
    method: "POST",
    headers: JSON_RPC_HEADERS,
    body: JSON.stringify(listenRequest(`bench-idle-${index}`, index + 1)),
  }),
  isOpen: (counts) => counts.listenStreams,
};

/** A 2025 session (no GET stream) whose wait-tool call is in progress. */
async function openWaitingCall(lab: LabProcess, index: number) {
  const session = await LegacySession.open(lab, `bench-wait-${index}`);
  return { session, stream: await session.streamRequest(WAIT_CALL) };
}

const WAIT_CALL = {
  method: "tools/call",
  params: {
    name: "wait_for_review_update",
    arguments: { since_version: 1, timeout_seconds: 600 },
  },
};

const WAITING_CALLS: HeldKind<Awaited<ReturnType<typeof openWaitingCall>>> = {
  subject: "wait-tool call in progress (2025 session)",
  labEnv: { MCP_TEST_ENABLE_WAIT_TOOL: "true" },
  openInLab: openWaitingCall,
  async closeInLab({ session, stream }) {
    // The client leaving ends the call; then the session goes.
    await stream.close();
    await session.delete();
  },
  floorRequest: (index) => ({
    method: "POST",
    headers: JSON_RPC_HEADERS,
    body: JSON.stringify({ jsonrpc: "2.0", id: index + 2, ...WAIT_CALL }),
  }),
  isOpen: (counts) => counts.waitingCalls,
};

interface ChurnResult {
  sessionsPerRound: number;
  baselineBytes: number;
  /** Retained memory after each round's sessions were all closed. */
  afterRoundBytes: number[];
  /** The most any later round retained above the second round. */
  growthFromSecondRoundBytes: number;
}

/**
 * Opens LOAD_SIZE idle sessions and closes them all, CHURN_ROUNDS times over
 * in one lab, reading retained memory after each round.
 */
async function measureChurn(): Promise<ChurnResult> {
  const lab = await startLab({
    MCP_TEST_UPDATE_DELAY_SECONDS: String(MEMORY_UPDATE_DELAY_SECONDS),
  }, { inspect: true });
  try {
    const warm = await inParallel(
      20,
      4,
      (index) => openIdleSession(lab, index),
    );
    await Promise.all(warm.map(closeIdleSession));
    await waitForCounts(lab, (counts) => counts.legacySessions === 0, 5000);
    const baselineBytes = await retainedBytes(lab);
    const afterRoundBytes: number[] = [];
    for (let round = 0; round < CHURN_ROUNDS; round++) {
      const sessions = await inParallel(
        LOAD_SIZE,
        SETUP_CONCURRENCY,
        (index) => openIdleSession(lab, (round + 1) * LOAD_SIZE + index),
      );
      await inParallel(
        LOAD_SIZE,
        SETUP_CONCURRENCY,
        (index) => closeIdleSession(sessions[index]),
      );
      await waitForCounts(lab, (counts) => counts.legacySessions === 0, 5000);
      afterRoundBytes.push(await retainedBytes(lab));
    }
    return {
      sessionsPerRound: LOAD_SIZE,
      baselineBytes,
      afterRoundBytes,
      growthFromSecondRoundBytes: Math.max(...afterRoundBytes.slice(2)) -
        afterRoundBytes[1],
    };
  } finally {
    await lab.stop();
  }
}

// ---------------------------------------------------------------------------
// The floor: bare Deno.serve holding SSE responses (`main_bench.ts --sse-floor`)
// ---------------------------------------------------------------------------

const FLOOR_OPENING = encoder.encode(": open\n\n");

/**
 * Answers every request but `/healthz` with a `text/event-stream` response
 * that sends one comment and stays open until the client leaves: the least
 * a Deno.serve lab can hold per stream. `/healthz` reports how many are open
 * in each of the lab's count fields, so the same phases can measure it.
 */
async function serveSseFloor() {
  let open = 0;
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: Number(Deno.env.get("MCP_TEST_PORT") ?? "0"),
    onListen: ({ port }) =>
      console.log(`listening on http://127.0.0.1:${port}/mcp`),
  }, async (request) => {
    if (new URL(request.url).pathname === "/healthz") {
      const counts: LabCounts = {
        legacySessions: open,
        listenStreams: open,
        pendingUpdates: 0,
        waitingCalls: open,
      };
      return Response.json(counts);
    }
    // A request's body is read, as the lab reads it.
    await request.arrayBuffer();
    open++;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(FLOOR_OPENING),
      cancel: () => void open--,
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
      },
    });
  });
  Deno.addSignalListener("SIGTERM", () => server.shutdown());
  await server.finished;
}

// ---------------------------------------------------------------------------
// 4. Cold start
// ---------------------------------------------------------------------------

/** Spawn to the first initialize answered 200, in ms; the lab is stopped. */
async function coldStartOnce(): Promise<number> {
  const spawnedAt = performance.now();
  const lab = await startLab({});
  try {
    const deadline = spawnedAt + REQUEST_TIMEOUT_MS;
    while (true) {
      try {
        await LegacySession.open(lab, "bench-cold-start");
        return performance.now() - spawnedAt;
      } catch (error) {
        if (performance.now() > deadline) throw error;
        await sleep(5);
      }
    }
  } finally {
    await lab.stop();
  }
}

// ---------------------------------------------------------------------------
// 5. The replica set: two labs on Redis behind HAProxy, sticky
// ---------------------------------------------------------------------------

const REPLICA_COUNT = 2;
/** Full-flow levels through the balancer, each beside the one-process one. */
const REPLICA_FLOW_CONCURRENCY_LEVELS = [16, 64];

/** Redis's `used_memory` around the replica lag phase's sessions. */
interface RedisMemoryResult {
  sessions: number;
  beforeBytes: number;
  subscribedBytes: number;
  afterEndBytes: number;
  /** (subscribed − before) / sessions: state kept per live client. */
  bytesPerSubscribedSession: number;
  /** (after end − before) / sessions: what an ended client leaves. */
  keptBytesPerEndedSession: number;
}

interface ReplicaSetResult {
  replicas: number;
  routing: Routing;
  throughput: ThroughputResult[];
  lag: LagResult;
  redisMemory: RedisMemoryResult;
}

/** Resident set size of a process, from /proc. */
async function residentBytesOf(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kib = status.match(/^VmRSS:\s+(\d+) kB$/m);
  if (!kib) throw new Error("no VmRSS line in /proc status");
  return Number(kib[1]) * 1024;
}

/**
 * The replica set as one measured server: requests go to its balancer; its
 * CPU and memory are those of Redis, the labs and HAProxy together; its
 * counts are the labs' summed.
 */
async function startReplicaSetLab(
  env: Record<string, string>,
): Promise<{ lab: LabProcess; set: ReplicaSet }> {
  const set = await startReplicaSet({
    replicas: REPLICA_COUNT,
    routing: "sticky",
    labEnv: {
      MCP_TEST_LOG_LEVEL: "silent",
      MCP_TEST_MAX_SESSIONS: String(LOAD_SIZE * 5),
      ...env,
    },
    signal: starting.signal,
  });
  const http = new HttpPool(set.balancerPort);
  const pids = set.processes.map((process) => process.pid);
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const lab: LabProcess = {
    path: new URL(set.url).pathname,
    http,
    pid: set.processes.at(-1)!.pid,
    async residentBytes() {
      return sum(await Promise.all(pids.map(residentBytesOf)));
    },
    async cpuSeconds() {
      return sum(
        await Promise.all(
          pids.map(async (pid) =>
            processCpuSeconds(await Deno.readTextFile(`/proc/${pid}/stat`))
          ),
        ),
      );
    },
    async counts() {
      const each = await Promise.all(set.replicas.map(async (replica) => {
        const { status, body } = await httpGet(replica.port, "/healthz");
        if (status !== 200) throw new Error(`/healthz answered ${status}`);
        return JSON.parse(body) as LabCounts;
      }));
      return {
        legacySessions: sum(each.map((counts) => counts.legacySessions)),
        listenStreams: sum(each.map((counts) => counts.listenStreams)),
        pendingUpdates: sum(each.map((counts) => counts.pendingUpdates)),
        waitingCalls: sum(each.map((counts) => counts.waitingCalls)),
      };
    },
    collectGarbage() {
      return Promise.reject(new Error("a replica set has no one inspector"));
    },
    async stop() {
      if (!runningLabs.delete(lab)) return;
      http.close();
      await set.stop();
    },
  };
  runningLabs.add(lab);
  return { lab, set };
}

/**
 * The full 2025 flow through the balancer at each of
 * REPLICA_FLOW_CONCURRENCY_LEVELS, then LOAD_SIZE subscribed 2025 sessions'
 * lag through it, with Redis's memory read around them.
 */
async function measureReplicaSet(
  progress: (text: string) => void,
): Promise<ReplicaSetResult> {
  const flow = await startReplicaSetLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0" });
  const throughput: ThroughputResult[] = [];
  try {
    await inParallel(32, 4, () => runLegacyFlow(flow.lab));
    for (const concurrency of REPLICA_FLOW_CONCURRENCY_LEVELS) {
      const result = await measureThroughput(flow.lab, concurrency);
      throughput.push(result);
      progress(
        `  concurrency ${concurrency}: ${result.flowsPerSecond} flows/s`,
      );
    }
  } finally {
    await flow.lab.stop();
  }

  progress(`  notification lag, ${LOAD_SIZE} 2025 sessions`);
  const { lab, set } = await startReplicaSetLab({
    MCP_TEST_UPDATE_DELAY_SECONDS: String(LAG_PHASES.legacy.updateDelaySeconds),
  });
  const usedMemory = () =>
    redisInfoNumber(set.redisPort, "memory", "used_memory");
  let beforeBytes = NaN;
  let subscribedBytes = NaN;
  let afterEndBytes = NaN;
  const lag = await measureLegacyLag(
    lab,
    `${LOAD_SIZE} subscribed 2025 sessions`,
    {
      beforeSessions: async () => void (beforeBytes = await usedMemory()),
      afterUpdates: async () => void (subscribedBytes = await usedMemory()),
      afterSessions: async () => void (afterEndBytes = await usedMemory()),
    },
  );
  return {
    replicas: REPLICA_COUNT,
    routing: "sticky",
    throughput,
    lag,
    redisMemory: {
      sessions: LOAD_SIZE,
      beforeBytes,
      subscribedBytes,
      afterEndBytes,
      bytesPerSubscribedSession: round(
        (subscribedBytes - beforeBytes) / LOAD_SIZE,
      ),
      keptBytesPerEndedSession: round(
        (afterEndBytes - beforeBytes) / LOAD_SIZE,
      ),
    },
  };
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

interface Row {
  metric: string;
  value: string;
  target: string;
  /** undefined: reported, no target. */
  met?: boolean;
}

function formatTable(rows: Row[]): string {
  const result = (row: Row) =>
    row.met === undefined ? "-" : row.met ? "met" : "MISSED";
  const cells = [
    ["Metric", "Value", "Target", "Result"],
    ...rows.map((row) => [row.metric, row.value, row.target, result(row)]),
  ];
  const widths = cells[0].map((_, column) =>
    Math.max(...cells.map((line) => line[column].length))
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(" | ")} |`;
  const rule = `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`;
  return [line(cells[0]), rule, ...cells.slice(1).map(line)].join("\n");
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

function throughputRow(result: ThroughputResult): Row {
  const judged = result.concurrency === 64;
  const failures = result.failed ? `, ${result.failed} FAILED` : "";
  return {
    metric: `Full flow 2025, concurrency ${result.concurrency}`,
    value: `${
      result.flowsPerSecond.toFixed(0)
    } flows/s (${result.flows} flows, p50 ${
      result.flowLatencyP50Ms.toFixed(0)
    } ms; CPU lab ${result.labCores.toFixed(2)}, harness ${
      result.harnessCores.toFixed(2)
    } cores${failures})`,
    target: judged ? `>= ${TARGETS.flowsPerSecondAt64} flows/s` : "",
    met: judged
      ? result.flowsPerSecond >= TARGETS.flowsPerSecondAt64 &&
        result.failed === 0
      : result.failed === 0
      ? undefined
      : false,
  };
}

function lagRow(result: LagResult): Row {
  const ms = (value: number) => value.toFixed(1);
  const overlap = result.armingOverlappedUpdates
    ? ", ARMING OVERLAPPED UPDATES"
    : "";
  return {
    metric: `Notification lag, ${result.subject}`,
    value: `p50 ${ms(result.p50Ms)} / p99 ${ms(result.p99Ms)} / max ${
      ms(result.maxMs)
    } ms (from request sent: p99 ${
      ms(result.upperBoundP99Ms)
    }), ${result.received}/${result.expected} received within ${
      (result.fireWindowMs / 1000).toFixed(1)
    } s${overlap}`,
    target: `p99 < ${TARGETS.lagP99Ms} ms, none lost`,
    met: result.p99Ms < TARGETS.lagP99Ms && result.lost === 0,
  };
}

function memoryRows(
  comparison: MemoryComparison,
  shareTarget: number | undefined,
  items: string,
): Row[] {
  const { lab, floor } = comparison;
  const beforeCollection = (result: MemoryResult) =>
    kib(
      (result.loadedBeforeCollectionBytes - result.baselineBytes) / LOAD_SIZE,
    );
  const kept = (result: MemoryResult) =>
    `${result.afterCloseBytes >= result.baselineBytes ? "+" : ""}${
      mib(result.afterCloseBytes - result.baselineBytes)
    }`;
  return [{
    metric: `Memory per ${comparison.subject}`,
    value: `${kib(lab.bytesPerItem)} = floor ${kib(floor.bytesPerItem)} + lab ${
      kib(comparison.shareBytes)
    } (before garbage collection: ${beforeCollection(lab)}, floor ${
      beforeCollection(floor)
    })`,
    target: shareTarget === undefined ? "" : `lab <= ${kib(shareTarget)}`,
    met: shareTarget === undefined
      ? undefined
      : comparison.shareBytes <= shareTarget,
  }, {
    metric: `Memory kept after closing the ${LOAD_SIZE} ${items}`,
    value: `lab ${kept(lab)}, floor ${kept(floor)} over their baselines`,
    target: "",
  }];
}

function churnRow(churn: ChurnResult): Row {
  const limit = churn.afterRoundBytes[1] * TARGETS.churnGrowthFraction;
  return {
    metric:
      `Memory after ${churn.afterRoundBytes.length} rounds of ${churn.sessionsPerRound} sessions opened and closed`,
    value: `${churn.afterRoundBytes.map(mib).join(", ")} (baseline ${
      mib(churn.baselineBytes)
    }); from round 2 on ${churn.growthFromSecondRoundBytes >= 0 ? "+" : ""}${
      mib(churn.growthFromSecondRoundBytes)
    }`,
    target: `rounds 3-${churn.afterRoundBytes.length} within ${
      TARGETS.churnGrowthFraction * 100
    }% of round 2`,
    met: churn.growthFromSecondRoundBytes <= limit,
  };
}

/**
 * The replica set's rows, each beside the one-process figure it compares
 * with; reported, no target.
 */
function replicaSetRows(
  result: ReplicaSetResult,
  oneProcess: { throughput: ThroughputResult[]; lag: LagResult },
): Row[] {
  const set = `${result.replicas} replicas + Redis behind HAProxy (sticky)`;
  const flows = result.throughput.map((level): Row => {
    const alone = oneProcess.throughput.find((one) =>
      one.concurrency === level.concurrency
    );
    const failures = level.failed ? `, ${level.failed} FAILED` : "";
    return {
      metric: `Full flow 2025, ${set}, concurrency ${level.concurrency}`,
      value: `${level.flowsPerSecond.toFixed(0)} flows/s (one process: ${
        alone ? alone.flowsPerSecond.toFixed(0) : "-"
      }; ${level.flows} flows, p50 ${
        level.flowLatencyP50Ms.toFixed(0)
      } ms; CPU set ${level.labCores.toFixed(2)}, harness ${
        level.harnessCores.toFixed(2)
      } cores${failures})`,
      target: "",
    };
  });
  const ms = (value: number) => value.toFixed(1);
  const { lag, redisMemory } = result;
  return [
    ...flows,
    {
      metric: `Notification lag, ${lag.subject}, ${set}`,
      value: `p50 ${ms(lag.p50Ms)} / p99 ${ms(lag.p99Ms)} / max ${
        ms(lag.maxMs)
      } ms (one process: p99 ${
        ms(oneProcess.lag.p99Ms)
      }), ${lag.received}/${lag.expected} received`,
      target: "",
    },
    {
      metric: `Redis memory per subscribed 2025 session (used_memory)`,
      value: `${kib(redisMemory.bytesPerSubscribedSession)} (${
        mib(redisMemory.beforeBytes)
      } before ${redisMemory.sessions} sessions, ${
        mib(redisMemory.subscribedBytes)
      } once updated; after they ended ${
        kib(redisMemory.keptBytesPerEndedSession)
      } each)`,
      target: "",
    },
  ];
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

async function main() {
  const outputPath = Deno.args[0] ?? "bench-results.json";
  const runStart = performance.now();
  const progress = (text: string) =>
    console.error(
      `[bench ${((performance.now() - runStart) / 1000).toFixed(1)}s] ${text}`,
    );

  // 1. Throughput (this first lab start also warms the dependency cache).
  progress("full-flow throughput, 2025 era");
  const flowLab = await startLab({ MCP_TEST_UPDATE_DELAY_SECONDS: "0" });
  const throughput: ThroughputResult[] = [];
  try {
    // Warm-up: lazily compiled code paths, the connection pool.
    await inParallel(32, 4, () => runLegacyFlow(flowLab));
    for (const concurrency of FLOW_CONCURRENCY_LEVELS) {
      const result = await measureThroughput(flowLab, concurrency);
      throughput.push(result);
      progress(
        `  concurrency ${concurrency}: ${result.flowsPerSecond} flows/s`,
      );
    }
  } finally {
    await flowLab.stop();
  }

  // 2. Lag, one fresh lab per era so neither sees the other's leftovers.
  progress(`notification lag, ${LOAD_SIZE} 2025 sessions`);
  const lag = [
    await measureLegacyLag(
      await startLab({
        MCP_TEST_UPDATE_DELAY_SECONDS: String(
          LAG_PHASES.legacy.updateDelaySeconds,
        ),
      }),
    ),
  ];
  progress(`notification lag, ${LOAD_SIZE} listen streams`);
  lag.push(await measureListenLag());

  // 3. Memory, one fresh lab and floor each so the baselines are clean.
  const measure = async <Item>(kind: HeldKind<Item>) => {
    progress(`memory, ${LOAD_SIZE} × ${kind.subject}, lab and floor`);
    const comparison = await compareWithFloor(kind);
    progress(
      `  ${kib(comparison.lab.bytesPerItem)} = floor ${
        kib(comparison.floor.bytesPerItem)
      } + lab ${kib(comparison.shareBytes)}`,
    );
    return comparison;
  };
  const memory = [
    await measure(IDLE_SESSIONS),
    await measure(IDLE_LISTENS),
    await measure(WAITING_CALLS),
  ];
  progress(`memory, ${CHURN_ROUNDS} rounds of ${LOAD_SIZE} sessions`);
  const churn = await measureChurn();

  // 4. Cold start, with the dependency cache warm from the runs above.
  progress(`cold start, ${COLD_START_RUNS} runs`);
  const coldStarts: number[] = [];
  for (let run = 0; run < COLD_START_RUNS; run++) {
    coldStarts.push(round(await coldStartOnce()));
  }
  const coldStartMedian = median(coldStarts);

  // 5. The replica set, when this machine has Redis and HAProxy.
  const missing = await missingReplicaPrograms();
  let replicaSet: ReplicaSetResult | undefined;
  if (missing.length > 0) {
    progress(`replica set skipped: ${missing.join("; ")}`);
  } else {
    progress(
      `replica set: ${REPLICA_COUNT} labs on Redis behind HAProxy, sticky`,
    );
    replicaSet = await measureReplicaSet(progress);
  }

  const rows: Row[] = [
    ...throughput.map(throughputRow),
    ...lag.map(lagRow),
    ...memoryRows(memory[0], TARGETS.shareBytesPerIdleSession, "sessions"),
    ...memoryRows(
      memory[1],
      TARGETS.shareBytesPerIdleListenStream,
      "listen streams",
    ),
    ...memoryRows(memory[2], undefined, "waiting calls"),
    churnRow(churn),
    {
      metric: `Cold start to first initialize (median of ${COLD_START_RUNS})`,
      value: `${coldStartMedian.toFixed(0)} ms (runs: ${
        coldStarts.map((ms) => ms.toFixed(0)).join(", ")
      })`,
      target: `< ${TARGETS.coldStartMs} ms`,
      met: coldStartMedian < TARGETS.coldStartMs,
    },
    ...replicaSet ? replicaSetRows(replicaSet, { throughput, lag: lag[0] }) : [{
      metric: `Replica set (${REPLICA_COUNT} labs on Redis behind HAProxy)`,
      value: `skipped: ${missing.join("; ")}`,
      target: "",
    }],
  ];
  const durationSeconds = round((performance.now() - runStart) / 1000);
  const busiestNeighbour = Math.max(
    ...[
      ...throughput,
      ...lag,
      ...replicaSet ? [...replicaSet.throughput, replicaSet.lag] : [],
    ].map((result) => result.otherCores),
  );
  console.log(formatTable(rows));
  console.log(
    `\n${rows.filter((row) => row.met === true).length} targets met, ${
      rows.filter((row) => row.met === false).length
    } missed; ${durationSeconds} s on ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}. JSON: ${outputPath}`,
  );
  if (busiestNeighbour > OTHER_LOAD_WARNING_CORES) {
    console.log(
      `Warning: other processes used up to ${
        busiestNeighbour.toFixed(2)
      } cores during the run; the numbers above are pessimistic.`,
    );
  }
  const report = {
    date: new Date().toISOString(),
    durationSeconds,
    machine: {
      cores: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
      os: Deno.build.os,
      otherProcessesMaxCores: busiestNeighbour,
    },
    targets: TARGETS,
    table: rows.map((row) => ({ ...row, met: row.met ?? null })),
    throughput,
    lag,
    memory,
    churn,
    coldStart: { runsMs: coldStarts, medianMs: coldStartMedian },
    replicaSet: replicaSet ?? { skipped: missing },
  };
  await Deno.writeTextFile(outputPath, JSON.stringify(report, null, 2) + "\n");
}

if (import.meta.main && Deno.args[0] === FLOOR_FLAG) {
  await serveSseFloor();
} else if (import.meta.main) {
  Deno.addSignalListener("SIGINT", async () => {
    await stopAllLabs();
    Deno.exit(130);
  });
  // The run stops by itself even if something hangs.
  const budget = setTimeout(async () => {
    console.error(`bench: over its ${RUN_BUDGET_MS / 1000} s budget, stopping`);
    await stopAllLabs();
    Deno.exit(1);
  }, RUN_BUDGET_MS);
  Deno.unrefTimer(budget);
  try {
    await main();
  } catch (error) {
    console.error(
      `bench: harness error: ${error instanceof Error ? error.stack : error}`,
    );
    await stopAllLabs();
    Deno.exit(1);
  }
  await stopAllLabs();
  clearTimeout(budget);
}
