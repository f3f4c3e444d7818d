/**
 * One run of VS Code as the `code-server` npm package serves it, driven in
 * headless Chromium as a user would: a fresh lab (over HTTP, or over stdio
 * as VS Code starts it), code-server on a free loopback port with the lab in
 * the user's `mcp.json`, then F1 → "MCP: List Servers" → lab → Start Server,
 * F1 → "MCP: Browse Resources" → the lab's resource, which opens it in an
 * editor (and subscribes), a wait past the lab's update, and what the
 * editor shows then. Over HTTP the chat beside the editor gets the resource
 * attached and the standard prompt, with the scripted model as a custom
 * model; over stdio VS Code's "Stop Server" ends the lab, which prints its
 * verdict. Every page request that is not to 127.0.0.1 is aborted; the
 * browser and code-server (with everything it started) are ended by PID.
 *
 * @module
 */

import type { Page } from "npm:playwright-core@1.65.1";
import { REVIEW_URI } from "../../main.ts";
import {
  cacheModules,
  defaultDenoDir,
  freePort,
  labReports,
  NO_LAB_REPORTS,
  type RunningLab,
  startRunLab,
  stdioLabCommand,
  stdioLabReports,
} from "../support/run_lab.ts";
import {
  notStarted,
  PROMPT,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./run_record.ts";
import {
  type BrowserReports,
  type BrowserRunLog,
  type BrowserRunOptions,
  browserRunRecord,
  endBrowserRun,
  newRunLog,
  recordFailure,
  screenshotName,
  spawnWebServer,
  type StepAction,
  stepRecorder,
  untilAnswering,
  type WebServer,
  withPage,
} from "./browser.ts";
import {
  type CodeServerContext,
  type CodeServerDefinition,
  launchedMode,
  modeFileName,
  type ModeId,
} from "../catalog/types.ts";
import {
  freshRunDir,
  isolatedEnv,
  printableLine,
  removeFolders,
  sleep,
} from "../support/process.ts";
import {
  startScriptedModel,
  type TranscriptEntry,
} from "../model/scripted_model.ts";

/** A code-server run: the runtime it runs on, and where the stdio lab's modules are. */
export interface CodeServerRunOptions extends BrowserRunOptions {
  /** The runtime's executable (Node 24, from npm). */
  runtimePath: string;
  /** The deno cache the stdio lab runs from (the harness's by default). */
  denoDir?: string;
}

/** Seconds past the lab's update the editor is given before the harness looks. */
const MARGIN_SECONDS = 3;
/**
 * Seconds the scripted model waits past that look before its harmless call:
 * the row's report is taken before the chat's next request can read.
 */
const CHAT_LAG_SECONDS = 5;
/** The resource's title in VS Code's resource picker. */
const REVIEW_TITLE = "Simulated review status";

/** The chat's scripted turn happens over HTTP only: it does not depend on the lab's transport. */
export function chatRuns(mode: ModeId): boolean {
  return mode !== "stdio";
}

/** What a run sets up before VS Code starts: folders, the lab, the model. */
interface RunSetup {
  folders: { home: string; workDir: string; tmpDir: string };
  /** A short folder under /tmp for VS Code's sockets: its user data, TMPDIR. */
  shortDir: string;
  lab?: RunningLab;
  context: CodeServerContext;
  model: ReturnType<typeof startScriptedModel>;
}

export async function runCodeServer(
  client: CodeServerDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: CodeServerRunOptions,
): Promise<RunRecord> {
  const started = performance.now();
  const secondsSinceStart = () => (performance.now() - started) / 1000;
  const base = runHeader(client, mode, trigger, {
    delaySeconds: options.delaySeconds,
    launchMode: options.launchMode,
  });
  const launched = launchedMode({ mode, launchMode: options.launchMode });
  const setup = await setUp(client, launched, trigger, options);
  if ("failed" in setup) {
    return {
      ...notStarted(base, "lab-failed", setup.failed, secondsSinceStart()),
      kind: "editor",
    };
  }
  const { lab, context, model } = setup;
  const log = newRunLog();
  const step = stepRecorder(log, secondsSinceStart, lab?.url ?? "");
  const serverLog = await Deno.open(`${options.runDir}/server.log`, {
    write: true,
    create: true,
    truncate: true,
  });
  let server: WebServer | undefined;
  let browserPid: number | undefined;
  const seen: Seen = { reports: NO_LAB_REPORTS, shownAfterUpdate: null };
  try {
    const served = await step(
      `serve VS Code on ${client.runtime.npmPackage} ${client.runtime.version}: code-server ${
        shownArgs(client.serveArgs(context), setup)
      }`,
      async () => {
        server = spawnWebServer(
          [options.runtimePath, options.binPath, ...client.serveArgs(context)],
          {
            cwd: setup.folders.home,
            env: {
              ...isolatedEnv(setup.folders.home, `${setup.shortDir}/tmp`),
              ...client.env,
            },
            log: serverLog,
          },
        );
        await untilAnswering(
          server,
          `http://127.0.0.1:${context.port}/healthz`,
          options.timeoutSeconds,
        );
        return "listening on 127.0.0.1 (a free port)";
      },
    );
    if (!served) throw new Error("no web server");
    await withPage(
      options,
      log,
      (pid) => browserPid = pid,
      (page) =>
        useVsCode({
          page,
          step,
          log,
          client,
          mode: launched,
          setup,
          options,
          seen,
          shotPath: (moment) =>
            `${options.runDir}/screenshots/${
              screenshotName(
                client,
                modeFileName({ mode, launchMode: options.launchMode }),
                trigger,
                moment,
              )
            }`,
        }),
    );
  } catch (error) {
    recordFailure(log, error);
  } finally {
    await endBrowserRun(log, browserPid, server, "code-server");
    serverLog.close();
    await model.close();
    if (lab && seen.reports.labReport === null) {
      seen.reports = await labReports(lab).catch(() => NO_LAB_REPORTS);
    }
    await lab?.stop();
  }
  if (!lab) seen.reports = await stdioReports(options, trigger, log);
  await Deno.writeTextFile(
    `${options.runDir}/transcript.json`,
    JSON.stringify(model.transcript, null, 2),
  );
  if (!options.keepHome) {
    await removeFolders([...Object.values(setup.folders), setup.shortDir]);
  }
  return {
    ...browserRunRecord(base, log, seen.reports, {
      durationSeconds: Math.round(secondsSinceStart()),
      serverOutput: server ? (server as WebServer).output() : "",
    }),
    kind: "editor",
    transcript: model.transcript,
    editor: {
      shownAfterUpdate: seen.shownAfterUpdate,
      ...(seen.chatUnavailable
        ? { chatUnavailable: seen.chatUnavailable }
        : {}),
    },
  };
}

/** The run's folders, its lab, the scripted model and code-server's context. */
async function setUp(
  client: CodeServerDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: CodeServerRunOptions,
): Promise<RunSetup | { failed: string }> {
  const folders = await freshRunDir(options.runDir, [
    `${options.runDir}/screenshots`,
    `${options.runDir}/extensions`,
  ]);
  const denoDir = options.denoDir ?? defaultDenoDir();
  let lab: RunningLab | undefined;
  if (mode === "stdio") {
    const cached = await cacheModules(options.labMainPath, denoDir);
    if (cached) return { failed: cached };
  } else {
    const started = await startRunLab(options, trigger);
    if ("failed" in started) return started;
    lab = started;
  }
  // VS Code keeps unix sockets in its user data folder and TMPDIR, and a
  // socket's path must stay under 108 bytes: a run's folder may be deeper.
  const shortDir = await Deno.makeTempDir({
    dir: "/tmp",
    prefix: "lab-vscode-",
  });
  for (const dir of ["user-data", "tmp"]) {
    await Deno.mkdir(`${shortDir}/${dir}`);
  }
  const model = startScriptedModel({
    ...client.chatScript(folders.workDir),
    waitSeconds: options.delaySeconds + MARGIN_SECONDS + CHAT_LAG_SECONDS,
  });
  const context: CodeServerContext = {
    port: freePort(),
    userDataDir: `${shortDir}/user-data`,
    extensionsDir: `${options.runDir}/extensions`,
    workspace: folders.workDir,
    lab: lab ? { type: "http", url: lab.url } : {
      type: "stdio",
      ...stdioLabCommand({
        labMainPath: options.labMainPath,
        denoDir,
        stderrPath: `${options.runDir}/lab.log`,
        trigger,
        delaySeconds: options.delaySeconds,
        labSettings: options.labSettings,
      }),
    },
    modelOrigin: model.origin,
  };
  for (const [path, content] of Object.entries(client.files(context))) {
    await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(path, content);
  }
  return { folders, shortDir, lab, context, model };
}

/** code-server's arguments as evidence: the run's folders by name. */
function shownArgs(args: string[], setup: RunSetup): string {
  return args.join(" ")
    .replaceAll(setup.context.userDataDir, "$USER_DATA")
    .replaceAll(setup.context.extensionsDir, "$EXTENSIONS")
    .replaceAll(setup.context.workspace, "$WORKSPACE")
    .replace(/127\.0\.0\.1:\d+/, "127.0.0.1:$PORT");
}

/** The stdio lab's reports from its stderr; why not, in the run's detail. */
async function stdioReports(
  options: CodeServerRunOptions,
  trigger: Trigger,
  log: BrowserRunLog,
): Promise<BrowserReports> {
  const stderr = await Deno.readTextFile(`${options.runDir}/lab.log`)
    .catch(() => "");
  const reports = stdioLabReports(stderr, {
    trigger,
    updateDelaySeconds: options.delaySeconds,
    labSettings: options.labSettings,
  });
  if ("unavailable" in reports) {
    log.detail = log.detail
      ? `${log.detail}; ${reports.unavailable}`
      : reports.unavailable;
    return NO_LAB_REPORTS;
  }
  return reports;
}

/** What the page showed that the record keeps. */
interface Seen {
  reports: BrowserReports;
  shownAfterUpdate: string | null;
  chatUnavailable?: string;
}

/** What driving VS Code needs from the run. */
interface VsCodeDrive {
  page: Page;
  step: ReturnType<typeof stepRecorder>;
  log: BrowserRunLog;
  client: CodeServerDefinition;
  mode: ModeId;
  setup: RunSetup;
  options: CodeServerRunOptions;
  seen: Seen;
  /** Where the screenshot of a moment goes. */
  shotPath(moment: string): string;
}

/**
 * A user's session: open VS Code, start the lab's server, (over HTTP) get
 * the chat ready, open the resource, (over HTTP) attach it to the chat and
 * send, wait past the update; then the lab's report, (over HTTP) the chat's
 * answer, (over stdio) Stop Server and the lab's verdict.
 */
async function useVsCode(drive: VsCodeDrive): Promise<void> {
  const ui = vsCodeUi(drive);
  // What the page showed when a step failed, once, at that moment.
  let failureShown = false;
  const step: VsCodeDrive["step"] = async (description, action, options) => {
    const ok = await drive.step(description, action, options);
    if (!ok && !failureShown) {
      failureShown = true;
      await ui.shot(`when "${description}" failed`, "failed").catch(() => {});
    }
    return ok;
  };
  await userSession({ ...drive, step }, ui);
}

/** The user's actions in order (see `useVsCode`). */
async function userSession(
  drive: VsCodeDrive,
  ui: ReturnType<typeof vsCodeUi>,
): Promise<void> {
  const chat = chatRuns(drive.mode);
  const waitSeconds = drive.options.delaySeconds + MARGIN_SECONDS;
  const steps: [string, StepAction][] = [
    ["open VS Code on the workspace", () => ui.open()],
    ["F1, MCP: List Servers, lab: Start Server", () => ui.startLabServer()],
  ];
  for (const [description, action] of steps) {
    if (!await drive.step(description, action)) return;
  }
  const chatReady = chat && await chatSteps(drive, [
    [
      `F1, Chat: Manage Language Models: the custom endpoint's ${drive.client.chatModelName} is listed`,
      () => ui.listModels(),
    ],
    [
      `pick ${drive.client.chatModelName} in the chat's model picker`,
      () => ui.pickModel(),
    ],
    ["type the prompt into the chat's input", () => ui.typePrompt()],
  ]);
  if (
    !await drive.step(
      `F1, MCP: Browse Resources, ${REVIEW_TITLE} (${REVIEW_URI})`,
      () => ui.openResource(),
    )
  ) return;
  if (chatReady) {
    await chatSteps(drive, [[
      "attach the open resource to the chat (its Add file: button) and send",
      () => ui.attachAndSend(),
    ]]);
  }
  const waited = await drive.step(
    `wait ${waitSeconds} s, past the lab's update`,
    async () => {
      await sleep(waitSeconds * 1000);
      await ui.shot("past the lab's update", "after-update");
      const shown = await ui.editorText();
      drive.seen.shownAfterUpdate = shown;
      return `the editor shows: ${shown}`;
    },
  );
  await sleep(300);
  if (drive.setup.lab) {
    drive.seen.reports = await labReports(drive.setup.lab);
  }
  if (!waited) return;
  if (chatReady && !drive.seen.chatUnavailable) {
    await chatSteps(drive, [[
      "wait for the chat's answer",
      () => ui.chatAnswer(),
    ]]);
  }
  if (!drive.setup.lab) {
    await drive.step(
      "F1, MCP: List Servers, lab: Stop Server (the stdio lab prints its verdict)",
      () => ui.stopLabServer(),
    );
  }
}

/**
 * Runs chat steps, which the row does not stand on: the first that fails
 * says why the chat did not happen, and the rest are skipped.
 */
async function chatSteps(
  drive: VsCodeDrive,
  steps: [string, StepAction][],
): Promise<boolean> {
  for (const [description, action] of steps) {
    if (drive.seen.chatUnavailable) return false;
    const ok = await drive.step(description, action, { soft: true });
    if (!ok) {
      const failed = drive.log.steps.at(-1);
      drive.seen.chatUnavailable = `${description}: ${
        failed?.detail ?? "failed"
      }`;
      return false;
    }
  }
  return true;
}

/** VS Code's workbench in a page: the user's actions, each bounded. */
function vsCodeUi(drive: VsCodeDrive) {
  const { page, client, setup, options } = drive;
  const quick = page.locator(".quick-input-widget");
  const chatInput = page.locator(".interactive-input-part");
  const resourceEditor = page.locator(
    '.editor-instance .monaco-editor[data-uri^="mcp-resource:"] .view-lines',
  );
  const row = (label: string) =>
    quick.locator(`.monaco-list-row[aria-label^="${label}"]`).first();
  /**
   * F1, the command typed as a user would, and its entry in the palette;
   * again while VS Code does not offer it yet (a command such as "MCP:
   * Browse Resources" appears once a server has listed its capabilities),
   * or while the palette did not open (an F1 the workbench did not take).
   */
  const command = async (label: string) => {
    for (let attempt = 1;; attempt++) {
      await page.keyboard.press("F1");
      try {
        await quick.locator("input").fill(`>${label}`, { timeout: 5000 });
        await row(label).click({ timeout: 4000 });
        return;
      } catch (error) {
        if (attempt === 4) throw error;
        await page.keyboard.press("Escape");
        await sleep(1000);
      }
    }
  };
  /** The lab's entry in "MCP: List Servers": its status, and its actions. */
  const labServer = async () => {
    await command("MCP: List Servers");
    const entry = row(`lab,`);
    const status = (await entry.getAttribute("aria-label") ?? "").split(",")[1]
      ?.trim();
    await entry.click();
    return printableLine(status ?? "unknown", 40);
  };
  const shot = async (caption: string, moment: string) => {
    const path = drive.shotPath(moment);
    await page.screenshot({ path });
    drive.log.screenshots.push({ caption, path });
  };
  const editorText = async () =>
    printableLine(await resourceEditor.innerText(), 200);
  const transcript = setup.model.transcript;
  return {
    shot,
    editorText,
    async open() {
      await page.goto(`http://127.0.0.1:${setup.context.port}/`);
      await page.locator(".monaco-workbench .part.statusbar").waitFor({
        timeout: options.timeoutSeconds * 1000,
      });
    },
    async startLabServer() {
      const status = await labServer();
      const start = row("Start Server");
      if (await start.count() === 0) {
        await page.keyboard.press("Escape");
        return `the lab's server was ${status}: no Start Server needed`;
      }
      await start.click();
      return `the lab's server was ${status}; started`;
    },
    async stopLabServer() {
      const status = await labServer();
      await row("Stop Server").click();
      const verdict = await untilVerdict(`${options.runDir}/lab.log`, 10_000);
      return `the lab's server was ${status}; stopped; ${
        verdict ? "the lab printed its verdict" : "no verdict within 10 s"
      }`;
    },
    async listModels() {
      await command("Chat: Manage Language Models");
      // The chat extension loads its custom models on first use.
      await page.getByText(client.chatModelName, { exact: true }).first()
        .waitFor({ timeout: 30_000 });
      await page.keyboard.press("Escape");
    },
    async pickModel() {
      await chatInput.getByRole("button", { name: /^Models/ }).first().click();
      await page.locator(".action-widget .monaco-list-row")
        .filter({ hasText: client.chatModelName }).first().click();
    },
    async typePrompt() {
      await chatInput.locator(".monaco-editor").first().click();
      await page.keyboard.type(PROMPT);
    },
    async openResource() {
      // A picker opened while VS Code is still learning the server's
      // capabilities stays empty (the server is never asked for its list):
      // opened again, as a user would, it lists the resource.
      for (let attempt = 1;; attempt++) {
        await command("MCP: Browse Resources");
        try {
          await quick.locator(".monaco-list-row").filter({
            hasText: REVIEW_URI,
          }).first().click({ timeout: 5000 });
          break;
        } catch (error) {
          if (attempt === 4) throw error;
          await page.keyboard.press("Escape");
          await sleep(1000);
        }
      }
      await resourceEditor.getByText(/version:/).waitFor();
      await shot("the resource just opened, before the update", "before");
      return `the editor shows: ${await editorText()}`;
    },
    async attachAndSend() {
      await chatInput.getByRole("button", { name: /^Add file:/ }).first()
        .click();
      await chatInput.getByRole("button", { name: /^Send/ }).first().click();
      const signIn = page.locator(".monaco-dialog-box").filter({
        hasText: /sign in/i,
      });
      for (let waited = 0; waited < 150; waited++) {
        if (transcript.length > 0) {
          return `the model's first request: ${requestSummary(transcript[0])}`;
        }
        if (await signIn.count() > 0) {
          throw new Error(
            `VS Code asked to sign in: ${
              printableLine(await signIn.first().innerText(), 120)
            }`,
          );
        }
        await sleep(100);
      }
      throw new Error("no request reached the scripted model within 15 s");
    },
    async chatAnswer() {
      const deadline = performance.now() +
        (options.delaySeconds + MARGIN_SECONDS + CHAT_LAG_SECONDS + 30) * 1000;
      while (!transcript.some(isAnswer)) {
        if (performance.now() > deadline) {
          throw new Error("the model gave no final answer in time");
        }
        await sleep(250);
      }
      await sleep(1000);
      await shot("the chat after the model's answer", "chat");
      return `the model's last request: ${
        requestSummary(transcript.findLast(isAnswer)!)
      }`;
    },
  };
}

/** A model request that the model answered with text: the turn is over. */
function isAnswer(entry: TranscriptEntry): boolean {
  return entry.answer.startsWith("text ");
}

/** One model request, for a step's output: its stage and the versions it held. */
function requestSummary(entry: TranscriptEntry): string {
  return `${entry.stage}, versions seen: ${
    entry.versionsSeen.join(", ") || "none"
  }`;
}

/** Waits until the stdio lab's log holds a verdict; whether it did. */
async function untilVerdict(path: string, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (text.includes('"event":"verdict"')) return true;
    await sleep(200);
  }
  return false;
}
