/**
 * Typed errors. Input problems are collected and reported together, each with the path of the
 * offending value, so one run shows everything that is wrong with a snapshot.
 */

export interface InputIssue {
  /** Where the problem is, e.g. `services["team-a/pay"][3].kubernetesMetadata.nodeIp`. */
  readonly path: string;
  readonly message: string;
}

export type InputKind = "snapshot" | "node" | "options";

export class InputError extends Error {
  override readonly name = "InputError";
  constructor(
    readonly kind: InputKind,
    readonly issues: readonly InputIssue[],
  ) {
    super(`invalid ${kind}:\n${issues.map((i) => `  ${i.path || "(root)"}: ${i.message}`).join("\n")}`);
  }
}

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
