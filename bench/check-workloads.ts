/**
 * The generator is a pure function of its parameters: the same seed gives a byte-identical mesh
 * document, another seed a different one, and the document parses. Run directly
 * (`npx tsx bench/check-workloads.ts`) or through `run.ts`, which runs it first.
 */
import { pathToFileURL } from "node:url";
import { parseSnapshot } from "../src/model/snapshot.js";
import { generateDocument, SMOKE_WORKLOADS, type WorkloadParams } from "./workloads.js";

/** Throws unless `params` generates deterministically; returns the document's size in bytes. */
export function assertDeterministic(params: WorkloadParams): number {
  const first = JSON.stringify(generateDocument(params));
  const again = JSON.stringify(generateDocument({ ...params }));
  const other = JSON.stringify(generateDocument({ ...params, seed: params.seed + 1 }));
  if (first !== again) throw new Error(`${params.name}: the same seed gave different documents`);
  if (first === other) throw new Error(`${params.name}: a different seed gave the same document`);
  parseSnapshot(JSON.parse(first));
  return first.length;
}

export function checkAllSmokeWorkloads(): string {
  return Object.values(SMOKE_WORKLOADS)
    .map((params) => `${params.name} ${assertDeterministic(params)} B`)
    .join(", ");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(`deterministic: ${checkAllSmokeWorkloads()}`);
}
