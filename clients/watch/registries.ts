/**
 * The newest release of a package on the registries whose pins sit behind
 * a lock file of this checkout (npm's are asked through npm itself, in
 * `latest.ts`): PyPI, the Go module proxy, crates.io and Maven Central.
 * One table, registry → where to ask and how to read the answer; every
 * answer is bounded in time and size and checked (zod) before a version
 * is taken from it, and whatever goes wrong is one "could not ask" error.
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";

/** The registries asked over HTTP, by the name the catalogs' pins use. */
export type LockedRegistry = "pypi" | "go" | "crates" | "maven";

/** A fetch: the global one, or a test's recorded answers. */
export type Fetcher = (url: string, init: RequestInit) => Promise<Response>;

/** How long one answer may take, and the most it may hold. */
export const ANSWER_TIMEOUT_MS = 30_000;
export const ANSWER_MAX_BYTES = 8 * 1024 * 1024;

/** crates.io asks every client to say who it is. */
const USER_AGENT = "mcp-subscription-lab-watch (deno task clients --latest)";

/** x.y.z versions in numeric order (a prerelease after its release's digits). */
export function byVersion(a: string, b: string): number {
  const parts = (version: string) => version.split(/[.+-]/).map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let index = 0; index < 3; index++) {
    if (x[index] !== y[index]) return (x[index] || 0) - (y[index] || 0);
  }
  return 0;
}

/** The highest of some versions; an error when there is none. */
function highest(versions: string[], what: string): string {
  const top = versions.toSorted(byVersion).at(-1);
  if (top === undefined) throw new Error(`no release in ${what}`);
  return top;
}

/** A release without a prerelease part (`1.2.3`, `1.2.3+build`). */
const RELEASE = /^\d{1,9}\.\d{1,9}\.\d{1,9}(?:\+[0-9A-Za-z.-]{1,60})?$/;

/** PyPI's `/pypi/<name>/json`: its `info.version` is the newest release. */
const PYPI_ANSWER = z.object({ info: z.object({ version: z.string() }) });

/** One line of a crate's file in crates.io's sparse index. */
const CRATE_LINE = z.object({ vers: z.string(), yanked: z.boolean() });

/** Maven's `maven-metadata.xml`: its `<release>`, the newest non-snapshot. */
const MAVEN_RELEASE = /<release>\s*([^<\s]{1,100})\s*<\/release>/;

/**
 * A module path as the Go module proxy spells it: each capital letter as
 * `!` and its lower case, so paths differing only in case stay apart.
 */
export function goProxyPath(module: string): string {
  return module.replace(/[A-Z]/g, (letter) => `!${letter.toLowerCase()}`);
}

/**
 * The Go module proxy to ask: the first URL of `GOPROXY`, as the go
 * command would, else the public one.
 */
export function goProxyBase(goproxy = Deno.env.get("GOPROXY") ?? ""): string {
  const first = goproxy.split(/[,|]/)[0].trim();
  return /^https?:\/\//.test(first)
    ? first.replace(/\/+$/, "")
    : "https://proxy.golang.org";
}

/** A crate's file in crates.io's sparse index, as cargo finds it. */
export function crateIndexPath(crate: string): string {
  const name = crate.toLowerCase();
  if (name.length <= 2) return `${name.length}/${name}`;
  if (name.length === 3) return `3/${name[0]}/${name}`;
  return `${name.slice(0, 2)}/${name.slice(2, 4)}/${name}`;
}

/** How one registry is asked and its answer read. */
interface RegistrySource {
  /** As lines name it. */
  label: string;
  /** Where the newest version of `name` is asked. */
  url(name: string): string;
  /** The newest release in the answer's text; throws if there is none. */
  newest(body: string): string;
  /** What a version of this registry looks like. */
  version: RegExp;
}

/**
 * Each registry's source. crates.io's API host is not reachable from
 * every machine the watch runs on, so a crate is read from the sparse
 * index cargo itself reads; Maven's search service likewise, so an artifact
 * from the repository's own `maven-metadata.xml`; the Go module proxy from
 * its version list, as the go command resolves `@latest` when it has one.
 */
export const REGISTRIES: Record<LockedRegistry, RegistrySource> = {
  pypi: {
    label: "PyPI",
    url: (name) => `https://pypi.org/pypi/${encodeURIComponent(name)}/json`,
    newest: (body) => PYPI_ANSWER.parse(JSON.parse(body)).info.version,
    // PEP 440's public versions, bounded: 2.3, 2.3.0, 2.3.0rc1, 2.3.0.post1.
    version:
      /^\d{1,9}(?:\.\d{1,9}){0,3}(?:(?:a|b|rc)\d{1,9})?(?:\.post\d{1,9})?(?:\.dev\d{1,9})?$/,
  },
  go: {
    label: "the Go module proxy",
    url: (module) => `${goProxyBase()}/${goProxyPath(module)}/@v/list`,
    newest: (body) =>
      highest(
        body.split("\n").map((line) => line.trim().replace(/^v/, ""))
          .filter((version) => RELEASE.test(version)),
        "the module's version list",
      ),
    version: RELEASE,
  },
  crates: {
    label: "crates.io",
    url: (crate) => `https://index.crates.io/${crateIndexPath(crate)}`,
    newest: (body) =>
      highest(
        body.split("\n").filter((line) => line.trim() !== "")
          .map((line) => CRATE_LINE.parse(JSON.parse(line)))
          .filter((line) => !line.yanked && RELEASE.test(line.vers))
          .map((line) => line.vers),
        "the crate's index file (no release that is not yanked)",
      ),
    version: RELEASE,
  },
  maven: {
    label: "Maven Central",
    url: (coordinates) => {
      const [group, artifact] = coordinates.split(":");
      return `https://repo1.maven.org/maven2/${
        group.replaceAll(".", "/")
      }/${artifact}/maven-metadata.xml`;
    },
    newest: (body) => {
      const release = body.match(MAVEN_RELEASE)?.[1];
      if (!release) throw new Error("no <release> in maven-metadata.xml");
      return release;
    },
    version: /^\d{1,9}(?:\.\d{1,9}){1,3}(?:[-.][0-9A-Za-z]{1,40})?$/,
  },
};

/** The answer's text: status 200, at most `maxBytes`, within the timeout. */
async function answerText(
  url: string,
  fetcher: Fetcher,
  maxBytes: number,
): Promise<string> {
  const response = await fetcher(url, {
    headers: { "User-Agent": USER_AGENT },
    signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
  });
  if (response.status !== 200 || !response.body) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  const decoder = new TextDecoder();
  let text = "";
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`more than ${maxBytes} bytes`);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * The newest release of `name` on `registry`, as it answered it (not yet
 * checked for its shape: `latest.ts` does that, as for npm's). Throws
 * "could not ask URL: why" for anything short of a readable answer.
 */
export async function askRegistry(
  registry: LockedRegistry,
  name: string,
  fetcher: Fetcher = fetch,
  maxBytes = ANSWER_MAX_BYTES,
): Promise<string> {
  const source = REGISTRIES[registry];
  const url = source.url(name);
  try {
    return source.newest(await answerText(url, fetcher, maxBytes));
  } catch (error) {
    const why = error instanceof z.ZodError
      ? `not the answer expected: ${error.issues[0]?.path.join(".")} ${
        error.issues[0]?.message
      }`
      : (error as Error).message;
    throw new Error(`could not ask ${url}: ${why}`);
  }
}
