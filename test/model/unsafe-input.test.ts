/**
 * What must never reach the compiler, wherever it sits in an input: a key that would reach an
 * object's prototype, and a string (key or value) that is not well-formed Unicode, which protobuf
 * would rewrite to U+FFFD on the wire. Each is reported at its own path.
 */
import { expect, test } from "vitest";
import { formatPath } from "../../src/errors.js";
import { unsafeInputIssues } from "../../src/model/issues.js";

const issues = (input: unknown) => unsafeInputIssues(input).map((issue) => `${issue.path}: ${issue.message}`);

test("a lone surrogate in a value, a key or an array item is reported at its path; a pair is not", () => {
  expect(issues({ a: { b: "v\uD800" } })).toEqual(["a.b: not well-formed Unicode"]);
  expect(issues({ list: ["ok", "x\uDC00"] })).toEqual([`${formatPath(["list", 1])}: not well-formed Unicode`]);
  expect(issues({ nested: { "k\uDBFF": 1 } })).toEqual([`${formatPath(["nested", "k\uDBFF"])}: key is not well-formed Unicode`]);
  expect(issues({ emoji: "\uD83D\uDE00", high: [["\uD83D\uDE00"]] })).toEqual([]);
  expect(issues("\uDC00")).toEqual([": not well-formed Unicode"]);
});

test("prototype keys are refused at any depth, in objects and in arrays' objects", () => {
  expect(issues({ a: [{ b: JSON.parse('{"__proto__": {"x": 1}}') }] })).toEqual([`${formatPath(["a", 0, "b", "__proto__"])}: forbidden key`]);
  expect(issues({ constructor: { prototype: 1 } })).toEqual(["constructor: forbidden key"]);
});

test("every problem is found, not only the first; byte arrays are data, not looked into", () => {
  expect(issues({ a: "\uD800", b: { c: "\uDC00" }, bytes: new Uint8Array([0xd8, 0x00]) }).sort()).toEqual([
    "a: not well-formed Unicode",
    "b.c: not well-formed Unicode",
  ]);
});
