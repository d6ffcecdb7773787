import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { nodeSize } from "../../src/compile/node-limits.js";
import { toXdsResources, type XdsResources } from "../../src/emit/xds.js";
import { isInputError } from "../../src/errors.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseOptions } from "../../src/model/options.js";
import { parseSnapshot, type Snapshot, withServiceRecords } from "../../src/model/snapshot.js";
import { planNode } from "../../src/plan/node-plan.js";
import { changedServices, indexSnapshot, nodesSharingNetns } from "../../src/plan/snapshot-index.js";
import { meshDocument } from "../support/fixtures.js";
import { endpoint, mesh, node } from "../support/mesh-builder.js";

const options = { eastWestWaypoint: "cross-cluster" } as const;

function compiled(snapshot: Snapshot, index = indexSnapshot(snapshot)) {
  return toXdsResources(compileNode(index, localNodeFrom(snapshot, "east", "node-1"), options));
}

function versions(resources: XdsResources): Record<string, string> {
  return Object.fromEntries(
    Object.entries(resources).flatMap(([url, list]) => list.map((r) => [`${url.slice(url.lastIndexOf(".") + 1)} ${r.name}`, r.version])),
  );
}

/** The example's west payments records, with the unhealthy pod recovered. */
function recovered(snapshot: Snapshot) {
  return snapshot.services.get("team-b/payments")!.map((record) => (record.health === "UNHEALTHY" ? { ...record, health: "HEALTHY" } : record));
}

describe("incremental recompiles", () => {
  test("the services changed since an index are told for that index, even right after another index was asked about the same snapshot", () => {
    // The index update and the server ask about the same pair in a row; the answer is kept for that pair only.
    const base = parseSnapshot(meshDocument());
    const first = indexSnapshot(base);
    const recoveredPayments = withServiceRecords(base, "team-b/payments", recovered(base));
    const second = indexSnapshot(recoveredPayments, first);
    const checkout = recoveredPayments.services.get("team-a/checkout")!.map((record) => ({ ...record, weight: record.weight + 1 }));
    const next = { ...recoveredPayments, services: new Map(recoveredPayments.services).set("team-a/checkout" as never, checkout) };
    const changed = (index: typeof first) => [...changedServices(index, next).changed].sort();
    expect(changed(first)).toEqual(["team-a/checkout", "team-b/payments"]);
    expect(changed(second)).toEqual(["team-a/checkout"]);
    expect(changed(first)).toEqual(["team-a/checkout", "team-b/payments"]);
  });

  test("a snapshot from withServiceRecords, indexed from the previous index, compiles exactly like a fresh one", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    compiled(base, index);
    const next = withServiceRecords(base, "team-b/payments", recovered(base));
    const fromPrevious = compiled(next, indexSnapshot(next, index));
    const doc = meshDocument();
    doc.services["team-b/payments"][2].health = "HEALTHY";
    expect(versions(fromPrevious)).toEqual(versions(compiled(parseSnapshot(doc))));
  });

  test("a snapshot from one update of several services, indexed from the previous index, compiles exactly like a fresh one", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    compiled(base, index);
    const checkout = base.services.get("team-a/checkout")!;
    const next = withServiceRecords(
      base,
      new Map<string, readonly unknown[]>([
        ["team-b/payments", recovered(base)],
        ["team-a/checkout", checkout.slice(1)],
      ]),
    );
    expect([...changedServices(index, next).changed].sort()).toEqual(["team-a/checkout", "team-b/payments"]);
    const fromPrevious = compiled(next, indexSnapshot(next, index));
    const doc = meshDocument();
    doc.services["team-b/payments"][2].health = "HEALTHY";
    doc.services["team-a/checkout"].shift();
    expect(versions(fromPrevious)).toEqual(versions(compiled(parseSnapshot(doc))));
  });

  test("a registry watch re-sends every record of a service: those equal to the previous ones stay the same objects, and so do the index's lists of nodes where nothing changed", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    const previous = base.services.get("team-b/payments")!;
    const resent = structuredClone(previous).map((record) => (record.health === "UNHEALTHY" ? { ...record, health: "HEALTHY" as const } : record));
    const next = withServiceRecords(base, "team-b/payments", resent);
    const records = next.services.get("team-b/payments")!;
    expect(records.map((record, i) => record === previous[i])).toEqual(previous.map((record) => record.health !== "UNHEALTHY"));
    const updated = indexSnapshot(next, index);
    const recovered = previous.find((record) => record.health === "UNHEALTHY")!;
    for (const [node, hosted] of index.hostedBy) {
      const changed = node === `${recovered.clusterName}/${recovered.kubernetesMetadata.nodeName}`;
      expect(updated.hostedBy.get(node) === hosted, node).toBe(!changed);
    }
    expect(versions(compiled(next, updated))).toEqual(versions(compiled({ ...next })));
  });

  test("a changed record that comes to share an unchanged service's netns takes that service's endpoint out too (NETNS_SHARED)", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    const emitted = (snapshot: Snapshot, at = indexSnapshot(snapshot)) =>
      compileNode(at, localNodeFrom(snapshot, "west", "node-2"), { eastWestWaypoint: "cross-cluster" })
        .diagnostics.filter((d) => d.code === "ENDPOINT_DIRECT")
        .map((d) => `${d.resource} ${d.endpoint?.cluster}/${d.endpoint?.ip}`);
    expect(emitted(base, index)).toContain("payments.team-b.mesh.aether:8443 west/10.244.0.8");
    const payments = base.services.get("team-b/payments")!.find((r) => r.clusterName === "west" && r.ip === "10.244.0.8")!;
    const frontend = base.services
      .get("team-a/frontend")!
      .map((r) => (r.clusterName === "west" && r.kubernetesMetadata.nodeName === "node-1" ? { ...r, containerMetadata: payments.containerMetadata } : r));
    const next = withServiceRecords(base, "team-a/frontend", frontend);
    const fresh = emitted(parseSnapshot({ ...meshDocument(), services: { ...meshDocument().services, "team-a/frontend": frontend } }));
    expect(fresh).not.toContain("payments.team-b.mesh.aether:8443 west/10.244.0.8");
    expect(emitted(next, indexSnapshot(next, index))).toEqual(fresh);
  });

  test("when the record sharing a netns moves to its own, the unchanged service's endpoint comes back", () => {
    const original = parseSnapshot(meshDocument());
    const payments = original.services.get("team-b/payments")!.find((r) => r.clusterName === "west" && r.ip === "10.244.0.8")!;
    const sharing = original.services
      .get("team-a/frontend")!
      .map((r) => (r.clusterName === "west" && r.kubernetesMetadata.nodeName === "node-1" ? { ...r, containerMetadata: payments.containerMetadata } : r));
    const base = withServiceRecords(original, "team-a/frontend", sharing);
    const index = indexSnapshot(base);
    const emitted = (snapshot: Snapshot, at: ReturnType<typeof indexSnapshot>) =>
      compileNode(at, localNodeFrom(snapshot, "west", "node-2"), { eastWestWaypoint: "cross-cluster" })
        .diagnostics.filter((d) => d.code === "ENDPOINT_DIRECT")
        .map((d) => `${d.resource} ${d.endpoint?.cluster}/${d.endpoint?.ip}`);
    expect(emitted(base, index)).not.toContain("payments.team-b.mesh.aether:8443 west/10.244.0.8");
    const next = withServiceRecords(base, "team-a/frontend", original.services.get("team-a/frontend")!);
    expect(emitted(next, indexSnapshot(next, index))).toContain("payments.team-b.mesh.aether:8443 west/10.244.0.8");
    expect(emitted(next, indexSnapshot(next, index))).toEqual(emitted(original, indexSnapshot(original)));
  });

  test("the nodes where records share a netns follow registry updates both ways, as a fresh index finds them (with none, no record's rivals are looked up)", () => {
    const original = parseSnapshot(meshDocument());
    const index = indexSnapshot(original);
    const sharingNodes = (at: ReturnType<typeof indexSnapshot>) => [...nodesSharingNetns(at)];
    expect(sharingNodes(index)).toEqual([]);
    const payments = original.services.get("team-b/payments")!.find((r) => r.clusterName === "west" && r.ip === "10.244.0.8")!;
    const sharing = original.services
      .get("team-a/frontend")!
      .map((r) => (r.clusterName === "west" && r.kubernetesMetadata.nodeName === "node-1" ? { ...r, containerMetadata: payments.containerMetadata } : r));
    const shared = withServiceRecords(original, "team-a/frontend", sharing);
    const sharedIndex = indexSnapshot(shared, index);
    expect(sharingNodes(sharedIndex)).toEqual(["west/node-1"]);
    expect(sharingNodes(indexSnapshot({ ...shared }))).toEqual(["west/node-1"]);
    const restored = withServiceRecords(shared, "team-a/frontend", original.services.get("team-a/frontend")!);
    expect(sharingNodes(indexSnapshot(restored, sharedIndex))).toEqual([]);
  });

  test("a record sharing a netns changes its health: the other service keeps its index entry; renamed, the other's NETNS_SHARED names it anew", () => {
    const original = parseSnapshot(meshDocument());
    const payments = original.services.get("team-b/payments")!.find((r) => r.clusterName === "west" && r.ip === "10.244.0.8")!;
    const isSharing = (r: { clusterName: string; kubernetesMetadata: { nodeName: string } }) =>
      r.clusterName === "west" && r.kubernetesMetadata.nodeName === "node-1";
    const sharing = original.services.get("team-a/frontend")!.map((r) => (isSharing(r) ? { ...r, containerMetadata: payments.containerMetadata } : r));
    const base = withServiceRecords(original, "team-a/frontend", sharing);
    const index = indexSnapshot(base);
    const leftOut = (snapshot: Snapshot, at: ReturnType<typeof indexSnapshot>) =>
      compileNode(at, localNodeFrom(snapshot, "west", "node-2"), { eastWestWaypoint: "cross-cluster" })
        .diagnostics.filter((d) => d.code === "NETNS_SHARED")
        .map((d) => d.message);
    expect(leftOut(base, index).join("\n")).toContain("also claimed by team-a/frontend pod frontend-");
    const changed = (change: (r: (typeof sharing)[number]) => object) => {
      const next = withServiceRecords(
        base,
        "team-a/frontend",
        sharing.map((r) => (isSharing(r) ? { ...r, ...change(r) } : r)),
      );
      const updated = indexSnapshot(next, index);
      expect(leftOut(next, updated)).toEqual(leftOut({ ...next }, indexSnapshot({ ...next })));
      return updated;
    };
    const flipped = changed((r) => ({ health: r.health === "HEALTHY" ? "UNHEALTHY" : "HEALTHY" }));
    expect(flipped.services.get("team-b/payments")).toBe(index.services.get("team-b/payments"));
    const renamed = changed((r) => ({ kubernetesMetadata: { ...r.kubernetesMetadata, podName: "frontend-renamed" } }));
    expect(renamed.services.get("team-b/payments")).not.toBe(index.services.get("team-b/payments"));
    expect(leftOut(renamed.snapshot, renamed).join("\n")).toContain("also claimed by team-a/frontend pod frontend-renamed");
  });

  test("only the changed service's assignment gets a new version; unchanged services keep their index entries", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    const before = versions(compiled(base, index));
    const next = withServiceRecords(base, "team-b/payments", recovered(base));
    const nextIndex = indexSnapshot(next, index);
    const after = versions(compiled(next, nextIndex));
    const changed = Object.keys(after).filter((key) => after[key] !== before[key]);
    expect(changed).toEqual(["ClusterLoadAssignment payments.team-b.mesh.aether:8443"]);
    expect(nextIndex.services.get("team-a/checkout")).toBe(index.services.get("team-a/checkout"));
    expect(nextIndex.services.get("team-b/payments")).not.toBe(index.services.get("team-b/payments"));
  });

  test("a plain new snapshot with shared record arrays is also updated incrementally", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    const services = new Map(base.services);
    services.set("team-b/payments", withServiceRecords(base, "team-b/payments", recovered(base)).services.get("team-b/payments")!);
    const nextIndex = indexSnapshot({ ...base, services }, index);
    expect(nextIndex.services.get("team-a/frontend")).toBe(index.services.get("team-a/frontend"));
    expect(nextIndex.hostedBy.get("west/node-1")!.map((h) => h.endpoint.health)).toEqual(["HEALTHY", "HEALTHY"]);
  });

  test("a plain new snapshot with the same services in another order, one of them changed, is read by key", () => {
    // Walking both maps in step only holds while their keys line up; here they do not, and the
    // records at each position belong to another service.
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    compiled(base, index);
    const reordered = new Map([...base.services].reverse());
    reordered.set("team-b/payments", withServiceRecords(base, "team-b/payments", recovered(base)).services.get("team-b/payments")!);
    const next = { ...base, services: reordered };
    const nextIndex = indexSnapshot(next, index);
    expect(nextIndex.services.get("team-a/frontend")).toBe(index.services.get("team-a/frontend"));
    expect(nextIndex.hostedBy.get("west/node-1")!.map((h) => h.endpoint.health)).toEqual(["HEALTHY", "HEALTHY"]);
    expect(versions(compiled(next, nextIndex))).toEqual(versions(compiled(next, indexSnapshot({ ...next }))));
  });

  test("moving a pod to another node updates which node hosts it and the node's address", () => {
    const base = parseSnapshot(meshDocument());
    const index = indexSnapshot(base);
    const moved = base.services
      .get("team-b/payments")!
      .map((record) =>
        record.kubernetesMetadata.podName === "payments-2b7c-q3"
          ? { ...record, kubernetesMetadata: { ...record.kubernetesMetadata, nodeName: "node-5", nodeIp: "10.20.0.15" } }
          : record,
      );
    const nextIndex = indexSnapshot(withServiceRecords(base, "team-b/payments", moved), index);
    expect(nextIndex.hostedBy.has("west/node-4")).toBe(false);
    expect(nextIndex.hostedBy.get("west/node-5")!.map((h) => h.endpoint.kubernetesMetadata.podName)).toEqual(["payments-2b7c-q3"]);
    expect(nextIndex.nodeAddresses.get("west/node-5")).toBe("10.20.0.15");
  });

  test("when a record moves a node's derived address, other services' waypoint endpoints there move too", () => {
    // Without west's node list, west/node-1's address is the lowest its records report (frontend's
    // and payments'). Lowering frontend's moves payments' waypoint endpoint, though payments did not change.
    const doc = meshDocument();
    doc.nodes = doc.nodes.filter((node: { cluster: string }) => node.cluster !== "west");
    const base = parseSnapshot(doc);
    const index = indexSnapshot(base);
    compiled(base, index);
    const frontend = base.services
      .get("team-a/frontend")!
      .map((r) => (r.clusterName === "west" ? { ...r, kubernetesMetadata: { ...r.kubernetesMetadata, nodeIp: "10.20.0.5" } } : r));
    const next = withServiceRecords(base, "team-a/frontend", frontend);
    const fromPrevious = versions(compiled(next, indexSnapshot(next, index)));
    expect(fromPrevious).toEqual(versions(compiled({ ...next })));
    expect(fromPrevious["ClusterLoadAssignment payments.team-b.mesh.aether:8443"]).not.toBe(
      versions(compiled(base, index))["ClusterLoadAssignment payments.team-b.mesh.aether:8443"],
    );
  });

  test("withServiceRecords validates like parseSnapshot, with paths", () => {
    const base = parseSnapshot(meshDocument());
    try {
      withServiceRecords(base, "team-b/payments", [{ ip: "nope", clusterName: "east", port: 8443 }]);
      throw new Error("expected an InputError");
    } catch (error) {
      expect(isInputError(error) && error.issues).toEqual([{ path: 'services["team-b/payments"][0].ip', message: "not an IPv4/IPv6 address" }]);
    }
    expect(() => withServiceRecords(base, "Team/x", [])).toThrow(/not a service key/);
    expect(() =>
      withServiceRecords(base, "team-b/payments", [{ ip: "10.0.0.1", clusterName: "east", port: 1, metadata: JSON.parse('{"__proto__": {}}') }]),
    ).toThrow(/forbidden key/);
  });
});

describe("a chain of incremental indexes", () => {
  /** What an index says, in plain data: equal for equal snapshots however the index was built. */
  function contents(index: ReturnType<typeof indexSnapshot>) {
    return {
      serviceKeys: index.serviceKeys,
      services: [...index.services].map(([key, service]) => [key, service.endpoints, service.ports, [...service.nodes].sort()]),
      hostedBy: [...index.hostedBy].sort(([a], [b]) => (a < b ? -1 : 1)).map(([node, hosted]) => [node, hosted.map((h) => `${h.service} ${h.endpoint.ip}`)]),
      nodeAddresses: [...index.nodeAddresses].sort(([a], [b]) => (a < b ? -1 : 1)),
    };
  }

  test("after many updates — records changed, pods moved, services added and removed — equals a fresh index", () => {
    const base = parseSnapshot(meshDocument());
    let snapshot = base;
    let index = indexSnapshot(base);
    const keys = [...base.services.keys()];
    for (let round = 0; round < 24; round++) {
      const key = keys[round % keys.length]!;
      const services = new Map(snapshot.services);
      if (round % 6 === 5) services.delete(key);
      else if (round % 6 === 4) services.set(`team-z/added-${round}` as never, [{ ...base.services.get(key)![0]!, ip: `10.99.0.${round}` }]);
      else {
        const records = base.services.get(key)!;
        services.set(
          key,
          records.map((record, i) =>
            i === round % records.length
              ? { ...record, weight: record.weight + round, kubernetesMetadata: { ...record.kubernetesMetadata, nodeName: `node-${round % 3}` } }
              : record,
          ),
        );
      }
      snapshot = { ...snapshot, services };
      index = indexSnapshot(snapshot, index);
      expect(contents(index), `round ${round}`).toEqual(contents(indexSnapshot({ ...snapshot })));
    }
    const node = localNodeFrom(base, "east", "node-1");
    expect(versions(toXdsResources(compileNode(index, node, options)))).toEqual(versions(toXdsResources(compileNode({ ...snapshot }, node, options))));
  });

  test("through withServiceRecords — services removed, added back, changed — equals a fresh index, and so do the compiles and their diagnostics", () => {
    const base = parseSnapshot(meshDocument());
    let snapshot = base;
    let index = indexSnapshot(base);
    const keys = [...base.services.keys()];
    const updates: [string, readonly unknown[] | undefined][] = [
      ...keys.map((key) => [key, undefined] as [string, undefined]),
      ...keys.map((key) => [key, base.services.get(key)] as [string, readonly unknown[]]),
      ["team-b/payments", recovered(base)],
    ];
    for (const [round, update] of updates.entries()) {
      snapshot = withServiceRecords(snapshot, new Map([update]));
      index = indexSnapshot(snapshot, index);
      expect(contents(index), `round ${round}`).toEqual(contents(indexSnapshot({ ...snapshot })));
      const node = localNodeFrom(snapshot, "east", "node-1");
      const [incremental, fresh] = [compileNode(index, node, options), compileNode({ ...snapshot }, node, options)];
      expect(versions(toXdsResources(incremental)), `round ${round}`).toEqual(versions(toXdsResources(fresh)));
      expect(incremental.diagnostics, `round ${round}`).toEqual(fresh.diagnostics);
    }
    expect(snapshot.services.size).toBe(keys.length);
  });
});

/**
 * 24 services of two pods each: svc-0 on east/n1 and n2, the others on n2 and n3; svc-0 depends on svc-1..svc-9 and on
 * svc-30, which has no records yet. With this many services a one-service event is layered on the
 * previous index rather than copied, so a recompile reuses the node's last dependency scope (its
 * port count and cluster signatures too), hosted side and pod route count, and must still equal a
 * compile on a fresh index.
 */
describe("recompiles on an index that layers its changes", () => {
  const pod = (s: number, n: number) => endpoint({ cluster: "east", ip: `10.0.${s}.${n}`, node: `n${n}`, pod: `svc-${s}-${n}`, ports: [8080, 9000 + s] });
  const base = mesh({
    nodes: [1, 2, 3].map((n) => node({ cluster: "east", name: `n${n}`, ip: `192.168.0.${n}` })),
    services: Object.fromEntries(Array.from({ length: 24 }, (_, s) => [`ns/svc-${s}`, s === 0 ? [pod(s, 1), pod(s, 2)] : [pod(s, 2), pod(s, 3)]])),
    dependencies: { "ns/svc-0": [...Array.from({ length: 9 }, (_, s) => `ns/svc-${s + 1}`), "ns/svc-30"] },
  });
  const local = localNodeFrom(base, "east", "n1");
  // Parsed once, as a server does: a node's reuse is kept per node and parsed options object.
  const parsed = parseOptions(options);
  const unhealthy = (snapshot: Snapshot, key: string) => snapshot.services.get(key as never)!.map((r, i) => (i === 0 ? { ...r, health: "UNHEALTHY" } : r));
  const events: [string, (snapshot: Snapshot) => Snapshot][] = [
    ["a dependency's endpoint turns unhealthy", (s) => withServiceRecords(s, "ns/svc-3", unhealthy(s, "ns/svc-3"))],
    ["a service that is not a dependency changes", (s) => withServiceRecords(s, "ns/svc-20", unhealthy(s, "ns/svc-20"))],
    [
      "a dependency gains a port",
      (s) =>
        withServiceRecords(s, "ns/svc-4", [...s.services.get("ns/svc-4" as never)!, endpoint({ cluster: "east", ip: "10.0.4.9", node: "n2", ports: [7000] })]),
    ],
    ["a dependency loses every record", (s) => withServiceRecords(s, "ns/svc-5", [])],
    ["a dependency without records gains one", (s) => withServiceRecords(s, "ns/svc-30", [pod(30, 2)])],
    ["a hosted service's pod turns unhealthy", (s) => withServiceRecords(s, "ns/svc-0", unhealthy(s, "ns/svc-0"))],
    [
      "a hosted service gains a port on another node",
      (s) =>
        withServiceRecords(s, "ns/svc-0", [...s.services.get("ns/svc-0" as never)!, endpoint({ cluster: "east", ip: "10.0.0.9", node: "n2", ports: [7100] })]),
    ],
  ];
  const scopeOf = (xds: XdsResources) => Object.keys(versions(xds)).filter((name) => name.startsWith("Cluster svc-"));
  // Fresh index, and options parsed anew: nothing the recompiles keep per node is reused either.
  const cold = (snapshot: Snapshot) => versions(toXdsResources(compileNode({ ...snapshot }, local, options)));

  test("a chain of registry events, each indexed from the last index", () => {
    let snapshot = base;
    let index = indexSnapshot(snapshot);
    const first = toXdsResources(compileNode(index, local, parsed));
    for (const [, event] of events) {
      snapshot = event(snapshot);
      index = indexSnapshot(snapshot, index);
      expect(versions(toXdsResources(compileNode(index, local, parsed)))).toEqual(cold(snapshot));
      // The size the node limits are checked against is patched along with the scope.
      expect(nodeSize(planNode(index, local, parsed))).toEqual(nodeSize(planNode(indexSnapshot({ ...snapshot }), local, parseOptions(options))));
    }
    // The chain changed the dependencies' clusters: svc-4 gained a port, svc-5 left, svc-30 came.
    const last = toXdsResources(compileNode(index, local, parsed));
    expect(scopeOf(first).filter((name) => !scopeOf(last).includes(name))).toEqual(["Cluster svc-5.ns.mesh.test:8080", "Cluster svc-5.ns.mesh.test:9005"]);
    expect(scopeOf(last).filter((name) => !scopeOf(first).includes(name))).toEqual([
      "Cluster svc-30.ns.mesh.test:8080",
      "Cluster svc-30.ns.mesh.test:9030",
      "Cluster svc-4.ns.mesh.test:7000",
    ]);
  });

  test.each(events)("two snapshots derived from one base, compiled one after the other: %s", (_, event) => {
    const index = indexSnapshot(base);
    compileNode(index, local, parsed);
    const sibling = withServiceRecords(base, "ns/svc-1", unhealthy(base, "ns/svc-1"));
    compileNode(indexSnapshot(sibling, index), local, parsed);
    const next = event(base);
    expect(versions(toXdsResources(compileNode(indexSnapshot(next, index), local, parsed)))).toEqual(cold(next));
  });
});

/**
 * A waypoint endpoint stands for a service's pods behind one node; these compare recompiles with a
 * compile of freshly parsed records, which share nothing with what an index or its records kept.
 */
describe("waypoint endpoints after a change behind them", () => {
  const westNode = (name: string, ip: string, zone = "z1") => node({ cluster: "west", name, ip, zone });
  const api = (ip: string, on: string, health: "HEALTHY" | "UNHEALTHY" = "HEALTHY") => endpoint({ cluster: "west", ip, node: on, pod: `api-${ip}`, health });
  const parts = (w1Zone: string, secondHealth: "HEALTHY" | "UNHEALTHY") => ({
    nodes: [node({ cluster: "east", name: "e1", ip: "192.168.0.1" }), westNode("w1", "192.168.1.1", w1Zone), westNode("w2", "192.168.1.2")],
    services: {
      "ns/web": [endpoint({ cluster: "east", ip: "10.0.0.1", node: "e1", pod: "web-1" })],
      // w1 fronts two pods: the endpoint's first pod stays the same record when the second changes.
      "ns/api": [api("10.1.0.1", "w1"), api("10.1.0.2", "w1", secondHealth), api("10.1.0.3", "w2")],
    },
    dependencies: { "ns/web": ["ns/api"] },
  });
  const parsed = parseOptions(options);
  const compileOn = (snapshot: Snapshot, index = indexSnapshot(snapshot)) => compileNode(index, localNodeFrom(snapshot, "east", "e1"), parsed);
  const apiEndpoints = (result: ReturnType<typeof compileNode>) =>
    result.endpoints.find((a) => a.cluster_name?.startsWith("api.ns."))!.endpoints!.flatMap((group) => group.lb_endpoints ?? []);
  const at = (result: ReturnType<typeof compileNode>, ip: string) => apiEndpoints(result).find((e) => e.endpoint?.address?.socket_address?.address === ip);

  test("the second pod behind a waypoint turns unhealthy: that endpoint weighs the one healthy pod", () => {
    const base = mesh(parts("z1", "HEALTHY"));
    const index = indexSnapshot(base);
    const before = compileOn(base, index);
    const records = base.services.get("ns/api" as never)!.map((r) => (r.ip === "10.1.0.2" ? { ...r, health: "UNHEALTHY" } : r));
    const after = compileOn(withServiceRecords(base, "ns/api", records), indexSnapshot(withServiceRecords(base, "ns/api", records), index));
    const fresh = compileOn(mesh(parts("z1", "UNHEALTHY")));
    expect(versions(toXdsResources(after))).toEqual(versions(toXdsResources(fresh)));
    // w1's endpoint now weighs its one healthy pod.
    expect(at(after, "192.168.1.1")).toEqual(at(fresh, "192.168.1.1"));
    expect(at(after, "192.168.1.1")).not.toEqual(at(before, "192.168.1.1"));
    // w2's pod did not change: its endpoint, and the encoding it carries, is the one built before.
    expect(at(after, "192.168.1.2")).toBe(at(before, "192.168.1.2"));
  });

  test("a waypoint node's zone changes in the node list (a fresh index of the same records): its endpoint moves to the new locality", () => {
    const base = mesh(parts("z1", "HEALTHY"));
    compileOn(base);
    const moved: Snapshot = { ...base, nodes: base.nodes.map((n) => (n.name === "w1" ? { ...n, zone: "z2" } : n)) };
    expect(versions(toXdsResources(compileOn(moved)))).toEqual(versions(toXdsResources(compileOn(mesh(parts("z2", "HEALTHY"))))));
  });
});
