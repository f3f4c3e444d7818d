/**
 * Tests for the scheduled watch, `.github/workflows/watch.yml`, which
 * cannot run here: its YAML parses, it runs weekly and by hand on a
 * GitHub-hosted runner, every command it runs exists (each `deno task`
 * with flags its harness takes, Deno at the version `.ci/run` installs),
 * and it holds no secret but the runner's own token.
 *
 * @module
 */

import assert from "node:assert/strict";
import { parse } from "npm:yaml@2.9.1";
import { parseClientsArgs } from "../run.ts";
import { parseServersArgs } from "../servers.ts";

const root = new URL("../../", import.meta.url);
const text = await Deno.readTextFile(
  new URL(".github/workflows/watch.yml", root),
);

interface Step {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, string>;
}

interface Workflow {
  on: { schedule: { cron: string }[]; workflow_dispatch: unknown };
  permissions: Record<string, string>;
  jobs: Record<string, { "runs-on": string; steps: Step[] }>;
}

const workflow = parse(text) as Workflow;
const steps = Object.values(workflow.jobs).flatMap((job) => job.steps);

/** Every command line of the steps' scripts, continuations joined. */
const commands = steps.flatMap((step) =>
  (step.run ?? "").replace(/\\\n\s*/g, " ").split("\n").map((line) =>
    line.trim()
  ).filter((line) => line !== "" && !line.startsWith("#"))
);

Deno.test("watch.yml: weekly and by hand, on a GitHub-hosted runner, with issues to write and nothing else", () => {
  assert.match(workflow.on.schedule[0].cron, /^\d+ \d+ \* \* [0-6]$/);
  assert.ok("workflow_dispatch" in workflow.on);
  for (const job of Object.values(workflow.jobs)) {
    assert.match(job["runs-on"], /^ubuntu-(latest|\d\d\.04)$/);
  }
  assert.deepEqual(workflow.permissions, {
    contents: "read",
    issues: "write",
  });
  for (const step of steps.filter((step) => step.uses)) {
    assert.match(
      step.uses!,
      /^actions\/(checkout|upload-artifact|github-script)@v\d+$/,
    );
  }
});

Deno.test("watch.yml: every command it runs exists: both --latest runs with flags their harness takes, Deno at .ci/run's version", async () => {
  const tasks = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)))
    .tasks as Record<string, string>;
  const parsers: Record<string, (args: string[]) => unknown> = {
    clients: parseClientsArgs,
    servers: parseServersArgs,
  };
  const runs = commands.flatMap((line) => {
    const task = line.match(/^deno task (\S+)(.*?)(\|\||$)/);
    return task ? [[task[1], task[2].trim().split(/\s+/)] as const] : [];
  });
  assert.deepEqual(runs.map(([name, args]) => [name, args[0]]), [
    ["clients", "--latest"],
    ["servers", "--latest"],
  ]);
  for (const [name, args] of runs) {
    assert.ok(name in tasks, name);
    const options = parsers[name](args) as { latest: boolean };
    assert.equal(options.latest, true);
  }
  const ciDeno = (await Deno.readTextFile(new URL(".ci/run", root)))
    .match(/^DENO_VERSION=(\S+)$/m)?.[1];
  const installs = commands.filter((line) => line.startsWith("npm install"));
  assert.deepEqual(
    installs.map((line) => line.match(/ deno@(\S+)$/)?.[1]),
    [ciDeno],
  );
  // The rest: the shell's own, apt-get for Debian's Chromium, exit.
  const others = commands.filter((line) =>
    !line.startsWith("deno task ") && !line.startsWith("npm install")
  );
  for (const line of others) {
    assert.match(
      line,
      /^(prefix=|echo |status=0$|apt-get (update|install -y chromium)$|exit 1$)/,
      line,
    );
  }
  // The issue holds results/changes.md, written by both runs, and the
  // artifact results/ with the new runs.
  assert.ok(text.includes('readFileSync("results/changes.md"'));
  const upload = steps.find((step) =>
    step.uses?.startsWith("actions/upload-artifact")
  );
  assert.deepEqual(upload?.with?.path.trim().split("\n"), [
    "results/",
    "watch-cache/latest/",
    "watch-cache/latest-servers/",
  ]);
});

Deno.test("watch.yml: no secret but the runner's own token, which github-script takes by itself", () => {
  const expressions = text.match(/\$\{\{[^}]*\}\}/g) ?? [];
  assert.deepEqual(expressions, []);
  assert.ok(!/secrets\./.test(text));
  for (const step of steps) {
    for (const condition of [step.if ?? ""]) {
      assert.doesNotMatch(condition, /secrets|env\./);
    }
    assert.deepEqual(
      Object.keys(step.with ?? {}).filter((key) =>
        /token|key|password|secret/i.test(key)
      ),
      [],
    );
  }
  // No literal token either (a GitHub token's or an npm token's shape).
  assert.doesNotMatch(text, /gh[pousr]_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{20,}/);
  // The issue is opened or updated only when a level or an outcome changed.
  const issue = steps.find((step) =>
    step.uses?.startsWith("actions/github-script")
  );
  assert.equal(
    issue?.if,
    "steps.clients.outputs.status == '3' || steps.servers.outputs.status == '3'",
  );
});
