import { describe, expect, test } from "vitest";
import { indexSnapshot, localNodeFrom as publicLocalNodeFrom, withServiceRecords } from "../../src/entry/index.js";
import { isInputError } from "../../src/errors.js";
import { localNodeFrom, parseNode } from "../../src/model/node.js";
import { parseOptions } from "../../src/model/options.js";
import { PRODUCTION_SETTINGS } from "../../src/model/settings.js";
import { parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";
import { exampleSnapshot, meshDocument } from "../support/fixtures.js";

function issuesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (isInputError(error)) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error("expected an InputError");
}

describe("localNodeFrom", () => {
  test("derives address, locality, identity, hosted pods and dependencies from the snapshot", () => {
    const node = localNodeFrom(exampleSnapshot(), "east", "node-1");
    expect(node).toEqual({
      clusterName: "east",
      nodeName: "node-1",
      nodeIp: "10.10.0.11",
      locality: { region: "eu-west-1", zone: "eu-west-1a" },
      meshDomain: "mesh.aether",
      trustDomain: "aether.internal",
      spiffeId: "spiffe://aether.internal/ns/aether-system/sa/aether-node",
      pods: [
        {
          name: "frontend-7d9f-abcde",
          namespace: "team-a",
          serviceAccount: "frontend",
          ip: "10.244.0.5",
          netns: "/var/run/netns/cni-3f1a9c",
          terminating: false,
          ports: [8080],
        },
        {
          name: "payments-6f8d-p1",
          namespace: "team-b",
          serviceAccount: "payments",
          ip: "10.244.0.8",
          netns: "/var/run/netns/cni-9e0c41",
          terminating: true, // DRAINING in the registry
          ports: [8443],
        },
      ],
      // frontend calls checkout and payments; payments calls nothing.
      dependencies: ["team-a/checkout", "team-b/payments"],
    });
  });

  test("node names repeat across clusters: the cluster picks the node", () => {
    const west = localNodeFrom(exampleSnapshot(), "west", "node-1");
    expect(west.nodeIp).toBe("10.20.0.11");
    expect(west.pods.map((p) => p.name)).toEqual(["frontend-84c2-fghij", "payments-2b7c-q1"]);
  });

  test("an unlisted node takes its address from its pods' records, or fails without one", () => {
    const doc = meshDocument();
    doc.services["team-b/payments"][4].kubernetesMetadata.nodeIp = "10.20.0.14";
    expect(localNodeFrom(parseSnapshot(doc), "west", "node-4").nodeIp).toBe("10.20.0.14");
    expect(issuesOf(() => localNodeFrom(exampleSnapshot(), "west", "node-4"))).toEqual(["nodeIp: node west/node-4 has no known IP"]);
    expect(issuesOf(() => localNodeFrom(exampleSnapshot(), "north", "node-1"))).toEqual([": no node north/node-1 in the snapshot"]);
  });

  test("a service the dependency data does not mention may call anything", () => {
    const doc = meshDocument();
    delete doc.dependencies["team-b/payments"];
    expect(localNodeFrom(parseSnapshot(doc), "east", "node-1").dependencies).toBeUndefined();
  });

  test("under federation the node's trust domain is its cluster's", () => {
    const doc = meshDocument();
    doc.mesh.trust = {
      mode: "federated",
      trustDomains: [
        { name: "east.aether", clusters: ["east"] },
        { name: "west.aether", clusters: ["west"] },
      ],
      bundles: { filename: "/run/spire/bundles/federation.spiffe" },
    };
    const node = localNodeFrom(parseSnapshot(doc), "west", "node-2");
    expect(node.trustDomain).toBe("west.aether");
    expect(node.spiffeId).toBe("spiffe://west.aether/ns/aether-system/sa/aether-node");
  });
});

describe("localNodeFrom given the snapshot's index", () => {
  /** Every node the snapshot lists or a record names, and one it does not know. */
  function nodesOf(snapshot: Snapshot): [string, string][] {
    const keys = new Set(snapshot.nodes.map((node) => `${node.cluster}/${node.name}`));
    for (const records of snapshot.services.values()) for (const record of records) keys.add(`${record.clusterName}/${record.kubernetesMetadata.nodeName}`);
    return [...keys, "north/node-1"].map((key) => key.split("/") as [string, string]);
  }

  /** The node, or the input issues that refuse it. */
  function derived(run: () => unknown): unknown {
    try {
      return run();
    } catch (error) {
      if (isInputError(error)) return error.issues;
      throw error;
    }
  }

  /** Each node, or its refusal, is the same derived from the index as from the snapshot. */
  function expectSameNodes(snapshot: Snapshot, index: ReturnType<typeof indexSnapshot>): void {
    for (const [cluster, name] of nodesOf(snapshot)) {
      expect(
        derived(() => publicLocalNodeFrom(index, cluster, name)),
        `${cluster}/${name}`,
      ).toEqual(derived(() => localNodeFrom(snapshot, cluster, name)));
    }
  }

  test("derives every node as from the snapshot, refusals included, and follows an updated index", () => {
    const doc = meshDocument();
    doc.services["team-b/payments"].reverse(); // records in any order: the node's pods come out sorted all the same
    // A listed node's records report a stale address and zone: the node list wins, read from the index too.
    Object.assign(
      doc.nodes.find((n: { cluster: string; name: string }) => n.cluster === "east" && n.name === "node-2"),
      { ip: "10.10.0.22", zone: "eu-west-1c" },
    );
    let snapshot = parseSnapshot(doc);
    let index = indexSnapshot(snapshot);
    expect(nodesOf(snapshot).length).toBeGreaterThan(5);
    expectSameNodes(snapshot, index);
    // A pod moves to another node: the updated index (layered on the previous one) knows.
    const moved = structuredClone(doc.services["team-a/frontend"]);
    moved[0].kubernetesMetadata = { ...moved[0].kubernetesMetadata, nodeName: "node-2", nodeIp: "10.10.0.12" };
    snapshot = withServiceRecords(snapshot, "team-a/frontend", moved);
    index = indexSnapshot(snapshot, index);
    expectSameNodes(snapshot, index);
    expect(publicLocalNodeFrom(index, "east", "node-2").pods.map((pod) => pod.name)).toContain("frontend-7d9f-abcde");
    expect(publicLocalNodeFrom(index, "east", "node-1").pods.map((pod) => pod.name)).not.toContain("frontend-7d9f-abcde");
  });
});

describe("parseNode", () => {
  const valid = () => ({
    clusterName: "east",
    nodeName: "node-1",
    nodeIp: "10.10.0.11",
    meshDomain: "mesh.aether",
    trustDomain: "aether.internal",
    spiffeId: "spiffe://aether.internal/ns/aether-system/sa/aether-node",
    pods: [{ name: "web-1", namespace: "team-a", serviceAccount: "web", ip: "10.244.0.9", netns: "/var/run/netns/cni-1" }],
    dependencies: ["team-b/payments", "team-a/checkout", "team-b/payments"],
  });

  test("applies defaults and sorts the dependency set", () => {
    const node = parseNode(valid());
    expect(node.locality).toEqual({ region: "", zone: "" });
    expect(node.pods[0]).toMatchObject({ terminating: false, ports: [] });
    expect(node.dependencies).toEqual(["team-a/checkout", "team-b/payments"]);
  });

  test("keeps each dependency once, whether the list came sorted or not", () => {
    for (const dependencies of [
      ["team-a/checkout", "team-a/checkout", "team-b/payments"],
      ["team-b/payments", "team-a/checkout", "team-b/payments"],
    ]) {
      expect(parseNode({ ...valid(), dependencies }).dependencies).toEqual(["team-a/checkout", "team-b/payments"]);
    }
  });

  test("reports each problem with its path", () => {
    const node: any = valid();
    node.nodeIp = "node-1";
    node.pods[0].netns = "cni-1";
    node.pods.push({ ...node.pods[0], netns: "/x" });
    node.spiffeId = "aether-node";
    expect(issuesOf(() => parseNode(node))).toEqual([
      "nodeIp: not an IPv4/IPv6 address",
      "spiffeId: not a SPIFFE ID (spiffe://<trust-domain>/<path>)",
      "pods[0].netns: not an absolute path",
    ]);
    node.nodeIp = "10.0.0.1";
    node.spiffeId = "spiffe://td/x";
    node.pods[0].netns = "/y";
    expect(issuesOf(() => parseNode(node))).toEqual(["pods[1]: duplicate pod team-a/web-1"]);
  });
});

describe("parseOptions", () => {
  test("the defaults docs/contract.md states", () => {
    expect(parseOptions()).toEqual({
      eastWestWaypoint: "off",
      inboundPort: 15008,
      tunnelPort: 15009,
      egressPort: 15001,
      capturePort: 15002,
      socketSelection: "matcher",
      sourceIdentity: "selector",
      envoyVersion: "1.38",
      netnsFilterStateKey: "aether.source_netns",
      sds: "ads",
      selectorSds: "sds_grpc",
      eds: "ads",
      settings: PRODUCTION_SETTINGS,
    });
  });

  test("a source-identity mode that needs a newer Envoy than envoyVersion is refused, naming both", () => {
    expect(issuesOf(() => parseOptions({ envoyVersion: "1.37" }))).toEqual([
      'sourceIdentity: "selector" needs Envoy ≥ 1.38, but envoyVersion is 1.37: raise envoyVersion (or sourceIdentity "sockets", which runs on 1.37)',
    ]);
    expect(parseOptions({ envoyVersion: "1.37", sourceIdentity: "sockets" }).sourceIdentity).toBe("sockets");
    expect(parseOptions({ envoyVersion: "1.40" }).sourceIdentity).toBe("selector");
    expect(issuesOf(() => parseOptions({ envoyVersion: "1.36", sourceIdentity: "sockets" }))).toEqual([
      "envoyVersion: Envoy 1.36 is older than 1.37, the oldest aether-xds supports",
    ]);
    expect(issuesOf(() => parseOptions({ envoyVersion: "2.0" }))).toEqual(['envoyVersion: not an Envoy version "1.<minor>"']);
  });

  test("the listeners bound in each pod's netns need distinct ports", () => {
    expect(issuesOf(() => parseOptions({ egressPort: 15008 }))).toEqual([
      "egressPort: 15008 is also inboundPort: both listeners bind in each pod's network namespace",
    ]);
  });

  test("the netns stamp key must not be one Envoy sets itself", () => {
    expect(issuesOf(() => parseOptions({ netnsFilterStateKey: "envoy.network.network_namespace" }))).toEqual([
      "netnsFilterStateKey: a key Envoy itself sets: the socket matcher would never see the stamped value",
    ]);
  });

  test("the certificate selector's SDS cluster: selectorSds, else the gRPC sds cluster, else sds_grpc", () => {
    expect(parseOptions({ selectorSds: "spire" }).selectorSds).toBe("spire");
    expect(parseOptions({ sds: { grpcCluster: "spire_agent" } }).selectorSds).toBe("spire_agent");
  });

  test("accepts a named gRPC SDS cluster", () => {
    expect(parseOptions({ sds: { grpcCluster: "spire_agent" } }).sds).toEqual({ grpcCluster: "spire_agent" });
  });

  test("rejects unknown modes, bad ports and unknown keys", () => {
    expect(issuesOf(() => parseOptions({ eastWestWaypoint: "on", tunnelPort: 0, waypoint: true }))).toEqual([
      'eastWestWaypoint: Invalid option: expected one of "off"|"cross-cluster"|"always"',
      "tunnelPort: not a port: must be an integer 1–65535",
      "waypoint: unknown key",
    ]);
  });
});
