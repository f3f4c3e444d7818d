/**
 * The matrix at a glance: one row per client (and mode), what its evidence
 * is, and the level it reached on each route, as a Markdown table above the
 * full matrix and as an SVG grid beside it
 * (`results/compatibility-summary.svg`). Hosts read from source have a row
 * too, without levels. Pure functions, so the tests need no client.
 *
 * @module
 */

import { ALL_CLIENTS, isBrowserClient, isCommandClient } from "./catalog.ts";
import type { CitedHost, UpstreamRequest } from "./cited.ts";
import type { MatrixRow } from "./matrix.ts";

/**
 * The native route under each trigger, then the two other routes, then the
 * mode inline-content (native, trigger subscribe) in the default row.
 */
export const SUMMARY_COLUMNS = [
  { key: "native-subscribe", title: "Native, trigger subscribe" },
  { key: "native-read", title: "Native, trigger read" },
  { key: "wait-tool", title: "Wait tool" },
  { key: "shell-probe", title: "Shell probe" },
  { key: "inline-content", title: "Inline content" },
] as const;

export type SummaryColumn = (typeof SUMMARY_COLUMNS)[number]["key"];

/** Where a row's facts come from: a run, the host's source, its docs. */
export type EvidenceKind = "run" | "source" | "documentation";

/** One cell: the level reached, or null where none was measured. */
export interface SummaryCell {
  level: number | null;
  text: string;
}

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
  // Long-wait and progress-check rows answer other questions.
  const plain = sources.rows.filter((row) =>
    !row.longWait && !row.progressCheck
  );
  // An inline-content row is a cell of its client's default row.
  const groups = Map.groupBy(
    plain,
    (row) =>
      `${row.clientId}|${row.mode === "inline-content" ? "default" : row.mode}`,
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
    if (column === "inline-content") {
      return mode === "default"
        ? levelCell(rows.filter((row) => row.mode === "inline-content"))
        : { level: null, text: "default mode only" };
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
        row.mode !== "inline-content" &&
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
    cells: {
      "native-subscribe": cell("native-subscribe"),
      "native-read": cell("native-read"),
      "wait-tool": cell("wait-tool"),
      "shell-probe": cell("shell-probe"),
      "inline-content": cell("inline-content"),
    },
    requests,
  };
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
 * "(broke)" when an inline-content row did worse than its default row.
 */
function levelCell(rows: MatrixRow[]): SummaryCell {
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

/** A host read from source: what it does, no levels. */
function citedRow(host: CitedHost, requests: UpstreamRequest[]): SummaryRow {
  const none = { level: null, text: "—" };
  return {
    clientId: host.id,
    name: host.displayName,
    mode: null,
    version: host.version,
    evidence: "source",
    cells: {
      "native-subscribe": {
        level: null,
        text: host.subscribes === "yes"
          ? "subscribes"
          : host.subscribes === "no"
          ? "does not subscribe"
          : "listens (2026-07-28) only",
      },
      "native-read": none,
      "wait-tool": none,
      "shell-probe": none,
      "inline-content": none,
    },
    requests,
  };
}

// ---------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------

/** A Markdown table cell: no bare pipe, no line break. */
function markdownCell(text: string): string {
  return text.replaceAll("|", "\\|").replace(/\s*[\r\n]+\s*/g, " ");
}

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
    "One row per client and mode: where the facts come from (a run here, the host's source, or its documentation), and the level reached natively under each update trigger and on the two other routes (where the triggers differ, subscribe · read; + notice where the host told its model that the resource changed, without its content, which level 7 does not count; inline where version 2 came inside the notification because the client asked for it). Inline content is the mode inline-content in the client's default row: the client as in its default mode, natively under trigger subscribe, against a lab that puts version 2's text in every update unasked (--inline-content sep-3119); (broke) where it did worse than its default-mode run. No model drives the Inspector's clients, so the other routes do not apply to them; the reference host offers its model no shell tool, so the probe route does not apply to it. Requests upstream are the client's own tracker entries about resource subscriptions, with their state on the day they were read.",
    "",
    `| Client | Version | Evidence | ${
      SUMMARY_COLUMNS.map((column) => column.title).join(" | ")
    } | Requests upstream |`,
    `| ${Array(SUMMARY_COLUMNS.length + 4).fill("---").join(" | ")} |`,
  ];
  for (const row of rows) {
    lines.push(
      `| ${
        [
          row.mode ? `${row.name} (${row.mode})` : row.name,
          row.version ?? "—",
          row.evidence,
          ...SUMMARY_COLUMNS.map((column) => row.cells[column.key].text),
          row.requests.map(requestLink).join(", ") || "none found",
        ].map(markdownCell).join(" | ")
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
/** Levels whose fill is dark enough for white text. */
const WHITE_TEXT = new Set([0, 1, 2, 7]);

const LAYOUT = {
  margin: 16,
  labelWidth: 300,
  evidenceWidth: 90,
  cellWidth: 150,
  rowHeight: 24,
  titleHeight: 30,
  headerHeight: 26,
  legendHeight: 60,
};

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

/** One `<text>` element. */
function svgText(
  x: number,
  y: number,
  text: string,
  attributes = "",
): string {
  return `<text x="${x}" y="${y}"${attributes}>${xmlText(text)}</text>`;
}

/**
 * The summary as an SVG grid: clients down, routes across, each cell
 * colored by its level and labelled with it, then a legend. Every cell's
 * rectangle carries `data-client`, `data-column` and `data-level`.
 */
export function summarySvg(rows: SummaryRow[], generatedAt: string): string {
  const { margin, labelWidth, evidenceWidth, cellWidth, rowHeight } = LAYOUT;
  const gridLeft = margin + labelWidth + evidenceWidth;
  const gridTop = margin + LAYOUT.titleHeight + LAYOUT.headerHeight;
  const width = gridLeft + SUMMARY_COLUMNS.length * cellWidth + margin;
  const height = gridTop + rows.length * rowHeight + LAYOUT.legendHeight +
    margin;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    svgText(
      margin,
      margin + 16,
      `MCP resource subscriptions: the level each client reached, by route (${
        generatedAt.slice(0, 10)
      })`,
      ' font-size="15" font-weight="bold"',
    ),
    svgText(margin, gridTop - 8, "Client", ' font-weight="bold"'),
    svgText(
      margin + labelWidth,
      gridTop - 8,
      "Evidence",
      ' font-weight="bold"',
    ),
    ...SUMMARY_COLUMNS.map((column, index) =>
      svgText(
        gridLeft + index * cellWidth + cellWidth / 2,
        gridTop - 8,
        column.title,
        ' font-weight="bold" text-anchor="middle"',
      )
    ),
  ];
  rows.forEach((row, index) => {
    const top = gridTop + index * rowHeight;
    const baseline = top + rowHeight / 2 + 5;
    parts.push(
      svgText(
        margin,
        baseline,
        [row.name, row.version, row.mode && `(${row.mode})`].filter(Boolean)
          .join(" "),
      ),
      svgText(margin + labelWidth, baseline, row.evidence),
      ...SUMMARY_COLUMNS.map((column, columnIndex) =>
        svgCell(row, column.key, gridLeft + columnIndex * cellWidth, top)
      ),
    );
  });
  parts.push(...svgLegend(gridTop + rows.length * rowHeight + 12), "</svg>");
  return parts.join("\n") + "\n";
}

function svgCell(
  row: SummaryRow,
  column: SummaryColumn,
  left: number,
  top: number,
): string {
  const { cellWidth, rowHeight } = LAYOUT;
  const { level, text } = row.cells[column];
  const fill = level === null ? NO_LEVEL_FILL : LEVEL_FILLS[level];
  const color = level !== null && WHITE_TEXT.has(level) ? "#ffffff" : "#111827";
  return [
    `<rect x="${left + 1}" y="${top + 1}" width="${cellWidth - 2}" height="${
      rowHeight - 2
    }" fill="${fill}" data-client="${
      xmlText(row.clientId)
    }" data-column="${column}" data-level="${level ?? "none"}"/>`,
    svgText(
      left + cellWidth / 2,
      top + rowHeight / 2 + 5,
      text,
      ` text-anchor="middle" fill="${color}"`,
    ),
  ].join("\n");
}

/** The colors of levels 0 to 7 and of "not measured". */
function svgLegend(top: number): string[] {
  const { margin } = LAYOUT;
  const swatch = 36;
  const parts = [svgText(margin, top + 14, "Level:")];
  LEVEL_FILLS.forEach((fill, level) => {
    const left = margin + 50 + level * (swatch + 4);
    parts.push(
      `<rect x="${left}" y="${top}" width="${swatch}" height="20" fill="${fill}"/>`,
      svgText(
        left + swatch / 2,
        top + 14,
        String(level),
        ` text-anchor="middle" fill="${
          WHITE_TEXT.has(level) ? "#ffffff" : "#111827"
        }"`,
      ),
    );
  });
  const after = margin + 50 + LEVEL_FILLS.length * (swatch + 4) + 8;
  parts.push(
    `<rect x="${after}" y="${top}" width="${swatch}" height="20" fill="${NO_LEVEL_FILL}"/>`,
    svgText(
      after + swatch + 6,
      top + 14,
      "not measured (the cell says why)",
    ),
    svgText(
      margin,
      top + 38,
      "1 connected, 2 listed, 3 read version 1, 4 subscribed, 5 notified, 6 re-read version 2, 7 version 2 in the agent's context without asking",
      ' font-size="11"',
    ),
    svgText(
      margin,
      top + 52,
      "inline: version 2 sent in the notification, as the client asked; + notice: the host told the model of the change, without the content; (broke): below the default-mode run",
      ' font-size="11"',
    ),
  );
  return parts;
}
