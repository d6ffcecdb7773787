// A consumer's ES module, run against the installed tarball (test/package.test.ts): every entry
// point imports, the bundled example compiles and checks, and deep paths stay closed.
import { readFileSync } from "node:fs";
import { compileNode, indexSnapshot, localNodeFrom, parseMeshFile, toXdsResources } from "aether-xds";
import { toBootstrap } from "aether-xds/bootstrap";
import { Cluster_DiscoveryType } from "aether-xds/envoy";
import { outboundClusterName } from "aether-xds/naming";
import { AdsServer } from "aether-xds/server";
import { verifyMesh } from "aether-xds/verify";

const snapshot = parseMeshFile(readFileSync("node_modules/aether-xds/testdata/flannel/mesh.yaml", "utf8"));
const index = indexSnapshot(snapshot);
const result = compileNode(index, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
const resources = Object.values(toXdsResources(result)).flat().length;
const edsClusters = result.clusters.filter((cluster) => cluster.type === Cluster_DiscoveryType.EDS).length;
const check = verifyMesh(index, { eastWestWaypoint: "cross-cluster" }).ok;
const bootstrap = toBootstrap(result).static_resources.listeners.length;
const schema = JSON.parse(readFileSync(new URL(import.meta.resolve("aether-xds/schema/mesh-file.schema.json")), "utf8")).title;
const served = new AdsServer({ snapshot }).setSnapshot(snapshot);
const deep = await import("aether-xds/dist/src/naming.js").then(
  () => "open",
  (error) => error.code,
);
console.log(
  JSON.stringify({
    resources,
    edsClusters,
    check,
    bootstrap,
    schema,
    deep,
    served,
    name: outboundClusterName("mesh.aether", { namespace: "a", service: "b", port: 1 }),
  }),
);
