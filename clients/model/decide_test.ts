import assert from "node:assert/strict";
import {
  type Conversation,
  flattenText,
  holdsChangeNotice,
  resourceSightings,
  type Turn,
} from "./conversation.ts";
import { clientById } from "../catalog/agents.ts";
import type { ClientDefinition } from "../catalog/types.ts";
import {
  announcedNewTool,
  catalogToolsLevel,
  decide,
  type ModelScript,
  NEW_TOOL_NOT_IN_REQUEST,
  resolveTool,
  type Route,
} from "./decide.ts";
import { routeScript } from "../runners/agent.ts";
import { chatConversation } from "./wire_openai_chat.ts";
import { LIBRARY_CLIENTS } from "../catalog/libraries.ts";
import { conversationOf, type RecordedRequest } from "./scripted_model.ts";

// ---------------------------------------------------------------------------
// Helpers: a script, versions 1 and 2, turns, a conversation
// ---------------------------------------------------------------------------

const script: ModelScript = {
  read: { name: "read_mcp_resource", input: { uri: "test://review/status" } },
  nudge: { name: "list_mcp_resources", input: {} },
  waitSeconds: 5,
};
const tools = ["shell", "list_mcp_resources", "read_mcp_resource"];
const V1 =
  "status: pending\nversion: 1\nmessage: Waiting for simulated review result.";
const V2 =
  "status: reviewed\nversion: 2\nmessage: Simulated review result is now available.";
const user: Turn = { kind: "text", role: "user", text: "Read the resource." };
const read: Turn = {
  kind: "toolCall",
  name: "read_mcp_resource",
  input: { uri: "test://review/status" },
};
const list: Turn = { kind: "toolCall", name: "list_mcp_resources", input: {} };
const result = (text: string): Turn => ({ kind: "toolResult", text });

function conversation(turns: Turn[], offered = tools): Conversation {
  return { offeredTools: offered, turns, wantsJson: false };
}

// ---------------------------------------------------------------------------
// Helpers: the routes' scripts and calls, the host's notice
// ---------------------------------------------------------------------------

const waitScript: ModelScript = {
  ...script,
  route: "wait-tool",
  routeCall: {
    name: "wait_for_review_update",
    input: { since_version: 1, timeout_seconds: 60 },
  },
};
const PROBE =
  "/deno/bin/deno run -A /lab/probe.ts --url http://127.0.0.1:1/mcp";
const shellScript: ModelScript = {
  ...script,
  route: "shell-probe",
  routeCall: { name: "Bash", input: { command: PROBE } },
};
const waitCall: Turn = {
  kind: "toolCall",
  name: "mcp__lab__wait_for_review_update",
  input: {},
};
const shellCall: Turn = { kind: "toolCall", name: "Bash", input: {} };
const PROBE_JSON = JSON.stringify({
  initial: V1,
  updates: [{ final: V2 }],
  level: 7,
});

// oh-my-pi 18.2.3 with `mcp.notifications` on: after the update it adds this
// notice to the conversation as a user message, without the content.
const NOTICE = [
  "[MCP notification] 1 resource(s) updated:",
  '- server="lab" uri=test://review/status',
  'Use read(path="mcp://<uri>") to inspect if relevant.',
].join("\n");
const notice: Turn = { kind: "text", role: "user", text: NOTICE };
/** Version 1 read, the wait and the harmless call made. */
const nudged = [user, read, result(V1), list, result("[]")];

// ---------------------------------------------------------------------------
// Helpers: Droid's and oh-my-pi's tools, a catalog client's script
// ---------------------------------------------------------------------------

// Factory Droid lists its MCP tools by name under "Deferred tools:" and
// offers them only after its ToolSearch loads them (as in its requests).
const droid = clientById("droid")!;
const DROID_TOOLS = [
  "Read",
  "LS",
  "Execute",
  "Edit",
  "Grep",
  "Glob",
  "Create",
  "TaskOutput",
  "TaskStop",
  "ToolSearch",
  "Skill",
  "Task",
];
const droidUser: Turn = {
  kind: "text",
  role: "user",
  text:
    "<system-reminder>\nDeferred tools:\nLoop\nlab___get_review_status\nlab___wait_for_review_update\n</system-reminder>",
};
const droidRead: Turn = {
  kind: "toolCall",
  name: "lab___get_review_status",
  input: {},
};

/** A catalog client's script on `route`, with a made-up probe and lab. */
function scriptOf(client: ClientDefinition, route: Route): ModelScript {
  return {
    ...client.script,
    waitSeconds: 5,
    ...routeScript(client, route, {
      probe: {
        denoPath: "/deno/bin/deno",
        probePath: "/lab/probe.ts",
        denoDir: "/deno",
      },
      labUrl: "http://127.0.0.1:1/mcp",
      delaySeconds: 3,
    }),
  };
}

// oh-my-pi's tools as it offers them (its MCP tools as tools of their own on
// the wait-tool route, where its config turns its xd:// devices off).
const omp = clientById("omp")!;
const OMP_TOOLS = [
  "read",
  "bash",
  "edit",
  "eval",
  "glob",
  "grep",
  "task",
  "hub",
  "todo",
  "web_search",
  "write",
];

// ---------------------------------------------------------------------------
// Helpers: recorded requests of the reference host, libraries, catalog runs
// ---------------------------------------------------------------------------

/**
 * The reference host's own requests, recorded from a run against the lab
 * (2025, HTTP) and the scripted model: as shipped, and with --no-updates.
 */
const REFERENCE_REQUESTS = JSON.parse(
  Deno.readTextFileSync(
    new URL("../testdata/reference_host_requests.json", import.meta.url),
  ),
) as Record<"default" | "no-updates", unknown[]>;

/**
 * Each library agent's requests from one recorded run (trigger subscribe),
 * natively and on the wait-tool route: the `requests.json` of its run
 * folder, as its library sent them on its own wire.
 */
const LIBRARY_REQUESTS = JSON.parse(
  Deno.readTextFileSync(
    new URL("../testdata/library_agent_requests.json", import.meta.url),
  ),
) as Record<string, Record<"native" | "wait-tool", RecordedRequest[]>>;

/** The tools as each library offered them to the model in those runs. */
const LIBRARY_TOOL_NAMES: Record<string, { read: string; nudge: string }> = {
  "ai-sdk-agent": { read: "get_review_status", nudge: "app_clock" },
  "langchain-agent": { read: "get_review_status", nudge: "app_clock" },
  "mastra-agent": { read: "lab_get_review_status", nudge: "app_clock" },
  "mcp-use-agent": { read: "get_review_status", nudge: "app_clock" },
  "openai-agents-agent": { read: "get_review_status", nudge: "app_clock" },
  "claude-agent-sdk-agent": {
    read: "mcp__lab__get_review_status",
    nudge: "mcp__app__app_clock",
  },
};

/**
 * Three agents' requests from recorded catalog runs (trigger read, the lab
 * with --catalog-change all), bodies cut to what the model reads (tool
 * names, the conversation): Gemini CLI offers the new tool once it has
 * listed its tools again; Claude Code names it as a deferred tool, and its
 * ToolSearch loads it; Droid lists its tools again (the lab's level 3) but
 * never hands the new one to its model.
 */
const CATALOG_REQUESTS = JSON.parse(
  Deno.readTextFileSync(
    new URL("../testdata/catalog_agent_requests.json", import.meta.url),
  ),
) as Record<"gemini-cli" | "claude-code" | "droid", RecordedRequest[]>;

/** Replays a recorded run's requests: each decision, and what the run showed of the new tool. */
function replayCatalog(id: keyof typeof CATALOG_REQUESTS) {
  const client = clientById(id)!;
  const clientScript = { ...client.script, waitSeconds: 5 };
  let first: string[] | undefined;
  const decisions = CATALOG_REQUESTS[id].map(({ wire, body }) => {
    const conversation = conversationOf(wire, body);
    const decision = decide(conversation, clientScript, first);
    if (conversation.offeredTools.length > 0) {
      first ??= conversation.offeredTools;
    }
    return decision;
  });
  const offeredAs = decisions.find((decision) => decision.newTool)?.newTool ??
    null;
  const called = decisions.some((decision) =>
    decision.stage === "call-new-tool"
  );
  return {
    steps: decisions.map((decision) =>
      `${decision.stage} ${
        decision.action.kind === "tool" ? decision.action.name : "text"
      }`
    ),
    seen: { offeredAs, called },
  };
}

// ---------------------------------------------------------------------------
// decide on the native route: read, wait, nudge, read again, final
// ---------------------------------------------------------------------------

Deno.test("decide: no resource content yet → read the resource", () => {
  const decision = decide(conversation([user]), script);
  assert.equal(decision.stage, "read-v1");
  assert.deepEqual(decision.action, {
    kind: "tool",
    name: "read_mcp_resource",
    input: { uri: "test://review/status" },
  });
  assert.equal(decision.waitSeconds, 0);
  assert.deepEqual(decision.versionsSeen, []);
});

Deno.test("decide: version 1 seen → wait past the delay, then the harmless call", () => {
  const decision = decide(conversation([user, read, result(V1)]), script);
  assert.equal(decision.stage, "wait-then-nudge");
  assert.deepEqual(decision.action, {
    kind: "tool",
    name: "list_mcp_resources",
    input: {},
  });
  assert.equal(decision.waitSeconds, 5);
  assert.deepEqual(decision.versionsSeen, [1]);
});

Deno.test("decide: after the nudge, no version 2 in the context → level 7 not reached, read again", () => {
  const decision = decide(
    conversation([user, read, result(V1), list, result("[review-status]")]),
    script,
  );
  assert.equal(decision.stage, "check-context-then-reread");
  assert.equal(decision.contextUpdated, false);
  assert.equal(decision.action.kind, "tool");
  assert.equal(
    decision.action.kind === "tool" && decision.action.name,
    "read_mcp_resource",
  );
  assert.equal(decision.waitSeconds, 0);
});

Deno.test("decide: version 2 the client put in the context unasked → level 7", () => {
  const reminder: Turn = {
    kind: "text",
    role: "user",
    text: `<system-reminder>The resource changed:\n${V2}</system-reminder>`,
  };
  const decision = decide(
    conversation([user, read, result(V1), list, result("[]"), reminder]),
    script,
  );
  assert.equal(decision.stage, "check-context-then-reread");
  assert.equal(decision.contextUpdated, true);
  assert.deepEqual(decision.versionsSeen, [1, 2]);
});

Deno.test("decide: the re-read answered → final text naming the version and the level-7 finding", () => {
  const decision = decide(
    conversation([
      user,
      read,
      result(V1),
      list,
      result("[]"),
      read,
      result(JSON.stringify({ contents: [{ text: V2 }] })),
    ]),
    script,
  );
  assert.equal(decision.stage, "final");
  assert.equal(decision.contextUpdated, false);
  assert.equal(decision.action.kind, "text");
  assert.match(
    decision.action.kind === "text" ? decision.action.text : "",
    /version 2\. The update reached my context before I asked again: no\./,
  );
});

Deno.test("decide: the same conversation always gets the same decision (no hidden state)", () => {
  const turns = [user, read, result(V1), list, result("[]")];
  const first = decide(conversation(turns), script);
  decide(conversation([user]), script);
  const again = decide(conversation(turns), script);
  assert.deepEqual(again, first);
});

Deno.test("decide: requests without tools, or asking for JSON, are side requests", () => {
  const title = decide(conversation([user], []), script);
  assert.equal(title.stage, "side-request");
  assert.equal(title.action.kind, "text");
  const json = decide(
    { offeredTools: tools, turns: [user], wantsJson: true },
    script,
  );
  assert.equal(json.stage, "side-request");
  assert.deepEqual(
    JSON.parse(json.action.kind === "text" ? json.action.text : "{}")
      .next_speaker,
    "user",
  );
});

Deno.test("decide: a client that offers no read tool gets a final text naming what it offered", () => {
  const decision = decide(conversation([user], ["shell", "edit"]), script);
  assert.equal(decision.stage, "no-read-tool");
  assert.equal(decision.action.kind, "text");
  assert.equal(decision.note, "offered tools: shell, edit");
});

Deno.test("decide: deferred tools are loaded first, once", () => {
  const withLoader: ModelScript = {
    ...script,
    loader: {
      name: "ToolSearch",
      input: { query: "select:read_mcp_resource" },
    },
  };
  const first = decide(conversation([user], ["ToolSearch"]), withLoader);
  assert.equal(first.stage, "load-tools");
  assert.deepEqual(first.action, {
    kind: "tool",
    name: "ToolSearch",
    input: { query: "select:read_mcp_resource" },
  });
  const searched: Turn = { kind: "toolCall", name: "ToolSearch", input: {} };
  const stillMissing = decide(
    conversation([user, searched, result("no match")], ["ToolSearch"]),
    withLoader,
  );
  assert.equal(stillMissing.stage, "no-read-tool");
  const loaded = decide(
    conversation([user, searched, result("ok")], ["ToolSearch", ...tools]),
    withLoader,
  );
  assert.equal(loaded.stage, "read-v1");
});

Deno.test("decide: two reads without resource text → gives up with the last result", () => {
  const decision = decide(
    conversation([user, read, result("error: -32002"), read, result("error")]),
    script,
  );
  assert.equal(decision.stage, "read-failed");
  assert.match(decision.note ?? "", /read 2 times.*last result: error/);
});

Deno.test("decide: a client that keeps re-prompting is stopped", () => {
  const loop = Array.from({ length: 8 }, () => [list, result("[]")]).flat();
  const decision = decide(conversation([user, ...loop]), script);
  assert.equal(decision.stage, "too-many-calls");
});

Deno.test("decide: without a harmless tool, the wait moves to the re-read", () => {
  const decision = decide(
    conversation([user, read, result(V1)], ["read_mcp_resource"]),
    script,
  );
  assert.equal(decision.stage, "check-context-then-reread");
  assert.equal(decision.waitSeconds, 5);
  assert.match(decision.note ?? "", /no list_mcp_resources tool offered/);
});

// ---------------------------------------------------------------------------
// The conversation's readers: tool names, sightings of the resource, text
// ---------------------------------------------------------------------------

Deno.test("resolveTool: exact names first, then a client's prefix", () => {
  assert.equal(
    resolveTool(["get_review_status"], "get_review_status"),
    "get_review_status",
  );
  assert.equal(
    resolveTool(["lab-get_review_status"], "get_review_status"),
    "lab-get_review_status",
  );
  assert.equal(
    resolveTool(["mcp__lab__get_review_status"], "get_review_status"),
    "mcp__lab__get_review_status",
  );
  assert.equal(
    resolveTool(["notget_review_status"], "get_review_status"),
    undefined,
  );
});

Deno.test("resourceSightings: finds the lab's text raw, JSON-escaped and double-escaped", () => {
  assert.deepEqual(resourceSightings(V1), [{ status: "pending", version: 1 }]);
  assert.deepEqual(resourceSightings(JSON.stringify({ text: V2 })), [
    { status: "reviewed", version: 2 },
  ]);
  assert.deepEqual(
    resourceSightings(JSON.stringify(JSON.stringify({ text: V2 }))),
    [{ status: "reviewed", version: 2 }],
  );
  assert.deepEqual(resourceSightings("tell me when version: 2 arrives"), []);
});

Deno.test("flattenText: content blocks read as their text", () => {
  assert.equal(
    flattenText([{ type: "text", text: "a" }, { type: "text", text: "b" }]),
    "a\nb",
  );
  assert.equal(flattenText({ contents: [{ uri: "x", text: V1 }] }), V1);
  assert.equal(flattenText(null), "");
});

// ---------------------------------------------------------------------------
// The routes: the wait tool and the probe through the client's shell
// ---------------------------------------------------------------------------

Deno.test("decide (wait-tool): reads version 1 first, as natively", () => {
  const decision = decide(
    conversation([user], [...tools, "mcp__lab__wait_for_review_update"]),
    waitScript,
  );
  assert.equal(decision.stage, "read-v1");
});

Deno.test("decide (wait-tool): version 1 seen → the wait tool under the client's prefix, no wait of its own", () => {
  const decision = decide(
    conversation(
      [user, read, result(V1)],
      [...tools, "mcp__lab__wait_for_review_update"],
    ),
    waitScript,
  );
  assert.equal(decision.stage, "call-wait-tool");
  assert.deepEqual(decision.action, {
    kind: "tool",
    name: "mcp__lab__wait_for_review_update",
    input: { since_version: 1, timeout_seconds: 60 },
  });
  assert.equal(decision.waitSeconds, 0);
});

Deno.test("decide (wait-tool): version 2 in the call's result → final, level 7 via the route", () => {
  const offered = [...tools, "mcp__lab__wait_for_review_update"];
  const updated = decide(
    conversation([user, read, result(V1), waitCall, result(V2)], offered),
    waitScript,
  );
  assert.equal(updated.stage, "final");
  assert.equal(updated.contextUpdated, true);
  assert.deepEqual(updated.versionsSeen, [1, 2]);
  assert.match(
    (updated.action as { text: string }).text,
    /version 2: the wait tool brought the update/,
  );
  const timedOut = decide(
    conversation(
      [
        user,
        read,
        result(V1),
        waitCall,
        result(`no update within 60 s: version 1 is still current\n${V1}`),
      ],
      offered,
    ),
    waitScript,
  );
  assert.equal(timedOut.stage, "final");
  assert.equal(timedOut.contextUpdated, false);
});

Deno.test("decide (wait-tool): version 2 before the call does not count for the route", () => {
  // The client put version 2 in the context natively before the wait tool
  // was called; the route's finding is only what the call brought.
  const decision = decide(
    conversation(
      [
        user,
        read,
        result(V1),
        result(V2),
        waitCall,
        result("no update within 60 s"),
      ],
      [...tools, "mcp__lab__wait_for_review_update"],
    ),
    waitScript,
  );
  assert.equal(decision.contextUpdated, false);
});

Deno.test("decide (wait-tool): a client that does not offer the tool gets a final text naming what it offered", () => {
  const decision = decide(
    conversation([user, read, result(V1)], tools),
    waitScript,
  );
  assert.equal(decision.stage, "no-route-tool");
  assert.equal(decision.action.kind, "text");
  assert.equal(
    decision.note,
    "offered tools: shell, list_mcp_resources, read_mcp_resource",
  );
});

Deno.test("decide (shell-probe): version 1 seen → the client's shell tool runs the probe", () => {
  const decision = decide(
    conversation([user, read, result(V1)], [...tools, "Bash"]),
    shellScript,
  );
  assert.equal(decision.stage, "run-probe");
  assert.deepEqual(decision.action, {
    kind: "tool",
    name: "Bash",
    input: { command: PROBE },
  });
});

Deno.test("decide (shell-probe): the probe's JSON with version 2 → level 7; its failure → not", () => {
  const offered = [...tools, "Bash"];
  const reached = decide(
    conversation(
      [user, read, result(V1), shellCall, result(PROBE_JSON)],
      offered,
    ),
    shellScript,
  );
  assert.equal(reached.stage, "final");
  assert.equal(reached.contextUpdated, true);
  assert.match(
    (reached.action as { text: string }).text,
    /the shell tool brought the update/,
  );
  const failed = decide(
    conversation(
      [
        user,
        read,
        result(V1),
        shellCall,
        result("error: Permission denied: deno"),
      ],
      offered,
    ),
    shellScript,
  );
  assert.equal(failed.stage, "final");
  assert.equal(failed.contextUpdated, false);
  // The failed call's result is kept for the row to quote; a success's not.
  assert.equal(failed.routeResult, "error: Permission denied: deno");
  assert.equal(reached.routeResult, undefined);
});

Deno.test("decide (shell-probe): a client without a headless shell says why", () => {
  const decision = decide(
    conversation([user, read, result(V1)], [...tools, "Bash"]),
    {
      ...script,
      route: "shell-probe",
      routeUnavailable: "its shell tool asks for approval in headless runs",
    },
  );
  assert.equal(decision.stage, "no-route-tool");
  assert.equal(
    decision.note,
    "its shell tool asks for approval in headless runs",
  );
});

Deno.test("decide (routes): the same conversation always gets the same decision", () => {
  const turns = [user, read, result(V1), waitCall, result(V2)];
  const offered = [...tools, "mcp__lab__wait_for_review_update"];
  assert.deepEqual(
    decide(conversation(turns, offered), waitScript),
    decide(conversation(turns, offered), waitScript),
  );
});

// ---------------------------------------------------------------------------
// Clients' own tools: Droid's deferred tools, oh-my-pi's read and bash
// ---------------------------------------------------------------------------

Deno.test("decide (Droid): its tools deferred → one ToolSearch for the read tool, then the read under its prefix", () => {
  const native = scriptOf(droid, "native");
  const first = decide(conversation([droidUser], DROID_TOOLS), native);
  assert.equal(first.stage, "load-tools");
  assert.deepEqual(first.action, {
    kind: "tool",
    name: "ToolSearch",
    input: { query: "select:lab___get_review_status" },
  });
  const searched: Turn = {
    kind: "toolCall",
    name: "ToolSearch",
    input: { query: "select:lab___get_review_status" },
  };
  const loaded = decide(
    conversation([droidUser, searched, result("Loaded 1 tool")], [
      ...DROID_TOOLS,
      "lab___get_review_status",
    ]),
    native,
  );
  assert.equal(loaded.stage, "read-v1");
  assert.deepEqual(loaded.action, {
    kind: "tool",
    name: "lab___get_review_status",
    input: {},
  });
  // A search that loaded nothing is not repeated.
  const notLoaded = decide(
    conversation([droidUser, searched, result("No tools matched")], [
      ...DROID_TOOLS,
    ]),
    native,
  );
  assert.equal(notLoaded.stage, "no-read-tool");
});

Deno.test("decide (Droid, wait-tool): one ToolSearch loads the read and the wait tool, called after version 1", () => {
  const waitRoute = scriptOf(droid, "wait-tool");
  const first = decide(conversation([droidUser], DROID_TOOLS), waitRoute);
  assert.equal(first.stage, "load-tools");
  assert.deepEqual(first.action, {
    kind: "tool",
    name: "ToolSearch",
    input: {
      query: "select:lab___get_review_status,lab___wait_for_review_update",
    },
  });
  const searched: Turn = { kind: "toolCall", name: "ToolSearch", input: {} };
  const decision = decide(
    conversation(
      [droidUser, searched, result("Loaded 2 tools"), droidRead, result(V1)],
      [
        ...DROID_TOOLS,
        "lab___get_review_status",
        "lab___wait_for_review_update",
      ],
    ),
    waitRoute,
  );
  assert.equal(decision.stage, "call-wait-tool");
  assert.equal(
    decision.action.kind === "tool" && decision.action.name,
    "lab___wait_for_review_update",
  );
});

Deno.test("decide (Droid, shell-probe): Execute runs the probe with the fields its schema requires", () => {
  const searched: Turn = { kind: "toolCall", name: "ToolSearch", input: {} };
  const decision = decide(
    conversation(
      [droidUser, searched, result("Loaded 1 tool"), droidRead, result(V1)],
      [...DROID_TOOLS, "lab___get_review_status"],
    ),
    scriptOf(droid, "shell-probe"),
  );
  assert.equal(decision.stage, "run-probe");
  assert.equal(decision.action.kind, "tool");
  const { name, input } = decision.action as {
    name: string;
    input: Record<string, unknown>;
  };
  assert.equal(name, "Execute");
  assert.equal(
    input.command,
    "DENO_DIR=/deno DENO_NO_UPDATE_CHECK=1 /deno/bin/deno run -A --cached-only /lab/probe.ts --url http://127.0.0.1:1/mcp --uri test://review/status --json",
  );
  // Its schema: a sentence-cased summary of 3-8 words, a reason, a level.
  assert.match(String(input.summary), /^[A-Z]\S*(?:\s+\S+){2,7}$/);
  assert.ok(String(input.riskLevelReason).length > 0);
  assert.ok(["low", "medium", "high"].includes(String(input.riskLevel)));
});

Deno.test("decide (oh-my-pi): reads mcp://<uri> with its read tool, globs as its harmless call, re-reads after the notice", () => {
  const native = scriptOf(omp, "native");
  const ompRead: Turn = {
    kind: "toolCall",
    name: "read",
    input: omp.script.read.input,
  };
  const first = decide(conversation([user], OMP_TOOLS), native);
  assert.deepEqual(first.action, {
    kind: "tool",
    name: "read",
    input: { path: "mcp://test://review/status", i: "Read the review status" },
  });
  const nudge = decide(
    conversation([user, ompRead, result(V1)], OMP_TOOLS),
    native,
  );
  assert.deepEqual(nudge.action, {
    kind: "tool",
    name: "glob",
    input: { path: "*.md", i: "List the Markdown files" },
  });
  const glob: Turn = { kind: "toolCall", name: "glob", input: {} };
  const checked = decide(
    conversation(
      [user, ompRead, result(V1), glob, result("No files found"), notice],
      OMP_TOOLS,
    ),
    native,
  );
  assert.equal(checked.stage, "check-context-then-reread");
  assert.deepEqual(checked.action, first.action);
  assert.equal(checked.contextUpdated, false);
  assert.deepEqual(checked.hostNotice, { withVersion2: false });
});

Deno.test("decide (oh-my-pi, routes): the wait tool under its mcp__lab_ prefix; bash runs the probe with its intent", () => {
  const ompRead: Turn = { kind: "toolCall", name: "read", input: {} };
  const wait = decide(
    conversation([user, ompRead, result(V1)], [
      ...OMP_TOOLS,
      "mcp__lab_wait_for_review_update",
    ]),
    scriptOf(omp, "wait-tool"),
  );
  assert.deepEqual(wait.action, {
    kind: "tool",
    name: "mcp__lab_wait_for_review_update",
    input: { since_version: 1, timeout_seconds: 63 },
  });
  const probe = decide(
    conversation([user, ompRead, result(V1)], OMP_TOOLS),
    scriptOf(omp, "shell-probe"),
  );
  assert.deepEqual(probe.action, {
    kind: "tool",
    name: "bash",
    input: {
      command:
        "DENO_DIR=/deno DENO_NO_UPDATE_CHECK=1 /deno/bin/deno run -A --cached-only /lab/probe.ts --url http://127.0.0.1:1/mcp --uri test://review/status --json",
      i: "Run the lab's subscription probe",
    },
  });
});

// ---------------------------------------------------------------------------
// The host's notice: recorded, never taken for version 2 unless it holds it
// ---------------------------------------------------------------------------

Deno.test("holdsChangeNotice: the host's mark, then 'updated' and the resource's URI close by", () => {
  assert.equal(holdsChangeNotice(NOTICE), true);
  assert.equal(
    holdsChangeNotice(
      `Earlier text.\n[MCP notification] Server "lab" reports resource test://review/status was updated.`,
    ),
    true,
  );
  // Another resource, no "updated", no mark, or the URI too far off.
  assert.equal(
    holdsChangeNotice(NOTICE.replace("test://review/status", "test://other")),
    false,
  );
  assert.equal(
    holdsChangeNotice(
      "[MCP notification] tools changed on lab (test://review/status)",
    ),
    false,
  );
  assert.equal(
    holdsChangeNotice("Resource test://review/status was updated."),
    false,
  );
  assert.equal(
    holdsChangeNotice(
      `[MCP notification] 1 resource(s) updated:${
        " ".repeat(400)
      }test://review/status`,
    ),
    false,
  );
  // A notice is not the resource's text.
  assert.deepEqual(resourceSightings(NOTICE), []);
});

Deno.test("decide: the host's notice after the nudge is recorded, not taken for version 2, and the model re-reads as it would anyway", () => {
  const decision = decide(conversation([...nudged, notice]), script);
  assert.deepEqual(decision, {
    stage: "check-context-then-reread",
    action: {
      kind: "tool",
      name: "read_mcp_resource",
      input: { uri: "test://review/status" },
    },
    waitSeconds: 0,
    versionsSeen: [1],
    contextUpdated: false,
    note: undefined,
    hostNotice: { withVersion2: false },
  });
  // Every later request still holds it; the answer is the same as without.
  const final = decide(
    conversation([...nudged, notice, read, result(V2)]),
    script,
  );
  assert.equal(final.stage, "final");
  assert.equal(final.contextUpdated, false);
  assert.deepEqual(final.hostNotice, { withVersion2: false });
  const unnoticed = decide(
    conversation([...nudged, read, result(V2)]),
    script,
  );
  assert.deepEqual(final.action, unnoticed.action);
});

Deno.test("decide: a notice that carries version 2 itself puts it in the context (level 7)", () => {
  const decision = decide(
    conversation([...nudged, { ...notice, text: `${NOTICE}\n${V2}` }]),
    script,
  );
  assert.equal(decision.stage, "check-context-then-reread");
  assert.equal(decision.contextUpdated, true);
  assert.deepEqual(decision.versionsSeen, [1, 2]);
  assert.deepEqual(decision.hostNotice, { withVersion2: true });
});

Deno.test("decide: a notice inside a tool result counts too; no notice, no hostNotice", () => {
  const inResult = decide(
    conversation([user, read, result(V1), list, result(`[]\n${NOTICE}`)]),
    script,
  );
  assert.deepEqual(inResult.hostNotice, { withVersion2: false });
  assert.equal(inResult.contextUpdated, false);
  const without = decide(conversation(nudged), script);
  assert.equal("hostNotice" in without, false);
});

Deno.test("decide (wait-tool): a notice after the route's call is recorded; the call's version 2 still decides", () => {
  const offered = [...tools, "mcp__lab__wait_for_review_update"];
  const decision = decide(
    conversation(
      [user, read, result(V1), waitCall, result(V2), notice],
      offered,
    ),
    waitScript,
  );
  assert.equal(decision.stage, "final");
  assert.equal(decision.contextUpdated, true);
  assert.deepEqual(decision.hostNotice, { withVersion2: false });
});

// ---------------------------------------------------------------------------
// Recorded conversations: the reference host and the library agents
// ---------------------------------------------------------------------------

Deno.test("decide: the reference host's recorded conversation is the positive case of level 7, and its --no-updates run the negative", () => {
  const host = clientById("reference-host")!;
  const hostScript = { ...host.script, waitSeconds: 5 };
  const stages = (mode: "default" | "no-updates") =>
    REFERENCE_REQUESTS[mode].map((body) => {
      const decision = decide(chatConversation(body), hostScript);
      return [decision.stage, decision.contextUpdated];
    });
  // Version 2 came in, marked as an update, before the model asked again.
  assert.deepEqual(stages("default"), [
    ["read-v1", undefined],
    ["wait-then-nudge", undefined],
    ["check-context-then-reread", true],
    ["final", true],
  ]);
  assert.deepEqual(stages("no-updates"), [
    ["read-v1", undefined],
    ["wait-then-nudge", undefined],
    ["check-context-then-reread", false],
    ["final", false],
  ]);
});

Deno.test("decide (libraries): each library agent's recorded requests, on its wire and under its tool names: natively read, nudge, no version 2 unasked, read again; the wait tool brings version 2", () => {
  const agents = LIBRARY_CLIENTS.filter((client): client is ClientDefinition =>
    "wire" in client
  );
  assert.deepEqual(
    agents.map((client) => client.id).toSorted(),
    Object.keys(LIBRARY_REQUESTS).toSorted(),
  );
  for (const client of agents) {
    const names = LIBRARY_TOOL_NAMES[client.id];
    const steps = (route: "native" | "wait-tool") =>
      LIBRARY_REQUESTS[client.id][route].flatMap(({ wire, body }) => {
        assert.equal(wire, client.wire, client.id);
        const decision = decide(
          conversationOf(wire, body),
          scriptOf(client, route),
        );
        // A host's own side requests (titles, no tools) are not the agent's.
        if (decision.stage === "side-request") return [];
        const action = decision.action.kind === "tool"
          ? decision.action.name
          : decision.action.kind;
        return [`${decision.stage} ${action} ${decision.contextUpdated}`];
      });
    assert.deepEqual(steps("native"), [
      `read-v1 ${names.read} undefined`,
      `wait-then-nudge ${names.nudge} undefined`,
      `check-context-then-reread ${names.read} false`,
      "final text false",
    ], client.id);
    assert.deepEqual(steps("wait-tool"), [
      `read-v1 ${names.read} undefined`,
      `call-wait-tool ${
        names.read.replace("get_review_status", "wait_for_review_update")
      } undefined`,
      "final text true",
    ], client.id);
  }
});

// ---------------------------------------------------------------------------
// The catalog that changes: a new tool offered, loaded, called once
// ---------------------------------------------------------------------------

Deno.test("decide (catalog): a request that offers get_review_comments, which the first did not, gets it called once, then the script goes on", () => {
  const first = ["shell", "list_mcp_resources", "read_mcp_resource"];
  const later = [...first, "lab_get_review_comments"];
  const afterNudge = [user, read, result(V1), list, result("[]")];
  const called = decide(conversation(afterNudge, later), script, first);
  assert.equal(called.stage, "call-new-tool");
  assert.deepEqual(called.action, {
    kind: "tool",
    name: "lab_get_review_comments",
    input: {},
  });
  assert.equal(called.newTool, "lab_get_review_comments");
  assert.equal(called.waitSeconds, 0);
  const comments: Turn = {
    kind: "toolCall",
    name: "lab_get_review_comments",
    input: {},
  };
  const next = decide(
    conversation([...afterNudge, comments, result("comments: 2")], later),
    script,
    first,
  );
  assert.equal(next.stage, "check-context-then-reread");
  assert.equal(next.contextUpdated, false);
  assert.equal(next.newTool, "lab_get_review_comments");
});

Deno.test("decide (catalog): the new tool in the first request, or no first request yet, is not new; without it nothing changes", () => {
  const withTool = [...tools, "get_review_comments"];
  const turns = [user, read, result(V1), list, result("[]")];
  for (
    const firstOffered of [undefined, withTool, [
      "mcp__lab__get_review_comments",
    ]]
  ) {
    const decision = decide(
      conversation(turns, withTool),
      script,
      firstOffered,
    );
    assert.equal(decision.stage, "check-context-then-reread");
    assert.equal(decision.newTool, undefined);
  }
  assert.deepEqual(
    decide(conversation(turns), script, tools),
    decide(conversation(turns), script),
  );
});

Deno.test("catalogToolsLevel: level 5 when the new tool reached a model request and the call reached the lab; otherwise what stopped it", () => {
  const lab = (level: number, missing = `lab says ${level}`) => ({
    level,
    missing,
  });
  const reached = { offeredAs: "get_review_comments", called: true };
  assert.deepEqual(catalogToolsLevel(lab(4, "not observable"), reached), {
    level: 5,
    missing: "",
  });
  // Listed again (3) or even used (4), but no request carried it.
  for (const level of [3, 4]) {
    assert.deepEqual(
      catalogToolsLevel(lab(level), { offeredAs: null, called: false }),
      { level, missing: NEW_TOOL_NOT_IN_REQUEST },
    );
  }
  assert.deepEqual(catalogToolsLevel(lab(3), reached), {
    level: 3,
    missing:
      "get_review_comments reached a model request and the model called it, but the call never reached the lab (tools/call)",
  });
  assert.deepEqual(
    catalogToolsLevel(lab(4), {
      offeredAs: "x_get_review_comments",
      called: false,
    }),
    {
      level: 4,
      missing:
        "get_review_comments reached a model request, but the model never called it",
    },
  );
  // Below 3 the lab's own diagnosis stands; with no model, 4 is the top.
  assert.deepEqual(catalogToolsLevel(lab(2), reached), lab(2));
  assert.deepEqual(catalogToolsLevel(lab(1), null), lab(1));
  assert.deepEqual(catalogToolsLevel(lab(4), null), {
    level: 4,
    missing:
      "no model drives the client, so level 5 (get_review_comments reaching a model request) does not apply",
  });
});

Deno.test("decide (catalog): a client that defers its tools names the new one in the conversation; the model loads it with the client's loader once, then calls it once offered", () => {
  const deferring: ModelScript = {
    ...script,
    loader: {
      name: "ToolSearch",
      input: { query: "select:read_mcp_resource" },
    },
  };
  const first = ["ToolSearch", ...tools];
  const reminder: Turn = {
    kind: "text",
    role: "user",
    text:
      "<system-reminder>The following deferred tools are now available via ToolSearch:\nmcp__lab__get_review_comments\n</system-reminder>",
  };
  const announced = [user, read, result(V1), list, result("[]"), reminder];
  const load = decide(conversation(announced, first), deferring, first);
  assert.equal(load.stage, "load-new-tool");
  assert.deepEqual(load.action, {
    kind: "tool",
    name: "ToolSearch",
    input: { query: "select:mcp__lab__get_review_comments" },
  });
  assert.equal(load.newTool, "mcp__lab__get_review_comments");
  const searched: Turn = {
    kind: "toolCall",
    name: "ToolSearch",
    input: { query: "select:mcp__lab__get_review_comments" },
  };
  const loaded = [...announced, searched, result("loaded")];
  const call = decide(
    conversation(loaded, [...first, "mcp__lab__get_review_comments"]),
    deferring,
    first,
  );
  assert.equal(call.stage, "call-new-tool");
  // Loaded but still not offered: the script goes on.
  assert.equal(
    decide(conversation(loaded, first), deferring, first).stage,
    "check-context-then-reread",
  );
  // A client without a loader is not asked to load anything.
  assert.equal(
    decide(conversation(announced, tools), script, tools).stage,
    "check-context-then-reread",
  );
  assert.equal(
    announcedNewTool(conversation([user, reminder])),
    "mcp__lab__get_review_comments",
  );
  assert.equal(
    announcedNewTool(conversation([user, read, result(V1)])),
    undefined,
  );
});

Deno.test("decide (catalog): recorded requests: Gemini CLI offers the new tool and Claude Code names it as deferred (the model loads it), both called: catalog level 5 on the lab's 4; Droid lists again but never hands it over: level 3, diagnosed", () => {
  const gemini = replayCatalog("gemini-cli");
  assert.deepEqual(gemini.steps, [
    "read-v1 read_mcp_resource",
    "wait-then-nudge list_mcp_resources",
    "call-new-tool mcp_lab_get_review_comments",
    "check-context-then-reread read_mcp_resource",
    "final text",
  ]);
  const claude = replayCatalog("claude-code");
  assert.deepEqual(claude.steps, [
    "load-tools ToolSearch",
    "read-v1 ReadMcpResourceTool",
    "wait-then-nudge ListMcpResourcesTool",
    "load-new-tool ToolSearch",
    "call-new-tool mcp__lab__get_review_comments",
    "check-context-then-reread ReadMcpResourceTool",
    "final text",
  ]);
  const used = { level: 4, missing: "level 5 … is not observable" };
  for (const { seen } of [gemini, claude]) {
    assert.deepEqual(catalogToolsLevel(used, seen), { level: 5, missing: "" });
  }
  const droid = replayCatalog("droid");
  assert.deepEqual(droid.steps, [
    "load-tools ToolSearch",
    "read-v1 lab___get_review_status",
    "wait-then-nudge LS",
    "check-context-then-reread lab___get_review_status",
    "final text",
  ]);
  assert.deepEqual(droid.seen, { offeredAs: null, called: false });
  assert.deepEqual(
    catalogToolsLevel(
      {
        level: 3,
        missing:
          "listed tools again but never used get_review_comments (tools/call)",
      },
      droid.seen,
    ),
    { level: 3, missing: NEW_TOOL_NOT_IN_REQUEST },
  );
});
