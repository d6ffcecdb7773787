/** The `aether-xds` command line, as a function of its arguments (the bin calls it). */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isInputError } from "../errors.js";
import { meshFileFormat, parseMeshFile } from "../model/mesh-file.js";
import { summarizeSnapshot } from "./summary.js";

const USAGE = `usage: aether-xds <command> [flags]

commands:
  inspect --snapshot FILE   validate a mesh file and summarize what it holds

run "aether-xds <command> --help" for a command's flags.`;

const INSPECT_USAGE = `usage: aether-xds inspect --snapshot FILE

Validates a mesh file (JSON or YAML) and prints a summary: clusters, nodes, services, ports,
endpoint health, and endpoints that no waypoint can reach. Exits 2 on an invalid file.`;

class UsageError extends Error {}

function inspect(argv: string[]): string {
  const { values } = parseArgs({ args: argv, options: { snapshot: { type: "string" }, help: { type: "boolean" } }, strict: true });
  if (values.help) return INSPECT_USAGE;
  if (!values.snapshot) throw new UsageError("inspect needs --snapshot FILE");
  return summarizeSnapshot(readSnapshot(values.snapshot));
}

function readSnapshot(path: string) {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  return parseMeshFile(text, meshFileFormat(path));
}

export function run(argv: readonly string[]): { code: number; out: string } {
  const [command, ...rest] = argv;
  try {
    if (command === "inspect") return { code: 0, out: inspect(rest) };
    if (command === undefined || command === "--help" || command === "help") return { code: command ? 0 : 2, out: USAGE };
    throw new UsageError(`unknown command "${command}"`);
  } catch (error) {
    if (error instanceof UsageError || isInputError(error) || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      return { code: 2, out: `aether-xds: ${(error as Error).message}` };
    }
    throw error;
  }
}
