/**
 * Child process of the bounded-caches test (run with --expose-gc): a control plane serving three
 * nodes through `updates` registry updates, each one changing a service's ports (a new cluster
 * signature) and health, re-indexing from the previous index and recompiling one node. Prints
 * the heap retained (after a full GC) after the warm-up and at the end, as JSON.
 */
import { compileNode } from "../../src/compile/compile-node.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot, type Snapshot, withServiceRecords } from "../../src/model/snapshot.js";
import { indexSnapshot, type SnapshotIndex } from "../../src/plan/snapshot-index.js";
import { meshDocument } from "./fixtures.js";

const updates = Number(process.argv[2] ?? 10_000);
const warmup = Math.min(2_000, updates / 5);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");

const doc = meshDocument();
let snapshot: Snapshot = parseSnapshot(doc);
let index: SnapshotIndex = indexSnapshot(snapshot);
const nodes = [
  ["east", "node-1"],
  ["east", "node-2"],
  ["west", "node-2"],
].map(([cluster, name]) => localNodeFrom(snapshot, cluster!, name!));
const records = doc.services["team-a/checkout"] as Record<string, unknown>[];
const options = { eastWestWaypoint: "cross-cluster" } as const;

function retained(): number {
  gc!();
  gc!();
  return process.memoryUsage().heapUsed;
}

let afterWarmup = 0;
for (let i = 0; i < updates; i++) {
  // Each update gives checkout another port (a new cluster signature) and flips a pod's health.
  const changed = records.map((record, r) => ({
    ...record,
    ports: [8080, 9090, 10_000 + (i % Number(process.env.PORT_CYCLE ?? 20_000))],
    health: (i + r) % 2 ? "HEALTHY" : "DRAINING",
  }));
  snapshot = withServiceRecords(snapshot, "team-a/checkout", changed);
  index = indexSnapshot(snapshot, index);
  compileNode(index, nodes[i % nodes.length]!, options);
  if (i + 1 === warmup) afterWarmup = retained();
}
process.stdout.write(JSON.stringify({ afterWarmup, atEnd: retained(), updates }));
