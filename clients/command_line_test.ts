/**
 * Tests for the harness's own command lines: `deno task clients` and `deno
 * task servers` run as processes, for `--help`, a bad flag and a bad value
 * (one line on stderr, exit status 2).
 *
 * @module
 */

import assert from "node:assert/strict";
import { CLIENTS_USAGE } from "./run.ts";
import { SERVERS_USAGE } from "./servers.ts";
import { prepareTestEnvironment } from "./testdata/fixtures.ts";

prepareTestEnvironment();

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

Deno.test("deno task clients: a bad flag or value is one line naming it, exit 2", async (t) => {
  const cases: [string[], string][] = [
    [
      ["--bogus"],
      `clients error: Unknown option '--bogus'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- "--bogus"; see --help`,
    ],
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
    await t.step(args.join(" "), async () => {
      assert.deepEqual(await runEntry("run.ts", args), {
        code: 2,
        stdout: "",
        stderr: `${line}\n`,
      });
    });
  }
});

Deno.test("deno task servers: --help prints the usage, a bad flag or value is one line, exit 2", async (t) => {
  assert.deepEqual(await runEntry("servers.ts", ["--help"]), {
    code: 0,
    stdout: `${SERVERS_USAGE}\n`,
    stderr: "",
  });
  const file = await Deno.makeTempFile({ prefix: "servers-cli-" });
  try {
    const cases: [string[], string][] = [
      [["--bogus"], "servers error: Unknown option '--bogus'; see --help"],
      [
        ["--results-dir", file],
        `servers error: --results-dir "${file}" is not a folder`,
      ],
      [
        ["--cache-dir"],
        "servers error: Option '--cache-dir <value>' argument missing; see --help",
      ],
      [
        ["extra"],
        "servers error: Unexpected argument 'extra'. This command does not take positional arguments; see --help",
      ],
    ];
    for (const [args, line] of cases) {
      await t.step(args.join(" "), async () => {
        assert.deepEqual(await runEntry("servers.ts", args), {
          code: 2,
          stdout: "",
          stderr: `${line}\n`,
        });
      });
    }
  } finally {
    await Deno.remove(file);
  }
});
