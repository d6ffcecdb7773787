import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { renderResult, toYamlText } from "../src/emit/text.js";
import type { SourceIdentity } from "../src/model/options.js";
import { formatPathReport, verifyMesh } from "../src/verify/mesh-check.js";
import { caseNames, compileCase, GOLDEN, goldenNames, loadCase, MODE_FILES, SHARED_FILES } from "./support/cases.js";
import { upstreamProblems } from "./support/upstream-schema.js";

const UPDATE = process.env.UPDATE_GOLDEN === "1";

/** Compares `actual` with the golden file at `path` (or writes it, with UPDATE_GOLDEN=1). */
function expectGolden(path: string, actual: string): void {
  if (UPDATE) {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  expect(existsSync(path), `missing ${path}: run UPDATE_GOLDEN=1 npm test and review it`).toBe(true);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

describe.each(caseNames())("golden case %s", (name) => {
  const goldenCase = loadCase(name);
  const modes = [...goldenCase.options.keys()];
  const rendered = new Map(modes.map((mode) => [mode, renderResult(compileCase(goldenCase, mode))]));

  test.each(SHARED_FILES)("%s.yaml matches, the same in every source-identity mode", (file) => {
    const [first, ...rest] = modes.map((mode) => toYamlText(rendered.get(mode)![file]));
    for (const other of rest) expect(other).toBe(first);
    expectGolden(join(GOLDEN, name, `${file}.yaml`), first!);
  });

  describe.each(modes)("%s mode", (mode: SourceIdentity) => {
    test.each(MODE_FILES)("%s.yaml matches", (file) => {
      expectGolden(join(GOLDEN, name, mode, `${file}.yaml`), toYamlText(rendered.get(mode)![file]));
    });

    test("the mesh path check passes with the case's options (off on an isolated pod network: only its unroutable remote pods fail)", () => {
      const options = goldenCase.options.get(mode)!;
      const report = verifyMesh(goldenCase.snapshot, options);
      const failed = report.paths.filter((p) => p.status === "failed");
      const unroutableOnly = options.eastWestWaypoint === "off" && goldenCase.snapshot.mesh.podNetwork === "isolated";
      if (unroutableOnly) expect(failed.flatMap((p) => p.failures.map((f) => f.code)).filter((code) => code !== "POD_IP_NOT_ROUTABLE")).toEqual([]);
      else expect(failed.map(formatPathReport)).toEqual([]);
    });

    test("every resource passes the upstream schema check", () => {
      const result = compileCase(goldenCase, mode);
      const problems = [
        ...result.clusters.flatMap((c) => upstreamProblems("envoy.config.cluster.v3.Cluster", c)),
        ...result.endpoints.flatMap((e) => upstreamProblems("envoy.config.endpoint.v3.ClusterLoadAssignment", e)),
        ...result.listeners.flatMap((l) => upstreamProblems("envoy.config.listener.v3.Listener", l)),
      ];
      expect(problems).toEqual([]);
    });
  });
});

test("every golden directory has a case, and only the files its modes produce (UPDATE_GOLDEN=1 removes the rest)", () => {
  const cases = new Set(caseNames());
  const stale = goldenNames().filter((name) => !cases.has(name));
  if (UPDATE) for (const name of stale) rmSync(join(GOLDEN, name), { recursive: true });
  else expect(stale).toEqual([]);
  for (const name of goldenNames().filter((n) => cases.has(n))) {
    const modes = [...loadCase(name).options.keys()] as string[];
    const expected = new Set([...SHARED_FILES.map((f) => `${f}.yaml`), ...modes]);
    const extra = readdirSync(join(GOLDEN, name)).filter((entry) => !expected.has(entry));
    for (const mode of modes.filter((m) => existsSync(join(GOLDEN, name, m)))) {
      extra.push(
        ...readdirSync(join(GOLDEN, name, mode))
          .filter((f) => !MODE_FILES.some((g) => `${g}.yaml` === f))
          .map((f) => `${mode}/${f}`),
      );
    }
    if (UPDATE) for (const entry of extra) rmSync(join(GOLDEN, name, entry), { recursive: true });
    else expect(extra, `unexpected files in golden/${name}`).toEqual([]);
  }
});
