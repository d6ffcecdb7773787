/**
 * The ADS server driven by a real gRPC client (grpc-js with Envoy's own discovery protos from
 * @grpc/grpc-js-xds), state of the world and delta: warm-up, ACK, NACK, a registry change, a
 * refused node, a reconnect, and the CDS → EDS → LDS order with clusters removed only after the
 * listeners that used them.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { compileNode, diffResources, localNodeFrom, type Snapshot, toXdsResources, withServiceRecords, type XdsTypeUrl } from "../../src/entry/index.js";
import { AdsServer, type ServerEvent, type SourceUpdate } from "../../src/entry/server.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { Channel } from "../../src/server/source.js";
import { exampleSnapshot, meshDocument } from "../support/fixtures.js";
import { AdsClient, CDS, type DeltaResponse, EDS, LDS, type SotwResponse, upstreamName } from "./ads-client.js";

/** What the server compiles with: SDS from the agent's cluster (its default), never ADS. */
const OPTIONS = { eastWestWaypoint: "off", sds: { grpcCluster: "sds_grpc" } } as const;
const NODE = { id: "east/node-1", cluster: "east" };

function compiled(snapshot: Snapshot | undefined, id: string) {
  if (!snapshot) throw new Error("no snapshot");
  const [cluster, name] = id.split("/") as [string, string];
  return toXdsResources(compileNode(snapshot, localNodeFrom(snapshot, cluster, name), OPTIONS));
}

function version(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, 16);
}

/** Name → content version of each resource in a state-of-the-world response, decoded with upstream's protos. */
function sotwVersions(response: SotwResponse): Map<string, string> {
  return new Map((response.resources ?? []).map((any) => [upstreamName(any), version(any.value)]));
}

/** The mesh with checkout's pod on east/node-3 unhealthy. */
function withCheckoutX2Unhealthy(): Snapshot {
  const doc = meshDocument();
  for (const record of doc.services["team-a/checkout"]) if (record.kubernetesMetadata.podName === "checkout-5c6b-x2") record.health = "UNHEALTHY";
  return parseSnapshot(doc);
}

/** The mesh without frontend's pod on east/node-1: its inbound listener and app cluster go. */
function withoutEastFrontend(): Snapshot {
  const doc = meshDocument();
  doc.services["team-a/frontend"] = doc.services["team-a/frontend"].filter((r: any) => r.clusterName !== "east");
  return parseSnapshot(doc);
}

let server: AdsServer;
let target: string;
let events: ServerEvent[];
const clients: AdsClient<unknown>[] = [];

function client<R>(method: "StreamAggregatedResources" | "DeltaAggregatedResources"): AdsClient<R> {
  const c = new AdsClient<R>(target, method);
  clients.push(c as AdsClient<unknown>);
  return c;
}

beforeEach(async () => {
  server = new AdsServer({ snapshot: exampleSnapshot(), compile: OPTIONS });
  events = [];
  server.on((event) => events.push(event));
  target = await server.listen("127.0.0.1:0");
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
});

const TYPES = [CDS, EDS, LDS];

/** Reads state-of-the-world responses, ACKing each (EDS with `edsNames`), until one for listeners: returns it first, then the ones before it. */
async function sotwUntilListeners(ads: AdsClient<SotwResponse>, edsNames: readonly string[]): Promise<SotwResponse[]> {
  const before: SotwResponse[] = [];
  for (;;) {
    const response = await ads.next();
    if (response.type_url === LDS) return [response, ...before];
    before.push(response);
    // Envoy keeps asking for the assignments of the clusters it has: the retained ones too.
    const names = response.type_url === EDS ? edsNames : [];
    ads.send({ node: NODE, type_url: response.type_url, version_info: response.version_info, response_nonce: response.nonce, resource_names: names });
  }
}

function pushes(node: string, typeUrl?: XdsTypeUrl) {
  return events.filter((e): e is Extract<ServerEvent, { event: "push" }> => e.event === "push" && e.node === node && (!typeUrl || e.typeUrl === typeUrl));
}

/** Warms a state-of-the-world stream up as Envoy does: CDS, EDS for its clusters' names, LDS; each ACKed. */
async function warmSotw(node = NODE) {
  const ads = client<SotwResponse>("StreamAggregatedResources");
  ads.send({ node, type_url: CDS });
  const cds = await ads.next();
  ads.send({ node, type_url: CDS, version_info: cds.version_info, response_nonce: cds.nonce });
  const edsNames = compiled(server.snapshot, node.id)[EDS].map((r) => r.name);
  ads.send({ node, type_url: EDS, resource_names: edsNames });
  const eds = await ads.next();
  ads.send({ node, type_url: EDS, version_info: eds.version_info, response_nonce: eds.nonce, resource_names: edsNames });
  ads.send({ node, type_url: LDS });
  const lds = await ads.next();
  ads.send({ node, type_url: LDS, version_info: lds.version_info, response_nonce: lds.nonce });
  await server.acked(node.id, LDS as XdsTypeUrl);
  return { ads, cds, eds, lds, edsNames };
}

describe("state of the world", () => {
  test("warm-up serves exactly compileNode's resources, EDS narrowed to the requested names, and each ACK is recorded", async () => {
    const expected = compiled(server.snapshot, NODE.id);
    const { cds, eds, lds } = await warmSotw();
    expect(cds.type_url).toBe(CDS);
    expect(cds.resources.map((any) => Buffer.from(any.value))).toEqual(expected[CDS].map((r) => Buffer.from(r.resource.value!)));
    expect(lds.resources.map((any) => Buffer.from(any.value))).toEqual(expected[LDS].map((r) => Buffer.from(r.resource.value!)));
    expect([...sotwVersions(eds)]).toEqual(expected[EDS].map((r) => [r.name, r.version]));
    for (const url of [CDS, EDS, LDS] as XdsTypeUrl[]) expect(server.status(NODE.id, url)).toEqual([expect.objectContaining({ upToDate: true })]);
    expect(events.filter((e) => e.event === "ack").map((e) => (e as { typeUrl: string }).typeUrl)).toEqual([CDS, EDS, LDS]);

    const one = expected[EDS][0]!.name;
    const narrow = client<SotwResponse>("StreamAggregatedResources");
    narrow.send({ node: { id: "east/node-1" }, type_url: EDS, resource_names: [one, "no-such-cluster"] });
    expect([...sotwVersions(await narrow.next()).keys()]).toEqual([one]);
  });

  test("a NACK keeps the last good version: logged with Envoy's detail, nothing resent", async () => {
    const { ads, lds, edsNames } = await warmSotw();
    const good = lds.version_info;
    server.setSnapshot(withoutEastFrontend());
    const [next] = await sotwUntilListeners(ads, edsNames);
    ads.send({ node: NODE, type_url: LDS, version_info: good, response_nonce: next!.nonce, error_detail: { code: 3, message: "listener 'x': bad filter" } });
    await expect
      .poll(() => events.find((e) => e.event === "nack"))
      .toMatchObject({ typeUrl: LDS, version: next!.version_info, kept: good, error: "listener 'x': bad filter" });
    expect(server.status(NODE.id, LDS as XdsTypeUrl)[0]).toMatchObject({ acked: good, upToDate: false });
    expect(pushes(NODE.id, LDS as XdsTypeUrl)).toHaveLength(2);
  });

  test("a registry change pushes exactly the changed assignments, and nothing to a node it does not touch", async () => {
    const one = await warmSotw();
    const other = await warmSotw({ id: "east/node-2", cluster: "east" });
    const before = { one: compiled(server.snapshot, NODE.id), other: compiled(server.snapshot, "east/node-2") };
    const next = withCheckoutX2Unhealthy();
    const diff = diffResources(before.one, compiled(next, NODE.id));
    expect(diffResources(before.other, compiled(next, "east/node-2"))[EDS as XdsTypeUrl].changed).toEqual([]);
    const pushesBefore = { one: pushes(NODE.id).length, other: pushes("east/node-2").length };

    expect(server.setSnapshot(next)).toEqual({ changedNodes: 1, closedStreams: 0 });
    const eds = await one.ads.next();
    expect(eds.type_url).toBe(EDS);
    const old = sotwVersions(one.eds);
    const changed = [...sotwVersions(eds)].filter(([name, v]) => old.get(name) !== v).map(([name]) => name);
    expect(changed).toEqual(diff[EDS as XdsTypeUrl].changed);
    expect(changed.length).toBeGreaterThan(0);
    one.ads.send({ node: NODE, type_url: EDS, version_info: eds.version_info, response_nonce: eds.nonce, resource_names: one.edsNames });
    await server.acked(NODE.id, EDS as XdsTypeUrl, eds.version_info);
    expect(pushes(NODE.id).length).toBe(pushesBefore.one + 1);
    expect(pushes("east/node-2").length).toBe(pushesBefore.other);
    other.ads.close();
  });

  test("a request naming 200,000 resources is answered: a request's names are never passed as call arguments", async () => {
    const ads = client<SotwResponse>("StreamAggregatedResources");
    const one = compiled(server.snapshot, NODE.id)[EDS][0]!.name;
    const unknown = Array.from({ length: 200_000 }, (_, i) => `c${i}`);
    ads.send({ node: NODE, type_url: EDS, resource_names: [one, ...unknown] });
    expect([...sotwVersions(await ads.next()).keys()]).toEqual([one]);
  });

  test("a node that is not in the mesh, or an id that names no node, is refused with a gRPC status", async () => {
    const stranger = client<SotwResponse>("StreamAggregatedResources");
    stranger.send({ node: { id: "east/node-9" }, type_url: CDS });
    expect(await stranger.status).toMatchObject({ code: 5, details: expect.stringContaining("no node east/node-9 in the snapshot") });
    const malformed = client<SotwResponse>("StreamAggregatedResources");
    malformed.send({ node: { id: "node-1" }, type_url: CDS });
    expect(await malformed.status).toMatchObject({ code: 3, details: expect.stringContaining('node id "node-1"') });
    expect(events.filter((e) => e.event === "refused").map((e) => (e as { code: string }).code)).toEqual(["NOT_FOUND", "INVALID_ARGUMENT"]);
  });

  test("a reconnecting Envoy that holds the current version resumes without a resend", async () => {
    const { ads, cds } = await warmSotw();
    ads.close();
    await expect.poll(() => server.connections().length).toBe(0);
    const again = client<SotwResponse>("StreamAggregatedResources");
    again.send({ node: NODE, type_url: CDS, version_info: cds.version_info });
    await server.acked(NODE.id, CDS as XdsTypeUrl, cds.version_info);
    server.setSnapshot(withCheckoutX2Unhealthy()); // changes EDS only: CDS stays as it was
    expect(pushes(NODE.id, CDS as XdsTypeUrl)).toHaveLength(1); // the first stream's
  });

  test("a cluster leaves CDS only after the listeners that used it are ACKed; types go CDS → EDS → LDS", async () => {
    const { ads, cds, edsNames } = await warmSotw();
    const next = withoutEastFrontend();
    const gone = diffResources(compiled(server.snapshot, NODE.id), compiled(next, NODE.id))[CDS as XdsTypeUrl].removed;
    expect(gone.length).toBeGreaterThan(0);
    server.setSnapshot(next);
    const [lds, ...before] = await sotwUntilListeners(ads, edsNames);
    const order = [...before.map((r) => r.type_url), lds!.type_url];
    expect(order).toEqual([...order].sort((a, b) => TYPES.indexOf(a) - TYPES.indexOf(b)));
    // Any CDS before the new listeners still carries the removed clusters ...
    for (const r of before.filter((r) => r.type_url === CDS)) expect([...sotwVersions(r).keys()]).toEqual(expect.arrayContaining([...gone]));
    ads.send({ node: NODE, type_url: LDS, version_info: lds!.version_info, response_nonce: lds!.nonce });
    // ... and once the new listeners are ACKed, they go.
    const last = await ads.next();
    expect(last.type_url).toBe(CDS);
    expect([...sotwVersions(last).keys()].filter((name) => gone.includes(name))).toEqual([]);
    expect(last.version_info).not.toBe(cds.version_info);
  });
});

describe("setSnapshotAsync", () => {
  const EAST = ["east/node-1", "east/node-2", "east/node-3"].map((id) => ({ id, cluster: "east" }));

  /** The server again, recompiling one node per slice. */
  async function slicedServer() {
    await server.close();
    server = new AdsServer({ snapshot: exampleSnapshot(), compile: OPTIONS, recompileSliceMs: 0 });
    events = [];
    server.on((event) => events.push(event));
    target = await server.listen("127.0.0.1:0");
  }

  /** The example in another mesh domain (every node changes), with `change` applied too. */
  function inOtherDomain(change: (doc: ReturnType<typeof meshDocument>) => void = () => {}): Snapshot {
    const doc = meshDocument();
    doc.mesh.meshDomain = "mesh.other";
    change(doc);
    return parseSnapshot(doc);
  }

  /** A new stream of `node` gets the clusters a fresh compile of `snapshot` gives. */
  async function expectServedCds(node: { id: string; cluster: string }, snapshot: Snapshot) {
    const stream = client<SotwResponse>("StreamAggregatedResources");
    stream.send({ node, type_url: CDS });
    const cds = await stream.next();
    expect(
      cds.resources.map((any) => Buffer.from(any.value)),
      node.id,
    ).toEqual(compiled(snapshot, node.id)[CDS].map((r) => Buffer.from(r.resource.value!)));
  }

  const pushedNodes = () => new Set(events.filter((e) => e.event === "push").map((e) => e.node)).size;

  /** How many nodes were pushed when `running` was started, then after each turn of the event loop until it settles. */
  async function pushedPerTurn(running: Promise<unknown>): Promise<number[]> {
    let settled = false;
    void running.then(() => (settled = true));
    const seen = [pushedNodes()];
    while (!settled) {
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(pushedNodes());
    }
    return seen;
  }

  /** Never more than one node pushed per turn of the event loop. */
  function expectOneNodePerTurn(seen: readonly number[]) {
    for (let i = 1; i < seen.length; i++) expect(seen[i]! - seen[i - 1]!, `turn ${i} of ${seen}`).toBeLessThanOrEqual(1);
  }

  test("pushes each node as soon as it is recompiled, lets the event loop run between slices, and resolves once every node is pushed", async () => {
    await slicedServer();
    const streams = [];
    for (const node of EAST) streams.push(await warmSotw(node));
    events.length = 0;
    const next = inOtherDomain();
    const update = server.setSnapshotAsync(next);
    const seen = await pushedPerTurn(update);
    expect(seen[0], "pushed by the synchronous part").toBe(1);
    expectOneNodePerTurn(seen);
    expect(await update).toEqual({ changedNodes: 3, closedStreams: 0 });
    expect(pushedNodes()).toBe(3);
    expect(events.filter((e) => e.event === "snapshot")).toEqual([expect.objectContaining({ nodes: 3, changed: 3 })]);
    for (const [i, node] of EAST.entries()) {
      // Each stream's push carries the new clusters (the old ones stay until the new listeners are ACKed).
      const cds = await streams[i]!.ads.next();
      expect(cds.type_url).toBe(CDS);
      expect([...sotwVersions(cds)]).toEqual(expect.arrayContaining(compiled(next, node.id)[CDS].map((r) => [r.name, r.version])));
      await expectServedCds(node, next);
    }
  });

  test("a snapshot set while one is in progress takes over the nodes still waiting, including those it does not reach", async () => {
    await slicedServer();
    for (const node of EAST) await warmSotw(node);
    // Both read afresh, so each is an update of the one before. The first gives payments a second
    // port (on east/node-3's pod): it reaches every east node's clusters, as each hosts or calls
    // payments. The second reaches only west's frontend node (nothing calls frontend).
    const doc = meshDocument();
    for (const record of doc.services["team-b/payments"]) if (record.kubernetesMetadata.podName === "payments-6f8d-p2") record.port = 8444;
    const first = server.setSnapshotAsync(parseSnapshot(doc));
    for (const record of doc.services["team-a/frontend"]) if (record.clusterName === "west") record.metadata.version = "v4";
    const second = parseSnapshot(doc);
    server.setSnapshot(second);
    await first;
    for (const node of EAST) {
      expect(compiled(second, node.id)[CDS], node.id).not.toEqual(compiled(exampleSnapshot(), node.id)[CDS]);
      await expectServedCds(node, second);
    }
  });

  test("follow serves, of the snapshots that arrive while it serves one, only the last", async () => {
    await slicedServer();
    for (const node of EAST) await warmSotw(node);
    events.length = 0;
    // Each a change of payments' weights that every east node sees, derived from the one before.
    const chain: Snapshot[] = [];
    for (const weight of [2, 3, 4]) {
      const before = chain.at(-1) ?? server.snapshot!;
      const records = [...before.services.get("team-b/payments" as never)!].map((r) => ({ ...r, weight }));
      chain.push(withServiceRecords(before, "team-b/payments", records));
    }
    const [first, skipped, last] = chain;
    const updates = new Channel<SourceUpdate>();
    // The other two arrive while the first is being served: at its first push.
    const stop = server.on((event) => {
      if (event.event !== "push") return;
      stop();
      updates.push({ snapshot: skipped! });
      updates.push({ error: "a bad write in between" });
      updates.push({ snapshot: last! });
      updates.end();
    });
    updates.push({ snapshot: first! });
    await server.follow({ watch: () => updates, close: async () => updates.end() });
    expect(events.filter((e) => e.event === "snapshot")).toHaveLength(2);
    expect(events.filter((e) => e.event === "source-error")).toHaveLength(1);
    expect(server.snapshot).toBe(last);
    // A source that fails, even while a snapshot is being served, ends follow with its error (an
    // unhandled rejection in between would end the process: vitest fails the run on one).
    async function* failing() {
      yield { snapshot: first! };
      throw new Error("the registry went away");
    }
    await expect(server.follow({ watch: failing, close: async () => {} })).rejects.toThrow("the registry went away");
  });

  test("follow serves each snapshot a source yields this way; recompileSliceMs must be a number of milliseconds", async () => {
    await slicedServer();
    for (const node of EAST) await warmSotw(node);
    events.length = 0;
    const next = inOtherDomain();
    async function* watch() {
      yield { snapshot: next };
    }
    expectOneNodePerTurn(await pushedPerTurn(server.follow({ watch, close: async () => {} })));
    expect(pushedNodes()).toBe(3);
    expect(server.snapshot).toBe(next);
    expect(() => new AdsServer({ recompileSliceMs: -1 })).toThrow(/recompileSliceMs: expected a number of milliseconds ≥ 0, got -1/);
  });
});

describe("delta", () => {
  async function warmDelta(node = NODE) {
    const ads = client<DeltaResponse>("DeltaAggregatedResources");
    ads.send({ node, type_url: CDS });
    const cds = await ads.next();
    ads.send({ node, type_url: CDS, response_nonce: cds.nonce });
    const edsNames = cds.resources.map((r) => r.name).filter((name) => compiled(server.snapshot, node.id)[EDS].some((r) => r.name === name));
    ads.send({ node, type_url: EDS, resource_names_subscribe: edsNames });
    const eds = await ads.next();
    ads.send({ node, type_url: EDS, response_nonce: eds.nonce });
    ads.send({ node, type_url: LDS });
    const lds = await ads.next();
    ads.send({ node, type_url: LDS, response_nonce: lds.nonce });
    await server.acked(node.id, LDS as XdsTypeUrl);
    return { ads, cds, eds, lds, edsNames };
  }

  test("a subscription naming 150,000 resources, with as many held versions, is answered", async () => {
    const ads = client<DeltaResponse>("DeltaAggregatedResources");
    const one = compiled(server.snapshot, NODE.id)[EDS][0]!.name;
    // As many as fit in gRPC's default 4 MB request, past the ~120,000 a call's arguments can hold.
    const unknown = Array.from({ length: 150_000 }, (_, i) => `c${i}`);
    const held = Object.fromEntries(unknown.map((name) => [name, "v"]));
    ads.send({ node: NODE, type_url: EDS, resource_names_subscribe: [one, ...unknown], initial_resource_versions: held });
    const response = await ads.next();
    expect(response.resources.map((r) => r.name)).toEqual([one]);
  });

  test("warm-up: every resource with its content version, as compileNode gives it", async () => {
    const expected = compiled(server.snapshot, NODE.id);
    const { cds, eds, lds } = await warmDelta();
    for (const [response, url] of [
      [cds, CDS],
      [eds, EDS],
      [lds, LDS],
    ] as const) {
      expect(response.resources.map((r) => [r.name, r.version, upstreamName(r.resource)])).toEqual(
        expected[url as XdsTypeUrl].filter((r) => url !== EDS || eds.resources.some((e) => e.name === r.name)).map((r) => [r.name, r.version, r.name]),
      );
      expect(response.removed_resources ?? []).toEqual([]);
    }
    expect(eds.resources.map((r) => r.name)).toEqual(expected[EDS].map((r) => r.name));
  });

  test("a registry change sends only the changed assignments; a NACK is recorded and keeps the ACKed version", async () => {
    const { ads, eds: first } = await warmDelta();
    const next = withCheckoutX2Unhealthy();
    const diff = diffResources(compiled(server.snapshot, NODE.id), compiled(next, NODE.id));
    server.setSnapshot(next);
    const eds = await ads.next();
    expect(eds.type_url).toBe(EDS);
    expect(eds.resources.map((r) => r.name)).toEqual(diff[EDS as XdsTypeUrl].changed);
    const ackedBefore = server.status(NODE.id, EDS as XdsTypeUrl)[0]!.acked;
    expect(ackedBefore).toBe(first.system_version_info);
    ads.send({ node: NODE, type_url: EDS, response_nonce: eds.nonce, error_detail: { code: 3, message: "bad endpoint" } });
    await expect
      .poll(() => events.find((e) => e.event === "nack"))
      .toMatchObject({ typeUrl: EDS, version: eds.system_version_info, kept: ackedBefore, error: "bad endpoint" });
    expect(server.status(NODE.id, EDS as XdsTypeUrl)[0]!.acked).toBe(ackedBefore);
  });

  test("removed clusters and their assignments go after the listeners are ACKed, as removed_resources", async () => {
    const { ads } = await warmDelta();
    const next = withoutEastFrontend();
    const diff = diffResources(compiled(server.snapshot, NODE.id), compiled(next, NODE.id));
    server.setSnapshot(next);
    let lds = await ads.next();
    for (; lds.type_url !== LDS; lds = await ads.next()) {
      expect(lds.removed_resources ?? []).toEqual([]); // nothing removed before the listeners
      ads.send({ node: NODE, type_url: lds.type_url, response_nonce: lds.nonce });
    }
    expect(lds.removed_resources).toEqual(diff[LDS as XdsTypeUrl].removed);
    ads.send({ node: NODE, type_url: LDS, response_nonce: lds.nonce });
    const cds = await ads.next();
    expect(cds.type_url).toBe(CDS);
    expect(cds.removed_resources).toEqual(diff[CDS as XdsTypeUrl].removed);
    const eds = await ads.next(); // their assignments go with them
    expect(eds.type_url).toBe(EDS);
    expect(eds.removed_resources).toEqual(diff[EDS as XdsTypeUrl].removed);
  });

  test("a reconnect with initial_resource_versions gets nothing it already holds", async () => {
    const { ads, cds } = await warmDelta();
    ads.close();
    const again = client<DeltaResponse>("DeltaAggregatedResources");
    again.send({ node: NODE, type_url: CDS, initial_resource_versions: Object.fromEntries(cds.resources.map((r) => [r.name, r.version])) });
    const resumed = await again.next();
    expect(resumed.resources ?? []).toEqual([]);
    expect(resumed.removed_resources ?? []).toEqual([]);
  });

  test("a node that is not in the mesh is refused", async () => {
    const stranger = client<DeltaResponse>("DeltaAggregatedResources");
    stranger.send({ node: { id: "west/node-4" }, type_url: CDS });
    expect((await stranger.status).code).toBe(5);
  });
});

describe("listening and lifecycle", () => {
  test.each([
    ["state of the world", "StreamAggregatedResources", { resource_names: ["r1"] }],
    ["delta", "DeltaAggregatedResources", { resource_names_subscribe: ["r1"] }],
  ] as const)("%s: a type the server does not serve gets no response, one event per URL, and the stream still serves CDS", async (_, method, names) => {
    const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    const ads = client<SotwResponse | DeltaResponse>(method);
    ads.send({ node: NODE, type_url: RDS, ...names });
    ads.send({ node: NODE, type_url: RDS, ...names });
    ads.send({ node: NODE, type_url: CDS });
    expect((await ads.next()).type_url).toBe(CDS);
    expect(await ads.quiet()).toBe(true);
    expect(events.filter((e) => e.event === "unsupported-type")).toEqual([expect.objectContaining({ typeUrl: RDS })]);
  });

  test("serves on a Unix socket; before its first snapshot a server refuses with UNAVAILABLE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "aether-ads-"));
    const empty = new AdsServer({ compile: OPTIONS });
    try {
      const address = await empty.listen(`unix:${join(dir, "ads.sock")}`);
      expect(address).toBe(`unix:${join(dir, "ads.sock")}`);
      const early = new AdsClient<SotwResponse>(address, "StreamAggregatedResources");
      clients.push(early as AdsClient<unknown>);
      early.send({ node: NODE, type_url: CDS });
      expect(await early.status).toMatchObject({ code: 14, details: "no snapshot yet" });
      empty.setSnapshot(exampleSnapshot());
      const ads = new AdsClient<SotwResponse>(address, "StreamAggregatedResources");
      clients.push(ads as AdsClient<unknown>);
      ads.send({ node: NODE, type_url: CDS });
      expect((await ads.next()).resources.length).toBe(compiled(empty.snapshot, NODE.id)[CDS].length);
    } finally {
      await empty.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('secrets never come over ADS: SDS defaults to the agent\'s sds_grpc cluster, and sds "ads" is refused', async () => {
    expect(() => new AdsServer({ compile: { sds: "ads" } })).toThrow(/the ADS server serves no secrets/);
    const plain = new AdsServer({ snapshot: exampleSnapshot(), compile: { eastWestWaypoint: "off" } });
    try {
      const ads = new AdsClient<SotwResponse>(await plain.listen("127.0.0.1:0"), "StreamAggregatedResources");
      clients.push(ads as AdsClient<unknown>);
      ads.send({ node: NODE, type_url: LDS });
      const served = (await ads.next()).resources.map((any) => Buffer.from(any.value));
      const snapshot = exampleSnapshot();
      const listeners = (options: object) =>
        toXdsResources(compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), options))[LDS as XdsTypeUrl].map((r) => Buffer.from(r.resource.value!));
      expect(served).toEqual(listeners({ eastWestWaypoint: "off", sds: { grpcCluster: "sds_grpc" } }));
      expect(served).not.toEqual(listeners({ eastWestWaypoint: "off" }));
    } finally {
      await plain.close();
    }
  });

  test("close ends every stream with UNAVAILABLE, so Envoys reconnect elsewhere", async () => {
    const { ads } = await warmSotw();
    await server.close();
    expect((await ads.status).code).toBe(14);
  });
});
