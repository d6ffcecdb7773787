/**
 * A node's netns rivals (`netnsRivalsOn`): each record whose network namespace another record of
 * the same node claims too, with those records. A cold compile works them out for nearly every
 * node of the mesh, so the pass is tuned; here it is checked against the definition, written out
 * by brute force, on random nodes where a few namespaces are claimed by up to all their records.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type HostedEndpoint, indexSnapshot, netnsRivalsOn } from "../../src/plan/snapshot-index.js";
import { endpoint, mesh } from "../support/mesh-builder.js";
import { runsFor } from "./harness.js";

const options = { seed: 11, numRuns: Math.max(runsFor(5), 300) };

/** Records of one node: each of a service and with a netns ("" for none) drawn from a small set, so claims collide often. */
const records = fc.array(
  fc.record({ service: fc.constantFrom("a", "b", "c"), netns: fc.constantFrom("", "/run/netns/p1", "/run/netns/p2", "/run/netns/p3", "/run/netns/p4") }),
  { maxLength: 12 },
);

/** The node `east/n1` hosting the records, as the snapshot index lists it. */
function hostedList(specs: readonly { service: string; netns: string }[]): readonly HostedEndpoint[] {
  const services: Record<string, Record<string, unknown>[]> = {};
  specs.forEach(({ service, netns }, i) => {
    const record = endpoint({ cluster: "east", ip: `10.244.0.${i + 1}`, node: "n1", pod: `pod-${i}`, netns });
    services[`ns/${service}`] = [...(services[`ns/${service}`] ?? []), record];
  });
  return indexSnapshot(mesh({ services })).hostedBy.get("east/n1") ?? [];
}

/** The definition: the other records of the node claiming the record's netns, in the node's order. */
function rivalsByDefinition(hosted: readonly HostedEndpoint[], record: HostedEndpoint): readonly HostedEndpoint[] {
  if (!record.netns) return [];
  return hosted.filter((other) => other !== record && other.netns === record.netns);
}

describe("netns rivals of a node", () => {
  test("each record's rivals are exactly the other records of its node that claim its netns", () => {
    fc.assert(
      fc.property(records, (specs) => {
        const hosted = hostedList(specs);
        expect(hosted).toHaveLength(specs.length);
        const rivals = netnsRivalsOn(hosted);
        for (const record of hosted) expect(rivals.get(record.endpoint) ?? []).toEqual(rivalsByDefinition(hosted, record));
      }),
      options,
    );
  });

  test("three records claiming one netns are each other's rivals; a record with none of its own has none", () => {
    const hosted = hostedList([
      { service: "a", netns: "/run/netns/p1" },
      { service: "b", netns: "/run/netns/p2" },
      { service: "c", netns: "/run/netns/p1" },
      { service: "a", netns: "" },
      { service: "b", netns: "/run/netns/p1" },
      { service: "c", netns: "" },
    ]);
    const rivals = netnsRivalsOn(hosted);
    const ipsOf = (list: readonly HostedEndpoint[] | undefined) => (list ?? []).map((record) => record.endpoint.ip);
    expect(Object.fromEntries(hosted.map((record) => [record.endpoint.ip, ipsOf(rivals.get(record.endpoint))]))).toEqual({
      "10.244.0.1": ["10.244.0.3", "10.244.0.5"],
      "10.244.0.2": [],
      "10.244.0.3": ["10.244.0.1", "10.244.0.5"],
      "10.244.0.4": [],
      "10.244.0.5": ["10.244.0.1", "10.244.0.3"],
      "10.244.0.6": [],
    });
  });
});
