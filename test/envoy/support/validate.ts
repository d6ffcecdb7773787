/**
 * `envoy --mode validate` on a bootstrap, with Envoy's rejection trimmed to what a person needs:
 * the error line without the config dump Envoy prints for proto-constraint failures, and
 * `Clusters[i]` / `Listeners[i]` annotated with the resource's name.
 *
 * Validations run as child processes, at most `validationJobs()` at a time per test worker
 * (`AETHER_ENVOY_JOBS`, default 2 × CPUs: each run is mostly process start-up, not CPU), and are
 * killed (SIGKILL, by PID) after `VALIDATE_TIMEOUT_MS`.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { EnvoyBinary } from "./binaries.js";

export const VALIDATE_TIMEOUT_MS = 60_000;

export interface ValidationOutcome {
  readonly ok: boolean;
  /** Envoy's rejection, trimmed; empty when accepted. */
  readonly message: string;
  /** Everything Envoy printed. */
  readonly output: string;
  readonly file: string;
  readonly ms: number;
}

/** A rendered (canonical JSON) bootstrap: `renderBootstrap(...)` output. */
export type RenderedBootstrap = { readonly [key: string]: unknown };

export function validationJobs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.AETHER_ENVOY_JOBS);
  return Number.isInteger(configured) && configured > 0 ? configured : Math.max(2, availableParallelism() * 2);
}

/** A counting semaphore: `run(task)` waits for one of `limit` slots. */
export function limiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

const slot = limiter(validationJobs());

/** YAML text, validated as written (a `.yaml` file). */
export interface BootstrapText {
  readonly yaml: string;
}

/** Writes `bootstrap` to `<dir>/<name>.json` (or `.yaml`) and runs `envoy --mode validate` on it. */
export function validateBootstrap(envoy: EnvoyBinary, bootstrap: RenderedBootstrap | BootstrapText, dir: string, name: string): Promise<ValidationOutcome> {
  return slot(async () => {
    const text = isText(bootstrap);
    const file = join(dir, `${name.replace(/[^A-Za-z0-9._-]+/g, "_")}.${text ? "yaml" : "json"}`);
    await writeFile(file, text ? bootstrap.yaml : JSON.stringify(bootstrap));
    const started = performance.now();
    const { code, output } = await runValidate(envoy.path, file);
    const ms = performance.now() - started;
    const ok = code === 0 && /configuration '.*' OK/.test(output);
    return { ok, message: ok ? "" : trimEnvoyMessage(output, text ? undefined : bootstrap), output, file, ms };
  });
}

function isText(bootstrap: RenderedBootstrap | BootstrapText): bootstrap is BootstrapText {
  return typeof bootstrap.yaml === "string" && Object.keys(bootstrap).length === 1;
}

function runValidate(envoy: string, file: string): Promise<{ code: number | null; output: string }> {
  const args = ["--mode", "validate", "-c", file, "--log-level", "warn", "--disable-hot-restart"];
  return new Promise((resolve) => {
    execFile(envoy, args, { timeout: VALIDATE_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 64 << 20, encoding: "utf8" }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
      const timedOut = error?.killed ? `\n(killed after ${VALIDATE_TIMEOUT_MS} ms)` : "";
      resolve({ code, output: `${stdout}${stderr}${timedOut}` });
    });
  });
}

const LOG_PREFIX = /^\[[^\]]*\]\[\d+\]\[(\w+)\]\[[\w-]+\] \[[^\]]*\] /;
const MAX_LINE = 1500;

/**
 * The lines of Envoy's output that say why it refused the bootstrap. For a proto-constraint
 * failure Envoy prints the whole config as text proto between "error initializing configuration
 * '<file>': " and ": Proto constraint validation failed (...)"; only the latter is kept.
 */
export function trimEnvoyMessage(output: string, bootstrap?: RenderedBootstrap): string {
  const lines = output.split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const prefix = LOG_PREFIX.exec(lines[i]!);
    if (!prefix || !["critical", "error"].includes(prefix[1]!)) continue;
    let end = i + 1;
    while (end < lines.length && !LOG_PREFIX.test(lines[end]!)) end++;
    const continuation = lines.slice(i + 1, end).filter((l) => l.trim() !== "");
    const head = lines[i]!.slice(prefix[0].length)
      .replace(/^error initializing configuration '[^']*': /, "")
      .replace(/goo\.gle\/\S*\s*$/, "")
      .trim();
    // After a dumped config, the reason is the line starting with ": ".
    const reason = continuation.find((l) => l.startsWith(": "));
    const text = reason ? [head, reason.slice(2)].filter(Boolean).join(" … ") : [head, ...continuation.slice(0, 5)].filter(Boolean).join("\n");
    kept.push(...text.split("\n").map((l) => clip(annotate(l, bootstrap))));
  }
  if (kept.length > 0) return kept.join("\n");
  const tail = lines.filter((l) => l.trim() !== "").slice(-10);
  return tail.map(clip).join("\n") || "(no output)";
}

function clip(line: string): string {
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)}… (${line.length - MAX_LINE} more characters)` : line;
}

/** `StaticResourcesValidationError.Clusters[3]` → `...Clusters[3] (cluster "<name>")`. */
function annotate(text: string, bootstrap: RenderedBootstrap | undefined): string {
  const resources = bootstrap?.static_resources as { clusters?: { name?: string }[]; listeners?: { name?: string }[] } | undefined;
  if (!resources) return text;
  return text.replace(/\b(Clusters|Listeners)\[(\d+)\]/g, (match, kind: string, index: string) => {
    const list = kind === "Clusters" ? resources.clusters : resources.listeners;
    const name = list?.[Number(index)]?.name;
    return name === undefined ? match : `${match} (${kind === "Clusters" ? "cluster" : "listener"} "${name}")`;
  });
}
