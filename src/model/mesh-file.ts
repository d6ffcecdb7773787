/** Reading a mesh file's text (JSON or YAML) into a snapshot. Pure: the caller reads the file. */
import { isScalar, parseAllDocuments } from "yaml";
import { InputError } from "../errors.js";
import { firstDuplicateKey } from "./json-keys.js";
import { JsonOutline, outlineAgain, wellFormedAround } from "./json-outline.js";
import { parseSnapshot, type Snapshot } from "./snapshot.js";

export type MeshFileFormat = "json" | "yaml";

/** The format a file name implies: `.json` is JSON, anything else is YAML (a superset of JSON). */
export function meshFileFormat(fileName: string): MeshFileFormat {
  return fileName.toLowerCase().endsWith(".json") ? "json" : "yaml";
}

/** The largest mesh file accepted, in characters (the CLI checks the file's size in bytes). */
export const MAX_MESH_FILE_LENGTH = 256 * 1024 * 1024;

/**
 * Parses a mesh file, given as its bytes (which must be UTF-8) or as text. Syntax errors, invalid
 * UTF-8, duplicate keys, more than one YAML document and oversized input become an `InputError`;
 * a leading byte-order mark is ignored, in JSON as in YAML. YAML aliases are capped, so a "billion
 * laughs" document cannot blow up.
 */
export function parseMeshFile(input: string | Uint8Array, format: MeshFileFormat = "yaml"): Snapshot {
  return parseSnapshot(readMeshFileDocument(input, format).value);
}

/** A mesh file's document, read but not validated. */
export interface MeshFileDocument {
  readonly value: unknown;
  /** Whether `JSON.parse` read it: its values are then JSON's only (no YAML-only `.nan`, tags...). */
  readonly json: boolean;
  /** Where its parts are written, when `JSON.parse` read it (`JsonOutline`). */
  readonly outline?: JsonOutline;
}

/** The syntax step of `parseMeshFile`, with the same errors: the document `parseSnapshot` validates. */
export function readMeshFileDocument(input: string | Uint8Array, format: MeshFileFormat = "yaml"): MeshFileDocument {
  const length = input.length;
  if (length > MAX_MESH_FILE_LENGTH)
    throw syntaxError(format, `${length} ${typeof input === "string" ? "characters" : "bytes"}, over the limit of ${MAX_MESH_FILE_LENGTH}`);
  const text = (typeof input === "string" ? input : decodeUtf8(input, format)).replace(/^\uFEFF/, "");
  return format === "json" ? parseJson(text) : yamlDocument(text);
}

/**
 * The outline of a mesh file that may be JSON, without `JSON.parse`: undefined unless the text
 * around its members is well formed (`wellFormedAround`) and no key is written twice. Its members'
 * texts are not checked: the caller parses those it has not seen in a good read. Given the outline
 * of that read, only the members that changed are scanned again (`outlineAgain`), where it can
 * tell them. Anything else — a file too large, YAML, a text that is not JSON — is left to
 * `readMeshFileDocument`, whose errors are the file's.
 */
export function outlinedJson(text: string, format: MeshFileFormat, previous?: JsonOutline): JsonOutline | undefined {
  if (text.length > MAX_MESH_FILE_LENGTH) return undefined;
  const stripped = text.replace(/^\uFEFF/, "");
  if (format === "yaml" && !JSON_COLLECTION_START.test(stripped)) return undefined;
  const again = previous && outlineAgain(previous, stripped);
  if (again) return again;
  const outline = new JsonOutline(stripped);
  try {
    // Text JSON.parse has not accepted: an escaped key may not decode.
    if (firstDuplicateKey(stripped, outline)) return undefined;
  } catch {
    return undefined;
  }
  return wellFormedAround(outline) ? outline : undefined;
}

function decodeUtf8(bytes: Uint8Array, format: MeshFileFormat): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw syntaxError(format, "the file is not valid UTF-8");
  }
}

function parseJson(text: string): MeshFileDocument {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw syntaxError("json", (error as Error).message);
  }
  const outline = new JsonOutline(text);
  const duplicate = firstDuplicateKey(text, outline);
  if (duplicate) throw syntaxError("json", `duplicate key ${JSON.stringify(duplicate.key)} at line ${duplicate.line}`);
  return { value, json: true, outline };
}

/**
 * Two keys are the same key when they become the same property: `1`, `"1"` and `1.0`... as the
 * text JavaScript gives them, `true` and `"true"`, `null`, `~` and `"null"`.
 */
function sameKey(a: unknown, b: unknown): boolean {
  return isScalar(a) && isScalar(b) ? String(a.value) === String(b.value) : a === b;
}

/**
 * A YAML mesh file's document. JSON is YAML, and a YAML file often holds JSON (standard input is
 * read as YAML): such a document is read by `JSON.parse`, some thirty times faster than the YAML
 * parser (W1's 45 MB: ~1.5 s instead of ~50 s), to the same value. Anything else — a JSON document
 * with a key twice included — goes to `strictYamlDocument`, which decides and words every error.
 */
export function parseYamlText(text: string): unknown {
  return yamlDocument(text).value;
}

/** `parseYamlText`, saying which parser read the document. */
function yamlDocument(text: string): MeshFileDocument {
  return jsonDocument(text) ?? { value: strictYamlDocument(text), json: false };
}

/** The document as the YAML parser reads it: one document; errors and warnings (an unknown tag, say) both refuse it. */
export function strictYamlDocument(text: string): unknown {
  let documents: ReturnType<typeof parseAllDocuments>;
  try {
    documents = parseAllDocuments(text, { uniqueKeys: sameKey, logLevel: "silent" });
  } catch (error) {
    throw syntaxError("yaml", (error as Error).message);
  }
  if (documents.length === 0) return null; // an empty stream: no document at all
  if (documents.length > 1) throw syntaxError("yaml", `${documents.length} documents ("---"): a mesh file is one document`);
  const document = documents[0]!;
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) throw syntaxError("yaml", problem.message);
  try {
    return document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw syntaxError("yaml", (error as Error).message);
  }
}

/** The document, when `text` is a JSON object or array that `parseJson` takes (no key twice). */
function jsonDocument(text: string): MeshFileDocument | undefined {
  if (!JSON_COLLECTION_START.test(text)) return undefined;
  try {
    return parseJson(text);
  } catch (error) {
    if (error instanceof InputError) return undefined;
    throw error;
  }
}

/** JSON's whitespace, then `{` or `[`: what a JSON mesh file starts with (and no YAML block mapping). */
const JSON_COLLECTION_START = /^[ \t\n\r]*[{[]/;

function syntaxError(format: MeshFileFormat, message: string): InputError {
  return new InputError("snapshot", [{ path: "", message: `not valid ${format.toUpperCase()}: ${message.split("\n")[0] ?? "unreadable"}` }]);
}
