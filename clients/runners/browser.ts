/**
 * One run of a browser client (the MCP Inspector's web UI): a fresh lab, the
 * UI's web server for it in an isolated home on fixed free loopback ports,
 * and a headless Chromium that clicks through it as a user would: connect,
 * open `test://review/status`, Subscribe, wait past the lab's update, then
 * Refresh. Every page request that is not to 127.0.0.1 is aborted. The lab's
 * report is taken before the Refresh click (the row: what the client did by
 * itself) and after it (what a user's click added). The browser and the web
 * server are ended by their PIDs.
 *
 * @module
 */

import {
  type BrowserClientDefinition,
  type InspectorWebDefinition,
  launchedMode,
  modeFileName,
  type ModeId,
} from "../catalog/types.ts";
import { REVIEW_URI } from "../../main.ts";
import {
  freePort,
  type LabReports,
  labReports,
  NO_LAB_REPORTS,
  type RunningLab,
  startRunLab,
} from "../support/run_lab.ts";
import { aptInstallCommand } from "../support/install.ts";
import {
  type BaseRunOptions,
  type CommandStepRecord,
  mainLabClient,
  notStarted,
  type Outcome,
  type RunHeader,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./run_record.ts";
import {
  endByPid,
  endGroupByPid,
  freshRunDir,
  isolatedEnv,
  printableLine,
  removeFolders,
  sleep,
  spawnInGroup,
  tail,
} from "../support/process.ts";
import type { Page } from "npm:playwright-core@1.65.1";

/** Debian's Chromium, the only browser the harness drives. */
export const CHROMIUM_PATH = "/usr/bin/chromium";
/** What installs it (run by `deno task clients --install-browser`, as root). */
export const INSTALL_BROWSER_COMMAND = aptInstallCommand(["chromium"]);

/** A browser run: `timeoutSeconds` bounds the web server's start and each page action. */
export interface BrowserRunOptions extends BaseRunOptions {
  /** Seconds to wait past the lab's update delay after Subscribe. */
  marginSeconds?: number;
  /** Defaults to `CHROMIUM_PATH`. */
  executablePath?: string;
}

/** The title the UI lists the lab's resource (`REVIEW_URI`) under. */
const REVIEW_TITLE = "Simulated review status";

export async function browserInstalled(
  path = CHROMIUM_PATH,
): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** Whether a page request may go out: loopback (or the page's own data). */
export function allowedRequest(url: string): boolean {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "data:" || parsed.protocol === "blob:") return true;
    return parsed.hostname === "127.0.0.1";
  } catch {
    return false;
  }
}

/** Waits until the web server answers on its port, or the bound passes. */
export async function waitForServer(
  url: string,
  timeoutSeconds: number,
  exited: () => boolean,
): Promise<string | undefined> {
  const deadline = performance.now() + timeoutSeconds * 1000;
  while (performance.now() < deadline) {
    if (exited()) return "the web server exited before it answered";
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      if (response.status < 500) return undefined;
    } catch {
      // Not up yet.
    }
    await sleep(250);
  }
  return `the web server did not answer within ${timeoutSeconds} s`;
}

/**
 * The PNG file of one screenshot, as the evidence folder names it; `mode`
 * as file names give it (`modeFileName`).
 */
export function screenshotName(
  client: Pick<BrowserClientDefinition, "id" | "version">,
  mode: string,
  trigger: Trigger,
  moment: string,
): string {
  return `${client.id}-${client.version}-${mode}-${trigger}-${moment}.png`;
}

/** What a browser run records as it goes: each step, and its first failure. */
export interface BrowserRunLog {
  steps: CommandStepRecord[];
  screenshots: { caption: string; path: string }[];
  /** Page requests not to 127.0.0.1, aborted. */
  blocked: string[];
  outcome: Outcome;
  detail?: string;
  /** How the end of the run ended each process, by PID. */
  cleanup: string[];
}

/** A step's work: what the page showed, if it says. */
export type StepAction = () => Promise<string | void>;

/** A run's log before its first step. */
export function newRunLog(): BrowserRunLog {
  return {
    steps: [],
    screenshots: [],
    blocked: [],
    outcome: "completed",
    cleanup: [],
  };
}

/**
 * A recorder of steps (the web server's start, each page action): it runs
 * the step and records what it did, how it ended and what the page showed;
 * the run's outcome is its first failed step's, unless the step is `soft`
 * (a part of the run the row does not stand on). A step resolves with
 * whether it succeeded.
 */
export function stepRecorder(
  log: BrowserRunLog,
  secondsSinceStart: () => number,
  labUrl: string,
) {
  return async (
    description: string,
    action: StepAction,
    { soft = false } = {},
  ) => {
    const startedAt = secondsSinceStart();
    let result: string | void = "";
    let failure: string | undefined;
    let outcome: Outcome = "completed";
    try {
      result = await action();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      outcome = /timeout|timed out/i.test(message) ? "timeout" : "exit-nonzero";
      failure = printableLine(message.split("\n")[0], 200);
    }
    log.steps.push({
      startedAt: Math.round(startedAt * 10) / 10,
      command: description,
      outcome,
      exitCode: null,
      detail: failure,
      durationSeconds: Math.round((secondsSinceStart() - startedAt) * 10) / 10,
      outputTail: labUrl
        ? (result ?? "").replaceAll(labUrl, "$LAB_URL")
        : result ?? "",
    });
    if (failure !== undefined && !soft && log.outcome === "completed") {
      log.outcome = outcome;
      log.detail = `${description}: ${failure}`;
    }
    return failure === undefined;
  };
}

/** Where the UI is served: free loopback ports, and the token it asks for. */
interface UiAddress {
  clientPort: number;
  sandboxPort: number;
  token: string;
}

function freshUiAddress(): UiAddress {
  const clientPort = freePort();
  let sandboxPort = freePort();
  while (sandboxPort === clientPort) sandboxPort = freePort();
  return {
    clientPort,
    sandboxPort,
    token: crypto.randomUUID().replaceAll("-", ""),
  };
}

/** The UI's web server: its process, and what it has printed so far. */
export interface WebServer {
  child: Deno.ChildProcess;
  output(): string;
  exited(): boolean;
}

/**
 * Starts a web server in its own process group (setsid, so it can be ended
 * with everything it starts) with exactly the environment given, its output
 * copied to `log`.
 */
export function spawnWebServer(
  command: string[],
  options: { cwd: string; env: Record<string, string>; log: Deno.FsFile },
): WebServer {
  const child = spawnInGroup(command, options);
  let output = "";
  let exited = false;
  child.status.then(() => exited = true);
  for (const stream of [child.stdout, child.stderr]) {
    (async () => {
      for await (const chunk of stream) {
        output += new TextDecoder().decode(chunk);
        await options.log.write(chunk);
      }
    })().catch(() => {});
  }
  return { child, output: () => output, exited: () => exited };
}

/** The Inspector's web server in the isolated home, on the UI's ports. */
function spawnInspector(
  client: InspectorWebDefinition,
  binPath: string,
  args: string[],
  folders: { home: string; tmpDir: string },
  address: UiAddress,
  log: Deno.FsFile,
): WebServer {
  return spawnWebServer([binPath, ...args], {
    cwd: folders.home,
    env: {
      ...isolatedEnv(folders.home, folders.tmpDir),
      ...client.env,
      HOST: "127.0.0.1",
      CLIENT_PORT: String(address.clientPort),
      MCP_SANDBOX_PORT: String(address.sandboxPort),
      MCP_INSPECTOR_API_TOKEN: address.token,
    },
    log,
  });
}

/** The lab's reports a browser run keeps: before the Refresh click, and after. */
export interface BrowserReports extends LabReports {
  afterRefresh?: RunRecord["afterRefresh"];
}

export async function runBrowserClient(
  client: InspectorWebDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: BrowserRunOptions,
): Promise<RunRecord> {
  const started = performance.now();
  const secondsSinceStart = () => (performance.now() - started) / 1000;
  const base = runHeader(client, mode, trigger, {
    delaySeconds: options.delaySeconds,
    launchMode: options.launchMode,
  });
  const launched = launchedMode({ mode, launchMode: options.launchMode });
  const shotsDir = `${options.runDir}/screenshots`;
  const { home, tmpDir } = await freshRunDir(options.runDir, [shotsDir]);
  const lab = await startRunLab(options, trigger);
  if ("failed" in lab) {
    return {
      ...notStarted(base, "lab-failed", lab.failed, secondsSinceStart()),
      kind: "browser",
    };
  }
  const log = newRunLog();
  const step = stepRecorder(log, secondsSinceStart, lab.url);
  const address = freshUiAddress();
  const serveArgs = client.serveArgs({ labUrl: lab.url, mode: launched });
  const serverLog = await Deno.open(`${options.runDir}/server.log`, {
    write: true,
    create: true,
    truncate: true,
  });
  let server: WebServer | undefined;
  let browserPid: number | undefined;
  let reports: BrowserReports = NO_LAB_REPORTS;
  try {
    const served = await step(
      `serve the web UI: mcp-inspector ${
        serveArgs.join(" ").replaceAll(lab.url, "$LAB_URL")
      }`,
      async () => {
        server = spawnInspector(
          client,
          options.binPath,
          serveArgs,
          { home, tmpDir },
          address,
          serverLog,
        );
        await untilServing(server, address, options.timeoutSeconds);
        return `listening on 127.0.0.1 (CLIENT_PORT, MCP_SANDBOX_PORT: free ports)`;
      },
    );
    if (!served) throw new Error("no web server");
    reports = await driveBrowser({
      step,
      log,
      lab,
      address,
      options,
      shotPath: (moment) =>
        `${shotsDir}/${
          screenshotName(
            client,
            modeFileName({ mode, launchMode: options.launchMode }),
            trigger,
            moment,
          )
        }`,
      onBrowser: (pid) => browserPid = pid,
    });
  } catch (error) {
    recordFailure(log, error);
  } finally {
    await endBrowserRun(log, browserPid, server, "web server");
    serverLog.close();
    if (reports.labReport === null) {
      reports = { ...reports, ...await labReports(lab).catch(() => ({})) };
    }
    await lab.stop();
  }
  if (!options.keepHome) await removeFolders([home, tmpDir]);
  return browserRunRecord(base, log, reports, {
    durationSeconds: Math.round(secondsSinceStart()),
    serverOutput: server ? (server as WebServer).output() : "",
  });
}

/** Records an error that ended a run outside its steps, unless a step failed first. */
export function recordFailure(log: BrowserRunLog, error: unknown) {
  if (log.outcome === "completed") {
    log.outcome = "spawn-failed";
    log.detail = printableLine(String(error).split("\n")[0], 200);
  }
}

/**
 * Ends a browser run's browser and web server (with its process group) by
 * their PIDs, and records how.
 */
export async function endBrowserRun(
  log: BrowserRunLog,
  browserPid: number | undefined,
  server: WebServer | undefined,
  serverName: string,
) {
  if (browserPid !== undefined) {
    log.cleanup.push(`browser PID ${browserPid} ${await endByPid(browserPid)}`);
  }
  if (server !== undefined) {
    const { child } = server;
    log.cleanup.push(
      `${serverName} PID ${child.pid} ${await endGroupByPid(child.pid)}`,
    );
    await Promise.race([child.status, sleep(2000)]);
  }
}

/** Waits until the web server answers; throws with its last lines if not. */
async function untilServing(
  server: WebServer,
  address: UiAddress,
  timeoutSeconds: number,
) {
  await untilAnswering(
    server,
    `http://127.0.0.1:${address.clientPort}/`,
    timeoutSeconds,
  );
}

/** Waits until a web server answers at `url`; throws with its last lines if not. */
export async function untilAnswering(
  server: WebServer,
  url: string,
  timeoutSeconds: number,
) {
  const problem = await waitForServer(url, timeoutSeconds, server.exited);
  if (problem) throw new Error(`${problem}: ${tail(server.output(), 3)}`);
}

/** A browser run's record: its steps, screenshots, reports and cleanup. */
export function browserRunRecord(
  base: RunHeader,
  log: BrowserRunLog,
  reports: BrowserReports,
  ending: { durationSeconds: number; serverOutput: string },
): RunRecord {
  const hosts = [...new Set(log.blocked.map((url) => new URL(url).host))];
  return {
    ...base,
    durationSeconds: ending.durationSeconds,
    outcome: log.outcome,
    exitCode: null,
    ...(log.detail ? { detail: log.detail } : {}),
    command: log.steps.map((step) => step.command).join("\n"),
    labReport: reports.labReport,
    labReportMarkdown: reports.labReportMarkdown,
    transcript: [],
    outputTail: tail(ending.serverOutput, 20),
    kind: "browser",
    steps: log.steps,
    ...(reports.afterRefresh ? { afterRefresh: reports.afterRefresh } : {}),
    screenshots: log.screenshots,
    daemon: [
      ...log.cleanup,
      log.blocked.length === 0
        ? "no page request left 127.0.0.1"
        : `${log.blocked.length} page request(s) not to 127.0.0.1 aborted (${
          hosts.join(", ")
        })`,
    ].join("; "),
  };
}

/** What driving the browser needs from the run. */
interface BrowserDrive {
  step: ReturnType<typeof stepRecorder>;
  log: BrowserRunLog;
  lab: RunningLab;
  address: UiAddress;
  options: BrowserRunOptions;
  /** Where the screenshot of a moment goes. */
  shotPath(moment: string): string;
  /** Told the browser's PID as soon as it runs, so the run can end it. */
  onBrowser(pid: number): void;
}

/**
 * Launches headless Chromium, clicks through the UI up to past the lab's
 * update, takes the lab's report (the row's level), then clicks Refresh and
 * takes it again.
 */
async function driveBrowser(drive: BrowserDrive): Promise<BrowserReports> {
  return await withPage(
    drive.options,
    drive.log,
    drive.onBrowser,
    (page) => clickThrough(drive, inspectorUi(page, drive)),
  );
}

/**
 * Runs `use` on a fresh page of a headless Chromium (`CHROMIUM_PATH`) that
 * aborts, and logs, every request not to 127.0.0.1; closes the browser
 * after. The browser's PID goes to `onBrowser` as soon as it runs, so the
 * run can end it whatever happens here.
 */
export async function withPage<Result>(
  options: Pick<BrowserRunOptions, "executablePath" | "timeoutSeconds">,
  log: Pick<BrowserRunLog, "blocked">,
  onBrowser: (pid: number) => void,
  use: (page: Page) => Promise<Result>,
): Promise<Result> {
  // Loaded only now: importing it reads the home folder (it looks for
  // installed browsers), which the tests of this module's helpers may not.
  const { chromium } = await import("npm:playwright-core@1.65.1");
  const browserServer = await chromium.launchServer({
    executablePath: options.executablePath ?? CHROMIUM_PATH,
    headless: true,
    host: "127.0.0.1",
    timeout: options.timeoutSeconds * 1000,
  });
  const pid = browserServer.process().pid;
  if (pid !== undefined) onBrowser(pid);
  const browser = await chromium.connect(browserServer.wsEndpoint(), {
    timeout: options.timeoutSeconds * 1000,
  });
  try {
    const page = await browser.newPage({
      viewport: { width: 1400, height: 900 },
    });
    page.setDefaultTimeout(Math.min(options.timeoutSeconds, 20) * 1000);
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (allowedRequest(url)) return route.continue();
      log.blocked.push(url);
      return route.abort();
    });
    return await use(page);
  } finally {
    await browser.close().catch(() => {});
    await browserServer.close().catch(() => {});
  }
}

/** The Inspector's UI in a page: its parts, and a screenshot at a moment. */
function inspectorUi(page: Page, drive: BrowserDrive) {
  const main = page.getByRole("main");
  // The resource preview: the pane with the Resource heading and its
  // Refresh button (the subscriptions list has buttons of its own).
  const preview = main.locator("div")
    .filter({
      has: page.getByRole("heading", { name: "Resource", exact: true }),
    })
    .filter({
      has: page.getByRole("button", { name: "Refresh", exact: true }),
    })
    .last();
  return {
    page,
    main,
    preview,
    /** What the preview shows of the resource, on one line. */
    async shown() {
      const text = await preview.getByText(/status:[\s\S]*version:/).first()
        .innerText();
      return `the preview shows: ${text.replaceAll(/\s+/g, " ").trim()}`;
    },
    async shot(caption: string, moment: string) {
      const path = drive.shotPath(moment);
      await page.screenshot({ path });
      drive.log.screenshots.push({ caption, path });
    },
  };
}

type InspectorUi = ReturnType<typeof inspectorUi>;

/**
 * The page actions in order, each stopping the run when it fails, then the
 * lab's report (the row: what the UI did by itself), then the user's
 * Refresh click and the lab's report after it.
 */
async function clickThrough(
  drive: BrowserDrive,
  ui: InspectorUi,
): Promise<BrowserReports> {
  let ok = true;
  for (const [description, action] of actionsUntilUpdate(drive, ui)) {
    if (!ok) break;
    ok = await drive.step(description, action);
  }
  await sleep(300);
  const reports: BrowserReports = await labReports(drive.lab);
  if (!ok) return reports;
  await drive.step(
    "click Refresh in the preview (a user's re-read)",
    async () => {
      await ui.preview.getByRole("button", { name: "Refresh", exact: true })
        .click();
      await ui.preview.getByText(/version: [2-9]/).waitFor();
      await ui.shot("after the user's Refresh click", "after-refresh");
      return await ui.shown();
    },
  );
  await sleep(300);
  const labClient = mainLabClient((await drive.lab.report()).clients);
  reports.afterRefresh = {
    labLevel: labClient?.level ?? 0,
    rereadAfterNotification: labClient?.steps.rereadAfterNotification ?? false,
    labReportMarkdown: await drive.lab.reportMarkdown(),
  };
  return reports;
}

/**
 * What a user does up to past the lab's update: open the UI, connect the
 * lab's server card, open the resource, Subscribe, wait.
 */
function actionsUntilUpdate(
  drive: BrowserDrive,
  ui: InspectorUi,
): [string, StepAction][] {
  const { main, preview } = ui;
  const { address, options } = drive;
  const waitSeconds = options.delaySeconds + (options.marginSeconds ?? 3);
  return [
    ["open the UI with its token", async () => {
      await ui.page.goto(
        `http://127.0.0.1:${address.clientPort}/?MCP_INSPECTOR_API_TOKEN=${address.token}`,
      );
      await main.getByRole("switch", { name: /^Connect or disconnect/ })
        .waitFor();
    }],
    ["switch the lab's server card to connected", () => connectCard(ui)],
    ["open the Resources screen", async () => {
      await ui.page.getByRole("banner").getByText("Resources", { exact: true })
        .click();
    }],
    [`open ${REVIEW_URI} (${REVIEW_TITLE})`, async () => {
      await main.getByRole("region", { name: /^URIs/ }).getByText(REVIEW_TITLE)
        .click();
      await preview.getByText(REVIEW_URI).waitFor();
      return await ui.shown();
    }],
    ["click Subscribe in the preview", async () => {
      await preview.getByRole("button", { name: "Subscribe", exact: true })
        .click();
      await preview.getByRole("button", { name: "Unsubscribe", exact: true })
        .waitFor();
      await ui.shot("after Subscribe, before the lab's update", "before");
      return await ui.shown();
    }],
    [`wait ${waitSeconds} s, past the lab's update`, async () => {
      await sleep(waitSeconds * 1000);
      await ui.shot("past the lab's update, before any click", "after-update");
      return await ui.shown();
    }],
  ];
}

/** Switches the lab's server card on; says the protocol the UI shows. */
async function connectCard({ page, main }: InspectorUi): Promise<string> {
  // The switch's own track covers the input, so check it by force; a click
  // that lands before the page reacts to it is tried again.
  const toggle = main.getByRole("switch", { name: /^Connect or disconnect/ });
  for (let attempt = 1;; attempt++) {
    try {
      await toggle.check({ force: true, timeout: 5000 });
      break;
    } catch (error) {
      if (attempt === 3) throw error;
      await page.waitForTimeout(500);
    }
  }
  await main.getByText("Connected", { exact: true }).waitFor();
  return (await main.getByText(/^MCP \d/).first().innerText()).trim();
}
