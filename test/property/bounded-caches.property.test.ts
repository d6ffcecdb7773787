/**
 * Every cache has a bound (README, "Bounded caches"): a control plane serving a few nodes through
 * 10,000 registry updates keeps a flat retained heap. Measured in a child process with
 * `--expose-gc` (full GCs before each reading); the assertion is on heap growth, never on time.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, test } from "vitest";
import { BoundedCache } from "../../src/util/bounded-cache.js";
import { REPO_ROOT } from "../support/fixtures.js";

/** Growth allowed between the warm-up and the end: noise, far below what one entry per update retains (~40 MB). */
const MAX_GROWTH_BYTES = 8 * 1024 * 1024;

describe("bounded caches", () => {
  test("10,000 registry updates against three nodes: the retained heap stays flat", { timeout: 300_000 }, () => {
    const child = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", "test/support/retained-heap-child.ts", "10000"], {
      cwd: REPO_ROOT,
      encoding: "utf8",
      timeout: 280_000,
    });
    expect(child.stderr).toBe("");
    const { afterWarmup, atEnd, updates } = JSON.parse(child.stdout) as { afterWarmup: number; atEnd: number; updates: number };
    expect(updates).toBe(10_000);
    expect(atEnd - afterWarmup).toBeLessThan(MAX_GROWTH_BYTES);
  });

  test("a BoundedCache holds at most twice its limit and keeps what is in use", () => {
    const cache = new BoundedCache<number, string>(10);
    let computed = 0;
    const compute = () => String(++computed);
    for (let i = 0; i < 1_000; i++) {
      cache.get(i, compute);
      cache.get(-1, compute); // used all the time: never dropped
      expect(cache.size).toBeLessThanOrEqual(20);
    }
    expect(computed).toBe(1_001);
  });
});
