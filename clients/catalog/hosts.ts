/**
 * The hosts driven in a real browser: the MCP Inspector's web UI and VS
 * Code (code-server).
 *
 * @module
 */

import { REVIEW_URI } from "../../main.ts";
import { NODE_24 } from "../support/install.ts";
import { FAKE_API_KEY } from "../model/scripted_model.ts";
import {
  type BrowserClientDefinition,
  type CodeServerDefinition,
  type InspectorWebDefinition,
  SERVER,
} from "./types.ts";
import {
  INSPECTOR_ENV,
  INSPECTOR_PACKAGE,
  INSPECTOR_VERSION,
  inspectorEra,
} from "./commands.ts";

/**
 * The MCP Inspector's web UI. `--web` with an ad-hoc server seeds its server
 * list with the lab, and `--protocol-era` is how the UI picks the era (the
 * server card has no era control in a read-only session).
 */
const INSPECTOR_WEB: InspectorWebDefinition = {
  kind: "browser",
  ui: "inspector",
  group: "inspector",
  id: "inspector-web",
  displayName: "Inspector web UI",
  npmPackage: INSPECTOR_PACKAGE,
  version: INSPECTOR_VERSION,
  bin: "mcp-inspector",
  modes: ["default", "2026-07-28"],
  env: { ...INSPECTOR_ENV, MCP_AUTO_OPEN_ENABLED: "false" },
  serveArgs({ labUrl, mode }) {
    return [
      "--web",
      "--server-url",
      labUrl,
      "--transport",
      "http",
      "--protocol-era",
      inspectorEra(mode),
    ];
  },
};

/**
 * The URI VS Code gives the lab's resource (its editor tab, the chat's
 * attachment, `read_file`): the server's id from the user's `mcp.json` in
 * the remote (code-server) in hex, then the resource's scheme and path.
 */
export function vscodeResourceUri(server = SERVER): string {
  const id = new TextEncoder().encode(`mcp.config.usrremote.${server}`);
  const hex = Array.from(id, (byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  return `mcp-resource://${hex}/${REVIEW_URI.replace("://", "/")}`;
}

/**
 * An unreachable loopback proxy for everything code-server's server side
 * fetches (Copilot's list of known models, the extension gallery): with
 * `http.noProxy` and NO_PROXY it still reaches the lab and the model.
 */
const DEAD_PROXY = "http://127.0.0.1:9";
const LOOPBACK = ["127.0.0.1", "localhost"];

const CODE_SERVER: CodeServerDefinition = {
  kind: "browser",
  ui: "code-server",
  id: "vscode",
  displayName: "VS Code (code-server)",
  npmPackage: "code-server",
  version: "4.139.1",
  bin: "code-server",
  // VS Code 1.139 speaks 2025-11-25 only: no 2026-07-28 mode.
  modes: ["default", "stdio"],
  // code-server 4.139 refuses any Node but 24 at install.
  runtime: NODE_24,
  // Its install builds native modules with node-gyp (kerberos needs
  // libkrb5-dev), which python3 runs; the set it installed with here.
  debianPackages: [
    "build-essential",
    "pkg-config",
    "python3",
    "libkrb5-dev",
    "libx11-dev",
    "libxkbfile-dev",
    "libsecret-1-dev",
  ],
  chatWire: "openai-chat",
  chatModelName: "Scripted lab model",
  env: {
    // No extension gallery (code-server asks open-vsx.org otherwise).
    EXTENSIONS_GALLERY: "{}",
    HTTP_PROXY: DEAD_PROXY,
    HTTPS_PROXY: DEAD_PROXY,
    NO_PROXY: LOOPBACK.join(","),
  },
  serveArgs({ port, userDataDir, extensionsDir, workspace }) {
    return [
      "--auth",
      "none",
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--user-data-dir",
      userDataDir,
      "--extensions-dir",
      extensionsDir,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      workspace,
    ];
  },
  files({ userDataDir, lab, modelOrigin }) {
    const user = `${userDataDir}/User`;
    return {
      [`${user}/settings.json`]: JSON.stringify({
        "workbench.startupEditor": "none",
        "telemetry.telemetryLevel": "off",
        "update.mode": "none",
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "workbench.enableExperiments": false,
        "http.proxy": DEAD_PROXY,
        "http.noProxy": LOOPBACK,
      }),
      [`${user}/mcp.json`]: JSON.stringify({ servers: { [SERVER]: lab } }),
      // A custom endpoint (the built-in Copilot Chat's bring-your-own-key
      // provider): the chat uses it without a sign-in.
      [`${user}/chatLanguageModels.json`]: JSON.stringify([{
        name: "Lab",
        vendor: "customendpoint",
        apiKey: FAKE_API_KEY,
        apiType: "chat-completions",
        models: [{
          id: "scripted",
          name: "Scripted lab model",
          url: `${modelOrigin}/v1/chat/completions`,
          toolCalling: true,
          vision: false,
          maxInputTokens: 128000,
          maxOutputTokens: 4096,
        }],
      }]),
    };
  },
  chatScript(workspace) {
    return {
      read: {
        name: "read_file",
        input: { filePath: vscodeResourceUri(), startLine: 1, endLine: 20 },
      },
      nudge: { name: "list_dir", input: { path: workspace } },
    };
  },
};

export const BROWSER_CLIENTS: BrowserClientDefinition[] = [
  INSPECTOR_WEB,
  CODE_SERVER,
];
