import { describe, expect, test } from "vitest";
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { encodeAssignment } from "../../src/emit/assignment-encoding.js";
import { encodeCluster } from "../../src/emit/cluster-encoding.js";
import { caseNames, compileCase, loadCase } from "../support/cases.js";

const same = (cluster: Cluster) => expect(Buffer.from(encodeCluster(cluster)).equals(Buffer.from(Cluster.encode(cluster).finish()))).toBe(true);

const sameAssignment = (assignment: ClusterLoadAssignment) =>
  expect(Buffer.from(encodeAssignment(assignment)).equals(Buffer.from(ClusterLoadAssignment.encode(assignment).finish()))).toBe(true);

describe("the fast assignment encoder writes exactly the generated encoder's bytes", () => {
  test.each(caseNames())("every assignment of golden case %s", (name) => {
    compileCase(loadCase(name)).endpoints.forEach(sameAssignment);
  });

  test("edge shapes: group metadata and weight, a policy, empty groups", () => {
    sameAssignment({ cluster_name: "a", endpoints: [{ locality: { region: "r" }, metadata: { filter_metadata: { x: { y: "z" } } }, lb_endpoints: [{ load_balancing_weight: 3 }], load_balancing_weight: 2, priority: 1 }] });
    sameAssignment({ cluster_name: "b", endpoints: [{}, { priority: 3 }], policy: { overprovisioning_factor: 200 } });
    sameAssignment({});
  });
});

describe("the fast cluster encoder writes exactly the generated encoder's bytes", () => {
  test.each(caseNames())("every cluster of golden case %s", (name) => {
    const clusters = compileCase(loadCase(name)).clusters;
    expect(clusters.length).toBeGreaterThan(0);
    clusters.forEach(same);
  });

  test("edge shapes: empty names and values, a match Struct, no matcher, no table", () => {
    same({ name: "a", transport_socket_matches: [{ name: "", transport_socket: { name: "", typed_config: { type_url: "", value: new Uint8Array() } } }] });
    same({ name: "b", transport_socket_matches: [{ name: "x", match: { k: "v" }, transport_socket: { name: "t" } }, { name: "y" }] });
    same({ name: "c", transport_socket_matches: [{ name: "é".repeat(200), transport_socket: { name: "t", typed_config: { type_url: "u", value: new Uint8Array(300).fill(7) } } }] });
    same({ name: "d" });
    same({});
  });
});
