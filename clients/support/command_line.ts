/**
 * The harness's own command lines (`deno task clients`, `deno task
 * servers`), read strictly by the lab's `parseFlags`: `--help`, and a bad
 * flag or value as one line on stderr with exit status 2, like the lab's
 * `config error: …`.
 *
 * @module
 */

import { resolve } from "node:path";
import { ConfigError } from "../../main.ts";
import { printableLine } from "./process.ts";

/** A word from the command line, safe to repeat in an error line. */
export function shown(text: string): string {
  return printableLine(text, 80);
}

/**
 * The line an entry ends a failed run with, `<prefix> error: …`: one line,
 * inert and bounded, whatever the error quotes (a parser's excerpt of a
 * file, npm's output).
 */
export function failureLine(prefix: string, error: unknown): string {
  return `${prefix} error: ${
    printableLine(error instanceof Error ? error.message : String(error), 500)
  }`;
}

/**
 * A folder flag's value as an absolute path: a folder or nothing yet (it is
 * made when needed), never empty or an existing file.
 */
export function folderFlag(flag: string, value: string): string {
  let isFile = false;
  try {
    isFile = !Deno.statSync(value).isDirectory;
  } catch {
    // Not there yet.
  }
  if (value.trim() === "" || isFile) {
    throw new ConfigError(`--${flag} "${shown(value)}" is not a folder`);
  }
  return resolve(value);
}

/**
 * A command's options from its command line, or the exit status to end
 * with: 0 after printing `usage` for `--help`, 2 after one line on stderr,
 * `<prefix> error: …`, for a bad flag or value.
 */
export function optionsOrExit<Options>(
  args: string[],
  parse: (args: string[]) => Options | "help",
  usage: string,
  prefix: string,
): Options | { exitStatus: number } {
  try {
    const options = parse(args);
    if (options !== "help") return options;
    console.log(usage);
    return { exitStatus: 0 };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`${prefix} error: ${error.message}`);
    return { exitStatus: 2 };
  }
}
