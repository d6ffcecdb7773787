/**
 * Summarizes `node --cpu-prof` profiles of the benchmark: self time by function, and by file,
 * counting only samples inside the timed rounds whose label starts with a filter (from
 * `run.ts --windows FILE`), so workload generation and index set-up do not drown the figure.
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/run.ts --only 1 --windows /tmp/prof/windows.json
 *   npx tsx bench/profile-summary.ts /tmp/prof --windows /tmp/prof/windows.json --label "1 full" [--top 25]
 *
 * Labels: "1 full compile", "E full compile", "eds W1" (and W2, W4_50K, W4_200K; "E eds W1" for
 * their E), "3 further node", "4 health flip", "4 node drain", "4 node not ready", "4 rollout", "4 add service",
 * "5 renderJson", "7 marginal n=<size>", "8 index". --cpu-prof also profiles the ESM loader
 * thread (the second file); its samples are mostly idle and are skipped.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { TimedWindow } from "./measure.js";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly key: string;
  readonly us: number;
}

function option(argv: readonly string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : undefined;
}

function profilesIn(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => join(path, f));
}

/** `name (file:line)` with the file relative to the repository, or the V8 pseudo-frame name. */
function frameKey(node: ProfileNode, root: string): { fn: string; file: string } {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return { fn: functionName || "(anonymous)", file: functionName || "(native)" };
  const path = url.startsWith("file://") ? relative(root, new URL(url).pathname) : url;
  // tsx-transformed TypeScript reports line 0 for every function: show a line only when known.
  const where = lineNumber > 0 ? `${path}:${lineNumber + 1}` : path;
  return { fn: `${functionName || "(anonymous)"} (${where})`, file: path.replace(/^.*node_modules\//, "node_modules/") };
}

function inWindow(t: number, windows: readonly TimedWindow[]): boolean {
  return windows.some((w) => t >= w.startUs && t <= w.endUs);
}

/** Self time (µs) per function and per file over the samples inside `windows` (all when empty). */
export function selfTimes(
  profile: CpuProfile,
  windows: readonly TimedWindow[],
  root: string,
): { byFunction: Map<string, number>; byFile: Map<string, number>; total: number } {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let total = 0;
  let t = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    const next = profile.timeDeltas[i + 1] ?? delta;
    if (windows.length > 0 && !inWindow(t, windows)) return;
    const node = nodes.get(id);
    if (!node) return;
    const { fn, file } = frameKey(node, root);
    if (fn === "(idle)" || fn === "(program)") return;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + next);
    byFile.set(file, (byFile.get(file) ?? 0) + next);
    total += next;
  });
  return { byFunction, byFile, total };
}

function top(map: ReadonlyMap<string, number>, total: number, count: number): string[] {
  return [...map]
    .sort(([, a], [, b]) => b - a)
    .slice(0, count)
    .map(([key, us]) => `${((us / total) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(7)} ms  ${key}`);
}

function main(argv: readonly string[]): void {
  const target = argv[0];
  if (!target) throw new Error("usage: profile-summary.ts PROFILE_OR_DIR [--windows FILE] [--label TEXT] [--top N]");
  const label = option(argv, "--label") ?? "";
  const windowsFile = option(argv, "--windows");
  const windows = windowsFile ? (JSON.parse(readFileSync(windowsFile, "utf8")) as TimedWindow[]).filter((w) => w.label.startsWith(label)) : [];
  if (windowsFile && windows.length === 0) throw new Error(`no timed window labelled "${label}" in ${windowsFile}`);
  const count = Number(option(argv, "--top") ?? 25);
  const root = process.cwd();
  for (const file of profilesIn(target)) {
    const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
    const { byFunction, byFile, total } = selfTimes(profile, windows, root);
    if (total === 0) continue;
    console.log(`${file}: ${(total / 1000).toFixed(0)} ms of samples${windows.length > 0 ? ` in ${windows.length} windows labelled "${label}"` : ""}`);
    console.log("\nself time by function:");
    for (const line of top(byFunction, total, count)) console.log(line);
    console.log("\nself time by file:");
    for (const line of top(byFile, total, Math.min(count, 15))) console.log(line);
    console.log();
  }
}

// `... | head` closes stdout early: that is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});
main(process.argv.slice(2));
