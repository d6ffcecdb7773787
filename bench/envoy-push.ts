/**
 * `npm run bench:envoy`: how long a registry change takes to reach traffic on a real Envoy, as a
 * ratio to one node's compile. Reported, no target yet (issue 16, item 4).
 *
 *   node --import tsx bench/envoy-push.ts [--rounds N]
 *
 * Three nodes of the bundled mesh run a real Envoy each (the newest one installed; the mesh lab of
 * test/envoy/support, loopback addresses, no root needed): east/node-1 with the frontend pod,
 * east/node-2 with east's checkout pod, west/node-2 with west's and the waypoint, all served EDS by
 * aether-xds/server over ADS. Each round flips east's checkout pods between unhealthy and healthy
 * in the registry; the clock runs from handing the new snapshot to the server (`setSnapshot`:
 * recompile, push) until the first request from east's frontend (sent in a tight loop to its
 * egress listener) lands on the other tier — the push, Envoy applying it, and the request; the
 * time until the server sees east/node-1's EDS ACK is shown beside it. "Compile" is `compileNode` for east/node-1 on
 * the same snapshot (median of many).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileNode } from "../src/compile/compile-node.js";
import { localNodeFrom } from "../src/model/node.js";
import type { OptionsInput } from "../src/model/options.js";
import { parseSnapshot } from "../src/model/snapshot.js";
import { compareVersions, discoverEnvoys } from "../test/envoy/support/binaries.js";
import { startMeshLab } from "../test/envoy/support/mesh-lab.js";
import type { MeshDocument } from "../test/envoy/support/netns.js";
import { meshDocument } from "../test/support/fixtures.js";
import { formatMs, timeIt } from "./measure.js";

const SOURCE = "east/team-a/frontend-7d9f-abcde";
const AUTHORITY = "checkout.team-a.mesh.aether:8080";

function withEastCheckout(health: "HEALTHY" | "UNHEALTHY"): MeshDocument {
  const document = meshDocument() as MeshDocument;
  for (const record of document.services["team-a/checkout"]!) if (record.clusterName === "east") (record as { health?: string }).health = health;
  return document;
}

/** One request from the frontend's app to its egress listener; the pod that answered. */
function answeredBy(target: { host: string; port: number }): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path: "/", headers: { host: AUTHORITY }, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => (res.statusCode === 200 ? resolve((JSON.parse(body) as { app: string }).app) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

async function main(): Promise<void> {
  const roundsAt = process.argv.indexOf("--rounds");
  const rounds = roundsAt >= 0 ? Number(process.argv[roundsAt + 1]) : 10;
  const envoy = [...discoverEnvoys().found].sort((a, b) => compareVersions(b.version, a.version))[0];
  if (!envoy) throw new Error("no Envoy found: run scripts/install-envoy.sh, or set AETHER_ENVOY_BIN");
  const options: OptionsInput = { eastWestWaypoint: "cross-cluster", sourceIdentity: compareVersions(envoy.version, "1.38") >= 0 ? "selector" : "sockets" };
  const dir = mkdtempSync(join(tmpdir(), "aether-bench-envoy-"));
  const lab = await startMeshLab({
    envoy,
    document: withEastCheckout("HEALTHY"),
    envoyNodes: ["east/node-1", "east/node-2", "west/node-2"],
    options,
    tag: "bench",
    dir,
    mode: "loopback",
  });
  try {
    const egress = lab.egress(SOURCE);
    const tiers = { HEALTHY: "checkout-5c6b-x1", UNHEALTHY: "checkout-9a1e-y" } as const;
    if (!(await answeredBy(egress)).startsWith(tiers.HEALTHY)) throw new Error("the first request did not land on east's checkout");
    const samples: number[] = [];
    const acks: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const health = round % 2 === 0 ? "UNHEALTHY" : "HEALTHY";
      const document = withEastCheckout(health);
      const started = performance.now();
      lab.update(document);
      void lab.applied("east/node-1").then(() => acks.push(performance.now() - started));
      for (;;) {
        const app = await answeredBy(egress);
        if (app.startsWith(tiers[health])) break;
      }
      samples.push(performance.now() - started);
    }
    const compiled = lab.topology.meshDocument(withEastCheckout("UNHEALTHY"));
    const compile = timeIt(
      { warmup: 5, repeats: 51 },
      () => parseSnapshot(compiled),
      (snapshot) => compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), options),
    );
    const sorted = [...samples].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const ackMedian = [...acks].sort((a, b) => a - b)[Math.floor(acks.length / 2)];
    console.log(`Envoy ${envoy.version} (${options.sourceIdentity}), ${rounds} registry changes (east's checkout unhealthy ↔ healthy):`);
    console.log(`  registry change → first request on the new tier: median ${formatMs(median)} (min ${formatMs(sorted[0]!)}, max ${formatMs(sorted.at(-1)!)})`);
    if (ackMedian !== undefined)
      console.log(
        `  registry change → east/node-1's EDS ACK at the server: median ${formatMs(ackMedian)} (Envoy ACKs after applying; a request can land first)`,
      );
    console.log(`  one node's compile (east/node-1): median ${formatMs(compile.median)}`);
    console.log(`  ratio: ${(median / compile.median).toFixed(1)} × one node's compile (reported; no target yet)`);
  } finally {
    await lab.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
