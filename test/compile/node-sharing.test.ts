/**
 * Pieces nodes share through the compile context and service caches (inbound and probe sockets,
 * source stamps, pod egress, ingress clusters, a cluster's waypoint pods): a node compiled after
 * others on the same index gets exactly the bytes it gets alone on a fresh index, including when
 * the nodes differ in what each shared piece depends on.
 */
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderResource } from "../../src/emit/text.js";
import { toXdsResources, XDS_TYPE_URLS } from "../../src/emit/xds.js";
import { type LocalNode, type LocalNodeInput, localNodeFrom } from "../../src/model/node.js";
import type { OptionsInput } from "../../src/model/options.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { indexSnapshot, type SnapshotIndex } from "../../src/plan/snapshot-index.js";
import { exampleSnapshot } from "../support/fixtures.js";
import { endpoint, localNode, mesh } from "../support/mesh-builder.js";

/** Every resource's name and version, by type: equal lists mean byte-identical output. */
function versions(index: SnapshotIndex, node: LocalNode | LocalNodeInput, options: OptionsInput): string[] {
  const xds = toXdsResources(compileNode(index, node, options));
  return Object.values(XDS_TYPE_URLS).flatMap((url) => xds[url].map((r) => `${url} ${r.name} ${r.version}`));
}

/** The node compiled on a fresh index of the snapshot: nothing cached by another node. */
function alone(snapshot: Snapshot, node: LocalNode | LocalNodeInput, options: OptionsInput): string[] {
  return versions(indexSnapshot({ ...snapshot }), node, options);
}

const MODES: OptionsInput[] = (["selector", "sockets"] as const).flatMap((sourceIdentity) =>
  (["off", "cross-cluster", "always"] as const).map((eastWestWaypoint) => ({ sourceIdentity, eastWestWaypoint })),
);

/** Two pods of one exported service on two nodes of one cluster, with an HTTP and a TCP port; a third pod elsewhere. */
function twoNodeMesh(extra: { vips?: Record<string, string> } = {}): Snapshot {
  const api = (ip: string, node: string, pod: string) => endpoint({ cluster: "east", ip, node, pod, ports: [8080, 5432] });
  return mesh({
    services: {
      "shop/api": [api("10.0.1.1", "n1", "api-1"), api("10.0.2.1", "n2", "api-2"), api("10.0.3.1", "n3", "api-3")],
      "shop/web": [endpoint({ cluster: "east", ip: "10.0.1.2", node: "n1", pod: "web-1" })],
      "shop/db": [endpoint({ cluster: "east", ip: "10.0.2.2", node: "n2", pod: "db-1" })],
    },
    protocols: { "shop/api": { "5432": "tcp" } },
    dependencies: { "shop/api": ["shop/db", "shop/web"], "shop/web": ["shop/api"] },
    ...extra,
  });
}

const pod = (name: string, service: string, ip: string, more: Partial<NonNullable<LocalNodeInput["pods"]>[number]> = {}) => ({
  name,
  namespace: "shop",
  serviceAccount: service,
  ip,
  netns: `/var/run/netns/${name}`,
  ...more,
});

describe("nodes sharing compiled pieces", () => {
  test.each(MODES)("every node of the example mesh, compiled one after another, gets the bytes it gets alone (%o)", (options) => {
    const snapshot = exampleSnapshot();
    const index = indexSnapshot({ ...snapshot });
    for (const { cluster, name } of snapshot.nodes) {
      const node = localNodeFrom(snapshot, cluster, name);
      expect(versions(index, node, options), `${cluster}/${name}`).toEqual(alone(snapshot, node, options));
    }
  });

  test("every node of the example mesh in every mode, all compiled on one index, gets the bytes it gets alone", () => {
    // The service caches are shared across options: a view key or routing key missing the mode,
    // a port or the cluster would hand one mode's endpoints to another.
    const snapshot = exampleSnapshot();
    const index = indexSnapshot({ ...snapshot });
    for (const { cluster, name } of snapshot.nodes) {
      const node = localNodeFrom(snapshot, cluster, name);
      for (const options of MODES)
        expect(versions(index, node, options), `${cluster}/${name} ${JSON.stringify(options)}`).toEqual(alone(snapshot, node, options));
    }
  });

  test("a node's terminating pod is left out of its own ingress only; the other node still forwards to it, and each ranks its own pod first", () => {
    const snapshot = twoNodeMesh();
    const index = indexSnapshot({ ...snapshot });
    const n1 = localNode("east", "n1", "10.9.0.1", [pod("api-1", "api", "10.0.1.1", { terminating: true }), pod("web-1", "web", "10.0.1.2")]);
    const n2 = localNode("east", "n2", "10.9.0.2", [pod("api-2", "api", "10.0.2.1"), pod("db-1", "db", "10.0.2.2")]);
    const options = { eastWestWaypoint: "cross-cluster" } as const;
    for (const node of [n1, n2, n1]) expect(versions(index, node, options)).toEqual(alone(snapshot, node, options));
    const ingress = (node: LocalNodeInput) =>
      compileNode(index, node, options)
        .endpoints.find((a) => a.cluster_name === "ew_ingress_api_shop")!
        .endpoints!.map((group) => group.lb_endpoints!.map((lb) => lb.endpoint!.address!.socket_address!.address));
    expect(ingress(n1)).toEqual([["10.0.2.1", "10.0.3.1"]]);
    expect(ingress(n2)).toEqual([["10.0.2.1"], ["10.0.1.1", "10.0.3.1"]]);
  });

  test("nodes listing a pod in one ingress share its endpoint object; each compile still gets its own inbound port and scaled weight", () => {
    // Weights near uint32: a tier of two pods is scaled, a tier of one is not, so api-1 is scaled
    // in n2's ingress and not in n1's.
    const api = (ip: string, node: string, pod: string) => endpoint({ cluster: "east", ip, node, pod, weight: 3_000_000_000 });
    const heavy = mesh({ services: { "shop/api": [api("10.0.1.1", "n1", "api-1"), api("10.0.2.1", "n2", "api-2"), api("10.0.3.1", "n3", "api-3")] } });
    for (const snapshot of [twoNodeMesh(), heavy]) {
      const index = indexSnapshot({ ...snapshot });
      const n1 = localNode("east", "n1", "10.9.0.1", [pod("api-1", "api", "10.0.1.1")]);
      const n2 = localNode("east", "n2", "10.9.0.2", [pod("api-2", "api", "10.0.2.1")]);
      const waypoint = { eastWestWaypoint: "cross-cluster" } as const;
      const otherPort = { ...waypoint, inboundPort: 15010 };
      for (const [node, options] of [
        [n1, waypoint],
        [n2, waypoint],
        [n1, otherPort],
        [n2, waypoint],
        [n1, waypoint],
      ] as const)
        expect(versions(index, node, options)).toEqual(alone(snapshot, node, options));
      const ingress = (node: LocalNodeInput) =>
        compileNode(index, node, waypoint)
          .endpoints.find((a) => a.cluster_name === "ew_ingress_api_shop")!
          .endpoints!.flatMap((group) => group.lb_endpoints!);
      const byAddress = (node: LocalNodeInput) => new Map(ingress(node).map((lb) => [lb.endpoint!.address!.socket_address!.address, lb]));
      const [one, two] = [byAddress(n1), byAddress(n2)];
      expect(one.get("10.0.3.1")).toBe(two.get("10.0.3.1"));
      if (snapshot === heavy) expect(one.get("10.0.1.1")!.load_balancing_weight).not.toBe(two.get("10.0.1.1")!.load_balancing_weight);
    }
  });

  test("the waypoint endpoints of every service behind one remote node share one Endpoint: the node's address at the tunnel port", () => {
    const remote = (ip: string, node: string, nodeIp: string) => endpoint({ cluster: "west", ip, node, nodeIp });
    const snapshot = mesh({
      services: {
        "shop/api": [remote("10.1.0.1", "w1", "10.20.0.1"), remote("10.1.0.2", "w2", "10.20.0.2")],
        "shop/web": [remote("10.1.0.3", "w1", "10.20.0.1")],
      },
    });
    const east = localNode("east", "e1", "10.10.0.1", []);
    const lbEndpoints = (cluster: string) =>
      compileNode(snapshot, east, { eastWestWaypoint: "cross-cluster", tunnelPort: 15100 })
        .endpoints.find((a) => a.cluster_name === cluster)!
        .endpoints!.flatMap((group) => group.lb_endpoints!);
    const [w1, w2] = lbEndpoints("api.shop.mesh.test:8080");
    const [web] = lbEndpoints("web.shop.mesh.test:8080");
    expect(web!.endpoint).toBe(w1!.endpoint);
    expect(w1!.endpoint).toEqual({ address: { socket_address: { address: "10.20.0.1", port_value: 15100 } } });
    expect(w2!.endpoint).toEqual({ address: { socket_address: { address: "10.20.0.2", port_value: 15100 } } });
  });

  test("direct endpoints whose pods carry the same metadata share one Metadata object, in any key order; other metadata gets its own", () => {
    const local = (ip: string, metadata: Record<string, string>) => endpoint({ cluster: "east", ip, metadata });
    const deployment = { app: "api", version: "v1", "pod-template-hash": "7d9f" };
    const snapshot = mesh({
      services: {
        "shop/api": [
          local("10.0.0.1", deployment),
          local("10.0.0.2", { version: "v1", "pod-template-hash": "7d9f", app: "api" }),
          local("10.0.0.3", { ...deployment, version: "v2" }),
        ],
        "shop/web": [local("10.0.0.4", { ...deployment, waypoint: "true" })],
      },
    });
    const east = localNode("east", "e1", "10.10.0.1", []);
    const lbEndpoints = (cluster: string) =>
      compileNode(snapshot, east, { eastWestWaypoint: "cross-cluster" })
        .endpoints.find((a) => a.cluster_name === cluster)!
        .endpoints!.flatMap((group) => group.lb_endpoints!);
    const [v1a, v1b, v2] = lbEndpoints("api.shop.mesh.test:8080");
    const [web] = lbEndpoints("web.shop.mesh.test:8080");
    expect(v1b!.metadata).toBe(v1a!.metadata);
    expect(v1a!.metadata).toEqual({ filter_metadata: { "envoy.lb": deployment } });
    expect(v2!.metadata).not.toBe(v1a!.metadata);
    expect(v2!.metadata).toEqual({ filter_metadata: { "envoy.lb": { ...deployment, version: "v2" } } });
    // The reserved key is dropped: what is left equals the first pod's, and is that same object.
    expect(web!.metadata).toBe(v1a!.metadata);
  });

  test("every pod's readiness probe shares one list of health checks", () => {
    const snapshot = twoNodeMesh();
    const n1 = localNode("east", "n1", "10.9.0.1", [pod("api-1", "api", "10.0.1.1"), pod("web-1", "web", "10.0.1.2")]);
    const probes = compileNode(snapshot, n1, {}).clusters.filter((c) => c.health_checks !== undefined);
    expect(probes.map((c) => c.name)).toHaveLength(2);
    expect(probes[0]!.health_checks).toBe(probes[1]!.health_checks);
  });

  test("pods of one service with different identities, or one pod's HTTP and TCP ports, never share a socket", () => {
    const snapshot = twoNodeMesh();
    const index = indexSnapshot({ ...snapshot });
    const n1 = localNode("east", "n1", "10.9.0.1", [pod("api-1", "api", "10.0.1.1")]);
    const n2 = localNode("east", "n2", "10.9.0.2", [pod("api-2", "api", "10.0.2.1", { spiffeId: "spiffe://td.test/ns/shop/sa/api-canary" })]);
    for (const options of MODES) for (const node of [n1, n2]) expect(versions(index, node, options)).toEqual(alone(snapshot, node, options));
    const inbound = compileNode(index, n1, {}).listeners.find((l) => l.name === "inbound_api-1_shop")!;
    const [http, tcp] = inbound.filter_chains!.map((chain) => chain.transport_socket);
    expect(http).not.toBe(tcp);
  });

  test("a pod's egress follows its node's dependency scope, not another node's", () => {
    const snapshot = twoNodeMesh();
    const index = indexSnapshot({ ...snapshot });
    const wide = { ...localNode("east", "n1", "10.9.0.1", [pod("api-1", "api", "10.0.1.1")]), dependencies: ["shop/db", "shop/web"] };
    const narrow = { ...localNode("east", "n2", "10.9.0.2", [pod("api-2", "api", "10.0.2.1")]), dependencies: ["shop/web"] };
    for (const node of [wide, narrow, wide]) expect(versions(index, node, {})).toEqual(alone(snapshot, node, {}));
    const hosts = (node: LocalNodeInput, listener: string): string[] => {
      const egress: any = renderResource("listeners", compileNode(index, node, {}).listeners.find((l) => l.name === listener)!);
      return egress.filter_chains[0].filters[1].typed_config.route_config.virtual_hosts.flatMap((host: any) => host.domains);
    };
    expect(hosts(narrow, "outbound_api-2_shop")).toEqual(["web.shop.mesh.test:8080", "web.shop.mesh.test", "*"]);
    expect(hosts(wide, "outbound_api-1_shop")).toEqual(["db.shop.mesh.test:8080", "db.shop.mesh.test", "web.shop.mesh.test:8080", "web.shop.mesh.test", "*"]);
  });

  test("an incremental index (same context) with a dependency's new port or a new VIP gives the pods' egress afresh", () => {
    const before = twoNodeMesh();
    const node = localNode("east", "n2", "10.9.0.2", [pod("api-2", "api", "10.0.2.1")]);
    const index = indexSnapshot(before);
    versions(index, node, {});
    const records = [endpoint({ cluster: "east", ip: "10.0.2.2", node: "n2", pod: "db-1", ports: [8080, 9090] })];
    const withPort: Snapshot = {
      ...before,
      services: new Map([...before.services, ["shop/db", mesh({ services: { "shop/db": records } }).services.get("shop/db")!]]),
    };
    const next = indexSnapshot(withPort, index);
    expect(next.contexts).toBe(index.contexts);
    expect(versions(next, node, {})).toEqual(alone(withPort, node, {}));
    const withVip: Snapshot = { ...withPort, vips: twoNodeMesh({ vips: { "shop/db": "10.96.0.10" } }).vips };
    expect(versions(indexSnapshot(withVip, next), node, {})).toEqual(alone(withVip, node, {}));
  });
});
