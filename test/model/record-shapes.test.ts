import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

/**
 * Every registry record is read many times per compile. A frozen object V8 built by spreading
 * another gets a hidden class of its own, which turns every such read megamorphic (20× slower
 * over W1's records); parsed records and nodes must share their hidden classes.
 */
describe("parsed registry records and nodes", () => {
  test("share one hidden class per kind of object", () => {
    const child = spawnSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", join(import.meta.dirname, "support/record-shapes.ts")], {
      encoding: "utf8",
    });
    expect(child.stderr).toBe("");
    const shapes = JSON.parse(child.stdout);
    expect(shapes).toMatchObject({ records: 500, record: 1, kubernetesMetadata: 1, containerMetadata: 1, locality: 1, node: 1, pod: 1 });
    expect(shapes.nodes).toBeGreaterThan(2);
  });
});
