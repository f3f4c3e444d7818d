/**
 * The scripted model's view of a request, whatever wire format carried it:
 * the tools the client offers its model and the conversation so far, in
 * order. Each wire module turns its request body into this shape, so the
 * decisions are written once.
 *
 * @module
 */

import { REVIEW_URI } from "../../main.ts";

/** One entry of the conversation a client sends its model. */
export type Turn =
  | { kind: "text"; role: "system" | "user" | "assistant"; text: string }
  /** A tool call the model made earlier (the conversation is its memory). */
  | { kind: "toolCall"; name: string; input: unknown }
  /** What the client answered to a tool call. */
  | { kind: "toolResult"; text: string };

export interface Conversation {
  /** Names of the tools the client offers its model in this request. */
  offeredTools: string[];
  turns: Turn[];
  /**
   * The client asks for a structured (JSON) answer rather than an agent turn,
   * e.g. Gemini CLI's "who speaks next" check.
   */
  wantsJson: boolean;
}

/** The resource text as the lab serves it: `status: X` then `version: N`. */
const RESOURCE_TEXT =
  /status: ([a-z][a-z-]*)(?:\\+[rn]|\s)+version: (\d+)(?:\\+[rn]|\s)+message:/g;

/** A copy of the lab's resource found in a piece of conversation text. */
export interface ResourceSighting {
  status: string;
  version: number;
}

/** Every copy of the lab's resource text in `text`, in order. */
export function resourceSightings(text: string): ResourceSighting[] {
  return [...text.matchAll(RESOURCE_TEXT)].map((match) => ({
    status: match[1],
    version: Number(match[2]),
  }));
}

/** How far past its "[MCP notification]" mark a notice is read. */
const NOTICE_SPAN = 400;

/**
 * Whether `text` holds a host's notice to its model that the lab's resource
 * changed, as oh-my-pi marks it: "[MCP notification]" followed, within a
 * few lines, by "updated" and the resource's URI, in whatever words around
 * them (18.2.3: "1 resource(s) updated:", then
 * `- server="lab" uri=test://review/status`, then how to read it). Such a
 * notice says that the resource changed, not what it holds: only
 * `resourceSightings` finds the content.
 */
export function holdsChangeNotice(text: string): boolean {
  return [...text.matchAll(/\[MCP notification\]/g)].some((mark) => {
    const notice = text.slice(mark.index, mark.index + NOTICE_SPAN);
    return /\bupdated\b/.test(notice) && notice.includes(REVIEW_URI);
  });
}

/** The text of a turn that can carry resource content (not the model's calls). */
export function turnText(turn: Turn): string {
  return turn.kind === "toolCall" ? "" : turn.text;
}

/**
 * Flattens any JSON-ish content (a string, content blocks, nested objects) to
 * the text it holds, so a tool result reads the same in every wire format.
 */
export function flattenText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  if (typeof value === "number" || typeof value === "boolean") {
    return String(value);
  }
  if (Array.isArray(value)) return value.map(flattenText).join("\n");
  if (typeof value === "object") {
    // Content blocks carry their words in `text`; other objects (a tool's
    // structured result) are read whole.
    const text = field(value, "text");
    if (typeof text === "string") return text;
    return Object.values(value).map(flattenText).join("\n");
  }
  return "";
}

/** A plain object's field, or undefined: request bodies are untrusted JSON. */
export function field(value: unknown, key: string): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return undefined;
  }
  return (value as Record<string, unknown>)[key];
}

/** A field that should be an array; anything else reads as empty. */
export function arrayField(value: unknown, key: string): unknown[] {
  const found = field(value, key);
  return Array.isArray(found) ? found : [];
}

/** A field that should be a string; anything else reads as "". */
export function stringField(value: unknown, key: string): string {
  const found = field(value, key);
  return typeof found === "string" ? found : "";
}

/** Parses a JSON string of tool arguments, keeping the raw text on failure. */
export function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw ?? {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
