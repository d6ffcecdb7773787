/**
 * Figure 7, one workload per fresh process (forked by figures.ts with --expose-gc): generates and
 * parses the workload, then times the all-services EDS of the subject's view (view-eds.ts).
 *
 * Every workload is measured in the same state: a new process, its own freshly parsed records,
 * nothing measured before it. In one process, whatever ran earlier on a workload's records and on
 * the compiler's code (figure 1 compiles W1's node-0 again and again right before figure 2) shows
 * up in that workload's time and not in the others', and the scaling ratios measured that order
 * rather than how the cost grows with the mesh.
 *
 * argv: the WorkloadParams and the ViewEdsRounds, each as JSON. Prints one JSON line (`EdsFigures`).
 */
import { collectGarbage } from "./measure.js";
import { measureViewEds, subjectOf, type ViewEds, type ViewEdsRounds } from "./view-eds.js";
import { buildWorkload, describeWorkload, type WorkloadParams } from "./workloads.js";

export interface EdsFigures {
  /** The setup row's text for this workload (`describeWorkload`). */
  readonly workload: string;
  readonly eds: ViewEds;
}

const [params, rounds] = process.argv.slice(2);
if (!params || !rounds) throw new Error("usage: eds-child.ts WORKLOAD_PARAMS_JSON ROUNDS_JSON");
const workload = buildWorkload(JSON.parse(params) as WorkloadParams);
collectGarbage();
const eds = measureViewEds(subjectOf(workload), JSON.parse(rounds) as ViewEdsRounds, workload.params.name);
console.log(JSON.stringify({ workload: describeWorkload(workload), eds } satisfies EdsFigures));
