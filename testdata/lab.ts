/**
 * What the lab's tests, the probe's and the harness's share: the same
 * environment on any machine (and what a child Deno needs of it), the
 * probe's path, the resource's texts, and the lab in this process on a free
 * loopback port (`startLab`). The lab as a subprocess is `launch.ts`'s.
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test;
 * nothing but tests imports it.
 *
 * @module
 */

import { bypassProxyForLoopback } from "../launch.ts";
import { createLab, loadConfig } from "../main.ts";

/** The probe's entry point, as a path for `deno run`. */
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
