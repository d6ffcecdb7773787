import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The package's own checks run on their own, after this suite (vitest.package.config.ts).
    exclude: [...configDefaults.exclude, "test/package.test.ts", "test/api-report.test.ts"],
    testTimeout: 60_000,
  },
});
