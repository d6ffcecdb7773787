import { describe, expect, test } from "vitest";
import {
  appClusterName,
  identityDigest,
  inboundListenerName,
  ingressClusterName,
  isDnsLabel,
  nodeSpiffeId,
  outboundClusterName,
  parseAppClusterName,
  parseInboundListenerName,
  parseIngressClusterName,
  parseOutboundClusterName,
  parseServiceKey,
  parseSocketName,
  parseSubClusterName,
  parseTunnelChainName,
  parseWaypointSni,
  serviceSpiffeId,
  socketName,
  structuredSniProblem,
  subClusterName,
  tunnelChainName,
  tunnelServerName,
  waypointSni,
} from "../src/naming.js";

const pay = { namespace: "team-a", service: "pay" };

describe("resource names", () => {
  test.each([
    [outboundClusterName("mesh.aether", { ...pay, port: 8080 }), "pay.team-a.mesh.aether:8080"],
    [waypointSni("mesh.aether", { ...pay, port: 8080 }), "8080.pay.team-a.mesh.aether"],
    [tunnelServerName("mesh.aether", pay), "*.pay.team-a.mesh.aether"],
    [tunnelChainName(pay), "ew_pay_team-a"],
    [ingressClusterName(pay), "ew_ingress_pay_team-a"],
    [inboundListenerName({ namespace: "team-a", pod: "pay-7d9f.x" }), "inbound_pay-7d9f.x_team-a"],
    [appClusterName({ namespace: "team-a", pod: "pay-1" }, 9090), "app_pay-1_team-a_9090"],
    [socketName("waypoint", "spiffe://td/ns/a/sa/b"), "waypoint_18da64de9e70b372"],
    [subClusterName("pay.team-a.mesh.aether:8080", "local"), "pay.team-a.mesh.aether:8080|local"],
    [serviceSpiffeId("aether.internal", pay), "spiffe://aether.internal/ns/team-a/sa/pay"],
    [nodeSpiffeId("spiffe://{trustDomain}/k8s/{cluster}/{node}", { trustDomain: "td", cluster: "east", node: "n1" }), "spiffe://td/k8s/east/n1"],
  ])("%s", (actual, expected) => expect(actual).toBe(expected));
});

describe("parsers invert the builders", () => {
  test("outbound cluster", () => {
    expect(parseOutboundClusterName("pay.team-a.mesh.aether:8080")).toEqual({ ...pay, meshDomain: "mesh.aether", port: 8080 });
    expect(parseOutboundClusterName("pay.team-a.mesh.aether:0")).toBeUndefined();
    expect(parseOutboundClusterName("pay.team-a.mesh.aether")).toBeUndefined();
  });
  test("waypoint SNI needs exactly port.svc.ns before the mesh domain", () => {
    expect(parseWaypointSni("8080.pay.team-a.mesh.aether", "mesh.aether")).toEqual({ ...pay, port: 8080 });
    expect(parseWaypointSni("x.8080.pay.team-a.mesh.aether", "mesh.aether")).toBeUndefined();
    expect(parseWaypointSni("8080.pay.team-a.other", "mesh.aether")).toBeUndefined();
    expect(parseWaypointSni("99999.pay.team-a.mesh.aether", "mesh.aether")).toBeUndefined();
  });
  test("underscore-separated names split unambiguously (labels never contain '_')", () => {
    expect(parseTunnelChainName("ew_pay_team-a")).toEqual(pay);
    expect(parseIngressClusterName("ew_ingress_pay_team-a")).toEqual(pay);
    expect(parseTunnelChainName("ew_ingress_pay_team-a")).toBeUndefined();
    expect(parseTunnelChainName(tunnelChainName(pay, 9090))).toEqual({ ...pay, port: 9090 });
    expect(parseIngressClusterName(ingressClusterName(pay, 9090))).toEqual({ ...pay, port: 9090 });
    expect(ingressClusterName(pay, 9090)).toBe("ew_ingress_pay_team-a_9090");
    expect(parseInboundListenerName("inbound_pay-7d9f.x_team-a")).toEqual({ pod: "pay-7d9f.x", namespace: "team-a" });
    expect(parseAppClusterName("app_pay-1_team-a_9090")).toEqual({ pod: "pay-1", namespace: "team-a", port: 9090 });
  });
  test("socket and sub-cluster names", () => {
    const name = socketName("local", "spiffe://td/ns/a/sa/b");
    expect(parseSocketName(name)).toEqual({ variant: "local", digest: identityDigest("spiffe://td/ns/a/sa/b") });
    expect(name).not.toMatch(/[:/.|]/);
    expect(socketName("local", "spiffe://td/ns/a/sa/c")).not.toBe(name);
    expect(parseSocketName("other_0123456789abcdef")).toBeUndefined();
    expect(parseSocketName("local|spiffe://td/ns/a/sa/b")).toBeUndefined();
    expect(parseSubClusterName("pay.team-a.mesh.aether:8080|waypoint")).toEqual({ clusterName: "pay.team-a.mesh.aether:8080", variant: "waypoint" });
  });
  test("service keys are two DNS labels", () => {
    expect(parseServiceKey("team-a/pay")).toEqual(pay);
    expect(parseServiceKey("Team-A/pay")).toBeUndefined();
    expect(parseServiceKey("team-a/pay/x")).toBeUndefined();
  });
});

describe("structured SNI limits", () => {
  test("a label over 63 characters is refused", () => {
    expect(isDnsLabel("a".repeat(63))).toBe(true);
    expect(isDnsLabel("a".repeat(64))).toBe(false);
  });
  test("an SNI over 255 bytes is refused, counting the longest port", () => {
    const domain = Array.from({ length: 3 }, () => "d".repeat(60)).join(".");
    expect(structuredSniProblem(domain, { namespace: "n".repeat(20), service: "s".repeat(20) })).toBeUndefined();
    expect(structuredSniProblem(domain, { namespace: "n".repeat(40), service: "s".repeat(40) })).toMatch(/over the 255-byte limit/);
  });
});
