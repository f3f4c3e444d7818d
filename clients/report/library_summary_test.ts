import assert from "node:assert/strict";
import { LIBRARIES } from "../catalog/libraries.ts";
import { matrixRow } from "../testdata/fixtures.ts";
import { librariesMarkdown, libraryRows } from "./library_summary.ts";
import type { MatrixRow } from "./rows.ts";

/** A catalog row of the Go SDK's app, launched as `launchMode`, each list at `level`. */
function goCatalogRow(
  launchMode: MatrixRow["launchMode"],
  level: number,
): MatrixRow {
  const kind = { added: "x", labLevel: level, level, missing: "" };
  return matrixRow({
    clientId: "go-sdk",
    mode: "catalog",
    launchMode,
    level: 6,
    catalog: {
      level,
      kinds: { tools: kind, prompts: kind, resources: kind },
      newTool: null,
      updatesSent: 1,
    },
  });
}

Deno.test("libraryRows: each library's app in each era and over stdio, and its catalog run launched as its first mode; none is 'not run'", () => {
  const rows = libraryRows([
    matrixRow({ clientId: "go-sdk", mode: "default", level: 6 }),
    matrixRow({ clientId: "go-sdk", mode: "stdio", level: 5 }),
    // Launched over stdio, a later mode: not the cell's run.
    goCatalogRow("stdio", 2),
    goCatalogRow("default", 4),
  ]);
  assert.deepEqual(rows.map((row) => row.id), LIBRARIES.map(({ id }) => id));
  const go = rows.find((row) => row.id === "go-sdk")!;
  assert.deepEqual(go.app["2025"], { level: 6, text: "6" });
  assert.deepEqual(go.app.stdio, { level: 5, text: "5" });
  assert.deepEqual(go.catalog, {
    level: 4,
    text: "tools 4, prompts 4, resources 4",
    ladder: "catalog",
  });
  const python = rows.find((row) => row.id === "python-sdk")!;
  assert.deepEqual(python.catalog, { level: null, text: "not run" });
});

Deno.test("librariesMarkdown: an App, catalog column after the app's levels, a cell per library", () => {
  const lines = librariesMarkdown(
    libraryRows([
      matrixRow({ clientId: "go-sdk", mode: "default", level: 6 }),
      goCatalogRow("default", 4),
    ]),
  );
  const header = lines.find((line) => line.startsWith("| Library |"))!;
  assert.equal(
    header,
    "| Library | Version | Subscribe API | Update API | SDK client underneath | App, 2025 | App, 2026-07-28 | App, stdio | App, catalog | Agent loop | Agent, native | Agent, wait tool |",
  );
  const go = lines.find((line) =>
    line.startsWith("| github.com/modelcontextprotocol/go-sdk |")
  )!;
  const cells = go.split(" | ");
  assert.equal(cells[5], "6");
  assert.equal(cells[8], "tools 4, prompts 4, resources 4");
  assert.equal(header.split(" | ").length, cells.length);
});

Deno.test("librariesMarkdown: a package's name through the lab's cell (no mention); the catalog's own Markdown (API calls as code, the SDK client sentence, the agent loop) as written, none holding a pipe or a line break", () => {
  const client = LIBRARIES.find((library) => library.id === "mcp-client")!;
  assert.ok("call" in client.subscribe && "call" in client.update);
  const line = librariesMarkdown(libraryRows([])).find((text) =>
    text.startsWith("| @")
  )!;
  assert.deepEqual(line.split(" | ").slice(0, 5), [
    "| @<wbr>modelcontextprotocol/client",
    client.version,
    `\`${client.subscribe.call}\``,
    `\`${client.update.call}\``,
    client.sdkClient,
  ]);
  for (const library of LIBRARIES) {
    const written = [
      library.sdkClient,
      library.agent?.api ?? "",
      ...[library.subscribe, library.update].map((api) =>
        "call" in api ? api.call : `${api.none.path}:${api.none.line}`
      ),
    ];
    for (const text of written) {
      assert.doesNotMatch(text, /[|\r\n]/, `${library.id}: ${text}`);
    }
  }
});
