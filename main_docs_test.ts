/**
 * The docs against the code: each list a page of `docs/` gives (the session
 * end reasons, the wait tool's ends, the log's tags, the lab's own lines, the
 * JSON report's fields) is the one `main.ts` has; the README stays a front
 * page; every client the report recognises has its setup and its tracker in
 * the docs; the image holds, caches and may read the files beside `main.ts`
 * that it loads, as the deployment page says.
 *
 * ```sh
 * deno test -P main_docs_test.ts
 * ```
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  DOCUMENTED_CLIENTS,
  lineValue,
  READ_ROUTES,
  REVIEW_URI,
  SESSION_END_REASONS,
  WAIT_ENDS,
} from "./main.ts";
import { prepareTestEnvironment, startLab } from "./testdata/lab.ts";
import { postModern } from "./testdata/lab_clients.ts";
import { MAIN_PATH } from "./launch.ts";

prepareTestEnvironment();

// ---------------------------------------------------------------------------
// The docs' lists are the code's lists
// ---------------------------------------------------------------------------

/** A page of docs/, as text. */
function docsPage(page: string): Promise<string> {
  return Deno.readTextFile(new URL(`docs/${page}`, import.meta.url));
}

/** Markdown prose on one line: each line break and its indent as one space. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/** The contents of every code span in `text`. */
function codeSpans(text: string): string[] {
  return [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
}

/** The code spans of `text` outside any parentheses. */
function topLevelCodeSpans(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "`") {
      const end = text.indexOf("`", i + 1);
      if (depth === 0) spans.push(text.slice(i + 1, end));
      i = end;
    } else if (char === "(") depth++;
    else if (char === ")") depth--;
  }
  return spans;
}

/** What the parentheses right after `` `name` `` in `text` hold. */
function parenthesesAfter(text: string, name: string): string {
  const start = text.indexOf(`\`${name}\` (`);
  assert.ok(start >= 0, `no (…) after \`${name}\``);
  let depth = 0;
  for (let i = text.indexOf("(", start); i < text.length; i++) {
    if (text[i] === "`") i = text.indexOf("`", i + 1);
    else if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) {
      return text.slice(text.indexOf("(", start) + 1, i);
    }
  }
  throw new Error(`unclosed (… after \`${name}\``);
}

/** `text` between `from` and the next `to` after it, both required. */
function between(text: string, from: string, to: string): string {
  const start = text.indexOf(from);
  assert.ok(start >= 0, `"${from}" not found`);
  const end = text.indexOf(to, start + from.length);
  assert.ok(end >= 0, `"${to}" not found after "${from}"`);
  return text.slice(start + from.length, end);
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** The lab's source: main.ts and the modules it loads beside itself that log. */
async function labSource(): Promise<string> {
  const beside = ["bus.ts", "stdio.ts"].map((file) =>
    Deno.readTextFile(new URL(file, import.meta.url))
  );
  return [await Deno.readTextFile(MAIN_PATH), ...await Promise.all(beside)]
    .join("\n");
}

Deno.test("docs: the [session/end] reasons the evidence log and the JSON report list are the ones the lab ends clients with", async () => {
  const source = await Deno.readTextFile(MAIN_PATH);
  const used = [
    ...source.matchAll(
      /(?:#end\(session|#drop\(\w+|endClient\([^,()]+), "([a-z ]+)"\)/g,
    ),
  ].map((match) => match[1]);
  assert.deepEqual(sorted(used), sorted(SESSION_END_REASONS));
  const log = oneLine(await docsPage("evidence-log.md"));
  const listed = log.match(/`\[session\/end\] session=… reason=([^`]+)`/);
  assert.ok(listed, "no [session/end] line in docs/evidence-log.md");
  assert.deepEqual(sorted(listed[1].split("|")), sorted(SESSION_END_REASONS));
  for (const reason of SESSION_END_REASONS) {
    assert.ok(log.includes(`\`${reason}\`:`), `${reason} is not explained`);
  }
  const report = oneLine(await docsPage("reports.md"));
  const ended = codeSpans(parenthesesAfter(report, "ended"))
    .filter((span) => span !== "[session/end]" && span !== "null");
  assert.deepEqual(sorted(ended), sorted(SESSION_END_REASONS));
});

Deno.test("docs: the wait tool's ended= values in the reports page are the ones a wait ends with", async () => {
  const source = await Deno.readTextFile(MAIN_PATH);
  const settled = [...source.matchAll(/settle\("([a-z ]+)"\)/g)]
    .map((match) => match[1]);
  assert.deepEqual(sorted(settled), sorted(WAIT_ENDS));
  // The update is the wait's own end: the line says ended= for the others.
  const early = WAIT_ENDS.filter((end) => end !== "updated").map(lineValue);
  const reports = oneLine(await docsPage("reports.md"));
  const listed = reports.match(/`ended=([^`]+)`/);
  assert.ok(listed, "no ended= list in docs/reports.md");
  assert.deepEqual(listed[1].split("|"), early);
  for (const end of early) {
    assert.ok(reports.includes(`\`${end}\`:`), `${end} is not explained`);
  }
  // Wherever these pages name a value, it is one of them.
  for (
    const page of [
      "evidence-log.md",
      "reports.md",
      "verification-guide.md",
      "security.md",
      "testing.md",
      "client-authors.md",
    ]
  ) {
    const text = oneLine(await docsPage(page));
    for (const [, value] of text.matchAll(/ended=("[^"]+"|[a-z]+)/g)) {
      assert.ok(early.includes(value), `${page}: ended=${value}`);
    }
  }
});

Deno.test("docs: every tag the lab logs (main.ts, its bus in bus.ts, its stdio in stdio.ts) is in the evidence log's list of tags, and nothing else is", async () => {
  const source = await labSource();
  const logged = [...source.matchAll(/tag: "([^"]+)"/g)].map((match) =>
    match[1]
  );
  const log = oneLine(await docsPage("evidence-log.md"));
  const listed = codeSpans(
    between(log, "Every tag the lab logs, and no other:", "; besides"),
  ).map((span) => span.replace(/^\[(.*)\]$/, "$1"));
  assert.deepEqual(sorted(listed), sorted(logged));
  assert.equal(listed.length, new Set(listed).size, "a tag listed twice");
});

Deno.test("docs: the evidence log's [lab] lines are the lab's own lines, with … where they vary", async () => {
  const source = await labSource();
  const written = [
    ...source.matchAll(/`(\[lab\] (?:[^`\\$]|\\.|\$\{[^}]*\})*)`/g),
  ].map((match) => match[1].replace(/\$\{[^}]*\}/g, "…"));
  const log = await docsPage("evidence-log.md");
  const block = between(log, "The lab's own lines", "\n```\n\n");
  const listed = block.slice(block.indexOf("```\n") + 4).split("\n")
    .filter((line) => line !== "");
  assert.deepEqual(sorted(listed), sorted(written));
  assert.equal(listed.length, written.length, "a [lab] line listed twice");
});

Deno.test("docs: the JSON report's fields in the reports page are the fields /report carries", async () => {
  await using lab = startLab({ MCP_TEST_ENABLE_WAIT_TOOL: "true" });
  const read = await postModern(lab.url, "resources/read", { uri: REVIEW_URI });
  await read.body?.cancel();
  const document = await (await fetch(`${lab.base}/report`)).json();
  const [client] = document.clients;
  const page = oneLine(await docsPage("reports.md"));
  const fields = between(page, "with these stable fields: ", ". Names and");
  assert.deepEqual(
    sorted(topLevelCodeSpans(fields)),
    sorted(Object.keys(client)),
  );
  assert.deepEqual(
    sorted(
      codeSpans(parenthesesAfter(fields, "steps")).map((span) =>
        span.replace(/:.*/, "")
      ),
    ),
    sorted(Object.keys(client.steps)),
  );
  assert.deepEqual(
    sorted(
      codeSpans(parenthesesAfter(fields, "waitTool")).filter((span) =>
        span !== "null"
      ),
    ),
    sorted(Object.keys(client.waitTool)),
  );
  assert.deepEqual(
    sorted(codeSpans(parenthesesAfter(fields, "timeline"))),
    sorted(Object.keys(client.timeline[0])),
  );
  assert.deepEqual(
    codeSpans(parenthesesAfter(fields, "readVia"))
      .filter((span) => span !== "null"),
    [...READ_ROUTES],
  );
  const carried = between(
    page,
    "Besides `clients`, the document carries ",
    ".",
  );
  assert.deepEqual(
    sorted(["clients", ...topLevelCodeSpans(carried)]),
    sorted(Object.keys(document)),
  );
  assert.deepEqual(
    sorted(codeSpans(parenthesesAfter(carried, "scenario"))),
    sorted(Object.keys(document.scenario)),
  );
});

// ---------------------------------------------------------------------------
// The README and the client pages
// ---------------------------------------------------------------------------

Deno.test("the README stays a front page: at most 14,000 bytes", async () => {
  const readme = await Deno.readFile(new URL("./README.md", import.meta.url));
  assert.ok(readme.length <= 14_000, `README.md is ${readme.length} bytes`);
});

Deno.test("every client the report recognises has its setup in docs/client-setup.md and its tracker in docs/bug-reports.md", async () => {
  const rows = async (page: string) =>
    (await Deno.readTextFile(new URL(`./docs/${page}`, import.meta.url)))
      .split("\n").filter((line) => line.startsWith("| "))
      .map((line) => line.split("|")[1].trim());
  const setup = await rows("client-setup.md");
  const trackers = await rows("bug-reports.md");
  for (const name of Object.values(DOCUMENTED_CLIENTS)) {
    assert.ok(setup.includes(name), `${name} not in docs/client-setup.md`);
    assert.ok(trackers.includes(name), `${name} not in docs/bug-reports.md`);
  }
});

// ---------------------------------------------------------------------------
// The image: the files it copies, caches and may read
// ---------------------------------------------------------------------------

Deno.test("the image copies what .dockerignore lets through, caches every module of it, and may read the files main.ts loads beside itself, as deno.json and compose.yaml do; deployment.md counts them", async () => {
  const text = (path: string) =>
    Deno.readTextFile(new URL(path, import.meta.url));
  const dockerfile = await text("Dockerfile");
  const copied = dockerfile.match(/^COPY --chown=\S+ (.+) \.\/$/m)?.[1]
    .split(" ");
  const allowed = [...(await text(".dockerignore")).matchAll(/^!(.+)$/gm)]
    .map((match) => match[1]);
  assert.deepEqual(copied, allowed);
  const modules = allowed.filter((file) => file.endsWith(".ts"));
  assert.deepEqual(modules, ["main.ts", "probe.ts", "bus.ts", "stdio.ts"]);
  assert.ok(dockerfile.includes(`RUN deno cache ${modules.join(" ")}\n`));
  // What main.ts loads beside itself is read under -P (a computed import).
  const beside = modules.filter((file) => file !== "main.ts");
  const config = JSON.parse(await text("deno.json"));
  assert.deepEqual(config.permissions.default.read, beside);
  const readFlag = `--allow-read=${beside.join(",")},/reports`;
  assert.ok(dockerfile.includes(`"${readFlag}"`), readFlag);
  assert.ok((await text("compose.yaml")).includes(`- ${readFlag}\n`));
  const deployment = oneLine(await docsPage("deployment.md"));
  const words = ["none", "one", "two", "three", "four", "five", "six"];
  assert.ok(
    deployment.includes(
      `the ${words[allowed.length]} files the image copies (\`.dockerignore\`)`,
    ),
  );
});
