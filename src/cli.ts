#!/usr/bin/env node
/** The `aether-xds` command line. */
import { run } from "./cli/run.js";

const { code, out } = run(process.argv.slice(2));
(code === 0 ? process.stdout : process.stderr).write(out + "\n");
process.exitCode = code;
