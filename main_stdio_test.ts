/**
 * The lab over stdio (`main.ts --stdio`) in a subprocess: the full flow in
 * both eras, what its child Deno is given to find this process's packages
 * (`denoChildEnv`), garbage on stdin, and a client that never reads its
 * stdout or stops reading it.
 *
 * ```sh
 * deno test -P main_stdio_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { REVIEW_URI } from "./main.ts";
import {
  denoChildEnv,
  prepareTestEnvironment,
  VERSION_1_TEXT,
  VERSION_2_TEXT,
} from "./testdata/lab.ts";
import {
  delay,
  initializeMessage,
  keepingVariables,
  linesOf,
  loggedStdioLab,
  modernMeta,
  nextResourceUpdate,
  readReview,
  stdioClient,
  stdioReadOnce,
  within,
} from "./testdata/lab_clients.ts";
import { MAIN_PATH } from "./launch.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The lab over stdio, end to end, and what its child Deno is given
// ---------------------------------------------------------------------------

/**
 * The lab over stdio (`loggedStdioLab`, with `flags`) in one era, end to
 * end: list, read version 1, subscribe or listen, the notification, read
 * version 2, and a level-6 verdict on the lab's stderr.
 */
async function stdioFullFlow(mode: "legacy" | "auto", ...flags: string[]) {
  const { client, verdictLog } = await stdioClient(
    `stdio-${mode}`,
    mode,
    "--log-level",
    "info",
    ...flags,
  );
  const era = client.getNegotiatedProtocolVersion() === "2026-07-28"
    ? "2026-07-28"
    : "2025";
  const { resources } = await client.listResources();
  assert.deepEqual(resources.map((resource) => resource.uri), [REVIEW_URI]);
  assert.equal(await readReview(client), VERSION_1_TEXT);
  const updated = nextResourceUpdate(client);
  const listen = era === "2026-07-28"
    ? await client.listen({ resourceSubscriptions: [REVIEW_URI, "x://y"] })
    : undefined;
  if (listen) {
    assert.deepEqual(listen.honoredFilter, {
      resourceSubscriptions: [REVIEW_URI],
    });
  } else {
    await client.subscribeResource({ uri: REVIEW_URI });
  }
  assert.equal(await updated, REVIEW_URI);
  assert.equal(await readReview(client), VERSION_2_TEXT);
  await listen?.close();
  await client.close();
  const log = await verdictLog();
  assert.match(log, /^\[verdict\] level=6 client=stdio-\w+\/1\.0\.0 /m);
  assert.match(
    log,
    new RegExp(
      `^\\[resources/read\\] uri=test://review/status version=2 client=stdio-${mode}/1\\.0\\.0 era=${era} `,
      "m",
    ),
  );
}

for (const mode of ["legacy", "auto"] as const) {
  Deno.test(`stdio (${mode === "legacy" ? "2025" : "2026-07-28"}): the full flow over a subprocess`, async () => {
    await stdioFullFlow(mode);
  });
}

Deno.test("stdio (2025): a DENO_DIR elsewhere and a HOME without a usable cache change nothing: the lab over stdio finds this process's packages", async () => {
  // Where this process's packages are: DENO_DIR, or Deno's default folder.
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const { denoDir } = JSON.parse(new TextDecoder().decode(info.stdout));
  assert.equal(typeof denoDir, "string");
  // A new user's setup: the cache named by DENO_DIR, and a HOME where
  // Deno's default cache cannot be (a file where its folder would go, on
  // Linux and on macOS), so a child that is not told DENO_DIR fails at
  // once, with or without a network.
  const home = await Deno.makeTempDir({ prefix: "stdio-home-" });
  await Deno.writeTextFile(`${home}/.cache`, "");
  await Deno.writeTextFile(`${home}/Library`, "");
  try {
    await keepingVariables(["HOME", "XDG_CACHE_HOME", "DENO_DIR"], async () => {
      Deno.env.set("HOME", home);
      Deno.env.delete("XDG_CACHE_HOME");
      Deno.env.set("DENO_DIR", denoDir);
      await stdioFullFlow("legacy");
    });
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("denoChildEnv: the cache, certificate, proxy and registry variables that are set, and nothing else", async () => {
  const names = [
    "DENO_DIR",
    "XDG_CACHE_HOME",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "DENO_CERT",
    "DENO_TLS_CA_STORE",
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
    "NO_PROXY",
    "no_proxy",
    "NPM_CONFIG_REGISTRY",
    "DENO_AUTH_TOKENS",
    "NO_COLOR",
    "DENO_NO_UPDATE_CHECK",
    "MCP_TEST_DENO_CHILD_OTHER",
  ];
  await keepingVariables(names, () => {
    for (const name of names) Deno.env.delete(name);
    Deno.env.set("DENO_DIR", "/tmp/a-new-cache");
    Deno.env.set("SSL_CERT_FILE", "/tmp/corporate-ca.pem");
    Deno.env.set("https_proxy", "http://proxy.example:3128");
    Deno.env.set("NO_PROXY", "127.0.0.1,localhost,::1");
    Deno.env.set("DENO_AUTH_TOKENS", "made-up@example.com");
    Deno.env.set("MCP_TEST_DENO_CHILD_OTHER", "not for a child");
    assert.deepEqual(denoChildEnv(), {
      DENO_DIR: "/tmp/a-new-cache",
      SSL_CERT_FILE: "/tmp/corporate-ca.pem",
      https_proxy: "http://proxy.example:3128",
      NO_PROXY: "127.0.0.1,localhost,::1",
      DENO_AUTH_TOKENS: "made-up@example.com",
    });
    return Promise.resolve();
  });
});

// ---------------------------------------------------------------------------
// One-era labs over stdio (--era)
// ---------------------------------------------------------------------------

/**
 * The one-era lab over stdio, `--era` `served`: the client that falls back
 * (`auto`) reaches 6 in that era; a client of the other era, `other`, fails
 * with `failure` (a pinned client's probe runs on a process of its own).
 */
async function oneEraOverStdio(
  served: "2025" | "2026-07-28",
  other: "legacy" | { pin: string },
  failure: string,
) {
  await stdioFullFlow("auto", "--era", served);
  const client = new Client({ name: "other-era", version: "1.0.0" }, {
    versionNegotiation: { mode: other },
  });
  const { transport } = loggedStdioLab("--era", served);
  await assert.rejects(client.connect(transport), (error: Error) => {
    assert.equal(error.message, failure);
    return true;
  });
  await transport.close();
}

Deno.test("stdio --era 2026-07-28: auto reaches 6; a 2025 client's initialize fails as on the SDK's legacy: 'reject' entry", async () => {
  await oneEraOverStdio(
    "2026-07-28",
    "legacy",
    "Unsupported protocol version: 2025-11-25",
  );
});

Deno.test("stdio --era 2025: auto falls back and reaches 6; a client pinned to 2026-07-28 fails on server/discover", async () => {
  await oneEraOverStdio(
    "2025",
    { pin: "2026-07-28" },
    "Version negotiation failed: the server did not offer pinned protocol version 2026-07-28 via server/discover (no fallback in pin mode)",
  );
});

Deno.test("stdio --era: the other era's requests get exact answers, each refusal logged in one line", async (t) => {
  const _meta = modernMeta("other-era");
  const cases = {
    "2026-07-28": {
      sent: [
        initializeMessage({ name: "other-era", version: "1.0.0" }),
        { jsonrpc: "2.0", id: 2, method: "resources/list", params: {} },
      ],
      errors: [{
        code: -32022,
        message: "Unsupported protocol version: 2025-06-18",
        data: { supported: ["2026-07-28"], requested: "2025-06-18" },
      }, {
        code: -32022,
        message:
          "Unsupported protocol version: the request did not name a protocol version",
        data: { supported: ["2026-07-28"] },
      }],
    },
    "2025": {
      sent: [
        { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta } },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "subscriptions/listen",
          params: { _meta, filter: { resourceSubscriptions: [REVIEW_URI] } },
        },
      ],
      errors: [1, 2].map(() => ({ code: -32601, message: "Method not found" })),
    },
  };
  for (const [era, { sent, errors }] of Object.entries(cases)) {
    await t.step(era, async () => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", MAIN_PATH, "--stdio", "--era", era],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      const lines = sent.map((message) => `${JSON.stringify(message)}\n`);
      await writer.write(new TextEncoder().encode(lines.join("")));
      await writer.close();
      const output = await within(child.output(), 30_000, "the lab's exit");
      assert.equal(output.code, 0);
      const answers = new TextDecoder().decode(output.stdout).split("\n")
        .filter(Boolean).map((line) => JSON.parse(line));
      assert.deepEqual(
        answers,
        errors.map((error, index) => ({
          jsonrpc: "2.0",
          id: index + 1,
          error,
        })),
      );
      const stderr = new TextDecoder().decode(output.stderr);
      assert.doesNotMatch(stderr, /^\[mcp\/error\]/m);
      const refusals = stderr.split("\n")
        .filter((line) => line.startsWith("[request/rejected]"))
        .map((line) => line.replace(/ client=.* at=\S+$| at=\S+$/, ""));
      assert.deepEqual(
        refusals,
        errors.map(({ code, message }) =>
          `[request/rejected] status=200 code=${code} message="${message}"`
        ),
      );
    });
  }
});

// ---------------------------------------------------------------------------
// Over stdio: garbage, and a client that does not read, or stops reading
// ---------------------------------------------------------------------------

Deno.test("the lab over stdio: garbage is -32700, JSON that is not JSON-RPC -32600, a 50 MB line is refused by its size, and the lab goes on serving", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "--stdio"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  const encoder = new TextEncoder();
  const answers = linesOf(child.stdout);
  const next = async () =>
    JSON.parse(
      (await within(answers.next(), 10_000, "an answer")).value as string,
    );
  await writer.write(encoder.encode("this is not json\n"));
  assert.deepEqual((await next()).error.code, -32700);
  await writer.write(encoder.encode('{"hello":"world"}\n'));
  const invalid = await next();
  assert.equal(invalid.id, null);
  assert.equal(invalid.error.code, -32600);
  // 50 MB in 1 MB writes, with no newline until the end.
  const megabyte = new Uint8Array(1024 * 1024).fill(0x61);
  for (let i = 0; i < 50; i++) await writer.write(megabyte);
  await writer.write(encoder.encode("\n"));
  const tooLong = await next();
  assert.equal(tooLong.id, null);
  assert.equal(tooLong.error.code, -32700);
  assert.equal(
    tooLong.error.message,
    "Parse error: the line is 52428800 bytes, over the 262144-byte limit",
  );
  await writer.write(encoder.encode(
    `${
      JSON.stringify(
        initializeMessage({ name: "after-garbage", version: "1.0.0" }),
      )
    }\n`,
  ));
  const initialized = await next();
  assert.equal(initialized.id, 1);
  assert.equal(
    initialized.result.serverInfo.name,
    "mcp-resource-subscription-lab",
  );
  await writer.close();
  const status = await child.status;
  assert.equal(status.code, 0);
  assert.equal(
    (await stderr).split("\n").filter((line) =>
      line.startsWith("[request/rejected] status=")
    ).length,
    3,
  );
});

Deno.test("--stdio: requests written with stdin closed at once are each answered before the lab ends, in both eras", async (t) => {
  const read = { jsonrpc: "2.0", method: "resources/read" };
  const _meta = modernMeta("eof");
  const eras = {
    "2025": [
      initializeMessage({ name: "eof", version: "1.0.0" }),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { ...read, id: 2, params: { uri: REVIEW_URI } },
    ],
    "2026-07-28": [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: { _meta },
      },
      { ...read, id: 2, params: { uri: REVIEW_URI, _meta } },
    ],
  };
  for (const [era, messages] of Object.entries(eras)) {
    await t.step(era, async () => {
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", MAIN_PATH, "--stdio"],
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      // One write, then EOF: the lab reads every line before it answers one.
      const writer = child.stdin.getWriter();
      const lines = messages.map((message) => `${JSON.stringify(message)}\n`);
      await writer.write(new TextEncoder().encode(lines.join("")));
      await writer.close();
      const output = await within(child.output(), 30_000, "the lab's exit");
      assert.equal(output.code, 0);
      const answers = new TextDecoder().decode(output.stdout).split("\n")
        .filter(Boolean).map((line) => JSON.parse(line));
      assert.deepEqual(answers.map((answer) => answer.id), [1, 2]);
      const { result } = answers[0];
      const serverInfo = era === "2025"
        ? result.serverInfo
        : result._meta["io.modelcontextprotocol/serverInfo"];
      assert.equal(serverInfo.name, "mcp-resource-subscription-lab");
      assert.equal(answers[1].result.contents[0].text, VERSION_1_TEXT);
      assert.match(
        new TextDecoder().decode(output.stderr),
        /^\[verdict\] level=3 client=eof\/1\.0\.0 /m,
      );
    });
  }
});

Deno.test("--stdio: a client that writes requests and never reads its stdout cannot grow the lab: input waits for replies to go out", async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "--stdio", "--log-level", "silent"],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const line = (message: unknown) =>
    new TextEncoder().encode(`${JSON.stringify(message)}\n`);
  let written = 0;
  const writing = (async () => {
    await writer.write(
      line(initializeMessage({ name: "flood", version: "1" })),
    );
    await writer.write(
      line({ jsonrpc: "2.0", method: "notifications/initialized" }),
    );
    for (let id = 2; id < 100_000; id++) {
      const bytes = line({ jsonrpc: "2.0", id, method: "ping" });
      await writer.write(bytes);
      written += bytes.length;
    }
  })().catch(() => {});
  await delay(3000);
  // 100,000 pings are 4.6 MB; the lab reads a few hundred past what the
  // pipes hold, then waits for its replies to be read.
  assert.ok(written < 1_000_000, `${written} bytes taken`);
  let rss: number | undefined;
  try {
    const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
    rss = Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1]) * 1024;
  } catch {
    // No /proc here: the bytes taken say it.
  }
  if (rss !== undefined) assert.ok(rss < 400 * 2 ** 20, `RSS ${rss}`);
  child.kill("SIGKILL");
  await child.status;
  await writing;
  await child.stdout.cancel();
});

Deno.test("--stdio: a client that closes its end of stdout gets one line on stderr, and the lab ends as at EOF with its report written", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/report.md`;
  const { child, writer, answers, stderr } = await stdioReadOnce(
    ["--report-file", path, "--log-level", "warn"],
    { name: "gone-reader", version: "1.0.0" },
    { drain: false },
  );
  // The client stops reading: its end of the lab's stdout is closed.
  await answers.return(undefined);
  for (let id = 3; id < 53; id++) {
    await writer.write(
      new TextEncoder().encode(
        `${JSON.stringify({ jsonrpc: "2.0", id, method: "ping" })}\n`,
      ),
    ).catch(() => {});
  }
  const status = await within(child.status, 10_000, "the lab's exit");
  await writer.close().catch(() => {});
  assert.equal(status.code, 0);
  const lines = (await stderr).split("\n").filter(Boolean);
  assert.equal(
    lines.filter((line) => line.startsWith("[stdio/closed]")).length,
    1,
    lines.join("\n"),
  );
  assert.deepEqual(lines.filter((line) => line.startsWith("[mcp/error]")), []);
  assert.match(
    await Deno.readTextFile(path),
    /^\| gone-reader \| 1\.0\.0 \| 2025 \(2025-11-25\) \| stdio \|/m,
  );
  await Deno.remove(dir, { recursive: true });
});
