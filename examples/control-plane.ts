// A complete xDS control plane: every node of the mesh gets its clusters, endpoints and listeners
// over ADS (state of the world or delta), recompiled and pushed when the registry changes.
// Run from the repository root after `npm run build`:
//   npx tsx examples/control-plane.ts [mesh.yaml]            a mesh file, reloaded when it changes
//   ETCD_ENDPOINTS=http://127.0.0.1:2379 npx tsx examples/control-plane.ts     an etcd registry
// Then start an Envoy as east/node-1 (see README, "Serving"):
//   aether-xds bootstrap --snapshot testdata/flannel/mesh.yaml --node east/node-1 --ads > envoy.yaml
import { AdsServer, EtcdSource, jsonLogLine, MeshFileSource } from "aether-xds/server";

const source = process.env.ETCD_ENDPOINTS
  ? new EtcdSource({ endpoints: process.env.ETCD_ENDPOINTS.split(",") })
  : new MeshFileSource(process.argv[2] ?? "testdata/flannel/mesh.yaml");

const server = new AdsServer({ compile: { eastWestWaypoint: "cross-cluster" } });
server.on((event) => console.log(jsonLogLine(event))); // connect, push, ack, nack, snapshot, ...
const following = server.follow(source); // a bad update is logged; the last good snapshot stays

const address = await server.listen(process.env.ADS_ADDRESS ?? "127.0.0.1:18000");
console.log(JSON.stringify({ event: "listening", address }));

process.once("SIGINT", async () => {
  await source.close();
  await following;
  await server.close();
});
