import { describe, expect, test } from "vitest";
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { renderYaml } from "../../src/emit/text.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { meshDocument } from "../support/fixtures.js";

/** A seeded Fisher–Yates shuffle (mulberry32), so a failure is reproducible. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed;
  const random = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** The example mesh with every list and map in a different order. */
function shuffledMesh(seed: number): any {
  const doc = meshDocument();
  doc.nodes = shuffled(doc.nodes, seed);
  doc.services = Object.fromEntries(shuffled(Object.entries(doc.services), seed + 1).map(([key, records]) => [key, shuffled(records as unknown[], seed + 2)]));
  doc.dependencies = Object.fromEntries(
    shuffled(Object.entries(doc.dependencies), seed + 3).map(([key, deps]) => [key, shuffled(deps as unknown[], seed + 4)]),
  );
  for (const record of Object.values(doc.services).flat() as any[]) {
    record.metadata = Object.fromEntries(shuffled(Object.entries(record.metadata ?? {}), seed + 5));
    if (record.ports) record.ports = shuffled(record.ports, seed + 6);
  }
  return doc;
}

function encoded(result: CompileResult): string {
  const bytes = [
    ...result.clusters.map((c) => Cluster.encode(c).finish()),
    ...result.endpoints.map((e) => ClusterLoadAssignment.encode(e).finish()),
    ...result.listeners.map((l) => Listener.encode(l).finish()),
  ];
  return bytes.map((b) => Buffer.from(b).toString("base64")).join("\n");
}

function compile(doc: any, mode: "off" | "cross-cluster" | "always", reversePods = false): CompileResult {
  const snapshot = parseSnapshot(doc);
  const node = localNodeFrom(snapshot, "east", "node-1");
  return compileNode(snapshot, reversePods ? { ...node, pods: [...node.pods].reverse() } : node, { eastWestWaypoint: mode });
}

describe("input order never changes the output", () => {
  test.each(["off", "cross-cluster", "always"] as const)("%s: shuffled services, endpoints, nodes, pods and metadata give identical bytes", (mode) => {
    const reference = compile(meshDocument(), mode);
    for (const seed of [1, 2, 3, 4, 5]) {
      const result = compile(shuffledMesh(seed * 97), mode, seed % 2 === 0);
      expect(encoded(result)).toBe(encoded(reference));
      expect(renderYaml(result)).toBe(renderYaml(reference));
    }
  });
});
