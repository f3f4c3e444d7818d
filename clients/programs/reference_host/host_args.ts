/**
 * The reference host's command line: `HOST_USAGE` (what `--help` prints)
 * and `parseHostArgs`, the flags and the environment checked into
 * `HostOptions`, or a one-line `ConfigError`.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import { ConfigError, parseFlags } from "../../../main.ts";
import {
  DEFAULT_MODEL_TIMEOUT_SECONDS,
  DEFAULT_REOPEN_WAIT_SECONDS,
  REOPEN_MAX_MS,
} from "./host_bounds.ts";

const MODEL_TIMEOUT_ERROR =
  "--model-timeout must be a number of seconds, above 0 and at most 3600";
const REOPEN_WAIT_ERROR =
  `--reopen-wait must be a number of seconds, above 0 and at most ${
    REOPEN_MAX_MS / 1000
  }`;

/** What `--help` prints. */
export const HOST_USAGE =
  `Usage: deno run -A reference_host.ts [options] --url URL PROMPT
       deno run -A reference_host.ts [options] PROMPT --stdio -- COMMAND…

An MCP host whose agent loop brings resource updates to its model, and
offers it the server's tools as they are now. The prompt comes before
--stdio: all that follows -- is the server's command.

Options:
  --url URL        the MCP server, over Streamable HTTP
  --stdio -- COMMAND…
                   start the MCP server and speak to it over stdio (last:
                   all that follows -- is the command)
  --era ERA        auto (discover, then initialize; the default), 2025 or
                   2026-07-28
  --base-url URL   the model's OpenAI-compatible Chat Completions endpoint
                   (default: OPENAI_BASE_URL, else https://api.openai.com/v1)
  --model NAME     the model (default: OPENAI_MODEL)
  --no-updates     watch nothing, follow no list change: the host most
                   agents ship (the control)
  --no-reopen      never open a stream again after the server ended it
                   (the control for a cut stream)
  --reopen-wait S  seconds before a stream the server ended is first
                   opened again (default ${DEFAULT_REOPEN_WAIT_SECONDS}, at most ${
    REOPEN_MAX_MS / 1000
  }; doubled as
                   re-opening says below): longer against a server whose
                   cut is known, so that the host does not come back early
  --model-timeout S
                   seconds a model request may take, its answer read in
                   full (default ${DEFAULT_MODEL_TIMEOUT_SECONDS}: time for a local model on a CPU)
  --help           print this help

The key is OPENAI_API_KEY (none: no Authorization header, as a local
model may want), never printed nor passed to a stdio server. The host's
own lines go to stderr as [host] …, a stdio server's stderr as [server] …,
the model's answer to stdout. Exit status: 0 the model answered, 1 the
server or the model failed, 2 a bad flag or value, 130 or 143 after a
Ctrl-C or SIGTERM.

Bounds (constants in host_bounds.ts):
  time        each model request within --model-timeout, 12 a prompt
  reading     4 MiB of one message: the model's answer, the server's JSON
              body, event-stream event or stdio line (past it: not read)
  lists       a whole list of the server's, every page, within 8 MiB,
              64 pages and 60 s (past it: the pages before kept, the
              cut said)
  keeping     updates only for resources read, the latest text of each;
              of a list the server changes, 128 entries, none over
              16,000 characters; one list of each kind at a time, one
              more after it however many changes came meanwhile
  passing on  16,000 characters of any text the model is given; 128
              tools, none over 16,000 characters; the first 16 tool
              calls of an answer (the rest dropped)
  re-opening  a stream the server ended, opened again after --reopen-wait
              (${DEFAULT_REOPEN_WAIT_SECONDS} s unless given), doubled
              for each stream in a row that lived under 60 s, at most
              60 s, each wait cut by up to 25%; a refused watch
              never asked again (the model told, the server's words cut
              to 300 characters)
  printing    lines escaped and cut to 1,000 characters, the key taken out
  stdio       the server in a process group of its own: at the end its
              stdin closed, then SIGTERM, then SIGKILL, 2 s apart; a
              Ctrl-C or SIGTERM to the host passed on to it at once`;

const optionsSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: "--url is not an http(s) URL" })
    .optional(),
  stdio: z.array(z.string()).min(1, "--stdio needs -- COMMAND…").optional(),
  era: z.enum(["auto", "2025", "2026-07-28"], {
    error: "--era must be auto, 2025 or 2026-07-28",
  }),
  "base-url": z.url({ error: "--base-url is not a URL" }),
  model: z.string({ error: "no model: pass --model or set OPENAI_MODEL" }),
  "no-updates": z.boolean(),
  "no-reopen": z.boolean(),
  "model-timeout": z.coerce.number({ error: MODEL_TIMEOUT_ERROR })
    .refine((seconds) => seconds > 0 && seconds <= 3600, MODEL_TIMEOUT_ERROR),
  "reopen-wait": z.coerce.number({ error: REOPEN_WAIT_ERROR })
    .refine(
      (seconds) => seconds > 0 && seconds <= REOPEN_MAX_MS / 1000,
      REOPEN_WAIT_ERROR,
    ),
  prompt: z.string(),
}).refine((options) => (options.url === undefined) !== !options.stdio, {
  error: "give --url URL or --stdio -- COMMAND…, one of them",
});
export type HostOptions = z.output<typeof optionsSchema> & { apiKey: string };

/**
 * The command line and environment, checked (an empty variable counts as
 * unset); `"help"` for `--help`; a `ConfigError` if bad.
 */
export function parseHostArgs(
  args: string[],
  env: Record<string, string | undefined>,
): HostOptions | "help" {
  const split = args.includes("--") ? args.indexOf("--") : args.length;
  const { values, positionals } = parseFlags(args.slice(0, split), {
    help: { type: "boolean", default: false },
    url: { type: "string" },
    stdio: { type: "boolean" },
    era: { type: "string", default: "auto" },
    "base-url": {
      type: "string",
      default: env.OPENAI_BASE_URL || "https://api.openai.com/v1",
    },
    model: { type: "string", default: env.OPENAI_MODEL || undefined },
    "no-updates": { type: "boolean", default: false },
    "no-reopen": { type: "boolean", default: false },
    "model-timeout": {
      type: "string",
      default: String(DEFAULT_MODEL_TIMEOUT_SECONDS),
    },
    "reopen-wait": {
      type: "string",
      default: String(DEFAULT_REOPEN_WAIT_SECONDS),
    },
  }, { allowPositionals: true });
  const { help, ...options } = values;
  if (help) return "help";
  if (split < args.length && !options.stdio) {
    throw new ConfigError("-- COMMAND… goes with --stdio only");
  }
  const parsed = optionsSchema.safeParse({
    ...options,
    stdio: options.stdio ? args.slice(split + 1) : undefined,
    prompt: positionals.join(" "),
  });
  if (!parsed.success) throw new ConfigError(parsed.error.issues[0].message);
  if (parsed.data.prompt === "") {
    // After `--stdio --` a prompt would be one more word of the command.
    throw new ConfigError(
      options.stdio
        ? "no prompt: give it before --stdio (what follows -- is the server's command)"
        : "no prompt: give it as an argument",
    );
  }
  return { ...parsed.data, apiKey: env.OPENAI_API_KEY ?? "" };
}
