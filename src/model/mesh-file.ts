/** Reading a mesh file's text (JSON or YAML) into a snapshot. Pure: the caller reads the file. */
import { parse as parseYaml } from "yaml";
import { InputError } from "../errors.js";
import { parseSnapshot, type Snapshot } from "./snapshot.js";

export type MeshFileFormat = "json" | "yaml";

/** The format a file name implies: `.json` is JSON, anything else is YAML (a superset of JSON). */
export function meshFileFormat(fileName: string): MeshFileFormat {
  return fileName.toLowerCase().endsWith(".json") ? "json" : "yaml";
}

/** Parses mesh-file text; syntax errors become an `InputError` with the position. */
export function parseMeshFile(text: string, format: MeshFileFormat = "yaml"): Snapshot {
  return parseSnapshot(parseDocument(text, format));
}

function parseDocument(text: string, format: MeshFileFormat): unknown {
  try {
    return format === "json" ? JSON.parse(text) : parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    const message = (error as Error).message.split("\n")[0] ?? "unreadable";
    throw new InputError("snapshot", [{ path: "", message: `not valid ${format.toUpperCase()}: ${message}` }]);
  }
}
