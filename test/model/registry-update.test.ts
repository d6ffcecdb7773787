/**
 * A registry read afresh becomes an update of the snapshot before it when only records (services
 * added or removed too), node statuses, dependencies, VIPs, protocols and exports changed: it
 * shares every other part, names exactly the changed records' services, and compiles as a fresh
 * parse.
 */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { toXdsResources } from "../../src/emit/xds.js";
import type { InputError } from "../../src/errors.js";
import { localNodeFrom } from "../../src/model/node.js";
import { asRegistryUpdate, settingsUpdate } from "../../src/model/registry-update.js";
import { changesSince, parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";
import { indexSnapshot, type SnapshotIndex } from "../../src/plan/snapshot-index.js";
import { ledgerRecord, meshDocument } from "../support/fixtures.js";

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

/** The example mesh, indexed and compiled once: what a server held before the read. */
function servedExample() {
  const previous = parseSnapshot(meshDocument());
  const index = indexSnapshot(previous);
  compiled(previous, index);
  return { previous, index };
}

/** What `update` compiles to from the index served before: asserted to be what `fresh` compiles to. */
function servedAsFresh(update: Snapshot, fresh: Snapshot, index: SnapshotIndex) {
  const served = compiled(update, indexSnapshot(update, index));
  expect(served).toEqual(compiled(fresh, indexSnapshot(fresh)));
  return served;
}

/** What the example with only west's payments pod recovered compiles to: the change under test must show. */
function recoveredOnly() {
  const snapshot = changed(recovered);
  return compiled(snapshot, indexSnapshot(snapshot));
}

describe("a registry read afresh", () => {
  test("with only records changed is the snapshot before with those services replaced: it indexes from the last index and compiles as read", () => {
    const { previous, index } = servedExample();
    const fresh = changed((doc) => {
      recovered(doc);
      doc.services["team-a/checkout"].pop();
    });
    const update = asRegistryUpdate(previous, fresh);
    for (const part of ["mesh", "nodes", "exports", "protocols", "dependencies", "vips"] as const) expect(update[part]).toBe(previous[part]);
    expect(changesSince(update, previous)).toEqual(new Set(["team-a/checkout", "team-b/payments"]));
    expect(new Map(update.services)).toEqual(new Map(fresh.services));
    servedAsFresh(update, fresh, index);
  });

  test("with node statuses changed too is derived the same way: unchanged statuses stay the same objects", () => {
    const { previous, index } = servedExample();
    const fresh = changed((doc) => {
      recovered(doc);
      // West's nodes are east/node-1's waypoints (the node compiled here).
      doc.nodes[3].ready = false;
      doc.nodes[4].zone = "eu-west-1c";
    });
    const update = asRegistryUpdate(previous, fresh);
    expect(update.mesh).toBe(previous.mesh);
    expect(update.nodes).toEqual(fresh.nodes);
    expect(update.nodes.map((node, i) => node === previous.nodes[i])).toEqual(previous.nodes.map((_, i) => i !== 3 && i !== 4));
    expect(changesSince(update, previous)).toEqual(new Set(["team-b/payments"]));
    expect(servedAsFresh(update, fresh, index)).not.toEqual(recoveredOnly());
  });

  test("with a service added is derived the same way, the new service last", () => {
    const { previous, index } = servedExample();
    const fresh = changed((doc) => {
      recovered(doc);
      doc.services = { "team-c/ledger": [ledgerRecord()], ...doc.services };
    });
    const update = asRegistryUpdate(previous, fresh);
    expect(update.mesh).toBe(previous.mesh);
    expect([...update.services.keys()]).toEqual([...previous.services.keys(), "team-c/ledger"]);
    expect(changesSince(update, previous)).toEqual(new Set(["team-b/payments", "team-c/ledger"]));
    servedAsFresh(update, fresh, index);
  });

  test("with a service removed is derived the same way, the others shared", () => {
    const { previous, index } = servedExample();
    const fresh = changed((doc) => {
      recovered(doc);
      delete doc.services["team-a/checkout"];
    });
    const update = asRegistryUpdate(previous, fresh);
    expect(update.mesh).toBe(previous.mesh);
    expect([...update.services.keys()]).toEqual(["team-a/frontend", "team-b/payments"]);
    expect(update.services.get("team-a/frontend")).toBe(previous.services.get("team-a/frontend"));
    expect(changesSince(update, previous)).toEqual(new Set(["team-a/checkout", "team-b/payments"]));
    expect(servedAsFresh(update, fresh, index)).not.toEqual(recoveredOnly());
  });

  test("with dependencies and VIPs changed is derived the same way: the parts that did not change stay the same objects", () => {
    const { previous, index } = servedExample();
    const fresh = changed((doc) => {
      recovered(doc);
      // east/node-1 hosts frontend: it calls checkout no more, and checkout's VIP moves.
      doc.dependencies["team-a/frontend"] = ["team-b/payments"];
      doc.vips["team-a/checkout"] = "10.96.0.99";
    });
    const update = asRegistryUpdate(previous, fresh);
    for (const part of ["mesh", "nodes", "exports", "protocols"] as const) expect(update[part]).toBe(previous[part]);
    expect(update.dependencies).toBe(fresh.dependencies);
    expect(update.vips).toBe(fresh.vips);
    expect(changesSince(update, previous)).toEqual(new Set(["team-b/payments"]));
    expect(servedAsFresh(update, fresh, index)).not.toEqual(recoveredOnly());
    // Dependencies alone: the records and VIPs are the previous ones.
    const callsOnly = asRegistryUpdate(
      previous,
      changed((doc) => doc.dependencies["team-a/frontend"].pop()),
    );
    expect(callsOnly.vips).toBe(previous.vips);
    expect(callsOnly.services).toBe(previous.services);
    expect(changesSince(callsOnly, previous)).toEqual(new Set());
  });

  test("with declared protocols changed, or exports, is derived the same way", () => {
    const { previous, index } = servedExample();
    const fresh = changed((doc) => {
      recovered(doc);
      // east/node-1's frontend calls both: payments' port turns TCP, checkout's 9090 is undeclared.
      doc.protocols = { "team-b/payments": { "8443": "tcp" } };
    });
    const update = asRegistryUpdate(previous, fresh);
    for (const part of ["mesh", "nodes", "dependencies", "vips", "exports"] as const) expect(update[part]).toBe(previous[part]);
    expect(update.protocols).toBe(fresh.protocols);
    expect(servedAsFresh(update, fresh, index)).not.toEqual(recoveredOnly());
    // Exports: given where there were none (everything exported), then one service fewer.
    const exported = changed((doc) => (doc.exports = ["team-a/frontend", "team-a/checkout", "team-b/payments"]));
    const fewer = changed((doc) => (doc.exports = ["team-a/frontend", "team-a/checkout"]));
    const exportedUpdate = asRegistryUpdate(previous, exported);
    expect(exportedUpdate.exports).toBe(exported.exports);
    const fewerUpdate = asRegistryUpdate(exportedUpdate, fewer);
    expect(fewerUpdate.exports).toBe(fewer.exports);
    expect(fewerUpdate.services).toBe(previous.services);
    const exportedIndex = indexSnapshot(exportedUpdate, index);
    servedAsFresh(exportedUpdate, exported, index);
    expect(servedAsFresh(fewerUpdate, fewer, exportedIndex)).not.toEqual(compiled(exported, indexSnapshot(exported)));
  });

  test("with the services in another order and nothing else changed is the snapshot before", () => {
    const previous = parseSnapshot(meshDocument());
    const reordered = changed((doc) => {
      doc.services = Object.fromEntries(Object.entries(doc.services).reverse());
    });
    expect([...reordered.services.keys()]).not.toEqual([...previous.services.keys()]);
    expect(asRegistryUpdate(previous, reordered)).toBe(previous);
  });

  test.each<[string, (doc: ReturnType<typeof meshDocument>) => void]>([
    ["the mesh settings changed", (doc) => (doc.mesh.meshDomain = "mesh.other")],
    ["the pod network routable", (doc) => (doc.mesh.podNetwork = "routable")],
  ])("with %s (records changed too) is the fresh snapshot: it is indexed from scratch", (_, change) => {
    const previous = parseSnapshot(meshDocument());
    const fresh = changed((doc) => {
      recovered(doc);
      change(doc);
    });
    expect(asRegistryUpdate(previous, fresh)).toBe(fresh);
  });
});

describe("settings given anew for the same records (settingsUpdate)", () => {
  /** The example document's settings: everything but its services, changed by `change`. */
  function settings(change: (doc: ReturnType<typeof meshDocument>) => void = () => {}) {
    const { services: _, ...rest } = (() => {
      const doc = meshDocument();
      change(doc);
      return doc;
    })();
    return rest;
  }

  test("with a dependency and a VIP changed is what a whole parse gives as an update: the records are the snapshot's, and it compiles as read", () => {
    const { previous, index } = servedExample();
    const change = (doc: ReturnType<typeof meshDocument>) => {
      doc.dependencies["team-b/payments"] = ["team-a/checkout"];
      doc.vips["team-a/checkout"] = "10.96.0.11";
    };
    const update = settingsUpdate(previous, settings(change))!;
    const whole = asRegistryUpdate(previous, changed(change));
    expect(isDeepStrictEqual(update, whole)).toBe(true);
    expect(update.services.get("team-a/frontend")).toBe(previous.services.get("team-a/frontend"));
    expect(changesSince(update, previous)).toEqual(new Set());
    servedAsFresh(update, changed(change), index);
  });

  test("refuses what a whole parse refuses, with the same issues", () => {
    const previous = parseSnapshot(meshDocument());
    const change = (doc: ReturnType<typeof meshDocument>) => {
      doc.vips["team-b/payments"] = doc.vips["team-a/checkout"]; // one VIP for two services
      doc.protocols["team-b/payments"] = { "70000": "tcp" };
    };
    const issues = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return (error as InputError).issues;
      }
      throw new Error("accepted");
    };
    expect(issues(() => settingsUpdate(previous, settings(change)))).toEqual(issues(() => changed(change)));
  });

  test("is undefined when the mesh settings change: those are parsed whole, as a record may be read differently under them", () => {
    const previous = parseSnapshot(meshDocument());
    expect(
      settingsUpdate(
        previous,
        settings((doc) => (doc.mesh.meshDomain = "mesh.other")),
      ),
    ).toBeUndefined();
    expect(
      settingsUpdate(
        previous,
        settings((doc) => (doc.mesh.trust.trustDomain = "other.internal")),
      ),
    ).toBeUndefined();
  });
});
