/**
 * Property tests: random multi-cluster meshes (test/support/random-mesh.ts) compiled for every
 * node, checked against invariants of the README (test/property/checks.ts).
 *
 *   npx vitest run test/property                     # CI: FUZZ_RUNS meshes per property (default 200)
 *   FUZZ_RUNS=5000 npx vitest run test/property      # long mode, before a release or after a
 *                                                    # change to planning/compiling (minutes)
 *   FUZZ_SEED=123 npx vitest run test/property       # another fixed seed (default 424242)
 *
 * Every property runs with the same fixed seed, so a CI failure is reproducible. On failure the
 * report carries fast-check's seed, path and shrunk counterexample, the violated invariant with
 * the node and options, and the shrunk mesh document as YAML (paste it into a testdata case). To
 * replay exactly the reported counterexample: `FUZZ_SEED=<seed> FUZZ_PATH="<path>" npx vitest run
 * test/property -t "<test name>"`.
 *
 * The generated meshes are small (1–4 clusters, ≤ 6 nodes per cluster, ≤ 6 services, ≤ 25
 * endpoints) with overlapping pod CIDRs, random localities and health, multi-port pods, missing,
 * stale and unknown node IPs, gone and not-ready nodes, partial exports, protocols, dependencies,
 * huge weights and reserved metadata keys (see test/support/random-mesh.ts). Each per-node
 * property is checked for EVERY node of the mesh that `localNodeFrom` accepts, under every
 * waypoint mode × socket selection, with other options (ports, config sources, netns key) drawn
 * per mesh. A property that fails because `compileNode` throws (e.g. `CompileInvariantError`) on
 * a valid mesh reports that too: a valid mesh must compile.
 *
 * Properties (one test each):
 *   1. mesh-check.property.test.ts — every compiled node passes the independent upstream schema
 *      check and `verifyMesh` is ok, all modes × both socket selections;
 *   2. the set of pods reached through a waypoint grows: off ⊆ cross-cluster ⊆ always;
 *   3. in the waypoint modes no other cluster's pod IP is ever an address of the node; every
 *      remote address is a node IP at the tunnel port;
 *   4. same-cluster endpoints sit at strictly better priorities than remote ones; priorities are
 *      contiguous from 0; every emitted endpoint's diagnostic names its real address and priority;
 *   5. no duplicate address in an assignment, weights ≥ 1, per-priority sums ≤ uint32 max;
 *   6. conservation: every registry endpoint of a service port in the node's dependency scope is
 *      emitted exactly once or left out with a reason (LEFT_OUT_CODES), never both, never silently;
 *   7. no TLS on the tunnel/ingress path; every outbound socket pins the destination's URI SAN(s);
 *      every matcher action names a socket of the cluster's table;
 *   8. input-order.property.test.ts — shuffling services, records, nodes, metadata, ports, exports,
 *      protocols and dependencies changes neither output bytes nor xDS versions.
 */
import { describe, test } from "vitest";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { indexSnapshot, type SnapshotIndex } from "../../src/plan/snapshot-index.js";
import {
  compilableNodes,
  everyModeSelection,
  type MeshDocument,
  meshDocumentArb,
  type NodeRef,
  type OtherOptions,
  otherOptionsArb,
} from "../support/random-mesh.js";
import {
  type CompileOptions,
  checkAddressesAndWeights,
  checkConservation,
  checkNoRemotePodIps,
  checkPriorities,
  checkTls,
  checkWaypointMonotone,
} from "./checks.js";
import { assertProperty, runsFor, timeoutFor } from "./harness.js";

/**
 * Pods without a netns, and pods claiming a netns another pod of the node claims too, are included
 * here (they get no inbound listener by design, which only matters to the path check, property 1).
 */
const meshes = meshDocumentArb({ withoutNetns: 2 });

/**
 * Runs `check` for every compilable node of the mesh under every mode × socket selection
 * (restricted by `only`), with the drawn other options (ports, config sources, netns key).
 */
function everyNodeAndMode(
  check: (index: SnapshotIndex, node: NodeRef, options: CompileOptions) => void,
  only: (options: CompileOptions) => boolean = () => true,
) {
  return (doc: MeshDocument, other: OtherOptions) => {
    const index = indexSnapshot(parseSnapshot(structuredClone(doc)));
    const modes = everyModeSelection(other).filter(only);
    for (const node of compilableNodes(index.snapshot)) for (const options of modes) check(index, node, options);
  };
}

describe(`compiler properties (${runsFor(80)}–${runsFor(60)} random meshes each, every node, every mode × socket selection)`, () => {
  test(
    "2. pods reached through a waypoint: off ⊆ cross-cluster ⊆ always, for the same node",
    // The check compiles all three modes itself: run it once per socket selection.
    () =>
      assertProperty(
        [meshes, otherOptionsArb],
        everyNodeAndMode(checkWaypointMonotone, (o) => o.eastWestWaypoint === "off"),
        runsFor(60),
      ),
    timeoutFor(60),
  );

  test(
    "3. waypoint modes: no other cluster's pod IP in any address; remote addresses are node IPs at the tunnel port",
    () =>
      assertProperty(
        [meshes, otherOptionsArb],
        everyNodeAndMode(checkNoRemotePodIps, (o) => o.eastWestWaypoint !== "off"),
        runsFor(60),
      ),
    timeoutFor(60),
  );

  test(
    "4. same-cluster endpoints strictly ahead of remote ones, priorities contiguous from 0, diagnostics name real priorities",
    () => assertProperty([meshes, otherOptionsArb], everyNodeAndMode(checkPriorities), runsFor(80)),
    timeoutFor(80),
  );

  test(
    "5. unique addresses per assignment, weights ≥ 1, per-priority weight sums ≤ 4294967295",
    () => assertProperty([meshes, otherOptionsArb], everyNodeAndMode(checkAddressesAndWeights), runsFor(80)),
    timeoutFor(80),
  );

  test(
    "6. conservation: every endpoint in scope is emitted once or left out with a reason",
    () => assertProperty([meshes, otherOptionsArb], everyNodeAndMode(checkConservation), runsFor(80)),
    timeoutFor(80),
  );

  test(
    "7. no TLS on the tunnel/ingress path; outbound sockets pin URI SANs; matcher actions name sockets",
    () => assertProperty([meshes, otherOptionsArb], everyNodeAndMode(checkTls), runsFor(80)),
    timeoutFor(80),
  );
});
