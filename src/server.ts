#!/usr/bin/env node
// Entry point of dist/server.js. The runtime check runs first; the program itself is loaded
// only once it has passed (see runtime.ts).
import { runtimeProblem } from './runtime.ts';

const problem = runtimeProblem(process.versions);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
const { main } = await import('./cli/main.ts');
const { stdin, stdout, stderr, env } = process;
const code = await main(process.argv.slice(2), { stdin, stdout, stderr, env });
if (code !== undefined) process.exitCode = code;
