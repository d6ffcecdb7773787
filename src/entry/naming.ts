/**
 * `aether-xds/naming`: every name aether-xds puts in Envoy's configuration — resources, SNIs,
 * sockets, identities, the metadata keys it owns — each with its parser. Names are built from
 * identity, never from list positions, so they are a stable contract that control planes and
 * dashboards can key on (docs/contract.md, "Names").
 */
export {
  appClusterName,
  bundleSecretName,
  DEFAULT_NODE_IDENTITY,
  directSni,
  inboundChainName,
  inboundListenerName,
  ingressClusterName,
  nodeSpiffeId,
  outboundClusterName,
  type PodRef,
  parseAppClusterName,
  parseInboundChainName,
  parseInboundListenerName,
  parseIngressClusterName,
  parseOutboundClusterName,
  parseServiceKey,
  parseSocketName,
  parseSubClusterName,
  parseTunnelChainName,
  parseWaypointSni,
  type ServiceKey,
  type ServicePort,
  type ServiceRef,
  type SocketVariant,
  serviceKey,
  serviceSpiffeId,
  socketName,
  subClusterName,
  TUNNEL_LISTENER_NAME,
  trustDomainOf,
  tunnelChainName,
  tunnelServerName,
  waypointSni,
} from "../naming.js";
export { ORIGIN_CLUSTER_KEY, ORIGIN_NODE_KEY, RESERVED_METADATA_KEYS, WAYPOINT_KEY } from "../plan/endpoints.js";
