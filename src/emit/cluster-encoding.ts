/**
 * A faster `Cluster.encode` for the shape aether-xds emits, producing exactly the same bytes.
 *
 * An outbound cluster is mostly its socket table — one entry per source identity and variant,
 * each a few hundred bytes of already-encoded TLS context — plus a matcher shared by every cluster
 * of the node. The generated encoder re-walks all of it and, nesting message in message, shifts
 * each entry's bytes once per level. Here each entry is written once, with its lengths computed
 * up front, and each matcher is encoded once for all the clusters that share it. The field order
 * is the generated encoder's: cluster.proto declares fields 43 and 59 first (see envoy/wire.ts).
 */
import { Cluster, Cluster_TransportSocketMatch } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { Any } from "../../gen/google/protobuf/any.js";
import { Matcher } from "../../gen/xds/type/matcher/v3/matcher.js";
import { moveIntoEncoding, moveIntoEncodingAt } from "../envoy/any.js";
import { finishInSlab, writtenLength } from "../envoy/slabs.js";
import { BinaryWriter, delimitedFieldSize, stringFieldSize, writeDelimitedHeader, writeEncodedField, writeStringField } from "../envoy/wire.js";
import { getOrInsert } from "../util/maps.js";

/** Field numbers (proto/envoy/config/cluster/v3/cluster.proto, core/v3/base.proto, google/protobuf/any.proto). */
const CLUSTER = { transportSocketMatches: 43, transportSocketMatcher: 59 } as const;
const TRANSPORT_SOCKET_MATCH = { name: 1, transportSocket: 3 } as const;
const TRANSPORT_SOCKET = { name: 1, typedConfig: 3 } as const;
const ANY = { typeUrl: 1, value: 2 } as const;

const matcherBytes = new WeakMap<Matcher, Uint8Array>();
const writer = new BinaryWriter();

export function encodeCluster(cluster: Cluster): Uint8Array {
  const { transport_socket_matches: matches, transport_socket_matcher: matcher, ...rest } = cluster;
  const tableSockets: WrittenSocket[] = [];
  for (const match of matches ?? []) {
    const written = writeMatch(match);
    if (written) tableSockets.push(written);
  }
  if (matcher) {
    writeEncodedField(writer, CLUSTER.transportSocketMatcher, encodedMatcher(matcher));
  }
  Cluster.encode(rest, writer);
  const encoding = finishInSlab(writer);
  moveSocketsInto(encoding, tableSockets, cluster.transport_socket?.typed_config);
  return encoding;
}

/** A socket table entry's TLS context, and where its bytes start in the cluster's encoding when the writer could tell. */
interface WrittenSocket {
  readonly config: Any;
  readonly at: number | undefined;
}

/**
 * The cluster's TLS contexts, packed on their own while it was built, now read from their copies
 * inside its encoding (`moveIntoEncoding`), so what a node holds carries them once: the table's
 * at the places they were written, then the cluster's own socket, which the generated encoder
 * wrote after them.
 */
function moveSocketsInto(encoding: Uint8Array, tableSockets: readonly WrittenSocket[], own: Any | undefined): void {
  let from = 0;
  for (const { config, at } of tableSockets) from = at === undefined ? moveIntoEncoding(config, encoding, from) : moveIntoEncodingAt(config, encoding, at);
  if (own) moveIntoEncoding(own, encoding, from);
}

function encodedMatcher(matcher: Matcher): Uint8Array {
  return getOrInsert(matcherBytes, matcher, () => Matcher.encode(matcher).finish());
}

/** One TransportSocketMatch {name, transport_socket {name, typed_config Any {type_url, value}}}; its Any, when written here. */
function writeMatch(match: Cluster_TransportSocketMatch): WrittenSocket | undefined {
  const socket = match.transport_socket;
  const any = socket?.typed_config;
  if (match.match !== undefined || !socket || !any) {
    // Not the emitted shape: the generated encoder writes this entry.
    writeEncodedField(writer, CLUSTER.transportSocketMatches, Cluster_TransportSocketMatch.encode(match).finish());
    return undefined;
  }
  const value = any.value ?? new Uint8Array();
  const anyLength = stringFieldSize(ANY.typeUrl, any.type_url) + (value.length > 0 ? delimitedFieldSize(ANY.value, value.length) : 0);
  const socketLength = stringFieldSize(TRANSPORT_SOCKET.name, socket.name) + delimitedFieldSize(TRANSPORT_SOCKET.typedConfig, anyLength);
  const entryLength = stringFieldSize(TRANSPORT_SOCKET_MATCH.name, match.name) + delimitedFieldSize(TRANSPORT_SOCKET_MATCH.transportSocket, socketLength);
  writeDelimitedHeader(writer, CLUSTER.transportSocketMatches, entryLength);
  writeStringField(writer, TRANSPORT_SOCKET_MATCH.name, match.name);
  writeDelimitedHeader(writer, TRANSPORT_SOCKET_MATCH.transportSocket, socketLength);
  writeStringField(writer, TRANSPORT_SOCKET.name, socket.name);
  writeDelimitedHeader(writer, TRANSPORT_SOCKET.typedConfig, anyLength);
  writeStringField(writer, ANY.typeUrl, any.type_url);
  if (value.length === 0) return undefined;
  writeDelimitedHeader(writer, ANY.value, value.length);
  const at = writtenLength(writer);
  writer.raw(value);
  return { config: any, at };
}
