/**
 * Production settings as Envoy fields. The resource builders only place what these return: which
 * setting applies to which cluster or listener is decided here, in one place (README,
 * "Production settings"). A setting that is absent from the resolved settings yields no field.
 */
import type { CircuitBreakers_Thresholds } from "../../gen/envoy/config/cluster/v3/circuit_breaker.js";
import type { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import type { OutlierDetection } from "../../gen/envoy/config/cluster/v3/outlier_detection.js";
import type { KeepaliveSettings } from "../../gen/envoy/config/core/v3/protocol.js";
import type { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import type { RetryPolicy } from "../../gen/envoy/config/route/v3/route_components.js";
import type { Duration } from "../../gen/google/protobuf/duration.js";
import type { Settings } from "../model/settings.js";
import { getOrInsert } from "../util/maps.js";

/**
 * What a cluster is for: `outbound` (a service port, across the mesh), `ingress` (a waypoint's
 * raw passthrough to local pods), `app` (a pod's inbound listener to its application), `probe`
 * (a readiness probe of a pod's inbound listener).
 */
export type ClusterRole = "outbound" | "ingress" | "app" | "probe";

/**
 * By settings object (resolved settings are never mutated), then role: the fields, built once and
 * shared by every cluster with them (compiled resources are never mutated either).
 */
const clusterFieldsBySettings = new WeakMap<Settings, Map<ClusterRole, Readonly<Partial<Cluster>>>>();

/** The settings' fields of a cluster with this role. Shared: copy them into the cluster, never change them. */
export function clusterSettings(settings: Settings, role: ClusterRole): Readonly<Partial<Cluster>> {
  const byRole = getOrInsert(clusterFieldsBySettings, settings, () => new Map<ClusterRole, Readonly<Partial<Cluster>>>());
  return getOrInsert(byRole, role, () => clusterFields(settings, role));
}

function clusterFields(settings: Settings, role: ClusterRole): Partial<Cluster> {
  const fields: Partial<Cluster> = {};
  if (settings.connectTimeoutMs !== undefined) fields.connect_timeout = duration(settings.connectTimeoutMs);
  if (settings.bufferLimitBytes !== undefined) fields.per_connection_buffer_limit_bytes = settings.bufferLimitBytes;
  if (role === "probe") return withProbeChecks(fields, settings.readinessProbes);
  const breakers = settings.circuitBreakers;
  if (breakers && Object.keys(breakers).length > 0) fields.circuit_breakers = { thresholds: [thresholds(breakers)] };
  if (role === "app") return fields;
  // Endpoint-set clusters: failover between priorities instead of panic routing, and hosts that
  // fail go out of rotation.
  if (settings.healthyPanicThresholdPercent !== undefined)
    fields.common_lb_config = { healthy_panic_threshold: { value: settings.healthyPanicThresholdPercent } };
  if (settings.closeConnectionsOnHostHealthFailure) fields.close_connections_on_host_health_failure = true;
  if (settings.ignoreHealthOnHostRemoval) fields.ignore_health_on_host_removal = true;
  const outlier = settings.outlierDetection;
  if (outlier) fields.outlier_detection = outlierDetection(outlier);
  return fields;
}

/**
 * A readiness probe's connect-only health check, in the probe clusters' shared fields: every
 * pod's probe cluster carries the same list.
 */
function withProbeChecks(fields: Partial<Cluster>, probe: Settings["readinessProbes"]): Partial<Cluster> {
  if (!probe?.intervalMs || !probe.timeoutMs) return fields;
  const interval = duration(probe.intervalMs);
  fields.health_checks = [
    {
      timeout: duration(probe.timeoutMs),
      interval,
      unhealthy_threshold: 1,
      healthy_threshold: 1,
      tcp_health_check: {},
      // The probe carries no traffic: without this Envoy checks it once a minute.
      no_traffic_interval: interval,
    },
  ];
  return fields;
}

// The two builders below set fields one by one: conditional spreads (`...(x ? { f: x } : {})`)
// cost V8 microseconds per call.

function thresholds(breakers: NonNullable<Settings["circuitBreakers"]>): CircuitBreakers_Thresholds {
  const fields: CircuitBreakers_Thresholds = {};
  if (breakers.maxConnections !== undefined) fields.max_connections = breakers.maxConnections;
  if (breakers.maxPendingRequests !== undefined) fields.max_pending_requests = breakers.maxPendingRequests;
  if (breakers.maxRequests !== undefined) fields.max_requests = breakers.maxRequests;
  if (breakers.maxRetries !== undefined) fields.max_retries = breakers.maxRetries;
  return fields;
}

function outlierDetection(outlier: NonNullable<Settings["outlierDetection"]>): OutlierDetection {
  const fields: OutlierDetection = {};
  if (outlier.consecutive5xx !== undefined) fields.consecutive_5xx = outlier.consecutive5xx;
  if (outlier.intervalMs !== undefined) fields.interval = duration(outlier.intervalMs);
  if (outlier.baseEjectionTimeMs !== undefined) fields.base_ejection_time = duration(outlier.baseEjectionTimeMs);
  if (outlier.maxEjectionPercent !== undefined) fields.max_ejection_percent = outlier.maxEjectionPercent;
  // Connect failures and resets (the host or its listener is gone) are counted apart from the
  // 5xx an application answers with.
  fields.split_external_local_origin_errors = true;
  if (outlier.consecutiveLocalOriginFailures !== undefined) fields.consecutive_local_origin_failure = outlier.consecutiveLocalOriginFailures;
  return fields;
}

/** HTTP/2 PING keepalive on the mesh hop: a dead peer is noticed in seconds, not at the TCP timeout. */
export function http2Keepalive(settings: Settings): KeepaliveSettings | undefined {
  const keepalive = settings.http2Keepalive;
  if (!keepalive) return undefined;
  return {
    ...(keepalive.intervalMs !== undefined ? { interval: duration(keepalive.intervalMs) } : {}),
    ...(keepalive.timeoutMs !== undefined ? { timeout: duration(keepalive.timeoutMs) } : {}),
    ...(keepalive.jitterPercent !== undefined ? { interval_jitter: { value: keepalive.jitterPercent } } : {}),
  };
}

/**
 * The settings' fields of a listener. `inspects`: its listener filters wait for the client's
 * first bytes (TLS inspector) or run before any chain (original destination); after the timeout
 * the connection goes on to chain matching instead of being closed, so a protocol where the
 * server speaks first is not cut off.
 */
export function listenerSettings(settings: Settings, inspects: boolean): Partial<Listener> {
  const fields: Partial<Listener> = {};
  if (settings.bufferLimitBytes !== undefined) fields.per_connection_buffer_limit_bytes = settings.bufferLimitBytes;
  if (inspects && settings.listenerFiltersTimeoutMs !== undefined) {
    fields.listener_filters_timeout = duration(settings.listenerFiltersTimeoutMs);
    fields.continue_on_listener_filters_timeout = true;
  }
  return fields;
}

/** `tcp_proxy`'s idle timeout, or undefined for Envoy's (one hour). */
export function tcpIdleTimeout(settings: Settings): Duration | undefined {
  return settings.tcpIdleTimeoutMs === undefined ? undefined : duration(settings.tcpIdleTimeoutMs);
}

/**
 * Retries a pod's egress routes make: only failures where the request never reached the
 * application (no connection, a refused stream, a reset before the request was sent), so a
 * retry never repeats a request the application saw.
 */
export function egressRetryPolicy(settings: Settings): RetryPolicy | undefined {
  const retries = settings.retries;
  if (!retries) return undefined;
  return { retry_on: RETRY_ON, ...(retries.attempts !== undefined ? { num_retries: retries.attempts } : {}) };
}

export const RETRY_ON = "connect-failure,refused-stream,reset-before-request";

/** Milliseconds as a protobuf Duration. */
export function duration(ms: number): Duration {
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}
