/**
 * Sources of one node with different identities calling one target: the mesh check may share
 * what their dials meet whatever the identity (where they go, the socket, the pod's chain), but
 * their reports must differ in exactly the identity's facts: the certificate presented, whether
 * it is the source's own, whether the pod trusts its trust domain, and the socket and mTLS hops.
 */
import { describe, expect, test } from "vitest";
import { generateDocument, SMOKE_WORKLOADS } from "../../bench/workloads.js";
import { stampFilterState } from "../../src/envoy/listener.js";
import { FILTER_STATE } from "../../src/envoy/types.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { type CompiledMesh, compileMesh } from "../../src/verify/compiled-mesh.js";
import { checkCompiledMesh, replayContext } from "../../src/verify/mesh-check.js";
import { type PathReport, replayPath } from "../../src/verify/path.js";

// The figure-10 workload at smoke size: 30 nodes in 3 clusters, 15 services.
const snapshot = parseSnapshot(structuredClone(generateDocument(SMOKE_WORKLOADS.W10K)));
const options = { eastWestWaypoint: "cross-cluster", sourceIdentity: "selector" } as const;

/** Two pod paths from one node to one target, from sources with different identities, both landing. */
function twoIdentitiesOneTarget(paths: readonly PathReport[]): [PathReport, PathReport] {
  const byNodeAndTarget = new Map<string, PathReport>();
  for (const path of paths) {
    if (!path.source.pod || path.status !== "ok") continue;
    const key = `${path.source.node} ${path.target.service}:${path.target.port}`;
    const other = byNodeAndTarget.get(key);
    if (other && other.source.identity !== path.source.identity) return [other, path];
    byNodeAndTarget.set(key, path);
  }
  throw new Error("no node with two identities calling one target");
}

/** What a landing is whatever the source: where it lands and over which socket. */
function place({ address, priority, socket, sni, via, pod }: PathReport["landings"][number]) {
  return { address, priority, socket, sni, via, pod };
}

/** Makes the source pod's egress chain stamp `identity` as the certificate to present. */
function presentAs(mesh: CompiledMesh, source: PathReport["source"], identity: string): void {
  const listener = mesh.nodes.get(source.node)!.result.listeners.find((l) => l.name === `outbound_${source.pod!.name}_${source.pod!.namespace}`)!;
  const chain = listener.filter_chains![0]!;
  chain.filters = [stampFilterState(FILTER_STATE.certificateMapperKey, FILTER_STATE.hashableString, identity), ...chain.filters!.slice(1)];
}

describe("sources of one cluster with different identities share a level's routes, not their certificates", () => {
  test("each landing names the source's own certificate and mTLS identity; where it lands is the same", () => {
    const [a, b] = twoIdentitiesOneTarget(checkCompiledMesh(compileMesh(snapshot, options)).paths);
    expect(a.landings.map(place)).toEqual(b.landings.map(place));
    for (const path of [a, b]) {
      for (const landing of path.landings) {
        expect(landing.hops.filter((hop) => hop.startsWith("socket "))).toEqual([
          expect.stringMatching(new RegExp(`client certificate ${path.source.identity}$`)),
        ]);
        expect(landing.hops.filter((hop) => hop.startsWith("mTLS "))).toEqual([expect.stringMatching(new RegExp(`^mTLS ${path.source.identity} ↔ `))]);
      }
    }
    expect(a.pool?.certificate).toBe(a.source.identity);
    expect(b.pool?.certificate).toBe(b.source.identity);
  });

  test("a source presenting the other's certificate fails on every dial; the other, on the same routes, still lands", () => {
    const [a, b] = twoIdentitiesOneTarget(checkCompiledMesh(compileMesh(snapshot, options)).paths);
    // Each order: whichever source the check replays first, the other must not get its answer.
    for (const [wrong, right] of [
      [a, b],
      [b, a],
    ] as const) {
      const seeded = compileMesh(snapshot, options);
      presentAs(seeded, wrong.source, right.source.identity);
      const paths = checkCompiledMesh(seeded).paths;
      const failed = paths.find((p) => p.source.node === wrong.source.node && p.source.pod?.name === wrong.source.pod!.name && sameTarget(p, wrong))!;
      expect(failed.status).toBe("failed");
      expect(failed.landings).toEqual([]);
      expect(failed.failures.map((f) => f.code)).toEqual(wrong.landings.map(() => "WRONG_CLIENT_CERT"));
      for (const failure of failed.failures) expect(failure.reason.endsWith(`${right.source.identity}, expected ${wrong.source.identity}`)).toBe(true);
      const landed = paths.find((p) => p.source.node === right.source.node && p.source.pod?.name === right.source.pod!.name && sameTarget(p, right))!;
      expect(landed).toEqual(right);
    }
  });
});

describe("the pod's trust in the source's domain is checked per source, on shared routes", () => {
  test("a source of the same cluster whose identity is in a domain the pod does not trust fails PEER_NOT_TRUSTED; the other lands", () => {
    const mesh = compileMesh(snapshot, options);
    const [a, b] = twoIdentitiesOneTarget(checkCompiledMesh(mesh).paths);
    const foreign = "spiffe://elsewhere.example/ns/x/sa/y";
    // b's chain stamps the foreign identity, and b is that identity: its certificate is its own, its domain untrusted.
    presentAs(mesh, b.source, foreign);
    const context = replayContext(mesh);
    expect(replayPath(context, a.source, a.target)).toEqual(a);
    const forged = replayPath(context, { ...b.source, identity: foreign }, b.target);
    expect(forged.status).toBe("failed");
    expect(forged.failures.map((f) => f.code)).toEqual(b.landings.map(() => "PEER_NOT_TRUSTED"));
    for (const failure of forged.failures) expect(failure.reason.endsWith(foreign)).toBe(true);
  });
});

function sameTarget(a: PathReport, b: PathReport): boolean {
  return a.target.service === b.target.service && a.target.port === b.target.port;
}
