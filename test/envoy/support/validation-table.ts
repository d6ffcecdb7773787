/**
 * What the validate suite hands to Envoy: a table of (case, options, Envoy floor). Rows are
 *   - every golden case (`testdata/<case>/case.yaml`, its node and options);
 *   - every testdata mesh (`testdata/<mesh>/mesh.yaml`): every node × every combination of
 *     `MESH_OPTION_MATRIX`;
 *   - the CLI path once: `aether-xds bootstrap` YAML text, byte for byte what a user validates.
 * Each row runs on every Envoy under test at or above `envoyFloor(options)`.
 *
 * A bootstrap names its EDS (ADS) but cannot carry it, so each row's bootstrap is `toBootstrap`'s
 * output plus one STATIC cluster per ClusterLoadAssignment, `aether_eds_check/<cluster>`, holding
 * that assignment: Envoy then validates the assignments too. The emitted clusters are unchanged.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { COMMANDS } from "../../../src/cli/commands.js";
import type { CompileResult } from "../../../src/compile/compile-node.js";
import { renderBootstrap, toBootstrap } from "../../../src/emit/bootstrap.js";
import { renderMessage } from "../../../src/emit/render.js";
import { ENVOY_FLOOR, SOURCE_IDENTITY_FLOORS } from "../../../src/model/envoy-version.js";
import { type Options, parseOptions, SOCKET_SELECTIONS, SOURCE_IDENTITIES, WAYPOINT_MODES } from "../../../src/model/options.js";
import { parseSnapshot } from "../../../src/model/snapshot.js";
import { compileMesh } from "../../../src/verify/compiled-mesh.js";
import { caseNames, compileCase, loadCase, TESTDATA } from "../../support/cases.js";
import { REPO_ROOT } from "../../support/fixtures.js";
import type { RenderedBootstrap } from "./validate.js";

/** Every mesh is compiled with every combination of these. */
export const MESH_OPTION_MATRIX = {
  eastWestWaypoint: WAYPOINT_MODES,
  socketSelection: SOCKET_SELECTIONS,
  sourceIdentity: SOURCE_IDENTITIES,
} as const satisfies { readonly [K in keyof Options]?: readonly Options[K][] };

/** The oldest Envoy aether-xds supports at all (README: `transport_socket_matcher` and its inputs). */
export { ENVOY_FLOOR };

/** The oldest Envoy that must accept output compiled with `options`: its source-identity mode's floor. */
export function envoyFloor(options: Options): string {
  return SOURCE_IDENTITY_FLOORS[options.sourceIdentity];
}

export interface ValidationRow {
  /** `golden <case>`, `mesh <mesh> <cluster>/<node> <option>=<value> ...` or `cli ...`. */
  readonly id: string;
  readonly floor: string;
  /** The bootstrap to validate: rendered JSON, or YAML text as the CLI prints it. Throws if the node does not compile. */
  readonly bootstrap: () => RenderedBootstrap | { readonly yaml: string };
}

export interface ValidationTable {
  readonly rows: readonly ValidationRow[];
  /** Mesh nodes that cannot be compiled from their snapshot (no known IP, ...), with the reason. */
  readonly notCompiled: readonly string[];
}

export const EDS_CHECK_PREFIX = "aether_eds_check/";

/** `toBootstrap(result)`, rendered, plus a STATIC `aether_eds_check/<cluster>` cluster per assignment. */
export function bootstrapWithAssignments(result: CompileResult): RenderedBootstrap {
  return withAssignmentClusters(renderBootstrap(toBootstrap(result)), result);
}

export function withAssignmentClusters(rendered: RenderedBootstrap, result: Pick<CompileResult, "endpoints">): RenderedBootstrap {
  const resources = rendered.static_resources as { clusters: unknown[] };
  const checks = result.endpoints.map((assignment) => ({
    name: `${EDS_CHECK_PREFIX}${assignment.cluster_name}`,
    type: "STATIC",
    connect_timeout: "1s",
    load_assignment: renderMessage("envoy.config.endpoint.v3.ClusterLoadAssignment", assignment),
  }));
  return { ...rendered, static_resources: { ...resources, clusters: [...resources.clusters, ...checks] } };
}

/** Every combination of the matrix's values, as partial options. */
export function optionCombinations(matrix: { readonly [key: string]: readonly unknown[] }): Record<string, unknown>[] {
  return Object.entries(matrix).reduce<Record<string, unknown>[]>(
    (combinations, [key, values]) => combinations.flatMap((partial) => values.map((value) => ({ ...partial, [key]: value }))),
    [{}],
  );
}

/** `testdata/<dir>/mesh.yaml` for each testdata directory that has one. */
export function meshFiles(): string[] {
  return readdirSync(TESTDATA, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && readdirSync(join(TESTDATA, entry.name)).includes("mesh.yaml"))
    .map((entry) => entry.name)
    .sort();
}

export function validationTable(): ValidationTable {
  const rows: ValidationRow[] = [];
  const notCompiled: string[] = [];
  for (const name of caseNames()) {
    const goldenCase = loadCase(name);
    for (const [mode, options] of goldenCase.options) {
      rows.push({ id: `golden ${name} ${mode}`, floor: envoyFloor(options), bootstrap: () => bootstrapWithAssignments(compileCase(goldenCase, mode)) });
    }
  }
  for (const mesh of meshFiles()) {
    const snapshot = parseSnapshot(parseYaml(readFileSync(join(TESTDATA, mesh, "mesh.yaml"), "utf8")));
    for (const combination of optionCombinations(MESH_OPTION_MATRIX)) {
      const compiled = compileMesh(snapshot, combination);
      const label = Object.entries(combination)
        .map(([key, value]) => `${key}=${value}`)
        .join(" ");
      for (const [node, { result }] of compiled.nodes) {
        rows.push({ id: `mesh ${mesh} ${node} ${label}`, floor: envoyFloor(compiled.options), bootstrap: () => bootstrapWithAssignments(result) });
      }
      for (const [node, reason] of compiled.failed) {
        rows.push({
          id: `mesh ${mesh} ${node} ${label}`,
          floor: envoyFloor(compiled.options),
          bootstrap: () => {
            throw new Error(`does not compile: ${reason}`);
          },
        });
      }
      for (const [node, reason] of compiled.skipped) notCompiled.push(`mesh ${mesh} ${node} ${label}: ${reason}`);
    }
  }
  const argv = ["--snapshot", join(REPO_ROOT, "testdata/flannel/mesh.yaml"), "--node", "east/node-1", "--mode", "cross-cluster"];
  // The CLI's defaults: selector mode.
  rows.push({
    id: `cli aether-xds bootstrap ${argv.slice(2).join(" ")}`,
    floor: envoyFloor(parseOptions({})),
    bootstrap: () => ({ yaml: cliBootstrap(argv) }),
  });
  // The bootstrap an Envoy runs with against `aether-xds serve`: CDS and LDS over ADS, SDS elsewhere.
  const served = [...argv.slice(0, 4), "--ads", "--sds-address", "127.0.0.1:8081"];
  rows.push({
    id: `cli aether-xds bootstrap ${served.slice(2).join(" ")}`,
    floor: envoyFloor(parseOptions({})),
    bootstrap: () => ({ yaml: cliBootstrap(served) }),
  });
  return { rows, notCompiled: [...new Set(notCompiled)] };
}

/** What `aether-xds bootstrap <argv>` prints. */
export function cliBootstrap(argv: readonly string[]): string {
  const { code, out } = COMMANDS.bootstrap!.run(argv);
  if (code !== 0) throw new Error(`aether-xds bootstrap exited ${code}: ${out}`);
  return `${out}\n`;
}
