import { expect, test } from "vitest";
import { compareIps } from "../../src/util/order.js";

test("IPs sort numerically, IPv4 before IPv6", () => {
  // Addresses whose numeric values have 8, 9 and 10 digits, so text order alone would be wrong.
  const ips = [
    "10.0.0.10",
    "fd00::1",
    "100.0.0.0",
    "10.0.0.9",
    "255.255.255.255",
    "::1",
    "20.0.0.0",
    "9.255.255.255",
    "0.0.0.0",
    "1.0.0.0",
    "fd00::1:0",
    "10.244.1.7",
  ];
  expect(ips.sort(compareIps)).toEqual([
    "0.0.0.0",
    "1.0.0.0",
    "9.255.255.255",
    "10.0.0.9",
    "10.0.0.10",
    "10.244.1.7",
    "20.0.0.0",
    "100.0.0.0",
    "255.255.255.255",
    "::1",
    "fd00::1",
    "fd00::1:0",
  ]);
});
