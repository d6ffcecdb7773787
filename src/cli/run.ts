/** The `aether-xds` command line, as a function of its arguments (the bin calls it). */
import { isInputError } from "../errors.js";
import { UsageError } from "./args.js";
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

run "aether-xds <command> --help" for a command's flags.`;

/** Runs a command; bad flags, unreadable or invalid files give one message and exit code 2. */
export function run(argv: readonly string[]): CommandOutput {
  const [name, ...rest] = argv;
  if (name === undefined) return { code: 2, out: USAGE };
  if (name === "--help" || name === "-h" || name === "help") return { code: 0, out: USAGE };
  const command = Object.hasOwn(ALL, name) ? ALL[name as keyof typeof ALL] : undefined;
  try {
    if (!command) throw new UsageError(`unknown command "${name}" (try --help)`);
    return command.run(rest);
  } catch (error) {
    if (error instanceof UsageError || isInputError(error) || isParseArgsError(error)) {
      return { code: 2, out: `aether-xds: ${(error as Error).message}` };
    }
    throw error;
  }
}

function isParseArgsError(error: unknown): boolean {
  return typeof (error as { code?: unknown })?.code === "string" && (error as { code: string }).code.startsWith("ERR_PARSE_ARGS");
}
