/** `aether-xds serve` as a process (the built binary in dist/), its JSON log lines parsed as they come. */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../support/fixtures.js";

export interface ServeProcess {
  readonly child: ChildProcess;
  /** Every JSON log line so far. */
  readonly lines: Record<string, any>[];
  /** The `listening` line's address (ADS) and metrics URL. */
  readonly address: string;
  readonly metrics: string | undefined;
  /** Resolves with the first line (already logged or future) that matches. */
  waitFor(predicate: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  /** SIGTERM by PID; resolves with the exit code. */
  stop(): Promise<number | null>;
}

export async function startServe(args: readonly string[]): Promise<ServeProcess> {
  const child = spawn(process.execPath, [`${REPO_ROOT}dist/src/cli.js`, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const lines: Record<string, any>[] = [];
  const waiters = new Set<{ predicate: (line: Record<string, any>) => boolean; resolve: (line: Record<string, any>) => void }>();
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  createInterface({ input: child.stdout! }).on("line", (text) => {
    const line = JSON.parse(text) as Record<string, any>;
    lines.push(line);
    for (const waiter of waiters) if (waiter.predicate(line)) waiter.resolve(line);
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const waitFor = (predicate: (line: Record<string, any>) => boolean, timeoutMs = 15_000) => {
    const seen = lines.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise<Record<string, any>>((resolve, reject) => {
      const waiter = {
        predicate,
        resolve: (line: Record<string, any>) => {
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        reject(new Error(`no matching log line; stderr: ${stderr}; lines: ${JSON.stringify(lines)}`));
      }, timeoutMs);
      waiters.add(waiter);
    });
  };
  const listening = await Promise.race([
    waitFor((line) => line.event === "listening"),
    exited.then((code) => Promise.reject(new Error(`serve exited ${code}: ${stderr}`))),
  ]);
  return {
    child,
    lines,
    address: listening.address,
    metrics: listening.metrics,
    waitFor,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
