import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { CacheSlot, SlotCache, singleEntrySlot } from "../../src/plan/cache-slots.js";

const REPO = join(import.meta.dirname, "..", "..");

describe("CacheSlot", () => {
  test("computes an entry once per key, and two slots never share an entry even for the same key", () => {
    const cache = new SlotCache();
    const a = new CacheSlot<[n: number], string>("a", (n) => String(n));
    const b = new CacheSlot<[n: number], string>("b", (n) => String(n));
    let computed = 0;
    const compute = (value: string) => () => {
      computed++;
      return value;
    };
    expect(a.get(cache, [1], compute("a1"))).toBe("a1");
    expect(a.get(cache, [1], compute("again"))).toBe("a1");
    expect(b.get(cache, [1], compute("b1"))).toBe("b1");
    expect(a.get(cache, [2], compute("a2"))).toBe("a2");
    // A slot's first entry is kept apart until a second comes: both stay after that.
    expect(a.get(cache, [1], compute("lost"))).toBe("a1");
    expect(a.get(cache, [2], compute("lost"))).toBe("a2");
    expect(computed).toBe(3);
    expect([cache.sizeOf(a), cache.sizeOf(b)]).toEqual([2, 1]);
  });

  test("a single-entry slot holds one value per cache", () => {
    const slot = singleEntrySlot<object>("one");
    const [first, second] = [new SlotCache(), new SlotCache()];
    const value = slot.get(first, [], () => ({}));
    expect(slot.get(first, [], () => ({}))).toBe(value);
    expect(slot.get(second, [], () => ({}))).not.toBe(value);
  });
});

describe("SlotCache.carryOverFrom", () => {
  const carried = new CacheSlot<[n: number], string>("carried", (n) => String(n), true);
  const dropped = new CacheSlot<[n: number], string>("dropped", (n) => String(n));

  test("a new version reads what its previous version left in slots that carry over, and nothing else", () => {
    const [first, second] = [new SlotCache(), new SlotCache()];
    carried.get(first, [1], () => "first");
    dropped.get(first, [1], () => "first");
    second.carryOverFrom(first);
    expect(carried.earlier(second, [1])).toBe("first");
    expect(carried.earlier(second, [2])).toBeUndefined();
    expect(dropped.earlier(second, [1])).toBeUndefined();
    // Its own entries are its own: the earlier one is only read, never taken as this version's.
    expect(carried.get(second, [1], () => "second")).toBe("second");
  });

  test("one generation back: the previous version's own entries, else what it was handed", () => {
    const [first, second, third, fourth] = [new SlotCache(), new SlotCache(), new SlotCache(), new SlotCache()];
    carried.get(first, [1], () => "first");
    second.carryOverFrom(first);
    third.carryOverFrom(second);
    expect(carried.earlier(third, [1])).toBe("first");
    carried.get(third, [1], () => "third");
    fourth.carryOverFrom(third);
    expect(carried.earlier(fourth, [1])).toBe("third");
  });
});

/** Every slot declared in src/ by name: `new CacheSlot<…>("name", …)` or `singleEntrySlot<…>("name")`. */
function declaredSlotNames(): string[] {
  const files = readdirSync(join(REPO, "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  return files.flatMap((file) => {
    const text = readFileSync(join(REPO, "src", file), "utf8");
    return [...text.matchAll(/(?:new CacheSlot<[^(]*>|singleEntrySlot<[^(]*>)\(\s*"([^"]+)"/g)].map((m) => m[1]!);
  });
}

test("README's cache table names every cache slot declared in src/", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### What is cached, and for how long"));
  const table = section.slice(0, section.indexOf("\n#"));
  const names = declaredSlotNames();
  expect(names.length).toBeGreaterThanOrEqual(7);
  expect(names.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
});
