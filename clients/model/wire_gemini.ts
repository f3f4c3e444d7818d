/**
 * Gemini API (`models/<model>:streamGenerateContent`, `:generateContent`,
 * `:countTokens`), as Gemini CLI speaks it with `GOOGLE_GEMINI_BASE_URL`.
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
import { jsonResponse, roughTokens, sseResponse } from "./sse.ts";

export function geminiConversation(body: unknown): Conversation {
  const turns: Turn[] = [];
  const system = field(body, "systemInstruction");
  if (system !== undefined) {
    turns.push({ kind: "text", role: "system", text: flattenText(system) });
  }
  for (const content of arrayField(body, "contents")) {
    const role = stringField(content, "role") === "model"
      ? "assistant"
      : "user";
    for (const part of arrayField(content, "parts")) {
      const call = field(part, "functionCall");
      const result = field(part, "functionResponse");
      const text = field(part, "text");
      if (call !== undefined) {
        turns.push({
          kind: "toolCall",
          name: stringField(call, "name"),
          input: field(call, "args") ?? {},
        });
      } else if (result !== undefined) {
        turns.push({
          kind: "toolResult",
          text: flattenText(field(result, "response")),
        });
      } else if (typeof text === "string") {
        turns.push({ kind: "text", role, text });
      }
    }
  }
  const config = field(body, "generationConfig");
  return {
    offeredTools: arrayField(body, "tools").flatMap((tool) =>
      arrayField(tool, "functionDeclarations").map((declaration) =>
        stringField(declaration, "name")
      )
    ).filter((name) => name !== ""),
    turns,
    wantsJson: stringField(config, "responseMimeType") === "application/json",
  };
}

export function geminiCountTokens(body: unknown): Response {
  return jsonResponse({ totalTokens: roughTokens(body) });
}

/** `alt=sse` streams one SSE chunk; without it the stream is a JSON array. */
export function geminiAnswer(
  action: Action,
  request: { body: unknown; stream: boolean; sse: boolean; model: string },
): Response {
  const part = action.kind === "tool"
    ? { functionCall: { name: action.name, args: action.input } }
    : { text: action.text };
  const promptTokens = roughTokens(request.body);
  const answer = {
    candidates: [{
      content: { role: "model", parts: [part] },
      finishReason: "STOP",
      index: 0,
    }],
    usageMetadata: {
      promptTokenCount: promptTokens,
      candidatesTokenCount: roughTokens(part),
      totalTokenCount: promptTokens + roughTokens(part),
    },
    modelVersion: request.model,
  };
  if (!request.stream) return jsonResponse(answer);
  return request.sse ? sseResponse([{ data: answer }]) : jsonResponse([answer]);
}
