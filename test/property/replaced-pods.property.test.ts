/**
 * `withServiceRecords` checks that a service's new records name no pod another record of the node
 * already names (`replacedServicePodIssues`) by reading only the records that could clash, where
 * `parseSnapshot` reads every record (`duplicatePodIssues`). Here the two are held equal: on random
 * services that pass the full check, replacing one service's records finds exactly the issues
 * the full check finds with that service last — so clashes are reported on the new records.
 * Records come from few namespaces, services, clusters, nodes and pod names (the name made from
 * the IP when empty), so clashes within the new records and with other services are common.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { ServiceEndpoint } from "../../src/model/registry.js";
import { duplicatePodIssues, replacedServicePodIssues } from "../../src/model/snapshot-checks.js";
import type { ServiceKey } from "../../src/naming.js";
import { RUNS, SEED } from "./harness.js";

const SERVICES: readonly ServiceKey[] = ["a/x", "a/y", "a/z", "b/x"];

const record = fc.record({
  service: fc.constantFrom(...SERVICES),
  cluster: fc.constantFrom("east", "west"),
  node: fc.constantFrom("", "node-1", "node-2"),
  ip: fc.constantFrom("10.0.0.1", "10.0.0.2", "fd00::1"),
  pod: fc.constantFrom("", "p1", "p2"),
});

type DrawnRecord = typeof record extends fc.Arbitrary<infer T> ? T : never;

/** A record of `service`, with only the fields the pod check reads (its namespace is the service's, as parsing makes it). */
function endpointOf(service: ServiceKey, { cluster, node, ip, pod }: DrawnRecord): ServiceEndpoint {
  return { ip, clusterName: cluster, kubernetesMetadata: { namespace: service.split("/")[0]!, podName: pod, nodeName: node } } as ServiceEndpoint;
}

/** The records as services, each kept only if the full check still passes with it: a validated snapshot's. */
function passingServices(records: readonly DrawnRecord[]): Map<ServiceKey, ServiceEndpoint[]> {
  const services = new Map<ServiceKey, ServiceEndpoint[]>();
  for (const drawn of records) {
    const tried = new Map(services).set(drawn.service, [...(services.get(drawn.service) ?? []), endpointOf(drawn.service, drawn)]);
    if (duplicatePodIssues(tried).length === 0) services.set(drawn.service, tried.get(drawn.service)!);
  }
  return services;
}

/** `services` with `key`'s records replaced by `endpoints`, `key` last. */
function withServiceLast(services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>, key: ServiceKey, endpoints: readonly ServiceEndpoint[]) {
  const moved = new Map([...services].filter(([other]) => other !== key));
  return moved.set(key, endpoints);
}

describe("a service's replaced records", () => {
  test("clash with exactly the pods the full check finds with the service last, reported on the new records", () => {
    // Clashes with another service's record, and between two new records.
    const clashes = { other: 0, within: 0 };
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), fc.constantFrom(...SERVICES), fc.array(record, { maxLength: 5 }), (before, key, replacement) => {
        const services = passingServices(before);
        const endpoints = replacement.map((drawn) => endpointOf(key, drawn));
        const expected = duplicatePodIssues(withServiceLast(services, key, endpoints));
        for (const issue of expected) clashes[issue.message.includes(`is also services["${key}"]`) ? "within" : "other"]++;
        expect(replacedServicePodIssues(services, key, endpoints)).toEqual(expected);
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 5, 1000) },
    );
    expect(clashes.other).toBeGreaterThan(50);
    expect(clashes.within).toBeGreaterThan(50);
  });
});
