/**
 * The client libraries apps are built on, measured as apps: for each
 * library, pinned on npm, a small program of this checkout
 * (`clients/programs/node/<id>.mjs`) written from the library's documented
 * public API, installed with `npm ci` from the `package.json` and
 * `package-lock.json` in its folder (`clients/programs/node/<id>/`). Its `app` command connects to the lab, lists, reads version
 * 1, subscribes and waits for the update through the library's API where
 * it has one, and reads again; the lab grades it like any client. Where
 * the library ships an agent loop, its `agent` command runs that loop
 * against the scripted model with the library's MCP tools and one tool of
 * the app's own (`app_clock`, the harmless nudge), and adds nothing that
 * would carry an update to the model: the agent row measures what the
 * library does by itself.
 *
 * Each library yields two clients for the runners: the app, a command
 * client of the `libraries` group, and the agent, an agent client. Both
 * run on Node 24 from npm (most of these libraries want 22 or later) and
 * share one install.
 *
 * The facts a run cannot show (which call subscribes, which hook gets the
 * update, or the file and line that show there is none) are written here,
 * read from each package's published files at its pinned version.
 *
 * @module
 */

import { REVIEW_TOOL } from "../../main.ts";
import type {
  ClientDefinition,
  CommandClientDefinition,
  ModeId,
} from "./types.ts";
import type { PackageCitation } from "./cited.ts";
import { type LibraryProgram, NODE_24 } from "../support/install.ts";
import { envCommandLine } from "../support/run_lab.ts";
import type { BuiltProgram } from "../support/build_once.ts";
import { GO_BUILD } from "../support/install_go.ts";
import { CARGO_BUILD } from "../support/install_rust.ts";
import { MAVEN_BUILD } from "../support/install_java.ts";
import type { PythonProgram } from "../support/install_python.ts";
import { FAKE_API_KEY, type WireFormat } from "../model/scripted_model.ts";

/** A step's API: the documented call, or the citation showing there is none. */
export type LibraryApi = { call: string } | { none: PackageCitation };

/** A library's own agent loop, driven against the scripted model. */
export interface LibraryAgent {
  /** The documented API the program runs (`generateText` with MCP tools). */
  api: string;
  wire: WireFormat;
  /**
   * How the model's address is given: the OpenAI-compatible base URL
   * (`/v1`), or the bare origin (Anthropic's clients add the path).
   */
  baseUrl: "v1" | "origin";
  /** The variable the library reads its API key from. */
  keyEnv: string;
}

export interface LibraryDefinition {
  id: string;
  displayName: string;
  npmPackage: string;
  version: string;
  /**
   * Every other package the programs import, pinned `name@version`: for a
   * Node app, as its `package.json` and `package-lock.json` pin them (and
   * `version` the library), which `libraries_test.ts` holds equal.
   */
  dependencies: string[];
  /**
   * `default` (the 2025 era over HTTP) and `2026-07-28`, each where the
   * library lets an app choose it (`gaps` says why not for the other);
   * and over stdio, where it has a stdio transport, `stdio` (2025) or
   * `stdio-2026-07-28` for one that speaks only that era, or does
   * subscriptions only there.
   */
  modes: ModeId[];
  gaps?: Partial<Record<"2025" | "2026-07-28" | "stdio", string>>;
  /** Why this version and not the newest, when it is not. */
  note?: string;
  subscribe: LibraryApi;
  update: LibraryApi;
  /**
   * Whether an app can reach the MCP SDK client underneath through a
   * documented accessor (and subscribe there itself), in a sentence.
   */
  sdkClient: string;
  agent?: LibraryAgent;
  /**
   * A library of another language than JavaScript: its app is a program of
   * its own. In a compiled language (`clients/programs/<language>/<id>/`),
   * built once (`build_once.ts`), `npmPackage` the package's name in its
   * registry and `version` its version without a `v`; in Python
   * (`clients/programs/python/<id>_app.py`), `npmPackage` the PyPI
   * distribution, pinned with every dependency in `requirements`.
   */
  language?: BuiltLanguage | "python";
  /** A Python app's requirements file, in `clients/programs/python/`. */
  requirements?: string;
}

/** The compiled languages apps are written in. */
export type BuiltLanguage = "go" | "rust" | "java";

/** Seconds an app waits for the update past the lab's delay. */
export const APP_WAIT_MARGIN_SECONDS = 5;

/** The app-defined tool each agent offers its model beside the server's. */
export const APP_TOOL = "app_clock";

/**
 * What every program imports (`./lab_app.mjs`): the command line, the fact
 * lines and the app's steps in order, so each program holds only its
 * library's calls.
 */
export const SHARED_MODULE = "lab_app";

/** The file of a library's program in this checkout (a Go app's main.go). */
export function programPath(id: string): string {
  const language = libraryOf(id)?.language;
  return language === "python"
    ? pythonProgramPath(`${id.replaceAll("-", "_")}_app.py`)
    : language
    ? `${builtProgramDir(language, id)}/${BUILT_MAIN_FILES[language]}`
    : new URL(`../programs/node/${id}.mjs`, import.meta.url).pathname;
}

/**
 * A Node app's folder beside its program (`clients/programs/node/<id>/`):
 * its `package.json`, every package it imports pinned exactly, and the
 * `package-lock.json` that pins every package under them.
 */
export function nodePackageDir(id: string): string {
  return new URL(`../programs/node/${id}`, import.meta.url).pathname;
}

/**
 * A file of the Python apps' folder: an app, `lab_app.py` (what they
 * share) or a requirements file.
 */
export function pythonProgramPath(name: string): string {
  return new URL(`../programs/python/${name}`, import.meta.url).pathname;
}

/** A built app's main source file in its folder. */
const BUILT_MAIN_FILES: Record<BuiltLanguage, string> = {
  go: "main.go",
  rust: "src/main.rs",
  java: "src/main/java/lab/App.java",
};

/** A built app's folder in this checkout (a Go app's go.mod, go.sum and main.go). */
export function builtProgramDir(language: BuiltLanguage, id: string): string {
  return new URL(`../programs/${language}/${id}`, import.meta.url).pathname;
}

/** A built app as the harness builds it: its folder, name and recipe. */
export function builtProgramOf(
  language: BuiltLanguage,
  id: string,
): BuiltProgram {
  const recipes = { go: GO_BUILD, rust: CARGO_BUILD, java: MAVEN_BUILD };
  return {
    dir: builtProgramDir(language, id),
    name: id,
    recipe: recipes[language],
  };
}

export const LIBRARIES: LibraryDefinition[] = [
  {
    id: "mcp-client",
    displayName: "@modelcontextprotocol/client",
    npmPackage: "@modelcontextprotocol/client",
    version: "2.4.0",
    dependencies: [],
    modes: ["default", "2026-07-28", "stdio"],
    subscribe: {
      call:
        "client.subscribeResource({ uri }); in 2026-07-28 client.listen({ resourceSubscriptions: [uri] })",
    },
    update: {
      call:
        'client.setNotificationHandler("notifications/resources/updated", …)',
    },
    sdkClient: "it is the SDK client",
  },
  {
    id: "mcp-sdk",
    displayName: "@modelcontextprotocol/sdk",
    npmPackage: "@modelcontextprotocol/sdk",
    version: "1.32.2",
    dependencies: [],
    modes: ["default", "stdio"],
    gaps: {
      "2026-07-28":
        'v1 implements MCP up to 2025-11-25: its README (line 3) says support for 2026-07-28 "is not planned for v1.x" (it is in v2, @modelcontextprotocol/client)',
    },
    subscribe: { call: "client.subscribeResource({ uri })" },
    update: {
      call:
        "client.setNotificationHandler(ResourceUpdatedNotificationSchema, …)",
    },
    sdkClient: "it is the SDK client",
  },
  {
    id: "ai-sdk",
    displayName: "@ai-sdk/mcp",
    npmPackage: "@ai-sdk/mcp",
    version: "2.0.99",
    dependencies: [
      "ai@7.0.173",
      "@ai-sdk/openai-compatible@3.0.92",
      "zod@4.6.7",
    ],
    // protocolVersionDiscovery: false for 2025; its default discovers 2026-07-28.
    modes: ["default", "2026-07-28", "stdio"],
    subscribe: {
      none: {
        package: "@ai-sdk/mcp@2.0.99",
        path: "dist/index.js",
        line: 2591,
        quote:
          "default: throw new MCPClientError({ message: `Unsupported method: ${method}` });",
        says:
          "the client's capability check allows resources/list, resources/read and resources/templates/list only; its MCPClient interface has listResources, readResource and listResourceTemplates, no subscribe",
      },
    },
    update: {
      none: {
        package: "@ai-sdk/mcp@2.0.99",
        path: "dist/index.js",
        line: 2414,
        quote:
          'else this.onError(new MCPClientError({ message: "Unsupported message type" }));',
        says:
          "every message from the server with a method and no id (every notification) is reported as an error to onUncaughtError, and the notification itself is passed to nothing",
      },
    },
    sdkClient:
      "none: it is its own MCP client (it depends on no MCP SDK package)",
    agent: {
      api: "generateText() with createMCPClient(…).tools()",
      wire: "openai-chat",
      baseUrl: "v1",
      keyEnv: "OPENAI_API_KEY",
    },
  },
  {
    id: "langchain",
    displayName: "@langchain/mcp-adapters",
    npmPackage: "@langchain/mcp-adapters",
    version: "1.1.4",
    dependencies: [
      "langchain@1.5.14",
      "@langchain/openai@1.6.0",
      "@langchain/core@1.4.0",
    ],
    modes: ["default", "stdio"],
    gaps: {
      "2026-07-28":
        "MultiServerMCPClient has no protocol option, and the MCP SDK 1.x under it speaks up to 2025-11-25",
    },
    subscribe: {
      none: {
        package: "@langchain/mcp-adapters@1.1.4",
        path: "dist/client.js",
        line: 281,
        quote:
          "return (await client.readResource({ uri })).contents.map((content) => ({",
        says:
          "its resource calls are listResources (line 215), listResourceTemplates (line 248) and this read; no subscribe anywhere in the package's code",
      },
    },
    update: { call: "MultiServerMCPClient({ …, onResourcesUpdated })" },
    sdkClient:
      "reachable: await client.getClient(serverName) (dist/client.d.ts:88), whose subscribeResource an app can call itself",
    agent: {
      api: "createAgent({ tools: await client.getTools() })",
      wire: "openai-chat",
      baseUrl: "v1",
      keyEnv: "OPENAI_API_KEY",
    },
  },
  {
    id: "mastra",
    displayName: "@mastra/mcp",
    npmPackage: "@mastra/mcp",
    version: "2.0.0",
    dependencies: ["@mastra/core@1.71.0", "zod@4.6.7"],
    // The server's protocolVersion: "legacy" for 2025, "2026-07-28"; over
    // stdio 2026-07-28, the era it subscribes in.
    modes: ["default", "2026-07-28", "stdio-2026-07-28"],
    subscribe: {
      call:
        "mcp.resources.subscribe(serverName, uri): a subscriptions/listen in 2026-07-28; in 2025 it throws (legacy resources/subscribe is removed)",
    },
    update: { call: "mcp.resources.onUpdated(serverName, handler)" },
    sdkClient:
      "not reachable: a private client (dist/client/client.d.ts:63), no documented accessor",
    agent: {
      api: "Agent({ tools: await mcp.listTools() }).generate()",
      wire: "openai-chat",
      baseUrl: "v1",
      keyEnv: "OPENAI_API_KEY",
    },
  },
  {
    id: "mcp-use",
    displayName: "mcp-use",
    npmPackage: "mcp-use",
    version: "1.34.6",
    dependencies: [
      "langchain@1.5.14",
      "@langchain/openai@1.6.0",
      "@langchain/core@1.4.0",
    ],
    modes: ["default", "stdio"],
    gaps: {
      "2026-07-28":
        "1.x pins the MCP SDK 1.26.0 (up to 2025-11-25) and has no protocol option",
    },
    note:
      'pinned at 1.34.6, the newest with a client: every 2.x (2.5.2 on 2026-12-01) is a server framework only (its package.json: "MCP framework and CLI built on the official v2 SDK"); its README sends client and agent users to @mcp-use/client and @mcp-use/agent, which npm does not have (404); the subscriptions/listen in 2.5.2 is its server\'s',
    subscribe: { call: "session.subscribeToResource(uri)" },
    update: { call: 'session.on("notification", handler)' },
    sdkClient:
      "not reachable: a protected client (dist/src/connectors/base.d.ts:81); session.request(method, params) sends any request",
    agent: {
      api: "MCPAgent({ client, additionalTools }).run()",
      wire: "openai-chat",
      baseUrl: "v1",
      keyEnv: "OPENAI_API_KEY",
    },
  },
  {
    id: "openai-agents",
    displayName: "@openai/agents",
    npmPackage: "@openai/agents",
    version: "0.20.0",
    // Its MCP client is the SDK's, an optional dependency: pinned here.
    dependencies: [
      "openai@7.59.0",
      "zod@4.6.7",
      "@modelcontextprotocol/client@2.4.0",
    ],
    modes: ["2026-07-28", "stdio-2026-07-28"],
    gaps: {
      "2025":
        "MCPServerStreamableHttp has no protocol option: its SDK client is built with `versionNegotiation: { mode: 'auto' }` (@openai/agents-core@0.20.0 dist/shims/mcp-server/node.mjs:627) and takes 2026-07-28 whenever the server offers it",
    },
    subscribe: {
      none: {
        package: "@openai/agents-core@0.20.0",
        path: "dist/mcp.d.ts",
        line: 152,
        quote: "readResource(uri: string): Promise<MCPReadResourceResult>;",
        says:
          "an MCP server's resource methods are listResources, listResourceTemplates and readResource (lines 150-152); nothing in the package calls subscribe",
      },
    },
    update: {
      none: {
        package: "@openai/agents-core@0.20.0",
        path: "dist/shims/mcp-server/node.mjs",
        line: 623,
        quote: "const client = new Client({",
        says:
          "the SDK client is built with no notification handler; the only notification the package handles is its own notifications/initialized",
      },
    },
    sdkClient:
      "not reachable: it is held in a private `underlying` session (dist/mcp.d.ts:156), with no accessor",
    agent: {
      api: "Agent({ mcpServers }) with run()",
      wire: "openai-responses",
      baseUrl: "v1",
      keyEnv: "OPENAI_API_KEY",
    },
  },
  {
    id: "cloudflare-agents",
    displayName: "agents (Cloudflare)",
    npmPackage: "agents",
    version: "0.32.0",
    dependencies: ["@modelcontextprotocol/client@2.4.0"],
    modes: ["default"],
    gaps: {
      "2026-07-28":
        "not run: the library runs only on Cloudflare Workers (agents@0.32.0 dist/cloudflare-CUUm_9q9.js:3 imports cloudflare:workers, and MCPClientManager needs a Durable Object's storage), so its app fails on Node in either era",
      stdio:
        'its transport types are "sse", "streamable-http" and "rpc" (a Durable Object binding), none that starts a local process (agents@0.32.0 dist/types-D2naO3rA.d.ts:5-7)',
    },
    subscribe: {
      none: {
        package: "agents@0.32.0",
        path: "dist/client-DMWujQJ1.js",
        line: 707,
        quote:
          "this._restoredListSubscription = await this.client.listen(filter);",
        says:
          "its one listen carries list-changed bits only, never resourceSubscriptions; the manager's resource calls are listResources (line 2274), listResourceTemplates and readResource (line 2295)",
      },
    },
    update: {
      none: {
        package: "agents@0.32.0",
        path: "dist/client-DMWujQJ1.js",
        line: 629,
        quote:
          'if (this._probingCapabilities) this.client.setNotificationHandler("notifications/resources/list_changed", async () => {',
        says:
          "its notification handlers are the list_changed ones (tools, resources, prompts); none for notifications/resources/updated",
      },
    },
    sdkClient:
      "typed but undocumented: mcp.mcpConnections[id].client (dist/agent-routing-vVMA7m8Y.d.ts:2254), named nowhere in its docs",
  },
  {
    id: "claude-agent-sdk",
    displayName: "@anthropic-ai/claude-agent-sdk",
    npmPackage: "@anthropic-ai/claude-agent-sdk",
    version: "0.3.332",
    dependencies: [],
    // Claude Code's MCP_PROTOCOL_NEGOTIATION (legacy or auto), set through
    // the SDK's env option: the SDK has no protocol option of its own.
    modes: ["default", "2026-07-28", "stdio"],
    subscribe: {
      none: {
        package: "@anthropic-ai/claude-agent-sdk@0.3.332",
        path: "sdk.d.ts",
        line: 3587,
        quote:
          "readMcpResource(serverName: string, uri: string): Promise<SDKControlMcpReadResourceResponse>;",
        says:
          "the app's only resource call, for ui:// URIs alone (line 3584); the bundle's resources/subscribe and notifications/resources/updated strings are the in-process MCP server behind createSdkMcpServer (sdk.mjs:135, 139), not a client API",
      },
    },
    update: {
      none: {
        package: "@anthropic-ai/claude-agent-sdk@0.3.332",
        path: "sdk.d.ts",
        line: 1036,
        quote:
          "export declare const HOOK_EVENTS: readonly ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', …",
        says:
          "no hook event or message type for a resource update; the MCP client runs inside the Claude Code binary the SDK starts",
      },
    },
    sdkClient:
      "not reachable: the MCP client is in the Claude Code child process; the only MCP SDK object an app gets is an McpServer (sdk.d.ts:1335)",
    agent: {
      api: "query() with mcpServers",
      wire: "anthropic-messages",
      baseUrl: "origin",
      keyEnv: "ANTHROPIC_API_KEY",
    },
  },
  {
    id: "go-sdk",
    displayName: "Go SDK (github.com/modelcontextprotocol/go-sdk)",
    npmPackage: "github.com/modelcontextprotocol/go-sdk",
    version: "1.8.0",
    dependencies: [],
    language: "go",
    // 2025: ClientSessionOptions.ProtocolVersion "2025-11-25"
    // (mcp/client.go:253); 2026-07-28 is its default, a server/discover;
    // over stdio likewise, so both eras there.
    modes: ["default", "2026-07-28", "stdio", "stdio-2026-07-28"],
    subscribe: {
      call:
        "session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}) (mcp/client.go:1381): resources/subscribe in 2025, a subscriptions/listen naming the URI in 2026-07-28",
    },
    update: {
      call:
        "mcp.ClientOptions{ResourceUpdatedHandler: …} (mcp/client.go:181), after the SDK drops its cached read of that URI (mcp/client.go:1500)",
    },
    sdkClient: "it is the SDK client",
  },
  {
    id: "python-sdk",
    displayName: "Python SDK v2 (mcp)",
    npmPackage: "mcp",
    version: "2.3.0",
    dependencies: [],
    language: "python",
    requirements: "requirements.txt",
    // 2025: Client(mode="legacy") (mcp/client/client.py:335); 2026-07-28:
    // its default "auto", a server/discover; over stdio likewise.
    modes: ["default", "2026-07-28", "stdio", "stdio-2026-07-28"],
    subscribe: {
      call:
        "client.subscribe_resource(uri) in 2025 (mcp/client/client.py:744, deprecated); client.listen(resource_subscriptions=[uri]) in 2026-07-28 (mcp/client/client.py:693), a subscriptions/listen",
    },
    update: {
      call:
        "Client(message_handler=…) (mcp/client/client.py:329) gets notifications/resources/updated in 2025; in 2026-07-28 the listen's Subscription yields a ResourceUpdated event (mcp/client/subscriptions.py:178)",
    },
    sdkClient: "it is the SDK client",
  },
  {
    id: "fastmcp",
    displayName: "FastMCP (fastmcp)",
    npmPackage: "fastmcp",
    version: "4.2.3",
    dependencies: [],
    language: "python",
    // It requires mcp 2.3.0 too, with some 30 packages more: its own file.
    requirements: "fastmcp_requirements.txt",
    // Client(mode="legacy") for 2025, its default "auto" for 2026-07-28
    // (fastmcp/client/client.py:450); StdioTransport for stdio.
    modes: ["default", "2026-07-28", "stdio", "stdio-2026-07-28"],
    subscribe: {
      none: {
        package: "fastmcp@4.2.3",
        path: "fastmcp/client/mixins/resources.py",
        line: 278,
        quote: "async def read_resource(",
        says:
          "the client's resource calls are list_resources_mcp (line 29), list_resources (73), list_resource_templates_mcp (120), list_resource_templates (167), read_resource_mcp (216) and this read; nothing in the package sends resources/subscribe or subscriptions/listen",
      },
    },
    update: {
      call:
        "Client(message_handler=MessageHandler) with on_resource_updated (fastmcp/client/messages.py:86)",
    },
    sdkClient:
      "reachable: client.session (fastmcp/client/client.py:675), the SDK's ClientSession, whose subscribe_resource an app can call itself in 2025",
  },
  {
    id: "rmcp",
    displayName: "Rust SDK (rmcp, crates.io)",
    npmPackage: "rmcp",
    version: "3.11.0",
    dependencies: ["serde_json@1.0.154", "tokio@1.54.1"],
    language: "rust",
    // 2025: ClientLifecycleMode::Initialize, an initialize at 2025-11-25;
    // 2026-07-28: ClientLifecycleMode::Discover (src/service/client.rs:739);
    // over stdio (TokioChildProcess) likewise, so both eras there.
    modes: ["default", "2026-07-28", "stdio", "stdio-2026-07-28"],
    subscribe: {
      call:
        "peer.subscribe(SubscribeRequestParams::new(uri)) (src/service/client.rs:1746) in 2025; peer.listen(a filter naming uri) (line 1320) in 2026-07-28",
    },
    // Either way the SDK drops its cached read of that URI
    // (src/service/client.rs:415).
    update: {
      call:
        "ClientHandler::on_resource_updated (src/handler/client.rs:228); in 2026-07-28 Subscription::next (src/service/client.rs:573)",
    },
    sdkClient: "it is the SDK client",
  },
  {
    id: "java-sdk",
    displayName: "Java SDK (io.modelcontextprotocol.sdk:mcp)",
    npmPackage: "io.modelcontextprotocol.sdk:mcp",
    version: "2.2.0",
    dependencies: [],
    language: "java",
    // One client per era, both in mcp-core-2.2.0.jar (no sources jar is
    // served: lines from its classes' line tables). 2025:
    // io.modelcontextprotocol.client's McpClient.sync over
    // HttpClientStreamableHttpTransport or StdioClientTransport, an
    // initialize up to 2025-11-25 (ProtocolVersions.java). 2026-07-28:
    // io.modelcontextprotocol.modern.client's McpClient.sync over
    // HttpClientMcpTransport or StdioMcpClientTransport, which speaks
    // 2026-07-28 only (McpClient.java:91), connect a server/discover
    // (McpSyncClient.java:187). A listen the server ends comes to the
    // listener's onComplete (a result, JsonRpcRequestSender.java:190) or
    // onError (McpSubscriptionLostException, the stream ended without one,
    // line 181), and the SDK opens no other.
    modes: ["default", "2026-07-28", "stdio", "stdio-2026-07-28"],
    subscribe: {
      call:
        "client.subscribeResource(new McpSchema.SubscribeRequest(uri)) (McpSyncClient) in 2025: resources/subscribe; in 2026-07-28 client.listen().resourceUpdates(uri) (McpSyncClient.java:178, 896), with toolsChanged(), promptsChanged() and resourcesChanged() (lines 874-888), .open(listener) (line 927): one subscriptions/listen, whose acknowledgement comes to the listener as a Subscribed event with the honoured and the missing filter (SubscriptionStream.java:93-104)",
    },
    update: {
      call:
        "McpClient.sync(transport).resourcesUpdateConsumer(…) (McpClient.SyncSpec) in 2025: the SDK reads the URI itself and hands the consumer the contents it read (McpAsyncClient.java:1010-1015), so the lab sees a read before the app's own; in 2026-07-28 McpSyncSubscriptionListener.onEvent gets a SubscriptionEvent.ResourceUpdated carrying the URI only (SubscriptionStream.java:139), on a thread of the SDK's (SyncClientRequester.java:186), and the SDK reads nothing",
    },
    sdkClient: "it is the SDK client",
  },
];

/** The app: a command client whose one command runs the program's `app`. */
export function libraryApp(
  library: LibraryDefinition,
): CommandClientDefinition {
  return {
    kind: "command",
    group: "libraries",
    id: library.id,
    displayName: `${library.displayName} (app)`,
    npmPackage: library.npmPackage,
    version: library.version,
    bin: library.id,
    modes: library.modes,
    env: {},
    ...(library.language === "python"
      ? { pythonProgram: pythonProgramOf(library) }
      : library.language
      ? { builtProgram: builtProgramOf(library.language, library.id) }
      : { program: programOf(library), runtime: NODE_24 }),
    steps({ labUrl, stdioLab, mode, delaySeconds }) {
      // inline-content is launched as default, or in 2026-07-28 for a
      // library that cannot speak 2025.
      const era = mode.endsWith("2026-07-28") ||
          !library.modes.includes("default")
        ? "2026-07-28"
        : "2025";
      return [{
        args: [
          "app",
          "--era",
          era,
          "--wait",
          String(delaySeconds + APP_WAIT_MARGIN_SECONDS),
          // Over stdio the program starts the lab itself, as its library
          // starts any local server.
          ...(stdioLab
            ? ["--stdio", "--", ...envCommandLine(stdioLab)]
            : ["--url", labUrl]),
        ],
      }];
    },
  };
}

/** The agent: the program's `agent` against the scripted model. */
export function libraryAgent(
  library: LibraryDefinition,
  agent: LibraryAgent,
): ClientDefinition {
  return {
    id: `${library.id}-agent`,
    displayName: `${library.displayName} (agent)`,
    npmPackage: library.npmPackage,
    version: library.version,
    bin: library.id,
    wire: agent.wire,
    // resolveTool finds the lab's tool under any prefix the library adds.
    script: {
      read: { name: REVIEW_TOOL, input: {} },
      nudge: { name: APP_TOOL, input: {} },
    },
    modes: ["default"],
    enableTool: true,
    shell: {
      unavailable:
        `an app built on the library offers its model the server's tools and its own ${APP_TOOL}, no shell`,
    },
    program: programOf(library),
    runtime: NODE_24,
    launch({ labUrl, modelOrigin, prompt }) {
      return {
        args: [
          "agent",
          "--url",
          labUrl,
          "--model-url",
          agent.baseUrl === "v1" ? `${modelOrigin}/v1` : modelOrigin,
          "--prompt",
          prompt,
        ],
        env: { [agent.keyEnv]: FAKE_API_KEY },
        files: {},
      };
    },
  };
}

/** A Python app: its script, run on the environment of its requirements. */
function pythonProgramOf(library: LibraryDefinition): PythonProgram {
  return {
    environment: {
      id: library.id,
      requirements: pythonProgramPath(library.requirements ?? ""),
    },
    script: programPath(library.id),
    name: library.id,
  };
}

function programOf(library: LibraryDefinition): LibraryProgram {
  return {
    path: programPath(library.id),
    library: library.id,
    packageDir: nodePackageDir(library.id),
    dependencies: library.dependencies,
    modules: [programPath(SHARED_MODULE)],
  };
}

/** Every library's app, then its agent where it ships an agent loop. */
export const LIBRARY_CLIENTS: (ClientDefinition | CommandClientDefinition)[] =
  LIBRARIES.flatMap((library) => [
    libraryApp(library),
    ...(library.agent ? [libraryAgent(library, library.agent)] : []),
  ]);

/** The library a client of the `libraries` group was made from. */
export function libraryOf(clientId: string): LibraryDefinition | undefined {
  return LIBRARIES.find((library) =>
    clientId === library.id || clientId === `${library.id}-agent`
  );
}
