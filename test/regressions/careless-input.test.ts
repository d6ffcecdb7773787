/**
 * Hostile and careless input, round two (issue 11): each class of input that crashed the library
 * or produced wrong output with exit 0, as a path-qualified error or diagnostic instead.
 */
import { describe, expect, test } from "vitest";
import { isInputError } from "../../src/errors.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { meshDocument } from "../support/fixtures.js";

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
