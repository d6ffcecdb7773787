/**
 * ClusterLoadAssignments from port plans: priorities compacted to be contiguous from 0, one
 * LocalityLbEndpoints per (priority, locality), weight sums kept within uint32, and a diagnostic
 * for every emitted endpoint saying where it went.
 */
import type { Locality } from "../../gen/envoy/config/core/v3/base.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { LbEndpoint, LocalityLbEndpoints } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { type Diagnostic, diagnostic, lazyDiagnostic } from "../diagnostics.js";
import { loadAssignment, locality } from "../envoy/core.js";
import { subClusterName } from "../naming.js";
import { CacheSlot } from "../plan/cache-slots.js";
import { type EdsView, serviceViewKey } from "../plan/eds-view.js";
import { withEncodingCells } from "../plan/encoding-cells.js";
import { type PlannedEndpoint, type PortPlan, planPort, type Route } from "../plan/endpoints.js";
import type { IndexedService, SnapshotIndex } from "../plan/snapshot-index.js";
import { getOrInsert } from "../util/maps.js";
import { compareNumbers } from "../util/order.js";

export const MAX_UINT32 = 0xffffffff;

export interface PortAssignments {
  readonly plan: PortPlan;
  /** One assignment (`matcher`), or the local and waypoint halves (`aggregate`). */
  readonly assignments: readonly ClusterLoadAssignment[];
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * Per service version: its assignments by EDS view, then port. Keyed by the view's key string
 * (built once per view, so its hash is computed once).
 */
const ASSIGNMENTS_BY_VIEW = new CacheSlot<[view: EdsView, service: IndexedService], Map<number, PortAssignments>>(
  "port assignments by EDS view",
  serviceViewKey,
);

/**
 * The assignments of one service port as a view sees them, memoized on the service: shared by
 * every node of the view, and by later indexes while the service is unchanged.
 */
export function portAssignments(index: SnapshotIndex, view: EdsView, service: IndexedService, port: number): PortAssignments {
  const byPort = ASSIGNMENTS_BY_VIEW.get(service.caches, [view, service], () => new Map<number, PortAssignments>());
  return getOrInsert(byPort, port, () => buildAssignments(planPort(index, view, service, port), view));
}

function buildAssignments(plan: PortPlan, view: EdsView): PortAssignments {
  const parts = view.socketSelection === "matcher" ? [{ name: plan.clusterName, endpoints: plan.endpoints, tiers: plan.tiers }] : aggregateParts(plan, view);
  return new BuiltAssignments(
    plan,
    parts.map(({ name, endpoints, tiers }) => assignment(name, endpoints, tiers)),
  );
}

/**
 * A class rather than a literal with a getter: V8 keeps such a literal in dictionary mode, and
 * every compile reads these objects once per dependency port.
 */
class BuiltAssignments implements PortAssignments {
  readonly assignments: readonly ClusterLoadAssignment[];
  #diagnostics: Diagnostic[] | undefined;

  constructor(
    readonly plan: PortPlan,
    private readonly built: readonly ReturnType<typeof assignment>[],
  ) {
    this.assignments = built.map((b) => b.assignment);
  }

  /** One per emitted endpoint: built when first read, since control planes often never read them. */
  get diagnostics(): readonly Diagnostic[] {
    this.#diagnostics ??= assignmentDiagnostics(this.plan, this.built);
    return this.#diagnostics;
  }
}

function assignmentDiagnostics(plan: PortPlan, built: readonly ReturnType<typeof assignment>[]): Diagnostic[] {
  const diagnostics = [...plan.diagnostics];
  for (const { name, endpoints, priorities, weightDiagnostics } of built) {
    diagnostics.push(...weightDiagnostics.map((message) => diagnostic("WEIGHTS_SCALED", message, { resource: name, service: plan.service.key })));
    for (const [i, endpoint] of endpoints.entries()) diagnostics.push(...emittedDiagnostics(name, plan, endpoint, priorities[i]!));
  }
  if (plan.endpoints.length === 0) {
    diagnostics.push(
      diagnostic("EMPTY_ASSIGNMENT", `${plan.clusterName} has no endpoints this node can reach`, { resource: plan.clusterName, service: plan.service.key }),
    );
  }
  return diagnostics;
}

/** The aggregate cluster lists `|local` before `|waypoint`; each half has its own priorities. */
function aggregateParts(plan: PortPlan, view: EdsView) {
  const local = routePart(subClusterName(plan.clusterName, "local"), plan, "direct");
  if (view.mode === "off") return [local];
  return [local, routePart(subClusterName(plan.clusterName, "waypoint"), plan, "waypoint")];
}

/** The plan's endpoints of one route, with their tiers. */
function routePart(name: string, plan: PortPlan, route: Route) {
  const at: number[] = [];
  plan.endpoints.forEach((endpoint, i) => {
    if (endpoint.route === route) at.push(i);
  });
  return { name, endpoints: at.map((i) => plan.endpoints[i]!), tiers: at.map((i) => plan.tiers[i]!) };
}

function assignment(name: string, endpoints: readonly PlannedEndpoint[], tiers: readonly number[]) {
  const priorities = compactPriorities(tiers);
  const weights = scaledWeights(endpoints, priorities);
  const lbEndpoints = endpoints.map((endpoint, i) => lbEndpoint(endpoint, weights.values[i]!));
  const cells = endpoints.map((endpoint, i) => (weights.values[i] === endpoint.weight ? endpoint.encoding : undefined));
  // Every list sized once (map, slice): a list grown by push keeps room for 17, held with the view's EDS.
  const starts = groupStarts(endpoints, priorities);
  const groups = starts.map((start, g) => localityGroup(priorities[start]!, endpoints[start]!, lbEndpoints.slice(start, starts[g + 1] ?? endpoints.length)));
  const result = loadAssignment(name, groups);
  withEncodingCells(result, cells);
  return { name, endpoints, priorities, weightDiagnostics: weights.diagnostics, assignment: result };
}

/** Where each LocalityLbEndpoints begins: at every change of priority or locality along the sorted endpoints. */
function groupStarts(endpoints: readonly PlannedEndpoint[], priorities: readonly number[]): number[] {
  const starts: number[] = [];
  for (let i = 0; i < endpoints.length; i++) {
    if (i === 0 || priorities[i] !== priorities[i - 1] || !sameLocality(endpoints[i]!.locality, endpoints[i - 1]!.locality)) starts.push(i);
  }
  return starts;
}

function sameLocality(a: PlannedEndpoint["locality"], b: PlannedEndpoint["locality"]): boolean {
  return a === b || (a.region === b.region && a.zone === b.zone);
}

/** Tiers present, in order, renumbered 0, 1, 2, ...: empty tiers leave no gaps (`tiers` itself when there are none). */
export function compactPriorities(tiers: readonly number[]): readonly number[] {
  const present = [...new Set(tiers)].sort(compareNumbers);
  if (present.every((tier, i) => tier === i)) return tiers;
  const priorityOf = new Map(present.map((tier, priority) => [tier, priority]));
  return tiers.map((tier) => priorityOf.get(tier)!);
}

/**
 * One priority's weights as emitted: when their sum would overflow uint32, every weight is scaled
 * down proportionally (never below 1), so relative shares survive and nothing wraps.
 */
export function fitToUint32(weights: readonly number[]): { values: number[]; total: number; factor?: number } {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total <= MAX_UINT32) return { values: [...weights], total };
  const factor = (MAX_UINT32 - weights.length) / total;
  return { values: weights.map((weight) => Math.max(1, Math.floor(weight * factor))), total, factor };
}

/** `fitToUint32` applied to each priority of an assignment; a message per scaled priority. */
export function scaledWeights(endpoints: readonly PlannedEndpoint[], priorities: readonly number[]): { values: number[]; diagnostics: string[] } {
  const values = endpoints.map((e) => e.weight);
  const sums: number[] = [];
  for (const [i, priority] of priorities.entries()) sums[priority] = (sums[priority] ?? 0) + values[i]!;
  const diagnostics: string[] = [];
  sums.forEach((sum, priority) => {
    if (sum <= MAX_UINT32) return;
    const members = priorities.flatMap((p, i) => (p === priority ? [i] : []));
    const fitted = fitToUint32(members.map((i) => values[i]!));
    for (const [j, i] of members.entries()) values[i] = fitted.values[j]!;
    diagnostics.push(`priority ${priority} weights sum to ${fitted.total}, over uint32: scaled by ${fitted.factor!.toPrecision(6)}`);
  });
  return { values, diagnostics };
}

function localityGroup(priority: number, endpoint: PlannedEndpoint, lbEndpoints: LbEndpoint[]): LocalityLbEndpoints {
  const group: LocalityLbEndpoints = {};
  const where = emittedLocality(endpoint.locality);
  if (where) group.locality = where;
  group.lb_endpoints = lbEndpoints;
  if (priority > 0) group.priority = priority;
  return group;
}

/**
 * The emitted Locality of a planned one, one object per planned locality (those are interned):
 * every group of every assignment in that locality shares it, as it shares LbEndpoints.
 */
const emittedLocalities = new WeakMap<PlannedEndpoint["locality"], Locality | undefined>();

function emittedLocality(planned: PlannedEndpoint["locality"]): Locality | undefined {
  if (!emittedLocalities.has(planned)) emittedLocalities.set(planned, locality(planned.region, planned.zone));
  return emittedLocalities.get(planned);
}

/** The shared LbEndpoint, unless its priority's weights had to be scaled. */
function lbEndpoint(endpoint: PlannedEndpoint, weight: number): LbEndpoint {
  return weight === endpoint.weight ? endpoint.lbEndpoint : { ...endpoint.lbEndpoint, load_balancing_weight: weight };
}

function emittedDiagnostics(resource: string, plan: PortPlan, endpoint: PlannedEndpoint, priority: number): Diagnostic[] {
  const via = `${endpoint.originCluster}/${endpoint.originNode}`;
  return endpoint.pods.map((pod) => {
    const who = () => `${plan.service.key} pod ${pod.pod ?? pod.ip} (${pod.cluster}, ${pod.ip})`;
    const fields = { resource, service: plan.service.key, endpoint: pod, priority, address: endpoint.address };
    return endpoint.route === "direct"
      ? lazyDiagnostic("ENDPOINT_DIRECT", () => `${who()} -> ${endpoint.address} direct, priority ${priority}`, fields)
      : lazyDiagnostic("ENDPOINT_VIA_WAYPOINT", () => `${who()} -> ${endpoint.address} via the waypoint of ${via}, priority ${priority}`, { ...fields, via });
  });
}
