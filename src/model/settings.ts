/**
 * Production settings: the Envoy defaults that are wrong for this mesh, each chosen on purpose
 * (README, "Production settings"). A preset gives every value — `production` (the default), or
 * `envoy-defaults`, which emits none of them, for users who set these elsewhere — and each
 * setting can be overridden on its own: a value replaces the preset's, an object is merged over
 * the preset's object, and `false` leaves the setting out of the output.
 */
import { z } from "zod";
import { clusterName } from "./fields.js";

/** The presets: `production` sets every setting, `envoy-defaults` none. */
export const SETTINGS_PRESETS = ["production", "envoy-defaults"] as const;
/** One of `SETTINGS_PRESETS`. */
export type SettingsPreset = (typeof SETTINGS_PRESETS)[number];

const positive = z.number().int().min(1).max(4_294_967_295);
/** A duration in milliseconds: at least 1 ms (Envoy refuses 0 for most of them), at most a day. */
const millis = z.number().int().min(1).max(86_400_000);
const percent = z.number().min(0).max(100);

const circuitBreakers = z.strictObject({
  maxConnections: positive.optional(),
  maxPendingRequests: positive.optional(),
  maxRequests: positive.optional(),
  maxRetries: positive.optional(),
});

const outlierDetection = z.strictObject({
  consecutiveLocalOriginFailures: positive.optional(),
  consecutive5xx: positive.optional(),
  intervalMs: millis.optional(),
  baseEjectionTimeMs: millis.optional(),
  maxEjectionPercent: z.number().int().min(0).max(100).optional(),
});

const http2Keepalive = z.strictObject({
  intervalMs: millis.optional(),
  timeoutMs: millis.optional(),
  jitterPercent: percent.optional(),
});

const retries = z.strictObject({ attempts: z.number().int().min(1).max(10).optional() });

const readinessProbes = z.strictObject({ intervalMs: millis.optional(), timeoutMs: millis.optional() });

export const ACCESS_LOG_KINDS = ["off", "stdout"] as const;
const accessLog = z.union([z.enum(ACCESS_LOG_KINDS), z.strictObject({ grpcCluster: clusterName })], {
  error: 'expected "off", "stdout" or { grpcCluster: "<cluster>" }',
});
/** Where access logs go: nowhere, stdout, or a gRPC access-log service's cluster. */
export type AccessLogSetting = z.output<typeof accessLog>;

/** Each override: a value, or `false` to leave the setting out. */
const off = z.literal(false);
export const settingsSchema = z.strictObject({
  preset: z.enum(SETTINGS_PRESETS).default("production"),
  connectTimeoutMs: z.union([millis, off]).optional(),
  circuitBreakers: z.union([circuitBreakers, off]).optional(),
  healthyPanicThresholdPercent: z.union([percent, off]).optional(),
  ignoreHealthOnHostRemoval: z.boolean().optional(),
  closeConnectionsOnHostHealthFailure: z.boolean().optional(),
  outlierDetection: z.union([outlierDetection, off]).optional(),
  http2Keepalive: z.union([http2Keepalive, off]).optional(),
  tcpIdleTimeoutMs: z.union([millis, off]).optional(),
  bufferLimitBytes: z.union([z.number().int().min(1024).max(1_073_741_824), off]).optional(),
  listenerFiltersTimeoutMs: z.union([millis, off]).optional(),
  retries: z.union([retries, off]).optional(),
  altStatNames: z.boolean().optional(),
  readinessProbes: z.union([readinessProbes, off]).optional(),
  accessLog: accessLog.optional(),
});
/** The `settings` option as callers give it: a preset and per-setting overrides, all optional. */
export type SettingsInput = z.input<typeof settingsSchema>;

/** The resolved settings: a field that is absent is not emitted (Envoy's own default applies). */
export interface Settings {
  readonly preset: SettingsPreset;
  readonly connectTimeoutMs?: number;
  readonly circuitBreakers?: {
    readonly maxConnections?: number;
    readonly maxPendingRequests?: number;
    readonly maxRequests?: number;
    readonly maxRetries?: number;
  };
  readonly healthyPanicThresholdPercent?: number;
  readonly ignoreHealthOnHostRemoval?: true;
  readonly closeConnectionsOnHostHealthFailure?: true;
  readonly outlierDetection?: {
    readonly consecutiveLocalOriginFailures?: number;
    readonly consecutive5xx?: number;
    readonly intervalMs?: number;
    readonly baseEjectionTimeMs?: number;
    readonly maxEjectionPercent?: number;
  };
  readonly http2Keepalive?: { readonly intervalMs?: number; readonly timeoutMs?: number; readonly jitterPercent?: number };
  readonly tcpIdleTimeoutMs?: number;
  readonly bufferLimitBytes?: number;
  readonly listenerFiltersTimeoutMs?: number;
  readonly retries?: { readonly attempts?: number };
  readonly altStatNames?: true;
  readonly readinessProbes?: { readonly intervalMs?: number; readonly timeoutMs?: number };
  /** `off` when no access log is written. */
  readonly accessLog: AccessLogSetting;
}

/** Envoy's 1,024 is reached by an `ew_ingress` cluster (every cross-cluster connection into a node for one service). */
const PRODUCTION_THRESHOLD = 65_536;

/** The `production` preset: each value and the failure it prevents are in the README table. */
export const PRODUCTION_SETTINGS: Settings = {
  preset: "production",
  connectTimeoutMs: 2_000,
  circuitBreakers: {
    maxConnections: PRODUCTION_THRESHOLD,
    maxPendingRequests: PRODUCTION_THRESHOLD,
    maxRequests: PRODUCTION_THRESHOLD,
    // Every request in flight may be retried once at the same time when a host dies under it.
    maxRetries: PRODUCTION_THRESHOLD,
  },
  healthyPanicThresholdPercent: 0,
  ignoreHealthOnHostRemoval: true,
  closeConnectionsOnHostHealthFailure: true,
  outlierDetection: { consecutiveLocalOriginFailures: 5, consecutive5xx: 5, intervalMs: 10_000, baseEjectionTimeMs: 30_000, maxEjectionPercent: 100 },
  http2Keepalive: { intervalMs: 10_000, timeoutMs: 5_000, jitterPercent: 15 },
  tcpIdleTimeoutMs: 3_600_000,
  bufferLimitBytes: 32_768,
  listenerFiltersTimeoutMs: 5_000,
  retries: { attempts: 2 },
  altStatNames: true,
  readinessProbes: { intervalMs: 5_000, timeoutMs: 1_000 },
  accessLog: "off",
};

const ENVOY_DEFAULTS: Settings = { preset: "envoy-defaults", accessLog: "off" };

export const SETTINGS_PRESET_VALUES: Readonly<Record<SettingsPreset, Settings>> = { production: PRODUCTION_SETTINGS, "envoy-defaults": ENVOY_DEFAULTS };

/** The preset's values with the overrides applied. */
export function resolveSettings(input: z.output<typeof settingsSchema>): Settings {
  const base = SETTINGS_PRESET_VALUES[input.preset];
  const resolved: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(input)) {
    if (key === "preset" || value === undefined) continue;
    const current = base[key as keyof Settings];
    if (value === false) delete resolved[key];
    else if (isObject(value) && isObject(current)) resolved[key] = { ...current, ...value };
    else resolved[key] = value;
  }
  return resolved as unknown as Settings;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Values Envoy would refuse or that contradict each other, with the path of the setting. */
export function settingsIssues(settings: Settings): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const keepalive = settings.http2Keepalive;
  if (keepalive && keepalive.timeoutMs === undefined) {
    issues.push({ path: "settings.http2Keepalive.timeoutMs", message: "required when the keepalive is emitted (Envoy refuses a keepalive without a timeout)" });
  }
  if (keepalive?.timeoutMs !== undefined && keepalive.intervalMs !== undefined && keepalive.timeoutMs >= keepalive.intervalMs) {
    issues.push({
      path: "settings.http2Keepalive.timeoutMs",
      message: `${keepalive.timeoutMs} ms is not shorter than the interval (${keepalive.intervalMs} ms)`,
    });
  }
  const probes = settings.readinessProbes;
  for (const field of ["intervalMs", "timeoutMs"] as const) {
    if (probes && probes[field] === undefined)
      issues.push({ path: `settings.readinessProbes.${field}`, message: "required when readiness probes are emitted" });
  }
  if (probes?.timeoutMs !== undefined && probes.intervalMs !== undefined && probes.timeoutMs > probes.intervalMs) {
    issues.push({ path: "settings.readinessProbes.timeoutMs", message: `${probes.timeoutMs} ms is longer than the interval (${probes.intervalMs} ms)` });
  }
  return issues;
}
