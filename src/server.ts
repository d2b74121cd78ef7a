#!/usr/bin/env node
// Entry point of dist/server.js. The runtime check runs first; the program itself is loaded
// only once it has passed (see runtime.ts). A hash worker thread starts this same file (see
// import/hashes/worker.ts): it serves hash jobs and never runs the program.
import { isHashWorkerThread, serveHashJobs } from './import/hashes/worker.ts';
import { recoverable, runtimeProblem } from './runtime.ts';
import { programArgs } from './sea.ts';

if (isHashWorkerThread()) serveHashJobs();
else await runProgram();

async function runProgram(): Promise<void> {
  const problem = runtimeProblem(process.versions);
  if (problem !== undefined) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  // A bug's error that nothing caught ends the process (status 1, for a supervisor to restart it),
  // with its stack, unless a part knows it for its own and has recovered (see recoverable). Deno reports a permission it denies (such as --allow-net for another address
  // than --host) that way too: that one is no bug, and one line says it.
  process.on('uncaughtException', (err) => {
    const recovered = recoverable.map((recover) => recover(err)).find((said) => said !== undefined);
    if (recovered !== undefined) return void process.stderr.write(`mcauth: ${recovered}\n`);
    const denied = err.name === 'NotCapable';
    process.stderr.write(denied ? `mcauth: Deno refused a permission: ${err.message}\n` : `mcauth: uncaught error: ${err.stack ?? String(err)}\n`);
    process.exit(1);
  });
  const { main } = await import('./cli/main.ts');
  const { stdin, stdout, stderr, env } = process;
  const code = await main(programArgs(), { stdin, stdout, stderr, env });
  if (code !== undefined) {
    process.exitCode = code;
    // A --workers worker that is done (it could not start): its channel to the primary would keep it alive.
    if (process.connected) process.exit(code);
  }
}
