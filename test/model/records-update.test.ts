/**
 * A registry read afresh becomes an update of the snapshot before it when only records changed:
 * it shares every other part, names exactly the changed services, and compiles as a fresh parse.
 */
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { toXdsResources } from "../../src/emit/xds.js";
import { localNodeFrom } from "../../src/model/node.js";
import { asRecordsUpdate } from "../../src/model/records-update.js";
import { changesSince, parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";
import { indexSnapshot, type SnapshotIndex } from "../../src/plan/snapshot-index.js";
import { meshDocument } from "../support/fixtures.js";

function compiled(snapshot: Snapshot, index: SnapshotIndex) {
  const resources = toXdsResources(compileNode(index, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" }));
  return Object.values(resources).flatMap((list) => list.map((resource) => `${resource.name}@${resource.version}`));
}

/** The example mesh document, changed by `change`. */
function changed(change: (doc: ReturnType<typeof meshDocument>) => void) {
  const doc = meshDocument();
  change(doc);
  return parseSnapshot(doc);
}

const recovered = (doc: ReturnType<typeof meshDocument>) => {
  for (const record of doc.services["team-b/payments"]) if (record.health === "UNHEALTHY") record.health = "HEALTHY";
};

describe("a registry read afresh", () => {
  test("with only records changed is the snapshot before with those services replaced: it indexes from the last index and compiles as read", () => {
    const previous = parseSnapshot(meshDocument());
    const index = indexSnapshot(previous);
    compiled(previous, index);
    const fresh = changed((doc) => {
      recovered(doc);
      doc.services["team-a/checkout"].pop();
    });
    const update = asRecordsUpdate(previous, fresh);
    for (const part of ["mesh", "nodes", "exports", "protocols", "dependencies", "vips"] as const) expect(update[part]).toBe(previous[part]);
    expect(changesSince(update, previous)).toEqual(new Set(["team-a/checkout", "team-b/payments"]));
    expect(new Map(update.services)).toEqual(new Map(fresh.services));
    expect(compiled(update, indexSnapshot(update, index))).toEqual(compiled(fresh, indexSnapshot(fresh)));
  });

  test("with the services in another order and nothing else changed is the snapshot before", () => {
    const previous = parseSnapshot(meshDocument());
    const reordered = changed((doc) => {
      doc.services = Object.fromEntries(Object.entries(doc.services).reverse());
    });
    expect([...reordered.services.keys()]).not.toEqual([...previous.services.keys()]);
    expect(asRecordsUpdate(previous, reordered)).toBe(previous);
  });

  test.each<[string, (doc: ReturnType<typeof meshDocument>) => void]>([
    ["a node's status", (doc) => (doc.nodes[0].ready = false)],
    ["the mesh settings", (doc) => (doc.mesh.meshDomain = "mesh.other")],
    ["a service added", (doc) => (doc.services["team-c/ledger"] = [])],
    ["a service removed", (doc) => delete doc.services["team-a/checkout"]],
  ])("with %s changed (records too) is the fresh snapshot: it is indexed from scratch", (_, change) => {
    const previous = parseSnapshot(meshDocument());
    const fresh = changed((doc) => {
      recovered(doc);
      change(doc);
    });
    expect(asRecordsUpdate(previous, fresh)).toBe(fresh);
  });
});
