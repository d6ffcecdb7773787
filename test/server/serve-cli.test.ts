/**
 * `aether-xds serve` as a user runs it: a mesh file, a real gRPC client, one JSON log line per
 * connect, push, ACK and NACK (with node and versions), Prometheus metrics, a clean stop on SIGTERM.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { runCli } from "../support/cli.js";
import { EXAMPLE_MESH } from "../support/fixtures.js";
import { AdsClient, CDS, type SotwResponse } from "./ads-client.js";
import { type ServeProcess, startServe } from "./serve-support.js";

let dir: string;
let serve: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "aether-serve-"));
  writeFileSync(join(dir, "mesh.yaml"), readFileSync(EXAMPLE_MESH));
  serve = await startServe(["--snapshot", join(dir, "mesh.yaml"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--mode", "cross-cluster"]);
});

afterAll(async () => {
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("logs connect, push, ACK and NACK as JSON lines with node and versions, and counts them in /metrics", async () => {
  const ads = new AdsClient<SotwResponse>(serve.address, "StreamAggregatedResources");
  try {
    const node = { id: "east/node-1", cluster: "east" };
    ads.send({ node, type_url: CDS });
    const cds = await ads.next();
    ads.send({ node, type_url: CDS, version_info: cds.version_info, response_nonce: cds.nonce });
    expect(await serve.waitFor((l) => l.event === "connect")).toMatchObject({ node: "east/node-1", meshNode: "east/node-1", kind: "sotw" });
    expect(await serve.waitFor((l) => l.event === "push")).toMatchObject({ node: "east/node-1", typeUrl: CDS, version: cds.version_info, nonce: cds.nonce });
    expect(await serve.waitFor((l) => l.event === "ack")).toMatchObject({ node: "east/node-1", typeUrl: CDS, version: cds.version_info });
    // A rejected update: checkout's port 9090 becomes HTTP/2 in the file, and the client NACKs the push.
    const mesh = readFileSync(EXAMPLE_MESH, "utf8").replace('team-a/checkout: { "9090": tcp }', 'team-a/checkout: { "9090": http2 }');
    expect(mesh).not.toBe(readFileSync(EXAMPLE_MESH, "utf8"));
    writeFileSync(join(dir, "mesh.yaml"), mesh);
    const next = await ads.next();
    ads.send({ node, type_url: CDS, version_info: cds.version_info, response_nonce: next.nonce, error_detail: { code: 3, message: "cluster 'x': invalid" } });
    expect(await serve.waitFor((l) => l.event === "nack")).toMatchObject({
      node: "east/node-1",
      version: next.version_info,
      kept: cds.version_info,
      error: "cluster 'x': invalid",
    });
    const text = await (await fetch(serve.metrics!)).text();
    expect(text).toContain('aether_xds_connected_proxies{kind="sotw"} 1');
    expect(text).toContain(`aether_xds_pushes_total{type_url="${CDS}"} 2`);
    expect(text).toContain(`aether_xds_nacks_total{type_url="${CDS}"} 1`);
    expect(text).toMatch(/aether_xds_push_latency_seconds_count 2/);
    expect(text).toMatch(/aether_xds_snapshot_age_seconds \d/);
    expect(text).toMatch(/aether_xds_push_latency_seconds_bucket\{le="60"\} 2/);
    // The process's own metrics, the event loop's lag among them.
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d/m);
  } finally {
    ads.close();
  }
});

test("stops cleanly on SIGTERM; bad flags and a bad initial mesh file exit 2 with one message", async () => {
  expect(await serve.stop()).toBe(0);
  const both = runCli(["serve", "--snapshot", EXAMPLE_MESH, "--etcd", "http://127.0.0.1:1"]);
  expect(both).toMatchObject({ code: 2, stderr: "aether-xds: serve needs exactly one of --snapshot FILE and --etcd URL[,URL]\n" });
  const sdsOverAds = runCli(["serve", "--snapshot", EXAMPLE_MESH, "--sds", "ads"]);
  expect(sdsOverAds).toMatchObject({ code: 2, stderr: expect.stringContaining("sds: the ADS server serves no secrets") });
  writeFileSync(join(dir, "bad.yaml"), "mesh: {}\n");
  const bad = runCli(["serve", "--snapshot", join(dir, "bad.yaml")]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("mesh.meshDomain");
});
