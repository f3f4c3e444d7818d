/**
 * The harness's own command lines (`deno task clients`, `deno task
 * servers`): flags read strictly, `--help`, and a bad flag or value as one
 * line on stderr with exit status 2, like the lab's `config error: …`.
 *
 * @module
 */

import { resolve } from "node:path";
import { ConfigError } from "../main.ts";
import { printableLine } from "./process.ts";

/** The flags a command takes: those with a value, and those without. */
export interface FlagNames {
  strings: readonly string[];
  booleans: readonly string[];
}

export interface ParsedFlags {
  /** Each flag with a value, as last given. */
  strings: Map<string, string>;
  /** The flags without a value that were given. */
  booleans: Set<string>;
  positionals: string[];
  /** Whether `--help` (or `-h`) was given. */
  help: boolean;
}

/** A word from the command line, safe to repeat in an error line. */
export function shown(text: string): string {
  return printableLine(text, 80);
}

/**
 * Reads `--name value`, `--name=value` and `--flag`; everything after `--`
 * is positional. Throws a `ConfigError` naming an unknown flag, a missing
 * value, or a value given to a flag that takes none.
 */
export function parseFlags(args: string[], names: FlagNames): ParsedFlags {
  const parsed: ParsedFlags = {
    strings: new Map(),
    booleans: new Set(),
    positionals: [],
    help: false,
  };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === "--") {
      parsed.positionals.push(...args.slice(index + 1));
      break;
    }
    if (arg === "--help" || arg === "-h") {
      parsed.help = true;
    } else if (!arg.startsWith("-") || arg === "-") {
      parsed.positionals.push(arg);
    } else {
      const equals = arg.indexOf("=");
      const flag = equals < 0 ? arg : arg.slice(0, equals);
      const name = flag.replace(/^--/, "");
      const inline = equals < 0 ? undefined : arg.slice(equals + 1);
      if (flag.startsWith("--") && names.booleans.includes(name)) {
        if (inline !== undefined) {
          throw new ConfigError(`${flag} takes no value; see --help`);
        }
        parsed.booleans.add(name);
      } else if (flag.startsWith("--") && names.strings.includes(name)) {
        const value = inline ?? args[++index];
        if (value === undefined) {
          throw new ConfigError(`${flag} needs a value; see --help`);
        }
        parsed.strings.set(name, value);
      } else {
        throw new ConfigError(`unknown option ${shown(flag)}; see --help`);
      }
    }
  }
  return parsed;
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
