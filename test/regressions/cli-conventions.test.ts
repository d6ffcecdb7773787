/**
 * Hostile and careless input through the command line (issue 11, items 3, 4, 5 and 17): closed
 * pipes and full disks, all-or-nothing --out, uncompilable nodes in inspect and check, and the
 * conventions a user expects of a CLI. Runs the built binary (dist/).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { writeResult } from "../../src/cli/commands.js";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderResult } from "../../src/emit/text.js";
import { localNodeFrom } from "../../src/model/node.js";
import { runCli } from "../support/cli.js";
import { exampleSnapshot, meshDocument, REPO_ROOT } from "../support/fixtures.js";

const scratch = mkdtempSync(join(tmpdir(), "aether-cli-conventions-"));
const MESH = "testdata/flannel/mesh.yaml";
const COMPILE = ["compile", "--snapshot", MESH, "--node", "east/node-1"];

function shell(command: string) {
  const result = spawnSync("sh", ["-c", command], { cwd: REPO_ROOT, encoding: "utf8", timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("3. output that cannot be written", () => {
  test("a reader that stops early (| head) ends the command quietly, with the command's exit code", () => {
    // Output well over a pipe's buffer, so the write is still going when head exits.
    const file = join(scratch, "big.json");
    const doc = meshDocument();
    delete doc.dependencies; // every node calls every service
    for (let s = 0; s < 300; s++) {
      doc.services[`team-c/svc-${s}`] = [
        { ip: `10.244.${100 + (s >> 8)}.${s & 255}`, clusterName: "west", ports: [8080, 9090], kubernetesMetadata: { nodeName: "node-3" } },
      ];
    }
    writeFileSync(file, JSON.stringify(doc));
    const command = `node dist/src/cli.js compile --snapshot ${file} --node east/node-1`;
    expect(Number(shell(`${command} 2>/dev/null | wc -c`).stdout.trim())).toBeGreaterThan(1_000_000);
    const { stdout } = spawnSync("bash", ["-c", `${command} 2>${join(scratch, "epipe.err")} | head -c 10 >/dev/null; echo \${PIPESTATUS[0]}`], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    });
    expect(stdout).toBe("0\n");
    expect(readFileSync(join(scratch, "epipe.err"), "utf8")).not.toMatch(/EPIPE|Error|\n {4}at /);
  });

  test.skipIf(!existsSync("/dev/full"))("a full disk is one line on stderr and exit code 2", () => {
    const log = join(scratch, "full-disk.err");
    const { code, stderr } = shell(`node dist/src/cli.js ${COMPILE.join(" ")} >/dev/full 2>${log}; code=$?; grep -v warning ${log}; exit $code`);
    expect(code).toBe(2);
    expect(stderr).toBe("");
    expect(shell(`node dist/src/cli.js ${COMPILE.join(" ")} 2>&1 >/dev/full | grep -v warning`).stdout).toBe("aether-xds: cannot write the output: ENOSPC\n");
  });
});

describe("4. --out is all or nothing", () => {
  test("a failure while writing leaves the previous compile's files as they were, and no temporary files", () => {
    const snapshot = exampleSnapshot();
    const dir = join(scratch, "atomic");
    const first = renderResult(compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1")));
    writeResult(dir, first, "yaml");
    const before = Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), "utf8")]));
    // The third file cannot be written: its temporary name is taken by a directory.
    mkdirSync(join(dir, `listeners.yaml.${process.pid}.tmp`));
    const second = renderResult(compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "always" }));
    expect(() => writeResult(dir, second, "yaml")).toThrow(/^cannot write to .*: EISDIR$/);
    const after = Object.fromEntries(
      readdirSync(dir)
        .filter((name) => !name.endsWith(".tmp"))
        .map((name) => [name, readFileSync(join(dir, name), "utf8")]),
    );
    expect(after).toEqual(before);
    expect(readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([`listeners.yaml.${process.pid}.tmp`]);
  });
});

describe("5. inspect and check on a snapshot that makes a node uncompilable", () => {
  test("inspect exits 2 naming the node, check fails on it instead of a footnote", () => {
    const doc = meshDocument();
    // A valid file whose east/node-1 pod serves the inbound port: that node cannot be compiled.
    doc.services["team-a/frontend"][0].port = 15008;
    const file = join(scratch, "uncompilable.json");
    writeFileSync(file, JSON.stringify(doc));
    const inspect = runCli(["inspect", "--snapshot", file]);
    expect(inspect.code).toBe(2);
    expect(inspect.stderr).toMatch(/^aether-xds: the snapshot makes 1 node\(s\) uncompilable:\n {2}east\/node-1: 15008 is also an application port/);
    const check = runCli(["check", "--snapshot", file, "--mode", "cross-cluster"]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("node east/node-1 FAILED: the snapshot makes it uncompilable: 15008 is also an application port");
    expect(check.stdout).toMatch(/FAILED: 0 path\(s\), 1 node\(s\)\n$/);
  });
});

describe("17. CLI conventions", () => {
  test.each([
    [["--inbound-port", "0x3a98"], 'aether-xds: --inbound-port must be a port number (decimal digits), got "0x3a98"\n'],
    [["--inbound-port", "1e4"], 'aether-xds: --inbound-port must be a port number (decimal digits), got "1e4"\n'],
    [["--node", "east/node-2"], "aether-xds: --node given more than once\n"],
    [["--mode", "sometimes"], /^aether-xds: invalid options:\n {2}--mode: /],
    [["--tunnel-port", "99999"], "aether-xds: invalid options:\n  --tunnel-port: not a port: must be an integer 1–65535\n"],
    [
      ["--envoy-version", "1.37"],
      'aether-xds: invalid options:\n  --source-identity: "selector" needs Envoy ≥ 1.38, but --envoy-version is 1.37: raise --envoy-version (or --source-identity "sockets", which runs on 1.37)\n',
    ],
  ])("compile %j exits 2 naming the flag", (extra, expected) => {
    const { code, stdout, stderr } = runCli([...COMPILE, ...extra]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    if (typeof expected === "string") expect(stderr).toBe(expected);
    else expect(stderr).toMatch(expected);
  });

  test("an --inbound-port equal to a pod's application port is refused naming the flag", () => {
    const { code, stderr } = runCli([...COMPILE, "--inbound-port", "8080"]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      "aether-xds: invalid options:\n  --inbound-port: 8080 is also an application port of pod team-a/frontend-7d9f-abcde on node east/node-1: both bind in the pod's network namespace\n",
    );
  });

  test("bootstrap --xds-address refuses a host that is not an address or a DNS name, accepts [IPv6]:port", () => {
    const bootstrap = ["bootstrap", "--snapshot", MESH, "--node", "east/node-1"];
    expect(runCli([...bootstrap, "--xds-address", "foo bar:80"]).stderr).toBe(
      "aether-xds: --xds-address must be HOST:PORT (an IP address, [IPv6] or a DNS name, and a port 1–65535)\n",
    );
    expect(runCli([...bootstrap, "--xds-address", "fe80::1%eth0:80"]).code).toBe(2);
    const ok = runCli([...bootstrap, "--xds-address", "[fd00::5]:18000"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("address: fd00::5");
  });

  test("explain with a bad --from is a usage error naming the flag (exit 2)", () => {
    const { code, stderr } = runCli(["explain", "--snapshot", MESH, "--from", "east/team-a/nope", "--to", "team-a/checkout:8080"]);
    expect(code).toBe(2);
    expect(stderr).toBe("aether-xds: --from: no hosted pod east/team-a/nope on a compiled node (expected <cluster>/<namespace>/<pod>)\n");
  });

  test("compile -h, help <command> and --version", () => {
    expect(runCli(["compile", "-h"]).stdout).toMatch(/^usage: aether-xds compile/);
    expect(runCli(["help", "check"]).stdout).toMatch(/^usage: aether-xds check/);
    expect(runCli(["help", "nope"]).stderr).toBe('aether-xds: unknown command "nope" (try --help)\n');
    const version = runCli(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`${JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version}\n`);
  });

  test("--snapshot - reads the mesh file from standard input", () => {
    const { code, stdout } = runCli(["compile", "--snapshot", "-", "--node", "east/node-1"], { input: readFileSync(join(REPO_ROOT, MESH), "utf8") });
    expect(code).toBe(0);
    expect(stdout).toBe(runCli(COMPILE).stdout);
  });

  test("a compile's warnings reach stderr, once each, while the output goes to stdout", () => {
    const { code, stderr } = runCli([...COMPILE, "--mode", "off"]);
    expect(code).toBe(0);
    const lines = stderr.trimEnd().split("\n");
    expect(lines).toContain(
      "aether-xds: warning: [ADDRESS_CONFLICT] left out team-a/checkout pod checkout-9a1e-y1 (west, 10.244.1.7): address 10.244.1.7:15008 is already used by pod checkout-5c6b-x1 of cluster east",
    );
    expect(new Set(lines).size).toBe(lines.length);
  });
});
