/**
 * Golden cases: `testdata/<case>/case.yaml` names a mesh file, a node and options; the expected
 * output lives in `golden/<case>/{clusters,endpoints,listeners,diagnostics}.yaml`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { type LocalNode, localNodeFrom, parseNode } from "../../src/model/node.js";
import { type Options, parseOptions } from "../../src/model/options.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { REPO_ROOT } from "./fixtures.js";

export const TESTDATA = join(REPO_ROOT, "testdata");
export const GOLDEN = join(REPO_ROOT, "golden");
export const GOLDEN_FILES = ["clusters", "endpoints", "listeners", "diagnostics"] as const;

export interface GoldenCase {
  readonly name: string;
  readonly description: string;
  readonly snapshot: Snapshot;
  readonly node: LocalNode;
  readonly options: Options;
}

export function caseNames(): string[] {
  return readdirSync(TESTDATA, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(TESTDATA, entry.name, "case.yaml")))
    .map((entry) => entry.name)
    .sort();
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
  return { name, description: spec.description, snapshot, node, options: parseOptions(spec.options ?? {}) };
}

export function compileCase(goldenCase: GoldenCase): CompileResult {
  return compileNode(goldenCase.snapshot, goldenCase.node, goldenCase.options);
}
