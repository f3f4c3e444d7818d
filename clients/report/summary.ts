/**
 * The matrix at a glance: one row per client (and mode), what its evidence
 * is, and the level it reached on each route, as a Markdown table above the
 * full matrix and as an SVG grid beside it
 * (`results/compatibility-summary.svg`). Hosts read from source have a row
 * too, without levels. Pure functions, so the tests need no client.
 *
 * @module
 */

import { ALL_CLIENTS } from "../catalog/select.ts";
import {
  isBrowserClient,
  isCommandClient,
  isWorldMode,
  type ModeId,
  STREAM_CUT,
  WORLD_MODES,
} from "../catalog/types.ts";
import type { CitedHost, UpstreamRequest } from "../catalog/cited.ts";
import { libraryOf } from "../catalog/libraries.ts";
import {
  type CatalogRow,
  type LibraryRow,
  type MatrixRow,
  type SummaryCell,
} from "./rows.ts";
import { CATALOG_KINDS, cell } from "../../main.ts";

/**
 * The native route under each trigger, then the two other routes, then the
 * world modes (native, trigger subscribe; in the default row) and catalog
 * (its catalog ladder; in the row of the mode it launched in).
 */
export const SUMMARY_COLUMNS = [
  { key: "native-subscribe", title: "Native, trigger subscribe" },
  { key: "native-read", title: "Native, trigger read" },
  { key: "wait-tool", title: "Wait tool" },
  { key: "shell-probe", title: "Shell probe" },
  { key: "inline-content", title: "Inline content" },
  { key: "cut", title: "Stream cut" },
  { key: "2026-07-28-only", title: "2026-07-28 only" },
  { key: "2025-only", title: "2025 only" },
  { key: "refused", title: "Watches refused" },
  { key: "catalog", title: "Catalog" },
] as const satisfies readonly { key: string; title: string }[];

/**
 * The modes whose rows are cells of another row: a world mode's of the
 * client's default row, a catalog row's of its launch mode's row.
 */
const CELL_MODES: ModeId[] = [...WORLD_MODES, "catalog"];

/** The summary row a matrix row is part of: its mode's, or the row it is a cell of. */
function summaryMode(row: MatrixRow): ModeId {
  return isWorldMode(row.mode)
    ? "default"
    : row.mode === "catalog"
    ? row.launchMode ?? "default"
    : row.mode;
}

export type SummaryColumn = (typeof SUMMARY_COLUMNS)[number]["key"];

/** Where a row's facts come from: a run, the host's source, its docs. */
export type EvidenceKind = "run" | "source" | "documentation";

export interface SummaryRow {
  clientId: string;
  name: string;
  /** The mode, when it is not the default one. */
  mode: string | null;
  /** Null for a host whose source states none. */
  version: string | null;
  evidence: EvidenceKind;
  cells: Record<SummaryColumn, SummaryCell>;
  requests: UpstreamRequest[];
}

/** What the summary is made of. */
export interface SummarySources {
  rows: MatrixRow[];
  cited: CitedHost[];
  requests: Record<string, UpstreamRequest[]>;
}

/** Outcomes that mean the client never reached the lab, in a word or two. */
const NOT_REACHED: Record<string, string> = {
  "install-failed": "install failed",
  "lab-failed": "lab failed",
  "not-supported": "no MCP",
};

/** The summary's rows: measured clients in matrix order, then cited hosts. */
export function summaryRows(sources: SummarySources): SummaryRow[] {
  // Long-wait and progress-check rows answer other questions; a library's
  // rows are its own section's (`library_summary.ts`).
  const plain = sources.rows.filter((row) =>
    !row.longWait && !row.progressCheck && !libraryOf(row.clientId)
  );
  // An inline-content row is a cell of its client's default row, a
  // catalog row one of the row of the mode it launched in.
  const groups = Map.groupBy(
    plain,
    (row) => `${row.clientId}|${summaryMode(row)}`,
  );
  const measured = [...groups].map(([key, rows]) =>
    measuredRow(
      key.slice(key.indexOf("|") + 1),
      rows,
      sources.requests[rows[0].clientId] ?? [],
    )
  );
  const ran = new Set(
    plain.filter((row) => row.outcome !== "install-failed").map((row) =>
      row.clientId
    ),
  );
  const cited = sources.cited.filter((host) => !ran.has(host.id)).map((
    host,
  ) => citedRow(host, sources.requests[host.id] ?? []));
  return [...measured, ...cited];
}

/** One client in one mode, from its rows of the matrix. */
function measuredRow(
  mode: string,
  rows: MatrixRow[],
  requests: UpstreamRequest[],
): SummaryRow {
  const [first] = rows;
  const model = hasModel(first.clientId);
  // A client that never reached the lab says why in every cell.
  const missed = rows.every((row) => NOT_REACHED[row.outcome])
    ? NOT_REACHED[first.outcome]
    : undefined;
  const cell = (column: SummaryColumn): SummaryCell => {
    if (missed) return { level: null, text: missed };
    if (isWorldMode(column)) {
      if (mode !== "default") return { level: null, text: "default mode only" };
      return levelCell(rows.filter((row) => row.mode === column));
    }
    if (column === "catalog") {
      return catalogCell(rows.filter((row) => row.mode === column));
    }
    const [route, trigger] = column === "native-subscribe"
      ? ["native", "subscribe"]
      : column === "native-read"
      ? ["native", "read"]
      : [column, undefined];
    if (route !== "native" && !model) return { level: null, text: "no model" };
    if (route === "shell-probe" && !hasShellTool(first.clientId)) {
      return { level: null, text: "no shell tool" };
    }
    return levelCell(
      rows.filter((row) =>
        !CELL_MODES.includes(row.mode) &&
        (row.route ?? "native") === route &&
        (trigger === undefined || row.trigger === trigger)
      ),
    );
  };
  return {
    clientId: first.clientId,
    name: first.client,
    mode: mode === "default" ? null : mode,
    version: first.version,
    evidence: first.outcome === "not-supported" ? "documentation" : "run",
    cells: summaryCells(cell),
    requests,
  };
}

/** A row's cells, each column's from `cellOf`. */
function summaryCells(
  cellOf: (column: SummaryColumn) => SummaryCell,
): Record<SummaryColumn, SummaryCell> {
  return Object.fromEntries(
    SUMMARY_COLUMNS.map(({ key }) => [key, cellOf(key)]),
  ) as Record<SummaryColumn, SummaryCell>;
}

/** Whether a model drives the client (command clients and web UIs: none). */
function hasModel(clientId: string): boolean {
  const client = ALL_CLIENTS.find((known) => known.id === clientId);
  return !client || !(isCommandClient(client) || isBrowserClient(client));
}

/** Whether the client offers its model a shell tool (the reference host: no). */
function hasShellTool(clientId: string): boolean {
  const client = ALL_CLIENTS.find((known) => known.id === clientId);
  return !client || !("shell" in client) || !("unavailable" in client.shell);
}

/**
 * The level of a route's rows: one trigger's, or both as "subscribe · read"
 * when they differ (colored by the lower); ", inline" when version 2 came
 * inside the notification as the client asked; "+ notice" when the host
 * told the model the resource changed, which is not the update itself;
 * "(broke)" when a world mode's row did worse than its default row.
 */
export function levelCell(rows: MatrixRow[]): SummaryCell {
  if (rows.length === 0) return { level: null, text: "not run" };
  const missed = rows.map((row) => NOT_REACHED[row.outcome]).find(Boolean);
  if (missed) return { level: null, text: missed };
  const levels = [...new Set(rows.map((row) => row.level))];
  const inline = rows.some((row) => row.deliveredInline === true);
  const notice = rows.some((row) => row.hostNotice === true);
  const broke = rows.some((row) => row.versusDefault?.broke === true);
  return {
    level: Math.min(...levels),
    text: `${levels.join(" · ")}${inline ? ", inline" : ""}${
      notice ? " + notice" : ""
    }${broke ? " (broke)" : ""}`,
  };
}

/**
 * The Catalog cell of a client's catalog rows: each kind's level, as
 * `tools 5, prompts 2, resources 3`, colored by the tools level on the
 * catalog ladder (the kind whose 5, the model's side, the harness sees; a
 * client without prompts would otherwise color every cell 0), else the
 * lowest; why there is none, where there is none.
 */
export function catalogCell(rows: MatrixRow[]): SummaryCell {
  if (rows.length === 0) return { level: null, text: "not run" };
  const missed = rows.map((row) => NOT_REACHED[row.outcome]).find(Boolean);
  if (missed) return { level: null, text: missed };
  const [row] = rows;
  if (!row.catalog) {
    return {
      level: null,
      text: row.labClient === null ? "never reached the lab" : "no record",
    };
  }
  return {
    level: row.catalog.kinds.tools?.level ?? row.catalog.level,
    text: catalogLevels(row.catalog),
    ladder: "catalog",
  };
}

/** A catalog row's levels, as the lab's report words them: `tools 5, prompts 2`. */
export function catalogLevels(catalog: CatalogRow): string {
  return CATALOG_KINDS.flatMap((kind) => {
    const record = catalog.kinds[kind];
    return record ? [`${kind} ${record.level}`] : [];
  }).join(", ");
}

/** A host read from source: what it does, no levels. */
function citedRow(host: CitedHost, requests: UpstreamRequest[]): SummaryRow {
  const none = { level: null, text: "—" };
  return {
    clientId: host.id,
    name: host.displayName,
    mode: null,
    version: host.version,
    evidence: "source",
    cells: summaryCells((column) =>
      column === "native-subscribe"
        ? {
          level: null,
          text: host.subscribes === "yes"
            ? "subscribes"
            : host.subscribes === "no"
            ? "does not subscribe"
            : "listens (2026-07-28) only",
        }
        : none
    ),
    requests,
  };
}

// ---------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------

/** `owner/name#N (state)` linked to the request. */
function requestLink(request: UpstreamRequest): string {
  const match = request.url.match(
    /^https:\/\/github\.com\/([\w.-]+\/[\w.-]+)\/(?:issues|pull)\/(\d+)$/,
  );
  const name = match ? `${match[1]}#${match[2]}` : request.url;
  return `[${name}](${request.url}) (${request.state})`;
}

/** The summary as Markdown: the picture, then the table. */
export function summaryMarkdown(rows: SummaryRow[], svgPath: string): string[] {
  const lines = [
    "## At a glance",
    "",
    `![The level each client reached on each route](${svgPath})`,
    "",
    `One row per client and mode: where the facts come from (a run here, the host's source, or its documentation), and the level reached natively under each update trigger and on the two other routes (where the triggers differ, subscribe · read; + notice where the host told its model that the resource changed, without its content, which level 7 does not count; inline where version 2 came inside the notification because the client asked for it). Inline content is the mode inline-content in the client's default row: the client as in its default mode, natively under trigger subscribe, against a lab that puts version 2's text in every update unasked (--inline-content sep-3119); (broke) where it did worse than its default-mode run. Stream cut, 2026-07-28 only, 2025 only and Watches refused are the other world modes in the same row, each the client as in its default mode against a lab that ends every GET stream and listen ${STREAM_CUT.lifetimeSeconds} s after it opened, gracefully, with the update at ${STREAM_CUT.delaySeconds} s (--stream-lifetime ${STREAM_CUT.lifetimeSeconds}), serves 2026-07-28 only (--era 2026-07-28), serves 2025 only (--era 2025), or refuses every watch (--max-watches 0), where 3 (read version 1) is the most a client can reach; (broke) where it did worse than its default-mode run (refused: below 3, or a step before it lost); the matrix's Notes say what the client did: opened its stream again after the cut, fell back between eras, asked again for a refused watch. Catalog is the mode catalog in the row of the mode the client was launched in (one catalog run per mode it lists): each kind's level on the catalog ladder (0 to 5) against a lab whose tools, prompts and resources each gain an item at the client's first update (--catalog-change all), colored by the tools level; the matrix's Notes say what stopped each kind. No model drives the Inspector's clients, so the other routes do not apply to them; the reference host offers its model no shell tool, so the probe route does not apply to it. Requests upstream are the client's own tracker entries about resource subscriptions, with their state on the day they were read`,
    "",
    `| Client | Version | Evidence | ${
      SUMMARY_COLUMNS.map((column) => column.title).join(" | ")
    } | Requests upstream |`,
    `| ${Array(SUMMARY_COLUMNS.length + 4).fill("---").join(" | ")} |`,
  ];
  // Text goes through the lab's cell; the requests' links as written.
  for (const row of rows) {
    lines.push(
      `| ${
        [
          cell(row.mode ? `${row.name} (${row.mode})` : row.name),
          cell(row.version ?? "—"),
          cell(row.evidence),
          ...SUMMARY_COLUMNS.map((column) => cell(row.cells[column.key].text)),
          row.requests.map(requestLink).join(", ") || "none found",
        ].join(" | ")
      } |`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------
// SVG
// ---------------------------------------------------------------------------

/** Fill per level, 0 to 7, from red through amber to green. */
const LEVEL_FILLS = [
  "#7f1d1d",
  "#b91c1c",
  "#dc2626",
  "#f97316",
  "#facc15",
  "#a3e635",
  "#4ade80",
  "#15803d",
];
const NO_LEVEL_FILL = "#e5e7eb";
/**
 * The catalog ladder's levels 0 to 5 on the same scale: its top is the
 * resource ladder's top, its 4 a 6, and so down to red.
 */
const CATALOG_FILL_INDEX = [0, 2, 3, 4, 6, 7];
/** Levels whose fill is dark enough for white text. */
const WHITE_TEXT = new Set([0, 1, 2, 7]);
const DARK_TEXT = "#111827";

/** Font sizes: the grid's, the title's and the legend's lines. */
const FONT = { grid: 13, title: 15, legend: 11 };

const LAYOUT = {
  margin: 16,
  /** Between a cell's edge and its text, across. */
  padding: 6,
  rowHeight: 24,
  /** The height of a line of a column title (two lines at most). */
  headerLine: 16,
  legendLine: 14,
  minColumnWidth: 60,
  swatch: 36,
};

/**
 * Advance widths of the printable ASCII characters, space to tilde, in
 * thousandths of an em: each the wider of DejaVu Sans (the widest common
 * sans-serif) and Liberation Sans (Arial's and Helvetica's metrics), read
 * from the fonts' `hmtx` tables. Any other character counts as an em.
 */
const ADVANCES = {
  normal: advanceTable(
    "318 401 460 838 637 951 780 275 391 391 500 838 318 361 318 337",
    "637 637 637 637 637 637 637 637 637 637 337 337 838 838 838 557",
    "1016 685 687 723 771 667 611 778 752 295 500 667 558 863 749 788",
    "667 788 723 667 611 732 685 989 686 667 686 391 337 391 838 557",
    "500 613 635 550 635 616 353 635 634 278 278 580 278 975 634 612",
    "635 635 412 521 393 634 592 818 592 592 525 637 337 637 838",
  ),
  bold: advanceTable(
    "349 457 521 838 696 1002 873 307 458 458 523 838 380 416 380 366",
    "696 696 696 696 696 696 696 696 696 696 400 400 838 838 838 611",
    "1000 774 763 734 831 684 684 821 837 373 557 775 638 996 837 851",
    "733 851 771 721 683 813 774 1104 771 725 726 458 366 458 838 557",
    "500 675 716 593 716 679 436 716 712 343 343 666 343 1042 712 688",
    "716 716 494 596 479 712 652 924 646 652 583 712 366 712 838",
  ),
};

function advanceTable(...lines: string[]): number[] {
  return lines.join(" ").split(" ").map(Number);
}

/**
 * The width `text` takes at `size` pixels in any of the common sans-serif
 * fonts, at most: its advances, plus 5 % and half a pixel a character for
 * kerning and for advances a renderer rounds to whole pixels.
 */
export function textWidth(text: string, size: number, bold = false): number {
  const table = bold ? ADVANCES.bold : ADVANCES.normal;
  let width = 0;
  for (const char of text) {
    width += (table[char.codePointAt(0)! - 32] ?? 1000) * size / 1000 * 1.05 +
      0.5;
  }
  return Math.ceil(width);
}

/** `text` in lines no wider than `width`; a longer word has a line of its own. */
export function wrapText(
  text: string,
  width: number,
  size: number,
  bold = false,
): string[] {
  const lines: string[] = [];
  for (const word of text.split(" ")) {
    const joined = lines.length ? `${lines.at(-1)} ${word}` : word;
    if (lines.length && textWidth(joined, size, bold) <= width) {
      lines[lines.length - 1] = joined;
    } else lines.push(word);
  }
  return lines;
}

/** Text for XML: the five characters XML gives meaning to, escaped. */
export function xmlText(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
    // Characters XML 1.0 does not allow at all, and lone surrogates.
    .replace(
      // deno-lint-ignore no-control-regex
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      "\ufffd",
    );
}

/** A cell of the picture: its rectangle and the lines of text inside it. */
interface Cell {
  /**
   * What `data-cell` says, to name the cell in a failing check; a grid
   * cell says `data-client`, `data-column` and `data-level` instead.
   */
  name: string | { client: string; column: string; level: string };
  x: number;
  y: number;
  width: number;
  height: number;
  /** The rectangle's fill (default: none). */
  fill?: string;
  /** Empty lines are left blank, so text can sit at the bottom. */
  lines: string[];
  size?: number;
  bold?: boolean;
  centered?: boolean;
  color?: string;
  lineHeight?: number;
}

/**
 * One `<g>`: the cell's `<rect>`, then a `<text>` per line, each line
 * centered in its share of the height. The picture's test holds every
 * text's box inside the rectangle of its group.
 */
function svgCell(cell: Cell): string {
  const size = cell.size ?? FONT.grid;
  const lineHeight = cell.lineHeight ?? cell.height;
  const top = cell.y + (cell.height - cell.lines.length * lineHeight) / 2;
  const x = cell.centered ? cell.x + cell.width / 2 : cell.x + LAYOUT.padding;
  const attributes = `${size === FONT.grid ? "" : ` font-size="${size}"`}${
    cell.bold ? ' font-weight="bold"' : ""
  }${cell.centered ? ' text-anchor="middle"' : ""}${
    cell.color ? ` fill="${cell.color}"` : ""
  }`;
  return [
    // The group's start tag stays on one line after `deno fmt` (a test
    // matches a grid cell's three data attributes together).
    typeof cell.name === "string"
      ? `<g data-cell="${xmlText(cell.name)}">`
      : `<g data-client="${
        xmlText(cell.name.client)
      }" data-column="${cell.name.column}" data-level="${cell.name.level}">`,
    `<rect x="${cell.x}" y="${cell.y}" width="${cell.width}" height="${cell.height}" fill="${
      cell.fill ?? "none"
    }"/>`,
    // The baseline: the middle of the line, plus half of ascent less
    // descent (about 0.35 em in these fonts).
    ...cell.lines.flatMap((line, index) =>
      line
        ? [
          `<text x="${x}" y="${
            Math.round(top + (index + 0.5) * lineHeight + 0.35 * size)
          }"${attributes}>${xmlText(line)}</text>`,
        ]
        : []
    ),
    "</g>",
  ].join("\n");
}

/** A row's label: the client, its version, its mode. */
function rowLabel(row: SummaryRow): string {
  return [row.name, row.version, row.mode && `(${row.mode})`].filter(Boolean)
    .join(" ");
}

const LEGEND = [
  "1 connected, 2 listed, 3 read version 1, 4 subscribed, 5 notified, 6 re-read version 2, 7 version 2 in the agent's context without asking",
  "inline: version 2 sent in the notification, as the client asked; + notice: the host told the model of the change, without the content; (broke): worse than the default-mode run",
  `Stream cut: every stream ended at ${STREAM_CUT.lifetimeSeconds} s, the update at ${STREAM_CUT.delaySeconds} s; 2026-07-28 only, 2025 only: a lab of one era; Watches refused: every watch refused, so 3 at most`,
  "Catalog: each kind's level of 5 (1 listed, 2 notified of the change, 3 listed again with the new item, 4 used it, 5 the new tool reached the model), colored by tools: 5 as 7, 4 as 6, 3 as 4, 2 as 3, 1 as 2",
];

/** A column of a grid in the picture: plain text, or colored by level. */
interface GridColumn {
  key: string;
  title: string;
}

/** A row of a grid: its text cells, then its level cells, by column. */
interface GridRow {
  /** `data-client` of its level cells (a client's or a library's id). */
  client: string;
  /** Names its text cells in `data-cell`. */
  name: string;
  texts: string[];
  levels: SummaryCell[];
}

/** A grid of the picture: a heading line above it when it has one. */
interface Grid {
  heading?: string;
  textColumns: GridColumn[];
  levelColumns: GridColumn[];
  rows: GridRow[];
}

/** A grid's columns, each as wide as its widest text, the titles wrapped. */
function gridLayout(grid: Grid) {
  const { padding } = LAYOUT;
  const size = FONT.grid;
  const widest = (texts: string[], bold = false) =>
    Math.max(0, ...texts.map((text) => textWidth(text, size, bold)));
  const textColumns = grid.textColumns.map((column, index) => ({
    ...column,
    width: Math.max(
      widest([column.title], true),
      widest(grid.rows.map((row) => row.texts[index])),
    ) + 2 * padding,
    lines: [column.title],
  }));
  const levelColumns = grid.levelColumns.map((column, index) => {
    let inner = Math.max(
      LAYOUT.minColumnWidth,
      widest(grid.rows.map((row) => row.levels[index].text)),
      widest(column.title.split(" "), true),
    );
    // The title on one line if that widens the column by a quarter at
    // most, else on two.
    const oneLine = textWidth(column.title, size, true);
    if (oneLine <= inner * 1.25) inner = Math.max(inner, oneLine);
    while (wrapText(column.title, inner, size, true).length > 2) inner++;
    return {
      ...column,
      width: inner + 2 * padding,
      lines: wrapText(column.title, inner, size, true),
    };
  });
  const headerLines = Math.max(
    1,
    ...levelColumns.map((column) => column.lines.length),
  );
  const headingHeight = grid.heading ? LAYOUT.rowHeight : 0;
  const headerHeight = headerLines * LAYOUT.headerLine + 4;
  return {
    textColumns,
    levelColumns,
    headerLines,
    width: [...textColumns, ...levelColumns].reduce(
      (sum, column) => sum + column.width,
      0,
    ),
    headingWidth: grid.heading
      ? textWidth(grid.heading, size, true) + 2 * padding
      : 0,
    height: headingHeight + headerHeight + grid.rows.length * LAYOUT.rowHeight,
  };
}

/** A grid's cells from `top`: its heading, column titles, then its rows. */
function gridParts(grid: Grid, top: number): string[] {
  const { margin, rowHeight, headerLine } = LAYOUT;
  const layout = gridLayout(grid);
  const parts: string[] = [];
  let y = top;
  if (grid.heading) {
    parts.push(svgCell({
      name: `heading ${grid.heading}`,
      x: margin,
      y,
      width: Math.max(layout.width, layout.headingWidth),
      height: rowHeight,
      lines: [grid.heading],
      bold: true,
    }));
    y += rowHeight;
  }
  const headerHeight = layout.headerLines * headerLine + 4;
  const columns = [...layout.textColumns, ...layout.levelColumns];
  let left = margin;
  for (const [index, column] of columns.entries()) {
    parts.push(svgCell({
      name: `header ${column.key}`,
      x: left,
      y,
      width: column.width,
      height: headerHeight,
      bold: true,
      lines: [
        ...Array(layout.headerLines - column.lines.length).fill(""),
        ...column.lines,
      ],
      lineHeight: headerLine,
      centered: index >= layout.textColumns.length,
    }));
    left += column.width;
  }
  y += headerHeight;
  for (const row of grid.rows) {
    let left = margin;
    for (const [index, column] of layout.textColumns.entries()) {
      parts.push(svgCell({
        name: `${row.name} ${column.key}`,
        x: left,
        y,
        width: column.width,
        height: rowHeight,
        lines: [row.texts[index]],
      }));
      left += column.width;
    }
    for (const [index, column] of layout.levelColumns.entries()) {
      const { level, text, ladder } = row.levels[index];
      const shade = level === null
        ? null
        : ladder === "catalog"
        ? CATALOG_FILL_INDEX[level]
        : level;
      parts.push(svgCell({
        name: {
          client: row.client,
          column: column.key,
          level: String(level ?? "none"),
        },
        x: left + 1,
        y: y + 1,
        width: column.width - 2,
        height: rowHeight - 2,
        fill: shade === null ? NO_LEVEL_FILL : LEVEL_FILLS[shade],
        lines: [text],
        centered: true,
        color: shade !== null && WHITE_TEXT.has(shade) ? "#ffffff" : DARK_TEXT,
      }));
      left += column.width;
    }
    y += rowHeight;
  }
  return parts;
}

/** The clients' grid: client and evidence, then a level per route. */
function clientGrid(rows: SummaryRow[]): Grid {
  return {
    textColumns: [
      { key: "label", title: "Client" },
      { key: "evidence", title: "Evidence" },
    ],
    levelColumns: [...SUMMARY_COLUMNS],
    rows: rows.map((row) => ({
      client: row.clientId,
      name: `${row.clientId}${row.mode ? ` ${row.mode}` : ""}`,
      texts: [rowLabel(row), row.evidence],
      levels: SUMMARY_COLUMNS.map((column) => row.cells[column.key]),
    })),
  };
}

/** Whether a library has an API for a step, in a word or two. */
function apiWord(api: LibraryRow["subscribe"]): string {
  return "call" in api ? "yes" : "none";
}

/** The libraries' grid: library and its APIs, then the app's and agent's levels. */
function libraryGrid(libraries: LibraryRow[]): Grid {
  const none = { level: null, text: "no agent loop" };
  return {
    heading: "Client libraries: an app on each, and its agent loop",
    textColumns: [
      { key: "label", title: "Library" },
      { key: "subscribe", title: "Subscribe API" },
      { key: "update", title: "Update API" },
    ],
    levelColumns: [
      { key: "app-2025", title: "App, 2025" },
      { key: "app-2026-07-28", title: "App, 2026-07-28" },
      { key: "app-stdio", title: "App, stdio" },
      { key: "agent-native", title: "Agent, native" },
      { key: "agent-wait-tool", title: "Agent, wait tool" },
    ],
    rows: libraries.map((library) => ({
      client: library.id,
      name: library.id,
      texts: [
        `${library.npmPackage} ${library.version}`,
        apiWord(library.subscribe),
        apiWord(library.update),
      ],
      levels: [
        library.app["2025"],
        library.app["2026-07-28"],
        library.app.stdio,
        library.agent?.native ?? none,
        library.agent?.waitTool ?? none,
      ],
    })),
  };
}

/**
 * The summary as an SVG picture: the clients' grid (clients down, routes
 * across), the libraries' grid below it when there are libraries, each
 * cell colored by its level and labelled with it, then a legend. Every
 * column and the picture are as wide as their text in any common
 * sans-serif font (`textWidth`), and the legend wraps inside the picture.
 * Every text sits in a `<g>` with its cell's rectangle: a level cell's
 * group carries `data-client`, `data-column` and `data-level`, any other's
 * `data-cell`.
 */
export function summarySvg(
  rows: SummaryRow[],
  generatedAt: string,
  libraries: LibraryRow[] = [],
): string {
  const { margin, padding, rowHeight, swatch } = LAYOUT;
  const size = FONT.grid;
  const grids = [
    clientGrid(rows),
    ...(libraries.length > 0 ? [libraryGrid(libraries)] : []),
  ];
  const layouts = grids.map(gridLayout);
  const title =
    `MCP resource subscriptions: the level each client reached, by route (${
      generatedAt.slice(0, 10)
    })`;
  const levelLabel = textWidth("Level:", size) + 2 * padding;
  const notMeasured = "not measured (the cell says why)";
  const swatchesWidth = levelLabel + (LEVEL_FILLS.length + 1) * (swatch + 4) +
    4 + textWidth(notMeasured, size) + 2 * padding;
  const width = 2 * margin + Math.max(
    ...layouts.flatMap((layout) => [layout.width, layout.headingWidth]),
    textWidth(title, FONT.title, true) + 2 * padding,
    swatchesWidth,
  );
  const gridTops: number[] = [];
  let top = margin + rowHeight + 4;
  for (const layout of layouts) {
    gridTops.push(top);
    top += layout.height + 12;
  }
  const swatchTop = top;
  const legendTop = swatchTop + 24;
  const legendLines = LEGEND.flatMap((text) =>
    wrapText(text, width - 2 * margin - 2 * padding, FONT.legend)
  );
  const legendHeight = legendLines.length * LAYOUT.legendLine + 4;
  const height = legendTop + legendHeight + margin;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="${size}">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    svgCell({
      name: "title",
      x: margin,
      y: margin,
      width: width - 2 * margin,
      height: rowHeight,
      lines: [title],
      size: FONT.title,
      bold: true,
    }),
    ...grids.flatMap((grid, index) => gridParts(grid, gridTops[index])),
    ...svgLegend(swatchTop, levelLabel, notMeasured),
    svgCell({
      name: "legend",
      x: margin,
      y: legendTop,
      width: width - 2 * margin,
      height: legendHeight,
      lines: legendLines,
      size: FONT.legend,
      lineHeight: LAYOUT.legendLine,
    }),
    "</svg>",
  ].join("\n") + "\n";
}

/** The colors of levels 0 to 7 and of "not measured", on one line. */
function svgLegend(
  top: number,
  labelWidth: number,
  notMeasured: string,
): string[] {
  const { margin, padding, swatch } = LAYOUT;
  const box = { y: top, height: 20 };
  const parts = [
    svgCell({
      ...box,
      name: "legend level",
      x: margin,
      width: labelWidth,
      lines: ["Level:"],
    }),
  ];
  const fills = [...LEVEL_FILLS, NO_LEVEL_FILL];
  fills.forEach((fill, level) => {
    const last = level === LEVEL_FILLS.length;
    parts.push(svgCell({
      ...box,
      name: last ? "legend not measured" : `legend level ${level}`,
      x: margin + labelWidth + level * (swatch + 4) + (last ? 8 : 0),
      width: swatch,
      fill,
      lines: last ? [] : [String(level)],
      centered: true,
      color: WHITE_TEXT.has(level) ? "#ffffff" : DARK_TEXT,
    }));
  });
  parts.push(svgCell({
    ...box,
    name: "legend not measured text",
    x: margin + labelWidth + fills.length * (swatch + 4) + 4,
    width: textWidth(notMeasured, FONT.grid) + 2 * padding,
    lines: [notMeasured],
  }));
  return parts;
}
