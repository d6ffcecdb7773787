/**
 * `firstDuplicateKey` finds the first key written twice in one object of a JSON text (which
 * JSON.parse would silently collapse), with its line. It is tuned for mesh files of a million
 * keys; here it is checked against a plain character-by-character scan, on random JSON whose
 * objects draw keys from a small pool (so repeats are common), spelled with and without escapes
 * (`"a"` and `"\u0061"` are one key), with strings holding quotes, backslashes and brackets, and
 * with line breaks between tokens. Some objects are wide (up to 30 keys from a pool of 40), past
 * the point where the scan stops listing an object's keys and keeps them in a set. The same scan
 * outlines a document (`JsonOutline`): each top-level member's text, and each of `services`'s.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type DuplicateKey, firstDuplicateKey, JsonOutline } from "../../src/model/json-keys.js";
import { parseYamlText, strictYamlDocument } from "../../src/model/mesh-file.js";
import { RUNS, SEED } from "./harness.js";

/** The definition: every character in turn, each key decoded by JSON.parse, lines counted as they pass. */
function byDefinition(text: string): DuplicateKey | undefined {
  const objects: (Set<string> | undefined)[] = [];
  let expectKey = false;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "\n") line++;
    else if (char === "{") {
      objects.push(new Set());
      expectKey = true;
    } else if (char === "[") objects.push(undefined);
    else if (char === "}" || char === "]") objects.pop();
    else if (char === ",") expectKey = objects.at(-1) !== undefined;
    else if (char === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      const keys = objects.at(-1);
      if (expectKey && keys) {
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (keys.has(key)) return { key, line };
        keys.add(key);
        expectKey = false;
      }
      i = end;
    }
  }
  return undefined;
}

/** Keys as written: some spell the same key two ways. */
const KEYS = ['"a"', '"\\u0061"', '"b"', '"a\\\\"', '"\\""', '"{"', '"]"', '"é"', '"x\\ny"', '"\\\\\\""'];
/** String values that look like structure. */
const STRINGS = ['"{"', '"}"', '"["', '"\\"}"', '"\\\\"', '"a,\\"b\\":1"', '""'];
const gap = fc.constantFrom("", " ", "\n", "\n  ");

/** Keys of wide objects: more than the scan lists before it keeps an object's keys in a set. */
const WIDE_KEYS = [...KEYS, ...Array.from({ length: 30 }, (_, i) => `"k${i}"`)];
const scalar = fc.constantFrom("1", "-2.5e3", "true", "null", ...STRINGS);

const { value, object } = fc.letrec<{ value: string; object: string; wide: string; array: string }>((tie) => ({
  value: fc.oneof({ depthSize: "small" }, scalar, tie("object"), tie("wide"), tie("array")),
  wide: fc
    .array(fc.tuple(gap, fc.constantFrom(...WIDE_KEYS), scalar), { minLength: 10, maxLength: 30 })
    .map((entries) => `{${entries.map(([before, key, item]) => `${before}${key}:${item}`).join(",")}}`),
  object: fc
    .array(fc.tuple(gap, fc.constantFrom(...KEYS), gap, tie("value")), { maxLength: 4 })
    .map((entries) => `{${entries.map(([before, key, after, item]) => `${before}${key}${after}:${item}`).join(",")}}`),
  array: fc.array(fc.tuple(gap, tie("value")), { maxLength: 4 }).map((items) => `[${items.map(([before, item]) => `${before}${item}`).join(",")}]`),
}));

describe("duplicate keys in a JSON mesh file", () => {
  test("the first key repeated within one object, and its line, as a plain scan finds them", () => {
    let duplicates = 0;
    fc.assert(
      fc.property(value, (text) => {
        JSON.parse(text); // the texts are valid JSON, as firstDuplicateKey's input always is
        const expected = byDefinition(text);
        if (expected) duplicates++;
        expect(firstDuplicateKey(text)).toEqual(expected);
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 10, 2000) },
    );
    expect(duplicates).toBeGreaterThan(100);
  });
});

/** A document's top-level object: `services` (spelled two ways; mostly an object) among other keys. */
const documentText = fc
  .tuple(
    fc.array(fc.tuple(gap, fc.constantFrom(...KEYS), gap, value), { maxLength: 4 }),
    fc.tuple(gap, fc.constantFrom('"services"', '"servi\\u0063es"'), gap, fc.oneof(object, object, value)),
    fc.nat(4),
  )
  .map(([others, services, at]) => {
    const entries = [...others.slice(0, at), services, ...others.slice(at)];
    return `{${entries.map(([before, key, after, item]) => `${before}${key}${after}:${item}`).join(",")}}`;
  });

/** The value a member's text (what follows its key: spaces, the colon, the value) holds. */
function memberValue(text: string): unknown {
  return JSON.parse(text.trimStart().slice(1));
}

describe("the outline of a JSON mesh file", () => {
  test("holds each top-level member's text, and each member's of an object under services, as JSON.parse reads them", () => {
    let outlined = 0;
    fc.assert(
      fc.property(documentText, (text) => {
        if (byDefinition(text)) return; // refused before anything reads the outline
        const document = JSON.parse(text) as Record<string, unknown>;
        const outline = new JsonOutline();
        expect(firstDuplicateKey(text, outline)).toBeUndefined();
        expect([...outline.members.keys()]).toEqual(Object.keys(document));
        for (const [key, member] of outline.members) expect(memberValue(member)).toEqual(document[key]);
        const services = document.services;
        const isObject = typeof services === "object" && services !== null && !Array.isArray(services);
        expect(outline.services !== undefined).toBe(isObject);
        if (!isObject) return;
        outlined++;
        expect([...outline.services!.keys()]).toEqual(Object.keys(services));
        for (const [key, member] of outline.services!) expect(memberValue(member)).toEqual((services as Record<string, unknown>)[key]);
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 10, 2000) },
    );
    expect(outlined).toBeGreaterThan(100);
  });
});

/** What reading a text gives: its document, or the error's message. */
function outcome(read: () => unknown): { document: unknown } | { error: string } {
  try {
    return { document: read() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

describe("a YAML mesh file that holds JSON", () => {
  test("reads as the YAML parser reads it: the same document, or the same error (a repeated key: the YAML parser's)", () => {
    let refused = 0;
    fc.assert(
      fc.property(value, gap, (text, before) => {
        const yaml = outcome(() => strictYamlDocument(before + text));
        if ("error" in yaml) refused++;
        expect(outcome(() => parseYamlText(before + text))).toStrictEqual(yaml);
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 10, 2000) },
    );
    expect(refused).toBeGreaterThan(100);
  });
});
