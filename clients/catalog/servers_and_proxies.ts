/**
 * What `deno task servers` probes: servers that touch resource
 * subscriptions, and proxies in front of the lab, each pinned on npm, with
 * how to start it, what changes its resource (and, where it changes, its
 * catalog), and one row per transport and era it serves.
 *
 * @module
 */

import type { Era } from "../../main.ts";
import { type Installable, NODE_24 } from "../support/install.ts";
import type { PythonEnvironment } from "../support/install_python.ts";
import type { BuiltProgram } from "../support/build_once.ts";
import { GO_BUILD } from "../support/install_go.ts";
import { shellQuote } from "../support/process.ts";
import { builtProgramOf } from "./libraries.ts";
import {
  HAPROXY_PATH,
  haproxyConfig,
  redisServerCommand,
  type Routing,
} from "../../launch.ts";

/** The two tables of `results/servers.md`. */
export type ServerTable = "servers" | "proxies";

/** What a row's commands are made from; the runner fills it in. */
export interface RowContext {
  /**
   * The package's executable script (npm's bin link); a Python program's
   * path in this checkout; a built program's executable; "" for the lab.
   */
  bin: string;
  /** The Node that runs it: its runtime from npm, else `node` on PATH. */
  node: string;
  /** A Python program's: its virtual environment's Python, else `python3`. */
  python: string;
  /** This Deno, for the lab behind a proxy. */
  deno: string;
  /** The lab's `main.ts`. */
  labMain: string;
  /**
   * The lab over HTTP (update after 1 s, its catalog changing with it:
   * `LAB_CATALOG_CHANGE`), started once for every row.
   */
  labUrl: string;
  /** An empty folder of this row's own. */
  workDir: string;
  /** A free loopback port, for a server the runner starts. */
  port: number;
  /**
   * Three more free loopback ports, for the processes a row starts beside
   * its server (a second replica, Redis, a load balancer).
   */
  ports: number[];
}

/**
 * A process a row starts before its server (Redis, a second replica, a
 * load balancer), in order, each waited for until `port` accepts
 * connections, and ended by its PID after the row.
 */
export interface RowProcess {
  /** What it is, as a reason names it: `redis-server`, `replica B`. */
  name: string;
  /** Its command; an absolute path that is missing makes the row not run. */
  command: string[];
  port: number;
  /** Files it needs (a configuration), by path under `workDir`. */
  files?: Record<string, string>;
}

/**
 * How the probe reaches a row's server: over HTTP at `url` (started by the
 * runner with `command` first, when there is one), or over stdio, the
 * probe starting `command` itself. `env` is added to the environment of
 * whichever starts it.
 */
export type RowTarget =
  | {
    kind: "http";
    url: string;
    command?: string[];
    env?: Record<string, string>;
    /** Started before `command`, in order; stopped after the row. */
    processes?: RowProcess[];
  }
  | { kind: "stdio"; command: string[]; env?: Record<string, string> };

/** One probe run: one transport, one era (and mode, for a proxy). */
export interface ServerRowDefinition {
  /** The report's file name in `results/servers/`, and `--only`'s name. */
  slug: string;
  era: Era;
  /** A proxy's mode ("stateful", "default"). */
  mode?: string;
  target(context: RowContext): RowTarget;
  /** The probe's flags beyond target and era: `--uri`, `--call`, `--change`, `--catalog`. */
  probeArgs(context: RowContext): string[];
  /** Files the row needs before it runs, by path under `workDir`. */
  files?: Record<string, string>;
}

/** A server or proxy of the tables. */
export interface ServerDefinition {
  table: ServerTable;
  /** `--only`'s name for all of its rows. */
  id: string;
  /** As the table names it: the npm package. */
  displayName: string;
  /** The pinned package; none for the lab itself. */
  npm?: Installable;
  /** Instead, a pinned PyPI package in a virtual environment of its own. */
  pypi?: PypiServer;
  /** Instead, a program of this checkout in a compiled language, built once. */
  built?: BuiltServer;
  /** Proxies: what stands behind them. */
  behind?: string;
  /** Runs only where Debian's Chromium is. */
  needsChromium?: boolean;
  rows: ServerRowDefinition[];
}

/**
 * A PyPI package in a virtual environment whose requirements file (in this
 * checkout) pins it and every package it pulls in; a server program of this
 * checkout runs on it, or the package's own module does.
 */
export interface PypiServer {
  /** The package, as the table names its version. */
  package: string;
  version: string;
  /** The requirements' path relative to the repository's root. */
  environment: PythonEnvironment;
  /** The program this checkout runs on it, relative to the root (`context.bin`). */
  program?: string;
}

/**
 * A server program of this checkout on a pinned package of a compiled
 * language (its lock file pins the rest), built once (`build_once.ts`);
 * `context.bin` is its executable.
 */
export interface BuiltServer {
  /** The package, as the table names its version. */
  package: string;
  version: string;
  program: BuiltProgram;
  /**
   * `false` for a program its package manager could write no lock file for
   * (the package is on no registry here): there is no pin for the watch to
   * ask about, and its build fails with the manager's reason.
   */
  lockFile?: false;
}

/** Where the puppeteer server's Chromium comes from: Debian's package. */
export const CHROMIUM_PATH = "/usr/bin/chromium";

/**
 * What of its catalog the lab changes at its update, wherever it runs for
 * the table: every list, so that each row in front of it shows which
 * changes reach a client.
 */
export const LAB_CATALOG_CHANGE = "all";

/** The lab over stdio, update after 1 s: what stands behind a proxy. */
function labStdio(context: RowContext): string[] {
  return [
    context.deno,
    "run",
    "-A",
    context.labMain,
    "--stdio",
    "--delay",
    "1",
    "--catalog-change",
    LAB_CATALOG_CHANGE,
  ];
}

/**
 * The probe's flags for the lab, itself or behind a proxy: a wait long
 * enough for its update after 1 s, and every list of its catalog watched.
 */
const LAB_PROBE_ARGS = [
  "--timeout",
  "8",
  "--catalog",
  "tools,prompts,resources",
];

const LAB: ServerDefinition = {
  table: "servers",
  id: "lab",
  displayName: "mcp-resource-subscription-lab",
  rows: (["2025", "2026-07-28"] as const).flatMap((era) => [
    {
      slug: `lab-http-${era}`,
      era,
      target: (context: RowContext): RowTarget => ({
        kind: "http",
        url: context.labUrl,
      }),
      probeArgs: () => LAB_PROBE_ARGS,
    },
    {
      slug: `lab-stdio-${era}`,
      era,
      target: (context: RowContext): RowTarget => ({
        kind: "stdio",
        command: labStdio(context),
      }),
      probeArgs: () => LAB_PROBE_ARGS,
    },
  ]),
};

/**
 * Its dynamic resources embed the time of the read, to the second; its
 * `toggle-subscriber-updates` tool starts a notification at once, then one
 * every 5 s. Its `gzip-file-as-resource` tool adds a resource to the
 * session's list, with `notifications/resources/list_changed`: rows of
 * their own, the catalog alone, since one run calls one tool. SDK 1.32:
 * the 2025 era only.
 */
const EVERYTHING: ServerDefinition = {
  table: "servers",
  id: "everything",
  displayName: "@modelcontextprotocol/server-everything",
  npm: {
    id: "server-everything",
    npmPackage: "@modelcontextprotocol/server-everything",
    version: "2026.8.31",
    bin: "mcp-server-everything",
  },
  rows: [
    {
      slug: "everything-http-2025",
      era: "2025",
      target: (context) => ({
        kind: "http",
        url: `http://127.0.0.1:${context.port}/mcp`,
        command: [context.node, context.bin, "streamableHttp"],
        env: { PORT: String(context.port) },
      }),
      probeArgs: everythingArgs,
    },
    {
      slug: "everything-stdio-2025",
      era: "2025",
      target: (context) => ({
        kind: "stdio",
        command: [context.node, context.bin, "stdio"],
      }),
      probeArgs: everythingArgs,
    },
    {
      slug: "everything-catalog-http-2025",
      era: "2025",
      mode: "catalog only",
      target: (context) => ({
        kind: "http",
        url: `http://127.0.0.1:${context.port}/mcp`,
        command: [context.node, context.bin, "streamableHttp"],
        env: { PORT: String(context.port) },
      }),
      probeArgs: everythingCatalogArgs,
    },
    {
      slug: "everything-catalog-stdio-2025",
      era: "2025",
      mode: "catalog only",
      target: (context) => ({
        kind: "stdio",
        command: [context.node, context.bin, "stdio"],
      }),
      probeArgs: everythingCatalogArgs,
    },
  ],
};

/** A gzip of inline data (no network), kept as a resource of the session. */
function everythingCatalogArgs(): string[] {
  return [
    "--catalog",
    "resources",
    "--catalog-only",
    "--call",
    "gzip-file-as-resource",
    "--call-args",
    JSON.stringify({ name: "probe.txt.gz", data: "data:text/plain,probe" }),
    "--timeout",
    "10",
  ];
}

function everythingArgs(): string[] {
  return [
    "--uri",
    "demo://resource/dynamic/text/1",
    "--skip-list-check",
    "--call",
    "toggle-subscriber-updates",
    "--timeout",
    "15",
  ];
}

/**
 * Its knowledge graph, changed by any of its mutating tools; the store is a
 * fresh file per run (a second `create_entities` of the same name changes
 * nothing, yet notifies). stdio, 2025 only.
 */
const MEMORY: ServerDefinition = {
  table: "servers",
  id: "memory",
  displayName: "@modelcontextprotocol/server-memory",
  npm: {
    id: "server-memory",
    npmPackage: "@modelcontextprotocol/server-memory",
    version: "2026.8.31",
    bin: "mcp-server-memory",
  },
  rows: [{
    slug: "memory-stdio-2025",
    era: "2025",
    target: (context) => ({
      kind: "stdio",
      command: [context.node, context.bin],
      env: { MEMORY_FILE_PATH: `${context.workDir}/graph.jsonl` },
    }),
    probeArgs: () => [
      "--uri",
      "memory://knowledge-graph",
      "--call",
      "create_entities",
      "--call-args",
      JSON.stringify({
        entities: [{
          name: "probe-entity",
          entityType: "test",
          observations: ["created by the probe"],
        }],
      }),
      "--timeout",
      "10",
    ],
  }],
};

/** The watched file, and another beside it so that a page of one is cut. */
const FILESYSTEM_FILES = {
  "root/watched.txt": "first line\n",
  "root/other.txt": "another file\n",
};

/**
 * Files under its allowed root, watched for changes, in both eras (SDK v2).
 * Needs Node 24; its `@adguard/re2-wasm@^1.2.1` was never published, so
 * 1.2.0 is pinned by an override. Over HTTP in 2025 it does not advertise
 * subscriptions, by design: such an instance lives for one request. A tool
 * result cut to a page (`list` of a root with two files, a page of one)
 * is kept whole as a resource, added to its resources list with
 * `notifications/resources/list_changed`: the `--call` before the
 * `--change`, the catalog watched in the same run.
 */
const FILESYSTEM: ServerDefinition = {
  table: "servers",
  id: "filesystem",
  displayName: "@j0hanz/filesystem-mcp",
  npm: {
    id: "filesystem-mcp",
    npmPackage: "@j0hanz/filesystem-mcp",
    version: "2.5.0",
    bin: "filesystem-mcp",
    runtime: NODE_24,
    overrides: { "@adguard/re2-wasm": "1.2.0" },
  },
  rows: (["2025", "2026-07-28"] as const).flatMap((era) => [
    {
      slug: `filesystem-http-${era}`,
      era,
      files: FILESYSTEM_FILES,
      target: (context: RowContext): RowTarget => ({
        kind: "http",
        url: `http://127.0.0.1:${context.port}/mcp`,
        command: [
          context.node,
          context.bin,
          "--port",
          String(context.port),
          `${context.workDir}/root`,
        ],
      }),
      probeArgs: filesystemArgs,
    },
    {
      slug: `filesystem-stdio-${era}`,
      era,
      files: FILESYSTEM_FILES,
      target: (context: RowContext): RowTarget => ({
        kind: "stdio",
        command: [context.node, context.bin, `${context.workDir}/root`],
      }),
      probeArgs: filesystemArgs,
    },
  ]),
};

function filesystemArgs(context: RowContext): string[] {
  const root = `${context.workDir}/root`;
  const file = `${root}/watched.txt`;
  return [
    "--uri",
    `filesystem-mcp://file/${file}`,
    "--skip-list-check",
    "--call",
    "list",
    "--call-args",
    JSON.stringify({ path: root, maxEntries: 1 }),
    "--change",
    `echo appended >> ${shellQuote(file)}`,
    "--catalog",
    "resources",
    "--timeout",
    "10",
  ];
}

/**
 * Deprecated, and the one found that notifies without being asked: every
 * console message of its browser page is a `console://logs` update, with
 * no `resources.subscribe` advertised. Each screenshot is a resource more,
 * announced with `notifications/resources/list_changed` though it does not
 * advertise `resources.listChanged`: a row of its own, the catalog alone.
 * Debian's Chromium, headless, with every request off loopback sent
 * nowhere.
 */
const PUPPETEER: ServerDefinition = {
  table: "servers",
  id: "puppeteer",
  displayName: "@modelcontextprotocol/server-puppeteer",
  npm: {
    id: "server-puppeteer",
    npmPackage: "@modelcontextprotocol/server-puppeteer",
    version: "2025.5.12",
    bin: "mcp-server-puppeteer",
    installEnv: { PUPPETEER_SKIP_DOWNLOAD: "1" },
  },
  needsChromium: true,
  rows: [{
    slug: "puppeteer-stdio-2025",
    era: "2025",
    target: puppeteerTarget,
    probeArgs: () => [
      "--uri",
      "console://logs",
      "--call",
      "puppeteer_evaluate",
      "--call-args",
      JSON.stringify({ script: 'console.log("from the probe"); 1' }),
      "--timeout",
      "10",
    ],
  }, {
    slug: "puppeteer-catalog-stdio-2025",
    era: "2025",
    mode: "catalog only",
    target: puppeteerTarget,
    probeArgs: () => [
      "--catalog",
      "resources",
      "--catalog-only",
      "--call",
      "puppeteer_screenshot",
      "--call-args",
      JSON.stringify({ name: "probe" }),
      "--timeout",
      "10",
    ],
  }],
};

/** The puppeteer server over stdio, its browser Debian's Chromium. */
function puppeteerTarget(context: RowContext): RowTarget {
  return {
    kind: "stdio",
    command: [context.node, context.bin],
    env: {
      // --no-sandbox is on its list of dangerous arguments.
      ALLOW_DANGEROUS: "true",
      PUPPETEER_LAUNCH_OPTIONS: JSON.stringify({
        headless: true,
        executablePath: CHROMIUM_PATH,
        args: [
          "--no-sandbox",
          "--proxy-server=http://127.0.0.1:9",
          "--host-resolver-rules=MAP * ~NOTFOUND",
        ],
      }),
    },
  };
}

/** `--port P -- <the lab over stdio>`: HTTP in front, both eras. */
const MCP_PROXY: ServerDefinition = {
  table: "proxies",
  id: "mcp-proxy",
  displayName: "mcp-proxy",
  behind: "the lab over stdio",
  npm: {
    id: "mcp-proxy",
    npmPackage: "mcp-proxy",
    version: "6.7.19",
    bin: "mcp-proxy",
  },
  rows: (["2025", "2026-07-28"] as const).map((era) => ({
    slug: `mcp-proxy-${era}`,
    era,
    target: (context: RowContext): RowTarget => ({
      kind: "http",
      url: `http://127.0.0.1:${context.port}/mcp`,
      command: [
        context.node,
        context.bin,
        "--host",
        "127.0.0.1",
        "--port",
        String(context.port),
        "--",
        ...labStdio(context),
      ],
    }),
    probeArgs: () => LAB_PROBE_ARGS,
  })),
};

/**
 * The Python mcp-proxy (PyPI, on the Python SDK 1.x), stdio to Streamable
 * HTTP, run as its module by its environment's Python; the lab's stdio
 * child gets the proxy's environment (`--pass-environment`).
 */
const MCP_PROXY_PYTHON: ServerDefinition = {
  table: "proxies",
  id: "mcp-proxy-python",
  displayName: "mcp-proxy (PyPI)",
  behind: "the lab over stdio",
  pypi: {
    package: "mcp-proxy",
    version: "0.13.0",
    environment: {
      id: "mcp-proxy",
      requirements: "clients/programs/python/mcp_proxy_requirements.txt",
    },
  },
  rows: (["2025", "2026-07-28"] as const).map((era) => ({
    slug: `mcp-proxy-python-${era}`,
    era,
    target: (context: RowContext): RowTarget => ({
      kind: "http",
      url: `http://127.0.0.1:${context.port}/mcp`,
      command: [
        context.python,
        "-m",
        "mcp_proxy",
        "--host",
        "127.0.0.1",
        "--port",
        String(context.port),
        "--pass-environment",
        "--",
        ...labStdio(context),
      ],
    }),
    probeArgs: () => LAB_PROBE_ARGS,
  })),
};

/**
 * stdio to Streamable HTTP; by default stateless (a new child per
 * request), `--stateful` keeps one per session. It binds every interface.
 */
const SUPERGATEWAY: ServerDefinition = {
  table: "proxies",
  id: "supergateway",
  displayName: "supergateway",
  behind: "the lab over stdio",
  npm: {
    id: "supergateway",
    npmPackage: "supergateway",
    version: "4.0.0",
    bin: "supergateway",
  },
  rows: (["default", "stateful"] as const).flatMap((mode) =>
    (["2025", "2026-07-28"] as const).map((era) => ({
      slug: `supergateway-${mode}-${era}`,
      era,
      mode,
      target: (context: RowContext): RowTarget => ({
        kind: "http",
        url: `http://127.0.0.1:${context.port}/mcp`,
        command: [
          context.node,
          context.bin,
          "--stdio",
          labStdio(context).map(shellQuote).join(" "),
          "--outputTransport",
          "streamableHttp",
          "--port",
          String(context.port),
          ...mode === "stateful" ? ["--stateful"] : [],
        ],
      }),
      probeArgs: () => LAB_PROBE_ARGS,
    }))
  ),
};

/** stdio in front of the lab over HTTP; its OAuth state in the row's folder. */
const MCP_REMOTE: ServerDefinition = {
  table: "proxies",
  id: "mcp-remote",
  displayName: "mcp-remote",
  behind: "the lab over HTTP",
  npm: {
    id: "mcp-remote",
    npmPackage: "mcp-remote",
    version: "0.15.1",
    bin: "mcp-remote",
  },
  rows: (["2025", "2026-07-28"] as const).map((era) => ({
    slug: `mcp-remote-${era}`,
    era,
    target: (context: RowContext): RowTarget => ({
      kind: "stdio",
      command: [context.node, context.bin, context.labUrl],
      env: { MCP_REMOTE_CONFIG_DIR: `${context.workDir}/mcp-remote` },
    }),
    probeArgs: () => LAB_PROBE_ARGS,
  })),
};

/** The board server's task, the same in each row: the server starts fresh. */
const BOARD_TASK = { board: "sprint", task: "design" };

/**
 * A board server's rows: both eras, over HTTP and stdio, on both ladders:
 * the resource in one row (`resourceArgs`: its URI, `complete_task` and
 * its arguments), the tools list alone in another, after `enable_reports`
 * (one run calls one tool).
 */
function boardRows(
  id: string,
  target: (transport: "http" | "stdio", context: RowContext) => RowTarget,
  resourceArgs: string[],
): ServerRowDefinition[] {
  return (["2025", "2026-07-28"] as const).flatMap((era) =>
    (["http", "stdio"] as const).flatMap((transport) => [
      {
        slug: `${id}-${transport}-${era}`,
        era,
        target: (context: RowContext) => target(transport, context),
        probeArgs: () => [...resourceArgs, "--timeout", "8"],
      },
      {
        slug: `${id}-catalog-${transport}-${era}`,
        era,
        mode: "catalog only",
        target: (context: RowContext) => target(transport, context),
        probeArgs: () => [
          "--catalog",
          "tools",
          "--catalog-only",
          "--call",
          "enable_reports",
          "--timeout",
          "8",
        ],
      },
    ])
  );
}

/**
 * A board server over Streamable HTTP on the row's port, or over stdio;
 * `program` is how it starts (a Python program on its environment's
 * Python, a built one by itself).
 */
function boardTarget(program: (context: RowContext) => string[]) {
  return (transport: "http" | "stdio", context: RowContext): RowTarget =>
    transport === "http"
      ? {
        kind: "http",
        url: `http://127.0.0.1:${context.port}/mcp`,
        command: [...program(context), "http", String(context.port)],
      }
      : { kind: "stdio", command: [...program(context), "stdio"] };
}

const pythonBoard = boardTarget((context) => [context.python, context.bin]);
const builtBoard = boardTarget((context) => [context.bin]);

/** The Python board server's resource check: its URI and its change. */
const PYTHON_BOARD_ARGS = [
  "--uri",
  "board://sprint",
  "--skip-list-check",
  "--call",
  "complete_task",
  "--call-args",
  JSON.stringify(BOARD_TASK),
];

/** How two replicas share what one publishes and stores. */
type ReplicaBus =
  | "memory"
  | "redis bus only"
  | "redis"
  | "redis behind haproxy";

/**
 * Two replicas of one server: A on the row's port, B on `ports[0]`, each a
 * `replica(port, redis)` command; with a Redis on `ports[1]` (nothing saved)
 * when `redis`; with HAProxy on `ports[2]` in front of them, as the probe's
 * `--url`, when `balancer` says how it routes.
 */
function replicaPair(context: RowContext, pair: {
  replica(port: number, redis: string | undefined): string[];
  redis: boolean;
  balancer?: { routing: Routing; eventStreams: boolean };
}): RowTarget {
  const [portB, redisPort, balancerPort] = context.ports;
  const redis = pair.redis ? `redis://127.0.0.1:${redisPort}` : undefined;
  const processes: RowProcess[] = redis
    ? [{
      name: "redis-server",
      command: redisServerCommand(redisPort),
      port: redisPort,
    }]
    : [];
  processes.push({
    name: "replica B",
    command: pair.replica(portB, redis),
    port: portB,
  });
  const { balancer } = pair;
  if (balancer) {
    const replicas = [context.port, portB];
    processes.push({
      name: "haproxy",
      command: [HAPROXY_PATH, "-db", "-f", "haproxy.cfg"],
      port: balancerPort,
      files: {
        "haproxy.cfg": haproxyConfig(balancerPort, replicas, balancer.routing, {
          eventStreams: balancer.eventStreams,
        }),
      },
    });
  }
  return {
    kind: "http",
    url: `http://127.0.0.1:${balancer ? balancerPort : context.port}/mcp`,
    command: pair.replica(context.port, redis),
    processes,
  };
}

/**
 * Two board servers, each with its own memory, or both on Redis for their
 * bus (and their board, but for `redis bus only`), behind HAProxy round
 * robin for `redis behind haproxy`. The probe's `--change-via` is always
 * replica B itself, so the change is made on the other replica whichever
 * one the balancer gave the stream.
 */
function replicaTarget(bus: ReplicaBus, context: RowContext): RowTarget {
  return replicaPair(context, {
    replica: (port, redis) => [
      context.python,
      context.bin,
      "http",
      String(port),
      ...!redis
        ? []
        : bus === "redis bus only"
        ? ["--bus", redis]
        : ["--bus", redis, "--store", redis],
    ],
    redis: bus !== "memory",
    ...bus === "redis behind haproxy" &&
      { balancer: { routing: "round-robin", eventStreams: false } },
  });
}

/**
 * Two replicas, the change made on B, the stream held on A (or through the
 * balancer): with each replica's memory, with Redis for the bus alone and
 * for bus and board, in 2026-07-28
 * (where `ctx.notify_resource_updated` goes through the bus) and, with
 * Redis, in 2025 (whose `send_resource_updated` does not).
 */
function replicaRows(): ServerRowDefinition[] {
  const rows: [string, Era, ReplicaBus, string][] = [
    ["memory", "2026-07-28", "memory", "2 replicas, in-memory bus"],
    [
      "redis-bus-only",
      "2026-07-28",
      "redis bus only",
      "2 replicas, Redis bus, board in each",
    ],
    ["redis", "2026-07-28", "redis", "2 replicas, Redis bus and board"],
    ["redis", "2025", "redis", "2 replicas, Redis bus and board"],
    [
      "haproxy-redis",
      "2026-07-28",
      "redis behind haproxy",
      "2 replicas behind HAProxy, Redis bus and board",
    ],
  ];
  return rows.map(([name, era, bus, mode]) => ({
    slug: `python-sdk-replicas-${name}-${era}`,
    era,
    mode,
    target: (context: RowContext) => replicaTarget(bus, context),
    probeArgs: (context: RowContext) => [
      ...PYTHON_BOARD_ARGS,
      "--change-via",
      `http://127.0.0.1:${context.ports[0]}/mcp`,
      "--timeout",
      "8",
    ],
  }));
}

/**
 * One board server without and with `--gate` (its middleware refusing a
 * watch on a URI nobody may read), the probe trying a URI the board does
 * not serve and `board://secret`, in both eras.
 */
function gateRows(): ServerRowDefinition[] {
  return (["2025", "2026-07-28"] as const).flatMap((era) =>
    ([false, true] as const).map((gate) => ({
      slug: `python-sdk-gate-${gate ? "on" : "off"}-${era}`,
      era,
      mode: gate ? "listen gate" : "no listen gate",
      target: (context: RowContext): RowTarget => ({
        kind: "http",
        url: `http://127.0.0.1:${context.port}/mcp`,
        command: [
          context.python,
          context.bin,
          "http",
          String(context.port),
          ...gate ? ["--gate"] : [],
        ],
      }),
      probeArgs: () => [
        ...PYTHON_BOARD_ARGS,
        "--watch-gate",
        "--unreadable-uri",
        "board://secret",
        "--timeout",
        "8",
      ],
    }))
  );
}

/**
 * The Python SDK v2's `MCPServer` in its documents' shape
 * (`clients/programs/python/board_server.py`): `complete_task` changes the
 * board resource, `enable_reports` adds the `sprint_report` tool. Its board
 * is a template, so it is not in `resources/list`.
 */
const PYTHON_SDK: ServerDefinition = {
  table: "servers",
  id: "python-sdk",
  displayName: "mcp (PyPI), board_server.py",
  pypi: {
    package: "mcp",
    version: "2.3.0",
    environment: {
      id: "board-server",
      requirements: "clients/programs/python/requirements.txt",
    },
    program: "clients/programs/python/board_server.py",
  },
  rows: [
    ...boardRows("python-sdk", pythonBoard, PYTHON_BOARD_ARGS),
    ...replicaRows(),
    ...gateRows(),
  ],
};

/**
 * The Go SDK's server in its documents' shape
 * (`clients/programs/go/go-sdk-server/`), built once with its `go.sum`:
 * one listed resource, `board://sprint`, JSON with a version;
 * `complete_task` publishes with `Server.ResourceUpdated`, `enable_reports`
 * adds `sprint_report` with `Server.AddTool`.
 */
const GO_SDK_SERVER: ServerDefinition = {
  table: "servers",
  id: "go-sdk-server",
  displayName: "go-sdk (Go), go-sdk-server",
  built: {
    package: "github.com/modelcontextprotocol/go-sdk",
    version: "1.8.0",
    program: {
      dir: new URL("../programs/go/go-sdk-server", import.meta.url).pathname,
      name: "go-sdk-server",
      recipe: GO_BUILD,
    },
  },
  rows: boardRows("go-sdk-server", builtBoard, [
    "--uri",
    "board://sprint",
    "--call",
    "complete_task",
    "--call-args",
    JSON.stringify({ task: "design" }),
  ]),
};

/**
 * The same board on the Rust SDK's server, rmcp
 * (`clients/programs/rust/rmcp-server/`, built once with its Cargo.lock):
 * a `ServerHandler` of its own whose tools list is a method, so
 * `enable_reports` adds `sprint_report` at run time. Its board is a listed
 * resource.
 */
const RMCP_SERVER: ServerDefinition = {
  table: "servers",
  id: "rmcp-server",
  displayName: "rmcp (crates.io), rmcp-server",
  built: {
    package: "rmcp",
    version: "3.11.0",
    program: builtProgramOf("rust", "rmcp-server"),
  },
  rows: boardRows("rmcp-server", builtBoard, [
    "--uri",
    "board://sprint",
    "--call",
    "complete_task",
    "--call-args",
    JSON.stringify(BOARD_TASK),
  ]),
};

/**
 * FastRMCP as its wiki shows it (`fastrmcp = "0.2"`, a `#[resource]` and a
 * `#[tool]` that changes it, resources/subscribe over stdio):
 * `clients/programs/rust/fastrmcp-server/`. crates.io serves no crate of
 * that name, so cargo can make no lock file for it and its build stops at
 * resolving the dependency; the row says what cargo says.
 */
const FASTRMCP_SERVER: ServerDefinition = {
  table: "servers",
  id: "fastrmcp-server",
  displayName: "fastrmcp (crates.io), fastrmcp-server",
  built: {
    package: "fastrmcp",
    version: "0.2",
    program: builtProgramOf("rust", "fastrmcp-server"),
    lockFile: false,
  },
  rows: [{
    slug: "fastrmcp-server-stdio-2025",
    era: "2025",
    target: (context: RowContext) => ({
      kind: "stdio",
      command: [context.bin],
    }),
    probeArgs: () => [
      "--uri",
      "board://sprint",
      "--call",
      "complete_next_task",
      "--timeout",
      "8",
    ],
  }],
};

/** How a pair of the lab's replicas is set up for one row. */
interface LabReplicaRow {
  name: string;
  era: Era;
  mode: string;
  bus: boolean;
  balancer?: Routing;
  /** The probe makes the change through replica B (`--trigger wait`). */
  changeViaB: boolean;
}

/**
 * The lab itself as two replicas (`--bus`), update after 1 s. With the
 * change made through replica B, the only start of a series is the probe's
 * wait tool call there (`--trigger wait`), the stream held on A or through
 * HAProxy: lost without the bus, delivered with it. Through the balancer
 * without `--change-via`, a 2025 session sticky or round robin.
 */
const LAB_REPLICA_ROWS: LabReplicaRow[] = [
  {
    name: "memory",
    era: "2026-07-28",
    mode: "2 replicas, no bus",
    bus: false,
    changeViaB: true,
  },
  {
    name: "redis",
    era: "2026-07-28",
    mode: "2 replicas, --bus",
    bus: true,
    changeViaB: true,
  },
  {
    name: "haproxy-redis",
    era: "2026-07-28",
    mode: "2 replicas behind HAProxy round robin, --bus",
    bus: true,
    balancer: "round-robin",
    changeViaB: true,
  },
  {
    name: "haproxy-sticky-redis",
    era: "2025",
    mode: "2 replicas behind HAProxy sticky, --bus",
    bus: true,
    balancer: "sticky",
    changeViaB: false,
  },
  {
    name: "haproxy-redis",
    era: "2025",
    mode: "2 replicas behind HAProxy round robin, --bus",
    bus: true,
    balancer: "round-robin",
    changeViaB: false,
  },
];

const LAB_REPLICAS: ServerDefinition = {
  table: "servers",
  id: "lab-replicas",
  displayName: "mcp-resource-subscription-lab (replicas)",
  rows: LAB_REPLICA_ROWS.map((row) => ({
    slug: `lab-replicas-${row.name}-${row.era}`,
    era: row.era,
    mode: row.mode,
    target: (context: RowContext) =>
      replicaPair(context, {
        replica: (port, redis) => [
          context.deno,
          ...["run", "-A", context.labMain, "--port", String(port)],
          ...["--delay", "1", "--catalog-change", LAB_CATALOG_CHANGE],
          ...row.changeViaB ? ["--trigger", "wait", "--enable-wait-tool"] : [],
          ...redis ? ["--bus", redis] : [],
        ],
        redis: row.bus,
        ...row.balancer &&
          { balancer: { routing: row.balancer, eventStreams: true } },
      }),
    probeArgs: (context: RowContext) => [
      ...LAB_PROBE_ARGS,
      ...row.changeViaB
        ? [
          ...["--change-via", `http://127.0.0.1:${context.ports[0]}/mcp`],
          ...["--call", "wait_for_review_update"],
          ...["--call-args", JSON.stringify({ timeout_seconds: 5 })],
        ]
        : [],
    ],
  })),
};

/** Every server and proxy, in the tables' order. */
export const SERVER_CATALOG: ServerDefinition[] = [
  LAB,
  EVERYTHING,
  MEMORY,
  FILESYSTEM,
  PUPPETEER,
  PYTHON_SDK,
  LAB_REPLICAS,
  GO_SDK_SERVER,
  RMCP_SERVER,
  FASTRMCP_SERVER,
  MCP_PROXY,
  MCP_PROXY_PYTHON,
  SUPERGATEWAY,
  MCP_REMOTE,
];
