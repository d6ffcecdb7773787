import { BlockList, isIP } from "node:net";
import { describe, expect, test } from "vitest";
import { mulberry32 } from "../../bench/workloads.js";
import type { CidrRange } from "../../gen/envoy/config/core/v3/address.js";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check.js";
import type { FilterChain } from "../../gen/envoy/config/listener/v3/listener_components.js";
import type { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { chosenPriority, selectChainByDestination, virtualHostIndex } from "../../src/verify/envoy-match.js";

/** Envoy's choice written out: the first virtual host listing the authority (lower-cased), else the first listing `*`. */
function firstMatch(virtualHosts: readonly VirtualHost[], authority: string): VirtualHost | undefined {
  const host = authority.toLowerCase();
  return virtualHosts.find((vhost) => (vhost.domains ?? []).includes(host)) ?? virtualHosts.find((vhost) => (vhost.domains ?? []).includes("*"));
}

const DOMAINS = ["a.mesh:8080", "a.mesh", "b.mesh:80", "B.mesh:80", "c.mesh:9090", "*"];

describe("chosenPriority", () => {
  test("the first priority with a healthy endpoint, healthy ones only, however many a locality holds", () => {
    const lbEndpoint = (i: number, health: HealthStatus) => ({
      endpoint: { address: { socket_address: { address: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, port_value: 15008 } } },
      health_status: health,
    });
    // More endpoints in one locality than one call can take as arguments (~120,000).
    const many = Array.from({ length: 200_000 }, (_, i) => lbEndpoint(i, i % 4 === 0 ? HealthStatus.UNHEALTHY : HealthStatus.HEALTHY));
    const chosen = chosenPriority({
      cluster_name: "big",
      endpoints: [
        { priority: 0, lb_endpoints: [lbEndpoint(0, HealthStatus.UNHEALTHY)] },
        { priority: 1, lb_endpoints: many },
      ],
    });
    expect(chosen?.priority).toBe(1);
    expect(chosen?.endpoints).toEqual(many.filter((_, i) => i % 4 !== 0));
  });
});

describe("virtualHostIndex", () => {
  test("picks what Envoy picks: the first host listing the authority, else the first catch-all (seeded random lists)", () => {
    const random = mulberry32(14);
    const pick = () => DOMAINS[Math.floor(random() * DOMAINS.length)]!;
    for (let round = 0; round < 500; round++) {
      const virtualHosts: VirtualHost[] = Array.from({ length: Math.floor(random() * 6) }, (_, i) => ({
        name: `vhost-${i}`,
        ...(random() < 0.1 ? {} : { domains: Array.from({ length: 1 + Math.floor(random() * 3) }, pick) }),
      }));
      const lookup = virtualHostIndex(virtualHosts);
      for (const authority of [...DOMAINS, "A.MESH", "d.mesh"]) expect(lookup(authority)).toBe(firstMatch(virtualHosts, authority));
    }
  });
});

/** Whether a range contains the address, from a `BlockList` of its own built for this one question. */
function inRange(range: CidrRange, ip: string): boolean {
  const family = isIP(ip);
  if (family === 0 || isIP(range.address_prefix ?? "") !== family) return false;
  const list = new BlockList();
  const type = family === 6 ? "ipv6" : "ipv4";
  list.addSubnet(range.address_prefix!, range.prefix_len ?? (family === 6 ? 128 : 32), type);
  return list.check(ip, type);
}

/** Envoy's choice by destination written out: port chains (else port-less ones), then the first with the longest containing range, else the first without ranges. */
function byDestination(chains: readonly FilterChain[], ip: string, port: number): FilterChain | undefined {
  const forPort = chains.filter((chain) => chain.filter_chain_match?.destination_port === port);
  const candidates = forPort.length > 0 ? forPort : chains.filter((chain) => chain.filter_chain_match?.destination_port === undefined);
  const longest = (chain: FilterChain) =>
    Math.max(-1, ...(chain.filter_chain_match?.prefix_ranges ?? []).filter((range) => inRange(range, ip)).map((range) => range.prefix_len ?? 0));
  const best = Math.max(-1, ...candidates.map(longest));
  if (best >= 0) return candidates.find((chain) => longest(chain) === best);
  return candidates.find((chain) => (chain.filter_chain_match?.prefix_ranges ?? []).length === 0);
}

const PREFIXES: readonly CidrRange[] = [
  { address_prefix: "10.0.0.0", prefix_len: 8 },
  { address_prefix: "10.96.0.0", prefix_len: 12 },
  { address_prefix: "10.96.0.10", prefix_len: 32 },
  { address_prefix: "10.96.0.10" },
  { address_prefix: "0.0.0.0", prefix_len: 0 },
  { address_prefix: "fd00::", prefix_len: 8 },
  { address_prefix: "fd00::a", prefix_len: 128 },
  { address_prefix: "not-an-ip", prefix_len: 8 },
];
const ADDRESSES = ["10.96.0.10", "10.96.1.1", "10.1.2.3", "192.168.0.1", "fd00::a", "fd00::b", "2001:db8::1", "nonsense"];

describe("selectChainByDestination", () => {
  test("picks what Envoy picks, asked again and again over the same chains (seeded random chains)", () => {
    const random = mulberry32(10);
    const pickPort = () => [undefined, 80, 8080][Math.floor(random() * 3)];
    for (let round = 0; round < 300; round++) {
      const chains: FilterChain[] = Array.from({ length: Math.floor(random() * 6) }, (_, i) => {
        const ranges = Array.from({ length: Math.floor(random() * 3) }, () => ({ ...PREFIXES[Math.floor(random() * PREFIXES.length)]! }));
        const port = pickPort();
        return { name: `chain-${i}`, filter_chain_match: { ...(port === undefined ? {} : { destination_port: port }), prefix_ranges: ranges } };
      });
      // Every address twice: the second ask reuses what the first built.
      for (const ip of [...ADDRESSES, ...ADDRESSES]) {
        for (const port of [80, 8080, 9090]) expect(selectChainByDestination(chains, ip, port)).toBe(byDestination(chains, ip, port));
      }
      // A range edited in place is read again.
      const range = chains.find((chain) => (chain.filter_chain_match?.prefix_ranges ?? []).length > 0)?.filter_chain_match?.prefix_ranges?.[0];
      if (!range) continue;
      range.prefix_len = Math.floor(random() * 33);
      for (const ip of ADDRESSES) expect(selectChainByDestination(chains, ip, 80)).toBe(byDestination(chains, ip, 80));
    }
  });
});
