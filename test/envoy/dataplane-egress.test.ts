/**
 * Data plane from the source pod's app (issue 16, phase 2): traffic starts at a pod's app, in
 * cleartext, at its node's egress listener (`outbound_<pod>`); the node's Envoy stamps the pod's
 * identity and presents the pod's certificate upstream. Nothing the test client sends carries an
 * identity. Four nodes of the bundled Flannel mesh run a real Envoy each, compiled by aether-xds
 * (`cross-cluster`; `selector` mode where the Envoy has it, ≥ 1.38, `sockets` mode on 1.37):
 *   west/node-1  sources: frontend (team-a) and payments (team-b), two identities on one node
 *   west/node-2  destination checkout-9a1e-y1, and the `ew_tunnel` waypoint
 *   east/node-1  source: east's frontend
 *   east/node-2  checkout-5c6b-x1, east's own checkout (the same-cluster tier of east/node-1)
 * The mesh file changes for this lab (input only): payments also calls checkout (a second source
 * identity on west/node-1), and west's second checkout pod is left out, so every request to
 * checkout from west lands on one upstream host and the pooling is observable.
 *
 * Network: test-created network namespaces (netns.ts); without them the loopback fallback (127.x,
 * pod listeners bound to the pod's 127.x address: a test-only rewrite), and the describe says which.
 * The VIP capture test adds the node's redirect rule with `iptables` inside the pod's netns, so it
 * runs with namespaces only (and, where they are required as in CI, fails without iptables).
 * EDS: aether-xds's own ADS server (`aether-xds/server`, eds-source.ts `ads`) on a Unix socket:
 * `lab.update` hands it the changed registry, it pushes, and the test waits for the node's ACK.
 * SDS: the test SDS server. Observation: admin and JSON access logs added by the harness.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { SOURCE_IDENTITY_FLOORS } from "../../src/model/envoy-version.js";
import type { SourceIdentity } from "../../src/model/options.js";
import { outboundStatName } from "../../src/naming.js";
import { meshDocument } from "../support/fixtures.js";
import { compareVersions, discoverEnvoys, type EnvoyBinary, envoysAtLeast } from "./support/binaries.js";
import { type RenderedBootstrap, stampWithFactory, withoutPerDownstreamPools } from "./support/bootstrap-transforms.js";
import type { EchoReply } from "./support/echo-app.js";
import { type MeshLab, startMeshLab } from "./support/mesh-lab.js";
import type { Probe, ProbeResult } from "./support/mtls-client.js";
import { iptablesAvailable, type MeshDocument, netnsAvailable } from "./support/netns.js";
import { workloadId } from "./support/pki.js";
import { ENVOY_FLOOR } from "./support/validation-table.js";

const found = envoysAtLeast(discoverEnvoys().found, ENVOY_FLOOR);
if (found.length === 0) test.skip(`no Envoy at or above ${ENVOY_FLOOR}`, () => {});
const dir = mkdtempSync(join(tmpdir(), "aether-egress-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TD = "aether.internal";
const FRONTEND = workloadId(TD, "team-a", "frontend");
const PAYMENTS = workloadId(TD, "team-b", "payments");
const CHECKOUT = workloadId(TD, "team-a", "checkout");
const WEST_FRONTEND = "west/team-a/frontend-84c2-fghij";
const WEST_PAYMENTS = "west/team-b/payments-2b7c-q1";
const EAST_FRONTEND = "east/team-a/frontend-7d9f-abcde";
const Y1 = "west/team-a/checkout-9a1e-y1";
const X1 = "east/team-a/checkout-5c6b-x1";
const AUTHORITY = "checkout.team-a.mesh.aether:8080";
const WAYPOINT_SNI = "8080.checkout.team-a.mesh.aether";
const VIP = "10.96.0.10"; // checkout's clusterset VIP in the mesh file
/** Capture needs a redirect rule in the pod's netns; where namespaces are required (CI), so is iptables. */
const captureTested = (netnsAvailable() && iptablesAvailable()) || process.env.AETHER_REQUIRE_NETNS === "1";
/** The outbound clusters' stats names (their `alt_stat_name`, which access logs show too). */
const CHECKOUT_8080 = outboundStatName({ service: "checkout", namespace: "team-a", port: 8080 });
const CHECKOUT_9090 = outboundStatName({ service: "checkout", namespace: "team-a", port: 9090 });

const xfccUri = (xfcc: string | null) => /(?:^|;)URI=([^;,]+)/.exec(xfcc ?? "")?.[1];
const podName = (pod: string) => pod.split("/").at(-1)!;

function labDocument(): MeshDocument {
  const document = meshDocument() as MeshDocument & { dependencies: Record<string, string[]> };
  document.dependencies["team-b/payments"] = ["team-a/checkout"];
  document.services["team-a/checkout"] = document.services["team-a/checkout"]!.filter((r) => r.kubernetesMetadata?.podName !== "checkout-9a1e-y2");
  return document;
}

/** The registry after east's checkout pods fail their readiness probes. */
function eastCheckoutUnhealthy(): MeshDocument {
  const document = labDocument();
  for (const record of document.services["team-a/checkout"]!) if (record.clusterName === "east") (record as { health?: string }).health = "UNHEALTHY";
  return document;
}

const modeOf = (version: string): SourceIdentity => (compareVersions(version, SOURCE_IDENTITY_FLOORS.selector) >= 0 ? "selector" : "sockets");

/** What lets identities cross sources in each mode, undone by the compiled config: the negative controls. */
const LEAKS: Record<SourceIdentity, { readonly what: string; readonly transform: (bootstrap: RenderedBootstrap) => RenderedBootstrap }> = {
  selector: { what: "the identity stamped with envoy.string (not Hashable)", transform: (b) => stampWithFactory(b, "envoy.string") },
  sockets: { what: "no connection_pool_per_downstream_connection", transform: withoutPerDownstreamPools },
};

const runs: [string, SourceIdentity, EnvoyBinary][] = found.map((envoy) => [envoy.version, modeOf(envoy.version), envoy]);

describe.each(runs)("Envoy %s, %s mode: requests from a pod's app through its node's outbound listeners", (version, sourceIdentity, envoy) => {
  let lab: MeshLab;
  let failover: Promise<void> | undefined;

  beforeAll(async () => {
    lab = await startMeshLab({
      envoy,
      document: labDocument(),
      envoyNodes: ["west/node-1", "west/node-2", "east/node-1", "east/node-2"],
      options: { eastWestWaypoint: "cross-cluster", sourceIdentity },
      tag: `eg${version.replaceAll(".", "")}`,
      dir: join(dir, version),
      eds: "ads",
    });
    console.log(
      `egress data plane on Envoy ${version} (${sourceIdentity}): ${lab.topology.mode === "netns" ? "network namespaces" : "loopback fallback (127.x)"}`,
    );
  }, 120_000);
  afterAll(() => lab?.stop());

  /** A request from `pod`'s app to its egress listener: cleartext, no certificate, the service's authority. */
  const fromApp = (pod: string, extra: Partial<Probe> = {}): Probe => ({
    kind: "http",
    plain: "http1",
    ...lab.egress(pod),
    servername: AUTHORITY,
    authority: AUTHORITY,
    ...extra,
  });
  const call = async (pod: string, extra: Partial<Probe> = {}) => (await lab.probe({ pod }, [fromApp(pod, extra)]))[0]!;
  const replyOf = (result: ProbeResult) => {
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, status: 200 });
    return JSON.parse(result.body!) as EchoReply;
  };
  const envoyOf = (node: string) => lab.envoys.get(node)!;

  /** East's checkout pods go unhealthy in the registry; resolves once east/node-1's Envoy applied it. */
  const failOver = () =>
    (failover ??= (async () => {
      lab.update(eastCheckoutUnhealthy());
      await lab.applied("east/node-1");
      await envoyOf("east/node-1").waitForStat(`cluster.${CHECKOUT_8080}.membership_healthy`, (healthy) => healthy === 1);
    })());

  test("same cluster: the node presents the pod's certificate, the destination pod's app sees the pod in XFCC", async () => {
    const spoofed = { "x-forwarded-client-cert": `URI=${workloadId(TD, "evil", "mallory")}` };
    const [http1, h2c, unknown] = await lab.probe({ pod: WEST_FRONTEND }, [
      fromApp(WEST_FRONTEND, { headers: spoofed, path: "/same-cluster" }),
      fromApp(WEST_FRONTEND, { plain: "h2c", authority: "checkout.team-a.mesh.aether" }),
      fromApp(WEST_FRONTEND, { authority: "nowhere.team-a.mesh.aether:8080" }),
    ]);
    for (const result of [http1!, h2c!]) {
      const reply = replyOf(result);
      expect(reply.app).toBe(podName(Y1));
      expect(xfccUri(reply.xfcc)).toBe(FRONTEND);
      expect(reply.xfcc).not.toContain("mallory");
    }
    expect(unknown).toMatchObject({ ok: true, status: 404 });

    const egress = await envoyOf("west/node-1").waitForAccessLog((e) => e.kind === "http" && e.path === "/same-cluster");
    expect(egress).toMatchObject({
      listener: "outbound_frontend-84c2-fghij_team-a",
      downstream_tls: null, // the app spoke cleartext; the identity comes from the listener it reached
      upstream_cluster: CHECKOUT_8080,
      upstream_host: `${lab.topology.podIp(Y1)}:15008`,
      upstream_peer_uri: CHECKOUT,
    });
    expect(egress.upstream_tls).toMatch(/^TLSv1\.[23]$/);
    const inbound = await envoyOf("west/node-2").waitForAccessLog((e) => e.kind === "http" && e.path === "/same-cluster");
    expect(inbound).toMatchObject({ listener: "inbound_checkout-9a1e-y1_team-a", sni: "8080", downstream_peer_uri: FRONTEND, downstream_local_uri: CHECKOUT });
  });

  test.skipIf(!captureTested)(
    `VIP capture: the pod's connections to checkout's VIP are redirected to its capture listener, which sends them on as the pod (${sourceIdentity})`,
    async () => {
      if (!iptablesAvailable()) throw new Error("the capture test needs iptables in the pod's netns (apt-get install iptables)");
      const capturePort = lab.compiled.get("west/node-1")!.options.capturePort;
      lab.topology.redirect(WEST_FRONTEND, VIP, capturePort);
      // The app dials the VIP as it would any address: no mesh authority, HTTP/1.1 or h2c.
      const viaVip = (plain: "http1" | "h2c"): Probe => ({
        kind: "http",
        plain,
        host: VIP,
        port: 8080,
        servername: VIP,
        authority: `${VIP}:8080`,
        path: `/captured/${plain}`,
      });
      const [tcp, http1, h2c] = await lab.probe({ pod: WEST_FRONTEND }, [
        { kind: "tcp", plain: "http1", host: VIP, port: 9090, servername: VIP, payload: "captured bytes" },
        viaVip("http1"),
        viaVip("h2c"),
      ]);
      expect(tcp, JSON.stringify(tcp)).toMatchObject({ ok: true, echoed: "captured bytes" });
      for (const result of [http1!, h2c!]) {
        const reply = replyOf(result);
        expect(reply.app).toBe(podName(Y1));
        expect(xfccUri(reply.xfcc)).toBe(FRONTEND);
      }

      // original_dst restored the VIP:port the app dialed; the TCP port's chain proxied the bytes with the pod's certificate.
      const captured = await envoyOf("west/node-1").waitForAccessLog((e) => e.kind === "tcp_proxy" && e.downstream_local === `${VIP}:9090`);
      expect(captured).toMatchObject({
        listener: "capture_frontend-84c2-fghij_team-a",
        upstream_cluster: CHECKOUT_9090,
        upstream_host: `${lab.topology.podIp(Y1)}:15008`,
        upstream_peer_uri: CHECKOUT,
      });
      // The record at the end of the connection (at upstream connect the pod's handshake may not be done).
      const landed = await envoyOf("west/node-2").waitForAccessLog((e) => e.kind === "tcp_proxy" && e.chain === "port_9090");
      expect(landed).toMatchObject({ listener: "inbound_checkout-9a1e-y1_team-a", sni: "9090", downstream_peer_uri: FRONTEND });
      // The HTTP port's chain ended the app's HTTP (either version) and routed each request over the mesh's HTTP/2.
      for (const [plain, protocol] of [
        ["http1", "HTTP/1.1"],
        ["h2c", "HTTP/2"],
      ] as const) {
        const path = `/captured/${plain}`;
        const request = await envoyOf("west/node-1").waitForAccessLog((e) => e.kind === "http" && e.path === path);
        expect(request).toMatchObject({
          listener: "capture_frontend-84c2-fghij_team-a",
          chain: "vip_checkout_team-a_8080",
          downstream_local: `${VIP}:8080`,
          protocol,
          upstream_cluster: CHECKOUT_8080,
          upstream_peer_uri: CHECKOUT,
        });
        const inbound = await envoyOf("west/node-2").waitForAccessLog((e) => e.kind === "http" && e.path === path);
        expect(inbound).toMatchObject({ listener: "inbound_checkout-9a1e-y1_team-a", sni: "8080", protocol: "HTTP/2", downstream_peer_uri: FRONTEND });
      }
    },
  );

  /** Interleaved requests from frontend and payments on west/node-1; who the destination saw, and over which connection. */
  async function interleaved(tag: string) {
    const order = [WEST_FRONTEND, WEST_PAYMENTS, WEST_FRONTEND, WEST_PAYMENTS, WEST_FRONTEND, WEST_PAYMENTS];
    const sent: { source: string; path: string; seenAs: string | undefined }[] = [];
    for (const [i, pod] of order.entries()) {
      const path = `/${tag}/${i}`;
      sent.push({ source: pod === WEST_FRONTEND ? FRONTEND : PAYMENTS, path, seenAs: xfccUri(replyOf(await call(pod, { path })).xfcc) });
    }
    const inbound = envoyOf("west/node-2");
    const entries = await Promise.all(sent.map(({ path }) => inbound.waitForAccessLog((e) => e.kind === "http" && e.path === path)));
    return sent.map((request, i) => ({ ...request, peer: entries[i]!.downstream_peer_uri, connection: entries[i]!.downstream_remote }));
  }

  test(`no identity crosses sources: frontend and payments on one node, interleaved, each seen as itself (${sourceIdentity})`, async () => {
    const seen = await interleaved("identity");
    for (const request of seen) expect(request, JSON.stringify(seen)).toMatchObject({ seenAs: request.source, peer: request.source });
    const connections = (identity: string) => new Set(seen.filter((r) => r.source === identity).map((r) => r.connection));
    if (sourceIdentity === "selector") {
      // Pools partition by identity: each source's requests share one upstream connection, never the other's.
      expect(connections(FRONTEND).size).toBe(1);
      expect(connections(PAYMENTS).size).toBe(1);
      expect([...connections(FRONTEND)]).not.toEqual([...connections(PAYMENTS)]);
    } else {
      // A pool per downstream connection: every request (its own downstream connection) opened its own.
      expect(new Set(seen.map((r) => r.connection)).size).toBe(seen.length);
    }
  });

  test(`negative control: with ${LEAKS[sourceIdentity].what}, payments' requests go out with frontend's certificate`, async () => {
    await lab.restartEnvoy("west/node-1", LEAKS[sourceIdentity].transform);
    try {
      const seen = await interleaved("leak");
      const leaked = seen.filter((r) => r.seenAs !== r.source);
      expect(leaked.length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(leaked.every((r) => r.source === PAYMENTS && r.seenAs === FRONTEND && r.peer === FRONTEND)).toBe(true);
    } finally {
      await lab.restartEnvoy("west/node-1");
    }
  });

  test("failover: with east's checkout pods unhealthy in the registry, east's frontend reaches checkout in west through west/node-2's waypoint", async () => {
    const before = replyOf(await call(EAST_FRONTEND, { path: "/before-failover" }));
    expect(before.app).toBe(podName(X1)); // the same-cluster tier first
    expect(xfccUri(before.xfcc)).toBe(FRONTEND);
    expect(await envoyOf("east/node-1").waitForAccessLog((e) => e.kind === "http" && e.path === "/before-failover")).toMatchObject({
      upstream_host: `${lab.topology.podIp(X1)}:15008`,
    });

    await failOver();
    const after = replyOf(await call(EAST_FRONTEND, { path: "/after-failover" }));
    expect(after.app).toBe(podName(Y1));
    expect(xfccUri(after.xfcc)).toBe(FRONTEND);
    expect(await envoyOf("east/node-1").waitForAccessLog((e) => e.kind === "http" && e.path === "/after-failover")).toMatchObject({
      upstream_host: `${lab.topology.nodeIp("west/node-2")}:15009`,
      upstream_peer_uri: CHECKOUT,
    });
  });

  test("cross-cluster: the waypoint proxies the source node's TLS by SNI without terminating it; the destination pod's inbound listener terminates it", async () => {
    await failOver();
    const reply = replyOf(await call(EAST_FRONTEND, { path: "/cross-cluster" }));
    expect(reply.app).toBe(podName(Y1));
    expect(xfccUri(reply.xfcc)).toBe(FRONTEND);

    // The source node: mTLS to the waypoint address, checkout's certificate verified end to end.
    const source = await envoyOf("east/node-1").waitForAccessLog((e) => e.kind === "http" && e.path === "/cross-cluster");
    expect(source).toMatchObject({ upstream_host: `${lab.topology.nodeIp("west/node-2")}:15009`, upstream_peer_uri: CHECKOUT });
    expect(source.upstream_tls).toMatch(/^TLSv1\.[23]$/);
    // The waypoint: TCP proxying of the waypoint SNI, no TLS on either side, to the pod's inbound port.
    const west = envoyOf("west/node-2");
    const terminated = await west.waitForAccessLog((e) => e.kind === "http" && e.path === "/cross-cluster");
    expect(terminated).toMatchObject({
      listener: "inbound_checkout-9a1e-y1_team-a",
      sni: WAYPOINT_SNI,
      downstream_peer_uri: FRONTEND,
      downstream_local_uri: CHECKOUT,
    });
    expect(terminated.downstream_tls).toMatch(/^TLSv1\.[23]$/);
    // Written when the waypoint connected upstream: the source node's pooled connection stays open.
    const proxied = await west.waitForAccessLog((e) => e.listener === "ew_tunnel" && e.kind === "tcp_proxy_connected" && e.sni === WAYPOINT_SNI);
    expect(proxied).toMatchObject({
      chain: "ew_checkout_team-a",
      downstream_tls: null,
      downstream_peer_uri: null,
      upstream_cluster: "ew_ingress_checkout_team-a",
      upstream_host: `${lab.topology.podIp(Y1)}:15008`,
      upstream_tls: null,
    });
    // With namespaces, the connection comes from east/node-1's own address, across the underlay.
    if (lab.topology.mode === "netns") expect(proxied.downstream_remote).toMatch(new RegExp(`^${lab.topology.nodeIp("east/node-1").replaceAll(".", "\\.")}:`));
    const stats = await west.stats();
    const tunnel = `listener.${lab.topology.nodeIp("west/node-2")}_15009.`;
    expect([...stats].filter(([name, value]) => name.startsWith(`${tunnel}ssl.`) && value > 0)).toEqual([]);
  });
});
