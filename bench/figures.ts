/**
 * The benchmark figures. Each returns table rows; every target is a ratio of two medians taken in
 * one run (mostly against E, the time to binary-encode the very resources a compile produced), so
 * the ±30 % drift of absolute times on a shared machine cancels out. Figures 6, 10 and 7's
 * scaling take theirs in forked processes, the rest in this one.
 */
import { fork } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { GCProfiler, serialize } from "node:v8";
import { type CompileResult, compileNode } from "../src/compile/compile-node.js";
import { portAssignments } from "../src/compile/endpoints.js";
import { renderJson, renderYaml } from "../src/emit/text.js";
import { toXdsResources, XDS_TYPE_URLS, type XdsResources } from "../src/emit/xds.js";
import { parseMeshFile, readMeshFileDocument } from "../src/model/mesh-file.js";
import { rereadMeshFileText } from "../src/model/mesh-file-reread.js";
import { type LocalNode, localNodeFrom } from "../src/model/node.js";
import type { SourceIdentity } from "../src/model/options.js";
import type { ServiceEndpoint } from "../src/model/registry.js";
import { asRegistryUpdate, settingsUpdate } from "../src/model/registry-update.js";
import { parseSnapshot, type Snapshot, withNodes, withServiceRecords } from "../src/model/snapshot.js";
import type { ServiceKey } from "../src/naming.js";
import { indexSnapshot, localNodeIn, type SnapshotIndex } from "../src/plan/snapshot-index.js";
import { explainPath } from "../src/verify/mesh-check.js";
import type { EdsFigures } from "./eds-child.js";
import { ackUntilQuiet, connectEnvoys, eventLoopCost, responsesSoFar } from "./fan-out.js";
import {
  formatBytes,
  formatMs,
  type LappedTiming,
  median,
  settledHeap,
  summarize,
  type Timing,
  type TimingOptions,
  timeAlternating,
  timeIt,
  timeOnce,
} from "./measure.js";
import type { MemoryFigures } from "./memory-child.js";
import { addService, healthFlip, nodeDrain, nodeNotReady, rollout, type Scenario } from "./scenarios.js";
import type { VerifyFigures } from "./verify-child.js";
import {
  allAssignments,
  encodingTime,
  fresh,
  measureViewEds,
  OPTIONS,
  optionsFor,
  SUBJECT,
  type Subject,
  subjectOf,
  type ViewEds,
  type ViewEdsRounds,
} from "./view-eds.js";
import { buildWorkload, describeWorkload, endpointCount, generateDocument, type WORKLOADS, type Workload, type WorkloadParams } from "./workloads.js";
import { assignmentsOnly, bytesByKind, encodeAll, lbEndpointCount, outboundSocketFootprint, summarizeChanges } from "./xds-cost.js";

export type WorkloadId = keyof typeof WORKLOADS;
export type Verdict = "PASS" | "FAIL" | "info";

export interface Row {
  readonly figure: string;
  readonly what: string;
  readonly measured: string;
  readonly target: string;
  readonly verdict: Verdict;
}

export interface BenchConfig {
  readonly smoke: boolean;
  readonly workloads: Readonly<Record<WorkloadId, WorkloadParams>>;
  /** Rounds that rebuild an index first. */
  readonly heavy: TimingOptions;
  /** Cheap rounds: encoding, rendering, single services. */
  readonly light: TimingOptions;
  readonly log: (line: string) => void;
}

/** Figure 10's rounds (compile all, then check, in turn): one round's ratio swung 1.5–2.2 for the same code. */
const VERIFY_ROUNDS = 3;

/**
 * Figures 2, 4 and 7 are held at least as good as when the second performance round began (its
 * issue: "keep figures 2, 4 and 7 at or better than today"), not at the first round's targets
 * (≤ 4 × E, ≤ 1 %, ≤ 2.2).
 */
const KEPT = { eds: 2.82, healthFlip: 0.0047, scaling: 2.01 } as const;

export const FIGURES = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"] as const;
export type Figure = (typeof FIGURES)[number];

/** Figure 12: connected Envoys, one per node of W1. */
const FAN_OUT_STREAMS = 2000;

// ---- rows -----------------------------------------------------------------------------------

function checked(figure: string, what: string, value: number, limit: number, measured: string, target: string): Row {
  const verdict: Verdict = Number.isFinite(value) && value <= limit ? "PASS" : "FAIL";
  return { figure, what, measured, target, verdict };
}

function exact(figure: string, what: string, ok: boolean, measured: string, target: string): Row {
  return { figure, what, measured, target, verdict: ok ? "PASS" : "FAIL" };
}

function info(figure: string, what: string, measured: string): Row {
  return { figure, what, measured, target: "—", verdict: "info" };
}

const times = (ratio: number) => `${ratio.toFixed(2)} × E`;
const percent = (ratio: number) => `${(ratio * 100).toFixed(ratio < 0.1 ? 2 : 1)} %`;

/** `1.2 s [1.1 s–1.4 s]`: the median and the range of the counted rounds. */
function spread(timing: Timing): string {
  return `${formatMs(timing.median)} [${formatMs(timing.min)}–${formatMs(timing.max)}]`;
}

function lapText(timing: LappedTiming): string {
  return Object.entries(timing.laps)
    .map(([name, lap]) => `${name} ${formatMs(lap.median)}`)
    .join(", ");
}

// ---- shared measurements --------------------------------------------------------------------

interface Compiled {
  readonly result: CompileResult;
  readonly xds: XdsResources;
}

/**
 * `indexSnapshot(next, previous)`: src reuses the previous index's unchanged services and caches
 * where it can (a src without that parameter ignores it and rebuilds).
 */
const indexFrom = indexSnapshot as (snapshot: Snapshot, previous?: SnapshotIndex) => SnapshotIndex;

interface Encoded<T> {
  readonly timing: LappedTiming;
  readonly last: T;
  /** E: encoding exactly the resources of `last`. */
  readonly e: Timing;
}

export function createBench(config: BenchConfig) {
  const { heavy, light, log } = config;

  /** Everything built from a workload, under `<id>:<what>`; `forget(id)` frees it all. */
  const cache = new Map<string, unknown>();
  function cached<T>(key: string, make: () => T): T {
    if (!cache.has(key)) cache.set(key, make());
    return cache.get(key) as T;
  }
  function forget(id: WorkloadId): void {
    for (const key of [...cache.keys()]) if (key.startsWith(`${id}:`)) cache.delete(key);
  }
  /** One setup row per workload generated (the first time, here or in a child), kept after the workload is freed. */
  const generated = new Map<string, Row>();
  const noteGenerated = (name: string, description: string) => {
    if (!generated.has(name)) generated.set(name, setupRow(name, description));
  };

  function workload(id: WorkloadId): Workload {
    return cached(`${id}:workload`, () => {
      log(`generating ${config.workloads[id].name} ...`);
      const w = buildWorkload(config.workloads[id]);
      log(`  generated in ${formatMs(w.timings.generateMs)}, parsed in ${formatMs(w.timings.parseMs)}`);
      noteGenerated(w.params.name, describeWorkload(w));
      return w;
    });
  }

  function subject(id: WorkloadId): Subject {
    return cached(`${id}:subject`, () => subjectOf(workload(id)));
  }

  /** Figure 1's measurement: the first node of a cold view, compiled, encoded and versioned. */
  function fullCompile(mode: SourceIdentity = "selector"): Encoded<Compiled> {
    return cached(`W1:full:${mode}`, () => {
      const { workload: w, node } = subject("W1");
      const options = optionsFor(mode);
      log(`figure 1: full compile of one W1 node (${mode}) ...`);
      let last: Compiled | undefined;
      const timing = timeIt(
        { ...heavy, label: `1 full compile ${mode}`, collectAfterSetup: true },
        () => indexSnapshot(fresh(w.snapshot)),
        (index, lap) => {
          const result = compileNode(index, node, options);
          lap("compile");
          const xds = toXdsResources(result);
          lap("encode + versions");
          return { result, xds };
        },
        (compiled) => (last = compiled),
      );
      return { timing, last: last!, e: encodingTime(last!.result, light, `E full compile ${mode}`) };
    });
  }

  /** Figure 2's measurement: the all-services EDS of W1's subject view, in this process. */
  function viewEds(): ViewEds {
    return cached("W1:eds", () => {
      log("figure 2: all-services EDS of one view, W1 ...");
      return measureViewEds(subject("W1"), { heavy, light }, "W1");
    });
  }

  // ---- figures ------------------------------------------------------------------------------

  function figure1(): Row[] {
    const { timing, last, e } = fullCompile();
    const sockets = fullCompile("sockets");
    const { node } = subject("W1");
    const ratio = timing.median / e.median;
    const socketsRatio = sockets.timing.median / sockets.e.median;
    const footprint = outboundSocketFootprint(last.result, last.xds);
    return [
      checked("1", "full compile of one W1 node (compile + encode + versions)", ratio, 2, `${times(ratio)} — ${spread(timing)} vs E ${spread(e)}`, "≤ 2 × E"),
      info("1", "  split", lapText(timing)),
      info("1", "  sockets mode", `${times(socketsRatio)} — ${spread(sockets.timing)} vs E ${spread(sockets.e)} (${lapText(sockets.timing)})`),
      info(
        "1",
        "  node N",
        `${SUBJECT.cluster}/${SUBJECT.node}: ${node.pods.length} pods of ${new Set(node.pods.map((p) => p.serviceAccount)).size} services, ` +
          `${node.dependencies?.length ?? "all"} dependencies, ${footprint.socketsPerCluster} sockets per outbound cluster; ` +
          `${last.result.clusters.length} clusters, ${last.result.endpoints.length} assignments (${lbEndpointCount(last.result.endpoints)} endpoints), ` +
          `${last.result.listeners.length} listeners, ${last.result.diagnostics.length} diagnostics`,
      ),
    ];
  }

  function figure2(): Row[] {
    const { timing, e, assignments, endpoints } = viewEds();
    const ratio = timing.median / e.median;
    return [
      checked(
        "2",
        "EDS of every service for one view (build + encode + versions)",
        ratio,
        KEPT.eds,
        `${times(ratio)} — ${spread(timing)} vs E ${spread(e)}`,
        `≤ ${KEPT.eds} × E`,
      ),
      info("2", "  split", lapText(timing)),
      info("2", "  output", `${assignments} assignments, ${endpoints} endpoints`),
    ];
  }

  function figure3(): Row[] {
    const selector = furtherNodes("selector");
    const sockets = furtherNodes("sockets");
    return [
      checked(
        "3",
        "further node of the same view (view's EDS shared) / first node",
        selector.ratio,
        0.2,
        `${percent(selector.ratio)} — ${spread(selector.further)} vs ${formatMs(selector.first)}`,
        "≤ 20 %",
      ),
      checked(
        "3b",
        "CDS bytes of the W1 node (selector)",
        selector.sizes.clusters,
        1.5e6,
        formatBytes(selector.sizes.clusters),
        "≤ 1.5 MB (sharing across nodes: figure 9)",
      ),
      info("3", "  split (further node)", lapText(selector.further)),
      info("3", "  2nd node right after the 1st (rest of view cold)", `${percent(selector.afterOne)}`),
      info("3", "  sockets mode: further node / first node", `${percent(sockets.ratio)} — ${spread(sockets.further)} vs ${formatMs(sockets.first)}`),
      ...(["selector", "sockets"] as const).map((mode) => {
        const { sizes } = mode === "selector" ? selector : sockets;
        return info(
          "3",
          `  bytes of the W1 node by kind (${mode})`,
          `CDS ${formatBytes(sizes.clusters)}, EDS ${formatBytes(sizes.endpoints)}, LDS ${formatBytes(sizes.listeners)}`,
        );
      }),
      info(
        "3",
        "  CDS sizing (selector)",
        `${(selector.footprint.bytes / selector.footprint.clusters).toFixed(0)} B per outbound cluster, whatever the pods: ` +
          `${formatBytes(selector.footprint.bytes)} / ${selector.footprint.clusters} service ports`,
      ),
      info(
        "3",
        "  CDS sizing (sockets)",
        `${(sockets.footprint.bytes / (sockets.footprint.clusters * sockets.identities)).toFixed(0)} B per (service port × hosted identity): ` +
          `${formatBytes(sockets.footprint.bytes)} / (${sockets.footprint.clusters} service ports × ${sockets.identities} identities)`,
      ),
    ];
  }

  /** A further node of the subject's view, against the first; and the first node's output by kind. */
  function furtherNodes(mode: SourceIdentity) {
    const first = fullCompile(mode);
    const options = optionsFor(mode);
    const { workload: w, node, view } = subject("W1");
    const peers = w.snapshot.nodes
      .filter((n) => n.cluster === node.clusterName && n.zone === node.locality.zone && n.name !== node.nodeName)
      .map((n) => n.name);
    log(`figure 3: further nodes of view ${node.clusterName}/${node.locality.zone} (${peers.length + 1} nodes, ${mode}) ...`);
    // Warm: every assignment of the view built, encoded and versioned, as the view's other nodes
    // leave EDS. What a context shares beyond that (clusters, node-side pieces) is warmed only by
    // the warm-up rounds' peers, so a round may still pay its first use.
    const warm = indexSnapshot(fresh(w.snapshot));
    toXdsResources(assignmentsOnly(node, options, allAssignments(warm, view)));
    let next = 0;
    // Each round is another node of the view; nodes are cheap and plentiful, so take more rounds.
    const further = timeIt(
      { warmup: heavy.warmup, repeats: heavy.repeats * 2 + 1, label: `3 further node ${mode}` },
      () => localNodeFrom(w.snapshot, node.clusterName, peers[next++ % peers.length]!),
      (peer, lap) => {
        const result = compileNode(warm, peer, options);
        lap("compile");
        toXdsResources(result);
        lap("encode + versions");
      },
    );
    const second = localNodeFrom(w.snapshot, node.clusterName, peers[0]!);
    const afterOne = timeIt(
      { warmup: 0, repeats: Math.max(1, heavy.repeats - 2), collectAfterSetup: true },
      () => {
        const index = indexSnapshot(fresh(w.snapshot));
        toXdsResources(compileNode(index, node, options));
        return index;
      },
      (index) => toXdsResources(compileNode(index, second, options)),
    );
    const footprint = outboundSocketFootprint(first.last.result, first.last.xds);
    return {
      further,
      first: first.timing.median,
      ratio: further.median / first.timing.median,
      afterOne: afterOne.median / first.timing.median,
      sizes: bytesByKind(first.last.xds),
      footprint,
      identities: footprint.socketsPerCluster / 2,
    };
  }

  /** S → S' by `scenario`, then index S' from S's index and recompile N, as a control plane would. */
  function incremental(
    scenario: Scenario,
    base: Compiled & { index: SnapshotIndex },
    full: number,
  ): { timing: LappedTiming; ratio: number; changes: ReturnType<typeof summarizeChanges> } {
    const { node } = subject("W1");
    let changes = summarizeChanges(base.xds, base.xds);
    const timing = timeIt(
      // A few milliseconds each: many rounds, so one GC pause does not move the median. A server
      // recompiles on every registry event, so the path is measured hot: after 3 warm-up rounds
      // it was still partly unoptimized (see bench/README.md, "4 (kept)").
      { warmup: heavy.warmup * 10, repeats: heavy.repeats * 8 + 1, label: `4 ${scenario.name}` },
      () => scenario.apply(),
      (next, lap) => {
        const index = indexFrom(next, base.index);
        lap("index");
        let target = node;
        if (scenario.nodeChanges) {
          // As a server derives it (MeshState): from the index, which has the node's records.
          target = localNodeIn(index, node.clusterName, node.nodeName);
          lap("node");
        }
        const result = compileNode(index, target, OPTIONS);
        lap("compile");
        const xds = toXdsResources(result);
        lap("encode + versions");
        return xds;
      },
      (xds) => (changes = summarizeChanges(base.xds, xds)),
    );
    return { timing, ratio: timing.median / full, changes };
  }

  /**
   * `withServiceRecords` (or, for a node status, `withNodes`) of what `scenario` changes, timed: a
   * registry watch (the etcd source) validates a change this way before the index sees it.
   * Untimed in the figure, whose scenarios swap records and statuses in directly.
   */
  function recordsUpdate(snapshot: Snapshot, scenario: Scenario): string {
    if (scenario.nodes) {
      const timing = timeIt(
        { warmup: heavy.warmup * 3, repeats: heavy.repeats * 4 + 1, label: "4 withNodes" },
        () => scenario.nodes!,
        (nodes) => withNodes(snapshot, nodes),
      );
      return `${spread(timing)} for a node list of ${snapshot.nodes.length}`;
    }
    const changed = changedRecords(snapshot, scenario);
    const timing = timeIt(
      { warmup: heavy.warmup * 3, repeats: heavy.repeats * 4 + 1, label: "4 withServiceRecords" },
      () => changed,
      (services) => withServiceRecords(snapshot, new Map(services)),
    );
    return `${spread(timing)} for ${changed.length} service(s) of ${snapshot.services.size}, in one update`;
  }

  /** The services `scenario` gives new records, with those records. */
  function changedRecords(snapshot: Snapshot, scenario: Scenario): [ServiceKey, readonly ServiceEndpoint[]][] {
    return [...scenario.apply().services].filter(([key, records]) => snapshot.services.get(key) !== records);
  }

  /** `scenario`'s snapshot as a registry watch builds it: one `withServiceRecords` of the changes. */
  function viaRegistry(snapshot: Snapshot, scenario: Scenario): Snapshot {
    return withServiceRecords(snapshot, new Map(changedRecords(snapshot, scenario)));
  }

  function figure4(): Row[] {
    const full = fullCompile().timing.median;
    const { workload: w, node } = subject("W1");
    log("figure 4: incremental recompiles ...");
    const base = (() => {
      const index = indexSnapshot(fresh(w.snapshot));
      const result = compileNode(index, node, OPTIONS);
      return { index, result, xds: toXdsResources(result) };
    })();
    const flip = healthFlip(w.snapshot, node);
    const flipped = incremental(flip, base, full);
    const rows: Row[] = [
      checked(
        "4",
        "one health flip, recompile N / full compile",
        flipped.ratio,
        KEPT.healthFlip,
        `${percent(flipped.ratio)} — ${spread(flipped.timing)} vs ${formatMs(full)}`,
        `≤ ${percent(KEPT.healthFlip)}`,
      ),
      info("4", "  split", lapText(flipped.timing)),
      exact(
        "4",
        "  resources with a new version",
        flipped.changes.changedAssignments === 1 && flipped.changes.other === 0,
        flipped.changes.text,
        "EDS ~1, nothing else",
      ),
      info("4", "  event", flip.event),
      info("4", "  withServiceRecords of the change (a registry watch, before the index)", recordsUpdate(w.snapshot, flip)),
    ];
    for (const make of [nodeDrain, nodeNotReady, rollout, addService]) {
      const scenario = make(w.snapshot, node);
      const measured = incremental(scenario, base, full);
      rows.push(
        info(
          "4",
          `${scenario.name}, recompile N / full compile`,
          `${percent(measured.ratio)} — ${formatMs(measured.timing.median)} (${lapText(measured.timing)})`,
        ),
        info("4", "  changes", `${measured.changes.text} (expected: ${scenario.expected}); ${scenario.event}`),
        info("4", `  ${scenario.nodes ? "withNodes" : "withServiceRecords"} of the change`, recordsUpdate(w.snapshot, scenario)),
      );
    }
    return rows;
  }

  function figure5(): Row[] {
    const { last, e: compileE } = fullCompile();
    log("figure 5: JSON rendering ...");
    // E again, right before the renders: figure 1's E was taken in another heap state (see README).
    const e = encodingTime(last.result, light, "E render");
    let json = "";
    const timing = timeIt(
      { ...light, label: "5 renderJson" },
      () => last.result,
      (result) => renderJson(result),
      (text) => (json = text),
    );
    const yamlOptions = { warmup: light.warmup, repeats: Math.max(2, light.repeats - 4) };
    let yamlText = "";
    const yaml = timeIt(
      { ...yamlOptions, label: "5b renderYaml" },
      () => last.result,
      (result) => renderYaml(result),
      (text) => (yamlText = text),
    );
    const ratio = timing.median / e.median;
    const yamlRatio = yaml.median / e.median;
    const jsonFloor = stringFloor(json, light);
    const yamlFloor = stringFloor(yamlText, yamlOptions);
    return [
      checked(
        "5",
        "renderJson of the full node / E",
        ratio,
        1.5,
        `${times(ratio)} — ${spread(timing)} vs E ${spread(e)} (figure 1's E: ${spread(compileE)})`,
        "≤ 1.5 × E",
      ),
      info("5", "  output", `${formatBytes(json.length)} of JSON (binary: ${formatBytes(encodeAll(last.result))})`),
      info("5", "  floor: the JSON's string made from its UTF-8 bytes / E", floorText(jsonFloor, e)),
      checked("5b", "renderYaml of the full node / E", yamlRatio, 3, `${times(yamlRatio)} — ${spread(yaml)}`, "≤ 3 × E"),
      info("5b", "  floor: the YAML's string made from its UTF-8 bytes / E", floorText(yamlFloor, e)),
    ];
  }

  /**
   * What any renderer returning `text` pays at least: making the JS string from its UTF-8 bytes
   * (`Buffer.toString`, as the renderers' last step does). Non-ASCII text would make V8 build a
   * two-byte string through its slower decoder: the row says which it is.
   */
  function stringFloor(text: string, options: TimingOptions): { timing: Timing; ascii: boolean } {
    const bytes = Buffer.from(text, "utf8");
    const timing = timeIt(
      options,
      () => bytes,
      (b) => b.toString("utf8"),
    );
    return { timing, ascii: bytes.length === text.length };
  }

  function floorText({ timing, ascii }: { timing: Timing; ascii: boolean }, e: Timing): string {
    return `${times(timing.median / e.median)} — ${spread(timing)} (${ascii ? "ASCII only" : "the text holds non-ASCII characters"})`;
  }

  async function figure6(): Promise<Row[]> {
    const count = config.smoke ? 2 : MEMORY_RUNS;
    log(`figure 6: memory, in ${count} fresh processes ...`);
    const measured = await memoryInChildren(workload("W1").snapshot, [...new Array<SourceIdentity>(count).fill("selector"), "sockets"]);
    const runs = measured.slice(0, count);
    const m = medianMemory(runs);
    const sockets = measured[count]!;
    const retained = m.retained / m.outputEndpoints;
    const peak = m.peakRssGrowth / m.outputEndpoints;
    const peakRange = runs.map((r) => r.peakRssGrowth / r.outputEndpoints);
    const rows = [
      checked(
        "6",
        "retained after a compile (binary + versions + filled index), per output endpoint",
        retained,
        600,
        `${retained.toFixed(0)} B — ${formatBytes(m.retained)} / ${m.outputEndpoints} endpoints`,
        "≤ 600 B",
      ),
      info("6", "  floor: encoded bytes alone, per output endpoint", `${(m.xdsBytes / m.outputEndpoints).toFixed(0)} B — ${formatBytes(m.xdsBytes)}`),
      info(
        "6",
        "  floor by kind, per output endpoint",
        (["clusters", "endpoints", "listeners"] as const).map((kind) => `${kind} ${(m.xdsBytesByKind[kind] / m.outputEndpoints).toFixed(0)} B`).join(", "),
      ),
      info(
        "6",
        "  retained while the CompileResult is held too",
        `${(m.retainedWithResult / m.outputEndpoints).toFixed(0)} B — ${formatBytes(m.retainedWithResult)}`,
      ),
      checked(
        "6",
        "peak RSS growth during a full compile, per output endpoint",
        peak,
        1536,
        `${formatBytes(peak)} — ${formatBytes(m.peakRssGrowth)} (median of ${runs.length} processes: ${formatBytes(Math.min(...peakRange))}–${formatBytes(Math.max(...peakRange))})`,
        "≤ 1.5 KiB (6b)",
      ),
      info(
        "6",
        "  peak heap + external growth (GC profiler), per output endpoint",
        `${formatBytes(m.peakHeapGrowth / m.outputEndpoints)} — ${formatBytes(m.peakHeapGrowth)}`,
      ),
      info(
        "6",
        "  sockets mode: retained / peak RSS growth, per output endpoint",
        `${(sockets.retained / sockets.outputEndpoints).toFixed(0)} B / ${formatBytes(sockets.peakRssGrowth / sockets.outputEndpoints)} ` +
          `(encoded floor ${(sockets.xdsBytes / sockets.outputEndpoints).toFixed(0)} B)`,
      ),
    ];
    return m.gc ? rows : [...rows, info("6", "  warning", "no --expose-gc in the child: retained figures are unreliable")];
  }

  /**
   * Scaling: each workload's all-services EDS is measured in a fresh process of its own
   * (eds-child.ts says why), one after the other. W1 and W4-200k, whose ratio is checked, run
   * twice, in the order W1, W4-200k, ..., W4-200k, W1, and each one's rounds of both runs are
   * pooled: one process's median moved that ratio by ±0.2 from run to run on this machine
   * (1.89–2.34 for the same code), so a single pair passed or failed the kept value by luck. The
   * marginal cost runs here, on W2, last: the other workloads are freed first, so it does not pay
   * for their heap.
   */
  async function figure7(): Promise<Row[]> {
    const runs = new Map<WorkloadId, ViewEds[]>();
    for (const id of ["W1", "W4_200K", "W4_50K", "W2", "W4_200K", "W1"] as const) {
      const params = config.workloads[id];
      log(`figure 7: all-services EDS of one view, ${params.name}, in a fresh process ...`);
      const child = await forkJson<EdsFigures>(fileURLToPath(new URL("./eds-child.ts", import.meta.url)), [
        JSON.stringify(params),
        JSON.stringify({ heavy, light } satisfies ViewEdsRounds),
      ]);
      noteGenerated(params.name, child.workload);
      runs.set(id, [...(runs.get(id) ?? []), child.eds]);
    }
    const [w1, small, large, w2] = (["W1", "W4_50K", "W4_200K", "W2"] as const).map((id) => pooled(runs.get(id)!)) as [ViewEds, ViewEds, ViewEds, ViewEds];
    forget("W1");
    const direct = marginalCost(true);
    const folded = marginalCost(false);
    forget("W2");
    const n = (m: ViewEds) => m.registry.toLocaleString("en-US");
    const scaling = large.timing.median / w1.timing.median;
    const skew = w2.timing.median / w1.timing.median;
    return [
      checked(
        "7",
        `all-services EDS of one view, T(${n(large)}) / T(${n(w1)})`,
        scaling,
        KEPT.scaling,
        `${scaling.toFixed(2)} — ${spread(large.timing)} vs ${spread(w1.timing)}`,
        `≤ ${KEPT.scaling}`,
      ),
      info("7", `  T(${n(w1)}) / T(${n(small)})`, `${(w1.timing.median / small.timing.median).toFixed(2)} — vs ${spread(small.timing)}`),
      info("7", "  per output endpoint", [small, w1, large].map((m) => `${n(m)}: ${((m.timing.median * 1000) / m.endpoints).toFixed(1)} µs`).join(", ")),
      checked(
        "7",
        "all-services EDS of one view, W2 (Zipf 0.9) / W1",
        skew,
        1.3,
        `${skew.toFixed(2)} — ${spread(w2.timing)} vs ${formatMs(w1.timing.median)}`,
        "≤ 1.3",
      ),
      info("7", "  W2 split", `${lapText(w2.timing)}; ${w2.assignments} assignments, ${w2.endpoints} endpoints (W1: ${w1.endpoints})`),
      checked(
        "7",
        "cost of one more endpoint: marginal µs/endpoint, top half of the largest service vs below (same-cluster, direct)",
        direct.ratio,
        1.5,
        `${direct.ratio.toFixed(2)} — ${direct.text}`,
        "≤ 1.5 (flat)",
      ),
      info("7", "  same, every cluster (remote pods fold into waypoint endpoints)", `${folded.ratio.toFixed(2)} — ${folded.text}`),
    ];
  }

  /** One workload's runs as one: every round's time in one timing, and its laps likewise. */
  function pooled(runs: readonly ViewEds[]): ViewEds {
    const first = runs[0]!;
    if (runs.length === 1) return first;
    const laps = Object.fromEntries(Object.keys(first.timing.laps).map((name) => [name, summarize(runs.flatMap((run) => run.timing.laps[name]!.samples))]));
    return { ...first, timing: { ...summarize(runs.flatMap((run) => run.timing.samples)), laps } };
  }

  /**
   * The largest W2 service cut to n/8, n/4, n/2 and n endpoints: the time to build, encode and
   * version its assignment for one view, and the slope between sizes (µs per extra endpoint).
   * `sameCluster` keeps only the view's own cluster's endpoints: all direct, so no waypoint
   * folding (which makes remote pods cheaper as a service grows) hides how the cost grows.
   * Each size takes the fastest of its rounds: at 10–100 ms a single GC pause is as large as the
   * differences being measured.
   */
  function marginalCost(sameCluster: boolean): { ratio: number; text: string } {
    const { workload: w, node, view } = subject("W2");
    const [key, all] = [...w.snapshot.services].sort(([a, x], [b, y]) => y.length - x.length || (a < b ? -1 : 1))[0]!;
    const endpoints = sameCluster ? all.filter((e) => e.clusterName === node.clusterName) : all;
    log(`figure 7: marginal cost of an endpoint in ${key} (${endpoints.length} endpoints${sameCluster ? " in the view's cluster" : ""}) ...`);
    const sizes = [8, 4, 2, 1].map((d) => Math.max(1, Math.round(endpoints.length / d)));
    const singles = sizes.map((size): Snapshot => ({ ...w.snapshot, services: new Map([[key, endpoints.slice(0, size)]]) }));
    // Milliseconds each, and a slope is a difference of two of them: many rounds, no forced GC
    // between them (it would deoptimize the small hot loop being timed). Each round times every
    // size in turn, so all of them meet the same state of the JIT and the heap: timed one size
    // after another, the smallest (timed first) took 0.6-1.2 ms from run to run.
    const [warmup, repeats] = [light.warmup * 3, light.repeats * 6 + 1];
    const fastest = sizes.map(() => Number.POSITIVE_INFINITY);
    for (let round = 0; round < warmup + repeats; round++) {
      for (const [i, single] of singles.entries()) {
        const index = indexSnapshot(fresh(single));
        const { ms } = timeOnce(() => {
          const service = index.services.get(key)!;
          const assignments = service.ports.flatMap((port) => portAssignments(index, view, service, port).assignments);
          return toXdsResources(assignmentsOnly(node, OPTIONS, assignments));
        });
        if (round >= warmup) fastest[i] = Math.min(fastest[i]!, ms);
      }
    }
    const slope = (from: number, to: number) => ((fastest[to]! - fastest[from]!) * 1000) / (sizes[to]! - sizes[from]!);
    const slopes = sizes.slice(1).map((_, i) => slope(i, i + 1));
    // The check compares the top half (n/2 → n) with the span below it (n/8 → n/2): a slope over
    // 3n/8 endpoints rather than n/8 is three times less sensitive to noise in two small minima.
    const [upper, lower] = [slope(2, 3), slope(0, 2)];
    const text =
      sizes.map((size, i) => `${size}: ${formatMs(fastest[i]!)}`).join(", ") +
      `; slopes ${slopes.map((s) => `${s.toFixed(2)} µs`).join(", ")}; n/2→n ${upper.toFixed(2)} µs vs n/8→n/2 ${lower.toFixed(2)} µs`;
    return { ratio: upper / lower, text };
  }

  function figure8(): Row[] {
    const w = workload("W1");
    log("figure 8: index build ...");
    const timing = timeIt(
      { ...heavy, label: "8 index" },
      () => fresh(w.snapshot),
      (snapshot) => indexSnapshot(snapshot),
    );
    const perEndpoint = (timing.median * 1000) / endpointCount(w.snapshot);
    return [
      info(
        "8",
        "indexSnapshot of W1",
        `${formatMs(timing.median)} (${perEndpoint.toFixed(2)} µs per endpoint; ${formatMs(timing.min)}–${formatMs(timing.max)})`,
      ),
      ...meshFileRereads(w.params),
    ];
  }

  /**
   * A registry read again, on W1: its mesh file (JSON) with one record's health changed, read as
   * the mesh-file source reads it (`rereadMeshFileText`: only the changed service's text parsed, the
   * last read's other services kept) against a whole parse made an update of the last snapshot, as
   * the source did before; and
   * a settings write with one service's dependencies changed (`settingsUpdate`: the settings
   * checked with the records served) against the whole parse an etcd settings write used to cost.
   */
  function meshFileRereads(params: WorkloadParams): Row[] {
    log("figure 8: registry re-reads ...");
    const document = generateDocument(params) as {
      services: Record<string, { health?: string }[]>;
      dependencies?: Record<string, string[]>;
    };
    const last = rereadMeshFileText(undefined, JSON.stringify(document), "json");
    const record = Object.values(document.services).find((records) => records.length > 0)![0]!;
    const health = record.health;
    record.health = health === "UNHEALTHY" ? "HEALTHY" : "UNHEALTHY";
    const text = JSON.stringify(document);
    record.health = health; // the settings write below changes nothing else
    const [services, whole] = timeAlternating(
      heavy,
      { label: "8 re-read", setup: () => undefined, run: () => rereadMeshFileText(last, text, "json") },
      { label: "8 whole parse", setup: () => undefined, run: () => asRegistryUpdate(last.snapshot, parseMeshFile(text, "json")) },
    );
    const syntax = timeIt(
      light,
      () => undefined,
      () => readMeshFileDocument(text, "json"),
    ).median;
    const [caller, dependencies] = Object.entries(document.dependencies ?? {})[0] ?? ["", []];
    const { services: _, ...settings } = { ...document, dependencies: { ...document.dependencies, [caller]: dependencies.slice(1) } };
    const [checked, parsed] = timeAlternating(
      heavy,
      { label: "8 settings update", setup: () => undefined, run: () => settingsUpdate(last.snapshot, settings) },
      {
        label: "8 settings whole parse",
        setup: () => undefined,
        run: () => asRegistryUpdate(last.snapshot, parseSnapshot({ ...settings, services: document.services })),
      },
    );
    return [
      info(
        "8",
        "mesh file re-read, one record changed (W1 as JSON)",
        `${formatMs(services.median)} against ${formatMs(whole.median)} for a whole parse as an update (${(whole.median / services.median).toFixed(2)} ×); ` +
          `the whole parse's syntax step (JSON.parse and the duplicate-key scan of ${formatBytes(text.length)}) ${formatMs(syntax)}`,
      ),
      info(
        "8",
        "settings written anew, one service's dependencies changed (W1)",
        `${formatMs(checked.median)} against ${formatMs(parsed.median)} for a whole parse as an update (${(parsed.median / checked.median).toFixed(2)} ×)`,
      ),
    ];
  }

  /**
   * Every node of W1 compiled, encoded and versioned on one index, one after the other as a
   * control plane would at startup, against figure 1's one node (cold). What is shared across
   * nodes — each view's EDS, each dependency's outbound clusters and their bytes — is built once.
   */
  function figure9(): Row[] {
    const one = fullCompile().timing.median;
    const w = workload("W1");
    const locals = w.snapshot.nodes.map((n) => localNodeFrom(w.snapshot, n.cluster, n.name));
    log(`figure 9: every node of ${w.params.name} (${locals.length} nodes) ...`);
    const index = indexSnapshot(fresh(w.snapshot));
    const heapBefore = settledHeap();
    let sent = 0;
    const distinct = new Set<Uint8Array>();
    const gc = new GCProfiler();
    gc.start();
    const { ms } = timeOnce(() => {
      for (const local of locals) {
        const xds = toXdsResources(compileNode(index, local, OPTIONS));
        for (const { resource } of xds[XDS_TYPE_URLS.clusters]) {
          sent += resource.value!.length;
          distinct.add(resource.value!);
        }
      }
    });
    // GCProfiler's cost is each pause's duration in microseconds.
    const gcMs = gc.stop().statistics.reduce((sum, { cost }) => sum + cost, 0) / 1000;
    // The nodes are still referenced (`locals`), as a server holds its connected nodes.
    const heapHeld = settledHeap() - heapBefore;
    const held = [...distinct].reduce((sum, bytes) => sum + bytes.length, 0);
    const ratio = ms / one;
    const floor = encodeFloor(index, locals);
    return [
      checked(
        "9",
        `every node of ${w.params.name} (${locals.length} nodes) / one node`,
        ratio,
        60,
        `${ratio.toFixed(1)} — ${formatMs(ms)} vs ${formatMs(one)}`,
        "≤ 60",
      ),
      info(
        "9",
        "  CDS shared across nodes",
        `${formatBytes(sent)} sent in all (${formatBytes(sent / locals.length)} per node), ${formatBytes(held)} of distinct encoded clusters (${distinct.size} byte arrays)`,
      ),
      info(
        "9",
        "  heap held after, GC pauses",
        `${formatBytes(heapHeld)} (${formatBytes(heapHeld / locals.length)} per node: each node's recompile state, every view's EDS); GC pauses ${formatMs(gcMs)} of ${formatMs(ms)}`,
      ),
      info(
        "9",
        "  floor: E of what each node adds / one node",
        `${(floor.ms / one).toFixed(1)} — ${formatMs(floor.ms)}: ${formatBytes(floor.bytes)} no earlier node carried (${formatBytes(floor.bytes / locals.length)} per node); the nodes took ${(ms / floor.ms).toFixed(2)} × that E`,
      ),
    ];
  }

  /**
   * E of the resources each node adds to what the nodes before it carried (by object: what is
   * shared is encoded once), summed over the nodes: what compiling them all costs at the encoding
   * floor. Read back by recompiling each node after the timed run, which returns its last output.
   */
  function encodeFloor(index: SnapshotIndex, locals: readonly LocalNode[]): { ms: number; bytes: number } {
    const carried = new WeakSet<object>();
    let ms = 0;
    let bytes = 0;
    for (const local of locals) {
      const result = compileNode(index, local, OPTIONS);
      const fresh = { clusters: notIn(carried, result.clusters), endpoints: notIn(carried, result.endpoints), listeners: notIn(carried, result.listeners) };
      for (const resource of [...result.clusters, ...result.endpoints, ...result.listeners]) carried.add(resource);
      const start = performance.now();
      bytes += encodeAll(fresh);
      ms += performance.now() - start;
    }
    return { ms, bytes };
  }

  function notIn<T extends object>(carried: WeakSet<object>, resources: readonly T[]): T[] {
    return resources.filter((resource) => !carried.has(resource));
  }

  /**
   * The mesh check over W10k against compiling all its nodes, and its peak heap, in a fresh
   * process: each phase's median over alternating rounds.
   */
  async function figure10(): Promise<Row[]> {
    const w = workload("W10K");
    log(`figure 10: verifyMesh over ${w.params.name}, in a fresh process ...`);
    // Then once in sockets mode, where the check goes node by node (one node's outbound clusters held at a time).
    const [m, sockets] = (await inChildren<VerifyFigures>("./verify-child.ts", w.snapshot, [[String(VERIFY_ROUNDS)], ["1", "sockets"]])) as [
      VerifyFigures,
      VerifyFigures,
    ];
    forget("W10K");
    const ratio = m.verifyMs / m.compileAllMs;
    const limit = 1.5e9;
    return [
      checked(
        "10",
        `verifyMesh over ${endpointCount(w.snapshot).toLocaleString("en-US")} endpoints, ${m.nodes} nodes / compiling all its nodes`,
        ratio,
        1.5,
        `${ratio.toFixed(2)} — ${formatMs(m.verifyMs)} vs ${formatMs(m.compileAllMs)} (medians of ${m.rounds} alternating rounds)`,
        "≤ 1.5",
      ),
      checked("10", "  peak heap during verifyMesh (heap + external, GC profiler)", m.peakHeap, limit, formatBytes(m.peakHeap), "≤ 1.5 GB"),
      info(
        "10",
        "  CPU time (user + system, all threads)",
        `${(m.verifyCpuMs / m.compileAllCpuMs).toFixed(2)} — ${formatMs(m.verifyCpuMs)} vs ${formatMs(m.compileAllCpuMs)}`,
      ),
      info("10", "  paths", `${m.paths.toLocaleString("en-US")} paths replayed; ok: ${m.ok}${m.gc ? "" : "; warning: no --expose-gc in the child"}`),
      info(
        "10",
        "  sockets mode (node by node), one round",
        `${(sockets.verifyMs / sockets.compileAllMs).toFixed(2)} — ${formatMs(sockets.verifyMs)} vs ${formatMs(sockets.compileAllMs)}; ` +
          `peak heap ${formatBytes(sockets.peakHeap)}; ${sockets.paths.toLocaleString("en-US")} paths, ok: ${sockets.ok}`,
      ),
    ];
  }

  /**
   * `explain` of one path of N — its first hosted pod calling the first port of its first
   * dependency — against compiling N alone, in alternating rounds; each round on a cold index
   * built untimed.
   */
  function figure11(): Row[] {
    const { workload: w, node } = subject("W1");
    const pod = node.pods.find((p) => p.netns)!;
    const service = `${pod.namespace}/${pod.serviceAccount}`;
    const index = indexSnapshot(fresh(w.snapshot));
    const dependency = (w.snapshot.dependencies?.get(service as never) ?? index.serviceKeys).find((key) => index.services.get(key)?.ports.length)!;
    const from = `${node.clusterName}/${pod.namespace}/${pod.name}`;
    const to = `${dependency}:${index.services.get(dependency)!.ports[0]}`;
    log(`figure 11: explain ${from} → ${to} ...`);
    const coldIndex = () => indexSnapshot(fresh(w.snapshot));
    let compiled = 0;
    let status = "";
    const [compile, explain] = timeAlternating(
      { ...heavy, collectAfterSetup: true },
      { label: "11 compile one node", setup: coldIndex, run: (cold) => compileNode(cold, node, OPTIONS) },
      {
        label: "11 explain one path",
        setup: coldIndex,
        run: (cold) => {
          compiled = 0;
          return explainPath(cold, from, to, OPTIONS, (done) => (compiled = done));
        },
        keep: ({ report }) => (status = `${report.status}, ${report.landings.length} landings`),
      },
    );
    const ratio = explain.median / compile.median;
    return [
      checked("11", "explain one path / compile one node", ratio, 3, `${ratio.toFixed(2)} — ${spread(explain)} vs ${spread(compile)}`, "≤ 3"),
      info("11", "  path", `${from} → ${to}: ${status}; ${compiled} of ${w.snapshot.nodes.length} nodes compiled`),
    ];
  }

  function setupRows(): Row[] {
    return [...generated.values()];
  }

  /** Push fan-out: one registry change, every connected Envoy it affects updated (2,000 streams; smoke: every node). */
  async function figure12(): Promise<Row[]> {
    const full = fullCompile().timing.median;
    const { workload: w, node } = subject("W1");
    const nodes = w.snapshot.nodes.slice(0, config.smoke ? w.snapshot.nodes.length : FAN_OUT_STREAMS).map((n) => `${n.cluster}/${n.name}`);
    log(`figure 12: ${nodes.length} simulated Envoys connect and warm up ...`);
    // A server sends no secrets: SDS comes from the agent's cluster (what `serve` defaults to).
    const fan = connectEnvoys(w.snapshot, nodes, { ...OPTIONS, sds: { grpcCluster: "sds_grpc" } });
    log(`  warmed up in ${formatMs(fan.warmupMs)}; health flips ...`);
    let changed = 0;
    let pushed = 0;
    let event = "";
    const timing = timeIt(
      { ...heavy, label: "12 push fan-out" },
      () => {
        ackUntilQuiet(fan.envoys);
        const flip = healthFlip(fan.server.snapshot!, node);
        event = flip.event;
        // As the etcd source makes it, so the server knows which service changed without comparing all.
        return { next: viaRegistry(fan.server.snapshot!, flip), before: responsesSoFar(fan.envoys) };
      },
      ({ next }) => fan.server.setSnapshot(next),
      (update, { before }) => {
        changed = update.changedNodes;
        pushed = responsesSoFar(fan.envoys) - before;
      },
    );
    const ratio = timing.median / full;
    log("  a node turns not ready (setSnapshot), then ready again (setSnapshotAsync) ...");
    ackUntilQuiet(fan.envoys);
    const ready = fan.server.snapshot!.nodes!;
    const notReady = nodeNotReady(fan.server.snapshot!, node);
    const before = responsesSoFar(fan.envoys);
    let reached = 0;
    const blocking = await eventLoopCost(fan.server, () => (reached = fan.server.setSnapshot(withNodes(fan.server.snapshot!, notReady.nodes!)).changedNodes));
    const responses = responsesSoFar(fan.envoys) - before;
    ackUntilQuiet(fan.envoys);
    const sliced = await eventLoopCost(fan.server, () => fan.server.setSnapshotAsync(withNodes(fan.server.snapshot!, ready)));
    return [
      checked(
        "12",
        `push fan-out: one health flip, every affected stream of ${nodes.length.toLocaleString("en-US")} updated / one node's full compile`,
        ratio,
        5,
        `${ratio.toFixed(2)} × — ${spread(timing)} vs ${formatMs(full)}`,
        "≤ 5",
      ),
      info("12", "  streams", `${nodes.length} delta streams, one per node, in process (responses serialized, no sockets); warm-up ${formatMs(fan.warmupMs)}`),
      info("12", "  the change", `${changed} nodes got new resources, ${pushed} responses sent; ${event}`),
      info(
        "12",
        "  a node status change reaching most streams: setSnapshot / setSnapshotAsync",
        `${reached} nodes got new resources (${responses} responses; ${notReady.event}): setSnapshot held the event loop ` +
          `${formatMs(blocking.longestStallMs)}, its first push at ${formatMs(blocking.firstPushMs)}; setSnapshotAsync (ready again) ` +
          `took ${formatMs(sliced.totalMs)}, first push at ${formatMs(sliced.firstPushMs)}, never holding the loop over ${formatMs(sliced.longestStallMs)}`,
      ),
    ];
  }

  const figures: Record<Figure, () => Row[] | Promise<Row[]>> = {
    "1": figure1,
    "2": figure2,
    "3": figure3,
    "4": figure4,
    "5": figure5,
    "6": figure6,
    "7": figure7,
    "8": figure8,
    "9": figure9,
    "10": figure10,
    "11": figure11,
    "12": figure12,
  };
  return { figures, setupRows };
}

function setupRow(name: string, description: string): Row {
  return info("setup", `workload ${name}`, description);
}

/**
 * Fresh processes figure 6 measures `selector` mode in: peak RSS growth still varies by a few MB
 * from one process to the next (1.7–2.5 kB per endpoint with a settled baseline, memory-child.ts),
 * so one process decides nothing. Retained bytes barely vary.
 */
const MEMORY_RUNS = 5;

/** Each of the runs' measured figures, by its median over the runs (the runs compile the same node: counts and sizes agree). */
function medianMemory(runs: readonly MemoryFigures[]): MemoryFigures {
  const of = (read: (m: MemoryFigures) => number) => median(runs.map(read));
  return {
    ...runs[0]!,
    gc: runs.every((r) => r.gc),
    retained: of((r) => r.retained),
    retainedWithResult: of((r) => r.retainedWithResult),
    peakRssGrowth: of((r) => r.peakRssGrowth),
    peakHeapGrowth: of((r) => r.peakHeapGrowth),
  };
}

/** Runs memory-child.ts once per mode, each in a fresh Node process with --expose-gc, handing them `snapshot` serialized once. */
function memoryInChildren(snapshot: Snapshot, modes: readonly SourceIdentity[]): Promise<MemoryFigures[]> {
  return inChildren<MemoryFigures>(
    "./memory-child.ts",
    snapshot,
    modes.map((mode) => [mode]),
  );
}

/** Runs a bench script once per argument list, one fresh process after another, on `snapshot` serialized once. */
async function inChildren<T>(script: string, snapshot: Snapshot, argLists: readonly (readonly string[])[]): Promise<T[]> {
  const file = join(tmpdir(), `aether-bench-${process.pid}.v8`);
  writeFileSync(file, serialize(snapshot));
  try {
    const results: T[] = [];
    for (const args of argLists) results.push(await forkJson<T>(fileURLToPath(new URL(script, import.meta.url)), [file, ...args]));
    return results;
  } finally {
    rmSync(file, { force: true });
  }
}

/**
 * Forks a TypeScript script with this process's loader (and --expose-gc); resolves its last stdout
 * line as JSON. The parent's --cpu-prof is not passed on (a child's profile would land among the
 * parent's, unlabelled); AETHER_BENCH_CHILD_PROF=DIR profiles the children into DIR instead.
 */
function forkJson<T>(script: string, args: readonly string[]): Promise<T> {
  const inherited = process.execArgv.filter((arg) => !arg.startsWith("--cpu-prof"));
  const profileDir = process.env.AETHER_BENCH_CHILD_PROF;
  const execArgv = [
    ...inherited,
    ...(inherited.includes("--expose-gc") ? [] : ["--expose-gc"]),
    ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
  ];
  const child = fork(script, [...args], { execArgv, stdio: ["ignore", "pipe", "inherit", "ipc"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      const line = output.trim().split("\n").pop() ?? "";
      if (code !== 0 || !line.startsWith("{")) return reject(new Error(`${script} exited with ${code}: ${output}`));
      resolve(JSON.parse(line) as T);
    });
  });
}
