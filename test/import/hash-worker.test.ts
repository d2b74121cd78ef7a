// The hash workers: bcrypt and phpass run in threads, off the event loop; a dead worker fails its
// job instead of hanging; idle workers never keep a process alive.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { hashBcrypt } from '../../src/import/hashes/bcrypt.ts';
import { isHashWorkerThread, startHashWorkers } from '../../src/import/hashes/worker.ts';
import { ROOT, runProc } from '../helpers/process.ts';

const workers = startHashWorkers(2);
after(() => workers.close());

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

test('the main thread is no hash worker', () => {
  assert.equal(isHashWorkerThread(), false);
});

test('a cost-12 bcrypt verify leaves the event loop free: timers keep firing while it runs', async () => {
  const stored = hashBcrypt(utf8('correct horse'), 12, new Uint8Array(16).fill(1));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const started = performance.now();
  const ok = await workers.run('bcrypt', 'correct horse', stored);
  const took = performance.now() - started;
  clearInterval(timer);
  assert.equal(ok, true);
  // On the main thread the verify would block every tick until it ended.
  assert.ok(ticks >= took / 5 / 4, `${ticks} ticks in ${Math.round(took)} ms`);
});

test('jobs beyond the workers wait their turn; each gets its own answer', async () => {
  const stored = hashBcrypt(utf8('pw'), 6, new Uint8Array(16).fill(2));
  const answers = await Promise.all(['pw', 'nope', 'pw', 'pw!', 'pw'].map((pw) => workers.run('bcrypt', pw, stored)));
  assert.deepEqual(answers, [true, false, true, false, true]);
  assert.equal(await workers.run('phpass', 'test12345', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0'), true);
  assert.equal(await workers.run('phpass', 'test12346', '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0'), false);
});

test("a refused hash rejects with the worker's reason, and the worker serves on", async () => {
  await assert.rejects(workers.run('bcrypt', 'pw', '$2x$05$/OK.fbVrR/bpIqNJ5ianF.CE5elHaaO4EbggVDjb8P19RukzXSM3e'), /hash worker: .*CVE-2011-2483/);
  assert.equal(await workers.run('bcrypt', 'U*U', '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW'), true);
});

test('a worker that dies fails its job with an Error, and the next job gets a new worker', async () => {
  const dying = startHashWorkers(1, new URL('./fixtures/dying-worker.ts', import.meta.url));
  try {
    await assert.rejects(dying.run('bcrypt', 'a', 'b'), /hash worker stopped before it answered \(exit code 3\)/);
    // Queued behind a dying one: handed to its replacement, which dies too; never left hanging.
    const both = [dying.run('bcrypt', 'a', 'b'), dying.run('bcrypt', 'a', 'b')];
    for (const job of both) await assert.rejects(job, /exit code 3/);
  } finally {
    await dying.close();
  }
});

test('closing rejects the jobs still waiting', async () => {
  const pool = startHashWorkers(1);
  const stored = hashBcrypt(utf8('pw'), 8, new Uint8Array(16));
  const running = assert.rejects(pool.run('bcrypt', 'pw', stored), /stopped/);
  const waiting = assert.rejects(pool.run('bcrypt', 'pw', stored), /closed/);
  await pool.close();
  await Promise.all([running, waiting]);
  await assert.rejects(pool.run('bcrypt', 'pw', stored), /closed/);
});

test('idle workers do not keep a process alive', async () => {
  const fixture = join(ROOT, 'test', 'import', 'fixtures', 'idle-workers.ts');
  const result = await runProc([process.execPath, '--import', 'tsx', fixture], { cwd: ROOT, timeoutMs: 60_000 });
  assert.equal(result.timedOut, false, 'the process did not end by itself');
  assert.equal(result.stdout, 'true\n', result.stderr);
  assert.equal(result.code, 0);
});

const DENO = join(ROOT, 'node_modules', '.bin', 'deno');
const BUNDLE = join(ROOT, 'dist', 'server.js');
const bundleMissing = existsSync(BUNDLE) ? false : 'dist/server.js is not built (npm run build)';

for (const runtime of ['node', 'deno'] as const) {
  const skip = bundleMissing || (runtime === 'deno' && !existsSync(DENO) && 'no Deno in node_modules/.bin');
  test(`on ${runtime}, a worker started from the bundle serves hash jobs, not the program`, { skip }, async () => {
    const fixture = join(ROOT, 'test', 'import', 'fixtures', 'bundle-worker.ts');
    const command = runtime === 'deno' ? [DENO, 'run', '-A', fixture] : [process.execPath, '--import', 'tsx', fixture];
    const result = await runProc(command, { cwd: ROOT, timeoutMs: 60_000 });
    assert.equal(result.stdout, '{"id":1,"ok":true}\n', result.stderr);
    assert.equal(result.code, 0);
  });
}
