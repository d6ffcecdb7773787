/**
 * Envoy accepts everything aether-xds emits: every row of the validation table (every golden
 * case; every testdata mesh × node × option combination; the CLI's YAML) goes through
 * `envoy --mode validate` on every Envoy under test at or above the row's floor. A rejection fails
 * with Envoy's own reason. The last tests prove the suite has teeth (broken resources are rejected
 * and reported) and pin what validate mode does with `network_namespace_filepath`.
 *
 * Runs on the host, no network namespaces: validate mode neither binds listeners nor opens netns
 * paths, so the emitted paths are validated as they are (see the last describe). It does read a
 * SPIFFE bundle map file (`trust_bundles`), whose emitted path is the node's: those filenames are
 * rewritten to a bundle map this suite writes for the same trust domains (`withTestBundleMaps`).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { caseNames, compileCase, loadCase } from "../support/cases.js";
import { compareVersions, discoverEnvoys, type EnvoyBinary, envoyRequired, envoysAtLeast, INSTALL_HINT } from "./support/binaries.js";
import { withTestBundleMaps } from "./support/bootstrap-transforms.js";
import { createPki, spiffeBundleMap } from "./support/pki.js";
import { type RenderedBootstrap, type ValidationOutcome, validateBootstrap } from "./support/validate.js";
import { bootstrapWithAssignments, ENVOY_FLOOR, validationTable } from "./support/validation-table.js";

const discovery = discoverEnvoys();
const required = envoyRequired();
const scratch = mkdtempSync(join(tmpdir(), "aether-validate-"));
const timings: { version: string; ms: number }[] = [];
let failures = 0;
const started = performance.now();

afterAll(() => {
  if (timings.length > 0) {
    const counts = new Map<string, number>();
    for (const { version } of timings) counts.set(version, (counts.get(version) ?? 0) + 1);
    const byVersion = [...counts].map(([version, count]) => `${count} on ${version}`);
    const mean = timings.reduce((sum, t) => sum + t.ms, 0) / timings.length;
    console.log(
      `envoy --mode validate: ${timings.length} runs for ${table.rows.length} rows (${byVersion.join(", ")}) in ${((performance.now() - started) / 1000).toFixed(1)} s, ${mean.toFixed(0)} ms per run`,
    );
  }
  if (failures === 0 && process.env.AETHER_KEEP_BOOTSTRAPS !== "1") rmSync(scratch, { recursive: true, force: true });
  else console.log(`bootstraps kept in ${scratch}`);
});

/** One Envoy run per distinct (bootstrap, version): rows with identical output share it. */
const runs = new Map<string, Promise<ValidationOutcome>>();

/** Validates (once per distinct content and version) and records the timing. */
function validate(envoy: EnvoyBinary, bootstrap: Parameters<typeof validateBootstrap>[1], name: string): Promise<ValidationOutcome> {
  const key = `${envoy.version} ${createHash("sha256").update(JSON.stringify(bootstrap)).digest("hex")}`;
  let run = runs.get(key);
  if (!run) {
    run = validateBootstrap(envoy, bootstrap, scratch, `${envoy.version}-${name}`).then((outcome) => {
      timings.push({ version: envoy.version, ms: outcome.ms });
      return outcome;
    });
    runs.set(key, run);
  }
  return run;
}

/** What the suite reports when Envoy rejected a bootstrap: Envoy's trimmed reason; undefined when accepted. */
function rejection(outcome: ValidationOutcome, what: string, envoy: EnvoyBinary): string | undefined {
  return outcome.ok ? undefined : `Envoy ${envoy.version} rejected ${what} (${outcome.file}):\n${outcome.message}`;
}

/** Fails with the rejection (and keeps the bootstraps for a look). */
function expectAccepted(outcome: ValidationOutcome, what: string, envoy: EnvoyBinary): void {
  const reason = rejection(outcome, what, envoy);
  if (reason === undefined) return;
  failures++;
  throw new Error(reason);
}

/** Pinned versions at or above `floor` that were not found: a failure when required. */
function missingAtLeast(floor: string) {
  return discovery.missing.filter((m) => discovery.custom || compareVersions(m.version, floor) >= 0);
}

const table = validationTable();
const pki = createPki(join(scratch, "pki"));
const bundleMaps = new Map<string, string>();

/** A bundle map file for these trust domains, written once. */
function bundleMapFile(trustDomains: readonly string[]): string {
  const key = [...trustDomains].sort().join(",");
  let file = bundleMaps.get(key);
  if (!file) {
    file = join(scratch, `bundles-${bundleMaps.size}.spiffe`);
    writeFileSync(file, spiffeBundleMap(pki, trustDomains));
    bundleMaps.set(key, file);
  }
  return file;
}

/** A row's bootstrap as Envoy validates it: bundle-map paths pointing at the test's maps. */
function bootstrapOf(row: (typeof table.rows)[number]): Parameters<typeof validateBootstrap>[1] {
  const bootstrap = row.bootstrap();
  return "yaml" in bootstrap ? bootstrap : withTestBundleMaps(bootstrap as RenderedBootstrap, bundleMapFile);
}
/** The Envoys at or above the library's floor: the teeth and netns tests run on these. */
const supported = envoysAtLeast(discovery.found, ENVOY_FLOOR);

describe("Envoy accepts every bootstrap aether-xds emits", () => {
  if (discovery.found.length === 0) {
    test.skipIf(!required)("an Envoy binary is found", () => {
      throw new Error(`AETHER_REQUIRE_ENVOY=1 and no Envoy: ${INSTALL_HINT}`);
    });
  }
  for (const old of discovery.found.filter((envoy) => !supported.includes(envoy))) {
    test(`Envoy ${old.version} (${old.source}) is supported`, () => {
      throw new Error(`Envoy ${old.version} is older than aether-xds's floor ${ENVOY_FLOOR}: it does not know transport_socket_matcher and its inputs`);
    });
  }

  for (const row of table.rows) {
    for (const envoy of envoysAtLeast(discovery.found, row.floor)) {
      test.concurrent(`${row.id} on ${envoy.version}`, async () => {
        expectAccepted(await validate(envoy, bootstrapOf(row), row.id), row.id, envoy);
      });
    }
    if (required) {
      for (const missing of missingAtLeast(row.floor)) {
        test(`${row.id} on ${missing.version}`, () => {
          throw new Error(`Envoy ${missing.version} missing (${missing.reason}): ${INSTALL_HINT}`);
        });
      }
    }
  }

  test("the table covers every golden case and every mesh node it could compile", () => {
    expect(table.rows.filter((r) => r.id.startsWith("golden ")).length).toBe(caseNames().length * 2); // both source-identity modes
    expect(table.rows.filter((r) => r.id.startsWith("mesh ")).length).toBeGreaterThanOrEqual(100);
    // Nodes no snapshot can compile (no known IP) are the only ones left out.
    for (const line of table.notCompiled) expect(line).toMatch(/has no known IP/);
  });
});

/** The flannel cross-cluster golden case, rendered, to break on purpose. */
function goldenBootstrap(): RenderedBootstrap {
  return bootstrapWithAssignments(compileCase(loadCase("flannel-cross-cluster"), "sockets"));
}

type Json = any;
const clustersOf = (b: RenderedBootstrap): Json[] => (b.static_resources as Json).clusters;
const listenersOf = (b: RenderedBootstrap): Json[] => (b.static_resources as Json).listeners;

/** Empties the first exact_match_map of the first cluster with a transport_socket_matcher. */
function withEmptyMatchMap(bootstrap: RenderedBootstrap): { bootstrap: RenderedBootstrap; cluster: string } {
  const copy = structuredClone(bootstrap) as RenderedBootstrap;
  const cluster = clustersOf(copy).find((c) => c.transport_socket_matcher?.matcher_tree?.exact_match_map);
  cluster.transport_socket_matcher.matcher_tree.exact_match_map.map = {};
  return { bootstrap: copy, cluster: cluster.name };
}

/** Appends a copy of the first inbound listener's first chain under another name: a duplicate match. */
function withDuplicateChain(bootstrap: RenderedBootstrap): { bootstrap: RenderedBootstrap; listener: string } {
  const copy = structuredClone(bootstrap) as RenderedBootstrap;
  const listener = listenersOf(copy).find((l) => l.name.startsWith("inbound_"));
  listener.filter_chains.push({ ...listener.filter_chains[0], name: "duplicate" });
  return { bootstrap: copy, listener: listener.name };
}

describe.skipIf(supported.length === 0)("the suite has teeth: Envoy rejects a broken resource and the suite reports why", () => {
  for (const envoy of supported) {
    test.concurrent(`an empty exact_match_map, injected after compile, on ${envoy.version}`, async () => {
      const { bootstrap, cluster } = withEmptyMatchMap(goldenBootstrap());
      const outcome = await validate(envoy, bootstrap, "teeth-empty-map");
      expect(outcome.ok).toBe(false);
      expect(rejection(outcome, "the broken bootstrap", envoy)).toContain(
        `Clusters[${clustersOf(bootstrap).findIndex((c) => c.name === cluster)}] (cluster "${cluster}")`,
      );
      expect(outcome.message).toContain("MatchMapValidationError.Map: value must contain at least 1 pair(s)");
      expect(outcome.message).not.toContain("static_resources {"); // the config dump is trimmed away
      expect(outcome.message.split("\n").length).toBeLessThanOrEqual(3);
    });

    test.concurrent(`a duplicate filter-chain match on ${envoy.version}`, async () => {
      const { bootstrap } = withDuplicateChain(goldenBootstrap());
      const outcome = await validate(envoy, bootstrap, "teeth-duplicate-chain");
      expect(outcome.ok).toBe(false);
      expect(outcome.message).toMatch(/filter chain 'duplicate' has the same matching rules defined as 'port_8080'/);
    });

    test.concurrent(`the unbroken bootstrap is accepted on ${envoy.version} (the control)`, async () => {
      expectAccepted(await validate(envoy, goldenBootstrap(), "teeth-control"), "the control", envoy);
    });
  }
});

describe.skipIf(supported.length === 0)("validate mode and network_namespace_filepath", () => {
  for (const envoy of supported) {
    test.concurrent(`a listener whose netns path does not exist still validates on ${envoy.version}: validate mode never opens it`, async () => {
      const bootstrap = structuredClone(goldenBootstrap()) as RenderedBootstrap;
      const missing = join(scratch, "no-such-netns");
      const inbound = listenersOf(bootstrap).filter((l) => l.address.socket_address.network_namespace_filepath);
      expect(inbound.length).toBeGreaterThan(0);
      for (const listener of inbound) listener.address.socket_address.network_namespace_filepath = missing;
      expect(existsSync(missing)).toBe(false);
      expectAccepted(await validate(envoy, bootstrap, "netns-missing"), "a bootstrap with a missing netns path", envoy);
    });
  }
});
