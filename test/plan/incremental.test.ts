import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { toXdsResources, type XdsResources } from "../../src/emit/xds.js";
import { isInputError } from "../../src/errors.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot, withServiceRecords, type Snapshot } from "../../src/model/snapshot.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { meshDocument } from "../support/fixtures.js";

const options = { eastWestWaypoint: "cross-cluster" } as const;

function compiled(snapshot: Snapshot, index = indexSnapshot(snapshot)) {
  return toXdsResources(compileNode(index, localNodeFrom(snapshot, "east", "node-1"), options));
}

function versions(resources: XdsResources): Record<string, string> {
  return Object.fromEntries(Object.entries(resources).flatMap(([url, list]) => list.map((r) => [`${url.slice(url.lastIndexOf(".") + 1)} ${r.name}`, r.version])));
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
    const moved = base.services.get("team-b/payments")!.map((record) =>
      record.kubernetesMetadata.podName === "payments-2b7c-q3" ? { ...record, kubernetesMetadata: { ...record.kubernetesMetadata, nodeName: "node-5", nodeIp: "10.20.0.15" } } : record,
    );
    const nextIndex = indexSnapshot(withServiceRecords(base, "team-b/payments", moved), index);
    expect(nextIndex.hostedBy.has("west/node-4")).toBe(false);
    expect(nextIndex.hostedBy.get("west/node-5")!.map((h) => h.endpoint.kubernetesMetadata.podName)).toEqual(["payments-2b7c-q3"]);
    expect(nextIndex.nodeAddresses.get("west/node-5")).toBe("10.20.0.15");
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
    expect(() => withServiceRecords(base, "team-b/payments", [{ ip: "10.0.0.1", clusterName: "east", port: 1, metadata: JSON.parse('{"__proto__": {}}') }])).toThrow(/forbidden key/);
  });
});
