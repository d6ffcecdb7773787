import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test, vi } from "vitest";
import { parse as parseYaml } from "yaml";
import { progressLine } from "../src/cli/args.js";
import { socketName } from "../src/naming.js";
import { runCli } from "./support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "aether-cli-"));
const MESH = "testdata/flannel/mesh.yaml";

describe("aether-xds compile", () => {
  test("prints the node's resources as YAML, Anys unpacked", () => {
    const { code, stdout } = runCli(["compile", "--snapshot", MESH, "--node", "east/node-1", "--mode", "cross-cluster"]);
    expect(code).toBe(0);
    const document = parseYaml(stdout);
    expect(Object.keys(document)).toEqual(["clusters", "endpoints", "listeners", "diagnostics"]);
    expect(document.clusters.map((c: any) => c.name)).toContain("checkout.team-a.mesh.aether:8080");
    expect(document.listeners[0]["@type"]).toBe("type.googleapis.com/envoy.config.listener.v3.Listener");
    expect(stdout).toContain("sni: 8080.checkout.team-a.mesh.aether");
  });

  test("--format json --out DIR writes one JSON array of @type objects per kind", () => {
    const out = join(scratch, "east-node-1");
    const { code, stdout } = runCli(["compile", "--snapshot", MESH, "--node", "east/node-1", "--mode", "always", "--format", "json", "--out", out]);
    expect(code).toBe(0);
    expect(stdout).toContain(`wrote ${join(out, "clusters.json")}`);
    for (const kind of ["clusters", "endpoints", "listeners", "diagnostics"]) {
      const list = JSON.parse(readFileSync(join(out, `${kind}.json`), "utf8"));
      expect(Array.isArray(list)).toBe(true);
      if (kind !== "diagnostics") expect(list.every((r: any) => r["@type"].startsWith("type.googleapis.com/envoy."))).toBe(true);
    }
  });

  test("--out with yaml writes .yaml files", () => {
    const out = join(scratch, "yaml-out");
    expect(runCli(["compile", "--snapshot", MESH, "--node", "west/node-2", "--out", out]).code).toBe(0);
    expect(existsSync(join(out, "listeners.yaml"))).toBe(true);
  });

  test("--source-identity sockets with --envoy-version 1.37 emits per-source sockets with a pool per downstream connection", () => {
    const args = ["compile", "--snapshot", MESH, "--node", "east/node-1", "--source-identity", "sockets", "--envoy-version", "1.37"];
    const { code, stdout } = runCli(args);
    expect(code).toBe(0);
    expect(stdout).toContain(`name: ${socketName("local", "spiffe://aether.internal/ns/team-a/sa/frontend")}`);
    expect(stdout).toContain("connection_pool_per_downstream_connection: true");
  });

  test("--socket-selection aggregate emits aggregate clusters", () => {
    const { stdout } = runCli(["compile", "--snapshot", MESH, "--node", "east/node-1", "--mode", "cross-cluster", "--socket-selection", "aggregate"]);
    expect(stdout).toContain("name: envoy.clusters.aggregate");
  });

  test("settings flags: the preset, a circuit-breaker threshold and the access log", () => {
    const compile = (...flags: string[]) => runCli(["compile", "--snapshot", MESH, "--node", "east/node-1", "--format", "json", ...flags]);
    const production = compile();
    expect(production.stdout).toContain('"connect_timeout": "2s"');
    const { code, stdout } = compile("--settings", "envoy-defaults", "--max-connections", "100", "--access-log", "grpc:als");
    expect(code).toBe(0);
    expect(stdout).not.toContain("connect_timeout");
    expect(stdout).toContain('"max_connections": 100');
    expect(stdout).toContain('"cluster_name": "als"');
    const bad = compile("--connect-timeout-ms", "0");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--connect-timeout-ms"); // the flag typed, not the library's settings.connectTimeoutMs
  });
});

describe("aether-xds check", () => {
  test("passes on the example mesh and prints the matrix", () => {
    const { code, stdout } = runCli(["check", "--snapshot", MESH, "--mode", "cross-cluster"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^mesh check \(cross-cluster\): 19 paths — 19 ok, 0 failed/);
    expect(stdout).toMatch(/east\/team-a\/frontend-7d9f-abcde +✓ +✓ +✓/);
    expect(stdout).toContain("OK: every path lands on a pod of its service with end-to-end mTLS");
  });

  test("exits 1 when a path fails: --mode off on the example's isolated pod network dials west pod IPs from east", () => {
    const { code, stdout } = runCli(["check", "--snapshot", MESH, "--mode", "off"]);
    expect(code).toBe(1);
    expect(stdout).toMatch(
      /FAILED \[POD_IP_NOT_ROUTABLE\] a pod IP that is not routable from the source's cluster: 10\.244\.1\.8:15008 \(priority \d\) from cluster east/,
    );
  });
});

describe("aether-xds explain", () => {
  test("traces one connection", () => {
    const { code, stdout } = runCli([
      "explain",
      "--snapshot",
      MESH,
      "--from",
      "west/team-a/frontend-84c2-fghij",
      "--to",
      "team-b/payments:8443",
      "--mode",
      "cross-cluster",
    ]);
    expect(code).toBe(0);
    expect(stdout.split("\n")[0]).toBe("west/team-a/frontend-84c2-fghij → team-b/payments:8443 (payments.team-b.mesh.aether:8443): ok");
    expect(stdout).toContain("lands on west/team-b/payments-2b7c-q2 directly");
  });
});

describe("progress on stderr", () => {
  const explain = ["explain", "--snapshot", MESH, "--from", "east/team-a/frontend-7d9f-abcde", "--to", "team-a/checkout:8080", "--mode", "cross-cluster"];

  test("none when stderr is not a terminal and --progress is not given", () => {
    expect(runCli(["check", "--snapshot", MESH]).stderr).toBe("");
    expect(runCli(explain).stderr).toBe("");
  });

  test("check --progress: nodes compiled / total, then paths replayed / total, stdout unchanged", () => {
    // cross-cluster: the off mode fails on the example's isolated pod network (POD_IP_NOT_ROUTABLE).
    const plain = runCli(["check", "--snapshot", MESH, "--mode", "cross-cluster"]);
    const { code, stdout, stderr } = runCli(["check", "--snapshot", MESH, "--mode", "cross-cluster", "--progress"]);
    expect(code).toBe(0);
    expect(stdout).toBe(plain.stdout);
    const lines = stderr.trimEnd().split("\n");
    expect(lines.slice(0, 7)).toEqual([1, 2, 3, 4, 5, 6, 7].map((done) => `compiling nodes ${done}/7`));
    // The report's own count of paths ("mesh check (...): N paths — ...").
    const paths = Number(/: (\d+) paths — /.exec(stdout)![1]);
    const replayed = lines.slice(7).map((line) => /^replaying paths (\d+)\/(\d+)$/.exec(line)!);
    expect(replayed.length).toBeGreaterThan(1);
    expect(replayed.every((match) => Number(match[2]) === paths)).toBe(true);
    // At most one line per 5 % of the paths (and the last), ending with every path replayed.
    expect(replayed.length).toBeLessThanOrEqual(21);
    expect(replayed.at(-1)![1]).toBe(String(paths));
  });

  test("a progress line each time the count passes another 5 % of the total, however it steps, and one at the end", () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((text) => written.push(String(text)) > 0);
    try {
      const line = progressLine("replaying paths", true)!;
      for (let done = 37; done < 1000; done += 37) line(done, 1000);
      line(1000, 1000);
    } finally {
      write.mockRestore();
    }
    // The first count past each multiple of 50 (37 × 2 = 74 passes 50, 37 × 3 = 111 passes 100, ...), then the total.
    const passing = Array.from({ length: 19 }, (_, i) => Math.ceil((50 * (i + 1)) / 37) * 37);
    expect(written).toEqual([...passing, 1000].map((done) => `replaying paths ${done}/1000\n`));
  });

  test("explain --progress: one line per node compiled, only the path's nodes", () => {
    const { code, stdout, stderr } = runCli([...explain, "--progress"]);
    expect(code).toBe(0);
    expect(stdout).toBe(runCli(explain).stdout);
    // The source's node and the destination pod's, of the mesh's 7.
    expect(stderr).toBe("nodes compiled: 1 (of 7 in the mesh)\nnodes compiled: 2 (of 7 in the mesh)\n");
  });
});

describe("aether-xds bootstrap", () => {
  test("prints a bootstrap with the node's resources and an ADS stub", () => {
    const { code, stdout } = runCli(["bootstrap", "--snapshot", MESH, "--node", "east/node-1", "--mode", "cross-cluster", "--xds-address", "10.0.0.5:18001"]);
    expect(code).toBe(0);
    const bootstrap = parseYaml(stdout);
    expect(bootstrap.node).toEqual({ id: "east/node-1", cluster: "east", locality: { region: "eu-west-1", zone: "eu-west-1a" } });
    expect(bootstrap.static_resources.listeners.map((l: any) => l.name)).toEqual([
      "capture_frontend-7d9f-abcde_team-a",
      "ew_tunnel",
      "inbound_frontend-7d9f-abcde_team-a",
      "outbound_frontend-7d9f-abcde_team-a",
    ]);
    const stub = bootstrap.static_resources.clusters.find((c: any) => c.name === "xds_cluster");
    expect(stub.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address).toEqual({ address: "10.0.0.5", port_value: 18001 });
    expect(bootstrap.dynamic_resources.ads_config.grpc_services[0].envoy_grpc.cluster_name).toBe("xds_cluster");
  });

  test("--ads prints the bootstrap to run an Envoy with: CDS and LDS from the ADS server, SDS from the agent", () => {
    const args = ["bootstrap", "--snapshot", MESH, "--node", "east/node-1", "--ads", "--xds-address", "10.0.0.5:18000", "--sds-address", "127.0.0.1:8081"];
    const { code, stdout } = runCli(args);
    expect(code).toBe(0);
    const bootstrap = parseYaml(stdout);
    expect(bootstrap.static_resources.listeners).toBeUndefined();
    expect(
      bootstrap.static_resources.clusters.map((c: any) => [c.name, c.load_assignment.endpoints[0].lb_endpoints[0].endpoint.address.socket_address]),
    ).toEqual([
      ["sds_grpc", { address: "127.0.0.1", port_value: 8081 }],
      ["xds_cluster", { address: "10.0.0.5", port_value: 18000 }],
    ]);
    expect(bootstrap.dynamic_resources).toMatchObject({
      cds_config: { ads: {}, resource_api_version: "V3" },
      lds_config: { ads: {}, resource_api_version: "V3" },
    });
  });
});

describe("aether-xds demo (npm start)", () => {
  test("compiles a node per cluster, writes the YAML and runs the mesh check", () => {
    const out = join(scratch, "demo");
    const { code, stdout } = runCli(["demo", "--out", out]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^east\/node-1 \(10\.10\.0\.11, waypoint cross-cluster\)/);
    expect(stdout).toContain("    priority 2: 10.20.0.12:15009 via west/node-2, HEALTHY, weight 1536");
    expect(stdout).toMatch(/\nwest\/node-1 \(10\.20\.0\.11, waypoint cross-cluster\)/);
    expect(stdout).toContain("OK: every path lands on a pod of its service with end-to-end mTLS");
    expect(existsSync(join(out, "west-node-1", "endpoints.yaml"))).toBe(true);
  });
});

describe("aether-xds inspect", () => {
  test("summarizes the bundled example", () => {
    const { code, stdout } = runCli(["inspect", "--snapshot", MESH]);
    expect(code).toBe(0);
    expect(stdout).toContain("mesh mesh.aether, trust shared (aether.internal)");
    expect(stdout).toMatch(/west +3 nodes \(\+1 unlisted\), 6 endpoints/);
    expect(stdout).toMatch(/team-a\/checkout +ports 8080\/http 9090\/tcp; endpoints east 2, west 2/);
    expect(stdout).toContain("west/team-b/payments-2b7c-q3");
  });
});

describe("help and errors", () => {
  test.each(["compile", "check", "explain", "bootstrap", "inspect", "demo", "serve"])("%s --help describes the command", (command) => {
    const { code, stdout } = runCli([command, "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(new RegExp(`^usage: aether-xds ${command}`));
  });

  test("--help lists every command", () => {
    const { code, stdout } = runCli(["--help"]);
    expect(code).toBe(0);
    for (const command of ["compile", "check", "explain", "bootstrap", "inspect", "demo", "serve"]) expect(stdout).toMatch(new RegExp(`\\n  ${command} +\\S`));
  });

  test("an invalid mesh file exits 2 with path-qualified problems and no stack trace", () => {
    const file = join(scratch, "bad.json");
    writeFileSync(
      file,
      JSON.stringify({
        mesh: { meshDomain: "m", trust: { mode: "shared", trustDomain: "td" } },
        services: { "a/b": [{ ip: "x", clusterName: "c", port: 1 }] },
      }),
    );
    const { code, stderr } = runCli(["check", "--snapshot", file]);
    expect(code).toBe(2);
    expect(stderr).toBe('aether-xds: invalid snapshot:\n  services["a/b"][0].ip: not an IPv4/IPv6 address\n');
  });

  test.each([
    [["inspect", "--snapshot", "/nonexistent/mesh.yaml"], "aether-xds: cannot read /nonexistent/mesh.yaml: ENOENT\n"],
    [["inspect", "--snapshots", "x"], /^aether-xds: Unknown option '--snapshots'/],
    [["inspect"], "aether-xds: --snapshot FILE is required\n"],
    [["frobnicate"], 'aether-xds: unknown command "frobnicate" (try --help)\n'],
    [["compile", "--snapshot", MESH, "--node", "east"], "aether-xds: --node must be CLUSTER/NODE\n"],
    [["compile", "--snapshot", MESH, "--node", "east/node-9"], "aether-xds: invalid node:\n  (root): no node east/node-9 in the snapshot\n"],
    [["compile", "--snapshot", MESH, "--node", "east/node-1", "--mode", "sometimes"], /^aether-xds: invalid options:\n {2}--mode: /],
    [["compile", "--snapshot", MESH, "--node", "east/node-1", "--format", "xml"], "aether-xds: --format must be yaml or json\n"],
    [
      ["compile", "--snapshot", MESH, "--node", "east/node-1", "--tunnel-port", "99999"],
      "aether-xds: invalid options:\n  --tunnel-port: not a port: must be an integer 1–65535\n",
    ],
    [["explain", "--snapshot", MESH, "--from", "east/team-a/nope", "--to", "team-a/checkout:8080"], /^aether-xds: --from: no hosted pod east\/team-a\/nope/],
    [
      ["bootstrap", "--snapshot", MESH, "--node", "east/node-1", "--xds-address", "nowhere"],
      "aether-xds: --xds-address must be HOST:PORT (an IP address, [IPv6] or a DNS name, and a port 1–65535)\n",
    ],
    [["compile", "extra", "--snapshot", MESH], /^aether-xds: Unexpected argument 'extra'/],
    [
      ["compile", "--snapshot", MESH, "--node", "east/node-1", "--envoy-version", "1.37"],
      'aether-xds: invalid options:\n  --source-identity: "selector" needs Envoy ≥ 1.38, but --envoy-version is 1.37: raise --envoy-version (or --source-identity "sockets", which runs on 1.37)\n',
    ],
  ])("%j exits 2 with one clear message", (args, expected) => {
    const { code, stderr, stdout } = runCli(args as string[]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    if (typeof expected === "string") expect(stderr).toBe(expected);
    else expect(stderr).toMatch(expected);
    expect(stderr).not.toMatch(/\n {4}at /);
  });
});
