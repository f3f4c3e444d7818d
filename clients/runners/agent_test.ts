import assert from "node:assert/strict";
import {
  type ClientDefinition,
  labSettingsOf,
  type LaunchContext,
} from "../catalog/types.ts";
import { mainLabClient } from "./run_record.ts";
import { quotedOutput, rowFromRun } from "../report/matrix.ts";
import { catalogLevels } from "../report/summary.ts";
import { shellQuote } from "../support/process.ts";
import { cacheModules, defaultDenoDir } from "../support/run_lab.ts";
import { clientById } from "../catalog/agents.ts";
import {
  harnessProbe,
  probeCommand,
  routeScript,
  runAgentClient,
  type RunOptions,
  startProgressRelay,
  stopAgentDaemon,
  waitArguments,
  withoutProgressToken,
} from "./agent.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";
import { spawnLab } from "../../launch.ts";

prepareTestEnvironment();

// The runner against the real lab, with stand-in clients instead of installed
// CLIs: all on loopback, a few seconds each.

// ---------------------------------------------------------------------------
// Helpers: stand-in clients, the fake agent, run options, processes
// ---------------------------------------------------------------------------

const labMainPath = new URL("../../main.ts", import.meta.url).pathname;
const fakeAgentPath = new URL("../testdata/fake_agent.ts", import.meta.url)
  .pathname;

function standIn(
  launch: (context: LaunchContext) => string[],
  env: Record<string, string> = {},
): ClientDefinition {
  return {
    id: "stand-in",
    displayName: "Stand-in",
    npmPackage: "stand-in",
    version: "0.0.0",
    bin: "stand-in",
    wire: "anthropic-messages",
    script: {
      read: {
        name: "ReadMcpResourceTool",
        input: { uri: "test://review/status" },
      },
      nudge: { name: "ListMcpResourcesTool", input: {} },
    },
    modes: ["default"],
    enableTool: false,
    shell: { name: "Bash", input: (command) => ({ command }) },
    launch: (context) => ({ args: launch(context), env, files: {} }),
  };
}

/**
 * The fake agent as a client, run by this Deno. It imports the lab's
 * main.ts, whose modules come from the deno cache this process uses (its
 * isolated HOME has none): `--cached-only`, so nothing leaves loopback.
 * `plain` makes it the client that never subscribes (see fake_agent.ts).
 */
function fakeAgent(
  flavour: "subscriber" | "plain" | "notice" | "catalog" | "catalog-stale",
): ClientDefinition {
  const plain = flavour === "plain";
  return standIn(({ labUrl, modelOrigin, prompt }) => [
    "run",
    "--allow-net=127.0.0.1",
    ...(plain ? ["--allow-run=sh"] : []),
    "--cached-only",
    fakeAgentPath,
    labUrl,
    modelOrigin,
    prompt,
    ...(flavour === "subscriber" ? [] : [flavour]),
  ], { DENO_DIR: defaultDenoDir(), DENO_NO_UPDATE_CHECK: "1" });
}

/**
 * PIDs whose command line is exactly `cmdline` (NUL-separated, as in /proc),
 * from `ps`: reading /proc itself would need every permission.
 */
async function processesRunning(cmdline: string): Promise<number[]> {
  const wanted = cmdline.split("\0").filter(Boolean).join(" ");
  const { stdout } = await new Deno.Command("ps", {
    args: ["-eo", "pid=,args="],
    stdout: "piped",
  }).output();
  const found: number[] = [];
  for (const line of new TextDecoder().decode(stdout).split("\n")) {
    const match = line.match(/^\s*(\d+) (.*)$/);
    if (match && match[2] === wanted) found.push(Number(match[1]));
  }
  return found;
}

async function options(
  binPath: string,
  timeoutSeconds: number,
): Promise<RunOptions & { cleanup(): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "clients-runner-test-" });
  return {
    labMainPath,
    runDir: `${dir}/run`,
    binPath,
    delaySeconds: 0.5,
    timeoutSeconds,
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

/** The fake agent as a client that never subscribes (the field today). */
const plainAgent = fakeAgent("plain");

/**
 * The plain fake agent whose shell finds no deno on its PATH, as a client
 * run through `npx deno` would: the probe command must name Deno itself.
 */
const plainAgentWithoutDenoOnPath: ClientDefinition = {
  ...plainAgent,
  launch: (context) => ({
    ...plainAgent.launch(context),
    env: {
      ...plainAgent.launch(context).env,
      PATH: "/nonexistent-deno-free-path:/usr/bin:/bin",
    },
  }),
};

/** The probe command of a run's `run-probe` stage, and the lab URL in it. */
function probeCommandIn(record: { transcript: { answer: string }[] }) {
  const command: string = JSON.parse(
    record.transcript[1].answer.replace(/^tool Bash /, ""),
  ).command;
  return { command, labUrl: command.match(/--url (\S+)/)?.[1] ?? "" };
}

// ---------------------------------------------------------------------------
// Helpers: a wait tool call through the progress check's relay
// ---------------------------------------------------------------------------

/**
 * One wait tool call with a progressToken through the progress check's
 * relay to a fresh lab: the answer's text and the relay's token count.
 */
async function waitCallThroughRelay(strip: boolean) {
  const lab = await spawnLab({
    mainPath: labMainPath,
    env: {
      MCP_TEST_ENABLE_WAIT_TOOL: "true",
      MCP_TEST_UPDATE_DELAY_SECONDS: "30",
    },
  });
  const relay = startProgressRelay(lab.url, strip);
  try {
    const post = async (body: unknown, session?: string) => {
      const response = await fetch(relay.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-11-25",
          ...(session ? { "mcp-session-id": session } : {}),
        },
        body: JSON.stringify(body),
      });
      return {
        session: response.headers.get("mcp-session-id") ?? "",
        text: await response.text(),
      };
    };
    const { session } = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "strip-test", version: "1.0.0" },
      },
    });
    assert.notEqual(session, "");
    await post(
      { jsonrpc: "2.0", method: "notifications/initialized" },
      session,
    );
    const answer = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "wait_for_review_update",
        arguments: { since_version: 1, timeout_seconds: 6 },
        _meta: { progressToken: "p1" },
      },
    }, session);
    return { text: answer.text, counted: relay.tokens() };
  } finally {
    await relay.close();
    await lab.stop();
  }
}

// ---------------------------------------------------------------------------
// The runner: levels, crashes, timeouts, a host that only tells its model
// ---------------------------------------------------------------------------

Deno.test({
  name:
    "runner: a client that subscribes, re-reads and shows the update reaches level 7",
  async fn() {
    const client = fakeAgent("subscriber");
    const run = await options(Deno.execPath(), 60);
    try {
      const record = await runAgentClient(client, "default", "subscribe", run);
      assert.equal(record.outcome, "completed", record.outputTail);
      const row = rowFromRun(record);
      assert.equal(row.labClient, "fake-agent/1.0.0");
      assert.equal(row.era, "2025");
      assert.deepEqual(
        [
          row.connected,
          row.listed,
          row.readV1,
          row.subscribed,
          row.notificationDelivered,
          row.rereadAfterNotification,
        ],
        [true, true, true, true, true, true],
      );
      assert.equal(row.labLevel, 6);
      assert.equal(row.contextUpdated, true);
      assert.equal(row.level, 7);
      assert.deepEqual(record.transcript.map((entry) => entry.stage), [
        "read-v1",
        "wait-then-nudge",
        "check-context-then-reread",
        "final",
      ]);
      assert.match(record.labReportMarkdown ?? "", /sequenceDiagram/);
      assert.match(
        record.outputTail,
        /version 2\. The update reached my context before I asked again: yes\./,
      );
    } finally {
      await run.cleanup();
    }
  },
});

Deno.test({
  name:
    "runner: a crashing client is a row with its error, in an isolated environment",
  async fn() {
    Deno.env.set("LAB_RUNNER_TEST_SENTINEL", "leaked");
    const client = standIn(() => [
      "-c",
      'echo "home=$HOME tmp=$TMPDIR sentinel=${LAB_RUNNER_TEST_SENTINEL:-unset}"; echo "Error: server lab refused" >&2; exit 3',
    ]);
    const run = await options("/bin/sh", 30);
    try {
      const record = await runAgentClient(client, "default", "read", run);
      assert.equal(record.outcome, "exit-nonzero");
      assert.equal(record.exitCode, 3);
      assert.match(
        record.outputTail,
        new RegExp(
          `home=${run.runDir}/home tmp=${run.runDir}/tmp sentinel=unset`,
        ),
      );
      const row = rowFromRun(record);
      assert.equal(row.level, 0);
      assert.equal(
        row.notes,
        "exit 3: Error: server lab refused; never reached the lab",
      );
    } finally {
      Deno.env.delete("LAB_RUNNER_TEST_SENTINEL");
      await run.cleanup();
    }
  },
});

Deno.test({
  name: "runner: a hanging client is stopped at the timeout, with its children",
  async fn() {
    const client = standIn(() => ["-c", "sleep 61.4321 & sleep 61.4321"]);
    const run = await options("/bin/sh", 1);
    try {
      const started = performance.now();
      const record = await runAgentClient(client, "default", "read", run);
      assert.ok(performance.now() - started < 15_000);
      assert.equal(record.outcome, "timeout");
      assert.equal(
        rowFromRun(record).notes,
        "timed out (no exit within 1 s); never reached the lab",
      );
      assert.deepEqual(
        await processesRunning("sleep\u000061.4321\u0000"),
        [],
        "the client's background child was left running",
      );
    } finally {
      await run.cleanup();
    }
  },
});

Deno.test({
  name:
    "runner: a host that only tells its model the resource changed: the notice and when it came are in the row, version 2 is not",
  async fn() {
    const run = await options(Deno.execPath(), 60);
    try {
      const record = await runAgentClient(
        fakeAgent("notice"),
        "default",
        "subscribe",
        run,
      );
      assert.equal(record.outcome, "completed", record.outputTail);
      assert.deepEqual(
        record.transcript.map((entry) => [entry.stage, entry.hostNotice]),
        [
          ["read-v1", undefined],
          ["wait-then-nudge", undefined],
          ["check-context-then-reread", { withVersion2: false }],
          ["final", { withVersion2: false }],
        ],
      );
      const row = rowFromRun(record);
      assert.equal(row.labLevel, 6);
      assert.equal(row.contextUpdated, false);
      assert.equal(row.level, 6);
      assert.equal(row.hostNotice, true);
      // It came with the model's first request after its wait, which ends
      // 2 s past the update (0.5 s in).
      const seconds = row.hostNoticeSeconds ?? -1;
      assert.ok(seconds > 0 && seconds < 10, `${seconds}`);
      assert.equal(
        row.notes,
        `notified, but read version 2 only when the model asked: the client did not re-read by itself; the host told the model the resource changed (notice ${seconds} s after the update), without its content; version 2 was not in the agent's context until it asked`,
      );
    } finally {
      await run.cleanup();
    }
  },
});

// ---------------------------------------------------------------------------
// Routes: the wait tool and the probe through the client's shell
// ---------------------------------------------------------------------------

Deno.test("routeScript: the wait tool's arguments, the probe through the shell tool, or why not", () => {
  const context = {
    probe: {
      denoPath: "/opt/deno/bin/deno",
      probePath: "/lab/probe.ts",
      denoDir: "/cache/deno",
    },
    labUrl: "http://127.0.0.1:4000/mcp",
    delaySeconds: 3,
  };
  assert.deepEqual(routeScript(plainAgent, "wait-tool", context).routeCall, {
    name: "wait_for_review_update",
    input: { since_version: 1, timeout_seconds: 63 },
  });
  assert.deepEqual(waitArguments(90), {
    since_version: 1,
    timeout_seconds: 150,
  });
  assert.deepEqual(routeScript(plainAgent, "shell-probe", context).routeCall, {
    name: "Bash",
    input: {
      command:
        "DENO_DIR=/cache/deno DENO_NO_UPDATE_CHECK=1 /opt/deno/bin/deno run -A --cached-only /lab/probe.ts --url http://127.0.0.1:4000/mcp --uri test://review/status --json",
    },
  });
  // Paths a shell would split or expand are quoted.
  assert.equal(
    probeCommand({
      denoPath: "/home/o'neil/deno $dir/deno",
      probePath: "/lab one/probe.ts",
      denoDir: "/cache/deno",
    }, "http://127.0.0.1:4000/mcp"),
    `DENO_DIR=/cache/deno DENO_NO_UPDATE_CHECK=1 '/home/o'\\''neil/deno $dir/deno' run -A --cached-only '/lab one/probe.ts' --url http://127.0.0.1:4000/mcp --uri test://review/status --json`,
  );
  const noShell = { ...plainAgent, shell: { unavailable: "no shell tool" } };
  assert.deepEqual(routeScript(noShell, "shell-probe", context), {
    route: "shell-probe",
    loader: undefined,
    routeUnavailable: "no shell tool",
  });
  assert.equal(routeScript(plainAgent, "native", context).routeCall, undefined);
});

Deno.test({
  name:
    "runner (wait-tool): a client that never subscribes gets version 2 through the wait tool, and the lab agrees",
  async fn() {
    const run = await options(Deno.execPath(), 60);
    try {
      const record = await runAgentClient(plainAgent, "default", "subscribe", {
        ...run,
        route: "wait-tool",
      });
      assert.equal(record.outcome, "completed", record.outputTail);
      assert.equal(record.route, "wait-tool");
      assert.deepEqual(record.transcript.map((entry) => entry.stage), [
        "read-v1",
        "call-wait-tool",
        "final",
      ]);
      assert.match(
        record.transcript[1].answer,
        /^tool mcp__lab__wait_for_review_update \{"since_version":1,"timeout_seconds":61\}$/,
      );
      const row = rowFromRun(record);
      assert.equal(row.subscribed, false);
      assert.equal(row.labLevel, 3);
      assert.equal(row.contextUpdated, true);
      assert.equal(row.level, 7);
      assert.equal(row.waitTool?.level, 6);
      assert.equal(row.waitTool?.calls, 1);
      assert.ok((row.waitTool?.longestWaitSeconds ?? 0) > 0);
      assert.match(row.notes, /version 2 delivered through it/);
      assert.equal(
        row.evidence,
        "runs/stand-in-0.0.0-default-wait-tool.md#trigger-subscribe",
      );
      assert.match(record.outputTail, /the wait tool brought the update/);
    } finally {
      await run.cleanup();
    }
  },
});

Deno.test({
  name:
    "runner (shell-probe): the client's shell runs the lab's probe by Deno's full path, and its version 2 reaches the model",
  async fn() {
    const run = await options(Deno.execPath(), 60);
    try {
      const record = await runAgentClient(
        plainAgentWithoutDenoOnPath,
        "default",
        "read",
        { ...run, route: "shell-probe" },
      );
      assert.equal(record.outcome, "completed", record.outputTail);
      assert.deepEqual(record.transcript.map((entry) => entry.stage), [
        "read-v1",
        "run-probe",
        "final",
      ]);
      const { command, labUrl } = probeCommandIn(record);
      assert.match(labUrl, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      assert.equal(
        command,
        probeCommand(harnessProbe(labMainPath, defaultDenoDir()), labUrl),
      );
      assert.ok(command.includes(` ${shellQuote(Deno.execPath())} run `));
      const row = rowFromRun(record);
      assert.equal(row.labClient, "fake-agent/1.0.0");
      assert.equal(row.probeLevel, 6);
      assert.equal(row.contextUpdated, true);
      assert.equal(row.level, 7);
      assert.match(
        row.notes,
        /the probe reached level 6 in the lab, and its result with version 2 reached the model/,
      );
    } finally {
      await run.cleanup();
    }
  },
});

Deno.test({
  name:
    "runner (shell-probe): a probe that cannot run is a row quoting what the shell printed",
  async fn() {
    const run = await options(Deno.execPath(), 60);
    // An empty deno cache: with --cached-only, the probe cannot load.
    const emptyCache = await Deno.makeTempDir({ prefix: "empty-deno-dir-" });
    try {
      const record = await runAgentClient(plainAgent, "default", "read", {
        ...run,
        route: "shell-probe",
        denoDir: emptyCache,
      });
      assert.equal(record.outcome, "completed", record.outputTail);
      const printed = record.transcript[2].routeResult ?? "";
      assert.match(printed, /not found in cache.*--cached-only/);
      const row = rowFromRun(record);
      assert.equal(row.probeLevel, null);
      assert.equal(row.level, 3);
      assert.equal(
        row.notes,
        `${
          mainLabClient(record.labReport?.clients ?? [])?.missing
        }; the probe never reached the lab (the shell command did not run it); the shell tool returned ${
          quotedOutput(printed)
        }`,
      );
      assert.match(row.notes, /returned "error: .*not found in cache/);
    } finally {
      await Deno.remove(emptyCache, { recursive: true });
      await run.cleanup();
    }
  },
});

// ---------------------------------------------------------------------------
// Catalog runs: tools listed again, and the launch mode
// ---------------------------------------------------------------------------

Deno.test({
  name:
    "runner (catalog): an agent that lists its tools again on tools/list_changed and offers them reaches catalog level 5 for tools; one that keeps offering its first list stops at the lab's 3, diagnosed",
  async fn() {
    const levels = async (flavour: "catalog" | "catalog-stale") => {
      const run = await options(Deno.execPath(), 60);
      try {
        const record = await runAgentClient(
          fakeAgent(flavour),
          "catalog",
          "read",
          { ...run, labSettings: labSettingsOf("catalog") },
        );
        assert.equal(record.outcome, "completed", record.outputTail);
        const row = rowFromRun(record);
        return {
          stages: record.transcript.map((entry) => entry.stage),
          tools: row.catalog?.kinds.tools,
          catalog: row.catalog && catalogLevels(row.catalog),
        };
      } finally {
        await run.cleanup();
      }
    };
    assert.deepEqual(await levels("catalog"), {
      stages: [
        "read-v1",
        "wait-then-nudge",
        "call-new-tool",
        "check-context-then-reread",
        "final",
      ],
      tools: {
        added: "get_review_comments",
        labLevel: 4,
        level: 5,
        missing: "",
      },
      catalog: "tools 5, prompts 0, resources 3",
    });
    assert.deepEqual(await levels("catalog-stale"), {
      stages: [
        "read-v1",
        "wait-then-nudge",
        "check-context-then-reread",
        "final",
      ],
      tools: {
        added: "get_review_comments",
        labLevel: 3,
        level: 3,
        missing: "listed again, but the new tool never reached a model request",
      },
      catalog: "tools 3, prompts 0, resources 3",
    });
  },
});

Deno.test({
  name:
    "runner (catalog): a catalog run launches the client in its launch mode: the reference host over stdio in 2026-07-28, whose stdio lab changes its catalog too; the record is mode catalog with that launch mode",
  async fn() {
    const host = clientById("reference-host")!;
    assert.equal(
      await cacheModules(host.localScript!, defaultDenoDir()) ??
        await cacheModules(labMainPath, defaultDenoDir()),
      undefined,
    );
    const run = await options(Deno.execPath(), 60);
    try {
      const record = await runAgentClient(host, "catalog", "read", {
        ...run,
        labSettings: labSettingsOf("catalog"),
        launchMode: "stdio-2026-07-28",
      });
      assert.equal(record.outcome, "completed", record.outputTail);
      assert.deepEqual([record.mode, record.launchMode], [
        "catalog",
        "stdio-2026-07-28",
      ]);
      assert.match(record.command, / --era 2026-07-28 .* --stdio -- env /);
      assert.match(record.labReportMarkdown ?? "", /^# Lab report \(stdio\)/);
      assert.equal(
        record.labReport?.scenario.catalogChange,
        "tools,prompts,resources",
      );
      const row = rowFromRun(record);
      assert.deepEqual(
        [row.era, row.catalog && catalogLevels(row.catalog), row.evidence],
        [
          "2026-07-28",
          "tools 5, prompts 3, resources 3",
          `runs/reference-host-${host.version}-catalog-stdio-2026-07-28.md#trigger-read`,
        ],
      );
    } finally {
      await run.cleanup();
    }
  },
});

// ---------------------------------------------------------------------------
// The progress check, and stopping an agent's daemon
// ---------------------------------------------------------------------------

Deno.test("withoutProgressToken: only a tool call's progressToken goes, the rest stays", () => {
  const call = {
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: {
      name: "wait_for_review_update",
      arguments: { since_version: 1 },
      _meta: { progressToken: 4, other: "kept" },
    },
  };
  assert.deepEqual(JSON.parse(withoutProgressToken(JSON.stringify(call))), {
    ...call,
    params: { ...call.params, _meta: { other: "kept" } },
  });
  const batch = JSON.parse(
    withoutProgressToken(JSON.stringify([call, { ...call, id: 6 }])),
  );
  assert.equal(batch[1].params._meta.progressToken, undefined);
  const read = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "resources/read",
    params: { uri: "test://review/status", _meta: { progressToken: 1 } },
  });
  assert.equal(withoutProgressToken(read), read);
  assert.equal(withoutProgressToken("not json"), "not json");
});

Deno.test("runner (progress check): without its progressToken a call gets no progress, and everything else reaches the lab", async () => {
  const { text, counted } = await waitCallThroughRelay(true);
  assert.match(text, /no update within 6 s/);
  assert.equal(counted, 1);
  assert.doesNotMatch(text, /notifications\/progress/);
});

Deno.test("runner (progress check): the relay counts a call's progressToken and, not stripping, lets the progress through", async () => {
  const { text, counted } = await waitCallThroughRelay(false);
  assert.match(text, /no update within 6 s/);
  assert.equal(counted, 1);
  assert.match(text, /notifications\/progress/);
});

Deno.test("stopAgentDaemon: ends the recorded PID, and says when there is no record", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const child = new Deno.Command("sleep", {
      args: ["60"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    await Deno.writeTextFile(
      `${dir}/hub.json`,
      JSON.stringify({ hubId: "test", pid: child.pid }),
    );
    const said = await stopAgentDaemon(`${dir}/hub.json`);
    assert.equal(said, `daemon PID ${child.pid} ended with SIGTERM`);
    assert.equal((await child.status).signal, "SIGTERM");
    assert.equal(
      await stopAgentDaemon(`${dir}/missing.json`),
      "no daemon PID record: no daemon was running",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
