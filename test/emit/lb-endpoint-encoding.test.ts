import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { LbEndpoint } from "../../gen/envoy/config/endpoint/v3/endpoint_components.js";
import { encodeLbEndpoint } from "../../src/emit/lb-endpoint-encoding.js";

const text = fc.oneof(
  fc.constant(""),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme", maxLength: 6 }),
  fc.constantFrom("__proto__", "a".repeat(200)),
);
const u32 = fc.oneof(fc.constantFrom(0, 1, 127, 128, 16_383, 16_384, 4_294_967_295), fc.nat());

/** Struct values: strings (what the compiler plans) and the other JSON kinds (the generated encoder's path). */
const fieldValue = fc.oneof({ weight: 6, arbitrary: text }, fc.constant(undefined), fc.integer(), fc.boolean(), fc.constant(null));

/** Records with own keys only, `__proto__` included, as the compiler builds them (`setOwn`). */
const record = <T>(value: fc.Arbitrary<T>) =>
  fc.array(fc.tuple(text, value), { maxLength: 4 }).map((entries) => {
    const out: Record<string, T> = {};
    for (const [key, v] of entries) Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });

const lbEndpoint: fc.Arbitrary<LbEndpoint> = fc.record(
  {
    endpoint: fc.record(
      {
        address: fc.record(
          {
            socket_address: fc.record(
              { protocol: fc.constantFrom(0, 1), address: text, port_value: u32, network_namespace_filepath: text },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
        hostname: text,
      },
      { requiredKeys: [] },
    ),
    health_status: fc.constantFrom(0, 1, 2, 3, 4, 5, -1),
    metadata: fc.record({ filter_metadata: record(fc.option(record(fieldValue), { nil: undefined })) }, { requiredKeys: [] }),
    load_balancing_weight: u32,
  },
  { requiredKeys: [] },
) as fc.Arbitrary<LbEndpoint>;

describe("the fast LbEndpoint encoder writes exactly the generated encoder's bytes", () => {
  test("for any LbEndpoint, each encoding kept while more are written (they share slabs)", () => {
    fc.assert(
      fc.property(fc.array(lbEndpoint, { minLength: 1, maxLength: 40 }), (endpoints) => {
        const encoded = endpoints.map(encodeLbEndpoint);
        for (const [i, endpoint] of endpoints.entries()) {
          expect(Buffer.from(encoded[i]!).toString("hex")).toBe(Buffer.from(LbEndpoint.encode(endpoint).finish()).toString("hex"));
        }
      }),
      { numRuns: 300 },
    );
  });

  test("the planned shape: address, health, envoy.lb strings (non-ASCII too), weight; large ones get their own array", () => {
    const planned: LbEndpoint = {
      endpoint: { address: { socket_address: { address: "10.0.0.1", port_value: 15008 } } },
      health_status: 1,
      metadata: { filter_metadata: { "envoy.lb": { app: "payments", "1": "numeric key first", zone: "zürich → east" } } },
      load_balancing_weight: 1024,
    };
    const large: LbEndpoint = { ...planned, metadata: { filter_metadata: { "envoy.lb": { blob: "x".repeat(5000) } } } };
    for (const endpoint of [planned, large, planned])
      expect(Buffer.from(encodeLbEndpoint(endpoint)).equals(Buffer.from(LbEndpoint.encode(endpoint).finish()))).toBe(true);
    expect(encodeLbEndpoint(large).buffer.byteLength).toBe(encodeLbEndpoint(large).length);
  });
});
