/**
 * Runs the Envoy suites (test/envoy/**) with vitest.envoy.config.ts.
 *
 *   tsx test/envoy/run.ts [vitest args]                  # `npm run test:envoy`: every pinned Envoy must be there
 *   tsx test/envoy/run.ts --if-available [vitest args]   # `npm test`: without an Envoy, one line and exit 0
 *
 * AETHER_REQUIRE_ENVOY=1 (CI) turns --if-available into a requirement. Discovery and the env vars
 * are described in test/envoy/support/binaries.ts and the README.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { REPO_ROOT } from "../support/fixtures.js";
import { discoverEnvoys, envoyRequired, INSTALL_HINT } from "./support/binaries.js";

const args = process.argv.slice(2);
const ifAvailable = args[0] === "--if-available";
const vitestArgs = ifAvailable ? args.slice(1) : args;
const required = !ifAvailable || envoyRequired();

const { found, missing } = discoverEnvoys();
const missingText = missing.map((m) => `${m.version} (${m.reason})`).join(", ");
if (found.length === 0 && !required) {
  console.log(
    `Envoy suites skipped: no Envoy ${missing.map((m) => m.version).join("/")} found; enable them: scripts/install-envoy.sh (or AETHER_ENVOY_BIN=/path/to/envoy), see README`,
  );
  process.exit(0);
}
if (missing.length > 0 && required) {
  console.error(`Envoy suites: missing Envoy ${missingText}; ${INSTALL_HINT}`);
  process.exit(1);
}
if (missing.length > 0) console.log(`Envoy suites: running on ${found.map((f) => f.version).join(", ")} only; missing ${missingText}`);
const vitest = join(REPO_ROOT, "node_modules/vitest/vitest.mjs");
const run = spawnSync(process.execPath, [vitest, "run", "--config", join(REPO_ROOT, "vitest.envoy.config.ts"), ...vitestArgs], {
  stdio: "inherit",
  cwd: REPO_ROOT,
  env: { ...process.env, AETHER_REQUIRE_ENVOY: required ? "1" : (process.env.AETHER_REQUIRE_ENVOY ?? "") },
});
process.exit(run.status ?? 1);
