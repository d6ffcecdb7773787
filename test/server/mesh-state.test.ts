/**
 * The server recompiles only the nodes a registry change can reach. Whatever it skips must be
 * exactly what a fresh compile would give: after each of a series of changes, every node's served
 * resources equal `compileNode` on a new copy of the snapshot, in every waypoint mode.
 */
import { isDeepStrictEqual } from "node:util";
import { describe, expect, test } from "vitest";
import { compileNode, localNodeFrom, type Snapshot, toXdsResources, withServiceRecords, type XdsResources } from "../../src/entry/index.js";
import type { OptionsInput, WaypointMode } from "../../src/model/options.js";
import { changesSince, parseSnapshot } from "../../src/model/snapshot.js";
import { MeshState } from "../../src/server/mesh-state.js";
import { exampleSnapshot, ledgerRecord, meshDocument } from "../support/fixtures.js";

type Change = readonly [string, (snapshot: Snapshot) => Snapshot];

function records(snapshot: Snapshot, key: string) {
  return [...(snapshot.services.get(key as never) ?? [])];
}

const CHANGES: readonly Change[] = [
  [
    "a remote pod recovers",
    (s) =>
      withServiceRecords(
        s,
        "team-b/payments",
        records(s, "team-b/payments").map((r) => ({ ...r, health: "HEALTHY" })),
      ),
  ],
  [
    "a pod moves to another node",
    (s) =>
      withServiceRecords(
        s,
        "team-a/checkout",
        records(s, "team-a/checkout").map((r) =>
          r.kubernetesMetadata.podName === "checkout-5c6b-x2"
            ? { ...r, kubernetesMetadata: { ...r.kubernetesMetadata, nodeName: "node-1", nodeIp: "10.10.0.11" } }
            : r,
        ),
      ),
  ],
  [
    "an unlisted node's address moves",
    (s) =>
      withServiceRecords(
        s,
        "team-b/payments",
        records(s, "team-b/payments").map((r) =>
          r.kubernetesMetadata.nodeName === "node-4" ? { ...r, kubernetesMetadata: { ...r.kubernetesMetadata, nodeIp: "10.20.0.14" } } : r,
        ),
      ),
  ],
  [
    // Without a node list for west, west/node-1's address is the lowest its records report: this
    // moves it, and with it payments' waypoint endpoint there, which frontend's own nodes do not see.
    "a node's derived address moves",
    (s) =>
      withServiceRecords(
        s,
        "team-a/frontend",
        records(s, "team-a/frontend").map((r) =>
          r.clusterName === "west" ? { ...r, kubernetesMetadata: { ...r.kubernetesMetadata, nodeIp: "10.20.0.5" } } : r,
        ),
      ),
  ],
  ["a service loses its pods", (s) => withServiceRecords(s, "team-a/frontend", [])],
  ["a new service appears on a node", (s) => withServiceRecords(s, "team-c/ledger", [ledgerRecord()])],
  ["the frontend is back", (s) => withServiceRecords(s, "team-a/frontend", records(exampleSnapshot(), "team-a/frontend"))],
];

function versions(resources: XdsResources) {
  return Object.fromEntries(Object.entries(resources).map(([url, list]) => [url, list.map((r) => `${r.name}@${r.version}`)]));
}

/** A fresh compile: a new snapshot object, so nothing is shared with the server's index. */
function fresh(snapshot: Snapshot, node: string, options: OptionsInput) {
  const [cluster, name] = node.split("/") as [string, string];
  const copy = { ...snapshot };
  return versions(toXdsResources(compileNode(copy, localNodeFrom(copy, cluster, name), options)));
}

/** The example mesh without west's node list: west's node addresses come from the records. */
function withoutWestNodeList(): Snapshot {
  const doc = meshDocument();
  doc.nodes = doc.nodes.filter((n: { cluster: string }) => n.cluster !== "west");
  return parseSnapshot(doc);
}

const MESHES = { example: exampleSnapshot, "example without west's node list": withoutWestNodeList };

describe.each(["off", "cross-cluster", "always"] as const)("eastWestWaypoint %s", (mode) => {
  test.each(Object.keys(MESHES))("%s: after every change, every node's resources are what a fresh compile gives", (mesh) => {
    const options = { eastWestWaypoint: mode };
    let snapshot = MESHES[mesh as keyof typeof MESHES]();
    const state = new MeshState(snapshot, options);
    const nodes = ["east/node-1", "east/node-2", "east/node-3", "west/node-1", "west/node-2", "west/node-3"];
    for (const node of nodes) state.resources(...(node.split("/") as [string, string]));
    for (const [what, change] of CHANGES) {
      snapshot = change(snapshot);
      state.update(snapshot);
      for (const node of nodes) {
        expect(versions(state.resources(...(node.split("/") as [string, string])).resources), `${what}: ${node}`).toEqual(fresh(snapshot, node, options));
      }
    }
  });
});

describe("recompiled a few nodes at a time (accept, then recompileStale)", () => {
  const nodes = ["east/node-1", "east/node-2", "east/node-3", "west/node-1", "west/node-2", "west/node-3"];
  const options = { eastWestWaypoint: "cross-cluster" } as const;
  const served = (state: MeshState, node: string) => state.resources(...(node.split("/") as [string, string]));

  test("a stale node keeps its last resources until recompiled, and nodes left stale by one snapshot are recompiled with the next", () => {
    let snapshot = exampleSnapshot();
    const state = new MeshState(snapshot, options);
    for (const node of nodes) served(state, node);
    let fell = 0;
    for (const [what, change] of CHANGES) {
      const last = new Map(nodes.map((node) => [node, served(state, node)]));
      snapshot = change(snapshot);
      const waiting = state.staleNodes;
      state.accept(snapshot);
      expect(state.staleNodes, what).toBeGreaterThanOrEqual(waiting);
      for (const node of nodes) expect(served(state, node), `${what}: ${node} before any recompile`).toBe(last.get(node));
      // One node per change: the rest stay stale into the next change, which may not reach them.
      const { failed } = state.recompileStale(() => false);
      expect(failed).toEqual([]);
      const behind = nodes.filter((node) => !isDeepStrictEqual(versions(served(state, node).resources), fresh(snapshot, node, options)));
      fell = Math.max(fell, behind.length);
      expect(behind.length, what).toBeLessThanOrEqual(state.staleNodes);
    }
    expect(fell, "some node served an earlier snapshot's resources while stale").toBeGreaterThan(0);
    state.accept(snapshot); // the same snapshot: it reaches no node
    state.recompileStale();
    expect(state.staleNodes).toBe(0);
    for (const node of nodes) expect(versions(served(state, node).resources), node).toEqual(fresh(snapshot, node, options));
  });

  test("a forgotten node is no longer stale, and a node the snapshot cannot compile is reported and forgotten", () => {
    const state = new MeshState(exampleSnapshot(), options);
    for (const node of nodes) served(state, node);
    const doc = meshDocument();
    doc.mesh.meshDomain = "mesh.other"; // every node changes
    doc.nodes = doc.nodes.filter((node: { cluster: string; name: string }) => !(node.cluster === "west" && node.name === "node-2"));
    for (const list of Object.values(doc.services) as { clusterName: string; kubernetesMetadata: { nodeName: string } }[][]) {
      list.splice(0, list.length, ...list.filter((r) => !(r.clusterName === "west" && r.kubernetesMetadata.nodeName === "node-2")));
    }
    state.accept(parseSnapshot(doc));
    expect(state.staleNodes).toBe(nodes.length);
    state.forget("east", "node-3");
    expect(state.staleNodes).toBe(nodes.length - 1);
    const { changed, failed } = state.recompileStale();
    expect(failed.map(({ key }) => key)).toEqual(["west/node-2"]);
    expect(changed.map(({ key }) => key).sort()).toEqual(["east/node-1", "east/node-2", "west/node-1", "west/node-3"]);
  });
});

describe("a snapshot read afresh (new mesh and nodes objects)", () => {
  /**
   * Every node of the example known, then the example changed by `change` read afresh: `stale`
   * nodes are marked, `changedNodes` change, and every node then gets what a fresh compile gives.
   */
  function expectReached(mode: WaypointMode, change: (doc: ReturnType<typeof meshDocument>) => void, stale: number, changedNodes: string[]) {
    const options = { eastWestWaypoint: mode };
    const all = ["east/node-1", "east/node-2", "east/node-3", "west/node-1", "west/node-2", "west/node-3"];
    const state = new MeshState(exampleSnapshot(), options);
    for (const node of all) state.resources(...(node.split("/") as [string, string]));
    const doc = meshDocument();
    change(doc);
    const reread = parseSnapshot(doc);
    state.accept(reread);
    expect(state.staleNodes).toBe(stale);
    const { changed } = state.recompileStale();
    expect(changed.map((resources) => resources.key).sort()).toEqual(changedNodes);
    for (const node of all) expect(versions(state.resources(...(node.split("/") as [string, string])).resources), node).toEqual(fresh(reread, node, options));
  }

  const nodes = ["east/node-1", "east/node-2", "west/node-1", "west/node-3"];

  /**
   * The example served to `nodes`, then the example changed by `change` read afresh and served:
   * every node gets what a fresh compile of it gives.
   */
  function rereadServed(change: (doc: ReturnType<typeof meshDocument>) => void) {
    const options = { eastWestWaypoint: "cross-cluster" } as const;
    const first = exampleSnapshot();
    const state = new MeshState(first, options);
    for (const node of nodes) state.resources(...(node.split("/") as [string, string]));
    const doc = meshDocument();
    change(doc);
    const reread = parseSnapshot(doc);
    const { changed } = state.update(reread);
    for (const node of nodes) expect(versions(state.resources(...(node.split("/") as [string, string])).resources), node).toEqual(fresh(reread, node, options));
    return { first, state, reread, changed };
  }

  test("in which only records changed is served as an update of the last one, and every node gets what a fresh compile gives", () => {
    const { first, state, reread, changed } = rereadServed((doc) => {
      for (const record of doc.services["team-b/payments"]) if (record.health === "UNHEALTHY") record.health = "HEALTHY";
    });
    expect(state.snapshot).not.toBe(reread);
    expect(state.snapshot.nodes).toBe(first.nodes);
    expect(changesSince(state.snapshot, first)).toEqual(new Set(["team-b/payments"]));
    expect(changed.length).toBeGreaterThan(0);
  });

  test.each<[string, (doc: ReturnType<typeof meshDocument>) => void, boolean]>([
    ["west/node-1 not ready", (doc) => (doc.nodes[3].ready = false), true],
    ["west/node-2 in another zone", (doc) => (doc.nodes[4].zone = "eu-west-1c"), true],
    ["east/node-1 in another zone", (doc) => (doc.nodes[0].zone = "eu-west-1c"), true],
    ["west/node-3 left the node list", (doc) => doc.nodes.splice(5, 1), true],
    ["west/node-1 at another address", (doc) => (doc.nodes[3].ip = "10.20.0.99"), true],
    // Its nodes' addresses then come from the records (the same ones here); the index is built afresh.
    ["west no longer lists its nodes", (doc) => (doc.nodes = doc.nodes.filter((node: { cluster: string }) => node.cluster !== "west")), false],
  ])("in which a node's status changed (%s) is served as an update, and every node gets what a fresh compile gives", (_, change, visible) => {
    const { first, state, changed } = rereadServed(change);
    expect(state.snapshot.mesh).toBe(first.mesh);
    expect(changesSince(state.snapshot, first)).toEqual(new Set());
    expect(changed.length > 0).toBe(visible);
  });

  test.each<[string, (doc: ReturnType<typeof meshDocument>) => void, string[]]>([
    // frontend's pods are on east/node-1 and west/node-1, checkout's on east/node-2 (and unconnected nodes).
    ["frontend calls checkout no more", (doc) => (doc.dependencies["team-a/frontend"] = ["team-b/payments"]), ["east/node-1", "west/node-1"]],
    ["checkout's VIP moves", (doc) => (doc.vips["team-a/checkout"] = "10.96.0.99"), ["east/node-1", "west/node-1"]],
    ["payments gets a VIP", (doc) => (doc.vips["team-b/payments"] = "10.96.0.98"), ["east/node-1", "east/node-2", "west/node-1"]],
  ])("in which %s is served as an update: the nodes whose pods call it change, and every node gets what a fresh compile gives", (_, change, changedNodes) => {
    const { first, state, changed } = rereadServed(change);
    expect(state.snapshot.mesh).toBe(first.mesh);
    expect(state.snapshot.services).toBe(first.services);
    expect(changed.map((resources) => resources.key).sort()).toEqual(changedNodes);
  });

  test.each<[WaypointMode, number, string[]]>([
    ["off", 1, []],
    // west/node-1 hosts frontend and payments pods: east's nodes call payments through its waypoint;
    // west/node-2's checkout pods call payments directly, and west/node-3 only hosts payments too.
    ["cross-cluster", 4, ["east/node-1", "east/node-2", "east/node-3"]],
    ["always", 5, ["east/node-1", "east/node-2", "east/node-3", "west/node-2"]],
  ])("in which west/node-1 turned not ready reaches, in %s mode, the node and the nodes routed to its pods through its waypoint", (mode, stale, changedNodes) =>
    expectReached(mode, (doc) => (doc.nodes[3].ready = false), stale, changedNodes),
  );

  test.each<[string, (doc: ReturnType<typeof meshDocument>) => void, number, string[]]>([
    // As a status: west/node-1 itself, and east's nodes, which reach its pods through its waypoint.
    ["west/node-1 at another address", (doc) => (doc.nodes[3].ip = "10.20.0.99"), 4, ["east/node-1", "east/node-2", "east/node-3", "west/node-1"]],
    // A node that joins with no pods yet (an autoscaled one) is no one's waypoint: nothing to recompile.
    [
      "a new node joining west's list",
      (doc) => doc.nodes.push({ cluster: "west", name: "node-9", ip: "10.20.0.19", region: "eu-west-1", zone: "eu-west-1a" }),
      0,
      [],
    ],
  ])("in which %s reaches, in cross-cluster mode, only the nodes routed to that node's waypoint", (_, change, stale, changedNodes) =>
    expectReached("cross-cluster", change, stale, changedNodes),
  );

  test("in which anything else changed is served as it is", () => {
    const state = new MeshState(exampleSnapshot(), { eastWestWaypoint: "cross-cluster" });
    const doc = meshDocument();
    doc.services["team-a/frontend"].pop();
    doc.mesh.podNetwork = "routable";
    const reread = parseSnapshot(doc);
    state.update(reread);
    expect(state.snapshot).toBe(reread);
  });
});
