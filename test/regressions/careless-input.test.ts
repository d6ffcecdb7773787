/**
 * Hostile and careless input, round two (issue 11): each class of input that crashed the library
 * or produced wrong output with exit 0, as a path-qualified error or diagnostic instead.
 */
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { NODE_LIMITS, nodeSize } from "../../src/compile/node-limits.js";
import { isInputError } from "../../src/errors.js";
import { parseMeshFile } from "../../src/model/mesh-file.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseOptions } from "../../src/model/options.js";
import { encodeServiceEndpoint } from "../../src/model/registry.js";
import { parseSnapshot, SNAPSHOT_LIMITS, type Snapshot, withServiceRecords, withValidServiceRecords } from "../../src/model/snapshot.js";
import { planNode } from "../../src/plan/node-plan.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { verifyMesh } from "../../src/verify/mesh-check.js";
import { EXAMPLE_MESH, meshDocument } from "../support/fixtures.js";
import { endpoint, mesh, node } from "../support/mesh-builder.js";

/** The issues parseSnapshot reports for the example mesh with one change, as "path: message" lines. */
function problems(change: (doc: any) => void): string[] {
  const doc = meshDocument();
  change(doc);
  try {
    parseSnapshot(doc);
  } catch (error) {
    if (!isInputError(error)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error("expected the snapshot to be rejected");
}

describe("1. IP address forms", () => {
  test.each([
    ["fe80::1%eth0", "zone id"],
    ["10.10.0.011", "leading zeros"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["fe80::1", "link-local"],
  ])("%s is refused as a node, pod or node IP, naming why (%s)", (ip, why) => {
    expect(problems((doc) => (doc.nodes[0].ip = ip))).toEqual([expect.stringMatching(new RegExp(`^nodes\\[0\\]\\.ip: .*${why}`))]);
    expect(problems((doc) => (doc.services["team-a/frontend"][0].ip = ip))).toEqual([
      expect.stringMatching(new RegExp(`^services\\["team-a/frontend"\\]\\[0\\]\\.ip: .*${why}`)),
    ]);
    expect(problems((doc) => (doc.services["team-a/frontend"][0].kubernetesMetadata.nodeIp = ip))).toEqual([
      expect.stringMatching(/kubernetesMetadata\.nodeIp: /),
    ]);
  });

  test("IPv4-mapped IPv6 is the IPv4 address; loopback and non-canonical IPv6 are accepted in canonical form", () => {
    const doc = meshDocument();
    doc.nodes[0].ip = "::FFFF:10.10.0.11";
    doc.nodes[1].ip = "127.0.0.12";
    doc.nodes[2].ip = "FD00:0000::0013";
    const snapshot = parseSnapshot(doc);
    expect(snapshot.nodes.slice(0, 3).map((node) => node.ip)).toEqual(["10.10.0.11", "127.0.0.12", "fd00::13"]);
  });
});

describe("12. type errors say what was expected and what was found", () => {
  test.each([
    ["8080", 'expected a number, found the string "8080"'],
    [Number.NaN, "expected a number, found NaN"],
    [Number.POSITIVE_INFINITY, "expected a number, found Infinity"],
    [null, "expected a number, found null"],
    [true, "expected a number, found true"],
  ])("a port given as %s", (port, message) => {
    expect(problems((doc) => (doc.services["team-a/frontend"][0].port = port))).toEqual([`services["team-a/frontend"][0].port: ${message}`]);
  });

  test("a list given as an object, an object as a string", () => {
    expect(problems((doc) => (doc.nodes = { a: 1 }))).toEqual(["nodes: expected a list, found an object"]);
    expect(problems((doc) => (doc.mesh.trust = "shared"))).toEqual(['mesh.trust: expected an object, found the string "shared"']);
  });
});

describe("13. long keys and values are truncated in messages", () => {
  test("a 1 MB key and a 1 MB value give a message of bounded length that still names them", () => {
    const long = "k".repeat(1_000_000);
    const issues = problems((doc) => {
      doc.services["team-a/frontend"][0][long] = 1;
      doc.nodes[0].name = `Bad${long}`;
    });
    expect(issues).toHaveLength(2);
    for (const issue of issues) expect(issue.length).toBeLessThan(2_000);
    expect(issues.join("\n")).toContain("more characters");
  });
});

/** The InputError messages `action` throws. */
function thrown(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    if (!isInputError(error)) throw error;
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error("expected an InputError");
}

/** `services` services of `pods` pods each, all on c1/n1, each pod serving `ports` ports. */
function crowdedMesh(services: number, pods: number, ports: number, dependencies?: Record<string, string[]>): Snapshot {
  const portList = Array.from({ length: ports }, (_, i) => 8000 + i);
  const records: Record<string, Record<string, unknown>[]> = {};
  for (let s = 0; s < services; s++) {
    records[`ns/svc-${s}`] = Array.from({ length: pods }, (_, p) =>
      endpoint({ cluster: "c1", ip: `10.${s}.${p >> 8}.${p & 255}`, node: "n1", port: 8000, ports: portList, netns: `/var/run/netns/s${s}-p${p}` }),
    );
  }
  return mesh({ nodes: [node({ cluster: "c1", name: "n1", ip: "192.168.0.1" })], services: records, ...(dependencies ? { dependencies } : {}) });
}

describe("2. output size is bounded before compiling", () => {
  test("a record with more ports than the per-record limit is refused, naming the limit", () => {
    const ports = Array.from({ length: SNAPSHOT_LIMITS.portsPerRecord + 1 }, (_, i) => 1000 + i);
    expect(problems((doc) => (doc.services["team-a/frontend"][0].ports = ports))).toEqual([
      `services["team-a/frontend"][0].ports: more than ${SNAPSHOT_LIMITS.portsPerRecord} ports (the limit per record)`,
    ]);
  });

  test("a service whose records add up to more distinct ports than the per-service limit is refused", () => {
    const issues = problems((doc) => {
      doc.services["team-a/frontend"] = Array.from({ length: 5 }, (_, r) =>
        endpoint({ cluster: "east", ip: `10.244.9.${r + 1}`, port: 2000, ports: Array.from({ length: 60 }, (_, i) => 2000 + r * 60 + i) }),
      );
    });
    expect(issues).toEqual([`services["team-a/frontend"]: 300 distinct ports, over the limit of ${SNAPSHOT_LIMITS.portsPerService} per service`]);
  });

  test("withServiceRecords keeps the snapshot's limits on services in all: an update cannot grow past what parseSnapshot takes", () => {
    const snapshot = parseMeshFile(readFileSync(EXAMPLE_MESH));
    const added = SNAPSHOT_LIMITS.services - snapshot.services.size + 1;
    const updates = new Map(Array.from({ length: added }, (_, i) => [`bulk/svc-${i}`, []]));
    expect(thrown(() => withServiceRecords(snapshot, updates))).toEqual([
      `services: ${SNAPSHOT_LIMITS.services + 1} services, over the limit of ${SNAPSHOT_LIMITS.services}`,
    ]);
    updates.delete("bulk/svc-0");
    expect(withServiceRecords(snapshot, updates).services.size).toBe(SNAPSHOT_LIMITS.services);
  });

  test("withValidServiceRecords over the limit refuses every service the update adds or grows, and applies the rest", () => {
    const snapshot = parseMeshFile(readFileSync(EXAMPLE_MESH));
    const added = SNAPSHOT_LIMITS.services - snapshot.services.size + 1;
    const payments = snapshot.services.get("team-b/payments")!;
    const updates = new Map<string, readonly unknown[]>(Array.from({ length: added }, (_, i) => [`bulk/svc-${i}`, []]));
    updates.set("team-b/payments", payments.slice(1));
    const { snapshot: next, refused } = withValidServiceRecords(snapshot, updates);
    expect(refused.size).toBe(added);
    expect(refused.get("bulk/svc-0")!.issues.map((issue) => `${issue.path}: ${issue.message}`)).toEqual([
      `services: ${SNAPSHOT_LIMITS.services + 1} services, over the limit of ${SNAPSHOT_LIMITS.services}`,
    ]);
    expect([...next.services.keys()]).toEqual([...snapshot.services.keys()]);
    expect(next.services.get("team-b/payments")).toEqual(payments.slice(1));
  });

  test("60 pods × 60 services × 64 ports on one node: refused by the pod-route limit before anything is built", () => {
    const snapshot = crowdedMesh(60, 1, 64);
    const issues = thrown(() => compileNode(snapshot, localNodeFrom(snapshot, "c1", "n1")));
    expect(issues).toEqual([
      expect.stringMatching(/^: node c1\/n1 would receive 230400 pod listener routes, over the limit of 200000 \(NODE_LIMITS\.podRoutes\)/),
    ]);
  });

  test("a recompile after a registry event counts the pod routes again: a dependency gaining ports takes the node over the limit", () => {
    // 60 hosted pods calling 60 × 55 ports: 198,000 routes. A remote service (not hosted, so the
    // node's pods and records stay the same objects) adds 60 routes per port it serves.
    const remote = (ports: number) => [
      endpoint({ cluster: "c2", ip: "10.99.0.1", node: "m1", port: 8000, ports: Array.from({ length: ports }, (_, i) => 8000 + i) }),
    ];
    const before = withServiceRecords(crowdedMesh(60, 1, 55), "ns/remote", remote(1));
    const local = localNodeFrom(before, "c1", "n1");
    const options = parseOptions({});
    const index = indexSnapshot(before);
    expect(nodeSize(planNode(index, local, options)).podRoutes).toBe(198_060);
    compileNode(index, local, options);
    const after = indexSnapshot(withServiceRecords(before, "ns/remote", remote(64)), index);
    expect(thrown(() => compileNode(after, local, options))).toEqual([
      expect.stringMatching(/^: node c1\/n1 would receive 201840 pod listener routes, over the limit of 200000 \(NODE_LIMITS\.podRoutes\)/),
    ]);
  });

  test("the socket count follows the source-identity mode: 2 per cluster (selector), 2 per hosted identity (sockets)", () => {
    const dependencies = Object.fromEntries(Array.from({ length: 10 }, (_, s) => [`ns/svc-${s}`, ["ns/svc-0"]]));
    const snapshot = crowdedMesh(10, 20, 64, dependencies);
    const index = indexSnapshot(snapshot);
    const local = localNodeFrom(snapshot, "c1", "n1");
    const size = (options: object) => nodeSize(planNode(index, local, parseOptions(options)));
    const selector = size({ eastWestWaypoint: "cross-cluster" });
    const sockets = size({ eastWestWaypoint: "cross-cluster", sourceIdentity: "sockets", envoyVersion: "1.37" });
    expect(selector.transportSockets).toBe(64 * 2);
    expect(sockets.transportSockets).toBe(64 * 2 * 11); // 10 services' identities (one per service account) and the node's own
    expect(selector.podRoutes).toBe(200 * 64);
    const compiled = compileNode(index, local, { eastWestWaypoint: "cross-cluster", sourceIdentity: "sockets", envoyVersion: "1.37" });
    const outbound = compiled.clusters.find((cluster) => cluster.name === "svc-0.ns.mesh.test:8000")!;
    expect(outbound.transport_socket_matches).toHaveLength(2 * 11);
    expect(sockets.transportSockets).toBeLessThanOrEqual(NODE_LIMITS.transportSockets);
  });
});

describe("9. input that is not what it looks like", () => {
  const meshText = readFileSync(EXAMPLE_MESH, "utf8");
  const meshJson = JSON.stringify(meshDocument());
  const parses = (input: string | Uint8Array, format: "json" | "yaml") => thrown(() => parseMeshFile(input, format));

  test.each([
    ["an integer and a string", "1: a\n'1': b\n"],
    ["a boolean and a string", "true: a\n'true': b\n"],
    ["null, ~ and a string", "null: a\n~: b\n"],
    ["a float and its integer text", "1: a\n'1': b\n"],
  ])("YAML duplicate keys of any scalar type are refused: %s", (_, text) => {
    expect(parses(text, "yaml")).toEqual([expect.stringMatching(/^: not valid YAML: Map keys must be unique/)]);
  });

  test("a multi-document YAML file is refused", () => {
    expect(parses(`${meshText}\n---\n${meshText}`, "yaml")).toEqual([': not valid YAML: 2 documents ("---"): a mesh file is one document']);
  });

  test("invalid UTF-8 is refused, in JSON and in YAML", () => {
    const bytes = Buffer.concat([Buffer.from(meshText.slice(0, 40)), Buffer.from([0xc3, 0x28]), Buffer.from(meshText.slice(40))]);
    expect(parses(bytes, "yaml")).toEqual([": not valid YAML: the file is not valid UTF-8"]);
    expect(parses(Buffer.from([0x7b, 0xff, 0x7d]), "json")).toEqual([": not valid JSON: the file is not valid UTF-8"]);
  });

  test("a byte-order mark is accepted in JSON as in YAML, as text and as bytes", () => {
    for (const [text, format] of [
      [meshJson, "json"],
      [meshText, "yaml"],
    ] as const) {
      expect(parseMeshFile(`\uFEFF${text}`, format).nodes).toHaveLength(6);
      expect(parseMeshFile(Buffer.from(`\uFEFF${text}`), format).nodes).toHaveLength(6);
    }
  });

  test("a base64 binary record meets the forbidden-key and metadata checks of a JSON record", () => {
    const record = parseSnapshot(meshDocument()).services.get("team-a/frontend")![0]!;
    const forged = (metadata: Record<string, string>) => {
      const bytes = encodeServiceEndpoint({ ...record, metadata: {} });
      const entries = Object.entries(metadata).map(([key, value]) =>
        Buffer.concat([
          Buffer.from([0x32]),
          lengthPrefixed(Buffer.concat([Buffer.from([0x0a]), lengthPrefixed(Buffer.from(key)), Buffer.from([0x12]), lengthPrefixed(Buffer.from(value))])),
        ]),
      );
      return Buffer.concat([Buffer.from(bytes), ...entries]).toString("base64");
    };
    expect(problems((doc) => (doc.services["team-a/frontend"][0] = forged({ ["__proto__"]: "x" })))).toEqual([
      'services["team-a/frontend"][0].metadata.__proto__: forbidden key',
    ]);
    expect(problems((doc) => (doc.services["team-a/frontend"][0] = forged({ "bad key": "x" })))).toEqual([
      expect.stringMatching(/^services\["team-a\/frontend"\]\[0\]\.metadata.*printable ASCII/),
    ]);
  });
});

describe("9. a binary record's string fields are decoded strictly", () => {
  const record = parseSnapshot(meshDocument()).services.get("team-a/frontend")![0]!;
  /** The record with one more length-delimited field (a nested message merges into the first). */
  const withField = (tag: number, value: Buffer) => Buffer.concat([Buffer.from(encodeServiceEndpoint(record)), Buffer.from([tag]), lengthPrefixed(value)]);
  const invalid = Buffer.from([0x70, 0x6f, 0x64, 0xff]); // "pod" and a byte that never starts a UTF-8 sequence
  const surrogate = Buffer.from([0x78, 0xed, 0xa0, 0x80]); // "x" and an encoded lone surrogate

  test("invalid UTF-8 in a base64 record's nested string is refused with its path, not replaced", () => {
    const podName = withField(0x42, Buffer.concat([Buffer.from([0x12]), lengthPrefixed(invalid)])).toString("base64");
    expect(problems((doc) => (doc.services["team-a/frontend"][0] = podName))).toEqual([
      'services["team-a/frontend"][0].kubernetesMetadata.podName: not valid UTF-8',
    ]);
  });

  test("in a Uint8Array record's top-level, netns and metadata strings too", () => {
    const cases: [Buffer, string][] = [
      [withField(0x12, surrogate), "clusterName"],
      [withField(0x3a, Buffer.concat([Buffer.from([0x12]), lengthPrefixed(invalid)])), "containerMetadata.networkNamespace"],
      [
        withField(0x32, Buffer.concat([Buffer.from([0x0a]), lengthPrefixed(Buffer.from("k")), Buffer.from([0x12]), lengthPrefixed(invalid)])),
        "metadata (a value)",
      ],
    ];
    for (const [bytes, path] of cases) {
      expect(problems((doc) => (doc.services["team-a/frontend"][0] = new Uint8Array(bytes)))).toEqual([
        `services["team-a/frontend"][0].${path}: not valid UTF-8`,
      ]);
    }
    const valid = withField(
      0x32,
      Buffer.concat([Buffer.from([0x0a]), lengthPrefixed(Buffer.from("k")), Buffer.from([0x12]), lengthPrefixed(Buffer.from("h\u00e9"))]),
    );
    const doc = meshDocument();
    doc.services["team-a/frontend"][0] = new Uint8Array(valid);
    expect(parseSnapshot(doc).services.get("team-a/frontend")![0]!.metadata.k).toBe("h\u00e9");
  });
});

function lengthPrefixed(bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

describe("5. a record that makes a node uncompilable is refused, naming the record", () => {
  test("a pod name repeated on one node, across services of a namespace", () => {
    const issues = problems((doc) => {
      doc.services["team-a/checkout"][0].kubernetesMetadata.podName = "frontend-7d9f-abcde";
      doc.services["team-a/checkout"][0].kubernetesMetadata.nodeName = "node-1";
      doc.services["team-a/checkout"][0].kubernetesMetadata.nodeIp = "10.10.0.11";
    });
    expect(issues).toEqual([
      'services["team-a/checkout"][0].kubernetesMetadata.podName: pod team-a/frontend-7d9f-abcde on node east/node-1 is also services["team-a/frontend"][0]: one pod per name and node',
    ]);
  });

  test("two records without pod names whose IPs give the same name: refused by parseSnapshot and by withServiceRecords", () => {
    const doc = meshDocument();
    doc.services["team-a/frontend"][0].kubernetesMetadata.podName = "";
    const unnamed = { ...endpoint({ cluster: "east", ip: "10.244.0.5" }), kubernetesMetadata: { nodeName: "node-1" } };
    const message =
      'services["team-a/checkout"][0].kubernetesMetadata.podName: pod team-a/ip-10-244-0-5 on node east/node-1 is also services["team-a/frontend"][0]: one pod per name and node';
    expect(thrown(() => withServiceRecords(parseSnapshot(doc), "team-a/checkout", [unnamed]))).toEqual([message]);
    doc.services["team-a/checkout"] = [unnamed, ...doc.services["team-a/checkout"]];
    expect(thrown(() => parseSnapshot(doc))).toEqual([message]);
  });

  test("a node IP and a pod port equal to the inbound port: every node is compilable or refused before compiling", () => {
    const snapshot = parseSnapshot(meshDocument());
    expect(thrown(() => compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { inboundPort: 8080 }))).toEqual([
      "inboundPort: 8080 is also an application port of pod team-a/frontend-7d9f-abcde on node east/node-1: both bind in the pod's network namespace",
    ]);
  });
});

describe("6. contradictory settings are parse-time errors", () => {
  test("two listed nodes with one IP", () => {
    expect(problems((doc) => (doc.nodes[1].ip = doc.nodes[0].ip))).toEqual([
      "nodes[1].ip: 10.10.0.11 is also node east/node-1's (nodes[0]): one address per node",
    ]);
  });

  test("protocols keys over 65535", () => {
    expect(problems((doc) => (doc.protocols["team-a/checkout"] = { "65536": "tcp", "99999": "tcp" }))).toEqual([
      'protocols["team-a/checkout"]["65536"]: not a port: must be an integer 1–65535',
      'protocols["team-a/checkout"]["99999"]: not a port: must be an integer 1–65535',
    ]);
  });

  test.each([
    ["https://example.org/node", "workload-shaped"],
    ["spiffe://{trustDomain}/agent/{node}", "workload-shaped"],
    ["spiffe://{trustDomain}/ns/../sa/x", "'..'"],
    ["spiffe://{trustDomain}/ns/a/sa/{pod}", "unknown placeholder"],
    ["spiffe://other.domain/ns/a/sa/b", "workload-shaped"],
  ])("a node identity template %s", (template, why) => {
    expect(problems((doc) => (doc.mesh.nodeIdentity = template))).toEqual([
      expect.stringMatching(new RegExp(`^mesh\\.nodeIdentity: .*${why.replace(".", "\\.")}`)),
    ]);
  });

  test("a node identity that is a workload's identity", () => {
    expect(problems((doc) => (doc.mesh.nodeIdentity = "spiffe://{trustDomain}/ns/team-a/sa/frontend"))).toEqual([
      "mesh.nodeIdentity: node east/node-1's identity spiffe://aether.internal/ns/team-a/sa/frontend is service team-a/frontend's workload identity",
    ]);
  });

  test("every accepted node identity passes the pods' inbound SAN pin (workload shape in the node's trust domain)", () => {
    const doc = meshDocument();
    doc.mesh.nodeIdentity = "spiffe://{trustDomain}/ns/aether-system/sa/node-{cluster}-{node}";
    const snapshot = parseSnapshot(doc);
    const index = indexSnapshot(snapshot);
    const plan = planNode(index, localNodeFrom(snapshot, "east", "node-1"), parseOptions({}));
    expect(plan.nodeIdentity).toBe("spiffe://aether.internal/ns/aether-system/sa/node-east-node-1");
    expect(plan.workloadSanPrefixes.some((prefix) => plan.nodeIdentity.startsWith(prefix))).toBe(true);
  });
});

describe("11. one error lists every problem, cross-field checks included", () => {
  test("a broken meshDomain does not hide duplicate nodes, duplicate VIPs or a record problem", () => {
    const issues = problems((doc) => {
      doc.mesh.meshDomain = "Not A Domain";
      doc.nodes.push({ ...doc.nodes[0] });
      doc.vips = { "team-a/checkout": "10.96.0.10", "team-b/payments": "10.96.0.10" };
      doc.services["team-a/frontend"][0].port = 0;
      doc.services["team-a/frontend"][0].ports = [];
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^mesh\.meshDomain: /),
        "nodes[6]: duplicate node east/node-1; first at nodes[0]",
        'vips["team-b/payments"]: VIP 10.96.0.10 is already team-a/checkout\'s',
        expect.stringMatching(/^services\["team-a\/frontend"\]\[0\]\.port: /),
      ]),
    );
  });

  test("a broken node list does not hide a federation problem", () => {
    const issues = problems((doc) => {
      doc.nodes[0].ip = "nope";
      doc.mesh.trust = { mode: "federated", trustDomains: [{ name: "east.td", clusters: ["east"], bundle: { inlineString: "PEM" } }] };
    });
    expect(issues).toEqual(expect.arrayContaining(["nodes[0].ip: not an IPv4/IPv6 address", expect.stringMatching(/cluster west belongs to no trust domain/)]));
  });
});

describe("10. mesh.podNetwork: the off mode on an isolated pod network", () => {
  const off = { eastWestWaypoint: "off" } as const;

  test("the bundled Flannel example is isolated: every cross-cluster direct endpoint is a compile diagnostic", () => {
    const snapshot = parseSnapshot(meshDocument());
    expect(snapshot.mesh.podNetwork).toBe("isolated");
    const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), off);
    const unroutable = result.diagnostics.filter((d) => d.code === "POD_IP_NOT_ROUTABLE");
    expect(new Set(unroutable.map((d) => `${d.endpoint!.cluster}/${d.endpoint!.ip}`))).toEqual(new Set(["west/10.244.1.8", "west/10.244.3.6"]));
    expect(unroutable.every((d) => d.severity === "warning")).toBe(true);
  });

  test("the check fails on every path whose cluster holds one, at any priority; routable pod networks pass", () => {
    const report = verifyMesh(parseSnapshot(meshDocument()), off);
    expect(report.ok).toBe(false);
    const failed = report.paths.filter((p) => p.status === "failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(new Set(failed.flatMap((p) => p.failures.map((f) => f.code)))).toEqual(new Set(["POD_IP_NOT_ROUTABLE"]));
    const doc = meshDocument();
    doc.mesh.podNetwork = "routable";
    expect(verifyMesh(parseSnapshot(doc), off).ok).toBe(true);
  });

  test("an IP naming pods of different services in different clusters is reported in every mode", () => {
    const doc = meshDocument();
    doc.services["team-b/payments"][0].ip = "10.244.1.8"; // east's payments pod at west's checkout-9a1e-y2 address
    const snapshot = parseSnapshot(doc);
    for (const mode of ["off", "cross-cluster", "always"] as const) {
      expect(verifyMesh(snapshot, { eastWestWaypoint: mode }).sharedAddresses).toEqual([
        { ip: "10.244.1.8", pods: ["east/team-b/payments-6f8d-p1", "west/team-a/checkout-9a1e-y2"] },
      ]);
    }
    expect(verifyMesh(parseSnapshot(meshDocument()), { eastWestWaypoint: "off" }).sharedAddresses).toEqual([]);
  });

  test("an IP naming pods of different services in different clusters is a compile diagnostic on the nodes whose EDS carries it", () => {
    const doc = meshDocument();
    doc.mesh.podNetwork = "routable";
    doc.services["team-b/payments"][0].ip = "10.244.1.8"; // east's payments pod at west's checkout-9a1e-y2 address
    const snapshot = parseSnapshot(doc);
    const shared = (cluster: string, node: string, mode: "off" | "cross-cluster") =>
      compileNode(snapshot, localNodeFrom(snapshot, cluster, node), { eastWestWaypoint: mode })
        .diagnostics.filter((d) => d.code === "SHARED_POD_ADDRESS")
        .map((d) => `${d.resource} ${d.endpoint?.cluster}/${d.endpoint?.ip}`);
    expect(shared("east", "node-1", "off")).toEqual([
      "checkout.team-a.mesh.aether:8080 west/10.244.1.8",
      "checkout.team-a.mesh.aether:9090 west/10.244.1.8",
      "payments.team-b.mesh.aether:8443 east/10.244.1.8",
    ]);
    // Across clusters only waypoints are dialed: each cluster carries only its own pod at that address.
    expect(shared("west", "node-1", "cross-cluster")).toEqual([
      "checkout.team-a.mesh.aether:8080 west/10.244.1.8",
      "checkout.team-a.mesh.aether:9090 west/10.244.1.8",
    ]);
    expect(shared("east", "node-2", "cross-cluster")).toEqual(["payments.team-b.mesh.aether:8443 east/10.244.1.8"]);
  });

  test("on a routable pod network, the off mode's failover to a remote pod lands on it", () => {
    const doc = meshDocument();
    doc.mesh.podNetwork = "routable";
    for (const record of doc.services["team-a/checkout"].filter((r: { clusterName: string }) => r.clusterName === "east")) record.health = "UNHEALTHY";
    const report = verifyMesh(parseSnapshot(doc), off);
    const path = report.paths.find((p) => p.source.pod?.name === "frontend-7d9f-abcde" && p.target.port === 8080)!;
    expect(path.status).toBe("ok");
    expect(path.landings.map((l) => `${l.pod.cluster}/${l.pod.name}`)).toEqual(["west/checkout-9a1e-y2"]);
  });

  test("waypoint modes never dial a remote pod IP, so an isolated network passes", () => {
    expect(verifyMesh(parseSnapshot(meshDocument()), { eastWestWaypoint: "cross-cluster" }).ok).toBe(true);
  });
});

describe("8. a pod without a network namespace is never advertised", () => {
  test("it is left out of every node's EDS and of its waypoint's ingress, with NO_NETNS", () => {
    const doc = meshDocument();
    doc.services["team-a/checkout"][3].containerMetadata.networkNamespace = ""; // west checkout-9a1e-y2, 10.244.1.8
    const snapshot = parseSnapshot(doc);
    const addresses = (result: ReturnType<typeof compileNode>) =>
      result.endpoints.flatMap((a) => (a.endpoints ?? []).flatMap((g) => (g.lb_endpoints ?? []).map((e) => e.endpoint?.address?.socket_address?.address)));
    const westNode1 = compileNode(snapshot, localNodeFrom(snapshot, "west", "node-1"), { eastWestWaypoint: "off" });
    expect(addresses(westNode1)).not.toContain("10.244.1.8");
    expect(westNode1.diagnostics.filter((d) => d.code === "NO_NETNS").map((d) => d.endpoint?.ip)).toContain("10.244.1.8");
    const waypoint = compileNode(snapshot, localNodeFrom(snapshot, "west", "node-2"), { eastWestWaypoint: "cross-cluster" });
    expect(addresses(waypoint)).not.toContain("10.244.1.8");
    expect(verifyMesh(snapshot, { eastWestWaypoint: "always" }).ok).toBe(true);
  });

  test("two records claiming one netns on a node are left out everywhere, with NETNS_SHARED naming both", () => {
    const doc = meshDocument();
    const [y1, y2] = doc.services["team-a/checkout"].slice(2, 4); // west/node-2: 10.244.1.7 and 10.244.1.8
    y2.containerMetadata.networkNamespace = `${y1.containerMetadata.networkNamespace}/`;
    const snapshot = parseSnapshot(doc);
    const emitted = (result: ReturnType<typeof compileNode>) =>
      result.diagnostics
        .filter((d) => d.code === "ENDPOINT_DIRECT" || d.code === "ENDPOINT_VIA_WAYPOINT")
        .map((d) => `${d.endpoint?.cluster}/${d.endpoint?.ip}`);
    const westNode1 = compileNode(snapshot, localNodeFrom(snapshot, "west", "node-1"), { eastWestWaypoint: "off" });
    expect(emitted(westNode1)).toContain("west/10.244.0.8");
    expect(emitted(westNode1)).not.toContain("west/10.244.1.7");
    expect(emitted(westNode1)).not.toContain("west/10.244.1.8");
    const shared = westNode1.diagnostics.filter((d) => d.code === "NETNS_SHARED" && d.resource === "checkout.team-a.mesh.aether:8080");
    expect(shared.map((d) => d.endpoint?.ip)).toEqual(["10.244.1.7", "10.244.1.8"]);
    expect(shared[0]!.message).toContain("team-a/checkout pod checkout-9a1e-y2 (west, 10.244.1.8)");
    // East sees west/node-2 through its waypoint, which would front only these two pods.
    const east = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
    expect(emitted(east)).not.toContain("west/10.244.1.7");
    expect(east.diagnostics.filter((d) => d.code === "NETNS_SHARED").length).toBeGreaterThan(0);
    const waypoint = compileNode(snapshot, localNodeFrom(snapshot, "west", "node-2"), { eastWestWaypoint: "cross-cluster" });
    const ingress = waypoint.endpoints.filter((a) => a.cluster_name?.startsWith("ew_ingress") && a.cluster_name.includes("checkout"));
    expect(ingress.flatMap((a) => a.endpoints ?? [])).toEqual([]);
  });
});

describe("14. validated values cannot change after validation", () => {
  test("an options object changed after a first call is validated again, not served from a cache", () => {
    const input: Record<string, unknown> = { eastWestWaypoint: "off" };
    expect(parseOptions(input).eastWestWaypoint).toBe("off");
    input.eastWestWaypoint = "always";
    expect(parseOptions(input).eastWestWaypoint).toBe("always");
    input.inboundPort = 0;
    expect(thrown(() => parseOptions(input))).toEqual(["inboundPort: not a port: must be an integer 1–65535"]);
  });

  test("a node input changed after a first compile is validated again; a parsed node is frozen", () => {
    const snapshot = parseSnapshot(meshDocument());
    const input = JSON.parse(JSON.stringify(localNodeFrom(snapshot, "east", "node-1")));
    compileNode(snapshot, input);
    input.nodeIp = "not-an-ip";
    expect(thrown(() => compileNode(snapshot, input))).toEqual(["nodeIp: not an IPv4/IPv6 address"]);
    const parsed = localNodeFrom(snapshot, "east", "node-1");
    expect(() => {
      (parsed as { nodeIp: string }).nodeIp = "not-an-ip";
    }).toThrow(TypeError);
    expect(() => (parsed.pods[0]!.ports as number[]).push(1)).toThrow(TypeError);
    expect(Object.isFrozen(parseOptions({}))).toBe(true);
  });
});

describe("15. public entry points validate what they are given", () => {
  test("a hand-built snapshot is validated like a mesh file; null and non-snapshots are input errors", async () => {
    const api = await import("../../src/entry/index.js");
    const snapshot = api.parseSnapshot(meshDocument());
    const handBuilt = { ...snapshot, nodes: [{ ...snapshot.nodes[0]!, ip: "not-an-ip" }, ...snapshot.nodes.slice(1)] };
    expect(thrown(() => api.compileNode(handBuilt, api.localNodeFrom(snapshot, "east", "node-1")))).toEqual(["nodes[0].ip: not an IPv4/IPv6 address"]);
    expect(thrown(() => api.indexSnapshot(handBuilt))).toEqual(["nodes[0].ip: not an IPv4/IPv6 address"]);
    expect(thrown(() => api.localNodeFrom(null as never, "east", "node-1"))).toEqual([expect.stringMatching(/^: not a Snapshot: null/)]);
    expect(thrown(() => api.compileNode({ services: [] } as never, {} as never))).toEqual([expect.stringMatching(/^: not a Snapshot: .*not a Map/)]);
    // A well-formed hand-built snapshot compiles like the validated one.
    const copy = { ...snapshot };
    const node = api.localNodeFrom(snapshot, "east", "node-1");
    expect(api.compileNode(copy, node).clusters).toEqual(api.compileNode(snapshot, node).clusters);
  });

  test("withServiceRecords refuses null, a non-array and a hand-built snapshot with an input error", () => {
    const snapshot = parseSnapshot(meshDocument());
    expect(thrown(() => withServiceRecords(snapshot, "team-a/frontend", null as never))).toEqual([
      'services["team-a/frontend"]: expected a list of records, found null',
    ]);
    expect(thrown(() => withServiceRecords(snapshot, "team-a/frontend", "x" as never))).toEqual([
      'services["team-a/frontend"]: expected a list of records, found the string "x"',
    ]);
    expect(thrown(() => withServiceRecords({ ...snapshot }, "team-a/frontend", []))).toEqual([
      ": not a snapshot from parseSnapshot, parseMeshFile, withServiceRecords or withNodes",
    ]);
  });

  test("a validated snapshot is read-only: its maps refuse changes", () => {
    const snapshot = parseSnapshot(meshDocument());
    expect(() => (snapshot.services as Map<string, unknown>).set("team-a/x", [])).toThrow(TypeError);
    expect(() => (snapshot.nodes as unknown[]).push({})).toThrow(TypeError);
    expect(() => {
      (snapshot.services.get("team-a/frontend")![0] as { ip: string }).ip = "x";
    }).toThrow(TypeError);
  });

  test("an index not built by indexSnapshot is refused", async () => {
    const api = await import("../../src/entry/index.js");
    const snapshot = api.parseSnapshot(meshDocument());
    expect(thrown(() => api.indexSnapshot(snapshot, { serviceKeys: [] } as never))).toEqual([": not a SnapshotIndex: build one with indexSnapshot"]);
  });
});
