/**
 * The mesh check replays many paths over one memo and shares what equal paths derive (dial
 * outcomes, levels, the landings of paths that dial a level alike, and their hop lists). Each
 * path's report must be what that path replayed alone gives: the same source and target over the
 * same compiled mesh, with a memo of its own.
 */
import { describe, expect, test } from "vitest";
import { generateDocument, SMOKE_WORKLOADS } from "../../bench/workloads.js";
import { SOURCE_IDENTITIES, type SocketSelection, type SourceIdentity, WAYPOINT_MODES, type WaypointMode } from "../../src/model/options.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { compileMesh } from "../../src/verify/compiled-mesh.js";
import { checkCompiledMesh, meshPaths, replayContext, replayEach, sourcesOf } from "../../src/verify/mesh-check.js";
import { type PathReport, replayPath } from "../../src/verify/path.js";
import { type MemoKind, ReplayMemo } from "../../src/verify/replay-memo.js";

// The figure-10 workload at smoke size: 30 nodes in 3 clusters, 15 services, pods in several zones.
const document = generateDocument(SMOKE_WORKLOADS.W10K);
const isolated = parseSnapshot(structuredClone(document));
const routable = parseSnapshot({ ...structuredClone(document), mesh: { ...document.mesh, podNetwork: "routable" } });

// Every identity and waypoint mode with the socket matcher, and the aggregate fallback twice: its levels span two clusters.
const MODES: (readonly [SourceIdentity, WaypointMode, SocketSelection])[] = [
  ...SOURCE_IDENTITIES.flatMap((sourceIdentity) => WAYPOINT_MODES.map((mode) => [sourceIdentity, mode, "matcher"] as const)),
  ["selector", "cross-cluster", "aggregate"],
  ["sockets", "always", "aggregate"],
];

describe("a path of the mesh check reports what it reports replayed alone", () => {
  test.each(MODES)("%s / %s / %s", (sourceIdentity, mode, socketSelection) => {
    // Isolated pod networks fail the off mode's cross-cluster dials: failures and unverified lists are compared too.
    for (const snapshot of mode === "off" ? [isolated, routable] : [isolated]) {
      const mesh = compileMesh(snapshot, { eastWestWaypoint: mode, sourceIdentity, socketSelection });
      const { paths } = checkCompiledMesh(mesh);
      const shared = replayContext(mesh);
      const nodePaths = paths.filter((path) => !path.source.pod);
      // Node proxies of a zone share landings: the case where sharing could hand one path another's hops.
      expect(nodePaths.length).toBeGreaterThan(0);
      expect(paths.some((path) => path.landings.length > 1)).toBe(true);
      // Every node proxy's path (those share lists) and every third pod's: a replay alone redoes every lookup.
      for (const [i, path] of paths.entries()) {
        if (path.source.pod && i % 3 !== 0) continue;
        const alone = replayPath({ ...shared, memo: new ReplayMemo() }, path.source, path.target);
        expect(path).toEqual(alone);
      }
    }
  });
});

describe("paths that dial a level alike share one list of landings", () => {
  test.each(MODES)("%s / %s / %s", (sourceIdentity, mode, socketSelection) => {
    // Each report keeps only its own hops (its entry); its landings are built once per level, target and kind of source.
    const { paths } = checkCompiledMesh(compileMesh(isolated, { eastWestWaypoint: mode, sourceIdentity, socketSelection }));
    const kindOf = new Map<readonly unknown[], string>();
    for (const path of paths.filter((p) => p.landings.length > 0)) {
      expect(path.hops.some((hop) => hop.includes(": dial "))).toBe(false);
      const kind = `${path.target.service}:${path.target.port} from ${path.source.identity} in ${path.source.cluster}`;
      expect(kindOf.get(path.landings) ?? kind).toBe(kind);
      kindOf.set(path.landings, kind);
    }
    // With certificate selectors, pods of a service share the outbound clusters of their nodes: most paths share a list.
    // With per-pod sockets, each pod's socket is its own, and so is each list.
    const landed = paths.filter((path) => path.landings.length > 0).length;
    if (sourceIdentity === "selector" && mode !== "always") expect(kindOf.size).toBeLessThan(landed / 2);
  });
});

describe("each landing's trace is its own dial's", () => {
  test.each(MODES)("%s / %s / %s", (sourceIdentity, mode, socketSelection) => {
    // The dials of one level share one trip (its hops emptied between dials): no hop may carry over to the next dial.
    const { paths } = checkCompiledMesh(compileMesh(isolated, { eastWestWaypoint: mode, sourceIdentity, socketSelection }));
    let severalDials = 0;
    for (const path of paths) {
      if (path.landings.length > 1) severalDials++;
      for (const landing of path.landings) {
        const dials = landing.hops.filter((hop) => hop.includes(": dial "));
        expect(dials.length).toBe(1);
        expect(dials[0]!.endsWith(`: dial ${landing.address}`)).toBe(true);
        expect(landing.hops.filter((hop) => hop.startsWith("socket ")).length).toBe(1);
        expect(landing.hops.filter((hop) => hop.startsWith("mTLS ")).length).toBe(1);
      }
      for (const failure of [...path.failures, ...path.unverified]) expect(failure.hops.filter((hop) => hop.includes(": dial ")).length).toBeLessThanOrEqual(1);
    }
    expect(severalDials).toBeGreaterThan(0);
  });
});

describe("the mesh check reports every path in source order", () => {
  test.each(MODES)("%s / %s / %s", (sourceIdentity, mode, socketSelection) => {
    // It replays target by target: each report must still sit where the source-by-source replay puts it, and say the same.
    const mesh = compileMesh(isolated, { eastWestWaypoint: mode, sourceIdentity, socketSelection });
    const { paths } = checkCompiledMesh(mesh);
    const context = replayContext(mesh);
    const inSourceOrder: PathReport[] = [];
    for (const { local } of mesh.nodes.values()) {
      for (const source of sourcesOf(mesh, local)) {
        const services = (source.pod ? mesh.index.snapshot.dependencies?.get(source.pod.service) : local.dependencies) ?? mesh.index.serviceKeys;
        for (const service of services) {
          for (const port of mesh.index.services.get(service)?.ports ?? []) inSourceOrder.push(replayPath(context, source, { service, port }));
        }
      }
    }
    expect(paths.some((path) => path.failures.some((failure) => failure.code === "POOL_SHARED_ACROSS_SOURCES"))).toBe(false);
    expect(new Set(paths.map((path) => path.target.service)).size).toBeGreaterThan(1);
    expect(paths).toEqual(inSourceOrder);
  });
});

describe("the mesh check holds what it derives for one target at a time", () => {
  /** Records, for each target the replay ends, the cluster names its paths asked for levels of. */
  class TargetLog extends ReplayMemo {
    readonly ended: Set<unknown>[] = [];
    #names = new Set<unknown>();

    override forTarget<K, V, A = undefined>(kind: MemoKind, key: K, build: (key: K, arg: A) => V, arg?: A): V {
      if (kind === "levels by node") this.#names.add(key);
      return super.forTarget(kind, key, build, arg);
    }

    override endTarget(): void {
      this.ended.push(this.#names);
      this.#names = new Set();
      super.endTarget();
    }
  }

  test("what a target derives is built again after it ends; what the whole replay shares is not", () => {
    const memo = new ReplayMemo();
    let builds = 0;
    const build = (key: string) => {
      builds++;
      return { key };
    };
    const shared = memo.get("address", "a", build);
    const own = memo.forTarget("address", "a", build);
    expect(own).not.toBe(shared);
    expect(memo.forTarget("address", "a", build)).toBe(own);
    memo.endTarget();
    expect(memo.get("address", "a", build)).toBe(shared);
    expect(memo.forTarget("address", "a", build)).not.toBe(own);
    expect(builds).toBe(3);
  });

  test.each(MODES)("%s / %s / %s", (sourceIdentity, mode, socketSelection) => {
    // Levels, dials, sockets and arrivals are a target's alone: each target's are dropped before the next one's are built.
    const mesh = compileMesh(isolated, { eastWestWaypoint: mode, sourceIdentity, socketSelection });
    const memo = new TargetLog();
    const paths = meshPaths(mesh);
    const reports: PathReport[] = [];
    replayEach({ ...replayContext(mesh), memo }, paths, undefined, (at, report) => {
      reports[at] = report;
    });
    const targets = new Set(reports.map((report) => `${report.target.service}:${report.target.port}`));
    expect(memo.ended.length).toBe(targets.size);
    // Each target's paths enter its own cluster (an aggregate's halves are looked up inside its level): one name, its own.
    expect(memo.ended.every((names) => names.size === 1)).toBe(true);
    expect(new Set(memo.ended.flatMap((names) => [...names])).size).toBe(targets.size);
  });
});
