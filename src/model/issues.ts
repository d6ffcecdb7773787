/** Turns validation failures into path-qualified `InputIssue`s. */
import type { z } from "zod";
import { formatPath, type InputIssue } from "../errors.js";

/** Flattens zod issues; an unknown key is reported at its own path. */
export function collectIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): InputIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: formatPath([...path, key]), message: "unknown key" }));
    }
    if (issue.code === "invalid_key") return collectIssues(issue.issues, path);
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const closest = issue.errors.reduce((best, errors) => (errors.length < best.length ? errors : best));
      if (closest.length > 0) return collectIssues(closest, path);
    }
    return [{ path: formatPath(path), message: issue.message }];
  });
}

/** Keys that would reach an object's prototype if ever assigned: refused anywhere in the input. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

interface Visit {
  readonly value: unknown;
  readonly key?: PropertyKey;
  readonly parent?: Visit;
}

function pathOf(visit: Visit): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let at: Visit | undefined = visit; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
}

/** A lone UTF-16 surrogate: protobuf would silently replace it with U+FFFD on the wire. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Finds what must never reach the compiler, anywhere in a JSON-like value: keys that would reach an
 * object's prototype, and strings that are not well-formed Unicode. Iterative, so deep input
 * cannot overflow the stack.
 */
export function unsafeInputIssues(input: unknown): InputIssue[] {
  const issues: InputIssue[] = [];
  const stack: Visit[] = [{ value: input }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const value = visit.value;
    if (typeof value === "string" && LONE_SURROGATE.test(value)) issues.push({ path: formatPath(pathOf(visit)), message: "not well-formed Unicode" });
    if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) continue;
    const isArray = Array.isArray(value);
    for (const key of Object.keys(value)) {
      const child: Visit = { value: (value as Record<string, unknown>)[key], key: isArray ? Number(key) : key, parent: visit };
      if (FORBIDDEN_KEYS.has(key)) issues.push({ path: formatPath(pathOf(child)), message: "forbidden key" });
      else if (LONE_SURROGATE.test(key)) issues.push({ path: formatPath(pathOf(child)), message: "key is not well-formed Unicode" });
      else stack.push(child);
    }
  }
  return issues;
}
