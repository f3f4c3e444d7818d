/**
 * What the catalog says of a client: its kind (an agent CLI, a command
 * client, a host in a browser, an app on a library, one that cannot run), its
 * modes, and what a run of it is given; the `--only` groups.
 *
 * @module
 */

import type { ModelScript, Route, ScriptedCall } from "../model/decide.ts";
import type {
  LibraryProgram,
  NpmRuntime,
  PlatformBinary,
} from "../support/install.ts";
import type { ModeLabSettings, StdioLabCommand } from "../support/run_lab.ts";
import type { WireFormat } from "../model/scripted_model.ts";
import type { BuiltProgram } from "../support/build_once.ts";
import type { GoInstall } from "../support/install_go.ts";
import type { PypiInstall, PythonProgram } from "../support/install_python.ts";

/**
 * `default` is the client as it ships; `2026-07-28` its opt-in to that
 * protocol era; `notifications` its opt-in to pass resource-change
 * notifications on to its model (oh-my-pi's `mcp.notifications`); `stdio`
 * the lab as a local server the client launches itself (`--stdio`), and
 * `stdio-2026-07-28` the same in that era; `no-updates` the client with its
 * update handling turned off (the reference host's negative control);
 * `catalog` the client in each mode it lists (its launch mode,
 * `launchMode`) against a lab whose tools, prompts and resources each gain
 * an item at the client's first update (`--catalog-change all`). The
 * modes of `WORLD_MODES` are the client as in `default` against a lab set
 * as some servers are (`labSettingsOf`). Every client that runs gets the
 * world modes and catalog (`plannedRuns` in `run.ts`), so no client lists
 * them. A launch tests only for its own opt-in modes, so it launches a
 * world mode as `default` (`catalog_test.ts` holds every client to that); a
 * catalog run launches in its launch mode.
 */
export const MODES = [
  "default",
  "2026-07-28",
  "notifications",
  "stdio",
  "stdio-2026-07-28",
  "no-updates",
  "inline-content",
  "cut",
  "2026-07-28-only",
  "2025-only",
  "refused",
  "catalog",
] as const;
export type ModeId = (typeof MODES)[number];

/**
 * The modes that run each client as in its default mode, natively under
 * trigger subscribe, against a lab set as some servers in the world are:
 * `inline-content` puts the new text in every update (`--inline-content
 * sep-3119`); `cut` ends every GET stream and listen before the update
 * (`STREAM_CUT`); `2026-07-28-only` and `2025-only` serve one era (`--era`);
 * `refused` refuses every watch (`--max-watches 0`). Each is a cell of the
 * client's default row in the summary, and is compared with that row.
 */
export const WORLD_MODES = [
  "inline-content",
  "cut",
  "2026-07-28-only",
  "2025-only",
  "refused",
] as const satisfies readonly ModeId[];
export type WorldMode = (typeof WORLD_MODES)[number];

/** Whether a mode (or a summary column named after one) is a world mode. */
export function isWorldMode(mode: string): mode is WorldMode {
  return (WORLD_MODES as readonly string[]).includes(mode);
}

/**
 * Mode `cut`'s lab: each stream ended 2 s after it opened, as on a host
 * with a fixed timeout, and the update 3.5 s after the subscribe, after
 * the first cut. Not at 5 s: a client that opens its stream again 1 s
 * after a cut (the MCP TypeScript SDK's default delay) has it cut again at
 * 5 s, so an update then would land on that second cut, a few ms either
 * side of it; at 3.5 s it falls inside the stream opened again within
 * 1.5 s of the cut, and is lost to a client that waits longer or never
 * opens one. The end is graceful (the body's clean end, a listen's result
 * last): the only end a stdio lab has, so every client meets the same cut
 * on the transport it launches with.
 */
export const STREAM_CUT = {
  lifetimeSeconds: 2,
  end: "graceful",
  delaySeconds: 3.5,
} as const;

/** The lab settings a run in `mode` sets: each absent one is the lab's default. */
export function labSettingsOf(mode: ModeId): ModeLabSettings {
  switch (mode) {
    case "inline-content":
      return { inlineContent: "sep-3119" };
    case "catalog":
      return { catalogChange: "all" };
    case "cut":
      return {
        streamLifetimeSeconds: STREAM_CUT.lifetimeSeconds,
        streamEnd: STREAM_CUT.end,
      };
    case "2026-07-28-only":
      return { era: "2026-07-28" };
    case "2025-only":
      return { era: "2025" };
    case "refused":
      return { maxWatches: 0 };
    default:
      return {};
  }
}

/** The lab's update delay in a run in `mode`: mode cut's own, else `delaySeconds`. */
export function modeDelaySeconds(mode: ModeId, delaySeconds: number): number {
  return mode === "cut" ? STREAM_CUT.delaySeconds : delaySeconds;
}

/**
 * What a run or row is of: its mode, and for a catalog run the client's own
 * mode it was launched in (one catalog run per mode the client lists).
 */
export interface ModeOfRun {
  mode: ModeId;
  /**
   * A catalog run's launch mode; absent on other runs, and on a catalog
   * row recorded before catalog runs had one (launched as `default`).
   */
  launchMode?: ModeId;
}

/**
 * The mode a run launches its client in: a catalog run's launch mode,
 * else its mode (whose launch treats a world mode as `default`).
 */
export function launchedMode(run: ModeOfRun): ModeId {
  return run.launchMode ?? run.mode;
}

/**
 * A run's mode as the tables show it and key it: `catalog (stdio)` for a
 * catalog run launched in mode stdio, any other mode as it is.
 */
export function modeLabel(run: ModeOfRun): string {
  return run.mode === "catalog"
    ? `catalog (${run.launchMode ?? "default"})`
    : run.mode;
}

/**
 * A run's mode in file names: `catalog-stdio` for a catalog run launched in
 * mode stdio; plain `catalog` for one launched as `default`, the name its
 * evidence had before catalog runs had launch modes.
 */
export function modeFileName(run: ModeOfRun): string {
  return run.mode === "catalog" && run.launchMode &&
      run.launchMode !== "default"
    ? `catalog-${run.launchMode}`
    : run.mode;
}

/** The modes in which the client starts the lab over stdio itself. */
export function isStdioMode(mode: ModeId): boolean {
  return mode === "stdio" || mode === "stdio-2026-07-28";
}

export interface LaunchContext {
  /** Isolated HOME (XDG folders and TMPDIR live under it). */
  home: string;
  /** The folder the client runs in (its project). */
  workDir: string;
  /** The lab over HTTP; empty in a stdio mode, where `stdioLab` is set. */
  labUrl: string;
  /** In a stdio mode: the command that starts the lab over stdio. */
  stdioLab?: StdioLabCommand;
  /** The harness's deno cache (a client run by this Deno reads it). */
  denoDir: string;
  /** Scripted model origin, `http://127.0.0.1:PORT`. */
  modelOrigin: string;
  prompt: string;
  mode: ModeId;
  route: Route;
  /** Set the client's MCP tool-call timeout to this (the progress check). */
  toolTimeoutSeconds?: number;
}

export interface Launch {
  args: string[];
  env: Record<string, string>;
  /** Files to write before the run, by absolute path. */
  files: Record<string, string>;
}

export interface ClientDefinition {
  /** Short id used on the command line and in file names. */
  id: string;
  displayName: string;
  npmPackage: string;
  version: string;
  /** Executable name in `node_modules/.bin`. */
  bin: string;
  wire: WireFormat;
  /** Resource tools as this client names them for its model. */
  script: Omit<ModelScript, "waitSeconds">;
  modes: ModeId[];
  /** Start the lab with `MCP_TEST_ENABLE_TOOL=true` (tools-only clients). */
  enableTool: boolean;
  /**
   * The client's own shell tool, for the `shell-probe` route: its name as the
   * model sees it and the arguments that run one command; or, for a client
   * that cannot run a shell command headless, why.
   */
  shell: ShellTool | { unavailable: string };
  /**
   * A daemon the client leaves running (Cline's hub): the file under the
   * isolated home that records its PID (plain, or JSON with a `pid` field).
   * The harness ends that PID after the run.
   */
  daemonPidFile?: string;
  /** A different loader call per route (Claude Code defers MCP tools). */
  routeLoader?: Partial<Record<Route, ScriptedCall>>;
  /**
   * The binary comes from another platform package than the pinned
   * version's installer asks for (npm does not have that one).
   */
  platformBinary?: PlatformBinary;
  /**
   * A client of this checkout rather than npm (the reference host): its
   * script, which this Deno runs; its modules are cached instead of an
   * install.
   */
  localScript?: string;
  /**
   * The client's model is its vendor's service, behind the vendor's login:
   * no setting points it at another endpoint, so it is launched as shipped
   * (isolated home, the lab as its MCP server) and its row says the step
   * and message that stopped it. Which login, in a few words; `wire` is
   * then never spoken.
   */
  vendorLogin?: string;
  /** An agent built on a client library: its program (`libraries.ts`). */
  program?: LibraryProgram;
  /**
   * A Go program its users install with `go install module@version`
   * (`install_go.ts`) instead of npm; `npmPackage` then names the module.
   */
  goInstall?: GoInstall;
  /**
   * A Python program its users install from PyPI (`pip install`), with
   * every dependency pinned, on a Python it finds (`install_python.ts`);
   * `npmPackage` then names the PyPI package.
   */
  pypiInstall?: PypiInstall;
  /** The runtime the client runs on, when not this machine's Node. */
  runtime?: NpmRuntime;
  launch(context: LaunchContext): Launch;
}

export interface ShellTool {
  name: string;
  input(command: string): Record<string, unknown>;
}

export const SERVER = "lab";

/**
 * What a command client's run needs: its isolated home, the lab, the mode
 * and how long the lab waits before its update.
 */
export interface CommandContext {
  home: string;
  /** The lab over HTTP; empty in a stdio mode, where `stdioLab` is set. */
  labUrl: string;
  /** In a stdio mode: the command that starts the lab over stdio. */
  stdioLab?: StdioLabCommand;
  mode: ModeId;
  delaySeconds: number;
}

/** One invocation of a command client's executable. */
export interface CommandStep {
  args: string[];
  /**
   * A command that streams until stopped (a subscription): the harness ends
   * it with SIGTERM after this many seconds, and that is its planned end.
   */
  streamSeconds?: number;
}

/** A background process a command client leaves behind, and how to end it. */
export interface CommandDaemon {
  /**
   * The variable that names the daemon's folder. The harness points it at a
   * fresh folder of its own under /tmp, since the daemon's unix socket lives
   * there and a socket path is limited to 107 bytes (a run's home is deeper).
   */
  dirEnv: string;
  /** The file in that folder that holds the daemon's PID. */
  pidFile: string;
  /** The client's own command that stops it (SIGTERM, then SIGKILL follow by PID). */
  stopArgs: string[];
}

/**
 * A client that no model drives: a fixed command sequence run against the
 * lab (the MCP Inspector's CLIs). It has no model API, no routes but
 * `native`, and no context the update could reach.
 */
export interface CommandClientDefinition {
  kind: "command";
  /** The `--only` group it belongs to. */
  group: "inspector" | "libraries";
  id: string;
  displayName: string;
  npmPackage: string;
  version: string;
  /** Executable name in `node_modules/.bin`. */
  bin: string;
  modes: ModeId[];
  /** Environment beyond the harness's isolated one. */
  env: Record<string, string>;
  /** The commands, in order; every one runs even if an earlier one failed. */
  steps(context: CommandContext): CommandStep[];
  daemon?: CommandDaemon;
  /** An app built on a client library: its program (`libraries.ts`). */
  program?: LibraryProgram;
  /** An app in a compiled language instead, built once (`build_once.ts`). */
  builtProgram?: BuiltProgram;
  /** An app in Python instead, run on its virtual environment (`install_python.ts`). */
  pythonProgram?: PythonProgram;
  /** The runtime the client runs on, when not this machine's Node. */
  runtime?: NpmRuntime;
}

/**
 * A client driven in a real browser: a web UI the harness serves against the
 * lab, then clicks through as a user would. Like a command client it runs
 * on the native route only: the MCP Inspector's web UI has no model
 * (`runners/browser.ts`); VS Code's editor is what the harness measures, and
 * its chat meets the scripted model beside it (`runners/code_server.ts`).
 */
export type BrowserClientDefinition =
  | InspectorWebDefinition
  | CodeServerDefinition;

/** What every browser client's entry says. */
export interface BrowserClientBase {
  kind: "browser";
  id: string;
  displayName: string;
  npmPackage: string;
  version: string;
  /** The executable that serves the web UI, in `node_modules/.bin`. */
  bin: string;
  modes: ModeId[];
  /** Environment beyond the harness's isolated one and the server's ports. */
  env: Record<string, string>;
}

/** The MCP Inspector's web UI: in the `inspector` group and the `browser` one. */
export interface InspectorWebDefinition extends BrowserClientBase {
  ui: "inspector";
  group: "inspector";
  /** The arguments that serve the UI for the lab, in the mode's era. */
  serveArgs(context: { labUrl: string; mode: ModeId }): string[];
}

/** How VS Code's `mcp.json` names the lab: by URL, or the command that serves it over stdio. */
export type McpServerEntry =
  | { type: "http"; url: string }
  | {
    type: "stdio";
    command: string;
    args: string[];
    env: Record<string, string>;
  };

/** What one code-server run is: its port and folders, the lab, the model. */
export interface CodeServerContext {
  port: number;
  /** `--user-data-dir`: settings, `mcp.json`, the chat's model list. */
  userDataDir: string;
  extensionsDir: string;
  /** The folder the window opens. */
  workspace: string;
  lab: McpServerEntry;
  /** Scripted model origin, `http://127.0.0.1:PORT`. */
  modelOrigin: string;
}

/**
 * VS Code as the `code-server` npm package serves it to a browser: on a
 * runtime of its own from npm, built with Debian's build packages.
 */
export interface CodeServerDefinition extends BrowserClientBase {
  ui: "code-server";
  runtime: NpmRuntime;
  /** Debian packages its install builds native modules with. */
  debianPackages: string[];
  /** The API its chat speaks to the scripted model (a custom endpoint). */
  chatWire: WireFormat;
  /** The model's name in the chat's model picker. */
  chatModelName: string;
  serveArgs(context: CodeServerContext): string[];
  /** Files to write before the run, by absolute path. */
  files(context: CodeServerContext): Record<string, string>;
  /** The scripted model's tools in the chat, for its workspace. */
  chatScript(workspace: string): Omit<ModelScript, "waitSeconds">;
}

/**
 * An agent that cannot be measured against the lab at all, by its own
 * documentation (no MCP support): it gets one row that says why, and no run.
 */
export interface UnsupportedClientDefinition {
  kind: "unsupported";
  id: string;
  displayName: string;
  npmPackage: string;
  version: string;
  modes: ModeId[];
  /** Why, quoting the client's own documentation. */
  reason: string;
}

/** Any client the harness runs: an agent, commands, or a web UI. */
export type AnyClient =
  | ClientDefinition
  | CommandClientDefinition
  | BrowserClientDefinition
  | UnsupportedClientDefinition;

/**
 * The `--only` groups: the agent CLIs; the Inspector's clients (its command
 * clients and its web UI); the browser-driven clients alone; the apps and
 * agents built on client libraries (`libraries.ts`).
 */
export const GROUPS = ["agents", "inspector", "browser", "libraries"] as const;
export type Group = (typeof GROUPS)[number];

export function isCommandClient(
  client: AnyClient,
): client is CommandClientDefinition {
  return "kind" in client && client.kind === "command";
}

export function isBrowserClient(
  client: AnyClient,
): client is BrowserClientDefinition {
  return "kind" in client && client.kind === "browser";
}

export function isUnsupportedClient(
  client: AnyClient,
): client is UnsupportedClientDefinition {
  return "kind" in client && client.kind === "unsupported";
}

/** The groups a client belongs to (the Inspector's web UI is in two). */
export function groupsOf(client: AnyClient): Group[] {
  if (isBrowserClient(client)) {
    return client.ui === "inspector" ? [client.group, "browser"] : ["browser"];
  }
  if (isUnsupportedClient(client)) return ["agents"];
  if (isCommandClient(client)) return [client.group];
  return client.program ? ["libraries"] : ["agents"];
}
