import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The Envoy suites (vitest.envoy.config.ts) and the package's own checks
    // (vitest.package.config.ts) run on their own, after this suite.
    exclude: [...configDefaults.exclude, "test/envoy/**", "test/package.test.ts", "test/api-report.test.ts"],
    testTimeout: 60_000,
  },
});
