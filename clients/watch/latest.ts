/**
 * `--latest` for `deno task clients` and `deno task servers`: the newest
 * published version of everything the catalogs pin, and, with `--write`,
 * the pins moved to it. npm is asked (`npm view`), as the installs are, so
 * its registry, proxy and configuration apply; tests hand in a fixture list
 * of versions instead (`--versions FILE`).
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

/** The newest version of a package within a range (`latest`, `^24`). */
export type VersionLookup = (
  npmPackage: string,
  range: string,
) => Promise<string>;

/** x.y.z versions in numeric order (npm leaves prereleases out of ranges). */
function byVersion(a: string, b: string): number {
  const parts = (version: string) => version.split(/[.+-]/).map(Number);
  const [x, y] = [parts(a), parts(b)];
  for (let index = 0; index < 3; index++) {
    if (x[index] !== y[index]) return (x[index] || 0) - (y[index] || 0);
  }
  return 0;
}

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

/** A lookup from a JSON object of package names and versions (a fixture). */
export async function fixtureLookup(path: string): Promise<VersionLookup> {
  const versions = await readJson<Record<string, string>>(
    path,
    z.record(z.string(), z.string()),
  );
  return (npmPackage) =>
    npmPackage in versions
      ? Promise.resolve(versions[npmPackage])
      : Promise.reject(new Error(`${npmPackage} is not listed in ${path}`));
}

/** What pins versions: a client's or server's package, its runtime or platform package. */
export interface Pinned {
  npmPackage: string;
  version: string;
  runtime?: NpmRuntime;
  platformBinary?: PlatformBinary;
  /** A client of this checkout (the reference host) has no pin. */
  localScript?: string;
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
 * its own package at npm's `latest`; a runtime or platform package within
 * its pinned major version, which the item was built for (code-server
 * refuses any Node but 24).
 */
function pinsOf(item: Pinned) {
  if (
    item.localScript || item.builtProgram || item.goInstall ||
    item.pythonProgram || item.pypiInstall
  ) return [];
  return [
    { npmPackage: item.npmPackage, range: "latest" },
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
  const moved = at(item);
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

/** `version`, or an error saying what npm answered instead. */
function checkedVersion(version: unknown): string {
  if (typeof version === "string" && VERSION.test(version)) return version;
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
