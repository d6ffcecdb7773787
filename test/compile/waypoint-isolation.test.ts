import { describe, expect, test } from "vitest";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderResource } from "../../src/emit/text.js";
import { loadCase } from "../support/cases.js";

describe("turning the waypoint on changes nothing inside one cluster", () => {
  const single = loadCase("single-cluster");
  const off = compileNode(single.snapshot, single.node, { eastWestWaypoint: "off" });
  const on = compileNode(single.snapshot, single.node, { eastWestWaypoint: "cross-cluster" });

  test("endpoints are byte-identical", () => {
    expect(on.endpoints.map((e) => ClusterLoadAssignment.encode(e).finish())).toEqual(off.endpoints.map((e) => ClusterLoadAssignment.encode(e).finish()));
  });

  test("clusters differ only by the added waypoint sockets and the first matcher level", () => {
    expect(on.clusters.map((c) => c.name)).toEqual(off.clusters.map((c) => c.name));
    on.clusters.forEach((cluster, i) => {
      const [withWaypoint, without] = [renderResource("clusters", cluster) as any, renderResource("clusters", off.clusters[i]) as any];
      const localSockets = withWaypoint.transport_socket_matches.filter((m: any) => m.name.startsWith("local|"));
      expect(localSockets).toEqual(without.transport_socket_matches);
      expect(withWaypoint.transport_socket_matcher.on_no_match.matcher).toEqual(without.transport_socket_matcher);
      const rest = (c: any) => ({ ...c, transport_socket_matches: undefined, transport_socket_matcher: undefined });
      expect(rest(withWaypoint)).toEqual(rest(without));
    });
  });
});
