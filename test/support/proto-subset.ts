/** Our `proto/` subset loaded with protobufjs, for comparing it field by field with upstream. */
import { readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, relative } from "node:path";
import protobuf from "protobufjs";
import { REPO_ROOT } from "./fixtures.js";

const require = createRequire(import.meta.url);
const PROTO_DIR = join(REPO_ROOT, "proto");

export function subsetFiles(): string[] {
  return readdirSync(PROTO_DIR, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".proto"))
    .map((file) => relative(PROTO_DIR, join(PROTO_DIR, file)))
    .sort();
}

export function subsetRoot(): protobuf.Root {
  const root = new protobuf.Root();
  const wellKnown = dirname(require.resolve("protobufjs/package.json"));
  root.resolvePath = (_origin, target) =>
    isAbsolute(target) ? target : target.startsWith("google/protobuf/") ? join(wellKnown, target) : join(PROTO_DIR, target);
  root.loadSync(subsetFiles(), { keepCase: true });
  root.resolveAll();
  return root;
}

/** Every message and enum declared in a namespace, depth first. */
export function declaredTypes(namespace: protobuf.NamespaceBase): (protobuf.Type | protobuf.Enum)[] {
  return namespace.nestedArray.flatMap((nested) => {
    const own = nested instanceof protobuf.Type || nested instanceof protobuf.Enum ? [nested] : [];
    const inner = nested instanceof protobuf.Namespace || nested instanceof protobuf.Type ? declaredTypes(nested) : [];
    return [...own, ...inner];
  });
}

/** How a field is declared, in a form that must match upstream exactly. */
export function fieldSignature(field: protobuf.Field): string {
  field.resolve();
  const type = field.resolvedType ? field.resolvedType.fullName : field.type;
  const map = field.map ? `map<${(field as unknown as protobuf.MapField).keyType}, ${type}>` : undefined;
  const label = field.repeated && !field.map ? "repeated " : "";
  const oneof = field.partOf ? ` (oneof ${field.partOf.name})` : "";
  return `${label}${map ?? type} ${field.name} = ${field.id}${oneof}`;
}

/** Differences between one of our types and the upstream type of the same name. */
export function compareWithUpstream(ours: protobuf.Type | protobuf.Enum, upstream: protobuf.ReflectionObject | null): string[] {
  const name = ours.fullName.slice(1);
  if (!upstream) return [`${name}: not in upstream`];
  if (ours instanceof protobuf.Enum) {
    if (!(upstream instanceof protobuf.Enum)) return [`${name}: upstream is not an enum`];
    return Object.entries(ours.values)
      .filter(([value, number]) => upstream.values[value] !== number)
      .map(([value, number]) => `${name}.${value} = ${number}: upstream has ${upstream.values[value] ?? "no such value"}`);
  }
  if (!(upstream instanceof protobuf.Type)) return [`${name}: upstream is not a message`];
  return ours.fieldsArray.flatMap((field) => {
    const theirs = upstream.fields[field.name];
    const mine = fieldSignature(field);
    if (!theirs) return [`${name}: ${mine}: upstream has no field ${field.name}`];
    const upstreamSignature = fieldSignature(theirs);
    return upstreamSignature === mine ? [] : [`${name}: ${mine}: upstream declares ${upstreamSignature}`];
  });
}
