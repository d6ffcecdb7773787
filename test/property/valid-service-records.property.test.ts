/**
 * `withValidServiceRecords` applies a batch of service updates service by service: each refused
 * service keeps its last good records, the rest go in as one update. Here, on random batches over
 * the example mesh (records moved between services and namespaces, copied, broken, services
 * added and removed), what it applies must be exactly what `withServiceRecords` accepts as one
 * update, whatever the batch's order; what it refuses must be left as it was; and a batch
 * `withServiceRecords` accepts whole must be applied whole.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { isInputError } from "../../src/errors.js";
import { parseSnapshot, type Snapshot, withServiceRecords, withValidServiceRecords } from "../../src/model/snapshot.js";
import { ledgerRecord, meshDocument } from "../support/fixtures.js";
import { RUNS, SEED } from "./harness.js";

const BASE = parseSnapshot(meshDocument());
const KEYS = ["team-a/frontend", "team-a/checkout", "team-a/added", "team-b/payments", "team-b/billing", "team-c/ledger"] as const;
/** Every record of the example, and a service's record the example does not have. */
const POOL: readonly unknown[] = [...[...BASE.services.values()].flat(), ledgerRecord()];

// One record in six broken.
const drawnRecord = fc.record({ at: fc.nat(POOL.length - 1), broken: fc.nat(5).map((n) => n === 0) });
const drawnUpdate = fc.option(fc.array(drawnRecord, { maxLength: 3 }), { freq: 5 });
const batch = fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), drawnUpdate), { selector: ([key]) => key, minLength: 1, maxLength: KEYS.length });

type Update = readonly unknown[] | undefined;

function updatesOf(drawn: readonly (readonly [string, { at: number; broken: boolean }[] | null])[]): Map<string, Update> {
  return new Map(drawn.map(([key, records]) => [key, records?.map(({ at, broken }) => (broken ? { ...(POOL[at] as object), ip: "not an ip" } : POOL[at]))]));
}

/** `withServiceRecords`, or undefined when it refuses the update. */
function wholeOrUndefined(snapshot: Snapshot, updates: ReadonlyMap<string, Update>): Snapshot | undefined {
  try {
    return withServiceRecords(snapshot, updates);
  } catch (error) {
    if (isInputError(error)) return undefined;
    throw error;
  }
}

describe("a batch applied service by service", () => {
  test("applies what withServiceRecords accepts as one update, refuses the rest as they were, whatever the order", () => {
    const seen = { applied: 0, whole: 0, clashes: 0 };
    fc.assert(
      fc.property(batch, (drawn) => {
        const updates = updatesOf(drawn);
        const { snapshot, refused } = withValidServiceRecords(BASE, updates);
        const accepted = new Map([...updates].filter(([key]) => !refused.has(key)));
        const expected = wholeOrUndefined(BASE, accepted);
        expect(expected, "the services applied must validate as one update").toBeDefined();
        expect(new Map(snapshot.services)).toEqual(new Map(expected!.services));
        for (const key of refused.keys()) expect(snapshot.services.get(key as never)).toBe(BASE.services.get(key as never));
        const reversed = withValidServiceRecords(BASE, new Map([...updates].reverse()));
        expect(new Set(reversed.refused.keys())).toEqual(new Set(refused.keys()));
        expect(new Map(reversed.snapshot.services)).toEqual(new Map(snapshot.services));
        const whole = wholeOrUndefined(BASE, updates);
        if (whole) expect(refused.size).toBe(0);
        seen.clashes += [...refused.values()].some((error) => /is also services/.test(error.message)) ? 1 : 0;
        seen.applied += accepted.size > 0 && refused.size > 0 ? 1 : 0;
        seen.whole += whole ? 1 : 0;
      }),
      { seed: SEED, numRuns: Math.max(RUNS * 2, 400) },
    );
    // Batches applied in part, accepted whole, and refusing a service for a pod another claims all came up.
    expect(seen.applied).toBeGreaterThan(20);
    expect(seen.whole).toBeGreaterThan(20);
    expect(seen.clashes).toBeGreaterThan(10);
  });
});
