/**
 * A mesh file read again (the mesh-file source re-reads it on every change): only the services
 * whose records changed are validated, as `withServiceRecords` validates an update, instead of the
 * whole file, and the node list (`withNodes`) or the other settings (`settingsUpdate`, with the
 * records served) when they changed. What changed is told by the text of each service's records,
 * of the node list and of the rest, as the file wrote them (`JsonOutline`), kept from the last
 * read; only the text that changed is parsed (`JSON.parse` of a whole 45 MB file takes ~0.3 s)
 * and scanned again (`outlineAgain`). On W1's file with one record changed, a re-read then costs
 * ~25–70 ms instead of `parseSnapshot` over 100,000 records and `asRegistryUpdate` (~1.6 s). A
 * change to the mesh settings themselves is parsed whole.
 */
import { isInputError } from "../errors.js";
import type { ServiceKey } from "../naming.js";
import { setOwn } from "../util/maps.js";
import { sameData } from "../util/same-data.js";
import { withoutJsonSpaces } from "./json-keys.js";
import type { JsonOutline, OutlinedMember } from "./json-outline.js";
import { type MeshFileDocument, type MeshFileFormat, outlinedJson, readMeshFileDocument } from "./mesh-file.js";
import { asRegistryUpdate, settingsUpdate } from "./registry-update.js";
import { parseSnapshot, type Snapshot, withNodes, withServiceRecords } from "./snapshot.js";

/** A mesh file read: the snapshot, and what tells which parts the next read changed. */
export interface MeshFileRead {
  readonly snapshot: Snapshot;
  /** Of a JSON document whose services are an object; undefined otherwise (the next read parses it whole). */
  readonly parts: DocumentParts | undefined;
  /** Where the parts are in the document's text: the next read scans again only where it changed (`outlineAgain`). */
  readonly outline: JsonOutline | undefined;
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

/**
 * What a re-read reads of a JSON document: the services whose text changed, and, when they
 * changed, the node list or every other member (`changedValues`; or the whole document, parsed).
 */
interface UpdatedParts extends Readonly<Record<string, unknown>> {
  readonly nodes?: unknown;
  readonly services: Readonly<Record<string, unknown>>;
}

/**
 * The mesh file `text` read again after `previous`: as `rereadMeshFile` reads it, parsing only the
 * parts whose text changed when the rest of the text is as JSON puts it around them
 * (`outlinedJson`). Anything else — a first read, YAML, a text that is not JSON, a part that does
 * not parse — goes to `readMeshFileDocument` whole, so the file's errors are its errors.
 */
export function rereadMeshFileText(previous: MeshFileRead | undefined, text: string, format: MeshFileFormat): MeshFileRead {
  const outline = previous?.parts && outlinedJson(text, format, previous.outline);
  const read = outline ? rereadOutlined(previous!, outline) : undefined;
  return read ?? rereadMeshFile(previous, readMeshFileDocument(text, format));
}

/**
 * The snapshot of `document`, as an update of the last read's snapshot (`asRegistryUpdate`: that
 * snapshot itself when nothing changed). Where the mesh settings changed, or the changes do not
 * validate on their own, the whole document is parsed, so a bad file's errors are
 * `parseSnapshot`'s, every one of them.
 */
function rereadMeshFile(previous: MeshFileRead | undefined, document: MeshFileDocument): MeshFileRead {
  const parts = partsOf(document.outline);
  if (previous?.parts && parts) {
    const snapshot = updated(previous.snapshot, partChanges(previous.parts, parts), document.value as UpdatedParts);
    if (snapshot) return { snapshot, parts, outline: document.outline };
  }
  const parsed = parseSnapshot(document.value);
  return { snapshot: previous ? asRegistryUpdate(previous.snapshot, parsed) : parsed, parts, outline: parts && document.outline };
}

/** `rereadMeshFile` of a text only outlined: undefined where a part that changed does not parse, or the update needs the whole document. */
function rereadOutlined(previous: MeshFileRead, outline: JsonOutline): MeshFileRead | undefined {
  const parts = partsOf(outline);
  if (!parts) return undefined;
  const changes = partChanges(previous.parts!, parts);
  let document: UpdatedParts;
  try {
    document = changedValues(changes, parts, outline);
  } catch (error) {
    if (error instanceof SyntaxError) return undefined;
    throw error;
  }
  const snapshot = updated(previous.snapshot, changes, document);
  return snapshot && { snapshot, parts, outline };
}

/**
 * Which parts' text changed from one read to the next, layout aside (`withoutJsonSpaces`): a file
 * laid out anew (compact to indented) changes nothing, and costs two passes over the text, not
 * parsing and validating every service again.
 */
interface PartChanges {
  readonly rest: boolean;
  readonly nodes: boolean;
  /** Services whose text is new or changed. */
  readonly services: readonly string[];
  readonly gone: readonly string[];
}

function partChanges(before: DocumentParts, after: DocumentParts): PartChanges {
  return {
    rest: !sameJson(before.rest, after.rest),
    nodes: !sameJson(before.nodes, after.nodes),
    services: [...after.services].filter(([key, text]) => !sameJson(before.services.get(key), text)).map(([key]) => key),
    gone: [...before.services.keys()].filter((key) => !after.services.has(key)),
  };
}

/** Whether two parts' texts say the same, as far as their tokens tell (undefined: no such part). */
function sameJson(a: string | undefined, b: string | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && withoutJsonSpaces(a) === withoutJsonSpaces(b));
}

/** The values of the parts `updated` reads: the services whose text changed, and the node list or every setting if theirs did. */
function changedValues(changes: PartChanges, after: DocumentParts, outline: JsonOutline): UpdatedParts {
  const services: Record<string, unknown> = {};
  for (const key of changes.services) setOwn(services, key, memberValue(after.services.get(key)!));
  const document: Record<string, unknown> = { services };
  if (changes.rest) {
    for (const member of outline.members) if (member.key !== "services") setOwn(document, member.key, memberValue(outline.textOf(member)));
  } else if (changes.nodes && after.nodes !== undefined) document.nodes = memberValue(after.nodes);
  return document as UpdatedParts;
}

/** The value a member's text holds (after its colon); a `SyntaxError` if it is not JSON. */
function memberValue(text: string): unknown {
  return JSON.parse(text.slice(text.indexOf(":") + 1));
}

/** The parts of a JSON document from its outline; undefined without services as an object. */
function partsOf(outline: JsonOutline | undefined): DocumentParts | undefined {
  // No services at all is a mistake, not none: left to the whole parse.
  if (!outline?.services) return undefined;
  const texts = (members: readonly OutlinedMember[]) => new Map(members.map((member) => [member.key, outline.textOf(member)]));
  const members = texts(outline.members);
  // Each member as `"key": value`, joined: a JSON object's text, which reads back to those members alone.
  const rest = [...members]
    .filter(([key]) => key !== "services" && key !== "nodes")
    .map(([key, text]) => JSON.stringify(key) + text)
    .join(",");
  return { rest, nodes: members.get("nodes"), services: texts(outline.services) };
}

/**
 * `snapshot` with the settings or node list that changed (`settingsApplied`), then the services
 * that changed, replaced; undefined when the mesh settings changed, or when the changes do not
 * validate that way (one part at a time, the settings first).
 */
function updated(snapshot: Snapshot, changes: PartChanges, parts: UpdatedParts): Snapshot | undefined {
  try {
    const settled = settingsApplied(snapshot, changes, parts);
    return settled && withChangedServices(settled, changedServices(changes, parts.services));
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
function settingsApplied(snapshot: Snapshot, changes: PartChanges, parts: UpdatedParts): Snapshot | undefined {
  if (changes.rest) {
    const { services: _, ...settings } = parts;
    return settingsUpdate(snapshot, settings);
  }
  return changes.nodes ? withNodes(snapshot, parts.nodes as readonly unknown[]) : snapshot;
}

/** The services whose records are new, changed or gone (`undefined`), with their records as read. */
function changedServices(changes: PartChanges, services: Readonly<Record<string, unknown>>) {
  const changed = new Map<string, readonly unknown[] | undefined>();
  for (const key of changes.services) changed.set(key, services[key] as readonly unknown[]);
  for (const key of changes.gone) changed.set(key, undefined);
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
