import { describe, expect, test } from "vitest";
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { portAssignments } from "../../src/compile/endpoints.js";
import { encodeAssignment } from "../../src/emit/assignment-encoding.js";
import { encodeCluster } from "../../src/emit/cluster-encoding.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseOptions } from "../../src/model/options.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { edsView } from "../../src/plan/eds-view.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { caseModes, compileCase, loadCase } from "../support/cases.js";
import { meshDocument } from "../support/fixtures.js";

const same = (cluster: Cluster) => expect(Buffer.from(encodeCluster(cluster)).equals(Buffer.from(Cluster.encode(cluster).finish()))).toBe(true);

const sameAssignment = (assignment: ClusterLoadAssignment) =>
  expect(Buffer.from(encodeAssignment(assignment)).equals(Buffer.from(ClusterLoadAssignment.encode(assignment).finish()))).toBe(true);

describe("the fast assignment encoder writes exactly the generated encoder's bytes", () => {
  test.each(caseModes())("every assignment of golden case %s (%s)", (name, mode) => {
    compileCase(loadCase(name), mode).endpoints.forEach(sameAssignment);
  });

  test("shared encodings: a second encode reuses them, two views share them, and a scaled weight never takes the shared bytes", () => {
    const doc = meshDocument();
    for (const record of doc.services["team-b/payments"]) record.weight = 4_000_000_000;
    const snapshot = parseSnapshot(doc);
    const index = indexSnapshot(snapshot);
    const [east, west] = [localNodeFrom(snapshot, "east", "node-1"), localNodeFrom(snapshot, "west", "node-2")];
    const compiled = [compileNode(index, east, { eastWestWaypoint: "cross-cluster" }), compileNode(index, west, { eastWestWaypoint: "cross-cluster" })];
    expect(compiled.map((result) => result.diagnostics.some((d) => d.code === "WEIGHTS_SCALED"))).toEqual([false, true]);
    for (const assignment of compiled.flatMap((result) => result.endpoints)) {
      sameAssignment(assignment);
      sameAssignment(assignment);
    }
    // Every filled cell holds the shared (unscaled) LbEndpoint's bytes, never a scaled copy's.
    const payments = index.services.get("team-b/payments")!;
    const planned = [east, west].flatMap(
      (node) => portAssignments(index, edsView(node, parseOptions({ eastWestWaypoint: "cross-cluster" })), payments, 8443).plan.endpoints,
    );
    const filled = planned.filter((endpoint) => endpoint.encoding.bytes());
    expect(filled.length).toBeGreaterThan(1);
    for (const endpoint of filled)
      expect(Buffer.from(endpoint.encoding.bytes()!).equals(Buffer.from(LbEndpoint.encode(endpoint.lbEndpoint).finish()))).toBe(true);
  });

  test("edge shapes: group metadata and weight, a policy, empty groups", () => {
    sameAssignment({
      cluster_name: "a",
      endpoints: [
        {
          locality: { region: "r" },
          metadata: { filter_metadata: { x: { y: "z" } } },
          lb_endpoints: [{ load_balancing_weight: 3 }],
          load_balancing_weight: 2,
          priority: 1,
        },
      ],
    });
    sameAssignment({ cluster_name: "b", endpoints: [{}, { priority: 3 }], policy: { overprovisioning_factor: 200 } });
    sameAssignment({});
  });
});

describe("the fast cluster encoder writes exactly the generated encoder's bytes", () => {
  test.each(caseModes())("every cluster of golden case %s (%s)", (name, mode) => {
    const clusters = compileCase(loadCase(name), mode).clusters;
    expect(clusters.length).toBeGreaterThan(0);
    clusters.forEach(same);
  });

  test("edge shapes: empty names and values, a match Struct, no matcher, no table", () => {
    same({ name: "a", transport_socket_matches: [{ name: "", transport_socket: { name: "", typed_config: { type_url: "", value: new Uint8Array() } } }] });
    same({ name: "b", transport_socket_matches: [{ name: "x", match: { k: "v" }, transport_socket: { name: "t" } }, { name: "y" }] });
    same({
      name: "c",
      transport_socket_matches: [
        { name: "é".repeat(200), transport_socket: { name: "t", typed_config: { type_url: "u", value: new Uint8Array(300).fill(7) } } },
      ],
    });
    same({ name: "d" });
    same({});
  });
});
