// test/run-files.ts, the runner of a phase's test files, on a folder of its own whose test files
// write when they start and end: the most run at once; the files that measure time under load run
// after them, one at a time, even when one of the others failed; the phase's counts and slowest
// files are printed, and written where MCAUTH_TEST_FILE_TIMES says; with --postgres the files
// share one cluster, removed at the end.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import type { PhaseReport } from './file-times.ts';
import { ROOT, runProc, tempDir } from './helpers/process.ts';
import { FILES_AT_ONCE, TIMING_FILES } from './file-groups.ts';
import { postgresMissing, SHARED_CLUSTER_ENV } from './helpers/postgres.ts';

const { dir, cleanup } = tempDir();
after(cleanup);

/** The files that run at once in the fixture; each waits until all of them have started. */
const TOGETHER = ['test/a.test.ts', 'test/b.test.ts', 'test/c/d.test.ts'];
/** Two of the real timing files' paths, so the runner takes them for such. */
const ALONE = [TIMING_FILES[0]!, TIMING_FILES[1]!];

/** A test file that logs its start and end; `waitFor` names the files whose start it waits for first. */
function fixture(name: string, waitFor: string[], fail: boolean): string {
  return `import { appendFileSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
const log = (what) => appendFileSync(process.env.FIXTURE_LOG, what + ' ${name}\\n');
const started = (file) => readFileSync(process.env.FIXTURE_LOG, 'utf8').includes('start ' + file + '\\n');
test('${name}', async () => {
  log('start');
  const until = Date.now() + 30_000;
  while (!${JSON.stringify(waitFor)}.every(started)) {
    if (Date.now() > until) throw new Error('the files meant to run at once did not');
    await new Promise((r) => setTimeout(r, 10));
  }
  log('end');
  if (${fail}) throw new Error('${name} fails as told');
});
`;
}

/** Runs the runner over a fresh fixture in which `failing` fails; its output, exit status, log and report. */
async function runFixture(name: string, failing?: string) {
  const root = join(dir, name);
  for (const file of [...TOGETHER, ...ALONE]) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), fixture(file, TOGETHER.includes(file) ? TOGETHER : [], file === failing));
  }
  const logFile = join(root, 'log');
  writeFileSync(logFile, '');
  const reportFile = join(root, 'report.json');
  // tsx by its own address: the fixture's folder has no node_modules.
  const r = await runProc([process.execPath, '--import', import.meta.resolve('tsx'), join(ROOT, 'test', 'run-files.ts'), 'test/*.test.ts', 'test/**/*.test.ts'], {
    cwd: root,
    env: { FIXTURE_LOG: logFile, MCAUTH_TEST_FILE_TIMES: reportFile },
    timeoutMs: 120_000,
  });
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

test('a failing file fails the run, and the timing files still run after it', async () => {
  const r = await runFixture('failing', 'test/b.test.ts');
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assertOrder(r.log);
  assert.match(r.stdout, /: 5 tests, 4 passed, 1 failed, 0 skipped$/m);
  assert.deepEqual(r.report?.files.filter((f) => !f.passed).map((f) => f.file), ['test/b.test.ts']);
  assert.match(r.stdout, / s {2}test\/b\.test\.ts {2}\(failed\)$/m);
});

// Rule: one PostgreSQL cluster a phase (--postgres), shared by its files, removed at the end.
test('--postgres: the files of a phase share one cluster, which is removed at the end', { skip: postgresMissing }, async () => {
  const root = join(dir, 'postgres');
  mkdirSync(join(root, 'test'), { recursive: true });
  const logFile = join(root, 'log');
  writeFileSync(logFile, '');
  for (const name of ['one', 'two']) {
    writeFileSync(
      join(root, 'test', `${name}.test.ts`),
      `import { appendFileSync } from 'node:fs';
import { test } from 'node:test';
import { databaseServer } from ${JSON.stringify(join(ROOT, 'test', 'helpers', 'postgres.ts'))};
test('${name}', async () => {
  const server = await databaseServer();
  const db = await server.newDatabase('${name}');
  appendFileSync(process.env.FIXTURE_LOG, JSON.stringify({ cluster: process.env.${SHARED_CLUSTER_ENV}, db }) + '\\n');
});
`,
    );
  }
  const r = await runProc([process.execPath, '--import', import.meta.resolve('tsx'), join(ROOT, 'test', 'run-files.ts'), '--postgres', 'test/*.test.ts'], {
    cwd: root,
    env: { FIXTURE_LOG: logFile },
    timeoutMs: 120_000,
  });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const seen = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { cluster?: string; db: string });
  assert.equal(seen.length, 2, JSON.stringify(seen));
  assert.ok(seen[0]!.cluster, 'the phase names its cluster');
  assert.equal(seen[1]!.cluster, seen[0]!.cluster, 'one cluster for both files');
  assert.notEqual(seen[0]!.db, seen[1]!.db, 'a database each');
  const { socketDir } = JSON.parse(seen[0]!.cluster) as { socketDir: string };
  assert.equal(existsSync(socketDir), false, 'the cluster is removed at the end');
});

// Rule: a timing file renamed or removed would otherwise run among the others unnoticed.
test('every timing file exists', () => {
  for (const file of TIMING_FILES) assert.ok(existsSync(join(ROOT, file)), file);
});

// Rule: every phase that runs test files runs them through the runner.
test('every test phase of package.json runs its files through test/run-files.ts', () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const phases = Object.keys(scripts).filter((s) => s.startsWith('test:'));
  assert.deepEqual(phases.sort(), ['test:browser', 'test:deno', 'test:node', 'test:postgres']);
  for (const phase of phases) assert.match(scripts[phase]!, /\bnode --import tsx test\/run-files\.ts /, phase);
});
