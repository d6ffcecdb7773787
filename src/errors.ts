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
  constructor(
    readonly kind: InputKind,
    readonly issues: readonly InputIssue[],
  ) {
    super(`invalid ${kind}:\n${issues.map((i) => `  ${i.path || "(root)"}: ${i.message}`).join("\n")}`);
  }
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
    else if (typeof segment === "string" && /^[A-Za-z_$][\w$]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(String(segment))}]`;
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
