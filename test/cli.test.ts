import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { runCli } from "./support/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "aether-cli-"));

describe("aether-xds inspect", () => {
  test("summarizes the bundled example", () => {
    const { code, stdout } = runCli(["inspect", "--snapshot", "testdata/flannel/mesh.yaml"]);
    expect(code).toBe(0);
    expect(stdout).toContain("mesh mesh.aether, trust shared (aether.internal)");
    expect(stdout).toMatch(/west +3 nodes \(\+1 unlisted\), 6 endpoints/);
    expect(stdout).toMatch(/team-a\/checkout +ports 8080\/http2 9090\/tcp; endpoints east 2, west 2/);
    expect(stdout).toContain("west/team-b/payments-2b7c-q3");
  });

  test("--help describes the command", () => {
    const { code, stdout } = runCli(["inspect", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: aether-xds inspect --snapshot FILE/);
  });

  test("an invalid mesh file exits 2 with path-qualified problems and no stack trace", () => {
    const file = join(scratch, "bad.json");
    writeFileSync(file, JSON.stringify({ mesh: { meshDomain: "m", trust: { mode: "shared", trustDomain: "td" } }, services: { "a/b": [{ ip: "x", clusterName: "c", port: 1 }] } }));
    const { code, stderr } = runCli(["inspect", "--snapshot", file]);
    expect(code).toBe(2);
    expect(stderr).toBe('aether-xds: invalid snapshot:\n  services["a/b"][0].ip: not an IPv4/IPv6 address\n');
  });

  test.each([
    [["inspect", "--snapshot", "/nonexistent/mesh.yaml"], "aether-xds: cannot read /nonexistent/mesh.yaml: ENOENT\n"],
    [["inspect", "--snapshots", "x"], /^aether-xds: Unknown option '--snapshots'/],
    [["inspect"], "aether-xds: inspect needs --snapshot FILE\n"],
    [["frobnicate"], 'aether-xds: unknown command "frobnicate"\n'],
  ])("%j exits 2 with one clear line", (args, expected) => {
    const { code, stderr, stdout } = runCli(args);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    if (typeof expected === "string") expect(stderr).toBe(expected);
    else expect(stderr).toMatch(expected);
    expect(stderr).not.toMatch(/\n {4}at /);
  });
});
