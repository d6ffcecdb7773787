/**
 * The etcd registry source against a real etcd (started by the suite, stopped by PID): records
 * written to etcd are pushed and decode to exactly what `compileNode` gives for the same mesh; a
 * transaction is one update; a watch resumes after a disconnect and reads afresh when its revision
 * was compacted away; a record that disagrees with its key is left out and reported; and two
 * `aether-xds serve` processes on one etcd serve the same bytes and versions to the same node —
 * before and after a change — so Envoys can sit behind a load balancer and reconnect to either.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { compileNode, localNodeFrom, type Snapshot, toXdsResources } from "../../src/entry/index.js";
import { AdsServer, EtcdSource, type ServerEvent } from "../../src/entry/server.js";
import { encodeServiceEndpoint } from "../../src/model/registry.js";
import { changesSince, parseSnapshot } from "../../src/model/snapshot.js";
import { nodeStatusKey } from "../../src/server/etcd-keys.js";
import { CuttableProxy, type EtcdServer, endpointEntryKey, etcdSuiteEnabled, registryEntries, startEtcd, writeAtomically } from "../support/etcd.js";
import { meshDocument } from "../support/fixtures.js";
import { AdsClient, CDS, EDS, LDS, type SotwResponse } from "./ads-client.js";
import { startServe } from "./serve-support.js";

const enabled = etcdSuiteEnabled("the etcd registry suites (test/server/etcd-source.test.ts)");
/** What the server compiles with: SDS from the agent's cluster (its default). */
const OPTIONS = { eastWestWaypoint: "cross-cluster", sds: { grpcCluster: "sds_grpc" } } as const;
const NODE = { id: "east/node-1" };

let etcd: EtcdServer;
let prefixCount = 0;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  if (enabled) etcd = await startEtcd();
}, 30_000);

afterAll(async () => {
  await etcd?.stop();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A fresh prefix holding the example mesh (or `doc`), written in one transaction. */
async function seed(doc = meshDocument()): Promise<string> {
  const prefix = `/t${++prefixCount}/aether/v1`;
  await writeAtomically(etcd.client, registryEntries(prefix, doc));
  return prefix;
}

async function serve(prefix: string, endpoint = etcd.endpoint) {
  const source = new EtcdSource({ endpoints: [endpoint], prefix });
  const server = new AdsServer({ compile: OPTIONS });
  const events: ServerEvent[] = [];
  server.on((event) => events.push(event));
  const target = await server.listen("127.0.0.1:0");
  void server.follow(source);
  cleanups.push(
    () => server.close(),
    () => source.close(),
  );
  await expect.poll(() => server.snapshot, { timeout: 10_000 }).toBeDefined();
  return { server, events, target };
}

function client(target: string): AdsClient<SotwResponse> {
  const ads = new AdsClient<SotwResponse>(target, "StreamAggregatedResources");
  cleanups.push(() => ads.close());
  return ads;
}

function expected(snapshot: Snapshot) {
  return toXdsResources(compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), OPTIONS));
}

function bytes(response: SotwResponse): Buffer[] {
  return (response.resources ?? []).map((any) => Buffer.from(any.value));
}

/** Every type for east/node-1, each ACKed; the EDS request names every assignment. */
async function warm(ads: AdsClient<SotwResponse>, names: readonly string[]) {
  const out: Record<string, SotwResponse> = {};
  for (const type_url of [CDS, EDS, LDS]) {
    const resource_names = type_url === EDS ? names : [];
    ads.send({ node: NODE, type_url, resource_names });
    const response = await ads.next();
    ads.send({ node: NODE, type_url, resource_names, version_info: response.version_info, response_nonce: response.nonce });
    out[type_url] = response;
  }
  return out as Record<typeof CDS | typeof EDS | typeof LDS, SotwResponse>;
}

/** The example mesh with west's unhealthy payments pod healthy. */
function recoveredDoc() {
  const doc = meshDocument();
  for (const record of doc.services["team-b/payments"]) if (record.health === "UNHEALTHY") record.health = "HEALTHY";
  return doc;
}

/** West's payments pod that `recoveredDoc()` makes healthy, as it is there. */
function recoveredRecord() {
  return parseSnapshot(recoveredDoc())
    .services.get("team-b/payments" as never)!
    .find((r) => r.kubernetesMetadata.podName === "payments-2b7c-q1")!;
}

/** The one etcd write that makes the example mesh `recoveredDoc()`. */
function recoveryWrite(prefix: string): [string, Buffer] {
  const record = recoveredRecord();
  return [endpointEntryKey(prefix, "team-b/payments", record), Buffer.from(encodeServiceEndpoint(record))];
}

/** A second pod of checkout named as frontend's first pod on the same node: two services claim one pod, so it is refused. */
function clashingCheckoutWrite(prefix: string): [string, Buffer] {
  const frontendPod = parseSnapshot(meshDocument()).services.get("team-a/frontend" as never)![0]!;
  const clash = { ...frontendPod, ip: "10.244.1.99" };
  return [endpointEntryKey(prefix, "team-a/checkout", clash), Buffer.from(encodeServiceEndpoint(clash))];
}

/** The example mesh seeded and served: the first snapshot served, and a count of the snapshots served so far. */
async function servedFromSeed() {
  const prefix = await seed();
  const served = await serve(prefix);
  const snapshots = () => served.events.filter((e) => e.event === "snapshot").length;
  return { prefix, ...served, before: served.server.snapshot!, snapshots };
}

/** The example mesh served through a proxy the test can cut, with a client warmed on every assignment. */
async function servedBehindProxy() {
  const prefix = await seed();
  const proxy = new CuttableProxy(etcd.port);
  const endpoint = await proxy.start();
  cleanups.push(() => proxy.stop());
  const served = await serve(prefix, endpoint);
  const ads = client(served.target);
  const first = await warm(
    ads,
    expected(parseSnapshot(meshDocument()))[EDS].map((r) => r.name),
  );
  return { prefix, proxy, ads, first, ...served };
}

/** The example mesh's assignments with payments recovered, as bytes: what `recoveryWrite` is pushed as. */
function recoveredAssignments(): Buffer[] {
  return expected(parseSnapshot(recoveredDoc()))[EDS].map((r) => Buffer.from(r.resource.value!));
}

/** `writes` made while the source's watch is cut off (then compacted past, if `compacted`), and the push once it is back. */
async function pushedAfterGap(
  { proxy, ads }: { proxy: CuttableProxy; ads: AdsClient<SotwResponse> },
  writes: readonly (readonly [string, Buffer])[],
  compacted: boolean,
): Promise<SotwResponse> {
  proxy.cut();
  let revision = "0";
  for (const [key, value] of writes) revision = (await etcd.client.put(key).value(value).exec()).header.revision;
  if (compacted) await compactPast(revision);
  proxy.restore();
  return ads.next(20_000);
}

/** Compacts etcd past revision `revision`: a watch from it or before is cancelled. */
async function compactPast(revision: string | number): Promise<void> {
  await etcd.client.put("/unrelated").value("x"); // the revision after it, so the compaction covers it
  await etcd.client.kv.compact({ revision: String(BigInt(revision) + 1n), physical: true });
}

describe.runIf(enabled)("etcd registry source", () => {
  test("records written to etcd are pushed and decode to exactly compileNode's resources on the same mesh", async () => {
    const prefix = await seed();
    const { target } = await serve(prefix);
    const want = expected(parseSnapshot(meshDocument()));
    const ads = client(target);
    const got = await warm(
      ads,
      want[EDS].map((r) => r.name),
    );
    for (const url of [CDS, EDS, LDS] as const) expect(bytes(got[url])).toEqual(want[url].map((r) => Buffer.from(r.resource.value!)));

    const [key, value] = recoveryWrite(prefix);
    await etcd.client.put(key).value(value);
    const pushed = await ads.next();
    expect(pushed.type_url).toBe(EDS);
    expect(bytes(pushed)).toEqual(recoveredAssignments());
  });

  test("a transaction touching several services is one snapshot", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const before = events.filter((e) => e.event === "snapshot").length;
    const doc = meshDocument();
    for (const service of ["team-a/checkout", "team-b/payments"]) for (const record of doc.services[service]) record.weight = 7;
    const changed = new Map([...registryEntries(prefix, doc)].filter(([key]) => /\/services\/(checkout|payments)\//.test(key)));
    await writeAtomically(etcd.client, changed);
    await expect.poll(() => events.filter((e) => e.event === "snapshot").length).toBe(before + 1);
    const weights = [...server.snapshot!.services.values()].flat().filter((r) => r.weight === 7);
    expect(weights).toHaveLength(changed.size);
  });

  test("after a disconnect the watch resumes from its last revision: a change made meanwhile is pushed", async () => {
    const served = await servedBehindProxy();
    const { prefix, first, events } = served;
    const pushed = await pushedAfterGap(served, [recoveryWrite(prefix)], false);
    expect(pushed.version_info).not.toBe(first[EDS].version_info);
    expect(bytes(pushed)).toEqual(recoveredAssignments());
    expect(events.filter((e) => e.event === "source-error")).toEqual([]);
  }, 30_000);

  test("a watch whose revision was compacted away reads everything afresh; what changed meanwhile is only records, so it is an update", async () => {
    const served = await servedBehindProxy();
    const { prefix, server } = served;
    const before = server.snapshot!;
    const pushed = await pushedAfterGap(served, [recoveryWrite(prefix)], true);
    expect(bytes(pushed)).toEqual(recoveredAssignments());
    // Read afresh, yet derived from the snapshot before: the index redoes only payments.
    expect(server.snapshot!.nodes).toBe(before.nodes);
    expect(changesSince(server.snapshot!, before)).toEqual(new Set(["team-b/payments"]));
  }, 30_000);

  test("a re-read after a compaction that does not validate as a whole is applied service by service: a change made meanwhile is served while a refused record's service keeps its last good records", async () => {
    const served = await servedBehindProxy();
    const { prefix, server, events } = served;
    const before = server.snapshot!;
    // With the clashing write, the registry no longer parses as a whole.
    const pushed = await pushedAfterGap(served, [recoveryWrite(prefix), clashingCheckoutWrite(prefix)], true);
    expect(bytes(pushed)).toEqual(recoveredAssignments());
    expect(server.snapshot!.services.get("team-a/checkout" as never)).toEqual(before.services.get("team-a/checkout" as never));
    const errors = events.filter((e) => e.event === "source-error").map((e) => (e as { error: string }).error);
    expect(errors.join("\n")).toMatch(/service team-a\/checkout keeps its last good records: .*pod team-a\/frontend-7d9f-abcde on node east\/node-1/s);
  }, 30_000);

  test("a transaction moving a pod from one service to another is served as written: the services are checked together", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const before = events.filter((e) => e.event === "snapshot").length;
    const moving = parseSnapshot(meshDocument()).services.get("team-a/frontend" as never)![0]!;
    // checkout sorts first: one service at a time, it would claim the pod while frontend still did.
    await etcd.client
      .if("/never-written", "Version", "==", 0)
      .then(
        etcd.client.delete().key(endpointEntryKey(prefix, "team-a/frontend", moving)),
        etcd.client.put(endpointEntryKey(prefix, "team-a/checkout", moving)).value(Buffer.from(encodeServiceEndpoint(moving))),
      )
      .commit();
    await expect.poll(() => events.filter((e) => e.event === "snapshot").length).toBe(before + 1);
    const pods = (service: string) => server.snapshot!.services.get(service as never)!.map((record) => record.kubernetesMetadata.podName);
    expect(pods("team-a/checkout")).toContain(moving.kubernetesMetadata.podName);
    expect(pods("team-a/frontend")).not.toContain(moving.kubernetesMetadata.podName);
    expect(events.filter((e) => e.event === "source-error")).toEqual([]);
  });

  test("a transaction with one service's records refused serves the others; the refused one keeps its last good records", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const snapshot = parseSnapshot(meshDocument());
    const payments = snapshot.services.get("team-b/payments" as never)!.map((record) => ({ ...record, weight: 7 }));
    await writeAtomically(
      etcd.client,
      new Map([
        clashingCheckoutWrite(prefix),
        ...payments.map((record) => [endpointEntryKey(prefix, "team-b/payments", record), Buffer.from(encodeServiceEndpoint(record))] as const),
      ]),
    );
    await expect.poll(() => events.find((e) => e.event === "source-error")).toBeDefined();
    expect((events.find((e) => e.event === "source-error") as { error: string }).error).toMatch(
      /service team-a\/checkout keeps its last good records: .*pod team-a\/frontend-7d9f-abcde on node east\/node-1/s,
    );
    await expect.poll(() => server.snapshot!.services.get("team-b/payments" as never)!.every((record) => record.weight === 7)).toBe(true);
    expect(server.snapshot!.services.get("team-a/checkout" as never)).toEqual(snapshot.services.get("team-a/checkout" as never));
  });

  test("a transaction moving a pod beside a refused record: the move is served, checked as one update; the refused service keeps its records", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const snapshot = parseSnapshot(meshDocument());
    const moving = snapshot.services.get("team-a/frontend" as never)![0]!;
    const payments = snapshot.services.get("team-b/payments" as never)!;
    // A second payments record naming its first pod: payments is refused.
    const twin = { ...payments[0]!, ip: "10.244.2.99" };
    // checkout sorts before frontend: applied one service at a time, it would claim the pod while
    // frontend still did, and be refused too.
    await etcd.client
      .if("/never-written", "Version", "==", 0)
      .then(
        etcd.client.delete().key(endpointEntryKey(prefix, "team-a/frontend", moving)),
        etcd.client.put(endpointEntryKey(prefix, "team-a/checkout", moving)).value(Buffer.from(encodeServiceEndpoint(moving))),
        etcd.client.put(endpointEntryKey(prefix, "team-b/payments", twin)).value(Buffer.from(encodeServiceEndpoint(twin))),
      )
      .commit();
    await expect.poll(() => events.find((e) => e.event === "source-error")).toBeDefined();
    const error = (events.find((e) => e.event === "source-error") as { error: string }).error;
    expect(error).toMatch(/service team-b\/payments keeps its last good records/);
    expect(error).not.toMatch(/team-a/);
    const pods = (service: string) => server.snapshot!.services.get(service as never)!.map((record) => record.kubernetesMetadata.podName);
    await expect.poll(() => pods("team-a/checkout")).toContain(moving.kubernetesMetadata.podName);
    expect(pods("team-a/frontend")).not.toContain(moving.kubernetesMetadata.podName);
    expect(server.snapshot!.services.get("team-b/payments" as never)).toEqual(payments);
  });

  test("a node's status written is served as an update of the last snapshot; written again unchanged, it is not served", async () => {
    const { prefix, server, before, snapshots } = await servedFromSeed();
    const served = snapshots();
    const west1 = before.nodes.find((node) => node.cluster === "west" && node.name === "node-1")!;
    const key = nodeStatusKey(prefix, { region: west1.region || "none", cluster: "west", node: "node-1" });
    await etcd.client.put(key).value(JSON.stringify({ ip: west1.ip, zone: west1.zone, ready: false }));
    await expect.poll(snapshots).toBe(served + 1);
    const after = server.snapshot!;
    expect(after.mesh).toBe(before.mesh);
    expect(after.nodes.find((node) => node.cluster === "west" && node.name === "node-1")!.ready).toBe(false);
    expect(changesSince(after, before)).toEqual(new Set());
    // The same status again: parsed again, nothing changed, nothing served.
    await etcd.client.put(key).value(JSON.stringify({ ip: west1.ip, zone: west1.zone, ready: false }));
    await etcd.client.put(endpointEntryKey(prefix, "team-b/payments", recoveredRecord())).value(Buffer.from(encodeServiceEndpoint(recoveredRecord())));
    const healthy = () => server.snapshot!.services.get("team-b/payments" as never)!.every((record) => record.health !== "UNHEALTHY");
    await expect.poll(healthy).toBe(true);
    expect(snapshots()).toBe(served + 2);
    expect(server.snapshot!.nodes).toBe(after.nodes);
  });

  /** The example mesh's settings (the `<prefix>/mesh` value), changed by `change`. */
  function settingsValue(change: (doc: ReturnType<typeof meshDocument>) => void): string {
    const doc = meshDocument();
    change(doc);
    const { nodes: _nodes, services: _services, ...settings } = doc;
    return JSON.stringify(settings);
  }

  test("a settings write changing dependencies is served as an update of the records served, even while a refused record sits in etcd; a bad one is reported and the last good settings stay", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const errors = () => events.filter((e) => e.event === "source-error").map((e) => (e as { error: string }).error);
    // Refused: checkout keeps its records.
    const [clashKey, clash] = clashingCheckoutWrite(prefix);
    await etcd.client.put(clashKey).value(clash);
    await expect.poll(() => errors().length).toBe(1);
    const before = server.snapshot!;
    const snapshots = () => events.filter((e) => e.event === "snapshot").length;
    const served = snapshots();

    // Validated with the records served, not with etcd's every record (which no longer parse together).
    await etcd.client.put(`${prefix}/mesh`).value(settingsValue((doc) => (doc.dependencies["team-b/payments"] = ["team-a/checkout"])));
    await expect.poll(snapshots).toBe(served + 1);
    const after = server.snapshot!;
    expect(after.dependencies?.get("team-b/payments" as never)).toEqual(["team-a/checkout"]);
    expect(after.mesh).toBe(before.mesh);
    expect(after.services.get("team-a/checkout" as never)).toBe(before.services.get("team-a/checkout" as never));
    expect(changesSince(after, before)).toEqual(new Set());

    await etcd.client.put(`${prefix}/mesh`).value(settingsValue((doc) => (doc.vips["team-b/payments"] = doc.vips["team-a/checkout"])));
    await expect.poll(() => errors().length).toBe(2);
    expect(errors()[1]).toContain("vips");
    expect(server.snapshot).toBe(after);
  });

  test("a settings write changing the mesh settings is parsed whole: the records are read again", async () => {
    const { prefix, server, before, snapshots } = await servedFromSeed();
    const served = snapshots();
    await etcd.client.put(`${prefix}/mesh`).value(settingsValue((doc) => (doc.mesh.meshDomain = "mesh.other")));
    await expect.poll(snapshots).toBe(served + 1);
    const after = server.snapshot!;
    expect(after.mesh.meshDomain).toBe("mesh.other");
    expect(after.services.get("team-a/frontend" as never)![0]).not.toBe(before.services.get("team-a/frontend" as never)![0]);
    expect(changesSince(after, before)).toBeUndefined();
  });

  test("a write under the prefix outside the registry layout is reported and serves nothing", async () => {
    const { prefix, events, server, before, snapshots } = await servedFromSeed();
    const served = snapshots();
    await etcd.client.put(`${prefix}/stray`).value("x");
    await expect.poll(() => events.find((e) => e.event === "source-error")).toBeDefined();
    expect((events.find((e) => e.event === "source-error") as { error: string }).error).toContain(`${prefix}/stray: not a key of the registry layout`);
    expect(snapshots()).toBe(served);
    expect(server.snapshot).toBe(before);
  });

  test("a node's status that does not validate with the others is reported; the nodes keep their last good statuses and the rest of the transaction is served", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const before = server.snapshot!;
    const [west1, west2] = ["node-1", "node-2"].map((name) => before.nodes.find((node) => node.cluster === "west" && node.name === name)!);
    const key = nodeStatusKey(prefix, { region: west2!.region || "none", cluster: "west", node: "node-2" });
    await writeAtomically(etcd.client, new Map([[key, Buffer.from(JSON.stringify({ ip: west1!.ip, zone: west2!.zone, ready: true }))], recoveryWrite(prefix)]));
    await expect.poll(() => events.find((e) => e.event === "source-error")).toBeDefined();
    expect((events.find((e) => e.event === "source-error") as { error: string }).error).toMatch(
      new RegExp(`nodes keep their last good statuses: .*${west1!.ip.replaceAll(".", "\\.")} is also node west/node-1's`, "s"),
    );
    await expect.poll(() => server.snapshot!.services.get("team-b/payments" as never)!.every((record) => record.health !== "UNHEALTHY")).toBe(true);
    expect(server.snapshot!.nodes).toBe(before.nodes);
  });

  test("a service whose last records are deleted is gone, as a fresh read of the same keys finds it, and served as an update", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const before = server.snapshot!;
    const checkout = [...registryEntries(prefix, meshDocument()).keys()].filter((key) => /\/ns\/team-a\/services\/checkout\//.test(key));
    expect(checkout.length).toBeGreaterThan(1);
    await etcd.client
      .if("/never-written", "Version", "==", 0)
      .then(...checkout.map((key) => etcd.client.delete().key(key)))
      .commit();
    await expect.poll(() => server.snapshot!.services.has("team-a/checkout" as never)).toBe(false);
    expect(changesSince(server.snapshot!, before)).toEqual(new Set(["team-a/checkout"]));
    // A server started now reads the same keys: the same services, the same resources.
    const fresh = await serve(prefix);
    expect([...fresh.server.snapshot!.services.keys()]).toEqual([...server.snapshot!.services.keys()]);
    expect(expected(fresh.server.snapshot!)).toEqual(expected(server.snapshot!));
    // A settings write parses everything again: still gone.
    const served = events.filter((e) => e.event === "snapshot").length;
    const settings = JSON.parse(registryEntries(prefix, meshDocument()).get(`${prefix}/mesh`)!.toString());
    settings.dependencies["team-b/payments"] = ["team-a/frontend"];
    await etcd.client.put(`${prefix}/mesh`).value(JSON.stringify(settings));
    await expect.poll(() => events.filter((e) => e.event === "snapshot").length).toBe(served + 1);
    expect(server.snapshot!.dependencies!.get("team-b/payments" as never)).toEqual(["team-a/frontend"]);
    expect(server.snapshot!.services.has("team-a/checkout" as never)).toBe(false);
    expect(events.filter((e) => e.event === "source-error")).toEqual([]);
  });

  test("a record that disagrees with its key is left out and reported with its key; the rest is served", async () => {
    const prefix = await seed();
    const { events, server } = await serve(prefix);
    const [key, value] = recoveryWrite(prefix);
    const wrongKey = key.replace("/clusters/west/", "/clusters/south/");
    await etcd.client.put(wrongKey).value(value);
    await expect.poll(() => events.find((e) => e.event === "source-error")).toBeDefined();
    expect((events.find((e) => e.event === "source-error") as { error: string }).error).toBe(
      `${wrongKey}: clusterName "west" is not the key's cluster "south" (left out)`,
    );
    expect(server.snapshot!.services.get("team-b/payments" as never)).toHaveLength(5);
  });
});

/** What a response carries, without its nonce (each stream numbers its own). */
function content(response: SotwResponse) {
  return { type_url: response.type_url, version_info: response.version_info, resources: bytes(response).map((b) => b.toString("base64")) };
}

describe.runIf(enabled)("scale-out", () => {
  test("two aether-xds serve processes on one etcd serve the same bytes and versions, before and after a change", async () => {
    const prefix = await seed();
    const servers = [];
    for (let i = 0; i < 2; i++) {
      const serve = await startServe(["--etcd", etcd.endpoint, "--prefix", prefix, "--listen", "127.0.0.1:0", "--mode", "cross-cluster"]);
      cleanups.push(async () => void (await serve.stop()));
      servers.push(serve);
    }
    const names = expected(parseSnapshot(meshDocument()))[EDS].map((r) => r.name);
    const clients = servers.map((s) => client(s.address));
    const [a, b] = await Promise.all(clients.map((c) => warm(c, names)));
    for (const url of [CDS, EDS, LDS] as const) expect(content(a![url])).toEqual(content(b![url]));

    const [key, value] = recoveryWrite(prefix);
    await etcd.client.put(key).value(value);
    const [pushedA, pushedB] = await Promise.all(clients.map((c) => c.next()));
    expect(content(pushedA!)).toEqual(content(pushedB!));
    expect(pushedA!.type_url).toBe(EDS);
    expect(pushedA!.version_info).not.toBe(a![EDS].version_info);
  }, 60_000);
});
