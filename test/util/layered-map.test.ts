import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { LayeredMap } from "../../src/util/layered-map.js";

const base = new Map(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));

describe("LayeredMap", () => {
  test("reads through its changes to the base, and leaves the base as it was", () => {
    const map = LayeredMap.of(
      base,
      new Map<string, number | undefined>([
        ["k1", -1],
        ["k2", undefined],
        ["new", 7],
      ]),
    );
    expect(map).toBeInstanceOf(LayeredMap);
    expect([map.get("k1"), map.get("k2"), map.get("k3"), map.get("new"), map.get("absent")]).toEqual([-1, undefined, 3, 7, undefined]);
    expect([map.has("k1"), map.has("k2"), map.has("new"), map.has("absent")]).toEqual([true, false, true, false]);
    expect(map.size).toBe(100);
    expect(base.get("k1")).toBe(1);
    expect(base.has("k2")).toBe(true);
  });

  test("iterates in the base's order, changed values in place, then new keys", () => {
    const small = new Map([
      ["a", 1],
      ["b", 2],
      ["c", 3],
      ["d", 4],
      ["e", 5],
      ["f", 6],
      ["g", 7],
      ["h", 8],
      ["i", 9],
    ]);
    const map = LayeredMap.of(
      small,
      new Map<string, number | undefined>([
        ["z", 26],
        ["b", 20],
        ["c", undefined],
      ]),
    );
    expect([...map]).toEqual([
      ["a", 1],
      ["b", 20],
      ["d", 4],
      ["e", 5],
      ["f", 6],
      ["g", 7],
      ["h", 8],
      ["i", 9],
      ["z", 26],
    ]);
    expect([...map.keys()]).toEqual(["a", "b", "d", "e", "f", "g", "h", "i", "z"]);
    expect([...map.values()]).toEqual([1, 20, 4, 5, 6, 7, 8, 9, 26]);
    const seen: string[] = [];
    map.forEach((value, key, self) => {
      seen.push(`${key}=${value}:${self === map}`);
    });
    expect(seen[1]).toBe("b=20:true");
    expect(map.size).toBe(9);
  });

  test("removing an absent key or setting nothing changes nothing", () => {
    expect(LayeredMap.of(base, new Map())).toBe(base);
    expect(LayeredMap.of(base, new Map([["absent", undefined]])).size).toBe(100);
  });

  test("flattens into a plain Map when the changes are large or the layers deep, with the same contents", () => {
    const large = LayeredMap.of(base, new Map(Array.from({ length: 20 }, (_, i) => [`k${i}`, i * 10] as [string, number])));
    expect(large).toBeInstanceOf(Map);
    expect(large.get("k3")).toBe(30);
    let layered: ReadonlyMap<string, number> = base;
    const expected = new Map(base);
    for (let round = 0; round < 20; round++) {
      layered = LayeredMap.of(layered, new Map([[`k${round}`, round + 1000]]));
      expected.set(`k${round}`, round + 1000);
    }
    expect([...layered]).toEqual([...expected]);
    expect(layered.size).toBe(100);
  });

  test("names the keys that may differ between two maps layered on one another or on one base, and nothing for others", () => {
    const next = LayeredMap.of(base, new Map([["k1", -1]]));
    const after = LayeredMap.of(next, new Map([["k2", undefined]]));
    const sibling = LayeredMap.of(base, new Map([["k3", -3]]));
    expect(LayeredMap.keysChangedBetween(base, next)).toEqual(["k1"]);
    expect(LayeredMap.keysChangedBetween(next, base)).toEqual(["k1"]);
    expect(LayeredMap.keysChangedBetween(next, after)).toEqual(["k2"]);
    expect(LayeredMap.keysChangedBetween(next, sibling)).toEqual(["k1", "k3"]);
    expect(LayeredMap.keysChangedBetween(next, next)).toEqual([]);
    // Two layers apart, or a copy: not related closely enough to say.
    expect(LayeredMap.keysChangedBetween(base, after)).toBeUndefined();
    expect(LayeredMap.keysChangedBetween(new Map(base), next)).toBeUndefined();
  });

  test("after any series of updates, reads and iterates as a Map given the same sets and deletes, layered, flattened or read flat", () => {
    // Few keys, so updates change, remove and add back the same ones; the reads make some layers copy themselves flat.
    const key = fc.constantFrom("a", "b", "c", "d", "e", "f", "g", "h", "i", "j");
    const update = fc.array(fc.tuple(key, fc.option(fc.integer({ min: 0, max: 9 }), { nil: undefined })), { maxLength: 3 });
    fc.assert(
      fc.property(fc.array(fc.tuple(update, fc.nat(40)), { maxLength: 25 }), (updates) => {
        const expected = new Map(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"].map((k, i) => [k, i]));
        let layered: ReadonlyMap<string, number> = new Map(expected);
        for (const [changes, reads] of updates) {
          const layer = new Map(changes);
          layered = LayeredMap.of(layered, layer);
          for (const [k, value] of layer) {
            if (value === undefined) expected.delete(k);
            else expected.set(k, value);
          }
          for (let i = 0; i < reads; i++) expect(layered.get("abcdefghij"[i % 10]!)).toBe(expected.get("abcdefghij"[i % 10]!));
          expect([...layered]).toEqual([...expected]);
          expect(layered.size).toBe(expected.size);
        }
      }),
      { numRuns: 500, seed: 424242 },
    );
  });
});
