import assert from "node:assert/strict";
import { BROWSER_CLIENTS } from "../catalog/hosts.ts";
import type { CodeServerDefinition } from "../catalog/types.ts";
import { browserInstalled, CHROMIUM_PATH } from "./browser.ts";
import { chatRuns } from "./code_server.ts";
import { defaultCacheDir, runtimePaths } from "../support/install.ts";
import {
  chatContextUpdated,
  EDITOR_NOTE,
  evidenceMarkdown,
  mergeRows,
  rowFromRun,
  STDIO_EDITOR_NOTE,
} from "../report/matrix.ts";
import type { RunRecord } from "./run_record.ts";
import type { TranscriptEntry } from "../model/scripted_model.ts";
import {
  checkBrowserEvidence,
  labClient,
  labReport,
  runRecord,
  transcriptEntry,
  withCheckedRun,
} from "../testdata/fixtures.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

const vscode = BROWSER_CLIENTS.find((client) =>
  client.id === "vscode"
) as CodeServerDefinition;

/** The chat's requests when the attachment stays at version 1 (as measured). */
const STALE_CHAT: TranscriptEntry[] = [
  transcriptEntry(0, "wait-then-nudge", {
    path: "/v1/chat/completions",
    wire: "openai-chat",
    versionsSeen: [1],
    answer: "tool list_dir {}",
  }),
  transcriptEntry(11, "check-context-then-reread", {
    path: "/v1/chat/completions",
    wire: "openai-chat",
    versionsSeen: [1],
    contextUpdated: false,
    answer: "tool read_file {}",
  }),
  transcriptEntry(12, "final", {
    path: "/v1/chat/completions",
    wire: "openai-chat",
    versionsSeen: [1, 2],
    contextUpdated: false,
    answer: 'text "The review status is now at version 2."',
  }),
];

/** An editor run of VS Code, the lab at level 6 (the editor's re-read). */
function editorRecord(fields: Partial<RunRecord> = {}): RunRecord {
  const vsCodeClient = labClient({
    name: "code-server",
    version: "1.139.1",
    protocolVersion: "2025-11-25",
    trigger: "subscribe",
    level: 6,
    levelName: "re-read after the notification",
    missing:
      "level 7 (the agent's context shows the update) is not observable from the server",
    steps: {
      ...labClient().steps,
      subscribed: true,
      notificationDelivered: true,
      rereadAfterNotification: true,
    },
  });
  return runRecord({
    clientId: "vscode",
    displayName: "VS Code (code-server)",
    npmPackage: "code-server",
    version: "4.139.1",
    trigger: "subscribe",
    durationSeconds: 36,
    exitCode: null,
    command: "open VS Code on the workspace",
    labReport: labReport([vsCodeClient]),
    labReportMarkdown: "# Lab report\n\npast the update",
    transcript: STALE_CHAT,
    kind: "editor",
    steps: [{
      startedAt: 20,
      command:
        "F1, MCP: Browse Resources, Simulated review status (test://review/status)",
      outcome: "completed",
      exitCode: null,
      durationSeconds: 1.2,
      outputTail: "the editor shows: status: pending version: 1",
    }],
    screenshots: [{
      caption: "past the lab's update",
      path:
        "/runs/x/screenshots/vscode-4.139.1-default-subscribe-after-update.png",
    }],
    editor: { shownAfterUpdate: "status: reviewed version: 2" },
    daemon: "code-server PID 10 ended with SIGTERM",
    ...fields,
  });
}

const CUSTOM =
  "VS Code's chat took the scripted model as a custom endpoint without a sign-in";

Deno.test("rowFromRun (VS Code): the lab's level is the editor's, and the chat that kept version 1 is not level 7", () => {
  const row = rowFromRun(editorRecord());
  assert.deepEqual(
    [row.level, row.labLevel, row.contextUpdated, row.labClient],
    [6, 6, false, "code-server/1.139.1"],
  );
  assert.equal(
    row.notes,
    [
      EDITOR_NOTE,
      'past the update the editor showed "status: reviewed version: 2"',
      `${CUSTOM}; the resource went out attached at version 1, and the model's next request after the update still held version 1 only: the chat does not refresh an attachment, so version 2 reached the model only when it read the resource itself (read_file)`,
    ].join("; "),
  );
});

Deno.test("rowFromRun (VS Code): version 2 in the chat's next request without asking is level 7; a prompt sent late is not judged", () => {
  const fresh = STALE_CHAT.map((entry, index) =>
    index === 0 ? entry : {
      ...entry,
      versionsSeen: index === 1 ? [1, 2] : [1, 2, 2],
      contextUpdated: true,
    }
  );
  const seven = rowFromRun(editorRecord({ transcript: fresh }));
  assert.deepEqual([seven.level, seven.contextUpdated], [7, true]);
  assert.match(
    seven.notes,
    /held version 2 without the model asking: level 7 through the chat's attachment$/,
  );
  // A first request that already held version 2 went out after the update.
  const late = STALE_CHAT.map((entry) => ({
    ...entry,
    versionsSeen: [2],
    contextUpdated: true,
  }));
  assert.equal(chatContextUpdated(late), null);
  const row = rowFromRun(editorRecord({ transcript: late }));
  assert.deepEqual([row.level, row.contextUpdated], [6, null]);
  assert.match(
    row.notes,
    /its first request held version\(s\) 2, not version 1 alone, so it cannot say whether the update would have reached the model$/,
  );
  assert.equal(chatContextUpdated([]), null);
});

Deno.test("rowFromRun (VS Code): a chat that took no turn says at which step and why", () => {
  const row = rowFromRun(editorRecord({
    transcript: [],
    editor: {
      shownAfterUpdate: "status: reviewed version: 2",
      chatUnavailable:
        "attach the open resource to the chat (its Add file: button) and send: VS Code asked to sign in: Sign in to use GitHub Copilot\u001b[0m",
    },
  }));
  assert.equal(row.contextUpdated, null);
  assert.match(
    row.notes,
    /; VS Code's chat took no turn: attach the open resource to the chat \(its Add file: button\) and send: VS Code asked to sign in: Sign in to use GitHub Copilot$/,
  );
});

Deno.test("rowFromRun (VS Code): a stdio row, or a catalog row launched over stdio, is the lab's verdict, without a chat", () => {
  assert.deepEqual([chatRuns("default"), chatRuns("stdio")], [true, false]);
  const row = rowFromRun(
    editorRecord({ mode: "stdio", transcript: [], screenshots: [] }),
  );
  assert.deepEqual([row.mode, row.level, row.contextUpdated], [
    "stdio",
    6,
    null,
  ]);
  assert.equal(
    row.notes,
    [
      EDITOR_NOTE,
      STDIO_EDITOR_NOTE,
      'past the update the editor showed "status: reviewed version: 2"',
      "VS Code's chat: tried in the default (HTTP) rows, since it does not depend on the lab's transport",
    ].join("; "),
  );
  // The matrix lists a client's modes default, 2026-07-28, stdio.
  assert.deepEqual(
    mergeRows([], [row, rowFromRun(editorRecord())], ["vscode"]).map((
      merged,
    ) => merged.mode),
    ["default", "stdio"],
  );
  // A catalog run launched over stdio says so as the stdio row does.
  const catalog = rowFromRun(
    editorRecord({
      mode: "catalog",
      launchMode: "stdio",
      transcript: [],
      screenshots: [],
    }),
  );
  assert.equal(catalog.notes.startsWith(row.notes), true, catalog.notes);
});

Deno.test("evidenceMarkdown (VS Code): page actions, screenshots, the chat's transcript, the lab's report", () => {
  const evidence = evidenceMarkdown([editorRecord()]);
  assert.match(
    evidence,
    /^# VS Code \(code-server\) 4\.139\.1, mode default\n/,
  );
  assert.match(evidence, /### Page actions/);
  assert.match(
    evidence,
    /\| F1, MCP: Browse Resources, Simulated review status \(test:\/\/review\/status\) \| /,
  );
  assert.match(
    evidence,
    /!\[past the lab's update\]\(vscode-4\.139\.1-default-subscribe-after-update\.png\)/,
  );
  assert.match(evidence, /### Scripted model transcript \(VS Code's chat\)/);
  assert.match(evidence, /\| check-context-then-reread \| 1 +\| no /);
  assert.match(evidence, /Cleanup: code-server PID 10 ended with SIGTERM\./);
  assert.match(
    evidence,
    /### Lab report\n\n#### Lab report\n\npast the update/,
  );
  assert.doesNotMatch(evidence, /Refresh/);
});

/** Why the run below cannot happen here, or undefined when it can. */
async function missingForRun(): Promise<string | undefined> {
  if (!await browserInstalled()) return `${CHROMIUM_PATH} is missing`;
  const cache = defaultCacheDir();
  const node = runtimePaths(vscode.runtime, cache).executable;
  const bin =
    `${cache}/${vscode.id}-${vscode.version}/node_modules/.bin/${vscode.bin}`;
  for (const path of [node, bin]) {
    try {
      await Deno.stat(path);
    } catch {
      return `${path} is not installed (deno task clients --install-browser vscode installs it)`;
    }
  }
  return undefined;
}

const missing = await missingForRun();
if (missing) {
  console.log(
    `runners/code_server_test.ts: the VS Code run is skipped: ${missing}`,
  );
}

Deno.test({
  name:
    "deno task clients vscode --check: the editor re-reads version 2 over HTTP and stdio, the chat keeps version 1, and no process is left",
  ignore: missing !== undefined,
  async fn() {
    // The pinned code-server and Node already in the harness's cache. A 15 s
    // delay leaves the chat's prompt time to go out before the update, even
    // on a busy machine (with 5 s, twice in a fresh clone amid the whole
    // suite, the editor was notified and did not re-read).
    await withCheckedRun(
      [
        "vscode",
        "--mode",
        "default,stdio",
        "--trigger",
        "subscribe",
        "--delay",
        "15",
        "--timeout",
        "60",
      ],
      240_000,
      async (resultsDir, document) => {
        assert.deepEqual(
          document.rows.map((row) => [
            row.mode,
            row.era,
            row.labClient,
            row.rereadAfterNotification,
            row.level,
            row.contextUpdated,
          ]),
          [
            ["default", "2025", "code-server/1.139.1", true, 6, false],
            ["stdio", "2025", "code-server/1.139.1", true, 6, null],
          ],
        );
        // Before and past the update, and over HTTP the chat's answer.
        const screenshots: Record<string, number> = { default: 3, stdio: 2 };
        for (const row of document.rows) {
          assert.match(
            row.notes,
            /past the update the editor showed "status: reviewed version: 2 message: Simulated review result is now available\."/,
          );
          const evidence = await Deno.readTextFile(
            `${resultsDir}/${row.evidence.split("#")[0]}`,
          );
          assert.match(
            evidence,
            /the editor shows: status: pending version: 1 message: Waiting for simulated review result\./,
          );
          assert.match(evidence, /no\s+page\s+request\s+left\s+127\.0\.0\.1/);
          assert.deepEqual(await checkBrowserEvidence(resultsDir, evidence), {
            screenshots: screenshots[row.mode],
            pids: 2,
          });
        }
        const [http, stdio] = document.rows;
        assert.match(http.notes, /still held version 1 only/);
        assert.match(stdio.notes, /Stop Server closed its stdin/);
      },
    );
  },
});
