/**
 * A stand-in agent CLI for the harness tests: the client the lab hopes for.
 * It speaks MCP 2025 to the lab with plain fetch, subscribes, opens the GET
 * stream, re-reads the resource when notified and puts the new text into the
 * conversation it sends the model (Anthropic Messages, streaming). Run by
 * `runners/agent_test.ts` through the real runner, in an isolated HOME, with
 * `--cached-only` and the test's DENO_DIR: the lab's modules it imports
 * (for `REVIEW_URI`) come from that cache, never from the network. Never
 * published.
 *
 * With `plain` after the prompt it is the client the field has instead: it
 * neither subscribes nor opens the GET stream, but offers the model the
 * lab's MCP tools (as `mcp__lab__<tool>`) and a `Bash` tool that runs a
 * command with `sh -c`, so the harness's wait-tool and shell-probe routes
 * can be tested end to end.
 *
 * With `notice` it subscribes, but when notified tells the model only that
 * the resource changed, in a notice marked as oh-my-pi marks its own
 * ("[MCP notification] …"), and leaves the re-read to the model.
 *
 * With `catalog` it subscribes too, offers the model the lab's tools as
 * `mcp__lab__<tool>`, and lists them again on
 * `notifications/tools/list_changed`, offering the new list from the next
 * request on (what the lab's catalog change hopes for); with
 * `catalog-stale` it lists them again but keeps offering the first list.
 *
 * Usage: fake_agent.ts <lab url> <model origin> <prompt>
 *   [plain|notice|catalog|catalog-stale]
 *
 * @module
 */

import { REVIEW_URI } from "../../main.ts";

const [labUrl, modelOrigin, prompt, flavour] = Deno.args;
const plain = flavour === "plain";
const noticeOnly = flavour === "notice";
const catalog = flavour === "catalog" || flavour === "catalog-stale";
const PROTOCOL = "2025-11-25";

let sessionId = "";
let nextId = 1;

interface JsonRpcResponse {
  id?: number;
  result?: Record<string, unknown>;
  error?: unknown;
}

function sseMessages(text: string): JsonRpcResponse[] {
  return text.split(/\r?\n\r?\n/).flatMap((block) => {
    const data = block.split(/\r?\n/).filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trim()).join("\n");
    return data ? [JSON.parse(data) as JsonRpcResponse] : [];
  });
}

async function mcp(
  method: string,
  params: Record<string, unknown> = {},
  notification = false,
): Promise<Record<string, unknown>> {
  const id = nextId++;
  const response = await fetch(labUrl, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": PROTOCOL,
      ...(sessionId ? { "mcp-session-id": sessionId } : {}),
    },
    body: JSON.stringify(
      notification
        ? { jsonrpc: "2.0", method, params }
        : { jsonrpc: "2.0", id, method, params },
    ),
  });
  sessionId = response.headers.get("mcp-session-id") ?? sessionId;
  const text = await response.text();
  if (notification) return {};
  const messages = response.headers.get("content-type")?.includes(
      "event-stream",
    )
    ? sseMessages(text)
    : [JSON.parse(text) as JsonRpcResponse];
  const answer = messages.find((message) => message.id === id);
  if (!answer?.result) throw new Error(`${method} failed: ${text}`);
  return answer.result;
}

async function readResource(): Promise<string> {
  const result = await mcp("resources/read", { uri: REVIEW_URI });
  return JSON.stringify(result);
}

await mcp("initialize", {
  protocolVersion: PROTOCOL,
  capabilities: {},
  clientInfo: { name: "fake-agent", version: "1.0.0" },
});
await mcp("notifications/initialized", {}, true);

// Updates the agent has not yet shown the model.
const pendingUpdates: string[] = [];
const stream = new AbortController();

async function subscribe() {
  const opened = Promise.withResolvers<void>();
  (async () => {
    const response = await fetch(labUrl, {
      headers: {
        accept: "text/event-stream",
        "mcp-protocol-version": PROTOCOL,
        "mcp-session-id": sessionId,
      },
      signal: stream.signal,
    });
    opened.resolve();
    let buffer = "";
    for await (
      const chunk of response.body!.pipeThrough(new TextDecoderStream())
    ) {
      buffer += chunk;
      const blocks = buffer.split(/\r?\n\r?\n/);
      buffer = blocks.pop() ?? "";
      for (const message of sseMessages(blocks.join("\n\n"))) {
        const method = (message as { method?: string }).method;
        if (method === "notifications/tools/list_changed") {
          const relisted = await listTools();
          if (flavour === "catalog") mcpTools.splice(0, Infinity, ...relisted);
        }
        if (method === "notifications/resources/updated") {
          pendingUpdates.push(
            noticeOnly
              ? `[MCP notification] 1 resource(s) updated:\n- server="lab" uri=${REVIEW_URI}`
              : `Resource ${REVIEW_URI} changed:\n${await readResource()}`,
          );
        }
      }
    }
  })().catch(() => opened.resolve());
  await opened.promise;
  await mcp("resources/list");
  await mcp("resources/subscribe", { uri: REVIEW_URI });
}

/** The lab's tools by name, as `tools/list` gives them now. */
async function listTools(): Promise<string[]> {
  return ((await mcp("tools/list")).tools as { name: string }[]).map((tool) =>
    tool.name
  );
}

// The lab's tools the model is offered (a `catalog` agent's list changes).
const mcpTools: string[] = [];
if (plain) {
  await mcp("resources/list");
} else {
  await subscribe();
}
if (plain || catalog) mcpTools.push(...await listTools());

type Block = Record<string, unknown>;
const messages: { role: string; content: string | Block[] }[] = [
  { role: "user", content: prompt },
];
/** The tools a request offers: the lab's as listed now, and the agent's own. */
const tools = () => [
  { name: "ListMcpResourcesTool", input_schema: { type: "object" } },
  { name: "ReadMcpResourceTool", input_schema: { type: "object" } },
  ...mcpTools.map((name) => ({
    name: `mcp__lab__${name}`,
    input_schema: { type: "object" },
  })),
  ...(plain ? [{ name: "Bash", input_schema: { type: "object" } }] : []),
];

/** Runs one of the model's tool calls, as a client would. */
async function runTool(
  name: string,
  input: Record<string, unknown>,
): Promise<string> {
  if (name === "ReadMcpResourceTool") return await readResource();
  if (name === "Bash") {
    const { stdout, stderr } = await new Deno.Command("sh", {
      args: ["-c", String(input.command)],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    return decoder.decode(stdout) + decoder.decode(stderr);
  }
  if (name.startsWith("mcp__lab__")) {
    return JSON.stringify(
      await mcp("tools/call", {
        name: name.slice("mcp__lab__".length),
        arguments: input,
      }),
    );
  }
  return JSON.stringify(await mcp("resources/list"));
}
for (let turn = 0; turn < 10; turn++) {
  const response = await fetch(`${modelOrigin}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": "fake" },
    body: JSON.stringify({
      model: "fake",
      max_tokens: 1024,
      stream: true,
      messages,
      tools: tools(),
    }),
  });
  const frames = sseMessages(await response.text()) as unknown as Block[];
  const start = frames.find((frame) => frame.type === "content_block_start")
    ?.content_block as Block;
  const delta = frames.find((frame) => frame.type === "content_block_delta")
    ?.delta as Block;
  if (start.type === "text") {
    console.log(delta.text);
    break;
  }
  const input = JSON.parse(String(delta.partial_json));
  messages.push({
    role: "assistant",
    content: [{ ...start, input }],
  });
  const output = await runTool(String(start.name), input);
  const content: Block[] = [
    { type: "tool_result", tool_use_id: start.id, content: output },
  ];
  // What the lab hopes clients do: bring the update into the context.
  for (const update of pendingUpdates.splice(0)) {
    content.push({ type: "text", text: update });
  }
  messages.push({ role: "user", content });
}
stream.abort();
