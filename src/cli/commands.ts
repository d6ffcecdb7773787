/** The CLI commands. Each returns its output and exit code; only this layer touches files. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CompileResult, compileNode } from "../compile/compile-node.js";
import { renderBootstrap, toBootstrap } from "../emit/bootstrap.js";
import { type RenderedResult, renderResult, toYamlText } from "../emit/text.js";
import { localNodeFrom } from "../model/node.js";
import { formatMeshReport } from "../verify/format.js";
import { explainPath, verifyMesh } from "../verify/mesh-check.js";
import {
  COMPILE_FLAGS,
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
import { summarizeSnapshot } from "./summary.js";

export interface CommandOutput {
  readonly code: number;
  readonly out: string;
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
    const rendered = renderResult(compileFromFlags(values));
    if (!values.out) return { code: 0, out: format === "json" ? JSON.stringify(rendered, null, 2) : toYamlText(rendered).trimEnd() };
    const files = writeResult(values.out, rendered, format);
    return { code: 0, out: `wrote ${files.join(", ")}` };
  },
};

function compileFromFlags(
  values: { snapshot?: string; node?: string } & Parameters<typeof optionsFrom>[0],
  defaults: Record<string, unknown> = {},
): CompileResult {
  const { cluster, node } = nodeRef(values.node);
  const snapshot = readSnapshot(values.snapshot);
  return compileNode(snapshot, localNodeFrom(snapshot, cluster, node), optionsFrom(values, defaults));
}

export function writeResult(dir: string, rendered: RenderedResult, format: "yaml" | "json"): string[] {
  try {
    mkdirSync(dir, { recursive: true });
    return FILE_KINDS.map((kind) => {
      const path = join(dir, `${kind}.${format}`);
      writeFileSync(path, format === "json" ? `${JSON.stringify(rendered[kind], null, 2)}\n` : toYamlText(rendered[kind]));
      return path;
    });
  } catch (error) {
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
if any path fails.

  --snapshot FILE                       the mesh file (JSON or YAML)
${OPTION_FLAGS_HELP}
${PROGRESS_FLAG_HELP}`,
  run(argv) {
    const values = parseFlags(argv, { ...COMPILE_FLAGS, ...PROGRESS_FLAG });
    if (values.help) return { code: 0, out: this.usage };
    const report = verifyMesh(readSnapshot(values.snapshot), optionsFrom(values), progressLine("compiling nodes", values.progress));
    return { code: report.ok ? 0 : 1, out: formatMeshReport(report) };
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
    const progress = progressLine("nodes compiled", values.progress, true);
    const { report, trace } = explainPath(readSnapshot(values.snapshot), values.from, values.to, optionsFrom(values), progress);
    return { code: report.status === "failed" ? 1 : 0, out: trace };
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
    const xds = hostPortFlag("--xds-address", values["xds-address"]);
    const sds = hostPortFlag("--sds-address", values["sds-address"]);
    const options = { ...(xds ? { xdsCluster: xds } : {}), ...(sds ? { sdsCluster: sds } : {}), resources: values.ads ? "ads" : "static" } as const;
    // With --ads the bootstrap must match what `serve` compiles: the same SDS default.
    const result = compileFromFlags(values, values.ads ? SERVED_DEFAULTS : {});
    return { code: 0, out: toYamlText(renderBootstrap(toBootstrap(result, options))).trimEnd() };
  },
};

function hostPortFlag(flag: string, value: string | undefined): { address: string; port: number } | undefined {
  if (value === undefined) return undefined;
  const match = /^(.+):(\d{1,5})$/.exec(value);
  if (!match || Number(match[2]) < 1 || Number(match[2]) > 65535) throw new UsageError(`${flag} must be HOST:PORT`);
  return { address: match[1]!.replace(/^\[|\]$/g, ""), port: Number(match[2]) };
}

const inspect: Command = {
  summary: "validate a mesh file and summarize what it holds",
  usage: `usage: aether-xds inspect --snapshot FILE

Validates a mesh file (JSON or YAML) and prints a summary: clusters, nodes, services, ports,
endpoint health, and endpoints that no waypoint can reach. Exits 2 on an invalid file.`,
  run(argv) {
    const values = parseFlags(argv, { snapshot: { type: "string" }, help: { type: "boolean" } });
    if (values.help) return { code: 0, out: this.usage };
    return { code: 0, out: summarizeSnapshot(readSnapshot(values.snapshot)) };
  },
};

export const COMMANDS: Readonly<Record<string, Command>> = { compile, check, explain, bootstrap, inspect };
