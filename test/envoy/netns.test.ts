/**
 * Network-namespace helpers (test/envoy/support/netns.ts) and the cleanup ledger (cleanup.ts).
 * Runs in test-created network namespaces when this process may create them (root; the netns
 * describe is skipped otherwise, and fails under AETHER_REQUIRE_NETNS=1, as in CI); the loopback
 * fallback is checked without them.
 *
 * A two-cluster world with a shared pod CIDR: cluster a (nodes a1, a2; pods x on a1 and y on a2)
 * and cluster b (node b1; pod z with the same IP as x).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startEchoApp } from "./support/apps.js";
import { isRunning, LEDGER_DIR, listNetns, processStartTime, sweepStale } from "./support/cleanup.js";
import { createTopology, type MeshDocument, netnsAvailable, type Place, type Topology, topologySpec } from "./support/netns.js";
import { startProcess } from "./support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "aether-netns-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function record(cluster: string, pod: string, ip: string, node: string, nodeIp: string) {
  return {
    ip,
    clusterName: cluster,
    port: 8080,
    containerMetadata: { networkNamespace: `/var/run/netns/cni-${pod}` },
    kubernetesMetadata: { podName: pod, nodeName: node, nodeIp },
  };
}

const MESH: MeshDocument = {
  mesh: { meshDomain: "mesh.test", trust: { mode: "shared", trustDomain: "test.internal" } },
  nodes: [
    { cluster: "a", name: "a1", ip: "10.1.0.1" },
    { cluster: "a", name: "a2", ip: "10.1.0.2" },
    { cluster: "b", name: "b1", ip: "10.2.0.1" },
  ],
  services: {
    "ns/svc": [
      record("a", "x", "10.244.0.5", "a1", "10.1.0.1"),
      record("a", "y", "10.244.0.6", "a2", "10.1.0.2"),
      record("b", "z", "10.244.0.5", "b1", "10.2.0.1"),
    ],
  },
};

/** GET http://<host>:<port>/ from a place; the echo app's name, or the error code. */
function httpGetFrom(topology: Topology, place: Place, host: string, port: number): string {
  const script = `require("http").get({host:${JSON.stringify(host)},port:${port},timeout:3000},(r)=>{let b="";r.on("data",(c)=>b+=c);r.on("end",()=>console.log(JSON.parse(b).app))}).on("error",(e)=>console.log(e.code)).on("timeout",function(){this.destroy();console.log("TIMEOUT")})`;
  const argv = topology.command(place, [process.execPath, "-e", script]);
  return spawnSync(argv[0]!, argv.slice(1), { encoding: "utf8", timeout: 20_000 }).stdout.trim();
}

const hostState = () => spawnSync("sh", ["-c", "ip -br addr; ip route; ip -6 route"], { encoding: "utf8" }).stdout;

test.skipIf(process.env.AETHER_REQUIRE_NETNS !== "1")("network namespaces can be created (AETHER_REQUIRE_NETNS=1: CI never falls back silently)", () => {
  expect(netnsAvailable(), "cannot create network namespaces: run as root (CAP_SYS_ADMIN, CAP_NET_ADMIN) with iproute2").toBe(true);
});

describe.skipIf(!netnsAvailable())("network namespaces", () => {
  let topology: Topology;
  let before: string;
  const spec = topologySpec(MESH, ["a/a1", "a/a2", "b/b1"]);

  beforeAll(async () => {
    before = hostState();
    topology = createTopology(spec, "nt");
    for (const pod of ["a/ns/x", "a/ns/y", "b/ns/z"]) await startEchoApp(topology, pod, { http: [8080] }, dir);
  }, 60_000);
  afterAll(() => topology?.destroy());

  test("the spec holds the nodes and every pod they host", () => {
    expect(spec.pods.map((p) => p.key)).toEqual(["a/ns/x", "a/ns/y", "b/ns/z"]);
    expect(spec.nodes.map((n) => `${n.key}=${n.ip}`)).toEqual(["a/a1=10.1.0.1", "a/a2=10.1.0.2", "b/b1=10.2.0.1"]);
  });

  test("the host netns gets no address and no route", () => {
    expect(topology.mode).toBe("netns");
    expect(hostState()).toBe(before);
  });

  test("pod IPs route inside their own cluster only: the shared IP reaches each cluster's own pod", () => {
    expect(httpGetFrom(topology, { node: "a/a2" }, "10.244.0.5", 8080)).toBe("x");
    expect(httpGetFrom(topology, { node: "a/a1" }, "10.244.0.5", 8080)).toBe("x");
    expect(httpGetFrom(topology, { node: "b/b1" }, "10.244.0.5", 8080)).toBe("z");
    expect(httpGetFrom(topology, { node: "b/b1" }, "10.244.0.6", 8080)).toBe("ENETUNREACH");
    expect(httpGetFrom(topology, { pod: "a/ns/y" }, "10.244.0.5", 8080)).toBe("x"); // pod → its node → the other node
  });

  test("node IPs route between clusters", () => {
    expect(httpGetFrom(topology, { node: "b/b1" }, "10.1.0.1", 9)).toBe("ECONNREFUSED"); // reached a1, nothing listens
    expect(httpGetFrom(topology, { pod: "b/ns/z" }, "10.2.0.1", 9)).toBe("ECONNREFUSED"); // a pod reaches its own node
    // (A pod cannot dial another cluster's node directly: the reply to its IP would be routed to
    // the other cluster's pod with the same IP. Nodes dial waypoints with their own IP.)
  });

  test("meshDocument points each topology pod's netns at its test namespace, which exists", () => {
    const doc = topology.meshDocument(MESH);
    const paths = doc.services["ns/svc"]!.map((r: any) => r.containerMetadata.networkNamespace as string);
    expect(paths.every((p) => /^\/var\/run\/netns\/axt-\d+-nt-p\d$/.test(p) && existsSync(p))).toBe(true);
    expect(new Set(paths).size).toBe(3);
    expect(doc.services["ns/svc"]!.map((r: any) => r.ip)).toEqual(["10.244.0.5", "10.244.0.6", "10.244.0.5"]); // addresses unchanged
    expect(MESH.services["ns/svc"]![0]!.containerMetadata!.networkNamespace).toBe("/var/run/netns/cni-x"); // a copy
    expect(topology.adaptBootstrap(MESH)).toBe(MESH);
  });

  test("destroy removes every namespace (and what runs inside), and is idempotent", () => {
    const extra = createTopology(topologySpec(MESH, ["b/b1"]), "gone");
    const names = listNetns().filter((n) => n.startsWith(`axt-${process.pid}-gone-`));
    expect(names.length).toBe(3); // fabric, node, pod
    const sleeper = startProcess(extra.command({ pod: "b/ns/z" }, ["sleep", "60"]), { name: "sleeper", logDir: dir });
    extra.destroy();
    extra.destroy();
    expect(listNetns().filter((n) => n.startsWith(`axt-${process.pid}-gone-`))).toEqual([]);
    return sleeper.exited.then((exit) => expect(exit.signal).toBe("SIGKILL"));
  });
});

describe("loopback fallback (no namespaces)", () => {
  const topology = createTopology(topologySpec(MESH, ["a/a1", "b/b1"]), "lb", "loopback");

  test("every address in the mesh becomes a distinct 127.x address, per (cluster, ip)", () => {
    const doc = topology.meshDocument(MESH);
    const ips = doc.services["ns/svc"]!.map((r: any) => r.ip as string);
    expect(ips.every((ip) => ip.startsWith("127."))).toBe(true);
    expect(new Set(ips).size).toBe(3); // x and z shared 10.244.0.5
    expect(doc.nodes!.every((n) => n.ip!.startsWith("127."))).toBe(true);
    expect(topology.podIp("a/ns/x")).toBe(ips[0]);
    expect(topology.nodeIp("b/b1")).toBe(doc.nodes![2]!.ip);
    expect(topology.command({ pod: "a/ns/x" }, ["true"])).toEqual(["true"]);
  });

  test("adaptBootstrap binds each pod listener to its pod's 127.x address instead of its netns", () => {
    const path = topology.podNetnsPath("b/ns/z");
    const bootstrap = {
      static_resources: {
        listeners: [{ name: "inbound_z", address: { socket_address: { address: "0.0.0.0", port_value: 15008, network_namespace_filepath: path } } }],
      },
    };
    expect((topology.adaptBootstrap(bootstrap) as any).static_resources.listeners[0].address).toEqual({
      socket_address: { address: topology.podIp("b/ns/z"), port_value: 15008 },
    });
    const stranger = structuredClone(bootstrap);
    stranger.static_resources.listeners[0]!.address.socket_address.network_namespace_filepath = "/var/run/netns/other";
    expect(() => topology.adaptBootstrap(stranger)).toThrow(/no pod of the topology/);
  });
});

describe("stale sweeper", () => {
  test("kills recorded processes and deletes namespaces of a dead owner, never a live owner's", () => {
    const dead = spawnSync("true").pid!; // an owner that has exited
    const sleeper = startProcess(["sleep", "60"], { name: "orphan", logDir: dir });
    mkdirSync(LEDGER_DIR, { recursive: true });
    const deadLedger = join(LEDGER_DIR, `${dead}-1.ledger`);
    writeFileSync(deadLedger, `process ${sleeper.pid} ${processStartTime(sleeper.pid)}\n`);
    const names = netnsAvailable() ? [`axt-${dead}-stale-x`] : [];
    for (const name of names) spawnSync("ip", ["netns", "add", name]);

    const removed = sweepStale();
    expect(removed).toContain(`process ${sleeper.pid}`);
    for (const name of names) expect(removed).toContain(`netns ${name}`);
    expect(existsSync(deadLedger)).toBe(false);
    expect(listNetns().filter((n) => names.includes(n))).toEqual([]);
    expect(isRunning(process.pid)).toBe(true);
    return sleeper.exited.then((exit) => expect(exit.signal).toBe("SIGKILL"));
  });

  test("a recorded PID whose start time no longer matches (a reused PID) is left alone", () => {
    const bystander = startProcess(["sleep", "60"], { name: "bystander", logDir: dir });
    const dead = spawnSync("true").pid!;
    writeFileSync(join(LEDGER_DIR, `${dead}-1.ledger`), `process ${bystander.pid} 1\n`);
    expect(sweepStale()).not.toContain(`process ${bystander.pid}`);
    expect(isRunning(bystander.pid)).toBe(true);
    return bystander.stop();
  });
});
