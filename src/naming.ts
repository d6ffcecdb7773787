/**
 * Every resource, SNI and identity name aether-xds emits, each with its parser. Names are built
 * from identity (service, namespace, port, pod), never from list positions, so an unrelated change
 * never renames a resource. These names are a public contract: control planes and dashboards key
 * on them.
 */
import { createHash } from "node:crypto";

/** A registry service key, `"<namespace>/<service>"`; the service name is the service account. */
export type ServiceKey = `${string}/${string}`;

/** A registry service: its namespace and name (the name is also its service account). */
export interface ServiceRef {
  readonly namespace: string;
  readonly service: string;
}

export const MAX_DNS_LABEL = 63;
export const MAX_SERVER_NAME_BYTES = 255;
export const MAX_DNS_NAME = 253;

/** One lowercase RFC 1123 label of at most 63 characters, as a pattern to build on. */
const LABEL = "[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?";
const DNS_LABEL = new RegExp(`^${LABEL}$`);

/** A lowercase RFC 1123 label of at most 63 characters. */
export function isDnsLabel(value: string): boolean {
  return value.length <= MAX_DNS_LABEL && DNS_LABEL.test(value);
}

/** Dot-separated labels in one pattern: no list of labels made per name checked. */
const DNS_SUBDOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** Dot-separated RFC 1123 labels, at most 253 characters in all. */
export function isDnsSubdomain(value: string): boolean {
  return value.length <= MAX_DNS_NAME && DNS_SUBDOMAIN.test(value);
}

/** The service key `"<namespace>/<service>"` of a service. */
export function serviceKey(ref: ServiceRef): ServiceKey {
  return `${ref.namespace}/${ref.service}`;
}

/** Two labels around one `/`, in one pattern: a node lists hundreds of keys, checked on every parse. */
const SERVICE_KEY = new RegExp(`^${LABEL}/${LABEL}$`);

/** Whether `key` is two DNS-1123 labels around one `/`. */
export function isServiceKey(key: string): key is ServiceKey {
  return SERVICE_KEY.test(key);
}

/** The service a key names, or undefined unless it is a service key (`isServiceKey`). */
export function parseServiceKey(key: string): ServiceRef | undefined {
  if (!isServiceKey(key)) return undefined;
  const slash = key.indexOf("/");
  return { namespace: key.slice(0, slash), service: key.slice(slash + 1) };
}

// ---- SPIFFE identities and SDS secret names -------------------------------------------------

/** The workload identity of a service: `spiffe://<trustDomain>/ns/<ns>/sa/<service>`. */
export function serviceSpiffeId(trustDomain: string, ref: ServiceRef): string {
  return `spiffe://${trustDomain}/ns/${ref.namespace}/sa/${ref.service}`;
}

/** What every workload identity of a trust domain starts with: `spiffe://<trustDomain>/ns/`. */
export function workloadSpiffePrefix(trustDomain: string): string {
  return `spiffe://${trustDomain}/ns/`;
}

/** SDS name of a trust domain's CA bundle, as the SPIRE agent serves it. */
export function bundleSecretName(trustDomain: string): string {
  return `spiffe://${trustDomain}`;
}

/** The default template of a node proxy's SPIFFE ID (the mesh file's `mesh.nodeIdentity`). */
export const DEFAULT_NODE_IDENTITY = "spiffe://{trustDomain}/ns/aether-system/sa/aether-node";

const NODE_IDENTITY_PLACEHOLDERS = new Set(["{trustDomain}", "{cluster}", "{node}"]);

/**
 * Why a node identity template is unusable, or undefined. It must be a workload-shaped SPIFFE ID in
 * the node's trust domain, `spiffe://{trustDomain}/ns/<namespace>/sa/<name>`: pods' inbound
 * listeners accept client certificates of that shape only (`workloadSpiffePrefix`), so a node
 * identity of another shape could never reach a pod.
 */
export function nodeIdentityProblem(template: string): string | undefined {
  const unknown = (template.match(/\{[^}]*\}?/g) ?? []).find((placeholder) => !NODE_IDENTITY_PLACEHOLDERS.has(placeholder));
  if (unknown !== undefined) return `unknown placeholder ${JSON.stringify(unknown)}: only {trustDomain}, {cluster} and {node}`;
  if (template.includes("..")) return "must not contain '..'";
  const sample = nodeSpiffeId(template, { trustDomain: "td.example", cluster: "c", node: "n" });
  if (
    !template.startsWith("spiffe://{trustDomain}/ns/") ||
    !/^spiffe:\/\/td\.example\/ns\/[A-Za-z0-9._~%!$&'()*+,;=:@-]+\/sa\/[A-Za-z0-9._~%!$&'()*+,;=:@-]+$/.test(sample)
  ) {
    return "not a workload-shaped SPIFFE ID template, spiffe://{trustDomain}/ns/<namespace>/sa/<name>: pods' inbound listeners accept no other shape";
  }
  return undefined;
}

/** Fills a node identity template's `{trustDomain}`, `{cluster}` and `{node}` placeholders. */
export function nodeSpiffeId(template: string, values: { trustDomain: string; cluster: string; node: string }): string {
  return template.replaceAll("{trustDomain}", values.trustDomain).replaceAll("{cluster}", values.cluster).replaceAll("{node}", values.node);
}

/** The trust domain of a SPIFFE ID, or undefined when it is not one. */
export function trustDomainOf(spiffeId: string): string | undefined {
  const match = /^spiffe:\/\/([^/]+)(\/.*)?$/.exec(spiffeId);
  return match?.[1];
}

// ---- outbound service clusters and the structured SNI ---------------------------------------

/** A service and one of its ports. */
export interface ServicePort extends ServiceRef {
  readonly port: number;
}

/** Outbound service cluster (and its EDS service name): `<svc>.<ns>.<meshDomain>:<port>`. */
export function outboundClusterName(meshDomain: string, target: ServicePort): string {
  return serviceAuthority(meshDomain, target, target.port);
}

/** The service port and mesh domain an outbound cluster name is for, or undefined when it is not one. */
export function parseOutboundClusterName(name: string): (ServicePort & { meshDomain: string }) | undefined {
  const match = /^([^.:]+)\.([^.:]+)\.([^:]+):(\d{1,5})$/.exec(name);
  if (!match) return undefined;
  const [, service, namespace, meshDomain, port] = match as unknown as [string, string, string, string, string];
  const target = { service, namespace, meshDomain, port: Number(port) };
  return isValidPort(target.port) && isDnsLabel(service) && isDnsLabel(namespace) ? target : undefined;
}

/** The SNI a source sends when it dials a waypoint: `<port>.<svc>.<ns>.<meshDomain>`. */
export function waypointSni(meshDomain: string, target: ServicePort): string {
  return `${target.port}.${target.service}.${target.namespace}.${meshDomain}`;
}

/** The service port a waypoint SNI in `meshDomain` is for, or undefined when it is not one. */
export function parseWaypointSni(sni: string, meshDomain: string): ServicePort | undefined {
  const suffix = `.${meshDomain}`;
  if (!sni.endsWith(suffix)) return undefined;
  const labels = sni.slice(0, -suffix.length).split(".");
  if (labels.length !== 3) return undefined;
  const [port, service, namespace] = labels as [string, string, string];
  if (!/^\d{1,5}$/.test(port) || !isValidPort(Number(port))) return undefined;
  return isDnsLabel(service) && isDnsLabel(namespace) ? { service, namespace, port: Number(port) } : undefined;
}

/** The SNI a source sends when it dials a pod directly: the bare port. */
export function directSni(port: number): string {
  return String(port);
}

/** The tunnel chain's wildcard server name, `*.<svc>.<ns>.<meshDomain>`: it matches every port. */
export function tunnelServerName(meshDomain: string, ref: ServiceRef): string {
  return `*.${ref.service}.${ref.namespace}.${meshDomain}`;
}

/**
 * Why a structured SNI for this service would be unsafe, or undefined when it is fine: every
 * label ≤ 63 characters and the longest SNI (a five-digit port) ≤ 255 bytes.
 */
export function structuredSniProblem(meshDomain: string, ref: ServiceRef, port = 65535): string | undefined {
  const sni = waypointSni(meshDomain, { ...ref, port });
  const longLabel = sni.split(".").find((label) => label.length > MAX_DNS_LABEL);
  if (longLabel) return `label "${longLabel}" of SNI ${sni} is longer than ${MAX_DNS_LABEL} characters`;
  const bytes = Buffer.byteLength(sni, "utf8");
  if (bytes > MAX_SERVER_NAME_BYTES) return `SNI ${sni} is ${bytes} bytes, over the ${MAX_SERVER_NAME_BYTES}-byte limit`;
  return undefined;
}

// ---- the waypoint side ----------------------------------------------------------------------

/** The node's tunnel listener, bound to `node_ip:tunnelPort`: the waypoint into its pods. */
export const TUNNEL_LISTENER_NAME = "ew_tunnel";

/**
 * The tunnel listener's filter chain for a hosted service, `ew_<svc>_<ns>`; `ew_<svc>_<ns>_<port>`
 * for a port that only some of the service's pods serve.
 */
export function tunnelChainName(ref: ServiceRef, port?: number): string {
  return `ew_${ref.service}_${ref.namespace}${port === undefined ? "" : `_${port}`}`;
}

/** The raw-passthrough cluster behind a tunnel chain: `ew_ingress_<svc>_<ns>[_<port>]`. */
export function ingressClusterName(ref: ServiceRef, port?: number): string {
  return `ew_ingress_${ref.service}_${ref.namespace}${port === undefined ? "" : `_${port}`}`;
}

/** The service (and port, for a per-port chain) a tunnel chain name is for, or undefined. */
export function parseTunnelChainName(name: string): (ServiceRef & { port?: number }) | undefined {
  return parseUnderscored(name, /^ew_([^_]+)_([^_]+)(?:_(\d{1,5}))?$/);
}

/** The service (and port, for a per-port cluster) an ingress cluster name is for, or undefined. */
export function parseIngressClusterName(name: string): (ServiceRef & { port?: number }) | undefined {
  return parseUnderscored(name, /^ew_ingress_([^_]+)_([^_]+)(?:_(\d{1,5}))?$/);
}

function parseUnderscored(name: string, pattern: RegExp): (ServiceRef & { port?: number }) | undefined {
  const match = pattern.exec(name);
  if (!match) return undefined;
  const [, service, namespace, port] = match as unknown as [string, string, string, string | undefined];
  if (!isDnsLabel(service) || !isDnsLabel(namespace)) return undefined;
  if (port === undefined) return { service, namespace };
  return isValidPort(Number(port)) ? { service, namespace, port: Number(port) } : undefined;
}

/** A pod: its namespace and name. */
export interface PodRef {
  readonly namespace: string;
  readonly pod: string;
}

/** A hosted pod's inbound mTLS listener: `inbound_<pod>_<ns>`. */
export function inboundListenerName(ref: PodRef): string {
  return `inbound_${ref.pod}_${ref.namespace}`;
}

/** The pod an inbound listener name is for, or undefined when it is not one. */
export function parseInboundListenerName(name: string): PodRef | undefined {
  return parsePodListener(name, /^inbound_([^_]+)_([^_]+)$/);
}

/** A hosted pod's HTTP egress listener, bound in its netns: `outbound_<pod>_<ns>`. */
export function outboundListenerName(ref: PodRef): string {
  return `outbound_${ref.pod}_${ref.namespace}`;
}

/** The pod an `outbound_<pod>_<ns>` listener name is for, or undefined when it is not one. */
export function parseOutboundListenerName(name: string): PodRef | undefined {
  return parsePodListener(name, /^outbound_([^_]+)_([^_]+)$/);
}

/** A hosted pod's transparent capture listener for service VIPs: `capture_<pod>_<ns>`. */
export function captureListenerName(ref: PodRef): string {
  return `capture_${ref.pod}_${ref.namespace}`;
}

/** The pod a `capture_<pod>_<ns>` listener name is for, or undefined when it is not one. */
export function parseCaptureListenerName(name: string): PodRef | undefined {
  return parsePodListener(name, /^capture_([^_]+)_([^_]+)$/);
}

/** A capture listener's chain for one service VIP and port: `vip_<svc>_<ns>_<port>`. */
export function captureChainName(target: ServicePort): string {
  return `vip_${target.service}_${target.namespace}_${target.port}`;
}

function parsePodListener(name: string, pattern: RegExp): PodRef | undefined {
  const match = pattern.exec(name);
  if (!match) return undefined;
  const [, pod, namespace] = match as unknown as [string, string, string];
  return isDnsSubdomain(pod) && isDnsLabel(namespace) ? { pod, namespace } : undefined;
}

/** The HTTP authority a pod uses for a service: `<svc>.<ns>.<meshDomain>`, with `:<port>` to pick a port. */
export function serviceAuthority(meshDomain: string, ref: ServiceRef, port?: number): string {
  return `${ref.service}.${ref.namespace}.${meshDomain}${port === undefined ? "" : `:${port}`}`;
}

/** The per-port filter chain of a pod inbound listener: `port_<port>`. */
export function inboundChainName(port: number): string {
  return `port_${port}`;
}

/** The port an inbound chain name is for, or undefined when it is not one. */
export function parseInboundChainName(name: string): number | undefined {
  const match = /^port_(\d{1,5})$/.exec(name);
  return match && isValidPort(Number(match[1])) ? Number(match[1]) : undefined;
}

/** The cluster an inbound chain forwards to, the application at `pod_ip:<port>`: `app_<pod>_<ns>_<port>`. */
export function appClusterName(ref: PodRef, port: number): string {
  return `app_${ref.pod}_${ref.namespace}_${port}`;
}

/** The pod and port an application cluster name is for, or undefined when it is not one. */
export function parseAppClusterName(name: string): (PodRef & { port: number }) | undefined {
  const match = /^app_([^_]+)_([^_]+)_(\d{1,5})$/.exec(name);
  if (!match) return undefined;
  const [, pod, namespace, port] = match as unknown as [string, string, string, string];
  const ref = { pod, namespace, port: Number(port) };
  return isDnsSubdomain(pod) && isDnsLabel(namespace) && isValidPort(ref.port) ? ref : undefined;
}

/** The node's probe of a pod's inbound listener (is the mesh port ready?): `inboundready_<pod>_<ns>`. */
export function readinessClusterName(ref: PodRef): string {
  return `inboundready_${ref.pod}_${ref.namespace}`;
}

/** The pod a readiness probe cluster name is for, or undefined when it is not one. */
export function parseReadinessClusterName(name: string): PodRef | undefined {
  return parsePodListener(name, /^inboundready_([^_]+)_([^_]+)$/);
}

// ---- transport sockets and aggregate sub-clusters -------------------------------------------

/** `local`: SNI is the bare port (direct dial). `waypoint`: SNI is the structured name. */
export type SocketVariant = "local" | "waypoint";

/**
 * A named upstream socket (`sockets` mode): `<variant>_<digest>`, the digest the first 16 hex
 * digits of the source SPIFFE ID's SHA-256. Envoy names a socket's stats after it, so it carries
 * no SPIFFE ID (whose `:`, `/` and dots break stats names and tag extraction); the socket's TLS
 * context names the identity itself.
 */
export function socketName(variant: SocketVariant, spiffeId: string): string {
  return `${variant}_${identityDigest(spiffeId)}`;
}

/** The variant and identity digest of a socket name, or undefined when it is not one. */
export function parseSocketName(name: string): { variant: SocketVariant; digest: string } | undefined {
  const match = /^(local|waypoint)_([0-9a-f]{16})$/.exec(name);
  return match ? { variant: match[1] as SocketVariant, digest: match[2]! } : undefined;
}

/** What a socket name carries of a SPIFFE ID: 64 bits of its SHA-256, in hex. */
export function identityDigest(spiffeId: string): string {
  return createHash("sha256").update(spiffeId).digest("hex").slice(0, 16);
}

/**
 * The stats name of an outbound cluster: `outbound_<svc>_<ns>_<port>`, and `_local`/`_waypoint`
 * for an aggregate's halves. No dots or colons, which stats sinks split into tags.
 */
export function outboundStatName(target: ServicePort, half?: SocketVariant): string {
  return `outbound_${target.service}_${target.namespace}_${target.port}${half ? `_${half}` : ""}`;
}

/** In `aggregate` socket selection: `<cluster>|local` and `<cluster>|waypoint`. */
export function subClusterName(clusterName: string, variant: SocketVariant): string {
  return `${clusterName}|${variant}`;
}

/** The aggregate cluster and variant of a sub-cluster name, or undefined when it is not one. */
export function parseSubClusterName(name: string): { clusterName: string; variant: SocketVariant } | undefined {
  const bar = name.lastIndexOf("|");
  const variant = name.slice(bar + 1);
  if (bar < 0 || (variant !== "local" && variant !== "waypoint")) return undefined;
  return { clusterName: name.slice(0, bar), variant };
}

export function isValidPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}
