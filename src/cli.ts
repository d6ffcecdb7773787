#!/usr/bin/env node
/** The `aether-xds` command line. */
import { run } from "./cli/run.js";

const { code, out } = run(process.argv.slice(2));
// Exit code 2 is a usage or input error, reported on stderr; 0 and 1 are results (1: a check failed).
(code === 2 ? process.stderr : process.stdout).write(`${out}\n`);
process.exitCode = code;
