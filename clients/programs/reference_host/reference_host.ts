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
 * It holds one stream for all it follows: in 2025 the SDK's GET stream;
 * in 2026-07-28 one listen, closed and opened anew with the wider filter
 * when the conversation reads one more resource (a server that caps
 * listens counts the old one until it is closed). When the server ends
 * that stream (a listen's result, a dropped connection, a GET stream's
 * end) the host opens it again after a wait (`Reopen`): `--reopen-wait`
 * seconds (1 unless given), doubled for each stream in a row that lived
 * under 60 s, at most 60 s, each cut by up to a quarter at random. An update the server sent while the stream was
 * closed reached no stream, so once it is open again the host reads each
 * resource it watches again and, if the text differs from what the model
 * has, brings it as an update, marked as the others are. A watch the
 * server refuses (an error answer to
 * `resources/subscribe` or `subscriptions/listen`) is never asked again,
 * one its listen's acknowledgement left out is not asked again either, and
 * a server that does not offer `resources.subscribe` is not asked at all:
 * before the next model request the model gets a message, marked as the
 * updates are, that the resource is not watched and why (the server's
 * words escaped and cut), so it can read it again itself. A listen that
 * honours nothing is closed.
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
 * changes: the negative control; `--no-reopen` never opens a stream again
 * after the server ended it: the control for a cut stream;
 * `--reopen-wait` waits longer before the first re-open, for a server
 * whose cut is known (a stream it ends at a fixed lifetime). A model
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
 * 6. `stream_reopen.ts`: when a stream the server ended opens again.
 * 7. `mcp_connection.ts`: the client in its era, its transport (the
 *    2025 GET stream opened again when `Reopen` says).
 * 8. `listen_stream.ts`: the 2026-07-28 listen, one at a time, opened
 *    again, refused or narrowed.
 * 9. `inline_updates.ts`: the content an update carries (SEP-3119).
 * 10. `resource_watch.ts`: the resources read, watched (or not, and the
 *    model told why), their updates brought to the model.
 * 11. `server_catalog.ts`: the server's lists kept current, the tools
 *    offered.
 * 12. `agent_loop.ts`: the conversation with the model.
 * 13. `reference_host.ts`, this one: the program.
 *
 * @module
 */

import { hideKey, MAX_MESSAGE_BYTES, printable, say } from "./host_bounds.ts";
import { HOST_USAGE, type HostOptions, parseHostArgs } from "./host_args.ts";
import { ConfigError } from "../../../main.ts";
import { endConnection, hostClient, transportFor } from "./mcp_connection.ts";
import { InlineUpdates } from "./inline_updates.ts";
import { Reopen } from "./stream_reopen.ts";
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
  const reopen = new Reopen(
    !options["no-reopen"],
    options["reopen-wait"] * 1000,
  );
  const transport = transportFor(options, reopen);
  const inline = options["no-updates"]
    ? undefined
    : new InlineUpdates(transport);
  try {
    await client.connect(transport);
    const answer = await converse(options, client, reopen, inline);
    console.log(printable(answer, MAX_MESSAGE_BYTES));
    return 0;
  } catch (error) {
    say(`failed: ${(error as Error).message}`);
    return 1;
  } finally {
    // Streams the host's own end closes are not opened again.
    reopen.stop();
    await endConnection(client, transport);
  }
}

if (import.meta.main) Deno.exit(await hostMain(Deno.args));
