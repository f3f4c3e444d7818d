/**
 * Starts the lab (`main.ts`) as a subprocess on a free loopback port and
 * fetches its reports. The lab's own output goes to a log file for evidence.
 *
 * @module
 */

import type { LabReport, UpdateTrigger } from "../main.ts";

export interface LabOptions {
  /** Path to the lab's `main.ts`. */
  mainPath: string;
  trigger: UpdateTrigger;
  delaySeconds: number;
  enableTool: boolean;
  logPath: string;
}

export interface RunningLab {
  url: string;
  origin: string;
  report(): Promise<LabReport>;
  reportMarkdown(): Promise<string>;
  stop(): Promise<void>;
}

const LISTENING = /^listening on (http:\/\/127\.0\.0\.1:(\d+))\/mcp$/m;

/** Starts the lab and resolves once it prints its listening line. */
export async function startLab(options: LabOptions): Promise<RunningLab> {
  const log = await Deno.open(options.logPath, {
    write: true,
    create: true,
    truncate: true,
  });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", options.mainPath],
    env: {
      MCP_TEST_PORT: "0",
      MCP_TEST_HOST: "127.0.0.1",
      MCP_TEST_UPDATE_DELAY_SECONDS: String(options.delaySeconds),
      MCP_TEST_UPDATE_TRIGGER: options.trigger,
      MCP_TEST_ENABLE_TOOL: String(options.enableTool),
      MCP_TEST_LOG_LEVEL: "debug",
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let seen = "";
  let origin: string | undefined;
  const listening = Promise.withResolvers<string>();
  // Copy both streams to the log; watch stdout for the listening line.
  const copy = async (stream: ReadableStream<Uint8Array>, watch: boolean) => {
    for await (const chunk of stream) {
      await log.write(chunk);
      if (watch && origin === undefined) {
        seen += decoder.decode(chunk, { stream: true });
        const match = seen.match(LISTENING);
        if (match) {
          origin = match[1];
          listening.resolve(origin);
        }
      }
    }
  };
  const copying = Promise.all([
    copy(child.stdout, true),
    copy(child.stderr, false),
  ]);
  const timeout = setTimeout(
    () => listening.reject(new Error("the lab did not start within 60 s")),
    60_000,
  );
  child.status.then((status) =>
    listening.reject(new Error(`the lab exited early (${status.code})`))
  );
  let labOrigin: string;
  try {
    labOrigin = await listening.promise;
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await copying.catch(() => {});
    log.close();
    throw error;
  } finally {
    clearTimeout(timeout);
  }
  const fetchText = async (path: string) => {
    const response = await fetch(`${labOrigin}${path}`);
    return await response.text();
  };
  return {
    url: `${labOrigin}/mcp`,
    origin: labOrigin,
    async report() {
      return JSON.parse(await fetchText("/report")) as LabReport;
    },
    reportMarkdown: () => fetchText("/report.md"),
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      const forced = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {
          // Already gone.
        }
      }, 5_000);
      await child.status;
      clearTimeout(forced);
      await copying.catch(() => {});
      log.close();
    },
  };
}
