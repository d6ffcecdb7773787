/** Turns validation failures into path-qualified `InputIssue`s. */
import type { z } from "zod";
import { formatPath, type InputIssue, truncate } from "../errors.js";

/**
 * Flattens zod issues; an unknown key is reported at its own path. With `input`, the value the
 * issues' paths start from, a type error says what was expected and what was found there.
 * `prefix` is where `input` sits in the document, for the reported paths.
 */
export function collectIssues(issues: readonly z.core.$ZodIssue[], input?: unknown, prefix: readonly PropertyKey[] = []): InputIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: formatPath([...path, key]), message: "unknown key" }));
    }
    const here = valueAt(input, issue.path);
    if (issue.code === "invalid_key") return collectIssues(issue.issues, undefined, path);
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const closest = issue.errors.reduce((best, errors) => (errors.length < best.length ? errors : best));
      if (closest.length > 0) return collectIssues(closest, here, path);
    }
    if (issue.code === "invalid_type") {
      return [{ path: formatPath(path), message: `expected ${EXPECTED[issue.expected] ?? issue.expected}, found ${describeValue(here)}` }];
    }
    return [{ path: formatPath(path), message: issue.message }];
  });
}
/** How a type error names what was expected. */
const EXPECTED: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  record: "an object",
  literal: "a fixed value",
};

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key as string];
  }
  return value;
}

/** What a value is, for messages: its type, and a short rendering of it (truncated). */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "number") return Number.isFinite(value) ? `the number ${value}` : `${value}`;
  if (typeof value === "string") return `the string ${truncate(JSON.stringify(value))}`;
  if (typeof value === "boolean") return `${value}`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (typeof value === "object") return "an object";
  return typeof value;
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

/**
 * Finds what must never reach the compiler, anywhere in a JSON-like value: keys that would reach an
 * object's prototype, and strings that are not well-formed Unicode. Iterative, so deep input
 * cannot overflow the stack.
 */
export function unsafeInputIssues(input: unknown): InputIssue[] {
  const issues: InputIssue[] = [];
  const root: Visit = { value: input };
  if (typeof input === "string" && !isWellFormed(input)) issues.push({ path: formatPath([]), message: "not well-formed Unicode" });
  const stack: Visit[] = isContainer(input) ? [root] : [];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const value = visit.value as Record<string, unknown>;
    const isArray = Array.isArray(value);
    for (const key of Object.keys(value)) {
      const child = value[key];
      const problem = FORBIDDEN_KEYS.has(key)
        ? "forbidden key"
        : !isWellFormed(key)
          ? "key is not well-formed Unicode"
          : typeof child === "string" && !isWellFormed(child)
            ? "not well-formed Unicode"
            : undefined;
      // Scalars are checked here, not visited: a mesh has millions of them.
      if (problem) issues.push({ path: formatPath([...pathOf(visit), isArray ? Number(key) : key]), message: problem });
      else if (isContainer(child)) stack.push({ value: child, key: isArray ? Number(key) : key, parent: visit });
    }
  }
  return issues;
}

/** An object or array to look inside (byte arrays hold no keys or strings). */
function isContainer(value: unknown): value is object {
  return typeof value === "object" && value !== null && !ArrayBuffer.isView(value);
}

/** No lone UTF-16 surrogate: protobuf would silently replace it with U+FFFD on the wire. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}
