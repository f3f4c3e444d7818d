/**
 * The lab as a CI gate (`--require-level`, `--exit-after-clients`,
 * `--deadline`, `--gate-client`), over HTTP and over stdio: the lab runs as a
 * command, and its exit status, `verdict` lines and report file decide.
 *
 * ```sh
 * deno test -P main_gate_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import {
  ConfigError,
  LAB_VERSION,
  type LabReport,
  lineValue,
  loadConfig,
  REVIEW_URI,
} from "./main.ts";
import {
  prepareTestEnvironment,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  delay,
  eventually,
  gateRun,
  initializeMessage,
  labCommand,
  modernMeta,
  openRawSession,
  postJsonRpc,
  postModern,
  rawPost,
  readReview,
  stdioReadOnce,
  subscribeUntilUpdated,
  within,
} from "./testdata/lab_clients.ts";
import { MAIN_PATH } from "./launch.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The CI gate over HTTP: --exit-after-clients, --deadline, --require-level
// ---------------------------------------------------------------------------

const GATE_PASS_MISSING =
  "level 7 (the agent's context shows the update) is not observable from the server";

/**
 * A 2025 client of the gate's lab: reads version 1 and, with `subscribe`,
 * subscribes, waits for the update and reads version 2; then ends its
 * session with a DELETE, which the gate counts as a client that ended.
 */
async function gateClient(url: URL, name: string, subscribe: boolean) {
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name, version: "1.0.0" }, {
    versionNegotiation: { mode: "legacy" },
  });
  await client.connect(transport);
  await client.listResources();
  assert.equal(await readReview(client), VERSION_1_TEXT);
  if (subscribe) {
    await subscribeUntilUpdated(client);
    assert.equal(await readReview(client), VERSION_2_TEXT);
  }
  await transport.terminateSession();
  await client.close();
}

Deno.test("gate: a level-6 client passes --require-level 6; the lab ends once it has, and the .json report file holds its verdict", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/verdict.JSON`;
  const run = await gateRun({
    MCP_TEST_REQUIRE_LEVEL: "6",
    MCP_TEST_EXIT_AFTER_CLIENTS: "1",
    MCP_TEST_DEADLINE_SECONDS: "60",
    MCP_TEST_REPORT_FILE: path,
  }, (url) => gateClient(url, "gate-subscriber", true));
  assert.equal(run.code, 0, run.lines.join("\n"));
  assert.equal(run.stderr, "");
  assert.ok(
    run.lines.includes(
      "[lab] 1 client(s) ended: closing sessions and streams",
    ),
    run.lines.join("\n"),
  );
  assert.deepEqual(run.lines.filter((line) => line.startsWith("verdict ")), [
    `verdict client=gate-subscriber/1.0.0 level=6 required=6 pass missing=${
      lineValue(GATE_PASS_MISSING)
    }`,
  ]);
  const report = JSON.parse(await Deno.readTextFile(path)) as LabReport;
  assert.deepEqual(
    report.clients.map(({ name, level, era }) => ({ name, level, era })),
    [{ name: "gate-subscriber", level: 6, era: "2025" }],
  );
  assert.equal(report.lab, LAB_VERSION);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gate: a client that reads and never subscribes fails --require-level 6 with exit 1", async () => {
  const run = await gateRun({
    MCP_TEST_REQUIRE_LEVEL: "6",
    MCP_TEST_EXIT_AFTER_CLIENTS: "1",
    MCP_TEST_DEADLINE_SECONDS: "60",
  }, (url) => gateClient(url, "gate-reader", false));
  assert.equal(run.code, 1, run.lines.join("\n"));
  assert.deepEqual(run.lines.filter((line) => line.startsWith("verdict ")), [
    `verdict client=gate-reader/1.0.0 level=3 required=6 fail missing=${
      lineValue(`never subscribed to ${REVIEW_URI} (resources/subscribe)`)
    }`,
  ]);
});

Deno.test("gate: with two clients, the lab waits for both and fails if either falls short", async () => {
  const run = await gateRun({
    MCP_TEST_REQUIRE_LEVEL: "3",
    MCP_TEST_EXIT_AFTER_CLIENTS: "2",
    MCP_TEST_DEADLINE_SECONDS: "60",
  }, async (url) => {
    await gateClient(url, "gate-first", false);
    // A client that connects and leaves without reading: level 1.
    const transport = new StreamableHTTPClientTransport(url);
    const client = new Client({ name: "gate-second", version: "1.0.0" }, {
      versionNegotiation: { mode: "legacy" },
    });
    await client.connect(transport);
    await transport.terminateSession();
    await client.close();
  });
  assert.equal(run.code, 1, run.lines.join("\n"));
  assert.deepEqual(
    run.lines.filter((line) => line.startsWith("verdict ")).map((line) =>
      line.split(" missing=")[0]
    ),
    [
      "verdict client=gate-first/1.0.0 level=3 required=3 pass",
      "verdict client=gate-second/1.0.0 level=1 required=3 fail",
    ],
  );
});

Deno.test("gate: no client before --deadline fails --require-level; without it the deadline exits 0", async () => {
  const failed = await gateRun({
    MCP_TEST_REQUIRE_LEVEL: "6",
    MCP_TEST_DEADLINE_SECONDS: "0.5",
  });
  assert.equal(failed.code, 1);
  assert.ok(
    failed.lines.includes(
      "[lab] deadline of 0.5 s reached: closing sessions and streams",
    ),
    failed.lines.join("\n"),
  );
  assert.deepEqual(
    failed.lines.filter((line) => line.startsWith("verdict ")),
    [
      'verdict clients=0 required=6 fail missing="no client came before the lab shut down"',
    ],
  );
  const plain = await gateRun({ MCP_TEST_DEADLINE_SECONDS: "0.5" });
  assert.equal(plain.code, 0);
  assert.deepEqual(
    plain.lines.filter((line) => line.startsWith("verdict ")),
    [],
  );
});

Deno.test("gate: --require-level 7 and other bad gate flags exit 2 with one line", async (t) => {
  const cases: [string[], string][] = [
    [
      ["--require-level", "7"],
      'config error: --require-level="7" is not allowed: expected a level from 1 to 6 (level 7, the agent\'s context, is not observable by the lab)',
    ],
    [
      ["--require-level", "6.5"],
      'config error: --require-level="6.5" is not allowed: expected a level from 1 to 6 (level 7, the agent\'s context, is not observable by the lab)',
    ],
    [
      ["--require-max-streams", "0"],
      'config error: --require-max-streams="0" is not allowed: expected empty, or an integer from 1 to 1000000',
    ],
    [
      ["--require-max-reopens=-1"],
      'config error: --require-max-reopens="-1" is not allowed: expected empty, or an integer from 0 to 1000000',
    ],
    [
      ["--exit-after-clients", "two"],
      'config error: --exit-after-clients="two" is not allowed: expected an integer from 0 to 1000000',
    ],
    [
      ["--deadline=-5"],
      'config error: --deadline="-5" is not allowed: expected a number of seconds from 0 to 86400, fractions allowed',
    ],
    [
      ["--gate-client", "x".repeat(65)],
      `config error: --gate-client="${
        "x".repeat(65)
      }" is not allowed: expected a client name of at most 63 characters on one line`,
    ],
  ];
  for (const [flags, message] of cases) {
    await t.step(flags.join(" "), async () => {
      for (const stdio of [[], ["--stdio"]]) {
        const output = await labCommand([...stdio, ...flags], {
          MCP_TEST_PORT: "0",
        }).output();
        assert.equal(output.code, 2);
        assert.equal(new TextDecoder().decode(output.stderr), `${message}\n`);
        assert.equal(new TextDecoder().decode(output.stdout), "");
      }
    });
  }
});

Deno.test("gate: --gate-client and MCP_TEST_GATE_CLIENT read alike, trimmed; a name clipped to 64 characters can be neither", () => {
  for (const name of [" x", "x ", "\tx\t"]) {
    assert.equal(loadConfig({ MCP_TEST_GATE_CLIENT: name }).gateClient, "x");
    assert.equal(loadConfig({}, { "gate-client": name }).gateClient, "x");
  }
  const longest = "a".repeat(63);
  assert.equal(loadConfig({}, { "gate-client": longest }).gateClient, longest);
  // What a longer clientInfo name is clipped to: 63 characters and "…".
  const clipped = `${longest}…`;
  const expected =
    "is not allowed: expected a client name of at most 63 characters on one line";
  assert.throws(
    () => loadConfig({ MCP_TEST_GATE_CLIENT: clipped }),
    new ConfigError(`MCP_TEST_GATE_CLIENT="${clipped}" ${expected}`),
  );
  assert.throws(
    () => loadConfig({}, { "gate-client": clipped }),
    new ConfigError(`--gate-client="${clipped}" ${expected}`),
  );
});

/** A raw 2025 session under `name` that lists resources, then ends. */
async function listedAndGone(url: URL, name: string) {
  const sessionId = await openRawSession(url, "2025-06-18", name);
  const headers = { "mcp-session-id": sessionId };
  await postJsonRpc(url, {
    jsonrpc: "2.0",
    id: 2,
    method: "resources/list",
  }, headers);
  const gone = await fetch(url, { method: "DELETE", headers });
  await gone.body?.cancel();
}

Deno.test("gate --gate-client: another process's level-6 run, a bare initialize and DELETE, an idle session neither end, pass nor fail it", async () => {
  const gated = (level6: boolean) =>
    gateRun({
      MCP_TEST_REQUIRE_LEVEL: "6",
      MCP_TEST_EXIT_AFTER_CLIENTS: "1",
      MCP_TEST_DEADLINE_SECONDS: "60",
      MCP_TEST_GATE_CLIENT: "gated-client",
    }, async (url) => {
      await gateClient(url, "other-process", true);
      const junk = await openRawSession(url, "2025-06-18", "junk");
      const gone = await fetch(url, {
        method: "DELETE",
        headers: { "mcp-session-id": junk },
      });
      await gone.body?.cancel();
      await openRawSession(url, "2025-06-18", "idle-bystander");
      await gateClient(url, "gated-client", level6);
    });
  const failed = await gated(false);
  assert.equal(failed.code, 1, failed.lines.join("\n"));
  assert.deepEqual(
    failed.lines.filter((line) => line.startsWith("verdict ")),
    [
      `verdict client=gated-client/1.0.0 level=3 required=6 fail missing=${
        lineValue(`never subscribed to ${REVIEW_URI} (resources/subscribe)`)
      }`,
    ],
  );
  const passed = await gated(true);
  assert.equal(passed.code, 0, passed.lines.join("\n"));
  assert.deepEqual(
    passed.lines.filter((line) => line.startsWith("verdict ")),
    [
      `verdict client=gated-client/1.0.0 level=6 required=6 pass missing=${
        lineValue(GATE_PASS_MISSING)
      }`,
    ],
  );
});

Deno.test("gate: a judged client is never pushed out of the verdicts or the report by 100 clients that end after it", async (t) => {
  for (const named of [false, true]) {
    await t.step(named ? "--gate-client" : "every client judged", async () => {
      const dir = await Deno.makeTempDir();
      const path = `${dir}/report.json`;
      const run = await gateRun({
        MCP_TEST_REQUIRE_LEVEL: "2",
        MCP_TEST_DEADLINE_SECONDS: "4",
        MCP_TEST_REPORT_FILE: path,
        ...named && { MCP_TEST_GATE_CLIENT: "first" },
      }, async (url) => {
        // Connected, never listed: level 1, below the required 2.
        const first = await openRawSession(url, "2025-06-18", "first");
        const gone = await fetch(url, {
          method: "DELETE",
          headers: { "mcp-session-id": first },
        });
        await gone.body?.cancel();
        for (let i = 0; i < 100; i++) await listedAndGone(url, `later-${i}`);
      });
      assert.equal(run.code, 1, run.lines.join("\n"));
      const verdicts = run.lines.filter((line) => line.startsWith("verdict "));
      assert.ok(
        verdicts.some((line) =>
          line.startsWith("verdict client=first/0.0.1 level=1 required=2 fail ")
        ),
        verdicts.join("\n"),
      );
      assert.equal(verdicts.length, named ? 1 : 101);
      const report = JSON.parse(await Deno.readTextFile(path)) as LabReport;
      assert.ok(report.clients.some((client) => client.name === "first"));
      await Deno.remove(dir, { recursive: true });
    });
  }
});

/**
 * A client of `era` under `name`, by raw requests: it connects (a session,
 * or `server/discover`) and `call(method, params)` sends in its name.
 */
async function rawClient(url: URL, era: "2025" | "2026-07-28", name: string) {
  const sessionId = era === "2025"
    ? await openRawSession(url, "2025-06-18", name)
    : undefined;
  const headers = { "mcp-session-id": sessionId ?? "" };
  const call = (method: string, params: Record<string, unknown> = {}) =>
    sessionId
      ? rawPost(
        url,
        JSON.stringify({ jsonrpc: "2.0", id: 2, method, params }),
        headers,
      )
      : postModern(url, method, params, { client: name });
  if (!sessionId) {
    const discovered = await call("server/discover");
    assert.equal(discovered.status, 200);
    await discovered.body?.cancel();
  }
  return { call, headers };
}

Deno.test("gate --gate-client: strangers past --max-sessions never evict the judged client, in either era; when it is the only idle one, a newcomer is refused", async (t) => {
  for (const era of ["2025", "2026-07-28"] as const) {
    await t.step(era, async () => {
      const run = await gateRun({
        MCP_TEST_REQUIRE_LEVEL: "2",
        MCP_TEST_EXIT_AFTER_CLIENTS: "1",
        MCP_TEST_DEADLINE_SECONDS: era === "2025" ? "60" : "6",
        MCP_TEST_GATE_CLIENT: "real",
        MCP_TEST_MAX_SESSIONS: "2",
      }, async (url) => {
        const real = await rawClient(url, era, "real");
        const listed = await real.call("resources/list");
        assert.equal(listed.status, 200);
        await listed.body?.cancel();
        // A stranger in use (a GET stream, a listen) fills the cap: the
        // only idle client is judged, so a newcomer waits its turn.
        const busy = await rawClient(url, era, "busy-stranger");
        const stream = era === "2025"
          ? await fetch(url, {
            headers: { accept: "text/event-stream", ...busy.headers },
          })
          : await busy.call("subscriptions/listen", {
            notifications: { resourceSubscriptions: [REVIEW_URI] },
          });
        assert.equal(stream.status, 200);
        const knock = (name: string) =>
          era === "2025"
            ? rawPost(
              url,
              JSON.stringify(initializeMessage({ name, version: "1" })),
            )
            : postModern(url, "server/discover", {}, { client: name });
        const refused = await knock("late");
        const answer = await refused.json();
        assert.equal(answer.error.code, -32603);
        assert.match(
          answer.error.message,
          /^(Session|Client) limit reached: the lab holds 2 .*judged by the CI gate/,
        );
        await stream.body?.cancel();
        // Admitted once the lab has seen the stream end.
        for (let tries = 1; (await knock("late")).status !== 200; tries++) {
          assert.ok(tries < 50, "the stranger's stream never ended");
          await delay(100);
        }
        // 50 strangers, each evicting an idle stranger, never the judged.
        for (let i = 0; i < 50; i++) await rawClient(url, era, `stranger-${i}`);
        const again = await real.call("resources/list");
        assert.equal(again.status, 200);
        await again.body?.cancel();
        if (era === "2025") {
          const gone = await fetch(url, {
            method: "DELETE",
            headers: real.headers,
          });
          await gone.body?.cancel();
        }
      });
      assert.equal(run.code, 0, run.lines.join("\n"));
      const version = era === "2025" ? "0.0.1" : "1.0.0";
      assert.deepEqual(
        run.lines.filter((line) => line.startsWith("verdict ")).map((line) =>
          line.replace(/ missing=.*/, "")
        ),
        [`verdict client=real/${version} level=2 required=2 pass`],
      );
    });
  }
});

// ---------------------------------------------------------------------------
// The CI gate over stdio
// ---------------------------------------------------------------------------

/**
 * The lab over stdio as a gate: a client that reads version 1 and closes
 * stdin (or, with `keepOpen`, leaves it open); its exit status and stderr.
 */
async function stdioGate(flags: string[], keepOpen = false) {
  const { child, writer, stderr } = await stdioReadOnce(
    ["--log-level", "warn", ...flags],
    { name: "stdio-gate", version: "1.0.0" },
  );
  if (!keepOpen) await writer.close();
  const status = await within(child.status, 30_000, "the stdio gate's exit");
  if (keepOpen) await writer.close().catch(() => {});
  return { code: status.code, stderr: await stderr };
}

Deno.test("gate over stdio: 300 open listens keep stdin read, so EOF still ends it with the verdict and the report file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/report.md`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      MAIN_PATH,
      "--stdio",
      "--require-level",
      "6",
      "--report-file",
      path,
      "--delay",
      "0.2",
      "--log-level",
      "warn",
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(`${JSON.stringify(message)}\n`));
  const meta = modernMeta("listener");
  await send({
    jsonrpc: "2.0",
    id: 0,
    method: "server/discover",
    params: { _meta: meta },
  });
  for (let id = 1; id <= 300; id++) {
    await send({
      jsonrpc: "2.0",
      id,
      method: "subscriptions/listen",
      params: {
        _meta: meta,
        notifications: { resourceSubscriptions: [REVIEW_URI] },
      },
    });
  }
  let stdout = "";
  const read = child.stdout.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stdout += chunk) }),
  );
  const stderr = new Response(child.stderr).text();
  const updates = () =>
    stdout.split("\n").filter((line) =>
      line.includes('"notifications/resources/updated"')
    ).length;
  // Past the update, on every listen, stdin still open: the lab is there.
  await eventually(() => updates() === 300, "300 updates, one per listen");
  await writer.close();
  const status = await within(child.status, 30_000, "the stdio gate's exit");
  await read;
  assert.equal(updates(), 300);
  assert.equal(status.code, 1);
  assert.match(
    await stderr,
    /^verdict client=listener\/1\.0\.0 level=5 required=6 fail missing=/m,
  );
  assert.match(await Deno.readTextFile(path), /\| listener \| 1\.0\.0 \|/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gate over stdio: the exit status when the client closes stdin, the verdict line on stderr, the .json report file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/stdio.json`;
  const run = await stdioGate(["--require-level", "3", "--report-file", path]);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(
    run.stderr.includes(
      `verdict client=stdio-gate/1.0.0 level=3 required=3 pass missing=${
        lineValue(`never subscribed to ${REVIEW_URI} (resources/subscribe)`)
      }\n`,
    ),
    run.stderr,
  );
  const report = JSON.parse(await Deno.readTextFile(path)) as LabReport;
  assert.deepEqual(report.clients.map(({ name, level }) => ({ name, level })), [
    { name: "stdio-gate", level: 3 },
  ]);
  const failed = await stdioGate(["--require-level", "4"]);
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(
    failed.stderr,
    /^verdict client=stdio-gate\/1\.0\.0 level=3 required=4 fail missing=/m,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("gate over stdio: --deadline closes a client that stays connected and judges it", async () => {
  const run = await stdioGate(
    ["--require-level", "6", "--deadline", "1"],
    true,
  );
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /^\[lab\] deadline of 1 s reached: closing stdio$/m);
  assert.match(
    run.stderr,
    /^verdict client=stdio-gate\/1\.0\.0 level=3 required=6 fail missing=/m,
  );
});
