import { defineConfig } from "vitest/config";

/** The Envoy suites (test/envoy): run by `npm run test:envoy` through test/envoy/run.ts. */
export default defineConfig({
  test: {
    include: ["test/envoy/**/*.test.ts"],
    globalSetup: ["test/envoy/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    maxConcurrency: 64,
    pool: "forks",
  },
});
