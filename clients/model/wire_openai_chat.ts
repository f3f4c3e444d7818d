/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), as OpenCode's
 * `@ai-sdk/openai-compatible` provider and Copilot CLI's BYOK mode speak it.
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

export function chatConversation(body: unknown): Conversation {
  const turns: Turn[] = [];
  for (const message of arrayField(body, "messages")) {
    const role = stringField(message, "role");
    const content = flattenText(field(message, "content"));
    if (role === "tool") {
      turns.push({ kind: "toolResult", text: content });
      continue;
    }
    if (content !== "") {
      turns.push({
        kind: "text",
        role: role === "assistant"
          ? "assistant"
          : role === "user"
          ? "user"
          : "system",
        text: content,
      });
    }
    for (const call of arrayField(message, "tool_calls")) {
      const fn = field(call, "function");
      turns.push({
        kind: "toolCall",
        name: stringField(fn, "name"),
        input: parseArguments(field(fn, "arguments")),
      });
    }
  }
  const format = stringField(field(body, "response_format"), "type");
  return {
    offeredTools: arrayField(body, "tools").map((tool) =>
      stringField(field(tool, "function"), "name")
    ).filter((name) => name !== ""),
    turns,
    wantsJson: format === "json_object" || format === "json_schema",
  };
}

export function chatAnswer(
  action: Action,
  request: { body: unknown; stream: boolean; model: string },
): Response {
  const id = `chatcmpl-${crypto.randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const toolCall = action.kind === "tool"
    ? {
      id: `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
      type: "function",
      function: { name: action.name, arguments: JSON.stringify(action.input) },
    }
    : undefined;
  const finishReason = toolCall ? "tool_calls" : "stop";
  const usage = {
    prompt_tokens: roughTokens(request.body),
    completion_tokens: roughTokens(action),
    total_tokens: roughTokens(request.body) + roughTokens(action),
  };
  if (!request.stream) {
    return jsonResponse({
      id,
      object: "chat.completion",
      created,
      model: request.model,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: action.kind === "text" ? action.text : null,
          ...(toolCall ? { tool_calls: [toolCall] } : {}),
        },
        finish_reason: finishReason,
      }],
      usage,
    });
  }
  const chunk = (delta: unknown, finish: string | null) => ({
    data: {
      id,
      object: "chat.completion.chunk",
      created,
      model: request.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    },
  });
  const frames: SseFrame[] = [chunk({ role: "assistant", content: "" }, null)];
  if (toolCall) {
    frames.push(
      chunk({
        tool_calls: [{
          index: 0,
          id: toolCall.id,
          type: "function",
          function: { name: toolCall.function.name, arguments: "" },
        }],
      }, null),
      chunk({
        tool_calls: [{
          index: 0,
          function: { arguments: toolCall.function.arguments },
        }],
      }, null),
    );
  } else if (action.kind === "text") {
    frames.push(chunk({ content: action.text }, null));
  }
  frames.push(chunk({}, finishReason));
  frames.push({
    data: {
      id,
      object: "chat.completion.chunk",
      created,
      model: request.model,
      choices: [],
      usage,
    },
  });
  frames.push({ data: "[DONE]" });
  return sseResponse(frames);
}
