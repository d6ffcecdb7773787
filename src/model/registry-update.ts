/**
 * A registry read afresh (a mesh file saved again, an etcd watch that had to restart) as an update
 * of the snapshot before it, when only service records (services added or removed too), node
 * statuses, dependencies and VIPs changed: the next index then redoes only the services those
 * touch, and a server recompiles only the nodes they reach, instead of every node from a cold
 * index.
 */
import { isDeepStrictEqual } from "node:util";
import type { ServiceKey } from "../naming.js";
import { sameData } from "../util/same-data.js";
import type { ServiceEndpoint } from "./registry.js";
import { nodesAsBefore, type RelationParts, type Snapshot, withRelations, withServiceRecords } from "./snapshot.js";

/**
 * `next` derived from `previous` — its node list (each status equal to one of `previous` being
 * that one), dependencies and VIPs (`previous`'s when deep-equal), and the services whose records
 * changed, that are new or that are gone (`withServiceRecords`), every other part shared with
 * `previous` — when that is all that differs: the same mesh settings, exports and protocols,
 * deep-equal. `previous` itself when nothing differs; `next` when anything else does. Both must
 * be validated snapshots. The services keep `previous`'s order, new ones after them (no output
 * depends on it).
 */
export function asRegistryUpdate(previous: Snapshot, next: Snapshot): Snapshot {
  if (!sameSettings(previous, next)) return next;
  const changed = new Map<ServiceKey, readonly ServiceEndpoint[] | undefined>();
  for (const [key, records] of next.services) {
    const before = previous.services.get(key);
    if (before === undefined || !sameData(before, records)) changed.set(key, records);
  }
  for (const key of previous.services.keys()) if (!next.services.has(key)) changed.set(key, undefined);
  const relations = relationsAsBefore(previous, next);
  const withParts = relations === undefined ? previous : withRelations(previous, relations);
  return changed.size === 0 ? withParts : withServiceRecords(withParts, changed);
}

/**
 * Every part of the two snapshots but their records, node statuses, dependencies and VIPs,
 * deep-equal (a part added to `Snapshot` too).
 */
function sameSettings(a: Snapshot, b: Snapshot): boolean {
  const { services: _a, nodes: _na, dependencies: _da, vips: _va, ...settingsA } = a;
  const { services: _b, nodes: _nb, dependencies: _db, vips: _vb, ...settingsB } = b;
  return isDeepStrictEqual(settingsA, settingsB);
}

/** `next`'s node list, dependencies and VIPs, `previous`'s part kept where equal; undefined when all are. */
function relationsAsBefore(previous: Snapshot, next: Snapshot): RelationParts | undefined {
  const nodes = nodesAsBefore(previous.nodes, next.nodes);
  const dependencies = isDeepStrictEqual(previous.dependencies, next.dependencies) ? previous.dependencies : next.dependencies;
  const vips = isDeepStrictEqual(previous.vips, next.vips) ? previous.vips : next.vips;
  if (nodes === previous.nodes && dependencies === previous.dependencies && vips === previous.vips) return undefined;
  return { nodes, dependencies, vips };
}
