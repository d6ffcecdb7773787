import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { renderResult } from "../../src/emit/text.js";
import { blockYaml, YAML_OPTIONS } from "../../src/emit/yaml-text.js";
import { caseNames, compileCase, loadCase } from "../support/cases.js";

const library = (value: unknown) => stringify(value, YAML_OPTIONS);

describe("blockYaml prints what the yaml package prints", () => {
  test.each(caseNames())("golden case %s, every mode and resource kind, without falling back", (name) => {
    const goldenCase = loadCase(name);
    for (const mode of goldenCase.options.keys()) {
      const rendered = renderResult(compileCase(goldenCase, mode));
      for (const kind of ["clusters", "endpoints", "listeners", "diagnostics"] as const) {
        expect(blockYaml(rendered[kind])).toBe(library(rendered[kind]));
      }
    }
  });

  test("scalars that need quoting, odd keys, nested and empty collections", () => {
    const strings = [
      "8080",
      "true",
      "null",
      "~",
      "",
      " lead",
      "trail ",
      "a: b",
      "a #b",
      "- x",
      "#x",
      "@x",
      "*x",
      "&x",
      "!x",
      "{x}",
      "[x]",
      "x,y",
      "'q'",
      '"q"',
      "ünï",
      "0x1F",
      "1e3",
      ".inf",
      "yes",
      "On",
      "Y",
      "NULL",
      "a:",
      "a:b",
      "x-y",
      "_x",
      "a.b/c",
      "\\back",
      "10.0.0.1",
      "10.0.0.1:80",
      "1.5",
      "1.5.",
      "1.2.3",
      "-1.2.3",
      ".1.2",
      "1e3.5.1",
      "a b",
      "a  b",
      "1 2",
      "a b:",
      "a b ",
      "a b #c",
      "a b# c",
      "a :b",
      "a\tb",
      "x (y, z) → w: v",
      "x (y, z) → w",
      "it's: x",
      'say "hi": x',
      "a: \\b",
      "ü b",
      "true story",
      "null: x",
      "*.svc-1.ns.mesh",
      "|x y",
      "`x",
      ">x",
      ",x",
      "99776209",
      "007",
      "1 ",
      "x: ",
      "'q' x",
      "%x",
      "?x",
      "? x",
      "-x",
      "---x",
      "...x",
      "x ##",
      "x#y",
      "1.5 s",
    ];
    const value = {
      strings,
      numbers: [0, -1, 1.5, 1e21, 2 ** 53],
      flags: [true, false, null],
      nested: [[1, [2, 3]], [], {}, [{}], [{ a: [] }]],
      "__proto__ key": { "key: colon": 1, "8080": "port", "": "empty key", "@type": "t" },
      skipped: undefined,
      deep: { a: { b: [{ c: { d: ["e"] }, f: "g" }] } },
    };
    Object.defineProperty(value, "__proto__", { value: { kept: true }, enumerable: true });
    expect(blockYaml(value)).toBe(library(value));
    expect(blockYaml([value, value])).toBe(library([value, value]));
  });

  test("multi-line strings (an access-log format) as block scalars at any depth", () => {
    const texts = ["two\nlines", "line\n", "a\n\nb\n", "  indented\nfirst\n", "trailing\n\n", "x\ny  \n"];
    const value = { a: { b: texts, c: [{ d: texts[1], e: [[texts[2]]] }] }, f: texts[3] };
    expect(blockYaml(value)).toBe(library(value));
    expect(blockYaml([value, [value]])).toBe(library([value, [value]]));
  });

  test("a scalar document is left to the package", () => {
    expect(blockYaml("scalar")).toBeUndefined();
  });
});
