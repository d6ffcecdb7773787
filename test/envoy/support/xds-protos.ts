/**
 * Envoy's own .proto files as shipped in `@grpc/grpc-js-xds` (deps/envoy-api, xds, validate,
 * googleapis), loaded two ways: as gRPC service definitions (`@grpc/proto-loader`, snake_case
 * fields, Any as `{type_url, value}`) and as a protobufjs Root to encode resources into Any values.
 * Test-only: the library itself uses its generated code.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const require = createRequire(import.meta.url);
const XDS_PACKAGE_DIR = dirname(require.resolve("@grpc/grpc-js-xds/package.json"));

export const PROTO_INCLUDE_DIRS = [
  join(XDS_PACKAGE_DIR, "deps/envoy-api"),
  join(XDS_PACKAGE_DIR, "deps/xds"),
  join(XDS_PACKAGE_DIR, "deps/protoc-gen-validate"),
  join(XDS_PACKAGE_DIR, "deps/googleapis"),
  dirname(require.resolve("protobufjs/package.json")),
];

export const SECRET_TYPE_URL = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";

/** gRPC service definitions and message types from `files`, fields as written in the .proto (snake_case). */
export function loadGrpcPackage(files: readonly string[]): grpc.GrpcObject {
  const definition = protoLoader.loadSync([...files], {
    includeDirs: PROTO_INCLUDE_DIRS,
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: false,
  });
  return grpc.loadPackageDefinition(definition);
}

const roots = new Map<string, protobuf.Root>();

/** A protobufjs Root with `files` (and their imports) loaded, snake_case fields. */
export function envoyRoot(files: readonly string[]): protobuf.Root {
  const key = files.join("\n");
  const cached = roots.get(key);
  if (cached) return cached;
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => {
    if (isAbsolute(target)) return target;
    const found = PROTO_INCLUDE_DIRS.map((dir) => join(dir, target)).find((candidate) => existsSync(candidate));
    return found ?? protobuf.util.path.resolve(origin, target);
  };
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  roots.set(key, root);
  return root;
}

/** Encodes a message given in Envoy's JSON field names (snake_case) as `{type_url, value}`. */
export function packAny(root: protobuf.Root, typeName: string, value: object): { type_url: string; value: Buffer } {
  const type = root.lookupType(typeName);
  const problem = type.verify(value);
  if (problem) throw new Error(`${typeName}: ${problem}`);
  return { type_url: `type.googleapis.com/${typeName}`, value: Buffer.from(type.encode(type.fromObject(value)).finish()) };
}

/** Decodes an Any packed by `packAny` (or sent by a server) back to a plain object. */
export function unpackAny(root: protobuf.Root, any: { type_url: string; value: Uint8Array }): Record<string, unknown> {
  const typeName = any.type_url.slice(any.type_url.lastIndexOf("/") + 1);
  const type = root.lookupType(typeName);
  return type.toObject(type.decode(any.value), { longs: String, enums: String, bytes: String }) as Record<string, unknown>;
}
