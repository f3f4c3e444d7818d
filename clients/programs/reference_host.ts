/**
 * A reference MCP host: an agent loop that brings resource updates to its
 * model (the lab's level 7), short enough to read and copy from.
 *
 * The model is offered `read_resource`, `list_resources` and the server's
 * tools (`mcp__<name>`). A resource the model reads is watched:
 * `resources/subscribe` in the 2025 era, a `subscriptions/listen` naming it
 * in `resourceSubscriptions` in 2026-07-28, asking for the new content in
 * each notification (`embedResources`, the SEP-3119 proposal). On
 * `notifications/resources/updated` for it the host takes the content the
 * notification carries, or else reads it again at once, and before the
 * next model request adds one message per changed resource,
 * marked as an update from the server (which resource, when), holding the
 * latest text: the model never has to ask. Resources the conversation never
 * read are not watched.
 *
 * It keeps the server's lists current too (`Catalog`): on
 * `notifications/tools/list_changed` (prompts, resources alike; in
 * 2026-07-28 asked for on the same listen, `toolsListChanged` …) it lists
 * that kind again, and the next model request offers the tools as the
 * server lists them then, a new one included.
 *
 * No server or model can hang it, fill its memory or its terminal: each
 * bound is a flag or a constant at the top (`HOST_USAGE` lists them), and
 * a stdio server runs in a process group of its own (`StdioServer`), ended
 * with the host.
 *
 * ```sh
 * OPENAI_API_KEY=… deno run -A clients/programs/reference_host.ts --model gpt-4.1 \
 *   --url http://127.0.0.1:8089/mcp "Read test://review/status …"
 * deno run -A clients/programs/reference_host.ts --era 2026-07-28 --model m PROMPT \
 *   --stdio -- deno run -A main.ts --stdio
 * ```
 *
 * The prompt comes before `--stdio --`: all that follows `--` is the
 * server's command. The model: any OpenAI-compatible Chat Completions
 * endpoint, `--base-url` (or `OPENAI_BASE_URL`), `--model`
 * (`OPENAI_MODEL`), the key in `OPENAI_API_KEY` (none: no `Authorization`
 * header, for a local model), never printed nor passed to a stdio server.
 * `--no-updates` turns the watching off, and the following of list
 * changes: the negative control. A model
 * request that takes over `--model-timeout` seconds fails the run. `--help`
 * prints `HOST_USAGE`. Exit 0 once the model answered (on stdout), 1 when
 * the server or model failed, 2 for a bad flag, 130 or 143 after a Ctrl-C
 * or SIGTERM.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import {
  Client,
  deserializeMessage,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type McpSubscription,
  serializeMessage,
  StreamableHTTPClientTransport,
  type SubscriptionFilter,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { getDefaultEnvironment } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import {
  boundedLines,
  ConfigError,
  isEventStream,
  LAB_VERSION,
  lineText,
  parseFlags,
  shutdownSignals,
  within,
} from "../../main.ts";

// The host's bounds, so that no server or model can hang it or fill its
// memory or terminal (HOST_USAGE and docs/client-authors.md say them).
/** `--model-timeout` unless given: time enough for a local model on a CPU. */
const DEFAULT_MODEL_TIMEOUT_SECONDS = 300;
const MAX_MODEL_REQUESTS = 12;
/** The most bytes of one message the host reads, the model's or the server's. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** The most characters of any text the model is given, and of a tool offered. */
export const MAX_CONTENT_CHARS = 16_000;
/**
 * The most tools the model is offered (the OpenAI API's own limit), and the
 * most entries the host keeps of any list the server changes.
 */
export const MAX_TOOLS = 128;
/** The most tool calls of one model answer the host runs: the first ones. */
export const MAX_TOOL_CALLS = 16;
/** The most characters of one line the host prints (the model's answer aside). */
export const MAX_LINE_CHARS = 1_000;
/** How long a stdio server has to exit after its stdin ends, and after SIGTERM. */
const STOP_GRACE_MS = 2000;

const MODEL_TIMEOUT_ERROR =
  "--model-timeout must be a number of seconds, above 0 and at most 3600";
/** Opens every update message, so a reader of a transcript finds them. */
export const UPDATE_MARK = "[Update from the MCP server]";

/** What `--help` prints. */
export const HOST_USAGE =
  `Usage: deno run -A reference_host.ts [options] --url URL PROMPT
       deno run -A reference_host.ts [options] PROMPT --stdio -- COMMAND…

An MCP host whose agent loop brings resource updates to its model, and
offers it the server's tools as they are now. The prompt comes before
--stdio: all that follows -- is the server's command.

Options:
  --url URL        the MCP server, over Streamable HTTP
  --stdio -- COMMAND…
                   start the MCP server and speak to it over stdio (last:
                   all that follows -- is the command)
  --era ERA        auto (discover, then initialize; the default), 2025 or
                   2026-07-28
  --base-url URL   the model's OpenAI-compatible Chat Completions endpoint
                   (default: OPENAI_BASE_URL, else https://api.openai.com/v1)
  --model NAME     the model (default: OPENAI_MODEL)
  --no-updates     watch nothing, follow no list change: the host most
                   agents ship (the control)
  --model-timeout S
                   seconds a model request may take, its answer read in
                   full (default ${DEFAULT_MODEL_TIMEOUT_SECONDS}: time for a local model on a CPU)
  --help           print this help

The key is OPENAI_API_KEY (none: no Authorization header, as a local
model may want), never printed nor passed to a stdio server. The host's
own lines go to stderr as [host] …, a stdio server's stderr as [server] …,
the model's answer to stdout. Exit status: 0 the model answered, 1 the
server or the model failed, 2 a bad flag or value, 130 or 143 after a
Ctrl-C or SIGTERM.

Bounds (constants at the top of reference_host.ts):
  time        each model request within --model-timeout, 12 a prompt
  reading     4 MiB of one message: the model's answer, the server's JSON
              body, event-stream event or stdio line (past it: not read)
  keeping     updates only for resources read, the latest text of each;
              of a list the server changes, 128 entries, none over
              16,000 characters; one list of each kind at a time, one
              more after it however many changes came meanwhile
  passing on  16,000 characters of any text the model is given; 128
              tools, none over 16,000 characters; the first 16 tool
              calls of an answer (the rest dropped)
  printing    lines escaped and cut to 1,000 characters, the key taken out
  stdio       the server in a process group of its own: at the end its
              stdin closed, then SIGTERM, then SIGKILL, 2 s apart; a
              Ctrl-C or SIGTERM to the host passed on to it at once`;

const optionsSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: "--url is not an http(s) URL" })
    .optional(),
  stdio: z.array(z.string()).min(1, "--stdio needs -- COMMAND…").optional(),
  era: z.enum(["auto", "2025", "2026-07-28"], {
    error: "--era must be auto, 2025 or 2026-07-28",
  }),
  "base-url": z.url({ error: "--base-url is not a URL" }),
  model: z.string({ error: "no model: pass --model or set OPENAI_MODEL" }),
  "no-updates": z.boolean(),
  "model-timeout": z.coerce.number({ error: MODEL_TIMEOUT_ERROR })
    .refine((seconds) => seconds > 0 && seconds <= 3600, MODEL_TIMEOUT_ERROR),
  prompt: z.string(),
}).refine((options) => (options.url === undefined) !== !options.stdio, {
  error: "give --url URL or --stdio -- COMMAND…, one of them",
});
type HostOptions = z.output<typeof optionsSchema> & { apiKey: string };

/**
 * The command line and environment, checked (an empty variable counts as
 * unset); `"help"` for `--help`; a `ConfigError` if bad.
 */
export function parseHostArgs(
  args: string[],
  env: Record<string, string | undefined>,
): HostOptions | "help" {
  const split = args.includes("--") ? args.indexOf("--") : args.length;
  const { values, positionals } = parseFlags(args.slice(0, split), {
    help: { type: "boolean", default: false },
    url: { type: "string" },
    stdio: { type: "boolean" },
    era: { type: "string", default: "auto" },
    "base-url": {
      type: "string",
      default: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
    },
    model: { type: "string", default: env.OPENAI_MODEL || undefined },
    "no-updates": { type: "boolean", default: false },
    "model-timeout": {
      type: "string",
      default: String(DEFAULT_MODEL_TIMEOUT_SECONDS),
    },
  }, { allowPositionals: true });
  const { help, ...options } = values;
  if (help) return "help";
  if (split < args.length && !options.stdio) {
    throw new ConfigError("-- COMMAND… goes with --stdio only");
  }
  const parsed = optionsSchema.safeParse({
    ...options,
    stdio: options.stdio ? args.slice(split + 1) : undefined,
    prompt: positionals.join(" "),
  });
  if (!parsed.success) throw new ConfigError(parsed.error.issues[0].message);
  if (parsed.data.prompt === "") {
    // After `--stdio --` a prompt would be one more word of the command.
    throw new ConfigError(
      options.stdio
        ? "no prompt: give it before --stdio (what follows -- is the server's command)"
        : "no prompt: give it as an argument",
    );
  }
  return { ...parsed.data, apiKey: env.OPENAI_API_KEY ?? "" };
}

/** Text cut to `MAX_CONTENT_CHARS`, saying how much was left out. */
function bounded(text: string): string {
  if (text.length <= MAX_CONTENT_CHARS) return text;
  const cut = text.length - MAX_CONTENT_CHARS;
  return `${text.slice(0, MAX_CONTENT_CHARS)}\n[… ${cut} more characters]`;
}

/** The key, which nothing the host prints may hold (set by `hostMain`). */
let secret = "";

/**
 * Text fit to print, whoever wrote it: the key taken out first (a cut
 * could leave its start), then at most `max` characters, control
 * characters escaped.
 */
function printable(text: string, max = MAX_LINE_CHARS): string {
  const shown = secret ? text.replaceAll(secret, "[OPENAI_API_KEY]") : text;
  return lineText(shown.length > max ? `${shown.slice(0, max)}…` : shown);
}

/** One of the host's lines on stderr. */
const say = (words: string) => console.error(`[host] ${printable(words)}`);

/** A Chat Completions message, as far as this host uses them. */
type Message =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
type ToolCall = z.output<typeof toolCallSchema>;
const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal("function"),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/**
 * Asks every `subscriptions/listen` on a transport for the new content in
 * its notifications (`embedResources: true`, SEP-3119), and keeps the text
 * an update for a watched resource carries (the latest, cut to
 * `MAX_CONTENT_CHARS`) until `take` claims it. The SDK's client has
 * no option for either: it sends only the filter, and drops a
 * notification's params beyond `uri` and `_meta` before a handler sees
 * them. So both happen on the transport, before `connect`: the SDK chains
 * a handler already set there, and `send` adds the flag.
 */
export class InlineUpdates {
  #watched = new Set<string>();
  #texts = new Map<string, string>();

  constructor(transport: Transport) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) =>
      send(
        isJSONRPCRequest(message) && message.method === "subscriptions/listen"
          ? { ...message, params: { ...message.params, embedResources: true } }
          : message,
        options,
      );
    transport.onmessage = (message) => this.#keep(message);
  }

  /** Keeps, from now on, the text that updates for `uri` carry. */
  watch(uri: string) {
    this.#watched.add(uri);
  }

  /** The text the last update for `uri` carried, once; else undefined. */
  take(uri: string): string | undefined {
    const text = this.#texts.get(uri);
    this.#texts.delete(uri);
    return text;
  }

  #keep(message: JSONRPCMessage) {
    if (
      !isJSONRPCNotification(message) ||
      message.method !== "notifications/resources/updated"
    ) return;
    const { uri, text } = message.params ?? {};
    // A resource the conversation never read: nothing would take its text.
    if (typeof uri !== "string" || !this.#watched.has(uri)) return;
    if (typeof text === "string") this.#texts.set(uri, bounded(text));
  }
}

/**
 * Runs one task per key at a time. Asked again while it runs, it runs once
 * more after, however often it was asked: a flood of notifications costs
 * two runs, the last begun after the last notification. A task never
 * rejects (it says its own failure).
 */
export class OnePerKey<K> {
  #running = new Map<K, Promise<void>>();
  #again = new Set<K>();

  run(key: K, task: () => Promise<void>) {
    if (this.#running.has(key)) return void this.#again.add(key);
    const runs = (async () => {
      do {
        this.#again.delete(key);
        await task();
      } while (this.#again.has(key));
      this.#running.delete(key);
    })();
    this.#running.set(key, runs);
  }

  /** Once every run under way, and the one more asked of it, has ended. */
  async settled() {
    await Promise.all(this.#running.values());
  }
}

const isModern = (client: Client) =>
  client.getNegotiatedProtocolVersion() === "2026-07-28";

/**
 * 2026-07-28: the host's one `subscriptions/listen`, asking for all it
 * follows (list changes, the resources read). Asking for more opens a new
 * listen with the whole filter, then closes the old one.
 */
class Listen {
  #filter: SubscriptionFilter = {};
  #open?: McpSubscription;

  constructor(private readonly client: Client) {}

  async ask(more: SubscriptionFilter) {
    const filter = { ...this.#filter, ...more };
    const previous = this.#open;
    // Refused, it asks for none of it again.
    this.#open = await this.client.listen(filter);
    this.#filter = filter;
    await previous?.close();
  }

  async close() {
    await this.#open?.close();
  }
}

/**
 * The heart of the host: the resources the conversation has read, how the
 * server watches them, and the updates the model has not seen yet (the
 * latest per resource, its text cut to `MAX_CONTENT_CHARS` as it is kept).
 */
class ResourceWatch {
  #read = new Set<string>();
  #pending = new Map<string, { at: Date; text: string; inline: boolean }>();
  #rereads = new OnePerKey<string>();

  constructor(
    private readonly client: Client,
    private readonly on: boolean,
    private readonly listen: Listen,
    private readonly inline?: InlineUpdates,
  ) {
    if (!on) return;
    client.setNotificationHandler(
      "notifications/resources/updated",
      ({ params }) => this.#updated(params.uri),
    );
  }

  /** Reads a resource for the model; the first time, asks to be told of changes. */
  async read(uri: string): Promise<string> {
    const text = await this.#text(uri);
    if (!this.on || this.#read.has(uri)) return text;
    this.#read.add(uri);
    this.inline?.watch(uri);
    if (!isModern(this.client)) {
      await this.client.subscribeResource({ uri });
    } else {
      // The listen names every resource read so far.
      await this.listen.ask({ resourceSubscriptions: [...this.#read] });
    }
    say(`watching ${JSON.stringify(uri)}`);
    return text;
  }

  async #text(uri: string): Promise<string> {
    const { contents } = await this.client.readResource({ uri });
    return contents.map((part) => "text" in part ? part.text : "(binary)")
      .join("\n");
  }

  /**
   * A notification: re-read what the conversation knows and keep the text.
   * One re-read per resource at a time (`OnePerKey`), so a flood costs two
   * reads and the text kept is the latest.
   */
  #updated(uri: string) {
    if (!this.#read.has(uri)) return;
    const inline = this.inline?.take(uri);
    if (inline !== undefined) {
      say(`${JSON.stringify(uri)}: the notification carried its content`);
      this.#pending.set(uri, { at: new Date(), text: inline, inline: true });
      return;
    }
    this.#rereads.run(uri, () =>
      this.#text(uri).then(
        (text) =>
          void this.#pending.set(uri, {
            at: new Date(),
            text: bounded(text),
            inline: false,
          }),
        (error) => say(`re-reading ${JSON.stringify(uri)} failed: ${error}`),
      ));
  }

  /** The update messages for the next model request, one per resource. */
  async takeUpdates(): Promise<Message[]> {
    await this.#rereads.settled();
    const updates = [...this.#pending].map(([uri, { at, text, inline }]) => {
      say(`${JSON.stringify(uri)} changed: the update goes to the model`);
      return {
        role: "user" as const,
        content: `${UPDATE_MARK} ${uri} changed at ${at.toISOString()} ` +
          (inline
            ? "(the server sent the new content with its notification). "
            : "(the server notified the host, which read it again). ") +
          `Its content now:\n${text}`,
      };
    });
    this.#pending.clear();
    return updates;
  }

  /** 2025: stops watching, each resource unsubscribed (the listen: `Listen`). */
  async stop() {
    if (isModern(this.client)) return;
    for (const uri of this.#read) {
      await this.client.unsubscribeResource({ uri });
    }
  }
}

/** The lists a server may change, each with its notification. */
const LIST_CHANGES = {
  tools: "notifications/tools/list_changed",
  prompts: "notifications/prompts/list_changed",
  resources: "notifications/resources/list_changed",
} as const;
type ListKind = keyof typeof LIST_CHANGES;

/**
 * The server's lists, kept current. At the start the host lists its tools
 * (for the model) and, following changes, its prompts and resources too.
 * On `notifications/<kind>/list_changed` it lists that kind again (in
 * 2026-07-28 it asks the listen for them: `toolsListChanged`, … for each
 * kind the server says may change), one list per kind at a time
 * (`OnePerKey`), and says what is new. The model's next request offers the
 * tools as they are then. Of each list it keeps at most `MAX_TOOLS`
 * entries, none over `MAX_CONTENT_CHARS`: the tools offered, the names of
 * prompts, the URIs of resources.
 */
class Catalog {
  #tools: OfferedTool[] = [];
  #names = new Map<ListKind, Set<string>>();
  #lists = new OnePerKey<ListKind>();
  #toolsFailed?: Error;

  constructor(
    private readonly client: Client,
    private readonly on: boolean,
  ) {}

  /**
   * Lists what the server offers; following changes, asks to hear of them
   * first, so that a change during the first list lists again after it.
   */
  async start(listen: Listen) {
    const capabilities = this.client.getServerCapabilities() ?? {};
    const kinds = (Object.keys(LIST_CHANGES) as ListKind[])
      .filter((kind) => kind === "tools" || (this.on && capabilities[kind]));
    if (this.on) {
      for (const kind of kinds) {
        this.client.setNotificationHandler(
          LIST_CHANGES[kind],
          () => this.#lists.run(kind, () => this.#update(kind)),
        );
      }
      const changing = kinds.filter((kind) => capabilities[kind]?.listChanged);
      if (isModern(this.client) && changing.length > 0) {
        await listen.ask(Object.fromEntries(
          changing.map((kind) => [`${kind}ListChanged`, true]),
        )).catch((error) =>
          say(`the server refused a listen for list changes: ${error.message}`)
        );
      }
    }
    for (const kind of kinds) this.#lists.run(kind, () => this.#update(kind));
    await this.#lists.settled();
    // Without a first list of the tools the run fails, as it always did.
    if (this.#toolsFailed) throw this.#toolsFailed;
  }

  /** The tools for the next model request, once lists under way are done. */
  async tools(): Promise<OfferedTool[]> {
    await this.#lists.settled();
    return this.#tools;
  }

  /** Lists one kind again and says what is new (the first time, nothing). */
  async #update(kind: ListKind) {
    const before = this.#names.get(kind);
    let names: Set<string>;
    try {
      names = await this.#list(kind);
    } catch (error) {
      if (kind === "tools" && !before) this.#toolsFailed = error as Error;
      else say(`listing ${kind} failed: ${(error as Error).message}`);
      return;
    }
    this.#names.set(kind, names);
    if (!before) return;
    const added = [...names].filter((name) => !before.has(name));
    say(
      `the server's ${kind} changed: ${names.size} kept, ` +
        (added.length > 0
          ? `new: ${added.map((name) => JSON.stringify(name)).join(", ")}`
          : "none new"),
    );
  }

  /** Lists one kind: the names kept, and for tools, those offered. */
  async #list(kind: ListKind): Promise<Set<string>> {
    let names: string[];
    if (kind === "tools") {
      this.#tools = await toolsFor(this.client);
      names = this.#tools.slice(2).map((tool) =>
        tool.function.name.replace(/^mcp__/, "")
      );
    } else if (kind === "prompts") {
      names = (await this.client.listPrompts()).prompts.map((p) => p.name);
    } else {
      names = (await this.client.listResources()).resources.map((r) => r.uri);
    }
    return new Set(
      names.filter((name) => name.length <= MAX_CONTENT_CHARS)
        .slice(0, MAX_TOOLS),
    );
  }
}

const answerSchema = z.object({
  choices: z.array(z.object({
    message: z.object({
      content: z.string().nullish(),
      tool_calls: z.array(toolCallSchema).nullish(),
    }),
  })).min(1),
});

/** One request to the model: its next message. */
async function askModel(options: HostOptions, body: object) {
  const { response, text } = await postToModel(options, body);
  // `say` hides the key and cuts the line; no message here quotes a part
  // of the answer, which could end inside the key.
  if (!response.ok) {
    throw new Error(`the model answered ${response.status}: ${text}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error("the model's answer is not JSON");
  }
  const answer = answerSchema.safeParse(json);
  if (!answer.success) {
    throw new Error("the model's answer is not a Chat Completions answer");
  }
  return answer.data.choices[0].message;
}

/**
 * The model's response to one request and its text, in full within
 * `--model-timeout` (the signal ends the reading of the body too).
 */
async function postToModel(options: HostOptions, body: object) {
  const seconds = options["model-timeout"];
  const signal = AbortSignal.timeout(seconds * 1000);
  try {
    const response = await fetch(
      `${options["base-url"].replace(/\/$/, "")}/chat/completions`,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          // A local model may want no key: then no header at all.
          ...(options.apiKey && { authorization: `Bearer ${options.apiKey}` }),
        },
        body: JSON.stringify({ model: options.model, ...body }),
        signal,
      },
    );
    return { response, text: await readAnswer(response) };
  } catch (error) {
    if (!signal.aborted) throw error;
    throw new Error(
      `the model did not answer within ${seconds} s (--model-timeout)`,
    );
  }
}

/** A response's body as text, at most `MAX_MESSAGE_BYTES` of it. */
async function readAnswer(response: Response): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    if ((size += chunk.length) > MAX_MESSAGE_BYTES) {
      throw new Error(`the model's answer is over ${MAX_MESSAGE_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return await new Blob(chunks as BlobPart[]).text();
}

/** A function tool as the model is offered it. */
type OfferedTool = ReturnType<typeof offered>;
const offered = (name: string, description: string, parameters: object) => ({
  type: "function" as const,
  function: { name, description, parameters },
});

/**
 * The function tools the model is offered: resources, then the server's
 * tools, at most `MAX_TOOLS` in all, none longer than `MAX_CONTENT_CHARS`
 * as JSON (name, description and schema).
 */
async function toolsFor(client: Client): Promise<OfferedTool[]> {
  const uri = { type: "object", properties: { uri: { type: "string" } } };
  const { tools } = client.getServerCapabilities()?.tools
    ? await client.listTools()
    : { tools: [] };
  const all = [
    offered("read_resource", "Read an MCP resource by its URI", uri),
    offered("list_resources", "List the MCP server's resources", {
      type: "object",
    }),
    ...tools.map((tool) =>
      offered(`mcp__${tool.name}`, tool.description ?? "", tool.inputSchema)
    ),
  ].filter((tool) => JSON.stringify(tool).length <= MAX_CONTENT_CHARS)
    .slice(0, MAX_TOOLS);
  if (all.length < tools.length + 2) {
    say(
      `the server offers ${tools.length} tools: the model is offered ${
        all.length - 2
      } of them (at most ${MAX_TOOLS} tools in all, none over ${MAX_CONTENT_CHARS} characters)`,
    );
  }
  return all;
}

/**
 * fetch for the MCP server, each message it sends at most
 * `MAX_MESSAGE_BYTES`: a JSON body whole, an event stream event by event
 * (the bytes since its last blank line). Past that the body fails and no
 * more of it is read; the request it answered fails with it (JSON) or at
 * the SDK's timeout (an event stream).
 */
async function boundedFetch(url: string | URL, init?: RequestInit) {
  const response = await fetch(url, init);
  if (!response.body) return response;
  const events = isEventStream(response);
  let size = 0;
  let previous = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!events) size += chunk.length;
        else {
          for (const byte of chunk) {
            if (byte === 13) continue; // CRLF ends a line as LF does
            size = byte === 10 && previous === 10 ? 0 : size + 1;
            previous = byte;
          }
        }
        if (size <= MAX_MESSAGE_BYTES) return controller.enqueue(chunk);
        const tooLarge =
          `the server sent a message over ${MAX_MESSAGE_BYTES} bytes`;
        say(`${tooLarge}: not read`);
        controller.error(new Error(tooLarge));
      },
    }),
  );
  return new Response(body, response);
}

/**
 * The `--stdio` server, one JSON-RPC message a line each way (a line over
 * `MAX_MESSAGE_BYTES` is not read), its stderr passed on as `[server] …`
 * lines. It runs in a process group of its own, so that `close` ends it
 * and all it started: stdin closed, then SIGTERM, then SIGKILL to the
 * group, `STOP_GRACE_MS` apart. (The SDK's `StdioClientTransport` signals
 * the server alone, and under Deno its SIGKILL after a SIGTERM is never
 * sent: a server that ignores both outlives the host.)
 */
class StdioServer implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  #child?: Deno.ChildProcess;
  #stdin?: WritableStreamDefaultWriter<Uint8Array>;
  #stderrPassed?: Promise<void>;
  #closing?: Promise<void>;

  constructor(private readonly command: string[]) {}

  start(): Promise<void> {
    const [program, ...args] = this.command;
    this.#child = new Deno.Command(program, {
      args,
      // The SDK's few safe variables (HOME, PATH, …), never the key.
      clearEnv: true,
      env: getDefaultEnvironment(),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      detached: true,
    }).spawn();
    this.#stdin = this.#child.stdin.getWriter();
    this.#read(this.#child.stdout).catch((error) => this.onerror?.(error));
    this.#stderrPassed = this.#passOn(this.#child.stderr).catch(() => {});
    this.#child.status.then(() => this.onclose?.());
    return Promise.resolve();
  }

  async #read(stdout: ReadableStream<Uint8Array>) {
    for await (const read of boundedLines(stdout, MAX_MESSAGE_BYTES)) {
      if ("tooLong" in read) {
        say(
          `the server sent a message over ${MAX_MESSAGE_BYTES} bytes: not read`,
        );
        continue;
      }
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(read.line);
      } catch {
        say(`the server printed a line that is not JSON-RPC: ${read.line}`);
        continue;
      }
      this.onmessage?.(message);
    }
  }

  async #passOn(stderr: ReadableStream<Uint8Array>) {
    for await (const read of boundedLines(stderr, MAX_MESSAGE_BYTES)) {
      console.error(
        "line" in read
          ? `[server] ${printable(read.line)}`
          : `[server] (a line of ${read.tooLong} bytes, not shown)`,
      );
    }
  }

  async send(message: JSONRPCMessage) {
    if (!this.#stdin) throw new Error("the server is not running");
    await this.#stdin.write(
      new TextEncoder().encode(serializeMessage(message)),
    );
  }

  /** Ends the server, however often it is called: EOF, then `stop`. */
  close(): Promise<void> {
    return this.#closing ??= this.#end();
  }

  async #end() {
    if (!this.#child) return;
    // Not awaited: a server that reads nothing would hold it for ever.
    this.#stdin?.close().catch(() => {});
    if (await within(this.#child.status, STOP_GRACE_MS) === "late") {
      await this.stop("SIGTERM");
    }
    // What the server started and left behind is in its group.
    this.#signal("SIGKILL");
    // Its last lines (the lab's verdict) are printed before the host ends.
    await within(this.#stderrPassed!, STOP_GRACE_MS);
  }

  /** `signal` to the server's group, then SIGKILL if it has not exited. */
  async stop(signal: Deno.Signal) {
    if (!this.#child) return;
    this.#signal(signal);
    if (await within(this.#child.status, STOP_GRACE_MS) === "late") {
      this.#signal("SIGKILL");
    }
    await this.#child.status;
  }

  /** A signal to the server's process group (Windows has none: to it). */
  #signal(signal: Deno.Signal) {
    try {
      if (Deno.build.os === "windows") this.#child?.kill(signal);
      else if (this.#child) Deno.kill(-this.#child.pid, signal);
    } catch {
      // Gone already.
    }
  }
}

/** Runs one of the model's tool calls; a failure is the call's result. */
async function runTool(client: Client, watch: ResourceWatch, call: ToolCall) {
  const { name, arguments: raw } = call.function;
  try {
    const input = JSON.parse(raw || "{}");
    if (name === "read_resource") return await watch.read(String(input.uri));
    if (name === "list_resources") {
      return JSON.stringify((await client.listResources()).resources);
    }
    const result = await client.callTool({
      name: name.replace(/^mcp__/, ""),
      arguments: input,
    });
    return JSON.stringify(result.content);
  } catch (error) {
    return `The call failed: ${(error as Error).message}`;
  }
}

/** The agent loop: updates in, ask, run the tools, until the model answers. */
async function converse(
  options: HostOptions,
  client: Client,
  inline?: InlineUpdates,
): Promise<string> {
  const on = !options["no-updates"];
  const listen = new Listen(client);
  const watch = new ResourceWatch(client, on, listen, inline);
  const catalog = new Catalog(client, on);
  const messages: Message[] = [{ role: "user", content: options.prompt }];
  try {
    await catalog.start(listen);
    for (let request = 0; request < MAX_MODEL_REQUESTS; request++) {
      messages.push(...await watch.takeUpdates());
      const tools = await catalog.tools();
      const answer = await askModel(options, { messages, tools });
      const asked = answer.tool_calls ?? [];
      if (asked.length === 0) return answer.content ?? "";
      // Each call kept in the conversation needs its result: the rest go.
      const calls = asked.slice(0, MAX_TOOL_CALLS);
      if (asked.length > calls.length) {
        say(
          `the model asked for ${asked.length} tool calls at once: the host runs the first ${calls.length}`,
        );
      }
      messages.push({
        role: "assistant",
        content: answer.content ?? null,
        tool_calls: calls,
      });
      for (const call of calls) {
        say(`the model calls ${JSON.stringify(call.function.name)}`);
        const content = bounded(await runTool(client, watch, call));
        messages.push({ role: "tool", tool_call_id: call.id, content });
      }
    }
    throw new Error(`no answer after ${MAX_MODEL_REQUESTS} model requests`);
  } finally {
    await listen.close().catch(() => {});
    await watch.stop().catch(() => {});
  }
}

/** Connects, converses, prints the model's answer; the exit status. */
async function hostMain(
  args: string[],
  env: Record<string, string | undefined> = Deno.env.toObject(),
): Promise<number> {
  let options: HostOptions | "help";
  try {
    options = parseHostArgs(args, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`reference-host error: ${error.message}`);
    return 2;
  }
  if (options === "help") {
    console.log(HOST_USAGE);
    return 0;
  }
  secret = options.apiKey;
  const era = options.era;
  const client = new Client({ name: "reference-host", version: LAB_VERSION }, {
    versionNegotiation: {
      mode: era === "auto" ? "auto" : era === "2025" ? "legacy" : { pin: era },
    },
  });
  const transport = transportFor(options);
  const inline = options["no-updates"]
    ? undefined
    : new InlineUpdates(transport);
  try {
    await client.connect(transport);
    const answer = await converse(options, client, inline);
    console.log(printable(answer, MAX_MESSAGE_BYTES));
    return 0;
  } catch (error) {
    say(`failed: ${(error as Error).message}`);
    return 1;
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) {
      await transport.terminateSession().catch(() => {});
    }
    await client.close().catch(() => {});
    // Connected or not, a stdio server ends before the host.
    if (transport instanceof StdioServer) await transport.close();
  }
}

/**
 * The server's transport. A stdio server's process group does not get a
 * Ctrl-C or a SIGTERM sent to the host's, so the host passes it on, and
 * ends (130 or 143, as a shell reports a process the signal ended).
 */
function transportFor(options: HostOptions): Transport {
  if (options.url) {
    return new StreamableHTTPClientTransport(new URL(options.url), {
      fetch: boundedFetch,
    });
  }
  const server = new StdioServer(options.stdio!);
  for (const signal of shutdownSignals(Deno.build.os)) {
    try {
      Deno.addSignalListener(signal, async () => {
        say(`${signal}: the host ends its server, then itself`);
        await server.stop(signal);
        Deno.exit(signal === "SIGINT" ? 130 : 143);
      });
    } catch {
      // Not a signal of this system.
    }
  }
  return server;
}

if (import.meta.main) Deno.exit(await hostMain(Deno.args));
