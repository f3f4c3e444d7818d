/**
 * The lab's files as a user fetches them from a URL: the checkout's
 * `main.ts`, `probe.ts`, `bus.ts` and `stdio.ts` served over loopback as raw
 * GitHub serves them, and a folder outside the checkout to run from. The probe's
 * tests and the bus's run the lab and the probe this way, and hold which
 * files each run fetched.
 *
 * Kept under `testdata/` so that `deno test` does not take it for a test.
 *
 * @module
 */

const CHECKOUT = new URL("../", import.meta.url);

/** The files a run from a URL may fetch: the lab and the three beside it. */
export const SERVED_FILES = [
  "main.ts",
  "probe.ts",
  "bus.ts",
  "stdio.ts",
] as const;

/**
 * Serves `files` of the checkout over loopback HTTP as `text/plain`, as raw
 * GitHub does, under any folder (so that each process fetches its own copy
 * rather than Deno's cached one), and records the paths asked for, below
 * `origin`. Nothing else is served: an import of another file fails as a
 * missing one does. `origin` holds a folder of its own: Deno caches a remote
 * module by its URL, and a port can come round again in a later run.
 */
export function serveCheckoutAsText(
  files: readonly string[] = SERVED_FILES,
) {
  const requested: string[] = [];
  const run = `/${crypto.randomUUID()}`;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const { pathname } = new URL(request.url);
      requested.push(pathname.replace(run, ""));
      const name = pathname.split("/").pop()!;
      if (!files.includes(name)) {
        return new Response("not found", { status: 404 });
      }
      return new Response(await Deno.readTextFile(new URL(name, CHECKOUT)), {
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}${run}`,
    requested,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/**
 * A folder outside the checkout to run from, as a user would (no deno.json),
 * with copies of the checkout's lock file: the npm packages resolve to the
 * versions already in Deno's cache, and the served modules' hashes are
 * written to the copies, never to the checkout's.
 */
export async function outsideFolder() {
  const cwd = await Deno.makeTempDir({ prefix: "lab-from-url-" });
  const lockFlag = async (name: string) => {
    await Deno.copyFile(new URL("deno.lock", CHECKOUT), `${cwd}/${name}`);
    return `--lock=${cwd}/${name}`;
  };
  return {
    cwd,
    lockFlag,
    [Symbol.asyncDispose]: () => Deno.remove(cwd, { recursive: true }),
  };
}
