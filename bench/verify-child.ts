/**
 * Figure 10, run in a fresh process (forked by figures.ts with --expose-gc) so its peak heap is
 * its own. argv: the path of a `v8.serialize`d Snapshot, the number of rounds and the source
 * identity mode (`selector` unless given; in `sockets` mode `verifyMesh` goes node by node).
 * Each round compiles every node of the mesh (`compileMesh`), then, on a fresh index, runs the
 * whole mesh check (`verifyMesh`); both start cold: a new index each, nothing cached. Prints one
 * JSON line (`VerifyFigures`) on stdout: each phase's median over the rounds, so one GC landing in
 * one phase does not decide the ratio (single runs of the same code gave 1.5–2.2).
 *
 * Peak heap: the largest heap + external in use the GC profiler saw just before any GC during
 * `verifyMesh` (or at its end), over every round — everything live then, the snapshot and the
 * index included.
 */
import { readFileSync } from "node:fs";
import { deserialize, GCProfiler } from "node:v8";
import { type Options, parseOptions, SOURCE_IDENTITIES, type SourceIdentity } from "../src/model/options.js";
import type { Snapshot } from "../src/model/snapshot.js";
import { indexSnapshot } from "../src/plan/snapshot-index.js";
import { compileMesh } from "../src/verify/compiled-mesh.js";
import { verifyMesh } from "../src/verify/mesh-check.js";
import { collectGarbage, hasGc, median } from "./measure.js";

export interface VerifyFigures {
  readonly gc: boolean;
  readonly rounds: number;
  /** Medians over the rounds. */
  readonly compileAllMs: number;
  readonly verifyMs: number;
  /** CPU time (user + system, every thread of the process) of each phase, medians: steadier than wall clock on a busy machine. */
  readonly compileAllCpuMs: number;
  readonly verifyCpuMs: number;
  readonly peakHeap: number;
  readonly nodes: number;
  readonly paths: number;
  readonly ok: boolean;
}

interface Timed<T> {
  readonly ms: number;
  readonly cpuMs: number;
  readonly result: T;
}

function timed<T>(run: () => T): Timed<T> {
  const cpuStart = process.cpuUsage();
  const start = process.hrtime.bigint();
  const result = run();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const cpu = process.cpuUsage(cpuStart);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1e3, result };
}

/** `compileMesh` on a cold index, timed; only the node count is kept. */
function compileAll(snapshot: Snapshot, options: Options): Timed<number> {
  const index = indexSnapshot({ ...snapshot });
  collectGarbage();
  const { ms, cpuMs, result } = timed(() => compileMesh(index, options));
  return { ms, cpuMs, result: result.nodes.size };
}

/** `verifyMesh` on a cold index, timed, with the peak heap seen during it; only counts are kept. */
function verifyAll(snapshot: Snapshot, options: Options): Timed<{ paths: number; ok: boolean; peakHeap: number }> {
  // The last phase's nodes and index are garbage by now: collected before the check starts.
  const index = indexSnapshot({ ...snapshot });
  collectGarbage();
  const profiler = new GCProfiler();
  profiler.start();
  const { ms, cpuMs, result } = timed(() => verifyMesh(index, options));
  const statistics = profiler.stop().statistics;
  const usage = process.memoryUsage();
  const peakHeap = Math.max(usage.heapUsed + usage.external, ...statistics.map(({ beforeGC: { heapStatistics: h } }) => h.usedHeapSize + h.externalMemory));
  return { ms, cpuMs, result: { paths: result.paths.length, ok: result.ok, peakHeap } };
}

function measure(snapshotPath: string, rounds: number, sourceIdentity: SourceIdentity): VerifyFigures {
  const snapshot = deserialize(readFileSync(snapshotPath)) as Snapshot;
  const options = parseOptions({ eastWestWaypoint: "cross-cluster", sourceIdentity });
  const compiles: Timed<number>[] = [];
  const checks: ReturnType<typeof verifyAll>[] = [];
  for (let round = 0; round < rounds; round++) {
    compiles.push(compileAll(snapshot, options));
    checks.push(verifyAll(snapshot, options));
  }
  const last = checks.at(-1)!.result;
  return {
    gc: hasGc(),
    rounds,
    compileAllMs: median(compiles.map((c) => c.ms)),
    verifyMs: median(checks.map((c) => c.ms)),
    compileAllCpuMs: median(compiles.map((c) => c.cpuMs)),
    verifyCpuMs: median(checks.map((c) => c.cpuMs)),
    peakHeap: Math.max(...checks.map((c) => c.result.peakHeap)),
    nodes: compiles.at(-1)!.result,
    paths: last.paths,
    ok: checks.every((c) => c.result.ok),
  };
}

const [path, rounds = "1", sourceIdentity = "selector"] = process.argv.slice(2);
if (!path || !(Number(rounds) >= 1) || !SOURCE_IDENTITIES.includes(sourceIdentity as SourceIdentity)) {
  throw new Error("usage: verify-child.ts SNAPSHOT.v8 [ROUNDS] [selector|sockets]");
}
console.log(JSON.stringify(measure(path, Number(rounds), sourceIdentity as SourceIdentity)));
