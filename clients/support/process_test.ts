import assert from "node:assert/strict";
import {
  commandLine,
  daemonPid,
  errorLine,
  printableLine,
  tail,
} from "./process.ts";

Deno.test("commandLine: an argument shown as given, per-run paths generic, spaces quoted", () => {
  const prompt = "Read the resource and tell me its status.";
  assert.equal(
    commandLine(
      "claude",
      [
        "-p",
        prompt,
        "--mcp-config",
        "/r/home/lab.json",
        "--flag",
        "a b",
        "/r/work/x",
      ],
      { home: "/r/home", workDir: "/r/work" },
      { [prompt]: '"<prompt>"' },
    ),
    `claude -p "<prompt>" --mcp-config $HOME/lab.json --flag 'a b' ./x`,
  );
});

Deno.test("daemonPid: a bare PID or a JSON record's pid field, never 1 or text", () => {
  assert.equal(daemonPid("4242\n"), 4242);
  assert.equal(
    daemonPid('{\n  "hubId": "h",\n  "pid": 31337,\n  "port": 1\n}'),
    31337,
  );
  assert.equal(daemonPid(""), undefined);
  assert.equal(daemonPid("1"), undefined);
  assert.equal(daemonPid('{"pid": 1}'), undefined);
  assert.equal(daemonPid("not a pid"), undefined);
});

Deno.test("tail and errorLine: last lines without terminal escapes; the first error-like line", () => {
  assert.equal(tail("a\n\n\x1b[31mb\x1b[0m\nc\n", 2), "b\nc");
  assert.equal(
    errorLine("ok\nFatal: no model\nError: later"),
    "Fatal: no model",
  );
  assert.equal(errorLine("all good"), undefined);
  // A vendor's login line beats the generic failure after it (Auggie, Qoder).
  assert.equal(
    errorLine(
      "❌ Failed to initialize API connection\n❌ No auth provided. Please log in with `auggie login`.",
    ),
    "❌ No auth provided. Please log in with `auggie login`.",
  );
  assert.equal(
    errorLine("Not logged in · Please run /login"),
    "Not logged in · Please run /login",
  );
});

Deno.test("printableLine: escapes dropped, control and format characters shown, white space folded, bounded", () => {
  assert.equal(
    printableLine("\x1b[31mred\x1b[0m \x1b]0;title\x07line\r\n\ttwo\x07", 80),
    "red line two\\u{7}",
  );
  assert.equal(printableLine("a\u202eb\u0000c", 80), "a\\u{202e}b\\u{0}c");
  assert.equal(printableLine("x".repeat(30), 10), `${"x".repeat(9)}…`);
  assert.equal(printableLine("  plain text  ", 80), "plain text");
});
