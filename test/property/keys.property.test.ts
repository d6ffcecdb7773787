/**
 * Item 7 of issue 11: identity and cache keys are injective, and paths are compared normalized.
 * Adversarial strings — separators (`|`, `/`, `_`, NUL, `,`), quotes and backslashes, unicode,
 * numbers that look like strings — never make two different inputs share a key; two spellings of
 * one netns path are one key, and the compiler treats them as one namespace.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compileNode } from "../../src/compile/compile-node.js";
import { canonicalIp, normalizeNetns } from "../../src/model/fields.js";
import { localNodeFrom } from "../../src/model/node.js";
import { podNameOf, type ServiceEndpoint } from "../../src/model/registry.js";
import { captureListenerName, inboundListenerName, outboundListenerName } from "../../src/naming.js";
import { nodeKey } from "../../src/plan/snapshot-index.js";
import { compositeKey } from "../../src/util/keys.js";
import { endpoint, mesh, node } from "../support/mesh-builder.js";
import { runsFor } from "./harness.js";

const options = { seed: 7, numRuns: Math.max(runsFor(5), 300) };

/** Strings made of separators and look-alikes, so joins would collide if anything joined them. */
const adversarial = fc.string({
  unit: fc.constantFrom("a", "b", "|", "/", "_", ",", ".", "\u0000", '"', "\\", "[", "]", "é", "\u{1F600}", "1", ":", " "),
  maxLength: 8,
});
const part = fc.oneof(adversarial, fc.integer({ min: -3, max: 3 }), fc.constantFrom("1", "-1", "0"));

describe("7. keys are injective", () => {
  test("compositeKey: equal keys exactly when the parts are equal (type included)", () => {
    fc.assert(
      fc.property(fc.array(part, { maxLength: 4 }), fc.array(part, { maxLength: 4 }), (a, b) => {
        expect(compositeKey(...a) === compositeKey(...b)).toBe(JSON.stringify(a) === JSON.stringify(b) && a.every((x, i) => typeof x === typeof b[i]));
      }),
      options,
    );
  });

  /** Cluster names: letters, digits, '.', '_' and '-'; node and pod names: DNS subdomains; namespaces: DNS labels. */
  const clusterName = fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9._-]{0,6}[A-Za-z0-9])?$/);
  const dnsSubdomain = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,4}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,4}[a-z0-9])?){0,2}$/);
  const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?$/);

  test("node keys and pod listener names: different inputs, different names", () => {
    fc.assert(
      fc.property(clusterName, dnsSubdomain, clusterName, dnsSubdomain, (c1, n1, c2, n2) => {
        expect(nodeKey(c1, n1) === nodeKey(c2, n2)).toBe(c1 === c2 && n1 === n2);
      }),
      options,
    );
    fc.assert(
      fc.property(dnsSubdomain, dnsLabel, dnsSubdomain, dnsLabel, (p1, ns1, p2, ns2) => {
        for (const name of [inboundListenerName, outboundListenerName, captureListenerName]) {
          expect(name({ pod: p1, namespace: ns1 }) === name({ pod: p2, namespace: ns2 })).toBe(p1 === p2 && ns1 === ns2);
        }
      }),
      options,
    );
  });

  test("pod names made from IPs: different canonical addresses, different names", () => {
    const ip = fc.oneof(fc.ipV4(), fc.ipV6()).map(canonicalIp);
    const named = (address: string) => podNameOf({ ip: address, kubernetesMetadata: { podName: "" } } as ServiceEndpoint);
    fc.assert(
      fc.property(ip, ip, (a, b) => {
        expect(named(a) === named(b)).toBe(a === b);
        expect(named(a)).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      }),
      options,
    );
  });
});

describe("7. netns paths are compared normalized", () => {
  const segment = fc.stringMatching(/^[a-z0-9-]{1,6}$/);
  /** Another spelling of the same absolute path: `//`, `/./`, `x/../` detours and a trailing `/`. */
  const alias = (segments: readonly string[], noise: readonly number[]) =>
    `/${segments
      .map((s, i) => {
        const kind = noise[i % noise.length]! % 4;
        return kind === 0 ? `${s}/` : kind === 1 ? `./${s}/` : kind === 2 ? `detour/../${s}//` : `${s}/./`;
      })
      .join("")}`;

  test("every spelling of one path normalizes to one key; different paths stay different", () => {
    fc.assert(
      fc.property(
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { minLength: 1 }),
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        (a, noise, b) => {
          expect(normalizeNetns(alias(a, noise))).toBe(`/${a.join("/")}`);
          expect(normalizeNetns(`/${a.join("/")}`) === normalizeNetns(`/${b.join("/")}`)).toBe(a.join("/") === b.join("/"));
        },
      ),
      options,
    );
  });

  test("two records on one node claiming one netns under two spellings are a NETNS_CONFLICT", () => {
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(), { minLength: 1 }), (segments, noise) => {
        const snapshot = mesh({
          nodes: [node({ cluster: "c1", name: "n1", ip: "192.168.0.1" })],
          services: {
            "ns/a": [endpoint({ cluster: "c1", ip: "10.0.0.1", node: "n1", netns: `/${segments.join("/")}` })],
            "ns/b": [endpoint({ cluster: "c1", ip: "10.0.0.2", node: "n1", netns: alias(segments, noise) })],
          },
        });
        const result = compileNode(snapshot, localNodeFrom(snapshot, "c1", "n1"));
        expect(result.diagnostics.filter((d) => d.code === "NETNS_CONFLICT")).toHaveLength(1);
      }),
      { ...options, numRuns: Math.min(options.numRuns, 100) },
    );
  });
});
