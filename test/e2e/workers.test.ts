// --workers N: N processes (node:cluster) on one port and one database. A join recorded through
// one worker is seen by hasJoined on another at once; a password change or a removal (by the
// CLI, a process of its own) counts on every worker at once; limits counted in memory (sign-ups
// from an address) hold for the workers together. Each request here opens a
// connection of its own, which the cluster hands to the workers in turn, and the request log's
// pid says which worker answered. On Deno, which has no node:cluster, --workers 2 is refused.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join as pathJoin } from 'node:path';
import { childEnv, runCli, RUNTIME, serverCommand, startServer, tempDir, timedPost } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { call } from '../helpers/call.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

const ROUNDS = 12;

/** The pids that answered each request to `path` so far, from the request log. */
function answeredBy(s: RunningServer, path: string): number[] {
  return requestLines(s.stdout(), path);
}

/** The pids of the request lines for `path` in a log. */
function requestLines(stdout: string, path: string): number[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'request' && l.path === path)
    .map((l) => l.pid as number);
}

/** Waits until the request log holds `n` lines for `path`: each is written a turn of the event loop after its answer. */
const logged = (s: RunningServer, path: string, n: number): Promise<true> =>
  s.waitFor(`${n} request lines for ${path}`, (stdout) => (requestLines(stdout, path).length >= n ? true : undefined));

describe('--workers 2', { skip: RUNTIME === 'deno' ? 'Deno has no node:cluster (refusal tested below)' : false }, () => {
  const db = pathJoin(tmp.dir, 'workers.db');
  let s: RunningServer;
  let uuid = '';

  test('one listening line for the whole cluster, naming the workers', async () => {
    uuid = await seedPlayer(db, 'Walker', 'walk-password');
    s = await startServer(['--db', db, '--workers', '2']);
    assert.match(s.line, /listening on http:\/\/127\.0\.0\.1:\d+ \(1 user in .*workers\.db, 2 workers\)/, s.line);
    assert.equal(s.stdout().split('\n').filter((l) => l.includes('listening on')).length, 1, s.stdout());
  });

  // Rule: a join through one worker is seen by hasJoined on the other at once.
  test('a join through one worker is seen by hasJoined on the other at once', async () => {
    const auth = await timedPost(s.port, '/auth', { login: 'Walker', password: 'walk-password' });
    assert.equal(auth.status, 200, JSON.stringify(auth.body));
    for (let i = 0; i < ROUNDS; i++) {
      const serverID = `server-${i}`;
      const joined = await timedPost(s.port, '/join', { accessToken: auth.body.result.accessToken, userUUID: uuid, serverID });
      assert.deepEqual([joined.status, joined.body], [200, { success: true, result: true }]);
      const seen = await timedPost(s.port, '/hasJoined', { username: 'Walker', serverID });
      assert.equal(seen.status, 200, `round ${i}: ${JSON.stringify(seen.body)}`);
      assert.equal(seen.body.result.userUUID, uuid);
    }
    await Promise.all([logged(s, '/join', ROUNDS), logged(s, '/hasJoined', ROUNDS)]);
    const joins = answeredBy(s, '/join');
    const checks = answeredBy(s, '/hasJoined');
    assert.equal(new Set([...joins, ...checks]).size, 2, `both workers answered: ${joins} / ${checks}`);
    // Connections go to the workers in turn, so a join and the check after it met different ones.
    assert.ok(
      joins.some((pid, i) => checks[i] !== undefined && checks[i] !== pid),
      `no join was checked on the other worker: joins ${joins}, checks ${checks}`,
    );
  });

  // Rule: a password change counts on every worker at once.
  test('a password change by the CLI counts on every worker at once', async () => {
    const r = await runCli(['user', 'passwd', 'Walker', '--db', db], { stdin: 'new-walk-pw\n' });
    assert.equal(r.code, 0, r.stderr);
    const before = answeredBy(s, '/auth').length;
    for (let i = 0; i < 4; i++) {
      assert.equal((await timedPost(s.port, '/auth', { login: 'Walker', password: 'walk-password' })).status, 401, `old password, try ${i}`);
      assert.equal((await timedPost(s.port, '/auth', { login: 'Walker', password: 'new-walk-pw' })).status, 200, `new password, try ${i}`);
    }
    await logged(s, '/auth', before + 8);
    assert.equal(new Set(answeredBy(s, '/auth')).size, 2, 'both workers answered logins');
  });

  // Rule: a removal counts on every worker at once.
  test('a removal by the CLI counts on every worker at once', async () => {
    const r = await runCli(['user', 'remove', 'Walker', '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    for (let i = 0; i < 6; i++) {
      const profile = await timedPost(s.port, '/profile', { userUUID: uuid });
      assert.equal(profile.status, 404, `try ${i}: ${JSON.stringify(profile.body)}`);
    }
    await logged(s, '/profile', 6);
    assert.equal(new Set(answeredBy(s, '/profile')).size, 2, 'both workers answered');
  });

  // Rule: SIGTERM stops every worker gracefully, and the cluster exits 0.
  test('SIGTERM stops the workers and the primary, exit 0', async () => {
    assert.equal(await s.stop(), 0, s.stdout() + s.stderr());
    assert.equal(s.stdout().split('\n').filter((l) => l.includes('mcauth stopped')).length, 3, s.stdout());
  });

  /** Starts `--workers 8` with `args`, sends one SIGTERM once stdout matches `said`, and checks the stop: exit 0, no stack trace. */
  async function stopDuringStart(args: string[], said: RegExp): Promise<void> {
    const [cmd, ...rest] = serverCommand();
    const child = spawn(cmd!, [...rest, 'serve', '--port', '0', '--workers', '8', '--log-level', 'debug', ...args], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let [out, err, sent] = ['', '', false];
    const exited = once(child, 'close');
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      // One signal: a second one ends it at once, by design.
      if (!sent && said.test(out)) sent = child.kill('SIGTERM');
    });
    const [code, signal] = await exited;
    assert.deepEqual([code, signal], [0, null], `stdout:\n${out}\nstderr:\n${err}`);
    assert.doesNotMatch(err, /^\s{4}at |EPIPE|Unhandled|unsettled/m, err);
  }

  // Rule: SIGTERM during the start, while the primary checks the database or while workers still
  // start, stops it as a stop after the start does: exit 0, no stack trace from a worker.
  test('SIGTERM while the primary waits for its database: exit 0 at once', async () => {
    // A "PostgreSQL server" that takes the connection and never answers: the check waits on it.
    const silent = createServer(() => {});
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    try {
      const { port } = silent.address() as { port: number };
      await stopDuringStart(['--db', `postgres://mcauth@127.0.0.1:${port}/mcauth`], /"msg":"settings in effect"/);
    } finally {
      silent.close();
    }
  });

  test('SIGTERM while the primary checks the database: exit 0', async () => {
    await stopDuringStart(['--db', pathJoin(tmp.dir, 'early-stop.db')], /"msg":"settings in effect"/);
  });

  test('SIGTERM once the first worker listens, the others still starting: exit 0, no stack trace', async () => {
    await stopDuringStart(['--db', pathJoin(tmp.dir, 'early-stop.db')], /"msg":"worker mcauth listening/);
  });

  // Rule: a worker that cannot start fails the whole start (exit 1), instead of a restart loop.
  test('a worker that cannot listen fails the start with status 1', async () => {
    const r = await runCli(['serve', '--db', db, '--workers', '2', '--host', '192.0.2.1', '--port', '0'], { timeoutMs: 60_000 });
    assert.equal(r.timedOut, false, 'it kept running');
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /cannot listen on 192\.0\.2\.1/);
    assert.match(r.stderr, /a worker could not start/);
  });

  // Rule: --metrics with several workers is refused: a scrape would count one worker of several.
  test('--metrics with --workers 2 is refused', async () => {
    const r = await runCli(['serve', '--db', db, '--workers', '2', '--metrics', '--port', '0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--metrics cannot be used with --workers above 1/);
  });

  // Rule: limits counted in memory hold for the workers together: their primary counts them.
  test('--registrations-per-address 5: of 7 sign-ups from one address, dealt to both workers, exactly 5 are let through', async () => {
    const two = await startServer(['--db', pathJoin(tmp.dir, 'sign-ups.db'), '--workers', '2', '--account-page', '--registration', 'open', '--registrations-per-address', '5']);
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await call(two.port, '/account/register', { from: '127.0.1.120', body: { name: `Signer${i}`, password: 'signer-password' } })).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429]);
      // Each connection went to the other worker: both took part.
      assert.equal(new Set(answeredBy(two, '/account/register')).size, 2, two.stdout());
    } finally {
      await two.stop();
    }
  });

  test('--workers needs a database file', async () => {
    const r = await runCli(['serve', '--db', ':memory:', '--workers', '2', '--port', '0']);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--workers above 1 need a database file/);
  });
});

// Rule: on Deno, where node:cluster is missing, --workers above 1 is refused with a clear message.
test('on Deno, --workers 2 is refused with status 2 and a clear message', { skip: RUNTIME === 'deno' ? false : 'runs on Deno only' }, async () => {
  const r = await runCli(['serve', '--db', pathJoin(tmp.dir, 'deno.db'), '--workers', '2', '--port', '0']);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal(r.stderr, 'mcauth: --workers above 1 needs node:cluster, which Deno does not provide; run one process a port instead (see --help)\n');
});
