/**
 * What changed between two runs of a table, the clients' matrix or the
 * servers table: rows matched by what they are of (never by version), each
 * compared on its level, its outcome and its notes, and written as the
 * change table of `results/changes.md`. `deno task clients` and `deno task
 * servers` share it (`--compare`, `--latest`); each turns its rows into
 * `ComparedRow`s. A table file is untrusted: its shape is checked before
 * anything reads it, and what it says is printed inert and bounded, in
 * Markdown (`cell`) and on the terminal (`printableLine`).
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import { cell } from "../../main.ts";
import { formatFiles, printableLine } from "../support/process.ts";

/** How much of a name, a version or a date a change shows. */
const SHORT = 100;
/** How much of a note a change shows. */
const LONG = 300;

/**
 * Text from a table file or npm as `changes.md` shows it: one line of at
 * most `max` characters, inert in Markdown.
 */
export function markdownShown(text: string, max = SHORT): string {
  return cell(printableLine(text, max));
}

/** An entity for a character, as `markdownText` writes them. */
const entity = (char: string) => `&#${char.charCodeAt(0)};`;

/**
 * Such text in a paragraph: `markdownShown`, and whatever could open a
 * block at the start of a word (a heading's `#`, a list's `-` or `1.`, a
 * fence's `~`, a rule's `=`) as an entity. `deno fmt` rewraps paragraphs
 * and may start a line with any word (it once made a `## ` heading so).
 */
export function proseShown(text: string, max = SHORT): string {
  return markdownShown(text, max)
    .replace(/(?<=^| )[#*+=_~-]/g, entity)
    .replace(/(?<=(?:^| )\d{1,9})[.)](?= |$)/g, entity);
}

/** A row as the comparison sees it. */
export interface ComparedRow {
  /** What the row is of (client, mode, route, trigger…), unique in its table. */
  key: string;
  /** The cells that name it, under the table's own headers; the first is who. */
  what: string[];
  era: string;
  version: string;
  /** Null for a row that could not run. */
  level: number | null;
  outcome: string;
  notes: string[];
}

/** One row of the change table, its cells `old → new` where they differ. */
export interface Change {
  what: string[];
  era: string;
  version: string;
  level: string;
  outcome: string;
  /** The first note that differs, as the new run says it (or what is gone). */
  note: string;
  /**
   * A level or an outcome changed, or the row is new or gone; else its era
   * or its notes alone.
   */
  decisive: boolean;
}

export interface Comparison {
  changes: Change[];
  /** Who moved to another version: `Copilot CLI 1.0.102 → 1.0.103`. */
  versions: string[];
  /** How many rows the two runs share or either holds alone. */
  compared: number;
}

/** Exit status 3 when a level or an outcome changed, else 0. */
export function comparisonStatus(comparison: Comparison): 0 | 3 {
  return comparison.changes.some((change) => change.decisive) ? 3 : 0;
}

/** `a → b`, or `a` alone when they are the same. */
function moved(before: string, after: string): string {
  return before === after ? after : `${before} → ${after}`;
}

/** Durations vary from run to run; a note differs by more than its numbers. */
function sameNote(a: string | undefined, b: string | undefined): boolean {
  const plain = (note?: string) =>
    note?.replace(/\b\d+(\.\d+)? ?(ms|s)\b/g, "N s");
  return plain(a) === plain(b);
}

/** The first note that differs: the new one, or the old one gone. */
function firstNoteDiffering(before: string[], after: string[]): string {
  for (let index = 0; index < Math.max(before.length, after.length); index++) {
    if (sameNote(before[index], after[index])) continue;
    return after[index] ?? `no longer: ${before[index]}`;
  }
  return "";
}

/** Compares two runs' rows, in the new run's order, gone rows last. */
export function compareRows(
  before: ComparedRow[],
  after: ComparedRow[],
): Comparison {
  const old = new Map(before.map((row) => [row.key, row]));
  const fresh = new Map(after.map((row) => [row.key, row]));
  const level = (row?: ComparedRow) => row ? String(row.level ?? "—") : "—";
  const changes: Change[] = [];
  for (const key of new Set([...fresh.keys(), ...old.keys()])) {
    const a = old.get(key);
    const b = fresh.get(key);
    const note = firstNoteDiffering(a?.notes ?? [], b?.notes ?? []);
    const decisive = !a || !b || a.level !== b.level ||
      a.outcome !== b.outcome;
    if (!decisive && note === "" && a!.era === b!.era) continue;
    changes.push({
      what: (b ?? a)!.what,
      era: moved(a?.era ?? "—", b?.era ?? "—"),
      version: moved(a?.version ?? "—", b?.version ?? "—"),
      level: moved(level(a), level(b)),
      outcome: moved(a?.outcome ?? "—", b?.outcome ?? "—"),
      note: note || "(none)",
      decisive,
    });
  }
  const versions = [
    ...new Set(
      after.flatMap((row) => {
        const was = old.get(row.key)?.version;
        return was && was !== row.version
          ? [`${row.what[0]} ${was} → ${row.version}`]
          : [];
      }),
    ),
  ];
  return {
    changes,
    versions,
    compared: new Set([...old.keys(), ...fresh.keys()]).size,
  };
}

/**
 * A table's section of `results/changes.md`: what was compared (Markdown
 * the caller made inert), who moved to a new version, the change table
 * (`headers` name the `what` cells), and plain sentences the caller adds
 * (a version not found, a run not made), escaped here.
 */
export function changesSection(
  comparison: Comparison,
  headers: string[],
  compared: { before: string; after: string; extra?: string[] },
): string {
  const { changes, versions } = comparison;
  const decisive = changes.filter((change) => change.decisive).length;
  return [
    `${compared.before} → ${compared.after}.`,
    "",
    versions.length > 0
      ? `New versions: ${
        versions.map((version) => proseShown(version, 3 * SHORT)).join("; ")
      }.`
      : "Every version as before.",
    // Each a sentence, with one full stop.
    ...(compared.extra ?? []).flatMap((
      line,
    ) => ["", proseShown(line, 4 * LONG).replace(/\.?$/, ".")]),
    "",
    changes.length === 0
      ? `Nothing changed in ${comparison.compared} rows compared (exit status 0).`
      : `${comparison.compared} rows compared: ${decisive} changed in level or outcome, ${
        changes.length - decisive
      } in their era or notes alone (exit status ${
        comparisonStatus(comparison)
      }).`,
    ...changes.length === 0 ? [] : [
      "",
      `| ${
        [
          ...headers,
          "Era",
          "Version",
          "Level",
          "Outcome",
          "First note that differs",
        ]
          .join(" | ")
      } |`,
      `|${" --- |".repeat(headers.length + 5)}`,
      ...changes.map((change) =>
        `| ${
          [
            ...[
              ...change.what,
              change.era,
              change.version,
              change.level,
              change.outcome,
            ].map((text) => markdownShown(text)),
            markdownShown(change.note, LONG),
          ].join(" | ")
        } |`
      ),
    ],
  ].join("\n");
}

/** The heading of `changes.md` and the words under it. */
const CHANGES_HEADER = [
  "# What changed",
  "",
  "Written by `deno task clients --latest` (or `--compare`) and `deno task servers --latest` (or `--compare`), each into its own section: the rows of the committed table against a new run, matched by client, mode, route and trigger (by row, for the servers). How to read and accept a change: [docs/testing.md](../docs/testing.md#the-watch).",
];

/** The sections of `changes.md`, one per table, in this order. */
const CHANGES_TITLES = ["Clients", "Servers and proxies"] as const;
export type ChangesTitle = typeof CHANGES_TITLES[number];

/**
 * `changes.md` with `section` under `## title`, the other table's section
 * kept as it was. Any other `## ` heading in `previous` (one a file
 * written before its text was escaped let in) is dropped, with its text.
 */
export function withSection(
  previous: string,
  title: ChangesTitle,
  section: string,
): string {
  const sections = new Map(
    previous.split(/^## /m).slice(1).map((text) => {
      const [heading, ...body] = text.split("\n");
      return [heading, body.join("\n").trim()];
    }),
  );
  sections.set(title, section.trim());
  const kept = CHANGES_TITLES.flatMap((heading) =>
    sections.has(heading) ? [[heading, sections.get(heading)!]] : []
  );
  return [
    ...CHANGES_HEADER,
    ...kept.flatMap(([heading, body]) => [
      "",
      `## ${heading}`,
      "",
      body,
    ]),
    "",
  ].join("\n");
}

/** The change table for the console: one inert, bounded line per change. */
export function changeLines(comparison: Comparison): string[] {
  const shown = (text: string, max = SHORT) => printableLine(text, max);
  return comparison.changes.map((change) =>
    `${change.decisive ? "changed" : "noted"}: ${
      change.what.map((text) => shown(text)).join(" ")
    } (era ${shown(change.era)}): ${shown(change.version)}, level ${
      shown(change.level)
    }, ${shown(change.outcome)}${
      change.note === "(none)" ? "" : ` — ${shown(change.note, LONG)}`
    }`
  );
}

/**
 * Prints the comparison and writes it as `title`'s section of
 * `resultsDir/changes.md`; resolves with the exit status it makes.
 */
export async function reportChanges(
  resultsDir: string,
  title: ChangesTitle,
  section: string,
  comparison: Comparison,
): Promise<0 | 3> {
  for (const line of changeLines(comparison)) console.log(line);
  const path = `${resultsDir}/changes.md`;
  const previous = await Deno.readTextFile(path).catch(() => "");
  await Deno.mkdir(resultsDir, { recursive: true });
  await Deno.writeTextFile(path, withSection(previous, title, section));
  await formatFiles(resultsDir, [path]);
  const status = comparisonStatus(comparison);
  console.log(
    `${
      status === 3
        ? "a level or an outcome changed"
        : comparison.changes.length > 0
        ? "no level or outcome changed (an era or notes did)"
        : "nothing changed"
    }; wrote ${path}`,
  );
  return status;
}

/** The first of a check's issues as words: where, what, how many more. */
function firstIssue(error: z.ZodError): string {
  const [issue, ...more] = error.issues;
  const where = issue.path.map((key, index) =>
    typeof key === "number"
      ? `[${key}]`
      : `${index > 0 ? "." : ""}${String(key)}`
  ).join("");
  return `${where ? `${where}: ` : ""}${issue.message}${
    more.length > 0 ? ` (and ${more.length} more)` : ""
  }`;
}

/**
 * A JSON file's text parsed and checked against `schema` (what its reader
 * relies on; the rest is as the file has it), or an error naming the file
 * and what is wrong with it.
 */
export async function readJson<T>(
  path: string,
  schema: z.ZodType,
): Promise<T> {
  let value: unknown;
  try {
    value = JSON.parse(await Deno.readTextFile(path));
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  const checked = schema.safeParse(value);
  if (!checked.success) {
    throw new Error(`cannot read ${path}: ${firstIssue(checked.error)}`);
  }
  return value as T;
}

/** A table file as the comparison reads it: its date, and rows like `row`. */
export function tableFile(row: z.ZodType) {
  return z.object({ generatedAt: z.string(), rows: z.array(row) });
}

/**
 * `--compare`'s two files: none, one (the new run's) or two, an omitted
 * one or `-` being the committed file.
 */
export function comparedPaths(
  paths: string[],
  committed: string,
): [string, string] {
  const [before, after] = paths.length < 2 ? ["-", paths[0] ?? "-"] : paths;
  const or = (path: string) => path === "-" ? committed : path;
  return [or(before), or(after)];
}

/** The checkout, for naming its files by their path inside it. */
const CHECKOUT = new URL("../..", import.meta.url).pathname;

/**
 * A results file as a change section names it: its path (as code, unless
 * it has a space, where a rewrap could break the span, or a backtick),
 * when it was made.
 */
export function fileLabel(
  path: string,
  document: { generatedAt: string },
): string {
  const shown = printableLine(
    path.startsWith(CHECKOUT) ? path.slice(CHECKOUT.length) : path,
    LONG,
  );
  return `${
    /[\s`]/.test(shown) ? proseShown(shown, LONG) : `\`${shown}\``
  } (generated ${proseShown(document.generatedAt)})`;
}

/**
 * `--compare` for one table: the rows of two of its files (`files` as given,
 * `committed` for an omitted one), each file checked against `table.file`
 * and its rows made comparable by `table.compared`; resolves with the exit
 * status.
 */
export async function compareFiles<Row>(
  files: string[],
  committed: string,
  section: { resultsDir: string; title: ChangesTitle; headers: string[] },
  table: { file: z.ZodType; compared: (row: Row) => ComparedRow },
): Promise<0 | 3> {
  const paths = comparedPaths(files, committed);
  const [before, after] = await Promise.all(
    paths.map((path) =>
      readJson<{ generatedAt: string; rows: Row[] }>(path, table.file)
    ),
  );
  const { compared } = table;
  const comparison = compareRows(
    before.rows.map(compared),
    after.rows.map(compared),
  );
  return await reportChanges(
    section.resultsDir,
    section.title,
    changesSection(comparison, section.headers, {
      before: fileLabel(paths[0], before),
      after: fileLabel(paths[1], after),
    }),
    comparison,
  );
}
