/**
 * The shipped JSON Schema of the mesh file: generated from the zod schemas and never stale, it
 * accepts every mesh file the project ships (in both record forms, with a `$schema` key) and
 * refuses what `parseSnapshot` refuses for its shape: unknown keys, missing sections, wrong enums.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { MESH_FILE_SCHEMA_PATH, meshFileSchemaText } from "../../scripts/mesh-file-schema.js";
import { encodeServiceEndpoint } from "../../src/model/registry.js";
import { parseSnapshot } from "../../src/model/snapshot.js";
import { meshDocument, REPO_ROOT } from "../support/fixtures.js";

const validate = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true }).compile(JSON.parse(readFileSync(MESH_FILE_SCHEMA_PATH, "utf8")));

/** The errors of a document under the schema, as `<path> <message>`. */
function schemaErrors(document: unknown): string[] {
  return validate(document) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message}`);
}

const MESH_FILES = readdirSync(`${REPO_ROOT}testdata`).flatMap((dir) =>
  readdirSync(join(REPO_ROOT, "testdata", dir))
    .filter((file) => file === "mesh.yaml")
    .map((file) => `testdata/${dir}/${file}`),
);

test("schema/mesh-file.schema.json is generated from the zod schemas (run `npm run gen:schema` after changing them)", () => {
  expect(readFileSync(MESH_FILE_SCHEMA_PATH, "utf8")).toBe(meshFileSchemaText());
});

describe("the schema accepts", () => {
  test.each(MESH_FILES)("%s", (file) => {
    expect(MESH_FILES.length).toBeGreaterThanOrEqual(5);
    expect(schemaErrors(parseYaml(readFileSync(`${REPO_ROOT}${file}`, "utf8")))).toEqual([]);
  });

  test("records in binary form (base64) and a `$schema` key, which parseSnapshot accepts too", () => {
    const document = meshDocument();
    const [key, records] = Object.entries(document.services)[0] as [string, unknown[]];
    const [first] = parseSnapshot(document).services.get(key as `${string}/${string}`)!;
    document.services[key] = [Buffer.from(encodeServiceEndpoint(first!)).toString("base64"), ...records.slice(1)];
    document.$schema = "./node_modules/aether-xds/schema/mesh-file.schema.json";
    expect(schemaErrors(document)).toEqual([]);
    expect(parseSnapshot(document).services.get(key as `${string}/${string}`)).toHaveLength(records.length);
  });
});

describe("the schema refuses", () => {
  test.each([
    ["an unknown top-level key", (d: any) => (d.meshes = d.mesh), "/ must NOT have additional properties"],
    ["a missing mesh section", (d: any) => delete d.mesh, "/ must have required property 'mesh'"],
    ["an unknown key in a record", (d: any) => (Object.values<any[]>(d.services)[0]![0].podIp = "10.0.0.1"), "must NOT have additional properties"],
    [
      "a protocol that is neither http2 nor tcp",
      (d: any) => (d.protocols = { "team-a/checkout": { "8080": "http3" } }),
      "must be equal to one of the allowed values",
    ],
    ["a trust mode that does not exist", (d: any) => (d.mesh.trust = { mode: "mixed" }), "/mesh/trust must match exactly one schema in oneOf"],
  ])("%s", (_, change, expected) => {
    const document = meshDocument();
    change(document);
    expect(schemaErrors(document).join("\n")).toContain(expected);
    expect(() => parseSnapshot(document)).toThrow();
  });
});
