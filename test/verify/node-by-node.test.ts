/**
 * In `sockets` mode the mesh check compiles and replays one node at a time, keeping only the
 * receiving side of the nodes it is done with. Its report must be exactly the report of the check
 * over every node compiled up front (`checkCompiledMesh(compileMesh(...))`), path for path and in
 * the same order, and so must its summary.
 */
import { describe, expect, test } from "vitest";
import { generateDocument, SMOKE_WORKLOADS } from "../../bench/workloads.js";
import { compileNode, compileNodeSide, releaseRecompileReuse } from "../../src/compile/compile-node.js";
import { isInputError } from "../../src/errors.js";
import { parseOptions, type SocketSelection, WAYPOINT_MODES, type WaypointMode } from "../../src/model/options.js";
import type { ServiceEndpointInput } from "../../src/model/registry.js";
import { type MeshFileInput, parseSnapshot } from "../../src/model/snapshot.js";
import { indexSnapshot, localNodeIn } from "../../src/plan/snapshot-index.js";
import { summarizeCompiledMesh, summarizeMesh } from "../../src/verify/check-summary.js";
import { compileMesh, NodeByNodeMesh } from "../../src/verify/compiled-mesh.js";
import { checkCompiledMesh, explainPath, verifyMesh } from "../../src/verify/mesh-check.js";
import { ReplayMemo } from "../../src/verify/replay-memo.js";

// The figure-10 workload at smoke size: 30 nodes in 3 clusters, 15 services, pods in several zones.
const document = generateDocument(SMOKE_WORKLOADS.W10K);
const isolated = parseSnapshot(structuredClone(document));
const routable = parseSnapshot({ ...structuredClone(document), mesh: { ...document.mesh, podNetwork: "routable" } });

/** One service's records given the inbound port as their port: every node hosting it is refused (its pods would bind it). */
function withRefusedNodes(input: MeshFileInput): MeshFileInput {
  const [key, records] = Object.entries(input.services as Record<string, ServiceEndpointInput[]>)[0]!;
  return { ...input, services: { ...input.services, [key]: records.map((record) => ({ ...record, port: 15008 })) } };
}
const refused = parseSnapshot(withRefusedNodes(structuredClone(document)));

const MODES: (readonly [WaypointMode, SocketSelection])[] = [
  ...WAYPOINT_MODES.map((mode) => [mode, "matcher"] as const),
  ["cross-cluster", "aggregate"],
  ["always", "aggregate"],
];

describe("sockets mode: the node-by-node check reports what the check over every node compiled reports", () => {
  test.each(MODES)("%s / %s", (mode, socketSelection) => {
    const options = { eastWestWaypoint: mode, sourceIdentity: "sockets", socketSelection } as const;
    // Isolated pod networks fail the off mode's cross-cluster dials: failed reports are compared too.
    for (const snapshot of mode === "off" ? [isolated, routable, refused] : [isolated, refused]) {
      const upFront = checkCompiledMesh(compileMesh(snapshot, options));
      const nodeByNode = verifyMesh(snapshot, options);
      expect(nodeByNode).toEqual(upFront);
      if (snapshot === refused) {
        // Paths to the refused nodes' pods cannot be followed (or, through their waypoints, fail), whichever way the check runs.
        expect(upFront.skippedNodes.size).toBeGreaterThan(0);
        const reachesRefused = (code: string) => code === "POD_NODE_NOT_COMPILED" || code === "UNKNOWN_ADDRESS";
        expect(upFront.paths.some((path) => [...path.unverified, ...path.failures].some((failure) => reachesRefused(failure.code)))).toBe(true);
      }
    }
  });

  test("the summary `aether-xds check` prints: the same counts and failed paths, every report while the matrix shows them", () => {
    const options = { eastWestWaypoint: "off", sourceIdentity: "sockets" } as const;
    // 300 sources: beyond the matrix. Failed paths in the hundreds: the first are kept.
    const big = summarizeMesh(isolated, options);
    expect(big).toEqual(summarizeCompiledMesh(compileMesh(isolated, options)));
    expect(big.counts.failed).toBeGreaterThan(100);
    expect(big.matrix).toEqual({ sources: expect.any(Number), destinations: expect.any(Number) });
    // Two nodes' worth of a mesh: every report is kept for the matrix.
    const twoNodes = new Set(["node-0", "node-1"]);
    const onTwoNodes = Object.fromEntries(
      Object.entries(structuredClone(document.services as Record<string, ServiceEndpointInput[]>)).map(([key, records]) => [
        key,
        records.filter((record) => record.clusterName === "cluster-0" && twoNodes.has(record.kubernetesMetadata?.nodeName ?? "")),
      ]),
    );
    const small = parseSnapshot({
      ...structuredClone(document),
      services: onTwoNodes,
      nodes: document.nodes!.filter((n) => n.cluster === "cluster-0" && twoNodes.has(n.name)),
    });
    const few = summarizeMesh(small, options);
    expect(few).toEqual(summarizeCompiledMesh(compileMesh(small, options)));
    expect("paths" in few.matrix && few.matrix.paths.length).toBe(few.total);
  });

  test("tells progress node by node, and the replay's end once", () => {
    const compiled: [number, number][] = [];
    const replayed: [number, number][] = [];
    const report = verifyMesh(
      isolated,
      { sourceIdentity: "sockets" },
      { compiled: (done, total) => compiled.push([done, total]), replayed: (done, total) => replayed.push([done, total]) },
    );
    expect(compiled).toEqual(compiled.map((_, i) => [i + 1, 30]));
    expect(compiled).toHaveLength(30);
    expect(replayed).toEqual([[report.paths.length, report.paths.length]]);
  });
});

describe("the node-by-node mesh holds one node compiled in full at a time", () => {
  const options = parseOptions({ sourceIdentity: "sockets" });
  const keys = ["cluster-0/node-0", "cluster-0/node-1"];

  test("a node is compiled in full while its paths are replayed; its receiving side stays", () => {
    const mesh = new NodeByNodeMesh(indexSnapshot(isolated), options);
    const [first, second] = keys as [string, string];
    expect(mesh.compileInFull(first).kind).toBe("compiled");
    expect(mesh.node(first)?.result.clusters.some((c) => c.transport_socket_matcher)).toBe(true);
    expect(mesh.node(second)).toBeUndefined();
    const side = mesh.receiving(first)!;
    mesh.release(first);
    expect(mesh.node(first)).toBeUndefined();
    // The receiving side: the same object, without the outbound clusters.
    expect(mesh.receiving(first)).toBe(side);
    expect(side.result.clusters.some((c) => c.transport_socket_matcher)).toBe(false);
    expect(mesh.compileInFull(second).kind).toBe("compiled");
    expect(mesh.node(second)).toBeDefined();
  });

  test("a released node's output is built again by its next compile, not kept for it", () => {
    const index = indexSnapshot(isolated);
    const local = localNodeIn(index, "cluster-0", "node-0");
    const first = compileNode(index, local, options);
    // Kept for a recompile: the same lists and listeners come back.
    const recompiled = compileNode(index, local, options);
    expect(recompiled.clusters).toBe(first.clusters);
    expect(recompiled.listeners).toBe(first.listeners);
    releaseRecompileReuse(index, local, options);
    const again = compileNode(index, local, options);
    expect(again.clusters).not.toBe(first.clusters);
    expect(again.listeners[0]).not.toBe(first.listeners[0]);
    expect(again).toEqual(first);
  });

  test("of a node it is not replaying, the mesh keeps what arrivals read: the tunnel, its ingress clusters, the inbound listeners", () => {
    const index = indexSnapshot(isolated);
    const mesh = new NodeByNodeMesh(index, parseOptions({ sourceIdentity: "sockets", eastWestWaypoint: "cross-cluster" }));
    const key = "cluster-0/node-0";
    const { local, result } = mesh.receiving(key)!;
    const full = compileNode(index, local, mesh.options);
    expect(result.listeners.map((l) => l.name)).toEqual(
      full.listeners.filter((l) => l.name === "ew_tunnel" || l.address?.socket_address?.port_value === 15008).map((l) => l.name),
    );
    expect(result.listeners.length).toBeLessThan(full.listeners.length);
    expect(result.clusters.length).toBeGreaterThan(0);
    expect(result.clusters.every((c) => c.name?.startsWith("ew_ingress_"))).toBe(true);
    expect(result.clusters).toEqual(full.clusters.filter((c) => c.name?.startsWith("ew_ingress_")));
    expect(result.endpoints).toEqual(full.endpoints.filter((a) => a.cluster_name?.startsWith("ew_ingress_")));
  });

  test("explaining a path to a refused node's pods reports what the check reports", () => {
    for (const sourceIdentity of ["sockets", "selector"] as const) {
      const reports = verifyMesh(refused, { sourceIdentity, eastWestWaypoint: "cross-cluster" }).paths;
      const path = reports.find((report) => report.source.pod && report.unverified.some((skip) => skip.code === "POD_NODE_NOT_COMPILED"))!;
      const { cluster, pod } = path.source;
      const from = `${cluster}/${pod!.namespace}/${pod!.name}`;
      const explained = explainPath(refused, from, `${path.target.service}:${path.target.port}`, { sourceIdentity, eastWestWaypoint: "cross-cluster" });
      expect(explained.report).toEqual(path);
    }
  });

  test("a node's receiving side is refused as its full compile is (a pod port that is the inbound port)", () => {
    const index = indexSnapshot(refused);
    const key = [...index.hostedBy.keys()].find((node) => checkCompiledMesh(compileMesh(index, options)).skippedNodes.has(node))!;
    const [cluster, name] = key.split("/") as [string, string];
    const local = localNodeIn(index, cluster, name);
    const refusal = (compile: () => unknown) => {
      try {
        compile();
      } catch (error) {
        return isInputError(error) ? error.message : `not an input error: ${error}`;
      }
      return "compiled";
    };
    expect(refusal(() => compileNodeSide(index, local, options))).toBe(refusal(() => compileNode(index, local, options)));
    expect(refusal(() => compileNodeSide(index, local, options))).toMatch(/15008 is also an application port/);
  });
});

test("the replay's memo, at a node's end, drops every table of either scope but the kinds kept", () => {
  const memo = new ReplayMemo();
  let builds = 0;
  const build = (key: string) => ({ key, build: builds++ });
  const kept = [memo.get("address", "a", build), memo.forTarget("address", "a", build)];
  const dropped = [memo.get("client TLS", "a", build), memo.forTarget("client TLS", "a", build)];
  memo.endNode(new Set(["address"]));
  expect([memo.get("address", "a", build), memo.forTarget("address", "a", build)]).toEqual(kept);
  expect(memo.get("address", "a", build)).toBe(kept[0]);
  expect(memo.get("client TLS", "a", build)).not.toBe(dropped[0]);
  expect(memo.forTarget("client TLS", "a", build)).not.toBe(dropped[1]);
  expect(builds).toBe(6);
});
