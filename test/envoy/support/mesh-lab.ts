/**
 * A mesh lab: real Envoys configured only by aether-xds, on a topology built from a mesh file.
 *
 *   const lab = await startMeshLab({ envoy, document, envoyNodes: ["west/node-2"], sourceNodes: ["east/node-1"], options: {...}, tag, dir });
 *   await lab.probe({ pod: "east/team-a/frontend-7d9f-abcde" }, [{ kind: "http", host: ..., servername: ..., ...lab.clientTls(id) }]);
 *   await lab.stop();
 *
 * For each node in `envoyNodes`: compile it (`compileNode`, the given options with SDS from the
 * test server: `sds: {grpcCluster: "sds"}`), build its bootstrap with `nodeBootstrap`, start its
 * Envoy inside the node's netns, and start an echo app in each of its pods (HTTP/2-or-1.1 echo on
 * the pod's HTTP ports, TCP echo on its TCP ports). `sourceNodes` exist as namespaces (with their
 * pods' namespaces) to run clients from, without an Envoy. One trust domain (`mesh.trust.mode:
 * shared`); the SDS server holds an SVID for every identity the bootstraps name and every service
 * of the mesh, and the bundle.
 *
 * EDS: TEMPORARY `inlineAssignments` (phase 1). Phase 2 replaces it with the ADS server of issue 12
 * — the one place to change is `nodeBootstrap`'s `eds` step.
 */
import { join } from "node:path";
import { type CompileResult, compileNode } from "../../../src/compile/compile-node.js";
import { renderBootstrap, toBootstrap } from "../../../src/emit/bootstrap.js";
import { renderMessage } from "../../../src/emit/render.js";
import { localNodeFrom } from "../../../src/model/node.js";
import type { OptionsInput } from "../../../src/model/options.js";
import { parseSnapshot } from "../../../src/model/snapshot.js";
import { type EchoApp, runClient, startEchoApp } from "./apps.js";
import type { EnvoyBinary } from "./binaries.js";
import { inlineAssignments, pointClusterAt, type RenderedBootstrap } from "./bootstrap-transforms.js";
import { type EnvoyProcess, startEnvoy } from "./envoy-process.js";
import type { Probe, ProbeResult } from "./mtls-client.js";
import { createTopology, type MeshDocument, type NetworkMode, type Place, type Topology, topologySpec } from "./netns.js";
import { createPki, type Pki, type Svid, workloadId } from "./pki.js";
import { type SdsServer, type SecretJson, startSdsServer, tlsCertificateSecret, validationContextSecret } from "./sds-server.js";

export const SDS_CLUSTER = "sds";

export interface MeshLabOptions {
  readonly envoy: EnvoyBinary;
  /** A mesh file document (parsed YAML/JSON); not modified. */
  readonly document: MeshDocument;
  /** Nodes (`cluster/name`) that run an Envoy. */
  readonly envoyNodes: readonly string[];
  /** Nodes that only exist as namespaces, to run clients from. */
  readonly sourceNodes?: readonly string[];
  /** Compile options; `sds` is always the test SDS server. */
  readonly options: OptionsInput;
  /** Short and unique per lab: part of every namespace name. */
  readonly tag: string;
  readonly dir: string;
  readonly mode?: NetworkMode;
  readonly concurrency?: number;
  /** A test's own change to a node's bootstrap, after `nodeBootstrap` (negative controls). */
  readonly transform?: (bootstrap: RenderedBootstrap, node: string) => RenderedBootstrap;
}

export interface MeshLab {
  readonly topology: Topology;
  readonly pki: Pki;
  readonly sds: SdsServer;
  readonly trustDomain: string;
  /** The snapshot as compiled (after the topology's rewrite). */
  readonly document: MeshDocument;
  readonly compiled: ReadonlyMap<string, CompileResult>;
  readonly envoys: ReadonlyMap<string, EnvoyProcess>;
  readonly apps: ReadonlyMap<string, EchoApp>;
  /** TLS fields of a probe presenting `spiffeId`'s SVID and trusting the mesh bundle. */
  clientTls(spiffeId: string): Pick<Probe, "caFile" | "certFile" | "keyFile">;
  probe(place: Place, probes: readonly Probe[]): Promise<ProbeResult[]>;
  stop(): Promise<void>;
}

/**
 * Every SDS secret name a rendered bootstrap refers to: `*_sds_secret_config(s)[].name`, and the
 * on-demand certificate selector's `prefetch_secret_names` and mapper `default_value` (selector mode).
 */
export function secretNames(bootstrap: unknown): string[] {
  const names = new Set<string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    if (value === null || typeof value !== "object") return;
    for (const [key, child] of Object.entries(value)) {
      if (/_sds_secret_configs?$/.test(key)) for (const config of [child].flat() as { name?: string }[]) if (config?.name) names.add(config.name);
      if (key === "prefetch_secret_names" && Array.isArray(child)) for (const name of child) names.add(String(name));
      if (key === "default_value" && typeof child === "string" && child.startsWith("spiffe://")) names.add(child);
      walk(child);
    }
  };
  walk(bootstrap);
  return [...names].sort();
}

/** The secret for a name: the trust domain's bundle for `spiffe://<td>`, else the SVID of that SPIFFE ID. */
export function secretFor(name: string, pki: Pki): SecretJson {
  const bundle = /^spiffe:\/\/([^/]+)$/.exec(name);
  return bundle ? validationContextSecret(name, pki.bundle(bundle[1]!)) : tlsCertificateSecret(name, pki.svid(name));
}

/**
 * A compiled node as the lab runs it: `toBootstrap`, then (TEMPORARY, phase 1) every EDS cluster's
 * assignment inline, the `sds` stub at the test SDS server, and the topology's address adaptation
 * (identity with network namespaces).
 */
export function nodeBootstrap(result: CompileResult, sds: Pick<SdsServer, "envoyAddress">, topology: Pick<Topology, "adaptBootstrap">): RenderedBootstrap {
  const rendered = renderBootstrap(toBootstrap(result));
  const eds = inlineAssignments(
    rendered,
    result.endpoints.map((e) => renderMessage("envoy.config.endpoint.v3.ClusterLoadAssignment", e)),
  );
  return topology.adaptBootstrap(pointClusterAt(eds, SDS_CLUSTER, sds.envoyAddress));
}

/** HTTP and TCP ports of each hosted pod of a mesh document: `ports ∪ {port}`, TCP where `protocols` says so. */
function podPorts(document: MeshDocument): Map<string, { http: number[]; tcp: number[] }> {
  const protocols = (document.protocols ?? {}) as Record<string, Record<string, string>>;
  const result = new Map<string, { http: number[]; tcp: number[] }>();
  for (const [service, records] of Object.entries(document.services)) {
    for (const record of records) {
      const key = `${record.clusterName}/${record.kubernetesMetadata?.namespace || service.split("/")[0]}/${record.kubernetesMetadata?.podName}`;
      const ports = [...new Set([...(record.port ? [record.port] : []), ...(record.ports ?? [])])].sort((a, b) => a - b);
      result.set(key, {
        http: ports.filter((p) => protocols[service]?.[String(p)] !== "tcp"),
        tcp: ports.filter((p) => protocols[service]?.[String(p)] === "tcp"),
      });
    }
  }
  return result;
}

export async function startMeshLab(options: MeshLabOptions): Promise<MeshLab> {
  const trust = (options.document.mesh as { trust?: { mode?: string; trustDomain?: string } } | undefined)?.trust;
  if (trust?.mode !== "shared" || !trust.trustDomain) throw new Error("the mesh lab supports one shared trust domain");
  const trustDomain = trust.trustDomain;
  const stops: (() => unknown)[] = [];
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // keep cleaning up
      }
    }
  };
  try {
    const spec = topologySpec(options.document, [...options.envoyNodes, ...(options.sourceNodes ?? [])]);
    const topology = createTopology(spec, options.tag, options.mode);
    stops.push(() => topology.destroy());
    const document = topology.meshDocument(options.document);
    const snapshot = parseSnapshot(document);
    const pki = createPki(join(options.dir, "pki"));
    const compiled = new Map<string, CompileResult>();
    for (const key of options.envoyNodes) {
      const [cluster, name] = key.split("/") as [string, string];
      compiled.set(key, compileNode(snapshot, localNodeFrom(snapshot, cluster, name), { ...options.options, sds: { grpcCluster: SDS_CLUSTER } }));
    }
    const sds = await startSdsServer({ socketPath: join(options.dir, `sds-${options.tag}.sock`) });
    stops.push(() => sds.stop());
    const serviceIds = Object.keys(document.services).map((key) => workloadId(trustDomain, key.split("/")[0]!, key.split("/")[1]!));
    const bootstraps = new Map(
      [...compiled].map(([key, result]) => {
        const bootstrap = nodeBootstrap(result, sds, topology);
        return [key, options.transform ? options.transform(bootstrap, key) : bootstrap];
      }),
    );
    const names = new Set([...serviceIds, `spiffe://${trustDomain}`, ...[...bootstraps.values()].flatMap(secretNames)]);
    for (const name of [...names].sort()) sds.set(secretFor(name, pki));

    const apps = new Map<string, EchoApp>();
    const ports = podPorts(document);
    const hosted = spec.pods.filter((pod) => options.envoyNodes.includes(pod.node));
    await Promise.all(
      hosted.map(async (pod) => {
        const app = await startEchoApp(topology, pod.key, ports.get(pod.key) ?? { http: [], tcp: [] }, options.dir);
        apps.set(pod.key, app);
        stops.push(() => app.stop());
      }),
    );
    const envoys = new Map<string, EnvoyProcess>();
    await Promise.all(
      [...bootstraps].map(async ([key, bootstrap]) => {
        const envoy = await startEnvoy({
          envoy: options.envoy,
          bootstrap,
          dir: options.dir,
          name: `${options.tag}-${key}`,
          place: (argv) => topology.command({ node: key }, argv),
          concurrency: options.concurrency ?? 1,
        });
        envoys.set(key, envoy);
        stops.push(() => envoy.stop());
      }),
    );
    const bundleFile = pki.ca(trustDomain).certFile;
    return {
      topology,
      pki,
      sds,
      trustDomain,
      document,
      compiled,
      envoys,
      apps,
      clientTls: (spiffeId) => {
        const svid: Svid = pki.svid(spiffeId);
        return { caFile: bundleFile, certFile: svid.certFile, keyFile: svid.keyFile };
      },
      probe: (place, probes) => runClient(topology, place, probes),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
