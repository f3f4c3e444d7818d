/**
 * `--latest` for `deno task clients` and `deno task servers`: the newest
 * published version of everything the catalogs pin, and, with `--write`,
 * the pins moved to it. npm is asked (`npm view`), as the installs are, so
 * its registry, proxy and configuration apply. A pin behind a lock file (a
 * Node app's `package-lock.json`, a PyPI environment, a Go, Rust or Java
 * program, a `go install`) is asked of its registry (npm, or one of
 * `registries.ts`) and reported, never run at a newer version or moved:
 * its lock file moves with it, by hand. Tests hand in a fixture list of
 * versions instead (`--versions FILE`).
 *
 * @module
 */

import { z } from "npm:zod@4.6.7";
import {
  installFailureReason,
  npmEnv,
  type NpmRuntime,
  type PlatformBinary,
} from "../support/install.ts";
import { readJson } from "./compare.ts";
import { printableLine } from "../support/process.ts";
import {
  askRegistry,
  byVersion,
  type LockedRegistry,
  REGISTRIES,
} from "./registries.ts";

/** The newest version of a package within a range (`latest`, `^24`). */
export type VersionLookup = (
  npmPackage: string,
  range: string,
) => Promise<string>;

/** Asks npm's registry, through npm itself. */
export const npmLookup: VersionLookup = async (npmPackage, range) => {
  const spec = `${npmPackage}@${range}`;
  const output = await new Deno.Command("npm", {
    args: ["view", spec, "version", "--json"],
    clearEnv: true,
    env: npmEnv(Deno.env.toObject()),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const text = new TextDecoder().decode(output.stdout).trim();
  if (!output.success || text === "") {
    const why = new TextDecoder().decode(output.stderr);
    throw new Error(
      `npm view ${spec}: ${why ? installFailureReason(why) : "no version"}`,
    );
  }
  return [JSON.parse(text) as string | string[]].flat().toSorted(byVersion)
    .at(-1)!;
};

/**
 * Where a pin behind a lock file is asked: npm, for a Node app's
 * `package-lock.json`, or a registry of `registries.ts`.
 */
export type PinRegistry = "npm" | LockedRegistry;

/** The newest version of a package behind a lock file, on its registry. */
export type LockedLookup = (
  registry: PinRegistry,
  name: string,
) => Promise<string>;

/** Where each registry's newest versions come from. */
export interface RegistryLookups {
  npm: VersionLookup;
  locked: LockedLookup;
}

/** The registries themselves: npm through npm, the others over HTTP. */
export const REGISTRY_LOOKUPS: RegistryLookups = {
  npm: npmLookup,
  locked: (registry, name) =>
    registry === "npm"
      ? npmLookup(name, "latest")
      : askRegistry(registry, name),
};

/**
 * Lookups from a JSON object of package names and versions (a fixture):
 * npm's packages by name (behind a lock file or not), another registry's
 * as `registry:name` (`pypi:mcp`, `go:github.com/modelcontextprotocol/go-sdk`).
 */
export async function fixtureLookups(path: string): Promise<RegistryLookups> {
  const versions = await readJson<Record<string, string>>(
    path,
    z.record(z.string(), z.string()),
  );
  const listed = (key: string) =>
    key in versions
      ? Promise.resolve(versions[key])
      : Promise.reject(new Error(`${key} is not listed in ${path}`));
  return {
    npm: (npmPackage) => listed(npmPackage),
    locked: (registry, name) =>
      listed(registry === "npm" ? name : `${registry}:${name}`),
  };
}

/** What pins versions: a client's or server's package, its runtime or platform package. */
export interface Pinned {
  npmPackage: string;
  version: string;
  runtime?: NpmRuntime;
  platformBinary?: PlatformBinary;
  /** A client of this checkout (the reference host) has no pin. */
  localScript?: string;
  /** A Node app pins its library in its own lock file, not in the catalog. */
  program?: unknown;
  /** A built app pins its packages in its own lock file, not on npm. */
  builtProgram?: unknown;
  /** A `go install`ed client pins its module's version, not npm's. */
  goInstall?: unknown;
  /** A Python app pins its packages in its requirements file, not on npm. */
  pythonProgram?: unknown;
  /** So does an agent installed from PyPI. */
  pypiInstall?: unknown;
}

/**
 * The packages an item pins and the range each one's newest is taken from:
 * its own package at npm's `latest` (not a Node app's, behind its lock
 * file); a runtime or platform package within its pinned major version,
 * which the item was built for (code-server refuses any Node but 24).
 */
function pinsOf(item: Pinned) {
  if (
    item.localScript || item.builtProgram || item.goInstall ||
    item.pythonProgram || item.pypiInstall
  ) return [];
  return [
    ...item.program ? [] : [{ npmPackage: item.npmPackage, range: "latest" }],
    ...[item.runtime, item.platformBinary].flatMap((pin) =>
      pin
        ? [{
          npmPackage: pin.npmPackage,
          range: `^${pin.version.split(".")[0]}`,
        }]
        : []
    ),
  ];
}

/** An item at the newest versions found, a changed platform pair saying so. */
function atVersions<T extends Pinned>(item: T, newest: Map<string, string>): T {
  const at = <P extends { npmPackage: string; version: string }>(pin: P) => ({
    ...pin,
    version: newest.get(pin.npmPackage) ?? pin.version,
  });
  // A Node app runs its lock's version, whatever else moves.
  const moved = item.program ? item : at(item);
  const platform = item.platformBinary && at(item.platformBinary);
  return {
    ...moved,
    ...item.runtime ? { runtime: at(item.runtime) } : {},
    ...platform
      ? {
        platformBinary: moved.version === item.version &&
            platform.version === item.platformBinary!.version
          ? platform
          : {
            ...platform,
            note:
              `ran ${item.npmPackage} ${moved.version} with ${platform.npmPackage} ${platform.version}, the newest of each on npm (${
                platform.entry
                  ? "its script run by that runtime"
                  : "that package's binary"
              }, installed as the catalog installs them)`,
          },
      }
      : {},
  };
}

/**
 * A version as npm publishes them (`1.2.3`, `1.2.3-beta.1+build`): what a
 * lookup answers must be one before it names a file, a pin or a line.
 */
const VERSION = /^\d{1,9}\.\d{1,9}\.\d{1,9}(?:[-+][0-9A-Za-z.+-]{1,80})?$/;

/** `version`, or an error saying what the registry answered instead. */
function checkedVersion(version: unknown, pattern = VERSION): string {
  if (typeof version === "string" && pattern.test(version)) return version;
  throw new Error(
    `not a version: ${printableLine(JSON.stringify(version) ?? "", 60)}`,
  );
}

/**
 * Each item at the newest versions of its pins, looked up once per
 * package; an item a lookup failed for (or answered with anything but a
 * version) is left out, and `failures` says why.
 */
export async function atNewest<T extends Pinned>(
  items: T[],
  lookup: VersionLookup,
): Promise<{ items: T[]; failures: string[] }> {
  const newest = new Map<string, string>();
  const failed = new Set<string>();
  const failures: string[] = [];
  for (const { npmPackage, range } of items.flatMap(pinsOf)) {
    if (newest.has(npmPackage) || failed.has(npmPackage)) continue;
    try {
      newest.set(npmPackage, checkedVersion(await lookup(npmPackage, range)));
    } catch (error) {
      failed.add(npmPackage);
      failures.push(
        `no newest version of ${npmPackage}: ${(error as Error).message}`,
      );
    }
  }
  if (newest.size > 0) {
    console.log(
      `newest on npm: ${
        [...newest].map(([name, version]) => `${name} ${version}`).join(", ")
      }`,
    );
  }
  return {
    items: items.filter((item) =>
      !pinsOf(item).some((pin) => failed.has(pin.npmPackage))
    )
      .map((item) => atVersions(item, newest)),
    failures,
  };
}

/** A pin behind a lock file: asked, never moved. */
export interface LockedPin {
  registry: PinRegistry;
  name: string;
  version: string;
}

/** The registry a built program's language takes its packages from. */
const LANGUAGE_REGISTRY: Record<string, LockedRegistry> = {
  go: "go",
  rust: "crates",
  java: "maven",
};

/** What of a client's or a server's entry names a pin behind a lock file. */
export interface LockedSource {
  npmPackage?: string;
  version?: string;
  builtProgram?: { recipe: { language: string } };
  program?: unknown;
  pythonProgram?: unknown;
  goInstall?: { module: string; version: string };
  pypiInstall?: { package: string; version: string };
  pypi?: { package: string; version: string };
  built?: {
    package: string;
    version: string;
    program: { recipe: { language: string } };
    lockFile?: false;
  };
}

/**
 * The pin an entry holds behind a lock file, if any: a `go install`'s
 * module; a built program's package on its language's registry, as the
 * entry names it (a client's `npmPackage` and `version`, a server's
 * `package` and `version`; Maven's as `group:artifact`); a Node app's
 * library on npm; a Python app's package, an agent's from PyPI, or a
 * server's PyPI environment's.
 */
export function lockedPinsOf(item: LockedSource): LockedPin[] {
  const { goInstall, builtProgram, built, pypi } = item;
  if (goInstall) {
    const version = goInstall.version.replace(/^v/, "");
    return [{ registry: "go", name: goInstall.module, version }];
  }
  if (builtProgram && item.npmPackage && item.version) {
    return [{
      registry: LANGUAGE_REGISTRY[builtProgram.recipe.language],
      name: item.npmPackage,
      version: item.version,
    }];
  }
  if (item.program && item.npmPackage && item.version) {
    return [{ registry: "npm", name: item.npmPackage, version: item.version }];
  }
  if (item.pythonProgram && item.npmPackage && item.version) {
    return [{ registry: "pypi", name: item.npmPackage, version: item.version }];
  }
  // A program with no lock file (its package on no registry) pins nothing.
  if (built?.lockFile === false) return [];
  if (item.pypiInstall) {
    const { package: name, version } = item.pypiInstall;
    return [{ registry: "pypi", name, version }];
  }
  if (built) {
    return [{
      registry: LANGUAGE_REGISTRY[built.program.recipe.language],
      name: built.package,
      version: built.version,
    }];
  }
  return pypi
    ? [{ registry: "pypi", name: pypi.package, version: pypi.version }]
    : [];
}

/**
 * Each locked pin's newest release, asked once per package: one sentence
 * for the changes' report (which is newer than its pin), and a failure
 * per registry that could not be asked or answered no version, as npm's.
 */
export async function newestLocked(
  pins: LockedPin[],
  lookup: LockedLookup,
): Promise<{ lines: string[]; failures: string[] }> {
  const unique = [
    ...new Map(pins.map((pin) => [`${pin.registry} ${pin.name}`, pin]))
      .values(),
  ];
  const found: string[] = [];
  const failures: string[] = [];
  for (const pin of unique) {
    const { label, version } = pin.registry === "npm"
      ? { label: "npm", version: VERSION }
      : REGISTRIES[pin.registry];
    const pinned = `${pin.name} ${pin.version} on ${label}`;
    try {
      const newest = checkedVersion(
        await lookup(pin.registry, pin.name),
        version,
      );
      found.push(
        newest === pin.version
          ? `${pinned}, the newest`
          : byVersion(newest, pin.version) > 0
          ? `${pinned}: ${newest} is newer`
          : `${pinned}: its newest release is ${newest}`,
      );
    } catch (error) {
      failures.push(
        `no newest version of ${pin.name} on ${label}: ${
          (error as Error).message
        }`,
      );
    }
  }
  if (found.length === 0) return { lines: [], failures };
  console.log(`newest behind lock files: ${found.join("; ")}`);
  return {
    lines: [
      `Pinned behind a lock file, asked and run at the pin (a newer one moves with its lock file, by hand): ${
        found.join("; ")
      }`,
    ],
    failures,
  };
}

/** A pin to move in the catalogs' source, with the note that names it. */
export interface PinMove {
  npmPackage: string;
  from: string;
  to: string;
  note?: { from: string; to: string };
}

/** What moved between an item at its pins and the same item at its newest. */
export function pinMoves(before: Pinned, after: Pinned): PinMove[] {
  const pairs = [
    [before, after],
    [before.runtime, after.runtime],
    [before.platformBinary, after.platformBinary],
  ] as const;
  const moves: PinMove[] = pairs.flatMap(([was, now]) =>
    was && now && was.version !== now.version
      ? [{ npmPackage: was.npmPackage, from: was.version, to: now.version }]
      : []
  );
  const [was, now] = [before.platformBinary?.note, after.platformBinary?.note];
  if (was && now && was !== now && moves.length > 0) {
    moves[0].note = { from: was, to: now };
  }
  return moves;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/**
 * A catalog's source with pins moved: the version written right after the
 * package's name (`npmPackage: "…", version: "…"`, or a `const` pair like
 * the Inspector's), and a moved note in place of the old one. Resolves
 * which moves matched.
 */
export function withPins(
  source: string,
  moves: PinMove[],
): { source: string; matched: PinMove[] } {
  const matched: PinMove[] = [];
  for (const move of moves) {
    const pin = new RegExp(
      `("${
        escaped(move.npmPackage)
      }"[,;]\\s*(?:(?:export )?const \\w+ =|version:)\\s*")${
        escaped(move.from)
      }"`,
      "g",
    );
    if (!pin.test(source)) continue;
    matched.push(move);
    source = source.replace(pin, `$1${move.to}"`);
    if (move.note) {
      source = source.replaceAll(
        JSON.stringify(move.note.from),
        JSON.stringify(move.note.to),
      );
    }
  }
  return { source, matched };
}

/**
 * `clients/README.md` with the Version cell of its pinned-clients table
 * set for each client id given.
 */
export function withReadmeVersions(
  readme: string,
  versions: Map<string, string>,
): string {
  const [before, rest] = readme.split("## Pinned clients");
  const end = rest.indexOf("\n## ");
  const table = rest.slice(0, end).split("\n").map((line) => {
    const version = versions.get(line.match(/^\| `([^`]+)` /)?.[1] ?? "");
    if (!version) return line;
    const cells = line.split("|");
    cells[4] = ` ${version} `;
    return cells.join("|");
  });
  return `${before}## Pinned clients${table.join("\n")}${rest.slice(end)}`;
}

/**
 * The files under `clients/` that pin versions: the clients', the
 * libraries' and the servers' catalogs, and the runtime from npm.
 */
export const PIN_FILES = [
  "catalog/agents.ts",
  "catalog/commands.ts",
  "catalog/hosts.ts",
  "catalog/libraries.ts",
  "catalog/servers_and_proxies.ts",
  "support/install.ts",
];

/**
 * Moves the pins in the catalogs' files (each move once, in whichever file
 * holds it); resolves with the moves no file held, to do by hand.
 */
export async function writePins(
  files: string[],
  moves: PinMove[],
): Promise<PinMove[]> {
  const unique = [
    ...new Map(moves.map((move) => [`${move.npmPackage}@${move.from}`, move]))
      .values(),
  ];
  const done = new Set<PinMove>();
  for (const file of files) {
    const text = await Deno.readTextFile(file);
    const { source, matched } = withPins(
      text,
      unique.filter((move) => !done.has(move)),
    );
    for (const move of matched) done.add(move);
    if (source !== text) await Deno.writeTextFile(file, source);
  }
  return unique.filter((move) => !done.has(move));
}
