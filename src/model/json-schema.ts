/**
 * The mesh file's JSON Schema, so editors validate mesh files as users type. It is generated from
 * the zod schemas `parseSnapshot` validates with (`meshFile`), so a field added there is in the
 * schema at the next `npm run gen:schema`, and a test fails until it is. Registry records appear
 * in the two forms a file can hold them: proto3 JSON, or the binary record in base64. Checks that
 * JSON Schema cannot express (IP syntax, DNS labels, cross-references) are left to `parseSnapshot`.
 */
import { z } from "zod";
import { endpointJson } from "./registry.js";
import { BASE64, meshFile, serviceKeyField } from "./snapshot.js";

const base64Record = z.string().regex(BASE64).describe("a binary aether.registry.v1.ServiceEndpoint, base64-encoded");

/** The mesh file as written in JSON or YAML, before defaults: the JSON Schema's source. */
const meshFileAsWritten = meshFile.extend({ services: z.record(serviceKeyField, z.array(z.union([endpointJson, base64Record]))) }).meta({
  title: "aether-xds mesh file",
  description: "One mesh: settings, node status, registry records per service, exports, protocols and dependencies. See docs/contract.md.",
});

/** The JSON Schema (draft 2020-12) of a mesh file. */
export function meshFileJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(meshFileAsWritten, { io: "input" });
}
