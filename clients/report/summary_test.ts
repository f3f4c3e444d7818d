import assert from "node:assert/strict";
import { DOMParser } from "npm:@xmldom/xmldom@0.9.12";
import {
  SUMMARY_COLUMNS,
  summaryMarkdown,
  type SummaryRow,
  summaryRows,
  summarySvg,
  textWidth,
  wrapText,
} from "./summary.ts";
import {
  browserInstalled,
  CHROMIUM_PATH,
  INSTALL_BROWSER_COMMAND,
  withPage,
} from "../runners/browser.ts";
import { citedHost, matrixRow } from "../testdata/fixtures.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// Helpers: the demo client's rows, a request upstream, a picture parsed
// ---------------------------------------------------------------------------

/** Demo CLI (an agent) on every route, with its two triggers natively. */
const DEMO_ROWS = [
  matrixRow({ route: "native", trigger: "subscribe", level: 3 }),
  matrixRow({ route: "native", trigger: "read", level: 6 }),
  matrixRow({ route: "wait-tool", trigger: "subscribe", level: 7 }),
  matrixRow({ route: "wait-tool", trigger: "read", level: 6 }),
  matrixRow({ route: "shell-probe", trigger: "subscribe", level: 7 }),
  matrixRow({ route: "shell-probe", trigger: "read", level: 7 }),
  // Other questions, left out of the summary.
  matrixRow({ route: "wait-tool", trigger: "subscribe", longWait: true }),
  matrixRow({ route: "wait-tool", progressCheck: "no-progress", level: 0 }),
];

const REQUEST = {
  url: "https://github.com/demo/cli/issues/42",
  title: "Support resource subscriptions",
  state: "open" as const,
  checkedOn: "2026-11-30",
};

/** Parses SVG text strictly: any XML error fails the test. */
function parseSvg(text: string) {
  return new DOMParser({
    // A replacement character is only warned about: it stands in, on
    // purpose, for characters XML does not allow.
    onError: (level, message) => {
      if (level !== "warning") throw new Error(`${level}: ${message}`);
    },
  }).parseFromString(text, "image/svg+xml");
}

// ---------------------------------------------------------------------------
// summaryRows: levels by route and trigger, failures, hosts, inline, catalog
// ---------------------------------------------------------------------------

Deno.test("summaryRows: one row per client and mode, the level per route and trigger", () => {
  const rows = summaryRows({
    rows: [
      ...DEMO_ROWS,
      matrixRow({ mode: "2026-07-28", level: 4, client: "Demo CLI" }),
    ],
    cited: [],
    requests: { demo: [REQUEST] },
  });
  assert.deepEqual(rows.map((row) => [row.name, row.mode, row.evidence]), [
    ["Demo CLI", null, "run"],
    ["Demo CLI", "2026-07-28", "run"],
  ]);
  assert.deepEqual(rows[0].cells, {
    "native-subscribe": { level: 3, text: "3" },
    "native-read": { level: 6, text: "6" },
    "wait-tool": { level: 6, text: "7 · 6" },
    "shell-probe": { level: 7, text: "7" },
    "inline-content": { level: null, text: "not run" },
    cut: { level: null, text: "not run" },
    "2026-07-28-only": { level: null, text: "not run" },
    "2025-only": { level: null, text: "not run" },
    refused: { level: null, text: "not run" },
    catalog: { level: null, text: "not run" },
  });
  assert.deepEqual(rows[0].requests, [REQUEST]);
  assert.deepEqual(rows[1].cells["native-read"], { level: 4, text: "4" });
  const noticed = summaryRows({
    rows: [matrixRow({ level: 6, hostNotice: true, hostNoticeSeconds: 2 })],
    cited: [],
    requests: {},
  });
  assert.deepEqual(noticed[0].cells["native-read"], {
    level: 6,
    text: "6 + notice",
  });
  assert.deepEqual(rows[1].cells["wait-tool"], {
    level: null,
    text: "not run",
  });
});

Deno.test("summaryRows: install failures, no MCP, clients without a model, hosts read from source", () => {
  const rows = summaryRows({
    rows: [
      matrixRow({
        clientId: "crush",
        client: "Crush",
        outcome: "install-failed",
        level: 0,
      }),
      matrixRow({
        clientId: "pi",
        client: "pi",
        outcome: "not-supported",
        level: 0,
      }),
      matrixRow({
        clientId: "mcpdo",
        client: "mcpdo",
        level: 5,
        trigger: "subscribe",
      }),
      matrixRow({ clientId: "demo", client: "Demo CLI", level: 3 }),
    ],
    cited: [
      citedHost({ id: "crush", displayName: "Crush" }),
      citedHost({ id: "demo", displayName: "Demo CLI" }),
      citedHost({ subscribes: "listen (2026-07-28) only" }),
    ],
    requests: {},
  });
  const byLabel = (name: string, evidence: string) =>
    rows.find((row) => row.name === name && row.evidence === evidence)!;
  assert.deepEqual(byLabel("Crush", "run").cells["native-read"], {
    level: null,
    text: "install failed",
  });
  assert.deepEqual(byLabel("pi", "documentation").cells["native-subscribe"], {
    level: null,
    text: "no MCP",
  });
  assert.deepEqual(byLabel("mcpdo", "run").cells["shell-probe"], {
    level: null,
    text: "no model",
  });
  // A host that was run has no row from its source; one whose install
  // failed keeps both.
  assert.equal(rows.filter((row) => row.name === "Demo CLI").length, 1);
  assert.deepEqual(byLabel("Crush", "source").cells["native-subscribe"], {
    level: null,
    text: "does not subscribe",
  });
  assert.deepEqual(byLabel("Zed", "source").cells, {
    "native-subscribe": { level: null, text: "listens (2026-07-28) only" },
    "native-read": { level: null, text: "—" },
    "wait-tool": { level: null, text: "—" },
    "shell-probe": { level: null, text: "—" },
    "inline-content": { level: null, text: "—" },
    cut: { level: null, text: "—" },
    "2026-07-28-only": { level: null, text: "—" },
    "2025-only": { level: null, text: "—" },
    refused: { level: null, text: "—" },
    catalog: { level: null, text: "—" },
  });
});

Deno.test("summaryRows: the reference host's shell-probe cell says it has no shell tool, whatever its runs recorded", () => {
  const [row] = summaryRows({
    rows: [
      matrixRow({ clientId: "reference-host", trigger: "subscribe", level: 7 }),
      matrixRow({ clientId: "reference-host", route: "wait-tool", level: 7 }),
      matrixRow({ clientId: "reference-host", route: "shell-probe", level: 4 }),
    ],
    cited: [],
    requests: {},
  });
  assert.deepEqual(row.cells, {
    "native-subscribe": { level: 7, text: "7" },
    "native-read": { level: null, text: "not run" },
    "wait-tool": { level: 7, text: "7" },
    "shell-probe": { level: null, text: "no shell tool" },
    "inline-content": { level: null, text: "not run" },
    cut: { level: null, text: "not run" },
    "2026-07-28-only": { level: null, text: "not run" },
    "2025-only": { level: null, text: "not run" },
    refused: { level: null, text: "not run" },
    catalog: { level: null, text: "not run" },
  });
});

Deno.test("summaryRows: inline content is a cell of the client's default row; inline delivery and a break say so, in Markdown and SVG", () => {
  const host = (fields: Parameters<typeof matrixRow>[0]) =>
    matrixRow({
      clientId: "reference-host",
      client: "Reference host",
      trigger: "subscribe",
      ...fields,
    });
  const rows = summaryRows({
    rows: [
      host({ level: 7 }),
      host({ mode: "2026-07-28", level: 7, deliveredInline: true }),
      host({ mode: "inline-content", level: 7 }),
      matrixRow({
        clientId: "mcpdo",
        client: "mcpdo",
        trigger: "subscribe",
        level: 5,
      }),
      matrixRow({
        clientId: "mcpdo",
        client: "mcpdo",
        mode: "inline-content",
        trigger: "subscribe",
        level: 1,
        versusDefault: {
          defaultLevel: 5,
          differences: ["level 1 (default 5)"],
          broke: true,
        },
      }),
    ],
    cited: [],
    requests: {},
  });
  assert.deepEqual(
    rows.map((row) => [
      row.clientId,
      row.mode,
      row.cells["native-subscribe"],
      row.cells["inline-content"],
    ]),
    [
      ["reference-host", null, { level: 7, text: "7" }, {
        level: 7,
        text: "7",
      }],
      ["reference-host", "2026-07-28", { level: 7, text: "7, inline" }, {
        level: null,
        text: "default mode only",
      }],
      ["mcpdo", null, { level: 5, text: "5" }, {
        level: 1,
        text: "1 (broke)",
      }],
    ],
  );
  assert.deepEqual(summaryMarkdown(rows, "s.svg").slice(-3), [
    "| Reference host | 1.0.0 | run | 7 | not run | not run | no shell tool | 7 | not run | not run | not run | not run | not run | none found |",
    "| Reference host (2026-07-28) | 1.0.0 | run | 7, inline | not run | not run | no shell tool | default mode only | default mode only | default mode only | default mode only | default mode only | not run | none found |",
    "| mcpdo | 1.0.0 | run | 5 | not run | no model | no model | 1 (broke) | not run | not run | not run | not run | not run | none found |",
  ]);
  const svg = parseSvg(summarySvg(rows, "2026-11-30T10:00:00.000Z"));
  const texts = [...svg.documentElement!.getElementsByTagName("text")].map((
    text,
  ) => text.textContent);
  for (const text of ["Inline content", "7, inline", "1 (broke)"]) {
    assert.ok(texts.includes(text), text);
  }
});

Deno.test("summaryRows: each world mode is a cell of the client's default row under its own column, its level, (broke) only where the row did worse than its default, in Markdown and SVG", () => {
  const app = (fields: Parameters<typeof matrixRow>[0]) =>
    matrixRow({
      clientId: "mcp-client-demo",
      client: "Demo app",
      trigger: "subscribe",
      ...fields,
    });
  const broke = (defaultLevel: number, level: number) => ({
    defaultLevel,
    differences: [`level ${level} (default ${defaultLevel})`],
    broke: true,
  });
  const unbroken = (defaultLevel: number, level: number) => ({
    ...broke(defaultLevel, level),
    broke: false,
  });
  const rows = summaryRows({
    rows: [
      app({ level: 6 }),
      app({ mode: "stdio", level: 6 }),
      // Cut: it never opened its stream again, and missed the update.
      app({ mode: "cut", level: 4, versusDefault: broke(6, 4) }),
      // It could not talk to a 2026-07-28-only lab.
      app({ mode: "2026-07-28-only", level: 0, versusDefault: broke(6, 0) }),
      app({ mode: "2025-only", level: 6 }),
      // Refused: 3 is the most the lab allows, so no break.
      app({ mode: "refused", level: 3, versusDefault: unbroken(6, 3) }),
    ],
    cited: [],
    requests: {},
  });
  const world = (row: SummaryRow) =>
    (["cut", "2026-07-28-only", "2025-only", "refused"] as const).map((
      column,
    ) => row.cells[column]);
  assert.deepEqual(rows.map((row) => [row.mode, ...world(row)]), [
    [
      null,
      { level: 4, text: "4 (broke)" },
      { level: 0, text: "0 (broke)" },
      { level: 6, text: "6" },
      { level: 3, text: "3" },
    ],
    [
      "stdio",
      ...Array(4).fill({ level: null, text: "default mode only" }),
    ],
  ]);
  // The default row's own native cell is its default run's, not a world mode's.
  assert.deepEqual(rows[0].cells["native-subscribe"], { level: 6, text: "6" });
  assert.deepEqual(summaryMarkdown(rows, "s.svg").slice(-2), [
    "| Demo app | 1.0.0 | run | 6 | not run | not run | not run | not run | 4 (broke) | 0 (broke) | 6 | 3 | not run | none found |",
    "| Demo app (stdio) | 1.0.0 | run | 6 | not run | not run | not run | default mode only | default mode only | default mode only | default mode only | default mode only | not run | none found |",
  ]);
  const svg = parseSvg(summarySvg(rows, "2026-11-30T10:00:00.000Z"));
  const texts = [...svg.documentElement!.getElementsByTagName("text")].map((
    text,
  ) => text.textContent);
  // Each column's title, on its lines in the header.
  const title = (key: string) =>
    [...svg.documentElement!.getElementsByTagName("g")]
      .find((group) => group.getAttribute("data-cell") === `header ${key}`)
      ?.textContent?.replace(/\s+/g, " ").trim();
  assert.deepEqual(
    ["cut", "2026-07-28-only", "2025-only", "refused"].map(title),
    ["Stream cut", "2026-07-28 only", "2025 only", "Watches refused"],
  );
  for (const text of ["4 (broke)", "0 (broke)"]) {
    assert.ok(texts.includes(text), text);
  }
  const levels = [...svg.documentElement!.getElementsByTagName("g")]
    .filter((group) => group.getAttribute("data-client") === "mcp-client-demo")
    .map((group) =>
      `${group.getAttribute("data-column")} ${group.getAttribute("data-level")}`
    );
  for (
    const level of ["cut 4", "2026-07-28-only 0", "2025-only 6", "refused 3"]
  ) {
    assert.ok(levels.includes(level), level);
  }
});

Deno.test("summaryRows: a catalog row is the Catalog cell of the row of the mode it launched in (default when recorded without one), each kind's level colored by the tools level on the catalog ladder, in Markdown and SVG; the native read cell keeps the mode row's own", () => {
  const catalog = (levels: [number, number, number]) => ({
    level: Math.min(...levels),
    kinds: Object.fromEntries(
      (["tools", "prompts", "resources"] as const).map((kind, index) => [
        kind,
        {
          added: kind,
          labLevel: levels[index],
          level: levels[index],
          missing: "",
        },
      ]),
    ),
    newTool: null,
    updatesSent: 1,
  });
  const rows = summaryRows({
    rows: [
      matrixRow({ level: 3 }),
      matrixRow({ mode: "2026-07-28", level: 3 }),
      matrixRow({ mode: "catalog", level: 6, catalog: catalog([5, 4, 2]) }),
      matrixRow({
        mode: "catalog",
        launchMode: "2026-07-28",
        level: 6,
        catalog: catalog([2, 3, 3]),
      }),
      matrixRow({ mode: "stdio", level: 3 }),
      matrixRow({
        clientId: "mcpdo",
        client: "mcpdo",
        trigger: "subscribe",
        level: 5,
      }),
      matrixRow({
        clientId: "mcpdo",
        client: "mcpdo",
        mode: "catalog",
        trigger: "subscribe",
        level: 5,
        catalog: null,
      }),
      matrixRow({
        clientId: "crush",
        client: "Crush",
        outcome: "install-failed",
      }),
      matrixRow({
        clientId: "crush",
        client: "Crush",
        mode: "catalog",
        outcome: "install-failed",
      }),
    ],
    cited: [],
    requests: {},
  });
  assert.deepEqual(
    rows.map((
      row,
    ) => [row.clientId, row.mode, row.cells["native-read"], row.cells.catalog]),
    [
      ["demo", null, { level: 3, text: "3" }, {
        level: 5,
        text: "tools 5, prompts 4, resources 2",
        ladder: "catalog",
      }],
      ["demo", "2026-07-28", { level: 3, text: "3" }, {
        level: 2,
        text: "tools 2, prompts 3, resources 3",
        ladder: "catalog",
      }],
      ["demo", "stdio", { level: 3, text: "3" }, {
        level: null,
        text: "not run",
      }],
      ["mcpdo", null, { level: null, text: "not run" }, {
        level: null,
        text: "no record",
      }],
      ["crush", null, { level: null, text: "install failed" }, {
        level: null,
        text: "install failed",
      }],
    ],
  );
  assert.match(
    summaryMarkdown(rows, "s.svg")[6],
    /\| Catalog \| Requests upstream \|$/,
  );
  assert.match(
    summaryMarkdown(rows, "s.svg")[8],
    /^\| Demo CLI \| .* \| tools 5, prompts 4, resources 2 \| none found \|$/,
  );
  const svg = parseSvg(summarySvg(rows, "2026-11-30T10:00:00.000Z"));
  const cell = [...svg.documentElement!.getElementsByTagName("g")].find((
    group,
  ) =>
    group.getAttribute("data-client") === "demo" &&
    group.getAttribute("data-column") === "catalog"
  )!;
  // Catalog level 5 is filled as the resource ladder's 7 (dark green).
  assert.equal(cell.getAttribute("data-level"), "5");
  assert.equal(
    cell.getElementsByTagName("rect")[0].getAttribute("fill"),
    "#15803d",
  );
  assert.equal(
    cell.getElementsByTagName("text")[0].textContent,
    "tools 5, prompts 4, resources 2",
  );
});

// ---------------------------------------------------------------------------
// summaryMarkdown and summarySvg: the table, the picture, widths, wrapping
// ---------------------------------------------------------------------------

Deno.test("summaryMarkdown: the picture, then a table row per client with its requests upstream", () => {
  const rows = summaryRows({
    rows: DEMO_ROWS,
    cited: [citedHost()],
    requests: { demo: [REQUEST] },
  });
  const lines = summaryMarkdown(rows, "compatibility-summary.svg");
  assert.equal(lines[0], "## At a glance");
  assert.equal(
    lines[2],
    "![The level each client reached on each route](compatibility-summary.svg)",
  );
  assert.deepEqual(lines.slice(-4), [
    "| Client | Version | Evidence | Native, trigger subscribe | Native, trigger read | Wait tool | Shell probe | Inline content | Stream cut | 2026-07-28 only | 2025 only | Watches refused | Catalog | Requests upstream |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    "| Demo CLI | 1.0.0 | run | 3 | 6 | 7 · 6 | 7 | not run | not run | not run | not run | not run | not run | [demo/cli#42](https://github.com/demo/cli/issues/42) (open) |",
    "| Zed | 0.200.0 | source | does not subscribe | — | — | — | — | — | — | — | — | — | none found |",
  ]);
});

Deno.test("summaryMarkdown: a client's name and version through the lab's cell, its requests' links as written", () => {
  const rows = summaryRows({
    rows: [matrixRow({ client: "@demo/cli | `beta`", version: "1.0.0<b>" })],
    cited: [],
    requests: { demo: [REQUEST] },
  });
  assert.equal(
    summaryMarkdown(rows, "s.svg").at(-1),
    "| @<wbr>demo/cli &#124; &#96;beta&#96; | 1.0.0&lt;b&gt; | run | not run | 3 | not run | not run | not run | not run | not run | not run | not run | not run | [demo/cli#42](https://github.com/demo/cli/issues/42) (open) |",
  );
});

Deno.test("summarySvg: well-formed, one colored cell per client and route, names escaped", () => {
  const hostile = "<b>&\"Evil\" 'CLI'\u0001";
  const rows: SummaryRow[] = summaryRows({
    rows: [...DEMO_ROWS, matrixRow({ clientId: "evil", client: hostile })],
    cited: [citedHost()],
    requests: {},
  });
  const svg = summarySvg(rows, "2026-11-30T10:00:00.000Z");
  const document = parseSvg(svg);
  const root = document.documentElement!;
  assert.equal(root.tagName, "svg");
  assert.equal(root.getAttribute("xmlns"), "http://www.w3.org/2000/svg");
  const cells = [...root.getElementsByTagName("g")].filter((group) =>
    group.hasAttribute("data-column")
  );
  assert.equal(cells.length, rows.length * SUMMARY_COLUMNS.length);
  assert.deepEqual(
    cells.map((group) =>
      `${group.getAttribute("data-client")} ${
        group.getAttribute("data-column")
      } ${group.getAttribute("data-level")} ${
        group.getElementsByTagName("rect")[0].getAttribute("fill")
      }`
    ),
    [
      "demo native-subscribe 3 #f97316",
      "demo native-read 6 #4ade80",
      "demo wait-tool 6 #4ade80",
      "demo shell-probe 7 #15803d",
      "demo inline-content none #e5e7eb",
      "demo cut none #e5e7eb",
      "demo 2026-07-28-only none #e5e7eb",
      "demo 2025-only none #e5e7eb",
      "demo refused none #e5e7eb",
      "demo catalog none #e5e7eb",
      "evil native-subscribe none #e5e7eb",
      "evil native-read 3 #f97316",
      "evil wait-tool none #e5e7eb",
      "evil shell-probe none #e5e7eb",
      "evil inline-content none #e5e7eb",
      "evil cut none #e5e7eb",
      "evil 2026-07-28-only none #e5e7eb",
      "evil 2025-only none #e5e7eb",
      "evil refused none #e5e7eb",
      "evil catalog none #e5e7eb",
      "zed native-subscribe none #e5e7eb",
      "zed native-read none #e5e7eb",
      "zed wait-tool none #e5e7eb",
      "zed shell-probe none #e5e7eb",
      "zed inline-content none #e5e7eb",
      "zed cut none #e5e7eb",
      "zed 2026-07-28-only none #e5e7eb",
      "zed 2025-only none #e5e7eb",
      "zed refused none #e5e7eb",
      "zed catalog none #e5e7eb",
    ],
  );
  const texts = [...root.getElementsByTagName("text")].map((text) =>
    text.textContent
  );
  assert.ok(texts.includes(`${hostile.replace("\u0001", "\ufffd")} 1.0.0`));
  assert.ok(!svg.includes("<b>"));
  assert.ok(texts.includes("7 · 6"));
});

Deno.test("textWidth and wrapText: widths from the fonts' advances with a margin, lines within a width", () => {
  // "m" is 975/1000 em in DejaVu Sans; anything outside ASCII counts as an em.
  assert.equal(textWidth("m", 100), Math.ceil(975 * 0.105 + 0.5));
  assert.ok(textWidth("Wait tool", 13, true) > textWidth("Wait tool", 13));
  assert.equal(textWidth("\u4e00", 10), Math.ceil(10 * 1.05 + 0.5));
  const lines = wrapText(
    "one two three four",
    textWidth("three four", 13),
    13,
  );
  assert.deepEqual(lines, ["one two", "three four"]);
  assert.deepEqual(wrapText("unbreakable", 1, 13), ["unbreakable"]);
});

Deno.test("summarySvg: the legend wraps inside a picture narrower than its lines", () => {
  const svg = summarySvg([], "2026-11-30T10:00:00.000Z");
  const root = parseSvg(svg).documentElement!;
  const width = Number(root.getAttribute("width"));
  const legend = [...root.getElementsByTagName("g")].find((group) =>
    group.getAttribute("data-cell") === "legend"
  )!;
  const lines = [...legend.getElementsByTagName("text")].map((text) =>
    text.textContent!
  );
  assert.ok(lines.length > 2, lines.join("\n"));
  for (const line of lines) assert.ok(textWidth(line, 11) <= width - 44, line);
  assert.match(
    lines.join(" "),
    /^1 connected, .* worse than the default-mode run Stream cut: .* so 3 at most Catalog: .* 1 as 2$/,
  );
});

// ---------------------------------------------------------------------------
// The picture in Chromium: in two fonts, every text inside its cell
// ---------------------------------------------------------------------------

const chromiumMissing = !await browserInstalled();
if (chromiumMissing) {
  console.log(
    `summary_test.ts: the picture in Chromium is skipped: ${CHROMIUM_PATH} is missing (install it with \`${INSTALL_BROWSER_COMMAND}\`)`,
  );
}

/** The fonts the picture is checked in, and the Debian package of each. */
const FONTS = [
  { family: "DejaVu Sans", install: "apt-get install -y fonts-dejavu-core" },
  { family: "Liberation Sans", install: "apt-get install -y fonts-liberation" },
];

/** A picture with wide words, a long name and characters outside ASCII. */
function stressSvg(): string {
  const rows = summaryRows({
    rows: [
      ...DEMO_ROWS,
      matrixRow({
        clientId: "wide",
        client: "WWW MMM Wide Client — ümlaut 漢字 %%% @@@",
        mode: "2026-07-28",
        level: 0,
        hostNotice: true,
        deliveredInline: true,
      }),
      matrixRow({
        clientId: "wide",
        client: "WWW MMM Wide Client — ümlaut 漢字 %%% @@@",
        mode: "catalog",
        level: 0,
        catalog: {
          level: 0,
          kinds: {
            tools: { added: "t", labLevel: 4, level: 5, missing: "" },
            prompts: { added: "p", labLevel: 0, level: 0, missing: "m" },
            resources: { added: "r", labLevel: 4, level: 4, missing: "m" },
          },
          newTool: null,
          updatesSent: 1,
        },
      }),
    ],
    cited: [citedHost({ subscribes: "listen (2026-07-28) only" })],
    requests: {},
  });
  return summarySvg(rows, "2026-11-30T10:00:00.000Z");
}

// Both run in the page, where the global object is the window.

/** Whether the page has `family`: a missing font leaves its fallback's widths. */
function fontPresent(family: string): boolean {
  // deno-lint-ignore no-explicit-any
  const { document } = globalThis as any;
  const context = document.createElement("canvas").getContext("2d");
  const width = (font: string): number => {
    context.font = `40px ${font}`;
    return context.measureText("mmmlli WWW 0123").width;
  };
  return ["monospace", "serif"].every((fallback) =>
    width(`"${family}", ${fallback}`) !== width(fallback)
  );
}

type Box = { x: number; y: number; width: number; height: number };

/**
 * The page's picture: how many texts it has, and each text whose rendered
 * box is not inside the rectangle of its cell's `<g>` or the picture.
 */
function textsOutside(): { texts: number; outside: string[] } {
  // deno-lint-ignore no-explicit-any
  const { document } = globalThis as any;
  const root = document.querySelector("svg");
  const [, , width, height] = root.getAttribute("viewBox").split(" ").map(
    Number,
  );
  const within = (inner: Box, outer: Box) =>
    inner.x >= outer.x - 0.01 && inner.y >= outer.y - 0.01 &&
    inner.x + inner.width <= outer.x + outer.width + 0.01 &&
    inner.y + inner.height <= outer.y + outer.height + 0.01;
  const texts = [...root.querySelectorAll("text")];
  const outside = texts.flatMap((text) => {
    const box: Box = text.getBBox();
    const cell = text.closest("g");
    const rect = cell?.querySelector("rect");
    const name = cell?.getAttribute("data-cell") ??
      `${cell?.getAttribute("data-client")} ${
        cell?.getAttribute("data-column")
      }`;
    const where = `"${text.textContent}" (${name}, ${
      [box.x, box.y, box.width, box.height].map(Math.round)
    })`;
    return [
      ...(rect && within(box, rect.getBBox())
        ? []
        : [`${where} is not inside its cell`]),
      ...(within(box, { x: 0, y: 0, width, height })
        ? []
        : [`${where} is not inside the picture`]),
    ];
  });
  return { texts: texts.length, outside };
}

/** How the picture did in one font: per picture, the texts outside. */
interface FontCheck {
  family: string;
  installed: boolean;
  outside: Record<string, string[]>;
}

/**
 * Opens each picture in headless Chromium (the harness's `withPage`) with
 * the page's font set to each of `FONTS`, and lists the texts outside their
 * cell or the picture. Runs in a child process (`import.meta.main`):
 * playwright-core needs more than a test may do.
 */
async function checkInChromium(): Promise<FontCheck[]> {
  const pictures = {
    "results/compatibility-summary.svg": await Deno.readTextFile(
      new URL("../../results/compatibility-summary.svg", import.meta.url),
    ),
    "a picture of wide text": stressSvg(),
    "a picture without rows": summarySvg([], "2026-11-30T10:00:00.000Z"),
  };
  return await withPage(
    { timeoutSeconds: 30 },
    { blocked: [] },
    () => {},
    async (page) => {
      const checks: FontCheck[] = [];
      for (const { family } of FONTS) {
        const installed = await page.evaluate(fontPresent, family);
        const outside: Record<string, string[]> = {};
        for (const [name, svg] of installed ? Object.entries(pictures) : []) {
          await page.setContent(
            `<!doctype html><style>body { margin: 0 } svg { font-family: "${family}" }</style>${svg}`,
          );
          const found = await page.evaluate(textsOutside);
          outside[name] = found.texts > 0 ? found.outside : ["no text"];
        }
        checks.push({ family, installed, outside });
      }
      return checks;
    },
  );
}

if (import.meta.main) {
  console.log(JSON.stringify(await checkInChromium()));
}

Deno.test({
  name:
    "compatibility-summary.svg in Chromium: every text inside its cell and the picture, in DejaVu Sans and in Liberation Sans",
  ignore: chromiumMissing,
  async fn(t) {
    const child = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL(import.meta.url).pathname],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(90_000),
    }).output();
    const output = new TextDecoder().decode(child.stdout);
    assert.ok(
      child.success,
      output + new TextDecoder().decode(child.stderr),
    );
    const checks: FontCheck[] = JSON.parse(output.trim().split("\n").at(-1)!);
    assert.deepEqual(
      checks.map((check) => check.family),
      FONTS.map((font) => font.family),
    );
    for (const [index, check] of checks.entries()) {
      if (!check.installed) {
        console.log(
          `summary_test.ts: the picture in ${check.family} is skipped: the font is missing (install it with \`${
            FONTS[index].install
          }\`)`,
        );
      }
      await t.step({
        name: check.family,
        ignore: !check.installed,
        fn() {
          assert.deepEqual(check.outside, {
            "results/compatibility-summary.svg": [],
            "a picture of wide text": [],
            "a picture without rows": [],
          });
        },
      });
    }
  },
});
