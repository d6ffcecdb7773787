import { expect, test } from "vitest";
import { localNodeFrom } from "../../src/model/node.js";
import { socketName } from "../../src/naming.js";
import { explainService, formatServiceExplanation } from "../../src/verify/explain-service.js";
import { exampleSnapshot } from "../support/fixtures.js";

const ENDPOINTS = [
  "    priority 0: 10.244.0.8:15008 direct, DRAINING, weight 1024 (east/payments-6f8d-p1)",
  "    priority 1: 10.244.2.4:15008 direct, HEALTHY, weight 1024 (east/payments-6f8d-p2)",
  "    priority 2: 10.20.0.11:15009 via waypoint west/node-1, UNHEALTHY, weight 1024 (west/payments-2b7c-q1)",
  "    priority 3: 10.20.0.13:15009 via waypoint west/node-3, HEALTHY, weight 1024 (west/payments-2b7c-q2)",
  "    [NO_NODE_IP] left out team-b/payments pod payments-2b7c-q3 (west, 10.244.3.6): node west/node-4 has no known IP: a remote pod IP is not routable",
];
const [FRONTEND, PAYMENTS, NODE] = ["ns/team-a/sa/frontend", "ns/team-b/sa/payments", "ns/aether-system/sa/aether-node"].map(
  (path) => `spiffe://aether.internal/${path}`,
) as [string, string, string];

function explained(sourceIdentity: "selector" | "sockets"): string {
  const snapshot = exampleSnapshot();
  const node = localNodeFrom(snapshot, "east", "node-1");
  return formatServiceExplanation(explainService(snapshot, node, { eastWestWaypoint: "cross-cluster", sourceIdentity }, "team-b/payments"));
}

test("explains where traffic for a service goes from a node, and why: every source's certificate over the two shared sockets", () => {
  expect(explained("selector")).toBe(
    [
      "team-b/payments as seen from east/node-1:",
      "  port 8443 → cluster payments.team-b.mesh.aether:8443",
      `    from /var/run/netns/cni-3f1a9c: certificate ${FRONTEND}, direct socket local, waypoint socket waypoint`,
      `    from /var/run/netns/cni-9e0c41: certificate ${PAYMENTS}, direct socket local, waypoint socket waypoint`,
      `    from (any other): certificate ${NODE}, direct socket local, waypoint socket waypoint`,
      ...ENDPOINTS,
    ].join("\n"),
  );
});

test("in sockets mode each source has sockets of its own", () => {
  expect(explained("sockets").split("\n").slice(2, 5)).toEqual([
    `    from /var/run/netns/cni-3f1a9c: certificate ${FRONTEND}, direct socket ${socketName("local", FRONTEND)}, waypoint socket ${socketName("waypoint", FRONTEND)}`,
    `    from /var/run/netns/cni-9e0c41: certificate ${PAYMENTS}, direct socket ${socketName("local", PAYMENTS)}, waypoint socket ${socketName("waypoint", PAYMENTS)}`,
    `    from (any other): certificate ${NODE}, direct socket ${socketName("local", NODE)}, waypoint socket ${socketName("waypoint", NODE)}`,
  ]);
});

test("an unknown service is an input error", () => {
  const snapshot = exampleSnapshot();
  expect(() => explainService(snapshot, localNodeFrom(snapshot, "east", "node-1"), {}, "team-z/nope")).toThrow(/no service team-z\/nope/);
});
