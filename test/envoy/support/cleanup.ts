/**
 * Nothing a test starts outlives it. Every process and network namespace the Envoy suites create
 * is (1) removed by the test that made it (afterAll / finally), (2) removed at process exit by
 * `atExit` tasks (normal exit, uncaught error, SIGINT, SIGTERM), and (3) written to a ledger,
 * `<tmpdir>/aether-xds-envoy-tests/<owner pid>-<owner start time>.ledger`, so that
 * `sweepStale()` — run before the suites (vitest globalSetup) — kills by PID and deletes by name
 * whatever a killed test run left behind. A PID is only killed when its start time still matches
 * the ledger (never a reused PID), and only ledgers of dead owners are swept. A test process that
 * exits normally removes its own ledger.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const LEDGER_DIR = join(tmpdir(), "aether-xds-envoy-tests");

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), or undefined if gone. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** True when `pid` runs and (if given) started at `startTime`. */
export function isRunning(pid: number, startTime?: string): boolean {
  const actual = processStartTime(pid);
  return actual !== undefined && (startTime === undefined || actual === startTime);
}

const tasks = new Map<number, () => void>();
let nextTask = 0;
let hooked = false;

function runTasks(): void {
  for (const [id, task] of [...tasks].reverse()) {
    tasks.delete(id);
    try {
      task();
    } catch {
      // best effort at exit
    }
  }
  // Everything recorded was removed above or by its test: the ledger has done its job.
  rmSync(ledgerFile(), { force: true });
}

/** Registers a synchronous cleanup for process exit; returns its unregister function. */
export function atExit(task: () => void): () => void {
  ensureHooked();
  const id = nextTask++;
  tasks.set(id, task);
  return () => tasks.delete(id);
}

function ensureHooked(): void {
  if (!hooked) {
    hooked = true;
    process.once("exit", runTasks);
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      process.once(signal, () => {
        runTasks();
        process.exit(128 + (signal === "SIGINT" ? 2 : 15));
      });
    }
  }
}

function ledgerFile(): string {
  return join(LEDGER_DIR, `${process.pid}-${processStartTime(process.pid) ?? "0"}.ledger`);
}

/** Records a process this test process started (by PID and start time). */
export function ledgerProcess(pid: number): void {
  ensureHooked();
  mkdirSync(LEDGER_DIR, { recursive: true });
  appendFileSync(ledgerFile(), `process ${pid} ${processStartTime(pid) ?? "?"}\n`);
}

/** Records a network namespace this test process created. */
export function ledgerNetns(name: string): void {
  ensureHooked();
  mkdirSync(LEDGER_DIR, { recursive: true });
  appendFileSync(ledgerFile(), `netns ${name}\n`);
}

/** SIGKILL by PID, if it is still the process that was recorded. */
export function killIfSame(pid: number, startTime: string | undefined): boolean {
  if (!isRunning(pid, startTime)) return false;
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

/** Deletes a namespace after killing (by PID) every process still inside it. */
export function deleteNetns(name: string): void {
  const pids = spawnSync("ip", ["netns", "pids", name], { encoding: "utf8" }).stdout ?? "";
  for (const pid of pids.split(/\s+/).filter(Boolean).map(Number)) killIfSame(pid, undefined);
  spawnSync("ip", ["netns", "delete", name], { encoding: "utf8" });
}

/** Kills and deletes what dead test runs left behind; returns what it removed. */
export function sweepStale(): string[] {
  const removed: string[] = [];
  let files: string[] = [];
  try {
    files = readdirSync(LEDGER_DIR).filter((f) => f.endsWith(".ledger"));
  } catch {
    return removed;
  }
  for (const file of files) {
    const [owner, ownerStart] = file.replace(/\.ledger$/, "").split("-");
    if (isRunning(Number(owner), ownerStart)) continue;
    const lines = readFileSync(join(LEDGER_DIR, file), "utf8").split("\n").filter(Boolean);
    for (const line of lines) {
      const [kind, a, b] = line.split(" ");
      if (kind === "process" && killIfSame(Number(a), b === "?" ? "never" : b)) removed.push(`process ${a}`);
    }
    for (const line of lines) {
      const [kind, name] = line.split(" ");
      if (kind === "netns" && name && netnsExists(name)) {
        deleteNetns(name);
        removed.push(`netns ${name}`);
      }
    }
    rmSync(join(LEDGER_DIR, file), { force: true });
  }
  // Test namespaces are named `axt-<owner pid>-...`: any whose owner is gone is stale too.
  for (const name of listNetns()) {
    const owner = /^axt-(\d+)-/.exec(name)?.[1];
    if (owner && !isRunning(Number(owner))) {
      deleteNetns(name);
      removed.push(`netns ${name}`);
    }
  }
  return removed;
}

export function listNetns(): string[] {
  const list = spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout ?? "";
  return list
    .split("\n")
    .map((line) => line.split(" ")[0]!)
    .filter(Boolean);
}

export function netnsExists(name: string): boolean {
  return listNetns().includes(name);
}
