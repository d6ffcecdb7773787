#!/usr/bin/env node
/** The `aether-xds` command line. */
import { run } from "./cli/run.js";

const argv = process.argv.slice(2);
const finish = ({ code, out, warnings }: { code: number; out: string; warnings?: string | undefined }) => {
  process.exitCode = code;
  if (warnings) writeTo(process.stderr, `${warnings}\n`);
  // Exit code 2 is a usage or input error, reported on stderr; 0 and 1 are results (1: a check failed).
  if (out) writeTo(code === 2 ? process.stderr : process.stdout, `${out}\n`);
};
// `serve` runs until a signal and loads gRPC; every other command is a function of its arguments.
if (argv[0] === "serve") {
  void import("./cli/serve.js").then(({ serve }) => serve(argv.slice(1), { out: (line) => process.stdout.write(`${line}\n`) })).then(finish);
} else {
  finish(run(argv));
}

/**
 * A reader that stops early (`compile … | head`) closes the pipe: that is not an error, so the
 * command ends quietly. Any other write failure (a full disk) is one line and exit code 2.
 */
function writeTo(stream: NodeJS.WriteStream, text: string): void {
  let reported = false;
  const failed = (error: NodeJS.ErrnoException) => {
    if (reported) return;
    reported = true;
    if (error.code === "EPIPE") process.exit();
    process.exitCode = 2;
    if (stream !== process.stderr) process.stderr.write(`aether-xds: cannot write the output: ${error.code ?? error.message}\n`, () => process.exit());
    else process.exit();
  };
  stream.on("error", failed);
  stream.write(text, (error) => error && failed(error));
}
