import { expect, test } from "vitest";
import { compareIps } from "../../src/util/order.js";

test("IPs sort numerically, IPv4 before IPv6", () => {
  const ips = ["10.0.0.10", "fd00::1", "10.0.0.9", "255.255.255.255", "::1", "9.255.255.255", "0.0.0.0", "fd00::1:0", "10.244.1.7"];
  expect(ips.sort(compareIps)).toEqual(["0.0.0.0", "9.255.255.255", "10.0.0.9", "10.0.0.10", "10.244.1.7", "255.255.255.255", "::1", "fd00::1", "fd00::1:0"]);
});
