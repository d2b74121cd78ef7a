// `npm test`: runs every phase (each an npm script of the package in the working folder), says
// how each ended, with its wall time, its test counts and its slowest files (from what
// test/run-files.ts writes to MCAUTH_TEST_FILE_TIMES), and fails at the end if any failed, so
// that one failing phase hides none of the later ones. A failed typecheck or build stops the
// run: every later phase tests the build.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileLine, SLOWEST_SHOWN, type PhaseReport } from './file-times.ts';

/** Phases that the rest depend on: the first to fail ends the run. */
const GATES = ['typecheck', 'build'];
const PHASES = ['test:node', 'test:postgres', 'test:deno', 'test:browser'];

type Result = { phase: string; said: string; ok: boolean; report?: PhaseReport };

const reports = mkdtempSync(join(tmpdir(), 'mcauth-phases-'));

/** What test/run-files.ts wrote of the phase, if it wrote anything. */
function reportOf(file: string): PhaseReport | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as PhaseReport;
  } catch {
    return undefined;
  }
}

/** Runs `npm run PHASE` with this process's terminal; how it ended. */
function run(phase: string): Result & { signal: NodeJS.Signals | null } {
  const started = performance.now();
  const times = join(reports, `${phase.replace(/\W/g, '-')}.json`);
  const r = spawnSync('npm', ['run', phase], { stdio: 'inherit', env: { ...process.env, MCAUTH_TEST_FILE_TIMES: times } });
  const took = `${Math.round((performance.now() - started) / 1000)} s`;
  if (r.error) return { phase, said: `could not run: ${r.error.message}`, ok: false, signal: null };
  const report = reportOf(times);
  if (r.signal) return { phase, said: `ended by ${r.signal} after ${took}`, ok: false, signal: r.signal, report };
  return { phase, said: r.status === 0 ? `passed in ${took}` : `failed (exit ${r.status}) after ${took}`, ok: r.status === 0, signal: null, report };
}

/** A phase's line of the summary, with its counts and slowest files where it ran test files. */
function summary(r: Result): string {
  if (!r.report) return `  ${r.phase}: ${r.said}`;
  const { tests, passed, failed, skipped } = r.report.counts;
  const slowest = r.report.files.slice(0, SLOWEST_SHOWN).map((f) => `    ${fileLine(f)}`);
  return [`  ${r.phase}: ${r.said}: ${tests} tests, ${passed} passed, ${failed} failed, ${skipped} skipped; slowest files:`, ...slowest].join('\n');
}

const results: Result[] = [];
try {
  for (const phase of [...GATES, ...PHASES]) {
    const result = run(phase);
    results.push(result);
    // A gate that failed, or a phase the user interrupted (Ctrl-C reaches the whole group): no more.
    if (!result.ok && (GATES.includes(phase) || result.signal !== null)) break;
  }
} finally {
  rmSync(reports, { recursive: true, force: true });
}
const skipped = [...GATES, ...PHASES].slice(results.length);
const lines = [...results.map(summary), ...skipped.map((phase) => `  ${phase}: not run`)];
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(`\nnpm test phases:\n${lines.join('\n')}\n${failed === 0 ? 'All phases passed' : `${failed} ${failed === 1 ? 'phase' : 'phases'} failed`}\n`);
process.exitCode = failed === 0 ? 0 : 1;
