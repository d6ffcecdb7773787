// A consumer's CommonJS module, run against the installed tarball (test/package.test.ts): Node's
// require(esm) loads every entry point of the ESM-only package.
const { readFileSync } = require("node:fs");
const { compileNode, indexSnapshot, localNodeFrom, parseMeshFile, toXdsResources } = require("aether-xds");
const { toBootstrap } = require("aether-xds/bootstrap");
const { Cluster_DiscoveryType } = require("aether-xds/envoy");
const { outboundClusterName } = require("aether-xds/naming");
const { AdsServer } = require("aether-xds/server");
const { verifyMesh } = require("aether-xds/verify");

const snapshot = parseMeshFile(readFileSync("node_modules/aether-xds/testdata/flannel/mesh.yaml", "utf8"));
const index = indexSnapshot(snapshot);
const result = compileNode(index, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
const resources = Object.values(toXdsResources(result)).flat().length;
const edsClusters = result.clusters.filter((cluster) => cluster.type === Cluster_DiscoveryType.EDS).length;
const check = verifyMesh(index, { eastWestWaypoint: "cross-cluster" }).ok;
const bootstrap = toBootstrap(result).static_resources.listeners.length;
const schema = JSON.parse(readFileSync(require.resolve("aether-xds/schema/mesh-file.schema.json"), "utf8")).title;
const served = new AdsServer({ snapshot }).setSnapshot(snapshot);
let deep = "open";
try {
  require("aether-xds/dist/src/naming.js");
} catch (error) {
  deep = error.code;
}
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
