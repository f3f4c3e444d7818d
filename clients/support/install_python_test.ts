import assert from "node:assert/strict";
import { exists } from "./install.ts";
import {
  findPython,
  installPypiPackage,
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

/** An executable shell script at `path` (its folders made). */
async function script(path: string, lines: string[]): Promise<string> {
  await Deno.mkdir(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(path, ["#!/bin/sh", ...lines].join("\n") + "\n");
  await Deno.chmod(path, 0o755);
  return path;
}

/** A Python that says it is `version` when asked (`-c`), as the finder asks. */
function sayVersion(version: string): string[] {
  return [`[ "$1" = "-c" ] && echo ${version} && exit 0`, "exit 3"];
}

/** What pyenv's shim does for a version that is installed but not selected. */
const UNSELECTED_SHIM = [
  'echo "pyenv: $(basename "$0"): command not found" >&2',
  "exit 127",
];

const RANGE = { oldest: "3.12", newest: "3.14" };

Deno.test("findPython: a versioned python on PATH that runs and is in range, oldest name first; a shim that does not run and a python3 out of range are passed over", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-find-python-" });
  try {
    await script(`${dir}/shims/python3.12`, UNSELECTED_SHIM);
    await script(`${dir}/bin/python3.12`, sayVersion("3.12.9"));
    await script(`${dir}/shims/python3.13`, sayVersion("3.13.0"));
    await script(`${dir}/bin/python3`, sayVersion("3.15.0"));
    // The first python3.12 on PATH is the shim: a shell would run it, so
    // the one behind it is not looked at.
    const path = `${dir}/shims:${dir}/bin`;
    assert.deepEqual(await findPython(RANGE, { path }), {
      ok: true,
      python: `${dir}/shims/python3.13`,
      version: "3.13.0",
    });
    assert.deepEqual(
      await findPython({ oldest: "3.15", newest: "3.15" }, { path }),
      { ok: true, python: `${dir}/bin/python3`, version: "3.15.0" },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findPython: else pyenv's versions, oldest in range first, its root from PYENV_ROOT or `pyenv root`", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-find-python-" });
  try {
    const root = `${dir}/pyenv`;
    // "3.14" (no micro) still sorts after 3.12.1.
    for (const version of ["3.11.7", "3.14", "3.13.0", "3.12.1", "3.10.13"]) {
      await script(
        `${root}/versions/${version}/bin/python3`,
        sayVersion(version),
      );
    }
    // A folder whose name is no version (a virtualenv, say) is not one.
    await script(`${root}/versions/tools/bin/python3`, sayVersion("3.12.0"));
    await script(`${dir}/bin/python3.12`, UNSELECTED_SHIM);
    await script(`${dir}/bin/python3`, sayVersion("3.11.7"));
    await script(`${dir}/bin/pyenv`, [
      `[ "$1" = root ] && echo ${root} && exit 0`,
      "exit 1",
    ]);
    const path = `${dir}/bin`;
    const found = {
      ok: true,
      python: `${root}/versions/3.12.1/bin/python3`,
      version: "3.12.1",
    };
    assert.deepEqual(await findPython(RANGE, { path }), found);
    assert.deepEqual(
      await findPython(RANGE, { path: "", pyenvRoot: root }),
      found,
    );
    assert.deepEqual(
      await findPython({ oldest: "3.13", newest: "3.14" }, { path }),
      {
        ...found,
        python: `${root}/versions/3.13.0/bin/python3`,
        version: "3.13.0",
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("findPython: none found is one line naming the names looked for on PATH and what pyenv has", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-find-python-" });
  try {
    await script(`${dir}/bin/python3.12`, UNSELECTED_SHIM);
    await script(`${dir}/bin/python3`, sayVersion("3.11.7"));
    await script(
      `${dir}/pyenv/versions/3.11.7/bin/python3`,
      sayVersion("3.11.7"),
    );
    assert.deepEqual(await findPython(RANGE, { path: `${dir}/bin` }), {
      ok: false,
      reason:
        "no Python 3.12 to 3.14 found: none of python3.12, python3.13, python3.14, python3 on PATH runs one, and no pyenv (PYENV_ROOT unset, no pyenv on PATH)",
    });
    assert.deepEqual(
      await findPython(RANGE, {
        path: `${dir}/bin`,
        pyenvRoot: `${dir}/pyenv`,
      }),
      {
        ok: false,
        reason:
          `no Python 3.12 to 3.14 found: none of python3.12, python3.13, python3.14, python3 on PATH runs one, and pyenv at ${dir}/pyenv has 3.11.7`,
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("installPypiPackage: the environment made with the Python found, its console script the binary; no Python found is the install's failure, with nothing made", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-python-" });
  try {
    const pins = "fast-agent-mcp==0.10.9\nmcp==2.0.0\n";
    const demo = {
      ...await environment(dir, pins),
      python: RANGE,
    };
    const install = {
      package: "fast-agent-mcp",
      version: "0.10.9",
      environment: demo,
      bin: "fast-agent",
    };
    const cache = `${dir}/cache`;
    const none = await installPypiPackage(install, cache, {
      path: `${dir}/empty`,
    });
    assert.equal(none.ok, false);
    assert.match(
      !none.ok ? none.reason : "",
      /^no Python 3\.12 to 3\.14 found: /,
    );
    assert.equal(await exists(cache), false, "no venv tried");
    // The found Python makes the venv, whose pip installs the console script.
    const prefix = await pythonEnvDir(demo, pins, cache);
    await script(`${dir}/pyenv/versions/3.12.1/bin/python3`, [
      ...sayVersion("3.12.1").slice(0, 1),
      `echo "venv $3" >> '${dir}/calls.log'`,
      'mkdir -p "$3/bin"',
      `printf '#!/bin/sh\\necho "$*" >> %s\\n' '${dir}/calls.log' > "$3/bin/python"`,
      'chmod +x "$3/bin/python"',
      'printf "#!/bin/sh\\n" > "$3/bin/fast-agent"',
    ]);
    const search = { path: `${dir}/empty`, pyenvRoot: `${dir}/pyenv` };
    const first = await installPypiPackage(install, cache, search);
    assert.deepEqual({ ...first, seconds: 0 }, {
      ok: true,
      prefix,
      binPath: `${prefix}/bin/fast-agent`,
      seconds: 0,
      cached: false,
    });
    const calls = async () =>
      (await Deno.readTextFile(`${dir}/calls.log`)).trim().split("\n");
    assert.deepEqual(await calls(), [
      `venv ${prefix}`,
      `-m pip install --no-input --disable-pip-version-check -r ${demo.requirements}`,
    ]);
    // A second run needs no Python found, and runs nothing.
    const second = await installPypiPackage(install, cache, {
      path: `${dir}/empty`,
    });
    assert.deepEqual({ ...second, seconds: 0 }, {
      ...first,
      seconds: 0,
      cached: true,
    });
    assert.equal((await calls()).length, 2);
    const other = await installPypiPackage(
      { ...install, bin: "fast-agent-x" },
      cache,
      search,
    );
    assert.deepEqual({ ...other, seconds: 0 }, {
      ok: false,
      reason: "fast-agent-mcp 0.10.9 installed no fast-agent-x",
      seconds: 0,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
