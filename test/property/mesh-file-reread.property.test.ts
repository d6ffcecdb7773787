/**
 * A mesh file read again validates only the services whose records changed, when nothing else
 * did. What it gives must be what a whole parse gives as an update of the last read
 * (`asRegistryUpdate(last, parseSnapshot(document))`): the same snapshot content, the same
 * services named as changed, the last snapshot itself when nothing changed, and the whole parse's
 * errors for a bad file.
 */
import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { describe, expect, test, vi } from "vitest";
import { stringify } from "yaml";
import { isInputError } from "../../src/errors.js";
import { readMeshFileDocument } from "../../src/model/mesh-file.js";
import { type MeshFileRead, rereadMeshFileText } from "../../src/model/mesh-file-reread.js";
import { asRegistryUpdate } from "../../src/model/registry-update.js";
import { changesSince, parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";
import { meshDocument } from "../support/fixtures.js";
import { runsFor, SEED, timeoutFor } from "./harness.js";

type Doc = ReturnType<typeof meshDocument>;

/** A JSON mesh file's read, as the mesh-file source makes it. */
function reread(previous: MeshFileRead | undefined, doc: Doc): MeshFileRead {
  return rereadMeshFileText(previous, JSON.stringify(doc), "json");
}

function outcome<T>(run: () => T): { value: T } | { error: string[] } {
  try {
    return { value: run() };
  } catch (error) {
    if (!isInputError(error)) throw error;
    return { error: error.issues.map((issue) => `${issue.path}: ${issue.message}`) };
  }
}

/** The i-th record of the document, counting across its services in order (a loose object when it has none). */
function recordAt(doc: Doc, i: number): any {
  const records = Object.values((doc.services ?? {}) as Record<string, any[]>).flat();
  return records.length > 0 ? records[i % records.length] : {};
}

/** The document's services, made again if an edit took them away. */
function servicesOf(doc: Doc): Record<string, any[]> {
  doc.services ??= {};
  return doc.services;
}

function serviceAt(doc: Doc, i: number): string {
  const keys = Object.keys(doc.services ?? {});
  return keys[i % keys.length]!;
}

/** Edits a mesh file's author makes, valid or not; each takes a number choosing where. */
const EDITS: Record<string, (doc: Doc, at: number) => void> = {
  health: (doc, at) => {
    const record = recordAt(doc, at);
    record.health = record.health === "HEALTHY" ? "UNHEALTHY" : "HEALTHY";
  },
  "bad ip": (doc, at) => (recordAt(doc, at).ip = "10.244.999.1"),
  "bad port": (doc, at) => (recordAt(doc, at).port = "x"),
  "record dropped": (doc, at) => doc.services?.[serviceAt(doc, at)]?.splice(0, 1),
  "service dropped": (doc, at) => delete doc.services?.[serviceAt(doc, at)],
  "every service dropped": (doc) => (doc.services = {}),
  "services gone": (doc) => delete doc.services,
  "empty service added": (doc, at) => (servicesOf(doc)[`team-a/empty-${at % 3}`] = []),
  // A pod of another service again in its namespace: refused (its pod name is taken on its node).
  "record copied to a new service": (doc, at) => (servicesOf(doc)[`team-a/copy-${at % 2}`] = [structuredClone(recordAt(doc, at))]),
  "keys of a record reordered": (doc, at) => {
    const records = doc.services?.[serviceAt(doc, at)] ?? [];
    if (records.length > 0) records[0] = Object.fromEntries(Object.entries(records[0]).reverse());
  },
  "services reordered": (doc) => (doc.services &&= Object.fromEntries(Object.entries(doc.services).reverse())),
  "node not ready": (doc, at) => {
    const node = doc.nodes?.[at % doc.nodes.length];
    if (node) node.ready = !(node.ready ?? true);
  },
  "node dropped": (doc, at) => doc.nodes?.splice(at % doc.nodes.length, 1),
  "node list null": (doc) => (doc.nodes = null),
  "node list gone": (doc) => delete doc.nodes,
  "dependencies dropped": (doc, at) => (doc.dependencies[serviceAt(doc, at)] = []),
  "dependency added": (doc, at) => {
    doc.dependencies[serviceAt(doc, at)] = [...(doc.dependencies[serviceAt(doc, at)] ?? []), serviceAt(doc, at + 1)];
  },
  "VIP moved": (doc, at) => (doc.vips[serviceAt(doc, at)] = `10.96.0.${10 + (at % 3)}`),
  "port protocol declared": (doc, at) => (doc.protocols[serviceAt(doc, at)] = { [String(9000 + (at % 2))]: at % 3 === 0 ? "udp" : "tcp" }),
  "service exported": (doc, at) => (doc.exports = [serviceAt(doc, at)]),
  "trust domain": (doc) => (doc.mesh.trust.trustDomain = "other.internal"),
  "mesh setting": (doc) => (doc.mesh.meshDomain = "other.aether"),
};

/** About what one run of the property costs (a few parses of the example mesh). */
const MS_PER_RUN = 6;

const edit = fc.tuple(fc.constantFrom(...Object.keys(EDITS)), fc.nat(20));
/** A character deleted, inserted or replaced somewhere in the file: mostly no longer JSON. */
const typo = fc.tuple(fc.constantFrom("delete", "insert", "replace"), fc.nat(), fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "\\", " ", "x", "1"));

/** The text with the typos made, in turn. */
function withTypos(text: string, typos: readonly (typeof typo extends fc.Arbitrary<infer T> ? T : never)[]): string {
  return typos.reduce((t, [kind, at, char]) => {
    const i = at % (t.length + 1);
    return kind === "insert" ? t.slice(0, i) + char + t.slice(i) : t.slice(0, i) + (kind === "replace" ? char : "") + t.slice(i + 1);
  }, text);
}

/**
 * Reads of the file: each applies a few edits to the document as the last read left it, lays
 * the file out compact or indented (a change of text that says the same), and in one read in four
 * makes a typo or two in the text.
 */
const reads = fc.array(
  fc.tuple(
    fc.array(edit, { minLength: 1, maxLength: 3 }),
    fc.constantFrom(0, 2),
    fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(typo, { minLength: 1, maxLength: 2 }) }),
  ),
  { minLength: 1, maxLength: 5 },
);

describe("a mesh file read again", () => {
  test(
    "gives what a whole parse gives as an update of the last good read, read after read",
    () => {
      fc.assert(
        fc.property(reads, (steps) => {
          let doc = meshDocument();
          let last = reread(undefined, doc);
          for (const [edits, indent, typos] of steps) {
            const edited = structuredClone(doc);
            for (const [name, at] of edits) EDITS[name]!(edited, at);
            const text = withTypos(JSON.stringify(edited, null, indent), typos);
            const whole = outcome(() => asRegistryUpdate(last.snapshot, parseSnapshot(readMeshFileDocument(text, "json").value)));
            const again = outcome(() => rereadMeshFileText(last, text, "json"));
            if ("error" in whole) {
              expect(again).toEqual(whole);
              continue; // a bad file: the source keeps the last good read
            }
            if (!("value" in again)) throw new Error(`refused what a whole parse takes: ${again.error.join("; ")}`);
            const read = again.value.snapshot;
            expect(read === last.snapshot).toBe(whole.value === last.snapshot);
            expect(isDeepStrictEqual(read, whole.value)).toBe(true);
            expect(changesSince(read, last.snapshot)).toEqual(changesSince(whole.value, last.snapshot));
            last = again.value;
            doc = JSON.parse(text);
          }
        }),
        { seed: SEED, numRuns: runsFor(MS_PER_RUN) },
      );
    },
    timeoutFor(MS_PER_RUN),
  );

  /** A read whose parts say the file held `said` while its snapshot is `held`'s: shows which services a re-read reads. */
  function readOf(held: Snapshot, said: Doc): MeshFileRead {
    return { ...reread(undefined, said), snapshot: held };
  }

  /**
   * The file as the last read says it was (`said`), the snapshot it holds instead (`held`:
   * team-a/frontend's first record's health flipped), and the file now (`next`: team-a/checkout's
   * first record's health flipped).
   */
  function checkoutChanged(): { said: Doc; held: Doc; next: Doc } {
    const said = meshDocument();
    const held = meshDocument();
    EDITS.health!(held, 0);
    const next = structuredClone(said);
    EDITS.health!(next, 2);
    return { said, held, next };
  }

  /** What `read` returns, and the longest text `JSON.parse` was given while it ran. */
  function withLongestParse<T>(read: () => T): { result: T; longest: number } {
    const parse = vi.spyOn(JSON, "parse");
    try {
      const result = read();
      return { result, longest: Math.max(...parse.mock.calls.map(([parsed]) => parsed.length)) };
    } finally {
      parse.mockRestore();
    }
  }

  test.each<[string, (doc: Doc) => void]>([
    ["records alone changed", () => {}],
    ["a node's readiness changed too", (doc) => EDITS["node not ready"]!(doc, 0)],
    ["a dependency changed too", (doc) => EDITS["dependency added"]!(doc, 0)],
  ])("reads again only the services whose records changed in a JSON file (%s): the others are the last snapshot's", (_, change) => {
    const { said, held, next } = checkoutChanged();
    change(next);
    const last = parseSnapshot(held);
    const text = JSON.stringify(next);
    const previous = readOf(last, said);
    const { result, longest } = withLongestParse(() => rereadMeshFileText(previous, text, "json"));
    // Only parts of the text were parsed: checkout's records, and the settings if they changed.
    expect(longest).toBeLessThan(text.length / 2);
    const read = result.snapshot;
    expect(read.services.get("team-a/frontend")).toBe(last.services.get("team-a/frontend"));
    expect(read.services.get("team-a/checkout")?.[0]?.health).toBe(next.services["team-a/checkout"][0].health);
  });

  test("reads a JSON file laid out anew (compact to indented) as unchanged, parsing none of its parts", () => {
    const doc = meshDocument();
    const previous = reread(undefined, doc);
    const { result: read, longest } = withLongestParse(() => rereadMeshFileText(previous, JSON.stringify(doc, null, 2), "json"));
    // Only keys are read on their own (each checked as a JSON string), no part's text.
    expect(longest).toBeLessThan(40);
    expect(read.snapshot).toBe(previous.snapshot);
  });

  test("reads a YAML file that holds JSON as JSON: only the changed services again", () => {
    const { said, held, next } = checkoutChanged();
    const last = parseSnapshot(held);
    const read = rereadMeshFileText(readOf(last, said), JSON.stringify(next), "yaml");
    expect(read.parts).toBeDefined();
    expect(read.snapshot.services.get("team-a/frontend")).toBe(last.services.get("team-a/frontend"));
  });

  test("parses a YAML document that is not JSON whole, every time", () => {
    const { said, held, next } = checkoutChanged();
    const read = rereadMeshFileText(readOf(parseSnapshot(held), said), stringify(next), "yaml");
    expect(read.parts).toBeUndefined();
    expect(read.snapshot.services.get("team-a/frontend")?.[0]?.health).toBe(next.services["team-a/frontend"][0].health);
  });
});
