/** Flag parsing shared by the CLI commands. */
import { readFileSync, statSync } from "node:fs";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { InputError, isInputError } from "../errors.js";
import { ipAddressProblem } from "../model/fields.js";
import { MAX_MESH_FILE_LENGTH, meshFileFormat, parseMeshFile } from "../model/mesh-file.js";
import { DEFAULT_SELECTOR_SDS_CLUSTER, type Options, parseOptions } from "../model/options.js";
import type { Snapshot } from "../model/snapshot.js";
import { isDnsSubdomain } from "../naming.js";

/** A problem with how the command was called: reported on one line, exit code 2. */
export class UsageError extends Error {}

/** Each flag that sets a compile option: the option, whether it is a number, and its help line. */
const OPTION_FLAGS = {
  mode: { option: "eastWestWaypoint", numeric: false, help: "--mode off|cross-cluster|always      which endpoints go through a waypoint (default off)" },
  "socket-selection": { option: "socketSelection", numeric: false, help: "--socket-selection matcher|aggregate  per-endpoint socket choice (default matcher)" },
  "source-identity": {
    option: "sourceIdentity",
    numeric: false,
    help: "--source-identity selector|sockets    per-connection certificate (Envoy ≥ 1.38) or a socket per source (default selector)",
  },
  "envoy-version": {
    option: "envoyVersion",
    numeric: false,
    help: "--envoy-version 1.N                    the oldest Envoy the output must run on (default 1.38)",
  },
  "inbound-port": { option: "inboundPort", numeric: true, help: "--inbound-port N                      pod inbound mTLS port (default 15008)" },
  "tunnel-port": { option: "tunnelPort", numeric: true, help: "--tunnel-port N                       node tunnel listener port (default 15009)" },
  "egress-port": { option: "egressPort", numeric: true, help: "--egress-port N                       pods' HTTP egress port on 127.0.0.1 (default 15001)" },
  "capture-port": { option: "capturePort", numeric: true, help: "--capture-port N                      pods' VIP capture port (default 15002)" },
  sds: {
    option: "sds",
    numeric: false,
    help: "--sds ads|CLUSTER                      where SVIDs and bundles come from: ADS, or a gRPC cluster such as the SPIRE agent's (default ads; sds_grpc for serve and bootstrap --ads)",
  },
  "selector-sds": {
    option: "selectorSds",
    numeric: false,
    help: "--selector-sds CLUSTER                 the certificate selector's SDS cluster (default sds_grpc)",
  },
} as const;

/**
 * Each flag that sets one of the production settings (`settings` option, README "Production
 * settings"): where in `settings` it goes, and how its text becomes the value.
 */
const SETTING_FLAGS = {
  settings: {
    path: ["preset"],
    value: (text: string): unknown => text,
    help: "--settings production|envoy-defaults  the settings preset (default production; envoy-defaults emits none)",
  },
  "connect-timeout-ms": { path: ["connectTimeoutMs"], value: Number, help: "--connect-timeout-ms N                clusters' connect timeout (default 2000)" },
  "max-connections": {
    path: ["circuitBreakers", "maxConnections"],
    value: Number,
    help: "--max-connections N                   circuit breaker: connections per cluster (default 65536)",
  },
  "max-requests": {
    path: ["circuitBreakers", "maxRequests"],
    value: Number,
    help: "--max-requests N                      circuit breaker: requests in flight per cluster (default 65536)",
  },
  "tcp-idle-timeout-ms": {
    path: ["tcpIdleTimeoutMs"],
    value: Number,
    help: "--tcp-idle-timeout-ms N               tcp_proxy idle timeout (default 3600000)",
  },
  "access-log": {
    path: ["accessLog"],
    value: (text: string): unknown => (text.startsWith("grpc:") ? { grpcCluster: text.slice("grpc:".length) } : text),
    help: "--access-log off|stdout|grpc:CLUSTER  access logs (default off)",
  },
} as const;

type OptionFlag = keyof typeof OPTION_FLAGS;
type SettingFlag = keyof typeof SETTING_FLAGS;

export const COMPILE_FLAGS = {
  snapshot: { type: "string" },
  help: { type: "boolean", short: "h" },
  ...(Object.fromEntries(Object.keys(OPTION_FLAGS).map((flag) => [flag, { type: "string" }])) as Record<OptionFlag, { type: "string" }>),
  ...(Object.fromEntries(Object.keys(SETTING_FLAGS).map((flag) => [flag, { type: "string" }])) as Record<SettingFlag, { type: "string" }>),
} as const satisfies ParseArgsConfig["options"];

export const OPTION_FLAGS_HELP = [...Object.values(OPTION_FLAGS), ...Object.values(SETTING_FLAGS)].map(({ help }) => `  ${help}`).join("\n");

/**
 * Strict parsing: an unknown flag, a positional argument or a flag given twice is an error (exit
 * code 2), never silently resolved.
 */
export function parseFlags<T extends NonNullable<ParseArgsConfig["options"]>>(argv: readonly string[], flags: T): Flags<T> {
  const { values, tokens } = parseArgs({ args: [...argv], options: flags, strict: true, allowPositionals: false, tokens: true });
  const seen = new Set<string>();
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} given more than once`);
    seen.add(token.name);
  }
  return values as Flags<T>;
}

type Flags<T> = { [K in keyof T]?: T[K] extends { type: "boolean" } ? boolean : string };

/** The mesh file at `path`, or on standard input for `-` (JSON or YAML: YAML is a superset). */
export function readSnapshot(path: string | undefined): Snapshot {
  if (!path) throw new UsageError("--snapshot FILE is required");
  const name = path === "-" ? "standard input" : path;
  let bytes: Buffer;
  try {
    if (path !== "-") {
      const size = statSync(path).size;
      if (size > MAX_MESH_FILE_LENGTH) throw new UsageError(`${path} is ${size} bytes, over the limit of ${MAX_MESH_FILE_LENGTH}`);
    }
    bytes = readFileSync(path === "-" ? 0 : path);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${name}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (bytes.length > MAX_MESH_FILE_LENGTH) throw new UsageError(`${name} is ${bytes.length} bytes, over the limit of ${MAX_MESH_FILE_LENGTH}`);
  return parseMeshFile(bytes, path === "-" ? "yaml" : meshFileFormat(path));
}

/** Compile options from the shared flags (over `defaults`), validated like any options; problems name the flags. */
export function optionsFrom(values: Partial<Record<OptionFlag | SettingFlag, string>>, defaults: Record<string, unknown> = {}): Options {
  const input: Record<string, unknown> = { ...defaults };
  for (const [flag, { option, numeric }] of Object.entries(OPTION_FLAGS)) {
    const value = values[flag as OptionFlag];
    if (value === undefined) continue;
    input[option] = numeric ? portFlag(flag, value) : option === "sds" && value !== "ads" ? { grpcCluster: value } : value;
  }
  const settings: Record<string, unknown> = {};
  for (const [flag, { path, value }] of Object.entries(SETTING_FLAGS)) {
    const text = values[flag as SettingFlag];
    if (text === undefined) continue;
    const [head, leaf] = path as readonly string[];
    const parsed = value === Number ? decimalFlag(flag, text) : value(text);
    if (leaf === undefined) settings[head!] = parsed;
    else settings[head!] = { ...(settings[head!] as object | undefined), [leaf]: parsed };
  }
  if (Object.keys(settings).length > 0) input.settings = settings;
  try {
    return parseOptions(input);
  } catch (error) {
    throw isInputError(error) && error.kind === "options" ? inFlagTerms(error) : error;
  }
}

/** A port flag's value: decimal digits only (`0x3a98`, `1e4` and ` 8080` are refused, not converted). */
function portFlag(flag: string, value: string): number {
  if (!/^\d{1,5}$/.test(value)) throw new UsageError(`--${flag} must be a port number (decimal digits), got ${JSON.stringify(value.slice(0, 40))}`);
  return Number(value);
}

/** A numeric setting flag's value: decimal digits only, like the ports. */
function decimalFlag(flag: string, value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw new UsageError(`--${flag} must be a number (decimal digits), got ${JSON.stringify(value.slice(0, 40))}`);
  return Number(value);
}

/** Library option names → the flags that set them, longest first (so no name is replaced inside another). */
const FLAG_OF_OPTION: readonly [RegExp, string][] = [
  ...Object.entries(OPTION_FLAGS).map(([flag, { option }]) => [option, `--${flag}`] as const),
  ...Object.entries(SETTING_FLAGS).map(([flag, { path }]) => [["settings", ...path].join("\\."), `--${flag}`] as const),
]
  .sort(([a], [b]) => b.length - a.length)
  .map(([option, flag]) => [new RegExp(`\\b${option}\\b`, "g"), flag]);

/** An options error as the CLI user sees it: the flags they typed, not the library's field names. */
export function inFlagTerms(error: InputError): InputError {
  const rename = (text: string) => FLAG_OF_OPTION.reduce((out, [pattern, flag]) => out.replace(pattern, flag), text);
  return new InputError(
    "options",
    error.issues.map((issue) => ({ path: rename(issue.path), message: rename(issue.message) })),
  );
}

/** `HOST:PORT` for a stub cluster: an IP address (IPv6 in brackets) or a DNS name, and a decimal port. */
export function hostPortFlag(flag: string, value: string): { address: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  const hostOk = host !== undefined && (match?.[1] !== undefined ? ipAddressProblem(host) === undefined && host.includes(":") : isHost(host));
  if (!match || !hostOk || port < 1 || port > 65535)
    throw new UsageError(`${flag} must be HOST:PORT (an IP address, [IPv6] or a DNS name, and a port 1–65535)`);
  return { address: host!, port };
}

function isHost(host: string): boolean {
  return /^\d+(\.\d+){3}$/.test(host) ? ipAddressProblem(host) === undefined : isDnsSubdomain(host.toLowerCase());
}

/** What `serve` and `bootstrap --ads` compile with unless told otherwise: SDS from a gRPC cluster, not ADS. */
export const SERVED_DEFAULTS = { sds: { grpcCluster: DEFAULT_SELECTOR_SDS_CLUSTER } } as const;

/** `"<cluster>/<node>"` → its parts. */
export function nodeRef(value: string | undefined, flag = "--node"): { cluster: string; node: string } {
  const match = value ? /^([^/]+)\/([^/]+)$/.exec(value) : null;
  if (!match) throw new UsageError(`${flag} must be CLUSTER/NODE`);
  return { cluster: match[1]!, node: match[2]! };
}

export const PROGRESS_FLAG = { progress: { type: "boolean" } } as const satisfies ParseArgsConfig["options"];

export const PROGRESS_FLAG_HELP = "  --progress                            print nodes compiled / total to stderr (default: only on a terminal)";

/**
 * Progress lines on stderr: with --progress, or when stderr is a terminal and the work is big
 * enough to take a while (`threshold` items or more); otherwise none. `each`: a line per item
 * (explain compiles a few nodes of many), else one each time `done` passes another 5 % of
 * `total` (it may move in steps), and one at the end.
 */
export function progressLine(label: string, requested: boolean | undefined, each = false, threshold = 50): ((done: number, total: number) => void) | undefined {
  if (!requested && process.stderr.isTTY !== true) return undefined;
  let printed = 0;
  return (done, total) => {
    if (!requested && total < threshold) return;
    if (each) {
      process.stderr.write(`${label}: ${done} (of ${total} in the mesh)\n`);
      return;
    }
    const step = Math.max(1, Math.floor(total / 20));
    if (done !== total && Math.floor(done / step) === Math.floor(printed / step)) return;
    process.stderr.write(`${label} ${done}/${total}\n`);
    printed = done;
  };
}
