/**
 * Launchers for the helper processes, in a place of a topology (a pod's or node's netns, or the
 * host): the echo app of a pod (waits for its `listening` line) and one run of the mTLS client.
 */
import { spawn } from "node:child_process";
import type { EchoAppConfig } from "./echo-app.js";
import type { Probe, ProbeResult } from "./mtls-client.js";
import type { Place, Topology } from "./netns.js";
import { type ManagedProcess, startProcess, tsxCommand, waitUntil } from "./processes.js";

export interface EchoApp extends ManagedProcess {
  readonly ports: { readonly http: readonly number[]; readonly tcp: readonly number[] };
}

/** Starts a pod's echo app in the pod's place, bound to the pod's address there. */
export async function startEchoApp(
  topology: Topology,
  pod: string,
  ports: { http?: readonly number[]; tcp?: readonly number[] },
  logDir: string,
  name = pod.split("/").at(-1)!,
): Promise<EchoApp> {
  const config: EchoAppConfig = { name, host: topology.podBindAddress(pod), ...ports };
  const app = startProcess(topology.command({ pod }, tsxCommand("test/envoy/support/echo-app.ts", [JSON.stringify(config)])), { name: `app-${name}`, logDir });
  try {
    const line = await waitUntil(
      () => (app.exit() ? Promise.reject(new Error(`echo app ${name} exited: ${app.stderr()}`)) : /^listening (.*)$/m.exec(app.stdout())?.[1]),
      20_000,
      () => `echo app ${name} did not start: ${app.stderr()}`,
    );
    return { ...app, ports: JSON.parse(line) };
  } catch (error) {
    await app.stop(1_000);
    throw error;
  }
}

/** Runs the mTLS client once in `place` with `probes`; its results, in order. */
export function runClient(topology: Topology, place: Place, probes: readonly Probe[], timeoutMs = 30_000): Promise<ProbeResult[]> {
  const argv = topology.command(place, tsxCommand("test/envoy/support/mtls-client.ts", [JSON.stringify(probes)]));
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk) => (out += chunk));
    child.stderr.on("data", (chunk) => (err += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`mTLS client exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").at(-1)!) as ProbeResult[]);
      } catch {
        reject(new Error(`mTLS client printed no results: ${out} ${err}`));
      }
    });
  });
}
