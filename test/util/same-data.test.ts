import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { sameData } from "../../src/util/same-data.js";

/** JSON values from a tiny alphabet, so two drawn independently are often equal, or nearly. */
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(0, 1, "a", "b", true, null),
    fc.array(tie("value"), { maxLength: 2 }),
    fc.dictionary(fc.constantFrom("x", "y"), tie("value"), { maxKeys: 2 }),
  ),
}));

describe("sameData", () => {
  test("is JSON text equality on JSON values: arrays item by item, objects key by key in order", () => {
    let equal = 0;
    fc.assert(
      fc.property(value, value, (a, b) => {
        const expected = JSON.stringify(a) === JSON.stringify(b);
        if (expected) equal++;
        expect(sameData(a, b)).toBe(expected);
        expect(sameData(a, structuredClone(a))).toBe(true);
      }),
      { numRuns: 2000, seed: 424242 },
    );
    expect(equal).toBeGreaterThan(50);
  });

  test("tells apart objects with the same entries in another order, and arrays with other items", () => {
    expect(sameData({ x: 1, y: [1, "a"] }, { x: 1, y: [1, "a"] })).toBe(true);
    expect(sameData({ x: 1, y: 2 }, { y: 2, x: 1 })).toBe(false);
    expect(sameData([1, 2], [2, 1])).toBe(false);
    expect(sameData({ x: [] }, { x: {} })).toBe(false);
  });
});
