/**
 * Random multi-cluster mesh documents for property tests, in the mesh-file format `parseSnapshot`
 * accepts (see src/model/snapshot.ts and testdata/flannel/mesh.yaml).
 *
 * fast-check draws a small "recipe" (indices, flags, bitmasks) and `buildMeshDocument` turns it
 * into a document deterministically, so every document is VALID by construction and shrinking the
 * recipe shrinks the mesh:
 *
 * - 1–4 clusters, each with 1–6 nodes (names repeat across clusters, node IPs are unique and
 *   disjoint from pod IPs); a cluster has a node list or not; listed nodes may be not ready, and a
 *   node may be missing from its cluster's list ("gone") while records still name it;
 * - up to 6 services (names that are prefixes/suffixes of each other) with up to 25 records in
 *   all; every cluster draws pod IPs from ONE small shared pool, so the same pod IP shows up in
 *   several clusters; `(cluster, ip)` is unique across the whole mesh (a pod has one IP and one
 *   service account, which is its service);
 * - random localities (some empty, some differing from the node's), health in every spelling
 *   the registry accepts, multi-port pods (`port` and/or `ports`), weights from 0 (the default)
 *   to uint32 max so that sums overflow, user metadata sometimes using the reserved keys
 *   `waypoint`, `origin_cluster`, `origin_node`; registry node IPs known, missing or stale (for
 *   a listed node the list wins; without a list, records of one node may then disagree); a few
 *   records with no node name; some records as base64 binary protobuf;
 * - exports absent, or a partial list (possibly naming unknown services); protocols for some
 *   ports, including ports no record serves and services with no records; dependencies absent,
 *   or present for some services (possibly naming unknown services);
 * - shared or federated trust, default or templated node identities.
 */
import fc from "fast-check";
import { isInputError } from "../../src/errors.js";
import { type LocalNode, localNodeFrom } from "../../src/model/node.js";
import { type OptionsInput, SOCKET_SELECTIONS, SOURCE_IDENTITIES, type SocketSelection, WAYPOINT_MODES, type WaypointMode } from "../../src/model/options.js";
import { encodeServiceEndpoint, serviceEndpoint } from "../../src/model/registry.js";
import type { MeshFileInput, Snapshot } from "../../src/model/snapshot.js";
import { compareText } from "../../src/util/order.js";

// ---- pools ----------------------------------------------------------------------------------

export const CLUSTER_NAMES = ["east", "west", "north", "south"] as const;
const NAMESPACES = ["team-a", "team-b", "a"] as const;
/** Prefixes and suffixes of each other, to exercise `*.<svc>.<ns>.<meshDomain>` chain selection. */
const SERVICE_NAMES = ["api", "api-v2", "v2-api", "db", "web", "pay"] as const;
const PORT_POOL = [80, 443, 8080, 9090] as const;
/** A port only `protocols` declares: no record serves it. */
const DECLARED_ONLY_PORT = 7070;
/** One pool for every cluster: Flannel clusters reuse the pod CIDR. */
export const POD_IPS = [
  "10.244.0.1",
  "10.244.0.2",
  "10.244.0.3",
  "10.244.0.4",
  "10.244.0.5",
  "10.244.0.6",
  "10.244.1.1",
  "10.244.1.2",
  "10.244.1.3",
  "10.244.1.4",
  "fd00:244::1",
  "fd00:244::2",
] as const;
const REGIONS = ["", "r1", "r2"] as const;
const ZONES = ["", "z1", "z2"] as const;
const METADATA_KEYS = ["version", "track", "canary", "waypoint", "origin_cluster", "origin_node"] as const;
const METADATA_VALUES = ["v1", "v2", "true", "false", "east"] as const;
const HEALTH_SPELLINGS = ["HEALTHY", "UNHEALTHY", "DRAINING", "UNSPECIFIED", "HEALTH_STATUS_HEALTHY", "HEALTH_STATUS_DRAINING", 2, 0] as const;
const MAX_UINT32 = 0xffffffff;
export const MAX_NODES_PER_CLUSTER = 6;
export const MAX_SERVICES = 6;
export const MAX_ENDPOINTS = 25;

export const MESH_DOMAIN = "mesh.test";

/** Node IPs: `10.1<c>.0.<11+n>` — routable, unique, never a pod IP. */
export function nodeIpOf(cluster: number, node: number): string {
  return `10.1${cluster}.0.${11 + node}`;
}
/** A stale registry node IP: what the node had before (the node list wins). */
function staleNodeIpOf(cluster: number, node: number): string {
  return `10.1${cluster}.9.${11 + node}`;
}
function nodeNameOf(node: number): string {
  return `node-${node + 1}`;
}

// ---- the recipe -----------------------------------------------------------------------------

export interface NodeRecipe {
  readonly region: number;
  readonly zone: number;
  readonly ready: boolean;
  /** In a cluster with a node list: false means the node is gone (records still name it). */
  readonly listed: boolean;
}

export interface ClusterRecipe {
  readonly nodeList: boolean;
  readonly nodes: readonly NodeRecipe[];
}

export interface RecordRecipe {
  readonly cluster: number;
  readonly ip: number;
  readonly node: number;
  /** No `nodeName` at all (a record the registry could not place). */
  readonly nameless: boolean;
  readonly nodeIp: "known" | "missing" | "stale";
  readonly health: number;
  /** Bitmask over the service's ports; an empty mask serves the first one. */
  readonly ports: number;
  /** How the served ports are spelled: `port` only when one, `ports` only, or both. */
  readonly portSpelling: "port" | "ports" | "both";
  readonly weight: number;
  /** `undefined`: the node's locality, as a real pod has. */
  readonly locality: readonly [number, number] | undefined;
  readonly metadata: readonly (readonly [number, number])[];
  readonly podName: boolean;
  /** The pod's own netns, none, or one another pod on the same node claims too (a stale or forged record). */
  readonly netns: "own" | "none" | "shared";
  readonly binary: boolean;
}

export interface ServiceRecipe {
  readonly namespace: number;
  readonly name: number;
  readonly ports: readonly number[];
  readonly records: readonly RecordRecipe[];
  /** Protocols declared for the service's ports, by port index; the extra index declares a port no record serves. */
  readonly protocols: readonly (readonly [number, "http2" | "tcp"])[];
}

export interface MeshRecipe {
  readonly clusters: readonly ClusterRecipe[];
  readonly services: readonly ServiceRecipe[];
  readonly trust: "shared" | "shared-bundle" | "federated";
  readonly nodeIdentity: "default" | "per-node";
  /** `mesh.podNetwork`; the off mode's paths are checked only where pod IPs route. */
  readonly podNetwork: "isolated" | "routable";
  /** Bitmask over services, or absent; `unknown` also exports a service that does not exist. */
  readonly exports: { readonly mask: number; readonly unknown: boolean } | undefined;
  /** Per service: undefined (no entry: the service may call anything) or a bitmask over services. */
  readonly dependencies: { readonly entries: readonly (number | undefined)[]; readonly unknown: boolean } | undefined;
  /** A `protocols` entry for a service with no records at all. */
  readonly protocolOnlyService: boolean;
  /** Every cluster uses the same pod CIDR (pod IPs repeat across clusters). */
  readonly sharedPodCidr: boolean;
  readonly uniformPorts: boolean;
}

export interface RandomMeshOptions {
  /**
   * Relative weight (against 20) of records without a netns, and of records claiming a netns
   * shared with other pods of the node (NETNS_CONFLICT); 0, the default, means never. Either way
   * the pod gets no inbound listener, so the mesh path check would (rightly) fail to reach it.
   */
  readonly withoutNetns?: number;
  /** Allow records without a node name. Default true. */
  readonly namelessRecords?: boolean;
  /**
   * `true` (default): every cluster draws pod IPs from the same pool (overlapping CIDRs);
   * `false`: each cluster has its own pod CIDR (a flat network, where `off` mode can work);
   * `"either"`: drawn per mesh.
   */
  readonly sharedPodCidr?: boolean | "either";
  /** Draw weights near uint32 max (default true); false keeps weights ≤ 5000. */
  readonly hugeWeights?: boolean;
  /** Every pod of a service serves all of the service's ports (default false: random subsets). */
  readonly uniformPorts?: boolean;
}

function weightArb(huge: boolean): fc.Arbitrary<number> {
  const small = [
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 5000 }) },
  ];
  if (!huge) return fc.oneof(...small);
  return fc.oneof(
    ...small,
    { weight: 1, arbitrary: fc.constantFrom(1, 1024, 2 ** 31, MAX_UINT32 - 1, MAX_UINT32) },
    { weight: 2, arbitrary: fc.integer({ min: MAX_UINT32 - 1000, max: MAX_UINT32 }) },
  );
}

function recordRecipe(options: RandomMeshOptions): fc.Arbitrary<RecordRecipe> {
  const withoutNetns = options.withoutNetns ?? 0;
  return fc.record({
    cluster: fc.nat({ max: CLUSTER_NAMES.length - 1 }),
    ip: fc.nat({ max: POD_IPS.length - 1 }),
    node: fc.nat({ max: MAX_NODES_PER_CLUSTER - 1 }),
    nameless:
      options.namelessRecords === false
        ? fc.constant(false)
        : fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    nodeIp: fc.oneof(
      { weight: 6, arbitrary: fc.constant("known" as const) },
      { weight: 2, arbitrary: fc.constant("missing" as const) },
      { weight: 1, arbitrary: fc.constant("stale" as const) },
    ),
    health: fc.nat({ max: HEALTH_SPELLINGS.length - 1 }),
    ports: fc.nat({ max: 7 }),
    portSpelling: fc.constantFrom("port" as const, "ports" as const, "both" as const),
    weight: weightArb(options.hugeWeights !== false),
    locality: fc.option(fc.tuple(fc.nat({ max: REGIONS.length - 1 }), fc.nat({ max: ZONES.length - 1 })), { freq: 3, nil: undefined }),
    metadata: fc.array(fc.tuple(fc.nat({ max: METADATA_KEYS.length - 1 }), fc.nat({ max: METADATA_VALUES.length - 1 })), { maxLength: 3 }),
    podName: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    netns:
      withoutNetns > 0
        ? fc.oneof(
            { weight: 20, arbitrary: fc.constant("own" as const) },
            { weight: withoutNetns, arbitrary: fc.constant("none" as const) },
            { weight: withoutNetns, arbitrary: fc.constant("shared" as const) },
          )
        : fc.constant("own" as const),
    binary: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  });
}

/** The recipe arbitrary; `meshDocumentArb` maps it to a document. */
export function meshRecipeArb(options: RandomMeshOptions = {}): fc.Arbitrary<MeshRecipe> {
  const record = recordRecipe(options);
  const node = fc.record({
    region: fc.nat({ max: REGIONS.length - 1 }),
    zone: fc.nat({ max: ZONES.length - 1 }),
    ready: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    listed: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  });
  const cluster = fc.record({
    nodeList: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    nodes: fc.array(node, { minLength: 1, maxLength: MAX_NODES_PER_CLUSTER }),
  });
  const service = fc.record({
    namespace: fc.nat({ max: NAMESPACES.length - 1 }),
    name: fc.nat({ max: SERVICE_NAMES.length - 1 }),
    ports: fc.subarray([...PORT_POOL], { minLength: 1, maxLength: 3 }),
    records: fc.array(record, { maxLength: 6, size: "max" }),
    protocols: fc.array(fc.tuple(fc.nat({ max: 3 }), fc.constantFrom("http2" as const, "tcp" as const)), { maxLength: 2 }),
  });
  const mask = fc.nat({ max: (1 << MAX_SERVICES) - 1 });
  return fc.record({
    clusters: fc.array(cluster, { minLength: 1, maxLength: CLUSTER_NAMES.length }),
    services: fc.array(service, { minLength: 1, maxLength: MAX_SERVICES, size: "max" }),
    trust: fc.constantFrom("shared" as const, "shared-bundle" as const, "federated" as const),
    nodeIdentity: fc.constantFrom("default" as const, "per-node" as const),
    podNetwork: fc.constantFrom("isolated" as const, "routable" as const),
    exports: fc.option(fc.record({ mask, unknown: fc.boolean() }), { nil: undefined }),
    dependencies: fc.option(
      fc.record({
        entries: fc.array(fc.option(mask, { freq: 4, nil: undefined }), { minLength: MAX_SERVICES, maxLength: MAX_SERVICES }),
        unknown: fc.boolean(),
      }),
      { nil: undefined },
    ),
    protocolOnlyService: fc.boolean(),
    sharedPodCidr: options.sharedPodCidr === "either" ? fc.boolean().map((b) => !b) : fc.constant(options.sharedPodCidr !== false),
    uniformPorts: fc.constant(options.uniformPorts === true),
  });
}

// ---- recipe → document ----------------------------------------------------------------------

/** A mesh document as `parseSnapshot` takes it (records as JSON objects or base64 strings). */
export type MeshDocument = MeshFileInput & { services: Record<string, (Record<string, unknown> | string)[]> };
type Doc = MeshDocument;

function bitsOf(mask: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => i).filter((i) => (mask >> i) & 1);
}

/** The pool IP moved into cluster `c`'s own pod CIDR: `10.244.x.y` → `10.24c.x.y`, `fd00:244::n` → `fd0c:244::n`. */
function ownCidr(ip: string, c: number): string {
  return ip.includes(":") ? ip.replace(/^fd00:/, `fd0${c}:`) : ip.replace(/^10\.244\./, `10.24${c}.`);
}

function slug(ip: string): string {
  return ip.replace(/[.:]/g, "-");
}

/** Builds a valid mesh document from a recipe. Deterministic. */
export function buildMeshDocument(recipe: MeshRecipe): Doc {
  const clusterCount = recipe.clusters.length;
  const clusterName = (c: number) => CLUSTER_NAMES[c % clusterCount]!;
  // Services: unique keys, in recipe order.
  const services: { key: string; ns: string; name: string; recipe: ServiceRecipe }[] = [];
  for (const s of recipe.services) {
    const ns = NAMESPACES[s.namespace]!;
    const name = SERVICE_NAMES[s.name]!;
    const key = `${ns}/${name}`;
    if (!services.some((x) => x.key === key)) services.push({ key, ns, name, recipe: s });
  }
  const trustDomainOf = (c: number) => (recipe.trust === "federated" ? `${CLUSTER_NAMES[c % 2]}.td.test` : "td.test");
  const mesh: Doc["mesh"] = {
    meshDomain: MESH_DOMAIN,
    trust:
      recipe.trust === "federated"
        ? {
            mode: "federated",
            trustDomains: [0, 1]
              .filter((d) => d < clusterCount)
              .map((d) => ({
                name: trustDomainOf(d),
                clusters: CLUSTER_NAMES.slice(0, clusterCount).filter((_, c) => c % 2 === d),
              })),
            bundles: { filename: "/run/spire/bundles.spiffe" },
          }
        : recipe.trust === "shared-bundle"
          ? { mode: "shared", trustDomain: "td.test", bundleSdsName: "mesh-bundle" }
          : { mode: "shared", trustDomain: "td.test" },
  };
  mesh.podNetwork = recipe.podNetwork;
  if (recipe.nodeIdentity === "per-node") mesh.nodeIdentity = "spiffe://{trustDomain}/ns/aether-system/sa/node-{cluster}-{node}";

  const nodes: NonNullable<Doc["nodes"]> = [];
  recipe.clusters.forEach((cluster, c) => {
    if (!cluster.nodeList) return;
    cluster.nodes.forEach((node, n) => {
      if (!node.listed) return;
      nodes.push({
        cluster: clusterName(c),
        name: nodeNameOf(n),
        ip: nodeIpOf(c, n),
        region: REGIONS[node.region]!,
        zone: ZONES[node.zone]!,
        ready: node.ready,
      });
    });
  });

  const used = new Set<string>();
  let total = 0;
  let podCounter = 0;
  const servicesOut: Doc["services"] = {};
  for (const service of services) {
    const ports = [...service.recipe.ports];
    const records: (Record<string, unknown> | string)[] = [];
    for (const r of service.recipe.records) {
      if (total >= MAX_ENDPOINTS) break;
      const c = r.cluster % clusterCount;
      const cluster = recipe.clusters[c]!;
      const ip = recipe.sharedPodCidr ? POD_IPS[r.ip]! : ownCidr(POD_IPS[r.ip]!, c);
      const identity = `${c}|${ip}`;
      if (used.has(identity)) continue;
      used.add(identity);
      total++;
      const n = r.node % cluster.nodes.length;
      const node = cluster.nodes[n]!;
      const served = recipe.uniformPorts ? [...ports] : bitsOf(r.ports, ports.length).map((i) => ports[i]!);
      if (served.length === 0) served.push(ports[0]!);
      const portFields =
        r.portSpelling === "port" && served.length === 1
          ? { port: served[0]! }
          : r.portSpelling === "both"
            ? { port: served[served.length - 1]!, ports: served.slice(0, -1).length > 0 ? served.slice(0, -1) : served }
            : { ports: served };
      const nodeIp = r.nodeIp === "missing" ? "" : r.nodeIp === "stale" ? staleNodeIpOf(c, n) : nodeIpOf(c, n);
      const [region, zone] = r.locality ? [REGIONS[r.locality[0]]!, ZONES[r.locality[1]]!] : [REGIONS[node.region]!, ZONES[node.zone]!];
      const metadata: Record<string, string> = {};
      for (const [k, v] of r.metadata) metadata[METADATA_KEYS[k]!] = METADATA_VALUES[v]!;
      const pod = `${service.name}-${podCounter++}`;
      const record: Record<string, unknown> = {
        ip,
        clusterName: clusterName(c),
        ...portFields,
        ...(r.weight !== 0 ? { weight: r.weight } : {}),
        locality: { region, zone },
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
        containerMetadata: {
          containerId: `ctr-${slug(ip)}`,
          ...(r.netns === "own" ? { networkNamespace: `/var/run/netns/cni-${clusterName(c)}-${slug(ip)}` } : {}),
          ...(r.netns === "shared" ? { networkNamespace: `/var/run/netns/shared-${clusterName(c)}-${nodeNameOf(n)}` } : {}),
        },
        kubernetesMetadata: {
          ...(r.podName ? { podName: pod } : {}),
          ...(r.nameless ? {} : { nodeName: nodeNameOf(n) }),
          ...(nodeIp ? { nodeIp } : {}),
        },
        health: HEALTH_SPELLINGS[r.health]!,
      };
      records.push(r.binary ? binaryRecord(record) : record);
    }
    servicesOut[service.key] = records;
  }

  const doc: Doc = { mesh, nodes, services: servicesOut };
  const serviceKeys = services.map((s) => s.key);
  if (recipe.exports) {
    const exported = bitsOf(recipe.exports.mask, serviceKeys.length).map((i) => serviceKeys[i]!);
    if (recipe.exports.unknown) exported.push("team-b/ghost");
    doc.exports = exported;
  }
  const protocols: Record<string, Record<string, "http2" | "tcp">> = {};
  for (const service of services) {
    for (const [index, protocol] of service.recipe.protocols) {
      const port = index < service.recipe.ports.length ? service.recipe.ports[index]! : DECLARED_ONLY_PORT;
      protocols[service.key] = { ...protocols[service.key], [String(port)]: protocol };
    }
  }
  if (recipe.protocolOnlyService) protocols["team-b/declared"] = { [String(DECLARED_ONLY_PORT)]: "tcp" };
  if (Object.keys(protocols).length > 0) doc.protocols = protocols;
  if (recipe.dependencies) {
    const dependencies: Record<string, string[]> = {};
    services.forEach((service, i) => {
      const mask = recipe.dependencies!.entries[i];
      if (mask === undefined) return;
      const deps = bitsOf(mask, serviceKeys.length).map((j) => serviceKeys[j]!);
      if (recipe.dependencies!.unknown && i === 0) deps.push("team-b/ghost");
      if (recipe.protocolOnlyService && i === 0) deps.push("team-b/declared");
      dependencies[service.key] = deps;
    });
    doc.dependencies = dependencies;
  }
  return doc;
}

/** The registry's binary form, base64, as a mesh file may carry a record. */
function binaryRecord(record: Record<string, unknown>): string {
  return Buffer.from(encodeServiceEndpoint(serviceEndpoint.parse(record))).toString("base64");
}

/** Random valid mesh documents (plain JSON-like objects, safe to mutate after a deep copy). */
export function meshDocumentArb(options: RandomMeshOptions = {}): fc.Arbitrary<Doc> {
  return meshRecipeArb(options).map(buildMeshDocument);
}

// ---- nodes and option sets ------------------------------------------------------------------

export interface NodeRef {
  readonly cluster: string;
  readonly name: string;
}

/**
 * Every `(cluster, node)` the snapshot lists or a record names, for which `localNodeFrom` succeeds
 * (i.e. with a known IP), sorted.
 */
export function compilableNodes(snapshot: Snapshot): NodeRef[] {
  const candidates = new Map<string, NodeRef>();
  for (const node of snapshot.nodes) candidates.set(`${node.cluster}/${node.name}`, { cluster: node.cluster, name: node.name });
  for (const records of snapshot.services.values()) {
    for (const record of records) {
      const name = record.kubernetesMetadata.nodeName;
      if (name) candidates.set(`${record.clusterName}/${name}`, { cluster: record.clusterName, name });
    }
  }
  return [...candidates]
    .sort(([a], [b]) => compareText(a, b))
    .map(([, ref]) => ref)
    .filter((ref) => localNodeOrUndefined(snapshot, ref) !== undefined);
}

export function localNodeOrUndefined(snapshot: Snapshot, ref: NodeRef): LocalNode | undefined {
  try {
    return localNodeFrom(snapshot, ref.cluster, ref.name);
  } catch (error) {
    if (isInputError(error)) return undefined;
    throw error;
  }
}

/** Picks one compilable node by an index (modulo their count): pair it with `fc.nat()` so it shrinks to the first. */
export function pickNode(snapshot: Snapshot, pick: number): NodeRef | undefined {
  const nodes = compilableNodes(snapshot);
  return nodes.length === 0 ? undefined : nodes[pick % nodes.length];
}

export interface ModeSelection {
  readonly eastWestWaypoint: WaypointMode;
  readonly socketSelection: SocketSelection;
}

/** Every waypoint mode × socket selection. */
export const MODE_SELECTIONS: readonly ModeSelection[] = WAYPOINT_MODES.flatMap((eastWestWaypoint) =>
  SOCKET_SELECTIONS.map((socketSelection) => ({ eastWestWaypoint, socketSelection })),
);

export const modeSelectionArb: fc.Arbitrary<ModeSelection> = fc.constantFrom(...MODE_SELECTIONS);

/** The compile options other than the mode and socket selection. */
export type OtherOptions = Omit<OptionsInput, "eastWestWaypoint" | "socketSelection">;

/**
 * Either source-identity mode, with mostly the default options; sometimes other ports (the tunnel
 * port may equal the inbound one), gRPC config sources, another netns key.
 */
export const otherOptionsArb: fc.Arbitrary<OtherOptions> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ sourceIdentity: fc.constantFrom(...SOURCE_IDENTITIES) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      sourceIdentity: fc.constantFrom(...SOURCE_IDENTITIES),
      inboundPort: fc.constantFrom(15008, 15006),
      tunnelPort: fc.constantFrom(15009, 15008, 15443),
      sds: fc.constantFrom("ads" as const, { grpcCluster: "spire_agent" }),
      eds: fc.constantFrom("ads" as const, { grpcCluster: "xds_eds" }),
      netnsFilterStateKey: fc.constantFrom("aether.source_netns", "io.aether.source_netns"),
    }),
  },
);

/** Every mode × socket selection with the same other options. */
export function everyModeSelection(other: OtherOptions = {}): (ModeSelection & OtherOptions)[] {
  return MODE_SELECTIONS.map((selection) => ({ ...other, ...selection }));
}
