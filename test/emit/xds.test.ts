import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import type { AccessLog } from "../../gen/envoy/config/accesslog/v3/accesslog.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { type CompileResult, compileNode } from "../../src/compile/compile-node.js";
import type { ResourceKind } from "../../src/emit/text.js";
import { diffResources, isEmptyDiff, toXdsResources, versionInfo, XDS_TYPE_URLS, type XdsResource, type XdsResources } from "../../src/emit/xds.js";
import { notePatched } from "../../src/envoy/resources.js";
import { lookupMessage, unpackAny } from "../../src/envoy/schema.js";
import { EXTENSION } from "../../src/envoy/types.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { parseOutboundClusterName } from "../../src/naming.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { compileCase, loadCase } from "../support/cases.js";
import { RESOURCE_CODECS } from "../support/codecs.js";
import { meshDocument, REPO_ROOT } from "../support/fixtures.js";

const CASE = "flannel-cross-cluster";
const URLS = Object.values(XDS_TYPE_URLS);
const PAYMENTS = "payments.team-b.mesh.aether:8443";
const CHECKOUT = ["checkout.team-a.mesh.aether:8080", "checkout.team-a.mesh.aether:9090"];

const KINDS: readonly ResourceKind[] = ["clusters", "endpoints", "listeners"];

/** The name each kind of resource goes by. */
const NAMES: Record<ResourceKind, (result: CompileResult) => string[]> = {
  clusters: (result) => result.clusters.map((c) => c.name!),
  endpoints: (result) => result.endpoints.map((e) => e.cluster_name!),
  listeners: (result) => result.listeners.map((l) => l.name!),
};

/** east/node-1 of the example mesh (as in the golden case), from a fresh parse of `document`. */
function compileEastNode1(document: any = meshDocument()): CompileResult {
  const snapshot = parseSnapshot(document);
  return compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
}

function versions(resources: XdsResources): Record<string, Record<string, string>> {
  return Object.fromEntries(URLS.map((url) => [url, Object.fromEntries(resources[url].map((r) => [r.name, r.version]))]));
}

function withoutCheckout(): any {
  const document = meshDocument();
  delete document.services["team-a/checkout"];
  delete document.protocols["team-a/checkout"];
  delete document.dependencies["team-a/checkout"];
  document.dependencies["team-a/frontend"] = ["team-b/payments"];
  return document;
}

describe("toXdsResources", () => {
  const result = compileCase(loadCase(CASE), "selector");
  const resources = toXdsResources(result);

  test("every type URL is present, with the result's resources sorted by name", () => {
    expect(Object.keys(resources).sort()).toEqual([...URLS].sort());
    for (const kind of KINDS) {
      const names = resources[XDS_TYPE_URLS[kind]].map((r) => r.name);
      expect(names).toEqual(NAMES[kind](result));
      expect(names).toEqual([...names].sort());
      expect(names.length).toBeGreaterThan(0);
    }
  });

  test("a type with no resources is an empty list, not a missing key", () => {
    const empty = toXdsResources({ ...result, listeners: [] });
    expect(empty[XDS_TYPE_URLS.listeners]).toEqual([]);
  });

  test("each resource is its message encoded with the generated codec, under its type URL", () => {
    for (const kind of KINDS) {
      const codec = RESOURCE_CODECS[kind];
      resources[XDS_TYPE_URLS[kind]].forEach((r, i) => {
        expect(r.resource.type_url).toBe(XDS_TYPE_URLS[kind]);
        const value = r.resource.value!;
        expect(value).toEqual(codec.encode(result[kind][i]).finish());
        expect(codec.encode(codec.decode(value)).finish()).toEqual(value);
      });
    }
  });

  test("a version is the first 16 hex digits of the SHA-256 of exactly the bytes sent", () => {
    for (const r of URLS.flatMap((url) => resources[url])) {
      expect(r.version).toMatch(/^[0-9a-f]{16}$/);
      expect(r.version).toBe(createHash("sha256").update(r.resource.value!).digest("hex").slice(0, 16));
    }
  });

  test("versions are stable across processes", () => {
    const script = `
      import { compileCase, loadCase } from "./test/support/cases.js";
      import { toXdsResources } from "./src/emit/xds.js";
      const resources = toXdsResources(compileCase(loadCase(${JSON.stringify(CASE)}), "selector"));
      process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(resources).map(([url, list]) => [url, Object.fromEntries(list.map((r) => [r.name, r.version]))]))));
    `;
    const run = () => {
      const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: REPO_ROOT, encoding: "utf8" });
      expect(child.stderr).toBe("");
      expect(child.status).toBe(0);
      return JSON.parse(child.stdout);
    };
    const [first, second] = [run(), run()];
    expect(first).toEqual(second);
    expect(first).toEqual(versions(resources));
  });

  test("recompiling a fresh parse of the same mesh gives the same versions", () => {
    expect(versions(toXdsResources(compileEastNode1()))).toEqual(versions(toXdsResources(compileEastNode1())));
    expect(versions(toXdsResources(compileEastNode1()))).toEqual(versions(resources));
  });

  test("one endpoint's health changes the version of its assignment and of nothing else", () => {
    const document = meshDocument();
    const pod = document.services["team-b/payments"].find((r: any) => r.kubernetesMetadata.podName === "payments-2b7c-q1");
    expect(pod.health).toBe("UNHEALTHY");
    pod.health = "HEALTHY";
    const [before, after] = [versions(toXdsResources(compileEastNode1())), versions(toXdsResources(compileEastNode1(document)))];
    for (const url of URLS) {
      const changed = Object.keys(after[url]!).filter((name) => after[url]![name] !== before[url]![name]);
      expect(changed, url).toEqual(url === XDS_TYPE_URLS.endpoints ? [PAYMENTS] : []);
      expect(Object.keys(after[url]!)).toEqual(Object.keys(before[url]!));
    }
  });

  test("an assignment shared by nodes of one EDS view is encoded once", () => {
    const snapshot = parseSnapshot(meshDocument());
    const index = indexSnapshot(snapshot);
    // east/node-1 and east/node-2 share cluster and zone, so they see the mesh alike.
    const [one, two] = ["node-1", "node-2"].map((node) => compileNode(index, localNodeFrom(snapshot, "east", node), { eastWestWaypoint: "cross-cluster" }));
    const payments = (r: CompileResult) => toXdsResources(r)[XDS_TYPE_URLS.endpoints].find((e) => e.name === PAYMENTS)!;
    expect(one!.endpoints.find((e) => e.cluster_name === PAYMENTS)).toBe(two!.endpoints.find((e) => e.cluster_name === PAYMENTS));
    expect(payments(one!).resource.value).toBe(payments(two!).resource.value);
  });

  test("a pod listener's own filter configs and access logs end up as views of the listener's bytes; shared ones keep their own", () => {
    const snapshot = parseSnapshot(meshDocument());
    const index = indexSnapshot(snapshot);
    const options = { eastWestWaypoint: "cross-cluster", settings: { accessLog: { grpcCluster: "access-log-service" } } } as const;
    // east/node-1 and east/node-3 both host payments: they carry the very same tunnel chain for it
    // (cached per context), so neither listener may take that chain's bytes.
    const [one, three] = ["node-1", "node-3"].map((node) => compileNode(index, localNodeFrom(snapshot, "east", node), options));
    const filtersOf = (listener: Listener) => listener.filter_chains!.flatMap((chain) => chain.filters!);
    const paymentsChain = (result: CompileResult) =>
      result.listeners.find((l) => l.name === "ew_tunnel")!.filter_chains!.find((c) => c.name === "ew_payments_team-b");
    expect(paymentsChain(one!)).toBe(paymentsChain(three!));
    const [shared] = paymentsChain(one!)!.filters!;
    const sharedValue = shared!.typed_config!.value;
    for (const result of [one!, three!]) {
      const encodings = new Map(toXdsResources(result)[XDS_TYPE_URLS.listeners].map((r) => [r.name, r.resource.value!]));
      for (const listener of result.listeners) {
        const encoding = encodings.get(listener.name!)!;
        for (const filter of filtersOf(listener)) {
          // The source stamp is one filter per identity, shared by every listener of its pods.
          const carriedElsewhere = listener.name === "ew_tunnel" || filter.name === EXTENSION.setFilterState;
          const logs = (unpackAny(filter.typed_config!)!.message as { access_log?: AccessLog[] }).access_log ?? [];
          if (filter.name !== EXTENSION.setFilterState) expect(logs, `${listener.name}: ${filter.name}`).toHaveLength(1);
          for (const config of [filter.typed_config!, ...logs.map((log) => log.typed_config!)]) {
            expect(isViewInside(config.value!, encoding), `${listener.name}: ${config.type_url}`).toBe(!carriedElsewhere);
            expectMessageBytes(config, listener.name!);
          }
        }
      }
    }
    expect(shared!.typed_config!.value).toBe(sharedValue);
  });

  test.each(["selector", "sockets"] as const)("an outbound cluster's TLS contexts end up as views of the cluster's bytes (%s mode)", (sourceIdentity) => {
    const snapshot = parseSnapshot(meshDocument());
    const index = indexSnapshot(snapshot);
    // Two nodes of one cluster: the second reuses clusters the first built (and encoded).
    const results = ["node-1", "node-3"].map((node) =>
      compileNode(index, localNodeFrom(snapshot, "east", node), { eastWestWaypoint: "cross-cluster", sourceIdentity }),
    );
    let sockets = 0;
    for (const result of results) {
      const encodings = new Map(toXdsResources(result)[XDS_TYPE_URLS.clusters].map((r) => [r.name, r.resource.value!]));
      for (const cluster of result.clusters.filter((c) => parseOutboundClusterName(c.name!))) {
        const configs = [...(cluster.transport_socket_matches ?? []).map((m) => m.transport_socket!), cluster.transport_socket]
          .filter((socket) => socket?.name === EXTENSION.tlsTransportSocket)
          .map((socket) => socket!.typed_config!);
        for (const config of configs) {
          expect(isViewInside(config.value!, encodings.get(cluster.name!)!), cluster.name).toBe(true);
          expectMessageBytes(config, cluster.name!);
          sockets++;
        }
      }
    }
    expect(sockets).toBeGreaterThanOrEqual(6);
  });
});

/** Whether `value` is a view of bytes inside `encoding`. */
function isViewInside(value: Uint8Array, encoding: Uint8Array): boolean {
  return (
    value.buffer === encoding.buffer && value.byteOffset >= encoding.byteOffset && value.byteOffset + value.length <= encoding.byteOffset + encoding.length
  );
}

/** Whichever bytes an Any holds, they are its message's. */
function expectMessageBytes(config: Any, where: string): void {
  const { typeName, message } = unpackAny(config)!;
  expect(config.value, `${where}: ${typeName}`).toEqual(lookupMessage(typeName)!.codec!.encode(message).finish());
}

describe("diffResources", () => {
  const full = toXdsResources(compileEastNode1());
  const reduced = toXdsResources(compileEastNode1(withoutCheckout()));

  test("with nothing sent before, everything is added, sorted", () => {
    const diff = diffResources(undefined, full);
    for (const url of URLS) expect(diff[url]).toEqual({ added: full[url].map((r) => r.name), changed: [], removed: [] });
  });

  test("removing a service removes its clusters and assignments, its route and VIP capture, and changes nothing else", () => {
    expect(diffResources(full, reduced)).toEqual({
      [XDS_TYPE_URLS.clusters]: { added: [], changed: [], removed: CHECKOUT },
      [XDS_TYPE_URLS.endpoints]: { added: [], changed: [], removed: CHECKOUT },
      // frontend's egress listener loses the route; its capture listener only captured checkout's VIP.
      [XDS_TYPE_URLS.listeners]: { added: [], changed: ["outbound_frontend-7d9f-abcde_team-a"], removed: ["capture_frontend-7d9f-abcde_team-a"] },
    });
  });

  test("adding it back adds them", () => {
    const diff = diffResources(reduced, full);
    expect(diff[XDS_TYPE_URLS.clusters]).toEqual({ added: CHECKOUT, changed: [], removed: [] });
    expect(diff[XDS_TYPE_URLS.endpoints]).toEqual({ added: CHECKOUT, changed: [], removed: [] });
  });

  test("added, changed and removed at once, each sorted whatever the input order", () => {
    const resource = (name: string, version: string): XdsResource => ({
      name,
      version,
      resource: { type_url: XDS_TYPE_URLS.clusters, value: new Uint8Array() },
    });
    const of = (clusters: XdsResource[]): XdsResources => ({
      [XDS_TYPE_URLS.clusters]: clusters,
      [XDS_TYPE_URLS.endpoints]: [],
      [XDS_TYPE_URLS.listeners]: [],
    });
    const previous = of([resource("c", "1"), resource("a", "1"), resource("b", "1"), resource("e", "1"), resource("z", "1")]);
    const next = of([resource("z", "2"), resource("d", "1"), resource("b", "2"), resource("c", "1"), resource("y", "1")]);
    expect(diffResources(previous, next)[XDS_TYPE_URLS.clusters]).toEqual({ added: ["d", "y"], changed: ["b", "z"], removed: ["a", "e"] });
  });

  test("isEmptyDiff: true exactly when nothing was added, changed or removed", () => {
    expect(isEmptyDiff(diffResources(full, toXdsResources(compileEastNode1())))).toBe(true);
    expect(isEmptyDiff(diffResources(full, reduced))).toBe(false);
    expect(isEmptyDiff(diffResources(undefined, full))).toBe(false);
  });
});

test("a recompile's patched list keeps its base's resources where nothing was replaced and encodes what was", () => {
  const snapshot = parseSnapshot(meshDocument());
  const result = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" });
  const base = toXdsResources(result)[XDS_TYPE_URLS.endpoints];
  const at = result.endpoints.findIndex((assignment) => assignment.cluster_name === PAYMENTS);
  const replacement = structuredClone(result.endpoints[at]!);
  replacement.endpoints![0]!.lb_endpoints![0]!.load_balancing_weight = 7;
  const endpoints = result.endpoints.map((assignment, i) => (i === at ? replacement : assignment));
  notePatched(endpoints, result.endpoints, [replacement]);
  const patched = toXdsResources({ ...result, endpoints })[XDS_TYPE_URLS.endpoints];
  const afresh = toXdsResources({ ...result, endpoints: [...endpoints] })[XDS_TYPE_URLS.endpoints];
  expect(patched).toEqual(afresh);
  expect(patched[at]!.version).not.toBe(base[at]!.version);
  expect(patched.filter((resource, i) => resource !== base[i]).map((resource) => resource.name)).toEqual([PAYMENTS]);
});

describe("versionInfo", () => {
  const assignments = toXdsResources(compileCase(loadCase(CASE), "selector"))[XDS_TYPE_URLS.endpoints];

  test("is 16 hex digits and does not depend on the order of the resources", () => {
    expect(versionInfo(assignments)).toMatch(/^[0-9a-f]{16}$/);
    expect(versionInfo([...assignments].reverse())).toBe(versionInfo(assignments));
  });

  test("changes when any resource's version or name changes, or one is left out", () => {
    const base = versionInfo(assignments);
    const [first, ...rest] = assignments;
    expect(versionInfo([{ ...first!, version: "0000000000000000" }, ...rest])).not.toBe(base);
    expect(versionInfo([{ ...first!, name: `${first!.name}x` }, ...rest])).not.toBe(base);
    expect(versionInfo(rest)).not.toBe(base);
  });
});
