/**
 * `deno task clients [name...]`: installs each client at its pinned version,
 * runs it against a fresh lab and scripted model in every mode and under
 * both triggers, and regenerates `results/`.
 *
 * Options:
 *   --results-dir DIR  where to write (default: the repository's results/)
 *   --cache-dir DIR    installs and run folders (default: see install.ts)
 *   --timeout S        seconds per client run (default 120)
 *   --delay S          the lab's update delay (default 3)
 *   --trigger T        only this trigger (subscribe or read; default both)
 *   --budget S         start no run after S seconds (default 1800)
 *   --min-level N      with --check: each row must reach at least level N
 *   --keep-homes       keep each run's isolated home (for debugging a client)
 *   --check            exit 1 unless every run produced its row and the
 *                      row's level matches what the lab recorded
 *
 * @module
 */

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { CLIENTS } from "./catalog.ts";
import { defaultCacheDir, installClient } from "./install.ts";
import {
  evidenceFile,
  evidenceMarkdown,
  mainLabClient,
  type MatrixDocument,
  matrixMarkdown,
  mergeEvidence,
  mergeRows,
  rowFromRun,
} from "./matrix.ts";
import {
  notStarted,
  runClient,
  runHeader,
  type RunRecord,
  type Trigger,
} from "./runner.ts";

const repoRoot = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

const { values, positionals } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    "results-dir": { type: "string", default: `${repoRoot}/results` },
    "cache-dir": { type: "string", default: defaultCacheDir() },
    timeout: { type: "string", default: "120" },
    delay: { type: "string", default: "3" },
    trigger: { type: "string" },
    budget: { type: "string", default: "1800" },
    "min-level": { type: "string", default: "0" },
    check: { type: "boolean", default: false },
    "keep-homes": { type: "boolean", default: false },
  },
});

function positiveNumber(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name} ${raw}: expected a non-negative number`);
    Deno.exit(2);
  }
  return value;
}

const timeoutSeconds = positiveNumber("timeout", values.timeout);
const delaySeconds = positiveNumber("delay", values.delay);
const budgetSeconds = positiveNumber("budget", values.budget);
const minLevel = positiveNumber("min-level", values["min-level"]);
const triggers: Trigger[] = values.trigger === undefined
  ? ["subscribe", "read"]
  : values.trigger === "subscribe" || values.trigger === "read"
  ? [values.trigger]
  : (() => {
    console.error(`--trigger ${values.trigger}: expected subscribe or read`);
    return Deno.exit(2);
  })();
const unknown = positionals.filter((id) =>
  !CLIENTS.some((client) => client.id === id)
);
if (unknown.length > 0) {
  console.error(
    `unknown client(s): ${unknown.join(", ")}; known: ${
      CLIENTS.map((client) => client.id).join(", ")
    }`,
  );
  Deno.exit(2);
}
const selected = positionals.length === 0
  ? CLIENTS
  : CLIENTS.filter((client) => positionals.includes(client.id));
// Absolute, because `deno fmt` below runs inside the results folder.
const resultsDir = resolve(values["results-dir"]);
const cacheDir = resolve(values["cache-dir"]);
const started = performance.now();
const elapsed = () => (performance.now() - started) / 1000;

const records: RunRecord[] = [];
const skipped: string[] = [];
for (const client of selected) {
  if (elapsed() > budgetSeconds) {
    skipped.push(client.id);
    continue;
  }
  console.log(
    `== ${client.displayName} (${client.npmPackage}@${client.version})`,
  );
  const install = await installClient(client, cacheDir);
  if (!install.ok) {
    console.log(
      `   install failed after ${install.seconds} s: ${install.reason}`,
    );
    for (const mode of client.modes) {
      for (const trigger of triggers) {
        records.push(
          notStarted(
            runHeader(client, mode, trigger),
            "install-failed",
            install.reason,
            install.seconds,
          ),
        );
      }
    }
    continue;
  }
  console.log(
    `   ${install.cached ? "cached" : `installed in ${install.seconds} s`}`,
  );
  for (const mode of client.modes) {
    for (const trigger of triggers) {
      if (elapsed() > budgetSeconds) {
        skipped.push(`${client.id}/${mode}/${trigger}`);
        continue;
      }
      const record = await runClient(client, mode, trigger, {
        labMainPath: `${repoRoot}/main.ts`,
        runDir:
          `${cacheDir}/runs/${client.id}-${client.version}-${mode}-${trigger}`,
        binPath: install.binPath,
        delaySeconds,
        timeoutSeconds,
        keepHome: values["keep-homes"],
      });
      records.push(record);
      const row = rowFromRun(record);
      console.log(
        `   ${mode} ${trigger}: ${record.outcome} in ${record.durationSeconds} s, level ${row.level}${
          row.era ? `, era ${row.era}` : ""
        }${row.notes ? ` — ${row.notes}` : ""}`,
      );
    }
  }
}

// Evidence: one file per client and mode.
await Deno.mkdir(`${resultsDir}/runs`, { recursive: true });
const written: string[] = [];
const groups = Map.groupBy(
  records,
  (record) => evidenceFile(record.clientId, record.version, record.mode),
);
for (const [file, runs] of groups) {
  const previousEvidence = await Deno.readTextFile(`${resultsDir}/${file}`)
    .catch(() => "");
  await Deno.writeTextFile(
    `${resultsDir}/${file}`,
    mergeEvidence(previousEvidence, evidenceMarkdown(runs)),
  );
  written.push(`${resultsDir}/${file}`);
}

// The matrix: fresh rows replace their old selves, other rows stay.
const matrixJson = `${resultsDir}/matrix.json`;
let previous: MatrixDocument | undefined;
try {
  previous = JSON.parse(await Deno.readTextFile(matrixJson)) as MatrixDocument;
} catch {
  previous = undefined;
}
const freshRows = records.map(rowFromRun);
const rows = mergeRows(
  previous?.rows ?? [],
  freshRows,
  CLIENTS.map((client) => client.id),
);
const document: MatrixDocument = {
  generatedAt: new Date().toISOString(),
  labVersion: freshRows.find((row) => row.labVersion)?.labVersion ??
    previous?.labVersion ?? null,
  delaySeconds,
  rows,
};
await Deno.writeTextFile(matrixJson, JSON.stringify(document, null, 2) + "\n");
await Deno.writeTextFile(
  `${resultsDir}/compatibility-matrix.md`,
  matrixMarkdown(document),
);
written.push(matrixJson, `${resultsDir}/compatibility-matrix.md`);
// The files are committed, so they must pass `deno fmt --check`.
await new Deno.Command(Deno.execPath(), {
  args: ["fmt", "--quiet", ...written],
  cwd: resultsDir,
  stdout: "inherit",
  stderr: "inherit",
}).output();

console.log(
  `wrote ${resultsDir}/compatibility-matrix.md (${freshRows.length} fresh row(s), ${rows.length} in all) in ${
    Math.round(elapsed())
  } s`,
);
if (skipped.length > 0) {
  console.log(`time budget reached; not run: ${skipped.join(", ")}`);
}

if (values.check) {
  // Read back what was published and compare it with the lab's own report.
  const published = await Deno.readTextFile(
    `${resultsDir}/compatibility-matrix.md`,
  );
  const failures: string[] = [];
  for (const record of records) {
    const label = `${record.clientId}/${record.mode}/${record.trigger}`;
    const evidence = `(${
      evidenceFile(record.clientId, record.version, record.mode)
    }#trigger-${record.trigger})`;
    const line = published.split("\n").find((text) => text.includes(evidence));
    if (line === undefined) {
      failures.push(`${label}: no row in the matrix`);
      continue;
    }
    const level = Number(line.split("|").map((text) => text.trim())[13]);
    const labLevel = record.labReport
      ? mainLabClient(record.labReport.clients)?.level ?? 0
      : undefined;
    if (labLevel === undefined) {
      failures.push(`${label}: the lab recorded nothing (${record.outcome})`);
    } else if (level !== labLevel && !(level === 7 && labLevel === 6)) {
      failures.push(
        `${label}: the row says level ${level}, the lab ${labLevel}`,
      );
    } else if (level < minLevel) {
      failures.push(`${label}: level ${level}, expected at least ${minLevel}`);
    } else {
      console.log(`check ${label}: row level ${level} = lab level ${labLevel}`);
    }
  }
  if (records.length === 0) failures.push("no run happened");
  if (failures.length > 0) {
    for (const failure of failures) console.error(`check failed: ${failure}`);
    Deno.exit(1);
  }
}
