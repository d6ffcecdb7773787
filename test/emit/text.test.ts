import { describe, expect, test } from "vitest";
import type { Diagnostic } from "../../src/diagnostics.js";
import { renderJson, renderResult, renderYaml, toYamlText } from "../../src/emit/text.js";
import { caseNames, compileCase, loadCase } from "../support/cases.js";

/** What renderJson and renderYaml print, by way of the JSON value tree. */
const jsonOfTree = (result: Parameters<typeof renderResult>[0]) => `${JSON.stringify(renderResult(result), null, 2)}\n`;
const yamlOfTree = (result: Parameters<typeof renderResult>[0]) => toYamlText(renderResult(result));

describe("renderJson and renderYaml write what renderResult's values print as", () => {
  test.each(caseNames())("golden case %s, every mode", (name) => {
    const goldenCase = loadCase(name);
    for (const mode of goldenCase.options.keys()) {
      const result = compileCase(goldenCase, mode);
      expect(renderJson(result)).toBe(jsonOfTree(result));
      expect(renderYaml(result)).toBe(yamlOfTree(result));
    }
  });

  test("values only the printers handle (toJSON, class instances, undefined items) fall back to them", () => {
    const [name] = caseNames();
    const compiled = compileCase(loadCase(name!), "selector");
    class Ref {
      readonly cluster = "east";
      readonly ip = "10.0.0.1";
    }
    // renderResult copies a diagnostic's own fields, so a toJSON its class has is not called.
    class Described {
      readonly code = "NO_NODE_IP";
      readonly severity = "warning";
      readonly message = "m";
      toJSON() {
        return { replaced: true };
      }
    }
    const odd = [
      new Described(),
      { code: "NO_NODE_IP", severity: "warning", message: "m", endpoint: new Ref() },
      { code: "NO_NODE_IP", severity: "warning", message: "m", toJSON: () => ({ replaced: true }) },
      { code: "NO_NODE_IP", severity: "warning", message: "m", resource: undefined, via: [undefined] },
    ] as unknown as Diagnostic[];
    for (const diagnostic of odd) {
      const result = { ...compiled, diagnostics: [diagnostic] };
      expect(renderJson(result)).toBe(jsonOfTree(result));
      expect(renderYaml(result)).toBe(yamlOfTree(result));
    }
  });

  test("text that is not ASCII, quotes and escapes", () => {
    const [name] = caseNames();
    const compiled = compileCase(loadCase(name!), "selector");
    const messages = ["a → b", 'say "hi"', "back\\slash", "tab\tnew\nline", "ü: x", "\u{1F600} emoji", "lone \ud800 half"];
    const result = { ...compiled, diagnostics: messages.map((message) => ({ code: "NO_NODE_IP", severity: "warning", message }) as Diagnostic) };
    expect(renderJson(result)).toBe(jsonOfTree(result));
    expect(renderYaml(result)).toBe(yamlOfTree(result));
  });

  test("text larger than the kept buffer, twice in a row (grown, then allocated at the last size)", () => {
    const [name] = caseNames();
    const compiled = compileCase(loadCase(name!), "selector");
    const many = Array.from({ length: 20 }, () => compiled.diagnostics).flat();
    const diagnostics = Array.from({ length: Math.ceil(20_000 / Math.max(1, many.length)) }, () => many).flat();
    const result = { ...compiled, diagnostics };
    const expected = yamlOfTree(result);
    expect(expected.length).toBeGreaterThan(1 << 20);
    expect(renderYaml(result)).toBe(expected);
    expect(renderYaml(result)).toBe(expected);
    expect(renderYaml(compiled)).toBe(yamlOfTree(compiled));
    const json = jsonOfTree(result);
    expect(renderJson(result)).toBe(json);
    expect(renderJson(result)).toBe(json);
    expect(renderJson(compiled)).toBe(jsonOfTree(compiled));
  });
});
