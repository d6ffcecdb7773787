/**
 * The mesh-file source: a change on disk (in place or by a rename) becomes a push; a bad file is
 * reported with its path-qualified errors while the server keeps serving the last good snapshot.
 */
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { stringify } from "yaml";
import { AdsServer, MeshFileSource, type ServerEvent } from "../../src/entry/server.js";
import { changesSince } from "../../src/model/snapshot.js";
import { EXAMPLE_MESH, meshDocument } from "../support/fixtures.js";
import { AdsClient, EDS, type SotwResponse } from "./ads-client.js";

let dir: string;
let path: string;
let source: MeshFileSource;
let server: AdsServer;
let events: ServerEvent[];
let ads: AdsClient<SotwResponse>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "aether-meshfile-"));
  path = join(dir, "mesh.yaml");
  writeFileSync(path, readFileSync(EXAMPLE_MESH));
  source = new MeshFileSource(path);
  server = new AdsServer({ compile: { eastWestWaypoint: "cross-cluster" } });
  events = [];
  server.on((event) => events.push(event));
  void server.follow(source);
  const target = await server.listen("127.0.0.1:0");
  await expect.poll(() => server.snapshot).toBeDefined();
  ads = new AdsClient<SotwResponse>(target, "StreamAggregatedResources");
});

afterEach(async () => {
  ads.close();
  await source.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The example mesh's document with west's unhealthy payments pod healthy again. */
function recoveredDocument() {
  const doc = meshDocument();
  for (const record of doc.services["team-b/payments"]) if (record.health === "UNHEALTHY") record.health = "HEALTHY";
  return doc;
}

function recovered(): string {
  return stringify(recoveredDocument());
}

async function subscribeEds(): Promise<SotwResponse> {
  ads.send({ node: { id: "east/node-1" }, type_url: EDS, resource_names: ["payments.team-b.mesh.aether:8443"] });
  const first = await ads.next();
  ads.send({
    node: { id: "east/node-1" },
    type_url: EDS,
    resource_names: ["payments.team-b.mesh.aether:8443"],
    version_info: first.version_info,
    response_nonce: first.nonce,
  });
  return first;
}

test("a file replaced by a rename is served: the changed assignment is pushed", async () => {
  const first = await subscribeEds();
  writeFileSync(join(dir, "next.yaml"), recovered());
  renameSync(join(dir, "next.yaml"), path);
  const pushed = await ads.next();
  expect(pushed.version_info).not.toBe(first.version_info);
  expect(events.some((e) => e.event === "snapshot")).toBe(true);
});

test("a bad file keeps the last good snapshot and reports every problem with its path", async () => {
  const first = await subscribeEds();
  const good = server.snapshot;
  const doc = meshDocument();
  doc.services["team-b/payments"][0].ip = "10.244.999.1";
  doc.nodes[0].cluster = "";
  writeFileSync(path, stringify(doc));
  await expect.poll(() => events.find((e) => e.event === "source-error")).toBeDefined();
  const error = (events.find((e) => e.event === "source-error") as { error: string }).error;
  expect(error).toContain(path);
  expect(error).toContain('services["team-b/payments"][0].ip');
  expect(error).toContain("nodes[0].cluster");
  expect(server.snapshot).toBe(good);
  // Fixed again: served.
  writeFileSync(path, recovered());
  expect((await ads.next()).version_info).not.toBe(first.version_info);
});

test("a file in which only records changed is served as an update of the last snapshot; one that says the same in other words is not served again", async () => {
  const first = await subscribeEds();
  const before = server.snapshot!;
  const snapshots = () => events.filter((e) => e.event === "snapshot").length;
  const served = snapshots();
  // The same mesh with a comment and another key order: new bytes, same snapshot.
  const doc = meshDocument();
  writeFileSync(path, `# regenerated\n${stringify({ ...doc, services: Object.fromEntries(Object.entries(doc.services).reverse()) })}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(snapshots()).toBe(served);
  expect(server.snapshot).toBe(before);

  writeFileSync(path, recovered());
  expect((await ads.next()).version_info).not.toBe(first.version_info);
  expect(snapshots()).toBe(served + 1);
  // Derived from the snapshot before: the server re-indexed payments only.
  expect(server.snapshot!.mesh).toBe(before.mesh);
  expect(changesSince(server.snapshot!, before)).toEqual(new Set(["team-b/payments"]));
});

test("a JSON file in which only records changed is served as an update too, and a bad record in it is reported with its path", async () => {
  const jsonPath = join(dir, "mesh.json");
  writeFileSync(jsonPath, JSON.stringify(meshDocument()));
  const jsonSource = new MeshFileSource(jsonPath);
  const jsonServer = new AdsServer({ compile: { eastWestWaypoint: "cross-cluster" } });
  const jsonEvents: ServerEvent[] = [];
  jsonServer.on((event) => jsonEvents.push(event));
  const following = jsonServer.follow(jsonSource);
  try {
    await expect.poll(() => jsonServer.snapshot).toBeDefined();
    const before = jsonServer.snapshot!;
    const bad = meshDocument();
    bad.services["team-b/payments"][0].ip = "10.244.999.1";
    writeFileSync(jsonPath, JSON.stringify(bad));
    await expect.poll(() => jsonEvents.find((e) => e.event === "source-error")).toBeDefined();
    expect((jsonEvents.find((e) => e.event === "source-error") as { error: string }).error).toContain('services["team-b/payments"][0].ip');
    expect(jsonServer.snapshot).toBe(before);

    // A typo inside one service's records, its brackets balanced: only that text changed (and is
    // parsed alone), and the file is not JSON.
    writeFileSync(jsonPath, JSON.stringify(recoveredDocument()).replace('"team-b/payments":[', '"team-b/payments":[x'));
    const errors = () => jsonEvents.filter((e) => e.event === "source-error").map((e) => (e as { error: string }).error);
    await expect.poll(() => errors().length).toBe(2);
    // JSON.parse's error for the whole file, as a first read reports it: it quotes the text
    // around the typo from the file, key included, not from the service's text alone.
    expect(errors()[1]).toMatch(/mesh\.json: .*\(root\): not valid JSON: Unexpected token 'x', .*ayments":\[x/s);
    expect(jsonServer.snapshot).toBe(before);

    writeFileSync(jsonPath, JSON.stringify(recoveredDocument()));
    await expect.poll(() => jsonServer.snapshot).not.toBe(before);
    expect(changesSince(jsonServer.snapshot!, before)).toEqual(new Set(["team-b/payments"]));
    expect(jsonServer.snapshot!.services.get("team-a/frontend")).toBe(before.services.get("team-a/frontend"));
  } finally {
    await jsonSource.close();
    await following;
    await jsonServer.close();
  }
});
