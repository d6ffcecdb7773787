import { describe, expect, test } from "vitest";
import { ApiVersion } from "../../gen/envoy/config/core/v3/config_source.js";
import type { FilterStateValue } from "../../gen/envoy/extensions/filters/common/set_filter_state/v3/value.js";
import type { Config as SetFilterStateConfig } from "../../gen/envoy/extensions/filters/network/set_filter_state/v3/set_filter_state.js";
import type { Config as OnDemandSecretConfig } from "../../gen/envoy/extensions/transport_sockets/tls/cert_selectors/on_demand_secret/v3/config.js";
import type { UpstreamTlsContext } from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls.js";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import { LINT_RULES, type LintRule, lintCompileResult } from "../../src/compile/lint.js";
import { pack } from "../../src/envoy/any.js";
import { notePatched } from "../../src/envoy/resources.js";
import { unpackAny } from "../../src/envoy/schema.js";
import { ON_DEMAND_SECRET, SET_FILTER_STATE, UPSTREAM_TLS_CONTEXT } from "../../src/envoy/types.js";
import { isCompileInvariantError } from "../../src/errors.js";
import { localNodeFrom } from "../../src/model/node.js";
import { SOURCE_IDENTITIES, type SourceIdentity } from "../../src/model/options.js";
import { exampleSnapshot } from "../support/fixtures.js";

/**
 * A deep copy of east/node-1's compile (cross-cluster), to break. Compiled resources are shared
 * with later compiles and never mutated, so the linter checks each one once: a test that breaks
 * one works on a copy.
 */
function compiled(sourceIdentity: SourceIdentity = "selector"): {
  -readonly [K in keyof CompileResult]: CompileResult[K] extends readonly (infer T)[] ? T[] : CompileResult[K];
} {
  const snapshot = exampleSnapshot();
  return structuredClone(compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster", sourceIdentity })) as never;
}

function brokenRule(mutate: (result: ReturnType<typeof compiled>) => void, mode?: SourceIdentity): { rule: string; resource: string } | undefined {
  const result = compiled(mode);
  mutate(result);
  try {
    lintCompileResult(result);
    return undefined;
  } catch (error) {
    if (!isCompileInvariantError(error)) throw error;
    return { rule: error.rule, resource: error.resource };
  }
}

const CHECKOUT = "checkout.team-a.mesh.aether:8080";
const cluster = (r: ReturnType<typeof compiled>, name = CHECKOUT) => r.clusters.find((c) => c.name === name)!;
const assignment = (r: ReturnType<typeof compiled>, name = CHECKOUT) => r.endpoints.find((a) => a.cluster_name === name)!;
const tunnel = (r: ReturnType<typeof compiled>) => r.listeners.find((l) => l.name === "ew_tunnel")!;
const EGRESS = "outbound_frontend-7d9f-abcde_team-a";

/** Repacks the TLS context of one of the cluster's sockets after `change`. */
function changeSocket(r: ReturnType<typeof compiled>, index: number, change: (tls: UpstreamTlsContext) => void): void {
  const socket = cluster(r).transport_socket_matches![index]!.transport_socket!;
  const tls = structuredClone(unpackAny(socket.typed_config!)!.message as UpstreamTlsContext);
  change(tls);
  socket.typed_config = pack(UPSTREAM_TLS_CONTEXT, tls);
}

/** Repacks the egress listener's identity stamp after `change`. */
function changeStamp(r: ReturnType<typeof compiled>, change: (value: FilterStateValue) => void): void {
  const filters = r.listeners.find((l) => l.name === EGRESS)!.filter_chains![0]!.filters!;
  const config = structuredClone(unpackAny(filters[0]!.typed_config!)!.message as SetFilterStateConfig);
  change(config.on_new_connection![0]!);
  // A new filter object: the capture listener shares the original.
  filters[0] = { ...filters[0]!, typed_config: pack(SET_FILTER_STATE, config) };
}

const trips: [LintRule, (r: ReturnType<typeof compiled>) => void, string, SourceIdentity?][] = [
  ["unique-resource-names", (r) => r.clusters.push(cluster(r)), CHECKOUT],
  ["unique-socket-names", (r) => cluster(r).transport_socket_matches!.push(cluster(r).transport_socket_matches![0]!), CHECKOUT],
  ["action-names-a-socket", (r) => cluster(r).transport_socket_matches!.splice(0, 1), CHECKOUT],
  ["nested-on-no-match", (r) => delete cluster(r).transport_socket_matcher!.on_no_match!.matcher!.on_no_match, CHECKOUT, "sockets"],
  ["non-empty-match-map", (r) => (cluster(r).transport_socket_matcher!.matcher_tree!.exact_match_map!.map = {}), CHECKOUT],
  ["unique-chain-match", (r) => tunnel(r).filter_chains!.push({ ...tunnel(r).filter_chains![0]!, name: "copy" }), "ew_tunnel"],
  ["no-partial-wildcard", (r) => (tunnel(r).filter_chains![0]!.filter_chain_match!.server_names = ["*frontend.team-a.mesh.aether"]), "ew_tunnel"],
  ["name-lengths", (r) => (tunnel(r).filter_chains![0]!.filter_chain_match!.server_names = [`*.${"x".repeat(64)}.team-a.mesh.aether`]), "ew_tunnel"],
  [
    "name-lengths",
    (r) => {
      const match = cluster(r).transport_socket_matches![0]!;
      const tls = {
        ...(unpackAny(match.transport_socket!.typed_config!)!.message as UpstreamTlsContext),
        sni: `8080.${"s".repeat(40)}.${"n".repeat(60)}.${"d".repeat(60)}.${"e".repeat(60)}.${"f".repeat(30)}`,
      };
      match.transport_socket = { ...match.transport_socket, typed_config: pack(UPSTREAM_TLS_CONTEXT, tls) };
    },
    CHECKOUT,
  ],
  ["contiguous-priorities", (r) => (assignment(r).endpoints![1]!.priority = 5), CHECKOUT],
  ["unique-endpoint-address", (r) => assignment(r).endpoints![0]!.lb_endpoints!.push(assignment(r).endpoints![0]!.lb_endpoints![0]!), CHECKOUT],
  ["uint32-weights", (r) => (assignment(r).endpoints![0]!.lb_endpoints![0]!.load_balancing_weight = 0), CHECKOUT],
  [
    "uint32-weights",
    (r) => {
      const group = assignment(r).endpoints![0]!;
      group.lb_endpoints!.push({
        ...group.lb_endpoints![0]!,
        endpoint: { address: { socket_address: { address: "10.9.9.9", port_value: 15008 } } },
        load_balancing_weight: 0xffffffff,
      });
    },
    CHECKOUT,
  ],
  ["pool-per-downstream-connection", (r) => delete cluster(r).connection_pool_per_downstream_connection, CHECKOUT, "sockets"],
  ["no-session-resumption", (r) => changeSocket(r, 0, (tls) => delete tls.max_session_keys), CHECKOUT, "sockets"],
  ["no-session-resumption", (r) => changeSocket(r, 0, (tls) => delete tls.max_session_keys), CHECKOUT, "selector"],
  ["tls-fallback-socket", (r) => delete cluster(r).transport_socket, CHECKOUT, "sockets"],
  [
    "selector-own-sds",
    (r) =>
      changeSocket(r, 1, (tls) => {
        const selector = tls.common_tls_context!.custom_tls_certificate_selector!;
        const config = unpackAny(selector.typed_config!)!.message as OnDemandSecretConfig;
        selector.typed_config = pack(ON_DEMAND_SECRET, { ...config, config_source: { ads: {}, resource_api_version: ApiVersion.V3 } });
      }),
    CHECKOUT,
  ],
  ["hashable-identity-stamp", (r) => changeStamp(r, (value) => (value.factory_key = "envoy.string")), EGRESS],
  ["hashable-identity-stamp", (r) => changeStamp(r, (value) => delete value.shared_with_upstream), EGRESS],
];

describe("the output linter fails closed", () => {
  test.each(SOURCE_IDENTITIES)("a real compile passes it (%s mode)", (mode) => {
    expect(brokenRule(() => {}, mode)).toBeUndefined();
  });

  test.each(trips)("%s", (rule, mutate, resource, mode) => {
    expect(brokenRule(mutate, mode)).toEqual({ rule, resource });
  });

  test("every rule has a test that trips it", () => {
    expect(new Set(trips.map(([rule]) => rule))).toEqual(new Set(LINT_RULES));
  });

  test("a matcher shared by clusters is checked against each cluster's own socket table", () => {
    // sockets mode: every outbound cluster of the node shares one matcher object (the clone keeps that).
    const result = compiled("sockets");
    const outbound = result.clusters.filter((c) => c.transport_socket_matcher);
    expect(outbound.length).toBeGreaterThan(1);
    expect(new Set(outbound.map((c) => c.transport_socket_matcher)).size).toBe(1);
    const last = outbound.at(-1)!;
    last.transport_socket_matches!.splice(0, 1);
    expect(() => lintCompileResult(result)).toThrow(`${last.name}: action-names-a-socket`);
  });

  test("the error names the resource and the rule", () => {
    const result = compiled();
    result.clusters.push(cluster(result));
    expect(() => lintCompileResult(result)).toThrow(`${CHECKOUT}: unique-resource-names: clusters names must be unique and non-empty`);
  });
});

describe("a recompile's patched list (resources put in the places of same-named ones)", () => {
  test("is checked by its new resources when the list it came from passed", () => {
    const result = compiled();
    lintCompileResult(result);
    const broken = structuredClone(assignment(result));
    const first = broken.endpoints![0]!.lb_endpoints![0]!;
    broken.endpoints![1]!.lb_endpoints!.push(structuredClone(first));
    const endpoints = result.endpoints.map((a) => (a.cluster_name === broken.cluster_name ? broken : a));
    notePatched(endpoints, result.endpoints, [broken]);
    expect(() => lintCompileResult({ ...result, endpoints })).toThrow(`${CHECKOUT}: unique-endpoint-address`);
  });

  test("is checked whole when the list it came from was never checked", () => {
    const result = compiled();
    const clusters = [...result.clusters, cluster(result)];
    notePatched(clusters, result.clusters, []);
    expect(() => lintCompileResult({ ...result, clusters })).toThrow(`${CHECKOUT}: unique-resource-names`);
  });
});

describe("unique-endpoint-address compares IP and port together", () => {
  /** A copy of the checkout assignment's first endpoint, at `ip`:`port` (its own by default), added to group `into`. */
  function addEndpoint(into: number, at: { ip?: string; port?: number } = {}) {
    return (r: ReturnType<typeof compiled>) => {
      const groups = assignment(r).endpoints!;
      const first = groups[0]!.lb_endpoints![0]!;
      const socket = first.endpoint!.address!.socket_address!;
      const address = { socket_address: { ...socket, address: at.ip ?? socket.address, port_value: at.port ?? socket.port_value } };
      groups[into]!.lb_endpoints!.push({ ...first, endpoint: { ...first.endpoint, address } });
    };
  }

  test("the same IP on another port passes, and so does another IP on the same port", () => {
    expect(brokenRule(addEndpoint(0, { port: 1 }))).toBeUndefined();
    expect(brokenRule(addEndpoint(0, { ip: "10.99.0.1" }))).toBeUndefined();
  });

  test("the same IP and port in another priority trips it", () => {
    expect(brokenRule(addEndpoint(1))).toEqual({ rule: "unique-endpoint-address", resource: CHECKOUT });
  });

  test("the message names the address as Envoy writes it", () => {
    const result = compiled();
    addEndpoint(0, { ip: "fd00::1" })(result);
    addEndpoint(0, { ip: "fd00::1" })(result);
    expect(() => lintCompileResult(result)).toThrow(/\[fd00::1\]:\d+ appears twice/);
  });
});

test("uint32-weights sums a priority over all its localities", () => {
  const overflowing = (r: ReturnType<typeof compiled>) => {
    const groups = assignment(r).endpoints!;
    const first = groups[0]!.lb_endpoints![0]!;
    const address = { socket_address: { address: "10.9.9.9", port_value: 15008 } };
    const lb = { ...first, endpoint: { address }, load_balancing_weight: 0xffffffff };
    groups.push({ ...groups[0]!, locality: { region: "elsewhere" }, lb_endpoints: [lb] });
  };
  expect(brokenRule(overflowing)).toEqual({ rule: "uint32-weights", resource: CHECKOUT });
});
