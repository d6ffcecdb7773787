import { expect, test } from "vitest";
import { localNodeFrom } from "../../src/model/node.js";
import { explainService, formatServiceExplanation } from "../../src/verify/explain-service.js";
import { exampleSnapshot } from "../support/fixtures.js";

test("explains where traffic for a service goes from a node, and why", () => {
  const snapshot = exampleSnapshot();
  const explanation = explainService(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster" }, "team-b/payments");
  expect(formatServiceExplanation(explanation)).toBe(
    [
      "team-b/payments as seen from east/node-1:",
      "  port 8443 → cluster payments.team-b.mesh.aether:8443",
      "    from /var/run/netns/cni-3f1a9c: direct socket local|spiffe://aether.internal/ns/team-a/sa/frontend, waypoint socket waypoint|spiffe://aether.internal/ns/team-a/sa/frontend",
      "    from /var/run/netns/cni-9e0c41: direct socket local|spiffe://aether.internal/ns/team-b/sa/payments, waypoint socket waypoint|spiffe://aether.internal/ns/team-b/sa/payments",
      "    from (any other): direct socket local|spiffe://aether.internal/ns/aether-system/sa/aether-node, waypoint socket waypoint|spiffe://aether.internal/ns/aether-system/sa/aether-node",
      "    priority 0: 10.244.0.8:15008 direct, DRAINING, weight 1024 (east/payments-6f8d-p1)",
      "    priority 1: 10.244.2.4:15008 direct, HEALTHY, weight 1024 (east/payments-6f8d-p2)",
      "    priority 2: 10.20.0.11:15009 via waypoint west/node-1, UNHEALTHY, weight 1024 (west/payments-2b7c-q1)",
      "    priority 3: 10.20.0.13:15009 via waypoint west/node-3, HEALTHY, weight 1024 (west/payments-2b7c-q2)",
      "    [NO_NODE_IP] left out team-b/payments pod payments-2b7c-q3 (west, 10.244.3.6): node west/node-4 has no known IP: a remote pod IP is not routable",
    ].join("\n"),
  );
});

test("an unknown service is an input error", () => {
  const snapshot = exampleSnapshot();
  expect(() => explainService(snapshot, localNodeFrom(snapshot, "east", "node-1"), {}, "team-z/nope")).toThrow(/no service team-z\/nope/);
});
