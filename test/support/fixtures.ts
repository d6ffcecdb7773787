/** Test fixtures: the bundled example mesh, as a document to mutate or as a parsed snapshot. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { parseSnapshot, type Snapshot } from "../../src/model/snapshot.js";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const EXAMPLE_MESH = `${REPO_ROOT}testdata/flannel/mesh.yaml`;

/** A fresh copy of a mesh file's document, safe to mutate. */
export function meshDocument(path = EXAMPLE_MESH): any {
  return parseYaml(readFileSync(path, "utf8"));
}

export function exampleSnapshot(): Snapshot {
  return parseSnapshot(meshDocument());
}
