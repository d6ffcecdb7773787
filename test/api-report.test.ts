/**
 * The public surface changes only on purpose: the committed report in api/ must match the code,
 * every public name has a doc comment, the README states the root's size, and aether-xds/envoy
 * exports exactly the Envoy types a user can meet in what the library returns.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, test } from "vitest";
import { type ApiReport, apiReport, committedApiReport } from "../scripts/api-report.js";
import { RESOURCE_TYPES } from "../src/emit/text.js";
import { FieldType, lookupMessage } from "../src/envoy/schema.js";
import * as packedTypes from "../src/envoy/types.js";
import { REPO_ROOT } from "./support/fixtures.js";

let report: ApiReport;
beforeAll(() => {
  report = apiReport();
}, 120_000);

describe("the API report", () => {
  test("api/ matches the code (run `npm run api:report` after changing the public surface on purpose)", () => {
    expect(Object.fromEntries(committedApiReport())).toEqual(Object.fromEntries(report.files));
  });

  test("every public name has a doc comment", () => {
    expect(report.undocumented).toEqual([]);
  });

  test("the README states how many names the root exports", () => {
    const count = report.names.get("aether-xds")!.length;
    expect(count).toBeLessThan(50);
    expect(readFileSync(`${REPO_ROOT}README.md`, "utf8")).toContain(`exports ${count} names`);
  });
});

/** Shown to users as plain JS values (ts-proto maps them), so not exported as types. */
const PLAIN_JS_TYPES = new Set([
  "google.protobuf.BoolValue",
  "google.protobuf.UInt32Value",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
  "google.protobuf.NullValue",
]);

/** Every message and enum reachable by field from `roots`, without map entries (they are plain objects). */
function reachableTypes(roots: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const visit = (typeName: string) => {
    if (seen.has(typeName) || PLAIN_JS_TYPES.has(typeName)) return;
    seen.add(typeName);
    for (const field of lookupMessage(typeName)?.fields ?? []) {
      const type = field.mapValue ?? field;
      if (type.type === FieldType.Message || type.type === FieldType.Enum) visit(type.typeName);
    }
  };
  roots.forEach(visit);
  return seen;
}

/**
 * ts-proto's name for a type (`Cluster.TransportSocketMatch` → `Cluster_TransportSocketMatch`);
 * `Xds`-prefixed where an xds.* type shares an Envoy type's name, and prefixed with its extension's
 * name where Envoy types share one (`…set_filter_state.v3.Config` → `SetFilterStateConfig`).
 */
function exportedNames(typeNames: Iterable<string>): string[] {
  const named = [...typeNames].map((typeName) => {
    const segments = typeName.split(".");
    const firstMessage = segments.findIndex((segment) => /^[A-Z]/.test(segment));
    const extension = (segments[firstMessage - 2] ?? "").replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase());
    return { typeName, name: segments.slice(firstMessage).join("_"), extension };
  });
  return named.map(({ typeName, name, extension }) => {
    const sharers = named.filter((other) => other.name === name);
    if (sharers.length === 1) return name;
    if (typeName.startsWith("xds.")) return `Xds${name}`;
    return sharers.filter((other) => !other.typeName.startsWith("xds.")).length === 1 ? name : `${extension}${name}`;
  });
}

test("aether-xds/envoy exports every Envoy type reachable from the resources, bootstrap and packed messages aether-xds returns", () => {
  const packed = Object.values(packedTypes).flatMap((value) => (typeof value === "object" && "typeName" in value ? [value.typeName] : []));
  const roots = [...Object.values(RESOURCE_TYPES), "envoy.config.bootstrap.v3.Bootstrap", "google.protobuf.Any", ...packed];
  expect(packed.length).toBeGreaterThan(10);
  expect(report.names.get("aether-xds/envoy")).toEqual(exportedNames(reachableTypes(roots)).sort());
});
