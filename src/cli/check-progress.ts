/** What `aether-xds check` prints on stderr while it runs: progress lines for its two phases. */
import type { CheckProgress } from "../verify/mesh-check.js";
import { progressLine } from "./args.js";

export const CHECK_PROGRESS_FLAG_HELP =
  "  --progress                            print nodes compiled, then paths replayed, / total to stderr (default: only on a terminal)";

/** Paths a check must replay before a terminal shows their progress (a 50-node mesh has tens of thousands). */
const REPLAY_PROGRESS_THRESHOLD = 10_000;

/** The check's progress lines: nodes compiled, then paths replayed (`progressLine` for each). */
export function checkProgressLines(requested: boolean | undefined): CheckProgress {
  return {
    compiled: progressLine("compiling nodes", requested),
    replayed: progressLine("replaying paths", requested, false, REPLAY_PROGRESS_THRESHOLD),
  };
}
