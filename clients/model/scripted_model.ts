/**
 * The scripted model: one loopback HTTP server that answers the streaming
 * model APIs agent CLIs speak (Anthropic Messages, OpenAI Chat Completions,
 * OpenAI Responses, Gemini), decides each answer from the conversation it
 * receives (`decide.ts`) and keeps a transcript of what it saw and did.
 *
 * @module
 */

import type { Conversation } from "./conversation.ts";
import {
  decide,
  type Decision,
  type ModelScript,
  type NewToolSeen,
  type Stage,
} from "./decide.ts";
import { jsonResponse } from "./sse.ts";
import {
  anthropicAnswer,
  anthropicConversation,
  anthropicCountTokens,
} from "./wire_anthropic.ts";
import { chatAnswer, chatConversation } from "./wire_openai_chat.ts";
import {
  responsesAnswer,
  responsesConversation,
} from "./wire_openai_responses.ts";
import {
  geminiAnswer,
  geminiConversation,
  geminiCountTokens,
} from "./wire_gemini.ts";

export type WireFormat =
  | "anthropic-messages"
  | "openai-chat"
  | "openai-responses"
  | "gemini";

/** The API key every client gets: a fake, the model is on loopback. */
export const FAKE_API_KEY = "lab-scripted-model-key";

/** One request the model answered (or could not), as the transcript keeps it. */
export interface TranscriptEntry {
  at: string;
  method: string;
  path: string;
  wire?: WireFormat;
  stream?: boolean;
  stage: Stage | "count-tokens" | "unhandled" | "bad-request";
  /** What the model answered: `tool NAME {input}`, `text "…"`, or an error. */
  answer: string;
  offeredTools: number;
  /**
   * The names of the tools offered, as the client sent them: at most
   * `TOOL_NAMES_KEPT`, each cut to `TOOL_NAME_CHARS` characters.
   */
  toolNames?: string[];
  readToolOffered?: boolean;
  versionsSeen: number[];
  contextUpdated?: boolean;
  waitSeconds: number;
  note?: string;
  /** What a route call that failed returned (see `Decision.routeResult`). */
  routeResult?: string;
  /** The request held the host's notice that the resource changed. */
  hostNotice?: Decision["hostNotice"];
  /** The request offered the catalog change's new tool, under this name. */
  newTool?: string;
}

/** How many tool names a transcript entry keeps, and how much of each. */
export const TOOL_NAMES_KEPT = 200;
export const TOOL_NAME_CHARS = 100;

/** A request's tool names as the transcript keeps them: bounded. */
export function keptToolNames(names: string[]): string[] {
  return names.slice(0, TOOL_NAMES_KEPT).map((name) =>
    name.slice(0, TOOL_NAME_CHARS)
  );
}

/**
 * The tools of the first request that offered any: what a later request's
 * new tool is told against.
 */
export function firstOfferedTools(
  transcript: TranscriptEntry[],
): string[] | undefined {
  return transcript.find((entry) => (entry.toolNames?.length ?? 0) > 0)
    ?.toolNames;
}

export interface ScriptedModel {
  /** Base URL, `http://127.0.0.1:PORT` (no path). */
  origin: string;
  port: number;
  transcript: TranscriptEntry[];
  /**
   * Every request body the model answered, as sent, with its wire: the run
   * folder keeps them (`requests.json`), so a client's conversation can be
   * replayed in a test.
   */
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A request body as a client sent it, and the wire it came on. */
export interface RecordedRequest {
  wire: WireFormat;
  body: unknown;
}

const MODEL_NAME = "scripted-lab-model";

function summarize(decision: Decision): string {
  const action = decision.action;
  return action.kind === "tool"
    ? `tool ${action.name} ${JSON.stringify(action.input)}`
    : `text ${JSON.stringify(action.text.slice(0, 160))}`;
}

function sleep(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, seconds * 1000);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/** Which API a request path belongs to, and the Gemini model method if any. */
export function routeOf(
  method: string,
  pathname: string,
):
  | { wire: WireFormat; gemini?: "stream" | "generate" | "count" }
  | { countTokens: "anthropic" }
  | undefined {
  if (method !== "POST") return undefined;
  if (/\/messages\/count_tokens$/.test(pathname)) {
    return { countTokens: "anthropic" };
  }
  if (/\/messages$/.test(pathname)) return { wire: "anthropic-messages" };
  if (/\/chat\/completions$/.test(pathname)) return { wire: "openai-chat" };
  if (/\/responses$/.test(pathname)) return { wire: "openai-responses" };
  const gemini = pathname.match(
    /\/models\/[^/:]+:(streamGenerateContent|generateContent|countTokens)$/,
  );
  if (gemini) {
    return {
      wire: "gemini",
      gemini: gemini[1] === "streamGenerateContent"
        ? "stream"
        : gemini[1] === "generateContent"
        ? "generate"
        : "count",
    };
  }
  return undefined;
}

export function conversationOf(
  wire: WireFormat,
  body: unknown,
): Conversation {
  switch (wire) {
    case "anthropic-messages":
      return anthropicConversation(body);
    case "openai-chat":
      return chatConversation(body);
    case "openai-responses":
      return responsesConversation(body);
    case "gemini":
      return geminiConversation(body);
  }
}

/**
 * Answers one model request and appends it to `transcript`. Exported so the
 * tests can drive it without a socket.
 */
export async function answerModelRequest(
  request: Request,
  script: ModelScript,
  transcript: TranscriptEntry[],
  signal: AbortSignal = new AbortController().signal,
  requests: RecordedRequest[] = [],
): Promise<Response> {
  const url = new URL(request.url);
  const base = {
    at: new Date().toISOString(),
    method: request.method,
    path: url.pathname,
    offeredTools: 0,
    versionsSeen: [],
    waitSeconds: 0,
  };
  const route = routeOf(request.method, url.pathname);
  if (route === undefined) {
    if (request.method === "GET" && /\/models$/.test(url.pathname)) {
      // Model discovery: one model, in the OpenAI and Gemini list shapes.
      return jsonResponse({
        object: "list",
        data: [{ id: MODEL_NAME, object: "model", owned_by: "lab" }],
        models: [{ name: `models/${MODEL_NAME}` }],
      });
    }
    transcript.push({ ...base, stage: "unhandled", answer: "404" });
    return jsonResponse({
      error: { message: `scripted model: no route ${url.pathname}` },
    }, 404);
  }
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    transcript.push({ ...base, stage: "bad-request", answer: "400" });
    return jsonResponse({ error: { message: "body is not JSON" } }, 400);
  }
  if ("countTokens" in route) {
    transcript.push({ ...base, stage: "count-tokens", answer: "count" });
    return anthropicCountTokens(body);
  }
  if (route.gemini === "count") {
    transcript.push({
      ...base,
      wire: "gemini",
      stage: "count-tokens",
      answer: "count",
    });
    return geminiCountTokens(body);
  }
  requests.push({ wire: route.wire, body });
  const conversation = conversationOf(route.wire, body);
  const decision = decide(
    conversation,
    script,
    firstOfferedTools(transcript),
  );
  const stream = route.wire === "gemini"
    ? route.gemini === "stream"
    : (body as { stream?: unknown }).stream === true;
  transcript.push({
    ...base,
    wire: route.wire,
    stream,
    stage: decision.stage,
    answer: summarize(decision),
    offeredTools: conversation.offeredTools.length,
    ...(conversation.offeredTools.length === 0
      ? {}
      : { toolNames: keptToolNames(conversation.offeredTools) }),
    readToolOffered: conversation.offeredTools.length === 0
      ? undefined
      : decision.stage !== "no-read-tool",
    versionsSeen: decision.versionsSeen,
    contextUpdated: decision.contextUpdated,
    waitSeconds: decision.waitSeconds,
    note: decision.note,
    ...(decision.routeResult === undefined
      ? {}
      : { routeResult: decision.routeResult }),
    ...(decision.hostNotice === undefined
      ? {}
      : { hostNotice: decision.hostNotice }),
    ...(decision.newTool === undefined ? {} : { newTool: decision.newTool }),
  });
  if (decision.waitSeconds > 0) await sleep(decision.waitSeconds, signal);
  const model = (body as { model?: unknown }).model;
  const modelName = typeof model === "string" ? model : MODEL_NAME;
  const wireRequest = { body, stream, model: modelName };
  switch (route.wire) {
    case "anthropic-messages":
      return anthropicAnswer(decision.action, wireRequest);
    case "openai-chat":
      return chatAnswer(decision.action, wireRequest);
    case "openai-responses":
      return responsesAnswer(decision.action, wireRequest);
    case "gemini":
      return geminiAnswer(decision.action, {
        ...wireRequest,
        sse: url.searchParams.get("alt") === "sse",
      });
  }
}

/** Starts the scripted model on a free loopback port. */
export function startScriptedModel(script: ModelScript): ScriptedModel {
  const transcript: TranscriptEntry[] = [];
  const requests: RecordedRequest[] = [];
  const shutdown = new AbortController();
  const server = Deno.serve(
    {
      hostname: "127.0.0.1",
      port: 0,
      signal: shutdown.signal,
      onListen() {},
    },
    (request) =>
      answerModelRequest(
        request,
        script,
        transcript,
        shutdown.signal,
        requests,
      ),
  );
  const port = server.addr.port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    transcript,
    requests,
    async close() {
      shutdown.abort();
      await server.finished;
    },
  };
}

/** What the model observed over a whole run, for the matrix row. */
export interface ModelObservations {
  requests: number;
  agentRequests: number;
  readToolOffered: boolean | null;
  /** Level 7: the context held version 2 before the model asked again. */
  contextUpdated: boolean | null;
  /** The highest resource version the model ever saw. */
  highestVersionSeen: number;
  reachedFinal: boolean;
  stages: string[];
  unhandledPaths: string[];
  /**
   * The host's notice that the resource changed: when the first request
   * that held it came, and whether any notice carried version 2; null when
   * none came.
   */
  hostNotice: { at: string; withVersion2: boolean } | null;
  /** The catalog change's new tool: whether a request offered it, and whether the model called it. */
  newTool: NewToolSeen;
}

export function observe(transcript: TranscriptEntry[]): ModelObservations {
  const agent = transcript.filter((entry) =>
    entry.readToolOffered !== undefined
  );
  const judged = transcript.filter((entry) =>
    entry.contextUpdated !== undefined
  );
  const noticed = transcript.filter((entry) => entry.hostNotice);
  return {
    requests: transcript.length,
    agentRequests: agent.length,
    readToolOffered: agent.length === 0
      ? null
      : agent.some((entry) => entry.readToolOffered),
    contextUpdated: judged.length === 0
      ? null
      : judged.some((entry) => entry.contextUpdated),
    highestVersionSeen: Math.max(
      0,
      ...transcript.flatMap((entry) => entry.versionsSeen),
    ),
    reachedFinal: transcript.some((entry) => entry.stage === "final"),
    stages: [...new Set(transcript.map((entry) => entry.stage))],
    unhandledPaths: [
      ...new Set(
        transcript.filter((entry) => entry.stage === "unhandled").map((entry) =>
          `${entry.method} ${entry.path}`
        ),
      ),
    ],
    hostNotice: noticed.length === 0 ? null : {
      at: noticed[0].at,
      withVersion2: noticed.some((entry) => entry.hostNotice?.withVersion2),
    },
    newTool: {
      offeredAs: transcript.find((entry) => entry.newTool)?.newTool ?? null,
      called: transcript.some((entry) => entry.stage === "call-new-tool"),
    },
  };
}
