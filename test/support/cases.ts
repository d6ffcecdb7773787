/**
 * Golden cases: `testdata/<case>/case.yaml` names a mesh file, a node and options; each case is
 * compiled in both source-identity modes (unless its options pick one). EDS and diagnostics do not
 * depend on the mode: `golden/<case>/{endpoints,diagnostics}.yaml`; clusters and listeners do:
 * `golden/<case>/<mode>/{clusters,listeners}.yaml`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { type LocalNode, localNodeFrom, parseNode } from "../../src/model/node.js";
import { type Options, parseOptions, SOURCE_IDENTITIES, type SourceIdentity } from "../../src/model/options.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { REPO_ROOT } from "./fixtures.js";

export const TESTDATA = join(REPO_ROOT, "testdata");
export const GOLDEN = join(REPO_ROOT, "golden");
export const MODE_FILES = ["clusters", "listeners"] as const;
export const SHARED_FILES = ["endpoints", "diagnostics"] as const;

/** The oldest Envoy each mode's goldens are compiled for. */
const MODE_ENVOY: Record<SourceIdentity, string> = { selector: "1.38", sockets: "1.37" };

export interface GoldenCase {
  readonly name: string;
  readonly description: string;
  readonly snapshot: Snapshot;
  readonly node: LocalNode;
  /** Per source-identity mode the case is compiled in. */
  readonly options: ReadonlyMap<SourceIdentity, Options>;
}

export function caseNames(): string[] {
  return readdirSync(TESTDATA, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(TESTDATA, entry.name, "case.yaml")))
    .map((entry) => entry.name)
    .sort();
}

/** Every golden case with each source-identity mode it is compiled in: `[case, mode]`. */
export function caseModes(): [string, SourceIdentity][] {
  return caseNames().flatMap((name) => [...loadCase(name).options.keys()].map((mode): [string, SourceIdentity] => [name, mode]));
}

export function goldenNames(): string[] {
  return existsSync(GOLDEN)
    ? readdirSync(GOLDEN, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort()
    : [];
}

export function loadCase(name: string): GoldenCase {
  const file = join(TESTDATA, name, "case.yaml");
  const spec = parseYaml(readFileSync(file, "utf8")) as {
    description: string;
    mesh: string;
    /** Merged into the mesh file's `mesh` section, to reuse a mesh with other settings. */
    meshPatch?: Record<string, unknown>;
    node: { cluster: string; name: string } | Record<string, unknown>;
    options?: Record<string, unknown>;
  };
  const meshPath = resolve(dirname(file), spec.mesh);
  const document = parseYaml(readFileSync(meshPath, "utf8"));
  document.mesh = { ...document.mesh, ...spec.meshPatch };
  const snapshot = parseSnapshot(document);
  const node = "clusterName" in spec.node ? parseNode(spec.node) : localNodeFrom(snapshot, String(spec.node.cluster), String(spec.node.name));
  const pinned = spec.options?.sourceIdentity as SourceIdentity | undefined;
  const modes = pinned ? [pinned] : SOURCE_IDENTITIES;
  const options = new Map(modes.map((mode) => [mode, parseOptions({ envoyVersion: MODE_ENVOY[mode], ...spec.options, sourceIdentity: mode })]));
  return { name, description: spec.description, snapshot, node, options };
}

export function compileCase(goldenCase: GoldenCase, mode: SourceIdentity): CompileResult {
  return compileNode(goldenCase.snapshot, goldenCase.node, goldenCase.options.get(mode)!);
}
