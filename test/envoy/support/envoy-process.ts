/**
 * Runs a real Envoy on a bootstrap: instruments it (admin + JSON access logs, see
 * bootstrap-transforms.ts), starts it (optionally inside a netns through `place`), waits until the
 * admin endpoint says LIVE (every static SDS secret fetched), and gives the tests admin, stats and
 * access-log access. Admin is on a free 127.0.0.1 port when Envoy runs in the host netns, and on a
 * Unix socket when it runs in a test netns (whose loopback the test process cannot reach).
 * `stop()` sends SIGTERM by PID, SIGKILL after a timeout (processes.ts). A start that fails
 * rejects with Envoy's own reason.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";
import type { EnvoyBinary } from "./binaries.js";
import { type AccessLogEntry, instrument, type RenderedBootstrap } from "./bootstrap-transforms.js";
import { type ManagedProcess, startProcess, waitUntil } from "./processes.js";
import { trimEnvoyMessage } from "./validate.js";

export interface EnvoyStartOptions {
  readonly envoy: EnvoyBinary;
  readonly bootstrap: RenderedBootstrap;
  /** Bootstrap, logs and access log go here. */
  readonly dir: string;
  readonly name: string;
  /** Wraps the command, e.g. `(argv) => topology.command({node}, argv)`; absent: the host netns. */
  readonly place?: (argv: readonly string[]) => string[];
  readonly admin?: "loopback" | "unix";
  readonly concurrency?: number;
  readonly logLevel?: string;
  readonly readyTimeoutMs?: number;
}

export interface AdminResponse {
  readonly status: number;
  readonly body: string;
}

export interface EnvoyProcess extends ManagedProcess {
  readonly version: string;
  readonly bootstrapFile: string;
  readonly accessLogFile: string;
  admin(path: string, method?: "GET" | "POST"): Promise<AdminResponse>;
  /** Every counter and gauge, by name. */
  stats(): Promise<Map<string, number>>;
  /** Waits until `name`'s value satisfies `predicate` (missing counts as 0). */
  waitForStat(name: string, predicate: (value: number) => boolean, timeoutMs?: number): Promise<number>;
  accessLog(): AccessLogEntry[];
  waitForAccessLog(predicate: (entry: AccessLogEntry) => boolean, timeoutMs?: number): Promise<AccessLogEntry>;
}

/** A free TCP port on 127.0.0.1 (bound and released: good enough for tests). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

type AdminTarget = { readonly socketPath: string } | { readonly host: string; readonly port: number };

function adminRequest(target: AdminTarget, path: string, method: string): Promise<AdminResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ ...target, path, method, timeout: 5_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error("admin request timed out")));
    req.on("error", reject);
    req.end();
  });
}

export async function startEnvoy(options: EnvoyStartOptions): Promise<EnvoyProcess> {
  const stem = options.name.replace(/[^A-Za-z0-9._-]+/g, "_");
  const useUnix = (options.admin ?? (options.place ? "unix" : "loopback")) === "unix";
  const target: AdminTarget = useUnix ? { socketPath: join(options.dir, `${stem}.admin.sock`) } : { host: "127.0.0.1", port: await freeLoopbackPort() };
  const adminAddress = "socketPath" in target ? { pipe: { path: target.socketPath } } : { socket_address: { address: target.host, port_value: target.port } };
  const accessLogFile = join(options.dir, `${stem}.access.log`);
  writeFileSync(accessLogFile, "");
  const bootstrapFile = join(options.dir, `${stem}.bootstrap.json`);
  writeFileSync(bootstrapFile, JSON.stringify(instrument(options.bootstrap, { adminAddress, accessLogPath: accessLogFile }), null, 1));
  const argv = [
    options.envoy.path,
    "-c",
    bootstrapFile,
    "--disable-hot-restart",
    "--log-level",
    options.logLevel ?? "info",
    "--concurrency",
    String(options.concurrency ?? 1),
    "--file-flush-interval-msec",
    "50", // access logs reach the file promptly (default 10 s)
  ];
  const child = startProcess(options.place ? options.place(argv) : argv, { name: `envoy-${stem}`, logDir: options.dir });
  const admin = (path: string, method: "GET" | "POST" = "GET") => adminRequest(target, path, method);
  const readAccessLog = (): AccessLogEntry[] => {
    try {
      return readFileSync(accessLogFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as AccessLogEntry);
    } catch {
      return [];
    }
  };
  const stats = async () => {
    const { body } = await admin("/stats?format=json");
    const parsed = JSON.parse(body) as { stats: { name?: string; value?: number }[] };
    return new Map(parsed.stats.filter((s) => s.name !== undefined && typeof s.value === "number").map((s) => [s.name!, s.value!]));
  };
  const envoyProcess: EnvoyProcess = {
    ...child,
    version: options.envoy.version,
    bootstrapFile,
    accessLogFile,
    admin,
    stats,
    waitForStat: (name, predicate, timeoutMs = 10_000) =>
      waitUntil(
        async () => {
          const value = (await stats()).get(name) ?? 0;
          return predicate(value) ? value : undefined;
        },
        timeoutMs,
        () => `stat ${name} of ${options.name}`,
        100,
      ),
    accessLog: readAccessLog,
    waitForAccessLog: (predicate, timeoutMs = 10_000) =>
      waitUntil(
        () => readAccessLog().find(predicate),
        timeoutMs,
        () => `access log of ${options.name}: ${JSON.stringify(readAccessLog())}`,
      ),
  };
  try {
    await waitUntil(
      async () => {
        if (child.exit()) throw new Error(`exited (${JSON.stringify(child.exit())}) before it was ready`);
        try {
          const ready = await admin("/ready");
          return ready.status === 200 && ready.body.trim() === "LIVE" ? true : undefined;
        } catch {
          return undefined;
        }
      },
      options.readyTimeoutMs ?? 30_000,
      () => "not LIVE",
      100,
    );
  } catch (error) {
    await child.stop(2_000);
    throw new Error(`Envoy ${options.envoy.version} (${options.name}) did not start: ${(error as Error).message}\n${trimEnvoyMessage(child.stderr())}`);
  }
  return envoyProcess;
}
