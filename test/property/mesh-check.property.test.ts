/**
 * Property 1 (see the header of compiler.property.test.ts): every node of a random mesh compiles
 * to resources that pass the independent upstream schema check, and the mesh path check
 * (`verifyMesh`) is ok — under every waypoint mode × socket selection.
 *
 * Two deliberate limits, both from the README:
 * - `off` is the flat-network mode: it can only work when pod IPs are unique across clusters, so
 *   its path check runs on meshes whose clusters got their own pod CIDRs (the generator draws
 *   shared or distinct CIDRs); with a shared CIDR `off` is only schema-checked.
 * - every pod has a netns here: a pod without one gets no inbound listener (POD_WITHOUT_NETNS),
 *   so connections to it fail by design.
 */
import { test } from "vitest";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { everyModeSelection, meshDocumentArb, otherOptionsArb } from "../support/random-mesh.js";
import { checkSchemaAndPaths } from "./checks.js";
import { assertProperty, runsFor, timeoutFor } from "./harness.js";

test(
  `1. every node passes the upstream schema check and verifyMesh is ok, all modes × socket selections (${runsFor(1500)} meshes)`,
  () =>
    assertProperty(
      [meshDocumentArb({ sharedPodCidr: "either" }), otherOptionsArb],
      (doc, other) => {
        const snapshot = parseSnapshot(structuredClone(doc));
        for (const options of everyModeSelection(other)) checkSchemaAndPaths(snapshot, options);
      },
      runsFor(1500),
    ),
  // A hang guard, not a speed check: this takes ~60 s on an idle 2-core machine, several times that under load.
  timeoutFor(1500),
);
