/** Small meshes for focused tests: terse endpoint and node helpers over the mesh-file format. */
import type { LocalNodeInput } from "../../src/model/node.js";
import { type MeshFileInput, parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";

export interface EndpointSpec {
  cluster: string;
  ip: string;
  node?: string;
  nodeIp?: string;
  pod?: string;
  port?: number;
  ports?: number[];
  health?: "HEALTHY" | "UNHEALTHY" | "DRAINING" | "UNSPECIFIED";
  weight?: number;
  region?: string;
  zone?: string;
  netns?: string;
  metadata?: Record<string, string>;
}

export function endpoint(spec: EndpointSpec): Record<string, unknown> {
  return {
    ip: spec.ip,
    clusterName: spec.cluster,
    port: spec.port ?? 8080,
    ...(spec.ports ? { ports: spec.ports } : {}),
    ...(spec.weight !== undefined ? { weight: spec.weight } : {}),
    locality: { region: spec.region ?? "r1", zone: spec.zone ?? "z1" },
    ...(spec.metadata ? { metadata: spec.metadata } : {}),
    // A netns of its own unless the test says otherwise: a record without one is left out of EDS.
    containerMetadata: { networkNamespace: spec.netns ?? `/var/run/netns/${spec.cluster}-${spec.ip.replaceAll(":", "_")}` },
    kubernetesMetadata: { podName: spec.pod ?? `pod-${spec.ip.replaceAll(".", "-")}`, nodeName: spec.node ?? "", nodeIp: spec.nodeIp ?? "" },
    health: spec.health ?? "HEALTHY",
  };
}

export interface NodeSpec {
  cluster: string;
  name: string;
  ip: string;
  region?: string;
  zone?: string;
  ready?: boolean;
}

export function node(spec: NodeSpec): NonNullable<MeshFileInput["nodes"]>[number] {
  return { cluster: spec.cluster, name: spec.name, ip: spec.ip, region: spec.region ?? "r1", zone: spec.zone ?? "z1", ready: spec.ready ?? true };
}

/** A mesh with defaults for everything but the parts under test. */
export function mesh(parts: Partial<Omit<MeshFileInput, "services">> & { services: Record<string, Record<string, unknown>[]> }): Snapshot {
  return parseSnapshot({ mesh: { meshDomain: "mesh.test", trust: { mode: "shared", trustDomain: "td.test" } }, ...parts });
}

/** The LocalNode input for a node of a mesh built here, hosting the given pods. */
export function localNode(
  cluster: string,
  name: string,
  ip: string,
  pods: LocalNodeInput["pods"] = [],
  locality = { region: "r1", zone: "z1" },
): LocalNodeInput {
  return {
    clusterName: cluster,
    nodeName: name,
    nodeIp: ip,
    locality,
    meshDomain: "mesh.test",
    trustDomain: "td.test",
    spiffeId: "spiffe://td.test/ns/aether-system/sa/aether-node",
    pods,
  };
}
