// What every library program shares (clients/catalog/libraries.ts copies this file
// beside each program): its command line, the fact lines it prints, and the
// app's steps in their order. A program supplies only its library's calls.
//
//   <id>.mjs app   --url URL [--era 2025|2026-07-28] [--wait SECONDS]
//   <id>.mjs app   --stdio [--era …] [--wait …] -- COMMAND [ARGS…]
//   <id>.mjs agent --url URL --model-url URL --prompt TEXT
//
// Every line a program prints is one fact, `key value`; any text from the
// server goes through show() first.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

/** The lab's resource. */
export const URI = "test://review/status";

/** The app-defined tool each agent offers beside the server's. */
export const APP_TOOL = "app_clock";

/** What app_clock answers: the time, as the app sees it. */
export function appClock() {
  return JSON.stringify({ now: new Date().toISOString() });
}

/** Server text, JSON-quoted (no raw control characters) and cut to 200. */
export function show(value) {
  return JSON.stringify(String(value)).slice(0, 200);
}

/** An error's message, with its cause when the library wraps one. */
export function messageOf(error) {
  const message = error?.message ?? String(error);
  const cause = error?.cause?.message;
  return cause && !message.includes(cause) ? `${message}: ${cause}` : message;
}

/** The installed version of `name`, from beside the program. */
export function packageVersion(name) {
  const file = new URL(`./node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file, "utf8")).version;
}

/** The text of the first content of a `resources/read` result. */
export function textOf(result) {
  const first = result?.contents?.[0];
  return first && typeof first.text === "string" ? first.text : "";
}

/** A promise and the function that resolves it (for an update handler). */
export function signal() {
  let resolve;
  const promise = new Promise((done) => resolve = done);
  return { promise, resolve };
}

/** The promise's value, or false after `seconds`. */
async function within(promise, seconds) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(false), seconds * 1000);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The app's steps in order, one fact line each; resolves with the exit
 * status (1 when a step the library offers threw). `steps`:
 *
 * - `connect()`: connects; resolves with the era it speaks (`2025` or
 *   `2026-07-28`). A different era than asked is an error. `transport`
 *   (`http`, `stdio`) is what the `connected` line says it took.
 * - `list()`: resolves with the resources' URIs; absent where the library
 *   gives an app no way to list (`list-api none`).
 * - `read()`: resolves with the resource's text; absent likewise
 *   (`read-api none`, and no `initial` or `final`).
 * - `subscribe`: `{ call, run() }`, or absent where the library has no API.
 * - `update`: `{ via, received }` (a promise that resolves when the
 *   library's API hands over the update for URI), or absent likewise.
 * - `close()`.
 *
 * A step that throws prints `error <step> …`, and the app goes on: a failed
 * subscribe still waits, since an update can come unasked.
 */
export async function runApp(
  npmPackage,
  era,
  waitSeconds,
  steps,
  transport = "http",
) {
  console.log(`library ${npmPackage}@${packageVersion(npmPackage)}`);
  let status = 0;
  const step = async (name, run) => {
    try {
      await run();
      return true;
    } catch (error) {
      status = 1;
      console.log(`error ${name} ${show(messageOf(error))}`);
      return false;
    }
  };
  const connected = await step("connect", async () => {
    const spoken = await steps.connect();
    if (spoken !== era) throw new Error(`asked for ${era}, spoke ${spoken}`);
    console.log(`connected ${transport} ${spoken}`);
  });
  if (connected) {
    if (steps.list) {
      await step("list", async () => {
        const found = (await steps.list()).includes(URI);
        console.log(`resource-found ${found ? URI : "none"}`);
      });
    } else {
      console.log("list-api none");
    }
    if (steps.read) {
      await step("read", async () => {
        console.log(`initial ${show(await steps.read())}`);
      });
    } else {
      console.log("read-api none");
    }
    if (steps.subscribe) {
      await step("subscribe", async () => {
        await steps.subscribe.run();
        console.log(`subscribed ${steps.subscribe.call}`);
      });
    } else {
      console.log("subscribe-api none");
    }
    if (steps.update) {
      const received = await within(steps.update.received, waitSeconds);
      console.log(
        received
          ? `notification-received ${URI} via=${steps.update.via}`
          : `notification-received none after=${waitSeconds}s`,
      );
    } else {
      console.log("update-api none");
    }
    if (steps.read) {
      await step("reread", async () => {
        console.log(`final ${show(await steps.read())}`);
      });
    }
  }
  await step("close", () => steps.close());
  return status;
}

/**
 * The program's command line: `app` (its `app(url, era, waitSeconds,
 * stdio)`, where `stdio` is `{ command, args }` for a server the app starts
 * itself, and `url` then undefined: only with `commands.stdio`, for a
 * library with a stdio transport) or, where it has one, `agent` (its
 * `agent(url, modelUrl, prompt)`), which prints `final-answer …`; exits
 * with their status, 2 for a bad command line.
 */
export async function main(program, commands) {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: "string" },
      era: { type: "string", default: "2025" },
      wait: { type: "string", default: "15" },
      "model-url": { type: "string" },
      prompt: { type: "string" },
      stdio: { type: "boolean", default: false },
    },
  });
  const [command, ...server] = positionals;
  const stdio = values.stdio && server.length > 0
    ? { command: server[0], args: server.slice(1) }
    : undefined;
  // --stdio only for a program whose library has a stdio transport.
  const usable = (values.url || (stdio && commands.stdio)) && (
    (command === "app" && ["2025", "2026-07-28"].includes(values.era) &&
      Number(values.wait) > 0) ||
    (command === "agent" && commands.agent && values["model-url"] &&
      values.prompt)
  );
  if (!usable) {
    console.error(
      `usage: ${program} app --url URL [--era 2025|2026-07-28] [--wait S]` +
        (commands.stdio
          ? `\n       ${program} app --stdio [--era …] [--wait S] -- COMMAND [ARG…]`
          : "") +
        (commands.agent
          ? `\n       ${program} agent --url URL --model-url URL --prompt TEXT`
          : ""),
    );
    process.exit(2);
  }
  try {
    if (command === "app") {
      process.exitCode = await commands.app(
        stdio ? undefined : values.url,
        values.era,
        Number(values.wait),
        stdio,
      );
    } else {
      const answer = await commands.agent(
        values.url,
        values["model-url"],
        values.prompt,
      );
      console.log(`final-answer ${show(answer)}`);
    }
  } catch (error) {
    console.log(`error ${command} ${show(messageOf(error))}`);
    process.exitCode = 1;
  }
}
