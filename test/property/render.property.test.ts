/**
 * Property 9: the direct text writers print exactly what the reference path prints — for
 * `renderJson`, `JSON.stringify(renderResult(result), null, 2)` — for every node of random meshes
 * under every mode × socket selection (see compiler.property.test.ts for the generator and seeds).
 */
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderJson, renderResult } from "../../src/emit/text.js";
import { localNodeFrom } from "../../src/model/node.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { indexSnapshot } from "../../src/plan/snapshot-index.js";
import { compilableNodes, everyModeSelection, type MeshDocument, meshDocumentArb, type OtherOptions, otherOptionsArb } from "../support/random-mesh.js";
import { assertProperty, RUNS, timeoutFor } from "./harness.js";

function everyNodeAndMode(check: (result: ReturnType<typeof compileNode>) => void) {
  return (doc: MeshDocument, other: OtherOptions) => {
    const index = indexSnapshot(parseSnapshot(structuredClone(doc)));
    for (const node of compilableNodes(index.snapshot)) {
      for (const options of everyModeSelection(other)) check(compileNode(index, localNodeFrom(index.snapshot, node.cluster, node.name), options));
    }
  };
}

describe(`render properties (${RUNS} random meshes, every node, every mode × socket selection)`, () => {
  test(
    "9. renderJson is byte-identical to JSON.stringify of renderResult",
    () =>
      assertProperty(
        [meshDocumentArb({ withoutNetns: 2 }), otherOptionsArb],
        everyNodeAndMode((result) => expect(renderJson(result)).toBe(`${JSON.stringify(renderResult(result), null, 2)}\n`)),
      ),
    timeoutFor(80),
  );
});
