import assert from "node:assert/strict";
import { ALL_CLIENTS } from "./select.ts";
import {
  CITED_HOSTS,
  citedHostById,
  UPSTREAM_REQUESTS,
  upstreamRequestsFor,
} from "./cited.ts";
import { prepareTestEnvironment } from "../../testdata/lab.ts";

prepareTestEnvironment();

const CATALOG_IDS = new Set(ALL_CLIENTS.map((client) => client.id));
/**
 * Hosts that are also run here: their cited rows back the runs with source,
 * so they share the client's id (the summary shows the run alone).
 */
const ALSO_RUN = new Set(["fast-agent", "vscode", "omp"]);

/**
 * Every text a host row holds, its citations' included; a package line's
 * quote is code, kept as published, and checked on its own.
 */
function hostStrings(host: (typeof CITED_HOSTS)[number]): string[] {
  return [
    host.id,
    host.displayName,
    host.what,
    host.version ?? "",
    host.onUpdated,
    host.whyNotRun,
    ...host.citations.flatMap((citation) =>
      Object.entries(citation)
        .filter(([key]) => key !== "quote")
        .map(([, value]) => String(value))
    ),
  ];
}

Deno.test("cited: the fifteen hosts, in the order the matrix lists them", () => {
  assert.deepEqual(CITED_HOSTS.map((host) => host.id), [
    "fast-agent",
    "goose",
    "crush-source",
    "letta-code-source",
    "auggie-source",
    "qoder-source",
    "zed",
    "cline-vscode",
    "roo-code",
    "continue-vscode",
    "cherry-studio",
    "librechat",
    "5ire",
    "vscode",
    "omp",
  ]);
});

Deno.test("cited: ids are unique, file-name safe, and a catalog id only for a host also run", () => {
  const ids = CITED_HOSTS.map((host) => host.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) {
    assert.match(id, /^[a-z0-9][a-z0-9-]*$/, id);
    if (!ALSO_RUN.has(id)) assert.equal(CATALOG_IDS.has(id), false, id);
  }
  assert.equal(ids.filter((id) => ALSO_RUN.has(id)).length, 3);
  assert.equal(CATALOG_IDS.has("omp"), true);
  assert.equal(CATALOG_IDS.has("fast-agent"), true);
});

Deno.test("cited: every host has a citation, each at a full commit and exact lines, or a pinned package's line and its quote", () => {
  for (const host of CITED_HOSTS) {
    assert.equal(host.kind, "cited");
    assert.ok(host.citations.length >= 1, host.id);
    for (const citation of host.citations) {
      assert.notEqual(citation.says, "", host.id);
      if ("package" in citation) {
        const where = `${host.id} ${citation.path}:${citation.line}`;
        assert.match(
          citation.package,
          /^(@[\w.-]+\/)?[\w.-]+@\d+\.\d+\.\d+$/,
          where,
        );
        assert.match(citation.path, /^[\w.-]+(\/[\w.-]+)*$/, where);
        assert.ok(Number.isInteger(citation.line) && citation.line >= 1, where);
        assert.ok(citation.quote.length > 0, where);
        assert.ok(citation.quote.length <= 120, where);
        assert.equal(citation.quote, citation.quote.trim(), where);
        assert.doesNotMatch(citation.quote, /[\n\r\t]/, where);
        continue;
      }
      const where = `${host.id} ${citation.path}:${citation.lines}`;
      assert.match(citation.repository, /^[\w.-]+\/[\w.-]+$/, where);
      assert.match(citation.commit, /^[0-9a-f]{40}$/, where);
      assert.match(citation.path, /^[\w.-]+(\/[\w.-]+)*$/, where);
      const match = /^(\d+)(?:-(\d+))?$/.exec(citation.lines);
      assert.ok(match, where);
      const start = Number(match[1]);
      const end = Number(match[2] ?? match[1]);
      assert.ok(start >= 1 && start <= end, where);
    }
  }
});

Deno.test("cited: a host cited from its npm bundle is pinned at the catalog's version of that CLI", () => {
  const bundled = CITED_HOSTS.filter((host) =>
    host.citations.some((citation) => "package" in citation)
  );
  assert.deepEqual(bundled.map((host) => host.id), [
    "auggie-source",
    "qoder-source",
  ]);
  for (const host of bundled) {
    const client = ALL_CLIENTS.find((client) =>
      `${client.id}-source` === host.id
    );
    assert.ok(client && "npmPackage" in client, host.id);
    for (const citation of host.citations) {
      assert.ok("package" in citation, host.id);
      assert.equal(
        citation.package,
        `${client.npmPackage}@${client.version}`,
        host.id,
      );
    }
    assert.equal(host.version, client.version, host.id);
  }
});

Deno.test("cited: a host that subscribes cites the request it sends", () => {
  const subscribing = CITED_HOSTS.filter((host) => host.subscribes !== "no");
  assert.deepEqual(subscribing.map((host) => [host.id, host.subscribes]), [
    ["fast-agent", "listen (2026-07-28) only"],
    ["vscode", "yes"],
    ["omp", "yes"],
  ]);
  for (const host of subscribing) {
    const method = host.subscribes === "yes"
      ? "resources/subscribe"
      : "subscriptions/listen";
    assert.ok(
      host.citations.some((citation) => citation.says.includes(method)),
      host.id,
    );
  }
});

Deno.test("cited: strings are plain, one line each and under 300 characters", () => {
  const requests = Object.values(UPSTREAM_REQUESTS).flat();
  const strings = [
    ...CITED_HOSTS.flatMap(hostStrings),
    ...requests.flatMap((request) => Object.values(request)),
  ];
  for (const text of strings) {
    assert.equal(text, text.trim(), text);
    assert.ok(text.length < 300, text);
    // No pipe either: a citation's link in the matrix's table is written as it is.
    assert.doesNotMatch(text, /[\n\r\t<>`|]/, text);
  }
});

Deno.test("cited: request keys are catalog, cited or reserved ids", () => {
  const citedIds = new Set(CITED_HOSTS.map((host) => host.id));
  for (const key of Object.keys(UPSTREAM_REQUESTS)) {
    assert.ok(
      CATALOG_IDS.has(key) || citedIds.has(key) || ALSO_RUN.has(key),
      key,
    );
    assert.ok(UPSTREAM_REQUESTS[key].length >= 1, key);
  }
});

Deno.test("cited: requests link GitHub issues or pulls, each once, with a checked date", () => {
  const requests = Object.values(UPSTREAM_REQUESTS).flat();
  const urls = requests.map((request) => request.url);
  assert.equal(new Set(urls).size, urls.length);
  for (const request of requests) {
    assert.match(
      request.url,
      /^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(issues|pull)\/[1-9]\d*$/,
    );
    assert.ok(request.state === "open" || request.state === "closed");
    assert.match(request.checkedOn, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(
      new Date(`${request.checkedOn}T00:00:00Z`).toISOString().slice(0, 10),
      request.checkedOn,
    );
  }
});

Deno.test("cited: the accessors find rows by id and answer empty for none", () => {
  assert.equal(citedHostById("zed")?.displayName, "Zed");
  assert.equal(citedHostById("claude-code"), undefined);
  assert.deepEqual(
    upstreamRequestsFor("codex").map((request) => request.url),
    [
      "https://github.com/openai/codex/issues/16159",
      "https://github.com/openai/codex/pull/30087",
    ],
  );
  assert.deepEqual(upstreamRequestsFor("kilo"), []);
});
