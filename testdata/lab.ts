/**
 * What the lab's tests, the probe's, the benchmark and the harness share:
 * the same environment on any machine (and what a child Deno needs of it),
 * the checkout's paths, the resource's texts, and the lab on a free
 * loopback port, in this process (`startLab`) or as a subprocess
 * (`spawnLab`).
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test;
 * the lab's side imports nothing from `clients/`, which imports this.
 *
 * @module
 */

import { createLab, loadConfig } from "../main.ts";

/** The checkout's entry points, as paths for `deno run`. */
export const MAIN_PATH = new URL("../main.ts", import.meta.url).pathname;
export const PROBE_PATH = new URL("../probe.ts", import.meta.url).pathname;

/** The resource's text at version 1 and 2, with the default status words. */
export const VERSION_1_TEXT = [
  "status: pending",
  "version: 1",
  "message: Waiting for simulated review result.",
].join("\n");
export const VERSION_2_TEXT = [
  "status: reviewed",
  "version: 2",
  "message: Simulated review result is now available.",
].join("\n");

/** The loopback hosts: the lab, the scripted model and the relays. */
const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"];

/**
 * Makes this process, and every child that inherits its environment, reach
 * loopback directly whatever proxy HTTP_PROXY, HTTPS_PROXY or ALL_PROXY
 * names: Deno's fetch sends even 127.0.0.1 through them, unless NO_PROXY
 * lists it. Adds the loopback hosts to NO_PROXY and no_proxy, keeping what
 * they held, so the registries are still reached through the proxy. Must
 * run before the first fetch, which reads them once.
 */
export function bypassProxyForLoopback() {
  for (const name of ["NO_PROXY", "no_proxy"]) {
    const listed = (Deno.env.get(name) ?? "").split(",").map((host) =>
      host.trim()
    ).filter(Boolean);
    const missing = LOOPBACK_HOSTS.filter((host) => !listed.includes(host));
    if (missing.length > 0) {
      Deno.env.set(name, [...listed, ...missing].join(","));
    }
  }
}

/**
 * Makes a test file, and every process it starts, behave the same on any
 * machine: loopback reached directly whatever proxy the environment names
 * (`bypassProxyForLoopback`), no colour, no update check. The proxy and
 * certificate variables stay, so that a child Deno reaches the registries
 * as this one does. Called at the top of each test file that starts a
 * process or fetches, before its first fetch.
 */
export function prepareTestEnvironment() {
  bypassProxyForLoopback();
  Deno.env.set("NO_COLOR", "1");
  Deno.env.set("DENO_NO_UPDATE_CHECK", "1");
}

/**
 * What a child Deno needs to find the packages this one uses, and to reach
 * the registries as it does: its cache, certificates, proxies, registry and
 * tokens, and the quiet settings `prepareTestEnvironment` sets.
 */
const DENO_CHILD_VARIABLES = [
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "DENO_CERT",
  "DENO_TLS_CA_STORE",
  ...["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"].flatMap((
    name,
  ) => [name, name.toLowerCase()]),
  "NPM_CONFIG_REGISTRY",
  "DENO_AUTH_TOKENS",
  "NO_COLOR",
  "DENO_NO_UPDATE_CHECK",
];

/**
 * For a Deno child that does not inherit this environment (the MCP SDK's
 * `StdioClientTransport` hands a server only HOME, LOGNAME, PATH, SHELL,
 * TERM and USER): the variables of `DENO_CHILD_VARIABLES` this process
 * has, so that it looks in the same cache and can download what is
 * missing. Some values are secrets (a token, a proxy's password): pass
 * them on, never print them.
 */
export function denoChildEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of DENO_CHILD_VARIABLES) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A free loopback port, for servers that cannot pick their own. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/**
 * The lab in this process on a free loopback port (updates 0.2 s after the
 * trigger), its log lines kept in `lines`; disposed, it closes.
 */
export function startLab(env: Record<string, string> = {}) {
  const config = loadConfig({
    MCP_TEST_UPDATE_DELAY_SECONDS: "0.2",
    MCP_TEST_LOG_LEVEL: "info",
    ...env,
  });
  const lines: string[] = [];
  const lab = createLab(config, (line) => lines.push(line));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    lab.fetch,
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  return {
    lab,
    lines,
    base,
    url: new URL(`${base}/mcp`),
    async [Symbol.asyncDispose]() {
      await lab.close();
      await server.shutdown();
    },
  };
}

/** How to run the lab: its `main.ts`, flags and environment. */
export interface LabCommandOptions {
  /** Path to the lab's `main.ts`. */
  mainPath: string;
  /** Flags after `main.ts`. */
  args?: string[];
  /** Deno flags before `main.ts`, after `-A` (the benchmark's `--inspect`). */
  runFlags?: string[];
  /** Added to this process's environment. */
  env?: Record<string, string>;
  cwd?: string;
}

/** `deno run -A main.ts [args]`, stdin closed, stdout and stderr piped. */
export function labCommand(options: LabCommandOptions): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...options.runFlags ?? [],
      options.mainPath,
      ...options.args ?? [],
    ],
    env: options.env,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

export interface SpawnLabOptions extends LabCommandOptions {
  /** Each chunk of the lab's stdout and stderr, as it comes. */
  onOutput?: (
    chunk: Uint8Array,
    stream: "stdout" | "stderr",
  ) => void | Promise<void>;
  /** How long the lab may take to print its listening line (60 s). */
  timeoutMs?: number;
  /** Aborting it kills a lab that is still starting. */
  signal?: AbortSignal;
  /** Whether `lines` keeps every stdout line (true); false keeps none. */
  keepLines?: boolean;
}

/** A lab subprocess that is listening. */
export interface SpawnedLab {
  child: Deno.ChildProcess;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** The MCP endpoint, `${origin}/mcp`. */
  url: string;
  /** Every stdout line so far, the listening line included, until it exits. */
  lines: string[];
  /** Settles once the lab's stdout and stderr have ended. */
  drained: Promise<void>;
  /** SIGTERM, SIGKILL after `graceMs` (5 s); resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** The line the lab prints on stdout once it listens. */
const LISTENING = /^listening on (http:\/\/127\.0\.0\.1:(\d+))\/mcp$/;

/** Signals the child this process started, if it is still there. */
function signal(child: Deno.ChildProcess, name: Deno.Signal) {
  try {
    child.kill(name);
  } catch {
    // Already gone.
  }
}

/**
 * Runs the lab on a free port (`MCP_TEST_PORT=0` unless `env` says
 * otherwise) and resolves once it prints its listening line. A lab that
 * exits first, is too slow, or is aborted is killed, and the promise rejects.
 */
export async function spawnLab(options: SpawnLabOptions): Promise<SpawnedLab> {
  const { onOutput, timeoutMs = 60_000 } = options;
  options.signal?.throwIfAborted();
  const child = labCommand({
    ...options,
    env: { MCP_TEST_PORT: "0", ...options.env },
  }).spawn();
  const lines: string[] = [];
  const listening = Promise.withResolvers<RegExpMatchArray>();
  const readStdout = async () => {
    const decoder = new TextDecoder();
    let partial = "";
    const take = (line: string) => {
      if (options.keepLines ?? true) lines.push(line);
      const match = line.match(LISTENING);
      if (match) listening.resolve(match);
    };
    for await (const chunk of child.stdout) {
      await onOutput?.(chunk, "stdout");
      const parts = (partial + decoder.decode(chunk, { stream: true }))
        .split("\n");
      partial = parts.pop()!;
      parts.forEach(take);
    }
    partial += decoder.decode();
    if (partial) take(partial);
  };
  const readStderr = async () => {
    for await (const chunk of child.stderr) await onOutput?.(chunk, "stderr");
  };
  const stdoutRead = readStdout();
  const drained = Promise.all([stdoutRead, readStderr()]).then(
    () => {},
    () => {},
  );
  // Resolving first makes these rejections no-ops.
  stdoutRead.then(async () => {
    const { code } = await child.status;
    listening.reject(new Error(`the lab exited (${code}) before listening`));
  }, (error) => listening.reject(error));
  const timeout = setTimeout(
    () =>
      listening.reject(
        new Error(`the lab did not listen within ${timeoutMs / 1000} s`),
      ),
    timeoutMs,
  );
  const abort = () =>
    listening.reject(new Error("the lab was stopped while starting"));
  options.signal?.addEventListener("abort", abort);
  let match: RegExpMatchArray;
  try {
    match = await listening.promise;
  } catch (error) {
    signal(child, "SIGKILL");
    await child.status;
    await drained;
    throw error;
  } finally {
    clearTimeout(timeout);
    options.signal?.removeEventListener("abort", abort);
  }
  const [, origin, port] = match;
  return {
    child,
    origin,
    port: Number(port),
    url: `${origin}/mcp`,
    lines,
    drained,
    async stop(graceMs = 5_000) {
      signal(child, "SIGTERM");
      const forced = setTimeout(() => signal(child, "SIGKILL"), graceMs);
      await child.status;
      clearTimeout(forced);
      await drained;
    },
  };
}
