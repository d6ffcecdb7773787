import { spawnSync } from "node:child_process";
import { expect, test } from "vitest";
import { REPO_ROOT } from "./support/fixtures.js";

/** The README's embedding example, run as a user would (it imports the built package by name). */
test("examples/compile-node.ts runs and prints each node's clusters and problems", () => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "examples/compile-node.ts"], { cwd: REPO_ROOT, encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(run.stdout).toBe(
    [
      "east/node-1: 6 clusters, 5 assignments, 6 pod routes through a waypoint",
      "  NO_NODE_IP: left out team-b/payments pod payments-2b7c-q3 (west, 10.244.3.6): node west/node-4 has no known IP: a remote pod IP is not routable",
      "west/node-2: 6 clusters, 2 assignments, 2 pod routes through a waypoint",
      "",
    ].join("\n"),
  );
});
