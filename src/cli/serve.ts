/**
 * `aether-xds serve`: the ADS server on a mesh file or an etcd registry, until SIGINT/SIGTERM.
 * Every server event is one JSON line on stdout; `/metrics` (Prometheus text) when `--metrics`
 * is given.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { collectDefaultMetrics } from "prom-client";
import { isInputError } from "../errors.js";
import { AdsServer } from "../server/ads-server.js";
import { EtcdSource } from "../server/etcd-source.js";
import { jsonLogLine } from "../server/events.js";
import { MeshFileSource } from "../server/mesh-file-source.js";
import { metricsHttpServer, serverMetrics } from "../server/metrics.js";
import type { RegistrySource } from "../server/source.js";
import { COMPILE_FLAGS, OPTION_FLAGS_HELP, optionsFrom, parseFlags, readSnapshot, SERVED_DEFAULTS, UsageError } from "./args.js";

export const SERVE_USAGE = `usage: aether-xds serve (--snapshot FILE | --etcd URL[,URL] [--prefix P]) [flags]

Serves the Aggregated Discovery Service (state of the world and delta; CDS, EDS, LDS) to every
Envoy whose node.id is <cluster>/<node> (as "aether-xds bootstrap" writes it), compiled from a mesh
file (reloaded when it changes; a bad file keeps the last good one) or from an etcd registry
(watched). Logs one JSON line per connect, push, ACK, NACK and snapshot on stdout. Runs until
SIGINT or SIGTERM.

  --snapshot FILE                       the mesh file (JSON or YAML), watched
  --etcd URL[,URL]                      etcd endpoints, e.g. http://127.0.0.1:2379
  --prefix P                            the registry's etcd prefix (default /aether/v1)
  --listen ADDR                         HOST:PORT or unix:/PATH (default 127.0.0.1:18000)
  --metrics HOST:PORT                   serve Prometheus metrics at http://HOST:PORT/metrics
${OPTION_FLAGS_HELP}`;

const SERVE_FLAGS = {
  ...COMPILE_FLAGS,
  etcd: { type: "string" },
  prefix: { type: "string" },
  listen: { type: "string" },
  metrics: { type: "string" },
} as const;

export interface ServeIo {
  readonly out: (line: string) => void;
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  readonly stopped?: Promise<void>;
}

/** Runs the server until stopped; returns the exit code (2: bad flags or a bad initial mesh file). */
export async function serve(argv: readonly string[], io: ServeIo): Promise<{ code: number; out: string }> {
  let values: ReturnType<typeof parseFlags<typeof SERVE_FLAGS>>;
  let source: RegistrySource;
  let server: AdsServer;
  try {
    values = parseFlags(argv, SERVE_FLAGS);
    if (values.help) return { code: 0, out: SERVE_USAGE };
    if (!values.snapshot === !values.etcd) throw new UsageError("serve needs exactly one of --snapshot FILE and --etcd URL[,URL]");
    if (values.prefix && !values.etcd) throw new UsageError("--prefix goes with --etcd");
    const compile = optionsFrom(values, SERVED_DEFAULTS);
    if (values.snapshot) {
      server = new AdsServer({ snapshot: readSnapshot(values.snapshot), compile });
      source = new MeshFileSource(values.snapshot);
    } else {
      server = new AdsServer({ compile });
      source = new EtcdSource({ endpoints: values.etcd!.split(","), ...(values.prefix ? { prefix: values.prefix } : {}) });
    }
  } catch (error) {
    if (error instanceof UsageError || isInputError(error) || (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      return { code: 2, out: `aether-xds: ${(error as Error).message}` };
    }
    throw error;
  }
  const stopLogging = server.on((event) => io.out(jsonLogLine(event)));
  const metrics = serverMetrics(server);
  // The process's own (CPU, memory, GC, event loop lag: how long streams waited on recompiles).
  if (values.metrics) collectDefaultMetrics({ register: metrics.registry });
  const http: Server | undefined = values.metrics ? metricsHttpServer(metrics.registry) : undefined;
  try {
    const address = await server.listen(values.listen ?? "127.0.0.1:18000");
    const metricsUrl = http && values.metrics ? await listenMetrics(http, values.metrics) : undefined;
    io.out(JSON.stringify({ time: new Date().toISOString(), event: "listening", address, ...(metricsUrl ? { metrics: metricsUrl } : {}) }));
  } catch (error) {
    await Promise.all([server.close(), source.close()]);
    return { code: 2, out: `aether-xds: cannot listen: ${(error as Error).message}` };
  }
  const following = server.follow(source);
  await (io.stopped ?? signalled());
  await source.close();
  await following;
  await server.close();
  metrics.stop();
  stopLogging();
  await new Promise((resolve) => (http ? http.close(resolve) : resolve(undefined)));
  return { code: 0, out: "" };
}

async function listenMetrics(http: Server, value: string): Promise<string> {
  const match = /^(.+):(\d{1,5})$/.exec(value);
  if (!match) throw new UsageError("--metrics must be HOST:PORT");
  const host = match[1]!.replace(/^\[|\]$/g, "");
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(Number(match[2]), host, resolve);
  });
  const { port } = http.address() as AddressInfo;
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}/metrics`;
}

function signalled(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
