import { describe, expect, test } from "vitest";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderResource } from "../../src/emit/text.js";
import type { SourceIdentity, WaypointMode } from "../../src/model/options.js";
import { loadCase } from "../support/cases.js";

describe("turning the waypoint on changes nothing inside one cluster", () => {
  const single = loadCase("single-cluster");
  const compile = (eastWestWaypoint: WaypointMode, sourceIdentity: SourceIdentity = "selector") =>
    compileNode(single.snapshot, single.node, { eastWestWaypoint, sourceIdentity });
  const [off, on] = [compile("off"), compile("cross-cluster")];

  // The waypoint side (ew_tunnel and its ew_ingress clusters) is what turning the waypoint on adds.
  const notIngress = <T extends { name?: string; cluster_name?: string }>(list: readonly T[]) =>
    list.filter((r) => !(r.name ?? r.cluster_name)!.startsWith("ew_ingress_"));

  test("the waypoint adds the tunnel listener and ingress clusters, nothing else", () => {
    expect(on.listeners.map((l) => l.name)).toEqual(["ew_tunnel", ...off.listeners.map((l) => l.name)]);
    expect(on.clusters.filter((c) => c.name!.startsWith("ew_ingress_")).map((c) => c.name)).toEqual(["ew_ingress_api_shop", "ew_ingress_web_shop"]);
  });

  test("endpoints are byte-identical", () => {
    const bytes = (list: readonly ClusterLoadAssignment[]) => notIngress(list).map((e) => ClusterLoadAssignment.encode(e).finish());
    expect(bytes(on.endpoints)).toEqual(bytes(off.endpoints));
  });

  const outbound = (list: typeof on.clusters) => notIngress(list).filter((c) => !c.name!.startsWith("app_") && !c.name!.startsWith("inboundready_"));

  test("selector mode: outbound clusters differ only by the waypoint socket and the matcher that picks it", () => {
    expect(outbound(on.clusters).map((c) => c.name)).toEqual(outbound(off.clusters).map((c) => c.name));
    const offOutbound = outbound(off.clusters);
    outbound(on.clusters).forEach((cluster, i) => {
      const [withWaypoint, without] = [renderResource("clusters", cluster) as any, renderResource("clusters", offOutbound[i]) as any];
      expect(withWaypoint.transport_socket_matches.find((m: any) => m.name === "local").transport_socket).toEqual(without.transport_socket);
      const rest = (c: any) => ({ ...c, transport_socket_matches: undefined, transport_socket_matcher: undefined, transport_socket: undefined });
      expect(rest(withWaypoint)).toEqual(rest(without));
    });
  });

  test("sockets mode: outbound clusters differ only by the added waypoint sockets and the first matcher level", () => {
    const [on, off] = [compile("cross-cluster", "sockets"), compile("off", "sockets")];
    expect(outbound(on.clusters).map((c) => c.name)).toEqual(outbound(off.clusters).map((c) => c.name));
    expect(notIngress(on.clusters).filter((c) => c.name!.startsWith("app_"))).toEqual(off.clusters.filter((c) => c.name!.startsWith("app_")));
    const offOutbound = outbound(off.clusters);
    outbound(on.clusters).forEach((cluster, i) => {
      const [withWaypoint, without] = [renderResource("clusters", cluster) as any, renderResource("clusters", offOutbound[i]) as any];
      const localSockets = withWaypoint.transport_socket_matches.filter((m: any) => m.name.startsWith("local_"));
      expect(localSockets).toEqual(without.transport_socket_matches);
      expect(withWaypoint.transport_socket_matcher.on_no_match.matcher).toEqual(without.transport_socket_matcher);
      const rest = (c: any) => ({ ...c, transport_socket_matches: undefined, transport_socket_matcher: undefined });
      expect(rest(withWaypoint)).toEqual(rest(without));
    });
  });
});
