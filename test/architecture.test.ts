/**
 * The pipeline's folders are its import order: a module imports from its own folder or from a
 * layer below it, never upward and never sideways between siblings. This keeps each stage
 * readable without the ones after it (compile knows nothing of encoding, emit nothing of the
 * path check).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { REPO_ROOT } from "./support/fixtures.js";

/**
 * Bottom to top. Folders in one layer are siblings: neither imports the other. On top, the two
 * faces of the library: the command line, and `entry/`, one module per entry point of the
 * package's `exports` map (the public API, nothing else imports it).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["util", "errors", "naming", "diagnostics"],
  ["model"],
  ["envoy"],
  ["plan"],
  ["compile"],
  ["emit", "verify"],
  ["server"],
  ["cli", "entry"],
];

/** The layer folder of a path under src/: its first segment, or a top-level file's name. */
function folderOf(path: string): string {
  const [first, second] = path.split("/");
  return second === undefined ? first!.replace(/\.ts$/, "") : first!;
}

function layerOf(folder: string): number {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

/** Each relative import of each file (paths relative to src/) that goes against the order. */
function importViolations(files: ReadonlyMap<string, string>): string[] {
  const violations: string[] = [];
  for (const [file, text] of files) {
    const from = folderOf(file);
    if (layerOf(from) < 0) violations.push(`${file}: folder "${from}" is in no layer`);
    for (const match of text.matchAll(/(?:from|import)\s+"(\.{1,2}\/[^"]+)"/g)) {
      const target = normalize(join(dirname(file), match[1]!));
      if (target.startsWith("..")) continue; // gen/ and other code outside src/
      const to = folderOf(target);
      if (to === from) continue;
      if (layerOf(to) >= layerOf(from)) violations.push(`${file} imports ${target} (${from} → ${to})`);
    }
  }
  return violations;
}

function sourceFiles(dir: string, root = dir): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) for (const [file, text] of sourceFiles(path, root)) files.set(file, text);
    else if (name.endsWith(".ts")) files.set(relative(root, path), readFileSync(path, "utf8"));
  }
  return files;
}

describe("import order: model → envoy → plan → compile → emit | verify → server → cli | entry", () => {
  test("no module in src/ imports against the order", () => {
    expect(importViolations(sourceFiles(join(REPO_ROOT, "src")))).toEqual([]);
  });

  test("an upward import, a sibling import and an unknown folder are each caught", () => {
    const files = new Map([
      ["compile/clusters.ts", 'import { encodeCluster } from "../emit/cluster-encoding.js";'],
      ["emit/xds.ts", 'import type { PathReport } from "../verify/path.js";'],
      ["misc/thing.ts", 'import { x } from "./other.js";'],
      ["plan/ok.ts", 'import { a } from "../model/node.js";\nimport { b } from "./eds-view.js";\nimport { c } from "../../gen/x.js";'],
    ]);
    expect(importViolations(files)).toEqual([
      "compile/clusters.ts imports emit/cluster-encoding.js (compile → emit)",
      "emit/xds.ts imports verify/path.js (emit → verify)",
      'misc/thing.ts: folder "misc" is in no layer',
    ]);
  });
});
