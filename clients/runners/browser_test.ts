import assert from "node:assert/strict";
import { BROWSER_CLIENTS } from "../catalog/hosts.ts";
import {
  groupsOf,
  type InspectorWebDefinition,
  type ModeId,
} from "../catalog/types.ts";
import { selectClients } from "../catalog/select.ts";
import {
  allowedRequest,
  browserInstalled,
  CHROMIUM_PATH,
  INSTALL_BROWSER_COMMAND,
  screenshotName,
} from "./browser.ts";
import { evidenceMarkdown, refreshNote, rowFromRun } from "../report/matrix.ts";
import type { RunRecord } from "./run_record.ts";
import {
  checkBrowserEvidence,
  labClient,
  labReport,
  runRecord,
  withCheckedRun,
} from "../testdata/fixtures.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

const web = BROWSER_CLIENTS.find((client) =>
  client.id === "inspector-web"
) as InspectorWebDefinition;

Deno.test("browser client: the Inspector's web UI serves the lab in the mode's era", () => {
  assert.ok(web);
  const labUrl = "http://127.0.0.1:40001/mcp";
  const eras = (["default", "2026-07-28"] as ModeId[]).map((mode) => {
    const args = web.serveArgs({ labUrl, mode });
    assert.deepEqual(args.slice(0, 5), [
      "--web",
      "--server-url",
      labUrl,
      "--transport",
      "http",
    ]);
    return args.slice(5);
  });
  assert.deepEqual(eras, [["--protocol-era", "legacy"], [
    "--protocol-era",
    "modern",
  ]]);
  // It never opens a browser of its own.
  assert.equal(web.env.MCP_AUTO_OPEN_ENABLED, "false");
  assert.equal(web.version, "2.12.0");
});

Deno.test("browser client: --only inspector includes it, --only browser selects it alone", () => {
  const ids = (groups: Parameters<typeof selectClients>[1]) =>
    selectClients([], groups).map((client) => client.id);
  assert.deepEqual(groupsOf(web), ["inspector", "browser"]);
  assert.deepEqual(ids(["browser"]), ["inspector-web", "vscode"]);
  assert.deepEqual(ids(["inspector"]), [
    "mcpdo",
    "inspector-cli",
    "inspector-web",
  ]);
  assert.ok(!ids(["agents"]).includes("inspector-web"));
});

Deno.test("browser client: only loopback requests leave the page", () => {
  assert.equal(allowedRequest("http://127.0.0.1:6274/assets/x.js"), true);
  assert.equal(allowedRequest("data:image/png;base64,AAAA"), true);
  assert.equal(
    allowedRequest("https://fonts.googleapis.com/css2?family=Fredoka"),
    false,
  );
  assert.equal(allowedRequest("http://localhost:6274/"), false);
  assert.equal(allowedRequest("http://127.0.0.1.example.com/"), false);
  assert.equal(allowedRequest("not a url"), false);
  assert.equal(
    INSTALL_BROWSER_COMMAND,
    "apt-get update && apt-get install -y chromium",
  );
  assert.equal(
    screenshotName(web, "2026-07-28", "read", "before"),
    "inspector-web-2.12.0-2026-07-28-read-before.png",
  );
});

/** A browser run as the runner records it, with the lab at `level`. */
function browserRecord(
  level: number,
  afterRefresh?: RunRecord["afterRefresh"],
): RunRecord {
  const uiClient = labClient({
    name: "mcp-inspector",
    version: "2.12.0",
    protocolVersion: "2025-11-25",
    level,
    missing: "never read test://review/status again after the notification",
    steps: {
      ...labClient().steps,
      subscribed: level >= 4,
      notificationDelivered: level >= 5,
      rereadAfterNotification: level >= 6,
    },
  });
  return runRecord({
    clientId: "inspector-web",
    displayName: "Inspector web UI",
    npmPackage: "@modelcontextprotocol/inspector",
    version: "2.12.0",
    trigger: "subscribe",
    durationSeconds: 11,
    exitCode: null,
    command: "open the UI with its token",
    labReport: labReport([uiClient]),
    labReportMarkdown: "# Lab report\n\nbefore",
    transcript: [],
    kind: "browser",
    steps: [{
      startedAt: 3.8,
      command: "click Subscribe in the preview",
      outcome: "completed",
      exitCode: null,
      durationSeconds: 0.5,
      outputTail: "the preview shows: status: pending version: 1",
    }],
    ...(afterRefresh ? { afterRefresh } : {}),
    screenshots: [{
      caption: "past the lab's update, before any click",
      path:
        "/runs/x/screenshots/inspector-web-2.12.0-default-subscribe-after-update.png",
    }],
    daemon: "web server PID 10 ended with SIGTERM",
  });
}

Deno.test("rowFromRun: a browser row is the level before Refresh, with the click's level in a separate note", () => {
  const afterRefresh = {
    labLevel: 6,
    rereadAfterNotification: true,
    labReportMarkdown: "# Lab report\n\nafter",
  };
  const row = rowFromRun(browserRecord(5, afterRefresh));
  assert.equal(row.level, 5);
  assert.equal(row.labLevel, 5);
  assert.equal(row.rereadAfterNotification, false);
  assert.equal(row.contextUpdated, null);
  assert.match(
    row.notes,
    /; after a user's Refresh click: level 6 \(version 2 re-read by that click, not by the client\)$/,
  );
  assert.equal(
    refreshNote({
      ...afterRefresh,
      labLevel: 5,
      rereadAfterNotification: false,
    }),
    "after a user's Refresh click: level 5 (the click re-read nothing the lab counts)",
  );
  // No click, no note about one.
  assert.doesNotMatch(rowFromRun(browserRecord(3)).notes, /Refresh click:/);

  const evidence = evidenceMarkdown([browserRecord(5, afterRefresh)]);
  assert.match(evidence, /### Page actions/);
  assert.match(evidence, /\| 3\.8 \| click Subscribe in the preview \| /);
  assert.match(
    evidence,
    /!\[past the lab's update, before any click\]\(inspector-web-2\.12\.0-default-subscribe-after-update\.png\)/,
  );
  assert.match(evidence, /Cleanup: web server PID 10 ended with SIGTERM\./);
  assert.match(evidence, /### Lab report after the user's Refresh click/);
  assert.doesNotMatch(evidence, /Scripted model transcript/);
});

const chromiumMissing = !await browserInstalled();
if (chromiumMissing) {
  console.log(
    `runners/browser_test.ts: the web UI run is skipped: ${CHROMIUM_PATH} is missing (install it with \`${INSTALL_BROWSER_COMMAND}\`)`,
  );
}

Deno.test({
  name:
    "deno task clients inspector-web --check: the web UI is notified in both eras, re-reads only on Refresh, and leaves no process",
  ignore: chromiumMissing,
  async fn() {
    // The pinned Inspector comes from the harness's cache; npm installs it
    // there once if it is missing.
    await withCheckedRun(
      [
        "inspector-web",
        "--mode",
        "default,2026-07-28",
        "--trigger",
        "subscribe",
        "--delay",
        "1",
        "--timeout",
        "30",
      ],
      150_000,
      async (resultsDir, document) => {
        assert.deepEqual(
          document.rows.map((row) => [row.mode, row.era, row.level]),
          [["default", "2025", 5], ["2026-07-28", "2026-07-28", 5]],
        );
        for (const row of document.rows) {
          assert.match(
            row.notes,
            /after a user's Refresh click: level 6 \(version 2 re-read by that click, not by the client\)$/,
          );
          const evidence = await Deno.readTextFile(
            `${resultsDir}/${row.evidence.split("#")[0]}`,
          );
          assert.match(
            evidence,
            /the preview shows: status: pending version: 1/,
          );
          assert.match(
            evidence,
            /the preview shows: status: reviewed version: 2/,
          );
          assert.deepEqual(await checkBrowserEvidence(resultsDir, evidence), {
            screenshots: 3,
            pids: 2,
          });
        }
        // The summary's picture: both modes of the web UI, level 5 natively.
        const svg = await Deno.readTextFile(
          `${resultsDir}/compatibility-summary.svg`,
        );
        assert.deepEqual(
          [...svg.matchAll(
            /data-client="inspector-web" data-column="native-subscribe" data-level="(\w+)"/g,
          )].map(([, level]) => level),
          ["5", "5"],
        );
      },
    );
  },
});
