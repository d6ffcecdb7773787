/**
 * `parseSnapshot` parses the usual registry record without the zod schema (`usualServiceEndpoint`)
 * and leaves every other record to it. The two must never disagree: whatever the quick path
 * returns, the schema accepts too and parses into the same object (fields, values, key order);
 * whatever the schema rejects, the quick path declines. Checked on every record of the example
 * meshes and the benchmark's workloads, and on random records whose fields are drawn from valid
 * values and near misses (IPv6, leading zeros, reserved ranges, unnormalized paths, enum numbers,
 * extra or undefined keys, shuffled key order).
 */
import { existsSync, readdirSync } from "node:fs";
import { posix } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { generateDocument, SMOKE_WORKLOADS } from "../../bench/workloads.js";
import { normalizeNetns } from "../../src/model/fields.js";
import { decodeServiceEndpoint, encodeServiceEndpoint, serviceEndpoint } from "../../src/model/registry.js";
import { usualServiceEndpoint } from "../../src/model/usual-record.js";
import { isDnsLabel, isDnsSubdomain, isServiceKey } from "../../src/naming.js";
import { meshDocument, REPO_ROOT } from "../support/fixtures.js";
import { RUNS, SEED } from "./harness.js";

/** The schema's parse, or undefined when it rejects the record. */
function bySchema(record: unknown): unknown {
  const parsed = serviceEndpoint.safeParse(record);
  return parsed.success ? parsed.data : undefined;
}

/** The quick path agrees with the schema on `record`: it declines, or returns exactly what the schema does. */
function expectAgreement(record: unknown): "quick" | "schema" {
  const quick = usualServiceEndpoint(record);
  if (quick === undefined) return "schema";
  const schema = bySchema(record);
  expect(schema, JSON.stringify(record)).toBeDefined();
  expect(quick).toStrictEqual(schema);
  // toStrictEqual ignores key order; the parsed records' JSON and hidden classes do not.
  expect(JSON.stringify(quick)).toBe(JSON.stringify(schema));
  return "quick";
}

/** Every JSON record of a mesh document's services. */
function recordsOf(document: { services?: Record<string, unknown[]> }): unknown[] {
  return Object.values(document.services ?? {}).flat();
}

/** The example meshes of `testdata/` (the test cases point at these). */
const MESH_FILES = readdirSync(`${REPO_ROOT}testdata`).filter((name) => existsSync(`${REPO_ROOT}testdata/${name}/mesh.yaml`));

const ABSENT = Symbol("absent");

/**
 * Each field's candidates: usual values (ABSENT: the key left out), and near misses the schema
 * treats otherwise (or rejects). A record draws each field from its usual values 9 times in 10.
 */
const FIELDS: Record<string, { readonly usual: readonly unknown[]; readonly misses: readonly unknown[] }> = {
  ip: {
    usual: ["10.244.1.7", "1.2.3.4", "223.255.255.255", "127.0.0.1"],
    misses: [
      "0.1.2.3",
      "224.0.0.1",
      "240.0.0.1",
      "255.255.255.255",
      "01.2.3.4",
      "1.2.3",
      "256.1.1.1",
      "fd00::1",
      "::ffff:10.0.0.1",
      "FD00::1",
      "fe80::1",
      "",
      5,
      ABSENT,
    ],
  },
  clusterName: { usual: ["east", "cluster-0", "a", "A.b_c-d9", "x".repeat(253)], misses: ["-bad", "bad-", "", "x".repeat(254), 7, ABSENT] },
  port: { usual: [8080, 0, 1, 65535, ABSENT], misses: [65536, -1, 1.5, "80", Number.POSITIVE_INFINITY] },
  ports: {
    usual: [[], [80], [8080, 80, 8080], Array.from({ length: 64 }, (_, i) => i + 1), ABSENT],
    misses: [[0], [70000], ["80"], Array.from({ length: 65 }, (_, i) => i + 1), [1.5], {}],
  },
  weight: { usual: [0, 1, 100, 4294967295, ABSENT], misses: [4294967296, -1, 2.5, "1"] },
  locality: {
    usual: [{}, { region: "r" }, { region: "r", zone: "z" }, { zone: "z", region: "r" }, ABSENT],
    misses: [{ region: 5 }, { region: "x".repeat(257) }, { extra: 1 }, null, []],
  },
  metadata: {
    usual: [{}, { app: "a" }, { app: "a", version: "v1" }, { b: "y", 1: "x" }, { "pod-template-hash": "v".repeat(4096) }, ABSENT],
    misses: [{ "a b": "x" }, { "": "x" }, { k: 5 }, { k: "v".repeat(4097) }, { é: "x" }, []],
  },
  containerMetadata: {
    usual: [
      {},
      { containerId: "abc" },
      { networkNamespace: "/var/run/netns/cni-1" },
      { containerId: "abc", networkNamespace: "/var/run//netns/./x/" },
      { networkNamespace: "/a/../b" },
      { networkNamespace: "/a/.b/..c/d." },
      { networkNamespace: "" },
      { networkNamespace: "/" },
      ABSENT,
    ],
    misses: [{ networkNamespace: "relative" }, { networkNamespace: "/a\0b" }, { containerId: "x".repeat(257) }, { extra: 1 }],
  },
  kubernetesMetadata: {
    usual: [
      {},
      { namespace: "ns-1", podName: "pod-1", nodeName: "node-1", nodeIp: "172.18.0.2" },
      { nodeIp: "172.18.0.2", nodeName: "node-1.zone-a" },
      { namespace: "" },
      ABSENT,
    ],
    misses: [{ namespace: "NS" }, { podName: "a..b" }, { nodeIp: "fd00::2" }, { nodeIp: "01.1.1.1" }, { nodeName: "x".repeat(254) }, { extra: "" }],
  },
  health: {
    usual: ["HEALTHY", "UNHEALTHY", "DRAINING", "UNSPECIFIED", "HEALTH_STATUS_HEALTHY", 1, 3, ABSENT],
    misses: ["healthy", "HEALTH_STATUS_BOGUS", "HEALTH_CHECK_MODE_EDS", 9, -1, 1.5, Number.NaN, true],
  },
  healthCheckMode: { usual: ["EDS", "ACTIVE", "UNSPECIFIED", "HEALTH_CHECK_MODE_EDS", 0, 2, ABSENT], misses: ["bogus", "HEALTH_STATUS_HEALTHY", 3, "2"] },
  bogus: { usual: [ABSENT], misses: [1, "x"] },
};

/** A record: one candidate per field, its keys in random order; now and then a key set to undefined, or no prototype. */
const records = fc
  .tuple(
    fc.record(
      Object.fromEntries(
        Object.entries(FIELDS).map(([key, { usual, misses }]) => [
          key,
          fc.oneof({ arbitrary: fc.constantFrom(...usual), weight: 9 }, { arbitrary: fc.constantFrom(...misses), weight: 1 }),
        ]),
      ),
    ),
    fc.shuffledSubarray(Object.keys(FIELDS), { minLength: Object.keys(FIELDS).length }),
    fc.constantFrom("plain", "plain", "plain", "plain", "plain", "plain", "undefined key", "no prototype"),
  )
  .map(([values, order, kind]) => {
    const record: Record<string, unknown> = kind === "no prototype" ? Object.create(null) : {};
    for (const key of order) if (values[key] !== ABSENT) record[key] = values[key];
    if (kind === "undefined key") record[order[0]!] = undefined;
    return record;
  });

describe("the usual registry record, parsed without the schema", () => {
  test("every record of the example meshes and the benchmark workloads takes the quick path, parsed as the schema parses it", () => {
    const documents = [
      meshDocument(),
      ...MESH_FILES.map((name) => meshDocument(`${REPO_ROOT}testdata/${name}/mesh.yaml`)),
      ...Object.values(SMOKE_WORKLOADS).map((params) => generateDocument(params)),
    ];
    const ways = documents.flatMap((document) => recordsOf(document).map(expectAgreement));
    expect(ways.length).toBeGreaterThan(1000);
    // IPv6 records go to the schema; the benchmark's IPv4 ones never should, in JSON or decoded
    // from the binary form a registry stores (numbers for the enums).
    const generated = Object.values(SMOKE_WORKLOADS).flatMap((params) => recordsOf(generateDocument(params)));
    const decoded = generated.map((record) => decodeServiceEndpoint(encodeServiceEndpoint(serviceEndpoint.parse(record))));
    expect(decoded.map(expectAgreement)).toEqual(decoded.map(() => "quick"));
    expect(generated.map(usualServiceEndpoint).filter((parsed) => parsed === undefined)).toEqual([]);
  });

  test("on random records, the quick path declines or parses exactly as the schema does", () => {
    const ways = { quick: 0, schema: 0 };
    fc.assert(
      fc.property(records, (record) => {
        ways[expectAgreement(record)]++;
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 10, 2000) },
    );
    // Both ways are exercised, each on a good share of the records.
    expect(ways.quick).toBeGreaterThan(ways.schema / 10);
    expect(ways.schema).toBeGreaterThan(ways.quick / 10);
  });

  test("a record the schema rejects is never taken: its error is still the schema's", () => {
    const record = { ip: "10.0.0.1", clusterName: "east", port: 8080, health: "HEALTHY" };
    expect(expectAgreement(record)).toBe("quick");
    for (const miss of [{ ip: "224.0.0.1" }, { port: 0 }, { health: "healthy" }, { weight: -1 }, { extra: 1 }]) {
      const wrong = { ...record, ...miss };
      expect(usualServiceEndpoint(wrong)).toBeUndefined();
      expect(serviceEndpoint.safeParse(wrong).success).toBe(false);
    }
  });
});

describe("the name and path checks both ways share, against their definitions", () => {
  const runs = { seed: SEED, numRuns: Math.max(RUNS * 10, 2000) };

  test("isDnsSubdomain: dot-separated DNS labels, at most 253 characters", () => {
    const label = fc.oneof(fc.stringMatching(/^[a-zA-Z0-9-]{0,4}$/), fc.stringMatching(/^[a-z0-9]{62,65}$/));
    const name = fc.array(label, { minLength: 1, maxLength: 6 }).map((labels) => labels.join("."));
    const long = fc.integer({ min: 3, max: 5 }).map((count) => Array.from({ length: count }, (_, i) => `${"a".repeat(62)}${i}`).join("."));
    fc.assert(
      fc.property(fc.oneof(name, long), (value) => {
        expect(isDnsSubdomain(value), value).toBe(value.length > 0 && value.length <= 253 && value.split(".").every(isDnsLabel));
      }),
      runs,
    );
  });

  test("isServiceKey: two DNS labels around exactly one slash", () => {
    const label = fc.oneof(fc.stringMatching(/^[a-zA-Z0-9-]{0,4}$/), fc.stringMatching(/^[a-z0-9]{62,65}$/), fc.constant("a.b"));
    const key = fc.array(label, { minLength: 1, maxLength: 3 }).map((parts) => parts.join("/"));
    fc.assert(
      fc.property(key, (value) => {
        const parts = value.split("/");
        expect(isServiceKey(value), value).toBe(parts.length === 2 && parts.every(isDnsLabel));
      }),
      runs,
    );
  });

  test("normalizeNetns: posix.normalize without a trailing slash, for any absolute path", () => {
    const path = fc.array(fc.constantFrom("/", ".", "..", "a", "b-1", "./", "../", "//"), { maxLength: 8 }).map((parts) => `/${parts.join("")}`);
    fc.assert(
      fc.property(path, (value) => {
        const normalized = posix.normalize(value);
        expect(normalizeNetns(value), value).toBe(normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized);
      }),
      runs,
    );
  });
});
