// The packed-tarball test (`npm run test:package`): it packs the built package and runs two
// compilers, so it runs alone, after the main suite, instead of competing with it for the CPU.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/package.test.ts"],
    testTimeout: 60_000,
  },
});
