/**
 * The mesh check as its text report shows it: how many paths ended in each status, the first failed
 * ones in full and every failed path by code, and every report only when the report's matrix shows
 * them. The CLI's `check` keeps this instead of every report, so on a big mesh the replay holds
 * none of the paths that went well (the reports are most of a full check's memory: ~0.9 kB per
 * path at its peak), and only the first of those that failed.
 */
import { type Options, type OptionsInput, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { asIndex, type SnapshotIndex } from "../plan/snapshot-index.js";
import { type CompiledMesh, type CompileProgress, compileMesh } from "./compiled-mesh.js";
import {
  type CheckProgress,
  checkCompiledMesh,
  checkOutcome,
  checksNodeByNode,
  type MeshCheckReport,
  type MeshPaths,
  meshPaths,
  PoolKeys,
  progressOf,
  type ReplayProgress,
  replayContext,
  replayEach,
  replayNodeByNode,
  sourceName,
  withSharedPoolFailures,
} from "./mesh-check.js";
import { type PathFailureCode, type PathReport, type ReplayContext, replayPath } from "./path.js";

/** The most sources and destinations the text report's matrix shows; beyond either it gives their numbers. */
export const MATRIX_LIMITS = { sources: 80, destinations: 40 } as const;

/**
 * The most failed paths a summary keeps in full, and so the text report prints. A mesh compiled
 * in the wrong mode can fail most of its paths: W1's 1.8 million would print gigabytes, more than
 * one string can hold, and keeping their reports took 6.7 GB.
 */
export const FAILED_PATHS_KEPT = 100;

/** How a replayed path ended (`PathReport.status`). */
export type PathStatus = PathReport["status"];

/** A mesh check without its reports: what `formatMeshSummary` prints, the same text `formatMeshReport` prints of the full report. */
export interface MeshCheckSummary extends Omit<MeshCheckReport, "paths"> {
  /** Paths replayed. */
  readonly total: number;
  /** Paths by status (a status no path ended in is absent). */
  readonly counts: Readonly<Partial<Record<PathStatus, number>>>;
  /**
   * The first failed paths in report order: every one up to `FAILED_PATHS_KEPT`, that many after
   * (`counts.failed` says how many failed, `failureCodes` how).
   */
  readonly failed: readonly PathReport[];
  /** Failed paths by failure code; a path failing in two ways counts under both. */
  readonly failureCodes: Readonly<Partial<Record<PathFailureCode, number>>>;
  /** Every report when the matrix shows them (`MATRIX_LIMITS`), else how many sources and destinations there are. */
  readonly matrix: { readonly paths: readonly PathReport[] } | MatrixSize;
}

/** How many sources (rows) and destination service ports (columns) the check's matrix would have. */
export interface MatrixSize {
  readonly sources: number;
  readonly destinations: number;
}

/**
 * `verifyMesh`, summarized as it goes: the same ok, counts and failed paths as the full report.
 * In `sockets` mode node by node, as `verifyMesh` checks it (`checksNodeByNode`).
 */
export function summarizeMesh(
  snapshot: Snapshot | SnapshotIndex,
  options: Options | OptionsInput = {},
  onProgress?: CompileProgress | CheckProgress,
): MeshCheckSummary {
  const progress = progressOf(onProgress);
  const parsed = parseOptions(options);
  if (checksNodeByNode(parsed)) return summarizeNodeByNode(asIndex(snapshot), parsed, progress);
  return summarizeCompiledMesh(compileMesh(snapshot, parsed, progress.compiled), progress.replayed);
}

/**
 * The node-by-node check summarized: its reports come in report order with their pool failures
 * applied, so the first failed ones are the first to come, and every report is kept only while the
 * matrix would still show them.
 */
function summarizeNodeByNode(index: SnapshotIndex, options: Options, progress: CheckProgress): MeshCheckSummary {
  const counts: Partial<Record<PathStatus, number>> = {};
  const failureCodes: Partial<Record<PathFailureCode, number>> = {};
  const failed: PathReport[] = [];
  const sources = new Set<string>();
  const destinations = new Set<string>();
  let every: PathReport[] | undefined = [];
  let total = 0;
  const nodes = replayNodeByNode(index, options, progress.compiled, (report) => {
    total++;
    counts[report.status] = (counts[report.status] ?? 0) + 1;
    if (report.status === "failed") {
      countCodes(failureCodes, report, 1);
      if (failed.length < FAILED_PATHS_KEPT) failed.push(report);
    }
    sources.add(sourceName(report.source));
    destinations.add(destinationName(report));
    if (every && fits({ sources: sources.size, destinations: destinations.size })) every.push(report);
    else every = undefined;
  });
  progress.replayed?.(total, total);
  const size = { sources: sources.size, destinations: destinations.size };
  return { ...checkOutcome(nodes, (counts.failed ?? 0) === 0), total, counts, failed, failureCodes, matrix: every ? { paths: every } : size };
}

/** A full report summarized (what `formatMeshReport` prints of it). */
export function summarizeReport(report: MeshCheckReport): MeshCheckSummary {
  const { paths, ...outcome } = report;
  const counts: Partial<Record<PathStatus, number>> = {};
  for (const { status } of paths) counts[status] = (counts[status] ?? 0) + 1;
  const size = { sources: new Set(paths.map((p) => sourceName(p.source))).size, destinations: new Set(paths.map(destinationName)).size };
  const failed = paths.filter((p) => p.status === "failed");
  const failureCodes: Partial<Record<PathFailureCode, number>> = {};
  for (const report of failed) countCodes(failureCodes, report, 1);
  return { ...outcome, total: paths.length, counts, failed: failed.slice(0, FAILED_PATHS_KEPT), failureCodes, matrix: fits(size) ? { paths } : size };
}

/**
 * The summary of a check over compiled output. A mesh small enough for the matrix is checked in
 * full (`checkCompiledMesh`); `keepEvery: false` summarizes as it goes whatever the size (tests).
 */
export function summarizeCompiledMesh(mesh: CompiledMesh, onReplayed?: ReplayProgress, keepEvery?: boolean): MeshCheckSummary {
  const paths = meshPaths(mesh);
  const size = matrixSize(paths);
  if (keepEvery ?? fits(size)) return summarizeReport(checkCompiledMesh(mesh, onReplayed));
  const context = replayContext(mesh);
  const counts: Partial<Record<PathStatus, number>> = {};
  const failureCodes: Partial<Record<PathFailureCode, number>> = {};
  // Paths are replayed by target, not in report order: the failures of lowest index are kept, trimmed as they come.
  let failed: IndexedReport[] = [];
  const pools = new PoolKeys();
  replayEach(context, paths, onReplayed, (at, report) => {
    counts[report.status] = (counts[report.status] ?? 0) + 1;
    if (report.status === "failed") {
      countCodes(failureCodes, report, 1);
      failed.push([at, report]);
      if (failed.length === 2 * FAILED_PATHS_KEPT) failed = firstInOrder(failed);
    }
    pools.note(report.pool);
  });
  const patched = new Map(firstInOrder(failed));
  for (const [at, before, after] of sharedPoolFailures(context, paths, pools.mixed)) {
    counts[before.status]! -= 1;
    counts.failed = (counts.failed ?? 0) + 1;
    // A report fails exactly when it has failures: an ok one takes nothing off.
    countCodes(failureCodes, before, -1);
    countCodes(failureCodes, after, 1);
    patched.set(at, after);
  }
  const first = firstInOrder([...patched]).map(([, report]) => report);
  return { ...checkOutcome(mesh, (counts.failed ?? 0) === 0), total: paths.count, counts, failed: first, failureCodes, matrix: size };
}

/** A path's report with its index in the full report. */
type IndexedReport = [at: number, report: PathReport];

/** The `FAILED_PATHS_KEPT` reports of lowest index, in index order. */
function firstInOrder(reports: IndexedReport[]): IndexedReport[] {
  return reports.sort(([a], [b]) => a - b).slice(0, FAILED_PATHS_KEPT);
}

/** Adds `sign` to the count of each code the report failed with (a code no path fails with is absent). */
function countCodes(codes: Partial<Record<PathFailureCode, number>>, report: PathReport, sign: 1 | -1): void {
  for (const code of new Set(report.failures.map((failure) => failure.code))) {
    const count = (codes[code] ?? 0) + sign;
    if (count === 0) delete codes[code];
    else codes[code] = count;
  }
}

/**
 * The paths `withSharedPoolFailures` fails, found after the replay: every path of each node that
 * uses a pool key with two certificates is replayed again (a node or a few in a mesh with that
 * mistake; levels, sockets and arrivals are still in the replay's memo), and those that fail are
 * returned, each with its report index, its report before and after.
 */
function sharedPoolFailures(
  context: ReplayContext,
  { sources, targets, offsets }: MeshPaths,
  mixed: ReadonlyMap<string, ReadonlySet<string>>,
): [number, PathReport, PathReport][] {
  if (mixed.size === 0) return [];
  const at: number[] = [];
  const reports: PathReport[] = [];
  for (const [s, source] of sources.entries()) {
    if (!mixed.has(source.node)) continue;
    for (const [j, target] of targets[s]!.entries()) {
      at.push(offsets[s]! + j);
      reports.push(replayPath(context, source, target));
    }
  }
  // Every path of those nodes, so the keys mixed among them are the mesh's for those nodes.
  const after = withSharedPoolFailures([...reports]);
  return after.flatMap((report, i) => (report === reports[i] ? [] : [[at[i]!, reports[i]!, report] as [number, PathReport, PathReport]]));
}

function matrixSize({ sources, targets }: MeshPaths): MatrixSize {
  const rows = new Set<string>();
  const columns = new Set<string>();
  for (const [s, list] of targets.entries()) {
    if (list.length > 0) rows.add(sourceName(sources[s]!));
    for (const target of list) columns.add(destinationName({ target }));
  }
  return { sources: rows.size, destinations: columns.size };
}

function fits(size: MatrixSize): boolean {
  return size.sources <= MATRIX_LIMITS.sources && size.destinations <= MATRIX_LIMITS.destinations;
}

/** A matrix column: `<ns>/<svc>:<port>`. */
export function destinationName({ target }: Pick<PathReport, "target">): string {
  return `${target.service}:${target.port}`;
}
