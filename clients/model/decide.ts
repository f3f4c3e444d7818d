/**
 * The scripted model's decisions. Everything it does is a function of the
 * conversation the client sends (plus the fixed script for this client), so
 * a transcript explains itself and any request can be replayed:
 *
 * 1. no resource content yet: call the client's resource-read tool;
 * 2. version 1 seen: wait past the lab's update delay, then make one harmless
 *    call so the client gets a turn to bring in anything new;
 * 3. next request: note whether the conversation now holds version 2 although
 *    the model never asked for it (level 7), then read the resource again;
 * 4. answer with a final text.
 *
 * That is the `native` route. On the two others the model reads version 1
 * the same way, then asks for the update itself: on `wait-tool` it calls the
 * lab's `wait_for_review_update` tool, on `shell-probe` it has the client's
 * own shell tool run the lab's probe; its next request says whether that
 * call's result brought version 2 into the conversation (level 7 via the
 * route), and it answers.
 *
 * A host's notice that the resource changed, arriving without the model
 * asking (oh-my-pi's "[MCP notification] … updated", see
 * `holdsChangeNotice`), is recorded in every decision from the first
 * request that holds it (`hostNotice`) and changes nothing the model does.
 * It is not version 2: only the resource's own text is, so a notice that
 * carries that text does bring version 2 into the context. On the native
 * route the model goes on as it would anyway: at step 3 it notes whether
 * version 2 is in its context and reads the resource again, which is also
 * what such a notice asks of it; that re-read is the model's, not the
 * client's, and the row says so.
 *
 * The lab's catalog change (`--catalog-change`) adds a tool at the
 * client's first update. A request that offers that tool when the first
 * request did not shows the client listed its tools again and handed the
 * new one to its model: the model calls it once, at whatever step it is,
 * then goes on as above. A client that defers its tools (Claude Code)
 * names the new one in the conversation instead ("deferred tools are now
 * available"): the model loads it with the client's loader first. `catalogToolsLevel` is the catalog ladder's
 * level 5, beside the lab's levels 0-4, as level 7 is beside the lab's 6.
 *
 * @module
 */

import { CATALOG_ADDED } from "../../main.ts";
import {
  type Conversation,
  holdsChangeNotice,
  resourceSightings,
  type Turn,
  turnText,
} from "./conversation.ts";

/** A tool call the script makes: the client's tool name and its arguments. */
export interface ScriptedCall {
  name: string;
  input: Record<string, unknown>;
}

/**
 * How an update can reach the agent: `native` (the client's own
 * subscription support), `wait-tool` (the model calls the lab's blocking
 * tool), `shell-probe` (the model runs the lab's probe through the client's
 * shell tool).
 */
export type Route = "native" | "wait-tool" | "shell-probe";

export const ROUTES: Route[] = ["native", "wait-tool", "shell-probe"];

/** What the scripted model needs to know about the client it talks to. */
export interface ModelScript {
  /** The client's resource-read tool, with arguments naming the lab's resource. */
  read: ScriptedCall;
  /** A harmless call (usually the resource-list tool) after the wait. */
  nudge: ScriptedCall;
  /** How long to wait before the nudge: past the lab's update delay. */
  waitSeconds: number;
  /**
   * A call that makes the client offer the resource tools, for clients that
   * defer tools until the model searches for them (Claude Code's ToolSearch).
   */
  loader?: ScriptedCall;
  /** The route this run takes (`native` when absent). */
  route?: Route;
  /**
   * The call that asks for the update on a non-native route: the wait tool
   * with its arguments, or the client's shell tool running the probe.
   */
  routeCall?: ScriptedCall;
  /** Why the client cannot take this route (no headless shell tool…). */
  routeUnavailable?: string;
}

export type Stage =
  | "side-request"
  | "load-tools"
  | "read-v1"
  | "wait-then-nudge"
  | "check-context-then-reread"
  | "final"
  | "call-wait-tool"
  | "run-probe"
  | "load-new-tool"
  | "call-new-tool"
  | "no-route-tool"
  | "no-read-tool"
  | "read-failed"
  | "too-many-calls";

export type Action =
  | { kind: "tool"; name: string; input: Record<string, unknown> }
  | { kind: "text"; text: string };

export interface Decision {
  stage: Stage;
  action: Action;
  /** Seconds to wait before answering. */
  waitSeconds: number;
  /** Resource versions the conversation holds, in order of appearance. */
  versionsSeen: number[];
  /**
   * Whether the conversation held version 2 or later before the model asked
   * for the resource a second time: the client updated the agent's context by
   * itself (level 7). Only set once that can be judged.
   */
  contextUpdated?: boolean;
  note?: string;
  /**
   * What the route's call returned when it did not bring version 2 (on
   * shell-probe, what the shell printed), cut to `ROUTE_RESULT_KEPT`
   * characters: the row quotes it, so a failed call says why.
   */
  routeResult?: string;
  /**
   * The conversation holds the host's notice that the resource changed,
   * which the model never asked for; `withVersion2`: a notice that carried
   * version 2 itself. Absent when it holds none.
   */
  hostNotice?: { withVersion2: boolean };
  /**
   * The name under which this request offered (or, for a client that
   * defers its tools, announced) the tool the lab's catalog change adds,
   * when the first request did not offer it; absent otherwise.
   */
  newTool?: string;
}

/** How much of a failed route call's result a decision keeps. */
export const ROUTE_RESULT_KEPT = 2000;

/** A runaway loop (a client that keeps re-prompting) ends here. */
const MAX_MODEL_CALLS = 8;

/**
 * The offered tool that is `wanted`: the exact name, or the name with a
 * client's prefix (`lab_get_review_status`, `mcp__lab__read`…).
 */
export function resolveTool(
  offered: string[],
  wanted: string,
): string | undefined {
  if (offered.includes(wanted)) return wanted;
  return offered.find((name) =>
    name.endsWith(wanted) && /[_\-.:/]$/.test(name.slice(0, -wanted.length))
  );
}

function versionsIn(turns: Turn[]): number[] {
  return turns.flatMap((turn) =>
    resourceSightings(turnText(turn)).map((sighting) => sighting.version)
  );
}

function callIndex(turns: Turn[], names: string[], from = 0): number {
  const index = turns.slice(from).findIndex((turn) =>
    turn.kind === "toolCall" && names.includes(turn.name)
  );
  return index < 0 ? -1 : index + from;
}

function text(
  stage: Stage,
  message: string,
  versionsSeen: number[],
  extra: Partial<Decision> = {},
): Decision {
  return {
    stage,
    action: { kind: "text", text: message },
    waitSeconds: 0,
    versionsSeen,
    ...extra,
  };
}

/**
 * The tool the lab's catalog change adds (`CATALOG_ADDED.tools`): it is
 * in no client's catalog before the change.
 */
export const NEW_TOOL = CATALOG_ADDED.tools;

/**
 * The name under which `offered` holds the new tool when `firstOffered`
 * (the first request's tools) did not: the client listed its tools again
 * after the change and passed them on to its model.
 */
export function newlyOffered(
  offered: string[],
  firstOffered: string[] | undefined,
): string | undefined {
  if (firstOffered === undefined) return undefined;
  const name = resolveTool(offered, NEW_TOOL);
  return name !== undefined && resolveTool(firstOffered, NEW_TOOL) === undefined
    ? name
    : undefined;
}

/**
 * The scripted model's next move for one request, with any host notice.
 * `firstOffered`: the tools of the client's first request with tools
 * (undefined for that request itself), against which a new tool is told.
 */
export function decide(
  conversation: Conversation,
  script: ModelScript,
  firstOffered?: string[],
): Decision {
  const offered = conversation.wantsJson
    ? undefined
    : newlyOffered(conversation.offeredTools, firstOffered);
  const announced = offered === undefined && firstOffered !== undefined &&
      !conversation.wantsJson && script.loader !== undefined
    ? announcedNewTool(conversation)
    : undefined;
  const newTool = offered ?? announced;
  const decision = offered !== undefined
    ? { ...newToolMove(conversation, script, offered), newTool }
    : announced !== undefined
    ? { ...loadNewToolMove(conversation, script, announced), newTool }
    : nextMove(conversation, script);
  const notices = conversation.turns.filter((turn) =>
    holdsChangeNotice(turnText(turn))
  );
  if (notices.length === 0) return decision;
  return {
    ...decision,
    hostNotice: {
      withVersion2: versionsIn(notices).some((version) => version >= 2),
    },
  };
}

/**
 * A request that offers the new tool: the model calls it once (it lists
 * the review's comments, and takes no arguments), then goes on with its
 * script.
 */
function newToolMove(
  conversation: Conversation,
  script: ModelScript,
  name: string,
): Decision {
  const called = callIndex(conversation.turns, [name, NEW_TOOL]) >= 0;
  if (called) return nextMove(conversation, script);
  return {
    stage: "call-new-tool",
    action: { kind: "tool", name, input: {} },
    waitSeconds: 0,
    versionsSeen: versionsIn(conversation.turns),
  };
}

/**
 * The new tool's name as a client that defers its tools names it in the
 * conversation (Claude Code's "The following deferred tools are now
 * available via ToolSearch"): a word ending in the tool's name after a
 * client's prefix, in any text the client sent.
 */
export function announcedNewTool(
  conversation: Conversation,
): string | undefined {
  for (const turn of conversation.turns) {
    const text = turnText(turn);
    if (!text.includes(NEW_TOOL)) continue;
    for (const [word] of text.matchAll(/[\w.:/-]+/g)) {
      if (resolveTool([word], NEW_TOOL) === word) return word;
    }
  }
  return undefined;
}

/**
 * A request that names the new tool without offering it: the model loads
 * it once with the client's loader (its ToolSearch's `select:` query, as
 * for the resource tools), then goes on with its script.
 */
function loadNewToolMove(
  conversation: Conversation,
  script: ModelScript,
  name: string,
): Decision {
  const loader = script.loader!;
  const loaderName = resolveTool(conversation.offeredTools, loader.name) ??
    loader.name;
  const loaded = conversation.turns.some((turn) =>
    turn.kind === "toolCall" && turn.name === loaderName &&
    JSON.stringify(turn.input).includes(name)
  );
  if (loaded) return nextMove(conversation, script);
  return {
    stage: "load-new-tool",
    action: {
      kind: "tool",
      name: loaderName,
      input: { ...loader.input, query: `select:${name}` },
    },
    waitSeconds: 0,
    versionsSeen: versionsIn(conversation.turns),
  };
}

/** What the model does next, from the conversation and its script. */
function nextMove(
  conversation: Conversation,
  script: ModelScript,
): Decision {
  const turns = conversation.turns;
  const versionsSeen = versionsIn(turns);
  if (conversation.wantsJson || conversation.offeredTools.length === 0) {
    // Titles, summaries, "who speaks next" checks: not the agent loop.
    return text(
      "side-request",
      conversation.wantsJson
        ? JSON.stringify({
          next_speaker: "user",
          reasoning: "The scripted model has finished its turn.",
        })
        : "Resource subscription check",
      versionsSeen,
    );
  }
  const readName = resolveTool(conversation.offeredTools, script.read.name);
  const loaderName = script.loader &&
    resolveTool(conversation.offeredTools, script.loader.name);
  if (
    readName === undefined && script.loader && loaderName !== undefined &&
    callIndex(turns, [loaderName, script.loader.name]) < 0
  ) {
    return {
      stage: "load-tools",
      action: { kind: "tool", name: loaderName, input: script.loader.input },
      waitSeconds: 0,
      versionsSeen,
    };
  }
  if (readName === undefined) {
    return text(
      "no-read-tool",
      `I cannot read MCP resources: no ${script.read.name} tool was offered.`,
      versionsSeen,
      {
        note: `offered tools: ${conversation.offeredTools.join(", ")}`,
      },
    );
  }
  const readNames = [readName, script.read.name];
  const readCall = {
    kind: "tool" as const,
    name: readName,
    input: script.read.input,
  };
  const modelCalls = turns.filter((turn) => turn.kind === "toolCall").length;
  if (modelCalls >= MAX_MODEL_CALLS) {
    return text(
      "too-many-calls",
      `Stopping after ${modelCalls} tool calls.`,
      versionsSeen,
    );
  }

  const firstSighting = turns.findIndex((turn) =>
    resourceSightings(turnText(turn)).length > 0
  );
  if (firstSighting < 0) {
    const reads = turns.filter((turn) =>
      turn.kind === "toolCall" && readNames.includes(turn.name)
    ).length;
    if (reads >= 2) {
      const lastResult = turns.findLast((turn) =>
        turn.kind === "toolResult"
      );
      return text(
        "read-failed",
        "I could not read test://review/status.",
        versionsSeen,
        {
          note: `read ${reads} times without resource content; last result: ${
            turnText(lastResult ?? { kind: "toolResult", text: "(none)" })
              .slice(0, 200)
          }`,
        },
      );
    }
    return { stage: "read-v1", action: readCall, waitSeconds: 0, versionsSeen };
  }

  const route = script.route ?? "native";
  if (route !== "native") {
    return routeDecision(conversation, script, route, firstSighting);
  }
  return nativeDecision(conversation, script, readCall, firstSighting);
}

/**
 * After version 1, natively: wait past the update and make the harmless
 * call, then note whether version 2 came in by itself and read again, then
 * answer.
 */
function nativeDecision(
  conversation: Conversation,
  script: ModelScript,
  readCall: Extract<Action, { kind: "tool" }>,
  firstSighting: number,
): Decision {
  const turns = conversation.turns;
  const versionsSeen = versionsIn(turns);
  const readNames = [readCall.name, script.read.name];
  const nudgeName = resolveTool(conversation.offeredTools, script.nudge.name);
  const nudgeNames = nudgeName === undefined
    ? []
    : [nudgeName, script.nudge.name];
  const rereadAt = callIndex(turns, readNames, firstSighting + 1);
  if (rereadAt >= 0) {
    const before = versionsIn(turns.slice(0, rereadAt));
    const after = versionsIn(turns.slice(rereadAt));
    const latest = after.at(-1);
    const contextUpdated = before.some((version) => version >= 2);
    return text(
      "final",
      latest === undefined
        ? "The second read returned no resource content."
        : `The review status is now at version ${latest}. The update reached my context before I asked again: ${
          contextUpdated ? "yes" : "no"
        }.`,
      versionsSeen,
      { contextUpdated },
    );
  }
  const nudged = nudgeNames.length > 0 &&
    callIndex(turns, nudgeNames, firstSighting + 1) >= 0;
  if (!nudged && nudgeName !== undefined) {
    return {
      stage: "wait-then-nudge",
      action: { kind: "tool", name: nudgeName, input: script.nudge.input },
      waitSeconds: script.waitSeconds,
      versionsSeen,
    };
  }
  return {
    stage: "check-context-then-reread",
    action: readCall,
    // Without a harmless tool the wait happens here, and the client gets no
    // turn between the update and the re-read.
    waitSeconds: nudged ? 0 : script.waitSeconds,
    versionsSeen,
    contextUpdated: versionsSeen.some((version) => version >= 2),
    note: nudged
      ? undefined
      : `no ${script.nudge.name} tool offered: no turn between the update and the re-read`,
  };
}

/**
 * After version 1, on the wait-tool and shell-probe routes: make the route's
 * call once, then judge from the conversation after it whether version 2
 * came back (level 7 via the route) and answer.
 */
export function routeDecision(
  conversation: Conversation,
  script: ModelScript,
  route: Exclude<Route, "native">,
  firstSighting: number,
): Decision {
  const turns = conversation.turns;
  const versionsSeen = versionsIn(turns);
  const what = route === "wait-tool" ? "wait tool" : "shell tool";
  if (script.routeCall === undefined) {
    return text(
      "no-route-tool",
      `I cannot take the ${route} route: ${
        script.routeUnavailable ?? `no ${what} is known for this client`
      }.`,
      versionsSeen,
      { note: script.routeUnavailable ?? `no ${what} for this client` },
    );
  }
  const wanted = script.routeCall.name;
  const name = resolveTool(conversation.offeredTools, wanted);
  const calledAt = callIndex(
    turns,
    name === undefined ? [wanted] : [name, wanted],
    firstSighting + 1,
  );
  if (calledAt < 0) {
    if (name === undefined) {
      return text(
        "no-route-tool",
        `I cannot take the ${route} route: no ${wanted} tool was offered.`,
        versionsSeen,
        { note: `offered tools: ${conversation.offeredTools.join(", ")}` },
      );
    }
    return {
      stage: route === "wait-tool" ? "call-wait-tool" : "run-probe",
      action: { kind: "tool", name, input: script.routeCall.input },
      waitSeconds: 0,
      versionsSeen,
    };
  }
  const after = versionsIn(turns.slice(calledAt));
  const contextUpdated = after.some((version) => version >= 2) ||
    (route === "shell-probe" &&
      turns.slice(calledAt).some((turn) =>
        /version: 2\b/.test(turnText(turn))
      ));
  const result = turns.slice(calledAt + 1).find((turn) =>
    turn.kind === "toolResult"
  );
  return text(
    "final",
    contextUpdated
      ? `The review status is now at version ${
        Math.max(2, ...after)
      }: the ${what} brought the update.`
      : `The ${what} did not bring version 2.`,
    versionsSeen,
    contextUpdated || result === undefined ? { contextUpdated } : {
      contextUpdated,
      routeResult: turnText(result).slice(0, ROUTE_RESULT_KEPT),
    },
  );
}

/**
 * What the model's requests showed of the new tool over a run: the name
 * under which a request after the first offered it, and whether the model
 * then called it. Null where no model drove the client.
 */
export interface NewToolSeen {
  offeredAs: string | null;
  called: boolean;
}

/** A catalog kind's level and the step that stopped it, in words. */
export interface CatalogStep {
  level: number;
  missing: string;
}

/** The diagnosis of a client that listed the new tool but kept it from its model. */
export const NEW_TOOL_NOT_IN_REQUEST =
  "listed again, but the new tool never reached a model request";

/**
 * The tools kind's catalog level with the model's side: the lab's level
 * (0-4: listed, notified, listed again with the new tool, called it) is
 * the client's, and level 5 is the new tool reaching a model request after
 * the change, the model then calling it. The lab cannot see a model; the
 * scripted model cannot see the lab, so each says what it saw.
 */
export function catalogToolsLevel(
  lab: CatalogStep,
  seen: NewToolSeen | null,
): CatalogStep {
  if (seen === null) {
    return lab.level < 4 ? lab : {
      level: 4,
      missing:
        `no model drives the client, so level 5 (${NEW_TOOL} reaching a model request) does not apply`,
    };
  }
  if (lab.level < 3) return lab;
  if (seen.offeredAs === null) {
    return { level: lab.level, missing: NEW_TOOL_NOT_IN_REQUEST };
  }
  if (!seen.called) {
    return {
      level: lab.level,
      missing:
        `${NEW_TOOL} reached a model request, but the model never called it`,
    };
  }
  if (lab.level === 3) {
    return {
      level: 3,
      missing:
        `${NEW_TOOL} reached a model request and the model called it, but the call never reached the lab (tools/call)`,
    };
  }
  return { level: 5, missing: "" };
}
