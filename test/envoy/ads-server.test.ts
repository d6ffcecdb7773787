/**
 * A real Envoy on the ADS server: started with `aether-xds bootstrap --ads`'s bootstrap (nothing
 * inline), it gets its clusters, their assignments and its listeners over ADS and ACKs each, and
 * a registry change (`setSnapshot`, or `setSnapshotAsync` over delta) reaches the health of its
 * hosts. The mesh is the example with no pod netns on the
 * node under test (so it binds no listener in a namespace that does not exist here) and the waypoint off; no SDS
 * server runs, so Envoy warms its TLS clusters after SDS's initial fetch timeout.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { renderBootstrap, toBootstrap } from "../../src/entry/bootstrap.js";
import { compileNode, localNodeFrom, type Snapshot, withServiceRecords, type XdsTypeUrl } from "../../src/entry/index.js";
import { outboundStatName } from "../../src/entry/naming.js";
import { AdsServer } from "../../src/entry/server.js";
import { SOURCE_IDENTITY_FLOORS } from "../../src/model/envoy-version.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { meshDocument } from "../support/fixtures.js";
import { discoverEnvoys, envoysAtLeast } from "./support/binaries.js";
import type { RenderedBootstrap } from "./support/bootstrap-transforms.js";
import { freeLoopbackPort, startEnvoy } from "./support/envoy-process.js";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster" as XdsTypeUrl;
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment" as XdsTypeUrl;
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener" as XdsTypeUrl;
const OPTIONS = { eastWestWaypoint: "off", sds: { grpcCluster: "sds_grpc" } } as const;
/** The payments cluster's stats, under its alt_stat_name. */
const PAYMENTS_STATS = `cluster.${outboundStatName({ namespace: "team-b", service: "payments", port: 8443 })}`;

// selector mode (the default): the certificate selector needs Envoy 1.38.
const FLOOR = SOURCE_IDENTITY_FLOORS.selector;
const found = envoysAtLeast(discoverEnvoys().found, FLOOR);
if (found.length === 0) test.skip(`no Envoy at or above ${FLOOR}`, () => {});
const dir = mkdtempSync(join(tmpdir(), "aether-envoy-ads-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type MeshRecord = { clusterName: string; kubernetesMetadata: { nodeName: string }; containerMetadata: { networkNamespace?: string } };

/**
 * The example mesh with no pod network namespace on east/node-1, the node under test. Only there:
 * a record without a netns is left out of every node's EDS, so the other pods keep theirs.
 */
function meshWithoutNetns(): Snapshot {
  const doc = meshDocument();
  for (const records of Object.values(doc.services) as MeshRecord[][]) {
    for (const record of records) {
      if (record.clusterName === "east" && record.kubernetesMetadata.nodeName === "node-1") delete record.containerMetadata.networkNamespace;
    }
  }
  return parseSnapshot(doc);
}

const PROTOCOLS = [
  ["state of the world", "GRPC"],
  ["delta", "DELTA_GRPC"],
] as const;

describe.each(found.map((envoy) => [envoy.version, envoy] as const))("Envoy %s on the ADS server", (_, envoy) => {
  test.each(PROTOCOLS)("%s: gets CDS, EDS and LDS over ADS, ACKs each, and follows a registry change", async (protocol, apiType) => {
    const snapshot = meshWithoutNetns();
    const server = new AdsServer({ snapshot, compile: OPTIONS });
    const port = Number((await server.listen("127.0.0.1:0")).split(":").pop());
    const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), OPTIONS);
    const bootstrap = renderBootstrap(
      toBootstrap(result, {
        resources: "ads",
        xdsCluster: { address: "127.0.0.1", port },
        sdsCluster: { address: "127.0.0.1", port: await freeLoopbackPort() },
      }),
    ) as RenderedBootstrap & { dynamic_resources: { ads_config: { api_type: string } } };
    bootstrap.dynamic_resources.ads_config.api_type = apiType; // the bootstrap's is GRPC; Envoy speaks delta with DELTA_GRPC
    const kinds = new Set<string>();
    server.on((event) => event.event === "connect" && kinds.add(event.kind));
    const proxy = await startEnvoy({ envoy, bootstrap, dir, name: `ads-${envoy.version}-${apiType}`, readyTimeoutMs: 60_000 });
    try {
      for (const url of [CDS, EDS, LDS]) await server.acked("east/node-1", url, undefined, 60_000);
      const stats = await proxy.stats();
      // Every compiled cluster, plus the two static ones (ADS and SDS).
      expect(stats.get("cluster_manager.active_clusters")).toBe(result.clusters.length + 2);
      expect(stats.get("cluster_manager.cds.update_rejected") ?? 0).toBe(0);
      expect(stats.get("listener_manager.lds.update_rejected") ?? 0).toBe(0);
      const healthy = `${PAYMENTS_STATS}.membership_healthy`;
      const before = stats.get(healthy);
      expect(before, `${healthy} in ${[...stats.keys()].filter((k) => k.startsWith(PAYMENTS_STATS)).join(", ")}`).toBeGreaterThan(0);
      // A healthy payments pod on east/node-3 fails its probe.
      const records = [...snapshot.services.get("team-b/payments" as never)!].map((r) =>
        r.kubernetesMetadata.podName === "payments-6f8d-p2" ? { ...r, health: "UNHEALTHY" as const } : r,
      );
      // Served at once (state of the world) or a slice at a time (delta): Envoy sees the same push.
      const next = withServiceRecords(snapshot, "team-b/payments", records);
      if (protocol === "delta") await server.setSnapshotAsync(next);
      else server.setSnapshot(next);
      await server.acked("east/node-1", EDS, undefined, 30_000);
      await proxy.waitForStat(healthy, (value) => value === before! - 1);
      expect([...kinds]).toEqual([protocol === "delta" ? "delta" : "sotw"]);
    } finally {
      await proxy.stop();
      await server.close();
    }
  });
});
