/** The local node a compile is for: where it runs, who it is, and the pods it hosts. */
import { z } from "zod";
import { InputError, type InputIssue } from "../errors.js";
import { isServiceKey, nodeSpiffeId, parseServiceKey, type ServiceKey, structuredSniProblem } from "../naming.js";
import { deepFreeze } from "../util/freeze.js";
import { compositeKey } from "../util/keys.js";
import { compareText } from "../util/order.js";
import { clusterName, dnsLabel, dnsSubdomain, ipAddress, locality, netnsPath, orEmpty, port, spiffeId, trustDomain } from "./fields.js";
import { collectIssues, unsafeInputIssues } from "./issues.js";
import { pickNodeAddress } from "./node-address.js";
import { podNameOf, type ServiceEndpoint } from "./registry.js";
import type { NodeStatus, Snapshot, TrustConfig } from "./snapshot.js";

const serviceKeyField = z.string().refine(isServiceKey, {
  error: 'not a service key "<namespace>/<service>"',
});

const hostedPod = z.strictObject({
  name: dnsSubdomain,
  namespace: dnsLabel,
  /** The pod's service account, which is also its registry service name. */
  serviceAccount: dnsLabel,
  ip: ipAddress,
  /** The pod's network namespace path; the outbound matcher keys on it, the inbound listener binds in it. */
  netns: orEmpty(netnsPath).default(""),
  terminating: z.boolean().default(false),
  /** Overrides `spiffe://<trustDomain>/ns/<namespace>/sa/<serviceAccount>`. */
  spiffeId: spiffeId.optional(),
  /** Served ports; when empty, taken from the pod's registry record. */
  ports: z.array(port).default([]),
});

const localNode = z.strictObject({
  clusterName,
  nodeName: dnsSubdomain,
  nodeIp: ipAddress,
  locality: locality.default({ region: "", zone: "" }),
  meshDomain: dnsSubdomain,
  trustDomain,
  /** The node proxy's own SPIFFE ID: the identity for traffic no hosted pod claims. */
  spiffeId,
  pods: z.array(hostedPod).default([]),
  /** Service keys the node's pods call; undefined means every service. */
  dependencies: z.array(serviceKeyField).optional(),
});

/** A pod the node hosts, validated, defaults applied. */
export type HostedPod = z.output<typeof hostedPod>;
/** A local node as `parseNode` and `compileNode` accept it: defaulted fields may be left out. */
export type LocalNodeInput = z.input<typeof localNode>;
/**
 * The node a compile is for, validated: where it runs, its identity and trust domain, the pods it
 * hosts, and the services they call (undefined: every service). `localNodeFrom` derives it from a
 * snapshot; `parseNode` validates one built by hand.
 */
export interface LocalNode extends Omit<z.output<typeof localNode>, "dependencies"> {
  readonly dependencies?: readonly ServiceKey[] | undefined;
}

/** Nodes `parseNode` returned: validated and frozen, so passing one again skips the work. */
const validatedNodes = new WeakSet<object>();

/**
 * Validates a local node, or throws one `InputError` listing every problem with its path. Returns
 * a new, frozen node; passing that node again returns it as it is. The object passed in is never
 * remembered: change it and pass it again, and it is validated again.
 */
export function parseNode(input: unknown): LocalNode {
  if (typeof input === "object" && input !== null && validatedNodes.has(input)) return input as LocalNode;
  const node = deepFreeze(validateNode(input));
  validatedNodes.add(node);
  return node;
}

function validateNode(input: unknown): LocalNode {
  const forbidden = unsafeInputIssues(input);
  if (forbidden.length > 0) throw new InputError("node", forbidden);
  const parsed = localNode.safeParse(input);
  if (!parsed.success) throw new InputError("node", collectIssues(parsed.error.issues, input));
  const node = parsed.data;
  const issues = [...duplicatePodIssues(node.pods), ...podSniIssues(node)];
  if (issues.length > 0) throw new InputError("node", issues);
  // Spelled out, not spread: see `plainRecord` in snapshot.ts (a frozen spread copy gets a hidden class of its own).
  return {
    clusterName: node.clusterName,
    nodeName: node.nodeName,
    nodeIp: node.nodeIp,
    locality: node.locality,
    meshDomain: node.meshDomain,
    trustDomain: node.trustDomain,
    spiffeId: node.spiffeId,
    pods: node.pods,
    dependencies: node.dependencies && sortedUniqueKeys(node.dependencies as ServiceKey[]),
  };
}

/** The keys sorted, each once; a list already so (as `localNodeFrom` builds it) is kept as it is. */
function sortedUniqueKeys(keys: ServiceKey[]): ServiceKey[] {
  const inOrder = keys.every((key, i) => i === 0 || keys[i - 1]! < key);
  return inOrder ? keys : [...new Set(keys)].sort();
}

function duplicatePodIssues(pods: readonly HostedPod[]): InputIssue[] {
  const seen = new Set<string>();
  return pods.flatMap((pod, index) => {
    const id = compositeKey(pod.namespace, pod.name);
    if (seen.has(id)) return [{ path: `pods[${index}]`, message: `duplicate pod ${pod.namespace}/${pod.name}` }];
    seen.add(id);
    return [];
  });
}

/** Every hosted pod's service needs a structured SNI within DNS limits. */
function podSniIssues(node: z.output<typeof localNode>): InputIssue[] {
  return node.pods.flatMap((pod, index) => {
    const problem = structuredSniProblem(node.meshDomain, { namespace: pod.namespace, service: pod.serviceAccount });
    return problem ? [{ path: `pods[${index}].serviceAccount`, message: problem }] : [];
  });
}

/** The trust domain a cluster's workloads are issued in. */
export function trustDomainOfCluster(trust: TrustConfig, cluster: string): string | undefined {
  if (trust.mode === "shared") return trust.trustDomain;
  return trust.trustDomains.find((domain) => domain.clusters.includes(cluster))?.name;
}

/**
 * Derives the local node from a snapshot: its address and locality from the node list (or, for an
 * unlisted node, from its pods' records — the address most of them report), its hosted pods and their netns from the registry
 * records that name it, and its dependency set as the union of its pods' services' dependencies.
 */
export function localNodeFrom(snapshot: Snapshot, cluster: string, nodeName: string): LocalNode {
  const status = snapshot.nodes.find((node) => node.cluster === cluster && node.name === nodeName);
  return localNodeOf(snapshot, cluster, nodeName, hostedRecords(snapshot, cluster, nodeName), status);
}

/**
 * `localNodeFrom` given the records that name the node (any order) and its entry in the node list,
 * for a caller that already has both by node instead of scanning every service and node
 * (`localNodeIn`: from the snapshot index).
 */
export function localNodeOf(
  snapshot: Snapshot,
  cluster: string,
  nodeName: string,
  records: readonly HostedRecord[],
  status: NodeStatus | undefined,
): LocalNode {
  const hosted = [...records].sort(byPodThenService);
  const trustDomain = trustDomainOfCluster(snapshot.mesh.trust, cluster);
  const nodeIp = pickNodeAddress(
    status?.ip,
    hosted.map(({ endpoint }) => endpoint.kubernetesMetadata.nodeIp),
  );
  const problems: InputIssue[] = [];
  if (!status && hosted.length === 0) problems.push({ path: "", message: `no node ${cluster}/${nodeName} in the snapshot` });
  else if (!nodeIp) problems.push({ path: "nodeIp", message: `node ${cluster}/${nodeName} has no known IP` });
  if (!trustDomain) problems.push({ path: "trustDomain", message: `cluster ${cluster} belongs to no trust domain` });
  if (problems.length > 0) throw new InputError("node", problems);
  // Validated here, once: compiling the returned node again and again skips the work.
  return parseNode({
    clusterName: cluster,
    nodeName,
    nodeIp: nodeIp!,
    locality: nodeLocality(status, hosted),
    meshDomain: snapshot.mesh.meshDomain,
    trustDomain: trustDomain!,
    spiffeId: nodeSpiffeId(snapshot.mesh.nodeIdentity, { trustDomain: trustDomain!, cluster, node: nodeName }),
    pods: hosted.map(({ service, endpoint }) => podFromRecord(service, endpoint)),
    dependencies: nodeDependencies(
      snapshot,
      hosted.map(({ service }) => service),
    ),
  });
}

/** A registry record naming the node, with the key of its service. */
export interface HostedRecord {
  readonly service: ServiceKey;
  readonly endpoint: ServiceEndpoint;
}

function hostedRecords(snapshot: Snapshot, cluster: string, nodeName: string): HostedRecord[] {
  const hosted: HostedRecord[] = [];
  for (const [key, endpoints] of snapshot.services) {
    for (const endpoint of endpoints) {
      if (endpoint.clusterName === cluster && endpoint.kubernetesMetadata.nodeName === nodeName) hosted.push({ service: key, endpoint });
    }
  }
  return hosted;
}

function byPodThenService(a: HostedRecord, b: HostedRecord): number {
  return compareText(hostedPodName(a.endpoint), hostedPodName(b.endpoint)) || compareText(a.service, b.service);
}

function nodeLocality(status: NodeStatus | undefined, hosted: readonly HostedRecord[]) {
  if (status) return { region: status.region, zone: status.zone };
  const first = hosted[0]?.endpoint.locality;
  return { region: first?.region ?? "", zone: first?.zone ?? "" };
}

/** The name of the pod a record stands for (see `podNameOf`). */
export const hostedPodName = podNameOf;

function podFromRecord(key: ServiceKey, endpoint: ServiceEndpoint): HostedPod {
  const ref = parseServiceKey(key)!;
  return {
    name: podNameOf(endpoint),
    namespace: ref.namespace,
    serviceAccount: ref.service,
    ip: endpoint.ip,
    netns: endpoint.containerMetadata.networkNamespace,
    terminating: endpoint.health === "DRAINING",
    ports: endpoint.ports,
  };
}

/**
 * The union of the hosted services' dependencies. A hosted service the dependency data does not
 * mention may call anything, so the node then sees every service (undefined).
 */
function nodeDependencies(snapshot: Snapshot, hostedServices: readonly ServiceKey[]): ServiceKey[] | undefined {
  const dependencies = snapshot.dependencies;
  if (!dependencies) return undefined;
  const union = new Set<ServiceKey>();
  for (const key of new Set(hostedServices)) {
    const deps = dependencies.get(key);
    if (!deps) return undefined;
    for (const dep of deps) union.add(dep);
  }
  return [...union].sort();
}
