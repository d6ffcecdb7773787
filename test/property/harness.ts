/**
 * How the property tests run: a fixed seed, a run count from FUZZ_RUNS, and a failure report that
 * carries fast-check's seed, path and shrunk counterexample plus the mesh document as YAML.
 * See the header of test/property/compiler.property.test.ts.
 */
import fc from "fast-check";
import { stringify } from "yaml";

/** Meshes per property. The CI default keeps `npx vitest run test/property` well under 2 minutes. */
export const RUNS = positiveInt(process.env.FUZZ_RUNS, 200);
/** One seed for every property: `FUZZ_SEED=<seed>` replays a reported failure. */
export const SEED = positiveInt(process.env.FUZZ_SEED, 424242);
/** fast-check's replay path of a reported counterexample (use with `-t "<test name>"`). */
const PATH = process.env.FUZZ_PATH;

/** Meshes per property by default (CI). */
export const DEFAULT_RUNS = 200;

/**
 * In long mode (FUZZ_RUNS above the default), the time one property may take, estimated from its
 * cost per run on a loaded 2-core machine: `npm run fuzz` as a whole stays under 10 minutes.
 */
const LONG_MODE_BUDGET_MS = 30_000;

/**
 * The runs of a property costing about `msPerRun` each: FUZZ_RUNS, capped in long mode by the
 * per-property budget, never below the CI default. Deterministic: the same FUZZ_RUNS, the same count.
 */
export function runsFor(msPerRun: number): number {
  if (RUNS <= DEFAULT_RUNS) return RUNS;
  return Math.max(DEFAULT_RUNS, Math.min(RUNS, Math.floor(LONG_MODE_BUDGET_MS / msPerRun)));
}

/** A vitest timeout for a property costing about `msPerRun` per run (a hang guard), never below the config's 60 s. */
export function timeoutFor(msPerRun: number): number {
  return Math.max(60_000, 30_000 + runsFor(msPerRun) * msPerRun);
}

function positiveInt(value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`not a non-negative integer: ${value}`);
  return parsed;
}

/**
 * Runs a property with the suite's seed and run count. On failure, throws fast-check's report
 * (seed, path, shrunk counterexample, the error) followed by the shrunk mesh document as YAML.
 */
export function assertProperty<T extends readonly unknown[]>(
  arbitraries: { [K in keyof T]: fc.Arbitrary<T[K]> },
  predicate: (...args: T) => void,
  runs = RUNS,
): void {
  const property = fc.property(...(arbitraries as unknown as [fc.Arbitrary<unknown>]), predicate as unknown as (...args: unknown[]) => void);
  const details = fc.check(property, { seed: SEED, numRuns: runs, ...(PATH ? { path: PATH } : {}) });
  if (!details.failed) return;
  const [doc, ...rest] = details.counterexample ?? [];
  const error = details.errorInstance;
  throw new Error(
    [
      (fc.defaultReportMessage(details) ?? "").replace(/\n+Hint: .*$/s, ""),
      "",
      "Got error:",
      error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      "",
      `Replay: FUZZ_SEED=${SEED} FUZZ_PATH="${details.counterexamplePath}" npx vitest run test/property -t "<this test's name>"`,
      "",
      "Shrunk mesh document:",
      "---",
      stringify(doc).trimEnd(),
      "...",
      ...(rest.length > 0 ? [`Other inputs: ${JSON.stringify(rest)}`] : []),
    ].join("\n"),
  );
}
