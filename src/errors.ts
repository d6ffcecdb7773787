/**
 * Typed errors. Input problems are collected and reported together, each with the path of the
 * offending value, so one run shows everything that is wrong with a snapshot.
 */

/** One problem with an input: where it is and what is wrong. */
export interface InputIssue {
  /** Where the problem is, e.g. `services["team-a/pay"][3].kubernetesMetadata.nodeIp`. */
  readonly path: string;
  readonly message: string;
}

/** Which input an `InputError` is about: a mesh file or snapshot, a local node, or compile options. */
export type InputKind = "snapshot" | "node" | "options";

/**
 * Bad input, with every problem found at once (`issues`, each with its path). Thrown by the
 * parsers and by every function that validates what it is given; never a crash, never a partial
 * result.
 */
export class InputError extends Error {
  override readonly name = "InputError";
  readonly issues: readonly InputIssue[];
  constructor(
    readonly kind: InputKind,
    issues: readonly InputIssue[],
  ) {
    const bounded = issues.map((issue) => ({ path: truncate(issue.path, MAX_PATH_LENGTH), message: truncate(issue.message, MAX_MESSAGE_LENGTH) }));
    super(`invalid ${kind}:\n${bounded.map((i) => `  ${i.path || "(root)"}: ${i.message}`).join("\n")}`);
    this.issues = bounded;
  }
}

/** The longest issue path and message an `InputError` repeats; input can hold megabyte-long keys and values. */
const MAX_PATH_LENGTH = 512;
const MAX_MESSAGE_LENGTH = 1024;
/** The longest key or value a message quotes in full. */
const MAX_QUOTED_LENGTH = 120;

/** `text`, or its start and how many characters were left out when it is longer than `max`. */
export function truncate(text: string, max = MAX_QUOTED_LENGTH): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max; // never half a surrogate pair
  return `${text.slice(0, end)}… (${text.length - max} more characters)`;
}

/** Whether `error` is an `InputError`. */
export function isInputError(error: unknown): error is InputError {
  return error instanceof InputError;
}

/** Renders a path such as `["services", "team-a/pay", 3, "ip"]` as `services["team-a/pay"][3].ip`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$]*$/.test(segment)) out += out ? `.${truncate(segment)}` : truncate(segment);
    else out += `[${truncate(JSON.stringify(String(segment)))}]`;
  }
  return out;
}

/**
 * The compiler produced output that breaks an invariant Envoy depends on. Thrown instead of
 * returning it: pushing it would NACK or misroute the node's whole update. Always a bug (in
 * aether-xds, or in a hand-built LocalNode), never an input problem.
 */
export class CompileInvariantError extends Error {
  override readonly name = "CompileInvariantError";
  constructor(
    /** The invariant broken, e.g. `"contiguous-priorities"`. */
    readonly rule: string,
    /** The resource that breaks it. */
    readonly resource: string,
    detail: string,
  ) {
    super(`${resource}: ${rule}: ${detail}`);
  }
}

/** Whether `error` is a `CompileInvariantError`. */
export function isCompileInvariantError(error: unknown): error is CompileInvariantError {
  return error instanceof CompileInvariantError;
}
