#!/usr/bin/env node
/** The `aether-xds` command line. */
import { run } from "./cli/run.js";

const argv = process.argv.slice(2);
const finish = ({ code, out }: { code: number; out: string }) => {
  // Exit code 2 is a usage or input error, reported on stderr; 0 and 1 are results (1: a check failed).
  if (out) (code === 2 ? process.stderr : process.stdout).write(`${out}\n`);
  process.exitCode = code;
};
// `serve` runs until a signal and loads gRPC; every other command is a function of its arguments.
if (argv[0] === "serve") {
  void import("./cli/serve.js").then(({ serve }) => serve(argv.slice(1), { out: (line) => process.stdout.write(`${line}\n`) })).then(finish);
} else {
  finish(run(argv));
}
