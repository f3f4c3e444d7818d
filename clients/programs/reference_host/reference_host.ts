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
 * bound is a flag or a constant in `host_bounds.ts` (`HOST_USAGE` lists
 * them; a whole list's bytes and pages are `probe.ts`'s, whose
 * `listBounded` lists for both), and a stdio server runs in a process group
 * of its own (`StdioServer`), ended with the host.
 *
 * ```sh
 * OPENAI_API_KEY=… deno run -A clients/programs/reference_host/reference_host.ts --model gpt-4.1 \
 *   --url http://127.0.0.1:8089/mcp "Read test://review/status …"
 * deno run -A clients/programs/reference_host/reference_host.ts --era 2026-07-28 --model m PROMPT \
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
 * Its modules, each using only those before it:
 *
 * 1. `host_bounds.ts`: the bounds; the cuts of what the model is given
 *    and of what the host prints, the key taken out.
 * 2. `host_args.ts`: the command line (`HOST_USAGE`, `parseHostArgs`).
 * 3. `one_per_key.ts`: one task per key at a time (`OnePerKey`).
 * 4. `chat_model.ts`: the model's messages and tools, one request.
 * 5. `stdio_server.ts`: the `--stdio` server in its process group.
 * 6. `mcp_connection.ts`: the client in its era, its transport, the
 *    2026-07-28 listen.
 * 7. `inline_updates.ts`: the content an update carries (SEP-3119).
 * 8. `resource_watch.ts`: the resources read, watched, their updates
 *    brought to the model.
 * 9. `server_catalog.ts`: the server's lists kept current, the tools
 *    offered.
 * 10. `agent_loop.ts`: the conversation with the model.
 * 11. `reference_host.ts`, this one: the program.
 *
 * @module
 */

import { hideKey, MAX_MESSAGE_BYTES, printable, say } from "./host_bounds.ts";
import { HOST_USAGE, type HostOptions, parseHostArgs } from "./host_args.ts";
import { ConfigError } from "../../../main.ts";
import { endConnection, hostClient, transportFor } from "./mcp_connection.ts";
import { InlineUpdates } from "./inline_updates.ts";
import { converse } from "./agent_loop.ts";

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
  hideKey(options.apiKey);
  const client = hostClient(options.era);
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
    await endConnection(client, transport);
  }
}

if (import.meta.main) Deno.exit(await hostMain(Deno.args));
