/**
 * A registry read afresh (a mesh file saved again, an etcd watch that had to restart) as an update
 * of the snapshot before it, when only service records changed: the next index then redoes only
 * those services, and a server recompiles only the nodes they reach, instead of every node from a
 * cold index.
 */
import { isDeepStrictEqual } from "node:util";
import type { ServiceKey } from "../naming.js";
import { sameData } from "../util/same-data.js";
import type { ServiceEndpoint } from "./registry.js";
import { type Snapshot, withServiceRecords } from "./snapshot.js";

/**
 * `next` as `previous` with some services' records replaced (`withServiceRecords`, sharing every
 * other part with `previous`), when that is all that differs between them: the same mesh settings,
 * nodes, exports, protocols, dependencies and VIPs, deep-equal, and the same services. `previous`
 * itself when nothing differs; `next` when anything else does. Both must be validated snapshots.
 * The services keep `previous`'s order (no output depends on it).
 */
export function asRecordsUpdate(previous: Snapshot, next: Snapshot): Snapshot {
  if (!sameSettings(previous, next) || previous.services.size !== next.services.size) return next;
  const changed = new Map<ServiceKey, readonly ServiceEndpoint[]>();
  for (const [key, records] of next.services) {
    const before = previous.services.get(key);
    if (before === undefined) return next;
    if (!sameData(before, records)) changed.set(key, records);
  }
  return changed.size === 0 ? previous : withServiceRecords(previous, changed);
}

/** Every part of the two snapshots but their records, deep-equal (a part added to `Snapshot` too). */
function sameSettings(a: Snapshot, b: Snapshot): boolean {
  const { services: _a, ...settingsA } = a;
  const { services: _b, ...settingsB } = b;
  return isDeepStrictEqual(settingsA, settingsB);
}
