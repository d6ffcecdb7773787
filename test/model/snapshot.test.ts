import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { InputError, isInputError } from "../../src/errors.js";
import { parseMeshFile } from "../../src/model/mesh-file.js";
import { encodeServiceEndpoint } from "../../src/model/registry.js";
import { changesSince, parseSnapshot, type Snapshot, withNodes, withServiceRecords, withValidServiceRecords } from "../../src/model/snapshot.js";
import { exampleSnapshot, ledgerRecord, meshDocument } from "../support/fixtures.js";

/** The issues parseSnapshot reports for a document, as "path: message" lines. */
function problems(document: unknown): string[] {
  try {
    parseSnapshot(document);
  } catch (error) {
    if (!isInputError(error)) throw error;
    expect(error.kind).toBe("snapshot");
    return error.issues.map((issue) => `${issue.path}: ${issue.message}`);
  }
  throw new Error("expected the snapshot to be rejected");
}

/** The example mesh with one change applied. */
function mutated(change: (doc: any) => void): unknown {
  const doc = meshDocument();
  change(doc);
  return doc;
}

describe("the bundled example", () => {
  test("parses, with defaults applied", () => {
    const snapshot = exampleSnapshot();
    expect(snapshot.mesh).toEqual({
      meshDomain: "mesh.aether",
      trust: { mode: "shared", trustDomain: "aether.internal" },
      nodeIdentity: "spiffe://{trustDomain}/ns/aether-system/sa/aether-node",
      podNetwork: "isolated",
    });
    expect(snapshot.nodes).toHaveLength(6);
    expect([...snapshot.services.keys()]).toEqual(["team-a/frontend", "team-a/checkout", "team-b/payments"]);
    const checkout = snapshot.services.get("team-a/checkout")!;
    expect(checkout[0]).toMatchObject({ ports: [8080, 9090], weight: 1024, health: "HEALTHY" });
    expect(checkout[3]!.weight).toBe(512);
    expect(checkout[0]!.kubernetesMetadata.namespace).toBe("team-a"); // filled from the service key
    expect(snapshot.protocols.get("team-a/checkout")?.get(9090)).toBe("tcp");
    expect(snapshot.exports).toBeUndefined();
    expect(snapshot.dependencies?.get("team-a/frontend")).toEqual(["team-a/checkout", "team-b/payments"]);
  });

  test("holds the Flannel scenario: a shared pod CIDR, a draining, an unhealthy and an unaddressable pod", () => {
    const endpoints = [...exampleSnapshot().services.values()].flat();
    const ips = (cluster: string) => new Set(endpoints.filter((e) => e.clusterName === cluster).map((e) => e.ip));
    const shared = [...ips("east")].filter((ip) => ips("west").has(ip));
    expect(shared.length).toBeGreaterThanOrEqual(3);
    expect(endpoints.map((e) => e.health)).toEqual(expect.arrayContaining(["DRAINING", "UNHEALTHY"]));
    expect(endpoints.filter((e) => e.kubernetesMetadata.nodeIp === "")).toHaveLength(1);
  });
});

describe("bad snapshots give path-qualified errors", () => {
  test.each<[string, (doc: any) => void, string]>([
    [
      "a node IP that is not an address",
      (doc) => (doc.services["team-a/checkout"][3].kubernetesMetadata.nodeIp = "10.20.0"),
      'services["team-a/checkout"][3].kubernetesMetadata.nodeIp: not an IPv4/IPv6 address',
    ],
    [
      "a pod IP that is not an address",
      (doc) => (doc.services["team-b/payments"][0].ip = "pod-1"),
      'services["team-b/payments"][0].ip: not an IPv4/IPv6 address',
    ],
    [
      "a port of 70000",
      (doc) => (doc.services["team-a/checkout"][1].ports = [8080, 70000]),
      'services["team-a/checkout"][1].ports[1]: not a port: must be an integer 1–65535',
    ],
    [
      "a port of 0 with no ports list",
      (doc) => (doc.services["team-a/frontend"][0].port = 0),
      'services["team-a/frontend"][0].port: an endpoint needs a port or a non-empty ports list',
    ],
    ["an empty cluster name", (doc) => (doc.services["team-a/frontend"][1].clusterName = ""), 'services["team-a/frontend"][1].clusterName: must not be empty'],
    [
      "an uppercase namespace in the service key",
      (doc) => (doc.services["Team-C/web"] = []),
      'services["Team-C/web"]: not a service key "<namespace>/<service>" of two DNS-1123 labels',
    ],
    [
      "a duplicate (cluster, ip) in one service",
      (doc) => (doc.services["team-a/checkout"][2].ip = "10.244.1.8"),
      'services["team-a/checkout"][3].ip: duplicate endpoint (cluster west, ip 10.244.1.8); first at index 2',
    ],
    ["an unknown key", (doc) => (doc.services["team-a/frontend"][0].nodeIP = "10.10.0.11"), 'services["team-a/frontend"][0].nodeIP: unknown key'],
    ["an unknown top-level key", (doc) => (doc.endpoints = {}), "endpoints: unknown key"],
    [
      "an unknown health status",
      (doc) => (doc.services["team-b/payments"][2].health = "SICK"),
      'services["team-b/payments"][2].health: not one of UNSPECIFIED, HEALTHY, UNHEALTHY, DRAINING',
    ],
    [
      "a namespace that contradicts the service key",
      (doc) => (doc.services["team-a/frontend"][0].kubernetesMetadata.namespace = "team-b"),
      'services["team-a/frontend"][0].kubernetesMetadata.namespace: namespace "team-b" does not match service key "team-a/frontend"',
    ],
    [
      "a pod name that is not a DNS name",
      (doc) => (doc.services["team-a/frontend"][0].kubernetesMetadata.podName = "Front_End"),
      'services["team-a/frontend"][0].kubernetesMetadata.podName: not a DNS-1123 subdomain (lowercase dot-separated labels, at most 253 characters)',
    ],
    ["a duplicate node", (doc) => doc.nodes.push({ ...doc.nodes[0] }), "nodes[6]: duplicate node east/node-1"],
    [
      "a mesh domain with uppercase",
      (doc) => (doc.mesh.meshDomain = "Mesh.Aether"),
      "mesh.meshDomain: not a DNS-1123 subdomain (lowercase dot-separated labels, at most 253 characters)",
    ],
    [
      "a relative netns path",
      (doc) => (doc.services["team-a/frontend"][0].containerMetadata.networkNamespace = "netns/x"),
      'services["team-a/frontend"][0].containerMetadata.networkNamespace: not an absolute path',
    ],
    [
      "an unknown port protocol",
      (doc) => (doc.protocols["team-a/checkout"]["9090"] = "udp"),
      'protocols["team-a/checkout"]["9090"]: port protocol must be "http2", "http" or "tcp"',
    ],
    ["a weight over uint32", (doc) => (doc.services["team-a/frontend"][0].weight = 2 ** 32), 'services["team-a/frontend"][0].weight: must fit in uint32'],
    [
      "a prototype-pollution key",
      (doc) => (doc.services["team-a/frontend"][0].metadata = JSON.parse('{"__proto__": {"x": "1"}}')),
      'services["team-a/frontend"][0].metadata.__proto__: forbidden key',
    ],
    [
      "a service whose structured SNI would be over 255 bytes",
      (doc) => {
        doc.mesh.meshDomain = ["a", "b", "c"].map((c) => c.repeat(60)).join(".");
        doc.services[`${"n".repeat(40)}/${"s".repeat(40)}`] = [];
      },
      `services["${"n".repeat(40)}/${"s".repeat(40)}"]: SNI 65535.${"s".repeat(40)}.${"n".repeat(40)}.`,
    ],
  ])("%s", (_name, change, expected) => {
    expect(problems(mutated(change)).join("\n")).toContain(expected);
  });

  test("every problem is reported at once", () => {
    const found = problems(
      mutated((doc) => {
        doc.services["team-a/frontend"][0].ip = "x";
        doc.services["team-b/payments"][1].port = 70000;
        doc.nodes[0].ip = "y";
      }),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'services["team-a/frontend"][0].ip: not an IPv4/IPv6 address',
        'services["team-b/payments"][1].port: not a port: must be an integer 1–65535',
        "nodes[0].ip: not an IPv4/IPv6 address",
      ]),
    );
  });

  test("the error message lists every issue with its path", () => {
    const error = (() => {
      try {
        parseSnapshot(mutated((doc) => (doc.mesh.trust.mode = "sometimes")));
      } catch (e) {
        return e as InputError;
      }
    })();
    expect(error?.message).toMatch(/^invalid snapshot:\n {2}mesh\.trust\.mode: /);
  });

  test("federation needs every cluster in a trust domain", () => {
    const found = problems(
      mutated((doc) => {
        doc.mesh.trust = { mode: "federated", trustDomains: [{ name: "east.aether", clusters: ["east"] }], bundles: { filename: "/run/spire/bundles.spiffe" } };
      }),
    );
    expect(found).toEqual(["nodes[3].cluster: cluster west belongs to no trust domain"]);
  });

  test("federated bundles: a watched bundle map or inline PEM per domain; a file per domain, both, or neither is refused", () => {
    const doc = (trust: object) => mutated((d) => (d.mesh.trust = { mode: "federated", ...trust }));
    const federated = (trust: object) => problems(doc(trust));
    const domains = (bundle?: object) => [
      { name: "east.aether", clusters: ["east"], ...(bundle ? { bundle } : {}) },
      { name: "west.aether", clusters: ["west"], ...(bundle ? { bundle } : {}) },
    ];
    expect(() => parseSnapshot(doc({ trustDomains: domains({ inlineString: "-----BEGIN CERTIFICATE-----" }) }))).not.toThrow();
    expect(() => parseSnapshot(doc({ trustDomains: domains(), bundles: { inlineString: "{}" } }))).not.toThrow();
    expect(federated({ trustDomains: domains({ filename: "/run/spire/east.pem" }) })[0]).toBe(
      "mesh.trust.trustDomains[0].bundle: a bundle file per trust domain is read once and goes stale at CA rotation: give mesh.trust.bundles (a SPIFFE bundle map file, which Envoy watches), or this domain's bundle inline ({ inlineString: <PEM> })",
    );
    expect(federated({ trustDomains: domains({ inlineString: "x" }), bundles: { filename: "/run/b.spiffe" } })).toEqual([
      "mesh.trust.trustDomains[0].bundle: give mesh.trust.bundles or a bundle per trust domain, not both",
      "mesh.trust.trustDomains[1].bundle: give mesh.trust.bundles or a bundle per trust domain, not both",
    ]);
    expect(federated({ trustDomains: domains() })).toEqual([
      "mesh.trust.trustDomains[0].bundle: no CA bundle: give mesh.trust.bundles (a SPIFFE bundle map) or this domain's inlineString",
      "mesh.trust.trustDomains[1].bundle: no CA bundle: give mesh.trust.bundles (a SPIFFE bundle map) or this domain's inlineString",
    ]);
  });

  test("VIPs: a valid address per service, no two services sharing one", () => {
    const vips = parseSnapshot(mutated((doc) => (doc.vips = { "team-b/payments": "FD00:0::10", "team-a/checkout": "10.96.0.10" }))).vips;
    expect([...vips!]).toEqual([
      ["team-a/checkout", "10.96.0.10"],
      ["team-b/payments", "fd00::10"],
    ]);
    expect(problems(mutated((doc) => (doc.vips = { "team-a/checkout": "10.96.0.10", "team-b/payments": "10.96.0.10" })))).toEqual([
      'vips["team-b/payments"]: VIP 10.96.0.10 is already team-a/checkout\'s',
    ]);
    expect(problems(mutated((doc) => (doc.vips = { "team-a/checkout": "not-an-ip" })))).toEqual(['vips["team-a/checkout"]: not an IPv4/IPv6 address']);
  });
});

describe("registry records in binary form", () => {
  const example = exampleSnapshot();
  const original = example.services.get("team-a/checkout")![3]!;

  test("a base64 ServiceEndpoint decodes to the same endpoint as its JSON form", () => {
    const binary = Buffer.from(encodeServiceEndpoint(original)).toString("base64");
    const snapshot = parseSnapshot(mutated((doc) => (doc.services["team-a/checkout"][3] = binary)));
    expect(snapshot.services.get("team-a/checkout")![3]).toEqual(original);
  });

  test("raw bytes are accepted from code", () => {
    const snapshot = parseSnapshot(mutated((doc) => (doc.services["team-a/checkout"][3] = encodeServiceEndpoint(original))));
    expect(snapshot.services.get("team-a/checkout")![3]).toEqual(original);
  });

  test("node_ip is field 5 and health field 9 on the wire", () => {
    const bytes = encodeServiceEndpoint(original);
    // kubernetes_metadata (field 8) holds node_ip as its field 5: tag (5 << 3 | 2) = 0x2a.
    const nodeIp = Buffer.from("10.20.0.12");
    expect(Buffer.from(bytes).includes(Buffer.concat([Buffer.from([0x2a, nodeIp.length]), nodeIp]))).toBe(true);
    // health HEALTHY (1) as field 9 varint: tag 0x48, value 0x01.
    expect(Buffer.from(bytes).includes(Buffer.from([0x48, 0x01]))).toBe(true);
  });

  test("a truncated record is an error at its path", () => {
    const bytes = encodeServiceEndpoint(original);
    const truncated = Buffer.from(bytes.subarray(0, bytes.length - 3)).toString("base64");
    expect(problems(mutated((doc) => (doc.services["team-a/checkout"][3] = truncated))).join("\n")).toMatch(
      /^services\["team-a\/checkout"\]\[3\]: not a binary ServiceEndpoint record/,
    );
  });

  test("a string that is not base64 is an error", () => {
    expect(problems(mutated((doc) => (doc.services["team-a/checkout"][3] = "not base64!")))).toEqual([
      'services["team-a/checkout"][3]: a string record must be a base64 binary ServiceEndpoint',
    ]);
  });
});

describe("mesh file text", () => {
  test("YAML duplicate keys are refused", () => {
    expect(() => parseMeshFile("mesh: {}\nmesh: {}\n", "yaml")).toThrow(/not valid YAML: .*[Mm]ap keys must be unique/);
  });
  test("broken JSON is an input error, not a crash", () => {
    expect(() => parseMeshFile('{"mesh": ', "json")).toThrow(InputError);
  });
});

describe("snapshots derived by withServiceRecords", () => {
  /** `snapshot` with one more health flip of `key`'s first record. */
  function flipped(snapshot: Snapshot, key: string): Snapshot {
    const records = snapshot.services.get(key as never)!;
    return withServiceRecords(snapshot, key, [{ ...records[0]!, health: records[0]!.health === "HEALTHY" ? "UNHEALTHY" : "HEALTHY" }, ...records.slice(1)]);
  }

  test("tell the index which services changed since any snapshot they came from, one update or several", () => {
    const first = parseSnapshot(meshDocument());
    const second = flipped(first, "team-a/frontend");
    const third = flipped(second, "team-b/payments");
    expect(changesSince(second, first)).toEqual(new Set(["team-a/frontend"]));
    expect(changesSince(third, second)).toEqual(new Set(["team-b/payments"]));
    expect(changesSince(third, first)).toEqual(new Set(["team-a/frontend", "team-b/payments"]));
    expect(changesSince(first, third)).toBeUndefined();
    expect(changesSince(third, parseSnapshot(meshDocument()))).toBeUndefined();
  });

  test("refuse a pod another update put on the node first, in a service that update added", () => {
    const first = parseSnapshot(meshDocument());
    const frontend = first.services.get("team-a/frontend")!;
    // checkout's records replaced: the index of team-a's services is made here, and kept by the next updates.
    const second = withServiceRecords(first, "team-a/checkout", [...first.services.get("team-a/checkout")!]);
    const added = withServiceRecords(second, "team-a/added", [
      { ...frontend[0]!, ip: "10.244.9.9", kubernetesMetadata: { ...frontend[0]!.kubernetesMetadata, podName: "added-pod" } },
    ]);
    const clash = { ...frontend[0]!, kubernetesMetadata: { ...frontend[0]!.kubernetesMetadata, podName: "added-pod" } };
    expect(() => withServiceRecords(added, "team-a/frontend", [clash, ...frontend.slice(1)])).toThrow(
      /pod team-a\/added-pod on node east\/node-1 is also services\["team-a\/added"\]\[0\]/,
    );
  });

  describe("from a map of service key → records", () => {
    const ledger = ledgerRecord();

    test("end where the same updates one at a time end, and tell the index every service they changed", () => {
      const base = parseSnapshot(meshDocument());
      const frontend = base.services.get("team-a/frontend")!;
      const updates = new Map<string, readonly unknown[]>([
        ["team-b/payments", base.services.get("team-b/payments")!.slice(1)],
        ["team-c/ledger", [ledger]],
        ["team-a/frontend", [{ ...frontend[0]!, health: "UNHEALTHY" }, frontend[1]!]],
      ]);
      const batch = withServiceRecords(base, updates);
      let oneByOne = base;
      for (const [key, records] of updates) oneByOne = withServiceRecords(oneByOne, key, records);
      // A new service goes last, an existing one keeps its place, as one update at a time leaves them.
      expect([...batch.services.keys()]).toEqual(["team-a/frontend", "team-a/checkout", "team-b/payments", "team-c/ledger"]);
      expect([...batch.services]).toEqual([...oneByOne.services]);
      // A record equal to the one it replaces is that one, so what was derived from it is kept.
      expect(batch.services.get("team-a/frontend")![1]).toBe(frontend[1]);
      expect(changesSince(batch, base)).toEqual(new Set(updates.keys()));
      expect(changesSince(flipped(batch, "team-a/checkout"), base)).toEqual(new Set([...updates.keys(), "team-a/checkout"]));
      expect(Object.isFrozen(batch.services.get("team-c/ledger")![0]!.kubernetesMetadata)).toBe(true);
      expect(() => (batch.services as Map<string, unknown>).delete("team-c/ledger")).toThrow(/read-only/);
    });

    test("are checked together: a pod may move from one service to another in the same update", () => {
      const base = parseSnapshot(meshDocument());
      const [moving, staying] = base.services.get("team-a/frontend")!;
      const checkout = [...base.services.get("team-a/checkout")!, moving!];
      // One at a time, the pod is in both services between the two updates, whichever goes first.
      expect(() => withServiceRecords(base, "team-a/checkout", checkout)).toThrow(/pod team-a\/frontend-7d9f-abcde on node east\/node-1 is also/);
      const moved = withServiceRecords(
        base,
        new Map([
          ["team-a/checkout", checkout],
          ["team-a/frontend", [staying!]],
        ]),
      );
      expect(moved.services.get("team-a/checkout")!.map((record) => record.kubernetesMetadata.podName)).toContain("frontend-7d9f-abcde");
      expect(moved.services.get("team-a/frontend")).toEqual([staying]);
    });

    test("are all or nothing, and a refusal names every service's problems by path", () => {
      const base = parseSnapshot(meshDocument());
      const frontend = base.services.get("team-a/frontend")!;
      const refusal = (updates: Map<string, unknown>) => {
        try {
          withServiceRecords(base, updates as Map<string, readonly unknown[]>);
        } catch (error) {
          return error as InputError;
        }
        throw new Error("not refused");
      };
      const both = refusal(
        new Map<string, unknown>([
          ["team-a/frontend", [{ ...frontend[0]!, ip: "not an ip" }]],
          ["team-c/ledger", "not a list"],
          ["team-b/payments", []],
        ]),
      );
      expect(both).toBeInstanceOf(InputError);
      expect(both.issues.map((issue) => issue.path)).toEqual(['services["team-a/frontend"][0].ip', 'services["team-c/ledger"]']);
      const clash = refusal(
        new Map([
          ["team-c/ledger", [ledger]],
          ["team-a/frontend", [{ ...frontend[0]!, kubernetesMetadata: { ...frontend[0]!.kubernetesMetadata, namespace: "team-b" } }]],
        ]),
      );
      expect(clash.issues.map((issue) => issue.path)).toEqual(['services["team-a/frontend"][0].kubernetesMetadata.namespace']);
    });

    test("any ReadonlyMap is read as one; a plain object or a list of pairs is refused with what is expected", () => {
      const base = parseSnapshot(meshDocument());
      const readOnly: ReadonlyMap<string, readonly unknown[]> = new Map([["team-a/frontend", []]]);
      const mapLike = { entries: () => readOnly.entries() } as unknown as ReadonlyMap<string, readonly unknown[]>;
      expect(withServiceRecords(base, mapLike).services.get("team-a/frontend")).toEqual([]);
      expect(() => withServiceRecords(base, { "team-a/frontend": [] } as never)).toThrow(
        /services: expected a service key and its records, or a Map of service key → records; found an object/,
      );
      expect(() => withServiceRecords(base, [["team-a/frontend", []]] as never)).toThrow(/services: expected .* found a list of 1/);
    });

    test("an empty map is no update: the snapshot itself", () => {
      const base = parseSnapshot(meshDocument());
      expect(withServiceRecords(base, new Map())).toBe(base);
    });

    test("a key mapped to undefined removes the service, as a mesh file without it; one the snapshot does not have is left alone", () => {
      const base = parseSnapshot(meshDocument());
      const removed = withServiceRecords(base, new Map([["team-b/payments", undefined]]));
      const doc = meshDocument();
      delete doc.services["team-b/payments"];
      expect([...removed.services]).toEqual([...parseSnapshot(doc).services]);
      expect(base.services.has("team-b/payments" as never)).toBe(true);
      expect(changesSince(removed, base)).toEqual(new Set(["team-b/payments"]));
      expect(() => (removed.services as Map<string, unknown>).set("team-b/payments", [])).toThrow(/read-only/);
      // Removing what is not there changes nothing.
      expect(withServiceRecords(base, new Map([["team-c/ledger", undefined]]))).toBe(base);
      const both = withServiceRecords(
        base,
        new Map([
          ["team-c/ledger", undefined],
          ["team-a/checkout", undefined],
        ]),
      );
      expect(changesSince(both, base)).toEqual(new Set(["team-a/checkout"]));
    });

    test("a service removed and its pods in another, in one update: they are checked together", () => {
      const base = parseSnapshot(meshDocument());
      const payments = base.services.get("team-b/payments")!;
      expect(() => withServiceRecords(base, "team-b/billing", payments)).toThrow(
        /pod team-b\/payments-[^ ]+ on node [^ ]+ is also services\["team-b\/payments"\]/,
      );
      // An update that keeps the keys first: the services' index by namespace is made here.
      const updated = withServiceRecords(base, "team-b/payments", payments);
      const renamed = withServiceRecords(
        updated,
        new Map([
          ["team-b/payments", undefined],
          ["team-b/billing", payments],
        ]),
      );
      expect([...renamed.services.keys()]).toEqual(["team-a/frontend", "team-a/checkout", "team-b/billing"]);
      expect(renamed.services.get("team-b/billing")).toEqual(payments);
      // The namespace's services are billing's now: a later update's pods are checked against it.
      expect(() => withServiceRecords(renamed, "team-b/other", payments)).toThrow(/is also services\["team-b\/billing"\]/);
    });

    test("removing takes the map form: undefined records for one key are refused, and so is a removal of no service key", () => {
      const base = parseSnapshot(meshDocument());
      expect(() => withServiceRecords(base, "team-b/payments", undefined as never)).toThrow(
        /services\["team-b\/payments"\]: expected a list of records, found undefined \(to remove the service, give a Map of its key → undefined\)/,
      );
      expect(() => withServiceRecords(base, new Map([["payments", undefined]]))).toThrow(/services\.payments: not a service key/);
    });
  });

  describe("service by service (withValidServiceRecords)", () => {
    const ledger = ledgerRecord();
    /** The refused services and their issues' paths. */
    const refusedPaths = (refused: ReadonlyMap<string, InputError>) =>
      Object.fromEntries([...refused].map(([key, error]) => [key, error.issues.map((issue) => issue.path)]));

    test("a service whose records do not parse keeps its last good ones; the others are applied in one update", () => {
      const base = parseSnapshot(meshDocument());
      const frontend = base.services.get("team-a/frontend")!;
      const payments = base.services.get("team-b/payments")!.slice(1);
      const updates = new Map<string, readonly unknown[]>([
        ["team-a/frontend", [{ ...frontend[0]!, ip: "not an ip" }]],
        ["team-b/payments", payments],
        ["team-c/ledger", [ledger]],
      ]);
      const { snapshot, refused } = withValidServiceRecords(base, updates);
      expect(refusedPaths(refused)).toEqual({ "team-a/frontend": ['services["team-a/frontend"][0].ip'] });
      expect(snapshot.services.get("team-a/frontend")).toBe(frontend);
      const accepted = withServiceRecords(base, new Map([...updates].filter(([key]) => key !== "team-a/frontend")));
      expect([...snapshot.services]).toEqual([...accepted.services]);
      expect(changesSince(snapshot, base)).toEqual(new Set(["team-b/payments", "team-c/ledger"]));
      // Validated as withServiceRecords validates: a snapshot that later updates derive from.
      expect(withServiceRecords(snapshot, "team-b/payments", []).services.get("team-b/payments")).toEqual([]);
    });

    test("two services claiming one pod are both refused, and so is a service claiming a pod a refused one keeps", () => {
      const base = parseSnapshot(meshDocument());
      const [moving, staying] = base.services.get("team-a/frontend")!;
      const checkout = base.services.get("team-a/checkout")!;
      const claimed = withValidServiceRecords(
        base,
        new Map<string, readonly unknown[]>([
          ["team-a/frontend", [staying!]],
          ["team-a/checkout", [...checkout, moving!]],
          ["team-a/added", [moving!]],
        ]),
      );
      expect(Object.keys(refusedPaths(claimed.refused)).sort()).toEqual(["team-a/added", "team-a/checkout"]);
      expect(claimed.refused.get("team-a/added")!.message).toMatch(
        /pod team-a\/frontend-7d9f-abcde on node east\/node-1 is also services\["team-a\/checkout"\]/,
      );
      expect(claimed.snapshot.services.get("team-a/frontend")).toEqual([staying]);
      expect(claimed.snapshot.services.get("team-a/checkout")).toBe(checkout);
      expect(claimed.snapshot.services.has("team-a/added" as never)).toBe(false);
      // The pod moves to checkout, but frontend's update is refused for another record: frontend
      // keeps the pod, so checkout's claim clashes with it and nothing changes.
      const held = withValidServiceRecords(
        base,
        new Map<string, readonly unknown[]>([
          ["team-a/frontend", [{ ...staying!, ip: "not an ip" }]],
          ["team-a/checkout", [...checkout, moving!]],
        ]),
      );
      expect(refusedPaths(held.refused)).toEqual({
        "team-a/frontend": ['services["team-a/frontend"][0].ip'],
        "team-a/checkout": [`services["team-a/checkout"][${checkout.length}].kubernetesMetadata.podName`],
      });
      expect(held.snapshot).toBe(base);
    });

    test("give the same services and refusals whatever the order of the updates", () => {
      const base = parseSnapshot(meshDocument());
      const [moving, staying] = base.services.get("team-a/frontend")!;
      const entries: [string, readonly unknown[] | undefined][] = [
        ["team-a/frontend", [staying!]],
        ["team-a/checkout", [...base.services.get("team-a/checkout")!, moving!]],
        ["team-b/payments", undefined],
        ["team-c/ledger", [{ ...ledger, ip: "10.0.0.300" }]],
        ["team-b/billing", base.services.get("team-b/payments")!],
      ];
      const forward = withValidServiceRecords(base, new Map(entries));
      const backward = withValidServiceRecords(base, new Map([...entries].reverse()));
      expect(Object.keys(refusedPaths(forward.refused))).toEqual(["team-c/ledger"]);
      expect(refusedPaths(backward.refused)).toEqual(refusedPaths(forward.refused));
      expect(new Map(backward.snapshot.services)).toEqual(new Map(forward.snapshot.services));
      expect(forward.snapshot.services.get("team-a/checkout")).toContainEqual(moving);
    });
  });

  test("do not keep the snapshots they came from alive: a registry watch derives them without end", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    let snapshot = parseSnapshot(meshDocument());
    const first = new WeakRef(snapshot);
    for (let i = 0; i < 4; i++) snapshot = flipped(snapshot, i % 2 ? "team-a/frontend" : "team-b/payments");
    // A WeakRef's target lives to the end of the job that made or read it.
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
    expect(first.deref()).toBeUndefined();
    expect(snapshot.services.size).toBeGreaterThan(0);
  });
});

describe("snapshots derived by withNodes", () => {
  /** The example's node list as a mesh file writes it, with `change` applied. */
  function nodeList(change: (nodes: Record<string, unknown>[]) => void = () => {}): Record<string, unknown>[] {
    const nodes = meshDocument().nodes as Record<string, unknown>[];
    change(nodes);
    return nodes;
  }

  test("end where a mesh file with that node list ends; unchanged statuses and every other part stay the same objects", () => {
    const base = parseSnapshot(meshDocument());
    const next = withNodes(
      base,
      nodeList((nodes) => {
        nodes[3]!.ready = false;
        nodes.push({ cluster: "west", name: "node-9", ip: "10.20.0.19" });
      }),
    );
    const doc = meshDocument();
    doc.nodes[3].ready = false;
    doc.nodes.push({ cluster: "west", name: "node-9", ip: "10.20.0.19" });
    expect(next.nodes).toEqual(parseSnapshot(doc).nodes);
    expect(next.nodes.map((node, i) => node === base.nodes[i])).toEqual([true, true, true, false, true, true, false]);
    for (const part of ["mesh", "services", "exports", "protocols", "dependencies", "vips"] as const) expect(next[part]).toBe(base[part]);
    expect(changesSince(next, base)).toEqual(new Set());
    expect(Object.isFrozen(next.nodes[6])).toBe(true);
    expect(Object.isFrozen(next.nodes)).toBe(true);
    // It derives further, by either function.
    expect(withServiceRecords(next, "team-c/ledger", [ledgerRecord()]).nodes).toBe(next.nodes);
  });

  test("the same statuses in the same order are no update: the snapshot itself", () => {
    const base = parseSnapshot(meshDocument());
    expect(withNodes(base, nodeList())).toBe(base);
  });

  test("are validated like the mesh file's node list, with paths: fields, duplicates, trust domains, node identities", () => {
    const base = parseSnapshot(meshDocument());
    const refused = (nodes: unknown[], snapshot = base) => {
      try {
        withNodes(snapshot, nodes);
      } catch (error) {
        return (error as InputError).issues.map((issue) => `${issue.path}: ${issue.message}`);
      }
      throw new Error("not refused");
    };
    expect(refused(nodeList((nodes) => (nodes[1]!.ip = "not an ip")))).toEqual([expect.stringMatching(/^nodes\[1\]\.ip: /)]);
    expect(refused(nodeList((nodes) => (nodes[2]!.extra = 1)))).toEqual(["nodes[2].extra: unknown key"]);
    expect(refused(nodeList((nodes) => nodes.push({ ...nodes[0]! })))).toEqual(["nodes[6]: duplicate node east/node-1; first at nodes[0]"]);
    expect(refused(nodeList((nodes) => (nodes[4]!.ip = nodes[3]!.ip)))).toEqual([
      "nodes[4].ip: 10.20.0.11 is also node west/node-1's (nodes[3]): one address per node",
    ]);
    const federated = meshDocument();
    federated.mesh.trust = {
      mode: "federated",
      trustDomains: [
        { name: "east.aether", clusters: ["east"] },
        { name: "west.aether", clusters: ["west"] },
      ],
      bundles: { filename: "/run/spire/bundles.spiffe" },
    };
    expect(
      refused(
        nodeList((nodes) => nodes.push({ cluster: "south", name: "node-1", ip: "10.30.0.11" })),
        parseSnapshot(federated),
      ),
    ).toEqual(["nodes[6].cluster: cluster south belongs to no trust domain"]);
    const templated = meshDocument();
    templated.mesh.nodeIdentity = "spiffe://{trustDomain}/ns/team-a/sa/{node}";
    expect(
      refused(
        nodeList((nodes) => nodes.push({ cluster: "east", name: "frontend", ip: "10.10.0.19" })),
        parseSnapshot(templated),
      ),
    ).toEqual([expect.stringMatching(/^mesh\.nodeIdentity: node east\/frontend's identity .* is service team-a\/frontend's workload identity$/)]);
    expect(refused("nodes" as never)).toEqual(['nodes: expected a list, found the string "nodes"']);
    expect(() => withNodes({ ...base }, nodeList())).toThrow(/not a snapshot from parseSnapshot, parseMeshFile, withServiceRecords or withNodes/);
  });
});
