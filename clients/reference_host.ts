/**
 * A reference MCP host: an agent loop that brings resource updates to its
 * model. It is what the lab calls level 7, in a file short enough to read
 * and copy from.
 *
 * The story: the host connects to one MCP server and offers its model three
 * kinds of tools, `read_resource`, `list_resources` and the server's own
 * tools. When the model reads a resource, the host remembers that this
 * conversation has seen it and asks the server to say when it changes:
 * `resources/subscribe` in the 2025 era, a `subscriptions/listen` stream
 * with the resource in `resourceSubscriptions` in 2026-07-28. When
 * `notifications/resources/updated` names a resource the conversation has
 * read, the host reads it again at once and keeps the new text. Before its
 * next request to the model, it adds one message per changed resource,
 * marked as an update from the server (which resource, when), holding the
 * latest text: several notifications in between give one entry. The model
 * never has to ask. Updates for resources it never read are ignored, and
 * every text that enters the conversation is cut to `MAX_CONTENT_CHARS`.
 *
 * ```sh
 * deno run -A clients/reference_host.ts --url http://127.0.0.1:8089/mcp \
 *   --model gpt-4.1 "Read test://review/status and tell me when it changes"
 * deno run -A clients/reference_host.ts --era 2026-07-28 --model m PROMPT \
 *   --stdio -- deno run -A main.ts --stdio
 * ```
 *
 * The model is any OpenAI-compatible Chat Completions endpoint:
 * `--base-url` (or `OPENAI_BASE_URL`), `--model` (`OPENAI_MODEL`) and the key
 * in `OPENAI_API_KEY` (or `--api-key`), never printed. `--no-updates` turns
 * the update handling off (no subscription, notifications ignored): the
 * host as most agents ship, the negative control. The model's answer goes to
 * stdout, the host's own lines to stderr; exit 0 once the model answered, 1
 * when the server or the model failed, 2 for a bad flag.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import {
  Client,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { ConfigError, LAB_VERSION, lineText, parseFlags } from "../main.ts";

/** The most characters of one resource or tool result the model is shown. */
export const MAX_CONTENT_CHARS = 16_000;
/** The most bytes of one model response the host reads. */
const MAX_MODEL_RESPONSE_BYTES = 4 * 1024 * 1024;
/** The most requests one prompt may take. */
const MAX_MODEL_REQUESTS = 12;

/** The mark that opens an update message, so a reader of a transcript finds it. */
export const UPDATE_MARK = "[Update from the MCP server]";

const optionsSchema = z.object({
  url: z.url({ protocol: /^https?$/ }).optional(),
  stdio: z.array(z.string()).optional(),
  era: z.enum(["auto", "2025", "2026-07-28"], {
    error: "--era must be auto, 2025 or 2026-07-28",
  }),
  baseUrl: z.url({ error: "--base-url (OPENAI_BASE_URL) is not a URL" }),
  model: z.string().min(1, "no model: pass --model or set OPENAI_MODEL"),
  apiKey: z.string(),
  updates: z.boolean(),
  prompt: z.string().min(1, "no prompt: give it after the flags"),
}).refine((options) => (options.url === undefined) !== !options.stdio, {
  error: "give --url URL or --stdio -- COMMAND…, not both",
});
type HostOptions = z.output<typeof optionsSchema>;

/** The command line, as `optionsSchema` checks it; a `ConfigError` if bad. */
export function parseHostArgs(args: string[], env = Deno.env.toObject()) {
  const split = args.indexOf("--");
  const { values, positionals } = parseFlags(
    split < 0 ? args : args.slice(0, split),
    {
      url: { type: "string" },
      stdio: { type: "boolean" },
      era: { type: "string", default: "auto" },
      "base-url": { type: "string" },
      model: { type: "string" },
      "api-key": { type: "string" },
      "no-updates": { type: "boolean", default: false },
    },
    { allowPositionals: true, help: "the module doc of reference_host.ts" },
  );
  const parsed = optionsSchema.safeParse({
    url: values.url,
    stdio: values.stdio ? args.slice(split + 1) : undefined,
    era: values.era,
    baseUrl: values["base-url"] ?? env.OPENAI_BASE_URL ??
      "https://api.openai.com/v1",
    model: values.model ?? env.OPENAI_MODEL ?? "",
    apiKey: values["api-key"] ?? env.OPENAI_API_KEY ?? "",
    updates: !values["no-updates"],
    prompt: positionals.join(" "),
  });
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues[0].message);
}

/** Text cut to `MAX_CONTENT_CHARS`, saying how much was left out. */
function bounded(text: string): string {
  return text.length <= MAX_CONTENT_CHARS
    ? text
    : `${text.slice(0, MAX_CONTENT_CHARS)}\n[… ${
      text.length - MAX_CONTENT_CHARS
    } more characters not shown]`;
}

/** One of the host's own lines on stderr; server and model text escaped. */
function say(words: string) {
  console.error(`[host] ${lineText(words)}`);
}

/**
 * The heart of the host: which resources the conversation has read, how
 * the server is asked to watch them, and the updates not yet shown to the
 * model (the latest per resource).
 */
class ResourceWatch {
  #read = new Set<string>();
  #pending = new Map<string, { at: Date; text: string }>();
  #rereads = new Set<Promise<void>>();
  #listen?: Awaited<ReturnType<Client["listen"]>>;

  constructor(private readonly client: Client, private readonly on: boolean) {
    if (!on) return;
    client.setNotificationHandler(
      "notifications/resources/updated",
      ({ params }) => this.#updated(params.uri),
    );
  }

  /** Reads a resource for the model, then asks to hear when it changes. */
  async read(uri: string): Promise<string> {
    const text = await this.#text(uri);
    if (this.on && !this.#read.has(uri)) {
      this.#read.add(uri);
      await this.#watch(uri);
    }
    return text;
  }

  async #text(uri: string): Promise<string> {
    const { contents } = await this.client.readResource({ uri });
    return contents.map((part) => "text" in part ? part.text : "(binary)")
      .join("\n");
  }

  /** 2025: subscribe to this URI; 2026-07-28: one listen for every URI read. */
  async #watch(uri: string) {
    if (this.client.getNegotiatedProtocolVersion() !== "2026-07-28") {
      await this.client.subscribeResource({ uri });
      return say(`subscribed to ${JSON.stringify(uri)}`);
    }
    const previous = this.#listen;
    this.#listen = await this.client.listen({
      resourceSubscriptions: [...this.#read],
    });
    await previous?.close();
    const honored = this.#listen.honoredFilter.resourceSubscriptions ?? [];
    say(`listening for ${JSON.stringify(honored)}`);
  }

  /** A notification: re-read a resource the conversation knows, keep the latest. */
  #updated(uri: string) {
    if (!this.#read.has(uri)) return;
    const reread = this.#text(uri).then(
      (text) => {
        this.#pending.set(uri, { at: new Date(), text });
        say(`${JSON.stringify(uri)} changed; re-read for the model`);
      },
      (error) => say(`re-reading ${JSON.stringify(uri)} failed: ${error}`),
    ).finally(() => this.#rereads.delete(reread));
    this.#rereads.add(reread);
  }

  /** The update messages for the next model request, one per resource. */
  async takeUpdates(): Promise<Message[]> {
    await Promise.all(this.#rereads);
    const updates = [...this.#pending].map(([uri, { at, text }]) => ({
      role: "user" as const,
      content: `${UPDATE_MARK} ${uri} changed at ${at.toISOString()} ` +
        `(the server notified the host, which read it again). ` +
        `Its content now:\n${bounded(text)}`,
    }));
    this.#pending.clear();
    return updates;
  }

  /** Stops watching: unsubscribe (2025) or close the listen (2026-07-28). */
  async stop() {
    await this.#listen?.close();
    if (this.client.getNegotiatedProtocolVersion() === "2026-07-28") return;
    for (const uri of this.#read) {
      await this.client.unsubscribeResource({ uri }).catch(() => {});
    }
  }
}

/** A Chat Completions message, as far as this host uses them. */
type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

const modelAnswerSchema = z.object({
  choices: z.array(z.object({
    message: z.object({
      content: z.string().nullish(),
      tool_calls: z.array(z.object({
        id: z.string(),
        type: z.literal("function"),
        function: z.object({ name: z.string(), arguments: z.string() }),
      })).nullish(),
    }),
  })).min(1),
});

/** One request to the model: its next message. */
async function askModel(
  options: HostOptions,
  messages: Message[],
  tools: unknown[],
) {
  const response = await fetch(
    `${options.baseUrl.replace(/\/$/, "")}/chat/completions`,
    {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${options.apiKey}`,
      },
      body: JSON.stringify({ model: options.model, messages, tools }),
    },
  );
  const reader = response.body?.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (let read = await reader?.read(); read && !read.done;) {
    size += read.value.length;
    if (size > MAX_MODEL_RESPONSE_BYTES) {
      await reader?.cancel();
      throw new Error(`the model's answer is over ${size} bytes`);
    }
    parts.push(read.value);
    read = await reader?.read();
  }
  const text = await new Blob(parts as BlobPart[]).text();
  if (!response.ok) {
    throw new Error(
      `the model answered ${response.status}: ${text.slice(0, 300)}`,
    );
  }
  return modelAnswerSchema.parse(JSON.parse(text)).choices[0].message;
}

/** The function tools the model is offered: resources, then the server's tools. */
async function toolsFor(client: Client) {
  const uri = {
    type: "object",
    properties: { uri: { type: "string" } },
    required: ["uri"],
  };
  const own = [
    ["read_resource", "Read an MCP resource by its URI", uri],
    ["list_resources", "List the MCP server's resources", { type: "object" }],
  ];
  const { tools } = client.getServerCapabilities()?.tools
    ? await client.listTools()
    : { tools: [] };
  return [
    ...own,
    ...tools.map((tool) => [
      `mcp__${tool.name}`,
      tool.description ?? "",
      tool.inputSchema,
    ]),
  ].map(([name, description, parameters]) => ({
    type: "function",
    function: { name, description, parameters },
  }));
}

/** Runs one tool call of the model's; a failure is the call's result. */
async function runTool(client: Client, watch: ResourceWatch, call: ToolCall) {
  try {
    const input = JSON.parse(call.function.arguments || "{}");
    if (call.function.name === "read_resource") {
      return await watch.read(String(input.uri));
    }
    if (call.function.name === "list_resources") {
      return JSON.stringify((await client.listResources()).resources);
    }
    const name = call.function.name.replace(/^mcp__/, "");
    const result = await client.callTool({ name, arguments: input });
    return JSON.stringify(result.content);
  } catch (error) {
    return `The call failed: ${(error as Error).message}`;
  }
}

/** The agent loop: ask, run the tools, bring in updates, until the model answers. */
async function converse(options: HostOptions, client: Client): Promise<string> {
  const watch = new ResourceWatch(client, options.updates);
  const tools = await toolsFor(client);
  const messages: Message[] = [{ role: "user", content: options.prompt }];
  try {
    for (let request = 0; request < MAX_MODEL_REQUESTS; request++) {
      messages.push(...await watch.takeUpdates());
      const answer = await askModel(options, messages, tools);
      const calls = answer.tool_calls ?? [];
      messages.push({
        role: "assistant",
        content: answer.content ?? null,
        ...calls.length > 0 ? { tool_calls: calls } : {},
      });
      if (calls.length === 0) return answer.content ?? "";
      for (const call of calls) {
        say(`the model calls ${JSON.stringify(call.function.name)}`);
        const result = await runTool(client, watch, call);
        messages.push({
          role: "tool",
          tool_call_id: call.id,
          content: bounded(result),
        });
      }
    }
    throw new Error(`no answer after ${MAX_MODEL_REQUESTS} model requests`);
  } finally {
    await watch.stop().catch(() => {});
  }
}

/** Connects to the server, runs the conversation, prints the answer; the exit status. */
export async function hostMain(args: string[]): Promise<number> {
  let options: HostOptions;
  try {
    options = parseHostArgs(args);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`reference-host error: ${error.message}`);
    return 2;
  }
  const client = new Client({ name: "reference-host", version: LAB_VERSION }, {
    versionNegotiation: {
      mode: options.era === "auto"
        ? "auto"
        : options.era === "2025"
        ? "legacy"
        : { pin: "2026-07-28" },
    },
  });
  const [command, ...commandArgs] = options.stdio ?? [];
  // A stdio server gets the SDK's short list of safe variables, never the key.
  const transport = options.url
    ? new StreamableHTTPClientTransport(new URL(options.url))
    : new StdioClientTransport({ command, args: commandArgs });
  try {
    await client.connect(transport);
    const answer = await converse(options, client);
    console.log(lineText(answer));
    return 0;
  } catch (error) {
    say(`failed: ${(error as Error).message}`);
    return 1;
  } finally {
    if (transport instanceof StreamableHTTPClientTransport) {
      await transport.terminateSession().catch(() => {});
    }
    await client.close().catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await hostMain(Deno.args));
