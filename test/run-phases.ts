// `npm test`: runs every phase (each an npm script of the package in the working folder), says
// how each ended, and fails at the end if any failed, so that one failing phase hides none of the
// later ones. A failed typecheck or build stops the run: every later phase tests the build.
import { spawnSync } from 'node:child_process';

/** Phases that the rest depend on: the first to fail ends the run. */
const GATES = ['typecheck', 'build'];
const PHASES = ['test:node', 'test:postgres', 'test:deno', 'test:browser'];

type Result = { phase: string; said: string; ok: boolean };

/** Runs `npm run PHASE` with this process's terminal; how it ended. */
function run(phase: string): Result & { signal: NodeJS.Signals | null } {
  const started = performance.now();
  const r = spawnSync('npm', ['run', phase], { stdio: 'inherit' });
  const took = `${Math.round((performance.now() - started) / 1000)} s`;
  if (r.error) return { phase, said: `could not run: ${r.error.message}`, ok: false, signal: null };
  if (r.signal) return { phase, said: `ended by ${r.signal} after ${took}`, ok: false, signal: r.signal };
  return { phase, said: r.status === 0 ? `passed in ${took}` : `failed (exit ${r.status}) after ${took}`, ok: r.status === 0, signal: null };
}

const results: Result[] = [];
for (const phase of [...GATES, ...PHASES]) {
  const result = run(phase);
  results.push(result);
  // A gate that failed, or a phase the user interrupted (Ctrl-C reaches the whole group): no more.
  if (!result.ok && (GATES.includes(phase) || result.signal !== null)) break;
}
const skipped = [...GATES, ...PHASES].slice(results.length);
const lines = [...results.map((r) => `  ${r.phase}: ${r.said}`), ...skipped.map((phase) => `  ${phase}: not run`)];
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(`\nnpm test phases:\n${lines.join('\n')}\n${failed === 0 ? 'All phases passed' : `${failed} ${failed === 1 ? 'phase' : 'phases'} failed`}\n`);
process.exitCode = failed === 0 ? 0 : 1;
