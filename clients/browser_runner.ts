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

import type { BrowserClientDefinition, ModeId } from "./catalog.ts";
import { type LabReport, REVIEW_URI } from "../main.ts";
import { freePort, startRunLab } from "./lab.ts";
import { mainLabClient } from "./matrix.ts";
import {
  alive,
  freshRunDir,
  isolatedEnv,
  signalGroup,
  sleep,
  tail,
} from "./process.ts";
import {
  type BaseRunOptions,
  type CommandStepRecord,
  notStarted,
  type Outcome,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./run_record.ts";

/** Debian's Chromium, the only browser the harness drives. */
export const CHROMIUM_PATH = "/usr/bin/chromium";
/** What installs it (run by `deno task clients --install-browser`, as root). */
export const INSTALL_BROWSER_COMMAND =
  "apt-get update && apt-get install -y chromium";

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

/** Ends a process (and its group) by PID: SIGTERM, then SIGKILL. */
export async function endByPid(pid: number, graceMs = 3000): Promise<string> {
  if (!await alive(pid)) return `PID ${pid} had exited`;
  signalGroup(pid, "SIGTERM");
  for (let waited = 0; waited < graceMs; waited += 100) {
    await sleep(100);
    if (!await alive(pid)) return `PID ${pid} ended with SIGTERM`;
  }
  signalGroup(pid, "SIGKILL");
  await sleep(500);
  return await alive(pid)
    ? `PID ${pid} is still running after SIGKILL`
    : `PID ${pid} ended with SIGKILL`;
}

/** Waits until the web server answers on its port, or the bound passes. */
async function waitForServer(
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

/** The PNG file of one screenshot, as the evidence folder names it. */
export function screenshotName(
  client: Pick<BrowserClientDefinition, "id" | "version">,
  mode: ModeId,
  trigger: Trigger,
  moment: string,
): string {
  return `${client.id}-${client.version}-${mode}-${trigger}-${moment}.png`;
}

export async function runBrowserClient(
  client: BrowserClientDefinition,
  mode: ModeId,
  trigger: Trigger,
  options: BrowserRunOptions,
): Promise<RunRecord> {
  const started = performance.now();
  const secondsSinceStart = () => (performance.now() - started) / 1000;
  const base = runHeader(client, mode, trigger, {
    delaySeconds: options.delaySeconds,
  });
  const shotsDir = `${options.runDir}/screenshots`;
  const { home, tmpDir } = await freshRunDir(options.runDir, [shotsDir]);
  const lab = await startRunLab(options, trigger);
  if ("failed" in lab) {
    return {
      ...notStarted(base, "lab-failed", lab.failed, secondsSinceStart()),
      kind: "browser",
    };
  }
  const clientPort = freePort();
  let sandboxPort = freePort();
  while (sandboxPort === clientPort) sandboxPort = freePort();
  const token = crypto.randomUUID().replaceAll("-", "");
  const serveArgs = client.serveArgs({ labUrl: lab.url, mode });
  const steps: CommandStepRecord[] = [];
  const screenshots: { caption: string; path: string }[] = [];
  const blocked: string[] = [];
  let outcome: Outcome = "completed";
  let detail: string | undefined;
  let labReport: LabReport | null = null;
  let labReportMarkdown: string | null = null;
  let afterRefresh: RunRecord["afterRefresh"];
  const cleanup: string[] = [];
  const serverLog = await Deno.open(`${options.runDir}/server.log`, {
    write: true,
    create: true,
    truncate: true,
  });
  let serverOutput = "";
  let server: Deno.ChildProcess | undefined;
  let serverExited = false;
  let browserPid: number | undefined;
  // The step's record: what it did, how it ended, what the page showed.
  const step = async (
    description: string,
    action: () => Promise<string | void>,
  ): Promise<boolean> => {
    const startedAt = secondsSinceStart();
    let result: string | void = "";
    let failure: string | undefined;
    let stepOutcome: Outcome = "completed";
    try {
      result = await action();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      stepOutcome = /timeout|timed out/i.test(message)
        ? "timeout"
        : "exit-nonzero";
      failure = message.split("\n")[0].slice(0, 200);
    }
    steps.push({
      startedAt: Math.round(startedAt * 10) / 10,
      command: description,
      outcome: stepOutcome,
      exitCode: null,
      detail: failure,
      durationSeconds: Math.round((secondsSinceStart() - startedAt) * 10) / 10,
      outputTail: (result ?? "").replaceAll(lab.url, "$LAB_URL"),
    });
    if (failure !== undefined && outcome === "completed") {
      outcome = stepOutcome;
      detail = `${description}: ${failure}`;
    }
    return failure === undefined;
  };
  try {
    // The web server, in its own process group, ended by its PID below.
    const spawned = await step(
      `serve the web UI: mcp-inspector ${
        serveArgs.join(" ").replaceAll(lab.url, "$LAB_URL")
      }`,
      async () => {
        server = new Deno.Command("setsid", {
          args: [options.binPath, ...serveArgs],
          cwd: home,
          clearEnv: true,
          env: {
            ...isolatedEnv(home, tmpDir),
            ...client.env,
            HOST: "127.0.0.1",
            CLIENT_PORT: String(clientPort),
            MCP_SANDBOX_PORT: String(sandboxPort),
            MCP_INSPECTOR_API_TOKEN: token,
          },
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        server.status.then(() => serverExited = true);
        for (const stream of [server.stdout, server.stderr]) {
          (async () => {
            for await (const chunk of stream) {
              serverOutput += new TextDecoder().decode(chunk);
              await serverLog.write(chunk);
            }
          })().catch(() => {});
        }
        const problem = await waitForServer(
          `http://127.0.0.1:${clientPort}/`,
          options.timeoutSeconds,
          () => serverExited,
        );
        if (problem) {
          throw new Error(`${problem}: ${tail(serverOutput, 3)}`);
        }
        return `listening on 127.0.0.1 (CLIENT_PORT, MCP_SANDBOX_PORT: free ports)`;
      },
    );
    if (!spawned) throw new Error("no web server");
    // Loaded only now: importing it reads the home folder (it looks for
    // installed browsers), which the tests of this module's helpers may not.
    const { chromium } = await import("npm:playwright-core@1.65.1");
    const browserServer = await chromium.launchServer({
      executablePath: options.executablePath ?? CHROMIUM_PATH,
      headless: true,
      host: "127.0.0.1",
      timeout: options.timeoutSeconds * 1000,
    });
    browserPid = browserServer.process().pid;
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
        blocked.push(url);
        return route.abort();
      });
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
      const shown = async () => {
        const text = await preview.getByText(/status:[\s\S]*version:/).first()
          .innerText();
        return `the preview shows: ${text.replaceAll(/\s+/g, " ").trim()}`;
      };
      const shot = async (caption: string, moment: string) => {
        const path = `${shotsDir}/${
          screenshotName(client, mode, trigger, moment)
        }`;
        await page.screenshot({ path });
        screenshots.push({ caption, path });
      };
      const plan: [string, () => Promise<string | void>][] = [
        ["open the UI with its token", async () => {
          await page.goto(
            `http://127.0.0.1:${clientPort}/?MCP_INSPECTOR_API_TOKEN=${token}`,
          );
          await main.getByRole("switch", { name: /^Connect or disconnect/ })
            .waitFor();
        }],
        ["switch the lab's server card to connected", async () => {
          // The switch's own track covers the input, so check it by force;
          // a click that lands before the page reacts to it is tried again.
          const toggle = main.getByRole("switch", {
            name: /^Connect or disconnect/,
          });
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
          return (await main.getByText(/^MCP \d/).first().innerText())
            .trim();
        }],
        ["open the Resources screen", async () => {
          await page.getByRole("banner").getByText("Resources", {
            exact: true,
          }).click();
        }],
        [`open ${REVIEW_URI} (${REVIEW_TITLE})`, async () => {
          await main.getByRole("region", { name: /^URIs/ }).getByText(
            REVIEW_TITLE,
          )
            .click();
          await preview.getByText(REVIEW_URI).waitFor();
          return await shown();
        }],
        ["click Subscribe in the preview", async () => {
          await preview.getByRole("button", { name: "Subscribe", exact: true })
            .click();
          await preview.getByRole("button", {
            name: "Unsubscribe",
            exact: true,
          }).waitFor();
          await shot("after Subscribe, before the lab's update", "before");
          return await shown();
        }],
        [
          `wait ${
            options.delaySeconds + (options.marginSeconds ?? 3)
          } s, past the lab's update`,
          async () => {
            await sleep(
              (options.delaySeconds + (options.marginSeconds ?? 3)) * 1000,
            );
            await shot(
              "past the lab's update, before any click",
              "after-update",
            );
            return await shown();
          },
        ],
      ];
      let ok = true;
      for (const [description, action] of plan) {
        if (!ok) break;
        ok = await step(description, action);
      }
      // The lab's record of what the UI did by itself.
      await sleep(300);
      labReport = await lab.report();
      labReportMarkdown = await lab.reportMarkdown();
      if (ok) {
        ok = await step(
          "click Refresh in the preview (a user's re-read)",
          async () => {
            await preview.getByRole("button", { name: "Refresh", exact: true })
              .click();
            await preview.getByText(/version: [2-9]/).waitFor();
            await shot("after the user's Refresh click", "after-refresh");
            return await shown();
          },
        );
        await sleep(300);
        const report = await lab.report();
        const labClient = mainLabClient(report.clients);
        afterRefresh = {
          labLevel: labClient?.level ?? 0,
          rereadAfterNotification: labClient?.steps.rereadAfterNotification ??
            false,
          labReportMarkdown: await lab.reportMarkdown(),
        };
      }
    } finally {
      await browser.close().catch(() => {});
      await browserServer.close().catch(() => {});
    }
  } catch (error) {
    if (outcome === "completed") {
      outcome = "spawn-failed";
      detail = String(error).split("\n")[0].slice(0, 200);
    }
  } finally {
    if (browserPid !== undefined) {
      cleanup.push(`browser ${await endByPid(browserPid)}`);
    }
    if (server !== undefined) {
      const pid = (server as Deno.ChildProcess).pid;
      cleanup.push(`web server ${await endByPid(pid)}`);
      await Promise.race([
        (server as Deno.ChildProcess).status,
        sleep(2000),
      ]);
    }
    serverLog.close();
    if (labReport === null) {
      try {
        labReport = await lab.report();
        labReportMarkdown = await lab.reportMarkdown();
      } catch {
        // Reported as no lab report below.
      }
    }
    await lab.stop();
  }
  if (!options.keepHome) {
    for (const dir of [home, tmpDir]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  return {
    ...base,
    durationSeconds: Math.round(secondsSinceStart()),
    outcome,
    exitCode: null,
    ...(detail ? { detail } : {}),
    command: steps.map((step) => step.command).join("\n"),
    labReport,
    labReportMarkdown,
    transcript: [],
    outputTail: tail(serverOutput, 20),
    kind: "browser",
    steps,
    ...(afterRefresh ? { afterRefresh } : {}),
    screenshots,
    daemon: [
      ...cleanup,
      blocked.length === 0
        ? "no page request left 127.0.0.1"
        : `${blocked.length} page request(s) not to 127.0.0.1 aborted (${
          [...new Set(blocked.map((url) => new URL(url).host))].join(", ")
        })`,
    ].join("; "),
  };
}
