/**
 * What the lab's and the probe's tests share: a clean environment, the
 * checkout's paths, the resource's texts, and the lab served in-process on a
 * free loopback port.
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test.
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

/**
 * Tests and the processes they start reach loopback directly and print the
 * same whatever this machine's environment holds: no proxy, no extra
 * certificates, no colour, no update check.
 */
export function prepareLabTests() {
  for (
    const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "SSL_CERT_FILE"]
  ) {
    Deno.env.delete(name);
    Deno.env.delete(name.toLowerCase());
  }
  Deno.env.set("NO_COLOR", "1");
  Deno.env.set("DENO_NO_UPDATE_CHECK", "1");
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
