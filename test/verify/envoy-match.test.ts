import { describe, expect, test } from "vitest";
import { mulberry32 } from "../../bench/workloads.js";
import type { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { virtualHostIndex } from "../../src/verify/envoy-match.js";

/** Envoy's choice written out: the first virtual host listing the authority (lower-cased), else the first listing `*`. */
function firstMatch(virtualHosts: readonly VirtualHost[], authority: string): VirtualHost | undefined {
  const host = authority.toLowerCase();
  return virtualHosts.find((vhost) => (vhost.domains ?? []).includes(host)) ?? virtualHosts.find((vhost) => (vhost.domains ?? []).includes("*"));
}

const DOMAINS = ["a.mesh:8080", "a.mesh", "b.mesh:80", "B.mesh:80", "c.mesh:9090", "*"];

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
