import assert from "node:assert/strict";
import { LAB_VERSION, REVIEW_URI, SDK_VERSION } from "../../main.ts";
import {
  defaultDenoDir,
  LAB_LOG_LINES_KEPT,
  labLogFacts,
  labRunEnv,
  startRunLab,
  stdioLabCommand,
  stdioLabReports,
} from "./run_lab.ts";
import { labClient } from "../testdata/fixtures.ts";
import {
  isWorldMode,
  labSettingsOf,
  type ModeId,
  MODES,
} from "../catalog/types.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

const labMainPath = new URL("../../main.ts", import.meta.url).pathname;

Deno.test("labRunEnv: the run's update, tools and debug logs as MCP_TEST_* settings", () => {
  assert.deepEqual(
    labRunEnv({ trigger: "read", delaySeconds: 3, enableTool: true }),
    {
      MCP_TEST_UPDATE_DELAY_SECONDS: "3",
      MCP_TEST_UPDATE_TRIGGER: "read",
      MCP_TEST_INLINE_CONTENT: "off",
      MCP_TEST_CATALOG_CHANGE: "off",
      MCP_TEST_ERA: "both",
      MCP_TEST_MAX_WATCHES: "",
      MCP_TEST_STREAM_LIFETIME_SECONDS: "",
      MCP_TEST_STREAM_END: "graceful",
      MCP_TEST_ENABLE_TOOL: "true",
      MCP_TEST_ENABLE_WAIT_TOOL: "false",
      MCP_TEST_LOG_LEVEL: "debug",
    },
  );
});

Deno.test("labRunEnv: mode inline-content's lab puts SEP-3119's text in every update, over HTTP and stdio", () => {
  const inline = {
    trigger: "subscribe" as const,
    delaySeconds: 3,
    labSettings: labSettingsOf("inline-content"),
  };
  assert.deepEqual(labRunEnv({ ...inline, enableTool: false }), {
    MCP_TEST_UPDATE_DELAY_SECONDS: "3",
    MCP_TEST_UPDATE_TRIGGER: "subscribe",
    MCP_TEST_INLINE_CONTENT: "sep-3119",
    MCP_TEST_CATALOG_CHANGE: "off",
    MCP_TEST_ERA: "both",
    MCP_TEST_MAX_WATCHES: "",
    MCP_TEST_STREAM_LIFETIME_SECONDS: "",
    MCP_TEST_STREAM_END: "graceful",
    MCP_TEST_ENABLE_TOOL: "false",
    MCP_TEST_ENABLE_WAIT_TOOL: "false",
    MCP_TEST_LOG_LEVEL: "debug",
  });
  const stdio = stdioLabCommand({
    ...inline,
    labMainPath: "/lab/main.ts",
    denoDir: "/cache/deno",
    stderrPath: "/runs/lab.log",
  });
  assert.equal(stdio.env.MCP_TEST_INLINE_CONTENT, "sep-3119");
  // A stdio report's scenario is the run's: off unless the run set it.
  const stderr = [
    '{"event":"lab","transport":"stdio","version":"0.2.0","sdk":"2.4.0"}',
    '{"event":"verdict","id":"stdio","name":"demo","version":"1.0.0","level":1,"steps":{"connected":true}}',
  ].join("\n");
  const scenarioOf = (reports: ReturnType<typeof stdioLabReports>) =>
    "labReport" in reports ? reports.labReport?.scenario.inlineContent : null;
  assert.equal(
    scenarioOf(
      stdioLabReports(stderr, {
        trigger: "subscribe",
        updateDelaySeconds: 3,
        labSettings: { inlineContent: "sep-3119" },
      }),
    ),
    "sep-3119",
  );
  assert.equal(
    scenarioOf(
      stdioLabReports(stderr, {
        trigger: "subscribe",
        updateDelaySeconds: 3,
        labSettings: {},
      }),
    ),
    "off",
  );
});

Deno.test("labRunEnv: mode catalog's lab changes every kind of its catalog, over HTTP and stdio; any other mode's changes none", () => {
  const settings = {
    trigger: "read" as const,
    delaySeconds: 3,
    enableTool: false,
  };
  assert.equal(
    labRunEnv({ ...settings, labSettings: labSettingsOf("catalog") })
      .MCP_TEST_CATALOG_CHANGE,
    "all",
  );
  for (const mode of MODES.filter((mode) => mode !== "catalog")) {
    assert.equal(
      labRunEnv({ ...settings, labSettings: labSettingsOf(mode) })
        .MCP_TEST_CATALOG_CHANGE,
      "off",
      mode,
    );
  }
  // A catalog run launched over stdio: the lab the client starts changes
  // its catalog, and its report's scenario says so in the lab's words.
  const stdio = stdioLabCommand({
    ...settings,
    labSettings: labSettingsOf("catalog"),
    labMainPath: "/lab/main.ts",
    denoDir: "/cache/deno",
    stderrPath: "/runs/lab.log",
  });
  assert.equal(stdio.env.MCP_TEST_CATALOG_CHANGE, "all");
  const stderr = [
    '{"event":"lab","transport":"stdio","version":"0.2.0","sdk":"2.4.0"}',
    '{"event":"verdict","id":"stdio","name":"demo","version":"1.0.0","level":1,"steps":{"connected":true}}',
  ].join("\n");
  const scenario = { trigger: "read" as const, updateDelaySeconds: 3 };
  const catalogChange = (reports: ReturnType<typeof stdioLabReports>) =>
    "labReport" in reports ? reports.labReport?.scenario.catalogChange : null;
  assert.deepEqual(
    [
      catalogChange(
        stdioLabReports(stderr, {
          ...scenario,
          labSettings: { catalogChange: "all" },
        }),
      ),
      catalogChange(
        stdioLabReports(stderr, {
          ...scenario,
          labSettings: { catalogChange: "tools" },
        }),
      ),
      catalogChange(stdioLabReports(stderr, scenario)),
    ],
    ["tools,prompts,resources", "tools", "off"],
  );
});

Deno.test("startRunLab: a run's inlineContent reaches the lab it starts, whose report says so", async () => {
  const runDir = await Deno.makeTempDir({ prefix: "inline-lab-" });
  try {
    const lab = await startRunLab(
      {
        labMainPath,
        runDir,
        delaySeconds: 3,
        labSettings: { inlineContent: "sep-3119" },
      },
      "subscribe",
    );
    assert.ok("url" in lab, "failed" in lab ? lab.failed : "");
    try {
      const { scenario } = await lab.report();
      assert.deepEqual([scenario.trigger, scenario.inlineContent], [
        "subscribe",
        "sep-3119",
      ]);
    } finally {
      await lab.stop();
    }
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
});

Deno.test("stdioLabCommand: this Deno runs main.ts --stdio from the cache only, its stderr appended to the run's log", () => {
  const command = stdioLabCommand({
    labMainPath: "/lab one/main.ts",
    denoDir: "/cache/deno",
    stderrPath: "/runs/it's/lab.log",
    trigger: "subscribe",
    delaySeconds: 5,
  });
  assert.deepEqual(command, {
    command: "sh",
    args: [
      "-c",
      `exec "$0" "$@" 3>&2 2>>'/runs/it'\\''s/lab.log'`,
      Deno.execPath(),
      "run",
      "-A",
      "--cached-only",
      "/lab one/main.ts",
      "--stdio",
    ],
    env: {
      MCP_TEST_UPDATE_DELAY_SECONDS: "5",
      MCP_TEST_UPDATE_TRIGGER: "subscribe",
      MCP_TEST_INLINE_CONTENT: "off",
      MCP_TEST_CATALOG_CHANGE: "off",
      MCP_TEST_ERA: "both",
      MCP_TEST_MAX_WATCHES: "",
      MCP_TEST_STREAM_LIFETIME_SECONDS: "",
      MCP_TEST_STREAM_END: "graceful",
      MCP_TEST_ENABLE_TOOL: "false",
      MCP_TEST_ENABLE_WAIT_TOOL: "false",
      MCP_TEST_LOG_LEVEL: "debug",
      MCP_TEST_LOG_FORMAT: "json",
      DENO_DIR: "/cache/deno",
      DENO_NO_UPDATE_CHECK: "1",
    },
  });
});

Deno.test("stdioLabReports: no banner, or no verdict, is a reason rather than a report", () => {
  const scenario = { trigger: "subscribe" as const, updateDelaySeconds: 3 };
  assert.deepEqual(stdioLabReports("", scenario), {
    unavailable: "the stdio lab never started",
  });
  assert.deepEqual(
    stdioLabReports(
      `{"event":"lab","transport":"stdio","version":"0.2.0","sdk":"2.4.0","deno":"2.9.6","resource":"${REVIEW_URI}"}\n{"event":"initialize"}\n`,
      scenario,
    ),
    {
      unavailable:
        "the stdio lab printed no verdict (it prints one when its client closes its stdin)",
    },
  );
});

/** One JSON-RPC message per line, as a stdio client writes them. */
function messages(...bodies: Record<string, unknown>[]): string {
  return bodies.map((body) => JSON.stringify({ jsonrpc: "2.0", ...body }))
    .join("\n") + "\n";
}

Deno.test("stdioLabReports: the lab, run as stdioLabCommand says, grades its client when stdin closes", async () => {
  const dir = await Deno.makeTempDir({ prefix: "stdio-lab-" });
  try {
    const stderrPath = `${dir}/lab.log`;
    const lab = stdioLabCommand({
      labMainPath,
      denoDir: defaultDenoDir(),
      stderrPath,
      trigger: "subscribe",
      delaySeconds: 3,
    });
    const child = new Deno.Command(lab.command, {
      args: lab.args,
      env: lab.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderrText = new Response(child.stderr).text();
    const writer = child.stdin.getWriter();
    await writer.write(
      new TextEncoder().encode(messages(
        {
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: {},
            clientInfo: { name: "lab-test", version: "1.0.0" },
          },
        },
        { method: "notifications/initialized" },
        { id: 2, method: "resources/list" },
        { id: 3, method: "resources/read", params: { uri: REVIEW_URI } },
      )),
    );
    // Each request answered before stdin closes.
    const reader = child.stdout.getReader();
    let answered = "";
    while ((answered.match(/"id":\d/g) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      answered += new TextDecoder().decode(value);
    }
    await writer.close();
    reader.releaseLock();
    await child.stdout.cancel();
    const { code } = await child.status;
    assert.equal(code, 0);
    // sh sent the lab's stderr to the log, none to the client.
    assert.equal(await stderrText, "");
    const reports = stdioLabReports(await Deno.readTextFile(stderrPath), {
      trigger: "subscribe",
      updateDelaySeconds: 3,
    });
    assert.ok("labReport" in reports && reports.labReport);
    const { labReport, labReportMarkdown } = reports;
    assert.deepEqual([labReport.lab, labReport.sdk], [
      LAB_VERSION,
      SDK_VERSION,
    ]);
    assert.deepEqual(
      labReport.clients.map((client) => [
        client.id,
        client.name,
        client.version,
        client.transport,
        client.level,
        client.steps,
        client.timeline,
      ]),
      // Connected, listed and read version 1, as the fixtures' client.
      [["stdio", "lab-test", "1.0.0", "stdio", 3, labClient().steps, []]],
    );
    assert.deepEqual(labReport.scenario, {
      era: "both",
      trigger: "subscribe",
      updateDelaySeconds: 3,
      updateCount: 1,
      updateIntervalSeconds: 5,
      sendListChanged: false,
      inlineContent: "off",
      catalogChange: "off",
      toolEnabled: false,
      maxWatches: null,
      streamLifetimeSeconds: null,
      streamEnd: "graceful",
      listenAck: "full",
      withoutSubscribe: false,
    });
    assert.match(labReportMarkdown ?? "", /^# Lab report \(stdio\)\n/);
    assert.match(
      labReportMarkdown ?? "",
      /\n```text\n\{"event":"lab","transport":"stdio","version":/,
    );
    assert.match(labReportMarkdown ?? "", /"event":"verdict"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stdioLabReports: each stderr line shows escaped and bounded, the last 80, fences defused", () => {
  const verdict = JSON.stringify({
    event: "verdict",
    id: "stdio",
    name: "demo",
    version: "1.0.0",
    level: 1,
    steps: { connected: true },
    evidence: ["[initialize] client connected"],
  });
  const noise = Array.from({ length: 85 }, (_, index) => `line ${index}`);
  const reports = stdioLabReports(
    [
      '{"event":"lab","transport":"stdio","version":"0.2.0","sdk":"2.4.0"}',
      ...noise,
      "raw \u001b[31mred\u202e ``` fence",
      verdict,
    ].join("\n"),
    { trigger: "read", updateDelaySeconds: 3 },
  );
  assert.ok("labReport" in reports && reports.labReport);
  const markdown = reports.labReportMarkdown ?? "";
  const block = markdown.split("```text\n")[1].split("\n```")[0].split("\n");
  assert.equal(block.length, 80);
  assert.equal(block[0], "line 7");
  assert.equal(block.at(-2), "raw red\\u{202e} ''' fence");
  assert.equal(block.at(-1), verdict);
  assert.match(markdown, /\(the last 80 of 88\)/);
  // The verdict is the client, without its evidence lines or a timeline.
  const [client] = reports.labReport.clients;
  assert.equal("evidence" in client, false);
  assert.deepEqual([client.name, client.level, client.timeline], [
    "demo",
    1,
    [],
  ]);
});

Deno.test("startRunLab: a run's catalogChange reaches the lab it starts, whose report grades each kind", async () => {
  const runDir = await Deno.makeTempDir({ prefix: "catalog-lab-" });
  try {
    const lab = await startRunLab(
      {
        labMainPath,
        runDir,
        delaySeconds: 3,
        labSettings: { catalogChange: "all" },
      },
      "read",
    );
    assert.ok("url" in lab, "failed" in lab ? lab.failed : "");
    try {
      const { scenario } = await lab.report();
      assert.deepEqual([scenario.trigger, scenario.catalogChange], [
        "read",
        "tools,prompts,resources",
      ]);
    } finally {
      await lab.stop();
    }
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
});

// ---------------------------------------------------------------------------
// The world modes: their labs, and what a run's lab log shows of them
// ---------------------------------------------------------------------------

Deno.test("labRunEnv: each world mode's lab, over HTTP and stdio, and a stdio report's scenario names it", () => {
  const settings = { trigger: "subscribe" as const, delaySeconds: 5 };
  const world = (mode: ModeId) => {
    const env = labRunEnv({
      ...settings,
      enableTool: false,
      labSettings: labSettingsOf(mode),
    });
    return [
      env.MCP_TEST_ERA,
      env.MCP_TEST_MAX_WATCHES,
      env.MCP_TEST_STREAM_LIFETIME_SECONDS,
      env.MCP_TEST_STREAM_END,
    ];
  };
  assert.deepEqual(world("cut"), ["both", "", "2", "graceful"]);
  assert.deepEqual(world("2026-07-28-only"), [
    "2026-07-28",
    "",
    "",
    "graceful",
  ]);
  assert.deepEqual(world("2025-only"), ["2025", "", "", "graceful"]);
  assert.deepEqual(world("refused"), ["both", "0", "", "graceful"]);
  for (const mode of MODES.filter((mode) => !isWorldMode(mode))) {
    assert.deepEqual(world(mode), ["both", "", "", "graceful"], mode);
  }
  const stdio = stdioLabCommand({
    ...settings,
    labSettings: labSettingsOf("cut"),
    labMainPath: "/lab/main.ts",
    denoDir: "/cache/deno",
    stderrPath: "/runs/lab.log",
  });
  assert.equal(stdio.env.MCP_TEST_STREAM_LIFETIME_SECONDS, "2");
  const stderr = [
    '{"event":"lab","transport":"stdio","version":"0.2.0","sdk":"2.4.0"}',
    '{"event":"verdict","id":"stdio","name":"demo","version":"1.0.0","level":1,"steps":{"connected":true}}',
  ].join("\n");
  const scenario = (mode: ModeId) => {
    const reports = stdioLabReports(stderr, {
      trigger: "subscribe",
      updateDelaySeconds: 5,
      labSettings: labSettingsOf(mode),
    });
    const { era, maxWatches, streamLifetimeSeconds, streamEnd } =
      "labReport" in reports ? reports.labReport!.scenario : assert.fail();
    return [era, maxWatches, streamLifetimeSeconds, streamEnd];
  };
  assert.deepEqual(scenario("cut"), ["both", null, 2, "graceful"]);
  assert.deepEqual(scenario("2025-only"), ["2025", null, null, "graceful"]);
  assert.deepEqual(scenario("refused"), ["both", 0, null, "graceful"]);
  assert.deepEqual(scenario("default"), ["both", null, null, "graceful"]);
});

Deno.test("startRunLab: each world mode's settings reach the lab it starts, whose report says so", async () => {
  for (const mode of ["cut", "2026-07-28-only", "refused"] as const) {
    const runDir = await Deno.makeTempDir({ prefix: `${mode}-lab-` });
    try {
      const lab = await startRunLab(
        {
          labMainPath,
          runDir,
          delaySeconds: 5,
          labSettings: labSettingsOf(mode),
        },
        "subscribe",
      );
      assert.ok("url" in lab, "failed" in lab ? lab.failed : "");
      try {
        const { scenario } = await lab.report();
        const { era, maxWatches, streamLifetimeSeconds, streamEnd } = scenario;
        assert.deepEqual(
          { era, maxWatches, streamLifetimeSeconds, streamEnd },
          {
            era: mode === "2026-07-28-only" ? "2026-07-28" : "both",
            maxWatches: mode === "refused" ? 0 : null,
            streamLifetimeSeconds: mode === "cut" ? 2 : null,
            streamEnd: "graceful",
          },
          mode,
        );
      } finally {
        await lab.stop();
      }
    } finally {
      await Deno.remove(runDir, { recursive: true });
    }
  }
});

/** Lines as the lab logs them over HTTP (text): a GET stream cut and opened again. */
const CUT_AND_REOPENED = [
  "listening on http://127.0.0.1:35009/mcp",
  "[stream/get] opened session=a9f25f28 client=probe/0.2.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:23.058Z",
  '[request/rejected] status=200 code=-32601 message="Method not found" client=probe/0.2.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:23.083Z',
  "[stream/get] closed session=a9f25f28 by=lab end=graceful client=probe/0.2.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:24.061Z",
  "[stream/get] opened session=a9f25f28 client=probe/0.2.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:25.067Z",
  "  evidence: [stream/get] opened session=a9f25f28 client=probe/0.2.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:25.067Z",
].join("\n");

Deno.test("labLogFacts: a stream the lab cut and one the client opened again after it, from text lines; a verdict's evidence lines are no events", () => {
  const lines = CUT_AND_REOPENED.split("\n");
  assert.deepEqual(labLogFacts(CUT_AND_REOPENED), {
    streamsOpened: 2,
    streamsCut: 1,
    reopened: 1,
    reopenedAfterSeconds: 1,
    watchesRefused: 0,
    eraRefusals: 0,
    // The lines counted, as logged: not the refusal inside the session.
    lines: [lines[1], lines[3], lines[4]],
  });
});

Deno.test("labLogFacts: a listen cut and never opened again (JSON lines of a stdio lab); a close the client made, or a value that spells by=lab, is no cut", () => {
  const lines = [
    '{"event":"subscriptions/listen","uris":"test://review/status","client":"demo/1.0.0","at":"2026-12-03T17:48:25.696Z"}',
    '{"event":"subscriptions/listen","text":"closed","by":"lab","end":"graceful","client":"demo/1.0.0","at":"2026-12-03T17:48:26.697Z"}',
  ];
  assert.deepEqual(labLogFacts(lines.join("\n")), {
    streamsOpened: 1,
    streamsCut: 1,
    reopened: 0,
    reopenedAfterSeconds: null,
    watchesRefused: 0,
    eraRefusals: 0,
    lines,
  });
  assert.deepEqual(
    labLogFacts([
      "[subscriptions/listen] closed client=demo/1.0.0 at=2026-12-03T17:48:26.697Z",
      '[stream/get] closed session=a client="x by=lab y" at=2026-12-03T17:48:26.697Z',
      "[subscriptions/listen] uris=test://review/status client=demo/1.0.0 at=2026-12-03T17:48:27.000Z",
    ].join("\n")),
    {
      streamsOpened: 1,
      streamsCut: 0,
      reopened: 0,
      reopenedAfterSeconds: null,
      watchesRefused: 0,
      eraRefusals: 0,
      lines: [
        "[subscriptions/listen] uris=test://review/status client=demo/1.0.0 at=2026-12-03T17:48:27.000Z",
      ],
    },
  );
});

Deno.test("labLogFacts: refused watches, and the other era's requests a one-era lab refused before it knew a client; a refusal inside a session, or one after a client was known, is neither", () => {
  const log = [
    '[request/rejected] POST /mcp status=400 code=-32022 message="Unsupported protocol version: 2025-11-25" at=2026-12-03T17:48:37.901Z',
    // Named by its initialize's clientInfo, still a client the lab refused.
    '[request/rejected] POST /mcp status=400 code=-32022 message="Unsupported protocol version: 2025-11-25" client=old/1.0.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:37.950Z',
    '[request/rejected] POST /mcp status=400 code=-32000 message="Bad Request: Mcp-Session-Id header is required; send initialize first" at=2026-12-03T17:48:41.866Z',
    '[request/rejected] POST /mcp status=200 code=-32603 message="Subscription limit reached" client=demo/1.0.0 era=2026-07-28 protocol=2026-07-28 at=2026-12-03T17:48:38.915Z',
    '{"event":"request/rejected","status":200,"code":-32603,"message":"Subscription limit reached for this client: 2 listen streams are open under its clientInfo","client":"demo/1.0.0","at":"2026-12-03T17:48:39.000Z"}',
    '[request/rejected] status=200 code=-32601 message="Method not found" client=demo/1.0.0 era=2025 protocol=2025-11-25 at=2026-12-03T17:48:40.000Z',
    // A request to the session after it ended: no client on the line, but one was known.
    '[request/rejected] DELETE /mcp status=404 code=-32001 message="Session not found" at=2026-12-03T17:48:41.000Z',
  ];
  assert.deepEqual(labLogFacts(log.join("\n")), {
    streamsOpened: 0,
    streamsCut: 0,
    reopened: 0,
    reopenedAfterSeconds: null,
    watchesRefused: 2,
    eraRefusals: 3,
    lines: log.slice(0, 5),
  });
  assert.deepEqual(labLogFacts(""), {
    streamsOpened: 0,
    streamsCut: 0,
    reopened: 0,
    reopenedAfterSeconds: null,
    watchesRefused: 0,
    eraRefusals: 0,
    lines: [],
  });
});

Deno.test("labLogFacts: the lines it keeps are bounded in count and length, control characters escaped", () => {
  const long = `[request/rejected] POST /mcp status=400 code=-32022 message="${
    "x".repeat(600)
  }\u0007" at=2026-12-03T17:48:37.901Z`;
  const facts = labLogFacts(
    Array(LAB_LOG_LINES_KEPT + 5).fill(long).join("\n"),
  );
  assert.equal(facts.eraRefusals, LAB_LOG_LINES_KEPT + 5);
  assert.equal(facts.lines.length, LAB_LOG_LINES_KEPT);
  for (const line of facts.lines) {
    assert.ok(line.length <= 400, String(line.length));
    assert.ok(![...line].some((char) => char < " "), line);
  }
});
