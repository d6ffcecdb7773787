// Compile two nodes of the bundled mesh, one per cluster, and print what each gets.
// Run from the repository root after `npm run build`: npx tsx examples/compile-node.ts
import { readFileSync } from "node:fs";
import { compileNode, indexSnapshot, localNodeFrom, parseMeshFile } from "aether-xds";

const snapshot = parseMeshFile(readFileSync("testdata/flannel/mesh.yaml", "utf8"), "yaml");
const index = indexSnapshot(snapshot); // once per snapshot; every compileNode call shares it

for (const [cluster, name] of [
  ["east", "node-1"],
  ["west", "node-2"],
] as const) {
  const node = localNodeFrom(index, cluster, name); // the index finds the node's records without a scan
  const result = compileNode(index, node, { eastWestWaypoint: "cross-cluster" });
  const viaWaypoint = result.diagnostics.filter((d) => d.code === "ENDPOINT_VIA_WAYPOINT").length;
  console.log(`${cluster}/${name}: ${result.clusters.length} clusters, ${result.endpoints.length} assignments, ${viaWaypoint} pod routes through a waypoint`);
  for (const d of result.diagnostics) if (d.severity !== "info") console.log(`  ${d.code}: ${d.message}`);
}
