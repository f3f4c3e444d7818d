/**
 * Tests for the reference host's command line (`host_args.ts`) as
 * `parseHostArgs` reads it; the flags' errors and `--help` are tested on
 * the program as run (`reference_host_test.ts`).
 *
 * @module
 */

import assert from "node:assert/strict";
import { ConfigError } from "../../../main.ts";
import { parseHostArgs } from "./host_args.ts";

Deno.test("reference host: OPENAI_BASE_URL and OPENAI_MODEL stand in for --base-url and --model (a flag wins, an empty variable is unset)", () => {
  const url = ["--url", "http://127.0.0.1:9/mcp", "Go"];
  const local = {
    OPENAI_BASE_URL: "http://127.0.0.1:11434/v1",
    OPENAI_MODEL: "local-model",
  };
  const pick = (options: ReturnType<typeof parseHostArgs>) => {
    assert.notEqual(options, "help");
    return options === "help" ? [] : [options["base-url"], options.model];
  };
  assert.deepEqual(pick(parseHostArgs(url, local)), [
    "http://127.0.0.1:11434/v1",
    "local-model",
  ]);
  assert.deepEqual(
    pick(
      parseHostArgs(
        ["--base-url", "http://h/v1", "--model", "x", ...url],
        local,
      ),
    ),
    ["http://h/v1", "x"],
  );
  assert.deepEqual(
    pick(parseHostArgs(url, { OPENAI_BASE_URL: "", OPENAI_MODEL: "m" })),
    ["https://api.openai.com/v1", "m"],
  );
  assert.throws(
    () => parseHostArgs(url, { OPENAI_MODEL: "" }),
    { message: "no model: pass --model or set OPENAI_MODEL" },
  );
});

Deno.test("reference host: --no-reopen, the control for a cut stream, is off unless given, and goes with either transport", () => {
  const flags = (args: string[]) => {
    const options = parseHostArgs(args, { OPENAI_MODEL: "m" });
    assert.notEqual(options, "help");
    return options === "help"
      ? []
      : [options["no-reopen"], options["no-updates"]];
  };
  const url = ["--url", "http://127.0.0.1:9/mcp", "Go"];
  assert.deepEqual(flags(url), [false, false]);
  assert.deepEqual(flags(["--no-reopen", ...url]), [true, false]);
  assert.deepEqual(
    flags(["--no-reopen", "Go", "--stdio", "--", "deno", "run", "main.ts"]),
    [true, false],
  );
});

Deno.test("reference host: --reopen-wait, the first wait before a cut stream is opened again, is 1 s unless given, in seconds above 0 and at most 60", () => {
  const url = ["--url", "http://127.0.0.1:9/mcp", "Go"];
  const wait = (args: string[]) => {
    const options = parseHostArgs([...args, ...url], { OPENAI_MODEL: "m" });
    assert.notEqual(options, "help");
    return options === "help" ? undefined : options["reopen-wait"];
  };
  assert.equal(wait([]), 1);
  assert.equal(wait(["--reopen-wait", "4"]), 4);
  assert.equal(wait(["--reopen-wait", "0.25"]), 0.25);
  assert.equal(wait(["--reopen-wait", "60"]), 60);
  const error =
    "--reopen-wait must be a number of seconds, above 0 and at most 60";
  for (const bad of ["0", "60.5", "NaN", "soon", ""]) {
    assert.throws(
      () => wait(["--reopen-wait", bad]),
      (thrown) => thrown instanceof ConfigError && thrown.message === error,
      bad,
    );
  }
});
