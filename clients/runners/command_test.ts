import assert from "node:assert/strict";
import type { ClientReport } from "../../main.ts";
import { ALL_CLIENTS, selectClients } from "../catalog/select.ts";
import { COMMAND_CLIENTS, STREAM_MARGIN_SECONDS } from "../catalog/commands.ts";
import {
  type CommandClientDefinition,
  type CommandContext,
  groupsOf,
} from "../catalog/types.ts";
import { overallOutcome, runCommandClient, stepCommand } from "./command.ts";
import {
  COMMAND_NOTE,
  evidenceMarkdown,
  matrixMarkdown,
  mergeRows,
  rowFromRun,
} from "../report/matrix.ts";
import { alive } from "../support/process.ts";
import type { RunRecord } from "./run_record.ts";
import { at, labClient, labReport, runRecord } from "../testdata/fixtures.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

const context: CommandContext = {
  home: "/runs/x/home",
  labUrl: "http://127.0.0.1:40001/mcp",
  mode: "default",
  delaySeconds: 3,
};

function commandClient(id: string): CommandClientDefinition {
  const client = COMMAND_CLIENTS.find((candidate) => candidate.id === id);
  assert.ok(client, id);
  return client;
}

Deno.test("command clients: mcpdo connects in the mode's era, subscribes past the update, disconnects", () => {
  const mcpdo = commandClient("mcpdo");
  const url = context.labUrl;
  for (
    const [mode, era] of [["default", "legacy"], [
      "2026-07-28",
      "modern",
    ]] as const
  ) {
    assert.deepEqual(mcpdo.steps({ ...context, mode }), [
      { args: ["connect", url, "--transport", "http", "--era", era] },
      {
        args: [
          "--connection",
          url,
          "resources/subscribe",
          "test://review/status",
        ],
        streamSeconds: context.delaySeconds + STREAM_MARGIN_SECONDS,
      },
      { args: ["disconnect", url] },
    ]);
  }
  // Its daemon is stopped by the harness, from a folder of the harness's.
  assert.deepEqual(mcpdo.daemon, {
    dirEnv: "MCP_INSPECTOR_DAEMON_DIR",
    pidFile: "mcpdod.lock",
    stopArgs: ["daemon", "stop"],
  });
  assert.equal(mcpdo.bin, "mcpdo");
});

Deno.test("command clients: the Inspector CLI reads once in the mode's era", () => {
  const cli = commandClient("inspector-cli");
  assert.equal(cli.bin, "mcp-inspector");
  assert.equal(cli.daemon, undefined);
  for (
    const [mode, era] of [["default", "legacy"], [
      "2026-07-28",
      "modern",
    ]] as const
  ) {
    const steps = cli.steps({ ...context, mode });
    assert.equal(steps.length, 1);
    assert.equal(steps[0].streamSeconds, undefined);
    assert.deepEqual(steps[0].args, [
      "--cli",
      context.labUrl,
      "--transport",
      "http",
      "--protocol-era",
      era,
      "--method",
      "resources/read",
      "--uri",
      "test://review/status",
    ]);
  }
});

Deno.test("command clients: pinned like the agents, loopback only, nothing of the user's", () => {
  for (const client of COMMAND_CLIENTS) {
    assert.match(client.version, /^\d+\.\d+\.\d+$/, client.id);
    assert.deepEqual(groupsOf(client), ["inspector"]);
    for (const mode of client.modes) {
      for (const step of client.steps({ ...context, mode })) {
        for (const arg of step.args) {
          for (const url of arg.match(/https?:\/\/[^\s"']+/g) ?? []) {
            assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\//, client.id);
          }
        }
      }
    }
    for (const name of Object.keys(client.env)) {
      assert.doesNotMatch(name, /^(HOME|XDG_|PATH$|TMPDIR)/, client.id);
    }
  }
  assert.equal(
    new Set(ALL_CLIENTS.map((client) => client.id)).size,
    ALL_CLIENTS.length,
  );
});

Deno.test("selectClients: names and --only groups narrow each other", () => {
  const ids = (clients: { id: string }[]) => clients.map((client) => client.id);
  assert.deepEqual(ids(selectClients([])), ids(ALL_CLIENTS));
  assert.deepEqual(ids(selectClients([], ["inspector"])), [
    "mcpdo",
    "inspector-cli",
    "inspector-web",
  ]);
  assert.ok(!ids(selectClients([], ["agents"])).includes("mcpdo"));
  assert.ok(ids(selectClients([], ["agents"])).includes("codex"));
  assert.deepEqual(ids(selectClients(["mcpdo", "codex"], ["inspector"])), [
    "mcpdo",
  ]);
  assert.deepEqual(
    ids(selectClients(["mcpdo", "codex"], ["agents", "inspector"])),
    ["codex", "mcpdo"],
  );
});

Deno.test("stepCommand and overallOutcome: generic commands, the first failure is the run's", () => {
  assert.equal(
    stepCommand("mcpdo", ["connect", context.labUrl, "--era", "legacy"], {
      home: "/runs/x/home",
      workDir: "/runs/x/work",
      labUrl: context.labUrl,
    }),
    "mcpdo connect $LAB_URL --era legacy",
  );
  const done = { outcome: "completed" as const, exitCode: 0, command: "a b" };
  assert.deepEqual(overallOutcome([done, done]), {
    outcome: "completed",
    exitCode: 0,
  });
  assert.deepEqual(
    overallOutcome([
      done,
      {
        outcome: "exit-nonzero",
        exitCode: 1,
        detail: "exit 1",
        command: "mcpdo connect $LAB_URL",
      },
      done,
    ]),
    {
      outcome: "exit-nonzero",
      exitCode: 1,
      detail: "mcpdo connect: exit 1",
    },
  );
});

/** The lab's entry for mcpdo: subscribed and notified, never read (level 5). */
function mcpdoLabClient(fields: Partial<ClientReport> = {}): ClientReport {
  return labClient({
    name: "inspector-cli",
    version: "2.12.0",
    protocolVersion: "2025-11-25",
    lastSeen: at(7),
    trigger: "subscribe",
    level: 5,
    levelName: "notification delivered",
    missing: "never read test://review/status (resources/read)",
    steps: {
      ...labClient().steps,
      listed: false,
      readV1: false,
      subscribed: true,
      notificationDelivered: true,
    },
    lastVersionRead: 0,
    ...fields,
  });
}

/** A run of mcpdo as the command runner records it. */
function commandRun(fields: Partial<RunRecord> = {}): RunRecord {
  return runRecord({
    clientId: "mcpdo",
    displayName: "mcpdo (MCP Inspector)",
    npmPackage: "@modelcontextprotocol/inspector",
    version: "2.12.0",
    trigger: "subscribe",
    durationSeconds: 8,
    command: "mcpdo connect $LAB_URL --transport http --era legacy",
    labReport: labReport([mcpdoLabClient()]),
    labReportMarkdown: "# MCP resource subscription lab report",
    transcript: [],
    kind: "command",
    steps: [{
      startedAt: 0.1,
      command: "mcpdo connect $LAB_URL --transport http --era legacy",
      outcome: "completed",
      exitCode: 0,
      durationSeconds: 0.8,
      outputTail: "Era: legacy",
    }, {
      startedAt: 0.9,
      command:
        "mcpdo --connection $LAB_URL resources/subscribe test://review/status",
      outcome: "completed",
      exitCode: 0,
      detail: "stopped after 6 s, as planned",
      durationSeconds: 6,
      outputTail:
        "Subscribed: test://review/status\nResource updated: test://review/status\n[mcp-inspector] a warning",
    }],
    daemon: "daemon PID 123 ended after `mcpdo daemon stop`",
    ...fields,
  });
}

Deno.test("rowFromRun: a command client's row is the lab's level, with no context to judge", () => {
  const row = rowFromRun(commandRun());
  assert.equal(row.level, 5);
  assert.equal(row.labLevel, 5);
  assert.equal(row.route, "native");
  assert.equal(row.contextUpdated, null);
  assert.equal(row.subscribed, true);
  assert.equal(row.notificationDelivered, true);
  assert.equal(
    row.notes,
    `never read test://review/status (resources/read); ${COMMAND_NOTE}`,
  );
  assert.equal(row.evidence, "runs/mcpdo-2.12.0-default.md#trigger-subscribe");
  // A read-once client at 3 says what it lacked, and the same note.
  const read = rowFromRun(commandRun({
    clientId: "inspector-cli",
    labReport: {
      ...commandRun().labReport!,
      clients: [mcpdoLabClient({
        level: 3,
        missing:
          "never subscribed to test://review/status (resources/subscribe)",
        steps: {
          ...mcpdoLabClient().steps,
          readV1: true,
          subscribed: false,
          notificationDelivered: false,
        },
      })],
    },
  }));
  assert.equal(read.level, 3);
  assert.match(read.notes, /^never subscribed/);
  // A failed command is the row's reason.
  const failed = rowFromRun(commandRun({
    outcome: "exit-nonzero",
    exitCode: 1,
    detail: "mcpdo connect: exit 1",
    labReport: { ...commandRun().labReport!, clients: [] },
  }));
  assert.equal(failed.level, 0);
  assert.match(failed.notes, /^mcpdo connect: exit 1; never reached the lab; /);
});

Deno.test("evidenceMarkdown: a command client's evidence lists its commands, not a transcript", () => {
  const text = evidenceMarkdown([commandRun()]);
  assert.match(text, /### Commands/);
  assert.doesNotMatch(text, /Scripted model transcript/);
  assert.doesNotMatch(text, /^Command:$/m);
  assert.match(
    text,
    /\| 2 \| 0\.9 \| mcpdo --connection \$LAB_URL resources\/subscribe test:\/\/review\/status \| completed \(exit 0\), stopped after 6 s, as planned \| 6\.0 \| Subscribed: test:\/\/review\/status \/ Resource updated: test:\/\/review\/status \|/,
  );
  assert.match(
    text,
    /Daemon: daemon PID 123 ended after `mcpdo daemon stop`\./,
  );
});

Deno.test("mergeRows and matrixMarkdown: command clients after the agents, other rows untouched", () => {
  const agent = rowFromRun({
    ...commandRun(),
    clientId: "codex",
    displayName: "Codex CLI",
    kind: undefined,
    steps: undefined,
  });
  const mcpdo = rowFromRun(commandRun());
  const rows = mergeRows(
    [mcpdo, agent],
    [],
    ALL_CLIENTS.map((client) => client.id),
  );
  assert.deepEqual(rows.map((row) => row.clientId), ["codex", "mcpdo"]);
  const markdown = matrixMarkdown({
    generatedAt: "2026-11-30T10:00:00.000Z",
    labVersion: "0.2.0",
    delaySeconds: 3,
    rows,
    cited: [],
    requests: {},
    libraries: [],
  });
  assert.match(
    markdown,
    /\| mcpdo \(MCP Inspector\) \| 2\.12\.0 \| default \| native \| `subscribe` \| 2025 \(2025-11-25\) \| ✅ \| ❌ \| ❌ \| ✅ \| ✅ \| ❌ \| — \| 5 \|/,
  );
});

Deno.test({
  name:
    "runCommandClient: a streaming command ends as planned, a daemon left behind is ended by its PID",
  permissions: {
    run: true,
    read: true,
    write: true,
    net: ["127.0.0.1"],
    env: true,
  },
  async fn() {
    const runDir = await Deno.makeTempDir({ prefix: "command-run-" });
    const standIn: CommandClientDefinition = {
      kind: "command",
      group: "inspector",
      id: "stand-in",
      displayName: "Stand-in",
      npmPackage: "stand-in",
      version: "0.0.0",
      bin: "sh",
      modes: ["default"],
      env: {},
      steps: ({ delaySeconds }) => [
        // A daemon in its own session, beyond the run's process group.
        {
          args: [
            "-c",
            'setsid sleep 60 </dev/null >/dev/null 2>&1 & echo $! > "$STAND_IN_DIR/pid"; sleep 0.5',
          ],
        },
        {
          args: ["-c", "echo streaming; sleep 60"],
          streamSeconds: delaySeconds,
        },
      ],
      // Its stop command does nothing: the harness must use the PID.
      daemon: {
        dirEnv: "STAND_IN_DIR",
        pidFile: "pid",
        stopArgs: ["-c", "true"],
      },
    };
    try {
      const record = await runCommandClient(standIn, "default", "subscribe", {
        labMainPath: new URL("../../main.ts", import.meta.url).pathname,
        runDir,
        binPath: "/bin/sh",
        delaySeconds: 1,
        timeoutSeconds: 20,
      });
      assert.equal(record.outcome, "completed");
      assert.equal(record.kind, "command");
      assert.equal(record.steps?.length, 3);
      assert.equal(record.steps?.[1].detail, "stopped after 1 s, as planned");
      assert.equal(record.steps?.[1].outputTail, "streaming");
      assert.match(
        record.daemon ?? "",
        /^daemon PID (\d+) outlived its stop command; ended with SIGTERM$/,
      );
      const pid = Number(record.daemon?.match(/PID (\d+)/)?.[1]);
      assert.equal(await alive(pid), false);
      // The stand-in never spoke MCP: the lab saw no client.
      assert.deepEqual(record.labReport?.clients, []);
      assert.equal(rowFromRun(record).level, 0);
    } finally {
      await Deno.remove(runDir, { recursive: true });
    }
  },
});
