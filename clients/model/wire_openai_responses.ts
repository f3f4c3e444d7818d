/**
 * OpenAI Responses (`POST /v1/responses`, streaming), the only API Codex CLI
 * speaks.
 *
 * @module
 */

import {
  arrayField,
  type Conversation,
  field,
  flattenText,
  parseArguments,
  stringField,
  type Turn,
} from "./conversation.ts";
import type { Action } from "./decide.ts";
import {
  jsonResponse,
  roughTokens,
  type SseFrame,
  sseResponse,
} from "./sse.ts";

/**
 * Tool names, including tools grouped under a namespace, which are named
 * `<namespace>__<tool>` (Codex groups a server's MCP tools under
 * `mcp__<server>`, and a call must name the namespace to reach them).
 */
function toolNames(tools: unknown[], namespace = ""): string[] {
  return tools.flatMap((tool) => {
    const nested = arrayField(tool, "tools");
    if (nested.length > 0) {
      return toolNames(nested, qualified(namespace, stringField(tool, "name")));
    }
    const name = stringField(tool, "name");
    return name === "" ? [] : [qualified(namespace, name)];
  });
}

function qualified(namespace: string, name: string): string {
  return namespace === "" || name === ""
    ? name || namespace
    : `${namespace}__${name}`;
}

/**
 * The function-call fields for a tool name as `toolNames` gives it: a
 * namespaced tool is called by its own name with its namespace beside it.
 */
export function callName(
  body: unknown,
  name: string,
): { name: string; namespace?: string } {
  for (const tool of arrayField(body, "tools")) {
    const namespace = stringField(tool, "name");
    if (
      namespace !== "" && arrayField(tool, "tools").length > 0 &&
      name.startsWith(`${namespace}__`)
    ) {
      return { name: name.slice(namespace.length + 2), namespace };
    }
  }
  return { name };
}

export function responsesConversation(body: unknown): Conversation {
  const turns: Turn[] = [];
  const instructions = stringField(body, "instructions");
  if (instructions !== "") {
    turns.push({ kind: "text", role: "system", text: instructions });
  }
  const input = field(body, "input");
  const items = typeof input === "string"
    ? [{ type: "message", role: "user", content: input }]
    : Array.isArray(input)
    ? input
    : [];
  for (const item of items) {
    const type = stringField(item, "type") || "message";
    if (type === "message") {
      const role = stringField(item, "role");
      turns.push({
        kind: "text",
        role: role === "assistant"
          ? "assistant"
          : role === "user"
          ? "user"
          : "system",
        text: flattenText(field(item, "content")),
      });
    } else if (type === "function_call" || type === "custom_tool_call") {
      turns.push({
        kind: "toolCall",
        name: qualified(
          stringField(item, "namespace"),
          stringField(item, "name"),
        ),
        input: parseArguments(field(item, "arguments") ?? field(item, "input")),
      });
    } else if (
      type === "function_call_output" || type === "custom_tool_call_output"
    ) {
      turns.push({
        kind: "toolResult",
        text: flattenText(field(item, "output")),
      });
    }
  }
  const format = stringField(field(field(body, "text"), "format"), "type");
  return {
    offeredTools: toolNames(arrayField(body, "tools")),
    turns,
    wantsJson: format === "json_schema",
  };
}

export function responsesAnswer(
  action: Action,
  request: { body: unknown; stream: boolean; model: string },
): Response {
  const responseId = `resp_${crypto.randomUUID().replaceAll("-", "")}`;
  const itemId = `${action.kind === "tool" ? "fc" : "msg"}_${
    crypto.randomUUID().replaceAll("-", "")
  }`;
  const createdAt = Math.floor(Date.now() / 1000);
  const item = action.kind === "tool"
    ? {
      id: itemId,
      type: "function_call",
      status: "completed",
      call_id: `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
      ...callName(request.body, action.name),
      arguments: JSON.stringify(action.input),
    }
    : {
      id: itemId,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: action.text, annotations: [] }],
    };
  const inputTokens = roughTokens(request.body);
  const outputTokens = roughTokens(item);
  const response = (status: string, output: unknown[]) => ({
    id: responseId,
    object: "response",
    created_at: createdAt,
    status,
    model: request.model,
    output,
    usage: status === "completed"
      ? {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + outputTokens,
      }
      : null,
  });
  if (!request.stream) return jsonResponse(response("completed", [item]));

  let sequence = 0;
  const frame = (type: string, fields: Record<string, unknown>): SseFrame => ({
    event: type,
    data: { type, sequence_number: sequence++, ...fields },
  });
  const frames: SseFrame[] = [
    frame("response.created", { response: response("in_progress", []) }),
    frame("response.in_progress", { response: response("in_progress", []) }),
  ];
  if (action.kind === "tool") {
    frames.push(
      frame("response.output_item.added", {
        output_index: 0,
        item: { ...item, status: "in_progress", arguments: "" },
      }),
      frame("response.function_call_arguments.delta", {
        item_id: itemId,
        output_index: 0,
        delta: JSON.stringify(action.input),
      }),
      frame("response.function_call_arguments.done", {
        item_id: itemId,
        output_index: 0,
        arguments: JSON.stringify(action.input),
      }),
    );
  } else {
    const part = { type: "output_text", text: "", annotations: [] };
    frames.push(
      frame("response.output_item.added", {
        output_index: 0,
        item: { ...item, status: "in_progress", content: [] },
      }),
      frame("response.content_part.added", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part,
      }),
      frame("response.output_text.delta", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta: action.text,
      }),
      frame("response.output_text.done", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        text: action.text,
      }),
      frame("response.content_part.done", {
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        part: { ...part, text: action.text },
      }),
    );
  }
  frames.push(
    frame("response.output_item.done", { output_index: 0, item }),
    frame("response.completed", { response: response("completed", [item]) }),
  );
  return sseResponse(frames);
}
