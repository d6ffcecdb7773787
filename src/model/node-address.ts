/**
 * One address per node, used by everything that needs it (the node's own tunnel listener and every
 * other node's EDS), so the two can never disagree: the node list's, else the address most of the
 * node's registry records report (ties broken by the lowest address).
 */
import { compareText, ipSortKey } from "../util/order.js";

export function pickNodeAddress(listedIp: string | undefined, recordIps: readonly string[]): string | undefined {
  if (listedIp) return listedIp;
  const counts = new Map<string, number>();
  for (const ip of recordIps) if (ip) counts.set(ip, (counts.get(ip) ?? 0) + 1);
  return [...counts].sort(([a, ca], [b, cb]) => cb - ca || compareText(ipSortKey(a), ipSortKey(b)))[0]?.[0];
}
