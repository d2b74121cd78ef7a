// `npm test`: runs every phase (each an npm script of the package in the working folder), says
// how each ended, with its wall time, its test counts and its slowest files (from what
// test/run-files.ts writes to MCAUTH_TEST_FILE_TIMES), and fails at the end if any failed, so
// that one failing phase hides none of the later ones. A failed typecheck or build stops the
// run: every later phase tests the build.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileLine, SLOWEST_SHOWN, type PhaseReport } from './file-times.ts';

/** Phases that the rest depend on: the first to fail ends the run. */
const GATES = ['typecheck', 'build'];
/**
 * The test phases, in steps: the phases of one step run at the same time. The browser's runs
 * beside PostgreSQL's, whose last file runs on alone for half of it; neither has files that time
 * anything under load. The Node and Deno phases end with such files, so each has a step of its own.
 */
const STEPS = [['test:node'], ['test:postgres', 'test:browser'], ['test:deno']];
const PHASES = STEPS.flat();

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

/**
 * Runs `npm run PHASE`, with this process's terminal or, where `into` names a file, its output
 * there (the phases beside the first of a step, so that theirs is not mixed into its); how it ended.
 */
function run(phase: string, into?: string): Promise<Result & { signal: NodeJS.Signals | null }> {
  const started = performance.now();
  const times = join(reports, `${phase.replace(/\W/g, '-')}.json`);
  const out = into === undefined ? 'inherit' : openSync(into, 'w');
  const child = spawn('npm', ['run', phase], { stdio: ['inherit', out, out], env: { ...process.env, MCAUTH_TEST_FILE_TIMES: times } });
  if (typeof out === 'number') closeSync(out);
  return new Promise((resolve) => {
    child.once('error', (error) => resolve({ phase, said: `could not run: ${error.message}`, ok: false, signal: null }));
    child.once('close', (status, signal) => {
      const took = `${Math.round((performance.now() - started) / 1000)} s`;
      const report = reportOf(times);
      if (signal) resolve({ phase, said: `ended by ${signal} after ${took}`, ok: false, signal, report });
      else resolve({ phase, said: status === 0 ? `passed in ${took}` : `failed (exit ${status}) after ${took}`, ok: status === 0, signal: null, report });
    });
  });
}

/** Runs a step's phases at once, the first on the terminal; the others' output follows when all ended. */
async function runStep(step: string[]): Promise<Array<Result & { signal: NodeJS.Signals | null }>> {
  const outputs = step.map((phase, i) => (i === 0 ? undefined : join(reports, `${phase.replace(/\W/g, '-')}.out`)));
  const ended = await Promise.all(step.map((phase, i) => run(phase, outputs[i])));
  for (const file of outputs) if (file !== undefined) process.stdout.write(readFileSync(file));
  return ended;
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
  for (const step of [...GATES.map((gate) => [gate]), ...STEPS]) {
    const ended = await runStep(step);
    results.push(...ended);
    // A gate that failed, or a phase the user interrupted (Ctrl-C reaches the whole group): no more.
    if (ended.some((r) => !r.ok && (GATES.includes(r.phase) || r.signal !== null))) break;
  }
} finally {
  rmSync(reports, { recursive: true, force: true });
}
const skipped = [...GATES, ...PHASES].slice(results.length);
const lines = [...results.map(summary), ...skipped.map((phase) => `  ${phase}: not run`)];
const failed = results.filter((r) => !r.ok).length;
process.stdout.write(`\nnpm test phases:\n${lines.join('\n')}\n${failed === 0 ? 'All phases passed' : `${failed} ${failed === 1 ? 'phase' : 'phases'} failed`}\n`);
process.exitCode = failed === 0 ? 0 : 1;
