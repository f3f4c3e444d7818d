/**
 * `Catalog`: the reference host keeps the server's lists current (tools,
 * prompts, resources), lists a kind again on its `list_changed`
 * notification, and offers the model the tools as the server last listed
 * them (`toolsFor`: resources first, then the server's tools, bounded).
 * Each list is read within its bounds (`listKept`): what they let through
 * is kept, the cut said.
 *
 * @module
 */

import type { Client, Tool } from "npm:@modelcontextprotocol/client@2.4.0";
import type { CatalogKind } from "../../../main.ts";
import { listBounded, type ListEntries } from "../../../probe.ts";
import {
  LIST_SECONDS,
  MAX_CONTENT_CHARS,
  MAX_TOOLS,
  say,
} from "./host_bounds.ts";
import { OnePerKey } from "./one_per_key.ts";
import { offered, type OfferedTool } from "./chat_model.ts";
import { isModern } from "./mcp_connection.ts";
import type { Listen } from "./listen_stream.ts";

/**
 * A list of the server's as far as the bounds on a whole list let the host
 * read it (`LIST_MAX_BYTES`, `LIST_MAX_PAGES`, `LIST_SECONDS`): the pages
 * before a cut are kept, and the cut said; an error the server answers
 * throws.
 */
export async function listKept<K extends CatalogKind>(
  client: Client,
  kind: K,
): Promise<ListEntries[K]> {
  const { entries, cut } = await listBounded(client, kind, LIST_SECONDS);
  if (cut) {
    say(
      `the server's ${kind}/list was cut, ${cut}: the host keeps the ${entries.length} ${kind} read before it and reads no more of it`,
    );
  }
  return entries;
}

/** The tools offered the model, and the server's definitions of its own. */
interface ToolsOffered {
  offered: OfferedTool[];
  definitions: Map<string, Tool>;
}

/**
 * The function tools the model is offered: resources, then the server's
 * tools, at most `MAX_TOOLS` in all, none longer than `MAX_CONTENT_CHARS`
 * as JSON (name, description and schema).
 */
async function toolsFor(client: Client): Promise<ToolsOffered> {
  const uri = { type: "object", properties: { uri: { type: "string" } } };
  const tools = await listKept(client, "tools");
  const own = tools.map((tool) => ({
    tool,
    offer: offered(
      `mcp__${tool.name}`,
      tool.description ?? "",
      tool.inputSchema,
    ),
  })).filter(({ offer }) => JSON.stringify(offer).length <= MAX_CONTENT_CHARS)
    .slice(0, MAX_TOOLS - 2);
  if (own.length < tools.length) {
    say(
      `the server offers ${tools.length} tools: the model is offered ${own.length} of them (at most ${MAX_TOOLS} tools in all, none over ${MAX_CONTENT_CHARS} characters)`,
    );
  }
  return {
    offered: [
      offered("read_resource", "Read an MCP resource by its URI", uri),
      offered("list_resources", "List the MCP server's resources", {
        type: "object",
      }),
      ...own.map(({ offer }) => offer),
    ],
    definitions: new Map(own.map(({ tool }) => [tool.name, tool])),
  };
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
export class Catalog {
  #tools: ToolsOffered = { offered: [], definitions: new Map() };
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
        ));
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
    return this.#tools.offered;
  }

  /**
   * The server's definition of a tool offered, for its call: the SDK then
   * validates the result and mirrors headers by it, and never lists the
   * tools again itself, unbounded.
   */
  definition(name: string): Tool | undefined {
    return this.#tools.definitions.get(name);
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
      names = [...this.#tools.definitions.keys()];
    } else if (kind === "prompts") {
      names = (await listKept(this.client, kind)).map((p) => p.name);
    } else {
      names = (await listKept(this.client, kind)).map((r) => r.uri);
    }
    return new Set(
      names.filter((name) => name.length <= MAX_CONTENT_CHARS)
        .slice(0, MAX_TOOLS),
    );
  }
}
