/**
 * Timing and memory helpers. Every figure is a ratio of two medians taken in the same process, so
 * machine speed cancels out; a full GC (when run with --expose-gc) precedes every timed run so
 * one run's garbage is not billed to the next.
 */
import { Worker } from "node:worker_threads";

export interface TimingOptions {
  readonly warmup: number;
  readonly repeats: number;
  /** Names the counted rounds' time windows, for profile-summary.ts (see `timedWindows`). */
  readonly label?: string;
  /**
   * A full GC after each round's untimed setup, so that the garbage of a heavy setup (a cold
   * index of the whole snapshot) is not collected — and charged — inside the timed region. The
   * measured code's own garbage is still collected there. Not for E: its rounds allocate little,
   * and a forced collection deoptimizes the encoder it times.
   */
  readonly collectAfterSetup?: boolean;
}

/** A counted round's wall-clock window on the monotonic clock, in µs (the clock of .cpuprofile). */
export interface TimedWindow {
  readonly label: string;
  readonly startUs: number;
  readonly endUs: number;
}

const windows: TimedWindow[] = [];

/** Every labelled round timed so far: lets a CPU profile be cut down to the measured code. */
export function timedWindows(): readonly TimedWindow[] {
  return windows;
}

export interface Timing {
  /** Milliseconds. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly samples: readonly number[];
}

/** A timing split into named laps (each lap: time since the previous lap or the start). */
export interface LappedTiming extends Timing {
  readonly laps: Readonly<Record<string, Timing>>;
}

/** Runs a full GC when the process was started with --expose-gc; otherwise does nothing. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

export function hasGc(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === "function";
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(samples: readonly number[]): Timing {
  return { median: median(samples), min: Math.min(...samples), max: Math.max(...samples), samples };
}

function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export type Lap = (name: string) => void;

/** One thing to time: a fresh state from `setup` (untimed) per round, then `run` on it (timed). */
export interface Timed<S, R> {
  /** Names the counted rounds' time windows (see `timedWindows`). */
  readonly label?: string;
  readonly setup: () => S;
  /** May call `lap(name)` to split its time. */
  readonly run: (state: S, lap: Lap) => R;
  /** Sees every round's result after its clock stopped. */
  readonly keep?: (result: R, state: S) => void;
}

/** The counted rounds' samples and laps of one `Timed`. */
class Rounds<S, R> {
  readonly #samples: number[] = [];
  readonly #laps = new Map<string, number[]>();

  constructor(
    private readonly timed: Timed<S, R>,
    private readonly options: TimingOptions,
  ) {}

  once(counted: boolean): void {
    const { label, setup, run, keep } = this.timed;
    const state = setup();
    if (this.options.collectAfterSetup) collectGarbage();
    const start = process.hrtime.bigint();
    let last = start;
    const lap: Lap = (name) => {
      const now = process.hrtime.bigint();
      if (counted) this.#laps.set(name, [...(this.#laps.get(name) ?? []), Number(now - last) / 1e6]);
      last = now;
    };
    const result = run(state, lap);
    const ms = elapsedMs(start);
    if (counted && label) windows.push({ label, startUs: Number(start / 1000n), endUs: Number(start / 1000n) + ms * 1000 });
    keep?.(result, state);
    if (counted) this.#samples.push(ms);
  }

  timing(): LappedTiming {
    return { ...summarize(this.#samples), laps: Object.fromEntries([...this.#laps].map(([name, values]) => [name, summarize(values)])) };
  }
}

/**
 * Times `run` on a fresh state from `setup` (untimed) for `warmup` + `repeats` rounds and keeps
 * the repeats' samples. `run` may call `lap(name)` to split its time; `keep` sees every round's
 * result after its clock stopped.
 *
 * One full GC runs before the first round, none between rounds: a forced full GC drops the
 * hidden classes of dead objects and with them the optimized code that embeds them ("weak
 * objects" deopts), which made the next round 2–4× slower. GC the code under test triggers
 * itself is part of its cost.
 */
export function timeIt<S, R>(options: TimingOptions, setup: () => S, run: (state: S, lap: Lap) => R, keep?: (result: R, state: S) => void): LappedTiming {
  const rounds = new Rounds({ label: options.label, setup, run, keep }, options);
  collectGarbage();
  for (let round = 0; round < options.warmup + options.repeats; round++) rounds.once(round >= options.warmup);
  return rounds.timing();
}

/**
 * Times the two of a ratio round by round, as `timeIt` times one: a round of each, the first
 * going first in even rounds and second in odd ones, so both meet the same machine and JIT state.
 * Timed one after the other, figure 11 read 3.07 in a full run and 1.88–1.95 alone, same code.
 */
export function timeAlternating<S1, R1, S2, R2>(options: TimingOptions, a: Timed<S1, R1>, b: Timed<S2, R2>): [LappedTiming, LappedTiming] {
  const first = new Rounds(a, options);
  const second = new Rounds(b, options);
  collectGarbage();
  for (let round = 0; round < options.warmup + options.repeats; round++) {
    const counted = round >= options.warmup;
    const [one, other] = round % 2 === 0 ? [first, second] : [second, first];
    one.once(counted);
    other.once(counted);
  }
  return [first.timing(), second.timing()];
}

/** Times one call once (no warmup): for steps too slow or too stateful to repeat. */
export function timeOnce<R>(run: () => R): { readonly ms: number; readonly result: R } {
  const start = process.hrtime.bigint();
  const result = run();
  return { ms: elapsedMs(start), result };
}

// ---- memory ---------------------------------------------------------------------------------

/** Heap in use after a full GC (bytes). Meaningful only with --expose-gc. */
export function settledHeap(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/**
 * Samples the whole process's RSS from a worker thread, so it keeps sampling while the main
 * thread is busy in a synchronous compile. `start` resolves once the worker is sampling.
 */
export interface RssSampler {
  /** The RSS the worker saw most recently (bytes). */
  current(): number;
  /** Resets the peak to the current RSS. */
  resetPeak(): void;
  /** The highest RSS seen since the last reset (bytes). */
  peak(): number;
  /**
   * Resolves with the RSS once it has held still for `quietMs` (at most `limitMs`). After a full GC
   * V8 hands freed pages back on background threads for some tens of milliseconds: a baseline read
   * before that is too high, and the drop then hides part of what follows.
   */
  settled(quietMs?: number, limitMs?: number): Promise<number>;
  stop(): Promise<void>;
}

const SAMPLER_SOURCE = `
const { workerData, parentPort } = require("node:worker_threads");
const cells = new Float64Array(workerData);
parentPort.postMessage("ready");
const tick = () => {
  const rss = process.memoryUsage.rss();
  cells[0] = rss;
  if (rss > cells[1]) cells[1] = rss;
  if (cells[2] === 0) setTimeout(tick, 1);
};
tick();
`;

export async function startRssSampler(): Promise<RssSampler> {
  const shared = new SharedArrayBuffer(3 * Float64Array.BYTES_PER_ELEMENT);
  const cells = new Float64Array(shared); // [current, peak, stop]
  const worker = new Worker(SAMPLER_SOURCE, { eval: true, workerData: shared });
  await new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
  });
  // Let the worker's own allocations settle before anyone reads a baseline.
  await new Promise((resolve) => setTimeout(resolve, 50));
  return {
    current: () => cells[0]!,
    resetPeak: () => {
      cells[1] = cells[0]!;
    },
    peak: () => cells[1]!,
    settled: async (quietMs = 100, limitMs = 2000) => {
      const start = Date.now();
      let last = cells[0]!;
      let since = start;
      while (Date.now() - since < quietMs && Date.now() - start < limitMs) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (cells[0] !== last) [last, since] = [cells[0]!, Date.now()];
      }
      return last;
    },
    stop: async () => {
      cells[2] = 1;
      await worker.terminate();
    },
  };
}

// ---- formatting -----------------------------------------------------------------------------

export function formatMs(ms: number): string {
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(1)} ms`;
  return `${(ms * 1000).toFixed(0)} µs`;
}

export function formatBytes(bytes: number): string {
  if (Math.abs(bytes) >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (Math.abs(bytes) >= 1e6) return `${(bytes / 1e6).toFixed(1)} MB`;
  if (Math.abs(bytes) >= 1e3) return `${(bytes / 1e3).toFixed(1)} kB`;
  return `${bytes.toFixed(0)} B`;
}

export function formatTiming(t: Timing): string {
  return `${formatMs(t.median)} (${formatMs(t.min)}–${formatMs(t.max)}, n=${t.samples.length})`;
}
