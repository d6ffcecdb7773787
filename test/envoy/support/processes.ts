/**
 * Child processes of the Envoy suites (Envoy, echo apps, clients): stdout and stderr go to files
 * (kept if the test process dies), each process is on the cleanup ledger and killed at exit if
 * still running, and `stop()` sends SIGTERM by PID, then SIGKILL after a timeout.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../support/fixtures.js";
import { atExit, killIfSame, ledgerProcess, processStartTime } from "./cleanup.js";

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  /** Settles when the process exits. */
  readonly exited: Promise<Exit>;
  /** The exit, once it happened. */
  exit(): Exit | undefined;
  stdout(): string;
  stderr(): string;
  /** SIGTERM by PID; SIGKILL if it is still running after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<Exit & { readonly killed: boolean }>;
}

export interface StartOptions {
  readonly name: string;
  /** Where stdout/stderr files go. */
  readonly logDir: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

/** `node --import tsx <script> <args>`: how the suites run their TypeScript helpers as processes. */
export function tsxCommand(script: string, args: readonly string[] = []): string[] {
  return [process.execPath, "--import", "tsx", join(REPO_ROOT, script), ...args];
}

export function startProcess(argv: readonly string[], options: StartOptions): ManagedProcess {
  mkdirSync(options.logDir, { recursive: true });
  const stem = options.name.replace(/[^A-Za-z0-9._-]+/g, "_");
  const stdoutFile = join(options.logDir, `${stem}.stdout.log`);
  const stderrFile = join(options.logDir, `${stem}.stderr.log`);
  const out = openSync(stdoutFile, "w");
  const err = openSync(stderrFile, "w");
  let child: ChildProcess;
  try {
    child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", out, err], cwd: options.cwd ?? REPO_ROOT, env: options.env ?? process.env });
  } finally {
    closeSync(out);
    closeSync(err);
  }
  if (child.pid === undefined) throw new Error(`could not start ${argv.join(" ")}`);
  const pid = child.pid;
  const startTime = processStartTime(pid);
  ledgerProcess(pid);
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    const settle = (outcome: Exit) => {
      exit = outcome;
      resolve(outcome);
    };
    child.once("exit", (code, signal) => settle({ code, signal }));
    child.once("error", () => settle({ code: null, signal: null }));
  });
  const unregister = atExit(() => {
    if (!exit) killIfSame(pid, startTime);
  });
  void exited.then(unregister);
  const read = (file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch {
      return "";
    }
  };
  return {
    name: options.name,
    pid,
    stdoutFile,
    stderrFile,
    exited,
    exit: () => exit,
    stdout: () => read(stdoutFile),
    stderr: () => read(stderrFile),
    async stop(timeoutMs = 5_000) {
      if (exit) return { ...exit, killed: false };
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        // already gone
      }
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
      });
      const first = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (first !== "late") return { ...first, killed: false };
      killIfSame(pid, startTime);
      return { ...(await exited), killed: true };
    },
  };
}

/** Polls `check` every `intervalMs` until it returns a value (not undefined), or throws after `timeoutMs` with `describe()`. */
export async function waitUntil<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs: number,
  describe: () => string,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
