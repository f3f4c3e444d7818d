/**
 * The catalog that changes (`--catalog-change`): a tool, a prompt and a
 * resource added at a client's update, the ladder each list climbs over HTTP
 * and stdio, the report's Catalog column, the gate
 * (`--require-catalog-level`) and the flags' bad values; a use counted only
 * after the re-list that returned the new item.
 *
 * ```sh
 * deno test -P main_catalog_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  Client,
  deserializeMessage,
  serializeMessage,
  StreamableHTTPClientTransport,
  type Transport,
} from "npm:@modelcontextprotocol/client@2.4.0";
import {
  CATALOG_ADDED,
  CATALOG_KINDS,
  createLab,
  lineValue,
  loadConfig,
  parseCommandLine,
  REVIEW_URI,
} from "./main.ts";
import { prepareTestEnvironment, startLab } from "./testdata/lab.ts";
import {
  assertLinesInOrder,
  connectClient,
  eventually,
  gateRun,
  labCommand,
  linesOf,
  nextResourceUpdate,
  reportFor,
  stdioClient,
  subscribeUntilUpdated,
  within,
} from "./testdata/lab_clients.ts";
import { MAIN_PATH } from "./launch.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The catalog that changes: --catalog-change, its ladder, its gate
// ---------------------------------------------------------------------------

/** The names (URIs for resources) each list of a client's catalog holds. */
async function catalogOf(client: Client) {
  const [tools, prompts, resources] = await Promise.all([
    client.listTools(),
    client.listPrompts(),
    client.listResources(),
  ]);
  return {
    tools: tools.tools.map((tool) => tool.name),
    prompts: prompts.prompts.map((prompt) => prompt.name),
    resources: resources.resources.map((resource) => resource.uri),
  };
}

/** Resolves once each list's `notifications/<kind>/list_changed` has come. */
function listChanges(client: Client) {
  const changed = CATALOG_KINDS.map(() => Promise.withResolvers<void>());
  client.setNotificationHandler(
    "notifications/tools/list_changed",
    () => changed[0].resolve(),
  );
  client.setNotificationHandler(
    "notifications/prompts/list_changed",
    () => changed[1].resolve(),
  );
  client.setNotificationHandler(
    "notifications/resources/list_changed",
    () => changed[2].resolve(),
  );
  return {
    all: Promise.all(changed.map(({ promise }) => promise)),
    tools: changed[0].promise,
  };
}

const STARTING_CATALOG = {
  tools: ["get_review_status"],
  prompts: ["review_checklist"],
  resources: [REVIEW_URI],
};

const CHANGED_CATALOG = {
  tools: ["get_review_status", CATALOG_ADDED.tools],
  prompts: ["review_checklist", CATALOG_ADDED.prompts],
  resources: [REVIEW_URI, CATALOG_ADDED.resources],
};

/**
 * A client that follows the catalog (`--catalog-change all`): lists each
 * kind, subscribes (2025) or listens asking for every list's changes
 * (2026-07-28), then on the notifications lists again and uses each new item.
 */
async function followCatalog(client: Client) {
  const listen = await hearChanges(client);
  assert.deepEqual(await catalogOf(client), CHANGED_CATALOG);
  await useEachAdded(client);
  if ("close" in listen) await listen.close();
}

/**
 * Lists each kind, subscribes (2025) or listens asking for every list's
 * changes (2026-07-28), and resolves with the listen (or subscription) once
 * every list's change has been notified.
 */
async function hearChanges(client: Client) {
  assert.deepEqual(await catalogOf(client), STARTING_CATALOG);
  const changes = listChanges(client);
  const listen = client.getNegotiatedProtocolVersion() === "2026-07-28"
    ? await client.listen({
      resourceSubscriptions: [REVIEW_URI],
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
    })
    : await client.subscribeResource({ uri: REVIEW_URI });
  if ("honoredFilter" in listen) {
    assert.deepEqual(listen.honoredFilter, {
      resourceSubscriptions: [REVIEW_URI],
      toolsListChanged: true,
      promptsListChanged: true,
      resourcesListChanged: true,
    });
  }
  await changes.all;
  return listen;
}

/** Uses each list's new item: calls the tool, gets the prompt, reads the resource. */
async function useEachAdded(client: Client) {
  const call = await client.callTool({ name: CATALOG_ADDED.tools });
  assert.match(JSON.stringify(call.content), /comments: 2/);
  const prompt = await client.getPrompt({ name: CATALOG_ADDED.prompts });
  assert.match(JSON.stringify(prompt.messages), /Summarize the review/);
  const read = await client.readResource({ uri: CATALOG_ADDED.resources });
  assert.match(JSON.stringify(read.contents), /comments: 2/);
}

const CATALOG_TOP =
  "tools: level 5 (get_review_comments reaching a model request) is not observable from the server";

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`catalog (${era}, HTTP): a client that follows every list's change reaches catalog level 4 on each, the resource ladder untouched`, async () => {
    await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "all" });
    await using client = await connectClient(lab.url, "catalog-follower", mode);
    await followCatalog(client);
    const report = reportFor(lab, "catalog-follower");
    assert.equal(report.catalog?.level, 4);
    assert.equal(report.catalog?.missing, CATALOG_TOP);
    for (const kind of CATALOG_KINDS) {
      assert.deepEqual(report.catalog?.kinds[kind]?.steps, {
        listed: true,
        notified: true,
        relisted: true,
        used: true,
        reachedModel: "not observable",
      });
    }
    // The resource ladder is its own: listed, subscribed, notified, no read.
    assert.equal(report.level, 5);
    assertLinesInOrder(lab.lines, [
      "[tools/list] requested count=1 client=catalog-follower",
      "[resource/update] uri=test://review/status version=2",
      "[catalog/change] kind=tools added=get_review_comments",
      "[notification/send] notifications/tools/list_changed delivered=true",
      "[catalog/change] kind=prompts added=summarize_review",
      "[notification/send] notifications/prompts/list_changed delivered=true",
      "[catalog/change] kind=resources added=test://review/comments",
      "[notification/send] notifications/resources/list_changed delivered=true",
    ]);
    assertLinesInOrder(lab.lines, [
      "[notification/send] notifications/resources/list_changed",
      "[tools/list] requested count=2 added=get_review_comments",
      "[tools/call] name=get_review_comments",
      "[prompts/get] name=summarize_review",
      "[resources/read] uri=test://review/comments client=",
    ]);
  });
}

Deno.test("catalog (2025): a client notified that never lists again stops at catalog level 2, named", async () => {
  await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "tools" });
  await using client = await connectClient(lab.url, "catalog-cached");
  assert.deepEqual((await catalogOf(client)).tools, ["get_review_status"]);
  const changes = listChanges(client);
  await client.subscribeResource({ uri: REVIEW_URI });
  await changes.tools;
  const { catalog } = reportFor(lab, "catalog-cached");
  assert.deepEqual(
    { level: catalog?.level, missing: catalog?.missing },
    { level: 2, missing: "tools: notified, never listed tools again" },
  );
  assert.deepEqual(Object.keys(catalog?.kinds ?? {}), ["tools"]);
});

Deno.test("catalog (2026-07-28): a listen that did not ask for tools list changes hears nothing of them and is diagnosed", async () => {
  await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "tools" });
  await using client = await connectClient(lab.url, "catalog-deaf", "auto");
  await client.listTools();
  let heard = 0;
  client.setNotificationHandler(
    "notifications/tools/list_changed",
    () => void heard++,
  );
  const updated = nextResourceUpdate(client);
  const listen = await client.listen({ resourceSubscriptions: [REVIEW_URI] });
  await updated;
  await eventually(
    () => lab.lines.some((line) => line.includes("tools/list_changed")),
    "no tools list_changed line",
  );
  await listen.close();
  assert.equal(heard, 0);
  assert.ok(
    lab.lines.some((line) =>
      line.startsWith(
        '[notification/send] notifications/tools/list_changed delivered=false reason="no listen stream asked for tools list changes" client=catalog-deaf/1.0.0',
      )
    ),
    lab.lines.join("\n"),
  );
  const { catalog } = reportFor(lab, "catalog-deaf");
  assert.equal(catalog?.level, 1);
  assert.equal(
    catalog?.missing,
    "tools: 2026-07-28: never asked for tools list changes on a listen (toolsListChanged)",
  );
});

Deno.test("catalog: each client has its own; the new tool is unknown to the one whose catalog did not change", async () => {
  await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "tools" });
  await using changed = await connectClient(lab.url, "catalog-changed");
  await using other = await connectClient(lab.url, "catalog-other");
  const changes = listChanges(changed);
  await changed.subscribeResource({ uri: REVIEW_URI });
  await changes.tools;
  assert.deepEqual((await catalogOf(changed)).tools, CHANGED_CATALOG.tools);
  assert.deepEqual((await catalogOf(other)).tools, STARTING_CATALOG.tools);
  await assert.rejects(
    other.callTool({ name: CATALOG_ADDED.tools }),
    /Unknown tool: get_review_comments/,
  );
  assert.equal(
    reportFor(lab, "catalog-other").catalog?.missing,
    "tools: the catalog did not change: no update was sent (trigger: subscribe)",
  );
});

Deno.test("catalog off: nothing changes, the tools list is empty and the report says null", async () => {
  await using lab = startLab();
  await using client = await connectClient(lab.url, "catalog-off");
  assert.deepEqual(await catalogOf(client), {
    tools: [],
    prompts: [],
    resources: [REVIEW_URI],
  });
  await subscribeUntilUpdated(client);
  const report = reportFor(lab, "catalog-off");
  assert.equal(report.catalog, null);
  assert.equal(lab.lab.report().scenario.catalogChange, "off");
  assert.ok(!lab.lines.some((line) => line.startsWith("[catalog/change]")));
});

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`catalog (${era}, stdio): the follower reaches catalog level 4, in its verdict block`, async () => {
    const { client, verdictLog } = await stdioClient(
      `catalog-${mode}`,
      mode,
      "--catalog-change",
      "all",
    );
    await followCatalog(client);
    await client.close();
    const log = await verdictLog();
    assert.match(
      log,
      /^ {2}catalog: level 4 of 5 \(tools 4, prompts 4, resources 4\); next: tools: level 5 \(get_review_comments reaching a model request\) is not observable from the server$/m,
    );
    assert.match(
      log,
      new RegExp(
        `^\\[tools/call\\] name=get_review_comments client=catalog-${mode}/1\\.0\\.0 era=${era} `,
        "m",
      ),
    );
  });
}

Deno.test("catalog: /report.md has a Catalog column and the change in each diagram", async () => {
  await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "tools" });
  await using client = await connectClient(lab.url, "catalog-md");
  const changes = listChanges(client);
  await client.listTools();
  await client.subscribeResource({ uri: REVIEW_URI });
  await changes.tools;
  await client.listTools();
  const markdown = await (await fetch(`${lab.base}/report.md`)).text();
  assert.match(markdown, /\| Level \| Catalog \| Notes \|/);
  assert.match(
    markdown,
    /\| 5 \| tools 3 \| .*; catalog tools: listed tools again but never used get_review_comments \(tools\/call\) \|/,
  );
  assert.match(markdown, /catalog change: tools\./);
  assert.match(markdown, /Catalog level 3 of 5 \(tools 3\)\./);
  for (
    const arrow of [
      "Note over L: tools gain get_review_comments",
      "L-->>C: notifications/tools/list_changed",
      "C->>L: tools/list (2, with get_review_comments)",
    ]
  ) {
    assert.ok(markdown.includes(`    ${arrow}\n`), arrow);
  }
});

Deno.test("catalog gate: --require-catalog-level 4 passes a follower and fails a client that never lists again", async () => {
  const run = await gateRun({
    MCP_TEST_CATALOG_CHANGE: "tools",
    MCP_TEST_REQUIRE_CATALOG_LEVEL: "4",
    MCP_TEST_EXIT_AFTER_CLIENTS: "2",
    MCP_TEST_DEADLINE_SECONDS: "60",
  }, async (url) => {
    for (
      const [name, follow] of [["gate-follower", true], [
        "gate-cached",
        false,
      ]] as const
    ) {
      const transport = new StreamableHTTPClientTransport(url);
      const client = new Client({ name, version: "1.0.0" }, {
        versionNegotiation: { mode: "legacy" },
      });
      await client.connect(transport);
      await client.listTools();
      const changes = listChanges(client);
      await client.subscribeResource({ uri: REVIEW_URI });
      await changes.tools;
      if (follow) {
        await client.listTools();
        await client.callTool({ name: CATALOG_ADDED.tools });
      }
      await transport.terminateSession();
      await client.close();
    }
  });
  assert.equal(run.code, 1, run.lines.join("\n"));
  assert.deepEqual(run.lines.filter((line) => line.startsWith("verdict ")), [
    `verdict client=gate-follower/1.0.0 catalog=4 required=4 pass missing=${
      lineValue(CATALOG_TOP)
    }`,
    `verdict client=gate-cached/1.0.0 catalog=2 required=4 fail missing=${
      lineValue("tools: notified, never listed tools again")
    }`,
  ]);
});

Deno.test("catalog: bad --catalog-change and --require-catalog-level values exit 2 with one line", async (t) => {
  const cases: [string[], string][] = [
    [
      ["--catalog-change", "tool"],
      'config error: --catalog-change="tool" is not allowed: expected off, all, or a comma list of tools, prompts, resources',
    ],
    [
      ["--catalog-change="],
      'config error: --catalog-change="" is not allowed: expected off, all, or a comma list of tools, prompts, resources',
    ],
    [
      ["--catalog-change", "tools", "--require-catalog-level", "5"],
      'config error: --require-catalog-level="5" is not allowed: expected a catalog level from 1 to 4 (level 5, the model\'s request, is not observable by the lab)',
    ],
    [
      ["--require-catalog-level", "2"],
      "config error: --require-catalog-level (MCP_TEST_REQUIRE_CATALOG_LEVEL) needs a --catalog-change (MCP_TEST_CATALOG_CHANGE) other than off",
    ],
  ];
  for (const [flags, message] of cases) {
    await t.step(flags.join(" "), async () => {
      for (const stdio of [[], ["--stdio"]]) {
        const output = await labCommand([...stdio, ...flags], {
          MCP_TEST_PORT: "0",
        }).output();
        assert.equal(output.code, 2);
        assert.equal(new TextDecoder().decode(output.stderr), `${message}\n`);
      }
    });
  }
  const env = await labCommand([], {
    MCP_TEST_PORT: "0",
    MCP_TEST_CATALOG_CHANGE: "tools,nope",
  }).output();
  assert.equal(env.code, 2);
  assert.equal(
    new TextDecoder().decode(env.stderr),
    'config error: MCP_TEST_CATALOG_CHANGE="tools,nope" is not allowed: expected off, all, or a comma list of tools, prompts, resources\n',
  );
});

Deno.test("catalog: --catalog-change takes off, all or a list, and the reproduce command repeats it", () => {
  assert.deepEqual(loadConfig({}).catalogChange, []);
  assert.deepEqual(
    loadConfig({ MCP_TEST_CATALOG_CHANGE: "all" }).catalogChange,
    [...CATALOG_KINDS],
  );
  assert.deepEqual(
    loadConfig({}, { "catalog-change": "prompts, tools,prompts" })
      .catalogChange,
    ["prompts", "tools"],
  );
  const all = createLab(loadConfig({ MCP_TEST_CATALOG_CHANGE: "all" }));
  const { reproduce, scenario } = all.report();
  assert.equal(scenario.catalogChange, "tools,prompts,resources");
  assert.equal(
    reproduce?.command,
    "deno run -A main.ts --catalog-change=tools,prompts,resources",
  );
  const again = reproduce!.command.split(" ").slice(4);
  assert.deepEqual(
    loadConfig({}, parseCommandLine(again).flags).catalogChange,
    [...CATALOG_KINDS],
  );
});

// ---------------------------------------------------------------------------
// Credit in order: a use counts only after the re-list that returned it
// ---------------------------------------------------------------------------

const EAGER_MISSING = {
  tools: "listed tools again but never used get_review_comments (tools/call)",
  prompts: "listed prompts again but never used summarize_review (prompts/get)",
  resources:
    "listed resources again but never used test://review/comments (resources/read)",
} as const;

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`catalog (${era}, HTTP): a use between the notification and the re-list counts for nothing; the same use after the re-list reaches level 4`, async () => {
    await using lab = startLab({ MCP_TEST_CATALOG_CHANGE: "all" });
    await using client = await connectClient(lab.url, "catalog-eager", mode);
    const listen = await hearChanges(client);
    // Each new item used by a name the client never listed.
    await useEachAdded(client);
    assert.deepEqual(await catalogOf(client), CHANGED_CATALOG);
    const early = reportFor(lab, "catalog-eager").catalog;
    assert.equal(early?.level, 3);
    assert.equal(early?.missing, `tools: ${EAGER_MISSING.tools}`);
    for (const kind of CATALOG_KINDS) {
      assert.deepEqual(
        [early?.kinds[kind]?.level, early?.kinds[kind]?.missing],
        [3, EAGER_MISSING[kind]],
        kind,
      );
      assert.equal(early?.kinds[kind]?.steps.used, false, kind);
    }
    await useEachAdded(client);
    const after = reportFor(lab, "catalog-eager").catalog;
    assert.deepEqual(
      CATALOG_KINDS.map((kind) => after?.kinds[kind]?.level),
      [4, 4, 4],
    );
    if ("close" in listen) await listen.close();
  });
}

/**
 * The lab over stdio as a catalog gate (`--catalog-change all
 * --require-catalog-level 4`), an SDK client on its stdin and stdout; its
 * exit status and stderr once the client has closed.
 */
async function stdioCatalogGate(
  name: string,
  mode: "legacy" | "auto",
  run: (client: Client) => Promise<void>,
) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN_PATH, "--stdio", "--delay", "0.1"].concat(
      ["--catalog-change", "all", "--require-catalog-level", "4"],
      ["--log-level", "warn"],
    ),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const writer = child.stdin.getWriter();
  const transport: Transport = {
    start() {
      (async () => {
        for await (const line of linesOf(child.stdout)) {
          transport.onmessage?.(deserializeMessage(line));
        }
      })();
      return Promise.resolve();
    },
    send: (message) =>
      writer.write(new TextEncoder().encode(serializeMessage(message))),
    close: () => writer.close(),
  };
  const client = new Client({ name, version: "1.0.0" }, {
    versionNegotiation: { mode },
  });
  await client.connect(transport);
  await run(client);
  await client.close();
  const status = await within(child.status, 30_000, "the stdio gate's exit");
  return { code: status.code, stderr: await stderr };
}

for (const mode of ["legacy", "auto"] as const) {
  const era = mode === "legacy" ? "2025" : "2026-07-28";
  Deno.test(`catalog gate (${era}, stdio): uses before the re-list fail --require-catalog-level 4; used again after it, the client passes`, async () => {
    const eager = await stdioCatalogGate(
      `eager-${mode}`,
      mode,
      async (client) => {
        await hearChanges(client);
        await useEachAdded(client);
        assert.deepEqual(await catalogOf(client), CHANGED_CATALOG);
      },
    );
    assert.equal(eager.code, 1, eager.stderr);
    assert.ok(
      eager.stderr.includes(
        `verdict client=eager-${mode}/1.0.0 catalog=3 required=4 fail missing=${
          lineValue(`tools: ${EAGER_MISSING.tools}`)
        }\n`,
      ),
      eager.stderr,
    );
    const again = await stdioCatalogGate(
      `again-${mode}`,
      mode,
      async (client) => {
        await hearChanges(client);
        await useEachAdded(client);
        assert.deepEqual(await catalogOf(client), CHANGED_CATALOG);
        await useEachAdded(client);
      },
    );
    assert.equal(again.code, 0, again.stderr);
    assert.ok(
      again.stderr.includes(
        `verdict client=again-${mode}/1.0.0 catalog=4 required=4 pass missing=${
          lineValue(CATALOG_TOP)
        }\n`,
      ),
      again.stderr,
    );
  });
}
