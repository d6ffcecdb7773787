/** The `aether-xds` command line, as a function of its arguments (the bin calls it). */
import { readFileSync } from "node:fs";
import { isInputError } from "../errors.js";
import { inFlagTerms, UsageError } from "./args.js";
import { COMMANDS, type CommandOutput } from "./commands.js";
import { demo } from "./demo.js";

const ALL = { ...COMMANDS, demo };

/** `serve` runs until a signal, so the bin starts it itself (src/cli/serve.ts, loaded only then). */
const SERVE_SUMMARY = "serve every node's resources over ADS (gRPC), from a mesh file or etcd";

const USAGE = `usage: aether-xds <command> [flags]

commands:
${[...Object.entries(ALL).map(([name, command]) => [name, command.summary] as const), ["serve", SERVE_SUMMARY] as const]
  .map(([name, summary]) => `  ${name.padEnd(10)} ${summary}`)
  .join("\n")}

run "aether-xds help <command>" (or "aether-xds <command> --help") for a command's flags;
"aether-xds --version" prints the version.`;

/** Runs a command; bad flags, unreadable or invalid files give one message and exit code 2. */
export function run(argv: readonly string[]): CommandOutput {
  const [name, ...rest] = argv;
  if (name === undefined) return { code: 2, out: USAGE };
  if (name === "--help" || name === "-h") return { code: 0, out: USAGE };
  if (name === "--version" || name === "-v") return { code: 0, out: packageVersion() };
  try {
    if (name === "help") return help(rest);
    return commandNamed(name).run(rest);
  } catch (error) {
    // Options problems found while compiling (a pod port equal to --inbound-port) name the flags too.
    if (isInputError(error) && error.kind === "options") return { code: 2, out: `aether-xds: ${inFlagTerms(error).message}` };
    if (error instanceof UsageError || isInputError(error) || isParseArgsError(error)) {
      return { code: 2, out: `aether-xds: ${(error as Error).message}` };
    }
    throw error;
  }
}

function commandNamed(name: string) {
  if (!Object.hasOwn(ALL, name)) throw new UsageError(`unknown command "${name}" (try --help)`);
  return ALL[name as keyof typeof ALL];
}

/** `aether-xds help [command]`. */
function help(args: readonly string[]): CommandOutput {
  if (args.length === 0) return { code: 0, out: USAGE };
  if (args.length > 1) throw new UsageError("help takes one command name");
  return { code: 0, out: commandNamed(args[0]!).usage };
}

/** The version in the package's own package.json (found upward from this module, in src/ or dist/src/). */
function packageVersion(): string {
  for (let dir = new URL("./", import.meta.url); dir.pathname !== "/"; dir = new URL("../", dir)) {
    try {
      const manifest = JSON.parse(readFileSync(new URL("package.json", dir), "utf8")) as { name?: string; version?: string };
      if (manifest.name === "aether-xds" && manifest.version) return manifest.version;
    } catch {
      // no package.json here: look one level up
    }
  }
  return "unknown";
}

function isParseArgsError(error: unknown): boolean {
  return typeof (error as { code?: unknown })?.code === "string" && (error as { code: string }).code.startsWith("ERR_PARSE_ARGS");
}
