/**
 * MCP resource subscription lab.
 *
 * Serves one MCP resource, `test://review/status`, changes it a few seconds
 * after a client subscribes, and logs every step as a bracketed evidence line,
 * so anyone can see whether an MCP client notices that a resource changed and
 * reads it again.
 *
 * Both protocol eras share one endpoint: 2025 clients (`initialize`, sessions,
 * `resources/subscribe`, notifications on the GET stream) and 2026-07-28
 * clients (`server/discover`, stateless requests, `subscriptions/listen`).
 *
 * Run it from a checkout or straight from its URL:
 *
 * ```sh
 * deno run -A main.ts
 * deno run -A https://raw.githubusercontent.com/<owner>/<repo>/main/main.ts
 * # -> listening on http://127.0.0.1:8089/mcp
 * ```
 *
 * Configuration comes from `MCP_TEST_*` environment variables; `--help`
 * prints them with their defaults.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";
import { parseArgs } from "node:util";
import { z } from "npm:zod@4.6.7";
import {
  CLIENT_INFO_META_KEY,
  createMcpHandler,
  hostHeaderValidationResponse,
  isInitializeRequest,
  isJsonContentType,
  isJSONRPCErrorResponse,
  isLegacyRequest,
  type JSONRPCMessage,
  localhostAllowedHostnames,
  originValidationResponse,
  parseJSONRPCMessage,
  PROTOCOL_VERSION_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  readRequestBody,
  type RequestId,
  ResourceNotFoundError,
  Server,
  type ServerEvent,
  type ServerEventBus,
  WebStandardStreamableHTTPServerTransport,
} from "npm:@modelcontextprotocol/server@2.4.0";

/** The lab's own version, reported by `/healthz` and the banner. */
export const LAB_VERSION = "0.1.0";
/** The MCP server SDK version imported above (kept equal by a test). */
export const SDK_VERSION = "2.4.0";

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

const TRUE_WORDS = ["true", "1", "yes", "on"];
const FALSE_WORDS = ["false", "0", "no", "off"];

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
type LogLevel = (typeof LOG_LEVELS)[number];

/** A status word: one short line of visible text. */
const statusWord = z.string().regex(/^[^\r\n]{1,80}$/);

/**
 * Every setting the lab reads, in the order `--help` and the README list
 * them. `allowed` is what the one-line error message says when a value fails
 * its schema.
 */
const SETTINGS = {
  port: {
    env: "MCP_TEST_PORT",
    defaultValue: "8089",
    description: "TCP port the lab listens on (0 picks a free port)",
    allowed: "an integer from 0 to 65535",
    schema: z.string().regex(/^\d{1,5}$/).transform(Number).pipe(
      z.number().max(65535),
    ),
  },
  host: {
    env: "MCP_TEST_HOST",
    defaultValue: "127.0.0.1",
    description: "Interface to bind (0.0.0.0 inside containers)",
    allowed: "a host name or IP address without spaces",
    schema: z.string().regex(/^[^\s/]+$/),
  },
  path: {
    env: "MCP_TEST_PATH",
    defaultValue: "/mcp",
    description:
      "Additional MCP endpoint path; /mcp is always served and both share one lab",
    allowed: "a path starting with / (not /healthz), without spaces, ? or #",
    schema: z.string().regex(/^\/[^\s?#]*$/).refine((path) =>
      path !== "/healthz"
    ),
  },
  updateDelaySeconds: {
    env: "MCP_TEST_UPDATE_DELAY_SECONDS",
    defaultValue: "5",
    description: "Seconds between a subscribe (or listen) and the update",
    allowed: "a number of seconds from 0 to 86400, fractions allowed",
    schema: z.string().regex(/^\d+(\.\d+)?$/).transform(Number).pipe(
      z.number().max(86400),
    ),
  },
  initialStatus: {
    env: "MCP_TEST_INITIAL_STATUS",
    defaultValue: "pending",
    description: "Value of the status field at version 1",
    allowed: "1 to 80 characters on one line",
    schema: statusWord,
  },
  updatedStatus: {
    env: "MCP_TEST_UPDATED_STATUS",
    defaultValue: "reviewed",
    description: "Value of the status field after the update",
    allowed: "1 to 80 characters on one line",
    schema: statusWord,
  },
  sendListChanged: {
    env: "MCP_TEST_SEND_LIST_CHANGED",
    defaultValue: "false",
    description: "Also send notifications/resources/list_changed on update",
    allowed: "true/false/1/0/yes/no/on/off",
    schema: z.string().transform((word) => word.toLowerCase()).pipe(
      z.enum([...TRUE_WORDS, ...FALSE_WORDS]),
    ).transform((word) => TRUE_WORDS.includes(word)),
  },
  allowedHosts: {
    env: "MCP_TEST_ALLOWED_HOSTS",
    defaultValue: "",
    description:
      "Extra Host/Origin names to accept beside loopback (comma list; * accepts any)",
    allowed: "a comma-separated list of host names, IP addresses or *",
    schema: z.string().transform((list) =>
      list.split(",").map((name) => name.trim().toLowerCase()).filter(Boolean)
    ).pipe(z.array(z.string().regex(/^(\*|[a-z0-9.-]+|\[[0-9a-f:.]+\])$/))),
  },
  authToken: {
    env: "MCP_TEST_AUTH_TOKEN",
    defaultValue: "",
    description: "When set, MCP requests need 'Authorization: Bearer <token>'",
    allowed: "printable characters without spaces",
    schema: z.string().regex(/^[\x21-\x7e]*$/),
  },
  sessionTtlSeconds: {
    env: "MCP_TEST_SESSION_TTL_SECONDS",
    defaultValue: "1800",
    description:
      "A 2025 session with no request and no open GET stream for this long ends",
    allowed: "a number of seconds above 0, fractions allowed",
    schema: z.string().regex(/^\d+(\.\d+)?$/).transform(Number).pipe(
      z.number().positive(),
    ),
  },
  maxSessions: {
    env: "MCP_TEST_MAX_SESSIONS",
    defaultValue: "1000",
    description: "Most 2025 sessions, and most open listen streams, at once",
    allowed: "an integer from 1 to 1000000",
    schema: z.string().regex(/^\d{1,7}$/).transform(Number).pipe(
      z.number().min(1).max(1_000_000),
    ),
  },
  logLevel: {
    env: "MCP_TEST_LOG_LEVEL",
    defaultValue: "debug",
    description: "Log verbosity",
    allowed: LOG_LEVELS.join("/"),
    schema: z.string().transform((word) => word.toLowerCase()).pipe(
      z.enum(LOG_LEVELS),
    ),
  },
} as const;

type Settings = typeof SETTINGS;

/** The lab's effective configuration, one field per entry of `SETTINGS`. */
export type LabConfig = {
  [Name in keyof Settings]: z.output<Settings[Name]["schema"]>;
};

/** A configuration value the lab refuses; its message is one line. */
export class ConfigError extends Error {}

/**
 * Reads the configuration from environment variables. An unset or empty
 * variable takes its default; a bad value throws a `ConfigError` naming the
 * variable, the value and what is allowed.
 */
export function loadConfig(env: Record<string, string | undefined>): LabConfig {
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const given = env[setting.env]?.trim() || undefined;
    const parsed = setting.schema.safeParse(given ?? setting.defaultValue);
    if (!parsed.success) {
      throw new ConfigError(
        `${setting.env}=${
          JSON.stringify(given)
        } is not allowed: expected ${setting.allowed}`,
      );
    }
    config[name] = parsed.data;
  }
  return config as LabConfig;
}

/** The `--help` text: usage and the configuration table with defaults. */
export function helpText(): string {
  const rows = Object.values(SETTINGS).map((setting) =>
    `  ${setting.env.padEnd(31)} ${
      setting.defaultValue.padEnd(10)
    } ${setting.description}`
  );
  return [
    `MCP resource subscription lab ${LAB_VERSION}`,
    "",
    "Usage: deno run -A main.ts",
    "",
    "Environment variables:",
    `  ${"NAME".padEnd(31)} ${"DEFAULT".padEnd(10)} DESCRIPTION`,
    ...rows,
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------
// Resource state
// ---------------------------------------------------------------------------

/** The one resource the lab serves. */
export const REVIEW_URI = "test://review/status";
const REVIEW_MIME_TYPE = "text/plain";

const reviewResource = {
  uri: REVIEW_URI,
  name: "review-status",
  title: "Simulated review status",
  description:
    "A review result that changes after a client subscribes. Re-read it when notified.",
  mimeType: REVIEW_MIME_TYPE,
};

const REVIEW_MESSAGES: Record<number, string> = {
  1: "Waiting for simulated review result.",
  2: "Simulated review result is now available.",
};

/** The resource text at a version, as a client reads it. */
export function reviewStatus(config: LabConfig, version: number): string {
  const status = version === 1 ? config.initialStatus : config.updatedStatus;
  return [
    `status: ${status}`,
    `version: ${version}`,
    `message: ${REVIEW_MESSAGES[version] ?? REVIEW_MESSAGES[2]}`,
  ].join("\n");
}

type Era = "2025" | "2026-07-28";
type UpdateTimer = ReturnType<typeof setTimeout>;

/**
 * One client's view of the lab: its own resource version and pending update
 * timers. A 2025 session is one client; in the stateless era a client is the
 * `clientInfo` name@version its requests carry.
 */
interface LabClient {
  era: Era;
  /** `name/version` from `clientInfo`, or `unknown` until it is known. */
  label: string;
  protocolVersion: string;
  reviewVersion: number;
  pendingUpdates: Set<UpdateTimer>;
}

function newLabClient(
  era: Era,
  label: string,
  protocolVersion: string,
): LabClient {
  return {
    era,
    label,
    protocolVersion,
    reviewVersion: 1,
    pendingUpdates: new Set(),
  };
}

function clientLabel(info: unknown): string {
  const { name, version } = z.object({
    name: z.string().catch("unknown"),
    version: z.string().catch("unknown"),
  }).catch({ name: "unknown", version: "unknown" }).parse(info);
  return `${name}/${version}`;
}

// ---------------------------------------------------------------------------
// Evidence and logging
// ---------------------------------------------------------------------------

const LEVEL_RANK: Record<LogLevel, number> = {
  debug: 0,
  info: 1,
  warn: 2,
  error: 3,
  silent: 4,
};

/** Where log lines go; the default writes to stdout. */
export type LineSink = (line: string) => void;

interface Logger {
  /** A bracketed evidence line, with the client appended as fields. */
  evidence(line: string, client?: LabClient): void;
  debug(line: string): void;
  warn(line: string): void;
  error(line: string): void;
}

function createLogger(level: LogLevel, sink: LineSink): Logger {
  const write = (lineLevel: LogLevel, line: string) => {
    if (LEVEL_RANK[lineLevel] >= LEVEL_RANK[level]) sink(line);
  };
  return {
    evidence(line, client) {
      const who = client
        ? ` client=${client.label} era=${client.era} protocol=${client.protocolVersion}`
        : "";
      write("info", `${line}${who} at=${new Date().toISOString()}`);
    },
    debug: (line) => write("debug", line),
    warn: (line) => write("warn", line),
    error: (line) => write("error", line),
  };
}

// ---------------------------------------------------------------------------
// MCP wiring
// ---------------------------------------------------------------------------

/** Answers a JSON-RPC error outside any MCP exchange (routing, parsing). */
function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers?: HeadersInit,
): Response {
  return Response.json(
    { jsonrpc: "2.0", error: { code, message }, id: null },
    { status, headers },
  );
}

/**
 * "Resource not found" with `data.uri`: the SDK sends it as -32602, and
 * `LegacyTransport` turns it into -32002 for 2025 sessions.
 */
function resourceNotFound(uri: string): Error {
  return new ResourceNotFoundError(uri, `Resource not found: ${uri}`);
}

/**
 * Params of the methods that name a URI. Handlers given their own schema get
 * the SDK's -32602 "Invalid params" for a bad value; without one the SDK
 * answers -32603 "Internal error".
 */
const uriParams = { params: z.object({ uri: z.string() }).passthrough() };
const nameParams = { params: z.object({ name: z.string() }).passthrough() };

/**
 * Builds the MCP server one client talks to: a 2025 session keeps its server
 * for its lifetime, a 2026-07-28 request gets a fresh one. `onSubscribe` and
 * `onUnsubscribe` exist only in the 2025 era; the stateless era subscribes
 * through `subscriptions/listen`, which the SDK's listen router serves.
 */
function buildLabServer(
  config: LabConfig,
  log: Logger,
  client: LabClient,
  subscriptions?: {
    onSubscribe: () => void;
    onUnsubscribe: () => void;
  },
): Server {
  const server = new Server(
    { name: "mcp-resource-subscription-lab", version: LAB_VERSION },
    {
      capabilities: {
        resources: { subscribe: true, listChanged: true },
        // Declared with empty lists: several clients drop a server whose
        // list methods answer "method not found".
        tools: {},
        prompts: {},
      },
    },
  );
  server.setRequestHandler("resources/list", () => {
    log.evidence("[resources/list] requested", client);
    return { resources: [reviewResource] };
  });
  server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: [],
  }));
  server.setRequestHandler("tools/list", () => ({ tools: [] }));
  server.setRequestHandler("prompts/list", () => ({ prompts: [] }));
  // Having declared tools and prompts, an unknown name is bad params, not
  // an unknown method.
  server.setRequestHandler("tools/call", nameParams, ({ name }) => {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Unknown tool: ${name}`,
    );
  });
  server.setRequestHandler("prompts/get", nameParams, ({ name }) => {
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `Unknown prompt: ${name}`,
    );
  });
  server.setRequestHandler("resources/read", uriParams, ({ uri }) => {
    if (uri !== REVIEW_URI) {
      log.evidence(`[resources/read] uri=${uri} not-found`, client);
      throw resourceNotFound(uri);
    }
    log.evidence(
      `[resources/read] uri=${uri} version=${client.reviewVersion}`,
      client,
    );
    return {
      contents: [{
        uri,
        mimeType: REVIEW_MIME_TYPE,
        text: reviewStatus(config, client.reviewVersion),
      }],
    };
  });
  if (subscriptions) {
    server.setRequestHandler("resources/subscribe", uriParams, ({ uri }) => {
      if (uri !== REVIEW_URI) {
        log.evidence(`[resources/subscribe] uri=${uri} not-found`, client);
        throw resourceNotFound(uri);
      }
      log.evidence(`[resources/subscribe] uri=${uri}`, client);
      subscriptions.onSubscribe();
      return {};
    });
    server.setRequestHandler("resources/unsubscribe", uriParams, ({ uri }) => {
      log.evidence(`[resources/unsubscribe] uri=${uri}`, client);
      if (uri === REVIEW_URI) subscriptions.onUnsubscribe();
      return {};
    });
  }
  return server;
}

/**
 * The 2025-era transport, speaking the 2025 spec's "resource not found" code.
 * The SDK encodes that error as -32602 (with `data.uri`) in every era; 2025
 * clients are promised -32002, so the lab restores it on the way out.
 */
class LegacyTransport extends WebStandardStreamableHTTPServerTransport {
  /** Told about every JSON-RPC error the session answers with. */
  onErrorResponse?: (error: { code: number; message: string }) => void;

  override send(
    message: JSONRPCMessage,
    options?: { relatedRequestId?: RequestId },
  ): Promise<void> {
    if (
      isJSONRPCErrorResponse(message) &&
      message.error.code === ProtocolErrorCode.InvalidParams &&
      isResourceNotFoundData(message.error.data)
    ) {
      message = {
        ...message,
        error: { ...message.error, code: ProtocolErrorCode.ResourceNotFound },
      };
    }
    if (isJSONRPCErrorResponse(message)) this.onErrorResponse?.(message.error);
    return super.send(message, options);
  }
}

/** The SDK's mark of a not-found error: data carrying `uri` and nothing else. */
function isResourceNotFoundData(data: unknown): boolean {
  return typeof data === "object" && data !== null &&
    Object.keys(data).length === 1 && "uri" in data;
}

/** A 2025-era session: its client, transport and server. */
interface LegacySession {
  id: string;
  client: LabClient;
  transport: LegacyTransport;
  server: Server;
  /** Open GET streams: notifications outside a request can only go there. */
  getStreams: number;
  /** Ends the session when it has been idle for the configured TTL. */
  idleTimer?: ReturnType<typeof setTimeout>;
}

/** What a 2026-07-28 request is about, visible to the SDK callbacks it reaches. */
interface ModernExchange {
  client: LabClient;
  /** For `subscriptions/listen`: the served URIs the client asked to watch. */
  watchedUris: string[];
  /** For `subscriptions/listen`: whether it asked for list changes. */
  resourcesListChanged: boolean;
}

/** Counts `/healthz` reports, so leaks show from outside. */
export interface LabCounts {
  legacySessions: number;
  listenStreams: number;
  pendingUpdates: number;
}

/** A running lab: a fetch handler plus what shutdown and tests need. */
export interface Lab {
  fetch: (request: Request) => Promise<Response>;
  counts: () => LabCounts;
  /** Ends every session and stream; listen streams get the graceful result. */
  close: () => Promise<void>;
}

/** Upper bound on a POST body, the SDK's own default (4 MiB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

const MODERN_PROTOCOL_VERSIONS = new Set(["2026-07-28"]);

/** Creates the lab: its state, its MCP wiring and its HTTP routing. */
export function createLab(
  config: LabConfig,
  sink: LineSink = console.log,
): Lab {
  const log = createLogger(config.logLevel, sink);
  const mcpPaths = new Set(["/mcp", config.path]);
  const legacySessions = new Map<string, LegacySession>();
  const modernClients = new Map<string, LabClient>();
  /** Open listen streams, each with the function that delivers to it. */
  const listenStreams = new Set<(event: ServerEvent) => void>();
  const modernExchange = new AsyncLocalStorage<ModernExchange>();

  // -- Updates ---------------------------------------------------------------

  /** Moves the client's resource to version 2 after the delay, then notifies. */
  function scheduleUpdate(client: LabClient, notify: () => Promise<void>) {
    const timer = setTimeout(async () => {
      client.pendingUpdates.delete(timer);
      client.reviewVersion = 2;
      log.evidence(
        `[resource/update] uri=${REVIEW_URI} version=${client.reviewVersion}`,
        client,
      );
      try {
        await notify();
      } catch (error) {
        log.warn(
          `[notification/send] failed uri=${REVIEW_URI} client=${client.label}: ${
            String(error)
          }`,
        );
      }
    }, config.updateDelaySeconds * 1000);
    client.pendingUpdates.add(timer);
    return timer;
  }

  function cancelUpdates(client: LabClient) {
    for (const timer of client.pendingUpdates) clearTimeout(timer);
    client.pendingUpdates.clear();
  }

  // -- 2025 era: sessions ----------------------------------------------------

  function endLegacySession(session: LegacySession, reason: string) {
    if (!legacySessions.delete(session.id)) return;
    clearTimeout(session.idleTimer);
    cancelUpdates(session.client);
    log.evidence(
      `[session/end] session=${session.id} reason=${reason}`,
      session.client,
    );
  }

  /**
   * Restarts the session's idle clock. A session waiting on an open GET
   * stream is not idle: that is how a subscribed client waits.
   */
  function touchSession(session: LegacySession) {
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    if (session.getStreams > 0 || !legacySessions.has(session.id)) return;
    session.idleTimer = setTimeout(() => {
      endLegacySession(session, "idle");
      session.transport.close().catch(() => {});
    }, config.sessionTtlSeconds * 1000);
  }

  /** Sends a notification to the session's GET stream, saying if it got there. */
  async function notifySession(
    session: LegacySession,
    notification: "updated" | "list_changed",
  ) {
    // The SDK drops a notification silently when no GET stream is open.
    const delivered = session.getStreams > 0
      ? "delivered=true"
      : "delivered=false reason=no GET stream open";
    if (notification === "updated") {
      await session.server.sendResourceUpdated({ uri: REVIEW_URI });
      log.evidence(
        `[notification/send] notifications/resources/updated uri=${REVIEW_URI} ${delivered}`,
        session.client,
      );
    } else {
      await session.server.sendResourceListChanged();
      log.evidence(
        `[notification/send] notifications/resources/list_changed ${delivered}`,
        session.client,
      );
    }
  }

  async function openLegacySession(
    request: Request,
    initialize: { params: { clientInfo: unknown; protocolVersion: string } },
  ): Promise<Response> {
    if (legacySessions.size >= config.maxSessions) {
      return jsonRpcError(
        503,
        ProtocolErrorCode.InternalError,
        `Session limit reached: the lab holds ${config.maxSessions} sessions (MCP_TEST_MAX_SESSIONS); end one with DELETE or wait for idle ones to expire`,
      );
    }
    const client = newLabClient(
      "2025",
      clientLabel(initialize.params.clientInfo),
      initialize.params.protocolVersion,
    );
    const session: LegacySession = {
      id: "",
      client,
      getStreams: 0,
      transport: new LegacyTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          legacySessions.set(id, session);
          log.evidence(`[initialize] client connected session=${id}`, client);
        },
        onsessionclosed: () => endLegacySession(session, "delete"),
      }),
      server: buildLabServer(config, log, client, {
        onSubscribe() {
          if (client.pendingUpdates.size > 0) return;
          scheduleUpdate(client, async () => {
            await notifySession(session, "updated");
            if (config.sendListChanged) {
              await notifySession(session, "list_changed");
            }
          });
        },
        onUnsubscribe: () => cancelUpdates(client),
      }),
    };
    session.transport.onErrorResponse = (error) =>
      log.warn(
        `[request/rejected] status=200 code=${error.code} message=${
          JSON.stringify(error.message)
        } session=${session.id}`,
      );
    session.server.oninitialized = () => {
      client.protocolVersion = session.server.getNegotiatedProtocolVersion() ??
        client.protocolVersion;
    };
    session.server.onclose = () => endLegacySession(session, "closed");
    await session.server.connect(session.transport);
    const response = await session.transport.handleRequest(request, {
      parsedBody: initialize,
    });
    touchSession(session);
    return response;
  }

  async function serveLegacy(
    request: Request,
    body: unknown,
  ): Promise<Response> {
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId === null) {
      return request.method === "POST" && isInitializeRequest(body)
        ? openLegacySession(request, body)
        : jsonRpcError(
          400,
          -32000,
          "Bad Request: Mcp-Session-Id header is required; send initialize first",
        );
    }
    const session = legacySessions.get(sessionId);
    if (!session) {
      return jsonRpcError(
        404,
        -32001,
        `Session not found: ${sessionId} is unknown or has ended; send initialize to start a new session`,
      );
    }
    const response = await session.transport.handleRequest(request, {
      parsedBody: body,
    });
    if (request.method === "GET" && isEventStream(response)) {
      return watchGetStream(session, response);
    }
    touchSession(session);
    return response;
  }

  /** Counts the session's GET stream while it is open, and logs both ends. */
  function watchGetStream(session: LegacySession, response: Response) {
    session.getStreams++;
    touchSession(session);
    log.evidence(`[stream/get] opened session=${session.id}`, session.client);
    const body = whenStreamEnds(response.body!, () => {
      session.getStreams--;
      touchSession(session);
      if (legacySessions.has(session.id)) {
        log.evidence(
          `[stream/get] closed session=${session.id}`,
          session.client,
        );
      }
    });
    return new Response(body, response);
  }

  // -- 2026-07-28 era: stateless requests and listen streams -----------------

  /**
   * The listen router's event source. Each open listen stream subscribes
   * here; the lab delivers each update to the one stream that asked for it,
   * because every client has its own resource version.
   */
  const listenBus: ServerEventBus = {
    publish(event) {
      for (const deliver of listenStreams) deliver(event);
    },
    subscribe(deliver) {
      const exchange = modernExchange.getStore();
      listenStreams.add(deliver);
      const client = exchange?.client;
      let timer: UpdateTimer | undefined;
      if (client && exchange.watchedUris.includes(REVIEW_URI)) {
        timer = scheduleUpdate(client, () => {
          deliver({ kind: "resource_updated", uri: REVIEW_URI });
          log.evidence(
            `[notification/send] notifications/resources/updated uri=${REVIEW_URI} delivered=true`,
            client,
          );
          if (config.sendListChanged) {
            // Delivered only if the listen filter asked for list changes.
            deliver({ kind: "resources_list_changed" });
            log.evidence(
              `[notification/send] notifications/resources/list_changed delivered=${exchange.resourcesListChanged}`,
              client,
            );
          }
          return Promise.resolve();
        });
      }
      return () => {
        if (!listenStreams.delete(deliver)) return;
        if (client && timer !== undefined) {
          clearTimeout(timer);
          client.pendingUpdates.delete(timer);
        }
        log.evidence("[subscriptions/listen] closed", client);
      };
    },
  };

  const modernHandler = createMcpHandler(
    () => {
      const exchange = modernExchange.getStore();
      const client = exchange?.client ??
        newLabClient("2026-07-28", "unknown/unknown", "2026-07-28");
      return buildLabServer(config, log, client);
    },
    {
      legacy: "reject",
      bus: listenBus,
      maxSubscriptions: config.maxSessions,
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: (error) => log.debug(`[mcp/error] ${error.message}`),
    },
  );

  /** The client a stateless request speaks for, keyed by clientInfo. */
  function modernClientFor(meta: Record<string, unknown>): LabClient {
    const label = clientLabel(meta[CLIENT_INFO_META_KEY]);
    const protocolVersion = String(
      meta[PROTOCOL_VERSION_META_KEY] ?? "2026-07-28",
    );
    let client = modernClients.get(label);
    if (!client) {
      client = newLabClient("2026-07-28", label, protocolVersion);
      modernClients.set(label, client);
    }
    return client;
  }

  async function serveModern(
    request: Request,
    body: unknown,
  ): Promise<Response> {
    const message = z.object({
      method: z.string(),
      params: z.object({
        _meta: z.record(z.string(), z.unknown()).catch({}),
      }).passthrough().catch({ _meta: {} }),
    }).passthrough().safeParse(body);
    if (!message.success) {
      return modernHandler.fetch(request, { parsedBody: body });
    }
    const client = modernClientFor(message.data.params._meta);
    if (message.data.method === "server/discover") {
      // A discover opens a client's run: it starts again from version 1.
      cancelUpdates(client);
      client.reviewVersion = 1;
      log.evidence("[server/discover] requested", client);
    }
    const listen = message.data.method === "subscriptions/listen"
      ? narrowListenFilter(message.data.params)
      : undefined;
    const response = await modernExchange.run(
      {
        client,
        watchedUris: listen?.served ?? [],
        resourcesListChanged: listen?.resourcesListChanged ?? false,
      },
      () =>
        modernHandler.fetch(request, {
          parsedBody: listen
            ? { ...message.data, params: listen.params }
            : body,
        }),
    );
    if (listen && isEventStream(response)) {
      const ignored = listen.ignored.length
        ? ` ignored=${listen.ignored.join(",")}`
        : "";
      log.evidence(
        `[subscriptions/listen] uris=${listen.served.join(",")}${ignored}`,
        client,
      );
    }
    return response;
  }

  // -- HTTP routing ------------------------------------------------------------

  const allowedNames = [
    ...localhostAllowedHostnames(),
    ...config.allowedHosts,
    // A lab bound to a specific address answers to that address too.
    ...(["0.0.0.0", "::"].includes(config.host) ? [] : [config.host]),
  ];

  /**
   * DNS-rebinding protection: a page in a browser must not reach the lab
   * through a hostile name, so only loopback names (and the configured ones)
   * may appear in Host and Origin.
   */
  function refuseForeignHost(request: Request): Response | undefined {
    if (config.allowedHosts.includes("*")) return undefined;
    return hostHeaderValidationResponse(request, allowedNames) ??
      originValidationResponse(request, allowedNames);
  }

  const expectedAuthorization = `Bearer ${config.authToken}`;

  function refuseWithoutToken(request: Request): Response | undefined {
    if (!config.authToken) return undefined;
    const given = request.headers.get("authorization") ?? "";
    if (timingSafeEqual(given, expectedAuthorization)) return undefined;
    return jsonRpcError(
      401,
      -32000,
      "Unauthorized: this lab requires 'Authorization: Bearer <MCP_TEST_AUTH_TOKEN>'",
      {
        "WWW-Authenticate":
          'Bearer realm="mcp-subscription-lab", error="invalid_token"',
      },
    );
  }

  /** Reads and checks a POST body: JSON, one JSON-RPC message, not too big. */
  async function readMessage(
    request: Request,
  ): Promise<{ message: unknown } | { refused: Response }> {
    if (!isJsonContentType(request.headers.get("content-type"))) {
      return {
        refused: jsonRpcError(
          415,
          -32000,
          "Unsupported Media Type: Content-Type must be application/json",
        ),
      };
    }
    const read = await readRequestBody(request, MAX_BODY_BYTES);
    if (read.tooLarge) {
      return {
        refused: jsonRpcError(
          413,
          -32000,
          `Payload Too Large: the body exceeds ${MAX_BODY_BYTES} bytes`,
        ),
      };
    }
    let message: unknown;
    try {
      message = JSON.parse(read.text);
    } catch {
      return {
        refused: jsonRpcError(
          400,
          -32700,
          "Parse error: the body is not valid JSON",
        ),
      };
    }
    if (Array.isArray(message)) {
      return {
        refused: jsonRpcError(
          400,
          -32600,
          "Invalid Request: JSON-RPC batches are not supported; send one message per request",
        ),
      };
    }
    if (!isJSONRPCMessage(message)) {
      return {
        refused: jsonRpcError(
          400,
          -32600,
          'Invalid Request: the body is JSON but not a JSON-RPC 2.0 message (needs "jsonrpc": "2.0" and a method, or a result or error with an id)',
        ),
      };
    }
    return { message };
  }

  async function serveMcp(request: Request): Promise<Response> {
    let body: unknown;
    if (request.method === "POST") {
      const read = await readMessage(request);
      if ("refused" in read) return read.refused;
      body = read.message;
    } else if (
      MODERN_PROTOCOL_VERSIONS.has(
        request.headers.get("mcp-protocol-version") ?? "",
      )
    ) {
      // The stateless era has no GET stream and no session to delete.
      return jsonRpcError(
        405,
        -32000,
        "Method Not Allowed: protocol 2026-07-28 uses POST only",
        { Allow: "POST" },
      );
    }
    // Deno aborts request.signal after every successful response (its
    // legacy behaviour), which the SDK would take for a client cancel. The
    // SDK gets a copy without that signal; a client that goes away still
    // ends its stream, through the stream's own cancel.
    const forwarded = new Request(request.url, {
      method: request.method,
      headers: request.headers,
    });
    return await isLegacyRequest(forwarded, body)
      ? serveLegacy(forwarded, body)
      : serveModern(forwarded, body);
  }

  async function route(request: Request, pathname: string) {
    const refused = refuseForeignHost(request);
    if (refused) return refused;
    if (pathname === "/healthz") {
      return Response.json({
        status: "ok",
        lab: LAB_VERSION,
        sdk: SDK_VERSION,
        deno: Deno.version.deno,
        ...counts(),
      });
    }
    if (!mcpPaths.has(pathname)) {
      return new Response(
        `Not Found: the MCP endpoint is ${[...mcpPaths].join(" and ")}\n`,
        { status: 404 },
      );
    }
    return refuseWithoutToken(request) ?? await serveMcp(request);
  }

  async function fetch(request: Request): Promise<Response> {
    const { pathname } = new URL(request.url);
    let response = await route(request, pathname);
    log.debug(`[http] ${request.method} ${pathname} ${response.status}`);
    if (!isEventStream(response) && response.body) {
      // One warn line per refused request or JSON-RPC error answer.
      const text = await response.text();
      const refusal = describeRefusal(response.status, text);
      if (refusal) {
        log.warn(`[request/rejected] ${request.method} ${pathname} ${refusal}`);
      }
      response = new Response(text, response);
    }
    return response;
  }

  function counts(): LabCounts {
    let pendingUpdates = 0;
    for (const session of legacySessions.values()) {
      pendingUpdates += session.client.pendingUpdates.size;
    }
    for (const client of modernClients.values()) {
      pendingUpdates += client.pendingUpdates.size;
    }
    return {
      legacySessions: legacySessions.size,
      listenStreams: listenStreams.size,
      pendingUpdates,
    };
  }

  async function close() {
    const sessions = [...legacySessions.values()];
    for (const session of sessions) endLegacySession(session, "shutdown");
    await Promise.all(sessions.map((session) => session.transport.close()));
    await modernHandler.close();
    for (const client of modernClients.values()) cancelUpdates(client);
  }

  return { fetch, counts, close };
}

/**
 * Passes a stream through and calls `onEnd` once when it finishes, fails, or
 * is cancelled by a client that went away.
 */
function whenStreamEnds(
  source: ReadableStream<Uint8Array>,
  onEnd: () => void,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let ended = false;
  const end = () => {
    if (!ended) {
      ended = true;
      onEnd();
    }
  };
  return new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
}

/** `status=… code=… message=…` for an error answer, or nothing for success. */
function describeRefusal(status: number, text: string): string | undefined {
  let error: { code?: unknown; message?: unknown } | undefined;
  try {
    error = JSON.parse(text)?.error;
  } catch {
    // Plain-text answers (the 404 for unknown paths) have no JSON-RPC code.
  }
  if (!error && status < 400) return undefined;
  const message = error?.message ?? text.trim();
  return `status=${status}${error ? ` code=${error.code}` : ""} message=${
    JSON.stringify(message)
  }`;
}

/** Compares two strings in time that does not depend on where they differ. */
function timingSafeEqual(given: string, expected: string): boolean {
  const a = new TextEncoder().encode(given);
  const b = new TextEncoder().encode(expected);
  let difference = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) difference |= (a[i] ?? 0) ^ b[i];
  return difference === 0;
}

function isJSONRPCMessage(message: unknown): boolean {
  try {
    parseJSONRPCMessage(message);
    return true;
  } catch {
    return false;
  }
}

function isEventStream(response: Response): boolean {
  return response.ok &&
    (response.headers.get("content-type") ?? "").startsWith(
      "text/event-stream",
    );
}

/**
 * Keeps only the URIs the lab serves in a listen filter, so the
 * acknowledgement tells the client exactly what it will hear about.
 */
function narrowListenFilter(params: Record<string, unknown>) {
  const listen = z.object({
    notifications: z.object({
      resourceSubscriptions: z.array(z.string()).optional(),
      resourcesListChanged: z.boolean().optional(),
    }).passthrough(),
  }).passthrough().safeParse(params);
  // A malformed filter goes to the SDK unchanged, which answers -32602.
  if (!listen.success) return undefined;
  const { notifications } = listen.data;
  const requested = notifications.resourceSubscriptions;
  const served = requested?.filter((uri) => uri === REVIEW_URI) ?? [];
  const ignored = requested?.filter((uri) => uri !== REVIEW_URI) ?? [];
  return {
    served,
    ignored,
    resourcesListChanged: notifications.resourcesListChanged === true,
    params: requested
      ? {
        ...listen.data,
        notifications: { ...notifications, resourceSubscriptions: served },
      }
      : listen.data,
  };
}

// ---------------------------------------------------------------------------
// Startup and shutdown
// ---------------------------------------------------------------------------

if (import.meta.main) {
  const { values: flags } = parseArgs({
    args: Deno.args,
    options: { help: { type: "boolean", short: "h" } },
  });
  if (flags.help) {
    console.log(helpText());
    Deno.exit(0);
  }
  let config: LabConfig;
  try {
    config = loadConfig(Deno.env.toObject());
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`config error: ${error.message}`);
    Deno.exit(2);
  }
  const lab = createLab(config);
  const server = Deno.serve({
    hostname: config.host,
    port: config.port,
    onListen({ hostname, port }) {
      const host = hostname.includes(":") ? `[${hostname}]` : hostname;
      const paths = [...new Set(["/mcp", config.path])];
      for (const path of paths) {
        console.log(`listening on http://${host}:${port}${path}`);
      }
      console.log(
        `[lab] version=${LAB_VERSION} sdk=${SDK_VERSION} deno=${Deno.version.deno} resource=${REVIEW_URI}`,
      );
      const shown = { ...config, authToken: config.authToken ? "(set)" : "" };
      console.log(`[lab] config ${JSON.stringify(shown)}`);
    },
  }, lab.fetch);

  const shutdown = async (signal: string) => {
    console.log(`[lab] ${signal}: closing sessions and streams`);
    // Never hang: a stuck connection must not keep the lab alive.
    setTimeout(() => Deno.exit(1), 2000);
    await lab.close();
    await server.shutdown();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", () => shutdown("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => shutdown("SIGTERM"));
}
