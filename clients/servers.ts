/**
 * `deno task servers`: runs the probe (`probe.ts`) against every server
 * in the servers table — the lab in each era, over HTTP and stdio, and the
 * reference "everything" server from npm over HTTP and stdio — and rewrites
 * `results/servers.md`, with each run's Markdown report in
 * `results/servers/`.
 *
 * `--help` prints the options (`SERVERS_USAGE`); a bad flag or value is
 * one line on stderr, `servers error: …`, and exit status 2.
 *
 * @module
 */

import { resolve } from "node:path";
import { parseFlags } from "../main.ts";
import type { ProbeResult } from "../probe.ts";
import { folderFlag, optionsOrExit } from "./command_line.ts";
import { defaultCacheDir, installClient } from "./install.ts";
import { freePort, spawnLab } from "./lab.ts";
import { bypassProxyForLoopback, formatFiles } from "./process.ts";

/** The reference server, pinned: it supports subscriptions. */
export const EVERYTHING = {
  id: "server-everything",
  npmPackage: "@modelcontextprotocol/server-everything",
  version: "2026.8.31",
  bin: "mcp-server-everything",
} as const;

/**
 * A listed document of the everything server. Its updates start from its
 * `toggle-subscriber-updates` tool; its text never changes.
 */
export const EVERYTHING_URI = "demo://resource/static/document/features.md";

/** Installs the everything server once; resolves with its entry script. */
export async function installEverything(cacheDir = defaultCacheDir()) {
  const installed = await installClient(EVERYTHING, cacheDir);
  if (!installed.ok) {
    throw new Error(
      `cannot install ${EVERYTHING.npmPackage}: ${installed.reason}`,
    );
  }
  return `${installed.prefix}/node_modules/${EVERYTHING.npmPackage}/dist/index.js`;
}

/** Starts the everything server over Streamable HTTP; stop() ends it. */
export async function startEverythingHttp(entry: string) {
  const port = freePort();
  const child = new Deno.Command("node", {
    args: [entry, "streamableHttp"],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const deadline = Date.now() + 30_000;
  while (!seen.includes(`listening on port ${port}`)) {
    const { done, value } = await lines.read();
    if (done || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`the everything server did not start: ${seen}`);
    }
    seen += value;
  }
  // Keep reading so the server never blocks on a full pipe.
  const draining = (async () => {
    while (!(await lines.read()).done) { /* its log is not evidence here */ }
  })();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
      await child.status;
      await draining.catch(() => {});
    },
  };
}

/**
 * Runs `probe.ts --json [--report FILE] ARGS` (ARGS may end with
 * `--stdio -- COMMAND`); resolves with its JSON result.
 */
export async function runProbe(
  probePath: string,
  args: string[],
  report?: string,
): Promise<ProbeResult> {
  const reportFlag = report ? ["--report", report] : [];
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", probePath, "--json", ...reportFlag, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  try {
    return JSON.parse(text) as ProbeResult;
  } catch {
    throw new Error(
      `probe ${args.join(" ")} printed no result (exit ${output.code}): ${
        new TextDecoder().decode(output.stderr).slice(-500)
      }`,
    );
  }
}

/** One row of the servers table. */
interface ServerRow {
  label: string;
  slug: string;
  result: ProbeResult;
}

/** `results/servers.md`: one row per server, transport and era. */
export function serversMarkdown(
  rows: ServerRow[],
  generatedAt: string,
): string {
  const cell = (text: string) =>
    text.replaceAll("|", "\\|").replaceAll("\n", " ");
  return [
    "# Servers: does each deliver resource updates?",
    "",
    "Each row is one run of `probe.ts` (the probe's levels: 1 connected, 2",
    "advertises `resources.subscribe`, 3 read the resource, 4 subscription",
    "accepted, 5 notification received, 6 re-read shows the change, 7 stops",
    "cleanly). Regenerate with `deno task servers`; each report holds the",
    `sequence of what happened. Generated ${generatedAt}.`,
    "",
    "| Server | Version | Transport | Era (protocol) | Level | First missing step | Exit | Report |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(({ label, slug, result }) =>
      `| ${
        [
          cell(label),
          cell(result.server?.version ?? "unknown"),
          result.transport,
          result.era ? `${result.era} (${result.protocolVersion})` : "none",
          String(result.level),
          cell(result.missing),
          `${result.exitStatus}${
            result.errorCode ? ` (${result.errorCode})` : ""
          }`,
          `[report](servers/${slug}.md)`,
        ].join(" | ")
      } |`
    ),
    "",
  ].join("\n");
}

export const SERVERS_USAGE = `Usage: deno task servers [options]

Runs the probe (probe.ts) against the lab in each era, over HTTP and stdio,
and against the reference everything server, and rewrites
results/servers.md with each run's report in results/servers/.

Options:
  --results-dir DIR  where to write (default: the repository's results/)
  --cache-dir DIR    where the everything server is installed (default: see
                     install.ts)
  --help             print this help

Exit status: 0 done, 2 a bad flag or value.`;

export interface ServersOptions {
  resultsDir: string;
  cacheDir: string;
}

const repoRoot = resolve(new URL("..", import.meta.url).pathname);

/** Reads `deno task servers` flags; throws a `ConfigError` naming what is wrong. */
export function parseServersArgs(args: string[]): ServersOptions | "help" {
  const { values } = parseFlags(args, {
    help: { type: "boolean", short: "h" },
    "results-dir": { type: "string", default: `${repoRoot}/results` },
    "cache-dir": { type: "string", default: defaultCacheDir() },
  });
  if (values.help) return "help";
  return {
    resultsDir: folderFlag("results-dir", values["results-dir"]),
    cacheDir: folderFlag("cache-dir", values["cache-dir"]),
  };
}

/** The servers table's runs: label, report name, and the probe's arguments. */
function serverRuns(
  labUrl: string,
  everything: { url: string; entry: string },
): [string, string, string[]][] {
  const everythingArgs = [
    "--uri",
    EVERYTHING_URI,
    "--call",
    "toggle-subscriber-updates",
  ];
  const labStdio = [
    Deno.execPath(),
    "run",
    "-A",
    `${repoRoot}/main.ts`,
    "--stdio",
    "--delay",
    "1",
  ];
  return [
    ["the lab", "lab-http-2025", ["--url", labUrl, "--era", "2025"]],
    ["the lab", "lab-http-2026-07-28", [
      "--url",
      labUrl,
      "--era",
      "2026-07-28",
    ]],
    ["the lab", "lab-stdio-2025", [
      "--era",
      "2025",
      "--stdio",
      "--",
      ...labStdio,
    ]],
    ["the lab", "lab-stdio-2026-07-28", [
      "--era",
      "2026-07-28",
      "--stdio",
      "--",
      ...labStdio,
    ]],
    ["everything", "everything-http", [
      "--url",
      everything.url,
      ...everythingArgs,
    ]],
    ["everything", "everything-stdio", [
      ...everythingArgs,
      "--stdio",
      "--",
      "node",
      everything.entry,
      "stdio",
    ]],
  ];
}

/** Probes every server of the table, each report in `results/servers/`. */
async function probeServers(options: ServersOptions): Promise<ServerRow[]> {
  const entry = await installEverything(options.cacheDir);
  const lab = await spawnLab({
    mainPath: `${repoRoot}/main.ts`,
    env: { MCP_TEST_UPDATE_DELAY_SECONDS: "1", MCP_TEST_LOG_LEVEL: "warn" },
  });
  const everything = await startEverythingHttp(entry);
  const rows: ServerRow[] = [];
  try {
    const runs = serverRuns(lab.url, { url: everything.url, entry });
    for (const [label, slug, args] of runs) {
      const report = `${options.resultsDir}/servers/${slug}.md`;
      const result = await runProbe(`${repoRoot}/probe.ts`, args, report);
      rows.push({ label: result.server?.name ?? label, slug, result });
      console.log(
        `${slug}: level ${result.level}, exit ${result.exitStatus}${
          result.errorCode ? ` (${result.errorCode})` : ""
        }`,
      );
    }
  } finally {
    await everything.stop();
    await lab.stop();
  }
  return rows;
}

/** `deno task servers`: probes, writes `results/servers.md`; the exit status. */
export async function main(args: string[]): Promise<number> {
  const options = optionsOrExit(
    args,
    parseServersArgs,
    SERVERS_USAGE,
    "servers",
  );
  if ("exitStatus" in options) return options.exitStatus;
  // The probe reaches every server of the table on loopback.
  bypassProxyForLoopback();
  const resultsDir = options.resultsDir;
  await Deno.mkdir(`${resultsDir}/servers`, { recursive: true });
  const rows = await probeServers(options);
  await Deno.writeTextFile(
    `${resultsDir}/servers.md`,
    serversMarkdown(rows, new Date().toISOString()),
  );
  await formatFiles(resultsDir, [
    `${resultsDir}/servers.md`,
    ...rows.map(({ slug }) => `${resultsDir}/servers/${slug}.md`),
  ]);
  console.log(`wrote ${resultsDir}/servers.md (${rows.length} rows)`);
  return 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
