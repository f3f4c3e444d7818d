/**
 * MCP hosts the harness cannot run here, described from their source, and
 * the requests about resource subscriptions filed in each client's tracker.
 *
 * Every row says what the host does with resource subscriptions: whether it
 * subscribes (2025 `resources/subscribe`, or `subscriptions/listen` with
 * `resourceSubscriptions` on 2026-07-28) and what it does when a
 * `notifications/resources/updated` arrives. Each claim is backed by a
 * repository, the full commit that was read and exact lines there, or, for
 * a host published on npm only as a bundle, by the package, its file and
 * line and a quote of that line; a "no" cites where the host sets up its
 * notification handlers. The evidence kind
 * of these rows is "read from source, not run": no cell here is a
 * measurement. The requests list what each tracker showed on the date given.
 *
 * Data only; the strings are plain text, one line each, escaped when
 * rendered.
 *
 * @module
 */

/** One file and lines at one commit, and what the code there does. */
export interface SourceCitation {
  /** "owner/name" on GitHub. */
  repository: string;
  /** The full 40-hex commit that was read. */
  commit: string;
  path: string;
  /** "129" or "100-150": exact lines at that commit. */
  lines: string;
  /** What the code there does, in plain words. */
  says: string;
}

/**
 * A line of a published npm package, for code that has no public
 * repository (a host's bundle) or whose package is what users install (a
 * library's).
 */
export interface PackageCitation {
  /** The package as `name@version`: the host or library, or one it depends on. */
  package: string;
  /** The file inside the package (`dist/index.mjs`). */
  path: string;
  line: number;
  /** The line as published, or part of it (at most 120 characters). */
  quote: string;
  /** What the code there shows. */
  says: string;
}

/** A host the harness cannot run here, described from its source. */
export interface CitedHost {
  kind: "cited";
  /** Short, file-name safe, unique among all clients. */
  id: string;
  displayName: string;
  /** "code editor", "VS Code extension", "desktop app", "agent CLI", … */
  what: string;
  /** The version at the cited commit, when the repository states one. */
  version: string | null;
  subscribes: "yes" | "no" | "listen (2026-07-28) only";
  /** What the host does on `notifications/resources/updated`. */
  onUpdated: string;
  /** Why the harness does not run it here. */
  whyNotRun: string;
  citations: (SourceCitation | PackageCitation)[];
}

/** A request in a client's tracker about resource subscriptions. */
export interface UpstreamRequest {
  /** https://github.com/owner/name/issues/N (or pull/N). */
  url: string;
  title: string;
  /** As the tracker showed it on `checkedOn`; a merged pull is "closed". */
  state: "open" | "closed";
  /** ISO date the state was read. */
  checkedOn: string;
}

const CHECKED_ON = "2026-11-30";

const FAST_AGENT = "evalstate/fast-agent";
const FAST_AGENT_COMMIT = "610a2f575c469134479f2101f92255aa4bc642a3";
const GOOSE = "aaif-goose/goose";
const GOOSE_COMMIT = "04514c6d205809afd080495b563f389ab9b6fccd";
const CRUSH = "charmbracelet/crush";
const CRUSH_COMMIT = "37f36e93824e5c4f892e4a817f7f628e2682fe14";
const LETTA = "letta-ai/letta-code";
const LETTA_COMMIT = "1f4d3e3ea3537763f36b633e52b289bdb0667c5b";
const ZED = "zed-industries/zed";
const ZED_COMMIT = "7eec89207ccfbef7ba366da22fc885079a5c0296";
const CLINE = "cline/cline";
const CLINE_COMMIT = "21cb8d2525bcedf1f4b6890b27a74a14fe7451e4";
const ROO = "RooCodeInc/Roo-Code";
const ROO_COMMIT = "cb836567180a3ff1da6d082f3178b90c3bd22a70";
const CONTINUE = "continuedev/continue";
const CONTINUE_COMMIT = "d0a3c0b626b5bebc3bef4742eec05a0242be0bab";
const CHERRY = "CherryHQ/cherry-studio";
const CHERRY_COMMIT = "3425fbd9bc16d8cf8b58d780061e1129f0c4ff07";
const LIBRECHAT = "danny-avila/LibreChat";
const LIBRECHAT_COMMIT = "a0fda2cab1fc55ee050536340b8422fa6a60f831";
const FIVE_IRE = "nanbingxyz/5ire";
const FIVE_IRE_COMMIT = "d55f353ea507b192afdd77982fa03125e8a84084";
const VSCODE = "microsoft/vscode";
const AUGGIE = "@augmentcode/auggie@0.36.0";
const QODER = "@qoder-ai/qodercli@1.1.52";
const QODER_BUNDLE = "bundle/qodercli.js";
const OMP = "can1357/oh-my-pi";
const OMP_COMMIT = "02696f5bbdc8286223bdc84153b84f71125868d5";

const TS_SDK = "modelcontextprotocol/typescript-sdk";
const PROTOCOL_TS = "src/shared/protocol.ts";
const IGNORED_BY_TS_SDK =
  "the SDK looks up a handler for the method, then the fallback handler; with neither set it ignores the notification";

const EXTENSION_HOST =
  "a VS Code extension: it needs a VS Code window to run in, and the harness drives command-line clients and web UIs only";
const DESKTOP_APP =
  "an Electron desktop app: the harness drives command-line clients and web UIs only";

/** The hosts, in the order the matrix lists them. */
export const CITED_HOSTS: CitedHost[] = [
  {
    kind: "cited",
    id: "fast-agent",
    displayName: "fast-agent",
    what: "agent CLI and Python framework",
    version: "0.10.9",
    subscribes: "listen (2026-07-28) only",
    onUpdated:
      "On a 2026-07-28 listen stream any event makes it re-run discovery of that server (tools, prompts, app resources) past its cache; nothing reaches the conversation. On a 2025 connection it is dropped.",
    whyNotRun:
      "as a cited host; it runs as its own row (fast-agent go, pip-installed from PyPI on a Python 3.12 to 3.14 the harness finds), which these citations back",
    citations: [
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/mcp_connection_manager.py",
        lines: "491-496",
        says:
          "the subscription loop starts only when a listen filter exists; a connection without one gets no subscription at all",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/mcp_connection_manager.py",
        lines: "525-556",
        says:
          "the filter exists only when the server answered server/discover (2026-07-28); its resource URIs are asked for only if the server declares resources.subscribe",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/mcp_connection_manager.py",
        lines: "572-645",
        says:
          "opens client.listen with that filter, hands every event to the aggregator, and re-opens the stream whenever the set of URIs changes",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/mcp_aggregator.py",
        lines: "1192-1197",
        says:
          "the URIs it subscribes to are the interactive app resources (MCP Apps, OpenAI Apps SDK) found on that server, not resources the model read",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/app_integrations/models.py",
        lines: "37-48",
        says:
          "an app resource is an interactive app resource with a URI and an app kind",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/mcp_aggregator.py",
        lines: "1199-1224",
        says:
          "a listen event only logs and forces a fresh attachment discovery of that server; nothing is added to the conversation",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/client_callback_runtime.py",
        lines: "254-265",
        says:
          "the message handler for ordinary notifications acts on progress and tools/list_changed and passes everything else to the aggregator's notification callback",
      },
      {
        repository: FAST_AGENT,
        commit: FAST_AGENT_COMMIT,
        path: "src/fast_agent/mcp/mcp_aggregator.py",
        lines: "501-503",
        says:
          "that callback starts as None and nothing under src/ sets it, so a 2025 resources/updated ends there; src/ never sends resources/subscribe",
      },
      {
        repository: "modelcontextprotocol/python-sdk",
        commit: "6f69a3758ebf2ee55ce050f58b470ce11af71133",
        path: "src/mcp/client/subscriptions.py",
        lines: "201-236",
        says:
          "in the SDK it pins (mcp 2.0.0), listen refuses versions before 2026-07-28 and sends subscriptions/listen with the resource URIs as resourceSubscriptions",
      },
    ],
  },
  {
    kind: "cited",
    id: "goose",
    displayName: "Goose",
    what: "agent CLI and desktop app",
    version: "1.31.0",
    subscribes: "no",
    onUpdated:
      "Nothing: it does not override rmcp's handler for it, whose default does nothing, so the agent never hears of it.",
    whyNotRun:
      "on no registry here: its crates depend on each other by path; on crates.io, goose is another project (a load testing framework, 0.19.0), so is goose-cli (an install helper, 0.2.0), and cargo info goose-mcp says: could not find goose-mcp in registry; it ships on GitHub and Homebrew only",
    citations: [
      {
        repository: GOOSE,
        commit: GOOSE_COMMIT,
        path: "crates/goose/src/agents/mcp_client.rs",
        lines: "176-374",
        says:
          "its rmcp client handler implements roots, progress, logging, sampling, elicitation and client info only; there is no on_resource_updated",
      },
      {
        repository: GOOSE,
        commit: GOOSE_COMMIT,
        path: "crates/goose/src/agents/mcp_client.rs",
        lines: "359-373",
        says: "the client asks for protocol 2025-03-26 when it initializes",
      },
      {
        repository: GOOSE,
        commit: GOOSE_COMMIT,
        path: "crates/goose/src/agents/mcp_client.rs",
        lines: "675-679",
        says:
          "its subscribe() only adds a local channel for forwarded notifications and sends nothing to the server; nothing in crates/ sends resources/subscribe",
      },
      {
        repository: GOOSE,
        commit: GOOSE_COMMIT,
        path: "Cargo.lock",
        lines: "8021-8022",
        says: "the rmcp crate is locked at 1.5.0",
      },
      {
        repository: GOOSE,
        commit: "050ea1511d92bc7d094470b711c3b8c456003ecc",
        path: "crates/goose-cli/Cargo.toml",
        lines: "24-25",
        says:
          "the CLI's crate depends on the goose and goose-mcp crates by path, so it installs from a checkout only",
      },
      {
        repository: "modelcontextprotocol/rust-sdk",
        commit: "020a38b6ad3d0f26487c464250a484fad2a06b0e",
        path: "crates/rmcp/src/handler/client.rs",
        lines: "215-221",
        says:
          "in rmcp 1.5.0 the default on_resource_updated returns at once without doing anything",
      },
    ],
  },
  {
    kind: "cited",
    id: "crush-source",
    displayName: "Crush",
    what: "agent CLI",
    version: null,
    subscribes: "no",
    onUpdated:
      "No Crush code runs: it sets no handler for it, so the Go SDK only drops its own cached read of that URI.",
    whyNotRun:
      "it does not install here (its row beside this one): go install github.com/charmbracelet/crush@v0.96.1, its README's install, gets 403 Forbidden from the Go module proxy, which lists no version of it; its npm package's postinstall downloads from github.com, blocked here",
    citations: [
      {
        repository: CRUSH,
        commit: CRUSH_COMMIT,
        path: "internal/agent/tools/mcp/init.go",
        lines: "904-934",
        says:
          "the MCP client gets handlers for tool, prompt and resource list changes and for logging, and no ResourceUpdatedHandler; no code under internal/ calls Subscribe",
      },
      {
        repository: CRUSH,
        commit: CRUSH_COMMIT,
        path: "go.mod",
        lines: "49",
        says: "it builds against the Go SDK v1.7.0",
      },
      {
        repository: "modelcontextprotocol/go-sdk",
        commit: "bc72835f62eb94d0fb484439f886b6885b075f36",
        path: "mcp/client.go",
        lines: "1492-1500",
        says:
          "on resources/updated the Go SDK v1.7.0 drops its cached read of that URI and calls the client's handler only if one was set",
      },
    ],
  },
  {
    kind: "cited",
    id: "letta-code-source",
    displayName: "Letta Code",
    what: "agent CLI",
    version: "0.30.29",
    subscribes: "no",
    onUpdated:
      "Dropped: the MCP client it connects on the user's machine sets no notification handler, so the TypeScript SDK ignores it.",
    whyNotRun:
      "the pinned 0.32.18 does not install (npm has no @janhapke/sharp-electron@0.35.3-electron.1), and its agent runs on a Letta server (Letta Cloud or self-hosted), not on a model endpoint",
    citations: [
      {
        repository: LETTA,
        commit: LETTA_COMMIT,
        path: "src/mcp-client.ts",
        lines: "90-116",
        says:
          "connectMcpServer makes an SDK Client with no handlers, connects and lists tools only, and hands back tools and close; no file under src/ names resources/subscribe or resources/updated",
      },
      {
        repository: LETTA,
        commit: LETTA_COMMIT,
        path: "src/mcp-runtime.ts",
        lines: "84-87",
        says:
          "the CLI's own (client-side) MCP servers are connected through connectMcpServer",
      },
      {
        repository: LETTA,
        commit: LETTA_COMMIT,
        path: "package.json",
        lines: "126",
        says: "it builds against the TypeScript SDK 1.30.0",
      },
      {
        repository: TS_SDK,
        commit: "2d889f2b329e46680ec9bdd565de4616c497825a",
        path: PROTOCOL_TS,
        lines: "676-682",
        says: `in 1.30.0 ${IGNORED_BY_TS_SDK}`,
      },
    ],
  },
  {
    kind: "cited",
    id: "auggie-source",
    displayName: "Auggie",
    what: "agent CLI",
    version: "0.36.0",
    subscribes: "no",
    onUpdated:
      "Dropped: its MCP connection handles tools/list_changed only, so the TypeScript SDK bundled with it ignores the notification.",
    whyNotRun:
      "its model runs on Augment's service, behind an Augment login (auggie login, or AUGMENT_SESSION_AUTH); no setting points it at another endpoint",
    citations: [
      {
        package: AUGGIE,
        path: "augment.mjs",
        line: 5079,
        quote:
          'Received tools/list_changed from MCP server "${this._serverName}"; refreshing tools',
        says:
          "the one notification handler its MCP connection sets: on tools/list_changed it refreshes its tools; it never lists, reads or subscribes to resources",
      },
      {
        package: AUGGIE,
        path: "augment.mjs",
        line: 5072,
        quote:
          'async subscribeResource(e,n){return this.request({method:"resources/subscribe",params:e},TD,n)}',
        says:
          "the bundled SDK client's subscribeResource, the bundle's only occurrence of the name: nothing calls it (listResources and readResource likewise appear only there)",
      },
      {
        package: AUGGIE,
        path: "augment.mjs",
        line: 5072,
        quote:
          "let n=this._notificationHandlers.get(e.method)??this.fallbackNotificationHandler;n!==void 0&&",
        says: `the bundled SDK: ${IGNORED_BY_TS_SDK}`,
      },
    ],
  },
  {
    kind: "cited",
    id: "qoder-source",
    displayName: "Qoder CLI",
    what: "agent CLI",
    version: "1.1.52",
    subscribes: "no",
    onUpdated:
      "Dropped: its MCP connection handles progress and the tools, resources and prompts list_changed notifications, none for resources/updated, so the bundled TypeScript SDK ignores it.",
    whyNotRun:
      "its model runs on Qoder's service, behind a Qoder login (qodercli login); run here it connects and lists resources, then stops at Not logged in",
    citations: [
      {
        package: QODER,
        path: QODER_BUNDLE,
        line: 145,
        quote: "this.client.setNotificationHandler(mje,async()=>{",
        says:
          "on resources/list_changed (schema mje) it logs a resource update notification and lists the server's resources again; its other handlers are tools and prompts list_changed and progress",
      },
      {
        package: QODER,
        path: QODER_BUNDLE,
        line: 2,
        quote: 'y9s=r8.extend({method:as(_$d("',
        says:
          "the resources/updated schema (y9s; the bundle stores method names XOR-encoded, decoded by _$d on line 2): no setNotificationHandler call names it",
      },
      {
        package: QODER,
        path: QODER_BUNDLE,
        line: 145,
        quote:
          'async subscribeResource(A,e){return this.request({method:"resources/subscribe",params:A},Que,e)}',
        says:
          "the bundled SDK client's subscribeResource, the bundle's only occurrence of the name: nothing calls it",
      },
      {
        package: QODER,
        path: QODER_BUNDLE,
        line: 224,
        quote: "parts:qw0(await s.readResource(o.uri,{signal:t})),uri:o.uri",
        says:
          "it reads a resource when the user's prompt names it with @, once, into that prompt",
      },
      {
        package: QODER,
        path: QODER_BUNDLE,
        line: 139,
        quote:
          "let e=this._notificationHandlers.get(A.method)??this.fallbackNotificationHandler;void 0!==e&&",
        says: `the bundled SDK: ${IGNORED_BY_TS_SDK}`,
      },
    ],
  },
  {
    kind: "cited",
    id: "zed",
    displayName: "Zed",
    what: "code editor",
    version: "1.18.0",
    subscribes: "no",
    onUpdated:
      "Dropped: no handler is registered for it, and the client's dispatcher does nothing for a method without one.",
    whyNotRun:
      "a native desktop editor, not on npm: the harness drives command-line clients and web UIs only",
    citations: [
      {
        repository: ZED,
        commit: ZED_COMMIT,
        path: "crates/agent/src/tools/context_server_registry.rs",
        lines: "124-168",
        says:
          "the one notification handler Zed registers on a context server is for tools/list_changed, which reloads the tools",
      },
      {
        repository: ZED,
        commit: ZED_COMMIT,
        path: "crates/context_server/src/client.rs",
        lines: "298-303",
        says:
          "each incoming notification is handed to the handlers registered for its method",
      },
      {
        repository: ZED,
        commit: ZED_COMMIT,
        path: "crates/context_server/src/client.rs",
        lines: "586-600",
        says: "a method with no registered handler returns without any effect",
      },
      {
        repository: ZED,
        commit: ZED_COMMIT,
        path: "crates/context_server/src/types.rs",
        lines: "47-52",
        says:
          "the resources/subscribe request type is defined; nothing outside types.rs uses it at this commit",
      },
      {
        repository: ZED,
        commit: ZED_COMMIT,
        path: "crates/context_server/src/types.rs",
        lines: "114-118",
        says:
          "the resources/updated notification type is defined; nothing outside types.rs uses it at this commit",
      },
      {
        repository: ZED,
        commit: ZED_COMMIT,
        path: "crates/context_server/src/types.rs",
        lines: "11",
        says: "the newest protocol version it knows is 2025-11-25",
      },
    ],
  },
  {
    kind: "cited",
    id: "cline-vscode",
    displayName: "Cline (VS Code extension)",
    what: "VS Code extension",
    version: "4.1.13",
    subscribes: "no",
    onUpdated:
      "Written to the extension's log as an unhandled notification by its fallback handler; nothing else.",
    whyNotRun: EXTENSION_HOST,
    citations: [
      {
        repository: CLINE,
        commit: CLINE_COMMIT,
        path: "apps/vscode/src/services/mcp/McpHub.ts",
        lines: "735-762",
        says:
          "server log messages (notifications/message) go to the active task or wait in a queue",
      },
      {
        repository: CLINE,
        commit: CLINE_COMMIT,
        path: "apps/vscode/src/services/mcp/McpHub.ts",
        lines: "765-784",
        says:
          "list_changed for tools, resources and prompts refreshes the cached lists; any other notification, resources/updated included, is only logged",
      },
    ],
  },
  {
    kind: "cited",
    id: "roo-code",
    displayName: "Roo Code",
    what: "VS Code extension",
    version: "3.52.1",
    subscribes: "no",
    onUpdated:
      "Ignored by the TypeScript SDK: Roo registers no notification handler of any kind.",
    whyNotRun: EXTENSION_HOST,
    citations: [
      {
        repository: ROO,
        commit: ROO_COMMIT,
        path: "src/services/mcp/McpHub.ts",
        lines: "688-696",
        says:
          "each server gets an SDK client with empty capabilities; no file in the repository registers a notification handler or sends resources/subscribe",
      },
      {
        repository: ROO,
        commit: ROO_COMMIT,
        path: "src/package.json",
        lines: "466",
        says: "the TypeScript SDK is pinned at 1.12.0",
      },
      {
        repository: TS_SDK,
        commit: "0c4b3082751e1ec387a2f8ddbfe6a8c882d2ce0f",
        path: PROTOCOL_TS,
        lines: "322-330",
        says: `in 1.12.0 ${IGNORED_BY_TS_SDK}`,
      },
    ],
  },
  {
    kind: "cited",
    id: "continue-vscode",
    displayName: "Continue (VS Code extension)",
    what: "VS Code extension",
    version: "1.3.40",
    subscribes: "no",
    onUpdated:
      "Ignored by the TypeScript SDK: registering notification handlers is left as a commented-out TODO.",
    whyNotRun: EXTENSION_HOST,
    citations: [
      {
        repository: CONTINUE,
        commit: CONTINUE_COMMIT,
        path: "core/context/mcp/MCPConnection.ts",
        lines: "88-96",
        says: "the connection makes an SDK client with empty capabilities",
      },
      {
        repository: CONTINUE,
        commit: CONTINUE_COMMIT,
        path: "core/context/mcp/MCPConnection.ts",
        lines: "284-288",
        says:
          "after connecting, server notification handlers are a TODO in comments; the repository registers none and never sends resources/subscribe",
      },
      {
        repository: CONTINUE,
        commit: CONTINUE_COMMIT,
        path: "core/package.json",
        lines: "67",
        says: "the TypeScript SDK range is ^1.25.2",
      },
      {
        repository: TS_SDK,
        commit: "b392f02ffcf37c088dbd114fedf25026ec3913d3",
        path: PROTOCOL_TS,
        lines: "659-665",
        says: `in 1.25.2 ${IGNORED_BY_TS_SDK}`,
      },
    ],
  },
  {
    kind: "cited",
    id: "cherry-studio",
    displayName: "Cherry Studio",
    what: "desktop app",
    version: "2.0.0-dev",
    subscribes: "no",
    onUpdated:
      "Deletes its cached resource list for that server; the resource is not re-read and the chat is not told.",
    whyNotRun: DESKTOP_APP,
    citations: [
      {
        repository: CHERRY,
        commit: CHERRY_COMMIT,
        path: "src/main/ai/mcp/McpRuntimeService.ts",
        lines: "767-797",
        says:
          "handlers for tool, resource and prompt list changes and for resources/updated, which only clears resource caches; nothing under src/ sends resources/subscribe",
      },
      {
        repository: CHERRY,
        commit: CHERRY_COMMIT,
        path: "src/main/ai/mcp/McpRuntimeService.ts",
        lines: "830-832",
        says:
          "clearing resource caches deletes only the cached resource list of that server",
      },
    ],
  },
  {
    kind: "cited",
    id: "librechat",
    displayName: "LibreChat",
    what: "self-hosted web app",
    version: "v0.8.8-rc1",
    subscribes: "no",
    onUpdated:
      "Nothing: the connection registers no handler for it, only for resource and tool list changes.",
    whyNotRun:
      "a self-hosted web app with its own server and database, which the harness does not deploy",
    citations: [
      {
        repository: LIBRECHAT,
        commit: LIBRECHAT_COMMIT,
        path: "packages/api/src/mcp/connection.ts",
        lines: "1704-1705",
        says:
          "after connecting, the connection sets up its two notification handlers",
      },
      {
        repository: LIBRECHAT,
        commit: LIBRECHAT_COMMIT,
        path: "packages/api/src/mcp/connection.ts",
        lines: "1781-1785",
        says:
          "despite its name, subscribeToResources sends no request: it handles resources/list_changed by emitting an internal event nothing in the repository listens to",
      },
      {
        repository: LIBRECHAT,
        commit: LIBRECHAT_COMMIT,
        path: "packages/api/src/mcp/connection.ts",
        lines: "1794-1799",
        says: "tools/list_changed refreshes the tool list",
      },
    ],
  },
  {
    kind: "cited",
    id: "5ire",
    displayName: "5ire",
    what: "desktop app",
    version: "0.15.4",
    subscribes: "no",
    onUpdated:
      "Ignored by the TypeScript SDK: 5ire registers handlers for the three list_changed notifications only.",
    whyNotRun: DESKTOP_APP,
    citations: [
      {
        repository: FIVE_IRE,
        commit: FIVE_IRE_COMMIT,
        path: "src/main/services/mcp-resources-manager.ts",
        lines: "189-201",
        says:
          "on connect, a server that declares resources.listChanged gets a handler that refetches the resource list; nothing sends resources/subscribe",
      },
      {
        repository: FIVE_IRE,
        commit: FIVE_IRE_COMMIT,
        path: "src/main/services/mcp-tools-manager.ts",
        lines: "414-418",
        says: "tools/list_changed refetches the tools",
      },
      {
        repository: FIVE_IRE,
        commit: FIVE_IRE_COMMIT,
        path: "src/main/services/mcp-prompts-manager.ts",
        lines: "300-304",
        says: "prompts/list_changed refetches the prompts",
      },
      {
        repository: FIVE_IRE,
        commit: FIVE_IRE_COMMIT,
        path: "package.json",
        lines: "78",
        says: "the TypeScript SDK range is ^1.17.1",
      },
      {
        repository: TS_SDK,
        commit: "0551cc52b8920d7da46a4519b42f335a0a852b6c",
        path: PROTOCOL_TS,
        lines: "349-357",
        says: `in 1.17.1 ${IGNORED_BY_TS_SDK}`,
      },
    ],
  },
  {
    kind: "cited",
    id: "vscode",
    displayName: "VS Code",
    what: "code editor",
    version: null,
    subscribes: "yes",
    onUpdated:
      "Fires a change event for the watched mcp-resource file, so whatever watches it (an open editor) reads it again; these files pass nothing to chat.",
    whyNotRun:
      "the desktop editor with a signed-in chat model is not driven by this harness; it is run separately, and these citations back that row",
    citations: [
      {
        repository: VSCODE,
        commit: "4514111551d2d5979936d088c44e2d0e9857eef4",
        path: "src/vs/workbench/contrib/mcp/common/mcpResourceFilesystem.ts",
        lines: "100-146",
        says:
          "watch() subscribes to the resource when the server declares resources.subscribe, and on a matching resources/updated fires a file change for it",
      },
      {
        repository: VSCODE,
        commit: "c5308376f79a19368c9bd9dccc81090aa1bfcb79",
        path: "src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts",
        lines: "576-578",
        says: "subscribe() sends resources/subscribe",
      },
      {
        repository: VSCODE,
        commit: "c5308376f79a19368c9bd9dccc81090aa1bfcb79",
        path: "src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts",
        lines: "413-444",
        says:
          "the notification switch turns resources/updated into an update event for its listeners; nothing in this file sends subscriptions/listen",
      },
      {
        repository: VSCODE,
        commit: "c5308376f79a19368c9bd9dccc81090aa1bfcb79",
        path: "src/vs/workbench/contrib/mcp/common/mcpServerRequestHandler.ts",
        lines: "120-142",
        says:
          "the handshake is initialize with the schema's latest protocol version; the file has no server/discover",
      },
    ],
  },
  {
    kind: "cited",
    id: "omp",
    displayName: "oh-my-pi",
    what: "agent CLI",
    version: "18.0.0",
    subscribes: "yes",
    onUpdated:
      "Only with setting mcp.notifications (off by default): after a 500 ms debounce per URI it adds a user message naming the updated URIs and suggesting a read; the host itself does not re-read.",
    whyNotRun:
      "not in this harness's catalog; it is run separately, and these citations back that row",
    citations: [
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/config/settings-schema.ts",
        lines: "4682-4703",
        says:
          "mcp.notifications defaults to false and mcp.notificationDebounceMs to 500",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/mcp/manager.ts",
        lines: "355-372",
        says:
          "turning the setting on subscribes to every listed resource of each server that declares resources.subscribe",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/mcp/manager.ts",
        lines: "1262-1297",
        says:
          "whenever a server's resource list is loaded with the setting on, it subscribes to the current URIs and unsubscribes removed ones",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/mcp/client.ts",
        lines: "392-412",
        says: "subscribing sends one resources/subscribe request per URI",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/mcp/manager.ts",
        lines: "705-733",
        says:
          "on resources/updated for a subscribed URI the notification handler calls the resources-changed callback",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/sdk.ts",
        lines: "3928-3944",
        says:
          "that callback, with the setting on, waits out the debounce for the URI and queues a notification entry for the session",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/sdk.ts",
        lines: "275-296",
        says:
          "queued entries become one user message listing server and URI pairs and pointing the model at reading mcp:// URIs",
      },
      {
        repository: OMP,
        commit: OMP_COMMIT,
        path: "packages/coding-agent/src/mcp/types.ts",
        lines: "165",
        says: "the client negotiates protocol 2025-11-25",
      },
    ],
  },
];

function request(
  url: string,
  title: string,
  state: UpstreamRequest["state"],
): UpstreamRequest {
  return { url, title, state, checkedOn: CHECKED_ON };
}

/**
 * Requests about resource subscriptions, by the harness's client ids and
 * the cited hosts' ids. A client whose tracker showed none has no key.
 */
export const UPSTREAM_REQUESTS: Record<string, UpstreamRequest[]> = {
  "claude-code": [
    request(
      "https://github.com/anthropics/claude-code/issues/7252",
      "[FEATURE] support MCP resource subscriptions for automatic context updates",
      "closed",
    ),
    request(
      "https://github.com/anthropics/claude-code/issues/47823",
      "MCP notifications/resources/updated not handled per spec",
      "closed",
    ),
  ],
  "gemini-cli": [
    request(
      "https://github.com/google-gemini/gemini-cli/issues/4143",
      "Add MCP resource support",
      "open",
    ),
  ],
  codex: [
    request(
      "https://github.com/openai/codex/issues/16159",
      "Support resources/subscribe for MCP resources as a client (resource notification subscriptions)",
      "open",
    ),
    request(
      "https://github.com/openai/codex/pull/30087",
      "app-server: forward MCP resource updates",
      "closed",
    ),
  ],
  opencode: [
    request(
      "https://github.com/anomalyco/opencode/issues/12092",
      "[FEATURE]:Resource subscription",
      "closed",
    ),
    request(
      "https://github.com/anomalyco/opencode/pull/14569",
      "feat(opencode): add MCP resource subscriptions",
      "closed",
    ),
    request(
      "https://github.com/anomalyco/opencode/issues/20682",
      "feat: add MCP resource subscription support",
      "closed",
    ),
    request(
      "https://github.com/anomalyco/opencode/pull/31398",
      "feat(mcp): support resource update notifications",
      "closed",
    ),
    request(
      "https://github.com/anomalyco/opencode/pull/32936",
      "feat(mcp): support resource subscriptions",
      "closed",
    ),
    request(
      "https://github.com/anomalyco/opencode/pull/35197",
      "feat(mcp): add resource subscription API with autoprompt",
      "closed",
    ),
  ],
  copilot: [
    request(
      "https://github.com/github/copilot-cli/issues/3073",
      "feat: Support MCP resources/subscribe and notifications/resources/updated",
      "open",
    ),
  ],
  "inspector-web": [
    request(
      "https://github.com/modelcontextprotocol/inspector/issues/166",
      "Add ability to control and test resource subscription in MCP Inspector",
      "closed",
    ),
    request(
      "https://github.com/modelcontextprotocol/inspector/pull/170",
      "Add subscribe to resource functionality",
      "closed",
    ),
    request(
      "https://github.com/modelcontextprotocol/inspector/issues/1630",
      "Resources: subscriptions/listen model on modern servers (era fork)",
      "closed",
    ),
    request(
      "https://github.com/modelcontextprotocol/inspector/pull/1730",
      "Resources: subscriptions/listen model on modern servers (era fork) (#1630)",
      "closed",
    ),
  ],
  goose: [
    request(
      "https://github.com/aaif-goose/goose/pull/10477",
      "feat: forward MCP resource subscriptions to embedded apps",
      "closed",
    ),
    request(
      "https://github.com/aaif-goose/goose/pull/10590",
      "feat(mcp): subscribe to modern task resource updates",
      "closed",
    ),
  ],
  omp: [
    request(
      "https://github.com/can1357/oh-my-pi/pull/254",
      "feat(mcp): resource notifications, subscriptions, and read_resource builtin tool",
      "closed",
    ),
  ],
};

/** The cited host with this id, if there is one. */
export function citedHostById(id: string): CitedHost | undefined {
  return CITED_HOSTS.find((host) => host.id === id);
}

/** The requests filed for this client or host id (none: empty). */
export function upstreamRequestsFor(id: string): UpstreamRequest[] {
  return UPSTREAM_REQUESTS[id] ?? [];
}
