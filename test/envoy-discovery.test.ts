/**
 * How the Envoy suites find their binaries and what `npm test` does without them (no Envoy
 * needed: fake `envoy` scripts that only print a version). The suites themselves are test/envoy/.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { compareVersions, discoverEnvoys, envoysAtLeast, parseEnvoyVersion, pinnedVersions, versionEnvVar } from "./envoy/support/binaries.js";
import { REPO_ROOT } from "./support/fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "aether-discovery-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An executable that answers `--version` like Envoy `version` would. */
function fakeEnvoy(version: string): string {
  const path = join(dir, `envoy-${version}`);
  writeFileSync(path, `#!/bin/sh\necho "envoy  version: 0123abcd/${version}/Clean/RELEASE/BoringSSL"\n`);
  chmodSync(path, 0o755);
  return path;
}

const noEnvoys = () => Object.fromEntries(pinnedVersions().map((v) => [versionEnvVar(v), join(dir, "missing")]));

describe("Envoy discovery", () => {
  test("versions: parsed from --version, compared numerically, named in env vars with underscores", () => {
    expect(parseEnvoyVersion("envoy  version: 9e5580933739775e8bce696a57a2e1bc99368f23/1.40.0/Clean/RELEASE/BoringSSL")).toBe("1.40.0");
    expect(parseEnvoyVersion("not envoy")).toBeUndefined();
    expect(compareVersions("1.9.0", "1.10.0")).toBeLessThan(0);
    expect(compareVersions("1.38.3", "1.38")).toBeGreaterThan(0);
    expect(versionEnvVar("1.40.0")).toBe("AETHER_ENVOY_1_40_0");
    expect(pinnedVersions()).toEqual(["1.37.0", "1.40.0"]);
  });

  test("AETHER_ENVOY_<version> is used when it reports that version, and reported missing otherwise", () => {
    const env = { [versionEnvVar("1.37.0")]: fakeEnvoy("1.37.0"), [versionEnvVar("1.40.0")]: fakeEnvoy("1.39.3") };
    const { found, missing, custom } = discoverEnvoys(env);
    expect(custom).toBe(false);
    expect(found).toEqual([{ version: "1.37.0", path: env.AETHER_ENVOY_1_37_0, source: "AETHER_ENVOY_1_37_0" }]);
    expect(missing).toEqual([{ version: "1.40.0", reason: `${env.AETHER_ENVOY_1_40_0} (AETHER_ENVOY_1_40_0) reports version 1.39.3` }]);
  });

  test("AETHER_ENVOY_BIN replaces the pinned set with one binary of any version; floors pick what it runs", () => {
    const { found, missing, custom } = discoverEnvoys({ AETHER_ENVOY_BIN: fakeEnvoy("1.38.3") });
    expect(custom).toBe(true);
    expect(missing).toEqual([]);
    expect(found.map((f) => f.version)).toEqual(["1.38.3"]);
    expect(envoysAtLeast(found, "1.37").map((f) => f.version)).toEqual(["1.38.3"]);
    expect(envoysAtLeast(found, "1.39")).toEqual([]);
  });
});

describe("npm test without Envoy", () => {
  const launch = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "test/envoy/run.ts"), "--if-available"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      env: { ...process.env, AETHER_REQUIRE_ENVOY: "", AETHER_ENVOY_BIN: "", ...env },
      timeout: 60_000,
    });

  test("prints one line saying the Envoy suites were skipped and how to enable them, and passes", () => {
    const run = launch(noEnvoys());
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^Envoy suites skipped: .*scripts\/install-envoy\.sh.*AETHER_ENVOY_BIN/)]);
  });

  test("with AETHER_REQUIRE_ENVOY=1 (CI) a missing Envoy fails instead", () => {
    const run = launch({ ...noEnvoys(), AETHER_REQUIRE_ENVOY: "1" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/missing Envoy 1\.37\.0 .*1\.40\.0/);
  });
});
