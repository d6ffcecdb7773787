import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The packed-tarball test runs on its own, after this suite (vitest.package.config.ts).
    exclude: [...configDefaults.exclude, "test/package.test.ts"],
    testTimeout: 60_000,
  },
});
