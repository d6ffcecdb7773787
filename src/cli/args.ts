/** Flag parsing shared by the CLI commands. */
import { readFileSync, statSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { MAX_MESH_FILE_LENGTH, meshFileFormat, parseMeshFile } from "../model/mesh-file.js";
import { type Options, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";

/** A problem with how the command was called: reported on one line, exit code 2. */
export class UsageError extends Error {}

export const COMPILE_FLAGS = {
  snapshot: { type: "string" },
  mode: { type: "string" },
  "socket-selection": { type: "string" },
  "inbound-port": { type: "string" },
  "tunnel-port": { type: "string" },
  help: { type: "boolean" },
} as const satisfies ParseArgsConfig["options"];

export const OPTION_FLAGS_HELP = `  --mode off|cross-cluster|always      which endpoints go through a waypoint (default off)
  --socket-selection matcher|aggregate  per-endpoint socket choice (default matcher)
  --inbound-port N                      pod inbound mTLS port (default 15008)
  --tunnel-port N                       node tunnel listener port (default 15009)`;

/** Strict parsing: an unknown flag or a positional argument is an error (exit code 2). */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(argv: readonly string[], flags: T): Flags<T> {
  return parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: false }).values as Flags<T>;
}

type Flags<T> = { [K in keyof T]?: T[K] extends { type: "boolean" } ? boolean : string };

export function readSnapshot(path: string | undefined): Snapshot {
  if (!path) throw new UsageError("--snapshot FILE is required");
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_MESH_FILE_LENGTH) throw new UsageError(`${path} is ${size} bytes, over the limit of ${MAX_MESH_FILE_LENGTH}`);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseMeshFile(text, meshFileFormat(path));
}

/** Compile options from the shared flags, validated like any options. */
export function optionsFrom(values: { mode?: string; "socket-selection"?: string; "inbound-port"?: string; "tunnel-port"?: string }): Options {
  const input: Record<string, unknown> = {};
  if (values.mode !== undefined) input.eastWestWaypoint = values.mode;
  if (values["socket-selection"] !== undefined) input.socketSelection = values["socket-selection"];
  if (values["inbound-port"] !== undefined) input.inboundPort = Number(values["inbound-port"]);
  if (values["tunnel-port"] !== undefined) input.tunnelPort = Number(values["tunnel-port"]);
  return parseOptions(input);
}

/** `"<cluster>/<node>"` → its parts. */
export function nodeRef(value: string | undefined, flag = "--node"): { cluster: string; node: string } {
  const match = value ? /^([^/]+)\/([^/]+)$/.exec(value) : null;
  if (!match) throw new UsageError(`${flag} must be CLUSTER/NODE`);
  return { cluster: match[1]!, node: match[2]! };
}

/** A progress line on stderr for meshes big enough to take a while; silent otherwise. */
export function progressLine(label: string, threshold = 50): (done: number, total: number) => void {
  return (done, total) => {
    if (total < threshold) return;
    if (done % Math.max(1, Math.floor(total / 20)) === 0) process.stderr.write(`${label} ${done}/${total}\n`);
  };
}
