/**
 * The matrix's Libraries section: for each client library of the catalog
 * (`libraries.ts`), the API an app has for subscribing and for the update
 * (or the package line that shows there is none), beside the levels its
 * app reached in each era and its agent loop on each route. The levels are
 * the rows' own; the facts are the catalog's. `matrix.json` holds these
 * rows as `libraries`, and the Markdown table is rendered from them.
 *
 * @module
 */

import { cell } from "../../main.ts";
import type { PackageCitation } from "../catalog/cited.ts";
import {
  LIBRARIES,
  type LibraryApi,
  type LibraryDefinition,
} from "../catalog/libraries.ts";
import { type LibraryRow, type MatrixRow, type SummaryCell } from "./rows.ts";
import { catalogCell, levelCell } from "./summary.ts";

/** Every library of the catalog, its levels from the matrix's rows. */
export function libraryRows(rows: MatrixRow[]): LibraryRow[] {
  // Long-wait and progress-check rows answer other questions.
  const plain = rows.filter((row) => !row.longWait && !row.progressCheck);
  return LIBRARIES.map((library) => {
    const of = (clientId: string, mode: string, route: string) =>
      levelCell(
        plain.filter((row) =>
          row.clientId === clientId && row.mode === mode &&
          (row.route ?? "native") === route
        ),
      );
    return {
      id: library.id,
      npmPackage: library.npmPackage,
      version: library.version,
      dependencies: library.dependencies,
      subscribe: library.subscribe,
      update: library.update,
      sdkClient: library.sdkClient,
      app: {
        "2025": library.modes.includes("default")
          ? of(library.id, "default", "native")
          : eraGapCell(library, "2025"),
        "2026-07-28": library.modes.includes("2026-07-28")
          ? of(library.id, "2026-07-28", "native")
          : eraGapCell(library, "2026-07-28"),
        stdio: library.modes.includes("stdio")
          ? of(library.id, "stdio", "native")
          : library.modes.includes("stdio-2026-07-28")
          ? eraNoted(of(library.id, "stdio-2026-07-28", "native"))
          : eraGapCell(library, "stdio"),
      },
      // Launched as its first mode (its default, or 2026-07-28 for a
      // library that speaks only that era), as the summary's cell is.
      catalog: catalogCell(
        plain.filter((row) =>
          row.clientId === library.id && row.mode === "catalog" &&
          row.launchMode === library.modes[0]
        ),
      ),
      gaps: library.gaps ?? {},
      ...(library.note ? { note: library.note } : {}),
      agent: library.agent
        ? {
          api: library.agent.api,
          native: of(`${library.id}-agent`, "default", "native"),
          waitTool: of(`${library.id}-agent`, "default", "wait-tool"),
        }
        : null,
    };
  });
}

/** A stdio cell in the 2026-07-28 era says so. */
function eraNoted(cell: SummaryCell): SummaryCell {
  return cell.level === null
    ? cell
    : { ...cell, text: `${cell.text} (2026-07-28)` };
}

/** An era (or stdio) the app is not run in: no API for it, or not run (the list says why). */
function eraGapCell(
  library: LibraryDefinition,
  era: "2025" | "2026-07-28" | "stdio",
): SummaryCell {
  const why = library.gaps?.[era] ?? "";
  return {
    level: null,
    text: why.startsWith("not run") ? "not run" : "no API",
  };
}

/** Text as a Markdown code span, whatever backticks it holds. */
export function codeSpan(text: string): string {
  const longest = Math.max(
    0,
    ...(text.match(/`+/g) ?? []).map((run) => run.length),
  );
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : "";
  return `${fence}${pad}${text}${pad}${fence}`;
}

/** An API cell: the call, or "none" with the file and line that show it. */
function apiCell(api: LibraryApi): string {
  return "call" in api
    ? codeSpan(api.call)
    : `none (${codeSpan(`${api.none.path}:${api.none.line}`)})`;
}

/** A package line as code spans: the package, its file and line. */
export function packageLine(citation: PackageCitation): string {
  return `${codeSpan(citation.package)} ${
    codeSpan(`${citation.path}:${citation.line}`)
  }`;
}

/** A citation as a list item: the package file and line, the line, what it shows. */
function citationItem(step: string, citation: PackageCitation): string {
  return `- ${step}: ${packageLine(citation)} ${
    codeSpan(citation.quote)
  }: ${citation.says}`;
}

/** The section as Markdown: what was run, the table, then the citations. */
export function librariesMarkdown(libraries: LibraryRow[]): string[] {
  const lines = [
    "## Libraries",
    "",
    "Most software that consumes MCP is an app built on a client library. Each library below ran as a small app of this checkout (`clients/programs/node/<id>.mjs` on Node 24 for a JavaScript library, else a program in its language under `clients/programs/<language>/`, installed from its registry), written from the library's documented API: it connects to the lab over HTTP (and, where the library has a stdio transport, starts it over stdio), lists, reads version 1, subscribes and waits for the update through the library's API where there is one, and reads again; its level is the lab's, natively under both triggers (subscribe · read where they differ). Its catalog cell is its run against a lab whose tools, prompts and resources each gain an item (mode catalog, launched as its first mode): 4 when it listed a list again on the notification and used the new item. Where the library ships an agent loop, the same program ran it against the scripted model with the library's MCP tools and one tool of the app's own, natively and with the lab's wait tool; the program forwards nothing to the model itself, so the agent's level says what the library does on its own (7: version 2 reached the model without its asking). An API cell without a call cites the package's own file and line, listed under the table.",
    "",
    "| Library | Version | Subscribe API | Update API | SDK client underneath | App, 2025 | App, 2026-07-28 | App, stdio | App, catalog | Agent loop | Agent, native | Agent, wait tool |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  // Text goes through the lab's cell; the catalog's own Markdown (its calls
  // as code spans, its sentences on the SDK client and the agent loop) is
  // written as it is, and its test holds it to no pipe or line break.
  for (const library of libraries) {
    lines.push(
      `| ${
        [
          cell(library.npmPackage),
          cell(library.version),
          apiCell(library.subscribe),
          apiCell(library.update),
          library.sdkClient,
          cell(library.app["2025"].text),
          cell(library.app["2026-07-28"].text),
          cell(library.app.stdio.text),
          cell(library.catalog.text),
          library.agent ? library.agent.api : "none",
          cell(library.agent?.native.text ?? "—"),
          cell(library.agent?.waitTool.text ?? "—"),
        ].join(" | ")
      } |`,
    );
  }
  const citations = libraries.flatMap((library) => [
    ..."none" in library.subscribe
      ? [citationItem(
        `${library.npmPackage}, no subscribe API`,
        library.subscribe.none,
      )]
      : [],
    ..."none" in library.update
      ? [citationItem(
        `${library.npmPackage}, no update API`,
        library.update.none,
      )]
      : [],
    ...Object.entries(library.gaps).map(([era, why]) =>
      `- ${library.npmPackage}, no ${
        era === "stdio" ? "stdio" : `${era} era`
      }: ${why}`
    ),
    ...library.note ? [`- ${library.npmPackage}: ${library.note}`] : [],
  ]);
  if (citations.length > 0) {
    lines.push(
      "",
      "Where a library has no API for a step or an era, and why a pin is not the newest:",
      "",
      ...citations,
    );
  }
  return lines;
}
