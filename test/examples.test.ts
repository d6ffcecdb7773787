import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { expect, test } from "vitest";
import { compileNode, localNodeFrom } from "../src/entry/index.js";
import { AdsClient, CDS, type SotwResponse } from "./server/ads-client.js";
import { exampleSnapshot, REPO_ROOT } from "./support/fixtures.js";

/** The README's embedding example, run as a user would (it imports the built package by name). */
test("examples/compile-node.ts runs and prints each node's clusters and problems", () => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "examples/compile-node.ts"], { cwd: REPO_ROOT, encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(run.stdout).toBe(
    [
      "east/node-1: 7 clusters, 6 assignments, 6 pod routes through a waypoint",
      "  NO_NODE_IP: left out team-b/payments pod payments-2b7c-q3 (west, 10.244.3.6): node west/node-4 has no known IP: a remote pod IP is not routable",
      "west/node-2: 8 clusters, 4 assignments, 2 pod routes through a waypoint",
      "",
    ].join("\n"),
  );
});

test("examples/xds-server.ts sends everything first, then only the assignment that changed (a pod recovers, a node turns not ready)", () => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "examples/xds-server.ts"], { cwd: REPO_ROOT, encoding: "utf8" });
  expect(run.stderr).toBe("");
  const lines = run.stdout
    .replace(/@[0-9a-f]{16}/g, "@<version>")
    .trimEnd()
    .split("\n");
  expect(lines[0]).toBe("# east/node-1 connects: everything");
  expect(lines[1]).toMatch(/^Cluster: app_frontend-7d9f-abcde_team-a_8080@<version>, checkout\.team-a\.mesh\.aether:8080@<version>, /);
  expect(lines[3]).toBe(
    "Listener: capture_frontend-7d9f-abcde_team-a@<version>, ew_tunnel@<version>, inbound_frontend-7d9f-abcde_team-a@<version>, outbound_frontend-7d9f-abcde_team-a@<version>",
  );
  expect(lines.slice(4)).toEqual([
    "# west's unhealthy payments pod recovers: one assignment changes",
    "ClusterLoadAssignment: payments.team-b.mesh.aether:8443@<version>",
    "# west/node-1 turns not ready: the assignment with a waypoint endpoint there changes",
    "ClusterLoadAssignment: payments.team-b.mesh.aether:8443@<version>",
  ]);
});

test("examples/control-plane.ts serves a node over ADS, logs as JSON lines, and stops on SIGINT", async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/control-plane.ts"], {
    cwd: REPO_ROOT,
    env: { ...process.env, ADS_ADDRESS: "127.0.0.1:0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const lines: Record<string, unknown>[] = [];
  const listening = new Promise<string>((resolve) =>
    createInterface({ input: child.stdout! }).on("line", (text) => {
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      if (line.event === "listening") resolve(line.address as string);
    }),
  );
  const ads = new AdsClient<SotwResponse>(await listening, "StreamAggregatedResources");
  try {
    ads.send({ node: { id: "east/node-1" }, type_url: CDS });
    const cds = await ads.next();
    const snapshot = exampleSnapshot();
    const expected = compileNode(snapshot, localNodeFrom(snapshot, "east", "node-1"), { eastWestWaypoint: "cross-cluster", sds: { grpcCluster: "sds_grpc" } });
    expect(cds.resources.length).toBe(expected.clusters.length);
    expect(lines.map((line) => line.event)).toEqual(expect.arrayContaining(["snapshot", "listening", "connect", "push"]));
  } finally {
    ads.close();
    child.kill("SIGINT");
  }
  expect(await exited).toBe(0);
});

/** The README shows each example's code as it is (without the file's header comment and demo calls). */
test.each([
  ["examples/compile-node.ts", undefined],
  ["examples/xds-server.ts", 'console.log("# east/node-1 connects: everything");'],
  ["examples/control-plane.ts", undefined],
])("the README shows %s as it is", (file, demoStart) => {
  const lines = readFileSync(`${REPO_ROOT}${file}`, "utf8").split("\n");
  const code = lines
    .slice(
      lines.findIndex((line) => line.startsWith("import ")),
      demoStart ? lines.indexOf(demoStart) : undefined,
    )
    .join("\n")
    .trim();
  expect(readFileSync(`${REPO_ROOT}README.md`, "utf8")).toContain(code);
});
