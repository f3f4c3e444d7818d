/**
 * Tests for the registries other than npm (`registries.ts`), without the
 * network: each asked at its address, its answer one recorded from it
 * (`testdata/registry_answers/`, trimmed to a few releases), and what a
 * registry that cannot be reached, answers too much or answers nonsense
 * comes to.
 *
 * @module
 */

import assert from "node:assert/strict";
import {
  askRegistry,
  crateIndexPath,
  type Fetcher,
  goProxyBase,
  goProxyPath,
} from "./registries.ts";

const answers = new URL("../testdata/registry_answers/", import.meta.url);
const recorded = (file: string) =>
  Deno.readTextFileSync(new URL(file, answers));

/** A fetch that answers from `bodies` by URL, keeping what it was asked. */
function recordedFetch(bodies: Record<string, string>) {
  const asked: { url: string; userAgent: string | null; timed: boolean }[] = [];
  const fetcher: Fetcher = (url, init) => {
    asked.push({
      url,
      userAgent: new Headers(init.headers).get("User-Agent"),
      timed: init.signal instanceof AbortSignal,
    });
    return Promise.resolve(
      url in bodies
        ? new Response(bodies[url])
        : new Response("Not Found", { status: 404 }),
    );
  };
  return { fetcher, asked };
}

Deno.test("askRegistry: PyPI's info.version, the Go module proxy's highest release, crates.io's highest release not yanked, Maven's <release>, each at its address with a User-Agent and a timeout", async () => {
  const crates = recorded("crates_rmcp.jsonl") +
    // A higher release, yanked: never the newest.
    '{"name":"rmcp","vers":"4.0.0","yanked":true}\n';
  const { fetcher, asked } = recordedFetch({
    "https://pypi.org/pypi/mcp/json": recorded("pypi_mcp.json"),
    "https://proxy.golang.org/github.com/modelcontextprotocol/go-sdk/@v/list":
      recorded("go_sdk_list.txt"),
    "https://index.crates.io/rm/cp/rmcp": crates,
    "https://repo1.maven.org/maven2/io/modelcontextprotocol/sdk/mcp/maven-metadata.xml":
      recorded("maven_mcp_metadata.xml"),
  });
  const newest = [
    await askRegistry("pypi", "mcp", fetcher),
    await askRegistry(
      "go",
      "github.com/modelcontextprotocol/go-sdk",
      fetcher,
    ),
    await askRegistry("crates", "rmcp", fetcher),
    await askRegistry("maven", "io.modelcontextprotocol.sdk:mcp", fetcher),
  ];
  // go-sdk's list holds v1.8.0-pre.2 and v1.8.0; rmcp's 3.0.0-beta.5.
  assert.deepEqual(newest, ["2.3.0", "1.8.0", "3.11.0", "2.2.0"]);
  assert.equal(asked.length, 4);
  for (const { userAgent, timed } of asked) {
    assert.match(userAgent ?? "", /^mcp-subscription-lab-watch /);
    assert.ok(timed);
  }
});

Deno.test("the registries' addresses: a Go module path case-encoded, GOPROXY's first URL, a crate's index file by its name's length", () => {
  assert.equal(
    goProxyPath("github.com/BurntSushi/toml"),
    "github.com/!burnt!sushi/toml",
  );
  assert.equal(goProxyBase(""), "https://proxy.golang.org");
  assert.equal(goProxyBase("off"), "https://proxy.golang.org");
  assert.equal(
    goProxyBase("https://goproxy.example/,direct"),
    "https://goproxy.example",
  );
  assert.deepEqual(
    ["a", "ab", "abc", "rmcp", "Serde_JSON"].map(crateIndexPath),
    ["1/a", "2/ab", "3/a/abc", "rm/cp/rmcp", "se/rd/serde_json"],
  );
});

Deno.test("askRegistry: unreachable, not found, too large, the wrong shape or no release is one 'could not ask' error naming the address", async () => {
  const url = "https://pypi.org/pypi/mcp/json";
  const failing = (error: Error): Fetcher => () => Promise.reject(error);
  const cases: [Promise<string>, string][] = [
    [
      askRegistry(
        "pypi",
        "mcp",
        failing(new TypeError("error sending request: dns error")),
      ),
      `could not ask ${url}: error sending request: dns error`,
    ],
    [
      askRegistry("pypi", "nonesuch", recordedFetch({}).fetcher),
      "could not ask https://pypi.org/pypi/nonesuch/json: HTTP 404",
    ],
    [
      askRegistry(
        "pypi",
        "mcp",
        recordedFetch({ [url]: "x".repeat(2000) }).fetcher,
        1024,
      ),
      `could not ask ${url}: more than 1024 bytes`,
    ],
    [
      askRegistry(
        "pypi",
        "mcp",
        recordedFetch({ [url]: '{"info":{"version":7}}' }).fetcher,
      ),
      `could not ask ${url}: not the answer expected: info.version Invalid input: expected string, received number`,
    ],
    [
      askRegistry(
        "go",
        "example.com/m",
        recordedFetch({
          "https://proxy.golang.org/example.com/m/@v/list": "v0.1.0-pre.1\n",
        }).fetcher,
      ),
      "could not ask https://proxy.golang.org/example.com/m/@v/list: no release in the module's version list",
    ],
    [
      askRegistry(
        "maven",
        "io.example:none",
        recordedFetch({
          "https://repo1.maven.org/maven2/io/example/none/maven-metadata.xml":
            "<metadata></metadata>",
        }).fetcher,
      ),
      "could not ask https://repo1.maven.org/maven2/io/example/none/maven-metadata.xml: no <release> in maven-metadata.xml",
    ],
  ];
  for (const [asked, message] of cases) {
    await assert.rejects(asked, { message });
  }
});
