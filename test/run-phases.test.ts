// test/run-phases.ts, the runner of `npm test`, on a package of its own whose phases are one-line
// scripts: every phase runs whatever an earlier one did, each is reported, and a failure fails
// the run at the end; a failed typecheck or build stops it.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ROOT, runProc, tempDir } from './helpers/process.ts';

const { dir, cleanup } = tempDir();
after(cleanup);

const PHASES = ['typecheck', 'build', 'test:node', 'test:postgres', 'test:deno', 'test:browser'];

/** Runs the runner on a package whose phases exit with the given statuses (0 for any not given), or run the commands given. */
async function runPhases(exits: Record<string, number>, commands: Record<string, string> = {}) {
  const scripts = Object.fromEntries(PHASES.map((p) => [p, commands[p] ?? `echo ran-${p} && exit ${exits[p] ?? 0}`]));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'phases', version: '1.0.0', private: true, scripts }));
  // tsx by its own address: the package's folder has no node_modules.
  return runProc([process.execPath, '--import', import.meta.resolve('tsx'), join(ROOT, 'test', 'run-phases.ts')], { cwd: dir, timeoutMs: 60_000 });
}

// Rule: a failing phase hides none of the later ones, and fails the run at the end.
test('a failing phase: the later ones still run, each is reported, the run fails', async () => {
  const r = await runPhases({ 'test:node': 3, 'test:deno': 1 });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  for (const p of PHASES) assert.match(r.stdout, new RegExp(`^ran-${p}$`, 'm'), p);
  assert.match(r.stdout, /^ {2}test:node: failed \(exit 3\) after \d+ s$/m);
  assert.match(r.stdout, /^ {2}test:postgres: passed in \d+ s$/m);
  assert.match(r.stdout, /^ {2}test:deno: failed \(exit 1\) after \d+ s$/m);
  assert.match(r.stdout, /^ {2}test:browser: passed in \d+ s$/m);
  assert.match(r.stdout, /^2 phases failed$/m);
});

// Rule: every phase depends on the build, so a failed typecheck or build stops the run.
test('a failed build stops the run: the later phases are reported as not run', async () => {
  const r = await runPhases({ build: 2 });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /^ran-test:/m);
  assert.match(r.stdout, /^ {2}build: failed \(exit 2\) after \d+ s\n {2}test:node: not run\n/m);
  assert.match(r.stdout, /^1 phase failed$/m);
});

// Rule: the summary gives each phase's counts and its five slowest files, from what
// test/run-files.ts writes to MCAUTH_TEST_FILE_TIMES.
test("each phase's counts and slowest files are in the summary", async () => {
  const files = ['a', 'b', 'c', 'd', 'e', 'f'].map((name, i) => ({ file: `test/${name}.test.ts`, ms: 60_000 - i * 10_000, passed: name !== 'b' }));
  const report = { counts: { tests: 9, passed: 8, failed: 1, skipped: 0, todo: 0, cancelled: 0 }, files };
  const write = `node -e "require('fs').writeFileSync(process.env.MCAUTH_TEST_FILE_TIMES, process.argv[1])" '${JSON.stringify(report)}'`;
  const r = await runPhases({}, { 'test:postgres': `${write} && exit 1` });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const summary = r.stdout.slice(r.stdout.indexOf('npm test phases:'));
  assert.match(summary, /^ {2}test:node: passed in \d+ s$/m, 'a phase that wrote nothing has its line alone');
  assert.match(
    summary,
    /^ {2}test:postgres: failed \(exit 1\) after \d+ s: 9 tests, 8 passed, 1 failed, 0 skipped; slowest files:\n {4} {3}60\.0 s {2}test\/a\.test\.ts\n {4} {3}50\.0 s {2}test\/b\.test\.ts {2}\(failed\)\n {4} {3}40\.0 s {2}test\/c\.test\.ts\n {4} {3}30\.0 s {2}test\/d\.test\.ts\n {4} {3}20\.0 s {2}test\/e\.test\.ts\n {2}test:browser: passed/m,
    summary,
  );
});

// Rule: the browser's phase runs beside PostgreSQL's (neither times anything under load), and
// its output follows PostgreSQL's whole, not mixed into it.
test("the browser's phase runs at the same time as PostgreSQL's; its output comes after", async () => {
  // PostgreSQL's phase passes only if the browser's starts while it runs (within 30 s).
  const waitForBrowser = `for i in $(seq 300); do [ -f browser-started ] && echo ran-test:postgres && exit 0; sleep 0.1; done; exit 1`;
  const r = await runPhases({}, { 'test:postgres': waitForBrowser, 'test:browser': 'touch browser-started && echo ran-test:browser' });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.ok(r.stdout.indexOf('ran-test:postgres') < r.stdout.indexOf('ran-test:browser'), r.stdout);
  assert.ok(r.stdout.indexOf('ran-test:browser') < r.stdout.indexOf('ran-test:deno'), r.stdout);
});

test('all phases passing: exit 0', async () => {
  const r = await runPhases({});
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^All phases passed$/m);
});

// Rule: `npm test` is this runner, and each phase it runs is one of the package's scripts.
test('npm test runs the runner, over phases the package defines', async () => {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(scripts.test, 'node --import tsx test/run-phases.ts');
  for (const p of PHASES) assert.ok(scripts[p] !== undefined, p);
});
