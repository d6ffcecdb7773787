/**
 * A registry read afresh (a mesh file saved again, an etcd watch that had to restart) as an update
 * of the snapshot before it, when only service records (services added or removed too) and node
 * statuses changed: the next index then redoes only the services those touch, and a server recompiles only
 * the nodes they reach, instead of every node from a cold index.
 */
import { isDeepStrictEqual } from "node:util";
import type { ServiceKey } from "../naming.js";
import { compositeKey } from "../util/keys.js";
import { sameData } from "../util/same-data.js";
import type { ServiceEndpoint } from "./registry.js";
import { type NodeStatus, type Snapshot, withNodeList, withServiceRecords } from "./snapshot.js";

/**
 * `next` derived from `previous` — its node list (each status equal to one of `previous` being
 * that one) and the services whose records changed, that are new or that are gone
 * (`withServiceRecords`), every other part shared with `previous` — when that is all that differs:
 * the same mesh settings, exports, protocols, dependencies and VIPs, deep-equal. `previous` itself
 * when nothing differs; `next` when anything else does. Both must be validated snapshots. The
 * services keep `previous`'s order, new ones after them (no output depends on it).
 */
export function asRegistryUpdate(previous: Snapshot, next: Snapshot): Snapshot {
  if (!sameSettings(previous, next)) return next;
  const changed = new Map<ServiceKey, readonly ServiceEndpoint[] | undefined>();
  for (const [key, records] of next.services) {
    const before = previous.services.get(key);
    if (before === undefined || !sameData(before, records)) changed.set(key, records);
  }
  for (const key of previous.services.keys()) if (!next.services.has(key)) changed.set(key, undefined);
  const nodes = nodesAsBefore(previous.nodes, next.nodes);
  const withNodes = nodes === previous.nodes ? previous : withNodeList(previous, nodes);
  return changed.size === 0 ? withNodes : withServiceRecords(withNodes, changed);
}

/** Every part of the two snapshots but their records and node statuses, deep-equal (a part added to `Snapshot` too). */
function sameSettings(a: Snapshot, b: Snapshot): boolean {
  const { services: _a, nodes: _na, ...settingsA } = a;
  const { services: _b, nodes: _nb, ...settingsB } = b;
  return isDeepStrictEqual(settingsA, settingsB);
}

/** `before` when `after` holds the same statuses in the same order; else `after`, each status equal to one in `before` being that one. */
function nodesAsBefore(before: readonly NodeStatus[], after: readonly NodeStatus[]): readonly NodeStatus[] {
  if (before.length === after.length && before.every((node, i) => sameData(node, after[i]))) return before;
  const byKey = new Map(before.map((node) => [compositeKey(node.cluster, node.name), node]));
  return after.map((node) => {
    const known = byKey.get(compositeKey(node.cluster, node.name));
    return known !== undefined && sameData(known, node) ? known : node;
  });
}
