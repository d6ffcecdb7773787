import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

/**
 * Every registry record is read many times per compile. A frozen object V8 built by spreading
 * another gets a hidden class of its own, which turns every such read megamorphic (20× slower
 * over W1's records); parsed records must share their hidden classes.
 */
describe("parsed registry records", () => {
  test("share one hidden class, and so do their nested objects", () => {
    const child = spawnSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", join(import.meta.dirname, "support/record-shapes.ts")], {
      encoding: "utf8",
    });
    expect(child.stderr).toBe("");
    const shapes = JSON.parse(child.stdout);
    expect(shapes).toEqual({ records: 500, record: 1, kubernetesMetadata: 1, containerMetadata: 1, locality: 1 });
  });
});
