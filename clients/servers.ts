/**
 * `deno task servers`: runs the probe (`probe.ts`) against every server and
 * proxy of `catalog/servers_and_proxies.ts`, each installed at its pinned
 * version from npm (a Python program: its pinned requirements from PyPI)
 * into the harness's cache, over every transport and era it serves, and
 * rewrites `results/servers.md` (two tables, servers and proxies) with each
 * run's Markdown report in `results/servers/`.
 *
 * `--help` prints the options (`SERVERS_USAGE`); a bad flag or value is
 * one line on stderr, `servers error: …`, and exit status 2.
 *
 * @module
 */

import { resolve } from "node:path";
import { z } from "npm:zod@4.6.7";
import {
  cell,
  ConfigError,
  LAB_VERSION,
  markdownText,
  parseFlags,
} from "../main.ts";
import { type ProbeResult, serverFactsSummary } from "../probe.ts";
import {
  failureLine,
  folderFlag,
  optionsOrExit,
  shown,
} from "./support/command_line.ts";
import {
  changesSection,
  type ComparedRow,
  compareFiles,
  compareRows,
  fileLabel,
  readJson,
  reportChanges,
  tableFile,
} from "./watch/compare.ts";
import { defaultCacheDir, exists, installClient } from "./support/install.ts";
import { installPythonEnvironment } from "./support/install_python.ts";
import { buildOnce } from "./support/build_once.ts";
import {
  atNewest,
  fixtureLookups,
  lockedPinsOf,
  newestLocked,
  PIN_FILES,
  pinMoves,
  REGISTRY_LOOKUPS,
  writePins,
} from "./watch/latest.ts";
import { freePort } from "./support/run_lab.ts";
import { bypassProxyForLoopback, spawnLab } from "../launch.ts";
import {
  endGroupByPid,
  formatFiles,
  printableLine,
  sleep,
  spawnInGroup,
  tail,
} from "./support/process.ts";
import {
  CHROMIUM_PATH,
  LAB_CATALOG_CHANGE,
  type PypiServer,
  type RowContext,
  type RowTarget,
  SERVER_CATALOG,
  type ServerDefinition,
  type ServerRowDefinition,
  type ServerTable,
} from "./catalog/servers_and_proxies.ts";

const repoRoot = resolve(new URL("..", import.meta.url).pathname);
const PROBE_PATH = `${repoRoot}/probe.ts`;

/** The longest one probe run may take, whatever its server does. */
const ROW_TIMEOUT_MS = 120_000;

/** How long an HTTP server may take to listen on its port. */
const LISTEN_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

export const SERVERS_USAGE = `Usage: deno task servers [options]

Probes every server and proxy of clients/catalog/servers_and_proxies.ts
(the lab, alone and as replicas, the reference servers, a filesystem
server, the puppeteer server, board servers on the Python, Go and Rust
SDKs, FastRMCP's, mcp-proxy, supergateway and mcp-remote in front of the
lab), each
installed from npm at its pinned version (the Python program: a virtual
environment of its pinned requirements from PyPI; the Go and Rust
programs: built once with their go.sum or Cargo.lock), over every
transport and era it serves, and where its catalog changes, whether the
change reaches a client; rewrites results/servers.md with each run's
report in results/servers/.

Options:
  --only NAMES       a comma-separated list of ids (lab, lab-replicas,
                     everything, memory, filesystem, puppeteer, python-sdk,
                     go-sdk-server, rmcp-server, fastrmcp-server, mcp-proxy,
                     mcp-proxy-python, supergateway, mcp-remote) or row names
                     (mcp-proxy-2025); the table then holds those rows alone
  --check            exit 1 unless every row ran and reached the level, exit
                     status and catalog the committed results/servers.md
                     records
  --results-dir DIR  where to write (default: the repository's results/)
  --cache-dir DIR    where packages are installed (default: see install.ts)
  --latest           instead of the pins, each package at its newest version
                     on npm (a runtime it pins: the newest of that major
                     version; a pin behind a lock file, PyPI's or Go's: its
                     registry's newest reported, run at the pin); the run
                     goes to CACHE/latest-servers/, and
                     its rows are compared with RESULTS/servers.json: the
                     changes are printed and written to RESULTS/changes.md
  --write            with --latest: also merge the new rows into RESULTS and
                     move the pins in clients/catalog/ (Node's in
                     clients/support/install.ts), except for a package
                     whose newest version did not install or start (its
                     pin stays)
  --versions FILE    with --latest: the newest versions from FILE (a JSON
                     object of npm package names and versions, another
                     registry's as pypi:NAME, go:MODULE), not the registries
  --compare [OLD] [NEW]
                     only compare two servers.json files and write
                     RESULTS/changes.md; one file is NEW; an omitted file,
                     or -, is RESULTS/servers.json
  --rewrite          probe nothing: write RESULTS/servers.md anew from
                     RESULTS/servers.json, which stays as it was
  --help             print this help

Exit status: 0 done (--latest, --compare: no level or outcome changed), 1 a
--check failed (--latest: the run itself failed), 2 a bad flag or value, 3
(--latest, --compare) a level or an outcome changed.`;

export interface ServersOptions {
  resultsDir: string;
  cacheDir: string;
  /** Ids or row names; empty for every row. */
  only: string[];
  check: boolean;
  /** `--latest`: each package at its newest version, compared. */
  latest: boolean;
  /** `--write`: a `--latest` run's rows and pins accepted. */
  write: boolean;
  /** `--versions`: the newest versions from this file, not npm. */
  versionsFile?: string;
  /** `--compare`: the servers.json files to compare (none, one or two). */
  compare?: string[];
  /** `--rewrite`: `servers.md` from `servers.json`, nothing probed. */
  rewrite: boolean;
}

/** Every row name and server id `--only` takes. */
function knownNames(): Set<string> {
  return new Set(
    SERVER_CATALOG.flatMap((server) => [
      server.id,
      ...server.rows.map((row) => row.slug),
    ]),
  );
}

/** Reads `deno task servers` flags; throws a `ConfigError` naming what is wrong. */
export function parseServersArgs(args: string[]): ServersOptions | "help" {
  const { values, positionals } = parseFlags(args, {
    help: { type: "boolean", short: "h" },
    only: { type: "string" },
    check: { type: "boolean", default: false },
    "results-dir": { type: "string", default: `${repoRoot}/results` },
    "cache-dir": { type: "string", default: defaultCacheDir() },
    latest: { type: "boolean", default: false },
    write: { type: "boolean", default: false },
    versions: { type: "string" },
    compare: { type: "boolean", default: false },
    rewrite: { type: "boolean", default: false },
    // Only --compare takes files.
  }, { allowPositionals: args.includes("--compare") });
  if (values.help) return "help";
  const { latest, compare } = values;
  if (
    values.rewrite &&
    (latest || compare || values.check || values.only !== undefined)
  ) {
    throw new ConfigError(
      "--rewrite probes nothing: it goes with --results-dir alone",
    );
  }
  if (latest && compare) {
    throw new ConfigError(
      "--latest runs and compares; --compare only compares: pick one",
    );
  }
  if (!latest && (values.write || values.versions !== undefined)) {
    throw new ConfigError(
      `--${values.write ? "write" : "versions"} goes with --latest`,
    );
  }
  if (positionals.length > 2) {
    throw new ConfigError("--compare takes at most two files, OLD and NEW");
  }
  const only = values.only === undefined
    ? []
    : values.only.split(",").map((name) => name.trim());
  const known = knownNames();
  for (const name of only) {
    if (!known.has(name)) {
      throw new ConfigError(
        `--only: no server or row named "${shown(name)}" (see --help)`,
      );
    }
  }
  return {
    resultsDir: folderFlag("results-dir", values["results-dir"]),
    cacheDir: folderFlag("cache-dir", values["cache-dir"]),
    only,
    check: values.check,
    latest,
    write: values.write,
    versionsFile: values.versions,
    compare: compare ? positionals : undefined,
    rewrite: values.rewrite,
  };
}

/** The catalog's rows `--only` selects, with their server. */
export function selectedRows(only: string[], catalog = SERVER_CATALOG) {
  return catalog.flatMap((server) =>
    server.rows.filter((row) =>
      only.length === 0 || only.includes(server.id) || only.includes(row.slug)
    ).map((row) => ({ server, row }))
  );
}

// ---------------------------------------------------------------------------
// One row: install, start, probe, stop
// ---------------------------------------------------------------------------

/** What a row keeps of the probe's result: what the tables show. */
export type ServerResult = Pick<
  ProbeResult,
  | "level"
  | "missing"
  | "exitStatus"
  | "errorCode"
  | "protocolVersion"
  | "unsolicited"
  | "uri"
  | "catalog"
  | "changeVia"
  | "watchGate"
  | "serverFacts"
>;

/** One row of a table: what the probe found, or why it could not run. */
export interface ServerRow {
  table: ServerTable;
  slug: string;
  name: string;
  version: string;
  transport: "streamable-http" | "stdio";
  era: string;
  mode?: string;
  behind?: string;
  result?: ServerResult;
  /** Why the row could not run (install failure, no Chromium…). */
  reason?: string;
  seconds: number;
}

/**
 * A server's package installed (or why not): its bin and its Node, or a
 * Python program and its environment's Python.
 */
type Installed = { bin: string; node: string; python?: string } | {
  reason: string;
};

async function installServer(
  server: ServerDefinition,
  cacheDir: string,
): Promise<Installed> {
  if (server.pypi) return await installPypiServer(server.pypi, cacheDir);
  if (server.built) {
    const built = await buildOnce(server.built.program, cacheDir);
    if (built.ok) {
      console.log(
        `${server.id}: ${
          built.cached ? "cached" : "built"
        } ${built.binPath} (${built.seconds} s)`,
      );
    }
    return built.ok ? { bin: built.binPath, node: "node" } : {
      reason:
        `${server.built.program.recipe.language} build of ${server.built.program.name} failed: ${built.reason}`,
    };
  }
  if (!server.npm) return { bin: "", node: "node" };
  const installed = await installClient(server.npm, cacheDir);
  if (!installed.ok) {
    return {
      reason:
        `npm install ${server.npm.npmPackage}@${server.npm.version} failed: ${installed.reason}`,
    };
  }
  return { bin: installed.binPath, node: installed.runtimePath ?? "node" };
}

/**
 * A PyPI package's environment made (or found) in the cache with `python`
 * (the machine's `python3`); a failed install is pip's own line.
 */
export async function installPypiServer(
  pypi: PypiServer,
  cacheDir: string,
  python = "python3",
): Promise<Installed> {
  const { requirements } = pypi.environment;
  const installed = await installPythonEnvironment(
    { ...pypi.environment, requirements: `${repoRoot}/${requirements}` },
    cacheDir,
    python,
  );
  if (!installed.ok) {
    return {
      reason: `pip install -r ${requirements} failed: ${installed.reason}`,
    };
  }
  return {
    bin: pypi.program ? `${repoRoot}/${pypi.program}` : "",
    node: "node",
    python: installed.python,
  };
}

/** The version a server's rows name: its pin, or the lab's own. */
function versionOf(server: ServerDefinition): string {
  return server.npm?.version ?? server.pypi?.version ??
    server.built?.version ?? LAB_VERSION;
}

/** Whether something accepts connections on the loopback port. */
async function listening(port: number): Promise<boolean> {
  try {
    const connection = await Deno.connect({ hostname: "127.0.0.1", port });
    connection.close();
    return true;
  } catch {
    return false;
  }
}

/** A process the runner started, its output kept for a failure's reason. */
export interface StartedProcess {
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `command` in a process group of its own and waits until `port`
 * accepts connections; throws with its last output if it exits first or
 * takes too long. `stop` ends the group by its PID.
 */
export async function startListening(
  command: string[],
  port: number,
  options: { cwd: string; env?: Record<string, string> },
): Promise<StartedProcess> {
  const child = spawnInGroup(command, {
    cwd: options.cwd,
    env: { ...Deno.env.toObject(), ...options.env },
  });
  let output = "";
  let exited = false;
  const keep = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      output = (output + text).slice(-4000);
    }
  };
  const drained = Promise.all([keep(child.stdout), keep(child.stderr)]);
  child.status.then(() => exited = true);
  const stop = async () => {
    await endGroupByPid(child.pid);
    await child.status;
    await drained.catch(() => {});
  };
  const deadline = Date.now() + LISTEN_TIMEOUT_MS;
  while (!await listening(port)) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(
        `${
          exited ? "exited before listening" : "did not listen within 60 s"
        }: ${printableLine(tail(output, 3), 300)}`,
      );
    }
    await sleep(100);
  }
  return { pid: child.pid, stop };
}

/**
 * An HTTP target's processes (`processes`, in order, each named in the
 * error if it fails), then its server: all started, or none left running.
 */
export async function startHttpTarget(
  target: Extract<RowTarget, { kind: "http" }>,
  context: RowContext,
): Promise<StartedProcess[]> {
  const started: StartedProcess[] = [];
  const start = async (
    name: string,
    command: string[],
    port: number,
    env?: Record<string, string>,
  ) => {
    try {
      started.push(
        await startListening(command, port, { cwd: context.workDir, env }),
      );
    } catch (error) {
      await stopAll(started);
      throw new Error(`${name} ${(error as Error).message}`);
    }
  };
  for (const extra of target.processes ?? []) {
    for (const [path, text] of Object.entries(extra.files ?? {})) {
      await Deno.writeTextFile(`${context.workDir}/${path}`, text);
    }
    await start(extra.name, extra.command, extra.port);
  }
  if (target.command) {
    await start("the server", target.command, context.port, target.env);
  }
  return started;
}

/** Stops what `startHttpTarget` started, the last started first. */
export async function stopAll(started: StartedProcess[]) {
  for (const each of started.toReversed()) await each.stop();
}

/** Why a target cannot start here: a process's absolute path is missing. */
export async function missingProgram(
  target: RowTarget,
): Promise<string | undefined> {
  for (const extra of target.kind === "http" ? target.processes ?? [] : []) {
    const [program] = extra.command;
    if (program.startsWith("/") && !await exists(program)) {
      return `needs ${extra.name} at ${program} (Debian's ${
        program.split("/").at(-1)
      } package), which this machine lacks`;
    }
  }
}

/**
 * Runs `probe.ts --json --report FILE` in a process group of its own,
 * bounded by `ROW_TIMEOUT_MS`; whatever the group still holds afterwards
 * (a stdio server's children) is ended by its PID. Resolves with the
 * probe's JSON result.
 */
export async function runProbe(
  args: string[],
  options: { cwd: string; env?: Record<string, string>; report?: string },
): Promise<ProbeResult> {
  const child = spawnInGroup([
    Deno.execPath(),
    "run",
    "-A",
    PROBE_PATH,
    "--json",
    ...options.report ? ["--report", options.report] : [],
    ...args,
  ], { cwd: options.cwd, env: { ...Deno.env.toObject(), ...options.env } });
  const read = (stream: ReadableStream<Uint8Array>) =>
    new Response(stream).text();
  const timer = setTimeout(() => endGroupByPid(child.pid), ROW_TIMEOUT_MS);
  const [stdout, stderr, status] = await Promise.all([
    read(child.stdout),
    read(child.stderr),
    child.status,
  ]).finally(() => clearTimeout(timer));
  await endGroupByPid(child.pid);
  try {
    return JSON.parse(stdout) as ProbeResult;
  } catch {
    throw new Error(
      `the probe printed no result (exit ${status.code}): ${
        printableLine(tail(stderr, 3), 300)
      }`,
    );
  }
}

/**
 * How long each HTTP row holds an idle stream for `--server-facts`: long
 * enough for a short cut, short enough for 40 such rows in a run.
 */
const SERVER_FACTS_BOUND_SECONDS = 10;

/**
 * The probe's flags for a row: era, the row's own, `--server-facts`, then
 * the target (over stdio the facts are the eras alone).
 */
function probeArguments(
  row: ServerRowDefinition,
  target: RowTarget,
  context: RowContext,
): string[] {
  return [
    "--era",
    row.era,
    ...row.probeArgs(context),
    "--server-facts",
    String(SERVER_FACTS_BOUND_SECONDS),
    ...target.kind === "http"
      ? ["--url", target.url]
      : ["--stdio", "--", ...target.command],
  ];
}

/** Runs one row in a fresh folder; never throws for what the server does. */
async function runRow(
  server: ServerDefinition,
  row: ServerRowDefinition,
  installed: Installed,
  shared: { labUrl: string; workRoot: string; reportDir: string },
): Promise<ServerRow> {
  const started = performance.now();
  const base = {
    table: server.table,
    slug: row.slug,
    name: server.displayName,
    version: versionOf(server),
    era: row.era,
    mode: row.mode,
    behind: server.behind,
  };
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const workDir = `${shared.workRoot}/${row.slug}`;
  await Deno.mkdir(workDir, { recursive: true });
  const context: RowContext = {
    bin: "bin" in installed ? installed.bin : "",
    node: "node" in installed ? installed.node : "node",
    python: "python" in installed && installed.python
      ? installed.python
      : "python3",
    deno: Deno.execPath(),
    labMain: `${repoRoot}/main.ts`,
    labUrl: shared.labUrl,
    workDir,
    port: freePort(),
    ports: [freePort(), freePort(), freePort()],
  };
  const target = row.target(context);
  const transport = target.kind === "http" ? "streamable-http" : "stdio";
  const unable = (reason: string): ServerRow => ({
    ...base,
    transport,
    reason,
    seconds: seconds(),
  });
  if ("reason" in installed) return unable(installed.reason);
  if (server.needsChromium && !await exists(CHROMIUM_PATH)) {
    return unable(
      `needs Chromium at ${CHROMIUM_PATH} (Debian's chromium package), which this machine lacks`,
    );
  }
  const missing = await missingProgram(target);
  if (missing) return unable(missing);
  for (const [path, text] of Object.entries(row.files ?? {})) {
    await Deno.mkdir(resolve(workDir, path, ".."), { recursive: true });
    await Deno.writeTextFile(`${workDir}/${path}`, text);
  }
  let running: StartedProcess[] = [];
  try {
    if (target.kind === "http") {
      running = await startHttpTarget(target, context);
    }
    const {
      level,
      missing,
      exitStatus,
      errorCode,
      protocolVersion,
      unsolicited,
      uri,
      catalog,
      changeVia,
      watchGate,
      serverFacts,
    } = await runProbe(probeArguments(row, target, context), {
      cwd: workDir,
      env: target.kind === "stdio" ? target.env : undefined,
      report: `${shared.reportDir}/${row.slug}.md`,
    });
    const result = {
      level,
      missing,
      exitStatus,
      errorCode,
      protocolVersion,
      unsolicited,
      uri,
      catalog,
      changeVia,
      watchGate,
      serverFacts,
    };
    return { ...base, transport, result, seconds: seconds() };
  } catch (error) {
    return unable((error as Error).message);
  } finally {
    await stopAll(running);
  }
}

/**
 * Probes every selected row, installing each package once, with the lab
 * over HTTP (update after 1 s, its catalog changing with it) running for
 * the rows that need it.
 */
async function probeRows(
  options: ServersOptions,
  catalog = SERVER_CATALOG,
): Promise<ServerRow[]> {
  const selected = selectedRows(options.only, catalog);
  const lab = await spawnLab({
    mainPath: `${repoRoot}/main.ts`,
    env: {
      MCP_TEST_UPDATE_DELAY_SECONDS: "1",
      MCP_TEST_CATALOG_CHANGE: LAB_CATALOG_CHANGE,
      MCP_TEST_LOG_LEVEL: "warn",
    },
  });
  const workRoot = await Deno.makeTempDir({ prefix: "mcp-lab-servers-" });
  const installs = new Map<ServerDefinition, Installed>();
  const rows: ServerRow[] = [];
  try {
    for (const { server, row } of selected) {
      if (!installs.has(server)) {
        installs.set(server, await installServer(server, options.cacheDir));
      }
      const done = await runRow(server, row, installs.get(server)!, {
        labUrl: lab.url,
        workRoot,
        reportDir: `${options.resultsDir}/servers`,
      });
      rows.push(done);
      console.log(`${row.slug}: ${rowOutcome(done)} (${done.seconds} s)`);
    }
  } finally {
    await lab.stop();
    await Deno.remove(workRoot, { recursive: true }).catch(() => {});
  }
  return rows;
}

/** A row's outcome in a few words, for the console. */
function rowOutcome(row: ServerRow): string {
  if (!row.result) return `could not run: ${row.reason}`;
  const { exitStatus, errorCode, catalog } = row.result;
  return `level ${levelCell(row)}, exit ${exitStatus}${
    errorCode ? ` (${errorCode})` : ""
  }${catalog ? `, catalog ${catalogCell(row)}` : ""}`;
}

// ---------------------------------------------------------------------------
// The tables
// ---------------------------------------------------------------------------

/** The Era column: the era asked for, and the protocol version agreed. */
function eraCell(row: ServerRow): string {
  return `${row.era} (${row.result?.protocolVersion ?? "none"})`;
}

/** Whether the run watched a resource (not so with `--catalog-only`). */
function watchedResource(row: ServerRow): boolean {
  return row.result !== undefined && row.result.uri !== null;
}

/** The Level column: the resource's level, or — where none was watched. */
function levelCell(row: ServerRow): string {
  return watchedResource(row) ? String(row.result!.level) : "—";
}

/** The Catalog column: each list's catalog level, or — where not checked. */
function catalogCell(row: ServerRow): string {
  const catalog = row.result?.catalog;
  if (!catalog) return "—";
  return Object.entries(catalog.kinds).map(([kind, list]) =>
    `${kind} ${list.level}`
  ).join(", ");
}

/**
 * The Server facts column (`probe.ts --server-facts`): the eras the server
 * speaks, how its idle streams ended, its listen cap; — where not measured.
 */
function factsCell(row: ServerRow): string {
  const facts = row.result?.serverFacts;
  return facts ? cell(serverFactsSummary(facts)) : "—";
}

/**
 * The Replicas or watch gate column: for a row across replicas
 * (`--change-via`), whether the change made on one reached the stream on
 * the other; for a row that tried watches nobody may hold
 * (`--watch-gate`), how the server answered each; — elsewhere.
 */
export function deploymentCell(row: ServerRow): string {
  const via = row.result?.changeVia;
  const gate = row.result?.watchGate;
  const findings = [
    ...via
      ? [
        `change-via ${
          via.delivered === null
            ? "not-made"
            : via.delivered
            ? "delivered"
            : "lost"
        }`,
      ]
      : [],
    ...gate
      ? [
        ...gate.unreadableUri
          ? [`unreadable ${gate.unreadableUri.watch ?? "untested"}`]
          : [],
        `unknown ${gate.unknownUri.watch ?? "untested"}`,
      ]
      : [],
  ];
  if (findings.length === 0) return "—";
  return cell(`${row.mode ? `${row.mode}: ` : ""}${findings.join(", ")}`);
}

/** The columns both tables end with. */
function outcomeCells(row: ServerRow): string[] {
  const result = row.result;
  if (!result) {
    return ["—", cell(`could not run: ${row.reason}`), "—", "—", "—", "—"];
  }
  return [
    levelCell(row),
    cell(result.missing),
    catalogCell(row),
    factsCell(row),
    `${result.exitStatus}${result.errorCode ? ` (${result.errorCode})` : ""}`,
    `[report](servers/${row.slug}.md)`,
  ];
}

/** Whether an update went all the way through: notified, re-read changed. */
function delivered(row: ServerRow): boolean {
  return (row.result?.level ?? 0) >= 6;
}

/** Whether every list's change came through: notified, listed again with it. */
function catalogDelivered(row: ServerRow): boolean {
  return row.result?.catalog?.level === 3;
}

/** `transport era` for each row, joined in words. */
function routes(rows: ServerRow[]): string {
  return rows.map((row) =>
    `${row.transport === "stdio" ? "stdio" : "HTTP"} ${row.era}${
      row.mode ? ` (${row.mode})` : ""
    }`
  ).join(", ");
}

/**
 * Where a server's (or, through a proxy, the lab's) catalog change reached
 * the probe, and where not, what was missing first: for the rows that
 * checked it.
 */
function catalogFindings(rows: ServerRow[], proxy: boolean): string[] {
  const checked = rows.filter((row) => row.result?.catalog);
  const through = checked.filter(catalogDelivered);
  const verb = proxy
    ? "passes the catalog change through"
    : "its catalog change reaches a client";
  const parts = through.length > 0 ? [`${verb} over ${routes(through)}`] : [];
  for (const row of checked.filter((row) => !catalogDelivered(row))) {
    const catalog = row.result!.catalog!;
    parts.push(
      `the catalog change not over ${
        routes([row])
      }: ${catalog.missing} (catalog ${catalog.level})`,
    );
  }
  return parts;
}

/**
 * The paragraph on top, in plain words, from the rows themselves: per
 * server and proxy, where the update arrived and, where not, what was
 * missing first; the same of the catalog change, where it was checked.
 */
export function findings(rows: ServerRow[]): string[] {
  const lines: string[] = [];
  const names = [...new Set(rows.map((row) => row.name))];
  for (const name of names) {
    const own = rows.filter((row) => row.name === name);
    const ran = own.filter((row) => row.result);
    const watched = ran.filter(watchedResource);
    const yes = watched.filter(delivered);
    const no = watched.filter((row) => !delivered(row));
    const parts: string[] = [];
    const proxy = own[0].table === "proxies";
    const verb = proxy ? "passes the update through" : "delivers";
    if (yes.length > 0) parts.push(`${verb} over ${routes(yes)}`);
    for (const row of no) {
      parts.push(
        `not over ${routes([row])}: ${row.result!.missing} (level ${
          row.result!.level
        })`,
      );
    }
    parts.push(...catalogFindings(ran, proxy));
    const unable = own.find((row) => !row.result);
    if (unable) parts.push(`could not run here: ${unable.reason}`);
    const unsolicited = ran.reduce(
      (sum, row) => sum + row.result!.unsolicited.count,
      0,
    );
    if (unsolicited > 0) {
      parts.push(
        `sent ${unsolicited} notification(s) nobody subscribed to`,
      );
    }
    lines.push(
      `- **${markdownText(name)}** ${own[0].version}: ${
        cell(parts.join("; "))
      }.`,
    );
  }
  return lines;
}

/** `results/servers.md`: a paragraph, then the servers and the proxies. */
export function serversMarkdown(
  rows: ServerRow[],
  generatedAt: string,
): string {
  const servers = rows.filter((row) => row.table === "servers");
  const proxies = rows.filter((row) => row.table === "proxies");
  return [
    "# Servers and proxies: does the update arrive?",
    "",
    "Each row is one run of `probe.ts` against a server installed from npm at",
    "the version shown (a program of this checkout on the Python SDK: its",
    "pinned requirements from PyPI; on the Go SDK: built with its go.sum),",
    "or against a proxy with the lab behind it. The",
    "probe's levels: 1 connected, 2 advertises `resources.subscribe`, 3 read",
    "the resource, 4 subscription accepted, 5 notification received, 6 re-read",
    "shows the change, 7 stops cleanly. What each server's resource needs to",
    "change (a tool call, a file append) and how each is started are in",
    "`clients/catalog/servers_and_proxies.ts`; each report holds the sequence of what",
    "happened. Regenerate with `deno task servers`.",
    `Generated ${generatedAt}.`,
    "",
    "The Catalog column: whether a change to a server's catalog reaches a",
    "client (`probe.ts --catalog`), per list: 0 not listed, 1 listed, 2",
    "notified (`list_changed`), 3 listed again with the change; — where not",
    "checked. The lab, itself and behind each proxy, adds a tool, a prompt",
    "and a resource at its update (`--catalog-change all`); the filesystem",
    "server keeps a cut tool result as a resource, in the same run as its",
    "resource's check; the everything and puppeteer servers add a resource",
    "with a tool of their own, in rows of their own that watch the catalog",
    "alone (Level —).",
    "",
    "The Replicas or watch gate column: for a server run as two replicas, the",
    "change made through one (`probe.ts --change-via`) and the stream held on",
    "the other, directly or through a load balancer: `delivered` or `lost`;",
    "for one probed with `--watch-gate`, its answer to a watch on a URI nobody",
    "may read (`unreadable`) and on one it does not serve (`unknown`):",
    "`accepted`, `refused` or `filtered`; — where not tried.",
    "",
    "The Server facts column (`probe.ts --server-facts 10`, once the row's",
    "check is over, on connections of the probe's own): the eras the server",
    "answers (`initialize`, `server/discover`); over HTTP, how an idle 2025",
    "GET stream and an idle listen ended: `graceful` (the server ended it: a",
    "listen with its result), `abrupt` (dropped), or `open-at-bound` (still",
    "open after 10 s), with its seconds; and the listens it took at once before",
    "refusing one (`at least 8`: none refused). Over stdio the eras alone,",
    "each asked of a fresh process: the streams are the process's. Reported,",
    "never graded; — in rows that could not run.",
    "",
    "What a server author takes from it: advertising `resources.subscribe`",
    "and answering `resources/subscribe` is not delivering, and neither is a",
    "notification whose re-read shows nothing new. The stack users run",
    "decides, proxy included, and one era can deliver where the other does",
    "not. Probe your server as they reach it.",
    "",
    ...findings(rows),
    "",
    "## Servers",
    "",
    "| Server | Version | Transport | Era (protocol) | Replicas or watch gate | Level | First missing step | Catalog | Server facts | Exit | Report |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...servers.map((row) =>
      `| ${
        [
          markdownText(row.name),
          row.version,
          row.transport,
          eraCell(row),
          deploymentCell(row),
          ...outcomeCells(row),
        ].join(" | ")
      } |`
    ),
    "",
    "## Proxies",
    "",
    "Each proxy with the lab behind it (update 1 s after the subscription, when",
    "its tools, prompts and resources lists each gain an item).",
    "",
    "| Proxy | Version | Mode | In front of | Transport | Era (protocol) | Update passed through | Level | First missing step | Catalog | Server facts | Exit | Report |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...proxies.map((row) =>
      `| ${
        [
          markdownText(row.name),
          row.version,
          row.mode ?? "—",
          row.behind ?? "—",
          row.transport,
          eraCell(row),
          row.result ? (delivered(row) ? "yes" : "no") : "—",
          ...outcomeCells(row),
        ].join(" | ")
      } |`
    ),
    "",
  ].join("\n");
}

// ---------------------------------------------------------------------------
// --check and entry
// ---------------------------------------------------------------------------

/** The servers table's column for replicas and watch gates. */
const DEPLOYMENT_COLUMN = "Replicas or watch gate";

/** A Markdown table line's cells; an escaped pipe stays inside its cell. */
function tableCells(line: string): string[] {
  return line.split(/(?<!\\)\|/).map((text) => text.trim());
}

/**
 * `--check`: each row must have run, and its level, exit status and
 * catalog must be what the published table (`published`, a `servers.md`)
 * records for it. Resolves with the failures; prints each agreement.
 */
export function checkAgainstPublished(
  rows: ServerRow[],
  published: string,
): string[] {
  const failures: string[] = [];
  const lines = published.split("\n");
  for (const row of rows) {
    const line = lines.find((text) =>
      text.includes(`(servers/${row.slug}.md)`)
    );
    if (!row.result) {
      failures.push(`${row.slug}: could not run: ${row.reason}`);
      continue;
    }
    if (!line) {
      failures.push(`${row.slug}: no row in the published table`);
      continue;
    }
    const header = lines.slice(0, lines.indexOf(line)).findLast((text) =>
      /^\|\s*(Server|Proxy)\s*\|/.test(text)
    ) ?? "";
    const columns = tableCells(header);
    const cells = tableCells(line);
    const published = (column: string) =>
      cells[columns.indexOf(column)];
    // Compared where either side has something in it: rows of other kinds
    // keep their lines as they were.
    const deployment = columns.includes(DEPLOYMENT_COLUMN) &&
      (deploymentCell(row) !== "—" || published(DEPLOYMENT_COLUMN) !== "—");
    const ran = `level ${levelCell(row)}, exit ${row.result.exitStatus}${
      columns.includes("Catalog") ? `, catalog ${catalogCell(row)}` : ""
    }${deployment ? `, ${deploymentCell(row)}` : ""}`;
    const recorded = `level ${published("Level")}, exit ${
      Number.parseInt(published("Exit"))
    }${columns.includes("Catalog") ? `, catalog ${published("Catalog")}` : ""}${
      deployment ? `, ${published(DEPLOYMENT_COLUMN)}` : ""
    }`;
    if (ran !== recorded) {
      failures.push(`${row.slug}: ${ran}; published: ${recorded}`);
    } else {
      console.log(`check ${row.slug}: ${ran}, as published`);
    }
  }
  if (rows.length === 0) failures.push("no row ran");
  return failures;
}

/** Reports in `dir` that no row of a full run wrote: from rows since removed. */
async function removeStaleReports(dir: string, rows: ServerRow[]) {
  const kept = new Set(rows.map((row) => `${row.slug}.md`));
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".md") && !kept.has(entry.name)) {
      await Deno.remove(`${dir}/${entry.name}`);
    }
  }
}

/** `servers.json`: the rows `servers.md` is written from, for `--compare`. */
export interface ServersDocument {
  generatedAt: string;
  rows: ServerRow[];
}

/**
 * A `servers.json` as `--compare`, `--latest` and `--rewrite` read it,
 * checked for what `comparedServerRow` takes of each row before anything
 * reads it (a file given on the command line may be anything).
 */
const SERVERS_FILE = tableFile(z.object({
  slug: z.string(),
  name: z.string(),
  version: z.string(),
  transport: z.string(),
  era: z.string(),
  mode: z.string().optional(),
  result: z.object({
    level: z.number(),
    missing: z.string(),
    exitStatus: z.number(),
    errorCode: z.string().nullable(),
    protocolVersion: z.string().nullable(),
    catalog: z.object({
      kinds: z.record(z.string(), z.object({ level: z.number() })),
    }).nullable().optional(),
  }).optional(),
  reason: z.string().optional(),
}));

/**
 * Writes `servers.md` and `servers.json` from `rows`, with each row's
 * report (written to `reportDir` by its run) in `resultsDir/servers/`;
 * formats them.
 */
async function writeTables(
  resultsDir: string,
  rows: ServerRow[],
  reportDir = `${resultsDir}/servers`,
) {
  const generatedAt = new Date().toISOString();
  await Deno.mkdir(`${resultsDir}/servers`, { recursive: true });
  const reports = rows.filter((row) => row.result).map(({ slug }) =>
    `${resultsDir}/servers/${slug}.md`
  );
  if (reportDir !== `${resultsDir}/servers`) {
    for (const report of reports) {
      await Deno.copyFile(
        `${reportDir}/${report.split("/").at(-1)}`,
        report,
      );
    }
  }
  await Deno.writeTextFile(
    `${resultsDir}/servers.md`,
    serversMarkdown(rows, generatedAt),
  );
  const document: ServersDocument = { generatedAt, rows };
  await Deno.writeTextFile(
    `${resultsDir}/servers.json`,
    JSON.stringify(document, null, 2) + "\n",
  );
  await formatFiles(resultsDir, [
    `${resultsDir}/servers.md`,
    `${resultsDir}/servers.json`,
    ...reports,
  ]);
  console.log(
    `wrote ${resultsDir}/servers.md (${rows.length} row${
      rows.length === 1 ? "" : "s"
    })`,
  );
}

/**
 * `--rewrite`: `servers.md` written anew from `servers.json` (its rows and
 * date), after the text around the tables changed; nothing probed.
 */
async function rewriteTable(resultsDir: string): Promise<number> {
  const path = `${resultsDir}/servers.md`;
  const { rows, generatedAt } = await readJson<ServersDocument>(
    `${resultsDir}/servers.json`,
    SERVERS_FILE,
  );
  await Deno.writeTextFile(path, serversMarkdown(rows, generatedAt));
  await formatFiles(resultsDir, [path]);
  console.log(`wrote ${path} from servers.json (${rows.length} rows)`);
  return 0;
}

/** A row as `--compare` and `--latest` match and compare it. */
export function comparedServerRow(row: ServerRow): ComparedRow {
  const { result } = row;
  return {
    key: row.slug,
    what: [row.name, row.mode ?? "—", row.transport],
    era: eraCell(row),
    version: row.version,
    level: result?.level ?? null,
    outcome: result
      ? `exit ${result.exitStatus}${
        result.errorCode ? ` (${result.errorCode})` : ""
      }${result.catalog ? `, catalog ${catalogCell(row)}` : ""}`
      : "could not run",
    notes: [result?.missing ?? row.reason ?? ""],
  };
}

const SERVER_HEADERS = ["Server or proxy", "Mode", "Transport"];

/** The rows of `before` with `fresh` ones in their place, in catalog order. */
function mergeServerRows(before: ServerRow[], fresh: ServerRow[]): ServerRow[] {
  const order = SERVER_CATALOG.flatMap((server) =>
    server.rows.map((row) => row.slug)
  );
  const merged = new Map(before.map((row) => [row.slug, row]));
  for (const row of fresh) merged.set(row.slug, row);
  return [...merged.values()].sort((a, b) =>
    order.indexOf(a.slug) - order.indexOf(b.slug)
  );
}

/** `--compare`: two servers files' rows; the exit status. */
function compareTables(options: ServersOptions): Promise<number> {
  return compareFiles(
    options.compare ?? [],
    `${options.resultsDir}/servers.json`,
    {
      resultsDir: options.resultsDir,
      title: "Servers and proxies",
      headers: SERVER_HEADERS,
    },
    { file: SERVERS_FILE, compared: comparedServerRow },
  );
}

/**
 * `--latest`: each package at its newest version, probed into
 * CACHE/latest-servers/ and compared with the committed table; with
 * `--write`, accepted (not a server whose newest version could not run
 * at all). The exit status.
 */
async function runLatest(options: ServersOptions): Promise<number> {
  const lookups = options.versionsFile
    ? await fixtureLookups(options.versionsFile)
    : REGISTRY_LOOKUPS;
  const pinned = SERVER_CATALOG.filter((server) =>
    selectedRows(options.only, [server]).length > 0
  );
  const npm = await atNewest(
    pinned.flatMap((server) => server.npm ? [server.npm] : []),
    lookups.npm,
  );
  const locked = await newestLocked(
    pinned.flatMap(lockedPinsOf),
    lookups.locked,
  );
  const newest = npm.items;
  const failures = [...npm.failures, ...locked.failures];
  for (const failure of failures) console.error(printableLine(failure, 500));
  const catalog = pinned.flatMap((server) => {
    const npm = newest.find((item) => item.id === server.npm?.id);
    return !server.npm ? [server] : npm ? [{ ...server, npm }] : [];
  });
  const committedPath = `${options.resultsDir}/servers.json`;
  const committed = await readJson<ServersDocument>(
    committedPath,
    SERVERS_FILE,
  );
  const freshDir = `${options.cacheDir}/latest-servers`;
  await Deno.remove(freshDir, { recursive: true }).catch(() => {});
  await Deno.mkdir(`${freshDir}/servers`, { recursive: true });
  const rows = await probeRows({ ...options, resultsDir: freshDir }, catalog);
  await writeTables(freshDir, rows);
  const comparison = compareRows(
    committed.rows.map(comparedServerRow),
    mergeServerRows(committed.rows, rows).map(comparedServerRow),
  );
  // A package whose newest version could not run (install, start) keeps its pin.
  const stuck = catalog.filter((server) =>
    rows.some((row) => row.name === server.displayName && !row.result)
  );
  const status = await reportChanges(
    options.resultsDir,
    "Servers and proxies",
    changesSection(comparison, SERVER_HEADERS, {
      before: fileLabel(committedPath, committed),
      after: `the newest versions, run by \`deno task servers --latest\` on ${
        new Date().toISOString().slice(0, 10)
      }`,
      extra: [
        `Run again: ${
          [...new Set(rows.map((row) => `${row.name} ${row.version}`))]
            .join(", ") || "nothing"
        } (${rows.length} rows)`,
        ...locked.lines,
        ...failures,
        ...stuck.map((server) =>
          `${server.displayName} ${
            versionOf(server)
          } could not run, so its pin stays: ${
            rows.find((row) => row.name === server.displayName && !row.result)
              ?.reason
          }`
        ),
      ],
    }),
    comparison,
  );
  if (options.write) {
    const accepted = catalog.filter((server) => !stuck.includes(server));
    await writeTables(
      options.resultsDir,
      mergeServerRows(
        committed.rows,
        rows.filter((row) =>
          accepted.some((server) => server.displayName === row.name)
        ),
      ),
      `${freshDir}/servers`,
    );
    const moves = accepted.flatMap((server) => {
      const before = pinned.find((item) => item.id === server.id)?.npm;
      return before && server.npm ? pinMoves(before, server.npm) : [];
    });
    const files = PIN_FILES.map((name) => `${repoRoot}/clients/${name}`);
    for (const move of await writePins(files, moves)) {
      console.log(
        `no pin of ${move.npmPackage} ${move.from} in the catalogs: move it to ${move.to} by hand`,
      );
    }
    await formatFiles(repoRoot, files);
    for (const move of moves) {
      console.log(`pin moved: ${move.npmPackage} ${move.from} → ${move.to}`);
    }
  }
  return failures.length > 0 ? 1 : status;
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
  try {
    if (options.compare) return await compareTables(options);
    if (options.latest) return await runLatest(options);
    if (options.rewrite) return await rewriteTable(options.resultsDir);
  } catch (error) {
    console.error(failureLine("servers", error));
    return 1;
  }
  const { resultsDir } = options;
  // Read before anything is written: results-dir may be the repository's.
  const published = options.check
    ? await Deno.readTextFile(`${repoRoot}/results/servers.md`)
    : "";
  await Deno.mkdir(`${resultsDir}/servers`, { recursive: true });
  const rows = await probeRows(options);
  if (options.only.length === 0) {
    await removeStaleReports(`${resultsDir}/servers`, rows);
  }
  await writeTables(resultsDir, rows);
  if (!options.check) return 0;
  const failures = checkAgainstPublished(rows, published);
  for (const failure of failures) console.error(`check failed: ${failure}`);
  return failures.length > 0 ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
