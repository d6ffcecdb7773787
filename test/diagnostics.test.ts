/**
 * Lazy diagnostics (one per emitted endpoint) are built for speed but must read, spread, print and
 * render exactly as an eager diagnostic with the same fields.
 */
import { describe, expect, test } from "vitest";
import { diagnostic, lazyDiagnostic } from "../src/diagnostics.js";
import { renderJson, renderYaml } from "../src/emit/text.js";

const FIELDS = {
  resource: "svc-0.ns-0.mesh.aether:8080",
  service: "ns-0/svc-0",
  endpoint: { cluster: "c0", ip: "10.0.0.1", pod: "p" },
  priority: 1,
  address: "10.0.0.1:15008",
};

describe("lazyDiagnostic", () => {
  test("formats its message only when read, each time it is read", () => {
    let calls = 0;
    const lazy = lazyDiagnostic("ENDPOINT_DIRECT", () => `message ${++calls}`, FIELDS);
    expect(calls).toBe(0);
    expect(lazy.message).toBe("message 1");
    expect(lazy.message).toBe("message 2");
  });

  test("has the eager diagnostic's keys in its order, and prints, spreads and renders the same", () => {
    const eager = diagnostic("ENDPOINT_VIA_WAYPOINT", "m → n", { ...FIELDS, via: "c1/node-1" });
    const lazy = lazyDiagnostic("ENDPOINT_VIA_WAYPOINT", () => "m → n", { ...FIELDS, via: "c1/node-1" });
    expect(Object.keys(lazy)).toEqual(["code", "severity", "message", "resource", "service", "endpoint", "priority", "address", "via"]);
    expect(Reflect.ownKeys({ ...lazy })).toEqual(Object.keys(eager));
    expect(JSON.stringify(lazy)).toBe(JSON.stringify(eager));
    expect({ ...lazy }).toStrictEqual(eager);
    expect(Object.getPrototypeOf(lazy)).toBe(Object.prototype);
    const result = (diagnostics: unknown[]) => ({ clusters: [], endpoints: [], listeners: [], diagnostics }) as never;
    expect(renderJson(result([lazy, lazy]))).toBe(renderJson(result([eager, eager])));
    expect(renderYaml(result([lazy]))).toBe(renderYaml(result([eager])));
  });

  test("keeps the key order of the fields it is given", () => {
    const lazy = lazyDiagnostic("ENDPOINT_DIRECT", () => "m", { service: "s", resource: "r" });
    expect(Object.keys(lazy)).toEqual(["code", "severity", "message", "service", "resource"]);
  });
});
