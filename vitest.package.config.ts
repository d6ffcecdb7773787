// The package's own checks (`npm run test:package`): the packed-tarball test and the API report.
// Each runs the TypeScript compiler over the whole public surface, so they run after the main
// suite instead of competing with its CPU-bound property tests for the cores.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/package.test.ts", "test/api-report.test.ts"],
    testTimeout: 60_000,
  },
});
