/**
 * The output linter: run on every compile, fail closed. Each rule is something Envoy would reject
 * (NACKing the node's whole update) or silently get wrong (a socket action naming no socket falls
 * back to plaintext; duplicate endpoint addresses lose weights and metadata).
 */
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { TransportSocketNameAction } from "../../gen/envoy/extensions/matching/common_inputs/transport_socket/v3/transport_socket_inputs.js";
import type { UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import type { Matcher, Matcher_OnMatch } from "../../gen/xds/type/matcher/v3/matcher.js";
import { packedMessage } from "../envoy/any.js";
import { hostPort } from "../envoy/core.js";
import { patchOf, type ResourceSet } from "../envoy/resources.js";
import { unpackAny } from "../envoy/schema.js";
import { EXTENSION } from "../envoy/types.js";
import { CompileInvariantError } from "../errors.js";
import { MAX_DNS_LABEL, MAX_SERVER_NAME_BYTES } from "../naming.js";
import { AddressMap } from "../util/address-map.js";
import { MAX_UINT32 } from "./endpoints.js";
import { IDENTITY_LINT_RULES, lintClusterIdentity, lintListenerStamps } from "./lint-identity.js";

export const LINT_RULES = [
  "unique-resource-names",
  "unique-socket-names",
  "action-names-a-socket",
  "nested-on-no-match",
  "non-empty-match-map",
  "unique-chain-match",
  "no-partial-wildcard",
  "name-lengths",
  "contiguous-priorities",
  "unique-endpoint-address",
  "uint32-weights",
  ...IDENTITY_LINT_RULES,
] as const;

export type LintRule = (typeof LINT_RULES)[number];

/**
 * Resources that passed. Compiled resources are shared between compiles (and never mutated), so a
 * cached cluster or assignment is linted once, when it is built.
 */
const passed = new WeakSet<object>();

/** Throws `CompileInvariantError` on the first broken rule; returns the result untouched otherwise. */
export function lintCompileResult<T extends ResourceSet>(result: T): T {
  const serverNames = new ServerNames();
  lintList(
    result.clusters,
    "clusters",
    (c) => c.name ?? "",
    (cluster) => lintCluster(cluster, serverNames),
  );
  lintList(result.endpoints, "endpoints", (e) => e.cluster_name ?? "", lintAssignment);
  lintList(
    result.listeners,
    "listeners",
    (l) => l.name ?? "",
    (listener) => lintListener(listener, serverNames),
  );
  return result;
}

/** Lists that passed: a recompile that changed nothing of a type returns the same list. */
const passedLists = new WeakSet<readonly object[]>();

function lintList<T extends object>(resources: readonly T[], kind: string, nameOf: (resource: T) => string, lint: (resource: T) => void): void {
  if (passedLists.has(resources)) return;
  // A recompile's patched list: its names and other resources are those of a list that passed.
  const patch = patchOf(resources);
  if (patch !== undefined && passedLists.has(patch.base)) lintEach(patch.replaced as readonly T[], lint);
  else {
    uniqueNames(kind, resources, nameOf);
    lintEach(resources, lint);
  }
  passedLists.add(resources);
}

/** Checks each distinct server name once per lint: every socket of a cluster shares one of two SNIs. */
class ServerNames {
  private readonly valid = new Set<string>();
  check(resource: string, serverName: string): void {
    if (this.valid.has(serverName)) return;
    checkServerName(resource, serverName);
    this.valid.add(serverName);
  }
}

function lintEach<T extends object>(resources: readonly T[], lint: (resource: T) => void): void {
  for (const resource of resources) {
    if (passed.has(resource)) continue;
    lint(resource);
    passed.add(resource);
  }
}

function fail(rule: LintRule, resource: string, detail: string): never {
  throw new CompileInvariantError(rule, resource, detail);
}

/** Compiled lists come sorted by name: strictly increasing names are unique, with no set built. */
function uniqueNames<T>(kind: string, resources: readonly T[], nameOf: (resource: T) => string): void {
  let previous: string | undefined;
  for (const resource of resources) {
    const name = nameOf(resource);
    if (!name) fail("unique-resource-names", `(unnamed ${kind})`, `${kind} names must be unique and non-empty`);
    if (previous !== undefined && !(previous < name)) {
      uniqueUnsortedNames(kind, resources.map(nameOf));
      return;
    }
    previous = name;
  }
}

function uniqueUnsortedNames(kind: string, names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) fail("unique-resource-names", name, `${kind} names must be unique and non-empty`);
    seen.add(name);
  }
}

function lintCluster(cluster: Cluster, serverNames: ServerNames): void {
  const name = cluster.name ?? "";
  const sockets = new Set<string>();
  for (const match of cluster.transport_socket_matches ?? []) {
    if (!match.name || sockets.has(match.name)) fail("unique-socket-names", name, `socket "${match.name}" is empty or repeated`);
    sockets.add(match.name);
    checkSni(name, match.transport_socket?.typed_config, serverNames);
  }
  checkSni(name, cluster.transport_socket?.typed_config, serverNames);
  if (cluster.transport_socket_matcher) lintMatcher(name, cluster.transport_socket_matcher, sockets);
  lintClusterIdentity(cluster, fail);
}

function checkSni(resource: string, typedConfig: Any | undefined, serverNames: ServerNames): void {
  if (!typedConfig) return;
  const tls = (packedMessage(typedConfig) ?? unpackAny(typedConfig)?.message) as UpstreamTlsContext | undefined;
  if (tls?.sni) serverNames.check(resource, tls.sni);
}

/** Every tree has a non-empty map and its own on_no_match; every action names a socket of the table. */
function lintMatcher(resource: string, matcher: Matcher, sockets: ReadonlySet<string>): void {
  if (!matcher.on_no_match) fail("nested-on-no-match", resource, "a matcher without on_no_match ends the whole evaluation with no match");
  const map = matcher.matcher_tree?.exact_match_map?.map;
  if (matcher.matcher_tree && (!map || Object.keys(map).length === 0)) fail("non-empty-match-map", resource, "Envoy rejects an empty exact_match_map");
  for (const target of [...Object.values(map ?? {}), matcher.on_no_match!]) lintOnMatch(resource, target, sockets);
}

function lintOnMatch(resource: string, target: Matcher_OnMatch, sockets: ReadonlySet<string>): void {
  if (target.matcher) {
    lintMatcher(resource, target.matcher, sockets);
    return;
  }
  const action = target.action;
  const socket =
    action?.name === EXTENSION.socketNameAction && action.typed_config
      ? (unpackAny(action.typed_config)?.message as TransportSocketNameAction | undefined)?.name
      : undefined;
  if (!socket || !sockets.has(socket)) fail("action-names-a-socket", resource, `action names "${socket ?? action?.name}", not a socket of this cluster`);
}

function lintAssignment(assignment: ClusterLoadAssignment): void {
  const name = assignment.cluster_name ?? "";
  const priorities = new Set<number>();
  const addresses = new AddressMap<true>();
  const sums = new Map<number, number>();
  for (const group of assignment.endpoints ?? []) {
    const priority = group.priority ?? 0;
    priorities.add(priority);
    let sum = 0;
    for (const lb of group.lb_endpoints ?? []) {
      const socket = lb.endpoint?.address?.socket_address;
      const ip = socket?.address ?? "";
      const port = socket?.port_value ?? 0;
      if (addresses.get(ip, port)) fail("unique-endpoint-address", name, `${hostPort(ip, port)} appears twice: Envoy keeps only the first`);
      addresses.set(ip, port, true);
      const weight = lb.load_balancing_weight ?? 1;
      if (weight < 1) fail("uint32-weights", name, `${hostPort(ip, port)} has weight ${weight}`);
      sum += weight;
    }
    sums.set(priority, (sums.get(priority) ?? 0) + sum);
  }
  for (const [priority, sum] of sums) if (sum > MAX_UINT32) fail("uint32-weights", name, `priority ${priority} weights sum to ${sum}`);
  const sorted = [...priorities].sort((a, b) => a - b);
  if (sorted.some((priority, i) => priority !== i)) fail("contiguous-priorities", name, `priorities ${sorted.join(", ")} are not contiguous from 0`);
}

function lintListener(listener: Listener, checked: ServerNames): void {
  const name = listener.name ?? "";
  const matches = new Set<string>();
  for (const chain of listener.filter_chains ?? []) {
    const match = chain.filter_chain_match ?? {};
    const serverNames = match.server_names ?? [];
    for (const serverName of serverNames) checked.check(name, serverName);
    const key = JSON.stringify([
      [...serverNames].sort(),
      match.transport_protocol ?? "",
      [...(match.application_protocols ?? [])].sort(),
      match.destination_port ?? null,
      (match.prefix_ranges ?? []).map((range) => `${range.address_prefix}/${range.prefix_len}`).sort(),
    ]);
    if (matches.has(key)) fail("unique-chain-match", name, `two filter chains match ${key}`);
    matches.add(key);
  }
  lintListenerStamps(listener, fail);
}

/** Exact names, or a leading `*.` wildcard: no partial wildcards, DNS label and SNI length limits. */
function checkServerName(resource: string, serverName: string): void {
  const bare = serverName.startsWith("*.") ? serverName.slice(2) : serverName;
  if (bare.includes("*")) fail("no-partial-wildcard", resource, `"${serverName}": only a leading "*." is allowed`);
  if (Buffer.byteLength(serverName, "utf8") > MAX_SERVER_NAME_BYTES) fail("name-lengths", resource, `"${serverName}" is over ${MAX_SERVER_NAME_BYTES} bytes`);
  if (bare.split(".").some((label) => label.length > MAX_DNS_LABEL || label.length === 0))
    fail("name-lengths", resource, `"${serverName}" has an empty label or one over ${MAX_DNS_LABEL} characters`);
}
