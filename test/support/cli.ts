/** Runs the built `aether-xds` binary (dist/, built by `npm test`) as a user would. */
import { spawnSync } from "node:child_process";
import { REPO_ROOT } from "./fixtures.js";

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runCli(args: readonly string[], options: { cwd?: string; input?: string } = {}): CliResult {
  const result = spawnSync(process.execPath, [`${REPO_ROOT}dist/src/cli.js`, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    ...(options.input !== undefined ? { input: options.input } : {}),
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
