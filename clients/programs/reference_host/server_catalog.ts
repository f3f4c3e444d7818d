/**
 * `Catalog`: the reference host keeps the server's lists current (tools,
 * prompts, resources), lists a kind again on its `list_changed`
 * notification, and offers the model the tools as the server last listed
 * them (`toolsFor`: resources first, then the server's tools, bounded).
 *
 * @module
 */

import type { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { MAX_CONTENT_CHARS, MAX_TOOLS, say } from "./host_bounds.ts";
import { OnePerKey } from "./one_per_key.ts";
import { offered, type OfferedTool } from "./chat_model.ts";
import { isModern, type Listen } from "./mcp_connection.ts";

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
