import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { renderResult, toYamlText } from "../src/emit/text.js";
import { formatPathReport, verifyMesh } from "../src/verify/mesh-check.js";
import { caseNames, compileCase, GOLDEN, GOLDEN_FILES, goldenNames, loadCase } from "./support/cases.js";
import { upstreamProblems } from "./support/upstream-schema.js";

const UPDATE = process.env.UPDATE_GOLDEN === "1";

describe.each(caseNames())("golden case %s", (name) => {
  const goldenCase = loadCase(name);
  const result = compileCase(goldenCase);
  const rendered = renderResult(result);

  test.each(GOLDEN_FILES)("%s.yaml matches", (file) => {
    const path = join(GOLDEN, name, `${file}.yaml`);
    const actual = toYamlText(rendered[file]);
    if (UPDATE) {
      mkdirSync(join(GOLDEN, name), { recursive: true });
      writeFileSync(path, actual);
      return;
    }
    expect(existsSync(path), `missing ${path}: run UPDATE_GOLDEN=1 npm test and review it`).toBe(true);
    expect(actual).toBe(readFileSync(path, "utf8"));
  });

  test("the mesh path check passes with the case's options", () => {
    const report = verifyMesh(goldenCase.snapshot, goldenCase.options);
    expect(report.paths.filter((p) => p.status === "failed").map(formatPathReport)).toEqual([]);
  });

  test("every resource passes the upstream schema check", () => {
    const problems = [
      ...result.clusters.flatMap((c) => upstreamProblems("envoy.config.cluster.v3.Cluster", c)),
      ...result.endpoints.flatMap((e) => upstreamProblems("envoy.config.endpoint.v3.ClusterLoadAssignment", e)),
      ...result.listeners.flatMap((l) => upstreamProblems("envoy.config.listener.v3.Listener", l)),
    ];
    expect(problems).toEqual([]);
  });
});

test("every golden directory has a case (UPDATE_GOLDEN=1 removes stale ones)", () => {
  const cases = new Set(caseNames());
  const stale = goldenNames().filter((name) => !cases.has(name));
  if (UPDATE) stale.forEach((name) => rmSync(join(GOLDEN, name), { recursive: true }));
  else expect(stale).toEqual([]);
  for (const name of goldenNames()) {
    const extra = readdirSync(join(GOLDEN, name)).filter((f) => !GOLDEN_FILES.some((g) => `${g}.yaml` === f));
    if (UPDATE) extra.forEach((f) => rmSync(join(GOLDEN, name, f)));
    else expect(extra, `unexpected files in golden/${name}`).toEqual([]);
  }
});
