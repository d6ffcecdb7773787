import { describe, expect, test } from "vitest";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { compactPriorities, MAX_UINT32, scaledWeights } from "../../src/compile/endpoints.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import type { EdsView } from "../../src/plan/eds-view.js";
import { type PlannedEndpoint, tierOf } from "../../src/plan/endpoints.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { meshDocument } from "../support/fixtures.js";
import { endpoint, localNode, mesh, node } from "../support/mesh-builder.js";

const view: EdsView = {
  cluster: "home",
  region: "r1",
  zone: "z1",
  node: "",
  mode: "cross-cluster",
  socketSelection: "matcher",
  inboundPort: 15008,
  tunnelPort: 15009,
};

describe("priority tiers", () => {
  test.each([
    ["same cluster, same zone", "home", { region: "r1", zone: "z1" }, 0],
    ["same cluster, same region", "home", { region: "r1", zone: "z2" }, 1],
    ["same cluster, other region", "home", { region: "r2", zone: "z1" }, 2],
    ["same cluster, unknown locality", "home", { region: "", zone: "" }, 2],
    ["same cluster, zone name reused in another region", "home", { region: "r2", zone: "z1" }, 2],
    ["remote cluster, same zone", "away", { region: "r1", zone: "z1" }, 3],
    ["remote cluster, same region", "away", { region: "r1", zone: "z9" }, 4],
    ["remote cluster, elsewhere", "away", { region: "r9", zone: "z1" }, 5],
  ])("%s → tier %i", (_name, cluster, locality, tier) => {
    expect(tierOf(view, cluster as string, locality as { region: string; zone: string })).toBe(tier);
  });

  test("a remote endpoint in the viewer's own zone still ranks below a same-cluster one elsewhere", () => {
    expect(tierOf(view, "away", { region: "r1", zone: "z1" })).toBeGreaterThan(tierOf(view, "home", { region: "r9", zone: "" }));
  });

  test("priorities are compacted to be contiguous from 0", () => {
    expect(compactPriorities([1, 1, 4, 5])).toEqual([0, 0, 1, 2]);
    expect(compactPriorities([3])).toEqual([0]);
    expect(compactPriorities([0, 0, 1, 2])).toEqual([0, 0, 1, 2]);
    expect(compactPriorities([])).toEqual([]);
  });
});

describe("weights", () => {
  const planned = (weight: number) => ({ weight }) as PlannedEndpoint;

  test("sums within uint32 are left alone", () => {
    expect(scaledWeights([planned(1024), planned(MAX_UINT32 - 1024)], [0, 0]).values).toEqual([1024, MAX_UINT32 - 1024]);
  });

  test("a priority whose sum would overflow uint32 is scaled, not wrapped, keeping the shares", () => {
    const { values, diagnostics } = scaledWeights([planned(6e9), planned(3e9), planned(1), planned(7)], [0, 0, 0, 1]);
    expect(values[0]! + values[1]! + values[2]!).toBeLessThanOrEqual(MAX_UINT32);
    expect(values[0]! / values[1]!).toBeCloseTo(2, 6);
    expect(values[2]).toBe(1); // never below 1
    expect(values[3]).toBe(7); // other priorities untouched
    expect(diagnostics).toEqual([expect.stringMatching(/^priority 0 weights sum to 9000000001, over uint32/)]);
  });
});

/** The one assignment of `svc` compiled for home/h1 (no pods, all dependencies). */
function assignmentFor(services: Record<string, Record<string, unknown>[]>, mode: "off" | "cross-cluster" | "always" = "cross-cluster", extra: object = {}) {
  const snapshot = mesh({
    nodes: [
      node({ cluster: "home", name: "h1", ip: "10.1.0.1" }),
      node({ cluster: "home", name: "h2", ip: "10.1.0.2" }),
      node({ cluster: "away", name: "a1", ip: "10.2.0.1" }),
      node({ cluster: "away", name: "a2", ip: "10.2.0.2" }),
    ],
    services,
    ...extra,
  });
  return compileNode(snapshot, localNode("home", "h1", "10.1.0.1"), { eastWestWaypoint: mode });
}

function lbEndpoints(result: ReturnType<typeof compileNode>, cluster = "svc.ns.mesh.test:8080") {
  const assignment = result.endpoints.find((a) => a.cluster_name === cluster)!;
  return (assignment.endpoints ?? []).flatMap((group) =>
    group.lb_endpoints!.map((lb) => ({
      priority: group.priority ?? 0,
      address: `${lb.endpoint!.address!.socket_address!.address}:${lb.endpoint!.address!.socket_address!.port_value}`,
      health: lb.health_status,
      weight: lb.load_balancing_weight,
      metadata: lb.metadata?.filter_metadata?.["envoy.lb"],
    })),
  );
}

describe("split horizon", () => {
  const services = {
    "ns/svc": [
      endpoint({ cluster: "home", ip: "10.244.0.5", node: "h1" }),
      endpoint({ cluster: "home", ip: "10.244.1.5", node: "h2" }),
      endpoint({ cluster: "away", ip: "10.244.0.5", node: "a1", nodeIp: "10.2.0.1" }),
    ],
  };

  test.each([
    ["off", ["10.244.0.5:15008", "10.244.1.5:15008"]], // the away pod collides with the home one
    ["cross-cluster", ["10.244.0.5:15008", "10.244.1.5:15008", "10.2.0.1:15009"]],
    ["always", ["10.1.0.2:15009", "10.244.0.5:15008", "10.2.0.1:15009"]], // same tier: sorted by address
  ] as const)("%s", (mode, addresses) => {
    expect(lbEndpoints(assignmentFor(services, mode)).map((e) => e.address)).toEqual(addresses);
  });

  test("waypoint endpoints carry string metadata: waypoint, origin cluster and node", () => {
    const [, , remote] = lbEndpoints(assignmentFor(services));
    expect(remote!.metadata).toEqual({ origin_cluster: "away", origin_node: "a1", waypoint: "true" });
  });

  test("direct endpoints carry no waypoint label, and user metadata never sets one", () => {
    const result = assignmentFor({ "ns/svc": [endpoint({ cluster: "home", ip: "10.244.0.5", node: "h1", metadata: { waypoint: "true", team: "a" } })] });
    expect(lbEndpoints(result)[0]!.metadata).toEqual({ team: "a" });
    expect(result.diagnostics.map((d) => d.code)).toContain("RESERVED_METADATA_KEY");
  });

  test("only pods serving the cluster's port are included", () => {
    const result = assignmentFor({
      "ns/svc": [
        endpoint({ cluster: "home", ip: "10.244.0.5", node: "h1", ports: [8080, 9090] }),
        endpoint({ cluster: "home", ip: "10.244.0.6", node: "h1", ports: [8080] }),
      ],
    });
    expect(result.clusters.map((c) => c.name)).toEqual(["svc.ns.mesh.test:8080", "svc.ns.mesh.test:9090"]);
    expect(lbEndpoints(result, "svc.ns.mesh.test:9090").map((e) => e.address)).toEqual(["10.244.0.5:15008"]);
  });

  test("a service that is not exported is not reachable from another cluster", () => {
    const result = assignmentFor(services, "cross-cluster", { exports: [] });
    expect(lbEndpoints(result).map((e) => e.address)).toEqual(["10.244.0.5:15008", "10.244.1.5:15008"]);
    expect(result.diagnostics.filter((d) => d.code === "NOT_EXPORTED").map((d) => d.endpoint)).toEqual([
      { cluster: "away", ip: "10.244.0.5", pod: "pod-10-244-0-5", node: "a1" },
    ]);
  });

  test("in always mode a service that is not exported stays direct inside its own cluster", () => {
    expect(lbEndpoints(assignmentFor(services, "always", { exports: [] })).map((e) => e.address)).toEqual(["10.244.0.5:15008", "10.244.1.5:15008"]);
  });
});

describe("one endpoint per remote node", () => {
  const onA1 = (ip: string, health: "HEALTHY" | "UNHEALTHY" | "DRAINING", weight = 100) =>
    endpoint({ cluster: "away", ip, node: "a1", nodeIp: "10.2.0.1", health, weight });

  test.each([
    [
      "any healthy pod makes it healthy; only healthy weight counts",
      [onA1("10.9.0.1", "HEALTHY", 100), onA1("10.9.0.2", "UNHEALTHY", 500), onA1("10.9.0.3", "HEALTHY", 50)],
      HealthStatus.HEALTHY,
      150,
    ],
    ["no healthy pod, one draining: draining", [onA1("10.9.0.1", "UNHEALTHY", 100), onA1("10.9.0.2", "DRAINING", 70)], HealthStatus.DRAINING, 70],
    [
      "all unhealthy: unhealthy, with their summed weight",
      [onA1("10.9.0.1", "UNHEALTHY", 100), onA1("10.9.0.2", "UNHEALTHY", 30)],
      HealthStatus.UNHEALTHY,
      130,
    ],
  ])("%s", (_name, pods, health, weight) => {
    expect(lbEndpoints(assignmentFor({ "ns/svc": pods }))).toEqual([
      { priority: 0, address: "10.2.0.1:15009", health, weight, metadata: { origin_cluster: "away", origin_node: "a1", waypoint: "true" } },
    ]);
  });

  test("pods of one node whose weights overflow uint32 are scaled, not wrapped", () => {
    const result = assignmentFor({ "ns/svc": [onA1("10.9.0.1", "HEALTHY", 4e9), onA1("10.9.0.2", "HEALTHY", 4e9)] });
    const [only] = lbEndpoints(result);
    expect(only!.weight).toBeLessThanOrEqual(MAX_UINT32);
    expect(only!.weight).toBeGreaterThan(MAX_UINT32 - 10);
    expect(result.diagnostics.map((d) => d.code)).toContain("WEIGHTS_SCALED");
  });

  test("each service port counts only the node's pods serving it", () => {
    const result = assignmentFor({
      "ns/svc": [
        endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1", nodeIp: "10.2.0.1", ports: [8080], weight: 100 }),
        endpoint({ cluster: "away", ip: "10.9.0.2", node: "a1", nodeIp: "10.2.0.1", ports: [8080, 9090], weight: 50 }),
      ],
    });
    expect(lbEndpoints(result, "svc.ns.mesh.test:8080").map((e) => e.weight)).toEqual([150]);
    expect(lbEndpoints(result, "svc.ns.mesh.test:9090").map((e) => e.weight)).toEqual([50]);
  });

  test("views with different tunnel ports on one index each get their own port", () => {
    const snapshot = mesh({
      nodes: [node({ cluster: "home", name: "h1", ip: "10.1.0.1" }), node({ cluster: "away", name: "a1", ip: "10.2.0.1" })],
      services: { "ns/svc": [onA1("10.9.0.1", "HEALTHY")] },
    });
    const index = indexSnapshot(snapshot);
    const home = localNode("home", "h1", "10.1.0.1");
    for (const tunnelPort of [15009, 16009, 15009]) {
      const result = compileNode(index, home, { eastWestWaypoint: "cross-cluster", tunnelPort });
      expect(lbEndpoints(result).map((e) => e.address)).toEqual([`10.2.0.1:${tunnelPort}`]);
    }
  });

  test("user metadata survives only where every pod of the node agrees", () => {
    const result = assignmentFor({
      "ns/svc": [
        endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1", nodeIp: "10.2.0.1", metadata: { app: "svc", version: "v1" } }),
        endpoint({ cluster: "away", ip: "10.9.0.2", node: "a1", nodeIp: "10.2.0.1", metadata: { app: "svc", version: "v2" } }),
      ],
    });
    expect(lbEndpoints(result)[0]!.metadata).toEqual({ app: "svc", origin_cluster: "away", origin_node: "a1", waypoint: "true" });
  });
});

describe("endpoints left out, with a reason", () => {
  test.each([
    ["no node IP anywhere", endpoint({ cluster: "away", ip: "10.9.0.1", node: "a9" }), "NO_NODE_IP"],
    ["no node name and no node IP", endpoint({ cluster: "away", ip: "10.9.0.1" }), "UNKNOWN_NODE"],
    ["a node IP but no node name: no node hosts its tunnel chain", endpoint({ cluster: "away", ip: "10.9.0.1", nodeIp: "10.2.0.1" }), "UNKNOWN_NODE"],
    ["a node missing from its cluster's node list", endpoint({ cluster: "away", ip: "10.9.0.1", node: "a9", nodeIp: "10.2.0.9" }), "NODE_GONE"],
  ])("%s", (_name, pod, code) => {
    const result = assignmentFor({ "ns/svc": [pod] });
    expect(lbEndpoints(result)).toEqual([]);
    expect(result.diagnostics.map((d) => d.code)).toEqual([code, "EMPTY_ASSIGNMENT"]);
  });

  test("a node that is not ready takes its waypoint with it", () => {
    const snapshot = mesh({
      nodes: [node({ cluster: "away", name: "a1", ip: "10.2.0.1", ready: false })],
      services: { "ns/svc": [endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1" })] },
    });
    const result = compileNode(snapshot, localNode("home", "h1", "10.1.0.1"), { eastWestWaypoint: "cross-cluster" });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["NODE_NOT_READY", "EMPTY_ASSIGNMENT"]);
  });

  test("without a node list, the registry's node IP is the waypoint address", () => {
    const snapshot = mesh({ services: { "ns/svc": [endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1", nodeIp: "10.2.0.7" })] } });
    const result = compileNode(snapshot, localNode("home", "h1", "10.1.0.1"), { eastWestWaypoint: "cross-cluster" });
    expect(lbEndpoints(result).map((e) => e.address)).toEqual(["10.2.0.7:15009"]);
  });

  test("without a node list, a node's records that disagree on its IP resolve to one address everywhere", () => {
    const snapshot = mesh({
      services: {
        "ns/svc": [
          endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1", nodeIp: "10.2.0.7" }),
          endpoint({ cluster: "away", ip: "10.9.0.2", node: "a1", nodeIp: "10.2.0.7" }),
        ],
        "ns/other": [endpoint({ cluster: "away", ip: "10.9.0.3", node: "a1", nodeIp: "10.2.0.9" })],
      },
    });
    const result = compileNode(snapshot, localNode("home", "h1", "10.1.0.1"), { eastWestWaypoint: "cross-cluster" });
    expect(lbEndpoints(result, "other.ns.mesh.test:8080").map((e) => e.address)).toEqual(["10.2.0.7:15009"]);
    expect(result.diagnostics.find((d) => d.code === "NODE_IP_MISMATCH")?.message).toBe(
      "the registry says node away/a1 is 10.2.0.9, its other records say 10.2.0.7; using 10.2.0.7",
    );
    expect(localNodeFrom(snapshot, "away", "a1").nodeIp).toBe("10.2.0.7");
  });

  test("the node list wins over a stale registry node IP", () => {
    const result = assignmentFor({ "ns/svc": [endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1", nodeIp: "10.2.9.9" })] });
    expect(lbEndpoints(result).map((e) => e.address)).toEqual(["10.2.0.1:15009"]);
    expect(result.diagnostics.map((d) => d.code)).toContain("NODE_IP_MISMATCH");
  });

  test("a pod and a waypoint at one IP are different addresses when their ports differ", () => {
    const result = assignmentFor({
      "ns/svc": [endpoint({ cluster: "home", ip: "10.2.0.1", node: "h2" }), endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1" })],
    });
    expect(lbEndpoints(result).map((e) => e.address)).toEqual(["10.2.0.1:15008", "10.2.0.1:15009"]);
    expect(result.diagnostics.map((d) => d.code)).not.toContain("ADDRESS_CONFLICT");
  });

  test("no two endpoints share an address, even when two nodes claim the same IP", () => {
    const snapshot = mesh({
      services: {
        "ns/svc": [
          endpoint({ cluster: "away", ip: "10.9.0.1", node: "a1", nodeIp: "10.2.0.1" }),
          endpoint({ cluster: "away", ip: "10.9.0.2", node: "a2", nodeIp: "10.2.0.1" }),
        ],
      },
    });
    const result = compileNode(snapshot, localNode("home", "h1", "10.1.0.1"), { eastWestWaypoint: "cross-cluster" });
    expect(lbEndpoints(result).map((e) => e.address)).toEqual(["10.2.0.1:15009"]);
    expect(result.diagnostics.find((d) => d.code === "ADDRESS_CONFLICT")?.message).toMatch(/already used by the waypoint of away\/a1/);
  });
});

describe("dependency scope", () => {
  const services = {
    "ns/svc": [endpoint({ cluster: "home", ip: "10.244.0.5", node: "h1" })],
    "ns/other": [endpoint({ cluster: "home", ip: "10.244.0.6", node: "h1" })],
  };

  test("clusters only for the node's dependencies, an empty assignment for one without endpoints", () => {
    const snapshot = mesh({ services: { ...services, "ns/idle": [] }, protocols: { "ns/idle": { "7000": "tcp" } } });
    const result = compileNode(snapshot, { ...localNode("home", "h1", "10.1.0.1"), dependencies: ["ns/svc", "ns/idle"] }, {});
    expect(result.clusters.map((c) => c.name)).toEqual(["idle.ns.mesh.test:7000", "svc.ns.mesh.test:8080"]);
    expect(result.endpoints[0]).toEqual({ cluster_name: "idle.ns.mesh.test:7000" });
    expect(result.diagnostics.map((d) => d.code)).toContain("EMPTY_ASSIGNMENT");
  });

  test("a dependency with no endpoints and no declared ports gets no cluster, and a diagnostic", () => {
    const result = compileNode(mesh({ services }), { ...localNode("home", "h1", "10.1.0.1"), dependencies: ["ns/ghost"] }, {});
    expect(result.clusters).toEqual([]);
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: "DEPENDENCY_WITHOUT_PORTS", service: "ns/ghost" })]);
  });

  test("without a dependency set, every service", () => {
    expect(compileNode(mesh({ services }), localNode("home", "h1", "10.1.0.1"), {}).clusters.map((c) => c.name)).toEqual([
      "other.ns.mesh.test:8080",
      "svc.ns.mesh.test:8080",
    ]);
  });
});

describe("planned endpoints shared across compiles", () => {
  test("one index, two inbound ports: each compile's direct endpoints are a cold compile's (a record's endpoint is kept per port)", () => {
    const document = meshDocument();
    const index = indexSnapshot(parseSnapshot(document));
    const node = localNodeFrom(index.snapshot, "east", "node-1");
    for (const inboundPort of [15008, 15108, 15008]) {
      const options = { eastWestWaypoint: "cross-cluster", inboundPort } as const;
      const fresh = parseSnapshot(structuredClone(document));
      const cold = compileNode(fresh, localNodeFrom(fresh, "east", "node-1"), options);
      expect(compileNode(index, node, options).endpoints).toEqual(cold.endpoints);
    }
  });
});
