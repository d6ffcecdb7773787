/**
 * Property 9: the direct text writers print exactly what the reference printers print of the JSON
 * value tree — `renderYaml` and `blockYaml` what the `yaml` package prints, `renderJson` what
 * `JSON.stringify` prints — for every node of random meshes under every mode × socket selection
 * (see compiler.property.test.ts for the generator and seeds). A tenth of the usual run count:
 * the package's printer, the reference, takes most of the time. And a mesh written in ASCII
 * compiles to ASCII text, diagnostics' messages included: one non-ASCII character makes a full
 * node's text a two-byte string, twice the memory and several times slower to make.
 */
import { describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderJson, renderResult, renderYaml } from "../../src/emit/text.js";
import { blockYaml, YAML_OPTIONS } from "../../src/emit/yaml-text.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { compilableNodes, everyModeSelection, type MeshDocument, meshDocumentArb, type OtherOptions, otherOptionsArb } from "../support/random-mesh.js";
import { assertProperty, RUNS, timeoutFor } from "./harness.js";

function everyNodeAndMode(doc: MeshDocument, other: OtherOptions): void {
  const index = indexSnapshot(parseSnapshot(structuredClone(doc)));
  for (const node of compilableNodes(index.snapshot)) {
    for (const options of everyModeSelection(other)) {
      const result = compileNode(index, localNodeFrom(index.snapshot, node.cluster, node.name), options);
      const rendered = renderResult(result);
      const yaml = stringify(rendered, YAML_OPTIONS);
      expect(blockYaml(rendered)).toBe(yaml);
      expect(renderYaml(result)).toBe(yaml);
      const json = renderJson(result);
      expect(json).toBe(`${JSON.stringify(rendered, null, 2)}\n`);
      expect(json.match(NON_ASCII)).toBeNull();
    }
  }
}

const NON_ASCII = /[\u0080-\uffff]+/;

const runs = Math.max(1, Math.ceil(RUNS / 10));

describe(`render properties (${runs} random meshes, every node, every mode × socket selection)`, () => {
  test(
    "9. the direct YAML and JSON writers print what the yaml package and JSON.stringify print, in ASCII",
    () => assertProperty([meshDocumentArb({ withoutNetns: 2 }), otherOptionsArb], everyNodeAndMode, runs),
    timeoutFor(1500),
  );
});
