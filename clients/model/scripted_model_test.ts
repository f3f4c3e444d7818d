import assert from "node:assert/strict";
import type { ModelScript } from "./decide.ts";
import {
  answerModelRequest,
  keptToolNames,
  observe,
  routeOf,
  startScriptedModel,
  TOOL_NAME_CHARS,
  TOOL_NAMES_KEPT,
  type TranscriptEntry,
} from "./scripted_model.ts";
import { parseSse, type SseFrame } from "./sse.ts";
import { anthropicConversation } from "./wire_anthropic.ts";
import { chatConversation } from "./wire_openai_chat.ts";
import {
  responsesAnswer,
  responsesConversation,
} from "./wire_openai_responses.ts";
import { geminiConversation } from "./wire_gemini.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: a script, version 1, a request, a response's SSE frames
// ---------------------------------------------------------------------------

const script: ModelScript = {
  read: {
    name: "read_mcp_resource",
    input: { server: "lab", uri: "test://review/status" },
  },
  nudge: { name: "list_mcp_resources", input: { server: "lab" } },
  waitSeconds: 0,
};
const V1 =
  "status: pending\nversion: 1\nmessage: Waiting for simulated review result.";

function post(path: string, body: unknown): Request {
  return new Request(`http://127.0.0.1${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function frames(response: Response): Promise<SseFrame[]> {
  assert.match(
    response.headers.get("content-type") ?? "",
    /text\/event-stream/,
  );
  return parseSse(await response.text());
}

function data(frame: SseFrame | undefined): Record<string, unknown> {
  return (frame?.data ?? {}) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------
// The wire formats: each API's request in, its answer out, its routes
// ---------------------------------------------------------------------------

Deno.test("wire: Anthropic Messages request → conversation; streamed tool_use answer", async () => {
  const body = {
    model: "claude-x",
    stream: true,
    system: [{ type: "text", text: "You are an agent." }],
    tools: [{ name: "read_mcp_resource" }, { name: "list_mcp_resources" }],
    messages: [
      { role: "user", content: "Read it." },
      {
        role: "assistant",
        content: [{
          type: "tool_use",
          id: "t1",
          name: "read_mcp_resource",
          input: { uri: "x" },
        }],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "t1",
          content: [{ type: "text", text: V1 }],
        }],
      },
    ],
  };
  const conversation = anthropicConversation(body);
  assert.deepEqual(conversation.offeredTools, [
    "read_mcp_resource",
    "list_mcp_resources",
  ]);
  assert.deepEqual(conversation.turns.map((turn) => turn.kind), [
    "text",
    "text",
    "toolCall",
    "toolResult",
  ]);
  const transcript: TranscriptEntry[] = [];
  const sse = await frames(
    await answerModelRequest(post("/v1/messages", body), script, transcript),
  );
  assert.deepEqual(sse.map((frame) => frame.event), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  const block = data(sse[1]).content_block as Record<string, unknown>;
  assert.equal(block.type, "tool_use");
  assert.equal(block.name, "list_mcp_resources");
  const delta = data(sse[2]).delta as Record<string, unknown>;
  assert.deepEqual(JSON.parse(String(delta.partial_json)), { server: "lab" });
  assert.equal(
    (data(sse[4]).delta as Record<string, unknown>).stop_reason,
    "tool_use",
  );
  assert.equal(transcript[0].stage, "wait-then-nudge");
  assert.equal(transcript[0].wire, "anthropic-messages");
});

Deno.test("wire: Anthropic non-streaming answer and count_tokens", async () => {
  const transcript: TranscriptEntry[] = [];
  const message = await (await answerModelRequest(
    post("/v1/messages", {
      model: "m",
      messages: [{ role: "user", content: "hi" }],
    }),
    script,
    transcript,
  )).json();
  assert.equal(message.type, "message");
  assert.equal(message.stop_reason, "end_turn");
  assert.equal(message.content[0].type, "text");
  const count = await (await answerModelRequest(
    post("/v1/messages/count_tokens", { messages: [] }),
    script,
    transcript,
  )).json();
  assert.equal(typeof count.input_tokens, "number");
  assert.deepEqual(transcript.map((entry) => entry.stage), [
    "side-request",
    "count-tokens",
  ]);
});

Deno.test("wire: Chat Completions request → conversation; streamed tool_calls answer ends with [DONE]", async () => {
  const body = {
    model: "m",
    stream: true,
    tools: [{ type: "function", function: { name: "read_mcp_resource" } }],
    messages: [
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "Read it." }] },
    ],
  };
  const conversation = chatConversation(body);
  assert.deepEqual(conversation.offeredTools, ["read_mcp_resource"]);
  assert.deepEqual(conversation.turns, [
    { kind: "text", role: "system", text: "sys" },
    { kind: "text", role: "user", text: "Read it." },
  ]);
  const sse = await frames(
    await answerModelRequest(post("/v1/chat/completions", body), script, []),
  );
  assert.equal(sse.at(-1)?.data, "[DONE]");
  const call = (data(sse[1]).choices as {
    delta: { tool_calls: { function: { name: string } }[] };
  }[])[0]
    .delta.tool_calls[0];
  assert.equal(call.function.name, "read_mcp_resource");
  const args = (data(sse[2]).choices as {
    delta: { tool_calls: { function: { arguments: string } }[] };
  }[])[0]
    .delta.tool_calls[0].function.arguments;
  assert.deepEqual(JSON.parse(args), script.read.input);
  const finish =
    (data(sse[3]).choices as { finish_reason: string }[])[0].finish_reason;
  assert.equal(finish, "tool_calls");
});

Deno.test("wire: Chat Completions tool results and earlier calls are read back", () => {
  const conversation = chatConversation({
    messages: [
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "c",
          type: "function",
          function: { name: "read_mcp_resource", arguments: '{"uri":"u"}' },
        }],
      },
      { role: "tool", tool_call_id: "c", content: V1 },
    ],
    response_format: { type: "json_object" },
  });
  assert.deepEqual(conversation.turns, [
    { kind: "toolCall", name: "read_mcp_resource", input: { uri: "u" } },
    { kind: "toolResult", text: V1 },
  ]);
  assert.equal(conversation.wantsJson, true);
});

Deno.test("wire: Responses request → conversation; streamed function_call ends with response.completed", async () => {
  const body = {
    model: "m",
    stream: true,
    instructions: "sys",
    tools: [
      { type: "function", name: "read_mcp_resource" },
      {
        type: "namespace",
        name: "mcp",
        tools: [{ type: "function", name: "list_mcp_resources" }],
      },
    ],
    input: [
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "Read it." }],
      },
      {
        type: "function_call",
        name: "read_mcp_resource",
        arguments: "{}",
        call_id: "c",
      },
      { type: "function_call_output", call_id: "c", output: V1 },
      { type: "reasoning", summary: [] },
    ],
  };
  const conversation = responsesConversation(body);
  assert.deepEqual(conversation.offeredTools, [
    "read_mcp_resource",
    "mcp__list_mcp_resources",
  ]);
  assert.deepEqual(conversation.turns.map((turn) => turn.kind), [
    "text",
    "text",
    "toolCall",
    "toolResult",
  ]);
  const sse = await frames(
    await answerModelRequest(post("/v1/responses", body), script, []),
  );
  assert.equal(sse[0].event, "response.created");
  assert.equal(sse.at(-1)?.event, "response.completed");
  const done = sse.find((frame) => frame.event === "response.output_item.done");
  const item = data(done).item as Record<string, unknown>;
  assert.equal(item.type, "function_call");
  assert.equal(item.name, "list_mcp_resources");
  assert.equal(typeof item.call_id, "string");
  const completed = data(sse.at(-1)).response as Record<string, unknown>;
  assert.equal(completed.status, "completed");
  assert.ok((completed.usage as Record<string, number>).total_tokens > 0);
  const sequence = sse.map((frame) => data(frame).sequence_number);
  assert.deepEqual(sequence, sequence.map((_, index) => index));
});

Deno.test("wire: Gemini streamGenerateContent (SSE), generateContent (JSON) and countTokens", async () => {
  const body = {
    systemInstruction: { parts: [{ text: "sys" }] },
    tools: [{
      functionDeclarations: [{ name: "read_mcp_resource" }, {
        name: "list_mcp_resources",
      }],
    }],
    contents: [
      { role: "user", parts: [{ text: "Read it." }] },
      {
        role: "model",
        parts: [{
          functionCall: { name: "read_mcp_resource", args: { uri: "u" } },
        }],
      },
      {
        role: "user",
        parts: [{
          functionResponse: {
            name: "read_mcp_resource",
            response: { output: V1 },
          },
        }],
      },
    ],
  };
  const conversation = geminiConversation(body);
  assert.deepEqual(conversation.turns.map((turn) => turn.kind), [
    "text",
    "text",
    "toolCall",
    "toolResult",
  ]);
  const transcript: TranscriptEntry[] = [];
  const sse = await frames(
    await answerModelRequest(
      post("/v1beta/models/gemini-x:streamGenerateContent?alt=sse", body),
      script,
      transcript,
    ),
  );
  const candidate = (data(sse[0]).candidates as {
    content: { parts: Record<string, unknown>[] };
  }[])[0];
  assert.deepEqual(candidate.content.parts[0].functionCall, {
    name: "list_mcp_resources",
    args: { server: "lab" },
  });
  const json = await (await answerModelRequest(
    post("/v1beta/models/gemini-x:generateContent", {
      contents: [{ role: "user", parts: [{ text: "Who speaks next?" }] }],
      generationConfig: { responseMimeType: "application/json" },
    }),
    script,
    transcript,
  )).json();
  const text = json.candidates[0].content.parts[0].text;
  assert.equal(JSON.parse(text).next_speaker, "user");
  const count = await (await answerModelRequest(
    post("/v1beta/models/gemini-x:countTokens", body),
    script,
    transcript,
  )).json();
  assert.equal(typeof count.totalTokens, "number");
  assert.deepEqual(transcript.map((entry) => entry.stage), [
    "wait-then-nudge",
    "side-request",
    "count-tokens",
  ]);
});

Deno.test("routeOf: each API's paths, and nothing else", () => {
  assert.deepEqual(routeOf("POST", "/v1/messages"), {
    wire: "anthropic-messages",
  });
  assert.deepEqual(routeOf("POST", "/v1/messages/count_tokens"), {
    countTokens: "anthropic",
  });
  assert.deepEqual(routeOf("POST", "/chat/completions"), {
    wire: "openai-chat",
  });
  assert.deepEqual(routeOf("POST", "/v1/responses"), {
    wire: "openai-responses",
  });
  assert.deepEqual(routeOf("POST", "/v1beta/models/g:generateContent"), {
    wire: "gemini",
    gemini: "generate",
  });
  assert.equal(routeOf("GET", "/v1/messages"), undefined);
  assert.equal(routeOf("POST", "/v1/embeddings"), undefined);
});

Deno.test("wire: a Responses tool in a namespace is offered as namespace__name and called with its namespace", async () => {
  const body = {
    model: "m",
    stream: false,
    tools: [
      { type: "function", name: "read_mcp_resource" },
      {
        type: "namespace",
        name: "mcp__lab",
        tools: [{ type: "function", name: "wait_for_review_update" }],
      },
    ],
    input: [
      { type: "message", role: "user", content: "Read it." },
      {
        type: "function_call",
        name: "wait_for_review_update",
        namespace: "mcp__lab",
        arguments: "{}",
        call_id: "c",
      },
    ],
  };
  const conversation = responsesConversation(body);
  assert.deepEqual(conversation.offeredTools, [
    "read_mcp_resource",
    "mcp__lab__wait_for_review_update",
  ]);
  assert.deepEqual(conversation.turns[1], {
    kind: "toolCall",
    name: "mcp__lab__wait_for_review_update",
    input: {},
  });
  const answer = await responsesAnswer(
    { kind: "tool", name: "mcp__lab__wait_for_review_update", input: {} },
    { body, stream: false, model: "m" },
  ).json();
  assert.equal(answer.output[0].name, "wait_for_review_update");
  assert.equal(answer.output[0].namespace, "mcp__lab");
  const plain = await responsesAnswer(
    { kind: "tool", name: "read_mcp_resource", input: {} },
    { body, stream: false, model: "m" },
  ).json();
  assert.equal(plain.output[0].name, "read_mcp_resource");
  assert.equal("namespace" in plain.output[0], false);
});

// ---------------------------------------------------------------------------
// The scripted model as a server: loopback, notices, the tools offered
// ---------------------------------------------------------------------------

Deno.test("scripted model: serves on loopback, records unknown routes, waits as decided", async () => {
  const model = startScriptedModel({ ...script, waitSeconds: 0.3 });
  try {
    assert.match(model.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
    const missing = await fetch(`${model.origin}/v1/embeddings`, {
      method: "POST",
      body: "{}",
    });
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
    const models = await (await fetch(`${model.origin}/v1/models`)).json();
    assert.equal(models.data.length, 1);
    const started = performance.now();
    const answer = await fetch(`${model.origin}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({
        tools: [{ type: "function", function: { name: "read_mcp_resource" } }, {
          type: "function",
          function: { name: "list_mcp_resources" },
        }],
        messages: [{ role: "tool", content: V1 }],
      }),
    });
    const completion = await answer.json();
    assert.ok(
      performance.now() - started >= 250,
      "the nudge waits past the update",
    );
    assert.equal(
      completion.choices[0].message.tool_calls[0].function.name,
      "list_mcp_resources",
    );
    const seen = observe(model.transcript);
    assert.deepEqual(seen.unhandledPaths, ["POST /v1/embeddings"]);
    assert.equal(seen.agentRequests, 1);
    assert.equal(seen.highestVersionSeen, 1);
    assert.equal(seen.contextUpdated, null);
  } finally {
    await model.close();
  }
});

Deno.test("scripted model: a request holding the host's notice is marked in the transcript; observe gives the first one", async () => {
  const notice =
    '[MCP notification] 1 resource(s) updated:\n- server="lab" uri=test://review/status';
  const tools = [
    { type: "function", function: { name: "read_mcp_resource" } },
    { type: "function", function: { name: "list_mcp_resources" } },
  ];
  const call = (name: string) => ({
    role: "assistant",
    content: null,
    tool_calls: [{
      id: name,
      type: "function",
      function: { name, arguments: "{}" },
    }],
  });
  const before = [
    { role: "user", content: "Read it." },
    call("read_mcp_resource"),
    { role: "tool", tool_call_id: "read_mcp_resource", content: V1 },
  ];
  const after = [
    ...before,
    call("list_mcp_resources"),
    { role: "tool", tool_call_id: "list_mcp_resources", content: "[]" },
    { role: "user", content: [{ type: "text", text: notice }] },
  ];
  const transcript: TranscriptEntry[] = [];
  for (const messages of [before, after, after]) {
    const response = await answerModelRequest(
      post("/v1/chat/completions", { tools, messages }),
      script,
      transcript,
    );
    await response.body?.cancel();
  }
  assert.deepEqual(
    transcript.map((entry) => [entry.stage, entry.hostNotice]),
    [
      ["wait-then-nudge", undefined],
      ["check-context-then-reread", { withVersion2: false }],
      ["check-context-then-reread", { withVersion2: false }],
    ],
  );
  assert.equal("hostNotice" in transcript[0], false);
  const seen = observe(transcript);
  assert.deepEqual(seen.hostNotice, {
    at: transcript[1].at,
    withVersion2: false,
  });
  assert.equal(seen.contextUpdated, false);
  assert.equal(observe(transcript.slice(0, 1)).hostNotice, null);
});

Deno.test("scripted model: each request's tool names are kept, bounded; a tool the first request lacked is called once, and observe says so", async () => {
  const tool = (name: string) => ({ type: "function", function: { name } });
  const first = [tool("read_mcp_resource"), tool("list_mcp_resources")];
  const later = [...first, tool("lab-get_review_comments")];
  const call = (name: string) => ({
    role: "assistant",
    content: null,
    tool_calls: [{
      id: name,
      type: "function",
      function: { name, arguments: "{}" },
    }],
  });
  const read = [
    { role: "user", content: "Read it." },
    call("read_mcp_resource"),
    { role: "tool", tool_call_id: "read_mcp_resource", content: V1 },
  ];
  const nudged = [
    ...read,
    call("list_mcp_resources"),
    { role: "tool", tool_call_id: "list_mcp_resources", content: "[]" },
  ];
  const commented = [
    ...nudged,
    call("lab-get_review_comments"),
    {
      role: "tool",
      tool_call_id: "lab-get_review_comments",
      content: "comments: 2",
    },
  ];
  const transcript: TranscriptEntry[] = [];
  for (
    const [tools, messages] of [
      [first, read],
      [later, nudged],
      [later, commented],
    ] as const
  ) {
    const response = await answerModelRequest(
      post("/v1/chat/completions", { tools, messages }),
      script,
      transcript,
    );
    await response.body?.cancel();
  }
  assert.deepEqual(
    transcript.map((entry) => [entry.stage, entry.newTool, entry.answer]),
    [
      [
        "wait-then-nudge",
        undefined,
        'tool list_mcp_resources {"server":"lab"}',
      ],
      [
        "call-new-tool",
        "lab-get_review_comments",
        "tool lab-get_review_comments {}",
      ],
      [
        "check-context-then-reread",
        "lab-get_review_comments",
        'tool read_mcp_resource {"server":"lab","uri":"test://review/status"}',
      ],
    ],
  );
  assert.deepEqual(transcript[0].toolNames, [
    "read_mcp_resource",
    "list_mcp_resources",
  ]);
  assert.deepEqual(observe(transcript).newTool, {
    offeredAs: "lab-get_review_comments",
    called: true,
  });
  assert.deepEqual(observe(transcript.slice(0, 1)).newTool, {
    offeredAs: null,
    called: false,
  });
  // A client that offers hundreds of tools, or names past all reason.
  const many = Array.from(
    { length: 250 },
    (_, index) => `t${index}${"x".repeat(200)}`,
  );
  const kept = keptToolNames(many);
  assert.equal(kept.length, TOOL_NAMES_KEPT);
  assert.ok(kept.every((name) => name.length === TOOL_NAME_CHARS));
});
