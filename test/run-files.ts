// Runs the test files of one `npm test` phase (each test:* script of package.json): the files
// that the patterns given match (from the working folder, the package's), in two groups.
// - The most of them run several at a time (FILES_AT_ONCE, file-groups.ts), the longest started first.
// - The files that measure time under load (TIMING_FILES) run after those, one at a time.
// Both groups run even when the first fails. At the end it prints the phase's test counts and its
// slowest files; with MCAUTH_TEST_FILE_TIMES set, it also writes what it printed there as JSON,
// for test/run-phases.ts to repeat in the run's summary.
//
// Under MCAUTH_TEST_RUNTIME=deno it leaves out NODE_ONLY_FILES (file-groups.ts).
//
// With --postgres it starts one throwaway PostgreSQL cluster for the phase, on which each file
// makes databases of its own (test/helpers/postgres.ts), and removes it at the end. With
// --all-at-once, the first group's files all run at once.
import { spawn, type ChildProcess } from 'node:child_process';
import { globSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileLine, SLOWEST_SHOWN, type FileTime, type PhaseReport, type TestCounts } from './file-times.ts';
import { FILES_AT_ONCE, NODE_ONLY_FILES, startOrder, TIMING_FILES } from './file-groups.ts';
import type { Cluster } from './helpers/postgres.ts';

const REPORTER = join(import.meta.dirname, 'file-times.ts');

/** The test runner running now, to whose process group a signal to this process is passed on. */
let running: ChildProcess | undefined;
/** The signal that stopped the run, if one did. */
let stoppedBy: NodeJS.Signals | undefined;

/** Runs `files` with Node's test runner, `atOnce` at a time; resolves with whether they passed and the times the reporter wrote. */
function runGroup(files: string[], atOnce: number, timesFile: string): Promise<{ passed: boolean; lines: string[] }> {
  const args = [
    ...process.execArgv,
    '--test',
    `--test-concurrency=${atOnce}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${REPORTER}`,
    `--test-reporter-destination=${timesFile}`,
    ...files,
  ];
  return new Promise((done, fail) => {
    // A run of its own even when a test starts it (Node's runner skips a run it takes for nested).
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // A process group of its own, with the test files it starts: a stop reaches them all at once.
    const child = spawn(process.execPath, args, { stdio: 'inherit', env, detached: true });
    running = child;
    child.on('error', fail);
    child.on('exit', (code, signal) => {
      running = undefined;
      if (signal !== null) {
        fail(new Error(`the test runner ended on ${signal}`));
        return;
      }
      let text = '';
      try {
        text = readFileSync(timesFile, 'utf8');
      } catch {
        // It wrote nothing: it failed before any file ended.
      }
      done({ passed: code === 0, lines: text.split('\n').filter((l) => l !== '') });
    });
  });
}

/** The report of the lines the reporter wrote over every group. */
function reportOf(lines: string[]): PhaseReport {
  const counts: TestCounts = { tests: 0, passed: 0, failed: 0, skipped: 0, todo: 0, cancelled: 0 };
  const files: FileTime[] = [];
  for (const line of lines) {
    const entry = JSON.parse(line) as { counts: TestCounts } | FileTime;
    if ('counts' in entry) for (const key of Object.keys(counts) as (keyof TestCounts)[]) counts[key] += entry.counts[key];
    else files.push({ ...entry, file: relative(process.cwd(), entry.file) });
  }
  return { counts, files: files.sort((a, b) => b.ms - a.ms) };
}

async function main(argv: string[]): Promise<number> {
  const withPostgres = argv.includes('--postgres');
  // A phase of a few files that wait on PostgreSQL more than on a core (test:postgres): every one
  // at once, so the last to start does not run alone at the end.
  const allAtOnce = argv.includes('--all-at-once');
  const patterns = argv.filter((a) => a !== '--postgres' && a !== '--all-at-once');
  // On Deno, the files whose subject is the same on either runtime are left to the Node phase.
  const onDeno = process.env.MCAUTH_TEST_RUNTIME === 'deno';
  const matched = [...new Set(globSync(patterns))].sort();
  const all = matched.filter((f) => !(onDeno && NODE_ONLY_FILES.includes(f)));
  if (matched.length === 0) throw new Error(`no test file matches ${patterns.join(' ')}`);
  if (all.length === 0) throw new Error(`every file ${patterns.join(' ')} matches is left to the Node phase (NODE_ONLY_FILES, test/file-groups.ts)`);
  const timing = all.filter((f) => TIMING_FILES.includes(f));
  const rest = startOrder(all.filter((f) => !TIMING_FILES.includes(f)));

  const dir = mkdtempSync(join(tmpdir(), 'mcauth-run-'));
  let cluster: Cluster | undefined;
  try {
    if (withPostgres) {
      // Loaded only here: without PostgreSQL installed, the module throws where it is required.
      const { postgresMissing, SHARED_CLUSTER_ENV, startCluster } = await import('./helpers/postgres.ts');
      if (!postgresMissing) {
        // Room for every file running at once, each with a server's pool or two.
        cluster = await startCluster(['max_connections = 500']);
        process.env[SHARED_CLUSTER_ENV] = cluster.shareable;
      }
    }
    const lines: string[] = [];
    let passed = true;
    for (const [files, atOnce, name] of [
      [rest, allAtOnce ? Math.max(rest.length, 1) : FILES_AT_ONCE, 'rest'],
      [timing, 1, 'timing'],
    ] as const) {
      if (files.length === 0 || stoppedBy) continue;
      const group = await runGroup([...files], atOnce, join(dir, `${name}.jsonl`));
      passed &&= group.passed;
      lines.push(...group.lines);
    }
    const report = reportOf(lines);
    const { tests, passed: pass, failed, skipped, cancelled, todo } = report.counts;
    // Cancelled tests (a hook that threw, a test over its timeout) and todo ones only when there are any.
    const more = [cancelled ? `, ${cancelled} cancelled` : '', todo ? `, ${todo} todo` : ''].join('');
    process.stdout.write(
      `\n${all.length} files (${timing.length} of them alone, after the rest): ${tests} tests, ${pass} passed, ${failed} failed${more}, ${skipped} skipped\n` +
        `slowest files:\n${report.files.slice(0, SLOWEST_SHOWN).map(fileLine).join('\n')}\n`,
    );
    const out = process.env.MCAUTH_TEST_FILE_TIMES;
    if (out) writeFileSync(out, JSON.stringify(report));
    return passed ? 0 : 1;
  } finally {
    await cluster?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

// A stop asked of the run (Ctrl-C, or a supervisor's SIGTERM) is passed on to the test runner and
// the test files, and the run ends once the runner has, the cluster removed, with the signal's
// usual status.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stoppedBy = signal;
    if (running?.pid !== undefined) process.kill(-running.pid, signal);
  });
}

const status = await main(process.argv.slice(2)).catch((err: Error) => {
  if (!stoppedBy) throw err;
  return 0;
});
process.exitCode = stoppedBy ? 128 + constants.signals[stoppedBy] : status;
