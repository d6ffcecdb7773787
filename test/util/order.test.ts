import { expect, test } from "vitest";
import { compareIps, indexOfSorted } from "../../src/util/order.js";

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

test("indexOfSorted finds a key by binary search, and -1 for one that is absent", () => {
  const list = ["a", "c", "e", "g"].map((key) => ({ key }));
  const at = (key: string) => indexOfSorted(list, key, (item) => item.key);
  expect(["a", "c", "e", "g"].map(at)).toEqual([0, 1, 2, 3]);
  expect(["", "b", "f", "h"].map(at)).toEqual([-1, -1, -1, -1]);
  expect(indexOfSorted([], "a", (item: string) => item)).toBe(-1);
});
