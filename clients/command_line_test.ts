/**
 * Tests for the harness's own command lines: `parseFlags`, and `deno task
 * clients` and `deno task servers` run as processes, for `--help`, a bad
 * flag and a bad value (one line on stderr, exit status 2).
 *
 * @module
 */

import assert from "node:assert/strict";
import { ConfigError } from "../main.ts";
import { parseFlags } from "./command_line.ts";
import { CLIENTS_USAGE } from "./run.ts";
import { SERVERS_USAGE } from "./servers.ts";
import { prepareTestEnvironment } from "./testdata/fixtures.ts";

prepareTestEnvironment();

const names = { strings: ["timeout", "route"], booleans: ["check"] };

Deno.test("parseFlags: values inline or next, booleans, positionals, and everything after --", () => {
  const parsed = parseFlags(
    ["copilot", "--timeout", "-1", "--route=native", "--check", "--", "--x"],
    names,
  );
  assert.deepEqual(parsed, {
    strings: new Map([["timeout", "-1"], ["route", "native"]]),
    booleans: new Set(["check"]),
    positionals: ["copilot", "--x"],
    help: false,
  });
  assert.equal(parseFlags(["-h"], names).help, true);
});

Deno.test("parseFlags: an unknown flag, a missing value and a value for a flag without one are one line each", () => {
  const refused = (args: string[], message: string) =>
    assert.throws(() => parseFlags(args, names), new ConfigError(message));
  refused(["--bogus"], "unknown option --bogus; see --help");
  refused(["-x"], "unknown option -x; see --help");
  refused(["--\x1b[31mred\nline"], "unknown option --red line; see --help");
  refused(["--timeout"], "--timeout needs a value; see --help");
  refused(["--check=yes"], "--check takes no value; see --help");
});

/** Runs a harness entry with `args`: its exit status, stdout and stderr. */
async function runEntry(entry: "run.ts" | "servers.ts", args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(entry, import.meta.url).pathname, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code,
    stdout: decoder.decode(stdout),
    stderr: decoder.decode(stderr),
  };
}

Deno.test("deno task clients: --help prints the usage and exits 0", async () => {
  assert.deepEqual(await runEntry("run.ts", ["--help"]), {
    code: 0,
    stdout: `${CLIENTS_USAGE}\n`,
    stderr: "",
  });
  assert.match(CLIENTS_USAGE, /^Usage: deno task clients \[options\]/);
});

Deno.test("deno task clients: a bad flag or value is one line naming it, exit 2", async () => {
  const cases: [string[], string][] = [
    [["--bogus"], "clients error: unknown option --bogus; see --help"],
    [
      ["--timeout", "soon"],
      'clients error: --timeout "soon" is not a non-negative number',
    ],
    [
      ["--route", "native,teleport"],
      'clients error: --route "native,teleport" is not a comma-separated list of native, wait-tool, shell-probe',
    ],
  ];
  for (const [args, line] of cases) {
    assert.deepEqual(await runEntry("run.ts", args), {
      code: 2,
      stdout: "",
      stderr: `${line}\n`,
    });
  }
});

Deno.test("deno task servers: --help prints the usage, a bad flag or value is one line, exit 2", async () => {
  assert.deepEqual(await runEntry("servers.ts", ["--help"]), {
    code: 0,
    stdout: `${SERVERS_USAGE}\n`,
    stderr: "",
  });
  const file = await Deno.makeTempFile({ prefix: "servers-cli-" });
  try {
    const cases: [string[], string][] = [
      [["--bogus"], "servers error: unknown option --bogus; see --help"],
      [
        ["--results-dir", file],
        `servers error: --results-dir "${file}" is not a folder`,
      ],
      [["--cache-dir"], "servers error: --cache-dir needs a value; see --help"],
    ];
    for (const [args, line] of cases) {
      assert.deepEqual(await runEntry("servers.ts", args), {
        code: 2,
        stdout: "",
        stderr: `${line}\n`,
      });
    }
  } finally {
    await Deno.remove(file);
  }
});
