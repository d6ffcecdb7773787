/**
 * Property 8 (see the header of compiler.property.test.ts): the README promises that "the same
 * input in any order gives byte-identical resources". A random permutation of a random mesh —
 * services, records, record keys, metadata keys, ports, nodes, exports, protocols, dependency
 * maps and lists, trust domains — must give every node the same encoded resources and the same
 * `toXdsResources` versions, in the same order.
 */
import fc from "fast-check";
import { test } from "vitest";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { compilableNodes, meshDocumentArb, modeSelectionArb, otherOptionsArb } from "../support/random-mesh.js";
import { checkPermutationInvariance } from "./checks.js";
import { assertProperty, runsFor, timeoutFor } from "./harness.js";

test(
  `8. an input permutation changes neither output bytes nor xDS versions (${runsFor(60)} meshes)`,
  () =>
    assertProperty(
      [meshDocumentArb({ withoutNetns: 2 }), fc.integer(), modeSelectionArb, otherOptionsArb],
      (doc, seed, selection, other) => {
        checkPermutationInvariance(doc, seed, compilableNodes(parseSnapshot(structuredClone(doc))), { ...other, ...selection });
      },
      runsFor(60),
    ),
  timeoutFor(60),
);
