/**
 * The Envoy process runner (test/envoy/support/envoy-process.ts) on every Envoy under test: start,
 * readiness through admin, traffic, stats and the JSON access log, stop by PID (SIGTERM, then
 * SIGKILL), and a refused bootstrap reported with Envoy's reason. Host netns on 127.0.0.1, plus one
 * start inside a test netns (admin over a Unix socket) when namespaces are available.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { compileCase, loadCase } from "../support/cases.js";
import { discoverEnvoys, envoysAtLeast } from "./support/binaries.js";
import { instrument, type RenderedBootstrap } from "./support/bootstrap-transforms.js";
import { isRunning } from "./support/cleanup.js";
import { tcpEchoServer } from "./support/echo-app.js";
import { freeLoopbackPort, startEnvoy } from "./support/envoy-process.js";
import { createTopology, netnsAvailable } from "./support/netns.js";
import { validateBootstrap } from "./support/validate.js";
import { bootstrapWithAssignments, ENVOY_FLOOR } from "./support/validation-table.js";

const found = envoysAtLeast(discoverEnvoys().found, ENVOY_FLOOR);
if (found.length === 0) test.skip(`no Envoy at or above ${ENVOY_FLOOR}`, () => {});
const dir = mkdtempSync(join(tmpdir(), "aether-envoy-process-"));
const servers: Server[] = [];
afterAll(() => {
  for (const server of servers) server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A listener on 127.0.0.1:`port` proxying TCP to `upstreamPort`. */
function tcpProxyBootstrap(port: number, upstreamPort: number): RenderedBootstrap {
  return {
    static_resources: {
      listeners: [
        {
          name: "front",
          address: { socket_address: { address: "127.0.0.1", port_value: port } },
          filter_chains: [
            {
              name: "only",
              filters: [
                {
                  name: "envoy.filters.network.tcp_proxy",
                  typed_config: {
                    "@type": "type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy",
                    stat_prefix: "front",
                    cluster: "echo",
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: "echo",
          connect_timeout: "1s",
          load_assignment: {
            cluster_name: "echo",
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: upstreamPort } } } }] }],
          },
        },
      ],
    },
  };
}

function echoThrough(port: number, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(payload));
    let got = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      got += chunk;
      if (got.length >= payload.length) {
        socket.end();
        resolve(got);
      }
    });
    socket.on("error", reject);
  });
}

async function echoServer(): Promise<number> {
  const server = tcpEchoServer();
  servers.push(server);
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)));
}

describe.each(found.map((envoy) => [envoy.version, envoy] as const))("Envoy %s process runner", (version, envoy) => {
  test("starts, is LIVE, proxies, logs the connection, counts it, and stops by PID on SIGTERM", async () => {
    const port = await freeLoopbackPort();
    const proxy = await startEnvoy({ envoy, bootstrap: tcpProxyBootstrap(port, await echoServer()), dir, name: `tcp-${version}` });
    try {
      expect((await proxy.admin("/ready")).body.trim()).toBe("LIVE");
      expect(await echoThrough(port, "hello through envoy")).toBe("hello through envoy");
      const entry = await proxy.waitForAccessLog((e) => e.kind === "tcp_proxy");
      expect(entry).toMatchObject({ listener: "front", chain: "only", upstream_cluster: "echo", downstream_tls: null, bytes_received: 19 });
      expect(await proxy.waitForStat("cluster.echo.upstream_cx_total", (v) => v >= 1)).toBeGreaterThanOrEqual(1);
    } finally {
      const exit = await proxy.stop();
      expect(exit).toMatchObject({ code: 0, killed: false });
      expect(isRunning(proxy.pid)).toBe(false);
    }
  });

  test("a process that ignores SIGTERM (stopped) is killed after the timeout", async () => {
    const proxy = await startEnvoy({ envoy, bootstrap: tcpProxyBootstrap(await freeLoopbackPort(), await echoServer()), dir, name: `stopped-${version}` });
    process.kill(proxy.pid, "SIGSTOP");
    const exit = await proxy.stop(500);
    expect(exit).toMatchObject({ killed: true, signal: "SIGKILL" });
    expect(isRunning(proxy.pid)).toBe(false);
  });

  test("a bootstrap Envoy refuses fails the start with Envoy's reason", async () => {
    const broken = tcpProxyBootstrap(await freeLoopbackPort(), 1) as any;
    broken.static_resources.clusters[0].name = "";
    await expect(startEnvoy({ envoy, bootstrap: broken, dir, name: `broken-${version}`, readyTimeoutMs: 20_000 })).rejects.toThrow(
      /did not start[\s\S]*Name: value length must be at least 1/,
    );
  });

  test("the instrumentation (admin, JSON access logs) on a compiled bootstrap still validates", async () => {
    const bootstrap = instrument(bootstrapWithAssignments(compileCase(loadCase("flannel-cross-cluster"), "sockets")), {
      adminAddress: { pipe: { path: join(dir, "admin.sock") } },
      accessLogPath: join(dir, "access.log"),
    });
    const outcome = await validateBootstrap(envoy, bootstrap, dir, `instrumented-${version}`);
    expect(outcome.message).toBe("");
  });

  test.skipIf(!netnsAvailable())("runs inside a network namespace, admin over a Unix socket", async () => {
    const topology = createTopology({ nodes: [{ key: "c/n", cluster: "c", ip: "10.9.0.1" }], pods: [] }, `ep${version.replaceAll(".", "")}`);
    try {
      const envoyInNs = await startEnvoy({
        envoy,
        bootstrap: tcpProxyBootstrap(15000, 9),
        dir,
        name: `netns-${version}`,
        place: (argv) => topology.command({ node: "c/n" }, argv),
      });
      expect((await envoyInNs.admin("/ready")).body.trim()).toBe("LIVE");
      expect(await envoyInNs.stop()).toMatchObject({ code: 0 });
    } finally {
      topology.destroy();
    }
  });
});
