/**
 * The real-Envoy suites' pure helpers (test/envoy/support), without Envoy: the test-only bootstrap
 * transforms, the SDS secret names a bootstrap needs, the validation table and Envoy's trimmed
 * rejection. Their effect on a real Envoy is tested in test/envoy/.
 */
import { describe, expect, test } from "vitest";
import { compileNode } from "../src/compile/compile-node.js";
import { renderBootstrap, toBootstrap } from "../src/emit/bootstrap.js";
import { renderMessage } from "../src/emit/render.js";
import { inlineAssignments, instrument, pointClusterAt } from "./envoy/support/bootstrap-transforms.js";
import { secretNames } from "./envoy/support/mesh-lab.js";
import { trimEnvoyMessage } from "./envoy/support/validate.js";
import { bootstrapWithAssignments, EDS_CHECK_PREFIX, optionCombinations, validationTable } from "./envoy/support/validation-table.js";
import { caseNames, compileCase, loadCase } from "./support/cases.js";

const result = compileCase(loadCase("flannel-cross-cluster"), "sockets");
const rendered = renderBootstrap(toBootstrap(result)) as any;
const assignments = result.endpoints.map((e) => renderMessage("envoy.config.endpoint.v3.ClusterLoadAssignment", e));
const json = (value: unknown) => JSON.stringify(value);

describe("bootstrap transforms", () => {
  test("inlineAssignments: every EDS cluster becomes STATIC with its assignment; ADS stays while SDS uses it", () => {
    const inlined = inlineAssignments(rendered, assignments) as any;
    const eds = rendered.static_resources.clusters.filter((c: any) => c.type === "EDS");
    expect(eds.length).toBeGreaterThan(0);
    for (const cluster of eds) {
      const after = inlined.static_resources.clusters.find((c: any) => c.name === cluster.name);
      expect(after.type).toBe("STATIC");
      expect(after.eds_cluster_config).toBeUndefined();
      expect(after.load_assignment.endpoints).toEqual(assignments.find((a: any) => a.cluster_name === cluster.eds_cluster_config.service_name)!.endpoints);
      expect(after.transport_socket_matcher).toEqual(cluster.transport_socket_matcher);
    }
    expect(inlined.dynamic_resources).toEqual(rendered.dynamic_resources); // SDS still comes over ADS
    expect(json(rendered)).toContain('"type":"EDS"'); // a copy
  });

  test("inlineAssignments: with SDS from a gRPC cluster, nothing uses ADS any more: its config and stub go", () => {
    const golden = loadCase("flannel-cross-cluster");
    const sdsResult = compileNode(golden.snapshot, golden.node, { ...golden.options.get("sockets")!, sds: { grpcCluster: "sds" } });
    const sdsRendered = renderBootstrap(toBootstrap(sdsResult)) as any;
    const inlined = inlineAssignments(
      sdsRendered,
      sdsResult.endpoints.map((e) => renderMessage("envoy.config.endpoint.v3.ClusterLoadAssignment", e)),
    ) as any;
    expect(inlined.dynamic_resources).toBeUndefined();
    expect(inlined.static_resources.clusters.map((c: any) => c.name)).not.toContain("xds_cluster");
    expect(inlined.static_resources.clusters.map((c: any) => c.name)).toContain("sds");
    expect(() => inlineAssignments(sdsRendered, [])).toThrow(/no ClusterLoadAssignment for EDS cluster/);
  });

  test("pointClusterAt moves a stub to a Unix socket", () => {
    const moved = pointClusterAt(rendered, "xds_cluster", { pipe: { path: "/tmp/x.sock" } }) as any;
    expect(moved.static_resources.clusters.find((c: any) => c.name === "xds_cluster").load_assignment.endpoints[0].lb_endpoints[0].endpoint.address).toEqual({
      pipe: { path: "/tmp/x.sock" },
    });
    expect(() => pointClusterAt(rendered, "nope", {})).toThrow(/no cluster nope/);
  });

  test("instrument adds admin and a JSON access log to every listener, tcp_proxy and HTTP connection manager, nothing else", () => {
    const instrumented = instrument(rendered, { adminAddress: { pipe: { path: "/tmp/a.sock" } }, accessLogPath: "/tmp/access.log" }) as any;
    expect(instrumented.admin).toEqual({ address: { pipe: { path: "/tmp/a.sock" } } });
    for (const listener of instrumented.static_resources.listeners) {
      expect(listener.access_log).toHaveLength(1);
      for (const chain of listener.filter_chains) {
        const proxies = chain.filters.filter((filter: any) => filter.name !== "envoy.filters.network.set_filter_state");
        for (const filter of proxies) expect(filter.typed_config.access_log).toHaveLength(1);
      }
    }
    const strip = (b: any) => {
      const copy = structuredClone(b);
      delete copy.admin;
      for (const l of copy.static_resources.listeners) {
        delete l.access_log;
        for (const c of l.filter_chains) for (const f of c.filters) delete f.typed_config.access_log;
      }
      return copy;
    };
    expect(strip(instrumented)).toEqual(rendered);
  });

  test("secretNames lists every SVID and bundle the bootstrap asks SDS for", () => {
    expect(secretNames(rendered)).toEqual([
      "spiffe://aether.internal",
      "spiffe://aether.internal/ns/aether-system/sa/aether-node",
      "spiffe://aether.internal/ns/team-a/sa/frontend",
      "spiffe://aether.internal/ns/team-b/sa/payments",
    ]);
    expect(
      secretNames({
        x: { prefetch_secret_names: ["spiffe://td/ns/a/sa/b"], certificate_mapper: { typed_config: { default_value: "spiffe://td/ns/n/sa/node" } } },
      }),
    ).toEqual(["spiffe://td/ns/a/sa/b", "spiffe://td/ns/n/sa/node"]);
  });
});

describe("validation table", () => {
  test("option combinations are the cartesian product; adding a dimension multiplies the rows", () => {
    expect(optionCombinations({ a: [1, 2], b: ["x", "y", "z"] })).toHaveLength(6);
    expect(optionCombinations({ a: [1, 2], b: ["x"], c: [true, false] })).toEqual([
      { a: 1, b: "x", c: true },
      { a: 1, b: "x", c: false },
      { a: 2, b: "x", c: true },
      { a: 2, b: "x", c: false },
    ]);
  });

  test("every golden case, every mesh node in every mode and socket selection, and the CLI", () => {
    const { rows } = validationTable();
    expect(rows.filter((r) => r.id.startsWith("golden "))).toHaveLength(caseNames().length * 2); // each in both source-identity modes
    expect(rows.filter((r) => r.id.startsWith("mesh flannel "))).toHaveLength(72); // 6 nodes × 3 modes × 2 selections × 2 identities
    // The validate bootstrap, and the one an Envoy runs with against `aether-xds serve` (--ads).
    expect(rows.filter((r) => r.id.startsWith("cli ")).map((r) => r.id.includes(" --ads "))).toEqual([false, true]);
    // selector mode needs the 1.38 certificate selector; sockets mode runs on 1.37.
    for (const row of rows) expect(row.floor).toBe(/ selector| sourceIdentity=selector|^cli /.test(row.id) ? "1.38" : "1.37");
  });

  test("each row's bootstrap carries its assignments as STATIC check clusters, and the emitted clusters unchanged", () => {
    const bootstrap = bootstrapWithAssignments(result) as any;
    const checks = bootstrap.static_resources.clusters.filter((c: any) => c.name.startsWith(EDS_CHECK_PREFIX));
    expect(checks.map((c: any) => c.load_assignment)).toEqual(assignments);
    expect(bootstrap.static_resources.clusters.filter((c: any) => !c.name.startsWith(EDS_CHECK_PREFIX))).toEqual(rendered.static_resources.clusters);
  });
});

describe("Envoy's rejection, trimmed", () => {
  test("a proto-constraint failure keeps the reason, drops the config dump, names the cluster", () => {
    const output = [
      "[2026-12-01 05:08:41.518][21182][critical][main] [source/server/config_validation/server.cc:76] error initializing configuration 'x.json': goo.gle/debugonly  ",
      "node {",
      '  id: "east/node-1"',
      "}",
      ": Proto constraint validation failed (BootstrapValidationError.StaticResources: embedded message failed validation | caused by StaticResourcesValidationError.Clusters[1]: embedded message failed validation | caused by MatchMapValidationError.Map: value must contain at least 1 pair(s))",
    ].join("\n");
    const message = trimEnvoyMessage(output, { static_resources: { clusters: [{ name: "a" }, { name: "checkout:8080" }] } });
    expect(message).toBe(
      'Proto constraint validation failed (BootstrapValidationError.StaticResources: embedded message failed validation | caused by StaticResourcesValidationError.Clusters[1] (cluster "checkout:8080"): embedded message failed validation | caused by MatchMapValidationError.Map: value must contain at least 1 pair(s))',
    );
  });

  test("a one-line error is kept as it is; without log lines, the tail of the output", () => {
    const line =
      "[2026-12-01 05:08:41.804][21188][critical][main] [source/server/config_validation/server.cc:76] error initializing configuration 'x.json': error adding listener '0.0.0.0:15008': filter chain 'dup' has the same matching rules defined as 'port_8080'";
    expect(trimEnvoyMessage(`${line}\n`)).toBe("error adding listener '0.0.0.0:15008': filter chain 'dup' has the same matching rules defined as 'port_8080'");
    expect(trimEnvoyMessage("Segmentation fault\n(killed after 60000 ms)")).toBe("Segmentation fault\n(killed after 60000 ms)");
  });
});
