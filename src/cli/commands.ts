/** The CLI commands. Each returns its output and exit code; only this layer touches files. */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CompileResult, compileNode } from "../compile/compile-node.js";
import { renderBootstrap, toBootstrap } from "../emit/bootstrap.js";
import { type RenderedResult, renderJson, renderResult, renderYaml, toYamlText } from "../emit/text.js";
import { isInputError } from "../errors.js";
import { localNodeFrom } from "../model/node.js";
import { summarizeMesh } from "../verify/check-summary.js";
import { compileMesh } from "../verify/compiled-mesh.js";
import { formatMeshSummary } from "../verify/format.js";
import { explainPath } from "../verify/mesh-check.js";
import {
  COMPILE_FLAGS,
  hostPortFlag,
  nodeRef,
  OPTION_FLAGS_HELP,
  optionsFrom,
  PROGRESS_FLAG,
  PROGRESS_FLAG_HELP,
  parseFlags,
  progressLine,
  readSnapshot,
  SERVED_DEFAULTS,
  UsageError,
} from "./args.js";
import { CHECK_PROGRESS_FLAG_HELP, checkProgressLines } from "./check-progress.js";
import { summarizeSnapshot } from "./summary.js";

export interface CommandOutput {
  readonly code: number;
  readonly out: string;
  /** Lines for stderr whatever the exit code: the compile's warnings. */
  readonly warnings?: string;
}

export interface Command {
  readonly summary: string;
  readonly usage: string;
  run(argv: readonly string[]): CommandOutput;
}

const FILE_KINDS = ["clusters", "endpoints", "listeners", "diagnostics"] as const;

const compile: Command = {
  summary: "compile one node and print or write its resources",
  usage: `usage: aether-xds compile --snapshot FILE --node CLUSTER/NODE [flags]

Compiles one node's clusters, endpoints, listeners and diagnostics. Without --out, prints them as
one YAML (or JSON) document; with --out, writes clusters, endpoints, listeners and diagnostics
files into DIR (JSON arrays of "@type" objects, or YAML lists).

  --snapshot FILE                       the mesh file (JSON or YAML)
  --node CLUSTER/NODE                   the node to compile
${OPTION_FLAGS_HELP}
  --format yaml|json                    output format (default yaml)
  --out DIR                             write one file per resource kind into DIR`,
  run(argv) {
    const values = parseFlags(argv, { ...COMPILE_FLAGS, node: { type: "string" }, format: { type: "string" }, out: { type: "string" } });
    if (values.help) return { code: 0, out: this.usage };
    const format = values.format ?? "yaml";
    if (format !== "yaml" && format !== "json") throw new UsageError("--format must be yaml or json");
    const result = compileFromFlags(values);
    const warnings = warningLines(result);
    // Written straight from the messages, without a value tree of the whole node first.
    if (!values.out) return { code: 0, out: (format === "json" ? renderJson(result) : renderYaml(result)).trimEnd(), warnings };
    const files = writeResult(values.out, renderResult(result), format);
    return { code: 0, out: `wrote ${files.join(", ")}`, warnings };
  },
};

/** How many warnings a compile prints on stderr before it only counts the rest. */
const MAX_WARNING_LINES = 20;

/** The compile's warning diagnostics, one line each (the output holds all of them); undefined when none. */
function warningLines(result: CompileResult): string | undefined {
  // One line per distinct warning: an endpoint left out of every port's assignment is one warning per port.
  const warnings = [...new Set(result.diagnostics.filter((d) => d.severity === "warning").map((d) => `aether-xds: warning: [${d.code}] ${d.message}`))];
  if (warnings.length === 0) return undefined;
  const lines = warnings.slice(0, MAX_WARNING_LINES);
  if (warnings.length > MAX_WARNING_LINES) lines.push(`aether-xds: … and ${warnings.length - MAX_WARNING_LINES} more warnings (see diagnostics)`);
  return lines.join("\n");
}

function compileFromFlags(
  values: { snapshot?: string; node?: string } & Parameters<typeof optionsFrom>[0],
  defaults: Record<string, unknown> = {},
): CompileResult {
  const { cluster, node } = nodeRef(values.node);
  const snapshot = readSnapshot(values.snapshot);
  return compileNode(snapshot, localNodeFrom(snapshot, cluster, node), optionsFrom(values, defaults));
}

/**
 * Writes one file per kind into `dir`, all or nothing: every file goes to a temporary name first,
 * and only when all are written are they renamed into place (a rename within a directory is
 * atomic). A failure removes the temporary files and leaves the previous compile's files as they were.
 */
export function writeResult(dir: string, rendered: RenderedResult, format: "yaml" | "json"): string[] {
  const files = FILE_KINDS.map((kind) => {
    const path = join(dir, `${kind}.${format}`);
    return {
      path,
      temporary: `${path}.${process.pid}.tmp`,
      text: format === "json" ? `${JSON.stringify(rendered[kind], null, 2)}\n` : toYamlText(rendered[kind]),
    };
  });
  const written: string[] = [];
  try {
    mkdirSync(dir, { recursive: true });
    for (const file of files) {
      writeFileSync(file.temporary, file.text);
      written.push(file.temporary);
    }
    for (const file of files) renameSync(file.temporary, file.path);
    return files.map((file) => file.path);
  } catch (error) {
    for (const temporary of written) rmSync(temporary, { force: true });
    throw new UsageError(`cannot write to ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

const check: Command = {
  summary: "replay every source → dependency path over the compiled mesh; exit 1 on any failure",
  usage: `usage: aether-xds check --snapshot FILE [flags]

Compiles every node of the mesh, then replays each hosted pod (and each node itself) calling each
service port it depends on, over the compiled resources as Envoy would: priority choice, the
transport-socket matcher, the waypoint's tunnel chain and ingress, the destination pod's inbound
chain and the mTLS identities. Prints a source × destination matrix and every failure; exits 1
if any path fails. With --source-identity sockets, where no two nodes share outbound clusters,
each node is compiled and its paths replayed in turn, so one node's outbound clusters are held
at a time.

  --snapshot FILE                       the mesh file (JSON or YAML)
${OPTION_FLAGS_HELP}
${CHECK_PROGRESS_FLAG_HELP}`,
  run(argv) {
    const values = parseFlags(argv, { ...COMPILE_FLAGS, ...PROGRESS_FLAG });
    if (values.help) return { code: 0, out: this.usage };
    // The summary keeps of the replayed paths only what the report prints (every one only for a small mesh).
    const summary = summarizeMesh(readSnapshot(values.snapshot), optionsFrom(values), checkProgressLines(values.progress));
    return { code: summary.ok ? 0 : 1, out: formatMeshSummary(summary) };
  },
};

const explain: Command = {
  summary: "trace one connection from a pod to a service port, hop by hop",
  usage: `usage: aether-xds explain --snapshot FILE --from CLUSTER/NS/POD --to NS/SVC:PORT [flags]

Replays one source pod calling one service port and prints every hop: the priority and endpoint
chosen, the matcher's decision, the socket (SNI, client certificate), the waypoint's chain and
ingress, and the destination pod's inbound chain. Only the nodes the path visits are compiled:
the source's, and the receiving side of the waypoints' and destination pods'. Exits 1 if it fails.

  --snapshot FILE                       the mesh file (JSON or YAML)
  --from CLUSTER/NS/POD                 the source pod
  --to NS/SVC:PORT                      the destination service port
${OPTION_FLAGS_HELP}
${PROGRESS_FLAG_HELP}`,
  run(argv) {
    const values = parseFlags(argv, { ...COMPILE_FLAGS, ...PROGRESS_FLAG, from: { type: "string" }, to: { type: "string" } });
    if (values.help) return { code: 0, out: this.usage };
    if (!values.from || !values.to) throw new UsageError("explain needs --from CLUSTER/NS/POD and --to NS/SVC:PORT");
    const snapshot = readSnapshot(values.snapshot);
    const options = optionsFrom(values);
    const progress = progressLine("nodes compiled", values.progress, true);
    let explained: ReturnType<typeof explainPath>;
    try {
      explained = explainPath(snapshot, values.from, values.to, options, progress);
    } catch (error) {
      // `from` and `to` are the library's names for the two flags.
      if (isInputError(error) && error.kind === "options") throw new UsageError(error.issues.map((issue) => `--${issue.path}: ${issue.message}`).join("\n"));
      throw error;
    }
    return { code: explained.report.status === "failed" ? 1 : 0, out: explained.trace };
  },
};

const bootstrap: Command = {
  summary: "print an Envoy bootstrap for one node: its resources inline (for envoy --mode validate), or from ADS",
  usage: `usage: aether-xds bootstrap --snapshot FILE --node CLUSTER/NODE [flags]

Prints an Envoy bootstrap (YAML). By default its static_resources are the node's compiled
listeners and clusters, plus a stub cluster for the ADS/SDS server: check it with
envoy --mode validate -c bootstrap.yaml. With --ads, nothing is inline: the Envoy gets CDS and LDS
(and EDS) from "aether-xds serve" at --xds-address, and its SVIDs from the SPIRE agent at
--sds-address — the bootstrap to run an Envoy with.

  --snapshot FILE                       the mesh file (JSON or YAML)
  --node CLUSTER/NODE                   the node
  --ads                                 resources from the ADS server instead of inline
  --xds-address HOST:PORT               the ADS server (default 127.0.0.1:18000)
  --sds-address HOST:PORT               the SDS server (the SPIRE agent; default: the ADS address)
${OPTION_FLAGS_HELP}`,
  run(argv) {
    const values = parseFlags(argv, {
      ...COMPILE_FLAGS,
      node: { type: "string" },
      ads: { type: "boolean" },
      "xds-address": { type: "string" },
      "sds-address": { type: "string" },
    });
    if (values.help) return { code: 0, out: this.usage };
    const xds = optionalHostPort("--xds-address", values["xds-address"]);
    const sds = optionalHostPort("--sds-address", values["sds-address"]);
    const options = { ...(xds ? { xdsCluster: xds } : {}), ...(sds ? { sdsCluster: sds } : {}), resources: values.ads ? "ads" : "static" } as const;
    // With --ads the bootstrap must match what `serve` compiles: the same SDS default.
    const result = compileFromFlags(values, values.ads ? SERVED_DEFAULTS : {});
    return { code: 0, out: toYamlText(renderBootstrap(toBootstrap(result, options))).trimEnd() };
  },
};

/** An optional HOST:PORT flag, validated (`hostPortFlag`). */
function optionalHostPort(flag: string, value: string | undefined): { address: string; port: number } | undefined {
  return value === undefined ? undefined : hostPortFlag(flag, value);
}

const inspect: Command = {
  summary: "validate a mesh file and summarize what it holds",
  usage: `usage: aether-xds inspect --snapshot FILE

Validates a mesh file (JSON or YAML) and prints a summary: clusters, nodes, services, ports,
endpoint health, and endpoints that no waypoint can reach. Compiles every node with the default
options: exits 2 on an invalid file, or when the file makes a node uncompilable.`,
  run(argv) {
    const values = parseFlags(argv, { snapshot: { type: "string" }, help: { type: "boolean", short: "h" } });
    if (values.help) return { code: 0, out: this.usage };
    const snapshot = readSnapshot(values.snapshot);
    const mesh = compileMesh(snapshot, {}, progressLine("compiling nodes", false));
    const broken = [...mesh.skipped, ...mesh.failed].sort(([a], [b]) => (a < b ? -1 : 1));
    if (broken.length > 0)
      throw new UsageError(`the snapshot makes ${broken.length} node(s) uncompilable:\n${broken.map(([node, reason]) => `  ${node}: ${reason}`).join("\n")}`);
    return { code: 0, out: summarizeSnapshot(snapshot) };
  },
};

export const COMMANDS: Readonly<Record<string, Command>> = { compile, check, explain, bootstrap, inspect };
