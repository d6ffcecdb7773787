/**
 * What `aether-xds check` prints on stderr while it runs: progress lines for its two phases, and a
 * warning, as the replay starts, when the replay is likely to outgrow Node's heap limit.
 */
import { getHeapStatistics } from "node:v8";
import type { CheckProgress } from "../verify/mesh-check.js";
import { progressLine } from "./args.js";

export const CHECK_PROGRESS_FLAG_HELP =
  "  --progress                            print nodes compiled, then paths replayed, / total to stderr (default: only on a terminal)";

/** Paths a check must replay before a terminal shows their progress (a 50-node mesh has tens of thousands). */
const REPLAY_PROGRESS_THRESHOLD = 10_000;

/**
 * Heap the replay needs per path at its peak, beyond the compiled mesh: the reports and what the
 * replay shares. Measured on W1 (1.79 million paths) and W4-200k (3.6 million): ~0.9 kB each.
 */
const REPLAY_BYTES_PER_PATH = 900;

/** The heap figures the warning reads (`v8.getHeapStatistics`). */
export interface HeapReading {
  readonly used_heap_size: number;
  readonly heap_size_limit: number;
}

/**
 * The check's stderr: nodes compiled, then paths replayed (`progressLine` for each), and, whatever
 * `requested`, the replay's memory warning (`replayMemoryWarning`) as it starts.
 */
export function checkProgressLines(requested: boolean | undefined, heap: () => HeapReading = getHeapStatistics): CheckProgress {
  const replayLine = progressLine("replaying paths", requested, false, REPLAY_PROGRESS_THRESHOLD);
  return {
    compiled: progressLine("compiling nodes", requested),
    replayed: (done, total) => {
      if (done === 0) {
        const warning = replayMemoryWarning(total, heap());
        if (warning) process.stderr.write(`${warning}\n`);
      }
      replayLine?.(done, total);
    },
  };
}

const GB = 1024 ** 3;

/**
 * A warning when the heap in use plus what replaying `paths` needs (estimated) exceeds the heap
 * limit: the process would die with "JavaScript heap out of memory" partway through, after the
 * whole compile. It says how much to ask for instead, with some headroom, in whole GB.
 */
export function replayMemoryWarning(paths: number, heap: HeapReading): string | undefined {
  const needed = paths * REPLAY_BYTES_PER_PATH;
  if (heap.used_heap_size + needed <= heap.heap_size_limit) return undefined;
  const suggested = Math.ceil(((heap.used_heap_size + needed) * 1.25) / GB) * 1024;
  return (
    `aether-xds: replaying ${paths.toLocaleString("en-US")} paths needs about ${(needed / GB).toFixed(1)} GB of heap beyond the ` +
    `${(heap.used_heap_size / GB).toFixed(1)} GB in use, past Node's limit of ${(heap.heap_size_limit / GB).toFixed(1)} GB: ` +
    `if it runs out of memory, run it again with NODE_OPTIONS=--max-old-space-size=${suggested} (${suggested / 1024} GB)`
  );
}
