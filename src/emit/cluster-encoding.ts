/**
 * A faster `Cluster.encode` for the shape aether-xds emits, producing exactly the same bytes.
 *
 * An outbound cluster is mostly its socket table — one entry per source identity and variant,
 * each a few hundred bytes of already-encoded TLS context — plus a matcher shared by every cluster
 * of the node. The generated encoder re-walks all of it and, nesting message in message, shifts
 * each entry's bytes once per level. Here each entry is written once, with its lengths computed
 * up front, and each matcher is encoded once for all the clusters that share it. The field order
 * is the generated encoder's (declaration order: 43, 59, then the rest).
 */
import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { Cluster, Cluster_TransportSocketMatch } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { Matcher } from "../../gen/xds/type/matcher/v3/matcher.js";
import { messageField } from "./wire-size.js";

const TRANSPORT_SOCKET_MATCHES_TAG = (43 << 3) | 2;
const TRANSPORT_SOCKET_MATCHER_TAG = (59 << 3) | 2;

const matcherBytes = new WeakMap<Matcher, Uint8Array>();
const writer = new BinaryWriter();

export function encodeCluster(cluster: Cluster): Uint8Array {
  const { transport_socket_matches: matches, transport_socket_matcher: matcher, ...rest } = cluster;
  for (const match of matches ?? []) writeMatch(match);
  if (matcher) {
    const bytes = encodedMatcher(matcher);
    writer.uint32(TRANSPORT_SOCKET_MATCHER_TAG).uint32(bytes.length).raw(bytes);
  }
  Cluster.encode(rest, writer);
  return writer.finish();
}

function encodedMatcher(matcher: Matcher): Uint8Array {
  let bytes = matcherBytes.get(matcher);
  if (!bytes) matcherBytes.set(matcher, (bytes = Matcher.encode(matcher).finish()));
  return bytes;
}

/** One TransportSocketMatch {name, transport_socket {name, typed_config Any {type_url, value}}}. */
function writeMatch(match: Cluster_TransportSocketMatch): void {
  const socket = match.transport_socket;
  const any = socket?.typed_config;
  if (match.match !== undefined || !socket || !any) {
    // Not the emitted shape: the generated encoder writes this entry.
    const entry = Cluster_TransportSocketMatch.encode(match).finish();
    writer.uint32(TRANSPORT_SOCKET_MATCHES_TAG).uint32(entry.length).raw(entry);
    return;
  }
  const value = any.value ?? new Uint8Array();
  const anyLength = stringField(any.type_url) + (value.length > 0 ? messageField(value.length) : 0);
  const socketLength = stringField(socket.name) + messageField(anyLength);
  const entryLength = stringField(match.name) + messageField(socketLength);
  writer.uint32(TRANSPORT_SOCKET_MATCHES_TAG).uint32(entryLength);
  writeString(1, match.name);
  writer.uint32(26).uint32(socketLength);
  writeString(1, socket.name);
  writer.uint32(26).uint32(anyLength);
  writeString(1, any.type_url);
  if (value.length > 0) writer.uint32(18).uint32(value.length).raw(value);
}

/** Bytes of a string field with a one-byte tag; proto3 omits an empty one. */
function stringField(value: string | undefined): number {
  return value ? messageField(Buffer.byteLength(value, "utf8")) : 0;
}

function writeString(field: number, value: string | undefined): void {
  if (value) writer.uint32((field << 3) | 2).string(value);
}
