import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { renderResult } from "../../src/emit/text.js";
import { caseNames, loadCase } from "../support/cases.js";

/** Each setting and the Envoy field (anywhere in the output) that shows it. */
const SETTING_FIELDS = {
  connectTimeoutMs: "connect_timeout",
  circuitBreakers: "circuit_breakers",
  healthyPanicThresholdPercent: "common_lb_config",
  ignoreHealthOnHostRemoval: "ignore_health_on_host_removal",
  closeConnectionsOnHostHealthFailure: "close_connections_on_host_health_failure",
  outlierDetection: "outlier_detection",
  http2Keepalive: "connection_keepalive",
  tcpIdleTimeoutMs: "idle_timeout",
  bufferLimitBytes: "per_connection_buffer_limit_bytes",
  listenerFiltersTimeoutMs: "listener_filters_timeout",
  retries: "retry_policy",
  altStatNames: "alt_stat_name",
  readinessProbes: "health_checks",
  accessLog: "access_log",
} as const;

/** Every key used anywhere in the rendered resources. */
function keysOf(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) keysOf(item, into);
  else if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      into.add(key);
      keysOf(inner, into);
    }
  }
  return into;
}

function renderedKeys(name: string, settings: Record<string, unknown>): Set<string> {
  const goldenCase = loadCase(name);
  const keys = new Set<string>();
  for (const [mode, options] of goldenCase.options) {
    const result = compileNode(goldenCase.snapshot, goldenCase.node, { ...options, sourceIdentity: mode, settings });
    keysOf(renderResult(result), keys);
  }
  return keys;
}

describe("settings presets on every golden case", () => {
  test.each(caseNames())("%s: envoy-defaults emits none of the settings, and no probe cluster", (name) => {
    const keys = renderedKeys(name, { preset: "envoy-defaults" });
    expect(Object.values(SETTING_FIELDS).filter((field) => keys.has(field))).toEqual([]);
    expect(keys.has("continue_on_listener_filters_timeout")).toBe(false);
    const goldenCase = loadCase(name);
    const result = compileNode(goldenCase.snapshot, goldenCase.node, { ...goldenCase.options.values().next().value!, settings: { preset: "envoy-defaults" } });
    expect(result.clusters.filter((c) => c.name!.startsWith("inboundready_"))).toEqual([]);
  });
});

describe("each setting shows in the output, and `false` removes only it", () => {
  // waypoint-host has outbound HTTP and TCP clusters, ingress, tunnel, inbound HTTP and TCP chains;
  // outbound-listeners adds egress routes and capture listeners.
  const everything = { accessLog: "stdout" };
  const all = new Set([...renderedKeys("waypoint-host", everything), ...renderedKeys("outbound-listeners", everything)]);

  test.each(Object.entries(SETTING_FIELDS))("%s → %s", (setting, field) => {
    expect(all.has(field)).toBe(true);
    const off = { ...everything, [setting]: setting === "accessLog" ? "off" : false };
    const without = new Set([...renderedKeys("waypoint-host", off), ...renderedKeys("outbound-listeners", off)]);
    expect(without.has(field)).toBe(false);
    expect([...all].filter((key) => !without.has(key) && !FIELDS_OF[setting]!.includes(key))).toEqual([]);
  });
});

/** The keys that go away with a setting (its field and what only appears inside it). */
const FIELDS_OF: Record<string, readonly string[]> = {
  connectTimeoutMs: ["connect_timeout"],
  circuitBreakers: ["circuit_breakers", "thresholds", "max_connections", "max_pending_requests", "max_requests", "max_retries"],
  healthyPanicThresholdPercent: ["common_lb_config", "healthy_panic_threshold"],
  ignoreHealthOnHostRemoval: ["ignore_health_on_host_removal"],
  closeConnectionsOnHostHealthFailure: ["close_connections_on_host_health_failure"],
  outlierDetection: [
    "outlier_detection",
    "consecutive_5xx",
    "base_ejection_time",
    "max_ejection_percent",
    "split_external_local_origin_errors",
    "consecutive_local_origin_failure",
  ],
  http2Keepalive: ["connection_keepalive", "interval_jitter", "value"],
  tcpIdleTimeoutMs: ["idle_timeout"],
  bufferLimitBytes: ["per_connection_buffer_limit_bytes"],
  listenerFiltersTimeoutMs: ["listener_filters_timeout", "continue_on_listener_filters_timeout"],
  retries: ["retry_policy", "retry_on", "num_retries"],
  altStatNames: ["alt_stat_name"],
  readinessProbes: [
    "health_checks",
    "tcp_health_check",
    "no_traffic_interval",
    "unhealthy_threshold",
    "healthy_threshold",
    "tls_certificate_sds_secret_configs",
  ],
  accessLog: ["access_log", "log_format", "preserve_external_request_id"],
};
