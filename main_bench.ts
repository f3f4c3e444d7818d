/**
 * Benchmark for the MCP resource subscription lab (`main.ts`).
 *
 * Starts the lab as a subprocess with `MCP_TEST_LOG_LEVEL=silent`, drives it
 * over raw HTTP on loopback, prints one table and writes it as JSON:
 *
 * 1. full-flow throughput in the 2025 era at concurrency 1, 16, 64 and 256;
 * 2. notification lag with 1,000 subscribed 2025 sessions and with 1,000
 *    open 2026-07-28 listen streams;
 * 3. resident memory per idle session / listen stream, and after closing;
 * 4. cold start: process spawn to the first successful `initialize`.
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
 * Update delay for the lag phases: long enough that every subscribe or
 * listen is answered before the first update fires, so the updates meet a
 * quiet lab and fire close together.
 */
const LAG_UPDATE_DELAY_SECONDS = 2;
/** How many subscribes / listens are in flight at once when arming updates. */
const ARM_CONCURRENCY = 16;
/** How many sessions are set up (or torn down) at once. */
const SETUP_CONCURRENCY = 32;
/** Memory phases must not see an update fire. */
const MEMORY_UPDATE_DELAY_SECONDS = 3600;
/** Upper bound on waiting for memory to settle after closing everything. */
const MEMORY_SETTLE_SECONDS = 10;
const COLD_START_RUNS = 5;
/** No single request may take longer than this. */
const REQUEST_TIMEOUT_MS = 15_000;
/** No stream may stay open longer than this. */
const STREAM_TIMEOUT_MS = 60_000;
/** The whole run is abandoned (as a harness error) after this. */
const RUN_BUDGET_MS = 170_000;

const TARGETS = {
  flowsPerSecondAt64: 1000,
  lagP99Ms: 20,
  bytesPerIdleSession: 50 * 1024,
  bytesPerIdleListenStream: 10 * 1024,
  afterCloseFractionOfBaseline: 0.10,
  coldStartMs: 300,
};

const LAB_SCRIPT = fileURLToPath(new URL("./main.ts", import.meta.url));
const LAB_DIR = fileURLToPath(new URL(".", import.meta.url));
const REVIEW_URI = "test://review/status";
const LEGACY_PROTOCOL = "2025-11-25";
const MODERN_PROTOCOL = "2026-07-28";
const UPDATED = "notifications/resources/updated";
const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";

// ---------------------------------------------------------------------------
// The lab as a subprocess
// ---------------------------------------------------------------------------

interface LabCounts {
  legacySessions: number;
  listenStreams: number;
  pendingUpdates: number;
}

/** A running lab subprocess. */
interface LabProcess {
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  url: string;
  pid: number;
  /** Resident set size of the lab process, from /proc. */
  residentBytes(): Promise<number>;
  /** User + system CPU seconds the lab process has used so far. */
  cpuSeconds(): Promise<number>;
  counts(): Promise<LabCounts>;
  stop(): Promise<void>;
}

/** Labs still running, so an interrupted or failed run stops them. */
const runningLabs = new Set<LabProcess>();

const BANNER = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/;

/** Starts `deno run -A main.ts` on a free port and waits for its banner. */
async function startLab(env: Record<string, string>): Promise<LabProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LAB_SCRIPT],
    cwd: LAB_DIR,
    env: {
      MCP_TEST_PORT: "0",
      MCP_TEST_LOG_LEVEL: "silent",
      MCP_TEST_MAX_SESSIONS: String(LOAD_SIZE * 5),
      ...env,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let stderrTail = "";
  const stderrDrained = child.stderr.pipeThrough(new TextDecoderStream())
    .pipeTo(
      new WritableStream({
        write(text) {
          stderrTail = (stderrTail + text).slice(-2000);
        },
      }),
    ).catch(() => {});
  // The banner is the first stdout line; the rest is drained so a full pipe
  // can never block the lab.
  const url = await new Promise<string>((resolve, reject) => {
    let stdoutText = "";
    let listening = false;
    const giveUp = setTimeout(
      () => reject(new Error("the lab printed no banner within 60 s")),
      60_000,
    );
    child.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({
        write(text) {
          if (listening) return;
          stdoutText += text;
          const banner = stdoutText.match(BANNER);
          if (banner) {
            listening = true;
            clearTimeout(giveUp);
            resolve(banner[1]);
          }
        },
        close() {
          clearTimeout(giveUp);
          reject(new Error(`the lab exited before listening: ${stderrTail}`));
        },
      }),
    ).catch(() => {});
  }).catch(async (error) => {
    child.kill("SIGKILL");
    await child.status;
    await stderrDrained;
    throw new Error(`${error.message}\n${stderrTail}`);
  });

  const base = new URL(url);
  const lab: LabProcess = {
    url,
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
      const response = await fetch(new URL("/healthz", base), {
        client: httpClient,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const health = await response.json() as LabCounts;
      return {
        legacySessions: health.legacySessions,
        listenStreams: health.listenStreams,
        pendingUpdates: health.pendingUpdates,
      };
    },
    async stop() {
      if (!runningLabs.delete(lab)) return;
      // The lab closes everything on SIGTERM and exits within 2 s.
      const killer = setTimeout(() => child.kill("SIGKILL"), 3000);
      try {
        child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      await child.status;
      clearTimeout(killer);
      await stderrDrained;
    },
  };
  runningLabs.add(lab);
  return lab;
}

/** utime + stime from a /proc/<pid>/stat line, in seconds (USER_HZ = 100). */
function processCpuSeconds(stat: string): number {
  // Fields after the parenthesised command name; utime and stime are the
  // 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function stopAllLabs() {
  await Promise.all([...runningLabs].map((lab) => lab.stop()));
}

// ---------------------------------------------------------------------------
// HTTP and SSE on loopback
// ---------------------------------------------------------------------------

/**
 * One HTTP/1.1 client for the whole run, with an idle pool big enough that
 * keep-alive connections are reused at concurrency 256 instead of reopened.
 */
const httpClient = Deno.createHttpClient({
  poolMaxIdlePerHost: 4096,
  http2: false,
});

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

interface PostAnswer {
  status: number;
  headers: Headers;
  /** The JSON-RPC answer, from a JSON body or the SSE body's frames. */
  message?: JsonRpcMessage;
}

async function postJsonRpc(
  url: string,
  message: Record<string, unknown>,
  headers: Record<string, string>,
): Promise<PostAnswer> {
  const response = await fetch(url, {
    method: "POST",
    client: httpClient,
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(message),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (!text) return { status: response.status, headers: response.headers };
  const isSse = response.headers.get("content-type")?.startsWith(
    "text/event-stream",
  );
  const answer = isSse
    ? sseMessages(text).find((frame) => frame.id !== undefined)
    : asMessage(JSON.parse(text));
  return {
    status: response.status,
    headers: response.headers,
    message: answer,
  };
}

interface SseFrame {
  message: JsonRpcMessage;
  /** `performance.now()` when the chunk carrying the frame arrived. */
  receivedAt: number;
}

/**
 * Reads an SSE response body as it arrives, stamping each frame with its
 * arrival time, and hands frames to whoever waits for a method.
 */
class SseStream {
  readonly #abort: AbortController;
  readonly #frames: SseFrame[] = [];
  #waiter?: {
    method: string;
    resolve: (frame: SseFrame) => void;
    reject: (error: Error) => void;
  };
  #ended = false;
  /** Settles when the body ends, fails or is cancelled. */
  readonly ended: Promise<void>;

  constructor(body: ReadableStream<Uint8Array>, abort: AbortController) {
    this.#abort = abort;
    this.ended = this.#pump(body);
  }

  async #pump(body: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of body) {
        // Stamped before decoding, so parsing is not counted as lag.
        const receivedAt = performance.now();
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          for (const message of sseMessages(buffer.slice(0, end))) {
            this.#deliver({ message, receivedAt });
          }
          buffer = buffer.slice(end + 2);
        }
      }
    } catch {
      // An aborted or reset stream simply ends; waiters learn below.
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

  /** Waits a little for the server to end the stream, then drops it. */
  async close(graceMs = 0) {
    if (graceMs > 0) await Promise.race([this.ended, sleep(graceMs)]);
    this.#abort.abort();
    await this.ended;
  }
}

/** Opens an SSE response; fails unless the answer is 200 `text/event-stream`. */
async function openSse(url: string, init: RequestInit): Promise<SseStream> {
  const abort = new AbortController();
  const response = await fetch(url, {
    ...init,
    client: httpClient,
    signal: AbortSignal.any([
      abort.signal,
      AbortSignal.timeout(STREAM_TIMEOUT_MS),
    ]),
  });
  const type = response.headers.get("content-type") ?? "";
  if (response.status !== 200 || !type.startsWith("text/event-stream")) {
    const text = await response.text();
    throw new Error(`stream refused: ${response.status} ${text.slice(0, 200)}`);
  }
  return new SseStream(response.body!, abort);
}

// ---------------------------------------------------------------------------
// Protocol clients: a raw 2025 session, a raw 2026-07-28 listen stream
// ---------------------------------------------------------------------------

/** A 2025-era session driven with raw requests. */
class LegacySession {
  #nextId = 2;

  private constructor(readonly url: string, readonly sessionId: string) {}

  /** initialize + notifications/initialized. */
  static async open(url: string, clientName: string): Promise<LegacySession> {
    const initialize = await postJsonRpc(url, {
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
    const session = new LegacySession(url, sessionId);
    const initialized = await postJsonRpc(url, {
      jsonrpc: "2.0",
      method: "notifications/initialized",
    }, session.#headers());
    if (initialized.status !== 202) {
      throw new Error(`initialized answered ${initialized.status}`);
    }
    return session;
  }

  #headers(): Record<string, string> {
    return {
      "mcp-session-id": this.sessionId,
      "mcp-protocol-version": LEGACY_PROTOCOL,
    };
  }

  async request(
    method: string,
    params: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const answer = await postJsonRpc(this.url, {
      jsonrpc: "2.0",
      id: this.#nextId++,
      method,
      params,
    }, this.#headers());
    if (answer.status !== 200 || !answer.message?.result) {
      throw new Error(
        `${method} failed: ${answer.status} ${JSON.stringify(answer.message)}`,
      );
    }
    return answer.message.result;
  }

  /** The GET stream, where the session's notifications arrive. */
  openGetStream(): Promise<SseStream> {
    return openSse(this.url, {
      method: "GET",
      headers: { accept: "text/event-stream", ...this.#headers() },
    });
  }

  /** DELETE: ends the session, and with it the session's GET stream. */
  async delete() {
    const response = await fetch(this.url, {
      method: "DELETE",
      client: httpClient,
      headers: this.#headers(),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.status !== 200) {
      throw new Error(`DELETE answered ${response.status}`);
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

/**
 * Opens a 2026-07-28 `subscriptions/listen` on the review resource. Each
 * `clientName` is its own lab client with its own update timer.
 */
async function openListenStream(
  url: string,
  clientName: string,
  id: number,
): Promise<ListenStream> {
  const sentAt = performance.now();
  const stream = await openSse(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_PROTOCOL,
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({
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
    }),
  });
  const ack = await stream.next(ACKNOWLEDGED, REQUEST_TIMEOUT_MS).catch(
    async (error) => {
      await stream.close();
      throw error;
    },
  );
  return { stream, sentAt, acknowledgedAt: ack.receivedAt };
}

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

const round = (value: number, digits = 1) =>
  Math.round(value * 10 ** digits) / 10 ** digits;
const MIB = 1024 * 1024;

// ---------------------------------------------------------------------------
// 1. Full-flow throughput, 2025 era
// ---------------------------------------------------------------------------

/**
 * One complete 2025 client run: initialize, initialized, GET stream, list,
 * read v1, subscribe, the update on the GET stream, read v2, DELETE.
 */
async function runLegacyFlow(url: string) {
  const session = await LegacySession.open(url, "bench-flow");
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
    // DELETE ends the GET stream server-side, which hands its connection
    // back to the pool; aborting would close it instead.
    await stream.close(1000);
  }
}

interface ThroughputResult {
  concurrency: number;
  flows: number;
  failed: number;
  firstError?: string;
  seconds: number;
  flowsPerSecond: number;
  flowLatencyP50Ms: number;
  flowLatencyP99Ms: number;
  /** Lab CPU time over wall time: 1.0 is one core fully busy. */
  labCpuCores: number;
}

async function measureThroughput(
  lab: LabProcess,
  concurrency: number,
): Promise<ThroughputResult> {
  const latencies: number[] = [];
  let started = 0;
  let failed = 0;
  let firstError: string | undefined;
  const cpuBefore = await lab.cpuSeconds();
  const start = performance.now();
  const deadline = start + FLOW_LEVEL_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline && started < FLOW_LEVEL_MAX_FLOWS) {
        started++;
        const flowStart = performance.now();
        try {
          await runLegacyFlow(lab.url);
          latencies.push(performance.now() - flowStart);
        } catch (error) {
          failed++;
          firstError ??= String(error);
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const labCpu = await lab.cpuSeconds() - cpuBefore;
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
    labCpuCores: round(labCpu / seconds, 2),
  };
}

// ---------------------------------------------------------------------------
// 2. Notification lag
// ---------------------------------------------------------------------------

/**
 * The lab logs nothing at `silent`, so the update's scheduled time is
 * derived: the lab starts its timer while handling the subscribe (or
 * listen), which happens between the request being sent and its answer
 * arriving. Lag measured from "sent + delay" is therefore an upper bound
 * (it includes the request's trip in), and from "answered + delay" a lower
 * bound (the answer's trip out is subtracted). The table reports the upper
 * bound; arming at modest concurrency keeps the two within a few ms.
 */
interface LagResult {
  subject: string;
  expected: number;
  received: number;
  lost: number;
  /** Upper bound: frame arrival minus (request sent + delay). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Lower bound: frame arrival minus (answer arrived + delay). */
  lowerBoundP50Ms: number;
  lowerBoundP99Ms: number;
  lowerBoundMaxMs: number;
  /** p99 of (answer − sent): how far apart the two bounds can be. */
  armRoundTripP99Ms: number;
  /** First to last scheduled update: how close together they fired. */
  fireWindowMs: number;
}

interface ArmedUpdate {
  sentAt: number;
  answeredAt: number;
  /** Arrival time of the update frame, or undefined if it never came. */
  received: Promise<number | undefined>;
}

function summarizeLag(
  subject: string,
  armed: ArmedUpdate[],
  arrivals: (number | undefined)[],
): LagResult {
  const delayMs = LAG_UPDATE_DELAY_SECONDS * 1000;
  const upper: number[] = [];
  const lower: number[] = [];
  armed.forEach((update, index) => {
    const arrivedAt = arrivals[index];
    if (arrivedAt === undefined) return;
    upper.push(arrivedAt - (update.sentAt + delayMs));
    lower.push(arrivedAt - (update.answeredAt + delayMs));
  });
  const sent = armed.map((update) => update.sentAt);
  return {
    subject,
    expected: armed.length,
    received: upper.length,
    lost: armed.length - upper.length,
    p50Ms: round(percentile(upper, 0.5), 2),
    p99Ms: round(percentile(upper, 0.99), 2),
    maxMs: round(Math.max(...upper), 2),
    lowerBoundP50Ms: round(percentile(lower, 0.5), 2),
    lowerBoundP99Ms: round(percentile(lower, 0.99), 2),
    lowerBoundMaxMs: round(Math.max(...lower), 2),
    armRoundTripP99Ms: round(
      percentile(
        armed.map((update) => update.answeredAt - update.sentAt),
        0.99,
      ),
      2,
    ),
    fireWindowMs: round(Math.max(...sent) - Math.min(...sent)),
  };
}

/** How long after the delay an update may take before it counts as lost. */
const LOST_AFTER_MS = 10_000;

async function measureLegacyLag(lab: LabProcess): Promise<LagResult> {
  // Every session has its GET stream open before it subscribes: the lab
  // can only deliver the update there.
  const sessions = await inParallel(
    LOAD_SIZE,
    SETUP_CONCURRENCY,
    async (index) => {
      const session = await LegacySession.open(lab.url, `bench-lag-${index}`);
      return { session, stream: await session.openGetStream() };
    },
  );
  try {
    const counts = await lab.counts();
    if (counts.legacySessions !== LOAD_SIZE) {
      throw new Error(
        `expected ${LOAD_SIZE} sessions, lab has ${counts.legacySessions}`,
      );
    }
    const waitMs = LAG_UPDATE_DELAY_SECONDS * 1000 + LOST_AFTER_MS;
    const armed = await inParallel(
      LOAD_SIZE,
      ARM_CONCURRENCY,
      async (index): Promise<ArmedUpdate> => {
        const { session, stream } = sessions[index];
        const received = stream.next(UPDATED, waitMs).then(
          (frame) => frame.receivedAt,
          () => undefined,
        );
        const sentAt = performance.now();
        await session.request("resources/subscribe", { uri: REVIEW_URI });
        return { sentAt, answeredAt: performance.now(), received };
      },
    );
    const arrivals = await Promise.all(armed.map((update) => update.received));
    return summarizeLag(
      `${LOAD_SIZE} subscribed 2025 sessions`,
      armed,
      arrivals,
    );
  } finally {
    await inParallel(LOAD_SIZE, SETUP_CONCURRENCY, async (index) => {
      const { session, stream } = sessions[index];
      await session.delete().catch(() => {});
      await stream.close(1000);
    });
  }
}

async function measureListenLag(lab: LabProcess): Promise<LagResult> {
  const waitMs = LAG_UPDATE_DELAY_SECONDS * 1000 + LOST_AFTER_MS;
  const listens: ListenStream[] = [];
  try {
    const armed = await inParallel(
      LOAD_SIZE,
      ARM_CONCURRENCY,
      async (index): Promise<ArmedUpdate> => {
        // Its own client name: in 2026-07-28 each clientInfo has its own
        // resource version and update timer.
        const listen = await openListenStream(
          lab.url,
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
    const arrivals = await Promise.all(armed.map((update) => update.received));
    return summarizeLag(
      `${LOAD_SIZE} 2026-07-28 listen streams`,
      armed,
      arrivals,
    );
  } finally {
    await Promise.all(listens.map((listen) => listen.stream.close()));
  }
}

// ---------------------------------------------------------------------------
// 3. Memory
// ---------------------------------------------------------------------------

interface MemoryResult {
  subject: string;
  baselineBytes: number;
  loadedBytes: number;
  afterCloseBytes: number;
  bytesPerItem: number;
  /** (after close − baseline) / baseline. */
  afterCloseGrowth: number;
  secondsToSettleAfterClose: number;
}

/** RSS once it stops moving (two samples 250 ms apart within 0.5%), max 3 s. */
async function settledResidentBytes(lab: LabProcess): Promise<number> {
  let previous = await lab.residentBytes();
  for (let i = 0; i < 12; i++) {
    await sleep(250);
    const current = await lab.residentBytes();
    if (Math.abs(current - previous) <= previous * 0.005) return current;
    previous = current;
  }
  return previous;
}

/**
 * Measures one kind of held-open item in a fresh lab: baseline after a
 * warm-up, RSS with LOAD_SIZE items open, and RSS after closing them all
 * (sampled until it is back within the target or the settle time is up).
 */
async function measureMemory<Item>(
  subject: string,
  openItem: (lab: LabProcess, index: number) => Promise<Item>,
  closeItem: (item: Item) => Promise<void>,
  isOpen: (counts: LabCounts) => number,
): Promise<MemoryResult> {
  const lab = await startLab({
    MCP_TEST_UPDATE_DELAY_SECONDS: String(MEMORY_UPDATE_DELAY_SECONDS),
  });
  try {
    // Warm-up: lazily compiled code and first-use allocations are not load.
    for (let round = 0; round < 3; round++) {
      const warm = await inParallel(20, 4, (index) => openItem(lab, index));
      await Promise.all(warm.map(closeItem));
    }
    await waitForCounts(lab, (counts) => isOpen(counts) === 0, 5000);
    const baselineBytes = await settledResidentBytes(lab);

    const items = await inParallel(
      LOAD_SIZE,
      SETUP_CONCURRENCY,
      (index) => openItem(lab, 1000 + index),
    );
    await waitForCounts(lab, (counts) => isOpen(counts) === LOAD_SIZE, 5000);
    const loadedBytes = await settledResidentBytes(lab);

    await inParallel(
      LOAD_SIZE,
      SETUP_CONCURRENCY,
      (index) => closeItem(items[index]),
    );
    await waitForCounts(lab, (counts) => isOpen(counts) === 0, 5000);
    const closedAt = performance.now();
    const limit = baselineBytes * (1 + TARGETS.afterCloseFractionOfBaseline);
    let afterCloseBytes = await lab.residentBytes();
    while (
      afterCloseBytes > limit &&
      performance.now() - closedAt < MEMORY_SETTLE_SECONDS * 1000
    ) {
      await sleep(500);
      afterCloseBytes = await lab.residentBytes();
    }
    return {
      subject,
      baselineBytes,
      loadedBytes,
      afterCloseBytes,
      bytesPerItem: Math.round((loadedBytes - baselineBytes) / LOAD_SIZE),
      afterCloseGrowth: round(
        (afterCloseBytes - baselineBytes) / baselineBytes,
        4,
      ),
      secondsToSettleAfterClose: round((performance.now() - closedAt) / 1000),
    };
  } finally {
    await lab.stop();
  }
}

function measureSessionMemory(): Promise<MemoryResult> {
  return measureMemory(
    `idle 2025 session with open GET stream`,
    async (lab, index) => {
      const session = await LegacySession.open(lab.url, `bench-idle-${index}`);
      return { session, stream: await session.openGetStream() };
    },
    async ({ session, stream }) => {
      await session.delete();
      await stream.close(1000);
    },
    (counts) => counts.legacySessions,
  );
}

function measureListenMemory(): Promise<MemoryResult> {
  return measureMemory(
    `idle 2026-07-28 listen stream`,
    (lab, index) => openListenStream(lab.url, `bench-idle-${index}`, index + 1),
    (listen) => listen.stream.close(),
    (counts) => counts.listenStreams,
  );
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
        await LegacySession.open(lab.url, "bench-cold-start");
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
  const header: Row = { metric: "Metric", value: "Value", target: "Target" };
  const result = (row: Row) =>
    row === header
      ? "Result"
      : row.met === undefined
      ? "-"
      : row.met
      ? "met"
      : "MISSED";
  const all = [header, ...rows];
  const width = (pick: (row: Row) => string) =>
    Math.max(...all.map((row) => pick(row).length));
  const widths = [
    width((row) => row.metric),
    width((row) => row.value),
    width((row) => row.target),
    width(result),
  ];
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(" | ")} |`;
  const rule = `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`;
  return [
    line([header.metric, header.value, header.target, result(header)]),
    rule,
    ...rows.map((row) =>
      line([row.metric, row.value, row.target, result(row)])
    ),
  ].join("\n");
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

function throughputRow(result: ThroughputResult): Row {
  const target = result.concurrency === 64;
  const failures = result.failed ? `, ${result.failed} FAILED` : "";
  return {
    metric: `Full flow 2025, concurrency ${result.concurrency}`,
    value: `${
      result.flowsPerSecond.toFixed(0)
    } flows/s (${result.flows} flows, lab CPU ${
      result.labCpuCores.toFixed(2)
    } cores${failures})`,
    target: target ? `>= ${TARGETS.flowsPerSecondAt64} flows/s` : "",
    met: target
      ? result.flowsPerSecond >= TARGETS.flowsPerSecondAt64 &&
        result.failed === 0
      : result.failed === 0
      ? undefined
      : false,
  };
}

function lagRow(result: LagResult): Row {
  return {
    metric: `Notification lag, ${result.subject}`,
    value: `p50 ${result.p50Ms.toFixed(1)} / p99 ${
      result.p99Ms.toFixed(1)
    } / max ${
      result.maxMs.toFixed(1)
    } ms, ${result.received}/${result.expected} received`,
    target: `p99 < ${TARGETS.lagP99Ms} ms, none lost`,
    met: result.p99Ms < TARGETS.lagP99Ms && result.lost === 0,
  };
}

function memoryRows(
  result: MemoryResult,
  perItemTarget: number,
  item: string,
): Row[] {
  return [{
    metric: `Memory per ${result.subject}`,
    value: `${kib(result.bytesPerItem)} (${mib(result.baselineBytes)} -> ${
      mib(result.loadedBytes)
    } for ${LOAD_SIZE})`,
    target: `< ${kib(perItemTarget)}`,
    met: result.bytesPerItem < perItemTarget,
  }, {
    metric: `Memory after closing the ${LOAD_SIZE} ${item}`,
    value: `${mib(result.afterCloseBytes)}, ${
      result.afterCloseGrowth >= 0 ? "+" : ""
    }${(result.afterCloseGrowth * 100).toFixed(1)}% vs baseline after ${
      result.secondsToSettleAfterClose.toFixed(1)
    } s`,
    target: `within ${TARGETS.afterCloseFractionOfBaseline * 100}% of baseline`,
    met: result.afterCloseGrowth <= TARGETS.afterCloseFractionOfBaseline,
  }];
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
    await inParallel(32, 4, () => runLegacyFlow(flowLab.url));
    for (const concurrency of FLOW_CONCURRENCY_LEVELS) {
      throughput.push(await measureThroughput(flowLab, concurrency));
      progress(
        `  concurrency ${concurrency}: ${
          throughput.at(-1)?.flowsPerSecond
        } flows/s`,
      );
    }
  } finally {
    await flowLab.stop();
  }

  // 2. Lag, one fresh lab per era so neither sees the other's leftovers.
  const lag: LagResult[] = [];
  for (
    const [label, measure] of [
      ["2025 sessions", measureLegacyLag],
      ["listen streams", measureListenLag],
    ] as const
  ) {
    progress(`notification lag, ${LOAD_SIZE} ${label}`);
    const lab = await startLab({
      MCP_TEST_UPDATE_DELAY_SECONDS: String(LAG_UPDATE_DELAY_SECONDS),
    });
    try {
      await inParallel(
        8,
        4,
        (index) =>
          openListenStream(lab.url, `warm-${index}`, index).then((l) =>
            l.stream.close()
          ),
      );
      lag.push(await measure(lab));
    } finally {
      await lab.stop();
    }
  }

  // 3. Memory, one fresh lab each so the baselines are clean.
  progress(`memory, ${LOAD_SIZE} idle 2025 sessions`);
  const sessionMemory = await measureSessionMemory();
  progress(`memory, ${LOAD_SIZE} idle listen streams`);
  const listenMemory = await measureListenMemory();

  // 4. Cold start, with the dependency cache warm from the runs above.
  progress(`cold start, ${COLD_START_RUNS} runs`);
  const coldStarts: number[] = [];
  for (let run = 0; run < COLD_START_RUNS; run++) {
    coldStarts.push(round(await coldStartOnce()));
  }
  const coldStartMedian = median(coldStarts);

  const rows: Row[] = [
    ...throughput.map(throughputRow),
    ...lag.map(lagRow),
    ...memoryRows(sessionMemory, TARGETS.bytesPerIdleSession, "sessions"),
    ...memoryRows(
      listenMemory,
      TARGETS.bytesPerIdleListenStream,
      "listen streams",
    ),
    {
      metric:
        `Cold start, spawn to first initialize (median of ${COLD_START_RUNS})`,
      value: `${coldStartMedian.toFixed(0)} ms (runs: ${
        coldStarts.map((ms) => ms.toFixed(0)).join(", ")
      })`,
      target: `< ${TARGETS.coldStartMs} ms`,
      met: coldStartMedian < TARGETS.coldStartMs,
    },
  ];
  const durationSeconds = round((performance.now() - runStart) / 1000);
  console.log(formatTable(rows));
  console.log(
    `\n${rows.filter((row) => row.met === true).length} targets met, ${
      rows.filter((row) => row.met === false).length
    } missed; ${durationSeconds} s on ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}. JSON: ${outputPath}`,
  );
  const report = {
    date: new Date().toISOString(),
    durationSeconds,
    machine: {
      cores: navigator.hardwareConcurrency,
      deno: Deno.version.deno,
      os: Deno.build.os,
    },
    targets: TARGETS,
    table: rows.map((row) => ({ ...row, met: row.met ?? null })),
    throughput,
    lag,
    memory: [sessionMemory, listenMemory],
    coldStart: { runsMs: coldStarts, medianMs: coldStartMedian },
  };
  await Deno.writeTextFile(outputPath, JSON.stringify(report, null, 2) + "\n");
}

if (import.meta.main) {
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
  httpClient.close();
  clearTimeout(budget);
}
