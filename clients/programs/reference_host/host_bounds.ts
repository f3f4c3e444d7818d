/**
 * The reference host's bounds, so that no server or model can hang it or
 * fill its memory or terminal (`HOST_USAGE` and docs/client-authors.md say
 * them), and the two cuts every text goes through: `bounded` for what the
 * model is given, `printable` (and `say`, the host's own lines) for what
 * the host prints, the key taken out.
 *
 * @module
 */

import { lineText } from "../../../main.ts";

/** `--model-timeout` unless given: time enough for a local model on a CPU. */
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 300;
/** The most model requests one prompt gets. */
export const MAX_MODEL_REQUESTS = 12;
/** The most bytes of one message the host reads, the model's or the server's. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** The most characters of any text the model is given, and of a tool offered. */
export const MAX_CONTENT_CHARS = 16_000;
/**
 * The most tools the model is offered (the OpenAI API's own limit), and the
 * most entries the host keeps of any list the server changes.
 */
export const MAX_TOOLS = 128;
/**
 * How long one whole list of the server's may take, every page of it (the
 * SDK's own timeout for one request); its bytes and pages are bounded as
 * the probe's are (`LIST_MAX_BYTES`, `LIST_MAX_PAGES` in probe.ts).
 */
export const LIST_SECONDS = 60;
/** The most tool calls of one model answer the host runs: the first ones. */
export const MAX_TOOL_CALLS = 16;
/** The most characters of one line the host prints (the model's answer aside). */
export const MAX_LINE_CHARS = 1_000;
/** How long a stdio server has to exit after its stdin ends, and after SIGTERM. */
export const STOP_GRACE_MS = 2000;
/**
 * The wait before opening again a stream the server ended (a 2025 GET
 * stream, a listen): `--reopen-wait`, 1 s unless given, doubled for each
 * stream in a row that lived less than `REOPEN_RESET_MS`, at most
 * `REOPEN_MAX_MS`; each wait cut by up to `REOPEN_JITTER` of it at random,
 * so that clients the server cut at once do not come back at once.
 */
export const DEFAULT_REOPEN_WAIT_SECONDS = 1;
export const REOPEN_MAX_MS = 60_000;
export const REOPEN_JITTER = 0.25;
/** A stream that lived this long brings the wait back to `--reopen-wait`. */
export const REOPEN_RESET_MS = 60_000;
/** The most characters of a server's refusal the model is given. */
export const MAX_REASON_CHARS = 300;

/** Text cut to `MAX_CONTENT_CHARS`, saying how much was left out. */
export function bounded(text: string): string {
  if (text.length <= MAX_CONTENT_CHARS) return text;
  const cut = text.length - MAX_CONTENT_CHARS;
  return `${text.slice(0, MAX_CONTENT_CHARS)}\n[… ${cut} more characters]`;
}

/** The key, which nothing the host prints may hold (set by `hideKey`). */
let secret = "";

/** From now on, `printable` takes `key` out of all the host prints. */
export function hideKey(key: string) {
  secret = key;
}

/**
 * Text fit to print, whoever wrote it: the key taken out first (a cut
 * could leave its start), then at most `max` characters, control
 * characters escaped.
 */
export function printable(text: string, max = MAX_LINE_CHARS): string {
  const shown = secret ? text.replaceAll(secret, "[OPENAI_API_KEY]") : text;
  return lineText(shown.length > max ? `${shown.slice(0, max)}…` : shown);
}

/** One of the host's lines on stderr. */
export const say = (words: string) =>
  console.error(`[host] ${printable(words)}`);
