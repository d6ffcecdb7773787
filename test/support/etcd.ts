/**
 * A real etcd for the registry tests: the `etcd` binary (Debian's `etcd-server`, or
 * `AETHER_ETCD_BIN`), started per suite on free loopback ports with a temporary data directory,
 * stopped by PID. Without a binary the suite is skipped with one line saying how to run it;
 * `AETHER_REQUIRE_ETCD=1` (set by CI) makes a missing binary a failure instead.
 *
 * `CuttableProxy` sits between a client and etcd so a test can cut the connection (a real
 * disconnect) while it keeps writing to etcd directly.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Etcd3 } from "etcd3";
import { encodeServiceEndpoint, type ServiceEndpoint } from "../../src/model/registry.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { endpointKey, nodeStatusKey } from "../../src/server/etcd-keys.js";
import { type ManagedProcess, startProcess, waitUntil } from "../envoy/support/processes.js";

/** The etcd binary to run, or why there is none. */
export function etcdBinary(): { path: string } | { missing: string } {
  const path = process.env.AETHER_ETCD_BIN ?? "etcd";
  const probe = spawnSync(path, ["--version"], { encoding: "utf8" });
  if (probe.status === 0) return { path };
  return { missing: `no etcd binary (${path}: ${probe.error ? (probe.error as NodeJS.ErrnoException).code : `exit ${probe.status}`})` };
}

export const ETCD_SKIP_HINT =
  "install it (apt-get install -y etcd-server) or set AETHER_ETCD_BIN=/path/to/etcd; AETHER_REQUIRE_ETCD=1 makes a missing binary fail";

/** Whether the etcd suites run here; prints the skip line once when they do not. */
export function etcdSuiteEnabled(suite: string): boolean {
  const binary = etcdBinary();
  if ("path" in binary) return true;
  if (process.env.AETHER_REQUIRE_ETCD === "1") throw new Error(`${suite}: AETHER_REQUIRE_ETCD=1 but ${binary.missing}`);
  console.warn(`skipped ${suite}: ${binary.missing} — ${ETCD_SKIP_HINT}`);
  return false;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface EtcdServer {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  readonly port: number;
  readonly process: ManagedProcess;
  /** A client for the test's own reads and writes. */
  readonly client: Etcd3;
  stop(): Promise<void>;
}

export async function startEtcd(name = "etcd"): Promise<EtcdServer> {
  const binary = etcdBinary();
  if (!("path" in binary)) throw new Error(binary.missing);
  const dataDir = mkdtempSync(join(tmpdir(), "aether-etcd-"));
  const [port, peer] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${port}`;
  const peerUrl = `http://127.0.0.1:${peer}`;
  const child = startProcess(
    [
      binary.path,
      "--name",
      name,
      "--data-dir",
      dataDir,
      "--listen-client-urls",
      endpoint,
      "--advertise-client-urls",
      endpoint,
      "--listen-peer-urls",
      peerUrl,
      "--initial-advertise-peer-urls",
      peerUrl,
      "--initial-cluster",
      `${name}=${peerUrl}`,
    ],
    { name: `${name}-${port}`, logDir: join(dataDir, "logs") },
  );
  const client = new Etcd3({ hosts: endpoint });
  await waitUntil(
    async () =>
      child.exit()
        ? Promise.reject(new Error(`etcd exited: ${child.stderr().slice(-2000)}`))
        : client.get("/ready").then(
            () => true,
            () => undefined,
          ),
    20_000,
    () => `etcd on ${endpoint} not ready: ${child.stderr().slice(-2000)}`,
  );
  return {
    endpoint,
    port,
    process: child,
    client,
    async stop() {
      client.close();
      await child.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A TCP proxy to `port` whose connections a test can cut, and refuse until restored. */
export class CuttableProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #open = true;
  port = 0;

  constructor(readonly target: number) {
    this.#server = createServer((client) => {
      if (!this.#open) return client.destroy();
      const upstream = connect(target, "127.0.0.1");
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on("close", () => this.#sockets.delete(socket));
        socket.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.port = (this.#server.address() as { port: number }).port;
    return `http://127.0.0.1:${this.port}`;
  }

  /** Drops every connection and refuses new ones. */
  cut(): void {
    this.#open = false;
    for (const socket of this.#sockets) socket.destroy();
  }

  restore(): void {
    this.#open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** The etcd writes (key → value) that hold a mesh-file document, in the registry layout under `prefix`. */
export function registryEntries(prefix: string, doc: Record<string, unknown>): Map<string, Buffer> {
  const snapshot = parseSnapshot(doc);
  const entries = new Map<string, Buffer>();
  const { nodes: _nodes, services: _services, ...settings } = doc;
  entries.set(`${prefix}/mesh`, Buffer.from(JSON.stringify(settings)));
  for (const node of snapshot.nodes) {
    const key = nodeStatusKey(prefix, { region: node.region || "none", cluster: node.cluster, node: node.name });
    entries.set(key, Buffer.from(JSON.stringify({ ip: node.ip, zone: node.zone, ready: node.ready })));
  }
  for (const [service, records] of snapshot.services) {
    for (const record of records) entries.set(endpointEntryKey(prefix, service, record), Buffer.from(encodeServiceEndpoint(record)));
  }
  return entries;
}

export function endpointEntryKey(prefix: string, service: string, record: ServiceEndpoint): string {
  const [namespace, name] = service.split("/") as [string, string];
  return endpointKey(prefix, { region: record.locality.region || "none", cluster: record.clusterName, namespace, service: name, ip: record.ip });
}

/** Writes `entries` in one transaction: one revision. */
export async function writeAtomically(client: Etcd3, entries: ReadonlyMap<string, Buffer>): Promise<void> {
  await client
    .if("/never-written", "Version", "==", 0)
    .then(...[...entries].map(([key, value]) => client.put(key).value(value)))
    .commit();
}
