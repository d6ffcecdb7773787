/**
 * Hostile input: whatever reaches parseSnapshot, compileNode or the CLI, the outcome is a typed
 * InputError (or a diagnostic) — never another exception, a hang, or a mutated global.
 * FUZZ_RUNS raises the number of random cases (`npm run fuzz`).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, test } from "vitest";
import { stringify as toYaml } from "yaml";
import { compileNode } from "../../src/compile/compile-node.js";
import { isInputError } from "../../src/errors.js";
import { parseMeshFile } from "../../src/model/mesh-file.js";
import { localNodeFrom } from "../../src/model/node.js";
import { encodeServiceEndpoint } from "../../src/model/registry.js";
import { parseSnapshot, SNAPSHOT_LIMITS, type Snapshot } from "../../src/model/snapshot.js";
import { verifyMesh } from "../../src/verify/mesh-check.js";
import { runCli } from "../support/cli.js";
import { exampleSnapshot, meshDocument } from "../support/fixtures.js";
import { upstreamProblems } from "../support/upstream-schema.js";

/** Cases per property: 150 in CI; in long mode FUZZ_RUNS, capped at 500 (they compile whole meshes) so `npm run fuzz` stays under 10 minutes. */
const RUNS = Math.min(Number(process.env.FUZZ_RUNS ?? 150), 500);
const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();

/** Runs `action`; an InputError is an accepted outcome, anything else thrown fails the test. */
function outcome<T>(action: () => T): T | "input-error" {
  try {
    return action();
  } catch (error) {
    if (isInputError(error)) return "input-error";
    throw error;
  }
}

/** Compiles every listed node of a snapshot that parsed. */
function compileEveryNode(snapshot: Snapshot): void {
  for (const node of snapshot.nodes) {
    outcome(() => compileNode(snapshot, localNodeFrom(snapshot, node.cluster, node.name), { eastWestWaypoint: "cross-cluster" }));
  }
}

afterAll(() => {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_KEYS);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

describe("random input", () => {
  test("arbitrary text as a mesh file (JSON and YAML)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), fc.constantFrom("json" as const, "yaml" as const), (text, format) => {
        outcome(() => parseMeshFile(text, format));
      }),
      { seed: 11, numRuns: RUNS },
    );
  });

  test("the example mesh with any value anywhere replaced by arbitrary JSON", () => {
    const paths = leafPaths(meshDocument());
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue({ maxDepth: 3 }), (path, value) => {
        const doc = meshDocument();
        setAt(doc, path, value);
        const snapshot = outcome(() => parseSnapshot(doc));
        if (snapshot !== "input-error") compileEveryNode(snapshot);
      }),
      { seed: 12, numRuns: RUNS },
    );
  });

  test("random bytes as binary registry records", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), (bytes) => {
        const doc = meshDocument();
        doc.services["team-a/frontend"][0] = Buffer.from(bytes).toString("base64");
        const snapshot = outcome(() => parseSnapshot(doc));
        if (snapshot !== "input-error") compileEveryNode(snapshot);
      }),
      { seed: 13, numRuns: RUNS },
    );
  });
});

function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== "object" || value === null) return [path];
  const entries = Object.entries(value).map(([key, child]) => [Array.isArray(value) ? Number(key) : key, child] as const);
  return [path, ...entries.flatMap(([key, child]) => leafPaths(child, [...path, key]))];
}

function setAt(doc: any, path: readonly (string | number)[], value: unknown): void {
  if (path.length === 0) return;
  const parent = path.slice(0, -1).reduce((node, key) => node[key], doc);
  Object.defineProperty(parent, path[path.length - 1]!, { value, enumerable: true, writable: true, configurable: true });
}

/** The issues of a document that must be refused. */
function refused(doc: unknown): string[] {
  try {
    parseSnapshot(doc);
  } catch (error) {
    if (isInputError(error)) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error("expected an InputError");
}

describe("hostile documents are refused with a clear, path-qualified error", () => {
  test("wrong types", () => {
    const doc = meshDocument();
    doc.nodes = { east: "node-1" };
    doc.services["team-a/checkout"][0].ports = "8080";
    doc.services["team-a/checkout"][1].weight = -1;
    doc.services["team-a/checkout"][2].weight = 1.5;
    doc.services["team-b/payments"][0].health = { status: "HEALTHY" };
    expect(refused(doc)).toEqual([
      "nodes: expected a list, found an object",
      'services["team-a/checkout"][0].ports: expected a list, found the string "8080"',
      'services["team-a/checkout"][1].weight: must be ≥ 0',
      'services["team-a/checkout"][2].weight: expected an integer, found the number 1.5',
      'services["team-b/payments"][0].health: expected a string, found an object',
    ]);
  });

  test.each([
    [
      "a pod IP",
      (doc: any, huge: string) => (doc.services["team-a/frontend"][0].ip = huge),
      'services["team-a/frontend"][0].ip: not an IPv4/IPv6 address (too long)',
    ],
    [
      "a pod name",
      (doc: any, huge: string) => (doc.services["team-a/frontend"][0].kubernetesMetadata.podName = huge),
      'services["team-a/frontend"][0].kubernetesMetadata.podName: not a DNS-1123 subdomain',
    ],
    [
      "a metadata value",
      (doc: any, huge: string) => (doc.services["team-a/frontend"][0].metadata.version = huge),
      'services["team-a/frontend"][0].metadata.version: longer than 4096 characters',
    ],
    ["a cluster name", (doc: any, huge: string) => (doc.nodes[0].cluster = huge), "nodes[0].cluster: longer than 253 characters"],
    ["a service key", (doc: any, huge: string) => (doc.services[`team-a/${huge}`] = []), 'services["team-a/aaaa'],
  ])("a 16 MB string as %s", (_name, plant, expected) => {
    const doc = meshDocument();
    plant(doc, "a".repeat(16 * 1024 * 1024));
    const started = Date.now();
    expect(refused(doc).join("\n")).toContain(expected);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("a million endpoints in one service are refused before any is parsed", () => {
    const doc = meshDocument();
    doc.services["team-a/frontend"] = new Array(1_000_000).fill({});
    const started = Date.now();
    expect(refused(doc)).toEqual([
      `services["team-a/frontend"]: 1000000 endpoints, over the limit of ${SNAPSHOT_LIMITS.endpointsPerService}`,
      `services: 1000009 endpoints in all, over the limit of ${SNAPSHOT_LIMITS.endpoints}`,
    ]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test("NUL bytes, non-ASCII and uppercase in names", () => {
    const doc = meshDocument();
    doc.services["team-a/frontend"][0].kubernetesMetadata.podName = "front\u0000end";
    doc.services["team-a/frontend"][1].kubernetesMetadata.nodeName = "nöde-1";
    doc.mesh.meshDomain = "Mesh.Aether";
    doc.services["Team-A/web"] = [];
    expect(
      refused(doc)
        .map((line) => line.split(":")[0])
        .sort(),
    ).toEqual([
      "mesh.meshDomain",
      'services["Team-A/web"]',
      'services["team-a/frontend"][0].kubernetesMetadata.podName',
      'services["team-a/frontend"][1].kubernetesMetadata.nodeName',
    ]);
  });

  test("NUL bytes in metadata values are data: kept, encoded and valid upstream", () => {
    const doc = meshDocument();
    doc.services["team-a/frontend"][1].metadata.note = "a\u0000b";
    const snapshot = parseSnapshot(doc);
    const result = compileNode(snapshot, { ...localNodeFrom(snapshot, "east", "node-1"), dependencies: undefined }, { eastWestWaypoint: "cross-cluster" });
    const assignment = result.endpoints.find((a) => a.cluster_name === "frontend.team-a.mesh.aether:8080")!;
    expect(JSON.stringify(assignment)).toContain("a\\u0000b");
    expect(upstreamProblems("envoy.config.endpoint.v3.ClusterLoadAssignment", assignment)).toEqual([]);
  });

  test("lone surrogates, which protobuf would silently rewrite", () => {
    const doc = meshDocument();
    doc.services["team-a/frontend"][0].metadata.version = "v\uD800";
    expect(refused(doc)).toEqual(['services["team-a/frontend"][0].metadata.version: not well-formed Unicode']);
  });

  test("prototype-pollution keys, wherever they are", () => {
    const text = JSON.stringify(meshDocument())
      .replace('"version":"v3"', '"__proto__":{"polluted":"yes"},"version":"v3"')
      .replace('"mesh":{', '"mesh":{"constructor":{"prototype":{"polluted":"yes"}},');
    expect(outcome(() => parseMeshFile(text, "json"))).toBe("input-error");
    try {
      parseMeshFile(text, "json");
    } catch (error) {
      expect(isInputError(error) && error.issues.map((i) => i.path)).toEqual(['services["team-a/frontend"][0].metadata.__proto__', "mesh.constructor"]);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("duplicate keys in JSON and in YAML", () => {
    const json = JSON.stringify(meshDocument()).replace('"meshDomain":"mesh.aether"', '"meshDomain":"mesh.aether","meshDomain":"evil.example"');
    expect(() => parseMeshFile(json, "json")).toThrow(/not valid JSON: duplicate key "meshDomain" at line 1/);
    expect(() => parseMeshFile("mesh:\n  meshDomain: a\n  meshDomain: b\n", "yaml")).toThrow(/not valid YAML: .*unique/);
  });

  test("deeply nested JSON and a YAML alias bomb", () => {
    expect(outcome(() => parseMeshFile(`${"[".repeat(200_000)}${"]".repeat(200_000)}`, "json"))).toBe("input-error");
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x]",
      ...Array.from({ length: 8 }, (_, i) => `${"bcdefghi"[i]}: &${"bcdefghi"[i]} [${Array(9).fill(`*${"abcdefgh"[i]}`).join(", ")}]`),
    ].join("\n");
    expect(() => parseMeshFile(bomb, "yaml")).toThrow(/not valid YAML/);
  });

  test("a truncated binary record", () => {
    const record = encodeServiceEndpoint(exampleSnapshot().services.get("team-a/checkout")![0]!);
    const doc = meshDocument();
    doc.services["team-a/checkout"][0] = Buffer.from(record.subarray(0, 7)).toString("base64");
    expect(refused(doc)[0]).toMatch(/^services\["team-a\/checkout"\]\[0\]: not a binary ServiceEndpoint record/);
  });
});

describe("round two: careless input classes stay fixed", () => {
  /** Address-like strings: zone ids, leading zeros, reserved ranges, mapped and compressed forms. */
  const addressLike = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.tuple(fc.ipV6(), fc.string({ maxLength: 6 })).map(([ip, zone]) => `${ip}%${zone}`),
    fc.tuple(fc.nat(999), fc.nat(999), fc.nat(999), fc.nat(999)).map((octets) => octets.map((o) => String(o).padStart(3, "0")).join(".")),
    fc.ipV4().map((ip) => `::ffff:${ip}`),
    fc.constantFrom("0.0.0.0", "::", "255.255.255.255", "224.0.0.1", "ff02::1", "fe80::1", "127.0.0.1", "::1", "1e4", "0x0a.0.0.1"),
  );

  test("any address-like string in any IP field: an InputError or a compiled mesh, never a crash", () => {
    fc.assert(
      fc.property(addressLike, fc.constantFrom("node", "pod", "nodeIp", "vip"), (ip, field) => {
        const doc = meshDocument();
        if (field === "node") doc.nodes[0].ip = ip;
        else if (field === "pod") doc.services["team-a/frontend"][0].ip = ip;
        else if (field === "nodeIp") doc.services["team-a/frontend"][0].kubernetesMetadata.nodeIp = ip;
        else doc.vips = { "team-a/checkout": ip };
        const snapshot = outcome(() => parseSnapshot(doc));
        if (snapshot !== "input-error") compileEveryNode(snapshot);
      }),
      { seed: 21, numRuns: RUNS },
    );
  });

  test("arbitrary bytes as a mesh file: invalid UTF-8, BOMs and multi-document YAML are input errors", () => {
    const text = JSON.stringify(meshDocument());
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.nat(text.length), fc.constantFrom("json" as const, "yaml" as const), (noise, at, format) => {
        const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(noise), Buffer.from(text.slice(at))]);
        outcome(() => parseMeshFile(bytes, format));
      }),
      { seed: 22, numRuns: RUNS },
    );
  });

  test("ports, port lists and protocol keys of any size and type: refused before any node is compiled, or compiled", () => {
    const portLike = fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 6 }), fc.constantFrom(null, true, Number.NaN, Number.POSITIVE_INFINITY));
    fc.assert(
      fc.property(portLike, fc.array(fc.integer({ min: 1, max: 65535 }), { maxLength: 300 }), fc.string({ maxLength: 6 }), (port, ports, protocolKey) => {
        const doc = meshDocument();
        doc.services["team-a/frontend"][0].port = port;
        doc.services["team-a/checkout"][0].ports = ports;
        doc.protocols["team-a/checkout"] = { [protocolKey]: "tcp" };
        const snapshot = outcome(() => parseSnapshot(doc));
        if (snapshot !== "input-error") compileEveryNode(snapshot);
      }),
      { seed: 23, numRuns: RUNS },
    );
  });

  test("hand-built snapshots through the public API: an InputError, never a TypeError", async () => {
    const api = await import("../../src/entry/index.js");
    const valid = api.parseSnapshot(meshDocument());
    const node = api.localNodeFrom(valid, "east", "node-1");
    fc.assert(
      fc.property(
        fc.constantFrom("mesh", "nodes", "services", "exports", "protocols", "dependencies", "vips"),
        fc.jsonValue({ maxDepth: 2 }),
        (field, value) => {
          outcome(() => api.compileNode({ ...valid, [field]: value } as never, node));
        },
      ),
      { seed: 24, numRuns: RUNS },
    );
  });
});

describe("IPv6 and IPv4-mapped addresses", () => {
  function ipv6Mesh() {
    const doc = meshDocument();
    const v6 = (ip: string) => `fd00:${ip.split(".").map(Number).join(":")}::1`;
    for (const node of doc.nodes) node.ip = v6(node.ip);
    for (const record of Object.values(doc.services).flat() as any[]) {
      record.ip = v6(record.ip) + (record.clusterName === "west" ? "0" : "");
      if (record.kubernetesMetadata.nodeIp) record.kubernetesMetadata.nodeIp = v6(record.kubernetesMetadata.nodeIp);
    }
    return parseSnapshot(doc);
  }

  test("an IPv6 mesh compiles to valid resources that pass the mesh check", () => {
    const snapshot = ipv6Mesh();
    const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
    for (const cluster of result.clusters) expect(upstreamProblems("envoy.config.cluster.v3.Cluster", cluster)).toEqual([]);
    for (const assignment of result.endpoints) expect(upstreamProblems("envoy.config.endpoint.v3.ClusterLoadAssignment", assignment)).toEqual([]);
    expect(result.diagnostics.find((d) => d.code === "ENDPOINT_VIA_WAYPOINT")?.address).toBe("[fd00:10:20:0:12::1]:15009");
    expect(verifyMesh(snapshot, { eastWestWaypoint: "cross-cluster" }).ok).toBe(true);
  });

  test("IPv4-mapped IPv6 is the same endpoint as its IPv4 form", () => {
    const doc = meshDocument();
    doc.services["team-a/checkout"][1].ip = "::ffff:10.244.1.7";
    expect(refused(doc)).toEqual(['services["team-a/checkout"][1].ip: duplicate endpoint (cluster east, ip 10.244.1.7); first at index 0']);
  });
});

describe("the CLI on hostile files", () => {
  const scratch = mkdtempSync(join(tmpdir(), "aether-hostile-"));
  const file = (name: string, content: string | Buffer) => {
    const path = join(scratch, name);
    writeFileSync(path, content);
    return path;
  };

  test.each([
    ["binary junk", () => file("junk.json", Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x7b]))],
    ["an empty file", () => file("empty.yaml", "")],
    ["deep nesting", () => file("deep.json", `${"[".repeat(100_000)}${"]".repeat(100_000)}`)],
    ["pollution keys", () => file("proto.json", '{"__proto__": {"polluted": true}}')],
    ["a YAML document that is a list", () => file("list.yaml", toYaml([1, 2, 3]))],
    ["a directory", () => scratch],
  ])("%s: exit 2, no stack trace", (_name, make) => {
    const { code, stderr } = runCli(["check", "--snapshot", make()]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^aether-xds: /);
    expect(stderr).not.toMatch(/\n {4}at /);
  });
});
