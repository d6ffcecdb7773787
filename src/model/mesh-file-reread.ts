/**
 * A mesh file read again (the mesh-file source re-reads it on every change): only the services
 * whose records changed are validated, as `withServiceRecords` validates an update, instead of the
 * whole file, and the node list (`withNodes`) or the other settings (`settingsUpdate`, with the
 * records served) when they changed. What changed is told by the text of each service's records,
 * of the node list and of the rest, as the file wrote them (`JsonOutline`, found by the syntax
 * step's duplicate-key scan), kept from the last read. On W1's 45 MB file with one record changed,
 * a re-read then costs its syntax step and the one service (~0.55 s) instead of `parseSnapshot`
 * over 100,000 records and `asRegistryUpdate` (~1.6 s). A change to the mesh settings themselves
 * is parsed whole.
 */
import { isInputError } from "../errors.js";
import type { ServiceKey } from "../naming.js";
import { isPlainObject, sameData } from "../util/same-data.js";
import type { MeshFileDocument } from "./mesh-file.js";
import { asRegistryUpdate, settingsUpdate } from "./registry-update.js";
import { parseSnapshot, type Snapshot, withNodes, withServiceRecords } from "./snapshot.js";

/** A mesh file read: the snapshot, and what tells which parts the next read changed. */
export interface MeshFileRead {
  readonly snapshot: Snapshot;
  /** Of a JSON document whose services are an object; undefined otherwise (the next read parses it whole). */
  readonly parts: DocumentParts | undefined;
}

/**
 * A JSON document's parts as written: slices of its text (so a read keeps the text it was made
 * from, until the next read). Equal texts are equal values; unequal ones may still be (spaces,
 * key order), which only costs validating those parts again.
 */
interface DocumentParts {
  /** Every member of the document but its node list and services, each with its key. */
  readonly rest: string;
  /** Undefined: the document has no node list (not the same as `null`, only one of which may be valid). */
  readonly nodes: string | undefined;
  /** Each service's records, by key. */
  readonly services: ReadonlyMap<string, string>;
}

/** A JSON document whose services are an object (`partsOf`): its node list and other settings beside them. */
interface UpdatedParts extends Readonly<Record<string, unknown>> {
  readonly nodes?: unknown;
  readonly services: Record<string, unknown>;
}

/**
 * The snapshot of `document`, as an update of the last read's snapshot (`asRegistryUpdate`: that
 * snapshot itself when nothing changed). Where the mesh settings changed, or the changes do not
 * validate on their own, the whole document is parsed, so a bad file's errors are
 * `parseSnapshot`'s, every one of them.
 */
export function rereadMeshFile(previous: MeshFileRead | undefined, document: MeshFileDocument): MeshFileRead {
  const parts = partsOf(document);
  if (previous?.parts && parts) {
    const snapshot = updated(previous.snapshot, previous.parts, parts, document.value as UpdatedParts);
    if (snapshot) return { snapshot, parts };
  }
  const parsed = parseSnapshot(document.value);
  return { snapshot: previous ? asRegistryUpdate(previous.snapshot, parsed) : parsed, parts };
}

/** The parts of a document `JSON.parse` read, from its outline; undefined without services as an object. */
function partsOf({ value, outline }: MeshFileDocument): DocumentParts | undefined {
  // No services at all is a mistake, not none: left to the whole parse.
  if (!outline?.services || !isPlainObject(value)) return undefined;
  // Each member as `"key": value`, joined: a JSON object's text, which reads back to those members alone.
  const rest = [...outline.members]
    .filter(([key]) => key !== "services" && key !== "nodes")
    .map(([key, text]) => JSON.stringify(key) + text)
    .join(",");
  return { rest, nodes: outline.members.get("nodes"), services: outline.services };
}

/**
 * `snapshot` with the settings or node list that changed (`settingsApplied`), then the services
 * that changed, replaced; undefined when the mesh settings changed, or when the changes do not
 * validate that way (one part at a time, the settings first).
 */
function updated(snapshot: Snapshot, before: DocumentParts, after: DocumentParts, parts: UpdatedParts): Snapshot | undefined {
  try {
    const settled = settingsApplied(snapshot, before, after, parts);
    return settled && withChangedServices(settled, changedServices(before.services, after.services, parts.services));
  } catch (error) {
    if (isInputError(error)) return undefined;
    throw error;
  }
}

/**
 * `snapshot` with the document's settings: as they were, a new node list (`withNodes`: it
 * validates whatever it is given, and an absent list reads as none, as in a whole parse), or new
 * settings (`settingsUpdate`; undefined when the mesh settings changed).
 */
function settingsApplied(snapshot: Snapshot, before: DocumentParts, after: DocumentParts, parts: UpdatedParts): Snapshot | undefined {
  if (after.rest !== before.rest) {
    const { services: _, ...settings } = parts;
    return settingsUpdate(snapshot, settings);
  }
  return after.nodes === before.nodes ? snapshot : withNodes(snapshot, parts.nodes as readonly unknown[]);
}

/** The services whose records are new, changed or gone (`undefined`), with their records as read. */
function changedServices(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, services: Record<string, unknown>) {
  const changed = new Map<string, readonly unknown[] | undefined>();
  for (const [key, print] of after) if (before.get(key) !== print) changed.set(key, services[key] as readonly unknown[]);
  for (const key of before.keys()) if (!after.has(key)) changed.set(key, undefined);
  return changed;
}

/**
 * `snapshot` with the services whose records changed replaced, the others (their text changed, not
 * what it says: a key order inside a record) left as they were.
 */
function withChangedServices(snapshot: Snapshot, changed: ReadonlyMap<string, readonly unknown[] | undefined>): Snapshot {
  const next = withServiceRecords(snapshot, changed);
  const sameAsBefore = (key: string) => sameData(next.services.get(key as ServiceKey), snapshot.services.get(key as ServiceKey));
  const really = new Map([...changed].filter(([key]) => !sameAsBefore(key)));
  // Nothing really changed: an empty update gives `snapshot` itself.
  return really.size === changed.size ? next : withServiceRecords(snapshot, really);
}
