import { compileNode } from "../src/compile/compile-node.js";
import { toXdsResources } from "../src/emit/xds.js";
import { localNodeFrom } from "../src/model/node.js";
import { parseOptions } from "../src/model/options.js";
import { indexSnapshot } from "../src/plan/snapshot-index.js";
import { buildWorkload, WORKLOADS } from "./workloads.js";
const w = buildWorkload(WORKLOADS.W1);
const options = parseOptions({ eastWestWaypoint: "cross-cluster" });
const locals = w.snapshot.nodes.map((n) => localNodeFrom(w.snapshot, n.cluster, n.name));
const index = indexSnapshot({ ...w.snapshot });
const N = Number(process.env.N ?? 300);
let t = performance.now();
const seen = new Set<string>();
const rest = [];
for (const [i, n] of w.snapshot.nodes.entries()) {
  const view = `${n.cluster}/${n.zone}`;
  if (seen.has(view)) rest.push(locals[i]!);
  else { seen.add(view); toXdsResources(compileNode(index, locals[i]!, options)); }
}
console.log("views warmed", seen.size, (performance.now() - t).toFixed(0));
t = performance.now();
const s0 = process.hrtime.bigint();
for (const local of rest.slice(0, N - 1)) toXdsResources(compileNode(index, local, options));
require_write(s0);
console.log("per further node", ((performance.now() - t) / (N - 1)).toFixed(1), "ms");

function require_write(s0: bigint) {
  const e = process.hrtime.bigint();
  (await_import()).writeFileSync("/tmp/drv/prof/windows.json", JSON.stringify([{ label: "9", startUs: Number(s0 / 1000n), endUs: Number(e / 1000n) }]));
}
import * as fs from "node:fs";
function await_import() { return fs; }
