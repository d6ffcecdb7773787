/** `aether-xds demo`: the bundled two-cluster Flannel mesh, compiled and checked end to end. */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileNode } from "../compile/compile-node.js";
import { renderResult } from "../emit/text.js";
import type { Snapshot } from "../model/snapshot.js";
import { indexSnapshot, localNodeIn, nodeKey } from "../plan/snapshot-index.js";
import { compareText } from "../util/order.js";
import { formatMeshReport } from "../verify/format.js";
import { verifyMesh } from "../verify/mesh-check.js";
import { COMPILE_FLAGS, OPTION_FLAGS_HELP, optionsFrom, parseFlags, readSnapshot } from "./args.js";
import { checkProgressLines } from "./check-progress.js";
import type { Command } from "./commands.js";
import { writeResult } from "./commands.js";
import { summarizeNode } from "./node-summary.js";

/** The example shipped with the package (dist/src/cli/ → testdata/). */
export const BUNDLED_MESH = fileURLToPath(new URL("../../../testdata/flannel/mesh.yaml", import.meta.url));

export const demo: Command = {
  summary: "compile the bundled Flannel mesh for a node per cluster, write the YAML, run the mesh check",
  usage: `usage: aether-xds demo [--snapshot FILE] [--out DIR] [flags]

Compiles one node per cluster (the first node that hosts pods) of the bundled two-cluster Flannel
mesh (or --snapshot FILE), prints what each node dials and listens on, writes its resources as
YAML under --out (default ./aether-xds-demo), and runs the mesh check with its matrix. The waypoint
mode defaults to cross-cluster here.

  --snapshot FILE                       a mesh file instead of the bundled example
  --out DIR                             where to write the YAML (default ./aether-xds-demo)
${OPTION_FLAGS_HELP.replace("(default off)", "(default cross-cluster)")}`,
  run(argv) {
    const values = parseFlags(argv, { ...COMPILE_FLAGS, out: { type: "string" } });
    if (values.help) return { code: 0, out: this.usage };
    const snapshot = readSnapshot(values.snapshot ?? BUNDLED_MESH);
    const options = optionsFrom({ mode: "cross-cluster", ...values });
    const index = indexSnapshot(snapshot);
    const out = values.out ?? "aether-xds-demo";
    const sections = demoNodes(snapshot).map(([cluster, node]) => {
      const result = compileNode(index, localNodeIn(index, cluster, node), options);
      const files = writeResult(join(out, `${cluster}-${node}`), renderResult(result), "yaml");
      return `${summarizeNode(result)}\n  wrote ${files.join(", ")}`;
    });
    const report = verifyMesh(index, options, checkProgressLines(false));
    return { code: report.ok ? 0 : 1, out: [...sections, formatMeshReport(report)].join("\n\n") };
  },
};

/** Per cluster, the first node (by name) that hosts a pod. */
function demoNodes(snapshot: Snapshot): [string, string][] {
  const index = indexSnapshot(snapshot);
  const firstByCluster = new Map<string, string>();
  const hosting = [...index.hostedBy.keys()].filter((key) => index.nodes.has(key)).sort(compareText);
  for (const key of hosting) {
    const node = index.nodes.get(key)!;
    if (!firstByCluster.has(node.cluster)) firstByCluster.set(node.cluster, node.name);
  }
  return [...firstByCluster].filter(([cluster, name]) => index.nodes.has(nodeKey(cluster, name)));
}
