/**
 * The xDS bytes of resources whose parts are encoded once and shared (LbEndpoints kept as ranges
 * of the first assignment that carried them, see plan/encoding-cells.ts) are the generated
 * encoders' bytes, whichever node, mode and order filled the shared parts: every node of a random
 * mesh is compiled on one index under every mode × socket selection, in mesh order and then in
 * reverse on a fresh index, and each encoded assignment is compared with `ClusterLoadAssignment.encode`.
 */
import { describe, test } from "vitest";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { toXdsResources, XDS_TYPE_URLS } from "../../src/emit/xds.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { compilableNodes, everyModeSelection, type MeshDocument, meshDocumentArb, type OtherOptions, otherOptionsArb } from "../support/random-mesh.js";
import { compile, PropertyViolation } from "./checks.js";
import { assertProperty, runsFor, timeoutFor } from "./harness.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

function checkSharedEncodings(doc: MeshDocument, other: OtherOptions, reversed: boolean): void {
  const index = indexSnapshot(parseSnapshot(structuredClone(doc)));
  const nodes = compilableNodes(index.snapshot);
  if (reversed) nodes.reverse();
  for (const options of everyModeSelection(other)) {
    for (const node of nodes) {
      const { result } = compile(index, node, options);
      const encoded = toXdsResources(result)[XDS_TYPE_URLS.endpoints];
      for (const [i, assignment] of result.endpoints.entries()) {
        if (hex(encoded[i]!.resource.value ?? new Uint8Array()) === hex(ClusterLoadAssignment.encode(assignment).finish())) continue;
        throw new PropertyViolation(
          `${assignment.cluster_name} of node ${node.cluster}/${node.name} (${JSON.stringify(options)}) differs from the generated encoder's bytes`,
        );
      }
    }
  }
}

/** Each run compiles every node twice under 6 modes: a quarter of the suite's meshes is plenty here. */
const RUNS_HERE = Math.max(1, Math.floor(runsFor(250) / 4));

describe(`shared encodings (${RUNS_HERE} random meshes, every node, every mode × socket selection)`, () => {
  test(
    "every encoded assignment is the generated encoder's bytes, nodes in mesh order and reversed",
    () =>
      assertProperty(
        [meshDocumentArb({ withoutNetns: 2 }), otherOptionsArb],
        (doc, other) => {
          checkSharedEncodings(doc, other, false);
          checkSharedEncodings(doc, other, true);
        },
        RUNS_HERE,
      ),
    timeoutFor(250),
  );
});
