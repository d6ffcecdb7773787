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
