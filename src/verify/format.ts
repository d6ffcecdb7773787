/** The mesh check as text: a source × destination matrix, then every failure with its hops. */
import type { SharedAddress } from "../model/snapshot-checks.js";
import { compositeKey } from "../util/keys.js";
import { destinationName, type MeshCheckSummary, summarizeReport } from "./check-summary.js";
import { formatPathReport, type MeshCheckReport, sourceName } from "./mesh-check.js";
import type { PathReport } from "./path.js";

const CELL: Record<PathReport["status"], string> = { ok: "✓", failed: "✗", unreachable: "·", unverified: "?", "not-captured": "-" };

/** The mesh check as text: a summary, a source × destination matrix, every failure with its hops, a verdict. */
export function formatMeshReport(report: MeshCheckReport): string {
  return formatMeshSummary(summarizeReport(report));
}

/** The same text from a check's summary (`summarizeMesh`), which keeps only what this prints. */
export function formatMeshSummary(summary: MeshCheckSummary): string {
  const { counts, failed } = summary;
  const lines = [
    `mesh check (${summary.mode}): ${summary.total} paths — ${counts.ok ?? 0} ok, ${counts.failed ?? 0} failed, ${counts.unreachable ?? 0} unreachable, ${counts.unverified ?? 0} not followed, ${counts["not-captured"] ?? 0} not captured`,
  ];
  for (const node of summary.unaddressedNodes) lines.push(`  node ${node} not compiled: no known IP yet (its pods are left out everywhere: NO_NODE_IP)`);
  for (const [node, reason] of summary.skippedNodes) lines.push(`  node ${node} FAILED: the snapshot makes it uncompilable: ${reason}`);
  for (const [node, reason] of summary.failedNodes) lines.push(`  node ${node} FAILED to compile: ${reason}`);
  lines.push(...sharedAddressWarnings(summary.sharedAddresses));
  const size = summary.matrix;
  lines.push("", ...("paths" in size ? matrix(size.paths) : [`(${size.sources} sources × ${size.destinations} destinations: matrix omitted)`]));
  if (failed.length > 0) lines.push("", "failures:", ...failed.map(formatPathReport));
  const failedPaths = counts.failed ?? 0;
  if (failedPaths > failed.length) lines.push(...notShown(failedPaths - failed.length, summary.failureCodes));
  const verdict = summary.ok
    ? "OK: every path lands on a pod of its service with end-to-end mTLS"
    : `FAILED: ${failedPaths} path(s), ${summary.failedNodes.size + summary.skippedNodes.size} node(s)`;
  lines.push("", verdict);
  return lines.join("\n");
}

/** What stands for the failed paths past the first `FAILED_PATHS_KEPT`: how many, and every failed path by code. */
function notShown(count: number, codes: MeshCheckSummary["failureCodes"]): string[] {
  const byCode = Object.entries(codes).sort(([a, x], [b, y]) => y! - x! || (a < b ? -1 : 1));
  return [
    `… and ${count} more failed path(s), not shown (aether-xds explain traces one)`,
    `failed paths by code: ${byCode.map(([code, n]) => `${code} ${n}`).join(", ")}`,
  ];
}

function matrix(paths: readonly PathReport[]): string[] {
  const rows = [...new Set(paths.map((p) => sourceName(p.source)))];
  const columns = [...new Set(paths.map(destinationName))].sort();
  const cells = new Map(paths.map((p) => [compositeKey(sourceName(p.source), destinationName(p)), CELL[p.status]]));
  const width = Math.max(...rows.map((r) => r.length), 6);
  const header = columns.map((c, i) => `  [${i + 1}] ${c}`);
  const grid = rows.map((row) =>
    `${row.padEnd(width)}  ${columns.map((c, i) => (cells.get(compositeKey(row, c)) ?? " ").padEnd(String(i + 1).length + 2)).join(" ")}`.trimEnd(),
  );
  return [
    "destinations:",
    ...header,
    `${"source".padEnd(width)}  ${columns.map((_, i) => `[${i + 1}]`).join(" ")}`,
    ...grid,
    "✓ lands on a pod of the service   ✗ failed   · no healthy endpoint   ? not followed (node not compiled)   - not captured (no VIP for a TCP port, or no netns)",
  ];
}

/**
 * The most shared-address warnings the check prints: clusters with the same pod CIDR can share
 * tens of thousands (W1: 33,311); `aether-xds inspect` lists every one.
 */
export const SHARED_ADDRESSES_SHOWN = 100;

function sharedAddressWarnings(shared: readonly SharedAddress[]): string[] {
  const lines = shared.slice(0, SHARED_ADDRESSES_SHOWN).map((address) => `  warning: ${sharedAddressLine(address)}`);
  const rest = shared.length - lines.length;
  if (rest > 0) lines.push(`  … and ${rest} more such address(es), not shown (aether-xds inspect lists every one)`);
  return lines;
}

/** One line for an address that names pods of different services in different clusters. */
export function sharedAddressLine(shared: SharedAddress): string {
  return `address ${shared.ip} names pods of different services in different clusters (${shared.pods.join(", ")}): a direct dial from another cluster reaches the wrong one`;
}
