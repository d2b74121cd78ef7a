// test/run-files.ts, the runner of a phase's test files, on folders of its own whose test files
// write when they start and end: the most run at once; the files that measure time under load run
// after them, one at a time, even when one of the others failed; the phase's counts and slowest
// files are printed, and written where MCAUTH_TEST_FILE_TIMES says; with --postgres the files
// share one cluster, removed at the end, also when the run is stopped by a signal.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import type { PhaseReport } from './file-times.ts';
import { childEnv, ROOT, runProc, tempDir } from './helpers/process.ts';
import { FILES_AT_ONCE, LONG_FILES, NODE_ONLY_FILES, startOrder, TIMING_FILES } from './file-groups.ts';
import { postgresMissing, SHARED_CLUSTER_ENV } from './helpers/postgres.ts';

const { dir, cleanup } = tempDir();
after(cleanup);

/** The files that run at once in the fixture; each waits until all of them have started. */
const TOGETHER = ['test/a.test.ts', 'test/b.test.ts', 'test/c/d.test.ts'];
/** Two of the real timing files' paths, so the runner takes them for such. */
const ALONE = [TIMING_FILES[0]!, TIMING_FILES[1]!];
/** How long a timing file of the fixture stays, so that another started beside it would be seen. */
const ALONE_MS = 500;

/** The command that runs the runner on the patterns, tsx by its own address (a fixture's folder has no node_modules). */
const runner = (...args: string[]): string[] => [process.execPath, '--import', import.meta.resolve('tsx'), join(ROOT, 'test', 'run-files.ts'), ...args];

/**
 * A test file that logs its start and end. One of TOGETHER waits until all of them have started;
 * one of ALONE stays ALONE_MS and fails if any other file starts meanwhile.
 */
function fixture(name: string, fail: boolean): string {
  const together = TOGETHER.includes(name);
  return `import { appendFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
const log = (what) => appendFileSync(process.env.FIXTURE_LOG, what + ' ${name}\\n');
const starts = () => readFileSync(process.env.FIXTURE_LOG, 'utf8').split('\\n').filter((l) => l.startsWith('start '));
test('${name}', async () => {
  log('start');
  if (${together}) {
    const until = Date.now() + 30_000;
    while (!${JSON.stringify(TOGETHER)}.every((f) => starts().includes('start ' + f))) {
      if (Date.now() > until) throw new Error('the files meant to run at once did not');
      await new Promise((r) => setTimeout(r, 10));
    }
  } else {
    const before = starts().length;
    await new Promise((r) => setTimeout(r, ${ALONE_MS}));
    if (starts().length !== before) throw new Error('another file started beside ${name}');
  }
  log('end');
  if (${fail}) throw new Error('${name} fails as told');
});
`;
}

/** Runs the runner over a fresh fixture in which the files `failing` fail; its output, exit status, log and report. */
async function runFixture(name: string, failing: string[] = [], env: Record<string, string> = {}) {
  const root = join(dir, name);
  for (const file of [...TOGETHER, ...ALONE]) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), fixture(file, failing.includes(file)));
  }
  const logFile = join(root, 'log');
  writeFileSync(logFile, '');
  const reportFile = join(root, 'report.json');
  const r = await runProc(runner('test/*.test.ts', 'test/**/*.test.ts'), { cwd: root, env: { FIXTURE_LOG: logFile, MCAUTH_TEST_FILE_TIMES: reportFile, ...env }, timeoutMs: 120_000 });
  const log = readFileSync(logFile, 'utf8').trim().split('\n');
  const report = existsSync(reportFile) ? (JSON.parse(readFileSync(reportFile, 'utf8')) as PhaseReport) : undefined;
  return { ...r, log, report };
}

/** Asserts the order: the files together all started before any ended; then each file alone, started and ended before the next. */
function assertOrder(log: string[]): void {
  const together = log.slice(0, 2 * TOGETHER.length);
  assert.deepEqual(together.slice(0, TOGETHER.length).map((l) => l.split(' ')[0]), TOGETHER.map(() => 'start'), log.join('\n'));
  assert.deepEqual([...together].sort(), TOGETHER.flatMap((f) => [`end ${f}`, `start ${f}`]).sort(), log.join('\n'));
  assert.deepEqual(log.slice(2 * TOGETHER.length), [...ALONE].sort().flatMap((f) => [`start ${f}`, `end ${f}`]), log.join('\n'));
}

test('the files run at once, then the timing files one at a time; the counts and the slowest files are reported', async () => {
  assert.ok(FILES_AT_ONCE >= TOGETHER.length);
  const r = await runFixture('passing');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assertOrder(r.log);
  assert.match(r.stdout, /^5 files \(2 of them alone, after the rest\): 5 tests, 5 passed, 0 failed, 0 skipped$/m);
  assert.match(r.stdout, /^slowest files:\n( +\d+\.\d s {2}test\/\S+\.test\.ts\n){5}/m);
  assert.ok(r.report, 'the report is written');
  assert.deepEqual(r.report.counts, { tests: 5, passed: 5, failed: 0, skipped: 0, todo: 0, cancelled: 0 });
  assert.deepEqual(r.report.files.map((f) => f.file).sort(), [...TOGETHER, ...ALONE].sort());
  const ms = r.report.files.map((f) => f.ms);
  assert.deepEqual(ms, [...ms].sort((a, b) => b - a), 'the slowest first');
  assert.ok(r.report.files.every((f) => f.passed && f.ms > 0));
});

test('a failing file fails the run, in either group, and the timing files still run after one', async () => {
  const r = await runFixture('failing', ['test/b.test.ts', ALONE[0]!]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assertOrder(r.log);
  assert.match(r.stdout, /: 5 tests, 3 passed, 2 failed, 0 skipped$/m);
  assert.deepEqual(r.report?.files.filter((f) => !f.passed).map((f) => f.file).sort(), ['test/b.test.ts', ALONE[0]!].sort());
  assert.match(r.stdout, / s {2}test\/b\.test\.ts {2}\(failed\)$/m);
});

test('cancelled tests (a hook that threw) are counted and shown, and fail the run', async () => {
  const root = join(dir, 'cancelled');
  mkdirSync(join(root, 'test'), { recursive: true });
  writeFileSync(
    join(root, 'test', 'hook.test.ts'),
    `import { before, describe, test } from 'node:test';
describe('a suite whose hook throws', () => {
  before(() => { throw new Error('the hook fails as told'); });
  test('one', () => {});
  test('two', () => {});
});
`,
  );
  const r = await runProc(runner('test/*.test.ts'), { cwd: root, timeoutMs: 120_000 });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /: 2 tests, 0 passed, 0 failed, 2 cancelled, 0 skipped$/m);
});

/** A fixture whose test files take a database on the phase's cluster and log what they took; `hold`: then wait until stopped. */
function postgresFixture(name: string, hold: boolean): { root: string; logFile: string } {
  const root = join(dir, name);
  mkdirSync(join(root, 'test'), { recursive: true });
  const logFile = join(root, 'log');
  writeFileSync(logFile, '');
  for (const file of hold ? ['one'] : ['one', 'two']) {
    writeFileSync(
      join(root, 'test', `${file}.test.ts`),
      `import { appendFileSync } from 'node:fs';
import { test } from 'node:test';
import { databaseServer } from ${JSON.stringify(join(ROOT, 'test', 'helpers', 'postgres.ts'))};
test('${file}', async () => {
  const server = await databaseServer();
  const db = await server.newDatabase('shared');
  appendFileSync(process.env.FIXTURE_LOG, JSON.stringify({ cluster: process.env.${SHARED_CLUSTER_ENV}, port: server.port, db, pid: process.pid }) + '\\n');
  if (${hold}) await new Promise((r) => setTimeout(r, 60_000));
});
`,
    );
  }
  return { root, logFile };
}

interface Logged {
  cluster?: string;
  port: number;
  db: string;
  pid: number;
}
const loggedIn = (logFile: string): Logged[] =>
  readFileSync(logFile, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Logged);
const socketDirOf = (l: Logged): string => (JSON.parse(l.cluster!) as { socketDir: string }).socketDir;

// Rule: one PostgreSQL cluster a phase (--postgres), shared by its files, removed at the end.
test('--postgres: the files of a phase take their databases on one cluster, which is removed at the end', { skip: postgresMissing }, async () => {
  const { root, logFile } = postgresFixture('postgres', false);
  const r = await runProc(runner('--postgres', 'test/*.test.ts'), { cwd: root, env: { FIXTURE_LOG: logFile }, timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const seen = loggedIn(logFile);
  assert.equal(seen.length, 2, JSON.stringify(seen));
  assert.ok(seen[0]!.cluster, 'the phase names its cluster');
  const { port } = JSON.parse(seen[0]!.cluster) as { port: number };
  assert.deepEqual(
    seen.map((l) => l.port),
    [port, port],
    'both files took their database on the phase cluster',
  );
  assert.notEqual(seen[0]!.db, seen[1]!.db, 'a database each, though both asked for the same name');
  assert.equal(existsSync(socketDirOf(seen[0]!)), false, 'the cluster is removed at the end');
});

// Rule: a run stopped by a signal passes it on to the test runner and still removes the cluster.
test('--postgres, stopped by SIGTERM: the test files stop, the cluster is removed, the status is 143', { skip: postgresMissing }, async () => {
  const { root, logFile } = postgresFixture('stopped', true);
  const [cmd, ...args] = runner('--postgres', 'test/*.test.ts');
  const child = spawn(cmd!, args, { cwd: root, env: childEnv({ FIXTURE_LOG: logFile }), stdio: 'ignore' });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  // The event: the file has its database and holds.
  const until = Date.now() + 60_000;
  while (loggedIn(logFile).length === 0) {
    assert.ok(Date.now() < until, 'the test file never took its database');
    await new Promise((r) => setTimeout(r, 20));
  }
  const [held] = loggedIn(logFile);
  child.kill('SIGTERM');
  const [code] = await exited;
  assert.equal(code, 143);
  assert.equal(existsSync(socketDirOf(held!)), false, 'the cluster is removed');
  // The event: the test file's process is gone (it would hold for a minute were it not stopped).
  const alive = (): boolean => {
    try {
      process.kill(held!.pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const gone = Date.now() + 10_000;
  while (alive()) {
    assert.ok(Date.now() < gone, 'the test file is still running');
    await new Promise((r) => setTimeout(r, 20));
  }
});

// Rule: a timing file renamed or removed would otherwise run among the others unnoticed.
test('every timing file exists', () => {
  for (const file of TIMING_FILES) assert.ok(existsSync(join(ROOT, file)), file);
});

// Rule: every phase that runs test files runs them through the runner, and those that reach
// PostgreSQL on one cluster of the phase.
test('every test phase of package.json runs its files through test/run-files.ts', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const phases = Object.keys(scripts).filter((s) => s.startsWith('test:'));
  assert.deepEqual(phases.sort(), ['test:browser', 'test:deno', 'test:node', 'test:postgres']);
  for (const phase of phases) assert.match(scripts[phase]!, /\bnode --import tsx test\/run-files\.ts /, phase);
  for (const phase of ['test:node', 'test:postgres', 'test:deno']) assert.match(scripts[phase]!, /test\/run-files\.ts --postgres /, phase);
});

test('the long files of the rest start first, in their order; every other file after them as given, none dropped', () => {
  for (const file of LONG_FILES) assert.ok(existsSync(join(ROOT, file)) && !TIMING_FILES.includes(file), file);
  const others = ['test/a.test.ts', 'test/e2e/b.test.ts'];
  assert.deepEqual(startOrder([...others, LONG_FILES[1]!, LONG_FILES[0]!]), [LONG_FILES[0], LONG_FILES[1], ...others]);
  assert.deepEqual(startOrder(others), others);
});

test('--all-at-once: every file of the first group runs at once, more than FILES_AT_ONCE of them', async () => {
  const root = join(dir, 'all-at-once');
  const names = Array.from({ length: FILES_AT_ONCE + 2 }, (_, i) => `test/f${i}.test.ts`);
  mkdirSync(join(root, 'test'), { recursive: true });
  // Each waits until every one has started: with fewer at once, none would end.
  for (const name of names) {
    writeFileSync(
      join(root, name),
      `import { appendFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
test('${name}', async () => {
  appendFileSync(process.env.FIXTURE_LOG, 'start\\n');
  const until = Date.now() + 30_000;
  while (readFileSync(process.env.FIXTURE_LOG, 'utf8').split('\\n').filter((l) => l === 'start').length < ${names.length}) {
    if (Date.now() > until) throw new Error('the files did not all run at once');
    await new Promise((r) => setTimeout(r, 10));
  }
});
`,
    );
  }
  const logFile = join(root, 'log');
  writeFileSync(logFile, '');
  const r = await runProc(runner('--all-at-once', 'test/*.test.ts'), { cwd: root, env: { FIXTURE_LOG: logFile }, timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`^${names.length} files \\(0 of them alone, after the rest\\): ${names.length} tests, ${names.length} passed`, 'm'));
});

// Rule: the Deno phase leaves the files whose subject is the same on either runtime to Node's.
test('on Deno (MCAUTH_TEST_RUNTIME=deno) the Node-only files are left out, the others run', async () => {
  assert.ok(ALONE.every((f) => NODE_ONLY_FILES.includes(f)), 'the fixture\'s timing files are Node-only ones');
  const r = await runFixture('deno', [], { MCAUTH_TEST_RUNTIME: 'deno' });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(r.log.filter((l) => l.startsWith('start ')).map((l) => l.slice(6)).sort(), [...TOGETHER].sort(), r.log.join('\n'));
  assert.match(r.stdout, new RegExp(`^${TOGETHER.length} files \\(0 of them alone`, 'm'));
});

test('every Node-only file exists and has no test that runs only on Deno, which would then run nowhere', () => {
  for (const file of NODE_ONLY_FILES) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    assert.doesNotMatch(text, /RUNTIME === 'deno' \? false/, `${file} has a test that runs only on Deno`);
  }
  for (const kept of ['test/e2e/deno-permissions.test.ts', 'test/e2e/workers.test.ts', 'test/e2e/import.test.ts', 'test/e2e/postgres-failover.test.ts']) assert.ok(!NODE_ONLY_FILES.includes(kept), kept);
});
