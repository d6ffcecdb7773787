/**
 * `npm run bench`: every figure of the performance issue with its target and PASS/FAIL.
 *
 *   node --expose-gc --import tsx bench/run.ts [--smoke] [--only 1,4] [--write]
 *
 * --smoke   tiny workloads, one or two rounds: checks that every measurement runs and yields
 *           numbers (for CI); targets are shown but not enforced.
 * --only    a comma-separated list of figures (1–12); figures they build on are measured too.
 * --write   writes the table to bench/RESULTS.md.
 * --windows FILE  writes every labelled round's time window (JSON), so profile-summary.ts can
 *           cut a --cpu-prof profile down to the measured code.
 * Exits 1 on any FAIL (full mode) or on any error / non-number (both modes).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { checkAllSmokeWorkloads } from "./check-workloads.js";
import { type BenchConfig, createBench, FIGURES, type Figure, type Row } from "./figures.js";
import { formatBytes, formatMs, hasGc, timedWindows } from "./measure.js";
import { SMOKE_WORKLOADS, WORKLOADS } from "./workloads.js";

interface Args {
  readonly smoke: boolean;
  readonly write: boolean;
  readonly only: readonly Figure[];
  readonly windows: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const onlyAt = argv.indexOf("--only");
  const requested = onlyAt >= 0 ? (argv[onlyAt + 1] ?? "").split(",").map((f) => f.trim()) : [...FIGURES];
  const unknown = requested.filter((f) => !(FIGURES as readonly string[]).includes(f));
  if (unknown.length > 0) throw new Error(`unknown figure(s) ${unknown.join(", ")}; figures are ${FIGURES.join(", ")}`);
  const windowsAt = argv.indexOf("--windows");
  return {
    smoke: argv.includes("--smoke"),
    write: argv.includes("--write"),
    only: requested as Figure[],
    windows: windowsAt >= 0 ? argv[windowsAt + 1] : undefined,
  };
}

function configFor(args: Args, log: (line: string) => void): BenchConfig {
  return args.smoke
    ? { smoke: true, workloads: SMOKE_WORKLOADS, heavy: { warmup: 0, repeats: 2 }, light: { warmup: 1, repeats: 2 }, log }
    : { smoke: false, workloads: WORKLOADS, heavy: { warmup: 1, repeats: 7 }, light: { warmup: 2, repeats: 7 }, log };
}

/** Figure 7 frees the workloads before its in-process marginal cost, so it runs last; 6, 10 and 7's scaling fork their own processes. */
const EXECUTION_ORDER: readonly Figure[] = ["1", "2", "3", "4", "5", "8", "11", "9", "12", "6", "10", "7"];

function errorRow(figure: string, error: unknown): Row {
  const message = error instanceof Error ? error.message.split("\n")[0]! : String(error);
  return { figure, what: "measurement failed", measured: message, target: "runs", verdict: "FAIL" };
}

// ---- output ---------------------------------------------------------------------------------

const HEADER = ["fig", "figure", "measured", "target", "status"] as const;

function cells(row: Row, smoke: boolean): string[] {
  const status = smoke && row.verdict !== "info" ? `(${row.verdict})` : row.verdict;
  return [row.figure, row.what, row.measured, row.target, status];
}

function textTable(rows: readonly Row[], smoke: boolean): string {
  const lines = [[...HEADER], ...rows.map((row) => cells(row, smoke))];
  const widths = HEADER.map((_, i) => Math.min(i === 2 ? 90 : 70, Math.max(...lines.map((line) => line[i]!.length))));
  return lines
    .map((line) =>
      line
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

function markdownTable(rows: readonly Row[], smoke: boolean): string {
  const escapeCell = (cell: string) => cell.replaceAll("|", "\\|");
  const lines = [`| ${HEADER.join(" | ")} |`, `|${HEADER.map(() => "---").join("|")}|`];
  for (const row of rows) lines.push(`| ${cells(row, smoke).map(escapeCell).join(" | ")} |`);
  return lines.join("\n");
}

/** The commit measured, and whether src/ or gen/ had uncommitted changes (others edit concurrently). */
function revision(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = git("status", "--porcelain", "--", "src", "gen").length > 0;
    return `${git("rev-parse", "--short", "HEAD")}${dirty ? " + uncommitted changes in src/ or gen/" : ""}`;
  } catch {
    return "unknown (no git)";
  }
}

/** Biome aligns Markdown tables (npm run check:format): format the written file the same way. */
function formatMarkdown(path: string, log: (line: string) => void): void {
  try {
    execFileSync("npx", ["--no-install", "biome", "format", "--write", path], { stdio: "ignore" });
  } catch (error) {
    log(`could not format ${path} (run npm run format): ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
  }
}

function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown CPU"} × ${cpu.length} cores, ${formatBytes(totalmem())} RAM, Node ${process.version} (${process.platform}/${process.arch})`;
}

function resultsMarkdown(args: Args, rows: readonly Row[], seconds: number): string {
  const failed = rows.filter((row) => row.verdict === "FAIL");
  return [
    "# Benchmark results",
    "",
    `Written by \`node --expose-gc --import tsx bench/run.ts${args.smoke ? " --smoke" : ""} --write\`` +
      (args.only.length < FIGURES.length ? ` (only figures ${args.only.join(", ")})` : "") +
      ". Every target is a ratio of two medians from this one run; absolute times drift ±30 % on this machine.",
    "",
    `- date: ${new Date().toISOString()}`,
    `- machine: ${machine()}`,
    `- source: ${revision()}`,
    `- whole run: ${seconds.toFixed(0)} s; ${failed.length} of ${rows.filter((r) => r.verdict !== "info").length} checks failed` +
      (failed.length > 0 ? ` (figures ${[...new Set(failed.map((r) => r.figure))].join(", ")})` : ""),
    "- E = time to binary-encode (ts-proto `encode().finish()`) exactly the resources the measured compile produced",
    "",
    markdownTable(rows, args.smoke),
    "",
  ].join("\n");
}

// ---- main -----------------------------------------------------------------------------------

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const log = (line: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}\n`);
  if (!hasGc()) log("warning: run with --expose-gc (node --expose-gc --import tsx bench/run.ts) for steadier timings");
  const bench = createBench(configFor(args, log));
  const rows: Row[] = [];
  try {
    rows.push({ figure: "setup", what: "generator: same seed → same bytes", measured: checkAllSmokeWorkloads(), target: "identical", verdict: "PASS" });
  } catch (error) {
    rows.push(errorRow("setup", error));
  }
  const figureRows = new Map<Figure, Row[]>();
  for (const figure of EXECUTION_ORDER.filter((f) => args.only.includes(f))) {
    try {
      figureRows.set(figure, await bench.figures[figure]());
    } catch (error) {
      log(`figure ${figure} failed: ${error instanceof Error ? error.stack : String(error)}`);
      figureRows.set(figure, [errorRow(figure, error)]);
    }
  }
  rows.push(...bench.setupRows(), ...FIGURES.flatMap((figure) => figureRows.get(figure) ?? []));
  const seconds = (performance.now() - started) / 1000;
  rows.push({
    figure: "run",
    what: "whole benchmark",
    measured: formatMs(seconds * 1000),
    target: args.smoke ? "—" : "< 20 min",
    verdict: args.smoke ? "info" : seconds < 1200 ? "PASS" : "FAIL",
  });
  console.log(`\n${machine()}\n`);
  console.log(textTable(rows, args.smoke));
  if (args.write) {
    const path = fileURLToPath(new URL("./RESULTS.md", import.meta.url));
    writeFileSync(path, resultsMarkdown(args, rows, seconds));
    formatMarkdown(path, log);
    log(`wrote ${path}`);
  }
  if (args.windows) {
    mkdirSync(dirname(args.windows), { recursive: true });
    writeFileSync(args.windows, JSON.stringify(timedWindows()));
  }
  const broken = rows.some((row) => row.what === "measurement failed" || /NaN|Infinity/.test(row.measured));
  const failed = rows.some((row) => row.verdict === "FAIL");
  if (args.smoke) console.log(broken ? "\nsmoke: a measurement failed" : "\nsmoke: every measurement ran (targets not enforced)");
  return broken || (!args.smoke && failed) ? 1 : 0;
}

process.exitCode = await main();
