import { describe, expect, test } from "vitest";
import { isInputError } from "../../src/errors.js";
import { parseOptions } from "../../src/model/options.js";
import { PRODUCTION_SETTINGS } from "../../src/model/settings.js";

function issuesOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (isInputError(error)) return error.issues.map((i) => `${i.path}: ${i.message}`);
    throw error;
  }
  throw new Error("expected an InputError");
}

describe("settings: presets and overrides", () => {
  test("production is the default preset", () => {
    expect(parseOptions().settings).toEqual(PRODUCTION_SETTINGS);
    expect(parseOptions({ settings: {} }).settings).toEqual(PRODUCTION_SETTINGS);
  });

  test("envoy-defaults sets nothing but the access log, which is off", () => {
    expect(parseOptions({ settings: { preset: "envoy-defaults" } }).settings).toEqual({ preset: "envoy-defaults", accessLog: "off" });
  });

  test("a value replaces the preset's, an object is merged over it, false leaves the setting out", () => {
    const settings = parseOptions({
      settings: { connectTimeoutMs: 750, circuitBreakers: { maxConnections: 5000 }, outlierDetection: false, healthyPanicThresholdPercent: false },
    }).settings;
    expect(settings.connectTimeoutMs).toBe(750);
    expect(settings.circuitBreakers).toEqual({ ...PRODUCTION_SETTINGS.circuitBreakers, maxConnections: 5000 });
    expect(settings).not.toHaveProperty("outlierDetection");
    expect(settings).not.toHaveProperty("healthyPanicThresholdPercent");
    expect(settings.http2Keepalive).toEqual(PRODUCTION_SETTINGS.http2Keepalive);
  });

  test("an override under envoy-defaults sets only what it names", () => {
    const settings = parseOptions({ settings: { preset: "envoy-defaults", circuitBreakers: { maxConnections: 5000 }, accessLog: "stdout" } }).settings;
    expect(settings).toEqual({ preset: "envoy-defaults", circuitBreakers: { maxConnections: 5000 }, accessLog: "stdout" });
  });

  test("bad values are path-qualified errors, all at once", () => {
    expect(
      issuesOf(() =>
        parseOptions({ settings: { preset: "fast", connectTimeoutMs: 0, circuitBreakers: { maxConnections: -1 }, accessLog: "syslog", bogus: 1 } }),
      ),
    ).toEqual([
      'settings.preset: Invalid option: expected one of "production"|"envoy-defaults"',
      "settings.connectTimeoutMs: Too small: expected number to be >=1",
      "settings.circuitBreakers.maxConnections: Too small: expected number to be >=1",
      'settings.accessLog: Invalid option: expected one of "off"|"stdout"',
      "settings.bogus: unknown key",
    ]);
  });

  test("settings Envoy would refuse are refused with their path", () => {
    expect(issuesOf(() => parseOptions({ settings: { http2Keepalive: { intervalMs: 1000, timeoutMs: 5000 } } }))).toEqual([
      "settings.http2Keepalive.timeoutMs: 5000 ms is not shorter than the interval (1000 ms)",
    ]);
    expect(issuesOf(() => parseOptions({ settings: { preset: "envoy-defaults", http2Keepalive: { intervalMs: 1000 } } }))).toEqual([
      "settings.http2Keepalive.timeoutMs: required when the keepalive is emitted (Envoy refuses a keepalive without a timeout)",
    ]);
    expect(issuesOf(() => parseOptions({ settings: { preset: "envoy-defaults", readinessProbes: { intervalMs: 1000 } } }))).toEqual([
      "settings.readinessProbes.timeoutMs: required when readiness probes are emitted",
    ]);
  });
});
