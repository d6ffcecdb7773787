// The heart of a delta-xDS server: keep the snapshot and its index current as registry events
// arrive, compile a node, diff against what it already has, send only the changes. Wire `push`
// to your gRPC DeltaAggregatedResources stream; here it prints.
// Run from the repository root after `npm run build`: npx tsx examples/xds-server.ts
import { readFileSync } from "node:fs";
import {
  compileNode,
  diffResources,
  indexSnapshot,
  localNodeFrom,
  parseMeshFile,
  toXdsResources,
  withNodes,
  withServiceRecords,
  type XdsResources,
  type XdsTypeUrl,
} from "aether-xds";

let snapshot = parseMeshFile(readFileSync("testdata/flannel/mesh.yaml", "utf8"), "yaml");
let index = indexSnapshot(snapshot);

/** A registry watch event: one service's records replaced. Only that service is indexed again. */
function onServiceChange(key: string, records: readonly unknown[]): void {
  snapshot = withServiceRecords(snapshot, key, records); // validated like parseSnapshot
  index = indexSnapshot(snapshot, index);
}

/** A node list event (a node turned not ready, moved zone, came or went). Only services with pods there are indexed again. */
function onNodesChange(nodes: readonly unknown[]): void {
  snapshot = withNodes(snapshot, nodes);
  index = indexSnapshot(snapshot, index);
}

/** What each connected node has acknowledged, by "<cluster>/<node>". */
const acknowledged = new Map<string, XdsResources>();

function push(cluster: string, name: string): void {
  const node = localNodeFrom(index, cluster, name); // the index finds the node's records without a scan
  const next = toXdsResources(compileNode(index, node, { eastWestWaypoint: "cross-cluster" }));
  const diff = diffResources(acknowledged.get(`${cluster}/${name}`), next);
  for (const [typeUrl, { added, changed, removed }] of Object.entries(diff) as [XdsTypeUrl, (typeof diff)[XdsTypeUrl]][]) {
    const changedNames = new Set([...added, ...changed]);
    // A DeltaDiscoveryResponse: Resource{name, version, resource} for what changed, plus removals.
    const resources = next[typeUrl].filter((resource) => changedNames.has(resource.name));
    if (resources.length === 0 && removed.length === 0) continue;
    const kind = typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
    console.log(`${kind}: ${resources.map((r) => `${r.name}@${r.version}`).join(", ") || "-"}${removed.length ? `; removed ${removed.join(", ")}` : ""}`);
  }
  acknowledged.set(`${cluster}/${name}`, next); // in a real server: once the node ACKs
}

console.log("# east/node-1 connects: everything");
push("east", "node-1");
console.log("# west's unhealthy payments pod recovers: one assignment changes");
const payments = snapshot.services.get("team-b/payments") ?? [];
onServiceChange(
  "team-b/payments",
  payments.map((record) => (record.health === "UNHEALTHY" ? { ...record, health: "HEALTHY" } : record)),
);
push("east", "node-1");
console.log("# west/node-1 turns not ready: the assignment with a waypoint endpoint there changes");
onNodesChange(snapshot.nodes.map((node) => (node.cluster === "west" && node.name === "node-1" ? { ...node, ready: false } : node)));
push("east", "node-1");
