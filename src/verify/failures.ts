/** The mistakes a path replay can find, by stable code, and the error a replay step stops with. */

/** Every mistake the path check can find, by stable code, with what it means. */
export const PATH_FAILURES = {
  NO_OUTBOUND_LISTENER: "the source pod has no egress listener in its network namespace",
  NO_ROUTE: "the egress listener has no route to a cluster for the service's authority",
  NO_CAPTURE_CHAIN: "the capture listener has no chain for the service's VIP and port",
  NO_CLUSTER: "the source node has no cluster for the service port",
  MATCHER_NO_MATCH: "the transport-socket matcher yields no socket (Envoy would use the default: plaintext)",
  MATCHER_INVALID: "the transport-socket matcher cannot be evaluated",
  MISSING_SOCKET: "the matcher names a socket that does not exist (Envoy would use the default socket)",
  NO_TLS: "no TLS socket on this hop",
  WRONG_CLIENT_CERT: "the source presents a certificate other than its own",
  SELECTOR_OVER_ADS: "the certificate selector fetches over ADS (Envoy 1.38–1.40 crash on it; a secret already watched on ADS never arrives)",
  POOL_SHARED_ACROSS_SOURCES:
    "sources with different certificates share the node's upstream connection pool: one's requests may go out with another's certificate",
  NO_SAN_PIN: "the source does not pin the destination identity",
  POD_IP_NOT_ROUTABLE: "a pod IP that is not routable from the source's cluster",
  UNKNOWN_ADDRESS: "an address that is neither a pod's inbound port nor a waypoint",
  WAYPOINT_IN_OFF_MODE: "a waypoint is used with the waypoint off",
  SAME_CLUSTER_VIA_WAYPOINT: "same-cluster traffic goes through a waypoint",
  TUNNEL_NO_CHAIN: "the waypoint's tunnel listener has no chain for the SNI: the connection is refused",
  TLS_TERMINATED_AT_NODE: "the waypoint's tunnel chain terminates TLS",
  INGRESS_CLUSTER_MISSING: "the tunnel chain forwards to a cluster the waypoint does not have",
  TLS_ORIGINATED_AT_NODE: "the waypoint's ingress cluster originates TLS",
  INGRESS_EMPTY: "the waypoint's ingress cluster has no healthy pod",
  WAYPOINT_TO_WAYPOINT: "a waypoint forwards to another waypoint",
  POD_NODE_NOT_COMPILED: "the destination pod's node has no compiled configuration",
  NO_INBOUND_LISTENER: "the destination pod has no inbound listener",
  NO_INBOUND_CHAIN: "the destination pod's inbound listener has no chain for the SNI: the connection is refused",
  WRONG_PORT: "the SNI selects a chain for another port",
  WRONG_SERVICE: "the connection lands on a pod of another service",
  CLIENT_CERT_NOT_REQUIRED: "the destination does not require a client certificate",
  SAN_MISMATCH: "the destination's certificate is not the identity the source pins",
  PEER_NOT_TRUSTED: "a peer's trust domain is not trusted by the other side",
} as const;

/** A stable path-failure code, e.g. `"SAN_MISMATCH"`. */
export type PathFailureCode = keyof typeof PATH_FAILURES;

/** A mistake that stops one dial: thrown inside the dial, kept in its outcome. */
export class PathError extends Error {
  constructor(
    readonly code: PathFailureCode,
    readonly detail: string,
  ) {
    super(`${PATH_FAILURES[code]}: ${detail}`);
  }
}
