/**
 * The Envoy versions the output is written for. A user names the oldest Envoy their proxies run
 * (`envoyVersion`); each source-identity mode needs a minimum, and a mode newer than the named
 * version is refused rather than emitted for proxies that would NACK it.
 */

/** `"1.<minor>"`. */
export type EnvoyVersion = `1.${number}`;

/** The first release with `Cluster.transport_socket_matcher`, its inputs and the netns filter state. */
export const ENVOY_FLOOR: EnvoyVersion = "1.37";

/**
 * The oldest Envoy each source-identity mode runs on: `selector` needs the on-demand certificate
 * selector, its filter-state mapper and the `envoy.hashable_string` factory (all 1.38); `sockets`
 * only the 1.37 matcher and per-downstream-connection pools.
 */
export const SOURCE_IDENTITY_FLOORS = { selector: "1.38", sockets: "1.37" } as const satisfies Record<string, EnvoyVersion>;

export const ENVOY_VERSION_PATTERN = /^1\.(\d{1,3})$/;

/** The minor number of a `"1.<minor>"` version. */
export function envoyMinor(version: string): number {
  const match = ENVOY_VERSION_PATTERN.exec(version);
  if (!match) throw new Error(`not an Envoy version: ${version}`);
  return Number(match[1]);
}

/** Whether `version` is at least `floor`. */
export function isAtLeast(version: string, floor: EnvoyVersion): boolean {
  return envoyMinor(version) >= envoyMinor(floor);
}
