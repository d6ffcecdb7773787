import { BinaryWriter } from "@bufbuild/protobuf/wire";
import { describe, expect, test } from "vitest";
import { mulberry32 } from "../../bench/workloads.js";
import { Cluster } from "../../gen/envoy/config/cluster/v3/cluster.js";
import { ClusterLoadAssignment } from "../../gen/envoy/config/endpoint/v3/endpoint.js";
import { Listener } from "../../gen/envoy/config/listener/v3/listener.js";
import { toXdsResources, XDS_TYPE_URLS } from "../../src/emit/xds.js";
import { finishInSlab, Slabs } from "../../src/envoy/slabs.js";
import { caseModes, compileCase, loadCase } from "../support/cases.js";

/** Writes the same random fields (varints, strings, nested messages) into every writer given. */
function writeRandom(random: () => number, writers: readonly BinaryWriter[]): void {
  const fields = 1 + Math.floor(random() * 40);
  for (let f = 0; f < fields; f++) {
    const kind = Math.floor(random() * 3);
    const value = Math.floor(random() * 2 ** 32) >>> 0;
    const text = "x".repeat(Math.floor(random() * 300)) + value.toString(36);
    for (const writer of writers) {
      if (kind === 0) writer.uint32(value);
      else if (kind === 1) writer.string(text);
      else writer.tag(1, 2).fork().string(text).uint32(value).join();
    }
  }
}

describe("finishInSlab", () => {
  test("gives finish()'s bytes, as views into shared slabs that later outputs never overwrite", () => {
    const random = mulberry32(14);
    const writer = new BinaryWriter();
    const twin = new BinaryWriter();
    const outputs: { bytes: Uint8Array; expected: Uint8Array }[] = [];
    for (let i = 0; i < 2000; i++) {
      writeRandom(random, [writer, twin]);
      outputs.push({ bytes: finishInSlab(writer), expected: twin.finish() });
    }
    for (const { bytes, expected } of outputs) expect(Buffer.from(bytes).equals(Buffer.from(expected))).toBe(true);
    // Small outputs share slabs (the point of it): not one ArrayBuffer apiece.
    const small = outputs.filter(({ bytes }) => bytes.length < 1024);
    expect(small.length).toBeGreaterThan(100);
    expect(new Set(small.map(({ bytes }) => bytes.buffer)).size).toBeLessThan(small.length / 4);
  });

  test("slab space is fresh and zeroed, and large requests get an array of their own", () => {
    const slabs = new Slabs(64);
    const parts = [slabs.space(8), slabs.space(8), slabs.space(60), slabs.space(8)];
    for (const [i, part] of parts.entries()) part.fill(i + 1);
    expect(parts.map((part) => [...part].every((byte, _, all) => byte === all[0]))).toEqual([true, true, true, true]);
    expect(parts.map((part) => part[0])).toEqual([1, 2, 3, 4]);
    expect(parts[2]!.buffer.byteLength).toBe(60);
    expect(slabs.space(8).every((byte) => byte === 0)).toBe(true);
  });

  test("every resource of every golden case, held together, has the generated encoder's bytes", () => {
    const held = caseModes().map(([name, mode]) => {
      const result = compileCase(loadCase(name), mode);
      return { result, xds: toXdsResources(result) };
    });
    for (const { result, xds } of held) {
      const expected = [
        ...result.clusters.map((c) => Cluster.encode(c).finish()),
        ...result.endpoints.map((e) => ClusterLoadAssignment.encode(e).finish()),
        ...result.listeners.map((l) => Listener.encode(l).finish()),
      ];
      const actual = [...xds[XDS_TYPE_URLS.clusters], ...xds[XDS_TYPE_URLS.endpoints], ...xds[XDS_TYPE_URLS.listeners]].map((r) => r.resource.value!);
      expect(actual.map((bytes, i) => Buffer.from(bytes).equals(Buffer.from(expected[i]!)))).not.toContain(false);
    }
  });
});
