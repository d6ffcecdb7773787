/**
 * Writes schema/mesh-file.schema.json, the mesh file's JSON Schema, from the zod schemas
 * (`meshFileJsonSchema` in src/model/snapshot.ts). `npm run gen:schema`; `test/model/json-schema.test.ts` fails when
 * the committed file is stale.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { meshFileJsonSchema } from "../src/model/snapshot.js";

export const MESH_FILE_SCHEMA_PATH = fileURLToPath(new URL("../schema/mesh-file.schema.json", import.meta.url));

/** The file's text: the schema as indented JSON. */
export function meshFileSchemaText(): string {
  return `${JSON.stringify(meshFileJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(MESH_FILE_SCHEMA_PATH, meshFileSchemaText());
  console.log(`wrote ${MESH_FILE_SCHEMA_PATH}`);
}
