/**
 * `HttpConnectionManager.encode` with the route table's virtual hosts spliced in from bytes encoded
 * once per host object: a service's egress virtual hosts are shared by every pod calling it
 * (compile/outbound.ts), so across the nodes of a mesh each is encoded once, not once per pod.
 *
 * Byte-identical to the generated encoder (see envoy/wire.ts): it writes fields in declaration
 * order, and codec_type and stat_prefix are the only fields declared before route_config, so the
 * generated encoder writes those two, then the route table is written here, then the generated
 * encoder writes the rest. RouteConfiguration declares name, then virtual_hosts (its only fields).
 */
import type { RouteConfiguration } from "../../gen/envoy/config/route/v3/route.js";
import { VirtualHost } from "../../gen/envoy/config/route/v3/route_components.js";
import { HttpConnectionManager } from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.js";
import { finishInSlab, INTERIM_SLABS } from "./slabs.js";
import { BinaryWriter, stringFieldSize, WireType, writeDelimitedHeader, writeStringField } from "./wire.js";

/** Field numbers (proto/envoy/extensions/filters/network/http_connection_manager/v3/, proto/envoy/config/route/v3/route.proto). */
const MANAGER = { routeConfig: 4 } as const;
const ROUTES = { name: 1, virtualHosts: 2 } as const;

/** Reused: `finishInSlab` copies the bytes out and resets the writer. */
const writer = new BinaryWriter();
const hostsWriter = new BinaryWriter();

/** Each virtual host's entry (tag and length included), and each list's: neither is ever mutated. */
const encodedHosts = new WeakMap<VirtualHost, Uint8Array>();
const encodedLists = new WeakMap<readonly VirtualHost[], Uint8Array>();

export function encodeConnectionManager(manager: HttpConnectionManager): Uint8Array {
  const { codec_type, stat_prefix, route_config, ...rest } = manager;
  HttpConnectionManager.encode({ codec_type, stat_prefix }, writer);
  if (route_config !== undefined) writeRouteConfig(route_config);
  HttpConnectionManager.encode(rest, writer);
  // Interim: the listener that carries the manager takes its bytes over (`packEncodedInterim`).
  return finishInSlab(writer, INTERIM_SLABS);
}

function writeRouteConfig(routes: RouteConfiguration): void {
  const { name, virtual_hosts, ...others } = routes;
  // A field added to RouteConfiguration in proto/ would be dropped here: this stops the build.
  others satisfies Record<string, never>;
  const hosts = virtualHostBytes(virtual_hosts ?? []);
  writeDelimitedHeader(writer, MANAGER.routeConfig, stringFieldSize(ROUTES.name, name) + hosts.length);
  writeStringField(writer, ROUTES.name, name);
  writer.raw(hosts);
}

function virtualHostBytes(hosts: readonly VirtualHost[]): Uint8Array {
  let bytes = encodedLists.get(hosts);
  if (!bytes) {
    bytes = Buffer.concat(hosts.map(hostEntry));
    encodedLists.set(hosts, bytes);
  }
  return bytes;
}

function hostEntry(host: VirtualHost): Uint8Array {
  let bytes = encodedHosts.get(host);
  if (!bytes) {
    bytes = VirtualHost.encode(host, hostsWriter.tag(ROUTES.virtualHosts, WireType.LengthDelimited).fork()).join().finish();
    encodedHosts.set(host, bytes);
  }
  return bytes;
}
