/** Reading a mesh file's text (JSON or YAML) into a snapshot. Pure: the caller reads the file. */
import { parseDocument as parseYamlDocument } from "yaml";
import { InputError } from "../errors.js";
import { firstDuplicateKey } from "./json-keys.js";
import { parseSnapshot, type Snapshot } from "./snapshot.js";

export type MeshFileFormat = "json" | "yaml";

/** The format a file name implies: `.json` is JSON, anything else is YAML (a superset of JSON). */
export function meshFileFormat(fileName: string): MeshFileFormat {
  return fileName.toLowerCase().endsWith(".json") ? "json" : "yaml";
}

/** The largest mesh file accepted, in characters (the CLI checks the file's size in bytes). */
export const MAX_MESH_FILE_LENGTH = 256 * 1024 * 1024;

/**
 * Parses mesh-file text; syntax errors, duplicate keys and oversized text become an `InputError`.
 * YAML aliases are capped, so a "billion laughs" document cannot blow up.
 */
export function parseMeshFile(text: string, format: MeshFileFormat = "yaml"): Snapshot {
  if (text.length > MAX_MESH_FILE_LENGTH) throw syntaxError(format, `${text.length} characters, over the limit of ${MAX_MESH_FILE_LENGTH}`);
  return parseSnapshot(format === "json" ? parseJson(text) : parseYamlText(text));
}

function parseJson(text: string): unknown {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw syntaxError("json", (error as Error).message);
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate) throw syntaxError("json", `duplicate key ${JSON.stringify(duplicate.key)} at line ${duplicate.line}`);
  return document;
}

/** Strict YAML: errors and warnings (an unknown tag, say) both refuse the file. */
function parseYamlText(text: string): unknown {
  let document: ReturnType<typeof parseYamlDocument>;
  try {
    document = parseYamlDocument(text, { uniqueKeys: true, logLevel: "silent" });
  } catch (error) {
    throw syntaxError("yaml", (error as Error).message);
  }
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) throw syntaxError("yaml", problem.message);
  try {
    return document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw syntaxError("yaml", (error as Error).message);
  }
}

function syntaxError(format: MeshFileFormat, message: string): InputError {
  return new InputError("snapshot", [{ path: "", message: `not valid ${format.toUpperCase()}: ${message.split("\n")[0] ?? "unreadable"}` }]);
}
