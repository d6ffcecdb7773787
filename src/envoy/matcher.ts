/**
 * xds.type.matcher.v3 trees for `Cluster.transport_socket_matcher`. Envoy evaluates a nested
 * matcher that yields nothing as "no match" for the WHOLE tree (the parent's on_no_match is not
 * consulted), so every tree built here carries its own on_no_match.
 */

import type { TypedExtensionConfig } from "../../gen/xds/core/v3/extension.js";
import type { Matcher, Matcher_OnMatch } from "../../gen/xds/type/matcher/v3/matcher.js";
import { compareByKey } from "../util/order.js";
import { pack } from "./any.js";
import { ENDPOINT_METADATA_INPUT, EXTENSION, FILTER_STATE_INPUT, TRANSPORT_SOCKET_NAME_ACTION } from "./types.js";

/** Reads `filter_metadata[filter][key]` of the chosen endpoint, as a string. */
export function endpointMetadataInput(filter: string, key: string): TypedExtensionConfig {
  return {
    name: EXTENSION.endpointMetadataInput,
    typed_config: pack(ENDPOINT_METADATA_INPUT, { filter, path: [{ key }] }),
  };
}

/**
 * Reads a filter-state object the downstream connection shares with the upstream one. This is the
 * transport-socket input; the listener-side `envoy.matching.inputs.filter_state` never matches here.
 */
export function filterStateInput(key: string): TypedExtensionConfig {
  return { name: EXTENSION.filterStateInput, typed_config: pack(FILTER_STATE_INPUT, { key }) };
}

/** Selects the `transport_socket_matches` entry with this name. */
export function useSocket(name: string): Matcher_OnMatch {
  return { action: { name: EXTENSION.socketNameAction, typed_config: pack(TRANSPORT_SOCKET_NAME_ACTION, { name }) } };
}

export function descend(matcher: Matcher): Matcher_OnMatch {
  return { matcher };
}

/**
 * An exact-match tree over `input`. `entries` must be non-empty (Envoy rejects an empty map);
 * keys are emitted sorted.
 */
export function exactMatchTree(input: TypedExtensionConfig, entries: ReadonlyMap<string, Matcher_OnMatch>, onNoMatch: Matcher_OnMatch): Matcher {
  if (entries.size === 0) throw new Error("exactMatchTree needs at least one entry");
  const map = Object.fromEntries([...entries].sort(compareByKey));
  return { matcher_tree: { input, exact_match_map: { map } }, on_no_match: onNoMatch };
}
