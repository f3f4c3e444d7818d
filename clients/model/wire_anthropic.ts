/**
 * Anthropic Messages (`POST /v1/messages`, streaming or not), as Claude Code
 * speaks it.
 *
 * @module
 */

import {
  arrayField,
  type Conversation,
  field,
  flattenText,
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

function blocks(content: unknown): unknown[] {
  return typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content)
    ? content
    : [];
}

export function anthropicConversation(body: unknown): Conversation {
  const turns: Turn[] = [];
  const system = field(body, "system");
  if (system !== undefined) {
    turns.push({ kind: "text", role: "system", text: flattenText(system) });
  }
  for (const message of arrayField(body, "messages")) {
    const role = stringField(message, "role") === "assistant"
      ? "assistant"
      : "user";
    for (const block of blocks(field(message, "content"))) {
      const type = stringField(block, "type");
      if (type === "tool_use") {
        turns.push({
          kind: "toolCall",
          name: stringField(block, "name"),
          input: field(block, "input") ?? {},
        });
      } else if (type === "tool_result") {
        turns.push({
          kind: "toolResult",
          text: flattenText(field(block, "content")),
        });
      } else if (type === "text") {
        turns.push({ kind: "text", role, text: stringField(block, "text") });
      }
    }
  }
  return {
    offeredTools: arrayField(body, "tools").map((tool) =>
      stringField(tool, "name")
    ).filter((name) => name !== ""),
    turns,
    wantsJson: false,
  };
}

/** `POST /v1/messages/count_tokens`. */
export function anthropicCountTokens(body: unknown): Response {
  return jsonResponse({ input_tokens: roughTokens(body) });
}

export function anthropicAnswer(
  action: Action,
  request: { body: unknown; stream: boolean; model: string },
): Response {
  const id = `msg_${crypto.randomUUID().replaceAll("-", "")}`;
  const block = action.kind === "tool"
    ? {
      type: "tool_use",
      id: `toolu_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
      name: action.name,
      input: action.input,
    }
    : { type: "text", text: action.text };
  const stopReason = action.kind === "tool" ? "tool_use" : "end_turn";
  const usage = {
    input_tokens: roughTokens(request.body),
    output_tokens: roughTokens(block),
  };
  if (!request.stream) {
    return jsonResponse({
      id,
      type: "message",
      role: "assistant",
      model: request.model,
      content: [block],
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
    });
  }
  const frames: SseFrame[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model: request.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
        },
      },
    },
    {
      event: "content_block_start",
      data: {
        type: "content_block_start",
        index: 0,
        content_block: action.kind === "tool"
          ? { ...block, input: {} }
          : { type: "text", text: "" },
      },
    },
    {
      event: "content_block_delta",
      data: {
        type: "content_block_delta",
        index: 0,
        delta: action.kind === "tool"
          ? {
            type: "input_json_delta",
            partial_json: JSON.stringify(action.input),
          }
          : { type: "text_delta", text: action.text },
      },
    },
    {
      event: "content_block_stop",
      data: { type: "content_block_stop", index: 0 },
    },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ];
  return sseResponse(frames);
}
