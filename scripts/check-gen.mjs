#!/usr/bin/env node
// Fails when gen/ is out of date with proto/: regenerates into a temporary directory with the
// same generator (scripts/gen.mjs) and compares every file byte for byte.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { generate } from "./gen.mjs";

function listFiles(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

const scratch = mkdtempSync(join(tmpdir(), "aether-gen-"));
try {
  generate(scratch);
  const fresh = join(scratch, "gen");
  const expected = listFiles(fresh);
  const actual = listFiles("gen");
  const problems = [
    ...expected.filter((f) => !actual.includes(f)).map((f) => `missing gen/${f}`),
    ...actual.filter((f) => !expected.includes(f)).map((f) => `stale gen/${f}`),
    ...expected.filter((f) => actual.includes(f) && !readFileSync(join(fresh, f)).equals(readFileSync(join("gen", f)))).map((f) => `out of date gen/${f}`),
  ];
  if (problems.length > 0) {
    console.error(`gen/ does not match proto/ (run \`npm run gen\`):\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log(`gen/ is up to date (${expected.length} files)`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
