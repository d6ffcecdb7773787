/**
 * Figure 6, run in a fresh process (forked by figures.ts with --expose-gc) so earlier figures'
 * heap does not blur it. argv: the path of a `v8.serialize`d Snapshot and the source-identity mode. Prints one JSON line
 * (`MemoryFigures`) on stdout.
 *
 * The snapshot arrives serialized rather than generated here: generating and parsing leaves
 * ~200 MB of committed but free heap behind, which a compile then reuses without growing RSS.
 *
 * Retained: heap + external (ArrayBuffers hold the encoded bytes) after a full GC, minus the same
 * before the compile, while holding the xDS resources (binary + versions) and the index the
 * compile filled in; the CompileResult itself is dropped, as a control plane would.
 * Peak RSS growth: the highest process RSS a worker thread saw during compile + encode, minus the
 * RSS just before, once it has settled after the GC (read any earlier, it still held pages the GC
 * was handing back, and the growth measured 0–16 MB by luck; settled, 15–20 MB).
 * Peak heap growth: the largest heap + external in use just before any GC during the compile (or
 * at its end), minus the same before: what the compile needed at its high point.
 */
import { readFileSync } from "node:fs";
import { deserialize, GCProfiler } from "node:v8";
import { type CompileResult, compileNode } from "../src/compile/compile-node.js";
import { toXdsResources } from "../src/emit/xds.js";
import { localNodeFrom } from "../src/model/node.js";
import { parseOptions } from "../src/model/options.js";
import type { Snapshot } from "../src/model/snapshot.js";
import { indexSnapshot } from "../src/plan/snapshot-index.js";
import { collectGarbage, hasGc, startRssSampler } from "./measure.js";
import { bytesByKind, lbEndpointCount } from "./xds-cost.js";

export interface MemoryFigures {
  readonly gc: boolean;
  readonly outputEndpoints: number;
  readonly xdsBytes: number;
  readonly xdsBytesByKind: { readonly clusters: number; readonly endpoints: number; readonly listeners: number };
  /** Bytes retained holding the xDS resources and the filled index (the result dropped). */
  readonly retained: number;
  /** Bytes retained while the CompileResult is held too. */
  readonly retainedWithResult: number;
  readonly peakRssGrowth: number;
  readonly peakHeapGrowth: number;
  /** Read after the last measurement so the index stays reachable until then. */
  readonly indexedServices: number;
}

function liveBytes(): number {
  collectGarbage();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.external;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The highest heap + external in use seen by the GC profiler (just before each GC) or now. */
function peakInUse(profile: ReturnType<GCProfiler["stop"]>): number {
  const usage = process.memoryUsage();
  const before = profile.statistics.map(({ beforeGC: { heapStatistics: h } }) => h.usedHeapSize + h.externalMemory);
  return Math.max(usage.heapUsed + usage.external, ...before);
}

async function measure(snapshotPath: string, sourceIdentity: string): Promise<MemoryFigures> {
  const snapshot = deserialize(readFileSync(snapshotPath)) as Snapshot;
  const node = localNodeFrom(snapshot, "cluster-0", "node-0");
  const options = parseOptions({ eastWestWaypoint: "cross-cluster", sourceIdentity });
  const index = indexSnapshot(snapshot);
  const sampler = await startRssSampler();
  const before = liveBytes();
  const rssBefore = await sampler.settled();
  sampler.resetPeak();
  const profiler = new GCProfiler();
  profiler.start();
  let result: CompileResult | undefined = compileNode(index, node, options);
  const xds = toXdsResources(result);
  const peakHeapGrowth = peakInUse(profiler.stop()) - before;
  await sleep(20);
  const peakRssGrowth = sampler.peak() - rssBefore;
  await sampler.stop();
  const withResult = liveBytes() - before;
  const outputEndpoints = lbEndpointCount(result.endpoints);
  result = undefined;
  const retained = liveBytes() - before;
  const sizes = bytesByKind(xds);
  return {
    gc: hasGc(),
    outputEndpoints,
    xdsBytes: sizes.clusters + sizes.endpoints + sizes.listeners,
    xdsBytesByKind: sizes,
    retained,
    retainedWithResult: withResult,
    peakRssGrowth,
    peakHeapGrowth,
    indexedServices: index.services.size,
  };
}

const [path, mode = "selector"] = process.argv.slice(2);
if (!path) throw new Error("usage: memory-child.ts SNAPSHOT.v8 [selector|sockets]");
console.log(JSON.stringify(await measure(path, mode)));
