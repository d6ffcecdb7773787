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
import { type DuplicateKey, firstDuplicateKey, withoutJsonSpaces } from "../../src/model/json-keys.js";
import { JsonOutline, type OutlinedMember, outlineAgain, wellFormedAround } from "../../src/model/json-outline.js";
import { outlinedJson, parseYamlText, strictYamlDocument } from "../../src/model/mesh-file.js";
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

/** The value a member's text (what follows its key: spaces, the colon, the value) holds, as the re-read reads it. */
function memberValue(text: string): unknown {
  return JSON.parse(text.slice(text.indexOf(":") + 1));
}

/** Each member's key and value, in order. */
function valuesOf(outline: JsonOutline, members: readonly OutlinedMember[]): [string, unknown][] {
  return members.map((member) => [member.key, memberValue(outline.textOf(member))]);
}

/** Characters that break JSON, or do not. */
const NOISE = ["{", "}", "[", "]", ",", ":", '"', "\\", " ", "x", "1", "\u0001"];
/** A character deleted, inserted or replaced somewhere. */
const typo = fc.tuple(fc.constantFrom("delete", "insert", "replace"), fc.nat(), fc.constantFrom(...NOISE));

function withTypos(text: string, typos: readonly (typeof typo extends fc.Arbitrary<infer T> ? T : never)[]): string {
  return typos.reduce((t, [kind, at, char]) => {
    const i = at % (t.length + 1);
    return kind === "insert" ? t.slice(0, i) + char + t.slice(i) : t.slice(0, i) + (kind === "replace" ? char : "") + t.slice(i + 1);
  }, text);
}

/** A text with one to three typos. */
const corrupted = fc.tuple(documentText, fc.array(typo, { minLength: 1, maxLength: 3 })).map(([text, typos]) => withTypos(text, typos));

/** A text's outline by a whole scan, as a first read finds it; undefined where the scan refuses the text. */
function wholeOutline(text: string): JsonOutline | undefined {
  return outlinedJson(text, "json");
}

/**
 * A new version of a text: one service's value replaced, a service added before it, or it
 * removed; or another top-level member's value replaced.
 */
function edited(text: string, outline: JsonOutline, at: number, kind: number, key: string, item: string): string {
  const others = outline.members.filter((member) => member.key !== "services");
  if (kind === 3 && others.length > 0) {
    const member = others[at % others.length]!;
    return `${text.slice(0, member.start)}:${item}${text.slice(member.end)}`;
  }
  const services = outline.services!;
  const i = at % services.length;
  const member = services[i]!;
  if (kind === 1) return `${text.slice(0, member.keyAt)}${key}:${item},${text.slice(member.keyAt)}`;
  if (kind === 2 && i + 1 < services.length) return text.slice(0, member.keyAt) + text.slice(services[i + 1]!.keyAt);
  if (kind === 2 && i > 0) return text.slice(0, services[i - 1]!.end) + text.slice(member.end);
  return `${text.slice(0, member.start)}:${item}${text.slice(member.end)}`;
}

describe("the outline of a JSON mesh file", () => {
  test("holds each top-level member's text, and each member's of an object under services, as JSON.parse reads them", () => {
    let outlined = 0;
    fc.assert(
      fc.property(documentText, (text) => {
        if (byDefinition(text)) return; // refused before anything reads the outline
        const document = JSON.parse(text) as Record<string, unknown>;
        const outline = new JsonOutline(text);
        expect(firstDuplicateKey(text, outline)).toBeUndefined();
        expect(wellFormedAround(outline)).toBe(true);
        expect(outline.members.map((member) => member.key)).toEqual(Object.keys(document));
        expect(valuesOf(outline, outline.members)).toEqual(Object.entries(document));
        const services = document.services;
        const isObject = typeof services === "object" && services !== null && !Array.isArray(services);
        expect(outline.services !== undefined).toBe(isObject);
        if (!isObject) return;
        outlined++;
        expect(valuesOf(outline, outline.services!)).toEqual(Object.entries(services));
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 10, 2000) },
    );
    expect(outlined).toBeGreaterThan(100);
  });

  test("says a text is well formed around its members only if, its members' texts being JSON, the text is JSON", () => {
    const seen = { refused: 0, taken: 0, invalid: 0 };
    fc.assert(
      fc.property(corrupted, (text) => {
        let valid = true;
        try {
          JSON.parse(text);
        } catch {
          valid = false;
          seen.invalid++;
        }
        const outline = new JsonOutline(text);
        let scanned: boolean;
        try {
          scanned = firstDuplicateKey(text, outline) === undefined && wellFormedAround(outline);
        } catch {
          scanned = false; // an escaped key that does not decode
        }
        if (!scanned) {
          seen.refused++;
          return;
        }
        // Services as an object: their members stand for its text; else the member holding them is read whole.
        const read = outline.members.filter((member) => member.key !== "services" || outline.services === undefined);
        let members: [string, unknown][];
        try {
          members = [...valuesOf(outline, read), ...valuesOf(outline, outline.services ?? [])];
        } catch {
          seen.refused++;
          return;
        }
        seen.taken++;
        expect(valid, text).toBe(true);
        const document = JSON.parse(text) as Record<string, unknown>;
        const services = outline.services === undefined ? [] : Object.entries(document.services as object);
        // As maps: JavaScript lists integer-like keys first, whatever the text's order.
        const expected = [...Object.entries(document).filter(([key]) => key !== "services" || outline.services === undefined), ...services];
        expect(new Map(members)).toEqual(new Map(expected));
        expect(members).toHaveLength(expected.length);
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 25, 5000) },
    );
    expect(seen.invalid).toBeGreaterThan(1000);
    expect(seen.taken).toBeGreaterThan(100);
  });
});

/** A service's value: mostly without objects, whose few keys often repeat. */
const serviceValue = fc.oneof(scalar, scalar, value);

/** A document whose services are an object of one to six members, among other members. */
const servicesDocument = fc
  .tuple(
    fc.array(fc.tuple(gap, fc.constantFrom(...KEYS), gap, value), { maxLength: 3 }),
    fc.uniqueArray(fc.tuple(gap, fc.constantFrom(...WIDE_KEYS), gap, serviceValue), { minLength: 1, maxLength: 6, selector: ([, key]) => key }),
    gap,
    fc.nat(3),
  )
  .map(([others, services, end, at]) => {
    const members = (entries: typeof others) => entries.map(([before, key, after, item]) => `${before}${key}${after}:${item}`);
    const all = members(others);
    all.splice(at % (all.length + 1), 0, `"services":{${members(services).join(",")}${end}}`);
    return `{${all.join(",")}}`;
  });

describe("the outline of a mesh file read again", () => {
  test("found by scanning only the members that changed, is the outline a whole scan finds", () => {
    let again = 0;
    fc.assert(
      fc.property(
        servicesDocument,
        fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom(...WIDE_KEYS), serviceValue),
        fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(typo, { minLength: 1, maxLength: 2 }) }),
        (text, [at, kind, key, item], typos) => {
          const previous = wholeOutline(text);
          if (!previous?.services?.length) return;
          const next = withTypos(edited(text, previous, at, kind, key, item), typos);
          const outline = outlineAgain(previous, next);
          const whole = wholeOutline(next);
          // A change to one member is outlined again whenever the whole scan takes the text.
          if (typos.length === 0 && whole) expect(outline).toBeDefined();
          if (!outline) return;
          again++;
          expect(whole).toBeDefined();
          expect(outline.members).toEqual(whole!.members);
          expect(outline.services).toEqual(whole!.services);
        },
      ),
      { seed: SEED, numRuns: Math.max(RUNS * 25, 5000) },
    );
    expect(again).toBeGreaterThan(400);
  });
});

describe("a JSON text without its spaces", () => {
  test("is the same for any layout of a value, and the same as another text's only if that one is JSON with the same value", () => {
    let equalAfterTypos = 0;
    fc.assert(
      fc.property(value, fc.constantFrom(0, 2, "\t"), fc.array(typo, { minLength: 1, maxLength: 2 }), (text, indent, typos) => {
        const compact = JSON.stringify(JSON.parse(text));
        const laidOut = JSON.stringify(JSON.parse(text), null, indent);
        expect(withoutJsonSpaces(laidOut)).toBe(withoutJsonSpaces(compact));
        const other = withTypos(laidOut, typos);
        if (withoutJsonSpaces(other) !== withoutJsonSpaces(compact)) return;
        equalAfterTypos++;
        expect(JSON.parse(other)).toEqual(JSON.parse(compact));
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 25, 5000) },
    );
    // Typos that only moved spaces about came up.
    expect(equalAfterTypos).toBeGreaterThan(100);
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
