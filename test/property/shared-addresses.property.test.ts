/**
 * `sharedAddresses`: the addresses that name pods of different services in different clusters
 * (each such address is a SHARED_POD_ADDRESS diagnostic and a line of the mesh check's report).
 * It reads every record of the mesh, so it keeps a list only for an address met twice; here it
 * is checked against the definition, on random records drawn from a few addresses, clusters and
 * services so that every kind of sharing (same cluster, same service, both, neither) is common.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import type { ServiceEndpoint } from "../../src/model/registry.js";
import { podNameOf } from "../../src/model/registry.js";
import { sharedAddresses } from "../../src/model/snapshot-checks.js";
import type { ServiceKey } from "../../src/naming.js";
import { RUNS, SEED } from "./harness.js";

/** The definition: every address's clusters, services and pods; those with two or more of each, pods and addresses sorted. */
function byDefinition(services: ReadonlyMap<ServiceKey, readonly ServiceEndpoint[]>) {
  const owners = new Map<string, { clusters: Set<string>; services: Set<string>; pods: string[] }>();
  for (const [key, endpoints] of services) {
    for (const endpoint of endpoints) {
      const owner = owners.get(endpoint.ip) ?? { clusters: new Set<string>(), services: new Set<string>(), pods: [] };
      owners.set(endpoint.ip, owner);
      owner.clusters.add(endpoint.clusterName);
      owner.services.add(key);
      owner.pods.push(`${endpoint.clusterName}/${endpoint.kubernetesMetadata.namespace}/${podNameOf(endpoint)}`);
    }
  }
  return [...owners]
    .filter(([, owner]) => owner.clusters.size > 1 && owner.services.size > 1)
    .map(([ip, owner]) => ({ ip, pods: owner.pods.sort() }))
    .sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
}

const record = fc.record({
  service: fc.constantFrom<ServiceKey>("a/x", "a/y", "b/x"),
  cluster: fc.constantFrom("east", "west", "north"),
  ip: fc.constantFrom("10.0.0.1", "10.0.0.2", "10.0.0.10", "fd00::1"),
  pod: fc.constantFrom("", "p1", "p2"),
});

/** The records as a snapshot's services map (only the fields `sharedAddresses` reads). */
function servicesOf(records: readonly { service: ServiceKey; cluster: string; ip: string; pod: string }[]) {
  const services = new Map<ServiceKey, ServiceEndpoint[]>();
  for (const { service, cluster, ip, pod } of records) {
    const endpoint = { ip, clusterName: cluster, kubernetesMetadata: { namespace: service.split("/")[0]!, podName: pod } } as ServiceEndpoint;
    services.set(service, [...(services.get(service) ?? []), endpoint]);
  }
  return services;
}

describe("addresses shared across clusters and services", () => {
  test("are exactly those naming pods of two or more services in two or more clusters, each with its pods, sorted", () => {
    let found = 0;
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), (records) => {
        const services = servicesOf(records);
        const expected = byDefinition(services);
        found += expected.length;
        expect(sharedAddresses(services)).toEqual(expected);
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 5, 1000) },
    );
    expect(found).toBeGreaterThan(100);
  });
});
