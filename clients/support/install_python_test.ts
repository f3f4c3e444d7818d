import assert from "node:assert/strict";
import {
  installPythonEnvironment,
  installPythonProgram,
  pipFailureReason,
  pythonEnvDir,
  type PythonEnvironment,
} from "./install_python.ts";

/**
 * A stand-in for the machine's `python3`: `-m venv DIR` makes DIR/bin/python,
 * which appends each call's arguments to `calls.log` and, as pip, prints
 * `pipOutput` and exits with `pipStatus`.
 */
async function fakePython(
  dir: string,
  pipOutput: string,
  pipStatus: number,
): Promise<string> {
  const python = `${dir}/python3`;
  const envPython = [
    "#!/bin/sh",
    `echo "$*" >> '${dir}/calls.log'`,
    `printf '%s\\n' '${pipOutput}'`,
    `exit ${pipStatus}`,
  ].join("\n");
  await Deno.writeTextFile(
    python,
    [
      "#!/bin/sh",
      `echo "venv $3" >> '${dir}/calls.log'`,
      'mkdir -p "$3/bin"',
      `cat > "$3/bin/python" <<'END'\n${envPython}\nEND`,
      'chmod +x "$3/bin/python"',
    ].join("\n"),
  );
  await Deno.chmod(python, 0o755);
  return python;
}

async function environment(
  dir: string,
  pins: string,
): Promise<PythonEnvironment> {
  await Deno.writeTextFile(`${dir}/requirements.txt`, pins);
  return { id: "demo", requirements: `${dir}/requirements.txt` };
}

Deno.test("installPythonEnvironment: a venv per requirements, pip once on the pinned file, and a second run calls neither", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-python-" });
  try {
    const demo = await environment(dir, "mcp==2.3.0\nanyio==4.16.0\n");
    const python = await fakePython(dir, "Successfully installed", 0);
    const first = await installPythonEnvironment(demo, `${dir}/cache`, python);
    const prefix = await pythonEnvDir(
      demo,
      "mcp==2.3.0\nanyio==4.16.0\n",
      `${dir}/cache`,
    );
    assert.match(prefix, /\/cache\/python-demo-[0-9a-f]{16}$/);
    assert.deepEqual(
      { ...first, seconds: 0 },
      {
        ok: true,
        prefix,
        python: `${prefix}/bin/python`,
        seconds: 0,
        cached: false,
      },
    );
    const firstCalls = [
      `venv ${prefix}`,
      `-m pip install --no-input --disable-pip-version-check -r ${dir}/requirements.txt`,
    ];
    const calls = async () =>
      (await Deno.readTextFile(`${dir}/calls.log`)).trim().split("\n");
    assert.deepEqual(await calls(), firstCalls);
    const second = await installPythonEnvironment(demo, `${dir}/cache`, python);
    assert.deepEqual({ ...second, seconds: 0 }, {
      ...first,
      seconds: 0,
      cached: true,
    });
    assert.deepEqual(await calls(), firstCalls, "no venv, no pip");
    // A changed pin is a new environment, installed afresh.
    await Deno.writeTextFile(demo.requirements, "mcp==2.3.0\nanyio==4.15.0\n");
    const moved = await installPythonEnvironment(demo, `${dir}/cache`, python);
    assert.equal(moved.ok && moved.cached, false);
    assert.notEqual(moved.ok && moved.prefix, prefix);
    assert.equal((await calls()).length, 4);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("installPythonEnvironment: a failed pip is pip's own ERROR line, and leaves nothing a second run would take as installed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-python-" });
  try {
    const demo = await environment(dir, "mcp==9.9.9\n");
    const python = await fakePython(
      dir,
      "ERROR: No matching distribution found for mcp==9.9.9",
      1,
    );
    const failed = await installPythonEnvironment(demo, `${dir}/cache`, python);
    assert.deepEqual({ ...failed, seconds: 0 }, {
      ok: false,
      reason: "ERROR: No matching distribution found for mcp==9.9.9",
      seconds: 0,
    });
    const again = await installPythonEnvironment(demo, `${dir}/cache`, python);
    assert.equal(again.ok, false);
    const calls = (await Deno.readTextFile(`${dir}/calls.log`)).trim()
      .split("\n");
    assert.equal(calls.length, 4, "venv and pip again, twice");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pipFailureReason: pip's last ERROR line, else its last line", () => {
  assert.equal(
    pipFailureReason(
      "Collecting x\nERROR: Could not find a version that satisfies the requirement mcp==9\nERROR: No matching distribution found for mcp==9\n",
    ),
    "ERROR: No matching distribution found for mcp==9",
  );
  assert.equal(
    pipFailureReason(
      "Error: Command '['/x/bin/python', '-m', 'ensurepip']' returned non-zero exit status 1.\n",
    ),
    "Error: Command '['/x/bin/python', '-m', 'ensurepip']' returned non-zero exit status 1.",
  );
  assert.equal(pipFailureReason(""), "pip install failed");
});

Deno.test("installPythonProgram: its launcher execs the environment's Python on the program in the checkout with the app's arguments; a second run is cached; pip's failure is the install's", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-python-" });
  try {
    const demo = await environment(dir, "mcp==2.3.0\n");
    const script = `${dir}/demo_app.py`;
    await Deno.writeTextFile(script, "");
    const program = { environment: demo, script, name: "demo" };
    const python = await fakePython(dir, "Successfully installed", 0);
    const first = await installPythonProgram(program, `${dir}/cache`, python);
    const prefix = await pythonEnvDir(demo, "mcp==2.3.0\n", `${dir}/cache`);
    assert.deepEqual({ ...first, seconds: 0 }, {
      ok: true,
      prefix,
      binPath: `${prefix}/demo`,
      seconds: 0,
      cached: false,
    });
    const launched = await new Deno.Command(`${prefix}/demo`, {
      args: ["app", "--url", "http://127.0.0.1:9/mcp"],
      stdout: "null",
    }).output();
    assert.ok(launched.success);
    const calls = async () =>
      (await Deno.readTextFile(`${dir}/calls.log`)).trim().split("\n");
    assert.equal(
      (await calls()).at(-1),
      `-B ${script} app --url http://127.0.0.1:9/mcp`,
    );
    const second = await installPythonProgram(program, `${dir}/cache`, python);
    assert.deepEqual({ ...second, seconds: 0 }, {
      ...first,
      seconds: 0,
      cached: true,
    });
    assert.equal(
      (await calls()).length,
      3,
      "venv, pip and the launch: no more",
    );
    const missing = await installPythonProgram(
      { ...program, script: `${dir}/gone.py` },
      `${dir}/cache`,
      python,
    );
    assert.deepEqual({ ...missing, seconds: 0 }, {
      ok: false,
      reason: `no program at ${dir}/gone.py`,
      seconds: 0,
    });
    await Deno.writeTextFile(demo.requirements, "mcp==9.9.9\n");
    const failing = await fakePython(
      dir,
      "ERROR: No matching distribution found for mcp==9.9.9",
      1,
    );
    const failed = await installPythonProgram(program, `${dir}/cache`, failing);
    assert.deepEqual({ ...failed, seconds: 0 }, {
      ok: false,
      reason: "ERROR: No matching distribution found for mcp==9.9.9",
      seconds: 0,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
