/**
 * MCP subscription probe: does a server deliver resource updates?
 *
 * The client side of the MCP resource subscription lab (`main.ts`). It
 * connects to any MCP server in either protocol era, reads a resource,
 * subscribes (or listens), waits for the update, re-reads it, unsubscribes
 * and watches for stray notifications, then prints one `key value` line per
 * fact, a JSON object, or a Markdown report with a sequence diagram. Its
 * exit status says how far the server got. With `--catalog` it also checks
 * that a change to the server's tools, prompts or resources list reaches
 * it: listed, notified (`list_changed`), listed again with the difference.
 *
 * Run it on its own, from a checkout or from its URL, or through the lab:
 *
 * ```sh
 * deno run -A probe.ts --url http://127.0.0.1:8080/mcp --uri review://pr/42
 * deno run -A probe.ts --stdio -- node server.js
 * deno run -A main.ts probe --url http://127.0.0.1:8089/mcp
 * ```
 *
 * `--help` prints every flag and exit status; `docs/probe.md` is the manual.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import {
  Client,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  parseJSONRPCMessage,
  type Prompt,
  type RequestId,
  type Resource,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
  type SubscriptionFilter,
  type Tool,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import {
  boundedLines,
  CATALOG_KINDS,
  type CatalogKind,
  cell,
  ConfigError,
  type Era,
  isEventStream,
  jsonText,
  LAB_VERSION,
  type LabTransportKind,
  lineText,
  lineValue,
  MARK,
  mermaidText,
  parseFlags,
  readEnvironment,
  REVIEW_URI,
  whenStreamEnds,
  within,
} from "./main.ts";

// ---------------------------------------------------------------------------
// Options, levels, error codes and exit statuses, the result
// ---------------------------------------------------------------------------

/** Why a probe did not get to level 6, as `error-code` says it. */
export type ProbeErrorCode =
  | "unreachable"
  | "not-mcp"
  | "auth-required"
  | "subscribe-not-advertised"
  | "subscribe-refused"
  | "resource-not-found"
  | "notification-timeout"
  | "reread-unchanged"
  | "stream-closed"
  | "call-failed"
  | "change-failed"
  | "too-large"
  | "catalog-not-listed"
  | "catalog-not-notified"
  | "catalog-unchanged";

/** The exit status of each error code; 0 is no error code, 2 bad input. */
export const PROBE_EXIT_STATUS: Record<ProbeErrorCode, number> = {
  "unreachable": 10,
  "not-mcp": 11,
  "auth-required": 12,
  "subscribe-not-advertised": 13,
  "subscribe-refused": 14,
  "resource-not-found": 15,
  "notification-timeout": 16,
  "reread-unchanged": 17,
  "stream-closed": 18,
  "call-failed": 19,
  "change-failed": 20,
  "too-large": 21,
  "catalog-not-listed": 22,
  "catalog-not-notified": 23,
  "catalog-unchanged": 24,
};

const PROBE_LEVEL_NAMES = [
  "no connection",
  "connected",
  "advertises resources.subscribe",
  "read the resource",
  "subscription accepted",
  "notification received",
  "re-read shows the change",
  "stops cleanly",
] as const;

/** What a 2026-07-28 listen asks to hear each list's changes with. */
const CATALOG_LISTEN_FLAGS = {
  tools: "toolsListChanged",
  prompts: "promptsListChanged",
  resources: "resourcesListChanged",
} as const satisfies Record<CatalogKind, string>;

/** The catalog check's grade, per list; the catalog's is its lowest list's. */
const SERVER_CATALOG_LEVEL_NAMES = [
  "not listed",
  "listed",
  "notified",
  "listed again with a difference",
] as const;

/** The error code of each catalog level short of the top one. */
const CATALOG_ERROR_CODES = [
  "catalog-not-listed",
  "catalog-not-notified",
  "catalog-unchanged",
] as const satisfies ProbeErrorCode[];

/** `--max-bytes` unless given: 4 MiB, the SDK's own bound on a request body. */
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

/** How long the probe listens for stray notifications after it stops. */
const QUIET_GRACE_MS = 1000;

/** How much of a `--change` command's output the report keeps. */
const CHANGE_OUTPUT_LIMIT = 4000;

/** How many distinct unsolicited URIs the result names (all are counted). */
const UNSOLICITED_URIS_KEPT = 5;
/** How many unchanged re-reads the result keeps with their text. */
const UNCHANGED_KEPT = 5;
/**
 * How many bytes of the resource's texts the result keeps, as JSON shows
 * them (the lines and `--json`): 1 MiB, shared evenly by the texts it can
 * keep (the first read's, `--count` updates', `UNCHANGED_KEPT` unchanged
 * re-reads'), each cut to its share. A flood of notifications of a 1 MB
 * resource printed six whole texts, 6 MB.
 */
const TEXTS_KEPT_BYTES = 1024 * 1024;
/** The most characters of one step's text (a step may quote the server). */
const STEP_KEPT = 1000;
/** How many names of a server's extra fields the result keeps, each cut to `NAME_KEPT` characters. */
const NAMES_KEPT = 10;
const NAME_KEPT = 40;
/** How much of inline content that differs is shown, from the first difference. */
const INLINE_SHOWN = 40;
/**
 * How deep inline structured content may nest to be compared: sorting its
 * keys recurses, and a server's 200,000 levels would overflow the stack.
 */
const INLINE_DEPTH_KEPT = 1000;
/**
 * How many steps a run keeps (and shows as progress): a flood of
 * notifications makes two steps per re-read, and the output stays bounded.
 */
const STEPS_KEPT = 300;

/** What the probe was asked to do, checked before it connects. */
export interface ProbeOptions {
  /** The Streamable HTTP endpoint, or none for `--stdio`. */
  url?: URL;
  /** The server command for `--stdio`: program, then its arguments. */
  command?: string[];
  uri: string;
  /** The URI was not given: the lab's own resource was assumed. */
  uriDefaulted: boolean;
  era: "auto" | Era;
  timeoutSeconds: number;
  /** The most bytes one message (one line, one SSE event, one body) may hold. */
  maxBytes: number;
  count: number;
  call?: { name: string; arguments: Record<string, unknown> };
  /** A shell command that changes the resource, run after subscribing. */
  change?: string;
  /**
   * Another endpoint of the same deployment (a replica): the `--call` is
   * made there, on a connection of its own, not on the one that listens.
   */
  changeVia?: URL;
  skipListCheck: boolean;
  /** 2026-07-28: ask for the content in each notification (SEP-3119). */
  embed: boolean;
  /** The catalog's lists to watch for a change (`--catalog`); empty for none. */
  catalog: CatalogKind[];
  /** Watch the catalog alone: no resource read, subscribed to or re-read. */
  catalogOnly: boolean;
  /** Also try to watch a URI the server does not serve (`--watch-gate`). */
  watchGate: boolean;
  /** And one it refuses to read (`--unreadable-uri`, which implies the gate). */
  unreadableUri?: string;
  /**
   * `--server-facts SECONDS`: once the rest is done, which eras the server
   * speaks; over HTTP, how long it keeps an idle stream open (up to
   * SECONDS) and how many listens it takes at once; unset for none.
   */
  serverFacts?: number;
  headers: Record<string, string>;
  /** Sent as a bearer token; never printed. */
  authToken?: string;
  json: boolean;
  /** A file for the Markdown report, or "-" for stdout. */
  report?: string;
}

/** One thing that happened, from the probe's side, for the diagram. */
interface ProbeStep {
  /** Seconds since the probe started. */
  at: number;
  from: "probe" | "server" | "note";
  text: string;
}

/**
 * One notification for the watched URI: when it came and what the re-read
 * after it showed. One without a change does not count as an update.
 */
interface ProbeUpdate {
  uri: string;
  afterSeconds: number;
  final: string | null;
  changed: boolean | null;
  /** What the notification carried beside `uri` and `_meta`. */
  inline: InlineContent;
  /** It came while `--change` ran, and was re-read then. */
  duringChange?: boolean;
}

/** Where a notification put the resource's content, if anywhere. */
type InlineShape = "sep-3119" | "fastrmcp";

/**
 * Content a notification carried, compared with the re-read after it. Only
 * its size and, when it differs, a few characters are kept.
 */
interface InlineContent {
  /**
   * `not-compared`: the re-read failed; `uri-mismatch`, `subscription-mismatch`:
   * the content names another URI, or the notification another subscription,
   * than the re-read is of, so the two are not compared.
   */
  status:
    | "none"
    | "matches-reread"
    | "differs-from-reread"
    | "not-compared"
    | "uri-mismatch"
    | "subscription-mismatch"
    | "too-deep";
  shape: InlineShape | null;
  mimeType: string | null;
  /** The inline text's length in UTF-16 characters and in UTF-8 bytes. */
  chars: number;
  bytes: number;
  /** Where it first differs from the re-read, and the inline text from there. */
  differsAt?: number;
  inlineThere?: string;
  /** Differs, and no later notification for the URI can explain it. */
  defect: boolean;
  /** `too-deep`: how deep the structured content nests, over `INLINE_DEPTH_KEPT`. */
  depth?: number;
  /** On a mismatch: the URI the content named, the subscription the notification did, as sent (cut). */
  contentUri?: string;
  subscription?: string;
  /** Without recognised content: the other params' names, bounded. */
  extraParams: string[];
}

/** What the `--change` command did. */
interface ProbeChange {
  command: string;
  /** Null when it could not start or was stopped at the timeout. */
  exitCode: number | null;
  seconds: number;
  /** Its stdout and stderr together, at most `CHANGE_OUTPUT_LIMIT` characters. */
  output: string;
  error?: string;
}

/** A list as the catalog check keeps it: its size and its first names. */
interface CatalogList {
  count: number;
  /** The first `NAMES_KEPT` names (URIs, of resources), each cut, then how many more. */
  names: string[];
}

/** What the catalog check found of one list. */
export interface CatalogListResult {
  level: number;
  levelName: string;
  missing: string;
  /** Whether the server advertises `listChanged` for the list. */
  listChanged: boolean;
  /** 2026-07-28: whether the listen's acknowledgement honoured the list's flag; null in 2025. */
  asked: boolean | null;
  /** The list at first, and the last time it was listed again; null when not. */
  first: CatalogList | null;
  again: CatalogList | null;
  /** Notifications of a change to the list, counted once the change began. */
  notifications: number;
  /** When the first of them came, in seconds since the change began. */
  notifiedAfter: number | null;
  /** Lists again after a notification that held what the first did. */
  unchangedRelists: number;
  /** Names `again` holds and `first` did not, and the other way round, bounded. */
  added: string[];
  removed: string[];
}

/** The catalog check: its lowest list's grade, and each list's. */
export interface CatalogResult {
  level: number;
  levelName: string;
  missing: string;
  kinds: Partial<Record<CatalogKind, CatalogListResult>>;
}

/**
 * How a server answered a watch on a URI no caller should be let watch: one
 * it does not serve, or one it refuses to read.
 */
export interface WatchGateCheck {
  /** The URI, as the probe sent it. */
  uri: string;
  /** A read of it first: refused, as it should be, or served (no test then). */
  read: "refused" | "served";
  /**
   * `accepted`: the subscribe or listen went through; `refused`: an error
   * answered it; `filtered` (2026-07-28): the listen was acknowledged
   * without the URI; null when the read was served.
   */
  watch: "accepted" | "refused" | "filtered" | null;
  /** The read's or the watch's answer, as the lines show it. */
  detail: string;
}

/** `--watch-gate`: the unknown URI's check, and `--unreadable-uri`'s. */
export interface WatchGateResult {
  unknownUri: WatchGateCheck;
  unreadableUri: WatchGateCheck | null;
}

/** How an idle stream the probe held ended, measured from its opening. */
export interface StreamLifetime {
  /**
   * `graceful`: the server ended it (a listen with its result as the last
   * frame, a GET stream with a clean end); `abrupt`: the connection dropped,
   * or a listen closed without its result; `open-at-bound`: still open when
   * the probe stopped holding it; `not-opened`: never opened (`detail`).
   */
  ended: "graceful" | "abrupt" | "open-at-bound" | "not-opened";
  /** Seconds from opening to its end, or to the bound; null when not opened. */
  seconds: number | null;
  detail: string;
}

/** `--server-facts`: the server's conduct, reported and never graded. */
export type ServerFacts = {
  /** The most seconds an idle stream was held (`--server-facts`'s value). */
  bound: number;
  /** Whether the server answers each era's opening, and its answer. */
  eras: Record<Era, { spoken: boolean; detail: string }>;
  /** An idle 2025 GET stream of a session of the probe's own; null over stdio. */
  getStream: StreamLifetime | null;
  /** An idle 2026-07-28 listen on the watched URI; null over stdio. */
  listen: StreamLifetime | null;
  /** Whether the listen ended with its result: `not-seen` when it did not end. */
  gracefulListenEnd: "yes" | "no" | "not-seen";
  /**
   * Listens held open at once before one was refused (`refusal`), or
   * `atLeast` when all `LISTEN_CAP_TRIED` were taken; null when the server
   * does not speak 2026-07-28, or over stdio.
   */
  listenCap:
    | {
      accepted: number;
      atLeast: boolean;
      refusal: { code: number | null; message: string } | null;
    }
    | null;
};

/** Everything a probe found, in every output form (`--json` is this). */
export interface ProbeResult {
  probe: string;
  target: string;
  transport: LabTransportKind;
  /** The watched resource; null with `--catalog-only`. */
  uri: string | null;
  era: Era | null;
  protocolVersion: string | null;
  server: { name: string; version: string } | null;
  capabilities: { subscribe: boolean; listChanged: boolean } | null;
  /** Whether `resources/list` names the URI; null when not checked. */
  resourceFound: boolean | null;
  initial: string | null;
  subscribed: boolean;
  /** 2026-07-28: the filter the acknowledgement honoured, as it came. */
  acknowledged: unknown;
  /** `--embed`: asked with the listen, or unavailable in the 2025 era. */
  embed: "asked" | "unavailable" | null;
  call: { name: string; ok: boolean; error?: string } | null;
  /** The `--change` command as it ran, its output cut to a few KB. */
  change: ProbeChange | null;
  /**
   * `--change-via`: where the `--call` was made, and whether its update
   * reached the stream held through the target (null: the call was not made).
   */
  changeVia: { url: string; delivered: boolean | null } | null;
  /** Updates asked for with `--count`: notifications whose re-read changed. */
  expectedUpdates: number;
  /**
   * Notifications for the URI whose re-read changed, and the first
   * `UNCHANGED_KEPT` whose re-read did not, in order.
   */
  updates: ProbeUpdate[];
  /** How many texts the result keeps were cut to their share of `TEXTS_KEPT_BYTES`, and that share; null for none. */
  textsCut: { count: number; bytesEach: number } | null;
  /** Every re-read that showed no change, kept or not. */
  unchangedNotifications: number;
  /** Of those, how many came before the first change. */
  unchangedBeforeChange: number;
  /** Notifications for the URI that came while a re-read was already due. */
  collapsedNotifications: number;
  /** Inline content that contradicts the server's own re-read, in words. */
  inlineDefect: string | null;
  /** Notifications for a URI the probe did not subscribe to. */
  unsolicited: { count: number; uris: string[] };
  unsubscribed: boolean | null;
  /** FastRMCP's dialect, reported and never graded. */
  nonStandard: {
    /** The names of the fields a `resources/subscribe` result carried. */
    subscribeResult: string[] | null;
    /** `too-large`: the answer was over `--max-bytes`, dropped unread. */
    listSubscriptions: "supported" | "unsupported" | "too-large" | null;
    /** Set when only `resources/unsubscribe {subscriptionId}` was accepted. */
    unsubscribedBy: "subscriptionId" | null;
  };
  /** No notification within a grace period after unsubscribing. */
  quietAfterStop: boolean | null;
  /** `--catalog`: whether a change to the lists reached the probe; else null. */
  catalog: CatalogResult | null;
  /** `--watch-gate`: who may watch what; never part of the level. */
  watchGate: WatchGateResult | null;
  /** `--server-facts`: eras, stream lifetimes, the listen cap; never graded. */
  serverFacts: ServerFacts | null;
  level: number;
  levelName: string;
  missing: string;
  errorCode: ProbeErrorCode | null;
  exitStatus: number;
  error: { message: string; code?: number; wwwAuthenticate?: string } | null;
  steps: ProbeStep[];
}

// ---------------------------------------------------------------------------
// Flags and help
// ---------------------------------------------------------------------------

/** The probe's flags, each checked with a one-line reason. */
const probeFlagsSchema = z.object({
  url: z.string().optional(),
  uri: z.string().min(1, "--uri must not be empty").optional(),
  era: z.enum(["auto", "2025", "2026-07-28"], {
    error: "--era must be auto, 2025 or 2026-07-28",
  }).default("auto"),
  timeout: z.string().regex(/^\d+(\.\d+)?$/, {
    error: "--timeout must be a number of seconds above 0",
  }).transform(Number).pipe(
    z.number().positive("--timeout must be above 0").max(
      3600,
      "--timeout must be at most 3600 seconds",
    ),
  ).default(30),
  "max-bytes": z.string().regex(/^\d{1,10}$/, {
    error: "--max-bytes must be a whole number of bytes",
  }).transform(Number).pipe(
    z.number().min(1024, "--max-bytes must be at least 1024").max(
      1024 ** 3,
      "--max-bytes must be at most 1073741824 (1 GiB)",
    ),
  ).default(DEFAULT_MAX_BYTES),
  count: z.string().regex(/^\d{1,3}$/, {
    error: "--count must be an integer from 1 to 100",
  }).transform(Number).pipe(
    z.number().min(1, "--count must be at least 1").max(
      100,
      "--count must be at most 100",
    ),
  ).default(1),
  call: z.string().min(1).optional(),
  "call-args": z.string().optional(),
  change: z.string().trim().min(1, "--change must not be empty").optional(),
  "change-via": z.string().optional(),
  "skip-list-check": z.boolean().default(false),
  embed: z.boolean().default(false),
  catalog: z.string().optional(),
  "catalog-only": z.boolean().default(false),
  "watch-gate": z.boolean().default(false),
  "unreadable-uri": z.string().min(1, "--unreadable-uri must not be empty")
    .optional(),
  "server-facts": z.string().regex(/^\d+(\.\d+)?$/, {
    error: "--server-facts must be a number of seconds above 0",
  }).transform(Number).pipe(
    z.number().positive("--server-facts must be above 0").max(
      3600,
      "--server-facts must be at most 3600 seconds",
    ),
  ).optional(),
  header: z.array(z.string()).default([]),
  "auth-token": z.string().optional(),
  json: z.boolean().default(false),
  report: z.string().min(1).optional(),
  stdio: z.boolean().default(false),
});

/** An http(s) URL flag, or a one-line reason. */
function httpUrl(flag: string, text: string): URL {
  const candidate = URL.parse(text);
  if (!candidate || !["http:", "https:"].includes(candidate.protocol)) {
    throw new ConfigError(
      `${flag} ${JSON.stringify(text)} is not an http(s) URL`,
    );
  }
  return candidate;
}

/** Reads `--call-args`: a JSON object, or a one-line reason. */
function callArguments(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `--call-args is not valid JSON: ${(error as Error).message}`,
    );
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError("--call-args must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** Reads `--catalog`: the catalog's lists, comma-separated, in their order. */
function catalogKinds(text: string | undefined): CatalogKind[] {
  if (text === undefined) return [];
  const kinds = text.split(",").map((kind) => kind.trim());
  if (!kinds.every((kind) => CATALOG_KINDS.some((known) => known === kind))) {
    throw new ConfigError(
      `--catalog ${
        JSON.stringify(text)
      } is not a comma-separated list of tools, prompts, resources`,
    );
  }
  return CATALOG_KINDS.filter((kind) => kinds.includes(kind));
}

/** With `--catalog-only` no resource is watched: its flags are refused. */
function checkCatalogOnly(flags: z.infer<typeof probeFlagsSchema>) {
  if (!flags["catalog-only"]) return;
  if (flags.catalog === undefined) {
    throw new ConfigError("--catalog-only needs --catalog LISTS");
  }
  const resourceFlags = {
    uri: flags.uri !== undefined,
    count: flags.count !== 1,
    embed: flags.embed,
    "skip-list-check": flags["skip-list-check"],
  };
  const given = Object.entries(resourceFlags).find(([, set]) => set);
  if (given) {
    throw new ConfigError(
      `--catalog-only watches no resource: --${given[0]} does not go with it`,
    );
  }
}

/** `Name: value` header flags, checked as HTTP allows. */
function headerFlags(flags: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const flag of flags) {
    const match = flag.match(/^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/);
    if (!match || /[\r\n]/.test(match[2])) {
      throw new ConfigError(
        `--header ${JSON.stringify(flag)} is not "Name: value"`,
      );
    }
    headers[match[1]] = match[2];
  }
  return headers;
}

/**
 * `--timeout -1` as `--timeout=-1`, so that a negative number reaches the
 * value check (and its clear message) instead of reading as a flag.
 */
function withNegativeValues(args: string[]): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const next = args[i + 1];
    if (
      /^--[a-z-]+$/.test(args[i]) && next !== undefined && /^-\d/.test(next)
    ) {
      joined.push(`${args[i]}=${next}`);
      i++;
    } else {
      joined.push(args[i]);
    }
    if (args[i] === "--") {
      joined.push(...args.slice(i + 1));
      break;
    }
  }
  return joined;
}

/**
 * Reads `probe` flags and checks them before anything connects. Throws a
 * `ConfigError` with one line naming what is wrong.
 */
export function parseProbeArgs(
  args: string[],
  env: Record<string, string | undefined>,
): ProbeOptions | "help" {
  const { values, positionals } = parseFlags(
    withNegativeValues(args),
    {
      help: { type: "boolean" },
      url: { type: "string" },
      uri: { type: "string" },
      era: { type: "string" },
      timeout: { type: "string" },
      "max-bytes": { type: "string" },
      count: { type: "string" },
      call: { type: "string" },
      "call-args": { type: "string" },
      change: { type: "string" },
      "change-via": { type: "string" },
      "skip-list-check": { type: "boolean" },
      embed: { type: "boolean" },
      catalog: { type: "string" },
      "catalog-only": { type: "boolean" },
      "watch-gate": { type: "boolean" },
      "unreadable-uri": { type: "string" },
      "server-facts": { type: "string" },
      header: { type: "string", multiple: true },
      "auth-token": { type: "string" },
      json: { type: "boolean" },
      report: { type: "string" },
      stdio: { type: "boolean" },
    },
    { allowPositionals: true, help: "probe --help" },
  );
  if (values.help) return "help";
  const { help: _help, ...rest } = values;
  const parsed = probeFlagsSchema.safeParse(rest);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues[0].message);
  }
  const flags = parsed.data;
  if (flags.stdio === (flags.url !== undefined)) {
    throw new ConfigError(
      "give either --url URL or --stdio -- COMMAND [ARGS...]",
    );
  }
  if (flags.stdio && positionals.length === 0) {
    throw new ConfigError("--stdio needs the server command after --");
  }
  if (!flags.stdio && positionals.length > 0) {
    throw new ConfigError(
      `unexpected argument ${JSON.stringify(positionals[0])}; see probe --help`,
    );
  }
  const url = flags.url === undefined ? undefined : httpUrl("--url", flags.url);
  if (flags["call-args"] !== undefined && flags.call === undefined) {
    throw new ConfigError("--call-args needs --call TOOL");
  }
  const changeVia = flags["change-via"] === undefined
    ? undefined
    : httpUrl("--change-via", flags["change-via"]);
  if (changeVia && (flags.call === undefined || flags.stdio)) {
    throw new ConfigError(
      "--change-via URL goes with --url and --call TOOL: the tool is called there",
    );
  }
  checkCatalogOnly(flags);
  return {
    url,
    command: flags.stdio ? positionals : undefined,
    uri: flags.uri ?? REVIEW_URI,
    uriDefaulted: flags.uri === undefined,
    era: flags.era,
    timeoutSeconds: flags.timeout,
    maxBytes: flags["max-bytes"],
    count: flags.count,
    call: flags.call === undefined ? undefined : {
      name: flags.call,
      arguments: callArguments(flags["call-args"]),
    },
    change: flags.change,
    changeVia,
    skipListCheck: flags["skip-list-check"],
    embed: flags.embed,
    catalog: catalogKinds(flags.catalog),
    catalogOnly: flags["catalog-only"],
    watchGate: flags["watch-gate"] || flags["unreadable-uri"] !== undefined,
    unreadableUri: flags["unreadable-uri"],
    serverFacts: flags["server-facts"],
    headers: headerFlags(flags.header),
    authToken: flags["auth-token"] ?? (env.MCP_PROBE_AUTH_TOKEN || undefined),
    json: flags.json,
    report: flags.report,
  };
}

/** The `probe --help` text. */
function probeHelpText(): string {
  return [
    `MCP subscription probe ${LAB_VERSION}: does a server deliver resource updates?`,
    "",
    "Usage: deno run -A probe.ts --url URL [--uri URI] [options]",
    "       deno run -A probe.ts --stdio [options] -- COMMAND [ARGS...]",
    "       (or main.ts probe in place of probe.ts, with the same flags)",
    "",
    "  --url URL            Streamable HTTP endpoint of the server",
    "  --stdio              spawn the server given after -- and talk over stdio",
    `  --uri URI            resource to watch (default ${REVIEW_URI}, this lab's)`,
    "  --era ERA            auto (default: discover, then initialize), 2025, 2026-07-28",
    "  --timeout SECONDS    how long to wait for each update, and for connecting, each",
    "                       request and each whole list, every page (default 30)",
    `  --max-bytes N        the most one message from the server may hold (default ${DEFAULT_MAX_BYTES})`,
    "  --count N            updates to wait for: notifications whose re-read changed (default 1)",
    "  --call TOOL          call this tool after subscribing (servers whose updates start from a tool)",
    "  --call-args JSON     its arguments, a JSON object",
    "  --change-via URL     make the --call through this endpoint (another replica of the",
    "                       deployment), on a connection of its own: is the update delivered",
    "                       across replicas, or lost?",
    "  --change CMD         run CMD in the shell after subscribing (servers whose resources",
    "                       follow files or outside state); bounded by --timeout",
    "  --skip-list-check    do not require the URI in resources/list (dynamic resources)",
    "  --embed              2026-07-28: listen with embedResources (content in each update,",
    "                       SEP-3119); the probe still re-reads to compare",
    "  --catalog LISTS      also watch these lists change (tools,prompts,resources): list,",
    "                       wait for notifications/<list>/list_changed, list again",
    "  --catalog-only       watch the catalog alone: no resource read or subscribed to",
    "  --watch-gate         at the end, also try to watch a URI the server does not serve",
    "                       (a subscribe, or a listen); reported, never graded",
    "  --unreadable-uri URI and one the server refuses to read (implies --watch-gate)",
    "  --server-facts SECONDS  at the end: the eras the server speaks; over HTTP, how",
    "                       long it keeps an idle GET stream and listen open (held up",
    "                       to SECONDS), the listens it takes at once; never graded",
    '  --header "N: v"      extra HTTP header, repeatable',
    "  --auth-token TOKEN   bearer token (visible in process lists; prefer MCP_PROBE_AUTH_TOKEN)",
    "  --json               print one JSON object instead of key value lines",
    "  --report FILE        also write a Markdown report (- for stdout instead of lines)",
    "  --help               print this help",
    "",
    "Exit status: 0 with no error code (level 6 or 7, every update --count asks",
    "for, each --catalog list at catalog level 3), 2 for bad flags; otherwise the",
    "error code's",
    `status: ${
      Object.entries(PROBE_EXIT_STATUS).map(([code, status]) =>
        `${status} ${code}`
      ).join(", ")
    }.`,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------
// Content in an update: the read's text, inline content, shown text
// ---------------------------------------------------------------------------

/** The text of a read: text contents joined, blobs named by size. */
function contentsText(
  contents: { text?: string; blob?: string }[],
): string {
  return contents.map((content) =>
    content.text ?? `[blob: ${content.blob?.length ?? 0} base64 characters]`
  ).join("\n");
}

/** A notification's content, whole until the re-read is compared with it. */
interface InlineSeen {
  fact: InlineContent;
  /** Text, a blob named by size as reads are, structured content as JSON. */
  text: string | null;
  structured: boolean;
  /** FastRMCP's `content.uri` and `subscription_id`, as text, when sent. */
  contentUri?: string;
  subscription?: string;
}

/** A value a server chose as the probe keeps it: text, cut to 500 characters. */
function claimed(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  return (typeof value === "string" ? value : jsonText(value)).slice(0, 500);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The content in a notification's params: flat (SEP-3119, first: what
 * `--embed` asks for) or in a `content` object (FastRMCP); without either,
 * the other params' names.
 */
function inlineSeen(params: Record<string, unknown>): InlineSeen {
  const { content } = params;
  const flat = carriesContent(params);
  const source = !flat && isRecord(content) ? content : params;
  const found = carriesContent(source);
  const extras = Object.keys(params).filter((key) =>
    !["uri", "_meta"].includes(key)
  );
  const structured = typeof source.text !== "string" &&
    typeof source.blob !== "string";
  const depth = structured ? depthOf(source.structuredContent) : 0;
  // Refused, not compared: measured as sent, never walked by recursion.
  const tooDeep = found && depth > INLINE_DEPTH_KEPT;
  const text = found && !tooDeep ? contentText(source) : null;
  const measured = tooDeep
    ? JSON.stringify(source.structuredContent)
    : text ?? "";
  const fact: InlineContent = {
    status: tooDeep ? "too-deep" : "none",
    shape: found ? flat ? "sep-3119" : "fastrmcp" : null,
    mimeType: typeof source.mimeType === "string"
      ? source.mimeType.slice(0, 100)
      : null,
    chars: measured.length,
    bytes: new TextEncoder().encode(measured).length,
    defect: false,
    extraParams: found ? [] : boundedNames(extras),
    ...tooDeep && { depth },
  };
  return {
    fact,
    text,
    structured,
    contentUri: source === content ? claimed(source.uri) : undefined,
    subscription: claimed(params.subscription_id),
  };
}

/** Whether params (or a `content` object) carry content in a shape the probe knows. */
function carriesContent(source: Record<string, unknown>): boolean {
  return typeof source.text === "string" || typeof source.blob === "string" ||
    source.structuredContent !== undefined;
}

/** How deep a JSON value nests (0 for a scalar), walked without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const inner of Object.values(item)) stack.push([inner, depth + 1]);
  }
  return deepest;
}

/** Inline content as a read's `contentsText` would give it. */
function contentText(source: Record<string, unknown>): string | null {
  if (typeof source.text === "string") return source.text;
  if (typeof source.blob === "string") {
    return contentsText([{ blob: source.blob }]);
  }
  return source.structuredContent === undefined
    ? null
    : sortedJson(source.structuredContent);
}

/** JSON with every object's keys sorted: their order is no difference. */
function sortedJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, inner: unknown) =>
      isRecord(inner)
        ? Object.fromEntries(
          Object.keys(inner).sort().map((key) => [key, inner[key]]),
        )
        : inner,
  ) ?? "null";
}

/** Names a server chose: `NAMES_KEPT`, each cut to `NAME_KEPT` characters, then how many more. */
function boundedNames(names: string[]): string[] {
  const kept = names.slice(0, NAMES_KEPT).map((name) =>
    name.length > NAME_KEPT ? `${name.slice(0, NAME_KEPT - 1)}…` : name
  );
  const more = names.length - kept.length;
  return more > 0 ? [...kept, `(${more} more)`] : kept;
}

/**
 * A notification's content against the re-read after it (`final`, null
 * when that failed), if it is content for the re-read's URI and
 * subscription (`of`; the subscription's id when known). Content that
 * differs is a defect unless the URI was notified again meanwhile
 * (`renotified`): the resource may have moved on.
 */
function compareInline(
  seen: InlineSeen,
  final: string | null,
  renotified: boolean,
  of: { uri: string; subscription?: RequestId },
): InlineContent {
  const { fact, text, structured } = seen;
  if (text === null) return fact;
  const mismatch = inlineMismatch(seen, of);
  if (mismatch) return mismatch;
  if (final === null) return { ...fact, status: "not-compared" };
  let reread = final;
  try {
    if (structured) reread = sortedJson(JSON.parse(final));
  } catch {
    // Not JSON: structured content cannot match it.
  }
  if (text === reread) return { ...fact, status: "matches-reread" };
  let at = 0;
  while (text[at] === reread[at]) at++;
  return {
    ...fact,
    status: "differs-from-reread",
    differsAt: at,
    inlineThere: text.slice(at, at + INLINE_SHOWN),
    defect: !renotified,
  };
}

/**
 * Content for another URI than the notification's, or a notification for
 * another subscription than the probe's: not the re-read's to compare.
 */
function inlineMismatch(
  { fact, contentUri, subscription }: InlineSeen,
  of: { uri: string; subscription?: RequestId },
): InlineContent | undefined {
  const otherUri = contentUri !== undefined && contentUri !== of.uri;
  const otherSubscription = subscription !== undefined &&
    of.subscription !== undefined && subscription !== claimed(of.subscription);
  if (!otherUri && !otherSubscription) return undefined;
  return {
    ...fact,
    status: otherUri ? "uri-mismatch" : "subscription-mismatch",
    ...otherUri && { contentUri },
    ...otherSubscription && { subscription },
  };
}

/** Inline content that contradicted its re-read, in words; null for none. */
function inlineDefect(result: ProbeResult): string | null {
  const defects = result.updates.filter((update) => update.inline.defect);
  if (defects.length === 0) return null;
  return `${defects.length} notification(s) carried content that contradicts the server's own resources/read after it (the first from character ${
    defects[0].inline.differsAt
  }): a server defect`;
}

/** Text cut to `max` characters, the last of them "…". */
function clipped(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Text a server sent, as the probe's lines and notes show it: as it is when
 * plain, else a JSON string (`lineValue`), and at most 500 characters.
 */
function shown(text: string): string {
  return lineValue(clipped(text));
}

/**
 * `text` whole when its JSON (as the lines and `--json` show it) fits in
 * `bytes`, else the start of it that fits with a closing "…".
 */
function keptText(text: string, bytes: number): string {
  const size = (part: string) =>
    new TextEncoder().encode(jsonText(part)).length;
  let over = size(text);
  if (over <= bytes) return text;
  let kept = text;
  // Each cut is in proportion to the excess; "…" is 3 bytes.
  while (over > bytes - 3) {
    kept = kept.slice(0, Math.floor(kept.length * (bytes - 3) / over) - 1);
    over = size(kept);
  }
  return `${kept}…`;
}

// ---------------------------------------------------------------------------
// Updates as they arrive: one waits for its re-read, the rest collapse
// ---------------------------------------------------------------------------

/** A notification for the watched URI, waiting for its re-read. */
interface Arrival {
  uri: string;
  at: number;
  inline: InlineSeen;
}

/**
 * Notifications for the watched URI as they arrive, and whether the stream
 * carrying them closed. At most one waits: a re-read reads the latest, so
 * notifications that come while one waits collapse into it.
 */
class UpdateQueue {
  #waiting?: Arrival;
  #arrived = 0;
  #closed?: string;
  #wake?: () => void;

  /**
   * A notification; false when it collapsed into one already waiting, which
   * then takes its inline content: the re-read reads the latest.
   */
  push(uri: string, inline: InlineSeen): boolean {
    this.#arrived++;
    const fresh = this.#waiting === undefined;
    this.#waiting ??= { uri, at: performance.now(), inline };
    this.#waiting.inline = inline;
    this.#wake?.();
    return fresh;
  }

  /** Whether a notification waits for its re-read. */
  get pending(): boolean {
    return this.#waiting !== undefined;
  }

  /** The stream closed (or, with no reason, opened again). */
  closed(reason?: string) {
    this.#closed = reason;
    this.#wake?.();
  }

  /** Drops what is waiting, returning how many arrived since the last drain. */
  drain(): number {
    const arrived = this.#arrived;
    this.#arrived = 0;
    this.#waiting = undefined;
    return arrived;
  }

  /**
   * The next update, or why none came within `ms` (none at all past it),
   * or before `until` settled (as "timeout").
   */
  async next(
    ms: number,
    until?: Promise<unknown>,
  ): Promise<Arrival | "timeout" | "closed"> {
    const deadline = performance.now() + ms;
    let ended = false;
    const end = () => {
      ended = true;
      this.#wake?.();
    };
    until?.then(end, end);
    while (this.#waiting === undefined) {
      if (this.#closed) return "closed";
      const left = deadline - performance.now();
      if (left <= 0 || ended) return "timeout";
      await this.#pause(left);
    }
    if (performance.now() >= deadline) return "timeout";
    const waiting = this.#waiting;
    this.#waiting = undefined;
    return waiting;
  }

  /**
   * Whether a notification arrives within `ms`, open stream or not: true
   * at the first, without waiting out the rest.
   */
  async arrivesWithin(ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (this.#waiting === undefined) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await this.#pause(left);
    }
    return true;
  }

  /** Until something happens to the queue, or `ms` passes. */
  async #pause(ms: number) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.#wake = undefined;
  }
}

// ---------------------------------------------------------------------------
// Catalog notifications as they arrive: counted once the change began
// ---------------------------------------------------------------------------

/** A 2026-07-28 listen's ask for the lists' changes: `{ toolsListChanged: true, … }`. */
function catalogFlags(kinds: CatalogKind[]): Record<string, true> {
  return Object.fromEntries(
    kinds.map((kind) => [CATALOG_LISTEN_FLAGS[kind], true]),
  );
}

/**
 * `notifications/<list>/list_changed` for the watched lists as they arrive.
 * Only those that come once the change began count (from the first list,
 * when nothing but the server itself changes it). A list notified again
 * while it waits to be listed again waits once: a list reads the latest.
 */
class CatalogNotices {
  #watched: CatalogKind[] = [];
  #timeoutMs = 0;
  #began?: number;
  #early = 0;
  #ended = false;
  #waiting = new Set<CatalogKind>();
  #wake?: () => void;
  /** Counted notifications per list. */
  readonly counts = new Map<CatalogKind, number>();
  /** When each list was first notified: milliseconds since the change began. */
  readonly firstAfter = new Map<CatalogKind, number>();
  /** 2026-07-28: the acknowledgement of the listen that asked for them. */
  acknowledged?: Record<string, unknown>;

  /** Watches `kinds` for `timeoutMs` once the change begins: now, with `countNow`. */
  watch(kinds: CatalogKind[], timeoutMs: number, countNow: boolean) {
    this.#watched = kinds;
    this.#timeoutMs = timeoutMs;
    if (countNow) this.#began = performance.now();
  }

  /** A list's notification: whether it counts, and is new to the wait. */
  notified(kind: CatalogKind): "counted" | "collapsed" | "early" | "ignored" {
    if (!this.#watched.includes(kind)) return "ignored";
    if (this.#began === undefined) {
      this.#early++;
      return "early";
    }
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
    if (!this.firstAfter.has(kind)) {
      this.firstAfter.set(kind, performance.now() - this.#began);
    }
    if (this.#waiting.has(kind)) return "collapsed";
    this.#waiting.add(kind);
    this.#wake?.();
    return "counted";
  }

  /** The change begins: counting from now; how many came before, uncounted. */
  begin(): number {
    if (this.#began !== undefined) return 0;
    this.#began = performance.now();
    const early = this.#early;
    this.#early = 0;
    // A wait that had no deadline has one now.
    this.#wake?.();
    return early;
  }

  /** Nothing more is waited for (the change failed, or the wait is over). */
  end() {
    this.#ended = true;
    this.#wake?.();
  }

  /** Whether a counted notification of `kind` waits to be listed again. */
  waits(kind: CatalogKind): boolean {
    return this.#waiting.has(kind);
  }

  /**
   * The next list notified, taken from the wait; none once `timeoutMs`
   * has passed since the change began, or the wait was ended.
   */
  async next(): Promise<CatalogKind | undefined> {
    for (;;) {
      const left = this.#began === undefined
        ? undefined
        : this.#began + this.#timeoutMs - performance.now();
      if (this.#ended || (left !== undefined && left <= 0)) return undefined;
      const [kind] = this.#waiting;
      if (kind) {
        this.#waiting.delete(kind);
        return kind;
      }
      await new Promise<void>((resolve) => {
        const timer = left === undefined
          ? undefined
          : setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }
}

// ---------------------------------------------------------------------------
// Requests outside the spec: their answers are facts, never the outcome
// ---------------------------------------------------------------------------

/** How a request outside the spec went. */
type DialectAnswer = "answered" | "refused" | "too-large";

/** A request outside the spec, while it waits for its answer. */
interface DialectRequest {
  method: string;
  /** Aborts the request once its answer is known to be too large. */
  ended: AbortController;
  /** The size of its answer when that was over `--max-bytes`. */
  bytes?: number;
}

/**
 * The probe's requests outside the spec (FastRMCP's), one at a time, while
 * each waits for its answer. An answer over `--max-bytes` is dropped and
 * reported, and ends its request: a spec request's would stop the run
 * (`too-large`), but a dialect's is only a fact about the dialect, so the
 * run goes on as it would have without asking.
 */
class DialectRequests {
  #asking?: DialectRequest;
  #waiting = new Map<RequestId, DialectRequest>();
  /** Every request asked, by id: an HTTP answer may overflow after its request ended. */
  #methods = new Map<RequestId, string>();

  constructor(private readonly note: (text: string) => void) {}

  /** Sends `method`'s request with `send`, ended early when its answer is too large. */
  async ask(
    method: string,
    send: (signal: AbortSignal) => Promise<unknown>,
  ): Promise<DialectAnswer> {
    const request: DialectRequest = { method, ended: new AbortController() };
    this.#asking = request;
    try {
      await send(request.ended.signal);
      return "answered";
    } catch {
      return request.bytes === undefined ? "refused" : "too-large";
    } finally {
      this.#asking = undefined;
      for (const [id, waiting] of this.#waiting) {
        if (waiting === request) this.#waiting.delete(id);
      }
    }
  }

  /** What the probe sends: the request being asked takes its id here. */
  sent(message: JSONRPCMessage) {
    const asking = this.#asking;
    if (
      asking && isJSONRPCRequest(message) && message.method === asking.method
    ) {
      this.#waiting.set(message.id, asking);
      this.#methods.set(message.id, asking.method);
    }
  }

  /** Whether `id` is a request outside the spec that waits for its answer. */
  waits(id: unknown): id is RequestId {
    return this.#waiting.has(id as RequestId);
  }

  /**
   * An answer over `--max-bytes`: to `id`'s request (ended now if it still
   * waits), or, without an id (a stdio line too long to read one from), to
   * the one that waits. False when it is no such answer: then it is the
   * run's failure.
   */
  tooLarge(bytes: number, id?: RequestId): boolean {
    const request = id === undefined
      ? [...this.#waiting.values()][0]
      : this.#waiting.get(id);
    const method = request?.method ??
      (id === undefined ? undefined : this.#methods.get(id));
    if (method === undefined) return false;
    if (request) {
      request.bytes = bytes;
      request.ended.abort();
    }
    this.note(
      `the answer to ${method} (not in the spec) was over --max-bytes (${bytes} bytes): dropped`,
    );
    return true;
  }
}

/** The JSON-RPC id of the request in an HTTP body the probe sends, if any. */
function requestId(body: unknown): RequestId | undefined {
  if (typeof body !== "string") return undefined;
  try {
    const { id } = JSON.parse(body);
    return typeof id === "string" || typeof id === "number" ? id : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// The run record: steps, the wire as it came, failures, the grade
// ---------------------------------------------------------------------------

/** A probe in progress: what it saw, step by step, and how it ended. */
class ProbeRun {
  readonly result: ProbeResult;
  readonly updates = new UpdateQueue();
  readonly dialect = new DialectRequests((text) => this.step("note", text));
  readonly catalogNotices = new CatalogNotices();
  #started = performance.now();
  #failed = false;
  /** The last JSON-RPC error the server answered with, as sent. */
  wireError?: { code: number; message: string };
  /** The last HTTP answer, for telling why a connect failed. */
  lastHttp?: { status: number; type: string; wwwAuthenticate?: string };
  networkError?: string;

  constructor(
    readonly options: ProbeOptions,
    private readonly progress: (line: string) => void,
  ) {
    this.result = {
      probe: LAB_VERSION,
      target: options.url?.href ?? options.command!.join(" "),
      transport: options.url ? "streamable-http" : "stdio",
      uri: options.catalogOnly ? null : options.uri,
      era: null,
      protocolVersion: null,
      server: null,
      capabilities: null,
      resourceFound: null,
      initial: null,
      subscribed: false,
      acknowledged: null,
      embed: null,
      call: null,
      change: null,
      changeVia: options.changeVia
        ? { url: options.changeVia.href, delivered: null }
        : null,
      expectedUpdates: options.catalogOnly ? 0 : options.count,
      updates: [],
      textsCut: null,
      unchangedNotifications: 0,
      unchangedBeforeChange: 0,
      collapsedNotifications: 0,
      inlineDefect: null,
      unsolicited: { count: 0, uris: [] },
      unsubscribed: null,
      nonStandard: {
        subscribeResult: null,
        listSubscriptions: null,
        unsubscribedBy: null,
      },
      quietAfterStop: null,
      catalog: null,
      watchGate: null,
      serverFacts: null,
      level: 0,
      levelName: PROBE_LEVEL_NAMES[0],
      missing: "",
      errorCode: null,
      exitStatus: 0,
      error: null,
      steps: [],
    };
  }

  /** Seconds since the probe started. */
  elapsed(since = this.#started): number {
    return Math.round((performance.now() - since) / 10) / 100;
  }

  /** Steps past `STEPS_KEPT`, counted and neither kept nor shown. */
  #stepsDropped = 0;

  /** A step, its text cut to `STEP_KEPT` characters. */
  step(from: ProbeStep["from"], whole: string) {
    const steps = this.result.steps;
    const text = clipped(whole, STEP_KEPT);
    if (steps.length >= STEPS_KEPT) {
      if (this.#stepsDropped++ === 0) {
        this.progress(`-- further steps are counted, not shown`);
      }
      return;
    }
    steps.push({ at: this.elapsed(), from, text });
    const arrow = from === "server" ? "<-" : from === "probe" ? "->" : "--";
    this.progress(lineText(`${arrow} ${text}`));
  }

  /** Records the first failure; later ones only add to the steps. */
  fail(
    code: ProbeErrorCode,
    missing: string,
    error?: { message: string; code?: number; wwwAuthenticate?: string },
  ) {
    if (this.#failed) return;
    this.#failed = true;
    this.result.errorCode = code;
    this.result.missing = missing;
    // The server's message as it came, cut as its text is on a line.
    this.result.error = error
      ? { ...error, message: clipped(error.message) }
      : { message: missing };
    this.step("note", `${code}: ${missing}`);
  }

  get failed(): boolean {
    return this.#failed;
  }

  /** The first read's text, whole: what the first re-read is compared with. */
  firstText: string | null = null;

  /**
   * A text of the resource as the result keeps it: within its share of
   * `TEXTS_KEPT_BYTES`, a cut counted in `textsCut`.
   */
  kept(text: string): string {
    const { options, result } = this;
    const bytesEach = Math.floor(
      TEXTS_KEPT_BYTES / (1 + options.count + UNCHANGED_KEPT),
    );
    const kept = keptText(text, bytesEach);
    if (kept !== text) {
      result.textsCut = { count: (result.textsCut?.count ?? 0) + 1, bytesEach };
    }
    return kept;
  }

  /** Every request's bound: `--timeout`. */
  get requestOptions() {
    return { timeout: this.options.timeoutSeconds * 1000 };
  }

  /** A message over `--max-bytes` came (`bytes` so far): the run stops there. */
  tooLarge(bytes: number) {
    this.fail(
      "too-large",
      `the server sent a message over --max-bytes (${this.options.maxBytes} bytes): ${bytes} bytes`,
    );
  }

  /**
   * A response body that errors once one message in it passes
   * `--max-bytes` (`bytes` so far to `overflow`): the whole body for JSON,
   * each event of an event stream.
   */
  #bounded(
    body: ReadableStream<Uint8Array>,
    events: boolean,
    overflow: (bytes: number) => void,
  ): ReadableStream<Uint8Array> {
    const limit = this.options.maxBytes;
    let size = 0;
    let newline = false;
    return body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, controller) => {
          if (!events) size += chunk.length;
          else {
            // Bytes since the last blank line: the event being sent.
            for (const byte of chunk) {
              if (byte === 10) {
                if (newline) size = 0;
                newline = true;
              } else if (byte !== 13) {
                newline = false;
                size++;
              }
            }
          }
          if (size > limit) {
            overflow(size);
            controller.error(new Error("a message over --max-bytes"));
            return;
          }
          controller.enqueue(chunk);
        },
      }),
    );
  }

  /** Set as the probe subscribes: from then on the watched URI's notifications are updates. */
  asked = false;
  /** The subscription's id: a 2025 subscribe result's `id`, a listen's request id. */
  subscriptionId?: RequestId;
  #unsolicitedShown = 0;

  /**
   * A `notifications/resources/updated`: an update when it names the watched
   * URI after the probe asked for it; otherwise unsolicited, counted, and
   * only the first few kept.
   */
  notified(uri: string, inline: InlineSeen) {
    if (uri === this.options.uri && this.asked) {
      if (this.updates.push(uri, inline)) {
        const { shape, depth } = inline.fact;
        const refused = depth
          ? `, refused: ${depth} levels deep, over ${INLINE_DEPTH_KEPT}`
          : "";
        this.step(
          "server",
          `notifications/resources/updated ${shown(uri)}${
            shape ? ` (content inline, ${shape}${refused})` : ""
          }`,
        );
      } else {
        this.result.collapsedNotifications++;
      }
      return;
    }
    const unsolicited = this.result.unsolicited;
    const kept = uri.slice(0, 500);
    unsolicited.count++;
    if (
      unsolicited.uris.length < UNSOLICITED_URIS_KEPT &&
      !unsolicited.uris.includes(kept)
    ) {
      unsolicited.uris.push(kept);
    }
    if (unsolicited.count <= UNSOLICITED_URIS_KEPT) {
      this.step(
        "server",
        `notifications/resources/updated ${shown(kept)} (not subscribed)`,
      );
    } else if (performance.now() - this.#unsolicitedShown >= 1000) {
      // A flood is counted, and told at most once a second.
      this.#unsolicitedShown = performance.now();
      this.progress(
        `<- ${unsolicited.count} notifications for resources not subscribed to so far`,
      );
    }
  }

  /**
   * What the probe sends, as the SDK wrote it; with `--embed` a listen asks
   * for the content in each notification, which the SDK cannot ask for.
   */
  outgoing(message: JSONRPCMessage): JSONRPCMessage {
    this.dialect.sent(message);
    if (
      !isJSONRPCRequest(message) || message.method !== "subscriptions/listen"
    ) return message;
    this.subscriptionId = message.id;
    if (!this.options.embed) return message;
    return { ...message, params: { ...message.params, embedResources: true } };
  }

  /**
   * What the server sent, before the SDK's schemas strip what they do not
   * name: error answers as sent (the SDK reads a 2025 -32002 as -32602),
   * each notification's params whole.
   */
  incoming(message: JSONRPCMessage) {
    if (isJSONRPCErrorResponse(message)) this.wireError = message.error;
    else if (
      isJSONRPCNotification(message) &&
      message.method === "notifications/resources/updated" &&
      typeof message.params?.uri === "string"
    ) {
      this.notified(message.params.uri, inlineSeen(message.params));
    } else if (isJSONRPCNotification(message)) {
      const kind = CATALOG_KINDS.find((kind) =>
        message.method === `notifications/${kind}/list_changed`
      );
      if (kind && this.catalogNotices.notified(kind) === "counted") {
        this.step("server", message.method);
      }
    }
  }

  /**
   * The HTTP client's fetch: adds the headers and token, remembers the last
   * answer, and watches the 2025 GET stream open and close.
   */
  fetch = async (input: string | URL, init?: RequestInit) => {
    let response: Response;
    try {
      response = await fetch(input, { ...init, headers: this.#headers(init) });
    } catch (error) {
      this.networkError ??= (error as Error).message;
      throw error;
    }
    this.lastHttp = {
      status: response.status,
      type: response.headers.get("content-type") ?? "",
      wwwAuthenticate: response.headers.get("www-authenticate") ?? undefined,
    };
    if (response.body) {
      // What answers a request outside the spec is that request's, whenever it overflows.
      const id = requestId(init?.body);
      const dialect = this.dialect.waits(id);
      response = new Response(
        this.#bounded(
          response.body,
          isEventStream(response),
          (bytes) =>
            dialect ? this.dialect.tooLarge(bytes, id) : this.tooLarge(bytes),
        ),
        response,
      );
    }
    if ((init?.method ?? "GET") !== "GET" || !response.body) return response;
    if (response.status === 405) {
      this.step("note", "the server offers no GET stream (405)");
    } else if (isEventStream(response)) {
      this.step("probe", "GET (opens the notification stream)");
      this.updates.closed();
      const body = whenStreamEnds(response.body, () => {
        this.step("note", "GET stream closed");
        this.updates.closed("the GET stream closed");
      });
      return new Response(body, response);
    }
    return response;
  };

  /** `--server-facts`' requests: `--header`'s and the token, nothing watched. */
  factsFetch = (input: URL, init: RequestInit) =>
    fetch(input, { ...init, headers: this.#headers(init) });

  /** A request's headers with `--header`'s and the token added. */
  #headers(init?: RequestInit): Headers {
    const headers = new Headers(init?.headers);
    for (const [name, value] of Object.entries(this.options.headers)) {
      headers.set(name, value);
    }
    if (this.options.authToken) {
      headers.set("authorization", `Bearer ${this.options.authToken}`);
    }
    return headers;
  }

  /**
   * `--change-via`'s fetch: the same headers, token and `--max-bytes`, none
   * of the watched connection's bookkeeping (its stream is not the one
   * that waits for the update).
   */
  viaFetch = async (input: string | URL, init?: RequestInit) => {
    const response = await fetch(input, {
      ...init,
      headers: this.#headers(init),
    });
    return response.body
      ? new Response(
        this.#bounded(
          response.body,
          isEventStream(response),
          (bytes) => this.tooLarge(bytes),
        ),
        response,
      )
      : response;
  };

  /** Grades what the probe saw and settles the exit status. */
  finish(): ProbeResult {
    const result = this.result;
    if (this.#stepsDropped > 0) {
      result.steps.push({
        at: this.elapsed(),
        from: "note",
        text: `${this.#stepsDropped} more step(s), not kept`,
      });
    }
    const notified = result.updates.length > 0;
    if (result.changeVia && result.call?.ok) {
      result.changeVia.delivered = notified;
    }
    const ladder = [
      true,
      result.era !== null,
      result.capabilities?.subscribe === true,
      result.initial !== null,
      result.subscribed,
      notified,
      result.updates.some((update) => update.changed),
      // Stopping only in FastRMCP's way is not stopping in the spec's.
      result.unsubscribed === true && !result.nonStandard.unsubscribedBy &&
      result.quietAfterStop === true,
    ];
    let level = 0;
    while (level + 1 < ladder.length && ladder[level + 1]) level++;
    result.level = level;
    result.levelName = PROBE_LEVEL_NAMES[level];
    result.inlineDefect = inlineDefect(result);
    if (!result.missing) {
      result.missing = level === 7
        ? "nothing: the server delivers the update and stops cleanly"
        : result.nonStandard.unsubscribedBy
        ? "the server refused resources/unsubscribe {uri}; only FastRMCP's {subscriptionId} stopped the subscription"
        : result.quietAfterStop === false
        ? "a notification arrived after the probe unsubscribed"
        : "the probe could not unsubscribe";
    }
    // The catalog's failure comes only when the resource's check had none.
    const catalog = result.catalog;
    if (!result.errorCode && catalog && catalog.level < 3) {
      result.errorCode = CATALOG_ERROR_CODES[catalog.level];
      result.error = { message: catalog.missing };
    }
    result.exitStatus = result.errorCode
      ? PROBE_EXIT_STATUS[result.errorCode]
      : level >= 6 || this.options.catalogOnly
      ? 0
      : 1;
    return result;
  }
}

/**
 * A failed call's code and message: the JSON-RPC error as the server sent
 * it when one just came, or whatever the SDK threw.
 */
function rpcError(
  error: unknown,
  run?: ProbeRun,
): { message: string; code?: number } {
  const wire = run?.wireError;
  if (run) run.wireError = undefined;
  if (wire) return { message: wire.message, code: wire.code };
  const { message, code } = error as { message?: string; code?: unknown };
  return {
    message: message ?? String(error),
    code: typeof code === "number" ? code : undefined,
  };
}

// ---------------------------------------------------------------------------
// Transports: the tap, connect failures, the stdio server, process groups
// ---------------------------------------------------------------------------

/** Thrown when the server did not answer within `--timeout`. */
class NoAnswer extends Error {}

/** The probe's SDK client, in the era asked for (or negotiating it). */
function probeClient(era: ProbeOptions["era"]): Client {
  return new Client(
    { name: "mcp-subscription-probe", version: LAB_VERSION },
    {
      versionNegotiation: {
        mode: era === "auto"
          ? "auto"
          : era === "2025"
          ? "legacy"
          : { pin: "2026-07-28" },
      },
    },
  );
}

/** `promise`, or a `NoAnswer` after `seconds`; no timer left behind. */
async function withinTimeout<T>(promise: Promise<T>, seconds: number) {
  const answer = await within(promise, seconds * 1000);
  if (answer === "late") throw new NoAnswer(`no answer within ${seconds} s`);
  return answer;
}

/** Why `connect` failed, told from what the transport saw. */
function connectFailure(run: ProbeRun, error: unknown) {
  // A message over --max-bytes has already said why.
  if (run.failed) return;
  if (error instanceof NoAnswer) {
    return run.fail(
      "unreachable",
      `the server did not answer initialize (or server/discover) within ${run.options.timeoutSeconds} s`,
    );
  }
  const { message } = rpcError(error);
  const http = run.lastHttp;
  if (run.networkError || (!http && run.options.command)) {
    return run.fail(
      "unreachable",
      `could not reach the server: ${shown(message)}`,
    );
  }
  if (
    http &&
    (http.status === 401 || (http.status === 403 && http.wwwAuthenticate))
  ) {
    return run.fail(
      "auth-required",
      `the server requires authentication (HTTP ${http.status}${
        http.wwwAuthenticate
          ? `, WWW-Authenticate: ${shown(http.wwwAuthenticate)}`
          : ""
      })`,
      { message, wwwAuthenticate: http.wwwAuthenticate },
    );
  }
  run.fail(
    "not-mcp",
    `not an MCP endpoint: ${
      http
        ? `HTTP ${http.status} ${
          http.type ? shown(http.type) : "(no content type)"
        }: `
        : ""
    }${shown(message)}`,
  );
}

/**
 * Puts the run between the transport and the SDK, both ways, from before
 * connecting: the SDK's schemas drop what they do not name (a
 * notification's content, a subscribe result's fields), so the run reads
 * each message as sent, and adds to what the SDK sends.
 */
function tapTransport(transport: Transport, run: ProbeRun) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(run.outgoing(message), options);
  let tapped: Transport["onmessage"];
  Object.defineProperty(transport, "onmessage", {
    get: () => tapped,
    set(deliver: Transport["onmessage"]) {
      tapped = deliver && ((message, extra) => {
        try {
          run.incoming(message);
        } catch (error) {
          // Never a silent drop: said, and the SDK still gets the message.
          run.step(
            "note",
            `the probe could not read a message: ${
              shown(String((error as Error).message))
            }`,
          );
        }
        deliver(message, extra);
      });
    },
  });
}

/** How long a stdio server gets after stdin closes, and after SIGTERM. */
const STOP_GRACE_MS = 2000;

/**
 * The `--stdio` server, as the probe runs it: in a process group of its own,
 * one JSON-RPC message per line each way, each line at most `--max-bytes`
 * (a longer one is not held: the run fails `too-large` and the server is
 * stopped), its stderr passed on line by line with control characters
 * escaped. `close()` ends it and everything it started: stdin closed, then
 * SIGTERM to the group, then SIGKILL, a short grace apart.
 */
class ServerProcess implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #child?: Deno.ChildProcess;
  #stdin?: WritableStreamDefaultWriter<Uint8Array>;
  #encoder = new TextEncoder();
  #ended = false;

  constructor(
    private readonly command: string[],
    private readonly run: ProbeRun,
  ) {}

  start(): Promise<void> {
    const [program, ...args] = this.command;
    this.#child = new Deno.Command(program, {
      args,
      clearEnv: true,
      env: serverEnvironment(),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#readMessages(this.#child.stdout);
    this.#passStderr(this.#child.stderr);
    this.#child.status.then(() => this.#end());
    return Promise.resolve();
  }

  async #readMessages(stdout: ReadableStream<Uint8Array>) {
    const limit = this.run.options.maxBytes;
    try {
      for await (const read of boundedLines(stdout, limit)) {
        if ("tooLong" in read) {
          // The line was skipped whole, so the stream reads on: an answer
          // outside the spec is only a fact about the dialect.
          if (this.run.dialect.tooLarge(read.tooLong)) continue;
          this.run.tooLarge(read.tooLong);
          await this.close();
          return;
        }
        let message: JSONRPCMessage;
        try {
          message = parseJSONRPCMessage(JSON.parse(read.line));
        } catch {
          this.run.step(
            "note",
            `the server printed a line that is not JSON-RPC: ${
              shown(read.line)
            }`,
          );
          continue;
        }
        this.onmessage?.(message);
      }
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  async #passStderr(stderr: ReadableStream<Uint8Array>) {
    try {
      for await (const read of boundedLines(stderr, 64 * 1024)) {
        console.error(
          "line" in read
            ? `[server] ${lineText(read.line.slice(0, 2000))}`
            : `[server] (a line of ${read.tooLong} bytes, not shown)`,
        );
      }
    } catch {
      // The server is gone.
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#stdin) throw new Error("the server is not running");
    await this.#stdin.write(
      this.#encoder.encode(`${JSON.stringify(message)}\n`),
    );
  }

  #closing?: Promise<void>;

  /**
   * Ends the server and its process group; resolves once it has exited,
   * however often it is called.
   */
  close(): Promise<void> {
    return this.#closing ??= this.#stop();
  }

  async #stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    await this.#stdin?.close().catch(() => {});
    const exited = async (ms: number) =>
      await within(child.status, ms) !== "late";
    if (!await exited(STOP_GRACE_MS)) {
      signalGroup(child, "SIGTERM");
      if (!await exited(STOP_GRACE_MS)) signalGroup(child, "SIGKILL");
    }
    // Whatever the server started is in its group, even after it exited.
    await endGroup(child);
    await child.status;
    this.#end();
  }

  #end() {
    if (this.#ended) return;
    this.#ended = true;
    this.onclose?.();
  }
}

/**
 * The stdio server's environment: the probe's own, as a shell would hand it
 * on, without the probe's token. Under a permission set that cannot read the
 * whole environment, only PATH and HOME.
 */
function serverEnvironment(): Record<string, string> {
  try {
    const { MCP_PROBE_AUTH_TOKEN: _token, ...env } = Deno.env.toObject();
    return env;
  } catch {
    const env: Record<string, string> = {};
    for (const name of ["PATH", "HOME"]) {
      try {
        const value = Deno.env.get(name);
        if (value !== undefined) env[name] = value;
      } catch {
        // Not allowed to read it either.
      }
    }
    return env;
  }
}

/**
 * Ends what is left of a detached child's process group once the child
 * itself is gone: SIGTERM, then SIGKILL 100 ms later.
 */
async function endGroup(child: Deno.ChildProcess) {
  signalGroup(child, "SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 100));
  signalGroup(child, "SIGKILL");
}

/**
 * A signal to a detached child's whole process group (to the child alone on
 * Windows, which has no process groups); quietly, if it is gone.
 */
function signalGroup(child: Deno.ChildProcess, signal: Deno.Signal) {
  try {
    if (Deno.build.os === "windows") child.kill(signal);
    else Deno.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

// ---------------------------------------------------------------------------
// Lists: every page, bounded as a whole in bytes, pages and time
// ---------------------------------------------------------------------------

/**
 * The most one whole list (every page of `tools/list`, `prompts/list` or
 * `resources/list`) may hold, as JSON: 8 MiB, far above any real server's
 * list. Each page is bounded on its own too (`--max-bytes`, the host's
 * 4 MiB), but without a bound on the whole, a list that never ended, in
 * pages of 3.9 MB, held 400 to 700 MiB for its 64 pages.
 */
export const LIST_MAX_BYTES = 8 * 1024 * 1024;
/** The most pages of one list: the SDK client's own bound (`listMaxPages`). */
export const LIST_MAX_PAGES = 64;
/** What the probe says after a list's cut: it reads a list whole or not at all. */
const WHOLE_LIST_BOUND = "(the bound on a whole list)";

/** The entries of each kind of list. */
export interface ListEntries {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
}

/** A list as it was read: its entries, and why it stopped short, if it did. */
export interface BoundedList<K extends CatalogKind> {
  entries: ListEntries[K];
  /** Why the rest was not read ("over 8388608 bytes at page 3", …); none when whole. */
  cut?: string;
}

/**
 * Lists `kind` page by page, the whole list within `seconds` (each page
 * asked for with the time left) and `LIST_MAX_BYTES`, at most
 * `LIST_MAX_PAGES` pages: past a bound it stops, keeps the pages before and
 * says why (`cut`). A kind the server does not advertise is empty, as the
 * SDK's own `list…()` has it; an error the server answers throws. Every
 * page is asked for afresh (no cache is read or written).
 */
export async function listBounded<K extends CatalogKind>(
  client: Client,
  kind: K,
  seconds: number,
): Promise<BoundedList<K>> {
  const entries: unknown[] = [];
  const read = (cut?: string) => ({
    entries: entries as ListEntries[K],
    ...cut === undefined ? {} : { cut },
  });
  if (!client.getServerCapabilities()?.[kind]) return read();
  const deadline = performance.now() + seconds * 1000;
  let bytes = 0;
  let cursor: string | undefined;
  for (let page = 1; page <= LIST_MAX_PAGES; page++) {
    const late = `not whole within ${seconds} s (${page - 1} pages read)`;
    const left = Math.floor(deadline - performance.now());
    if (left <= 0) return read(late);
    let answer;
    try {
      answer = await client.request({
        method: `${kind}/list`,
        params: cursor === undefined ? {} : { cursor },
      }, { timeout: left });
    } catch (error) {
      // The page's timeout is the time left for the whole list.
      const timedOut = error instanceof SdkError &&
        error.code === SdkErrorCode.RequestTimeout;
      if (!timedOut) throw error;
      return read(late);
    }
    bytes += new TextEncoder().encode(JSON.stringify(answer)).length;
    if (bytes > LIST_MAX_BYTES) {
      return read(`over ${LIST_MAX_BYTES} bytes at page ${page}`);
    }
    entries.push(...(answer as Record<K, unknown[]>)[kind]);
    cursor = answer.nextCursor;
    if (cursor === undefined) return read();
  }
  return read(`more than ${LIST_MAX_PAGES} pages`);
}

// ---------------------------------------------------------------------------
// The steps: list, read, subscribe or listen, call the tool, stop
// ---------------------------------------------------------------------------

/**
 * Whether `resources/list` names the URI, every page read within
 * `--timeout` and the bound on a whole list.
 */
async function listed(run: ProbeRun, client: Client): Promise<boolean> {
  const { options, result } = run;
  let list: BoundedList<"resources">;
  try {
    list = await listBounded(client, "resources", options.timeoutSeconds);
  } catch (error) {
    run.fail(
      "resource-not-found",
      `resources/list failed: ${shown(rpcError(error).message)}`,
      rpcError(error),
    );
    return false;
  }
  const found = list.entries.some(({ uri }) => uri === options.uri);
  result.resourceFound = found;
  const cut = list.cut && `${list.cut} ${WHOLE_LIST_BOUND}`;
  run.step(
    "probe",
    `resources/list (${options.uri} ${found ? "listed" : "not listed"}${
      cut ? `; ${cut}` : ""
    })`,
  );
  if (!found) {
    run.fail(
      "resource-not-found",
      cut
        ? `resources/list failed: ${cut}`
        : `${options.uri} is not in resources/list (--skip-list-check for dynamic resources)`,
    );
  }
  return found;
}

/** Reads the resource; its text is `initial`. */
async function readFirst(run: ProbeRun, client: Client): Promise<boolean> {
  const { options, result } = run;
  try {
    const read = await client.readResource(
      { uri: options.uri },
      run.requestOptions,
    );
    run.firstText = contentsText(read.contents);
    result.initial = run.kept(run.firstText);
    run.step("probe", "resources/read (initial)");
    return true;
  } catch (error) {
    const failure = rpcError(error, run);
    run.fail(
      "resource-not-found",
      `could not read ${shown(options.uri)}: ${shown(failure.message)}${
        failure.code === undefined ? "" : ` (${failure.code})`
      }`,
      failure,
    );
    return false;
  }
}

/**
 * Subscribes the era's way. Resolves with the matching stop (unsubscribe,
 * or close the listen), or nothing when the server refused.
 */
async function subscribe(
  run: ProbeRun,
  client: Client,
): Promise<(() => Promise<void>) | undefined> {
  const { options, result } = run;
  run.asked = true;
  if (result.era === "2025") return await subscribeLegacy(run, client);
  if (options.embed) result.embed = "asked";
  let listen: Awaited<ReturnType<Client["listen"]>>;
  try {
    // The catalog's lists are asked for on the same listen.
    listen = await client.listen(
      {
        resourceSubscriptions: [options.uri],
        ...catalogFlags(options.catalog),
      },
      run.requestOptions,
    );
  } catch (error) {
    const failure = rpcError(error, run);
    run.fail(
      "subscribe-refused",
      `subscriptions/listen was refused: ${shown(failure.message)}`,
      failure,
    );
    return undefined;
  }
  const acknowledged = boundedFilter(listen.honoredFilter);
  result.acknowledged = acknowledged;
  const asked = [
    ...options.embed ? ["embedResources"] : [],
    ...Object.keys(catalogFlags(options.catalog)),
  ];
  run.step(
    "probe",
    `subscriptions/listen ${options.uri}${
      asked.length ? ` with ${asked.join(", ")}` : ""
    }`,
  );
  run.step("server", `acknowledged ${jsonText(acknowledged)}`);
  let closing = false;
  listen.closed.then((how) => {
    if (!closing) run.updates.closed(`the listen stream closed (${how})`);
  });
  const stop = async () => {
    closing = true;
    await listen.close();
    result.unsubscribed = true;
    run.step("probe", "closes the listen stream");
    await watchQuiet(run);
  };
  if (!listen.honoredFilter.resourceSubscriptions?.includes(options.uri)) {
    run.fail(
      "subscribe-refused",
      `the listen was acknowledged without ${options.uri}: ${
        jsonText(acknowledged)
      }`,
    );
    closing = true;
    await listen.close();
    return undefined;
  }
  result.subscribed = true;
  if (options.catalog.length > 0) {
    run.catalogNotices.acknowledged = listen.honoredFilter;
  }
  return stop;
}

/**
 * A listen's acknowledgement as the result keeps it: its flags, and of the
 * URIs it names the first ten, each cut, then how many more.
 */
function boundedFilter(filter: SubscriptionFilter): SubscriptionFilter {
  const uris = filter.resourceSubscriptions;
  return uris
    ? { ...filter, resourceSubscriptions: boundedNames(uris) }
    : filter;
}

/**
 * The 2025 way: `resources/subscribe`, then FastRMCP's list; the stop
 * unsubscribes, in FastRMCP's way when the spec's is refused.
 */
async function subscribeLegacy(
  run: ProbeRun,
  client: Client,
): Promise<(() => Promise<void>) | undefined> {
  const { options, result } = run;
  if (options.embed) {
    result.embed = "unavailable";
    run.step("note", `--embed: ${EMBED_UNAVAILABLE}`);
  }
  let answer: Record<string, unknown>;
  try {
    // The SDK refuses a result with fields; FastRMCP's has four.
    answer = await client.request(
      { method: "resources/subscribe", params: { uri: options.uri } },
      z.looseObject({}),
      run.requestOptions,
    );
  } catch (error) {
    const failure = rpcError(error, run);
    run.fail(
      "subscribe-refused",
      `resources/subscribe was refused: ${shown(failure.message)}${
        failure.code === undefined ? "" : ` (${failure.code})`
      }`,
      failure,
    );
    return undefined;
  }
  result.subscribed = true;
  run.step("probe", "resources/subscribe");
  if (typeof answer.id === "string" || typeof answer.id === "number") {
    run.subscriptionId = answer.id;
  }
  const fields = Object.keys(answer).filter((name) => name !== "_meta");
  if (fields.length) {
    result.nonStandard.subscribeResult = boundedNames(fields);
  }
  await listSubscriptions(run, client);
  return async () => {
    try {
      await client.unsubscribeResource(
        { uri: options.uri },
        run.requestOptions,
      );
      result.unsubscribed = true;
      run.step("probe", "resources/unsubscribe");
    } catch (error) {
      run.step(
        "note",
        `unsubscribe failed: ${shown(rpcError(error, run).message)}`,
      );
      result.unsubscribed = await unsubscribeById(run, client, answer.id);
    }
    await watchQuiet(run);
  };
}

/** Why `--embed` asks nothing in the 2025 era. */
const EMBED_UNAVAILABLE =
  "the 2025 era has no subscriptions/listen to carry embedResources";

/**
 * A request outside the spec, or in another shape than its: whether the
 * server answered with a result, refused, or answered over `--max-bytes`.
 * At most 5 s: a server may leave a method it does not know unanswered.
 */
async function nonStandardRequest(
  run: ProbeRun,
  client: Client,
  method: string,
  params?: Record<string, unknown>,
): Promise<DialectAnswer> {
  const answer = await run.dialect.ask(
    method,
    (signal) =>
      client.request({ method, params }, z.unknown(), {
        timeout: Math.min(run.options.timeoutSeconds, 5) * 1000,
        signal,
      }),
  );
  // Its error answer is this request's, no later one's.
  if (answer !== "answered") run.wireError = undefined;
  return answer;
}

/**
 * FastRMCP's `resources/list_subscriptions`, tried once after a 2025
 * subscribe (a 2026-07-28 server holds no subscriptions to list).
 */
async function listSubscriptions(run: ProbeRun, client: Client) {
  const method = "resources/list_subscriptions";
  const answer = await nonStandardRequest(run, client, method);
  run.result.nonStandard.listSubscriptions = answer === "answered"
    ? "supported"
    : answer === "refused"
    ? "unsupported"
    : "too-large";
  run.step("probe", `${method} (not in the spec): ${answer}`);
}

/**
 * FastRMCP's unsubscribe, `{subscriptionId}` with the `id` its subscribe
 * result gave (`id`), once the spec's `{uri}` was refused.
 */
async function unsubscribeById(run: ProbeRun, client: Client, id: unknown) {
  const params = { subscriptionId: id };
  if (
    !["string", "number"].includes(typeof id) ||
    await nonStandardRequest(run, client, "resources/unsubscribe", params) !==
      "answered"
  ) return false;
  run.result.nonStandard.unsubscribedBy = "subscriptionId";
  run.step("probe", "resources/unsubscribe {subscriptionId} (not in the spec)");
  return true;
}

/** Calls the `--call` tool that makes the server change the resource. */
async function callTool(run: ProbeRun, client: Client): Promise<boolean> {
  const call = run.options.call!;
  run.step("probe", `tools/call ${call.name}`);
  try {
    const answer = await client.callTool({
      name: call.name,
      arguments: call.arguments,
    }, run.requestOptions);
    if (answer.isError) throw new Error(jsonText(answer.content));
    run.result.call = { name: call.name, ok: true };
    return true;
  } catch (error) {
    const { message } = rpcError(error, run);
    run.result.call = { name: call.name, ok: false, error: clipped(message) };
    run.fail(
      "call-failed",
      `tools/call ${shown(call.name)} failed: ${shown(message)}`,
    );
    return false;
  }
}

/** After unsubscribing: any notification within the grace period is stray. */
async function watchQuiet(run: ProbeRun) {
  run.updates.drain();
  // The first stray notification settles it: a flood need not be sat out.
  await run.updates.arrivesWithin(QUIET_GRACE_MS);
  const stray = run.updates.drain();
  run.result.quietAfterStop = stray === 0;
  run.step(
    "note",
    stray === 0
      ? `quiet for ${QUIET_GRACE_MS / 1000} s after unsubscribing`
      : `${stray} notification(s) after unsubscribing`,
  );
}

// ---------------------------------------------------------------------------
// Changing the resource: the --call tool, then the --change command
// ---------------------------------------------------------------------------

/**
 * The `--call` tool, then the `--change` command, with `whileRunning` given
 * the command as it runs: false when one failed.
 */
async function changeResource(
  run: ProbeRun,
  client: Client,
  whileRunning?: (command: Promise<boolean>) => Promise<void>,
) {
  const { call, change } = run.options;
  if (call || change) {
    // Only what comes once the change has begun can be the change.
    const early = run.updates.drain();
    if (early > 0) {
      run.step(
        "note",
        `${early} notification(s) before the change began, not counted`,
      );
    }
    const earlyLists = run.catalogNotices.begin();
    if (earlyLists > 0) {
      run.step(
        "note",
        `${earlyLists} list_changed notification(s) before the change began, not counted`,
      );
    }
  }
  if (call && !await callToolVia(run, client)) return false;
  if (!change) return true;
  const command = runChange(run, change);
  await whileRunning?.(command);
  return await command;
}

/**
 * The `--call`, on the watched connection, or with `--change-via` on a
 * connection of its own to that endpoint, closed once the call is made.
 */
async function callToolVia(run: ProbeRun, client: Client): Promise<boolean> {
  const url = run.options.changeVia;
  if (!url) return await callTool(run, client);
  const via = probeClient(run.result.era ?? "2025");
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: run.viaFetch,
  });
  try {
    await withinTimeout(via.connect(transport), run.options.timeoutSeconds);
  } catch (error) {
    run.fail(
      "change-failed",
      `--change-via ${url.href}: could not connect: ${
        shown(rpcError(error).message)
      }`,
    );
    return false;
  }
  run.step("probe", `connects to ${url.href} (--change-via)`);
  try {
    return await callTool(run, via);
  } finally {
    // A 2025 session ends as the spec says; a 2026-07-28 one has none.
    await transport.terminateSession().catch(() => {});
    await via.close().catch(() => {});
  }
}

/**
 * A server that does not advertise subscriptions may still notify: with
 * `--call` or `--change`, the probe changes the resource anyway and counts
 * what arrives unasked within the grace period.
 */
async function changeUnasked(run: ProbeRun, client: Client) {
  if (!run.options.call && !run.options.change) return;
  await changeResource(run, client);
  await new Promise((resolve) => setTimeout(resolve, QUIET_GRACE_MS));
  const { count } = run.result.unsolicited;
  run.step("note", `${count} notification(s) without a subscription`);
}

/**
 * Runs `--change` through the platform's shell in a process group of its
 * own, bounded by `--timeout`: at the timeout the group gets SIGTERM, and
 * SIGKILL a grace later; when the shell ends, whatever it left in its group
 * (`cmd &`) is ended too. Only the first `CHANGE_OUTPUT_LIMIT` characters of
 * its output are kept, the rest drained. A process that left the group
 * (`setsid`) is out of reach, and its output is not waited for past the grace.
 */
async function runChange(run: ProbeRun, command: string): Promise<boolean> {
  const started = performance.now();
  const change: ProbeChange = {
    command,
    exitCode: null,
    seconds: 0,
    output: "",
  };
  run.result.change = change;
  run.step("note", `--change ${command}`);
  const [shell, ...shellArgs] = Deno.build.os === "windows"
    ? ["cmd", "/d", "/s", "/c", command]
    : ["/bin/sh", "-c", command];
  let timedOut = false;
  try {
    const child = new Deno.Command(shell, {
      args: shellArgs,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    const output = firstCharacters(
      [child.stdout, child.stderr],
      CHANGE_OUTPUT_LIMIT,
    );
    let killer: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(child, "SIGTERM");
      killer = setTimeout(() => signalGroup(child, "SIGKILL"), STOP_GRACE_MS);
    }, run.options.timeoutSeconds * 1000);
    const status = await child.status;
    clearTimeout(timer);
    clearTimeout(killer);
    await endGroup(child);
    change.output = await output.within(STOP_GRACE_MS);
    change.exitCode = timedOut ? null : status.code;
  } catch (error) {
    change.error = `could not run: ${(error as Error).message}`;
  }
  change.seconds = run.elapsed(started);
  if (change.exitCode === 0) return true;
  change.error ??= timedOut
    ? `did not finish within ${run.options.timeoutSeconds} s`
    : `exited with status ${change.exitCode}`;
  run.fail("change-failed", `--change ${change.error}`);
  return false;
}

/**
 * The first `limit` characters of what the streams carry, together, while
 * the rest is read and dropped. `within(ms)` resolves with them once the
 * streams end, or after `ms` with what came, cancelling the rest.
 */
function firstCharacters(
  streams: ReadableStream<Uint8Array>[],
  limit: number,
) {
  let kept = "";
  const readers = streams.map((stream) => stream.getReader());
  const decoder = new TextDecoder();
  const done = Promise.all(readers.map(async (reader) => {
    try {
      for (let read = await reader.read(); !read.done;) {
        if (kept.length < limit) {
          kept += decoder.decode(read.value, { stream: true });
        }
        read = await reader.read();
      }
    } catch {
      // Cancelled, or the process is gone.
    }
  }));
  return {
    async within(ms: number): Promise<string> {
      await within(done, ms);
      await Promise.all(
        readers.map((reader) => reader.cancel().catch(() => {})),
      );
      return kept.slice(0, limit);
    },
  };
}

// ---------------------------------------------------------------------------
// Waiting for updates: re-reads, counts, a missed update, closing
// ---------------------------------------------------------------------------

/**
 * The wait for updates so far: the text the last change showed, the
 * updates that came, the unchanged notifications since the last, and when
 * the probe subscribed.
 */
interface UpdateWait {
  previous: string | null;
  changed: number;
  unchanged: number;
  since: number;
}

/** A wait that starts now, from the first read's text. */
function startWait(run: ProbeRun): UpdateWait {
  const since = performance.now();
  return { previous: run.firstText, changed: 0, unchanged: 0, since };
}

/**
 * Waits for each update: a notification whose re-read shows a change. One
 * whose re-read shows none is recorded and the wait goes on, each update
 * within `--timeout`.
 */
async function awaitUpdates(run: ProbeRun, client: Client, wait: UpdateWait) {
  const { options, result } = run;
  while (wait.changed < options.count) {
    const deadline = performance.now() + options.timeoutSeconds * 1000;
    for (;;) {
      const arrival = await run.updates.next(deadline - performance.now());
      if (arrival === "timeout" || arrival === "closed") {
        return missedUpdate(run, arrival, wait.changed, wait.unchanged);
      }
      if (await recordUpdate(run, client, wait, arrival, { deadline })) break;
    }
  }
  const unchanged = unchangedSummary(result);
  if (unchanged) run.step("note", unchanged);
}

/**
 * While `--change` runs (`command`), each notification is re-read at once:
 * one that came before the command changed anything must not pass for the
 * change, so it is credited only if that re-read shows the change.
 */
async function rereadWhileChanging(
  run: ProbeRun,
  client: Client,
  wait: UpdateWait,
  command: Promise<boolean>,
) {
  // The command's own bound, and its kill grace: `command` settles first.
  const bound = run.options.timeoutSeconds * 1000 + 2 * STOP_GRACE_MS;
  while (wait.changed < run.options.count) {
    const arrival = await run.updates.next(bound, command);
    if (arrival === "timeout" || arrival === "closed") return;
    const changed = await recordUpdate(run, client, wait, arrival, {
      duringChange: true,
    });
    run.step(
      "note",
      `notification while --change ran: ${
        changed
          ? "its re-read shows the change: counted"
          : "its re-read shows no change: counted as unchanged"
      }`,
    );
  }
}

/**
 * Re-reads after `arrival` (cut at the wait's `deadline`, if any) and
 * records it: an update when the re-read shows a change (true), else
 * counted unchanged, the first few kept with their text.
 */
async function recordUpdate(
  run: ProbeRun,
  client: Client,
  wait: UpdateWait,
  arrival: Arrival,
  { deadline, duringChange }: { deadline?: number; duringChange?: true } = {},
): Promise<boolean> {
  const { result } = run;
  const update = await reread(run, client, arrival, wait, deadline);
  if (duringChange) update.duringChange = true;
  const { final } = update;
  const keep = () =>
    result.updates.push({ ...update, final: final && run.kept(final) });
  if (update.changed) {
    keep();
    wait.previous = final;
    wait.changed++;
    wait.unchanged = 0;
    return true;
  }
  wait.unchanged++;
  result.unchangedNotifications++;
  if (wait.changed === 0) result.unchangedBeforeChange++;
  if (result.unchangedNotifications <= UNCHANGED_KEPT) keep();
  return false;
}

/**
 * Re-reads the resource after a notification, within `--timeout` and by
 * `deadline` (the wait's end: a slow re-read must not carry it past); records
 * what it showed against `previous`, and how the notification's content
 * compares with it.
 */
async function reread(
  run: ProbeRun,
  client: Client,
  arrival: Arrival,
  { since, previous }: UpdateWait,
  deadline?: number,
): Promise<ProbeUpdate> {
  const update: ProbeUpdate = {
    uri: arrival.uri,
    afterSeconds: run.elapsed(since),
    final: null,
    changed: false,
    inline: arrival.inline.fact,
  };
  const { timeout } = run.requestOptions;
  try {
    const read = await client.readResource({ uri: run.options.uri }, {
      timeout: deadline === undefined
        ? timeout
        : Math.max(1, Math.min(timeout, deadline - performance.now())),
    });
    update.final = contentsText(read.contents);
    update.changed = update.final !== previous;
    run.step(
      "probe",
      `resources/read (${update.changed ? "changed" : "unchanged"})`,
    );
  } catch (error) {
    run.step("note", `re-read failed: ${shown(rpcError(error).message)}`);
  }
  update.inline = compareInline(
    arrival.inline,
    update.final,
    run.updates.pending,
    { uri: arrival.uri, subscription: run.subscriptionId },
  );
  return update;
}

/** Why the wait for an update ended without one. */
function missedUpdate(
  run: ProbeRun,
  how: "timeout" | "closed",
  changed: number,
  unchanged: number,
) {
  const { options } = run;
  const which = options.count > 1
    ? ` (${changed} of ${options.count} came)`
    : "";
  if (how === "closed") {
    return run.fail(
      "stream-closed",
      `the stream closed before the update${which}`,
    );
  }
  if (unchanged > 0) {
    return run.fail(
      "reread-unchanged",
      `notified ${unchanged} time(s), but no re-read of ${options.uri} showed a change within ${options.timeoutSeconds} s${which}`,
    );
  }
  run.fail(
    "notification-timeout",
    `no notifications/resources/updated for ${options.uri} within ${options.timeoutSeconds} s${which}${
      options.changeVia
        ? `: lost, the change made through ${options.changeVia.href} never reached the stream held through ${run.result.target}`
        : ""
    }`,
  );
}

/** Notifications for the watched URI whose re-read showed no change. */
function unchangedCount(result: ProbeResult): number {
  return result.unchangedNotifications;
}

/** Notifications for the watched URI whose re-read showed the change. */
function changedCount(result: ProbeResult): number {
  return result.updates.filter((update) => update.changed).length;
}

/**
 * How many notifications came without a change, and where, in words
 * ("2 notifications without a change before the change"); null for none.
 */
export function unchangedSummary(result: ProbeResult): string | null {
  const unchanged = unchangedCount(result);
  if (unchanged === 0) return null;
  const changed = changedCount(result);
  const notifications = `${unchanged} notification${
    unchanged === 1 ? "" : "s"
  }`;
  if (changed === 0) return `${notifications}, none with a change`;
  return result.unchangedBeforeChange === unchanged
    ? `${notifications} without a change before the ${
      changed === 1 ? "change" : "first change"
    }`
    : `${notifications} without a change, ${changed} with one`;
}

/** Ends the session (DELETE in 2025 over HTTP) and the connection. */
async function closeProbe(
  run: ProbeRun,
  client: Client,
  transport: Transport,
) {
  const session = transport as { terminateSession?: () => Promise<void> };
  if (run.result.era === "2025" && session.terminateSession) {
    try {
      await session.terminateSession();
      run.step("probe", "DELETE (ends the session)");
    } catch (error) {
      run.step("note", `DELETE failed: ${shown(rpcError(error).message)}`);
    }
  }
  await client.close().catch((error) =>
    run.step("note", `close failed: ${shown(rpcError(error).message)}`)
  );
  await transport.close();
}

// ---------------------------------------------------------------------------
// The catalog: list, listen, list again on each notification, grade
// ---------------------------------------------------------------------------

/** One list `--catalog` watches, as the check goes. */
interface WatchedList {
  kind: CatalogKind;
  result: CatalogListResult;
  /** Every name the first list held, whole: what each list again is compared with. */
  firstNames?: string[];
  /** Why it could not be listed at first. */
  notListed?: string;
  /** A list again after a notification differed from the first: level 3. */
  settled: boolean;
  /** The last list again, taken when no notification asked for it: whether it differed. */
  changedUnannounced?: boolean;
}

/**
 * Every name a list holds now (the URIs, of resources), or why not, as a
 * line shows it: the whole list within `--timeout` and its bound, or none.
 */
async function listNames(
  run: ProbeRun,
  client: Client,
  kind: CatalogKind,
): Promise<string[] | { failed: string }> {
  try {
    const list = await listBounded(client, kind, run.options.timeoutSeconds);
    if (list.cut) return { failed: `${list.cut} ${WHOLE_LIST_BOUND}` };
    return kind === "resources"
      ? (list.entries as Resource[]).map(({ uri }) => uri)
      : list.entries.map(({ name }) => name);
  } catch (error) {
    return { failed: shown(rpcError(error).message) };
  }
}

/** The names `to` holds and `from` did not, each once, in `to`'s order. */
function namesAdded(from: string[], to: string[]): string[] {
  const had = new Set(from);
  return [...new Set(to)].filter((name) => !had.has(name));
}

/** A list as the result keeps it: its size and its first names, cut. */
function keptList(names: string[]): CatalogList {
  return { count: names.length, names: boundedNames(names) };
}

/**
 * `--catalog`: lists each list first, where the server advertises it, and
 * from then on watches its notifications. None without `--catalog`.
 */
async function listCatalog(
  run: ProbeRun,
  client: Client,
): Promise<WatchedList[]> {
  const { options, result } = run;
  if (options.catalog.length === 0) return [];
  const capabilities = client.getServerCapabilities();
  const lists: WatchedList[] = [];
  result.catalog = { level: 0, levelName: "", missing: "", kinds: {} };
  const { call, change } = options;
  // Watched from the first list on, or counted from the change when it is the probe's.
  run.catalogNotices.watch(
    options.catalog,
    options.timeoutSeconds * 1000,
    !call && !change,
  );
  for (const kind of options.catalog) {
    const list: WatchedList = {
      kind,
      settled: false,
      result: {
        level: 0,
        levelName: "",
        missing: "",
        listChanged: capabilities?.[kind]?.listChanged === true,
        asked: null,
        first: null,
        again: null,
        notifications: 0,
        notifiedAfter: null,
        unchangedRelists: 0,
        added: [],
        removed: [],
      },
    };
    result.catalog.kinds[kind] = list.result;
    lists.push(list);
    const names = capabilities?.[kind]
      ? await listNames(run, client, kind)
      : { failed: "" };
    if ("failed" in names) {
      list.notListed = capabilities?.[kind]
        ? `${kind}/list failed: ${names.failed}`
        : `the server does not advertise ${kind}`;
      run.step("note", list.notListed);
      continue;
    }
    list.firstNames = names;
    list.result.first = keptList(names);
    run.step("probe", `${kind}/list (${names.length} listed)`);
  }
  return lists;
}

/**
 * 2026-07-28, when no listen asked for the lists' changes (the resource's
 * was not made, or was refused): a listen of the catalog's own, before the
 * change. Resolves with how to close it.
 */
async function listenForCatalog(
  run: ProbeRun,
  client: Client,
  lists: WatchedList[],
): Promise<(() => Promise<void>) | undefined> {
  const { options, result } = run;
  const notices = run.catalogNotices;
  if (
    lists.length === 0 || result.era !== "2026-07-28" || notices.acknowledged
  ) return undefined;
  const flags = catalogFlags(options.catalog);
  run.step(
    "probe",
    `subscriptions/listen with ${Object.keys(flags).join(", ")}`,
  );
  try {
    const listen = await client.listen(flags, run.requestOptions);
    notices.acknowledged = listen.honoredFilter;
    run.step(
      "server",
      `acknowledged ${jsonText(boundedFilter(listen.honoredFilter))}`,
    );
    return async () => {
      await listen.close();
      run.step("probe", "closes the catalog's listen stream");
    };
  } catch (error) {
    notices.acknowledged = {};
    run.step(
      "note",
      `the catalog's subscriptions/listen was refused: ${
        shown(rpcError(error, run).message)
      }`,
    );
    return undefined;
  }
}

/**
 * Lists `list` again and records how it compares with the first list:
 * after a notification (`notified`), a difference is the change arriving.
 */
async function listAgain(
  run: ProbeRun,
  client: Client,
  list: WatchedList,
  notified: boolean,
) {
  const names = await listNames(run, client, list.kind);
  if ("failed" in names) {
    run.step("note", `${list.kind}/list again failed: ${names.failed}`);
    return;
  }
  const first = list.firstNames ?? [];
  const added = namesAdded(first, names);
  const removed = namesAdded(names, first);
  const differs = added.length > 0 || removed.length > 0;
  Object.assign(list.result, {
    again: keptList(names),
    added: boundedNames(added),
    removed: boundedNames(removed),
  });
  if (notified) {
    list.settled = differs;
    if (!differs) list.result.unchangedRelists++;
  } else list.changedUnannounced = differs;
  run.step(
    "probe",
    `${list.kind}/list again (${names.length} listed${
      differs
        ? `: added ${jsonText(list.result.added)}, removed ${
          jsonText(list.result.removed)
        }`
        : ", no difference"
    })`,
  );
}

/**
 * While the change happens: lists each list again as its notification
 * comes, until each one listed shows a difference, or `--timeout` has
 * passed since the change began.
 */
async function relistOnNotices(
  run: ProbeRun,
  client: Client,
  lists: WatchedList[],
) {
  const open = () => lists.some((list) => list.firstNames && !list.settled);
  while (open()) {
    const kind = await run.catalogNotices.next();
    if (!kind) return;
    const list = lists.find((watched) => watched.kind === kind);
    if (list?.firstNames && !list.settled) {
      await listAgain(run, client, list, true);
    }
  }
}

/**
 * Once the wait is over: each list not settled is listed once more (a
 * notification may still wait for it; without one, did it change
 * unannounced?), then each list and the catalog are graded.
 */
async function finishCatalog(
  run: ProbeRun,
  client: Client,
  lists: WatchedList[],
  relisting: Promise<void>,
) {
  const catalog = run.result.catalog;
  if (!catalog) return;
  await relisting;
  for (const list of lists) {
    if (!list.firstNames || list.settled) continue;
    await listAgain(run, client, list, run.catalogNotices.waits(list.kind));
  }
  for (const list of lists) gradeList(run, list);
  const lowest = lists.reduce((low, list) =>
    list.result.level < low.result.level ? list : low
  );
  catalog.level = lowest.result.level;
  catalog.levelName = SERVER_CATALOG_LEVEL_NAMES[catalog.level];
  catalog.missing = catalog.level === 3
    ? "nothing: each list watched changed, was notified and listed again with the change"
    : `${lowest.kind}: ${lowest.result.missing}`;
  run.step(
    "note",
    `catalog ${
      lists.map((list) => `${list.kind} ${list.result.level}`).join(", ")
    }`,
  );
}

/** A list's level, the step that stopped it, and what the server said it would do. */
function gradeList(run: ProbeRun, list: WatchedList) {
  const { result: graded, kind } = list;
  const notices = run.catalogNotices;
  const flag = CATALOG_LISTEN_FLAGS[kind];
  if (notices.acknowledged) {
    graded.asked = notices.acknowledged[flag] === true;
  }
  graded.notifications = notices.counts.get(kind) ?? 0;
  const after = notices.firstAfter.get(kind);
  graded.notifiedAfter = after === undefined
    ? null
    : Math.round(after / 10) / 100;
  graded.level = !list.firstNames
    ? 0
    : list.settled
    ? 3
    : graded.notifications > 0
    ? 2
    : 1;
  graded.levelName = SERVER_CATALOG_LEVEL_NAMES[graded.level];
  const later = list.changedUnannounced
    ? `; ${kind}/list changed without one: added ${
      jsonText(graded.added)
    }, removed ${jsonText(graded.removed)}`
    : list.changedUnannounced === false
    ? `; ${kind}/list did not change either`
    : "";
  graded.missing = [
    () => list.notListed ?? `${kind}/list failed`,
    () =>
      `${
        graded.asked === false
          ? `the listen was acknowledged without ${flag}`
          : `no notifications/${kind}/list_changed within ${run.options.timeoutSeconds} s`
      }${later}`,
    () =>
      `notified ${graded.notifications} time(s), but ${kind}/list after it held what it first did${
        list.changedUnannounced ? "; it changed later, unannounced" : ""
      }`,
    () =>
      `nothing: ${kind}/list changed, the server said so, and listed again it shows the change`,
  ][graded.level]();
}

// ---------------------------------------------------------------------------
// The watch gate: may a caller watch what it may not read?
// ---------------------------------------------------------------------------

/**
 * A URI in the watched one's scheme that no server serves: the `.invalid`
 * host is reserved for exactly that (RFC 2606).
 */
export function unknownUri(uri: string): string {
  const scheme = URL.parse(uri)?.protocol ?? "probe:";
  return `${scheme}//mcp-subscription-probe.invalid/unknown`;
}

/** The answer to a watch, and what to send to end it when it went through. */
type WatchAnswer = {
  watch: "accepted" | "refused" | "filtered";
  detail: string;
  end?: () => Promise<unknown>;
};

/** A JSON-RPC error as the gate's lines show it: its code, then its message. */
function refusal(error: unknown, run: ProbeRun): string {
  const { code, message } = rpcError(error, run);
  return `${code === undefined ? "" : `${code} `}${shown(message)}`;
}

/** Subscribes to `uri` (2025) or opens a listen naming it (2026-07-28). */
async function watchOnce(
  run: ProbeRun,
  client: Client,
  uri: string,
): Promise<WatchAnswer> {
  try {
    if (run.result.era === "2025") {
      await client.request(
        { method: "resources/subscribe", params: { uri } },
        z.looseObject({}),
        run.requestOptions,
      );
      return {
        watch: "accepted",
        detail: "resources/subscribe answered with a result",
        end: () => client.unsubscribeResource({ uri }, run.requestOptions),
      };
    }
    const listen = await client.listen(
      { resourceSubscriptions: [uri] },
      run.requestOptions,
    );
    const honoured = listen.honoredFilter.resourceSubscriptions ?? [];
    return {
      watch: honoured.includes(uri) ? "accepted" : "filtered",
      detail: `acknowledged ${jsonText(listen.honoredFilter).slice(0, 500)}`,
      end: () => listen.close(),
    };
  } catch (error) {
    return { watch: "refused", detail: refusal(error, run) };
  }
}

/**
 * One gate check: a read of `uri` must be refused for the check to mean
 * anything; then the watch, ended at once when it went through.
 */
async function checkWatch(
  run: ProbeRun,
  client: Client,
  uri: string,
  name: "watch-unknown-uri" | "watch-unreadable-uri",
): Promise<WatchGateCheck> {
  try {
    await client.readResource({ uri }, run.requestOptions);
    run.step("note", `${name}: the server let the probe read ${shown(uri)}`);
    return {
      uri,
      read: "served",
      watch: null,
      detail: "the server let the probe read it",
    };
  } catch (error) {
    run.step("probe", `resources/read ${shown(uri)}: ${refusal(error, run)}`);
  }
  const answer = await watchOnce(run, client, uri);
  run.step(
    "probe",
    `${
      run.result.era === "2025" ? "resources/subscribe" : "subscriptions/listen"
    } ${shown(uri)} (${name}): ${answer.watch}`,
  );
  await answer.end?.().catch((error) =>
    run.step("note", `ending the watch failed: ${refusal(error, run)}`)
  );
  return { uri, read: "refused", watch: answer.watch, detail: answer.detail };
}

/** `--watch-gate`, once the rest is done: it never changes the level. */
async function checkWatchGate(run: ProbeRun, client: Client) {
  const { options, result } = run;
  if (!options.watchGate || result.era === null) return;
  // Notifications these watches bring are no update of the watched URI's.
  const unknown = await checkWatch(
    run,
    client,
    unknownUri(options.uri),
    "watch-unknown-uri",
  );
  const unreadable = options.unreadableUri === undefined
    ? null
    : await checkWatch(
      run,
      client,
      options.unreadableUri,
      "watch-unreadable-uri",
    );
  result.watchGate = { unknownUri: unknown, unreadableUri: unreadable };
}

// ---------------------------------------------------------------------------
// Server facts: the eras spoken, how long an idle stream lives, the cap
// ---------------------------------------------------------------------------

/** `--server-facts`: the most listens held open at once to find the cap. */
const LISTEN_CAP_TRIED = 8;

/** Who the facts' requests say they are: apart from the run's own client. */
const FACTS_CLIENT = { name: "mcp-subscription-probe-facts", version: "1" };

/** The 2026-07-28 `_meta` envelope every request of that era carries. */
const FACTS_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": FACTS_CLIENT,
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** A JSON object, or undefined for anything else. */
function parsedObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A response's JSON-RPC messages: a JSON body's one, or an event stream's
 * each `data:` line; a line over `--max-bytes` ends it with an error, as a
 * dropped connection does.
 */
async function* bodyMessages(
  response: Response,
  maxBytes: number,
): AsyncGenerator<Record<string, unknown>> {
  if (!response.body) return;
  const events = isEventStream(response);
  let json = "";
  for await (const line of boundedLines(response.body, maxBytes)) {
    if ("tooLong" in line) {
      throw new Error(`a line of ${line.tooLong} bytes, over --max-bytes`);
    }
    if (!events) {
      json += line.line;
      if (json.length > maxBytes) throw new Error("a body over --max-bytes");
    } else if (line.line.startsWith("data:")) {
      const message = parsedObject(line.line.slice(5).trim());
      if (message) yield message;
    }
  }
  const message = events ? undefined : parsedObject(json);
  if (message) yield message;
}

/** A JSON-RPC error's code and message, or the HTTP status without one. */
function answerError(
  message: Record<string, unknown> | undefined,
  status?: number,
): { code: number | null; message: string } {
  const error = isRecord(message?.error) ? message.error : undefined;
  if (!error) {
    return {
      code: null,
      message: status === undefined
        ? "no answer with an error"
        : `HTTP ${status}, no answer`,
    };
  }
  return {
    code: typeof error.code === "number" ? error.code : null,
    message: clipped(String(error.message ?? ""), 200),
  };
}

/** How an error answer reads on a line: its code, then its message, shown. */
function errorText(error: { code: number | null; message: string }): string {
  return `${error.code ?? ""} ${shown(error.message)}`.trim();
}

/** One request of the facts: its response, opened within `--timeout`. */
async function factsPost(
  run: ProbeRun,
  message: Record<string, unknown>,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  return await run.factsFetch(run.options.url!, {
    method: "POST",
    headers: {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: "2.0", ...message }),
    signal,
  });
}

/**
 * Over stdio: `message` to a fresh process of the server command, its
 * answer within `--timeout`, then the process group ended.
 */
async function stdioAnswer(run: ProbeRun, message: Record<string, unknown>) {
  const [program, ...args] = run.options.command!;
  const child = new Deno.Command(program, {
    args,
    clearEnv: true,
    env: serverEnvironment(),
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
    detached: true,
  }).spawn();
  const stdin = child.stdin.getWriter();
  const answered = (async () => {
    const line = `${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`;
    await stdin.write(new TextEncoder().encode(line));
    for await (const read of boundedLines(child.stdout, run.options.maxBytes)) {
      const answer = "line" in read ? parsedObject(read.line) : undefined;
      if (answer?.id === message.id) return { answer, detail: undefined };
    }
    return { answer: undefined, detail: "the server ended without an answer" };
  })().catch((error: Error) => ({
    answer: undefined,
    detail: shown(error.message),
  }));
  const outcome = await within(answered, run.options.timeoutSeconds * 1000);
  await endGroup(child);
  await stdin.close().catch(() => {});
  await child.status;
  await answered;
  return outcome === "late"
    ? { answer: undefined, detail: `no answer within --timeout` }
    : outcome;
}

/**
 * A request's answer, the first message with its id; undefined for none.
 * Over stdio, from a process of its own (no headers, no response).
 */
async function answerTo(
  run: ProbeRun,
  message: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{
  response?: Response;
  answer?: Record<string, unknown>;
  detail?: string;
}> {
  if (!run.options.url) return await stdioAnswer(run, message);
  const signal = AbortSignal.timeout(run.options.timeoutSeconds * 1000);
  try {
    const response = await factsPost(run, message, headers, signal);
    let unmatched: Record<string, unknown> | undefined;
    for await (const answer of bodyMessages(response, run.options.maxBytes)) {
      if (answer.id === message.id) return { response, answer };
      // Some errors (a 400 before the body is read) carry no id.
      if (answer.error !== undefined) unmatched ??= answer;
    }
    return { response, answer: unmatched };
  } catch (error) {
    return { response: undefined, detail: shown((error as Error).message) };
  }
}

/** 2025: `initialize`, and the session it opens when the server speaks it. */
async function speaks2025(run: ProbeRun) {
  const { response, answer, detail } = await answerTo(run, {
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: FACTS_CLIENT,
    },
  });
  const result = isRecord(answer?.result) ? answer.result : undefined;
  const version = typeof result?.protocolVersion === "string"
    ? result.protocolVersion
    : undefined;
  // The handshake era: an older version it offers instead (2024-11-05)
  // is still `initialize` and sessions.
  const spoken = version !== undefined && version !== "2026-07-28";
  const session = response?.headers.get("mcp-session-id") ?? undefined;
  const headers: Record<string, string> = session && version
    ? { "mcp-session-id": session, "mcp-protocol-version": version }
    : {};
  if (spoken && run.options.url) {
    await answerTo(run, { method: "notifications/initialized" }, headers);
  }
  return {
    fact: {
      spoken,
      detail: result
        ? `initialize answered ${shown(version ?? "with no protocol version")}`
        : detail ?? errorText(answerError(answer, response?.status)),
    },
    headers,
  };
}

/** 2026-07-28: `server/discover`, a stateless request. */
async function speaks2026(run: ProbeRun) {
  const { response, answer, detail } = await answerTo(run, {
    id: 2,
    method: "server/discover",
    params: { _meta: FACTS_META },
  }, { "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover" });
  const spoken = isRecord(answer?.result);
  return {
    spoken,
    detail: spoken
      ? "server/discover answered with a result"
      : detail ?? errorText(answerError(answer, response?.status)),
  };
}

/** A stream the probe holds, once the server took it. */
interface HeldStream {
  messages: AsyncGenerator<Record<string, unknown>>;
  stop: AbortController;
  openedAt: number;
}

/**
 * What the facts' listens ask for: the watched URI, or with
 * `--catalog-only`, where no URI is the server's, the watched lists.
 */
function factsFilter(options: ProbeOptions): SubscriptionFilter {
  return options.catalogOnly
    ? catalogFlags(options.catalog)
    : { resourceSubscriptions: [options.uri] };
}

/** A listen opened and acknowledged, or the server's refusal of it. */
async function openListen(
  run: ProbeRun,
  id: number,
): Promise<HeldStream | { code: number | null; message: string }> {
  const stop = new AbortController();
  const opening = setTimeout(
    () => stop.abort(),
    run.options.timeoutSeconds * 1000,
  );
  try {
    const openedAt = performance.now();
    const response = await factsPost(run, {
      id,
      method: "subscriptions/listen",
      params: { notifications: factsFilter(run.options), _meta: FACTS_META },
    }, {
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen",
    }, stop.signal);
    const messages = bodyMessages(response, run.options.maxBytes);
    const first = (await messages.next()).value;
    if (first?.method === "notifications/subscriptions/acknowledged") {
      return { messages, stop, openedAt };
    }
    stop.abort();
    return answerError(first || undefined, response.status);
  } catch (error) {
    stop.abort();
    return { code: null, message: (error as Error).message };
  } finally {
    clearTimeout(opening);
  }
}

/**
 * Holds a stream idle up to `bound` seconds and says how it ended; a listen
 * (`listenId`) ends gracefully with its result, a GET stream with a clean end.
 */
async function holdIdle(
  run: ProbeRun,
  held: HeldStream,
  bound: number,
  listenId?: number,
): Promise<StreamLifetime> {
  const timer = setTimeout(() => held.stop.abort(), bound * 1000);
  const ended = (how: StreamLifetime["ended"], detail: string) => ({
    ended: how,
    seconds: run.elapsed(held.openedAt),
    detail,
  });
  try {
    for await (const message of held.messages) {
      if (listenId === undefined || message.id !== listenId) continue;
      if (isRecord(message.result)) {
        return ended("graceful", "the listen's result came as its last frame");
      }
      return ended(
        "abrupt",
        `ended with an error: ${errorText(answerError(message, 200))}`,
      );
    }
    return listenId === undefined
      ? ended("graceful", "the server ended the stream cleanly")
      : ended("abrupt", "the stream closed without the listen's result");
  } catch (error) {
    if (held.stop.signal.aborted) {
      return ended("open-at-bound", `still open after ${bound} s`);
    }
    return ended(
      "abrupt",
      `the connection dropped: ${shown((error as Error).message)}`,
    );
  } finally {
    clearTimeout(timer);
    held.stop.abort();
  }
}

/** A stream that was never opened, and why. */
function notOpened(detail: string): StreamLifetime {
  return { ended: "not-opened", seconds: null, detail };
}

/** An idle 2025 GET stream on the facts' own session, held up to `bound`. */
async function getStreamLifetime(
  run: ProbeRun,
  headers: Record<string, string>,
  bound: number,
): Promise<StreamLifetime> {
  const stop = new AbortController();
  const openedAt = performance.now();
  const opening = setTimeout(
    () => stop.abort(),
    run.options.timeoutSeconds * 1000,
  );
  try {
    const response = await run.factsFetch(run.options.url!, {
      method: "GET",
      headers: { accept: "text/event-stream", ...headers },
      signal: stop.signal,
    });
    clearTimeout(opening);
    if (!isEventStream(response)) {
      await response.body?.cancel();
      return notOpened(`HTTP ${response.status}, no event stream`);
    }
    const messages = bodyMessages(response, run.options.maxBytes);
    return await holdIdle(run, { messages, stop, openedAt }, bound);
  } catch (error) {
    return notOpened(shown((error as Error).message));
  } finally {
    clearTimeout(opening);
  }
}

/**
 * An idle listen held up to `bound` seconds while more are opened beside
 * it, up to `LISTEN_CAP_TRIED` at once or the first refused.
 */
async function listenFacts(run: ProbeRun, bound: number) {
  const first = await openListen(run, 100);
  if (!("messages" in first)) {
    return {
      listen: notOpened(`refused: ${errorText(first)}`),
      cap: { accepted: 0, atLeast: false, refusal: first },
    };
  }
  const lifetime = holdIdle(run, first, bound, 100);
  const beside: HeldStream[] = [];
  let refusal: { code: number | null; message: string } | null = null;
  while (beside.length + 1 < LISTEN_CAP_TRIED && refusal === null) {
    const next = await openListen(run, 101 + beside.length);
    if ("messages" in next) beside.push(next);
    else refusal = next;
  }
  for (const held of beside) held.stop.abort();
  const accepted = beside.length + 1;
  return {
    listen: await lifetime,
    cap: { accepted, atLeast: refusal === null, refusal },
  };
}

/** `--server-facts`, once the run is over: never changes the level. */
async function measureServerFacts(run: ProbeRun) {
  const { options, result } = run;
  const bound = options.serverFacts;
  if (bound === undefined) return;
  run.step("note", `server facts: eras, idle streams held up to ${bound} s`);
  const legacy = await speaks2025(run);
  const modern = await speaks2026(run);
  const unspoken = (era: Era) => notOpened(`the server does not speak ${era}`);
  // A stdio server's streams are its one process's, for as long as it runs.
  const http = options.url !== undefined;
  const [getStream, listened] = await Promise.all([
    !http
      ? null
      : legacy.fact.spoken
      ? getStreamLifetime(run, legacy.headers, bound)
      : unspoken("2025"),
    http && modern.spoken ? listenFacts(run, bound) : undefined,
  ]);
  if (options.url && legacy.headers["mcp-session-id"]) {
    await run.factsFetch(options.url, {
      method: "DELETE",
      headers: legacy.headers,
      signal: AbortSignal.timeout(options.timeoutSeconds * 1000),
    }).then((response) => response.body?.cancel()).catch(() => {});
  }
  const listen = !http ? null : listened?.listen ?? unspoken("2026-07-28");
  result.serverFacts = {
    bound,
    eras: { "2025": legacy.fact, "2026-07-28": modern },
    getStream,
    listen,
    gracefulListenEnd: listen?.ended === "graceful"
      ? "yes"
      : listen?.ended === "abrupt"
      ? "no"
      : "not-seen",
    listenCap: listened?.cap ?? null,
  };
  run.step("note", `server facts: ${serverFactsSummary(result.serverFacts)}`);
}

/** The facts in one line, for the steps and the servers table. */
export function serverFactsSummary(facts: ServerFacts): string {
  const eras = (["2025", "2026-07-28"] as const).filter((era) =>
    facts.eras[era].spoken
  );
  const lifetime = (name: string, stream: StreamLifetime | null) =>
    stream === null || stream.ended === "not-opened"
      ? []
      : [`${name} ${stream.ended} ${stream.seconds} s`];
  const cap = facts.listenCap;
  return [
    `eras ${eras.join(", ") || "none"}`,
    ...lifetime("GET stream", facts.getStream),
    ...lifetime("listen", facts.listen),
    ...cap ? [`listen cap ${listenCapText(cap)}`] : [],
  ].join("; ");
}

/** The cap as the lines show it: "2", "at least 8", "0". */
function listenCapText(cap: NonNullable<ServerFacts["listenCap"]>): string {
  return cap.atLeast ? `at least ${cap.accepted}` : `${cap.accepted}`;
}

// ---------------------------------------------------------------------------
// A probe run: connect, read, subscribe, wait, re-read, stop
// ---------------------------------------------------------------------------

/** The steps after connecting, stopping at the first failure. */
async function probeConnected(run: ProbeRun, client: Client) {
  const { result } = run;
  const negotiated = client.getNegotiatedProtocolVersion() ?? null;
  result.era = negotiated === "2026-07-28" ? "2026-07-28" : "2025";
  result.protocolVersion = negotiated;
  const info = client.getServerVersion();
  result.server = info
    ? { name: clipped(info.name), version: clipped(info.version) }
    : null;
  const resources = client.getServerCapabilities()?.resources;
  result.capabilities = {
    subscribe: resources?.subscribe === true,
    listChanged: resources?.listChanged === true,
  };
  run.step(
    "probe",
    result.era === "2025" ? `initialize (${negotiated})` : "server/discover",
  );
  run.step("server", `capabilities ${JSON.stringify(result.capabilities)}`);
  const lists = await listCatalog(run, client);
  const ready = await resourceReady(run, client);
  const stop = ready === "subscribe" ? await subscribe(run, client) : undefined;
  const closeCatalogListen = await listenForCatalog(run, client, lists);
  const relisting = relistOnNotices(run, client, lists);
  if (stop) {
    const wait = startWait(run);
    const changed = await changeResource(
      run,
      client,
      (command) => rereadWhileChanging(run, client, wait, command),
    );
    if (changed) await awaitUpdates(run, client, wait);
    else run.catalogNotices.end();
  } else if (ready === "unadvertised") {
    await changeUnasked(run, client);
  } else if (lists.length > 0 && !await changeResource(run, client)) {
    // The catalog's change is made even where the resource's check stopped.
    run.catalogNotices.end();
  }
  await finishCatalog(run, client, lists, relisting);
  await closeCatalogListen?.();
  await stop?.();
  await checkWatchGate(run, client);
}

/**
 * The resource's check up to subscribing: listed, read, and whether the
 * server advertises subscriptions; nothing when it stopped on the way.
 */
async function resourceReady(
  run: ProbeRun,
  client: Client,
): Promise<"subscribe" | "unadvertised" | undefined> {
  const { options, result } = run;
  if (options.catalogOnly) {
    result.missing = "no resource watched (--catalog-only)";
    return undefined;
  }
  if (!options.skipListCheck && !await listed(run, client)) return undefined;
  if (!await readFirst(run, client)) return undefined;
  if (result.capabilities?.subscribe) return "subscribe";
  run.fail(
    "subscribe-not-advertised",
    "the server does not advertise resources.subscribe",
  );
  return "unadvertised";
}

/**
 * Probes one server: connects in the asked era, reads the resource,
 * subscribes (or listens), waits for each update and re-reads it, then
 * unsubscribes and watches for stray notifications. Never throws for what
 * the server does; the result says it.
 */
export async function probeServer(
  options: ProbeOptions,
  progress: (line: string) => void = () => {},
): Promise<ProbeResult> {
  const run = new ProbeRun(options, progress);
  const client = probeClient(options.era);
  const transport = options.url
    ? new StreamableHTTPClientTransport(options.url, { fetch: run.fetch })
    : new ServerProcess(options.command!, run);
  tapTransport(transport, run);
  try {
    await withinTimeout(client.connect(transport), options.timeoutSeconds);
  } catch (error) {
    connectFailure(run, error);
    await client.close().catch((closing) =>
      run.step("note", `close failed: ${shown(rpcError(closing).message)}`)
    );
    // The client does not wait for its transport: a stdio server must be
    // gone before the probe exits.
    await transport.close();
    // Which eras a server speaks matters most when the asked one failed.
    await measureServerFacts(run);
    return run.finish();
  }
  // An error answered while connecting (a 2025 server's to
  // server/discover) is no later request's.
  run.wireError = undefined;
  try {
    await probeConnected(run, client);
  } finally {
    await closeProbe(run, client, transport);
  }
  await measureServerFacts(run);
  return run.finish();
}

// ---------------------------------------------------------------------------
// Output: key value lines
// ---------------------------------------------------------------------------

/** The default output: one `key value` line per fact, stable for scripts. */
export function probeLines(
  result: ProbeResult,
  uriDefaulted = false,
): string[] {
  const lines = [
    `target ${result.target}`,
    result.uri === null
      ? "uri none (--catalog-only)"
      : `uri ${shown(result.uri)}${
        uriDefaulted
          ? " (the default: this lab's resource, meaningful only against the lab)"
          : ""
      }`,
    `era ${
      result.era
        ? `${result.era} (${shown(result.protocolVersion ?? "")})`
        : "none"
    }`,
  ];
  if (result.server) {
    lines.push(
      `server ${shown(result.server.name)} ${shown(result.server.version)}`,
    );
  }
  if (result.capabilities) {
    lines.push(`capabilities ${JSON.stringify(result.capabilities)}`);
  }
  if (result.resourceFound !== null) {
    lines.push(`resource-found ${result.resourceFound}`);
  }
  if (result.initial !== null) {
    lines.push(`initial ${jsonText(result.initial)}`);
  }
  if (result.initial !== null) lines.push(`subscribed ${result.subscribed}`);
  if (result.acknowledged !== null) {
    lines.push(`acknowledged ${jsonText(result.acknowledged)}`);
  }
  if (result.embed) {
    lines.push(
      result.embed === "asked"
        ? "embed asked"
        : `embed unavailable: ${EMBED_UNAVAILABLE}`,
    );
  }
  const { subscribeResult, listSubscriptions, unsubscribedBy } =
    result.nonStandard;
  if (subscribeResult) {
    lines.push(`subscribe-result ${shown(subscribeResult.join(","))}`);
  }
  if (listSubscriptions) lines.push(`list-subscriptions ${listSubscriptions}`);
  if (result.call) {
    lines.push(
      `called ${shown(result.call.name)} ${
        result.call.ok ? "ok" : `failed: ${shown(result.call.error ?? "")}`
      }`,
    );
  }
  if (result.changeVia) {
    const { url, delivered } = result.changeVia;
    lines.push(
      `change-via ${url} ${
        delivered === null ? "not-made" : delivered ? "delivered" : "lost"
      }`,
    );
  }
  if (result.change) {
    const { exitCode, seconds, output, error } = result.change;
    lines.push(
      `change exit=${exitCode} seconds=${seconds} output=${jsonText(output)}${
        error ? ` error=${jsonText(error)}` : ""
      }`,
    );
  }
  for (const update of result.updates) {
    lines.push(
      `notification-received true after=${update.afterSeconds}s uri=${
        shown(update.uri)
      }${update.duringChange ? " during=change" : ""}`,
      `changed ${update.changed}`,
    );
    if (update.final !== null) {
      lines.push(`final ${jsonText(update.final)}`);
    }
    lines.push(inlineLine(update.inline));
  }
  if (result.errorCode === "notification-timeout") {
    lines.push("notification-received false");
  }
  if (result.subscribed) {
    lines.push(`unchanged-notifications ${unchangedCount(result)}`);
  }
  if (result.textsCut) {
    const { count, bytesEach } = result.textsCut;
    lines.push(`texts-cut ${count} bytes-each=${bytesEach}`);
  }
  if (result.era !== null) {
    const { count, uris } = result.unsolicited;
    lines.push(
      `unsolicited-notifications ${count}${
        count ? ` uris=${jsonText(uris)}` : ""
      }`,
    );
  }
  if (result.inlineDefect) lines.push(`inline-defect ${result.inlineDefect}`);
  if (result.unsubscribed !== null) {
    lines.push(
      `unsubscribed ${result.unsubscribed}${
        unsubscribedBy ? ` by=${unsubscribedBy}` : ""
      }`,
    );
  }
  if (result.quietAfterStop !== null) {
    lines.push(`quiet-after-unsubscribe ${result.quietAfterStop}`);
  }
  lines.push(
    ...catalogLines(result),
    ...watchGateLines(result),
    ...serverFactsLines(result),
  );
  lines.push(
    `level ${result.level} ${result.levelName}`,
    `missing ${result.missing}`,
    `error-code ${result.errorCode ?? "null"}`,
    `summary level=${result.level} era=${result.era ?? "none"} notifications=${
      changedCount(result)
    }/${result.expectedUpdates}${
      result.catalog ? ` catalog=${result.catalog.level}` : ""
    } error-code=${result.errorCode ?? "null"} exit=${result.exitStatus}`,
  );
  // Server text is quoted where it came in; nothing raw reaches a terminal.
  return lines.map(lineText);
}

/** `--watch-gate`: a line per URI, what the server did with a watch on it. */
function watchGateLines(result: ProbeResult): string[] {
  const gate = result.watchGate;
  if (!gate) return [];
  return ([
    ["watch-unknown-uri", gate.unknownUri],
    ["watch-unreadable-uri", gate.unreadableUri],
  ] as const).flatMap(([name, check]) =>
    check
      ? [
        `${name} ${check.watch ?? "untested"} uri=${
          shown(check.uri)
        } ${check.detail}`,
      ]
      : []
  );
}

/** `--server-facts`: a line per fact, each never part of the level. */
function serverFactsLines(result: ProbeResult): string[] {
  const facts = result.serverFacts;
  if (!facts) return [];
  const stream = (name: string, lifetime: StreamLifetime | null) =>
    lifetime === null
      ? `${name} not-measured over stdio: the server's streams are its process's`
      : `${name} ${lifetime.ended}${
        lifetime.seconds === null ? "" : ` seconds=${lifetime.seconds}`
      } ${lifetime.detail}`;
  const cap = facts.listenCap;
  return [
    `server-facts bound=${facts.bound}`,
    ...(["2025", "2026-07-28"] as const).map((era) =>
      `era-${era} ${facts.eras[era].spoken ? "spoken" : "not-spoken"} ${
        facts.eras[era].detail
      }`
    ),
    stream("get-stream-lifetime", facts.getStream),
    stream("listen-lifetime", facts.listen),
    `listen-graceful-end ${facts.gracefulListenEnd}`,
    cap
      ? `listen-cap ${cap.atLeast ? "at-least-" : ""}${cap.accepted}${
        cap.refusal ? ` refused=${errorText(cap.refusal)}` : ""
      }`
      : `listen-cap not-measured ${
        facts.listen === null
          ? "over stdio"
          : "the server does not speak 2026-07-28"
      }`,
  ];
}

/** `--catalog`: a line per list, then the catalog's level and next step. */
function catalogLines(result: ProbeResult): string[] {
  const catalog = result.catalog;
  if (!catalog) return [];
  const lists = Object.entries(catalog.kinds).map(([kind, list]) =>
    [
      `catalog ${kind} level=${list.level} listed=${
        list.first?.count ?? "none"
      } notifications=${list.notifications}`,
      list.notifiedAfter === null ? "" : ` after=${list.notifiedAfter}s`,
      list.first ? ` listed-again=${list.again?.count ?? "none"}` : "",
      list.again
        ? ` added=${jsonText(list.added)} removed=${jsonText(list.removed)}`
        : "",
      list.unchangedRelists ? ` unchanged=${list.unchangedRelists}` : "",
      ` list-changed=${list.listChanged}`,
      list.asked === null ? "" : ` asked=${list.asked}`,
    ].join("")
  );
  return [
    ...lists,
    `catalog-level ${catalog.level} ${catalog.levelName}`,
    `catalog-missing ${catalog.missing}`,
  ];
}

/**
 * One notification's inline content: the shape, its size, and where it
 * first differs from the re-read, never the content whole.
 */
function inlineLine(inline: InlineContent): string {
  if (!inline.shape) {
    return `inline-content none${
      inline.extraParams.length > 0
        ? ` extra-params=${jsonText(inline.extraParams)}`
        : ""
    }`;
  }
  return [
    `inline-content ${inline.status} shape=${inline.shape}`,
    inline.mimeType === null ? "" : ` mime=${shown(inline.mimeType)}`,
    ` chars=${inline.chars} bytes=${inline.bytes}`,
    inline.depth === undefined ? "" : ` depth=${inline.depth}`,
    inline.differsAt === undefined
      ? ""
      : ` at=${inline.differsAt} inline=${
        jsonText(inline.inlineThere)
      } defect=${inline.defect}`,
    inline.contentUri === undefined
      ? ""
      : ` content-uri=${shown(inline.contentUri)}`,
    inline.subscription === undefined
      ? ""
      : ` subscription=${shown(inline.subscription)}`,
  ].join("");
}

// ---------------------------------------------------------------------------
// Output: the Markdown report
// ---------------------------------------------------------------------------

/** Text in a code block no line of it can close. */
function fenced(text: string): string[] {
  const longest = Math.max(
    0,
    ...(text.match(/`+/g) ?? []).map((run) => run.length),
  );
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}text`, ...text.trimEnd().split("\n"), fence];
}

/** The report's paragraphs on content in the notifications and FastRMCP's dialect. */
function contentFindings(result: ProbeResult): string[] {
  const findings: string[] = [];
  if (result.inlineDefect) {
    findings.push(`**Server defect:** ${cell(result.inlineDefect)}.`, "");
  }
  const inline = result.updates.map((update) =>
    inlineLine(update.inline).slice("inline-content ".length)
  );
  if (result.embed || inline.some((line) => line !== "none")) {
    findings.push(
      `Content in the notifications${
        result.embed ? ` (\`--embed\`: ${result.embed})` : ""
      }: ${
        inline.map((line, index) => `${index + 1}. ${cell(line)}`).join("; ") ||
        "none came"
      }.`,
      "",
    );
  }
  const { subscribeResult, listSubscriptions, unsubscribedBy } =
    result.nonStandard;
  const dialect = [
    subscribeResult &&
    `resources/subscribe answered with fields ${
      cell(subscribeResult.join(", "))
    }`,
    listSubscriptions === "supported" &&
    "resources/list_subscriptions answered",
    listSubscriptions === "too-large" &&
    "resources/list_subscriptions answered over --max-bytes, dropped",
    unsubscribedBy &&
    "resources/unsubscribe {uri} was refused and {subscriptionId} accepted",
  ].filter(Boolean);
  if (dialect.length > 0) {
    findings.push(
      `Not in the spec (FastRMCP's dialect), reported and not graded: ${
        dialect.join("; ")
      }.`,
      "",
    );
  }
  return findings;
}

/**
 * The report's paragraphs beyond the level: notifications without a
 * change, unsolicited ones, and what `--change` did.
 */
function probeFindings(result: ProbeResult): string[] {
  const findings = contentFindings(result);
  const unchanged = unchangedSummary(result);
  if (unchanged) {
    const when = result.updates.filter((update) => !update.changed).map(
      (update) => `${update.afterSeconds} s`,
    );
    findings.push(`${unchanged} (after ${when.join(", ")}).`, "");
  }
  const { count, uris } = result.unsolicited;
  if (count > 0) {
    findings.push(
      `${count} notification(s) for resources the probe had not subscribed to: ${
        uris.map(cell).join(", ")
      }.`,
      "",
    );
  }
  const via = result.changeVia;
  if (via && via.delivered !== null) {
    findings.push(
      `The change was made through \`${
        cell(via.url)
      }\` (\`--change-via\`), not the endpoint holding the stream: ${
        via.delivered
          ? "delivered across them"
          : "lost, the update never left the endpoint it was published on"
      }.`,
      "",
    );
  }
  const change = result.change;
  if (change) {
    findings.push(
      `\`--change\` ran for ${change.seconds} s: ${
        change.exitCode === 0 ? "exit status 0" : cell(change.error ?? "")
      }${change.output ? "; its output:" : ", no output."}`,
      "",
    );
    if (change.output) findings.push(...fenced(change.output), "");
  }
  return findings;
}

/** What each watch gate answer means, for the report. */
const WATCH_GATE_MEANING = {
  accepted: "the server let the probe watch it",
  refused: "the server refused the watch",
  filtered: "the listen was acknowledged without it: nothing will be sent",
} as const;

/** `--watch-gate`: a row per URI watched, with what it means. */
function watchGateReport(result: ProbeResult): string[] {
  const gate = result.watchGate;
  if (!gate) return [];
  const rows = ([
    ["a URI it does not serve", gate.unknownUri],
    ["a URI it refuses to read", gate.unreadableUri],
  ] as const).flatMap(([what, check]) =>
    check
      ? [
        `| ${what} | ${cell(check.uri)} | ${check.read} | ${
          check.watch ?? "untested"
        } | ${
          cell(
            check.watch ? WATCH_GATE_MEANING[check.watch] : check.detail,
          )
        } | ${cell(check.detail)} |`,
      ]
      : []
  );
  return [
    "### Who may watch",
    "",
    "Never part of the level: a server that lets anyone watch a URI they may not read tells them when it changes.",
    "",
    "| Watched | URI | Read | Watch | Meaning | Answer |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ];
}

/** `--server-facts`: a row per fact, with how it was measured. */
function serverFactsReport(result: ProbeResult): string[] {
  const facts = result.serverFacts;
  if (!facts) return [];
  const heading = [
    "### Server facts",
    "",
    "Never part of the level: what a client meets here, measured on connections of the probe's own once the run was over.",
    "",
  ];
  const stream = (lifetime: StreamLifetime | null) =>
    lifetime === null
      ? "not measured over stdio: the server's streams are its process's"
      : `${lifetime.ended}${
        lifetime.seconds === null ? "" : ` after ${lifetime.seconds} s`
      }: ${lifetime.detail}`;
  const cap = facts.listenCap;
  const rows = [
    ...(["2025", "2026-07-28"] as const).map((era) => [
      `Speaks ${era}`,
      `${facts.eras[era].spoken ? "yes" : "no"}: ${facts.eras[era].detail}`,
    ]),
    [
      `An idle GET stream (held up to ${facts.bound} s)`,
      stream(facts.getStream),
    ],
    [`An idle listen (held up to ${facts.bound} s)`, stream(facts.listen)],
    ["Ends a listen gracefully", facts.gracefulListenEnd],
    [
      "Listens at once",
      cap
        ? `${listenCapText(cap)}${
          cap.refusal ? `, then refused: ${errorText(cap.refusal)}` : ""
        }`
        : facts.listen === null
        ? "not measured over stdio"
        : "not measured: no 2026-07-28",
    ],
  ];
  return [
    ...heading,
    "| Fact | Seen |",
    "| --- | --- |",
    ...rows.map(([fact, seen]) => `| ${cell(fact)} | ${cell(seen)} |`),
    "",
  ];
}

/** `--catalog`: the catalog's level, and a row per list of each step. */
function catalogReport(result: ProbeResult): string[] {
  const catalog = result.catalog;
  if (!catalog) return [];
  const names = (kept: string[]) => kept.length ? cell(kept.join(", ")) : "—";
  const rows = Object.entries(catalog.kinds).map(([kind, list]) =>
    `| ${
      [
        kind,
        `${MARK(list.level >= 1)} ${list.first?.count ?? ""}`.trim(),
        MARK(list.listChanged),
        list.asked === null ? "—" : MARK(list.asked),
        `${MARK(list.level >= 2)} ${list.notifications}`,
        `${MARK(list.level >= 3)} ${list.again?.count ?? ""}`.trim(),
        names(list.added),
        names(list.removed),
        `${list.level}`,
        cell(list.missing),
      ].join(" | ")
    } |`
  );
  return [
    "### Catalog",
    "",
    `Catalog level ${catalog.level} of 3, ${catalog.levelName}. Next: ${
      cell(catalog.missing)
    }.`,
    "",
    "| List | Listed | Advertises listChanged | Asked on the listen | Notified | Listed again with a difference | Added | Removed | Level | Next |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
  ];
}

/** The Markdown report: a matrix row for the server and what happened. */
export function probeMarkdown(result: ProbeResult): string {
  const reached = (level: number) => MARK(result.level >= level);
  const name = result.server
    ? `${result.server.name}/${result.server.version}`
    : result.target;
  const diagram = [
    "sequenceDiagram",
    "    participant P as probe",
    `    participant S as ${mermaidText(name)}`,
    ...result.steps.map(({ from, text }) =>
      `    ${
        from === "probe"
          ? "P->>S: "
          : from === "server"
          ? "S-->>P: "
          : "Note over P,S: "
      }${mermaidText(text)}`
    ),
  ];
  return [
    "# MCP subscription probe report",
    "",
    `Probe ${result.probe}, ${new Date().toISOString()}; target ${
      cell(result.target)
    } (${result.transport}), ${
      result.uri === null
        ? "no resource (`--catalog-only`)"
        : `resource ${cell(result.uri)}`
    }.`,
    "",
    "| Server | Version | Era (protocol) | Transport | Connected | Advertises subscribe | Read | Subscribed | Notified | Re-read changed | Stops cleanly | Level | Notes |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    `| ${
      [
        cell(result.server?.name ?? result.target),
        cell(result.server?.version ?? "unknown"),
        result.era
          ? `${result.era} (${cell(result.protocolVersion ?? "")})`
          : "none",
        result.transport,
        reached(1),
        reached(2),
        reached(3),
        reached(4),
        reached(5),
        reached(6),
        reached(7),
        `${result.level}`,
        cell(result.missing),
      ].join(" | ")
    } |`,
    "",
    `## ${cell(name)}`,
    "",
    `Level ${result.level} of 7, ${result.levelName}. Next: ${
      cell(result.missing)
    }. Exit status ${result.exitStatus} (error-code ${
      result.errorCode ?? "null"
    }).`,
    "",
    ...probeFindings(result),
    ...catalogReport(result),
    ...watchGateReport(result),
    ...serverFactsReport(result),
    "```mermaid",
    ...diagram,
    "```",
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------
// Entry
// ---------------------------------------------------------------------------

/**
 * `probe.ts` and `main.ts probe`: checks the flags (and the token variable
 * in `env`), probes, and prints one form of the result on stdout; progress
 * goes to stderr. Resolves with the exit status: 2 for bad flags.
 */
export async function probeMain(
  args: string[],
  env: Record<string, string | undefined> = readEnvironment([
    "MCP_PROBE_AUTH_TOKEN",
  ]),
): Promise<number> {
  let options: ProbeOptions | "help";
  try {
    options = parseProbeArgs(args, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`probe error: ${error.message}`);
    return 2;
  }
  if (options === "help") {
    console.log(probeHelpText());
    return 0;
  }
  const result = await probeServer(
    options,
    (line) => console.error(`[probe] ${line}`),
  );
  const markdown = options.report ? probeMarkdown(result) : "";
  if (options.json) console.log(jsonText(result, 2));
  else if (options.report === "-") console.log(markdown);
  else console.log(probeLines(result, options.uriDefaulted).join("\n"));
  if (options.report && options.report !== "-") {
    try {
      await Deno.writeTextFile(options.report, markdown);
    } catch (error) {
      console.error(
        `probe error: cannot write ${options.report}: ${
          (error as Error).message
        }`,
      );
      return 2;
    }
  }
  return result.exitStatus;
}

if (import.meta.main) Deno.exit(await probeMain(Deno.args));
