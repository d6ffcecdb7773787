/**
 * The all-services EDS measurement of figures 2 and 7 — one view's assignment of every service
 * port, built, encoded and versioned on a cold index — and the compile settings every figure
 * shares. figures.ts runs it in process (figure 2); eds-child.ts runs it in a fresh process per
 * workload (figure 7).
 */
import type { ClusterLoadAssignment } from "../gen/envoy/config/endpoint/v3/endpoint.js";
import { portAssignments } from "../src/compile/endpoints.js";
import { toXdsResources } from "../src/emit/xds.js";
import { type LocalNode, localNodeFrom } from "../src/model/node.js";
import { parseOptions, type SourceIdentity } from "../src/model/options.js";
import type { Snapshot } from "../src/model/snapshot.js";
import { type EdsView, edsView } from "../src/plan/eds-view.js";
import { indexSnapshot, type SnapshotIndex } from "../src/plan/snapshot-index.js";
import { type LappedTiming, type Timing, type TimingOptions, timeIt } from "./measure.js";
import { clusterName, endpointCount, type Workload } from "./workloads.js";
import { assignmentsOnly, encodeAll, lbEndpointCount, type ResourceSet } from "./xds-cost.js";

/** Every compile runs with the waypoint on for cross-cluster traffic; `selector` mode unless a figure says otherwise. */
export const optionsFor = (sourceIdentity: SourceIdentity) => parseOptions({ eastWestWaypoint: "cross-cluster", sourceIdentity });
export const OPTIONS = optionsFor("selector");
/** The node whose compile is measured ("N"), and its EDS view. */
export const SUBJECT = { cluster: clusterName(0), node: "node-0" };

export interface Subject {
  readonly workload: Workload;
  readonly node: LocalNode;
  readonly view: EdsView;
}

export function subjectOf(workload: Workload): Subject {
  const node = localNodeFrom(workload.snapshot, SUBJECT.cluster, SUBJECT.node);
  return { workload, node, view: edsView(node, OPTIONS) };
}

/** A new Snapshot object with the same contents: `indexSnapshot` builds a cold index for it. */
export function fresh(snapshot: Snapshot): Snapshot {
  return { ...snapshot };
}

/** The assignments of every service port as `view` sees them (filling the view's memo). */
export function allAssignments(index: SnapshotIndex, view: EdsView): ClusterLoadAssignment[] {
  const assignments: ClusterLoadAssignment[] = [];
  for (const key of index.serviceKeys) {
    const service = index.services.get(key)!;
    for (const port of service.ports) assignments.push(...portAssignments(index, view, service, port).assignments);
  }
  return assignments;
}

/** E, idempotent and cheap: its rounds get more warm-up (re-optimizing after the GC timeIt starts with) and more repeats. */
export function encodingTime(resources: ResourceSet, light: TimingOptions, label: string): Timing {
  return timeIt(
    { warmup: light.warmup + 1, repeats: light.repeats + 2, label },
    () => resources,
    (set) => encodeAll(set),
  );
}

/** What figures 2 and 7 keep of an all-services EDS measurement: numbers only. */
export interface ViewEds {
  readonly timing: LappedTiming;
  readonly e: Timing;
  readonly assignments: number;
  readonly endpoints: number;
  /** Registry records in the workload. */
  readonly registry: number;
}

export interface ViewEdsRounds {
  /** Rounds that index the whole snapshot first. */
  readonly heavy: TimingOptions;
  /** E's rounds (see `encodingTime`). */
  readonly light: TimingOptions;
}

/** All-services EDS of the subject's view on a cold index every round: build, encode and version every assignment. */
export function measureViewEds({ workload: w, node, view }: Subject, rounds: ViewEdsRounds, label: string): ViewEds {
  let last: readonly ClusterLoadAssignment[] = [];
  const timing = timeIt(
    { ...rounds.heavy, label: `eds ${label}`, collectAfterSetup: true },
    () => indexSnapshot(fresh(w.snapshot)),
    (index, lap) => {
      const assignments = allAssignments(index, view);
      lap("build");
      toXdsResources(assignmentsOnly(node, OPTIONS, assignments));
      lap("encode + versions");
      return assignments;
    },
    (assignments) => (last = assignments),
  );
  const e = encodingTime({ clusters: [], endpoints: last, listeners: [] }, rounds.light, `E eds ${label}`);
  return { timing, e, assignments: last.length, endpoints: lbEndpointCount(last), registry: endpointCount(w.snapshot) };
}
