/**
 * Figure 10, run in a fresh process (forked by figures.ts with --expose-gc) so its peak heap is
 * its own. argv: the path of a `v8.serialize`d Snapshot. Compiles every node of the mesh
 * (`compileMesh`), then, on a fresh index, runs the whole mesh check (`verifyMesh`); prints one
 * JSON line (`VerifyFigures`) on stdout. Both start cold: a new index each, nothing cached.
 *
 * Peak heap: the largest heap + external in use the GC profiler saw just before any GC during
 * `verifyMesh` (or at its end) — everything live then, the snapshot and the index included.
 */
import { readFileSync } from "node:fs";
import { deserialize, GCProfiler } from "node:v8";
import { parseOptions } from "../src/model/options.js";
import type { Snapshot } from "../src/model/snapshot.js";
import { indexSnapshot } from "../src/plan/snapshot-index.js";
import { compileMesh } from "../src/verify/compiled-mesh.js";
import { verifyMesh } from "../src/verify/mesh-check.js";
import { collectGarbage, hasGc } from "./measure.js";

export interface VerifyFigures {
  readonly gc: boolean;
  readonly compileAllMs: number;
  readonly verifyMs: number;
  /** CPU time (user + system, every thread of the process) of each phase: steadier than wall clock on a busy machine. */
  readonly compileAllCpuMs: number;
  readonly verifyCpuMs: number;
  readonly peakHeap: number;
  readonly nodes: number;
  readonly paths: number;
  readonly ok: boolean;
}

function timed<T>(run: () => T): { ms: number; cpuMs: number; result: T } {
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  const result = run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpuStart);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1e3, result };
}

/** `compileMesh` on a cold index, timed; only numbers are kept. */
function compileAll(snapshot: Snapshot, options: ReturnType<typeof parseOptions>): { ms: number; cpuMs: number; nodes: number } {
  const index = indexSnapshot({ ...snapshot });
  collectGarbage();
  const { ms, cpuMs, result } = timed(() => compileMesh(index, options));
  return { ms, cpuMs, nodes: result.nodes.size };
}

function measure(snapshotPath: string): VerifyFigures {
  const snapshot = deserialize(readFileSync(snapshotPath)) as Snapshot;
  const options = parseOptions({ eastWestWaypoint: "cross-cluster", sourceIdentity: "selector" });
  const compiled = compileAll(snapshot, options);
  // The first compile's nodes and index are garbage by now: collected before the check starts.
  const index = indexSnapshot({ ...snapshot });
  collectGarbage();
  const profiler = new GCProfiler();
  profiler.start();
  const verified = timed(() => verifyMesh(index, options));
  const statistics = profiler.stop().statistics;
  const usage = process.memoryUsage();
  const peakHeap = Math.max(usage.heapUsed + usage.external, ...statistics.map(({ beforeGC: { heapStatistics: h } }) => h.usedHeapSize + h.externalMemory));
  return {
    gc: hasGc(),
    compileAllMs: compiled.ms,
    verifyMs: verified.ms,
    compileAllCpuMs: compiled.cpuMs,
    verifyCpuMs: verified.cpuMs,
    peakHeap,
    nodes: compiled.nodes,
    paths: verified.result.paths.length,
    ok: verified.result.ok,
  };
}

const [path] = process.argv.slice(2);
if (!path) throw new Error("usage: verify-child.ts SNAPSHOT.v8");
console.log(JSON.stringify(measure(path)));
