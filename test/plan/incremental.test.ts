import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { toXdsResources, type XdsResources } from "../../src/emit/xds.js";
import { isInputError } from "../../src/errors.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot, type Snapshot, withServiceRecords } from "../../src/model/snapshot.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { meshDocument } from "../support/fixtures.js";

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
});
