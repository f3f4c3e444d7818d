/**
 * The reference host's agent loop (`converse`): before each model request
 * the updates (`ResourceWatch`) and the tools as they are now (`Catalog`),
 * then the model's tool calls run (`runTool`), until the model answers.
 *
 * @module
 */

import type { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import {
  bounded,
  MAX_MODEL_REQUESTS,
  MAX_TOOL_CALLS,
  say,
} from "./host_bounds.ts";
import type { HostOptions } from "./host_args.ts";
import { askModel, type Message, type ToolCall } from "./chat_model.ts";
import { Listen } from "./listen_stream.ts";
import type { Reopen } from "./stream_reopen.ts";
import type { InlineUpdates } from "./inline_updates.ts";
import { ResourceWatch } from "./resource_watch.ts";
import { Catalog, listKept } from "./server_catalog.ts";

/** Runs one of the model's tool calls; a failure is the call's result. */
async function runTool(
  client: Client,
  { watch, catalog }: { watch: ResourceWatch; catalog: Catalog },
  call: ToolCall,
) {
  const { name, arguments: raw } = call.function;
  try {
    const input = JSON.parse(raw || "{}");
    if (name === "read_resource") return await watch.read(String(input.uri));
    if (name === "list_resources") {
      return JSON.stringify(await listKept(client, "resources"));
    }
    const tool = name.replace(/^mcp__/, "");
    const toolDefinition = catalog.definition(tool);
    // Any other the SDK would list the tools again for, unbounded.
    if (!toolDefinition) return `The call failed: no tool ${name} was offered`;
    const result = await client.callTool({ name: tool, arguments: input }, {
      toolDefinition,
    });
    return JSON.stringify(result.content);
  } catch (error) {
    return `The call failed: ${(error as Error).message}`;
  }
}

/** The agent loop: updates in, ask, run the tools, until the model answers. */
export async function converse(
  options: HostOptions,
  client: Client,
  reopen: Reopen,
  inline?: InlineUpdates,
): Promise<string> {
  const on = !options["no-updates"];
  const listen = new Listen(client, reopen);
  const watch = new ResourceWatch(client, on, listen, reopen, inline);
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
        const content = bounded(
          await runTool(client, { watch, catalog }, call),
        );
        messages.push({ role: "tool", tool_call_id: call.id, content });
      }
    }
    throw new Error(`no answer after ${MAX_MODEL_REQUESTS} model requests`);
  } finally {
    await listen.close().catch(() => {});
    await watch.stop().catch(() => {});
  }
}
