/** The mesh check as text: a source × destination matrix, then every failure with its hops. */
import type { SharedAddress } from "../model/snapshot-checks.js";
import { compositeKey } from "../util/keys.js";
import { formatPathReport, type MeshCheckReport, sourceName } from "./mesh-check.js";
import type { PathReport } from "./path.js";

const CELL: Record<PathReport["status"], string> = { ok: "✓", failed: "✗", unreachable: "·", unverified: "?", "not-captured": "-" };
const MAX_MATRIX_ROWS = 80;
const MAX_MATRIX_COLUMNS = 40;

/** The mesh check as text: a summary, a source × destination matrix, every failure with its hops, a verdict. */
export function formatMeshReport(report: MeshCheckReport): string {
  const counts = countBy(report.paths.map((p) => p.status));
  const lines = [
    `mesh check (${report.mode}): ${report.paths.length} paths — ${counts.ok ?? 0} ok, ${counts.failed ?? 0} failed, ${counts.unreachable ?? 0} unreachable, ${counts.unverified ?? 0} not followed, ${counts["not-captured"] ?? 0} not captured`,
  ];
  for (const node of report.unaddressedNodes) lines.push(`  node ${node} not compiled: no known IP yet (its pods are left out everywhere: NO_NODE_IP)`);
  for (const [node, reason] of report.skippedNodes) lines.push(`  node ${node} FAILED: the snapshot makes it uncompilable: ${reason}`);
  for (const [node, reason] of report.failedNodes) lines.push(`  node ${node} FAILED to compile: ${reason}`);
  for (const shared of report.sharedAddresses) lines.push(`  warning: ${sharedAddressLine(shared)}`);
  lines.push("", ...matrix(report.paths));
  const failed = report.paths.filter((p) => p.status === "failed");
  if (failed.length > 0) lines.push("", "failures:", ...failed.map(formatPathReport));
  const verdict = report.ok
    ? "OK: every path lands on a pod of its service with end-to-end mTLS"
    : `FAILED: ${failed.length} path(s), ${report.failedNodes.size + report.skippedNodes.size} node(s)`;
  lines.push("", verdict);
  return lines.join("\n");
}

function matrix(paths: readonly PathReport[]): string[] {
  const rows = [...new Set(paths.map((p) => sourceName(p.source)))];
  const columns = [...new Set(paths.map((p) => `${p.target.service}:${p.target.port}`))].sort();
  if (rows.length > MAX_MATRIX_ROWS || columns.length > MAX_MATRIX_COLUMNS)
    return [`(${rows.length} sources × ${columns.length} destinations: matrix omitted)`];
  const cells = new Map(paths.map((p) => [compositeKey(sourceName(p.source), `${p.target.service}:${p.target.port}`), CELL[p.status]]));
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

function countBy(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/** One line for an address that names pods of different services in different clusters. */
export function sharedAddressLine(shared: SharedAddress): string {
  return `address ${shared.ip} names pods of different services in different clusters (${shared.pods.join(", ")}): a direct dial from another cluster reaches the wrong one`;
}
