/** Before the Envoy suites: remove what killed earlier runs left behind (cleanup.ts). */
import { sweepStale } from "./support/cleanup.js";

export default function setup(): void {
  const removed = sweepStale();
  if (removed.length > 0) console.log(`Envoy suites: removed leftovers of earlier runs: ${removed.join(", ")}`);
}
