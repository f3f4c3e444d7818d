/**
 * The lab as replicas: one lab in several processes, sharing its clients
 * through Redis. `main.ts` loads this file only with `--bus`
 * (`deno run -A main.ts --bus redis://127.0.0.1:6379`), from beside itself
 * or from the same base URL; without `--bus` it is never read or fetched.
 *
 * Each replica appends what it records to one Redis stream and reads what the
 * others append, keeping it as if recorded here (`LabState`'s `mirror…`
 * methods, the seam `main.ts` keeps); a notification for a client whose
 * stream another replica holds goes out through them. `docs/deployment.md`
 * tells how to run replicas, `launch.ts` starts a set on loopback.
 *
 * @module
 */

import { createClient, ErrorReply } from "npm:@redis/client@6.3.1";
import { z } from "npm:zod@4.6.7";
import {
  busName,
  CATALOG_KINDS,
  type ChangeNotification,
  clientIdentitySchema,
  ConfigError,
  type Delivery,
  deliverySchema,
  type LabClient,
  type LabState,
  lineWords,
  type Logger,
  type Peers,
  type ReplicaLink,
  sendFailed,
  type Step,
  type StepFacts,
  stepFactsSchema,
  stepSchema,
  withoutPassword,
} from "./main.ts";

// ---------------------------------------------------------------------------
// The bus's messages: what replicas tell each other through Redis
// ---------------------------------------------------------------------------

/** Redis keys: a capped stream all replicas append to and read; heartbeats. */
const BUS_KEYS = { events: "mcp-lab:events", replicas: "mcp-lab:replicas" };
/**
 * The most bytes an entry holds (its JSON, UTF-8): a step that would be
 * bigger is not shared, and an entry bigger than this is not the lab's own.
 */
export const BUS_MAX_ENTRY_BYTES = 2000;
/**
 * How many entries the stream keeps (about): Redis holds one in at most
 * `BUS_MAX_ENTRY_REDIS_BYTES`, so a full stream takes some 50 MB, inside the
 * 64 MB the launcher and compose give Redis, whatever clients send.
 */
export const BUS_MAX_EVENTS = 24_000;
/** Redis's memory for an entry of `BUS_MAX_ENTRY_BYTES`: 2,061 on 7.0.15. */
export const BUS_MAX_ENTRY_REDIS_BYTES = 2_100;
/**
 * What one client's steps may take on the stream, all replicas together:
 * past it, what the client does is kept by the replica that saw it, and
 * every replica says its view of that client is partial.
 */
export const BUS_CLIENT_BYTES = 1024 * 1024;
const BUS_TTL_SECONDS = 86_400;
/** Heartbeats: how often, and how long a silent replica counts as live. */
const BUS_HEARTBEAT_MS = 1000;
const BUS_LIVE_MS = 4000;
/** How long a replica waits for the others to deliver, or to catch up. */
const BUS_WAIT_MS = 1000;
/** How long a request waits for a replica still replaying the stream. */
const BUS_REPLAY_WAIT_MS = 30_000;
/** Entries read at once: many while replaying, fewer once following. */
const BUS_REPLAY_COUNT = 5000;
const BUS_FOLLOW_COUNT = 500;

/** A time a replica writes: since 2024, and at most a day of clock skew ahead. */
const busTime = z.number().int().min(Date.UTC(2024, 0, 1)).refine(
  (at) => at <= Date.now() + 86_400_000,
  "a time more than a day ahead",
);
/** A count, a version or a series number: whole, and within reach of a run. */
const busCount = z.number().int().min(0).max(1_000_000_000);

const countsSchema = z.object({ open: busCount, watching: busCount });

/** A step as a replica sends it: its time, its fields, bounded. */
const busStepSchema = stepSchema.extend({
  at: busTime,
  evidence: stepSchema.shape.evidence.extend({
    fields: z.record(
      busName,
      z.union([
        busName,
        z.number().min(-1e15).max(1e15),
        z.boolean(),
      ]).optional(),
    ).refine((fields) => Object.keys(fields).length <= 32, "too many fields")
      .optional(),
  }),
});

/** A message of one type, naming its sender (one object: quick to check). */
const sent = <Shape extends z.ZodRawShape>(shape: Shape) =>
  z.object({ ...shape, from: busName });

/** What one replica tells the others; each message names its sender. */
const busMessageSchema = z.discriminatedUnion("type", [
  sent({
    type: z.literal("step"),
    client: clientIdentitySchema.extend({ firstSeen: busTime }),
    listens: countsSchema,
    step: busStepSchema,
    facts: stepFactsSchema.extend({
      version: busCount.optional(),
      since: busCount.optional(),
      waited: z.number().min(0).max(86_400).optional(),
      catalog: stepFactsSchema.shape.catalog.unwrap().unwrap().max(
        CATALOG_KINDS.length,
      ).readonly().optional(),
      reviewVersion: busCount.min(1),
    }),
  }),
  sent({
    type: z.literal("series"),
    client: busName,
    series: busCount,
    started: z.boolean(),
    early: z.boolean(),
  }),
  sent({ type: z.literal("restart"), client: busName }),
  sent({
    type: z.literal("notifying"),
    client: busName,
    writing: z.boolean(),
  }),
  sent({
    type: z.literal("deliver"),
    request: busName,
    client: busName,
    notification: z.enum(["updated", ...CATALOG_KINDS]),
  }),
  sent({
    type: z.literal("delivered"),
    request: busName,
    delivery: deliverySchema,
  }),
  sent({ type: z.literal("released"), client: busName }),
  // The client went over its share of the bus: no replica sees all of it.
  sent({ type: z.literal("partial"), client: busName }),
]);

type BusMessage = z.output<typeof busMessageSchema>;
/** A message as sent: its sender is added on the way out. */
type BusSend = BusMessage extends infer M
  ? M extends BusMessage ? Omit<M, "from"> : never
  : never;

/** Orders two numbers written in digits, of any length. */
const compareDigits = (a: string, b: string) =>
  a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

/** Orders two stream ids, `ms-seq`: negative when `a` came first. */
function compareStreamIds(a: string, b: string): number {
  const [msA, seqA] = a.split("-");
  const [msB, seqB] = b.split("-");
  return compareDigits(msA, msB) || compareDigits(seqA, seqB);
}

/** A Redis connection that fails at once while Redis is away. */
function redisConnection(url: string, reconnect: () => boolean) {
  return createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 3000,
      reconnectStrategy: (retries: number) =>
        reconnect() && Math.min(100 * 2 ** retries, 2000),
    },
  });
}

type RedisConnection = ReturnType<typeof redisConnection>;

/** What `XINFO STREAM` tells of the stream (Redis 7; RESP3, a map). */
interface XInfoStream {
  length: number;
  "entries-added"?: number;
  "last-entry": [id: string, fields: unknown] | null;
}

/** What Redis answers with an error (full, read-only), unlike a lost link. */
const isRefusal = (error: unknown): error is Error =>
  error instanceof ErrorReply;

/**
 * Where the stream ends now (its last id, "0-0" when empty), and how many
 * events it dropped (its cap) before anyone reading it now could see them.
 */
async function streamHistory(redis: RedisConnection) {
  const command = ["XINFO", "STREAM", BUS_KEYS.events];
  const info = await redis.sendCommand(command).catch((error) => {
    if (isRefusal(error) && /no such key/i.test(error.message)) return null;
    throw error;
  }) as XInfoStream | null;
  const added = info?.["entries-added"] ?? 0;
  return {
    last: info?.["last-entry"]?.[0] ?? "0-0",
    trimmed: Math.max(0, added - (info?.length ?? 0)),
  };
}

/**
 * Makes room in a full Redis: drops the stream's older half (Redis takes an
 * `XTRIM` when full, as it frees memory); how many events went.
 */
async function halveStream(redis: RedisConnection): Promise<number> {
  const length = await redis.xLen(BUS_KEYS.events);
  if (length < 2) return 0;
  return await redis.xTrim(BUS_KEYS.events, "MAXLEN", Math.ceil(length / 2));
}

/** Settles when `promise` does, or after `ms` at most. */
function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(() => (clearTimeout(timer), resolve()));
  });
}

// ---------------------------------------------------------------------------
// Bounds: each client's share of the bus, room in a full Redis
// ---------------------------------------------------------------------------

/** Entries' bytes are counted as Redis holds them, in UTF-8. */
const UTF8 = new TextEncoder();

/** The lab's own steps, at most one per update: shared past any share. */
const LAB_STEPS: ReadonlySet<string> = new Set([
  "update",
  "notify",
  "catalog-change",
  "catalog-notify",
  "session-end",
]);
/** How many clients the shares remember; the oldest are forgotten first. */
const SHARES_KEPT = 10_000;

/** Past `SHARES_KEPT`, forgets the first key of an insertion-ordered map or set. */
function forgetOldest<K>(kept: Map<K, unknown> | Set<K>) {
  if (kept.size > SHARES_KEPT) kept.delete(kept.keys().next().value!);
}

/**
 * What each client's steps took on the stream, as this replica sees it (its
 * own and the others'), and which clients went past their share: what they
 * do next is kept by the replica that sees it, and no replica sees it all.
 */
class ClientShares {
  #spent = new Map<string, number>();
  #partial = new Set<string>();
  /** Clients marked partial, all told (the set forgets the oldest). */
  #partialClients = 0;

  /** Counts a step's `bytes`; whether it may go on the stream. */
  spend(client: string, bytes: number, kind: string): boolean {
    const spent = (this.#spent.get(client) ?? 0) + bytes;
    this.#spent.delete(client);
    this.#spent.set(client, spent);
    forgetOldest(this.#spent);
    return bytes <= BUS_MAX_ENTRY_BYTES &&
      (spent <= BUS_CLIENT_BYTES || LAB_STEPS.has(kind));
  }

  /** What the reports say once some clients went past their share. */
  caveats(): string[] {
    const count = this.#partialClients;
    return count === 0 ? [] : [
      `${count} client(s) went past their share of the bus (${
        BUS_CLIENT_BYTES / 1024 / 1024
      } MiB each, or a step over ${BUS_MAX_ENTRY_BYTES} bytes): what each did next is kept only by the replica that served it, so their verdicts may differ between replicas ([bus/partial] names them).`,
    ];
  }

  /** Marks the client partial; whether it was not yet. */
  mark(client: string): boolean {
    if (this.#partial.has(client)) return false;
    this.#partial.add(client);
    forgetOldest(this.#partial);
    this.#partialClients++;
    return true;
  }
}

/**
 * What a replica does when Redis answers out of memory (a Redis smaller than
 * the stream's cap, or full of other data): the stream's older half goes, one
 * trim at a time, so what clients do now still reaches every replica (a
 * replica started later misses that history, and says so). Once a trim did
 * not help, the next write refused again, none is tried until one succeeds.
 */
class RoomMaker {
  #trimming?: Promise<boolean>;
  #unproven = false;

  constructor(
    private readonly redis: RedisConnection,
    private readonly log: () => Logger | undefined,
  ) {}

  /** A write went through: a trim helped, or none was needed. */
  wrote() {
    this.#unproven = false;
  }

  /** Whether room was made after `error`, so the write may be tried again. */
  madeRoom(error: unknown): Promise<boolean> {
    if (!isRefusal(error) || !error.message.startsWith("OOM ")) {
      return Promise.resolve(false);
    }
    if (this.#unproven) return Promise.resolve(false);
    return this.#trimming ??= halveStream(this.redis).then((dropped) => {
      this.#unproven = dropped > 0;
      if (dropped > 0) {
        this.log()?.write("warn", {
          tag: "bus/full",
          words: "Redis was full: the stream's older half went to make room",
          fields: { dropped },
        });
      }
      return dropped > 0;
    }, () => false).finally(() => this.#trimming = undefined);
  }
}

// ---------------------------------------------------------------------------
// Update series across replicas: one claims each, a survivor takes it over
// ---------------------------------------------------------------------------

/** Where Redis holds the claim on a client's update series, by client id. */
const SERIES_KEY_PREFIX = "mcp-lab:series:";
/** How long a claim outlives the update it names: past any rival's timer. */
const SERIES_CLAIM_MARGIN_MS = 60_000;

/** One update series of a client: which one, and how many updates are left. */
type UpdateRun = Parameters<Peers["claim"]>[1];

/**
 * Claims a client's update series (KEYS[1]) for replica ARGV[1], in one step
 * no other replica can come between: it wins when no replica holds the
 * client's series, or only an older series, when it holds it itself, or when
 * the holder is ARGV[2] (a replica gone, taken over). The winner records the
 * series (ARGV[3]), how many updates are left (ARGV[4]) and when the next is
 * due (ARGV[5], ms since the epoch), for the replica that may take it over.
 */
const CLAIM_SERIES = `
local held = redis.call('HMGET', KEYS[1], 'owner', 'series')
local owner, series = held[1], tonumber(held[2])
if owner and owner ~= ARGV[1] and owner ~= ARGV[2]
  and series and series >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'series', ARGV[3],
  'remaining', ARGV[4], 'due', ARGV[5])
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return 1`;

/** A client's update series as claimed: the run, and when its next is due. */
interface SeriesClaim {
  client: LabClient;
  run: UpdateRun;
  due: number;
}

/**
 * Which replica makes each client's updates, decided in Redis: however many
 * replicas start a client's series at once, the one whose claim lands first
 * makes its updates, and the others leave it to that one. When it is gone,
 * one survivor claims the series from it and goes on where it stopped.
 */
class SeriesClaims {
  constructor(
    private readonly redis: RedisConnection,
    private readonly replica: string,
  ) {}

  /** Whether this replica makes the update due at `due`; `from`, a gone owner. */
  async claim({ client, run, due }: SeriesClaim, from = ""): Promise<boolean> {
    const ttl = Math.max(0, due - Date.now()) + SERIES_CLAIM_MARGIN_MS;
    const won = await this.redis.eval(CLAIM_SERIES, {
      keys: [SERIES_KEY_PREFIX + client.id],
      arguments: [this.replica, from, run.series, run.remaining, due, ttl]
        .map(String),
    });
    return won === 1;
  }

  /**
   * The series replica `gone` was making for these clients, with updates
   * left, that this replica claimed from it: each survivor tries, one wins.
   */
  async takeOver(gone: string, clients: LabClient[]): Promise<SeriesClaim[]> {
    const claimed = await Promise.all(clients.map(async (client) => {
      const [owner, series, remaining, due] = await this.redis.hmGet(
        SERIES_KEY_PREFIX + client.id,
        ["owner", "series", "remaining", "due"],
      );
      const claim = {
        client,
        run: { series: Number(series), remaining: Number(remaining) },
        due: Number(due),
      };
      const orphan = owner === gone && claim.run.remaining > 0 &&
        claim.run.series === client.updates.series;
      return orphan && await this.claim(claim, gone) ? [claim] : [];
    }));
    return claimed.flat();
  }
}

// ---------------------------------------------------------------------------
// Health: what went wrong on the bus, said once and in every report after
// ---------------------------------------------------------------------------

/**
 * What one replica knows went wrong with its bus: Redis lost (each time),
 * writes refused, events dropped before it started, messages it could not
 * send. Each is one line as it happens, and a caveat in every report after.
 */
class BusHealth {
  /** Messages this replica could not send while Redis was away or refusing. */
  dropped = 0;
  /** When the bus was lost, while it is. */
  lostSince?: number;
  /** Events the stream had dropped (its cap) before this replica started. */
  trimmedBefore = 0;
  /** Each time it was lost (the last ten): from when, for how long. */
  #outages: { from: number; seconds?: number }[] = [];
  /** The first write Redis refused while reachable (out of memory, say). */
  #refusal?: { at: number; message: string };

  constructor(
    private readonly replica: string,
    private readonly url: string,
    private readonly log: () => Logger | undefined,
  ) {}

  get refused(): boolean {
    return this.#refusal !== undefined;
  }

  /**
   * A write Redis answered with an error (full, read-only): said once. Every
   * replica's heartbeat is a write each second, so each one hears of it.
   */
  refusedWrite(error: Error) {
    if (this.lostSince || this.#refusal) return;
    this.#refusal = { at: Date.now(), message: lineWords(error.message) };
    this.log()?.writeOrStderr("error", {
      tag: "bus/refused",
      words: "Redis refused a write: the others no longer hear of what fails",
      fields: { reason: this.#refusal.message },
    });
  }

  lost(error: Error) {
    if (this.lostSince) return;
    this.lostSince = Date.now();
    this.#outages.push({ from: this.lostSince });
    this.#outages = this.#outages.slice(-10);
    this.log()?.writeOrStderr("error", {
      tag: "bus/lost",
      words:
        "Redis is unreachable: this replica goes on alone, the others no longer hear of its clients",
      fields: { bus: withoutPassword(this.url), reason: error.message },
    });
  }

  /** Redis is back after it was lost: whether it had been. */
  restored(): boolean {
    if (!this.lostSince) return false;
    const seconds = Math.round((Date.now() - this.lostSince) / 1000);
    this.#outages[this.#outages.length - 1].seconds = seconds;
    this.lostSince = undefined;
    this.log()?.write("warn", {
      tag: "bus/restored",
      words: "Redis is back: sharing again",
      fields: { dropped: this.dropped, seconds },
    });
    return true;
  }

  /**
   * What a report (and the gate) must say when this replica's view may be
   * partial: Redis refused writes (its own or its heartbeat), it lost Redis,
   * the stream had dropped events before it started, or clients went past
   * their share of the bus (`shares`).
   */
  caveats(shares: string[]): string[] {
    const refused = this.#refusal &&
      `Redis refused this replica's writes from ${
        new Date(this.#refusal.at).toISOString()
      } (${this.#refusal.message}): ${this.dropped} message(s) never reached the other replicas, and theirs may be missing here, so a client served by several replicas may be graded low.`;
    const trimmed = this.trimmedBefore > 0 &&
      `This replica started after the bus had dropped its ${this.trimmedBefore} oldest event(s) (the stream keeps about ${BUS_MAX_EVENTS}): clients that came before may be missing here or graded low, where replicas that saw them judge them whole.`;
    return [
      ...refused ? [refused] : [],
      ...trimmed ? [trimmed] : [],
      ...shares,
      ...this.#outages.map(({ from, seconds }) =>
        `Replica ${this.replica} lost its bus (Redis) at ${
          new Date(from).toISOString()
        } ${
          seconds === undefined ? "and has not got it back" : `for ${seconds} s`
        }: ${this.dropped} message(s) never reached the other replicas, and what they recorded meanwhile is missing here, so a client served by several replicas may be graded low.`
      ),
    ];
  }
}

// ---------------------------------------------------------------------------
// Replicas: one lab in several processes, through Redis (`--bus`)
// ---------------------------------------------------------------------------

/**
 * This replica's link to the others: what it records goes out on the
 * stream, what they record comes in and is kept as if recorded here, and a
 * notification for a client whose stream another replica holds goes out
 * through them. Redis lost later is one `[bus/lost]` line: the replica goes
 * on as one process until `[bus/restored]`, and its reports say so.
 */
export class ReplicaBus implements Peers, ReplicaLink {
  readonly replica = crypto.randomUUID().slice(0, 8);
  /** How many other replicas live, at the last heartbeat. */
  others = 0;
  #health: BusHealth;
  /** Settles once the stream as it was at start is applied here. */
  #replayed = Promise.withResolvers<void>();
  #caughtUp = false;
  #shares = new ClientShares();
  #room: RoomMaker;
  /** Since when this replica shares again (a fresh Redis knows no one). */
  #sharingSince = Date.now();
  #state?: LabState;
  #log?: Logger;
  #reader: RedisConnection;
  /** The last event applied here, and the one the stream held at start. */
  #applied = "0-0";
  #history = "0-0";
  #waiters: { id: string; done: () => void }[] = [];
  #replies = new Map<string, (delivery: Delivery) => void>();
  #known = new Set<string>();
  #heartbeat?: ReturnType<typeof setInterval>;
  #closed = false;
  #series: SeriesClaims;
  /** Clients evicted here while another replica served them. */
  #letGo = new Set<string>();

  constructor(readonly url: string, private readonly redis: RedisConnection) {
    this.#reader = redis.duplicate();
    this.#series = new SeriesClaims(redis, this.replica);
    this.#room = new RoomMaker(redis, () => this.#log);
    this.#health = new BusHealth(this.replica, url, () => this.#log);
  }

  /** Connects; a Redis that cannot be reached is one line, for exit 2. */
  static async connect(url: string): Promise<ReplicaBus> {
    let started = false;
    // At start a refusal is final; later the replica keeps trying.
    const redis = redisConnection(url, () => started);
    const bus = new ReplicaBus(url, redis);
    redis.on("error", (error: Error) => bus.#lost(error));
    bus.#reader.on("error", () => {});
    redis.on("ready", () => bus.#restored());
    try {
      await redis.connect();
      await bus.#reader.connect();
      const { last, trimmed } = await streamHistory(redis);
      [bus.#history, bus.#health.trimmedBefore] = [last, trimmed];
    } catch (error) {
      await Promise.allSettled([redis.destroy(), bus.#reader.destroy()]);
      const refused = error instanceof Deno.errors.NotCapable;
      throw new ConfigError(
        `--bus ${withoutPassword(url)}: ${
          refused ? "Deno's permissions refuse it" : "cannot reach Redis"
        }: ${lineWords((error as Error).message)}`,
      );
    }
    started = true;
    return bus;
  }

  /** Starts sharing `state`'s clients: replays the stream, then follows it. */
  attach(state: LabState, log: Logger) {
    this.#state = state;
    this.#log = log;
    state.peers = this;
    if (this.#history === "0-0") this.#replayedAll();
    this.#beat();
    this.#heartbeat = setInterval(() => this.#beat(), BUS_HEARTBEAT_MS);
    this.#follow();
  }

  /**
   * What `/healthz` shows: this replica, how many live, what was lost or
   * refused, whether its view may be partial (its reports' caveats), and
   * whether it has caught up with the stream (not, `/healthz` is 503).
   */
  status() {
    return {
      replica: this.replica,
      replicas: this.others + 1,
      lost: this.#health.lostSince !== undefined,
      dropped: this.#health.dropped,
      refused: this.#health.refused,
      partial: this.caveats().length > 0,
      ready: this.#caughtUp,
    };
  }

  /** A step goes on the stream while its client is within its share. */
  recorded(client: LabClient, step: Step, facts: StepFacts) {
    this.#letGo.delete(client.id);
    const { id, era, transport, name, version, protocolVersion, firstSeen } =
      client;
    const entry = this.#entry({
      type: "step",
      client: { id, era, transport, name, version, protocolVersion, firstSeen },
      listens: client.listens.here,
      step,
      facts: { ...facts, reviewVersion: client.reviewVersion },
    });
    const bytes = UTF8.encode(entry).length;
    if (this.#shares.spend(id, bytes, step.kind)) this.#write(entry);
    else if (this.#shares.mark(id)) {
      this.#log?.write("warn", {
        tag: "bus/partial",
        words:
          "the client went past its share of the bus: what it does next stays on the replica that sees it",
        fields: { client: id, bytes },
      });
      this.#send({ type: "partial", client: id });
    }
  }

  seriesChanged({ id, updates, progress }: LabClient) {
    const { series, started } = updates;
    const early = progress.closedBeforeUpdate;
    this.#send({ type: "series", client: id, series, started, early });
  }

  restarted = (client: LabClient) =>
    void this.#send({ type: "restart", client: client.id });

  notifying(client: LabClient, writing: boolean): Promise<void> {
    return this.#send({ type: "notifying", client: client.id, writing });
  }

  /**
   * The replica whose claim lands first makes the update; the others leave
   * the series to it. Alone (Redis away or refusing writes, which its
   * reports' caveats say), this replica makes it, as one process does.
   */
  claim(client: LabClient, run: UpdateRun, seconds: number): Promise<boolean> {
    if (this.#health.lostSince || this.#closed) return Promise.resolve(true);
    const due = Date.now() + seconds * 1000;
    return this.#series.claim({ client, run, due }).catch(() => true);
  }

  /**
   * Evicted here while another replica serves it: only this copy goes, no
   * end for everyone, and the others hear that this replica let go.
   */
  released(client: LabClient): boolean {
    const elsewhere = client.listens.elsewhere.size > 0;
    if (!elsewhere || this.#health.lostSince || this.#closed) return false;
    this.#letGo.add(client.id);
    this.#send({ type: "released", client: client.id });
    return true;
  }

  /** Delivered here, and by the others; lost only if no replica could. */
  async deliver(
    client: LabClient,
    notification: ChangeNotification,
  ): Promise<Delivery> {
    const here = await client.deliver(notification);
    if (this.#health.lostSince || this.others === 0) return here;
    const request = crypto.randomUUID();
    const replies = here.delivered ? undefined : this.#collect(request);
    await this.#send({
      type: "deliver",
      request,
      client: client.id,
      notification,
    });
    const elsewhere = (await replies)?.find((delivery) => delivery.delivered);
    return elsewhere ?? here;
  }

  /**
   * Settles once every event on the stream now has been applied here; while
   * the replica replays the stream it started on, up to 30 s for that first.
   */
  async catchUp(): Promise<void> {
    await settledWithin(this.#replayed.promise, BUS_REPLAY_WAIT_MS);
    if (this.#health.lostSince || this.#closed) return;
    const [last] = await this.redis.xRevRange(BUS_KEYS.events, "+", "-", {
      COUNT: 1,
    }).catch(() => null) ?? [];
    if (!last || compareStreamIds(last.id, this.#applied) <= 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, BUS_WAIT_MS);
      this.#waiters.push({
        id: last.id,
        done: () => (clearTimeout(timer), resolve()),
      });
    });
  }

  /** Leaves the set of live replicas and closes both connections. */
  async close() {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    await this.redis.zRem(BUS_KEYS.replicas, this.replica).catch(() => {});
    await Promise.allSettled([this.redis.destroy(), this.#reader.destroy()]);
  }

  #entry(message: BusSend): string {
    return JSON.stringify({ ...message, from: this.replica });
  }

  #send(message: BusSend): Promise<void> {
    return this.#write(this.#entry(message));
  }

  /** Appends an entry; in a full Redis, once more after making room. */
  #write(entry: string, retry = true): Promise<void> {
    if (this.#health.lostSince || this.#closed) {
      this.#health.dropped++;
      return Promise.resolve();
    }
    return this.redis.xAdd(BUS_KEYS.events, "*", { m: entry }, {
      TRIM: {
        strategy: "MAXLEN",
        strategyModifier: "~",
        threshold: BUS_MAX_EVENTS,
      },
    }).then(() => this.#room.wrote(), async (error: Error) => {
      if (retry && await this.#room.madeRoom(error)) {
        return await this.#write(entry, false);
      }
      this.#health.dropped++;
      if (isRefusal(error)) this.#refused(error);
    });
  }

  #refused(error: Error) {
    if (!this.#closed) this.#health.refusedWrite(error);
  }

  /** The other replicas' answers to a delivery, until all or a second. */
  #collect(request: string): Promise<Delivery[]> {
    const replies: Delivery[] = [];
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#replies.delete(request);
        resolve(replies);
      };
      const timer = setTimeout(done, BUS_WAIT_MS);
      this.#replies.set(request, (delivery) => {
        replies.push(delivery);
        if (delivery.delivered || replies.length >= this.others) done();
      });
    });
  }

  /** Reads the stream from its start, for as long as the lab runs. */
  async #follow() {
    while (!this.#closed) {
      const read = await this.#reader.xRead(
        { key: BUS_KEYS.events, id: this.#applied },
        {
          BLOCK: BUS_HEARTBEAT_MS,
          COUNT: this.#caughtUp ? BUS_FOLLOW_COUNT : BUS_REPLAY_COUNT,
        },
      ).catch(() => "failed" as const);
      if (read === "failed") {
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      for (const { messages } of read ?? []) {
        for (const { id, message } of messages) {
          this.#applied = id;
          this.#apply(message.m, compareStreamIds(id, this.#history) <= 0);
        }
      }
      // Nothing newer, or past where the stream ended at start: caught up.
      if (!read || compareStreamIds(this.#applied, this.#history) >= 0) {
        this.#replayedAll();
      }
      const waiting = this.#waiters;
      this.#waiters = waiting.filter(({ id, done }) =>
        compareStreamIds(id, this.#applied) > 0 || done()
      );
    }
  }

  /** The stream as it was at start is applied: ready, requests go on. */
  #replayedAll() {
    this.#caughtUp = true;
    this.#replayed.resolve();
  }

  /** One entry of the stream; `past` ones change state, never streams. */
  #apply(entry: string | undefined, past: boolean) {
    // Characters, not bytes: a bigger entry is no replica's, whatever its bytes.
    if (!entry || entry.length > BUS_MAX_ENTRY_BYTES || !this.#state) return;
    let parsed;
    try {
      parsed = busMessageSchema.safeParse(JSON.parse(entry));
    } catch {
      return;
    }
    if (!parsed.success || parsed.data.from === this.replica) return;
    const message = parsed.data;
    const state = this.#state;
    switch (message.type) {
      case "step": {
        const { client, listens, step, facts } = message;
        if (step.kind === "session-end") this.#letGo.delete(client.id);
        this.#shares.spend(client.id, entry.length, step.kind);
        state.mirrorStep(client, [message.from, listens], step, facts);
        break;
      }
      case "partial":
        this.#shares.mark(message.client);
        break;
      case "series": {
        const client = state.live(message.client);
        if (client) state.mirrorSeries(client, message, message.early);
        break;
      }
      case "restart": {
        const client = state.live(message.client);
        if (client) state.mirrorRestart(client);
        break;
      }
      case "released":
        this.#releasedThere(message.client, message.from);
        break;
      case "notifying":
        if (!past) state.mirrorNotifying(message.client, message.writing);
        break;
      case "deliver":
        if (!past) this.#deliverHere(message);
        break;
      case "delivered":
        this.#replies.get(message.request)?.(message.delivery);
        break;
    }
  }

  /**
   * Another replica let go of a client. When this one had too, no replica
   * serves it now: it ends here, for every replica.
   */
  #releasedThere(id: string, replica: string) {
    const client = this.#state?.live(id);
    if (!client) return;
    client.listens.elsewhere.delete(replica);
    if (this.#letGo.has(id) && client.listens.elsewhere.size === 0) {
      this.#state?.endClient(client, "evicted");
    }
  }

  /** Another replica's notification, on this replica's streams. */
  async #deliverHere(
    { request, client, notification }: Extract<BusMessage, { type: "deliver" }>,
  ) {
    const here = this.#state?.live(client);
    const delivery: Delivery = here
      ? await here.deliver(notification).catch(sendFailed)
      : { delivered: false, reason: "no such client here" };
    await this.#send({ type: "delivered", request, delivery });
  }

  /** Says this replica lives, counts the others, notices those gone. */
  async #beat() {
    if (this.#health.lostSince || this.#closed) return;
    const now = Date.now();
    try {
      const [, , live] = await this.redis.multi()
        .zAdd(BUS_KEYS.replicas, { score: now, value: this.replica })
        .zRemRangeByScore(BUS_KEYS.replicas, "-inf", now - BUS_LIVE_MS)
        .zRange(BUS_KEYS.replicas, 0, -1)
        .expire(BUS_KEYS.replicas, BUS_TTL_SECONDS)
        .expire(BUS_KEYS.events, BUS_TTL_SECONDS)
        .exec() as unknown as [unknown, unknown, string[]];
      this.#room.wrote();
      const others = new Set(live.filter((id) => id !== this.replica));
      this.others = others.size;
      // Until every replica has beaten once, absence proves nothing.
      const settled = now - this.#sharingSince > BUS_LIVE_MS;
      const gone = settled ? this.#known.difference(others) : new Set<string>();
      for (const replica of gone) {
        this.#state?.forgetReplica(replica);
        this.#log?.write("warn", {
          tag: "bus/replica-gone",
          words: "its streams are closed; its clients stay in the reports",
          fields: { replica },
        });
        this.#takeOver(replica);
      }
      this.#known = settled ? others : this.#known.union(others);
    } catch (error) {
      // Refused (Redis full): as for any write, once room was sought. Else
      // the connection's own error event says what went wrong.
      if (isRefusal(error) && !await this.#room.madeRoom(error)) {
        this.#refused(error);
      }
    }
  }

  /**
   * Takes over the update series a gone replica was making: one survivor
   * claims each and makes its updates left, the next when it was due.
   */
  async #takeOver(gone: string) {
    const state = this.#state;
    if (!state) return;
    const orphans = state.reportedClients().filter(({ endedReason, updates }) =>
      !endedReason && updates.started && !updates.timer
    );
    const taken = await this.#series.takeOver(gone, orphans).catch(() => []);
    for (const { client, run, due } of taken) {
      this.#log?.write("warn", {
        tag: "bus/takeover",
        words: "a gone replica's update series goes on here",
        fields: { replica: gone, updates: run.remaining },
      }, client);
      state.schedule(client, run, Math.max(0, due - Date.now()) / 1000);
    }
  }

  /** What a report must say when this replica's view may be partial. */
  caveats(): string[] {
    return this.#health.caveats(this.#shares.caveats());
  }

  #lost(error: Error) {
    if (!this.#closed && this.#state) this.#health.lost(error);
  }

  #restored() {
    if (!this.#closed && this.#health.restored()) {
      this.#sharingSince = Date.now();
    }
  }
}
