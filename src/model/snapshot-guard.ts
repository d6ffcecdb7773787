/**
 * What the public entry points accept as a snapshot: one `parseSnapshot`, `parseMeshFile` or
 * `withServiceRecords` made (validated and read-only), or any other object of the `Snapshot`
 * shape, which is validated again — as the mesh file it stands for — at every call.
 */
import { InputError } from "../errors.js";
import { describeValue } from "./issues.js";
import { isValidatedSnapshot, parseSnapshot, type Snapshot } from "./snapshot.js";

/** `value` when it is a validated snapshot; otherwise the snapshot it stands for, validated, or an `InputError`. */
export function ensureSnapshot(value: unknown): Snapshot {
  if (isValidatedSnapshot(value)) return value;
  let document: Record<string, unknown>;
  try {
    document = snapshotDocument(value);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw notASnapshot(`${describeValue(value)} (${(error as Error).message})`);
  }
  return parseSnapshot(document);
}

/** A snapshot-shaped object as the mesh-file document it stands for. */
function snapshotDocument(value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw notASnapshot(describeValue(value));
  const snapshot = value as Partial<Record<keyof Snapshot, unknown>>;
  const entries = (field: keyof Snapshot, map: unknown) => {
    if (!(map instanceof Map)) throw notASnapshot(`its ${field} is ${describeValue(map)}, not a Map`);
    return [...map];
  };
  const optional = <T>(field: keyof Snapshot, convert: (v: unknown) => T) => (snapshot[field] === undefined ? {} : { [field]: convert(snapshot[field]) });
  return {
    mesh: snapshot.mesh,
    nodes: snapshot.nodes,
    services: Object.fromEntries(entries("services", snapshot.services)),
    protocols: Object.fromEntries(entries("protocols", snapshot.protocols).map(([key, ports]) => [key, Object.fromEntries(entries("protocols", ports))])),
    ...optional("exports", (exports) => {
      if (!(exports instanceof Set)) throw notASnapshot(`its exports is ${describeValue(exports)}, not a Set`);
      return [...exports];
    }),
    ...optional("dependencies", (dependencies) => Object.fromEntries(entries("dependencies", dependencies))),
    ...optional("vips", (vips) => Object.fromEntries(entries("vips", vips))),
  };
}

function notASnapshot(what: string): InputError {
  return new InputError("snapshot", [
    { path: "", message: `not a Snapshot: ${what}; build one with parseSnapshot, parseMeshFile, withServiceRecords or withNodes` },
  ]);
}
