/**
 * MCP resource subscription lab.
 *
 * Serves one MCP resource, `test://review/status`, changes it a few seconds
 * after a client subscribes (and, with `--catalog-change`, adds a tool, a
 * prompt or a resource to that client's catalog), and logs every step as a
 * bracketed evidence line.
 * For each client it then judges how far the client got (the levels of the
 * verdict) and hands over a report to paste into a bug report.
 *
 * Both protocol eras share one endpoint: 2025 clients (`initialize`, sessions,
 * `resources/subscribe`, notifications on the GET stream) and 2026-07-28
 * clients (`server/discover`, stateless requests, `subscriptions/listen`).
 *
 * ```sh
 * deno run -A main.ts              # -> listening on http://127.0.0.1:8089/mcp
 * deno run -A main.ts --stdio      # one client over stdin/stdout
 * deno run -P main.ts              # only the permissions deno.json declares
 * deno run -A main.ts probe --url http://127.0.0.1:8080/mcp --uri review://pr/42
 * deno run -A main.ts --bus redis://127.0.0.1:6379   # one of several replicas
 * deno run --allow-net=127.0.0.1 --allow-env='MCP_TEST_*' <url>/main.ts
 * ```
 *
 * Settings come from `MCP_TEST_*` environment variables or flags (`--help`);
 * `GET /report` and `GET /report.md` give the verdicts. `probe.ts` (which
 * checks any server: `main.ts probe`) and `bus.ts` (the replicas' Redis bus:
 * `--bus`, whose seam here is `Peers`, `LabState`'s `mirror…` methods and
 * `ReplicaLink`) stand beside this file, loaded only when used, so
 * `main.ts` alone still runs. The sections, in reading order
 * (`docs/architecture.md` walks them), and what each exports:
 *
 * 1. Configuration: `LAB_VERSION`, `SDK_VERSION`, `UpdateTrigger`,
 *    `CATALOG_KINDS`, `CatalogKind`, `withoutPassword`, `LabConfig`,
 *    `ConfigError`, `loadConfig`, `parseFlags`, `parseCommandLine`
 * 2. Shared with the probe and the harness: `jsonText`, `lineValue`,
 *    `lineText`, `lineWords`, `MARK`, `cell`, `markdownText`, `mermaidText`,
 *    `isEventStream`, `whenStreamEnds`, `within`, `BoundedLine`,
 *    `boundedLines`, `readEnvironment`
 * 3. The resource, and the text an update carries: `REVIEW_URI`,
 *    `REVIEW_TOOL`, `CATALOG_ADDED`
 * 4. Clients: `Era`, `LabTransportKind`, `ChangeNotification`, `busName`,
 *    `deliverySchema`, `Delivery`, `sendFailed`, `STEP_KINDS`, `StepKind`,
 *    `READ_ROUTES`, `stepSchema`, `Step`, `LabClient`, `WAIT_ENDS`,
 *    `SESSION_END_REASONS`, `MAX_NAME_LENGTH`, `MAX_URI_LENGTH`
 * 5. The evidence log: `LineSink`, `Logger`
 * 6. Steps: `stepFactsSchema`, `StepFacts`
 * 7. Lab state: `Peers`, `clientIdentitySchema`, `LabState`, `ReplicaLink`
 * 8. Reproduce: `DOCUMENTED_CLIENTS`, `Reproduce`, `shellQuote`
 * 9. Verdicts: `VerdictSteps`, `ClientReport`, `LabReport`
 * 10. The Markdown report: `REPORT_LIMIT`
 * 11. The CI gate; 12. Refusals; 13. The lab's MCP server, shared by both
 *     eras and both transports; 14. Listen streams and client identities
 *     (2026-07-28, HTTP and stdio); 15. HTTP; 16. The 2025 era; 17. The
 *     2026-07-28 era
 * 18. Serving HTTP: `Lab`, `LabCounts`, `createLab`, `shutdownSignals`
 * 19. Serving stdio; 20. Entry: `main`
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { createHash, timingSafeEqual } from "node:crypto";
import { parseArgs, type ParseArgsOptionsConfig } from "node:util";
import { z } from "npm:zod@4.6.7";
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  hostHeaderValidationResponse,
  isInitializeRequest,
  isJsonContentType,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isLegacyRequest,
  type JSONRPCMessage,
  localhostAllowedHostnames,
  originValidationResponse,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  readRequestBody,
  type RequestId,
  ResourceNotFoundError,
  Server,
  type ServerContext,
  type ServerEvent,
  type ServerEventBus,
  SUBSCRIPTION_ID_META_KEY,
  type Transport,
  type TransportSendOptions,
  WebStandardStreamableHTTPServerTransport,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { serveStdio } from "npm:@modelcontextprotocol/server@2.4.0/stdio";

/** The lab's own version, reported by `/healthz`, the banner and reports. */
export const LAB_VERSION = "0.2.0";
/** The MCP server SDK version imported above (kept equal by a test). */
export const SDK_VERSION = "2.4.0";

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

const booleanWord = z.stringbool({
  truthy: ["true", "1", "yes", "on"],
  falsy: ["false", "0", "no", "off"],
});

const seconds = z.string().regex(/^\d+(\.\d+)?$/).transform(Number);

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

const UPDATE_TRIGGERS = ["subscribe", "read", "connect", "wait"] as const;
/** What starts a client's updates. */
export type UpdateTrigger = (typeof UPDATE_TRIGGERS)[number];

/** The lists a client's catalog holds, each of which may change. */
export const CATALOG_KINDS = ["tools", "prompts", "resources"] as const;
/** A list of the catalog: `tools/list`, `prompts/list` or `resources/list`. */
export type CatalogKind = (typeof CATALOG_KINDS)[number];

const INLINE_SHAPES = ["off", "sep-3119", "fastrmcp"] as const;
/** A shape the new text takes inside an update notification. */
type InlineShape = Exclude<(typeof INLINE_SHAPES)[number], "off">;

/** A switch, off by default; its flag takes no value (present means true). */
const SWITCH = {
  defaultValue: "false",
  allowed: "true/false/1/0/yes/no/on/off",
  schema: booleanWord,
};

const UP_TO_A_DAY = {
  allowed: "a number of seconds from 0 to 86400, fractions allowed",
  schema: seconds.pipe(z.number().max(86400)),
};

/** A status word: one short line of visible text. */
const STATUS_WORD = {
  allowed: "1 to 80 characters on one line",
  schema: z.string().regex(/^[^\r\n]{1,80}$/),
};

/** An integer setting from `min` to `max`. */
function integer(min: number, max: number) {
  const digits = new RegExp(`^\\d{1,${String(max).length}}$`);
  return {
    allowed: `an integer from ${min} to ${max}`,
    schema: z.string().regex(digits).transform(Number).pipe(
      z.number().min(min).max(max),
    ),
  };
}

/** `integer`, or empty: `null` (no level required, no cap). */
function optionalInteger(min: number, max: number, allowed?: string) {
  const number = integer(min, max);
  const orEmpty = z.string().transform((text) => text || null);
  return {
    defaultValue: "",
    allowed: allowed ?? `empty, or ${number.allowed}`,
    schema: orEmpty.pipe(number.schema.nullable()),
  };
}

/**
 * Every setting, in `--help`'s and the README's order (its variable is
 * `envName(name)`, its flag `flagName`'s); `allowed` is what a bad value's
 * error message says.
 */
const SETTINGS = {
  port: {
    defaultValue: "8089",
    description: "TCP port the lab listens on (0 picks a free port)",
    ...integer(0, 65535),
  },
  host: {
    defaultValue: "127.0.0.1",
    description: "Interface to bind (0.0.0.0 inside containers)",
    allowed: "a host name or IP address without spaces",
    schema: z.string().regex(/^[^\s/]+$/),
  },
  path: {
    defaultValue: "/mcp",
    description:
      "Additional MCP endpoint path; /mcp is always served and both share one lab",
    allowed:
      "a path starting with / (not /healthz or /report), without spaces, ? or #",
    schema: z.string().regex(/^\/[^\s?#]*$/).refine((path) =>
      !["/healthz", "/report", "/report.md"].includes(path)
    ),
  },
  era: {
    defaultValue: "both",
    description: "Serve one era only, answering the other as such servers do",
    allowed: "both/2025/2026-07-28",
    schema: z.enum(["both", "2025", "2026-07-28"]),
  },
  updateDelaySeconds: {
    flag: "delay",
    defaultValue: "5",
    description:
      "Seconds from the trigger (a subscribe by default) to the update",
    ...UP_TO_A_DAY,
  },
  updateCount: {
    defaultValue: "1",
    description: "How many updates (version 2, 3, ...) each client gets",
    ...integer(1, 1000),
  },
  updateIntervalSeconds: {
    flag: "update-interval",
    defaultValue: "5",
    description: "Seconds between one update and the next",
    ...UP_TO_A_DAY,
  },
  updateTrigger: {
    flag: "trigger",
    defaultValue: "subscribe",
    description:
      "What starts a client's updates: subscribe (or listen), its first read, its connect, or only a wait tool call",
    allowed: UPDATE_TRIGGERS.join("/"),
    schema: z.enum(UPDATE_TRIGGERS),
  },
  initialStatus: {
    defaultValue: "pending",
    description: "Value of the status field at version 1",
    ...STATUS_WORD,
  },
  updatedStatus: {
    defaultValue: "reviewed",
    description: "Value of the status field after an update",
    ...STATUS_WORD,
  },
  sendListChanged: {
    flag: "list-changed",
    description: "Also send notifications/resources/list_changed on update",
    ...SWITCH,
  },
  inlineContent: {
    defaultValue: "off",
    description:
      "Put the new text in every update notification, unasked: sep-3119 or fastrmcp shape",
    allowed: INLINE_SHAPES.join("/"),
    schema: z.enum(INLINE_SHAPES),
  },
  catalogChange: {
    defaultValue: "off",
    description:
      "At a client's first update its catalog gains a tool, a prompt, a resource (or all), with list_changed",
    allowed: "off, all, or a comma list of tools, prompts, resources",
    schema: z.string().transform((list) =>
      list === "off" ? [] : list === "all" ? [...CATALOG_KINDS] : [
        ...new Set(list.split(",").map((kind) => kind.trim())),
      ]
    ).pipe(z.array(z.enum(CATALOG_KINDS))),
  },
  enableTool: {
    description:
      "Add a read-only get_review_status tool for models that cannot see resources",
    ...SWITCH,
  },
  enableWaitTool: {
    description:
      "Add a wait_for_review_update tool that blocks until the client's next update",
    ...SWITCH,
  },
  allowedHosts: {
    defaultValue: "",
    description:
      "Extra Host/Origin names to accept beside loopback (comma list; * accepts any)",
    allowed: "a comma-separated list of host names, IP addresses or *",
    schema: z.string().transform((list) =>
      list.split(",").map((name) => name.trim().toLowerCase()).filter(Boolean)
    ).pipe(z.array(z.string().regex(/^(\*|[a-z0-9.-]+|\[[0-9a-f:.]+\])$/))),
  },
  authToken: {
    defaultValue: "",
    description:
      "When set, MCP requests and reports need 'Authorization: Bearer <token>'",
    allowed: "printable characters without spaces",
    schema: z.string().regex(/^[\x21-\x7e]*$/),
  },
  sessionTtlSeconds: {
    flag: "session-ttl",
    defaultValue: "1800",
    description:
      "A 2025 session with no request and no open GET stream for this long ends",
    allowed: "a number of seconds above 0, fractions allowed",
    schema: seconds.pipe(z.number().positive()),
  },
  bodyTimeoutSeconds: {
    flag: "body-timeout",
    defaultValue: "10",
    description:
      "Seconds a POST body may take to arrive before the lab answers 408",
    allowed: "a number of seconds above 0 and up to 3600, fractions allowed",
    schema: seconds.pipe(z.number().positive().max(3600)),
  },
  maxSessions: {
    defaultValue: "1000",
    description:
      "Most 2025 sessions, open listen streams, and 2026-07-28 clients kept, at once",
    ...integer(1, 1_000_000),
  },
  maxWatches: {
    description:
      "Most watches a client holds (2025 subscribed URIs, open listens), more refused; 0 refuses all (empty: no cap)",
    ...optionalInteger(0, 1_000_000),
  },
  streamLifetimeSeconds: {
    flag: "stream-lifetime",
    description:
      "The lab ends each GET stream and listen this many seconds after it opens (empty: never)",
    defaultValue: "",
    allowed:
      "empty, or a number of seconds above 0 up to 86400, fractions allowed",
    schema: z.string().transform((text) => text || null)
      .pipe(seconds.pipe(z.number().positive().max(86400)).nullable()),
  },
  streamEnd: {
    defaultValue: "graceful",
    description:
      "How the lab ends a stream at its lifetime: graceful (a listen's result last) or abrupt",
    allowed: "graceful/abrupt",
    schema: z.enum(["graceful", "abrupt"]),
  },
  logLevel: {
    defaultValue: "debug",
    description: "Log verbosity",
    allowed: LOG_LEVELS.join("/"),
    schema: z.string().transform((word) => word.toLowerCase()).pipe(
      z.enum(LOG_LEVELS),
    ),
  },
  logFormat: {
    defaultValue: "text",
    description:
      "text: bracketed lines; json: one object per line, same fields",
    allowed: "text/json",
    schema: z.enum(["text", "json"]),
  },
  reportFile: {
    defaultValue: "",
    description:
      "Write /report.md (/report for a .json path) when a client ends and at shutdown",
    allowed: "a file path on one line",
    schema: z.string().regex(/^[^\r\n]*$/),
  },
  exitAfterClients: {
    defaultValue: "0",
    description:
      "Shut down once this many clients have ended (0: keep serving)",
    ...integer(0, 1_000_000),
  },
  deadlineSeconds: {
    flag: "deadline",
    defaultValue: "0",
    description: "Shut down this many seconds after starting (0: no deadline)",
    ...UP_TO_A_DAY,
  },
  requireLevel: {
    description:
      "At shutdown, print a verdict line per client and exit 1 unless all reached it",
    ...optionalInteger(
      1,
      6,
      "a level from 1 to 6 (level 7, the agent's context, is not observable by the lab)",
    ),
  },
  requireCatalogLevel: {
    description:
      "The same for the catalog ladder (needs --catalog-change): exit 1 unless all reached it",
    ...optionalInteger(
      1,
      4,
      "a catalog level from 1 to 4 (level 5, the model's request, is not observable by the lab)",
    ),
  },
  gateClient: {
    defaultValue: "",
    description:
      "The gate judges only clients of this clientInfo name (empty: every client)",
    // 63: a name clipped to MAX_NAME_LENGTH (64, "…" last) never matches.
    allowed: "a client name of at most 63 characters on one line",
    schema: z.string().regex(/^[^\r\n]{0,63}$/),
  },
  logSessionIds: {
    description:
      "Show full 2025 session ids in logs and reports instead of short handles",
    ...SWITCH,
  },
  bus: {
    defaultValue: "",
    description:
      "Redis through which replicas share clients and notifications (empty: one process)",
    allowed: "redis://[user:password@]host[:port][/db], or empty",
    schema: z.string().refine((url) => url === "" || isRedisUrl(url)),
  },
} as const;

/** `redis://host[:port][/db]`, with a user and password or not. */
function isRedisUrl(text: string): boolean {
  const url = URL.parse(text);
  return url !== null && url.protocol === "redis:" && url.hostname !== "" &&
    /^(\/\d{0,2})?$/.test(url.pathname) && !url.search && !url.hash;
}

/** A URL as logs show it: a password, or a user part alone (one too), hidden. */
export function withoutPassword(text: string): string {
  const url = URL.parse(text);
  if (!url) return text.includes("@") ? "(hidden)" : text;
  if (url.password) url.password = "***";
  else if (url.username) url.username = "***";
  else return text;
  return url.href;
}

/** A setting's variable: `updateCount` → `MCP_TEST_UPDATE_COUNT`. */
function envName(name: string): string {
  return `MCP_TEST_${name.replace(/[A-Z]/g, "_$&").toUpperCase()}`;
}

/** A setting's flag: its own short one, or `updateCount` → `update-count`. */
const flagName = (name: string, setting: object) =>
  "flag" in setting
    ? String(setting.flag)
    : name.replace(/[A-Z]/g, "-$&").toLowerCase();

/** The environment variables behind the settings, all the lab reads. */
const SETTING_VARIABLES = Object.keys(SETTINGS).map(envName);

/** The lab's effective configuration, one field per entry of `SETTINGS`. */
export type LabConfig = {
  [Name in keyof typeof SETTINGS]: z.output<(typeof SETTINGS)[Name]["schema"]>;
};

/** A configuration value the lab refuses; its message is one line. */
export class ConfigError extends Error {}

/**
 * Reads the configuration, trimmed: a flag wins over its variable, an unset
 * or empty variable takes its default; a bad value throws a `ConfigError`.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  flags: Record<string, string | boolean | undefined> = {},
): LabConfig {
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const flag = flagName(name, setting);
    const flagged = flags[flag];
    const variable = envName(name);
    const given = flagged === undefined
      ? env[variable]?.trim() || undefined
      : String(flagged).trim();
    const parsed = setting.schema.safeParse(given ?? setting.defaultValue);
    if (!parsed.success) {
      const source = flagged === undefined ? variable : `--${flag}`;
      const shown = name === "bus" && given ? withoutPassword(given) : given;
      const value = JSON.stringify(shown);
      throw new ConfigError(
        `${source}=${value} is not allowed: expected ${setting.allowed}`,
      );
    }
    config[name] = parsed.data;
  }
  const { requireCatalogLevel, catalogChange, updateTrigger, enableWaitTool } =
    config as LabConfig;
  if (updateTrigger === "wait" && !enableWaitTool) {
    throw new ConfigError(
      "--trigger wait (MCP_TEST_UPDATE_TRIGGER) needs --enable-wait-tool (MCP_TEST_ENABLE_WAIT_TOOL): only its calls would start updates",
    );
  }
  if (requireCatalogLevel !== null && catalogChange.length === 0) {
    throw new ConfigError(
      "--require-catalog-level (MCP_TEST_REQUIRE_CATALOG_LEVEL) needs a --catalog-change (MCP_TEST_CATALOG_CHANGE) other than off",
    );
  }
  return config as LabConfig;
}

/**
 * A command line read strictly by `parseArgs` (the lab's, the probe's, the
 * harness's): a mistake is a one-line `ConfigError` pointing to the help.
 */
export function parseFlags<const Options extends ParseArgsOptionsConfig>(
  args: string[],
  options: Options,
  { allowPositionals = false, help = "--help" } = {},
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    // Node's advice after an unknown option leaves a quote open: left out.
    const [message] = (error as Error).message.replaceAll(/\s*\n\s*/g, " ")
      .split(". To specify a positional argument");
    throw new ConfigError(`${message}; see ${help}`);
  }
}

/** What the command line asks for: help, version, stdio, and setting flags. */
export function parseCommandLine(args: string[]) {
  const options: Record<string, { type: "string" | "boolean" }> = {
    help: { type: "boolean" },
    version: { type: "boolean" },
    stdio: { type: "boolean" },
  };
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const type = setting.schema === booleanWord ? "boolean" : "string";
    options[flagName(name, setting)] = { type };
  }
  const { help, version, stdio, ...flags } = parseFlags(args, options).values;
  return { help: !!help, version: !!version, stdio: !!stdio, flags };
}

/** The `--help` text: usage and the configuration table with defaults. */
function helpText(): string {
  const rows = Object.entries(SETTINGS).map(([name, setting]) =>
    [
      `  --${flagName(name, setting)}`.padEnd(28),
      envName(name).padEnd(34),
      (setting.defaultValue || '""').padEnd(11),
      setting.description,
    ].join("")
  );
  return [
    `MCP resource subscription lab ${LAB_VERSION}`,
    "",
    "Usage: deno run -A main.ts [--stdio] [options]",
    "       deno run -A main.ts probe --help   (check a server's subscriptions;",
    "                                          the same as probe.ts --help)",
    "",
    "  --stdio           serve one client over stdin/stdout (logs go to stderr)",
    "  --help            print this help",
    "  --version         print the lab's version",
    "",
    "Options (each also read from its environment variable; a flag wins):",
    `${"  FLAG".padEnd(28)}${"VARIABLE".padEnd(34)}${
      "DEFAULT".padEnd(11)
    }MEANING`,
    ...rows,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------
// Shared with the probe and the harness: inert text, bounded lines, streams
// ---------------------------------------------------------------------------

/** What may not stand bare in a line's value (see `lineValue`). */
const UNSAFE_IN_LINE = /[\s"'\\[\]\p{Cc}\p{Cf}]/u;

/** What JSON.stringify leaves raw that a terminal or a line reader would act on. */
const RAW_IN_JSON = /[\u007f-\u009f\p{Cf}\u2028\u2029]/gu;

/**
 * `value` as JSON with DEL, C1 controls, format characters (bidi overrides)
 * and U+2028/U+2029 escaped too: every JSON line the lab and probe print.
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    RAW_IN_JSON,
    (char) =>
      char.split("").map((unit) =>
        `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`
      ).join(""),
  );
}

/** `[` and `]` as `\u005b` and `\u005d`: only the lab's tags are bracketed. */
function unbracketed(text: string): string {
  return text.replace(/[[\]]/g, (char) => char === "[" ? "\\u005b" : "\\u005d");
}

/**
 * A value in a text line: bare when plain (no space, quote, backslash,
 * bracket, control or format character), else a JSON string with brackets
 * escaped, so no value can pose as a field, an event or a verdict.
 */
export function lineValue(value: string | number | boolean): string {
  const text = String(value);
  return UNSAFE_IN_LINE.test(text) ? unbracketed(jsonText(text)) : text;
}

/** Free text in a line (words, notes): control and format characters escaped. */
export function lineText(text: string): string {
  return text.replace(
    /[\p{Cc}\p{Cf}\u2028\u2029]/gu,
    (char) => jsonText(char).slice(1, -1),
  );
}

/** Words in a line that may hold what a peer sent: `lineText`, unbracketed. */
export const lineWords = (text: string) => unbracketed(lineText(text));

/** The values that are there, in their order. */
const defined = <T>(values: (T | undefined)[]) =>
  values.filter((value): value is T => value !== undefined);

/** A reached (✅) or missed (❌) step in a report's table. */
export const MARK = (reached: boolean) => reached ? "✅" : "❌";

/** `&`, `<` and `>` by name; the other characters Markdown acts on by code. */
const NAMED_ENTITIES = new Map([["&", "&amp;"], ["<", "&lt;"], [">", "&gt;"]]);

/**
 * Text a peer sent, inert in Markdown: `markdownText`, and a `<wbr>` where
 * GitHub would make a link or mention (`@name`, `http://`, `ftp://`, `www.`).
 */
export function cell(text: string): string {
  return markdownText(text).replace(
    /@(?=\w)|(?<=\b(?:https?|ftp)):(?=\/\/)|\bwww(?=\.)/gi,
    (found) => `${found}<wbr>`,
  );
}

/**
 * Markdown text as it reads: pipes, backticks, brackets, backslashes, `<`,
 * `>`, `&` as entities, line breaks as ⏎, other controls as `\uXXXX`; links
 * and names left as they are (for the lab's own text).
 */
export function markdownText(text: string): string {
  return lineText(
    text.replace(/\r\n|[\r\n\u2028\u2029]/g, " ⏎ ").replace(
      /[&<>|`[\]\\]/g,
      (char) => NAMED_ENTITIES.get(char) ?? `&#${char.charCodeAt(0)};`,
    ),
  );
}

/**
 * A mermaid label: one line, `;#%<>` and backticks as entity codes, so it
 * cannot add a participant, an arrow or a note, or end the code block.
 */
export function mermaidText(text: string): string {
  return text
    .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, " ")
    .replace(/[;#%<>`]/g, (char) => `#${char.charCodeAt(0)};`);
}

/** Whether a response is an open server-sent event stream. */
export function isEventStream(response: Response): boolean {
  const type = response.headers.get("content-type") ?? "";
  return response.ok && type.startsWith("text/event-stream");
}

/** Passes a stream through; `onEnd` once at its end (`byClient`: cancelled). */
export function whenStreamEnds(
  source: ReadableStream<Uint8Array>,
  onEnd: (byClient: boolean) => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let ended = false;
  const end = (byClient = false) => {
    if (ended) return;
    ended = true;
    onEnd(byClient);
  };
  return new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        end();
        controller.close();
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end(true);
      return reader.cancel(reason);
    },
  });
}

/** `promise`'s value, or "late" once `ms` pass first; no timer outlives it. */
export async function within<T>(promise: Promise<T>, ms: number) {
  const late = Promise.withResolvers<"late">();
  const timer = setTimeout(() => late.resolve("late"), ms);
  try {
    return await Promise.race([promise, late.promise]);
  } finally {
    clearTimeout(timer);
  }
}

/** One line of a newline-delimited stream, or the size of one past the limit. */
export type BoundedLine = { line: string } | { tooLong: number };

/**
 * A byte stream's lines (no CR, no blank ones), each at most `maxBytes`: a
 * longer one is skipped, never kept, and reported by its size.
 */
export async function* boundedLines(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
): AsyncGenerator<BoundedLine> {
  const decoder = new TextDecoder();
  let parts: Uint8Array[] = [];
  let size = 0;
  /** Bytes of the line being skipped; 0 when not skipping. */
  let skipped = 0;
  /** The line that ends here: its text, or its size if it was skipped. */
  const finish = (): BoundedLine | undefined => {
    // Decoded as one text: a character split between parts is kept whole.
    const text = parts.map((part) => decoder.decode(part, { stream: true }));
    const line = (text.join("") + decoder.decode()).replace(/\r$/, "");
    const tooLong = skipped;
    parts = [];
    size = 0;
    skipped = 0;
    if (tooLong > 0) return { tooLong };
    return line.trim() === "" ? undefined : { line };
  };
  for await (const chunk of stream) {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (skipped > 0 || size + piece.length > maxBytes) {
        skipped = (skipped || size) + piece.length;
        parts = [];
        size = 0;
      } else {
        parts.push(piece.slice());
        size += piece.length;
      }
      if (end === -1) break;
      start = end + 1;
      const line = finish();
      if (line) yield line;
    }
  }
  const last = finish();
  if (last) yield last;
}

/** The named variables, each read on its own (unreadable counts as unset). */
export function readEnvironment(names: string[]) {
  const env: Record<string, string | undefined> = {};
  for (const variable of names) {
    const access = Deno.permissions.querySync({ name: "env", variable });
    if (access.state === "granted") env[variable] = Deno.env.get(variable);
  }
  return env;
}

// ---------------------------------------------------------------------------
// The resource, and the text an update carries
// ---------------------------------------------------------------------------

/** The one resource the lab serves. */
export const REVIEW_URI = "test://review/status";
const REVIEW_MIME_TYPE = "text/plain";
export const REVIEW_TOOL = "get_review_status";
/** The official conformance suite's fixture: 2025 clients may watch it. */
const CONFORMANCE_URI = "test://watched-resource";

const reviewResource = {
  uri: REVIEW_URI,
  name: "review-status",
  title: "Simulated review status",
  description:
    "A review result that changes after a client subscribes. Re-read it when notified.",
  mimeType: REVIEW_MIME_TYPE,
};

const reviewTool = {
  name: REVIEW_TOOL,
  title: "Get review status",
  description:
    `Returns the current text of ${REVIEW_URI}, for clients whose model cannot read MCP resources.`,
  inputSchema: { type: "object" as const, properties: {} },
  annotations: { readOnlyHint: true, idempotentHint: true },
};

const WAIT_TOOL = "wait_for_review_update";
/** The longest wait a client may ask for, in seconds. */
const MAX_WAIT_SECONDS = 600;

const waitTool = {
  name: WAIT_TOOL,
  title: "Wait for the review status to change",
  description:
    `Blocks until ${REVIEW_URI} is newer than since_version (default: the version you last read) or timeout_seconds pass, then returns its text. Use it to be told of the change when your client cannot subscribe to resources.`,
  inputSchema: {
    type: "object" as const,
    properties: {
      since_version: {
        type: "integer",
        minimum: 0,
        description: "Return once the version is above this one",
      },
      timeout_seconds: {
        type: "number",
        exclusiveMinimum: 0,
        maximum: MAX_WAIT_SECONDS,
        description: "How long to wait (default 60, at most 600)",
      },
    },
  },
  annotations: { readOnlyHint: true },
};

/** The item each kind of a client's catalog gains at its first update. */
export const CATALOG_ADDED = {
  tools: "get_review_comments",
  prompts: "summarize_review",
  resources: "test://review/comments",
} as const satisfies Record<CatalogKind, string>;

const REVIEW_COMMENTS = [
  "comments: 2",
  "- main.ts: the update timer is cleared when the client leaves.",
  "- docs: the new ladder needs an example.",
].join("\n");

/** The prompt a changing prompts list starts with. */
const checklistPrompt = {
  name: "review_checklist",
  title: "Review checklist",
  description: "Asks for the review's status, read from the resource.",
};

/** The item each list gains, as the list shows it. */
const CATALOG_ITEMS = {
  tools: {
    name: CATALOG_ADDED.tools,
    title: "Get review comments",
    description:
      "Returns the review's comments. Added while the lab runs: listed after notifications/tools/list_changed.",
    inputSchema: { type: "object" as const, properties: {} },
    annotations: { readOnlyHint: true, idempotentHint: true },
  },
  prompts: {
    name: CATALOG_ADDED.prompts,
    title: "Summarize the review",
    description:
      "Asks for a summary of the review. Added while the lab runs: listed after notifications/prompts/list_changed.",
  },
  resources: {
    uri: CATALOG_ADDED.resources,
    name: "review-comments",
    title: "Review comments",
    description:
      "The review's comments. Added while the lab runs: listed after notifications/resources/list_changed.",
    mimeType: REVIEW_MIME_TYPE,
  },
};

/** The text of a prompt the catalog holds, as one user message. */
const promptMessages = (text: string) => ({
  messages: [{
    role: "user" as const,
    content: { type: "text" as const, text },
  }],
});

/** The resource text at a version, as a client reads it. */
function reviewStatus(config: LabConfig, version: number): string {
  const status = version === 1 ? config.initialStatus : config.updatedStatus;
  const message = version === 1
    ? "Waiting for simulated review result."
    : version === 2
    ? "Simulated review result is now available."
    : `Simulated review result was updated again (update ${version - 1}).`;
  return [`status: ${status}`, `version: ${version}`, `message: ${message}`]
    .join("\n");
}

/**
 * The new text an update to `version` carries, if any: SEP-3119's `mimeType`
 * and `text` where a listen asked (`embed`), and any `--inline-content`
 * shape, unasked.
 */
function inlineUpdate(
  config: LabConfig,
  version: number,
  { embed, subscriptionId }: { embed: boolean; subscriptionId: string },
) {
  const shapes = new Set<InlineShape>(embed ? ["sep-3119"] : []);
  if (config.inlineContent !== "off") shapes.add(config.inlineContent);
  if (shapes.size === 0) return undefined;
  const text = reviewStatus(config, version);
  const content = { mimeType: REVIEW_MIME_TYPE, text };
  const params = {
    ...shapes.has("sep-3119") && content,
    ...shapes.has("fastrmcp") && {
      subscription_id: subscriptionId,
      content: { uri: REVIEW_URI, ...content },
      timestamp: new Date().toISOString(),
    },
  };
  const bytes = new TextEncoder().encode(text).length;
  return { params, inline: { shapes: [...shapes], asked: embed, bytes } };
}

// ---------------------------------------------------------------------------
// Clients: who connected and what each did
// ---------------------------------------------------------------------------

/** The protocol era a client speaks. */
export type Era = "2025" | "2026-07-28";
/** How a client reaches the lab. */
export type LabTransportKind = "streamable-http" | "stdio";
/** `notifications/resources/updated`, or a kind's `…/list_changed`. */
export type ChangeNotification = "updated" | CatalogKind;

/** A change notification's method. */
const methodOf = (notification: ChangeNotification) =>
  notification === "updated"
    ? "notifications/resources/updated"
    : `notifications/${notification}/list_changed`;

/** A name or an id as another replica may send it (`--bus`): bounded. */
export const busName = z.string().max(1024);

/**
 * Whether a notification reached a stream the client reads, and if not why;
 * each shape below is also what the lab takes from another replica.
 */
export const deliverySchema = z.union([
  z.object({
    delivered: z.literal(true),
    inline: z.object({
      shapes: z.array(z.enum(["sep-3119", "fastrmcp"])).max(2),
      bytes: z.number().int().min(0).max(2 ** 32),
      asked: z.boolean(),
    }).optional(),
  }),
  z.object({ delivered: z.literal(false), reason: z.string().max(4096) }),
]);
export type Delivery = z.output<typeof deliverySchema>;

/** A send that threw: the notification did not get through. */
export const sendFailed = (error: unknown): Delivery => ({
  delivered: false,
  reason: `send failed: ${(error as Error).message}`,
});

/** The new text an update carried: its shapes, whether asked for, its bytes. */
type InlineContent = NonNullable<ReturnType<typeof inlineUpdate>>["inline"];

/** What a timeline step records. */
export const STEP_KINDS = [
  "connect",
  "list",
  "read",
  "read-unknown",
  "subscribe",
  "unsubscribe",
  "listen",
  "listen-closed",
  "stream-opened",
  "stream-closed",
  "update",
  "notify",
  "session-end",
  "catalog-change",
  "catalog-notify",
  "catalog-use",
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** One log event: `[tag] words key=value ...`, or JSON (`event`, `text`). */
const evidenceSchema = z.object({
  tag: busName,
  words: z.string().max(4096).optional(),
  fields: z.record(
    z.string(),
    z.union([z.string(), z.number(), z.boolean()]).optional(),
  ).optional(),
});
type Evidence = z.output<typeof evidenceSchema>;

/** How a client read the resource: natively, or through one of the lab's tools. */
export const READ_ROUTES = ["resource", "tool", "wait-tool"] as const;
type ReadRoute = (typeof READ_ROUTES)[number];

/**
 * One step of a client, and a read's route; its line is rendered only when
 * a report needs it.
 */
export const stepSchema = z.object({
  at: z.number(),
  kind: z.enum(STEP_KINDS),
  evidence: evidenceSchema,
  via: z.enum(READ_ROUTES).optional(),
});
export type Step = z.output<typeof stepSchema>;

/** What a client has shown so far, beside the steps in its `proof`. */
interface Progress {
  /** A listen stream without the resource in its filter (list changes only). */
  listenedWithoutResource: boolean;
  getStreamOpened: boolean;
  /** A change notification reached the client (beside any wait tool answer). */
  notified?: true;
  /** Why notifications did not reach the client, in order. */
  lost: string[];
  /** A listen asked for the content in its notifications (SEP-3119). */
  embedAsked: boolean;
  /** The version the client asked for and received inside a notification. */
  deliveredInline?: number;
  /** A notification is being written to the client right now. */
  notifying?: boolean;
  /** A read of version 2 while that notification was being written (stdio). */
  readWhileNotifying?: Step;
  /** What the wait tool did for this client. */
  waitTool: {
    calls: number;
    longestSeconds: number;
    deliveredVersion?: number;
  };
  lastVersionRead: number;
  /** The subscription stream closed before any update went out. */
  closedBeforeUpdate: boolean;
  /** Why an update could not be sent, when one failed. */
  updateFailed?: string;
  /** What the client did with each list of its catalog. */
  catalog: Record<CatalogKind, CatalogTrack>;
  /** Why a notification logged as delivered may not have arrived. */
  deliveryDoubt?: string;
}

/**
 * One list of a client's catalog: the steps that prove each rung of its
 * ladder, the first kept (`relisted` and `used` count after the change).
 */
interface CatalogTrack {
  listed?: Step;
  changed?: Step;
  notified?: Step;
  /** Its `reason` field says why. */
  lost?: Step;
  relisted?: Step;
  used?: Step;
  /** A 2026-07-28 listen asked for this list's changes. */
  asked?: true;
  /** A list in order before its notification was recorded (it was written). */
  listedWhileNotifying?: Step;
}

/** A 2025 session, a 2026-07-28 `clientInfo` name@version, or a stdio peer. */
export interface LabClient {
  id: string;
  era: Era;
  transport: LabTransportKind;
  name: string;
  version: string;
  protocolVersion: string;
  /** 1, plus the updates sent in this run. */
  reviewVersion: number;
  updates: {
    timer?: ReturnType<typeof setTimeout>;
    started: boolean;
    series: number;
    /** The notification being written: the client's end waits for it. */
    sending?: Promise<Delivery>;
  };
  /** Sends a change notification the way this client's era and transport do. */
  deliver: (notification: ChangeNotification) => Promise<Delivery>;
  progress: Progress;
  timeline: Step[];
  droppedSteps: number;
  /** Epoch milliseconds. */
  firstSeen: number;
  lastSeen: number;
  endedReason?: string;
  /** Key evidence, remembered by the step it proves. */
  proof: Partial<Record<ProofKey, Step>>;
  /** The most listen streams this client had open at once. */
  peakListens: number;
  /** Its open listen streams here, and on each other replica (`--bus`). */
  listens: { here: ListenCounts; elsewhere: Map<string, ListenCounts> };
  /** `wait_for_review_update` calls in progress. */
  waiting: Set<WaitingCall>;
}

/** Listen streams open, and of them those whose filter holds the resource. */
type ListenCounts = { open: number; watching: number };

/** A client's open listen streams across replicas; `watching` or all. */
function openListens(client: LabClient, watching = false): number {
  const { here, elsewhere } = client.listens;
  return [here, ...elsewhere.values()].reduce(
    (sum, counts) => sum + (watching ? counts.watching : counts.open),
    0,
  );
}

/** A client with a listen open or a wait in progress is not idle. */
const inUse = (client: LabClient) =>
  openListens(client) > 0 || client.waiting.size > 0;

/** How a wait ended, when not by the update it waited for. */
export const WAIT_ENDS = [
  "updated",
  "timeout",
  "cancelled",
  "disconnected",
  "session ended",
  "shutdown",
] as const;
type WaitEnd = (typeof WAIT_ENDS)[number];

/** Why a client ended: `[session/end] reason=`, and `ended` in `/report`. */
export const SESSION_END_REASONS = [
  "delete",
  "idle",
  "closed",
  "evicted",
  "shutdown",
] as const;
type SessionEndReason = (typeof SESSION_END_REASONS)[number];

/** A `wait_for_review_update` call in progress: ended once, by `settle`. */
type WaitingCall = { settle(end: WaitEnd): void };

type ProofKey =
  | "connected"
  | "listed"
  | "readV1"
  | "subscribed"
  | "notified"
  | "lost"
  | "reread";

/** A client's run as it starts: version 1, nothing shown yet. */
function freshRun(): Pick<
  LabClient,
  "reviewVersion" | "progress" | "timeline" | "droppedSteps" | "proof"
> {
  return {
    reviewVersion: 1,
    progress: {
      listenedWithoutResource: false,
      embedAsked: false,
      getStreamOpened: false,
      lost: [],
      lastVersionRead: 0,
      closedBeforeUpdate: false,
      waitTool: { calls: 0, longestSeconds: 0 },
      catalog: { tools: {}, prompts: {}, resources: {} },
    },
    timeline: [],
    droppedSteps: 0,
    proof: {},
  };
}

function newLabClient(
  { clientInfo, ...fields }:
    & Pick<LabClient, "id" | "era" | "transport" | "protocolVersion">
    & { clientInfo?: unknown },
): LabClient {
  const now = Date.now();
  const client: LabClient = {
    ...fields,
    ...freshRun(),
    name: "unknown",
    version: "unknown",
    updates: { started: false, series: 0 },
    deliver: () =>
      Promise.resolve({ delivered: false, reason: "not connected yet" }),
    firstSeen: now,
    lastSeen: now,
    peakListens: 0,
    listens: { here: { open: 0, watching: 0 }, elsewhere: new Map() },
    waiting: new Set(),
  };
  nameClient(client, clientInfo);
  return client;
}

/** The longest client-supplied name, version or protocol version kept. */
export const MAX_NAME_LENGTH = 64;
/** The longest client-supplied URI the lab keeps in a log line. */
export const MAX_URI_LENGTH = 256;
/** The longest refusal message in a log line (it may quote the request). */
const MAX_MESSAGE_LENGTH = 512;

/** `text`, cut to `max` characters with a visible "…" when it was longer. */
function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

const clippedName = z.string().transform((text) => clip(text, MAX_NAME_LENGTH));

/** `clientInfo` as clients send it; either field may be missing. */
const clientInfoSchema = z.object({ name: clippedName, version: clippedName })
  .partial().catch({});

/** Takes name and version from a `clientInfo` object, when it has them. */
function nameClient(client: LabClient, clientInfo: unknown) {
  const info = clientInfoSchema.parse(clientInfo ?? {});
  client.name = info.name ?? client.name;
  client.version = info.version ?? client.version;
}

const clientLabel = (client: LabClient) => `${client.name}/${client.version}`;

/** How much of each client's timeline the lab keeps for reports. */
const TIMELINE_LIMIT = 300;
/** How many ended 2025 sessions stay in `/report`. */
const ENDED_CLIENTS_KEPT = 100;

// ---------------------------------------------------------------------------
// The evidence log
// ---------------------------------------------------------------------------

/** Where log lines go: stdout over HTTP, stderr over stdio, a list in tests. */
export type LineSink = (line: string) => void;

/** A time in ISO 8601; one past `Date`'s range (never the lab's) as a number. */
const isoTime = (ms: number) =>
  Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(ms);

/**
 * An event as a text line, `[tag] words key=value ... client=… at=…`, or as
 * one JSON object: `event`, `text`, then the same fields.
 */
function renderEvidence(
  { tag, words, fields }: Evidence,
  client: LabClient | undefined,
  at: number,
  format: LabConfig["logFormat"] = "text",
): string {
  const all = {
    ...fields,
    ...client && {
      client: clientLabel(client),
      era: client.era,
      protocol: client.protocolVersion,
    },
    at: isoTime(at),
  };
  if (format === "json") return jsonText({ event: tag, text: words, ...all });
  const parts = [`[${tag}]`];
  if (words) parts.push(lineWords(words));
  for (const [key, value] of Object.entries(all)) {
    if (value !== undefined) parts.push(`${key}=${lineValue(value)}`);
  }
  return parts.join(" ");
}

/** A recorded step's evidence line, as it was logged. */
const lineOf = (step: Step, client: LabClient) =>
  renderEvidence(step.evidence, client, step.at);

export type Logger = ReturnType<typeof createLogger>;
/** The level of a line written (`silent` is a setting, never a line's). */
type LineLevel = Exclude<LogLevel, "silent">;

function createLogger(config: LabConfig, sink: LineSink) {
  const enabled = (level: LogLevel) =>
    LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(config.logLevel);
  const write = (
    level: LineLevel,
    evidence: Evidence,
    client?: LabClient,
    at = Date.now(),
  ) => {
    // Formatting costs more than the work it reports: skip it when off.
    if (!enabled(level)) return;
    sink(renderEvidence(evidence, client, at, config.logFormat));
  };
  return {
    enabled,
    write,
    /** `write`, now; if the log itself fails (often the cause), on stderr. */
    writeOrStderr(...[level, evidence, client]: Parameters<typeof write>) {
      try {
        write(level, evidence, client);
      } catch {
        console.error(renderEvidence(evidence, client, Date.now()));
      }
    },
    /** A multi-line text block, or one JSON object, at info level. */
    block(lines: () => string[], json: () => Record<string, unknown>) {
      if (!enabled("info")) return;
      if (config.logFormat === "json") sink(jsonText(json()));
      else for (const line of lines()) sink(lineText(line));
    },
  };
}

// ---------------------------------------------------------------------------
// Steps: what each proves, kept in time order
// ---------------------------------------------------------------------------

/** What a step proves beyond its kind. */
export const stepFactsSchema = z.object({
  version: z.number().optional(),
  via: z.enum(READ_ROUTES).optional(),
  delivery: deliverySchema.optional(),
  /** For a listen: whether its filter holds the lab's resource. */
  watches: z.boolean().optional(),
  /** For a listen: whether it asked for the content (`embedResources`). */
  embed: z.boolean().optional(),
  /** For a wait: the version it waited past, and for how many seconds. */
  since: z.number().optional(),
  waited: z.number().optional(),
  /** The catalog lists a step is about (a listen's: whose changes it asked). */
  catalog: z.array(z.enum(CATALOG_KINDS)).readonly().optional(),
  /** For a catalog list or use: `inOrderOf` where it was recorded. */
  inOrder: z.boolean().optional(),
});
export type StepFacts = z.output<typeof stepFactsSchema>;

/**
 * A list after its notification (or while it was written: the client may
 * have read it), or a use of the new item after such a list: judged where
 * the step is recorded and carried, so every replica credits the same steps.
 */
function inOrderOf(client: LabClient, kind: CatalogKind, use = false) {
  const track = client.progress.catalog[kind];
  const inOrder = use
    ? track.relisted ?? track.listedWhileNotifying
    : track.notified ?? (client.progress.notifying && track.changed);
  return { catalog: [kind], inOrder: inOrder ? true : undefined };
}

/** Keeps the first proof of each rung of the catalog ladders a step is about. */
function noteCatalog(client: LabClient, step: Step, facts: StepFacts) {
  const { inOrder, delivery } = facts;
  for (const kind of facts.catalog ?? []) {
    const track = client.progress.catalog[kind];
    if (step.kind === "listen") track.asked = true;
    if (step.kind === "catalog-change") track.changed ??= step;
    if (step.kind === "catalog-use" && inOrder) track.used ??= step;
    if (step.kind === "list") {
      track.listed ??= step;
      const rung = track.notified ? "relisted" : "listedWhileNotifying";
      if (inOrder) track[rung] ??= step;
    }
    if (step.kind !== "catalog-notify" || !delivery) continue;
    if (!delivery.delivered) track.lost ??= step;
    else {
      track.notified ??= step;
      track.relisted ??= track.listedWhileNotifying;
    }
  }
}

/** Updates the progress a recorded step proves, keeping the first proof. */
function noteProgress(client: LabClient, step: Step, facts: StepFacts) {
  const { progress, proof } = client;
  if (!["update", "notify", "session-end"].includes(step.kind)) {
    proof.connected ??= step;
  }
  noteCatalog(client, step, facts);
  switch (step.kind) {
    case "list":
      if (facts.catalog?.includes("resources")) proof.listed ??= step;
      break;
    case "read": {
      const version = facts.version ?? 0;
      progress.lastVersionRead = version;
      if (version === 1) proof.readV1 ??= step;
      // A read through the wait tool is never the client's own re-read.
      if (version >= 2 && !proof.reread && facts.via !== "wait-tool") {
        if (progress.notified) proof.reread = step;
        else if (progress.notifying) progress.readWhileNotifying ??= step;
      }
      if (facts.via === "wait-tool") {
        const wait = progress.waitTool;
        wait.calls++;
        wait.longestSeconds = Math.max(wait.longestSeconds, facts.waited ?? 0);
        if (version >= 2 && version > (facts.since ?? version)) {
          wait.deliveredVersion ??= version;
          proof.notified ??= step;
        }
      }
      break;
    }
    case "subscribe":
      proof.subscribed ??= step;
      break;
    case "listen":
      if (facts.embed) progress.embedAsked = true;
      if (facts.watches) proof.subscribed ??= step;
      else progress.listenedWithoutResource = true;
      break;
    case "stream-opened":
      progress.getStreamOpened = true;
      break;
    case "notify":
      if (facts.delivery?.delivered) {
        progress.notified = true;
        proof.notified ??= step;
        if (facts.delivery.inline?.asked) {
          progress.deliveredInline ??= facts.version;
        }
        proof.reread ??= progress.readWhileNotifying;
      } else if (facts.delivery) {
        progress.readWhileNotifying = undefined;
        progress.lost.push(facts.delivery.reason);
        proof.lost ??= step;
      }
      break;
  }
}

/** Keeps a step in the client's timeline, in time order, and its progress. */
function keepStep(client: LabClient, step: Step, facts: StepFacts) {
  client.lastSeen = Math.max(client.lastSeen, step.at);
  const { timeline } = client;
  if (timeline.length >= TIMELINE_LIMIT) client.droppedSteps++;
  else {
    // Another replica's step may arrive after a later one of this replica.
    let at = timeline.length;
    while (at > 0 && timeline[at - 1].at > step.at) at--;
    timeline.splice(at, 0, step);
  }
  noteProgress(client, step, facts);
}

// ---------------------------------------------------------------------------
// Lab state: update series and their timers, the trigger policy
// ---------------------------------------------------------------------------

/** One update series of a client: which one, and how many updates are left. */
type UpdateRun = { series: number; remaining: number };

/**
 * What a lab's other replicas hear of its clients (`--bus`); in one process,
 * `ONE_PROCESS`: nothing to tell, every update made here, delivered here.
 */
export interface Peers {
  recorded(client: LabClient, step: Step, facts: StepFacts): void;
  /** Its update series started or stopped, or its run started afresh. */
  seriesChanged(client: LabClient): void;
  restarted(client: LabClient): void;
  /** Settles once the others know; a read on any of them then waits. */
  notifying(client: LabClient, writing: boolean): Promise<void>;
  /** Whether this replica makes the run's update due in `seconds` (claims it). */
  claim(client: LabClient, run: UpdateRun, seconds: number): Promise<boolean>;
  /** Evicted here: whether another replica serves it, so only this copy goes. */
  released(client: LabClient): boolean;
  /** Delivered on the streams any replica holds for the client. */
  deliver(
    client: LabClient,
    notification: ChangeNotification,
  ): Promise<Delivery>;
}

const ONE_PROCESS: Peers = {
  recorded() {},
  seriesChanged() {},
  restarted() {},
  notifying: () => Promise.resolve(),
  deliver: (client, notification) => client.deliver(notification),
  claim: () => Promise.resolve(true),
  released: () => false,
};

/** A client as another replica describes it, to mirror it here. */
export const clientIdentitySchema = z.object({
  id: busName,
  era: z.enum(["2025", "2026-07-28"]),
  transport: z.enum(["streamable-http", "stdio"]),
  name: busName,
  version: busName,
  protocolVersion: busName,
  firstSeen: z.number(),
});
type ClientIdentity = z.output<typeof clientIdentitySchema>;

/**
 * The lab's clients and their update series, for HTTP and stdio alike. The
 * eras report facts (`record`, `reached`, `withdrew`); the trigger policy,
 * when a client's updates start and stop, lives here alone.
 */
export class LabState {
  #live = new Set<LabClient>();
  /** The same clients by id, for the replicas' messages (`--bus`). */
  #byId = new Map<string, LabClient>();
  /** The other replicas, once a bus connects them. */
  peers = ONE_PROCESS;
  #ended: LabClient[] = [];
  /** Ended clients a CI gate judges: kept apart, up to `--max-sessions`. */
  #judged: LabClient[] = [];
  /** Judged clients dropped past that bound: no gate can pass then. */
  droppedJudged = 0;

  constructor(
    private readonly config: LabConfig,
    private readonly log: Logger,
    private readonly onEnded: (client: LabClient) => void,
    private readonly judged: (client: LabClient) => boolean = () => false,
  ) {}

  /** Logs a step and keeps it in the client's timeline and progress. */
  record(
    client: LabClient,
    kind: StepKind,
    evidence: Evidence,
    facts: StepFacts = {},
  ) {
    const at = Date.now();
    const step: Step = { at, kind, evidence, via: facts.via };
    keepStep(client, step, facts);
    this.log.write("info", evidence, client, at);
    this.peers.recorded(client, step, facts);
  }

  /** A live client by id: one of ours, or one another replica told of. */
  live(id: string): LabClient | undefined {
    return this.#byId.get(id);
  }

  /** A step another replica recorded: kept as if here, not logged again. */
  mirrorStep(
    identity: ClientIdentity,
    listens: [replica: string, ListenCounts],
    step: Step,
    facts: StepFacts & { reviewVersion: number },
  ) {
    let client = this.#byId.get(identity.id);
    // Ended here already (or never known): its end is no record of its own.
    if (!client && step.kind === "session-end") return;
    client ??= this.track(newLabClient(identity));
    Object.assign(client, {
      name: identity.name,
      version: identity.version,
      firstSeen: Math.min(client.firstSeen, identity.firstSeen),
      reviewVersion: facts.reviewVersion,
    });
    client.listens.elsewhere.set(...listens);
    client.peakListens = Math.max(client.peakListens, openListens(client));
    keepStep(client, step, facts);
    if (step.kind === "update") {
      for (const call of client.waiting) call.settle("updated");
    }
    if (step.kind === "session-end") {
      this.#retire(client, step.evidence.fields?.reason as SessionEndReason);
    }
  }

  /**
   * Another replica started or stopped the client's updates. Started on both
   * at once, each keeps its timer: the one that claims an update makes it.
   */
  mirrorSeries(client: LabClient, next: LabClient["updates"], early: boolean) {
    if (early) client.progress.closedBeforeUpdate = true;
    if (next.started && client.updates.timer) return;
    this.#stopTimer(client);
    const { series, started } = next;
    Object.assign(client.updates, { started, series });
  }

  /** Another replica started the client's run afresh. */
  mirrorRestart(client: LabClient) {
    this.#stopTimer(client);
    client.updates.started = false;
    Object.assign(client, freshRun());
  }

  /** Another replica is writing (or has written) the client's notification. */
  mirrorNotifying(id: string, writing: boolean) {
    const client = this.#byId.get(id);
    if (client) client.progress.notifying = writing;
  }

  /** A replica went away: the streams it held for its clients went with it. */
  forgetReplica(replica: string) {
    for (const client of this.#live) client.listens.elsewhere.delete(replica);
  }

  /** The client reached a moment of its run: the trigger may start updates. */
  reached(client: LabClient, moment: UpdateTrigger) {
    if (this.config.updateTrigger === moment) this.#startUpdates(client);
  }

  /** The client connected: `initialize` in 2025, else `server/discover`. */
  connected(client: LabClient, fields?: Evidence["fields"]) {
    this.record(
      client,
      "connect",
      client.era === "2025"
        ? { tag: "initialize", words: "client connected", fields }
        : { tag: "server/discover", words: "requested", fields },
    );
    this.reached(client, "connect");
  }

  /** It unsubscribed, or closed its last watching stream: updates stop. */
  withdrew(client: LabClient) {
    if (this.config.updateTrigger === "subscribe") {
      this.#cancelUpdates(client, true);
    }
  }

  /** The client called the wait tool: its updates start whatever the trigger. */
  askedToWait(client: LabClient) {
    this.#startUpdates(client);
  }

  /** The `/healthz` counts of live clients: pending updates and waits. */
  counts() {
    const live = [...this.#live];
    return {
      pendingUpdates: live.filter((client) => client.updates.timer).length,
      waitingCalls: live.reduce((sum, client) => sum + client.waiting.size, 0),
    };
  }

  /** A stateless client's `server/discover` starts its run afresh. */
  restartRun(client: LabClient) {
    this.#cancelUpdates(client);
    Object.assign(client, freshRun());
    this.peers.restarted(client);
  }

  track(client: LabClient): LabClient {
    this.#live.add(client);
    this.#byId.set(client.id, client);
    return client;
  }

  /**
   * Ends a client: its updates stop, and `onEnded` hears of it once. A
   * notification still being written to it (over stdio, into the pipe the
   * client may have read it from already) is recorded first, within a second.
   */
  endClient(client: LabClient, reason: SessionEndReason, sessionId?: string) {
    if (client.endedReason) return;
    // Another replica serves it (`--bus`): it lets go here only.
    if (reason === "evicted" && this.peers.released(client)) return;
    this.#cancelUpdates(client);
    const end = () => {
      if (client.endedReason) return;
      this.record(client, "session-end", {
        tag: "session/end",
        fields: { session: sessionId, reason },
      });
      this.#retire(client, reason);
    };
    const sending = client.updates.sending;
    if (!sending) return end();
    return within(sending, 1000).then(end).catch((error) =>
      this.log.writeOrStderr("error", {
        tag: "server/error",
        fields: { message: (error as Error).message },
      })
    );
  }

  /** Keeps an ended client for the reports; `onEnded` hears of it. */
  #retire(client: LabClient, reason: SessionEndReason) {
    if (client.endedReason) return;
    this.#stopTimer(client);
    for (const call of client.waiting) call.settle("session ended");
    client.endedReason = reason;
    this.#live.delete(client);
    if (this.#byId.get(client.id) === client) this.#byId.delete(client.id);
    const judged = this.judged(client);
    const kept = judged ? this.#judged : this.#ended;
    kept.push(client);
    if (kept.length > (judged ? this.config.maxSessions : ENDED_CLIENTS_KEPT)) {
      kept.shift();
      if (judged) this.droppedJudged++;
    }
    this.onEnded(client);
  }

  /** Stops every live client's updates (at shutdown), returning them. */
  stopAll(): LabClient[] {
    const clients = [...this.#live];
    for (const client of clients) {
      // Here only: other replicas keep their clients' updates going.
      this.#stopTimer(client);
      for (const call of client.waiting) call.settle("shutdown");
    }
    return clients;
  }

  /** Every client for the reports, oldest first. */
  reportedClients(): LabClient[] {
    return [...this.#judged, ...this.#ended, ...this.#live].sort((a, b) =>
      a.firstSeen - b.firstSeen
    );
  }

  /** Starts the client's update series once, after the configured delay. */
  #startUpdates(client: LabClient) {
    if (client.updates.started) return;
    client.updates.started = true;
    const series = ++client.updates.series;
    this.peers.seriesChanged(client);
    const { updateCount: remaining, updateDelaySeconds } = this.config;
    this.schedule(client, { series, remaining }, updateDelaySeconds);
  }

  /** The run's next update, also a gone replica's (taken over here). */
  schedule(client: LabClient, run: UpdateRun, seconds: number) {
    const claimed = this.peers.claim(client, run, seconds);
    if (run.remaining === 0) return;
    // A rejection would end the process: a failed update is evidence.
    const timer = client.updates.timer = setTimeout(
      () =>
        this.#fire(client, run, claimed).catch((error) =>
          this.#updateFailed(client, error)
        ),
      seconds * 1000,
    );
    // Claimed by another replica: only its timer goes on (or is taken over).
    claimed.then((mine) => {
      if (!mine && client.updates.timer === timer) this.#stopTimer(client);
    });
  }

  async #fire(client: LabClient, run: UpdateRun, claimed: Promise<boolean>) {
    client.updates.timer = undefined;
    // Claimed by another replica, or cancelled (or restarted) meanwhile?
    const current = () =>
      client.updates.started && client.updates.series === run.series &&
      !client.endedReason;
    if (!await claimed || !current()) return;
    client.reviewVersion++;
    this.record(client, "update", {
      tag: "resource/update",
      fields: { uri: REVIEW_URI, version: client.reviewVersion },
    });
    for (const call of client.waiting) call.settle("updated");
    await this.#notify(client, "updated");
    if (this.config.sendListChanged) await this.#notify(client, "resources");
    await this.#changeCatalog(client);
    run.remaining--;
    if (!current()) return;
    // With none left, the others still hear that the series is done.
    this.schedule(client, run, this.config.updateIntervalSeconds);
  }

  /** Adds each changing list's item, once per run, and says so. */
  async #changeCatalog(client: LabClient) {
    for (const kind of this.config.catalogChange) {
      if (client.progress.catalog[kind].changed) continue;
      this.record(client, "catalog-change", {
        tag: "catalog/change",
        fields: { kind, added: CATALOG_ADDED[kind] },
      }, { catalog: [kind] });
      await this.#notify(client, kind, [kind]);
    }
  }

  /**
   * Sends one change notification and records whether it got through: a
   * changing list's (`catalog`) counts on its own ladder alone.
   */
  async #notify(
    client: LabClient,
    notification: ChangeNotification,
    catalog: CatalogKind[] = [],
  ) {
    // A client may read (or list) before the write of its notification
    // has returned.
    client.progress.notifying = true;
    await this.peers.notifying(client, true);
    const sending = this.peers.deliver(client, notification).catch(sendFailed);
    const delivery = await (client.updates.sending = sending);
    client.updates.sending = undefined;
    client.progress.notifying = false;
    const inline = delivery.delivered ? delivery.inline : undefined;
    const kind = catalog.length > 0 ? "catalog-notify" : "notify";
    this.record(client, kind, {
      tag: "notification/send",
      words: methodOf(notification),
      fields: {
        uri: notification === "updated" ? REVIEW_URI : undefined,
        delivered: delivery.delivered,
        reason: delivery.delivered ? undefined : delivery.reason,
        // The text's shape and size; the text itself is the resource's.
        inline: inline?.shapes.join("+"),
        bytes: inline?.bytes,
        embedResources: inline?.asked || undefined,
      },
    }, { delivery, version: client.reviewVersion, catalog });
    // After the step: no replica sees the write end before its outcome.
    this.peers.notifying(client, false);
  }

  #updateFailed(client: LabClient, error: unknown) {
    const message = error instanceof Error ? error.message : String(error);
    client.progress.updateFailed ??= message;
    this.log.writeOrStderr("warn", {
      tag: "update/error",
      words: "the update could not be sent",
      fields: { message },
    }, client);
  }

  /** Stops a pending update; `byClient` (before any was sent) is a verdict. */
  #cancelUpdates(client: LabClient, byClient = false) {
    if (!client.updates.started) return;
    this.#stopTimer(client);
    client.updates.started = false;
    client.updates.series++;
    if (byClient && client.reviewVersion === 1) {
      client.progress.closedBeforeUpdate = true;
    }
    this.peers.seriesChanged(client);
  }

  /** Clears the timer this replica holds for the client, if any. */
  #stopTimer(client: LabClient) {
    clearTimeout(client.updates.timer);
    client.updates.timer = undefined;
  }
}

/**
 * `bus.ts`'s `ReplicaBus` (`--bus`) as the lab uses it: attached, the
 * state's `Peers`; its status in `/healthz`, its caveats in the reports.
 */
export interface ReplicaLink {
  attach(state: LabState, log: Logger): void;
  /** `/healthz`'s `bus` (bus.ts says what): not `ready` while catching up. */
  status(): { ready: boolean };
  /** Settles once what the others recorded so far is applied here. */
  catchUp(): Promise<void>;
  /** What a report must say when this replica's view may be partial. */
  caveats(): string[];
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Reproduce: how to start the same lab, and where to file the report
// ---------------------------------------------------------------------------

/** Where the lab came from: its URL when run from one, or a local file. */
const LAB_SOURCE = new URL(import.meta.url);
const FROM_URL = ["https:", "http:"].includes(LAB_SOURCE.protocol);

/** A page of the lab's docs beside its source, or where to find it. */
const docsPage = (page: string) =>
  FROM_URL
    ? new URL(`docs/${page}`, LAB_SOURCE).href
    : `docs/${page} in the lab's repository`;

/**
 * The clients the docs cover (client-setup.md, bug-reports.md), by their
 * `clientInfo` name, with the name the docs give them; a test holds both.
 */
export const DOCUMENTED_CLIENTS: Record<string, string> = {
  "claude-code": "Claude Code",
  "gemini-cli-mcp-client": "Gemini CLI",
  "codex-mcp-client": "Codex CLI",
  opencode: "OpenCode",
  "copilot-cli": "Copilot CLI",
  "factory-cli": "Factory Droid",
  "omp-coding-agent": "oh-my-pi",
  "code-server": "VS Code",
};

/** How to start this lab again, with this run's settings. */
export type Reproduce = ReturnType<typeof reproduceOf>;

/** Shell-quotes one argument when it needs it. */
export function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg)
    ? arg
    : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** Every setting whose value is not its default, as flags; never the token. */
function settingFlags(config: LabConfig): string[] {
  return Object.entries(SETTINGS).flatMap(([name, setting]) => {
    if (name === "authToken") return [];
    const given = config[name as keyof LabConfig];
    const value = name === "bus" ? withoutPassword(String(given)) : given;
    const fallback = setting.schema.parse(setting.defaultValue);
    if (JSON.stringify(value) === JSON.stringify(fallback)) return [];
    const flag = `--${flagName(name, setting)}`;
    // One word: a value that starts with "-" is not taken for a flag.
    const text = Array.isArray(value) ? value.join(",") : String(value);
    return value === true ? flag : `${flag}=${shellQuote(text)}`;
  });
}

function reproduceOf(
  config: LabConfig,
  transport: LabTransportKind,
  clients: LabClient[],
) {
  // Own keys only: a client named "constructor" is not documented.
  const documented = clients.flatMap(({ name }) =>
    Object.hasOwn(DOCUMENTED_CLIENTS, name) ? [DOCUMENTED_CLIENTS[name]] : []
  );
  return {
    command: [
      "deno run -A",
      FROM_URL ? shellQuote(LAB_SOURCE.href) : "main.ts",
      ...transport === "stdio" ? ["--stdio"] : [],
      ...settingFlags(config),
    ].join(" "),
    sourceUrl: FROM_URL ? LAB_SOURCE.href : null,
    lab: LAB_VERSION,
    sdk: SDK_VERSION,
    deno: Deno.version.deno,
    os: `${Deno.build.os} ${Deno.build.arch}`,
    tokenRequired: config.authToken !== "",
    // The report's clients that the docs cover, as the docs name them.
    clients: [...new Set(documented)],
  };
}

function reproduceMarkdown(reproduce: Reproduce): string[] {
  return [
    "## Reproduce",
    "",
    "Start the same lab:",
    "",
    "```sh",
    reproduce.command,
    "```",
    "",
    reproduce.sourceUrl === null
      ? `Started from a local file, lab ${reproduce.lab}: to be sure of the same lab, run main.ts from a URL pinned at that version (a tag or a commit of the lab's repository).`
      : `Started from ${reproduce.sourceUrl}.`,
    ...!reproduce.tokenRequired ? [] : [
      "",
      "This lab required a bearer token (MCP_TEST_AUTH_TOKEN); set one of your own.",
    ],
    "",
    `Lab ${reproduce.lab}, MCP SDK ${reproduce.sdk}, Deno ${reproduce.deno}, ${reproduce.os}.`,
    ...reproduce.clients.length === 0 ? [] : [
      "",
      `How to point ${reproduce.clients.join(", ")} at the lab: ${
        docsPage("client-setup.md")
      }.`,
    ],
    "",
    `Where to file this report, and the requests already open: ${
      docsPage("bug-reports.md")
    }.`,
  ];
}

// ---------------------------------------------------------------------------
// Verdicts: grading a client, printing its verdict, the JSON report
// ---------------------------------------------------------------------------

const LEVEL_NAMES = [
  "no connection",
  "connected",
  "discovered the resource",
  "read version 1",
  "subscribed",
  "notification delivered",
  "re-read after the notification",
  "agent context shows the update",
] as const;

/** A client's grade on the lab's levels, with the step that stopped it. */
type Verdict = ReturnType<typeof verdictOf>;

/** The steps of the levels, as `/report` names them. */
export type VerdictSteps = Verdict["steps"];

/** Grades a client on the levels: the highest step it reached. */
function verdictOf(client: LabClient, config: LabConfig) {
  const { progress, proof } = client;
  const steps = {
    connected: proof.connected !== undefined,
    listed: proof.listed !== undefined,
    readV1: proof.readV1 !== undefined,
    subscribed: proof.subscribed !== undefined,
    notificationDelivered: progress.notified !== undefined,
    rereadAfterNotification: proof.reread !== undefined,
    // Version 2 came inside the notification, as the client asked (SEP-3119).
    deliveredInline: progress.deliveredInline !== undefined,
    contextUpdated: "not observable" as const,
  };
  const ladder = [
    true,
    steps.connected,
    steps.listed,
    steps.readV1,
    steps.subscribed,
    steps.notificationDelivered,
    // Asked for and sent inside the notification, version 2 needs no read.
    steps.rereadAfterNotification || steps.deliveredInline,
  ];
  const level = ladder.lastIndexOf(true);
  const missing = missingStep(client, config, level);
  const waited = progress.waitTool.deliveredVersion;
  return {
    level,
    levelName: level === 6 && steps.deliveredInline
      ? `version ${progress.deliveredInline} delivered inline, ${
        steps.rereadAfterNotification ? "re-read anyway" : "not re-read"
      }`
      : LEVEL_NAMES[level],
    /** What the client did not do that the next level needs, in words. */
    missing: waited === undefined || level >= 6
      ? missing
      : `${missing}; the update (version ${waited}) reached it through the ${WAIT_TOOL} tool instead (level 6 via wait tool)`,
    steps,
    // A wait that returned a newer version is levels 5 and 6, by its route.
    waitToolLevel: waited === undefined ? null : 6 as number,
    catalog: catalogVerdictOf(client, config),
  };
}

/** The tool a read went through, in words, if it was not a resource read. */
function readRoute(via?: ReadRoute): string {
  return via === "tool"
    ? ` (through the ${REVIEW_TOOL} tool)`
    : via === "wait-tool"
    ? ` (through the ${WAIT_TOOL} tool)`
    : "";
}

/** The first step the client did not take natively (its own requests). */
function missingStep(client: LabClient, config: LabConfig, level: number) {
  const progress = client.progress;
  if (level >= 6) {
    return `level 7 (the agent's context shows the update) is not observable from the server${
      readRoute(client.proof.reread?.via)
    }`;
  }
  if (!client.proof.listed && level < 2) {
    return "never listed resources (resources/list)";
  }
  if (!client.proof.readV1) return `never read ${REVIEW_URI} (resources/read)`;
  const trigger = config.updateTrigger;
  if (!client.proof.subscribed && trigger === "subscribe") {
    if (client.era === "2025") {
      return `never subscribed to ${REVIEW_URI} (resources/subscribe)${
        readRoute(client.proof.readV1.via)
      }`;
    }
    return progress.listenedWithoutResource
      ? `opened subscriptions/listen without ${REVIEW_URI} in resourceSubscriptions`
      : `never opened subscriptions/listen for ${REVIEW_URI}`;
  }
  if (!progress.notified) {
    if (progress.updateFailed) {
      return `the update could not be sent: ${progress.updateFailed}`;
    }
    if (progress.lost.length > 0) {
      const reason = progress.lost[0];
      if (reason === "no GET stream open") {
        return progress.getStreamOpened
          ? "the notification was lost: the client's GET stream was closed when it was sent"
          : "the notification was lost: the client never opened the GET stream it would need";
      }
      return `the notification was not delivered: ${reason}`;
    }
    if (progress.closedBeforeUpdate) {
      return client.era === "2025"
        ? "unsubscribed before the update"
        : "the listen stream closed before the update";
    }
    return client.updates.timer
      ? "the update has not fired yet"
      : `no update was sent (trigger: ${trigger})`;
  }
  return progress.deliveryDoubt ??
    `never read ${REVIEW_URI} again after the notification`;
}

/** A client's rungs on the catalog ladder (the probe grades a server's apart). */
const CLIENT_CATALOG_LEVEL_NAMES = [
  "never listed",
  "listed",
  "notified of the change",
  "listed again, got the new item",
  "used the new item",
  "the new item reached the model",
] as const;

/** The request that uses each list's new item. */
const CATALOG_USE = {
  tools: "tools/call",
  prompts: "prompts/get",
  resources: "resources/read",
} as const;

/**
 * Grades a client on the catalog ladder of each changing list, beside the
 * resource's: a kind's level counts its rungs reached in a row, and what the
 * next needs names the defect seen; the client's is its lowest kind's. Null
 * when the catalog does not change.
 */
function catalogVerdictOf(client: LabClient, config: LabConfig) {
  if (config.catalogChange.length === 0) return null;
  const kinds = config.catalogChange.map((kind) => {
    const track = client.progress.catalog[kind];
    const added = CATALOG_ADDED[kind];
    const rungs = [track.listed, track.notified, track.relisted, track.used];
    const level = rungs.includes(undefined) ? rungs.indexOf(undefined) : 4;
    const [listed, notified, relisted, used] = rungs.map(Boolean);
    const reachedModel = "not observable" as const;
    const steps = { listed, notified, relisted, used, reachedModel };
    const notNotified = !track.changed
      ? client.updates.timer
        ? "the catalog has not changed yet"
        : `the catalog did not change: no update was sent (trigger: ${config.updateTrigger})`
      : client.era === "2026-07-28" && !track.asked
      ? `2026-07-28: never asked for ${kind} list changes on a listen (${kind}ListChanged)`
      : `listed ${kind} only at connect: ${
        methodOf(kind)
      } was lost (${track.lost?.evidence.fields?.reason})`;
    const missing = [
      `never listed ${kind} (${kind}/list)`,
      notNotified,
      `notified, never listed ${kind} again`,
      `listed ${kind} again but never used ${added} (${CATALOG_USE[kind]})`,
      `level 5 (${added} reaching a model request) is not observable from the server`,
    ][level];
    const levelName = CLIENT_CATALOG_LEVEL_NAMES[level];
    return [kind, { added, level, levelName, missing, steps }] as const;
  });
  const [lowest, worst] = kinds.reduce((low, next) =>
    next[1].level < low[1].level ? next : low
  );
  return {
    level: worst.level,
    missing: `${lowest}: ${worst.missing}`,
    kinds: Object.fromEntries(kinds),
  };
}

/** A client's catalog levels in a few words: "tools 4, prompts 2", or "off". */
function catalogSummary(catalog: ReturnType<typeof catalogVerdictOf>) {
  return catalog
    ? Object.entries(catalog.kinds).map(([kind, { level }]) =>
      `${kind} ${level}`
    ).join(", ")
    : "off";
}

/** One client in `GET /report`: stable fields (docs/reports.md). */
export type ClientReport = ReturnType<typeof clientReport>;

/** `GET /report`: the lab, its scenario, and every client it knows. */
export interface LabReport {
  lab: string;
  sdk: string;
  generatedAt: string;
  /** How to start this lab again; absent in reports rebuilt from a stdio log. */
  reproduce?: Reproduce;
  scenario: ReturnType<typeof scenarioOf>;
  /** What may make this report incomplete (a replica that lost its bus). */
  caveats?: readonly string[];
  clients: ClientReport[];
}

/** The settings that shape what clients see, as `/report` names them. */
function scenarioOf(config: LabConfig) {
  return {
    era: config.era,
    trigger: config.updateTrigger,
    updateDelaySeconds: config.updateDelaySeconds,
    updateCount: config.updateCount,
    updateIntervalSeconds: config.updateIntervalSeconds,
    sendListChanged: config.sendListChanged,
    inlineContent: config.inlineContent,
    catalogChange: config.catalogChange.join(",") || "off",
    toolEnabled: config.enableTool,
    maxWatches: config.maxWatches,
    streamLifetimeSeconds: config.streamLifetimeSeconds,
    streamEnd: config.streamEnd,
  };
}

/** The report entry for one client, graded with `verdict`. */
function clientReport(
  client: LabClient,
  config: LabConfig,
  verdict = verdictOf(client, config),
) {
  return {
    id: client.id,
    name: client.name,
    version: client.version,
    era: client.era,
    protocolVersion: client.protocolVersion,
    transport: client.transport,
    firstSeen: isoTime(client.firstSeen),
    lastSeen: isoTime(client.lastSeen),
    ended: client.endedReason ?? null,
    trigger: config.updateTrigger,
    level: verdict.level,
    levelName: verdict.levelName,
    missing: verdict.missing,
    steps: verdict.steps,
    resourceVersion: client.reviewVersion,
    lastVersionRead: client.progress.lastVersionRead,
    updatesSent: client.reviewVersion - 1,
    notificationsLost: client.progress.lost.length,
    readVia: client.proof.readV1?.via ?? null,
    // Never part of `level`: the wait tool's level is 6 or null.
    waitTool: {
      calls: client.progress.waitTool.calls,
      longestWaitSeconds: client.progress.waitTool.longestSeconds,
      level: verdict.waitToolLevel,
    },
    // Above 1, several streams (often copies of one client) shared it.
    listenStreamsAtOnce: client.peakListens,
    embedResources: client.progress.embedAsked,
    // The second ladder, per changing list; null with --catalog-change off.
    catalog: verdict.catalog,
    timeline: client.timeline.map((step) => ({
      at: isoTime(step.at),
      kind: step.kind,
      line: lineOf(step, client),
    })),
    timelineDropped: client.droppedSteps,
  };
}

/** `GET /report`: every client the lab knows, oldest first. */
function labReport(
  clients: LabClient[],
  config: LabConfig,
  transport: LabTransportKind,
  caveats: readonly string[] = [],
): LabReport {
  return {
    lab: LAB_VERSION,
    sdk: SDK_VERSION,
    generatedAt: new Date().toISOString(),
    reproduce: reproduceOf(config, transport, clients),
    scenario: scenarioOf(config),
    ...caveats.length > 0 && { caveats },
    clients: clients.map((client) => clientReport(client, config)),
  };
}

/** Prints a client's verdict block (or one JSON object) at info level. */
function printVerdict(log: Logger, client: LabClient, config: LabConfig) {
  const verdict = verdictOf(client, config);
  log.block(() => verdictBlock(client, config, verdict), () => ({
    event: "verdict",
    ...clientReport(client, config, verdict),
    timeline: undefined,
    evidence: keyEvidence(client),
  }));
}

/** The short block printed when a client's session ends, and at shutdown. */
function verdictBlock(client: LabClient, config: LabConfig, verdict: Verdict) {
  return [
    `[verdict] level=${verdict.level} client=${
      lineValue(clientLabel(client))
    } era=${client.era} protocol=${lineValue(client.protocolVersion)} id=${
      lineValue(client.id)
    } trigger=${config.updateTrigger}`,
    `  level ${verdict.level} of 7: ${verdict.levelName}`,
    ...(verdict.waitToolLevel === null ? [] : [
      `  via wait tool: level ${verdict.waitToolLevel} (version ${client.progress.waitTool.deliveredVersion} through ${WAIT_TOOL})`,
    ]),
    `  next: ${lineWords(verdict.missing)}`,
    ...verdict.catalog
      ? [
        `  catalog: level ${verdict.catalog.level} of 5 (${
          catalogSummary(verdict.catalog)
        }); next: ${lineWords(verdict.catalog.missing)}`,
      ]
      : [],
    ...keyEvidence(client).map((line) => `  evidence: ${line}`),
  ];
}

/** The lines that prove how far a client got (subscription to re-read). */
function keyEvidence(client: LabClient): string[] {
  const { subscribed, notified, lost, reread, readV1, listed } = client.proof;
  const decisive = defined([subscribed, notified ?? lost, reread]);
  const steps = decisive.length > 0
    ? decisive
    : defined([readV1, listed, client.proof.connected]).slice(0, 2);
  // Then each changed list's furthest rungs: its notification, re-list, use.
  const catalog = Object.values(client.progress.catalog).flatMap((track) =>
    defined([track.notified ?? track.lost, track.relisted, track.used])
  );
  return [...steps, ...catalog].map((step) => lineOf(step, client));
}

// ---------------------------------------------------------------------------
// The Markdown report: tables, verdicts, evidence and diagrams
// ---------------------------------------------------------------------------

/** The most characters a Markdown report holds: GitHub's limit on an issue body. */
export const REPORT_LIMIT = 65_536;

/**
 * `GET /report.md` (and `--report-file`): the scenario, a row per client,
 * each client's verdict, evidence and diagram, then how to reproduce the
 * lab, trimmed to `REPORT_LIMIT` characters oldest client first.
 */
function labReportMarkdown(
  clients: LabClient[],
  config: LabConfig,
  transport: LabTransportKind,
  caveats: readonly string[] = [],
): string {
  const { inlineContent, catalogChange } = config;
  const scenario = [
    `trigger \`${config.updateTrigger}\`, delay ${config.updateDelaySeconds} s, ${config.updateCount} update(s)`,
    config.era !== "both" && `era ${config.era} only`,
    config.sendListChanged && "list_changed on",
    inlineContent !== "off" && `content inline (${inlineContent})`,
    config.enableTool && `${REVIEW_TOOL} tool on`,
    catalogChange.length > 0 && `catalog change: ${catalogChange.join(", ")}`,
    config.maxWatches !== null && `at most ${config.maxWatches} watches`,
    config.streamLifetimeSeconds !== null &&
    `streams ended after ${config.streamLifetimeSeconds} s (${config.streamEnd})`,
  ].filter(Boolean).join(", ");
  const head = [
    "# MCP resource subscription lab report",
    "",
    `Lab ${LAB_VERSION}, MCP SDK ${SDK_VERSION}, ${
      new Date().toISOString()
    }; ${scenario}.`,
    "",
    ...caveats.flatMap((caveat) => [`> ${caveat}`, ""]),
    "| Client | Version | Era (protocol) | Transport | Connected | Listed | Read v1 | Subscribed | Notified | Re-read v2 | Context updated | Level | Catalog | Notes |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  const parts: (string | undefined)[][] = clients.map((client) => {
    const verdict = verdictOf(client, config);
    return [
      reportRow(client, verdict),
      reportVerdict(client, verdict),
      reportDetail(client),
    ];
  });
  const tail = [
    "",
    ...reproduceMarkdown(reproduceOf(config, transport, clients)),
  ];
  // Room for the note that says what was trimmed.
  const room = REPORT_LIMIT - 400 - [...head, ...tail].join("\n").length;
  const dropped = trimToFit(parts, room).map((left) => clients.length - left);
  const trimmed = dropped[2] === 0 ? [] : [
    "",
    `Trimmed to ${REPORT_LIMIT} characters, GitHub's limit on an issue body: the evidence and diagrams of the ${
      dropped[2]
    } oldest client(s)${
      dropped[1] > 0 ? `, the verdicts of the ${dropped[1]} oldest` : ""
    }${
      dropped[0] > 0 ? `, and the table rows of the ${dropped[0]} oldest` : ""
    } are left out. The full report is JSON at /report.`,
  ];
  return [
    ...head,
    ...defined(parts.map(([row]) => row)),
    ...parts.flatMap(([, verdict, detail]) => defined([verdict, detail])),
    ...trimmed,
    ...tail,
  ].join("\n") + "\n";
}

/**
 * Drops (as undefined) the oldest clients' details, then verdicts, then rows
 * of `parts` (`[row, verdict, detail]` each) until the rest fits in `room`;
 * returns how many of each are left.
 */
function trimToFit(parts: (string | undefined)[][], room: number): number[] {
  let size = parts.flat().reduce((sum, text) => sum + text!.length + 1, 0);
  const left = [parts.length, parts.length, parts.length];
  for (const kind of [2, 1, 0]) {
    for (let index = 0; size > room && index < parts.length; index++) {
      size -= parts[index][kind]!.length + 1;
      parts[index][kind] = undefined;
      left[kind]--;
    }
  }
  return left;
}

function reportRow(client: LabClient, verdict: Verdict): string {
  const { steps } = verdict;
  return `| ${
    [
      cell(client.name),
      cell(client.version),
      `${client.era} (${cell(client.protocolVersion)})`,
      client.transport,
      MARK(steps.connected),
      MARK(steps.listed),
      MARK(steps.readV1),
      MARK(steps.subscribed),
      byRoute(steps.notificationDelivered, verdict.waitToolLevel),
      steps.deliveredInline
        ? `inline${steps.rereadAfterNotification ? ", re-read too" : ""}`
        : byRoute(steps.rereadAfterNotification, verdict.waitToolLevel),
      "not observable",
      verdict.waitToolLevel === null
        ? `${verdict.level}`
        : `${verdict.level} (${verdict.waitToolLevel} via wait tool)`,
      catalogSummary(verdict.catalog),
      cell(
        verdict.missing + sharedIdentityNote(client) +
          (verdict.catalog ? `; catalog ${verdict.catalog.missing}` : ""),
      ),
    ].join(" | ")
  } |`;
}

function reportVerdict(client: LabClient, verdict: Verdict): string {
  return [
    "",
    `## ${cell(clientLabel(client))} (${client.era}, ${cell(client.id)})`,
    "",
    `Level ${verdict.level} of 7, ${verdict.levelName}. Next: ${
      cell(verdict.missing)
    }.`,
    ...verdict.catalog
      ? [
        "",
        `Catalog level ${verdict.catalog.level} of 5 (${
          catalogSummary(verdict.catalog)
        }). Next: ${cell(verdict.catalog.missing)}.`,
      ]
      : [],
  ].join("\n");
}

/** A client's key evidence as a list, and what it did as a diagram. */
function reportDetail(client: LabClient): string {
  return [
    "",
    "Evidence:",
    "",
    // Escaped: a code block would keep a name's HTML in the page's source.
    ...keyEvidence(client).map((line) => `- ${cell(line)}`),
    "",
    "```mermaid",
    ...sequenceDiagram(client),
    "```",
  ].join("\n");
}

/** `GET /report.md`, or `?client=NAME`'s clients alone (unknown: a 404). */
function reportMarkdownResponse(
  clients: LabClient[],
  config: LabConfig,
  name: string | null,
  caveats: readonly string[] = [],
): Response {
  // The name as sent, or as the report's table shows it (`a&#124;b`).
  const chosen = name === null
    ? clients
    : clients.filter((client) =>
      client.name === name || cell(client.name) === name
    );
  if (chosen.length === 0 && name !== null) {
    const names = [...new Set(clients.map((client) => client.name))];
    return new Response(
      `Not Found: no client named ${
        lineValue(clip(name, 64))
      } in the report; it holds ${
        names.length === 0
          ? "no client yet"
          : names.slice(0, 50).map(lineValue).join(", ") +
            (names.length > 50 ? `, and ${names.length - 50} more` : "")
      }\n`,
      { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } },
    );
  }
  return new Response(
    labReportMarkdown(chosen, config, "streamable-http", caveats),
    { headers: { "content-type": "text/markdown; charset=utf-8" } },
  );
}

/** A level step's cell: reached natively, or only through the wait tool. */
const byRoute = (native: boolean, waitToolLevel: number | null) =>
  native || waitToolLevel === null ? MARK(native) : "via wait tool";

/** Says when several listen streams were open at once under one identity. */
function sharedIdentityNote(client: LabClient): string {
  return client.peakListens > 1
    ? ` (${client.peakListens} listen streams were open at once under this clientInfo: copies of one client, or one replacing its listen, which the stateless era cannot tell apart)`
    : "";
}

/** What the client actually did, as a mermaid sequence diagram. */
function sequenceDiagram(client: LabClient): string[] {
  const diagram = [
    "sequenceDiagram",
    `    participant C as ${mermaidText(clientLabel(client))}`,
    "    participant L as Lab",
  ];
  for (const step of client.timeline) {
    const arrow = diagramArrow(step, client);
    if (!arrow) continue;
    // "C->>L: label": only the label may hold what the client sent.
    const colon = arrow.indexOf(": ");
    diagram.push(
      `    ${arrow.slice(0, colon)}: ${mermaidText(arrow.slice(colon + 2))}`,
    );
  }
  if (client.droppedSteps > 0) {
    diagram.push(
      `    Note over C,L: ${client.droppedSteps} later steps left out`,
    );
  }
  return diagram;
}

function diagramArrow(
  { kind, evidence }: Step,
  client: LabClient,
): string | undefined {
  const fields = evidence.fields ?? {};
  switch (kind) {
    case "connect":
      return evidence.tag === "initialize"
        ? `C->>L: initialize (${client.protocolVersion})`
        : "C->>L: server/discover";
    case "list":
      return `C->>L: ${evidence.tag}${
        fields.added ? ` (${fields.count}, with ${fields.added})` : ""
      }`;
    case "read":
      if (fields.name === WAIT_TOOL) {
        return `C->>L: tools/call ${WAIT_TOOL} since v${fields.since}, answered v${fields.version} after ${fields.waited}`;
      }
      return evidence.tag === "tools/call"
        ? `C->>L: tools/call ${REVIEW_TOOL} (v${fields.version})`
        : `C->>L: resources/read (v${fields.version})`;
    case "read-unknown":
      return `C->>L: ${evidence.tag} ${fields.uri} (not found)`;
    case "subscribe":
    case "unsubscribe":
      return `C->>L: ${evidence.tag}`;
    case "listen":
      return `C->>L: subscriptions/listen (${
        [
          fields.uris || undefined,
          fields.listChanged && `${fields.listChanged} list changes`,
        ]
          .filter(Boolean).join(", ") || "nothing the lab serves"
      })`;
    case "listen-closed":
      return "Note over C,L: listen stream closed";
    case "stream-opened":
      return "C->>L: GET (opens the notification stream)";
    case "stream-closed":
      return "Note over C,L: GET stream closed";
    case "update":
      return `Note over L: resource moves to v${fields.version}`;
    case "catalog-change":
      return `Note over L: ${fields.kind} gain ${fields.added}`;
    case "catalog-use":
      return `C->>L: ${evidence.tag} ${
        fields.name ?? fields.uri
      } (the new one)`;
    case "notify":
    case "catalog-notify":
      return fields.delivered
        ? `L-->>C: ${evidence.words}${
          fields.inline ? `, new text inline (${fields.inline})` : ""
        }`
        : `L--xC: ${evidence.words} (lost: ${fields.reason})`;
    case "session-end":
      return `Note over C,L: session ended (${fields.reason})`;
  }
}

/** `--report-file`, written whole (a temporary file renamed), one at a time. */
class ReportFile {
  #last: Promise<void> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly render: () => string,
    private readonly log: Logger,
  ) {}

  /** A write is queued and has not started: it will render the latest. */
  #queued = false;

  /** Writes the report after the writes before it; waiting ends share one. */
  schedule() {
    if (this.#queued) return;
    this.#queued = true;
    this.#last = this.#last.then(() => {
      this.#queued = false;
      return this.#write();
    });
  }

  /** Resolves once every write asked for so far is done. */
  flush(): Promise<void> {
    return this.#last;
  }

  async #write() {
    // Unguessable, and created only if nothing is there (not a planted link).
    const temporary = `${this.path}.${crypto.randomUUID()}.tmp`;
    try {
      await Deno.writeTextFile(temporary, this.render(), { createNew: true });
      await Deno.rename(temporary, this.path);
    } catch (error) {
      this.log.write("warn", {
        tag: "report/error",
        words: "the report file could not be written",
        fields: { path: this.path, message: (error as Error).message },
      });
      // Only what this write created is removed, never what was there.
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        await Deno.remove(temporary).catch(() => {});
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The CI gate: shutting down by itself, an exit status from the levels
// ---------------------------------------------------------------------------

/** Shuts the lab down after `--exit-after-clients` or at `--deadline`. */
class Gate {
  #ended = 0;
  #reached = Promise.withResolvers<string>();
  #timer?: ReturnType<typeof setTimeout>;
  /** Settles with the reason, in words, once the lab should shut down. */
  readonly due = this.#reached.promise;

  constructor(private readonly config: LabConfig) {
    const { deadlineSeconds } = config;
    if (deadlineSeconds > 0) {
      this.#timer = setTimeout(
        () => this.#reached.resolve(`deadline of ${deadlineSeconds} s reached`),
        deadlineSeconds * 1000,
      );
    }
  }

  /** Whether the gate judges a client: every one, or `--gate-client`'s. */
  judges = ({ name }: LabClient): boolean => {
    const { exitAfterClients, gateClient } = this.config;
    return (this.#required().length > 0 || exitAfterClients > 0) &&
      (gateClient === "" || name === gateClient);
  };

  /** The ladders a level is required on, and that level. */
  #required() {
    const { requireLevel: level, requireCatalogLevel: catalog } = this.config;
    const ladders = [["level", level], ["catalog", catalog]] as const;
    return ladders.filter(([, required]) => required !== null);
  }

  clientEnded(client: LabClient) {
    const wanted = this.config.exitAfterClients;
    if (wanted > 0 && this.judges(client) && ++this.#ended === wanted) {
      this.#reached.resolve(`${wanted} client(s) ended`);
    }
  }

  /** The lab is shutting down anyway: no deadline may fire after it. */
  stop() {
    clearTimeout(this.#timer);
  }

  /**
   * The exit status of a lab that has shut down: 0, or with `--require-level`
   * a `caveat "…"` line for each reason its view may be partial (a replica's)
   * and one stable line per judged client on `sink` (`verdict client=… level=…
   * required=… pass|fail missing=…`), or one saying none came or some were
   * dropped, and 0 only when every judged client reached the level.
   */
  status(state: LabState, sink: LineSink, caveats: readonly string[]): number {
    const ladders = this.#required();
    if (ladders.length === 0) return 0;
    for (const caveat of caveats) sink(`caveat ${lineValue(caveat)}`);
    const { gateClient: named } = this.config;
    const clients = state.reportedClients().filter(this.judges);
    /** `verdict`, who, whether `ok` (they reached the level), on one line. */
    const verdictLine = (who: string, ok: boolean, why: string) =>
      sink(`verdict ${who} ${ok ? "pass" : "fail"} missing=${lineValue(why)}`);
    let status = 0;
    for (const client of clients) {
      const verdict = verdictOf(client, this.config);
      // With a catalog level required, the catalog changes: it is graded.
      const grades = { level: verdict, catalog: verdict.catalog! };
      for (const [name, required] of ladders) {
        const { level, missing } = grades[name];
        if (level < required!) status = 1;
        const who = `client=${lineValue(clientLabel(client))} ${name}=${level}`;
        verdictLine(`${who} required=${required}`, level >= required!, missing);
      }
    }
    const problem = clients.length === 0
      ? `no client${named && ` named ${named}`} came before the lab shut down`
      : state.droppedJudged > 0 &&
        `${state.droppedJudged} judged client(s) dropped past --max-sessions`;
    if (!problem) return status;
    const who = `clients=${clients.length} required=${ladders[0][1]}`;
    verdictLine(who, false, problem);
    return 1;
  }
}

// ---------------------------------------------------------------------------
// Refusals: one line each, and the answer (both eras, HTTP and stdio)
// ---------------------------------------------------------------------------

/** A request the lab turns away: its HTTP answer, and the JSON-RPC code. */
interface Refusal {
  status: number;
  /** The JSON-RPC error code; none for a plain-text answer. */
  code?: number;
  message: string;
  headers?: HeadersInit;
}

/** What a check that can fail returns when it does. */
type Refused = { refusal: Refusal };

function refused(status: number, code: number, message: string): Refused {
  return { refusal: { status, code, message } };
}

/** A watch past `--max-watches`: the SDK's answer past `maxSubscriptions`. */
const WATCH_LIMIT = { code: -32603, message: "Subscription limit reached" };
const watchLimitError = () =>
  new ProtocolError(WATCH_LIMIT.code, WATCH_LIMIT.message);

/** A JSON-RPC error answer to request `id` (-32603 for a refusal without a code). */
function errorAnswer(id: RequestId | null, { code, message }: Refusal) {
  return {
    jsonrpc: "2.0" as const,
    id: id as RequestId,
    error: { code: code ?? -32603, message },
  };
}

/** A request's path, also when its Host made its URL unparsable. */
function pathOf(request: Request): string {
  return URL.parse(request.url)?.pathname ??
    request.url.replace(/^[a-z]+:\/\/[^/]*/i, "");
}

/** One `[request/rejected]` line, with the request's method and path. */
function logRefusal(
  log: Logger,
  { status, code, message }: Refusal,
  request?: Request,
  client?: LabClient,
) {
  log.write("warn", {
    tag: "request/rejected",
    words: request && `${request.method} ${pathOf(request)}`,
    fields: { status, code, message: clip(message, MAX_MESSAGE_LENGTH) },
  }, client);
}

/** Logs a refusal where it is produced, then builds its answer. */
function refuse(log: Logger, request: Request, refusal: Refusal): Response {
  logRefusal(log, refusal, request);
  const { status, headers } = refusal;
  return refusal.code === undefined
    ? new Response(`${refusal.message}\n`, { status, headers })
    : Response.json(errorAnswer(null, refusal), { status, headers });
}

/** An answer the SDK built, logged first if an error (only those are read). */
async function logSdkRefusal(
  log: Logger,
  request: Request,
  response: Response,
): Promise<Response> {
  if (response.ok || !log.enabled("warn")) return response;
  const text = await response.clone().text();
  let error: { code?: number; message?: string } | undefined;
  try {
    error = JSON.parse(text)?.error;
  } catch {
    // An answer without a JSON-RPC body: its text says what went wrong.
  }
  logRefusal(log, {
    status: response.status,
    code: error?.code,
    message: error?.message ?? text.trim(),
  }, request);
  return response;
}

/** Logs each error the SDK reports outside any answer (not `--era`'s refusals). */
const logSdkErrors = (log: Logger) => ({ message }: Error) =>
  message.startsWith("Rejected 2025-era request") ||
  log.write("warn", { tag: "mcp/error", fields: { message } });

// ---------------------------------------------------------------------------
// The lab's MCP server, shared by both eras and both transports
// ---------------------------------------------------------------------------

/** What every era and transport of one lab shares. */
interface LabContext {
  config: LabConfig;
  log: Logger;
  state: LabState;
  reportFile?: ReportFile;
  gate: Gate;
  /** The other replicas, over HTTP with `--bus`. */
  bus?: ReplicaLink;
  /** What may make a report incomplete: this replica lost its bus. */
  caveats: () => readonly string[];
  /** `GET /report` now, as the report file's JSON has it too. */
  report: () => LabReport;
}

/** A lab's context: each client that ends prints its verdict, and more. */
function createLabContext(
  config: LabConfig,
  sink: LineSink,
  transport: LabTransportKind,
  bus?: ReplicaLink,
): LabContext {
  const log = createLogger(config, sink);
  const caveats = () => bus?.caveats() ?? [];
  const ctx: LabContext = {
    config,
    log,
    bus,
    caveats,
    report: () =>
      labReport(ctx.state.reportedClients(), config, transport, caveats()),
    state: new LabState(config, log, (client) => {
      printVerdict(log, client, config);
      ctx.reportFile?.schedule();
      ctx.gate.clientEnded(client);
    }, (client) => ctx.gate.judges(client)),
    gate: new Gate(config),
  };
  if (config.reportFile) {
    // A CI step reads a `.json` report with jq; people read the Markdown.
    const json = config.reportFile.toLowerCase().endsWith(".json");
    ctx.reportFile = new ReportFile(
      config.reportFile,
      () =>
        json ? `${JSON.stringify(ctx.report(), null, 2)}\n` : labReportMarkdown(
          ctx.state.reportedClients(),
          config,
          transport,
          caveats(),
        ),
      log,
    );
  }
  return ctx;
}

/** A handler's -32602 "Invalid params" error. */
const invalidParams = (message: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, message);

/** Params of the methods that name a URI or a tool: a bad one is -32602. */
const uriParams = { params: z.object({ uri: z.string() }).passthrough() };
const nameParams = { params: z.object({ name: z.string() }).passthrough() };
const toolCallParams = {
  params: z.object({
    name: z.string(),
    arguments: z.record(z.string(), z.unknown()).optional(),
  }).passthrough(),
};

/** The wait tool's arguments, checked as its input schema says. */
const waitArgumentsSchema = z.object({
  since_version: z.number().int().min(0).optional(),
  timeout_seconds: z.number().positive().max(MAX_WAIT_SECONDS).default(60),
}).strict();

/** What ends a wait tool call early, and how it reports progress, if asked. */
interface WaitCallOptions {
  ends: (AbortSignal | undefined)[];
  progress?: (elapsed: number, total: number) => Promise<void>;
}

/**
 * Holds a call until `client`'s resource changes, `seconds` pass, or one of
 * `ends` aborts, reporting progress every 5 s (4 times at least). Settles
 * once, with how many progress reports it sent, and leaves no timer behind.
 */
function waitForUpdate(
  client: LabClient,
  seconds: number,
  { ends, progress }: WaitCallOptions,
): Promise<{ end: WaitEnd; progressSent: number }> {
  const { promise, resolve } = Promise.withResolvers<
    { end: WaitEnd; progressSent: number }
  >();
  let progressSent = 0;
  const started = performance.now();
  const timeout = setTimeout(() => call.settle("timeout"), seconds * 1000);
  const ticker = progress && setInterval(() => {
    progressSent++;
    const elapsed = Math.round((performance.now() - started) / 100) / 10;
    progress(elapsed, seconds).catch(() => call.settle("disconnected"));
  }, Math.min(5, seconds / 4) * 1000);
  const ended = AbortSignal.any(defined(ends));
  const onAbort = () => call.settle("cancelled");
  const call: WaitingCall = {
    settle(end) {
      if (!client.waiting.delete(call)) return;
      clearTimeout(timeout);
      clearInterval(ticker);
      ended.removeEventListener("abort", onAbort);
      resolve({ end, progressSent });
    },
  };
  client.waiting.add(call);
  if (ended.aborted) call.settle("cancelled");
  ended.addEventListener("abort", onAbort, { once: true });
  return promise;
}

/** For each wait tool call over HTTP: aborts when its client leaves. */
const departures = new WeakMap<Request, AbortSignal>();

/**
 * `wait_for_review_update`: the resource's text once it is newer than
 * `since_version` (at once if it already is), or after the timeout with a
 * line saying so; recorded as a read through the wait tool. It ends early
 * when the call is cancelled or its client leaves, and reports progress if
 * the call asked.
 */
async function waitToolCall(
  { config, state }: LabContext,
  client: LabClient,
  rawArguments: unknown,
  { mcpReq, http }: ServerContext,
) {
  const parsed = waitArgumentsSchema.safeParse(rawArguments ?? {});
  if (!parsed.success) {
    const [{ message, path }] = parsed.error.issues;
    throw invalidParams(
      `Invalid arguments for ${WAIT_TOOL}: ${message} (${
        path.join(".") || "arguments"
      })`,
    );
  }
  const since = parsed.data.since_version ?? client.progress.lastVersionRead;
  const seconds = parsed.data.timeout_seconds;
  const progressToken = mcpReq._meta?.progressToken;
  const call: WaitCallOptions = {
    ends: [mcpReq.signal, http?.req && departures.get(http.req)],
    progress: progressToken === undefined
      ? undefined
      : (elapsed, total) =>
        mcpReq.notify({
          method: "notifications/progress",
          params: {
            progressToken,
            progress: elapsed,
            total,
            message: `waiting for ${REVIEW_URI} to change`,
          },
        }),
  };
  state.askedToWait(client);
  const started = performance.now();
  const { end, progressSent } = client.reviewVersion > since
    ? { end: "updated", progressSent: 0 }
    : await waitForUpdate(client, seconds, call);
  const waited = Math.round((performance.now() - started) / 100) / 10;
  const version = client.reviewVersion;
  state.record(client, "read", {
    tag: "tools/call",
    fields: {
      name: WAIT_TOOL,
      since,
      waited: `${waited}s`,
      version,
      ended: end === "updated" ? undefined : end,
      // Which clients ask for progress shows here.
      progress: call.progress ? progressSent : undefined,
    },
  }, { version, via: "wait-tool", since, waited });
  const text = reviewStatus(config, version);
  const preface = end === "updated"
    ? ""
    : end === "timeout"
    ? `no update within ${seconds} s: version ${version} is still current\n`
    : `the wait ended early (${end}): version ${version} is current\n`;
  return { content: [{ type: "text" as const, text: preface + text }] };
}

/** A JSON-RPC error the lab answered a request with. */
type ErrorAnswer = { code: number; message: string };

/**
 * The MCP server: sees its error answers; "not found" is -32002 for 2025.
 * It announces list changes for the lists that change (`changing`).
 */
class LabServer extends Server {
  constructor(
    private readonly era: Era,
    private readonly onErrorAnswer: (error: ErrorAnswer) => void,
    changing: readonly CatalogKind[],
  ) {
    // Even empty: some clients drop a server whose lists are unknown.
    const lists = (kind: CatalogKind) =>
      changing.includes(kind) ? { listChanged: true } : {};
    super(
      { name: "mcp-resource-subscription-lab", version: LAB_VERSION },
      {
        capabilities: {
          resources: { subscribe: true, listChanged: true },
          tools: lists("tools"),
          prompts: lists("prompts"),
        },
      },
    );
  }

  override async connect(transport: Transport): Promise<void> {
    const send = transport.send.bind(transport);
    transport.send = (message, options) =>
      send(this.outbound(message), options);
    await super.connect(transport);
  }

  private outbound(message: JSONRPCMessage): JSONRPCMessage {
    if (!isJSONRPCErrorResponse(message)) return message;
    const { code, message: text, data } = message.error;
    // The SDK's own reading: -32602 whose data is `uri` alone is not-found.
    const notFound = this.era === "2025" &&
      ProtocolError.fromError(code, text, data) instanceof
        ResourceNotFoundError;
    if (notFound) {
      message = {
        ...message,
        error: { ...message.error, code: ProtocolErrorCode.ResourceNotFound },
      };
    }
    this.onErrorAnswer(message.error);
    return message;
  }
}

/**
 * The MCP server of one client (a 2025 session's or stdio's, or one request's
 * in 2026-07-28); error answers are 200 refusals unless `onErrorAnswer` says.
 */
function buildLabServer(
  labContext: LabContext,
  client: LabClient,
  era: Era,
  onErrorAnswer = (error: ErrorAnswer) =>
    logRefusal(labContext.log, { status: 200, ...error }, undefined, client),
): Server {
  const { config, log, state } = labContext;
  const server = new LabServer(era, onErrorAnswer, config.catalogChange);
  // What the SDK cannot answer (a response to nothing, a failed send).
  server.onerror = logSdkErrors(log);
  const readReview = (via: "resource" | "tool", line: Evidence) => {
    state.record(client, "read", line, { version: client.reviewVersion, via });
    state.reached(client, "read");
    return reviewStatus(config, client.reviewVersion);
  };
  const catalog = client.progress.catalog;
  const changing = (kind: CatalogKind) => config.catalogChange.includes(kind);
  /** Whether `name` is its list's new item, there now (a `use` is recorded). */
  const added = (kind: CatalogKind, name: string, use?: Evidence) => {
    if (name !== CATALOG_ADDED[kind] || !catalog[kind].changed) return false;
    const facts = inOrderOf(client, kind, true);
    if (use) state.record(client, "catalog-use", use, facts);
    return true;
  };
  /** A list as the client's catalog holds it now, recorded when it changes. */
  const list = <Kind extends CatalogKind, Item>(
    kind: Kind,
    { tag }: { tag: `${Kind}/list` },
    items: Item[],
  ) => {
    const changed = catalog[kind].changed !== undefined;
    const listed = changed ? [...items, CATALOG_ITEMS[kind]] : items;
    if (changing(kind) || kind === "resources") {
      state.record(client, "list", {
        tag,
        words: "requested",
        fields: {
          count: listed.length,
          added: changed ? CATALOG_ADDED[kind] : undefined,
        },
      }, inOrderOf(client, kind));
    }
    return listed;
  };
  const reviewToolOn = config.enableTool || changing("tools");
  server.setRequestHandler("resources/list", () => ({
    resources: list("resources", { tag: "resources/list" }, [reviewResource]),
  }));
  server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: [],
  }));
  /** Only the lab's resource exists: anything else is logged, then "not found". */
  const onlyReview = (tag: string, uri: string) => {
    if (uri === REVIEW_URI) return;
    state.record(client, "read-unknown", {
      tag,
      fields: { uri: clip(uri, MAX_URI_LENGTH), result: "not-found" },
    });
    // -32602 with `data.uri`; `LabServer` makes it -32002 for 2025 clients.
    throw new ResourceNotFoundError(uri, `Resource not found: ${uri}`);
  };
  server.setRequestHandler("resources/read", uriParams, ({ uri }) => {
    if (added("resources", uri, { tag: "resources/read", fields: { uri } })) {
      const { mimeType } = CATALOG_ITEMS.resources;
      return { contents: [{ uri, mimeType, text: REVIEW_COMMENTS }] };
    }
    onlyReview("resources/read", uri);
    const text = readReview("resource", {
      tag: "resources/read",
      fields: { uri, version: client.reviewVersion },
    });
    return { contents: [{ uri, mimeType: REVIEW_MIME_TYPE, text }] };
  });
  server.setRequestHandler("tools/list", () => ({
    tools: list("tools", { tag: "tools/list" }, [
      ...reviewToolOn ? [reviewTool] : [],
      ...config.enableWaitTool ? [waitTool] : [],
    ]),
  }));
  // Tools and prompts are declared: an unknown name is bad params.
  server.setRequestHandler("tools/call", toolCallParams, (call, ctx) => {
    const { name } = call;
    if (added("tools", name, { tag: "tools/call", fields: { name } })) {
      return { content: [{ type: "text" as const, text: REVIEW_COMMENTS }] };
    }
    if (config.enableWaitTool && name === WAIT_TOOL) {
      return waitToolCall(labContext, client, call.arguments, ctx);
    }
    if (!reviewToolOn || name !== REVIEW_TOOL) {
      throw invalidParams(`Unknown tool: ${name}`);
    }
    const text = readReview("tool", {
      tag: "tools/call",
      fields: { name, uri: REVIEW_URI, version: client.reviewVersion },
    });
    return { content: [{ type: "text" as const, text }] };
  });
  server.setRequestHandler("prompts/list", () => ({
    prompts: list(
      "prompts",
      { tag: "prompts/list" },
      changing("prompts") ? [checklistPrompt] : [],
    ),
  }));
  server.setRequestHandler("prompts/get", nameParams, ({ name }) => {
    if (added("prompts", name, { tag: "prompts/get", fields: { name } })) {
      return promptMessages(
        `Summarize the review: its status is at ${REVIEW_URI}, its comments at ${CATALOG_ADDED.resources}.`,
      );
    }
    if (name === checklistPrompt.name && changing("prompts")) {
      return promptMessages(
        `What is the status of the review at ${REVIEW_URI}?`,
      );
    }
    throw invalidParams(`Unknown prompt: ${name}`);
  });
  if (era === "2025") {
    /** Watching the suite's fixture or the new resource counts for nothing. */
    const fixture = (tag: string, uri: string) => {
      const kind = uri === CONFORMANCE_URI
        ? { fixture: "conformance" }
        : added("resources", uri) && { catalog: "added" };
      if (!kind) return false;
      log.write("info", { tag, fields: { uri, ...kind } }, client);
      return true;
    };
    /** The URIs this session watches, at most `--max-watches`. */
    const watched = new Set<string>();
    server.setRequestHandler("resources/subscribe", uriParams, ({ uri }) => {
      const cap = config.maxWatches ?? Infinity;
      if (!watched.has(uri) && watched.size >= cap) throw watchLimitError();
      if (!fixture("resources/subscribe", uri)) {
        onlyReview("resources/subscribe", uri);
        const line = { tag: "resources/subscribe", fields: { uri } };
        state.record(client, "subscribe", line);
        state.reached(client, "subscribe");
      }
      watched.add(uri);
      return {};
    });
    server.setRequestHandler("resources/unsubscribe", uriParams, ({ uri }) => {
      watched.delete(uri);
      if (fixture("resources/unsubscribe", uri)) return {};
      state.record(client, "unsubscribe", {
        tag: "resources/unsubscribe",
        fields: { uri: clip(uri, MAX_URI_LENGTH) },
      });
      if (uri === REVIEW_URI) state.withdrew(client);
      return {};
    });
  }
  return server;
}

/** Sends a change notification through the SDK, which routes it itself. */
function sendThrough(
  server: Server,
  notification: ChangeNotification,
  params?: Record<string, unknown>,
): Promise<void> {
  return notification === "updated"
    ? server.sendResourceUpdated({ ...params, uri: REVIEW_URI })
    : server.notification({ method: methodOf(notification) });
}

// ---------------------------------------------------------------------------
// Listen streams and client identities (2026-07-28, HTTP and stdio)
// ---------------------------------------------------------------------------

const listenParamsSchema = z.object({
  notifications: z.object({
    resourceSubscriptions: z.array(z.string()).optional(),
    toolsListChanged: z.boolean().optional(),
    promptsListChanged: z.boolean().optional(),
    resourcesListChanged: z.boolean().optional(),
  }).passthrough(),
}).passthrough();

/** The most URIs a listen filter may name. */
const MAX_LISTEN_URIS = 100;
/** The longest listen id: every frame of its stream echoes it. */
const MAX_LISTEN_ID_LENGTH = 256;

/**
 * Narrows a listen filter to the lab's URI, so the acknowledgement says what
 * the client will hear about, or refuses it past the bounds above. The lab
 * keeps `filter`, bounded; the SDK answers from `params`, all that was sent.
 */
function narrowListenFilter(params: unknown, id: RequestId | undefined) {
  const listen = listenParamsSchema.safeParse(params);
  // A malformed filter goes to the SDK unchanged, which answers -32602.
  if (!listen.success) return undefined;
  const { notifications } = listen.data;
  const requested = notifications.resourceSubscriptions;
  const subscriptionId = String(id);
  const invalid = requested && requested.length > MAX_LISTEN_URIS
    ? `resourceSubscriptions names ${requested.length} URIs; at most ${MAX_LISTEN_URIS}`
    : subscriptionId.length > MAX_LISTEN_ID_LENGTH
    ? `a listen's id is ${subscriptionId.length} characters; at most ${MAX_LISTEN_ID_LENGTH}, as every notification on its stream carries it`
    : undefined;
  if (invalid) return refused(200, -32602, `Invalid params: ${invalid}`);
  const served = requested?.includes(REVIEW_URI) ? [REVIEW_URI] : [];
  const ignored = new Set(requested?.filter((uri) => uri !== REVIEW_URI));
  return {
    filter: {
      // Of the other URIs, distinct: how many, and the first, clipped.
      ignoredCount: ignored.size,
      firstIgnored: [...ignored].map((uri) => clip(uri, MAX_URI_LENGTH))[0],
      watches: served.length > 0,
      /** The lists whose changes it asked for. */
      listChanges: CATALOG_KINDS.filter((kind) =>
        notifications[`${kind}ListChanged`] === true
      ),
      embed: listen.data.embedResources === true,
      subscriptionId,
    },
    params: requested
      ? {
        ...listen.data,
        notifications: { ...notifications, resourceSubscriptions: served },
      }
      : listen.data,
  };
}

/** A listen's filter as the lab keeps it: the URI it serves, once. */
type ListenFilter = Extract<
  ReturnType<typeof narrowListenFilter>,
  { filter: unknown }
>["filter"];

/** How the lab ends a stream at `--stream-lifetime`. */
type StreamEnd = LabConfig["streamEnd"];

/** An open listen stream; `push` writes on it (HTTP; stdio routes its own). */
type ListenStream = ListenFilter & {
  push?: (event: ServerEvent) => void;
  /** How the lab ended it at its lifetime, once it has. */
  end?: StreamEnd;
};

/** A close step's fields when the lab ended the stream (contract C1). */
const byLab = (end?: StreamEnd) => end && { by: "lab", end };

/** Calls `cut` once `--stream-lifetime` has passed, if set; returns the stop. */
function atLifetime(config: LabConfig, cut: (end: StreamEnd) => void) {
  const seconds = config.streamLifetimeSeconds;
  if (seconds === null) return () => {};
  const timer = setTimeout(() => cut(config.streamEnd), seconds * 1000);
  return () => clearTimeout(timer);
}

/** A listen's deliberate end as the spec has it: its result, complete. */
const listenResult = (id: RequestId): JSONRPCMessage => ({
  jsonrpc: "2.0",
  id,
  result: { resultType: "complete", _meta: { [SUBSCRIPTION_ID_META_KEY]: id } },
});

function recordListen(
  state: LabState,
  client: LabClient,
  filter: ListenFilter,
) {
  state.record(client, "listen", {
    tag: "subscriptions/listen",
    fields: {
      uris: filter.watches ? REVIEW_URI : "",
      ignored: filter.firstIgnored,
      ignoredCount: filter.ignoredCount > 1 ? filter.ignoredCount : undefined,
      listChanged: filter.listChanges.join(",") || undefined,
      embedResources: filter.embed || undefined,
    },
  }, {
    watches: filter.watches,
    embed: filter.embed,
    catalog: filter.listChanges,
  });
}

/** The open listen streams of 2026-07-28 clients, HTTP and stdio alike. */
class ListenSet {
  #streams = new Map<LabClient, Set<ListenStream>>();

  constructor(
    private readonly state: LabState,
    private readonly config: LabConfig,
  ) {}

  /** Open streams, across clients (for `/healthz`). */
  get size(): number {
    return this.#streams.values().reduce((sum, set) => sum + set.size, 0);
  }

  /** A stream was acknowledged: one that watches the resource subscribes. */
  open(client: LabClient, stream: ListenStream) {
    let streams = this.#streams.get(client);
    if (!streams) this.#streams.set(client, streams = new Set());
    streams.add(stream);
    this.#count(client);
    if (stream.watches) this.state.reached(client, "subscribe");
  }

  /** Counts the client's streams here, and its peak across replicas. */
  #count(client: LabClient) {
    const streams = [...this.#streams.get(client) ?? []];
    const watching = streams.filter((stream) => stream.watches).length;
    client.listens.here = { open: streams.length, watching };
    client.peakListens = Math.max(client.peakListens, openListens(client));
  }

  /** A stream ended; when no other stream watches, the client withdrew. */
  close(client: LabClient, stream: ListenStream) {
    const streams = this.#streams.get(client);
    if (!streams?.delete(stream)) return;
    if (streams.size === 0) this.#streams.delete(client);
    this.#count(client);
    this.state.record(client, "listen-closed", {
      tag: "subscriptions/listen",
      words: "closed",
      fields: byLab(stream.end),
    });
    // A stream on another replica may still watch for the client; one the
    // lab ended is no withdrawal: its updates go on, as on a real server.
    const watching = openListens(client, true) > 0;
    if (stream.watches && !watching && !stream.end) this.state.withdrew(client);
  }

  /** The client's streams whose filter lets the notification through. */
  targets(client: LabClient, notification: ChangeNotification) {
    return [...this.#streams.get(client) ?? []].filter((stream) =>
      notification === "updated"
        ? stream.watches
        : stream.listChanges.includes(notification)
    );
  }

  /** What an update on `stream` carries inline, if anything. */
  inlineOn(client: LabClient, stream: ListenStream) {
    return inlineUpdate(this.config, client.reviewVersion, stream);
  }

  /** Sends to the streams that asked (by default through `push`), or why none. */
  async deliver(
    client: LabClient,
    notification: ChangeNotification,
    send = (targets: ListenStream[]): void | Promise<void> => {
      for (const stream of targets) {
        const { params } = this.inlineOn(client, stream) ?? {};
        stream.push?.(
          notification === "updated"
            ? { kind: "resource_updated", uri: REVIEW_URI, params }
            : { kind: `${notification}_list_changed` },
        );
      }
    },
  ): Promise<Delivery> {
    const targets = this.targets(client, notification);
    if (targets.length === 0) {
      return {
        delivered: false,
        reason: notification === "updated"
          ? `no listen stream watches ${REVIEW_URI}`
          : `no listen stream asked for ${notification} list changes`,
      };
    }
    await send(targets);
    if (notification !== "updated") return { delivered: true };
    const carried = targets.flatMap((stream) =>
      this.inlineOn(client, stream)?.inline ?? []
    );
    return {
      delivered: true,
      inline: carried.find((inline) => inline.asked) ?? carried[0],
    };
  }
}

const protocolVersionSchema = clippedName.catch("2026-07-28");

/** What the lab reads of a 2026-07-28 message before the SDK sees it. */
const modernMessageSchema = z.object({
  method: z.string(),
  params: z.object({
    _meta: z.record(z.string(), z.unknown()).optional().catch(undefined),
  }).passthrough().optional().catch(undefined),
}).passthrough();

/** The stateless era's identity of a client: its `clientInfo` name@version. */
function modernIdentity(meta: Record<string, unknown> | undefined) {
  const info = clientInfoSchema.parse(meta?.[CLIENT_INFO_META_KEY] ?? {});
  const version = meta?.[PROTOCOL_VERSION_META_KEY];
  return {
    id: `${info.name ?? "unknown"}@${info.version ?? "unknown"}`,
    clientInfo: info,
    protocolVersion: protocolVersionSchema.parse(version),
  };
}

// ---------------------------------------------------------------------------
// HTTP: guards, bodies, event streams (both eras)
// ---------------------------------------------------------------------------

/** Bound on a POST body or stdio line: any client's message is a few KiB. */
const MAX_BODY_BYTES = 256 * 1024;

/**
 * DNS-rebinding protection: only loopback names (and the configured ones)
 * may appear in Host and Origin, so a browser page cannot reach the lab
 * through a hostile name. The guard answers with the SDK's own 403.
 */
function foreignHostGuard(config: LabConfig) {
  const allowed = [
    ...localhostAllowedHostnames(),
    ...config.allowedHosts,
    // A lab bound to a specific address answers to that address too.
    ...(["0.0.0.0", "::"].includes(config.host) ? [] : [config.host]),
  ];
  return (request: Request): Response | undefined =>
    config.allowedHosts.includes("*") ? undefined : (
      hostHeaderValidationResponse(request, allowed) ??
        originValidationResponse(request, allowed)
    );
}

/** A bearer token check, when `MCP_TEST_AUTH_TOKEN` is set. */
function missingTokenRefusal(
  config: LabConfig,
  request: Request,
): Refusal | undefined {
  if (!config.authToken) return undefined;
  // The scheme is case-insensitive (RFC 9110); the token is not.
  const [, scheme = "", token = ""] =
    (request.headers.get("authorization") ?? "").match(/^(\S+) +(.*)$/) ?? [];
  // Digests first: equal lengths, so the time tells nothing of the token.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  const matches = timingSafeEqual(digest(token), digest(config.authToken));
  if (scheme.toLowerCase() === "bearer" && matches) return undefined;
  return {
    status: 401,
    code: -32000,
    message:
      "Unauthorized: this lab requires 'Authorization: Bearer <MCP_TEST_AUTH_TOKEN>'",
    headers: {
      "WWW-Authenticate":
        'Bearer realm="mcp-subscription-lab", error="invalid_token"',
    },
  };
}

/** One JSON-RPC message from a POST body or stdio line, or why not. */
function parseMessage(text: string): { message: unknown } | Refused {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return refused(400, -32700, "Parse error: the body is not valid JSON");
  }
  const invalid = Array.isArray(message)
    ? "JSON-RPC batches are not supported; send one message per request"
    : isJSONRPCMessage(message)
    ? undefined
    : 'the body is JSON but not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0" and a method, or a result or error with an id)';
  return invalid
    ? refused(400, -32600, `Invalid Request: ${invalid}`)
    : { message };
}

/**
 * Reads and checks a POST body: JSON, one JSON-RPC message, within the body
 * timeout (408), refused over the bound unread (by its length) or read only
 * up to it (chunked). A body that declares its length is read whole: the
 * SDK's streaming reader would keep a 64 KiB buffer alive as long as the
 * request (for a listen, the stream) lives. Bodies without one take it.
 */
async function readMessage(
  { bodyTimeoutSeconds: timeoutSeconds }: LabConfig,
  request: Request,
): Promise<{ message: unknown } | Refused> {
  if (!isJsonContentType(request.headers.get("content-type"))) {
    return refused(
      415,
      -32000,
      "Unsupported Media Type: Content-Type must be application/json",
    );
  }
  const declared = Number(request.headers.get("content-length") ?? NaN);
  const reading = !Number.isSafeInteger(declared)
    ? readRequestBody(request, MAX_BODY_BYTES).then((read) =>
      read.tooLarge ? undefined : read.text
    )
    : declared > MAX_BODY_BYTES
    ? Promise.resolve(undefined)
    : request.text();
  try {
    const text = await within(reading, timeoutSeconds * 1000);
    if (text === undefined) {
      return refused(
        413,
        -32000,
        `Payload Too Large: the body exceeds ${MAX_BODY_BYTES} bytes`,
      );
    }
    if (text !== "late") return parseMessage(text);
    // Cancelling a read in progress leaks its buffer in Deno 2.9; the read
    // ends by itself when the client leaves.
    reading.catch(() => {});
    return refused(
      408,
      -32000,
      `Request Timeout: the body did not arrive within ${timeoutSeconds} s (MCP_TEST_BODY_TIMEOUT_SECONDS)`,
    );
  } catch (error) {
    // Logged, though the client is not there to read the answer.
    const { message } = error as Error;
    return refused(
      400,
      -32000,
      `Bad Request: the client left before its body ended (${message})`,
    );
  }
}

/** A JSON-RPC 2.0 message's shape; only that, as the SDK checks the rest. */
function isJSONRPCMessage(message: unknown): boolean {
  if (typeof message !== "object" || message === null) return false;
  const fields = message as Record<string, unknown>;
  if (fields.jsonrpc !== "2.0") return false;
  if (typeof fields.method === "string") return true;
  return "id" in fields && ("result" in fields || "error" in fields);
}

/**
 * An event stream passed on as its source writes it, so what its client has
 * not read shows: past `maxUnread` bytes the lab drops them, cancels the
 * source (no more frames), ends the stream and logs `[stream/stalled]`.
 * At `--stream-lifetime` the lab stops the source and ends the stream as
 * `cut.end` then says: graceful, `lastFrame` and the body's clean end;
 * abrupt, the body errored. `onEnd` once at its end (`byClient`: cancelled).
 */
function drainedResponse(
  { config, log, maxUnread }: LabContext & { maxUnread: number },
  client: LabClient,
  response: Response,
  { cut = {}, lastFrame = "", onEnd = () => {} }: {
    cut?: { end?: StreamEnd };
    lastFrame?: string;
    onEnd?: (byClient: boolean) => void;
  } = {},
): Response {
  const source = response.body!.getReader();
  let byClient = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const stopLifetime = atLifetime(config, (end) => {
        cut.end = end;
        source.cancel(`the stream's lifetime is over`).catch(() => {});
      });
      (async () => {
        try {
          for (let read; !(read = await source.read()).done;) {
            controller.enqueue(read.value);
            const unread = maxUnread - controller.desiredSize!;
            if (unread <= maxUnread) continue;
            log.write("warn", {
              tag: "stream/stalled",
              words: "no more frames: the client stopped reading",
              fields: { unread },
            }, client);
            throw new Error(`${unread} bytes were left unread`);
          }
          // Deno drops the connection of a body that errors.
          if (cut.end === "abrupt") throw new Error("dropped at its lifetime");
          if (cut.end) controller.enqueue(new TextEncoder().encode(lastFrame));
          controller.close();
        } catch (error) {
          // Also after the client's cancel, as its stream cannot close.
          controller.error(error);
          await source.cancel(error).catch(() => {});
        }
        stopLifetime();
        onEnd(byClient);
      })().catch((error) => controller.error(error));
    },
    cancel(reason) {
      byClient = true;
      return source.cancel(reason);
    },
  }, new ByteLengthQueuingStrategy({ highWaterMark: maxUnread }));
  return new Response(body, response);
}

/** Whether a body calls the wait tool (only those notice a client leave). */
const isWaitCall = (body: unknown) =>
  isJSONRPCRequest(body) && body.method === "tools/call" &&
  (body.params as { name?: unknown } | undefined)?.name === WAIT_TOOL;

/**
 * Serves a wait tool call, noticing its client leave: until the answer
 * starts, through the request's signal (Deno also aborts it after every
 * answer); after that, through a streamed answer's cancel.
 */
async function serveWaitCall(
  request: Request,
  forwarded: Request,
  serve: () => Promise<Response>,
): Promise<Response> {
  const departure = new AbortController();
  departures.set(forwarded, departure.signal);
  const leave = () => departure.abort();
  request.signal.addEventListener("abort", leave);
  const response = await serve().finally(() =>
    request.signal.removeEventListener("abort", leave)
  );
  if (!response.body || !isEventStream(response)) return response;
  const body = whenStreamEnds(response.body, (byClient) => {
    if (byClient) departure.abort();
  });
  return new Response(body, response);
}

/** `map`'s value for `key`, moved last: the map runs least recently seen first. */
function markSeen<K, V>(map: Map<K, V>, key: K): V | undefined {
  const value = map.get(key);
  if (map.delete(key)) map.set(key, value as V);
  return value;
}

/** What each era's section gives the router. */
interface EraServer {
  /** Serves one MCP request of this era; `body` is its parsed POST body. */
  serve(request: Request, body: unknown, legacy?: boolean): Promise<Response>;
  /** Ends every session and stream of this era. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// The 2025 era: sessions, GET streams, idle TTL, DELETE
// ---------------------------------------------------------------------------

/**
 * A GET stream reset this soon after a notification may have lost it: Deno
 * writes it to the socket later, and a reset in between fails the write.
 */
const RESET_DOUBT_MS = 500;

/** A 2025-era session: its client, transport and server. */
interface LegacySession {
  id: string;
  /** Requests being taken in (until their answer starts). */
  inFlight: number;
  /** When the last update notification was handed to an open GET stream. */
  notifiedAt?: number;
  /** Its id is what logs and reports call the session (`sessionHandle`). */
  client: LabClient;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** Open GET streams: notifications outside a request can only go there. */
  getStreams: number;
  /** Ends the session once idle for `--session-ttl`. */
  idleTimer?: ReturnType<typeof setTimeout>;
}

/**
 * A 2025 session's name in logs and reports: the first 8 hex digits of its
 * id's SHA-256, as the id alone guards it (unless `--log-session-ids`).
 */
async function sessionHandle(config: LabConfig, id: string): Promise<string> {
  if (config.logSessionIds) return id;
  const bytes = new TextEncoder().encode(id);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return new DataView(digest).getUint32(0).toString(16).padStart(8, "0");
}

/** Serves 2025 clients: a server and transport per session. */
class LegacyEra implements EraServer {
  /** Live sessions by id, least recently seen first. */
  #sessions = new Map<string, LegacySession>();

  constructor(private readonly ctx: LabContext & { maxUnread: number }) {}

  /** Whether a session id names a live session (no classifying needed). */
  hasSession(id: string): boolean {
    return this.#sessions.has(id);
  }

  async serve(request: Request, body: unknown): Promise<Response> {
    const { log } = this.ctx;
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) {
      return request.method === "POST" && isInitializeRequest(body)
        ? this.#open(request, body)
        : refuse(log, request, {
          status: 400,
          code: -32000,
          message:
            "Bad Request: Mcp-Session-Id header is required; send initialize first",
        });
    }
    const session = markSeen(this.#sessions, sessionId);
    if (!session) {
      // Another replica's session (`--bus`): the balancer is not sticky.
      const elsewhere = this.ctx.bus &&
        this.ctx.state.live(await sessionHandle(this.ctx.config, sessionId));
      return refuse(log, request, {
        status: 404,
        code: -32001,
        message: elsewhere?.era === "2025"
          ? `Session not found on this replica: ${sessionId} lives on another; a balancer must send each request to the replica of its Mcp-Session-Id (sticky sessions)`
          : `Session not found: ${sessionId} is unknown or has ended; send initialize to start a new session`,
      });
    }
    // In flight until its answer starts (the lab's handlers answer at once).
    session.inFlight++;
    const response = await session.transport
      .handleRequest(request, { parsedBody: body })
      .finally(() => session.inFlight--);
    if (request.method === "GET" && isEventStream(response)) {
      return this.#watchGetStream(session, response);
    }
    this.#touch(session);
    return await logSdkRefusal(log, request, response);
  }

  /** Live sessions (for `/healthz`). */
  get size(): number {
    return this.#sessions.size;
  }

  async close() {
    const open = [...this.#sessions.values()];
    await Promise.all(open.map((session) => this.#end(session, "shutdown")));
    await Promise.all(open.map((session) => session.transport.close()));
  }

  async #open(
    request: Request,
    initialize: { params: { clientInfo: unknown; protocolVersion: string } },
  ): Promise<Response> {
    const { config, log, state } = this.ctx;
    if (this.#sessions.size >= config.maxSessions && !this.#evictIdle()) {
      return refuse(log, request, {
        status: 503,
        code: ProtocolErrorCode.InternalError,
        message:
          `Session limit reached: the lab holds ${config.maxSessions} sessions (MCP_TEST_MAX_SESSIONS), each with an open GET stream or a request in flight, or judged by the CI gate; end one with DELETE`,
      });
    }
    // Made here, so its handle (an async digest) is ready when announced.
    const sessionId = crypto.randomUUID();
    const handle = await sessionHandle(config, sessionId);
    const { clientInfo, protocolVersion } = initialize.params;
    const client = newLabClient({
      id: handle,
      era: "2025",
      transport: "streamable-http",
      clientInfo,
      protocolVersion: clip(String(protocolVersion), MAX_NAME_LENGTH),
    });
    const server = buildLabServer(this.ctx, client, "2025");
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => sessionId,
      onsessioninitialized: () => {
        this.#sessions.set(sessionId, session);
        state.track(client);
        client.protocolVersion = server.getNegotiatedProtocolVersion() ??
          client.protocolVersion;
        state.connected(client, { session: handle });
      },
      onsessionclosed: () => this.#end(session, "delete"),
    });
    const session: LegacySession = {
      id: sessionId,
      inFlight: 0,
      client,
      getStreams: 0,
      transport,
      server,
    };
    client.deliver = (change) => legacyDelivery(session, change, config);
    server.onclose = () => this.#end(session, "closed");
    await server.connect(transport);
    const response = await transport.handleRequest(request, {
      parsedBody: initialize,
    });
    this.#touch(session);
    return response;
  }

  #end(session: LegacySession, reason: SessionEndReason) {
    if (!this.#sessions.delete(session.id)) return;
    clearTimeout(session.idleTimer);
    return this.ctx.state.endClient(session.client, reason, session.client.id);
  }

  /**
   * At the cap, ends the least recently seen idle session, if any: a client
   * that left without DELETE must not lock new ones out. Never one the gate
   * judges: others' traffic must not end the run it waits for.
   */
  #evictIdle(): boolean {
    const idle = this.#sessions.values().find((each) =>
      !this.#busy(each) && !this.ctx.gate.judges(each.client)
    );
    if (idle) this.#drop(idle, "evicted");
    return idle !== undefined;
  }

  /** Ends a session the lab gave up on, closing its transport. */
  #drop(session: LegacySession, reason: SessionEndReason) {
    this.#end(session, reason);
    session.transport.close().catch(logSdkErrors(this.ctx.log));
  }

  /** Whether a session has a GET stream, a request or a wait in progress. */
  #busy(session: LegacySession): boolean {
    return session.getStreams > 0 || session.inFlight > 0 ||
      inUse(session.client);
  }

  /** Restarts the idle clock (none while a GET stream is open). */
  #touch(session: LegacySession) {
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    if (session.getStreams > 0 || !this.#sessions.has(session.id)) return;
    session.idleTimer = setTimeout(() => {
      if (this.#busy(session)) this.#touch(session);
      else this.#drop(session, "idle");
    }, this.ctx.config.sessionTtlSeconds * 1000);
  }

  /** Counts the session's GET stream while it is open, and logs both ends. */
  #watchGetStream(session: LegacySession, response: Response) {
    const { state } = this.ctx;
    session.getStreams++;
    this.#touch(session);
    state.record(session.client, "stream-opened", {
      tag: "stream/get",
      words: "opened",
      fields: { session: session.client.id },
    });
    const cut: { end?: StreamEnd } = {};
    const onEnd = (byClient: boolean) => {
      session.getStreams--;
      this.#touch(session);
      if (!this.#sessions.has(session.id)) return;
      const sinceNotified = Date.now() - (session.notifiedAt ?? -Infinity);
      const reset = byClient && sinceNotified <= RESET_DOUBT_MS;
      if (reset) {
        session.client.progress.deliveryDoubt =
          `the client reset its GET stream ${sinceNotified} ms after the notification was written to it: it may not have arrived`;
      }
      state.record(session.client, "stream-closed", {
        tag: "stream/get",
        words: "closed",
        fields: {
          session: session.client.id,
          ...byLab(cut.end),
          resetAfterNotificationMs: reset ? sinceNotified : undefined,
        },
      });
    };
    return drainedResponse(this.ctx, session.client, response, { cut, onEnd });
  }
}

/** Sends on a 2025 session; without a GET stream the SDK drops it silently. */
async function legacyDelivery(
  session: LegacySession,
  change: ChangeNotification,
  config: LabConfig,
): Promise<Delivery> {
  const delivered = session.getStreams > 0;
  if (delivered && change === "updated") session.notifiedAt = Date.now();
  const { server, client, id } = session;
  const inline = await sendLegacyChange(server, change, config, client, id);
  return delivered
    ? { delivered, inline }
    : { delivered, reason: "no GET stream open" };
}

/** Sends a 2025 change notification, with any `--inline-content` shape. */
async function sendLegacyChange(
  server: Server,
  notification: ChangeNotification,
  config: LabConfig,
  client: LabClient,
  subscriptionId = client.id,
): Promise<InlineContent | undefined> {
  const update = notification === "updated"
    ? inlineUpdate(config, client.reviewVersion, {
      embed: false,
      subscriptionId,
    })
    : undefined;
  await sendThrough(server, notification, update?.params);
  return update?.inline;
}

// ---------------------------------------------------------------------------
// The 2026-07-28 era: stateless requests, client identities, listen streams
// ---------------------------------------------------------------------------

/** What a 2026-07-28 request is about, visible to the SDK callbacks it reaches. */
interface ModernExchange {
  client: LabClient;
  listen?: ListenFilter;
  /** Its listen stream, once the SDK opened it. */
  stream?: ListenStream;
  /** The JSON-RPC error the request was answered with, if any. */
  errorAnswer?: ErrorAnswer;
}

/**
 * Serves 2026-07-28 clients through the SDK's `createMcpHandler`: a server
 * per request, a client per `clientInfo`, and listen streams fed by the
 * lab's own listen events (the SDK's `ServerEventBus`), so each client's
 * updates reach its streams only.
 */
class ModernEra implements EraServer {
  #listens: ListenSet;
  /** Clients by identity, least recently seen first. */
  #clients = new Map<string, LabClient>();
  #exchanges = new AsyncLocalStorage<ModernExchange>();
  #handler: ReturnType<typeof createMcpHandler>;

  constructor(private readonly ctx: LabContext & { maxUnread: number }) {
    this.#listens = new ListenSet(ctx.state, ctx.config);
    this.#handler = createMcpHandler(() => this.#buildServer(), {
      legacy: "reject",
      bus: this.#listenEvents(),
      maxSubscriptions: ctx.config.maxSessions,
      maxRequestBodySize: MAX_BODY_BYTES,
      // Refusals are logged from the answers; this is the rest.
      onerror: logSdkErrors(ctx.log),
    });
  }

  /** `legacy`: a 2025 request (to `--era 2026-07-28`), for the SDK to refuse. */
  async serve(request: Request, body: unknown, legacy = false) {
    const { log, state } = this.ctx;
    const message = modernMessageSchema.safeParse(body);
    if (legacy || !message.success) {
      const response = await this.#handler.fetch(request, { parsedBody: body });
      return await logSdkRefusal(log, request, response);
    }
    const { method, params } = message.data;
    const client = this.#clientFor(params?._meta);
    if (!client) {
      return refuse(log, request, {
        status: 503,
        code: ProtocolErrorCode.InternalError,
        message:
          `Client limit reached: the lab holds ${this.ctx.config.maxSessions} client identities (MCP_TEST_MAX_SESSIONS), and the idle ones are judged by the CI gate`,
      });
    }
    if (method === "server/discover") this.#discovered(client);
    const id = (message.data as { id?: RequestId }).id;
    const listen = method === "subscriptions/listen"
      ? this.#listenFilter(client, params, id)
      : undefined;
    if (listen && "refusal" in listen) {
      logRefusal(log, listen.refusal, request, client);
      return Response.json(errorAnswer(id ?? null, listen.refusal));
    }
    // The exchange outlives the request with its stream: the filter alone.
    const exchange: ModernExchange = { client, listen: listen?.filter };
    const parsedBody = listen
      ? { ...message.data, params: listen.params }
      : body;
    const response = await this.#exchanges.run(
      exchange,
      () => this.#handler.fetch(request, { parsedBody }),
    );
    if (listen && isEventStream(response)) {
      recordListen(state, client, listen.filter);
      const result = JSON.stringify(listenResult(id!));
      const lastFrame = `event: message\ndata: ${result}\n\n`;
      const cut = exchange.stream;
      return drainedResponse(this.ctx, client, response, { cut, lastFrame });
    }
    const answered = exchange.errorAnswer;
    if (!answered) await logSdkRefusal(log, request, response);
    else logRefusal(log, { status: response.status, ...answered }, request);
    return response;
  }

  /**
   * A listen's filter, narrowed; or the SDK's refusal at `--max-watches` open
   * under this identity (across replicas), or at its share of the streams (a
   * tenth of `--max-sessions`, at least one), saying so.
   */
  #listenFilter(client: LabClient, params: unknown, id?: RequestId) {
    const filter = narrowListenFilter(params, id);
    const share = Math.max(1, Math.ceil(this.ctx.config.maxSessions / 10));
    const cap = this.ctx.config.maxWatches ?? Infinity;
    const full = openListens(client) >= Math.min(cap, share);
    if (!filter || "refusal" in filter || !full) return filter;
    const why = cap <= share
      ? ""
      : ` for this client: ${share} listen streams are open under its clientInfo`;
    return refused(200, WATCH_LIMIT.code, WATCH_LIMIT.message + why);
  }

  /** Open listen streams (for `/healthz`). */
  get listenStreams(): number {
    return this.#listens.size;
  }

  close(): Promise<void> {
    return this.#handler.close();
  }

  /**
   * A `server/discover` starts the run afresh, unless a listen stream is open:
   * it may be another copy of the same client's, whose update must arrive.
   */
  #discovered(client: LabClient) {
    const { state } = this.ctx;
    const open = openListens(client);
    if (open === 0) state.restartRun(client);
    state.connected(client, { openListens: open || undefined });
  }

  /** The server for one request, speaking for the request's client. */
  #buildServer(): Server {
    const exchange = this.#exchanges.getStore();
    // Without an exchange, a client no request names: "unknown@unknown".
    const client = exchange?.client ?? newLabClient({
      ...modernIdentity(undefined),
      era: "2026-07-28",
      transport: "streamable-http",
    });
    return buildLabServer(this.ctx, client, "2026-07-28", (error) => {
      if (exchange) exchange.errorAnswer = error;
    });
  }

  /** The listen router's events: each reaches its own client's streams. */
  #listenEvents(): ServerEventBus {
    return {
      publish: (event) => {
        const client = this.#exchanges.getStore()?.client;
        if (!client) return;
        const notification = event.kind === "resource_updated"
          ? "updated"
          : event.kind.replace("_list_changed", "") as CatalogKind;
        for (const stream of this.#listens.targets(client, notification)) {
          stream.push?.(event);
        }
      },
      subscribe: (push) => {
        const exchange = this.#exchanges.getStore();
        if (!exchange?.listen) return () => {};
        const { client, listen } = exchange;
        const stream = exchange.stream = { ...listen, push };
        this.#listens.open(client, stream);
        return () => this.#listens.close(client, stream);
      },
    };
  }

  /** The client a stateless request speaks for, keyed by clientInfo; or none. */
  #clientFor(meta: Record<string, unknown> | undefined): LabClient | undefined {
    const identity = modernIdentity(meta);
    const known = markSeen(this.#clients, identity.id);
    if (known && !known.endedReason) return known;
    if (!this.#roomForClient()) return undefined;
    // Another replica may have seen it first (`--bus`): the same client.
    const client = this.ctx.state.live(identity.id) ??
      this.ctx.state.track(newLabClient({
        ...identity,
        era: "2026-07-28",
        transport: "streamable-http",
      }));
    client.deliver = (change) => this.#listens.deliver(client, change);
    this.#clients.set(client.id, client);
    return client;
  }

  /**
   * At `--max-sessions`, ends the least recently seen idle client the gate
   * does not judge. No room when the idle are all judged; clients in use may
   * go past the cap, as their streams and calls bound them.
   */
  #roomForClient(): boolean {
    if (this.#clients.size < this.ctx.config.maxSessions) return true;
    const idle = [...this.#clients.values()].filter((each) => !inUse(each));
    const evicted = idle.find((each) => !this.ctx.gate.judges(each));
    if (evicted) {
      this.#clients.delete(evicted.id);
      this.ctx.state.endClient(evicted, "evicted");
    }
    return evicted !== undefined || idle.length === 0;
  }
}

// ---------------------------------------------------------------------------
// Serving HTTP: era dispatch, routes, listening, the banner, shutdown
// ---------------------------------------------------------------------------

/** A running lab: a fetch handler plus what shutdown and tests need. */
export type Lab = ReturnType<typeof createLab>;
/** Counts `/healthz` reports, so leaks show from outside. */
export type LabCounts = ReturnType<Lab["counts"]>;

/** The MCP endpoint's methods (GET and DELETE for 2025), and no CORS. */
const MCP_METHODS = ["GET", "POST", "DELETE"];

/**
 * Answers a request the lab failed on with 500 and -32603 (echoing its id),
 * after one `[server/error]` line; the lab serves everyone else on.
 */
function internalError(log: Logger, error: unknown, body?: unknown): Response {
  const message = error instanceof Error ? error.message : String(error);
  log.writeOrStderr("error", { tag: "server/error", fields: { message } });
  const id = (body as { id?: unknown } | undefined)?.id;
  const known = typeof id === "string" || typeof id === "number";
  return Response.json(
    errorAnswer(known ? id : null, { status: 500, message: "Internal error" }),
    { status: 500 },
  );
}

/** Serves a request on an MCP path: checks its body, picks its era. */
async function serveMcp(
  { config, log }: LabContext,
  eras: { legacy: LegacyEra; modern: ModernEra },
  request: Request,
): Promise<Response> {
  // The stateless era has no GET stream and no session to delete.
  const modern = request.headers.get("mcp-protocol-version") === "2026-07-28" &&
    config.era !== "2025" && MCP_METHODS.includes(request.method);
  const allowed = modern ? ["POST"] : MCP_METHODS;
  if (!allowed.includes(request.method)) {
    const Allow = allowed.join(", ");
    return refuse(log, request, {
      status: 405,
      code: -32000,
      message: modern
        ? "Method Not Allowed: protocol 2026-07-28 uses POST only"
        : `Method Not Allowed: the MCP endpoint takes ${Allow}`,
      headers: { Allow },
    });
  }
  let body: unknown;
  if (request.method === "POST") {
    const read = await readMessage(config, request);
    if ("refusal" in read) return refuse(log, request, read.refusal);
    body = read.message;
  }
  // Deno aborts request.signal after every response, which the SDK would
  // take for a cancel: it gets a copy (a stream's own cancel still works).
  const forwarded = new Request(request.url, {
    method: request.method,
    headers: request.headers,
  });
  try {
    // A live 2025 session's requests need no classifying; a one-era lab
    // (`--era`) serves every request in its era, which refuses the other's.
    const sessionId = request.headers.get("mcp-session-id");
    const legacy = config.era === "2025" ||
      sessionId !== null && eras.legacy.hasSession(sessionId) ||
      await isLegacyRequest(forwarded, body);
    const era = legacy && config.era !== "2026-07-28"
      ? eras.legacy
      : eras.modern;
    const serve = () => era.serve(forwarded, body, legacy);
    return await (isWaitCall(body)
      ? serveWaitCall(request, forwarded, serve)
      : serve());
  } catch (error) {
    return internalError(log, error, body);
  }
}

/**
 * Creates the lab over HTTP: its state, both eras and the routes; an event
 * stream whose client leaves `maxUnread` bytes unread (256 KiB) ends.
 */
export function createLab(
  config: LabConfig,
  sink: LineSink = console.log,
  maxUnread = 256 * 1024,
  bus?: ReplicaLink,
) {
  const ctx = {
    ...createLabContext(config, sink, "streamable-http", bus),
    maxUnread,
  };
  const { log, state, caveats } = ctx;
  bus?.attach(state, log);
  const legacy = new LegacyEra(ctx);
  const modern = new ModernEra(ctx);
  const mcpPaths = new Set(["/mcp", config.path]);
  const foreignHost = foreignHostGuard(config);

  const counts = () => ({
    legacySessions: legacy.size,
    listenStreams: modern.listenStreams,
    ...state.counts(),
    ...bus && { bus: bus.status() },
  });

  async function route(request: Request) {
    // Deno builds the URL from the Host header: "::1" or port 99999 break it.
    const url = URL.parse(request.url);
    if (!url) {
      return refuse(log, request, {
        status: 400,
        code: -32000,
        message: "Bad Request: the Host header is not a valid host[:port]",
      });
    }
    const { pathname } = url;
    const foreign = foreignHost(request);
    if (foreign) return await logSdkRefusal(log, request, foreign);
    if (pathname === "/healthz") {
      const ready = bus?.status().ready !== false;
      return Response.json({
        status: ready ? "ok" : "catching up",
        lab: LAB_VERSION,
        sdk: SDK_VERSION,
        deno: Deno.version.deno,
        ...counts(),
      }, { status: ready ? 200 : 503 });
    }
    const noToken = missingTokenRefusal(config, request);
    // What the other replicas recorded so far is part of every answer.
    await bus?.catchUp();
    const isReport = pathname === "/report" || pathname === "/report.md";
    if (!isReport && !mcpPaths.has(pathname)) {
      return refuse(log, request, {
        status: 404,
        message: `Not Found: the MCP endpoint is ${
          [...mcpPaths].join(" and ")
        }`,
      });
    }
    if (noToken) return refuse(log, request, noToken);
    if (!isReport) return await serveMcp(ctx, { legacy, modern }, request);
    if (pathname === "/report") return Response.json(ctx.report());
    return reportMarkdownResponse(
      state.reportedClients(),
      config,
      url.searchParams.get("client"),
      ctx.caveats(),
    );
  }

  async function fetch(request: Request): Promise<Response> {
    const response = await route(request).catch((error) =>
      internalError(log, error)
    );
    if (log.enabled("debug")) {
      log.write("debug", {
        tag: "http",
        words: `${request.method} ${pathOf(request)}`,
        fields: { status: response.status },
      });
    }
    return response;
  }

  /** Ends every session and stream, printing each client's verdict. */
  async function close() {
    ctx.gate.stop();
    await legacy.close();
    await modern.close();
    await bus?.close();
    for (const client of state.stopAll()) printVerdict(log, client, config);
    ctx.reportFile?.schedule();
    await ctx.reportFile?.flush();
  }

  return {
    fetch,
    counts,
    report: ctx.report,
    close,
    /** The gate's verdict lines on `sink`, and the exit status. */
    gateStatus: (sink: LineSink) => ctx.gate.status(state, sink, caveats()),
    /** Settles when the lab should shut down by itself. */
    due: ctx.gate.due,
  };
}

/**
 * The signals that shut the lab down: on Windows Ctrl+Break is SIGBREAK, and
 * SIGTERM may throw (each is asked for on its own).
 */
export const shutdownSignals = (os: typeof Deno.build.os): Deno.Signal[] =>
  os === "windows" ? ["SIGINT", "SIGBREAK", "SIGTERM"] : ["SIGINT", "SIGTERM"];

/** One of the lab's own lines: `text`, or JSON `{"event":"lab",...fields}`. */
function labLine(
  { logFormat }: LabConfig,
  text: string,
  fields: Record<string, unknown>,
  sink: LineSink = console.log,
) {
  sink(logFormat === "json" ? jsonText({ event: "lab", ...fields }) : text);
}

/**
 * The startup banner: where the lab listens (the loopback URL when bound to
 * every interface, which a user can open), its versions and settings.
 */
function printBanner(config: LabConfig, { hostname, port }: Deno.NetAddr) {
  const every = hostname === "0.0.0.0" || hostname === "::";
  const shown = every ? (hostname === "::" ? "::1" : "127.0.0.1") : hostname;
  const host = shown.includes(":") ? `[${shown}]` : shown;
  const bound = every ? ` (bound to ${hostname}: every interface)` : "";
  for (const path of new Set(["/mcp", config.path])) {
    const url = `http://${host}:${port}${path}`;
    labLine(config, `listening on ${url}${bound}`, {
      event: "listening",
      url,
      bound: every ? hostname : undefined,
    });
  }
  labLine(
    config,
    `[lab] version=${LAB_VERSION} sdk=${SDK_VERSION} deno=${Deno.version.deno} resource=${REVIEW_URI}`,
    VERSIONS,
  );
  const report = `http://${host}:${port}/report.md`;
  labLine(config, `[lab] report at ${report} (JSON: /report)`, {
    report,
    json: `http://${host}:${port}/report`,
  });
  const settings = {
    ...config,
    authToken: config.authToken ? "(set)" : "",
    bus: withoutPassword(config.bus),
  };
  labLine(config, `[lab] config ${JSON.stringify(settings)}`, {
    config: settings,
  });
}

/** The lab's versions and resource, as the banners' JSON lines name them. */
const VERSIONS = {
  version: LAB_VERSION,
  sdk: SDK_VERSION,
  deno: Deno.version.deno,
  resource: REVIEW_URI,
};

/** How often a stopped accept loop tries to listen again. */
const RELISTEN_MS = 250;

/**
 * Listens, and keeps listening: `Deno.serve`'s accept loop stops for good
 * when an accept fails (out of file descriptors), so the lab logs one line
 * and listens again on the same port. Throws if the first listen fails.
 */
function listenAndKeepListening(config: LabConfig, lab: Lab) {
  const log = createLogger(config, console.log);
  let server: Deno.HttpServer;
  let port = config.port;
  let down = false;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let stopping = false;
  const stopped = (error: unknown) => {
    if (stopping) return;
    if (!down) {
      down = true;
      log.write("error", {
        tag: "server/error",
        words: "not accepting connections; listening again when possible",
        fields: { message: (error as Error).message },
      });
    }
    retry = setTimeout(listen, RELISTEN_MS);
  };
  const listen = (first = false) => {
    try {
      server = Deno.serve({
        hostname: config.host,
        port,
        onListen(address) {
          port = address.port;
          if (first) printBanner(config, address);
          if (down) {
            log.write("warn", { tag: "server/listening", words: "again" });
          }
          down = false;
        },
        // What escapes the lab's catch is one line too, not a stack trace.
        onError: (error) => internalError(log, error),
      }, lab.fetch);
    } catch (error) {
      if (first) throw error;
      return stopped(error);
    }
    server.finished.catch(stopped);
  };
  listen(true);
  return {
    async shutdown() {
      stopping = true;
      clearTimeout(retry);
      if (!down) await server.shutdown();
    },
  };
}

/**
 * `ending` settles with the first shutdown signal this platform allows, or
 * `due`: why, in words and as the JSON line's fields.
 */
function shutdownSignalled(
  config: LabConfig,
  sink: LineSink,
  due: Promise<string>,
) {
  const signalled = Promise.withResolvers<Deno.Signal>();
  const removals: (() => void)[] = [];
  for (const signal of shutdownSignals(Deno.build.os)) {
    const listener = () => signalled.resolve(signal);
    try {
      Deno.addSignalListener(signal, listener);
      removals.push(() => Deno.removeSignalListener(signal, listener));
    } catch (error) {
      const message = (error as Error).message;
      labLine(config, `[lab] not listening to ${signal}: ${message}`, {
        signal,
        listening: false,
        message,
      }, sink);
    }
  }
  return {
    ending: Promise.race([
      signalled.promise.then((signal) => ({ why: signal, fields: { signal } })),
      due.then((reason) => ({ why: reason, fields: { reason } })),
    ]),
    remove: () => removals.forEach((remove) => remove()),
  };
}

/** Serves the lab over HTTP until a shutdown signal; resolves with the exit status. */
async function serveHttp(config: LabConfig, bus?: ReplicaLink) {
  const lab = createLab(config, console.log, undefined, bus);
  let listener: ReturnType<typeof listenAndKeepListening>;
  try {
    listener = listenAndKeepListening(config, lab);
  } catch (error) {
    const message = (error as Error).message;
    labLine(
      config,
      `[lab] cannot listen on ${config.host}:${config.port}: ${message}`,
      { error: "cannot listen", host: config.host, port: config.port, message },
      (line) => console.error(line),
    );
    await bus?.close();
    return 1;
  }
  const signalled = shutdownSignalled(config, console.log, lab.due);
  const { why, fields } = await signalled.ending;
  labLine(config, `[lab] ${why}: closing sessions and streams`, {
    ...fields,
    closing: true,
  });
  // Never hang: a stuck connection must not keep the lab alive.
  const deadline = setTimeout(() => Deno.exit(1), 2000);
  await lab.close();
  await listener.shutdown();
  clearTimeout(deadline);
  signalled.remove();
  return lab.gateStatus(console.log);
}

// ---------------------------------------------------------------------------
// Serving stdio: one client over stdin/stdout
// ---------------------------------------------------------------------------

/** Requests or replies in waiting at which the lab stops reading stdin. */
const STDIO_BACKLOG = 256;

/**
 * The lab's stdio wire: one JSON-RPC message per line. A bad line (a line
 * over `MAX_BODY_BYTES` is never held) gets an error with id null, logged
 * through `refused`. Input waits at `STDIO_BACKLOG`, so a client that never
 * reads cannot grow the lab; a closed stdout is `outputClosed`, then EOF.
 */
class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #encoder = new TextEncoder();
  #closed = false;
  /** Requests read and not answered yet, and replies not written yet. */
  #backlog = 0;
  /** Listens read and not ended: they count apart from the backlog. */
  #listens = new Set<RequestId>();
  #room?: () => void;
  #outputGone = false;

  constructor(
    private readonly input: ReadableStream<Uint8Array>,
    output: WritableStream<Uint8Array>,
    private readonly refused: (refusal: Refusal) => void,
    private readonly outputClosed: (message: string) => void = () => {},
  ) {
    this.#writer = output.getWriter();
  }

  start(): Promise<void> {
    this.#read();
    return Promise.resolve();
  }

  async #read() {
    try {
      for await (const read of boundedLines(this.input, MAX_BODY_BYTES)) {
        if (this.#closed) break;
        const parsed = "line" in read ? parseMessage(read.line) : refused(
          413,
          -32700,
          `Parse error: the line is ${read.tooLong} bytes, over the ${MAX_BODY_BYTES}-byte limit`,
        );
        if ("message" in parsed) {
          const message = parsed.message as JSONRPCMessage;
          // A listen is answered when it ends: an open stream, not a wait.
          if (isJSONRPCRequest(message)) {
            if (message.method === "subscriptions/listen") {
              this.#listens.add(message.id);
            } else this.#backlog++;
          }
          this.onmessage?.(message);
        } else {
          this.refused(parsed.refusal);
          this.#write(errorAnswer(null, parsed.refusal));
        }
        await this.#until(() => this.#backlog < STDIO_BACKLOG || this.#closed);
      }
    } catch (error) {
      if (!this.#closed) this.onerror?.(error as Error);
    }
    await this.close();
  }

  async #write(message: unknown): Promise<void> {
    if (this.#outputGone) return;
    const line = this.#encoder.encode(`${JSON.stringify(message)}\n`);
    this.#backlog++;
    try {
      await this.#writer.write(line);
    } catch (error) {
      if (this.#outputGone) return;
      this.#outputGone = true;
      this.outputClosed((error as Error).message);
      this.close();
    } finally {
      this.#backlog--;
      this.#room?.();
    }
  }

  /** Settles once `done()`, asked again as each reply goes out. */
  async #until(done: () => boolean) {
    while (!done()) await new Promise<void>((resolve) => this.#room = resolve);
  }

  send(message: JSONRPCMessage): Promise<void> {
    // A reply settles the request it answers (a listen's, its stream).
    if (
      "id" in message && ("result" in message || "error" in message) &&
      !this.#listens.delete(message.id as RequestId)
    ) {
      this.#backlog = Math.max(0, this.#backlog - 1);
    }
    return this.#write(message);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#room?.();
    // Requests read are answered, replies written, before the SDK hears of
    // the end (it drops answers then): a moment, as the client may not read.
    const answered = () => this.#backlog === 0 || this.#outputGone;
    await within(this.#until(answered), 1000);
    this.#outputGone = true;
    this.#writer.releaseLock();
    this.onclose?.();
  }
}

/** The `_meta` object of a message's params, if it has one. */
const metaOf = (message: JSONRPCMessage) =>
  modernMessageSchema.safeParse(message).data?.params?._meta;

/**
 * Serves one client over stdin/stdout, either era, logging to `sink`; resolves
 * with the exit status once the client has gone and the report is written.
 */
async function serveLabOverStdio(
  config: LabConfig,
  sink: LineSink,
): Promise<number> {
  const context = createLabContext(config, sink, "stdio");
  const transport = new LineTransport(
    Deno.stdin.readable,
    Deno.stdout.writable,
    (refusal) => logRefusal(context.log, refusal),
    (message) =>
      context.log.write("warn", {
        tag: "stdio/closed",
        words: "the client closed its end of stdout: no more replies",
        fields: { message },
      }),
  );
  const served = new StdioLab(context, transport).serve();
  // A signal ends the client as its EOF would, report file written.
  const signalled = shutdownSignalled(config, sink, context.gate.due);
  const ending = await Promise.race([
    served.then(() => null),
    signalled.ending,
  ]);
  if (ending !== null) {
    labLine(config, `[lab] ${ending.why}: closing stdio`, {
      ...ending.fields,
      closing: true,
    }, sink);
    await transport.close();
    await served;
  }
  signalled.remove();
  context.gate.stop();
  // The client's verdict has been printed; its report must reach the file.
  await context.reportFile?.flush();
  return context.gate.status(context.state, sink, context.caveats());
}

/**
 * The one client of a stdio connection, as a transport around its wire: the
 * SDK's stdio entry serves listens itself, so the lab watches messages here.
 */
class StdioLab implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #client: LabClient;
  #server?: Server;
  #listens: ListenSet;
  /** Listens asked for, by request id; `stream` once acknowledged. */
  #asked = new Map<RequestId, ListenFilter & { stream?: ListenStream }>();
  #gone = Promise.withResolvers<void>();

  constructor(
    private readonly ctx: LabContext,
    private readonly wire: Transport,
  ) {
    this.#listens = new ListenSet(ctx.state, ctx.config);
    this.#client = ctx.state.track(newLabClient({
      id: "stdio",
      era: "2025",
      transport: "stdio",
      protocolVersion: "unknown",
    }));
    this.#client.deliver = (notification) => this.#deliver(notification);
    wire.onmessage = (message, extra) => {
      const passed = this.#inbound(message);
      if (passed) this.onmessage?.(passed, extra);
    };
    wire.onerror = (error) => this.onerror?.(error);
    wire.onclose = async () => {
      await ctx.state.endClient(this.#client, "closed");
      this.#gone.resolve();
      this.onclose?.();
    };
  }

  /** Serves the client; resolves once it has gone; the SDK caps listens. */
  serve(): Promise<void> {
    const { era, maxSessions, maxWatches } = this.ctx.config;
    // A 2025-only lab is the SDK's 2025 server alone, as such servers are.
    if (era === "2025") this.#buildServer("legacy").connect(this);
    else {
      serveStdio((context) => this.#buildServer(context.era), {
        transport: this,
        legacy: era === "2026-07-28" ? "reject" : "serve",
        maxSubscriptions: Math.min(maxSessions, maxWatches ?? Infinity),
        onerror: logSdkErrors(this.ctx.log),
      });
    }
    return this.#gone.promise;
  }

  start(): Promise<void> {
    return this.wire.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions) {
    return this.wire.send(this.#outbound(message), options);
  }

  close(): Promise<void> {
    return this.wire.close();
  }

  #buildServer(sdkEra: "modern" | "legacy"): Server {
    const client = this.#client;
    const era: Era = sdkEra === "modern" ? "2026-07-28" : "2025";
    client.era = era;
    const server = buildLabServer(this.ctx, client, era);
    if (era === "2025") {
      server.oninitialized = () => {
        nameClient(client, server.getClientVersion());
        client.protocolVersion = server.getNegotiatedProtocolVersion() ??
          client.protocolVersion;
        this.ctx.state.connected(client);
      };
    }
    this.#server = server;
    return server;
  }

  async #deliver(notification: ChangeNotification): Promise<Delivery> {
    const server = this.#server;
    if (!server) return { delivered: false, reason: "no server yet" };
    const { config } = this.ctx;
    const client = this.#client;
    // The SDK's entry routes these to listens; `#outbound` adds inline text.
    if (client.era === "2026-07-28") {
      return await this.#listens.deliver(
        client,
        notification,
        () => sendThrough(server, notification),
      );
    }
    const inline = await sendLegacyChange(server, notification, config, client);
    return { delivered: true, inline };
  }

  /** Names the client, sees discover and listens, narrows listen filters. */
  #inbound(message: JSONRPCMessage): JSONRPCMessage | null {
    if (this.ctx.config.era === "2025") return message;
    const client = this.#client;
    const meta = metaOf(message);
    if (meta?.[CLIENT_INFO_META_KEY]) {
      const identity = modernIdentity(meta);
      nameClient(client, identity.clientInfo);
      client.protocolVersion = identity.protocolVersion;
    }
    const request = isJSONRPCRequest(message) ? message : undefined;
    if (request?.method === "server/discover") {
      client.era = "2026-07-28";
      this.ctx.state.connected(client);
    }
    if (request?.method === "subscriptions/listen") {
      const listen = narrowListenFilter(request.params, request.id);
      if (listen && "refusal" in listen) {
        // Answered here: the SDK never sees a filter past the bound.
        logRefusal(this.ctx.log, listen.refusal, undefined, client);
        this.wire.send(errorAnswer(request.id, listen.refusal));
        return null;
      }
      if (listen) {
        this.#asked.set(request.id, listen.filter);
        return { ...request, params: listen.params };
      }
    }
    const notification = isJSONRPCNotification(message) ? message : undefined;
    if (notification?.method === "notifications/cancelled") {
      const id = (notification.params as { requestId?: RequestId }).requestId;
      if (id !== undefined) this.#endListen(id);
    }
    return message;
  }

  /** A listen opens when acknowledged, ends with its response; adds inline. */
  #outbound(message: JSONRPCMessage): JSONRPCMessage {
    const refused = isJSONRPCErrorResponse(message) ? message.error : null;
    // -32022 (unsupported version): the SDK's entry refused a 2025 request.
    if (refused?.code === -32022 && this.ctx.config.era === "2026-07-28") {
      logRefusal(this.ctx.log, { status: 200, ...refused });
    }
    const id = metaOf(message)?.[SUBSCRIPTION_ID_META_KEY] as RequestId;
    const notification = isJSONRPCNotification(message) ? message : undefined;
    if (notification?.method === "notifications/resources/updated") {
      const stream = this.#asked.get(id)?.stream;
      const inline = stream && this.#listens.inlineOn(this.#client, stream);
      const params = { ...notification.params, ...inline?.params };
      return inline ? { ...notification, params } : message;
    }
    if (notification?.method === "notifications/subscriptions/acknowledged") {
      const listen = this.#asked.get(id);
      if (listen && !listen.stream) {
        recordListen(this.ctx.state, this.#client, listen);
        const stream: ListenStream = listen.stream = { ...listen };
        this.#listens.open(this.#client, stream);
        // At its lifetime, the spec's deliberate close: the SDK's entry forgets
        // a listen only on a `notifications/cancelled`, handed to it here so
        // nothing more is routed to it; then the listen's result.
        atLifetime(this.ctx.config, () => {
          if (this.#asked.get(id)?.stream !== stream) return;
          stream.end = "graceful";
          const method = "notifications/cancelled";
          this.onmessage?.({
            jsonrpc: "2.0",
            method,
            params: { requestId: id },
          });
          this.send(listenResult(id));
        });
      }
    } else if ("id" in message && this.#asked.has(message.id as RequestId)) {
      // The listen's own response (an error, or the graceful end).
      if (isJSONRPCErrorResponse(message)) {
        const refusal = { status: 200, ...message.error };
        logRefusal(this.ctx.log, refusal, undefined, this.#client);
      }
      this.#endListen(message.id as RequestId);
    }
    return message;
  }

  #endListen(id: RequestId) {
    const stream = this.#asked.get(id)?.stream;
    this.#asked.delete(id);
    if (stream) this.#listens.close(this.#client, stream);
  }
}

// ---------------------------------------------------------------------------
// Entry: command line
// ---------------------------------------------------------------------------

/**
 * `probe.ts` or `bus.ts` from beside this file, only when `use` asks: a
 * computed import, which Deno never fetches otherwise (and -P lets it read).
 */
function besideMain<Module>(file: string, use: string): Promise<Module> {
  return import(new URL(`./${file}`, import.meta.url).href).catch((error) => {
    const message = lineWords(String(error?.message ?? error)).slice(0, 300);
    throw new ConfigError(`${use} needs ${file} beside main.ts: ${message}`);
  });
}

/** Runs the lab as the command line asks; resolves with the exit status. */
export async function main(
  args: string[],
  env: Record<string, string | undefined> = readEnvironment(SETTING_VARIABLES),
): Promise<number> {
  let commandLine: ReturnType<typeof parseCommandLine>;
  let config: LabConfig;
  let bus: ReplicaLink | undefined;
  try {
    if (args[0] === "probe") {
      type ProbeModule = typeof import("./probe.ts");
      const probe = await besideMain<ProbeModule>("probe.ts", "main.ts probe");
      return await probe.probeMain(args.slice(1));
    }
    commandLine = parseCommandLine(args);
    if (commandLine.help || commandLine.version) {
      console.log(
        commandLine.help
          ? helpText()
          : `mcp-subscription-lab ${LAB_VERSION} (MCP SDK ${SDK_VERSION}, Deno ${Deno.version.deno})`,
      );
      return 0;
    }
    config = loadConfig(env, commandLine.flags);
    if (config.bus && commandLine.stdio) {
      throw new ConfigError(
        "--bus (MCP_TEST_BUS) shares clients between replicas over HTTP; --stdio serves one client",
      );
    }
    const { streamLifetimeSeconds, streamEnd } = config;
    if (commandLine.stdio && streamLifetimeSeconds && streamEnd === "abrupt") {
      throw new ConfigError(
        "--stream-end abrupt (MCP_TEST_STREAM_END) drops a stream's connection; over --stdio the only connection is the process's pipes: use graceful",
      );
    }
    type BusModule = typeof import("./bus.ts");
    const replicas = config.bus &&
      await besideMain<BusModule>("bus.ts", "--bus");
    bus = replicas ? await replicas.ReplicaBus.connect(config.bus) : undefined;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`config error: ${error.message}`);
    return 2;
  }
  if (!commandLine.stdio) return await serveHttp(config, bus);
  // stdout carries the protocol, so every log line goes to stderr.
  const stderrLine = (line: string) => console.error(line);
  labLine(
    config,
    `[lab] stdio version=${LAB_VERSION} sdk=${SDK_VERSION} deno=${Deno.version.deno} resource=${REVIEW_URI}`,
    { transport: "stdio", ...VERSIONS },
    stderrLine,
  );
  return await serveLabOverStdio(config, stderrLine);
}

// No top-level await: probe.ts imports this module back and would wait.
if (import.meta.main) main(Deno.args).then(Deno.exit);
