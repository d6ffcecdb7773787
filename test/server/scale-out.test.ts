/**
 * Scale-out: two `aether-xds serve` processes watching one etcd serve the same bytes and versions
 * to the same node — before and after a registry change — so Envoys can sit behind a load balancer
 * and reconnect to either server without a resend.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { encodeServiceEndpoint } from "../../src/model/registry.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { type EtcdServer, endpointEntryKey, etcdSuiteEnabled, registryEntries, startEtcd, writeAtomically } from "../support/etcd.js";
import { meshDocument } from "../support/fixtures.js";
import { AdsClient, CDS, EDS, LDS, type SotwResponse } from "./ads-client.js";
import { type ServeProcess, startServe } from "./serve-support.js";

const enabled = etcdSuiteEnabled("the scale-out suite (test/server/scale-out.test.ts)");
const PREFIX = "/scale-out/aether/v1";
const NODE = { id: "east/node-1", cluster: "east" };

let etcd: EtcdServer;
const servers: ServeProcess[] = [];
const clients: AdsClient<SotwResponse>[] = [];

beforeAll(async () => {
  if (!enabled) return;
  etcd = await startEtcd();
  await writeAtomically(etcd.client, registryEntries(PREFIX, meshDocument()));
  for (let i = 0; i < 2; i++) {
    servers.push(await startServe(["--etcd", etcd.endpoint, "--prefix", PREFIX, "--listen", "127.0.0.1:0", "--mode", "cross-cluster"]));
  }
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const s of servers) await s.stop();
  await etcd?.stop();
});

/** Warms east/node-1 up on one server (CDS, EDS for every assignment CDS names, LDS), each ACKed. */
async function warm(ads: AdsClient<SotwResponse>): Promise<SotwResponse[]> {
  const responses: SotwResponse[] = [];
  for (const type_url of [CDS, EDS, LDS]) {
    const resource_names = type_url === EDS ? ["checkout.team-a.mesh.aether:8080", "checkout.team-a.mesh.aether:9090", "payments.team-b.mesh.aether:8443"] : [];
    ads.send({ node: NODE, type_url, resource_names });
    const response = await ads.next();
    ads.send({ node: NODE, type_url, resource_names, version_info: response.version_info, response_nonce: response.nonce });
    responses.push(response);
  }
  return responses;
}

/** What a response carries, without its nonce (each stream numbers its own). */
function content(response: SotwResponse) {
  return {
    type_url: response.type_url,
    version_info: response.version_info,
    resources: (response.resources ?? []).map((any) => Buffer.from(any.value).toString("base64")),
  };
}

test.runIf(enabled)(
  "two servers on one etcd serve the same bytes and versions, before and after a change",
  async () => {
    for (const s of servers) clients.push(new AdsClient<SotwResponse>(s.address, "StreamAggregatedResources"));
    const [a, b] = await Promise.all(clients.map(warm));
    expect(a!.map(content)).toEqual(b!.map(content));
    expect(a!.map((r) => (r.resources ?? []).length)).toEqual([expect.any(Number), 3, expect.any(Number)]);

    const doc = meshDocument();
    for (const record of doc.services["team-b/payments"]) if (record.health === "UNHEALTHY") record.health = "HEALTHY";
    const record = parseSnapshot(doc)
      .services.get("team-b/payments" as never)!
      .find((r) => r.kubernetesMetadata.podName === "payments-2b7c-q1")!;
    await etcd.client.put(endpointEntryKey(PREFIX, "team-b/payments", record)).value(Buffer.from(encodeServiceEndpoint(record)));
    const [pushedA, pushedB] = await Promise.all(clients.map((c) => c.next()));
    expect(content(pushedA!)).toEqual(content(pushedB!));
    expect(pushedA!.type_url).toBe(EDS);
    expect(pushedA!.version_info).not.toBe(a![1]!.version_info);
  },
  60_000,
);
