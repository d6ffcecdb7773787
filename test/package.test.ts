/**
 * The package as users get it: `npm pack` the built library once, install the tarball into a
 * scratch project (its dependencies come from the registry or npm's cache), then type-check a
 * consumer with `skipLibCheck: false` under moduleResolution node16 and bundler, import every
 * entry point from ESM, `require` them from CommonJS, and run the installed command. It runs on
 * its own (`npm run test:package`, vitest.package.config.ts) after the main suite; `npm test`
 * builds dist/ before both. Run `npm run build` first when running it alone.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { entryPoints } from "../scripts/api-report.js";
import { REPO_ROOT } from "./support/fixtures.js";

const TSC = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
const CONSUMER = join(REPO_ROOT, "test/consumer");

interface Packed {
  readonly files: readonly string[];
  readonly project: string;
}

interface Run {
  readonly status: number | null;
  readonly output: string;
}

/** moduleResolution → compiler options for the consumer's type check. */
const RESOLUTIONS = {
  node16: { module: "node16", moduleResolution: "node16" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
} as const;

let scratch: string;
let packed: Packed;
let typechecks: Record<keyof typeof RESOLUTIONS, Run>;

/** The newest modification time under a directory, in ms. */
function newest(dir: string): number {
  return Math.max(...readdirSync(dir, { recursive: true, withFileTypes: true }).map((entry) => statSync(join(entry.parentPath, entry.name)).mtimeMs));
}

/** Packs dist/ as it is (the build ran just before) and installs the tarball into a new project. */
function packAndInstall(): Packed {
  const built = statSync(join(REPO_ROOT, "dist/src/entry/index.js"), { throwIfNoEntry: false });
  if (!built || built.mtimeMs < Math.max(newest(`${REPO_ROOT}src`), newest(`${REPO_ROOT}gen`))) {
    throw new Error("dist/ is missing or older than src/: run `npm run build` first");
  }
  const [pack] = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", scratch], { cwd: REPO_ROOT, encoding: "utf8", stdio: "pipe" }),
  );
  const project = join(scratch, "consumer");
  cpSync(CONSUMER, project, { recursive: true });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", join(scratch, pack.filename)], {
    cwd: project,
    stdio: "pipe",
  });
  return { files: pack.files.map((file: { path: string }) => file.path), project };
}

/**
 * Type-checks the consumer's types.ts with `skipLibCheck: false`: every declaration file it
 * reaches, ours and our dependencies' (only the compiler's own lib files are skipped), without
 * Node's types (zod's declarations need the DOM lib's `URL`).
 */
function typecheck(name: string, options: object): Promise<Run> {
  const compilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    skipDefaultLibCheck: true,
    target: "ES2022",
    lib: ["ES2022", "DOM"],
    types: [],
    ...options,
  };
  writeFileSync(join(packed.project, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: ["types.ts"] }));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [TSC, "-p", `tsconfig.${name}.json`], { cwd: packed.project });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("close", (status) => resolve({ status, output }));
  });
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "aether-pack-"));
  packed = packAndInstall();
  // Both checks at once: each is a full compiler run over zod's and our declarations.
  const [node16, bundler] = await Promise.all([typecheck("node16", RESOLUTIONS.node16), typecheck("bundler", RESOLUTIONS.bundler)]);
  typechecks = { node16, bundler };
}, 240_000);

// The scratch holds an installed package with its dependencies: removing it can outlast vitest's 10 s hook default on a busy disk.
afterAll(() => rmSync(scratch, { recursive: true, force: true }), 60_000);

describe("the packed tarball", () => {
  test("ships every entry point built, with its types, and the schema, without sources or source maps", () => {
    const entries = entryPoints();
    expect(entries.length).toBeGreaterThanOrEqual(5);
    for (const { source } of entries) {
      expect(packed.files).toContain(`dist/${source.replace(/\.ts$/, ".js")}`);
      expect(packed.files).toContain(`dist/${source.replace(/\.ts$/, ".d.ts")}`);
    }
    expect(packed.files).toContain("schema/mesh-file.schema.json");
    expect(packed.files).toContain("dist/src/cli.js");
    // package.json says Apache-2.0: the license text ships with it.
    expect(packed.files).toContain("LICENSE");
    // What changed for users ships beside the README.
    expect(packed.files).toContain("CHANGELOG.md");
    expect(packed.files.filter((file) => file.endsWith(".map") || /^(src|test|gen)\//.test(file) || file.endsWith(".test.ts"))).toEqual([]);
  });

  test("is built from scratch whenever it is packed (prepack), so dist/ is never missing or stale", () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
    expect(scripts.prepack).toBe("npm run build");
    expect(scripts.build).toMatch(/rmSync\('dist'.*&& tsc -p tsconfig\.build\.json$/);
  });

  test.each(Object.keys(RESOLUTIONS) as (keyof typeof RESOLUTIONS)[])(
    "type-checks a consumer under moduleResolution %s with skipLibCheck: false",
    (resolution) => {
      expect(typechecks[resolution]).toEqual({ status: 0, output: "" });
    },
  );

  test.each([
    ["imports every entry point from ESM", "esm.mjs"],
    ["requires every entry point from CommonJS", "cjs.cjs"],
  ])("%s and compiles the bundled mesh", (_, file) => {
    const run = spawnSync(process.execPath, [file], { cwd: packed.project, encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({
      resources: 17,
      edsClusters: 6,
      check: true,
      bootstrap: 4,
      schema: "aether-xds mesh file",
      deep: "ERR_PACKAGE_PATH_NOT_EXPORTED",
      served: { changedNodes: 0, closedStreams: 0 },
      name: "b.a.mesh.aether:1",
    });
  });

  test("installs the aether-xds command, which finds its bundled example", () => {
    const run = spawnSync(join(packed.project, "node_modules/.bin/aether-xds"), ["demo", "--out", join(scratch, "demo")], {
      cwd: packed.project,
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toContain("OK: every path lands on a pod of its service with end-to-end mTLS");
  });
});
