/**
 * Data plane, end to end (issue 16, phase 1): the bundled Flannel mesh's west/node-2 — two
 * checkout pods, the `ew_tunnel` waypoint — compiled by aether-xds (`cross-cluster`) and run by a
 * real Envoy on each Envoy under test, with real mTLS from test SPIFFE certificates.
 *
 * Network: test-created network namespaces when available (test/envoy/support/netns.ts): west
 * node-1/node-2 and east node-1 with their pods; the Envoy runs in west/node-2's netns and binds
 * each pod's inbound listener in the pod's own netns; clients run in west's frontend pod (direct
 * dials) and on east/node-1 (through the waypoint), presenting frontend's SVID. The
 * mesh file's netns paths are rewritten to the test namespaces (input only). The loopback fallback
 * (every address mapped to 127.x, pod listeners bound there instead of in the pod's netns: a
 * test-only rewrite) runs on the newest Envoy too, and alone when namespaces are not available
 * (AETHER_NETNS=0 or no privileges); each describe names its mode.
 * SDS: the test SDS server (`sds: {grpcCluster: "sds"}`) on a Unix socket.
 * EDS: TEMPORARY — each assignment inlined into its cluster (phase 2: the ADS server of issue 12).
 * Observation: admin and JSON access logs added by the harness; nothing else is changed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SOURCE_IDENTITY_FLOORS } from "../../src/model/envoy-version.js";
import { meshDocument } from "../support/fixtures.js";
import { compareVersions, discoverEnvoys, type EnvoyBinary, envoysAtLeast } from "./support/binaries.js";
import type { EchoReply } from "./support/echo-app.js";
import { type MeshLab, startMeshLab } from "./support/mesh-lab.js";
import type { Probe } from "./support/mtls-client.js";
import { type NetworkMode, netnsAvailable } from "./support/netns.js";
import { createPki, workloadId } from "./support/pki.js";
import { ENVOY_FLOOR } from "./support/validation-table.js";

const found = envoysAtLeast(discoverEnvoys().found, ENVOY_FLOOR);
if (found.length === 0) test.skip(`no Envoy at or above ${ENVOY_FLOOR}`, () => {});
const dir = mkdtempSync(join(tmpdir(), "aether-dataplane-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TD = "aether.internal";
const FRONTEND = workloadId(TD, "team-a", "frontend");
const CHECKOUT = workloadId(TD, "team-a", "checkout");
const WEST_FRONTEND = { pod: "west/team-a/frontend-84c2-fghij" }; // on west/node-1: same cluster as checkout
// Another cluster dials a waypoint from its node (as the node's Envoy does, with the node IP as
// source): a pod IP is not routable across clusters, and the shared pod CIDR would route a reply
// to 10.244.0.5 to west's own frontend.
const EAST_NODE = { node: "east/node-1" };
const CHECKOUT_PODS = ["west/team-a/checkout-9a1e-y1", "west/team-a/checkout-9a1e-y2"];

const xfccUri = (xfcc: string | null) => /(?:^|;)URI=([^;,]+)/.exec(xfcc ?? "")?.[1];
const xfccBy = (xfcc: string | null) => /(?:^|;)By=([^;,]+)/.exec(xfcc ?? "")?.[1];

/** Network namespaces on every Envoy; the loopback fallback on the newest (everywhere without namespaces). */
const runs: [string, EnvoyBinary, NetworkMode][] = found.flatMap((envoy, i): [string, EnvoyBinary, NetworkMode][] => [
  ...(netnsAvailable() ? [[envoy.version, envoy, "netns"] as [string, EnvoyBinary, NetworkMode]] : []),
  ...(!netnsAvailable() || i === found.length - 1 ? [[envoy.version, envoy, "loopback"] as [string, EnvoyBinary, NetworkMode]] : []),
]);

describe.each(runs)("Envoy %s runs west/node-2 as compiled (%s)", (version, envoy, mode) => {
  let lab: MeshLab;
  const tunnel = () => `${lab.topology.nodeIp("west/node-2")}:15009`;

  beforeAll(async () => {
    lab = await startMeshLab({
      envoy,
      document: meshDocument(),
      envoyNodes: ["west/node-2"],
      sourceNodes: ["west/node-1", "east/node-1"],
      // The default selector mode where the Envoy has it (≥ 1.38), sockets mode on 1.37.
      options: {
        eastWestWaypoint: "cross-cluster",
        sourceIdentity: compareVersions(version, SOURCE_IDENTITY_FLOORS.selector) >= 0 ? "selector" : "sockets",
        // The compiled access logs too (stdout), next to the harness's own JSON logs.
        settings: { accessLog: "stdout" },
      },
      tag: `dp${version.replaceAll(".", "")}${mode === "netns" ? "n" : "l"}`,
      dir: join(dir, `${version}-${mode}`),
      mode,
    });
    console.log(`data plane on Envoy ${version}: ${lab.topology.mode === "netns" ? "network namespaces" : "loopback fallback (127.x)"}`);
  }, 120_000);
  afterAll(() => lab?.stop());

  /** A probe from a frontend presenting its SVID. */
  const probe = (host: string, port: number, servername: string, extra: Partial<Probe> = {}): Probe => ({
    kind: "http",
    host,
    port,
    servername,
    alpn: ["h2"],
    ...lab.clientTls(FRONTEND),
    ...extra,
  });
  const envoyOf = () => lab.envoys.get("west/node-2")!;
  /** The Envoy's stdout lines matching `pattern`, waiting for them (the stdout logger flushes about once a second). */
  const lines = async (pattern: RegExp) => {
    for (let waited = 0; waited < 10_000; waited += 200) {
      const found = envoyOf()
        .stdout()
        .split("\n")
        .filter((line) => pattern.test(line));
      if (found.length > 0) return found;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return [];
  };

  test("direct dial (same cluster): SNI <port> at pod_ip:15008, mTLS terminated with checkout's SVID, XFCC carries the caller", async () => {
    const [y1, y2] = CHECKOUT_PODS.map((pod) => lab.topology.podIp(pod)) as [string, string];
    const spoofed = { "x-forwarded-client-cert": `URI=${workloadId(TD, "evil", "mallory")}` };
    const results = await lab.probe(WEST_FRONTEND, [probe(y1, 15008, "8080", { headers: spoofed }), probe(y2, 15008, "8080")]);
    for (const [result, pod] of results.map((r, i) => [r, CHECKOUT_PODS[i]!] as const)) {
      expect(result, JSON.stringify(result)).toMatchObject({ ok: true, alpn: "h2", peerUri: CHECKOUT, status: 200 });
      const reply = JSON.parse(result.body!) as EchoReply;
      expect(reply.app).toBe(pod.split("/").at(-1));
      expect(reply.protocol).toBe("h2"); // the app cluster speaks HTTP/2 to the app
      expect(xfccUri(reply.xfcc)).toBe(FRONTEND); // the verified client certificate, the spoofed header dropped
      expect(xfccBy(reply.xfcc)).toBe(CHECKOUT);
      expect(reply.xfcc).not.toContain("mallory");
    }
    const inbound = await envoyOf().waitForAccessLog((e) => e.kind === "http" && e.listener === "inbound_checkout-9a1e-y1_team-a");
    expect(inbound).toMatchObject({
      chain: "port_8080",
      sni: "8080",
      downstream_peer_uri: FRONTEND,
      downstream_local_uri: CHECKOUT,
      upstream_cluster: "app_checkout-9a1e-y1_team-a_8080",
    });
    expect(inbound.downstream_tls).toMatch(/^TLSv1\.[23]$/);
  });

  test("direct dial to a TCP port: SNI 9090 reaches the TCP echo through the pod's mTLS chain", async () => {
    const [result] = await lab.probe(WEST_FRONTEND, [
      probe(lab.topology.podIp(CHECKOUT_PODS[0]!), 15008, "9090", { kind: "tcp", alpn: [], payload: "hello checkout" }),
    ]);
    expect(result).toMatchObject({ ok: true, peerUri: CHECKOUT, echoed: "hello checkout" });
  });

  test("the inbound chain requires a client certificate from the mesh's CA, and a known SNI", async () => {
    const y1 = lab.topology.podIp(CHECKOUT_PODS[0]!);
    const rogue = createPki(join(dir, `${version}-${mode}`, "rogue-pki")).svid(FRONTEND); // same SPIFFE ID, another CA
    const before = lab.apps.get(CHECKOUT_PODS[0]!)!.stdout();
    const [anonymous, forged, unknownSni, control] = await lab.probe(WEST_FRONTEND, [
      probe(y1, 15008, "8080", { certFile: undefined, keyFile: undefined }),
      probe(y1, 15008, "8080", { certFile: rogue.certFile, keyFile: rogue.keyFile }),
      probe(y1, 15008, "9999"),
      probe(y1, 15008, "8080"),
    ]);
    expect(anonymous, JSON.stringify(anonymous)).toMatchObject({ ok: false });
    expect(forged, JSON.stringify(forged)).toMatchObject({ ok: false });
    expect(unknownSni, JSON.stringify(unknownSni)).toMatchObject({ ok: false, stage: "handshake" });
    expect(control).toMatchObject({ ok: true, status: 200 }); // the same dial with the right certificate works
    expect(lab.apps.get(CHECKOUT_PODS[0]!)!.stdout()).toBe(before);
  });

  test("through the waypoint (another cluster): ew_tunnel forwards the ClientHello by SNI without terminating TLS; the pod does", async () => {
    const [host, port] = tunnel().split(":") as [string, string];
    const [http, tcp] = await lab.probe(EAST_NODE, [
      probe(host, Number(port), "8080.checkout.team-a.mesh.aether"),
      probe(host, Number(port), "9090.checkout.team-a.mesh.aether", { kind: "tcp", alpn: [], payload: "via the waypoint" }),
    ]);
    expect(http, JSON.stringify(http)).toMatchObject({ ok: true, alpn: "h2", peerUri: CHECKOUT, status: 200 });
    const reply = JSON.parse(http!.body!) as EchoReply;
    expect(CHECKOUT_PODS.map((p) => p.split("/").at(-1))).toContain(reply.app);
    expect(xfccUri(reply.xfcc)).toBe(FRONTEND);
    expect(tcp).toMatchObject({ ok: true, peerUri: CHECKOUT, echoed: "via the waypoint" });

    const log = envoyOf();
    const forwarded = await log.waitForAccessLog((e) => e.listener === "ew_tunnel" && e.kind === "tcp_proxy" && e.sni === "8080.checkout.team-a.mesh.aether");
    // The waypoint proxied bytes: no TLS on either side of it, straight to a pod's inbound port.
    expect(forwarded).toMatchObject({
      chain: "ew_checkout_team-a",
      downstream_tls: null,
      downstream_peer_uri: null,
      upstream_cluster: "ew_ingress_checkout_team-a",
      upstream_tls: null,
    });
    expect(CHECKOUT_PODS.map((p) => `${lab.topology.podIp(p)}:15008`)).toContain(forwarded.upstream_host);
    // The pod's inbound listener terminated it, on the exact waypoint SNI of its chain.
    const terminated = await log.waitForAccessLog(
      (e) => e.kind === "http" && e.listener.startsWith("inbound_checkout-") && e.sni === "8080.checkout.team-a.mesh.aether",
    );
    expect(terminated).toMatchObject({ chain: "port_8080", downstream_peer_uri: FRONTEND, downstream_local_uri: CHECKOUT });
    expect(terminated.downstream_tls).toMatch(/^TLSv1\.[23]$/);
    const stats = await log.stats();
    expect([...stats.keys()].filter((name) => name.startsWith(`listener.${tunnel().replace(":", "_")}.ssl.`) && (stats.get(name) ?? 0) > 0)).toEqual([]);
  });

  test("access logs: the destination line carries the request id and the caller's URI SAN; the waypoint line the SNI it routed on", async () => {
    const y1 = lab.topology.podIp(CHECKOUT_PODS[0]!);
    const [direct] = await lab.probe(WEST_FRONTEND, [probe(y1, 15008, "8080", { headers: { "x-request-id": "aether-dp-access-log" } })]);
    expect(direct).toMatchObject({ ok: true, status: 200 });
    const [tunneled] = await lab.probe(EAST_NODE, [probe(lab.topology.nodeIp("west/node-2"), 15009, "8080.checkout.team-a.mesh.aether")]);
    expect(tunneled).toMatchObject({ ok: true, status: 200 });
    const destination = await lines(/reporter=destination .*request_id=aether-dp-access-log /);
    expect(destination[0]).toContain(`listener=inbound_checkout-9a1e-y1_team-a request_id=aether-dp-access-log downstream_peer=${FRONTEND} server_name=8080 `);
    const waypoint = await lines(/reporter=waypoint .*server_name=8080\.checkout\.team-a\.mesh\.aether /);
    expect(waypoint[0]).toMatch(
      /listener=ew_tunnel server_name=8080\.checkout\.team-a\.mesh\.aether downstream=\S+ upstream_cluster=ew_ingress_checkout_team-a /,
    );
  });

  // The pod's egress listener binds 127.0.0.1 inside the pod's netns: only reachable there.
  test.runIf(mode === "netns")("access logs: a pod's egress request writes a source line with the identity its listener stamped", async () => {
    const pod = CHECKOUT_PODS[0]!;
    const egress = { kind: "http", host: "127.0.0.1", port: 15001, servername: "payments.team-b.mesh.aether", plain: "h2c" } as const;
    const [result] = await lab.probe({ pod }, [{ ...egress, headers: { "x-request-id": "aether-dp-source-line" } }]);
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true }); // any status: the payments pods run no Envoy here
    const [source] = await lines(/reporter=source .*request_id=aether-dp-source-line /);
    const listener = `listener=outbound_${pod.split("/")[2]}_team-a request_id=aether-dp-source-line`;
    // selector: the identity read back from the filter state the certificate mapper reads; sockets:
    // the listener's pod, and the netns stamp the socket matcher read.
    const identity =
      compareVersions(version, SOURCE_IDENTITY_FLOORS.selector) >= 0 ? `source_identity=${CHECKOUT} ` : `source_identity=${CHECKOUT} source_netns=/`;
    expect(source).toContain(`${listener} ${identity}`);
  });

  test("readiness probes: each pod's inboundready cluster turns healthy once its inbound listener answers the node's mTLS handshake", async () => {
    for (const pod of CHECKOUT_PODS) {
      const [, namespace, name] = pod.split("/") as [string, string, string];
      const cluster = `inboundready_${name}_${namespace}`;
      // A connect-only check with the node's identity, pinning the pod's SAN: healthy means the
      // listener is bound in the pod's netns and presents the pod's certificate.
      expect(await envoyOf().waitForStat(`cluster.${cluster}.membership_healthy`, (value) => value === 1, 20_000)).toBe(1);
      expect((await envoyOf().stats()).get(`cluster.${cluster}.health_check.success`) ?? 0).toBeGreaterThan(0);
    }
  });

  test("an unknown SNI at the tunnel is closed (no chain, no upstream)", async () => {
    const [host, port] = tunnel().split(":") as [string, string];
    const [payments, garbage] = await lab.probe(EAST_NODE, [
      probe(host, Number(port), "8443.payments.team-b.mesh.aether"), // a service with no pod on this node
      probe(host, Number(port), "8080.checkout.team-a.mesh.aether.evil"),
    ]);
    expect(payments, JSON.stringify(payments)).toMatchObject({ ok: false, stage: "handshake" });
    expect(garbage).toMatchObject({ ok: false, stage: "handshake" });
    const refused = await envoyOf().waitForAccessLog(
      (e) => e.listener === "ew_tunnel" && e.kind === "listener" && e.sni === "8443.payments.team-b.mesh.aether",
    );
    expect(refused).toMatchObject({ upstream_host: null, chain: null });
    expect(refused.response_flags).toContain("NR");
  });
});

/** Negative control for the readiness probe: a probe pinning another identity's SAN never turns healthy. */
describe.each(found.slice(-1).map((envoy) => [envoy.version, envoy] as const))("Envoy %s: a readiness probe pinning the wrong SAN", (version, envoy) => {
  let lab: MeshLab;
  const probeOf = (pod: string) => {
    const [, namespace, name] = pod.split("/") as [string, string, string];
    return `inboundready_${name}_${namespace}`;
  };
  const [wrong, right] = CHECKOUT_PODS.map(probeOf) as [string, string];

  beforeAll(async () => {
    lab = await startMeshLab({
      envoy,
      document: meshDocument(),
      envoyNodes: ["west/node-2"],
      options: { eastWestWaypoint: "cross-cluster" },
      tag: `rp${version.replaceAll(".", "")}`,
      dir: join(dir, `${version}-readiness`),
      mode: netnsAvailable() ? "netns" : "loopback",
      // y1's probe now expects frontend's certificate where checkout's is presented.
      transform: (bootstrap) => {
        const resources = (bootstrap as { static_resources: { clusters: { name: string }[] } }).static_resources;
        resources.clusters = resources.clusters.map((cluster) =>
          cluster.name === wrong ? JSON.parse(JSON.stringify(cluster).replaceAll(`"exact":"${CHECKOUT}"`, `"exact":"${FRONTEND}"`)) : cluster,
        );
        return bootstrap;
      },
    });
  }, 120_000);
  afterAll(() => lab?.stop());

  test("stays unhealthy while the correctly pinned probe turns healthy", async () => {
    const envoyProcess = lab.envoys.get("west/node-2")!;
    await envoyProcess.waitForStat(`cluster.${right}.membership_healthy`, (value) => value === 1, 20_000);
    await envoyProcess.waitForStat(`cluster.${wrong}.health_check.failure`, (value) => value > 0, 20_000);
    expect((await envoyProcess.stats()).get(`cluster.${wrong}.membership_healthy`) ?? 0).toBe(0);
  });
});
