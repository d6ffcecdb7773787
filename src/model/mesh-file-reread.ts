/**
 * A mesh file read again (the mesh-file source re-reads it on every change): only the services
 * whose records changed are validated, as `withServiceRecords` validates an update, instead of the
 * whole file, and the node list (`withNodes`) or the other settings (`settingsUpdate`, with the
 * records served) when they changed. What changed is told by a digest of each service's records,
 * of the node list and of the rest, as JSON text, kept from the last read. On W1's 45 MB file with
 * one record changed, a re-read then costs its syntax step, the digests and the one service
 * (~0.7 s) instead of `parseSnapshot` over 100,000 records and `asRegistryUpdate` (~1.6 s). A
 * change to the mesh settings themselves is parsed whole.
 */
import { createHash } from "node:crypto";
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
  readonly digests: DocumentDigests | undefined;
}

interface DocumentDigests {
  /** Everything in the document but its node list and services. */
  readonly rest: string;
  readonly nodes: string;
  /** Each service's records, by key. */
  readonly services: ReadonlyMap<string, string>;
}

/** A JSON document whose services are an object (`digestsOf`): its node list and other settings beside them. */
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
  const digests = document.json ? digestsOf(document.value) : undefined;
  if (previous?.digests && digests) {
    const snapshot = updated(previous.snapshot, previous.digests, digests, document.value as UpdatedParts);
    if (snapshot) return { snapshot, digests };
  }
  const parsed = parseSnapshot(document.value);
  return { snapshot: previous ? asRegistryUpdate(previous.snapshot, parsed) : parsed, digests };
}

/**
 * Digests of a JSON document: its node list, its services one by one, and the rest.
 * `JSON.stringify` gives each value's text back exactly for what `JSON.parse` made, but for two
 * blurs no field can tell: `1e999`, read as `Infinity` and written `null` (no field takes
 * either), and `-0`, written `0`.
 */
function digestsOf(value: unknown): DocumentDigests | undefined {
  if (!isPlainObject(value)) return undefined;
  // No services at all is a mistake, not none: left to the whole parse.
  const { services, nodes, ...rest } = value;
  if (!isPlainObject(services)) return undefined;
  const digests = new Map<string, string>();
  for (const [key, records] of Object.entries(services)) digests.set(key, digest(records));
  // An absent list is not `null`: only one of them may be valid.
  return { rest: digest(rest), nodes: nodes === undefined ? "absent" : digest(nodes), services: digests };
}

/**
 * `snapshot` with the settings or node list that changed (`settingsApplied`), then the services
 * that changed, replaced; undefined when the mesh settings changed, or when the changes do not
 * validate that way (one part at a time, the settings first).
 */
function updated(snapshot: Snapshot, before: DocumentDigests, after: DocumentDigests, parts: UpdatedParts): Snapshot | undefined {
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
function settingsApplied(snapshot: Snapshot, before: DocumentDigests, after: DocumentDigests, parts: UpdatedParts): Snapshot | undefined {
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

function digest(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("base64");
}
