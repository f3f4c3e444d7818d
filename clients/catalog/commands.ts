/**
 * The command clients: the MCP Inspector's command-line clients, run as a
 * fixed command sequence, no model.
 *
 * @module
 */

import { REVIEW_URI } from "../../main.ts";
import type { CommandClientDefinition, ModeId } from "./types.ts";

/** Seconds a subscription is kept open past the lab's update delay. */
export const STREAM_MARGIN_SECONDS = 3;

/** The Inspector's name for each mode's protocol era. */
export function inspectorEra(mode: ModeId): "legacy" | "modern" {
  return mode === "2026-07-28" ? "modern" : "legacy";
}

export const INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector";
export const INSPECTOR_VERSION = "2.12.0";
/**
 * The Inspector asks the OS keychain for its secret store and, on a machine
 * without one, warns and falls back to a file; say "file" (under the
 * isolated home) so every run is the same. No secret is stored: the lab
 * needs no auth.
 */
export const INSPECTOR_ENV = { MCP_INSPECTOR_SECRET_STORE: "file" };

export const COMMAND_CLIENTS: CommandClientDefinition[] = [
  {
    kind: "command",
    group: "inspector",
    id: "mcpdo",
    displayName: "mcpdo (MCP Inspector)",
    npmPackage: INSPECTOR_PACKAGE,
    version: INSPECTOR_VERSION,
    bin: "mcpdo",
    modes: ["default", "2026-07-28"],
    env: INSPECTOR_ENV,
    // `connect` starts a daemon that holds the connection between commands;
    // `resources/subscribe` prints each update until it is stopped.
    steps({ labUrl, mode, delaySeconds }) {
      return [
        {
          args: [
            "connect",
            labUrl,
            "--transport",
            "http",
            "--era",
            inspectorEra(mode),
          ],
        },
        {
          args: ["--connection", labUrl, "resources/subscribe", REVIEW_URI],
          streamSeconds: delaySeconds + STREAM_MARGIN_SECONDS,
        },
        { args: ["disconnect", labUrl] },
      ];
    },
    // The daemon runs in its own session, beyond the run's process group.
    daemon: {
      dirEnv: "MCP_INSPECTOR_DAEMON_DIR",
      pidFile: "mcpdod.lock",
      stopArgs: ["daemon", "stop"],
    },
  },
  {
    kind: "command",
    group: "inspector",
    id: "inspector-cli",
    displayName: "Inspector CLI",
    npmPackage: INSPECTOR_PACKAGE,
    version: INSPECTOR_VERSION,
    bin: "mcp-inspector",
    modes: ["default", "2026-07-28"],
    env: INSPECTOR_ENV,
    // One call per invocation: it connects, reads once and exits.
    steps({ labUrl, mode }) {
      return [{
        args: [
          "--cli",
          labUrl,
          "--transport",
          "http",
          "--protocol-era",
          inspectorEra(mode),
          "--method",
          "resources/read",
          "--uri",
          REVIEW_URI,
        ],
      }];
    },
  },
];
