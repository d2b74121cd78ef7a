// Overload: when the hash pool and its queue are full, /auth answers 503 (a "busy" envelope and
// Retry-After, held a second as a flood's refusals are) instead of waiting in the queue; /hasJoined and /profile keep answering quickly
// while /auth is saturated; and the server's memory stays bounded during a flood. The floods
// guess at players that exist, each guess from an address of its own (see flood).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, serverCommand, childEnv, timedPost } from '../helpers/process.ts';
import type { RunningServer, Timed } from '../helpers/process.ts';
import { seed } from '../helpers/players.ts';
import { login, join, sleep } from './util.ts';
import { HELD_REFUSAL_MS } from '../../src/limits.ts';

const BUSY = { success: false, error: 'The server is busy; try again in a moment' };
const WRONG = { success: false, error: 'Wrong login or password' };

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'overload.db');

/** A server with a deliberately tiny pool: 2 hashes at once, 4 waiting, more get 503. */
let small: RunningServer;
const LOOKER = { name: 'Looker', password: 'looker-secret', uuid: '', serverID: 'busy-server-41' };

/**
 * Players the floods guess at: an unknown name costs no hash (it waits as a check takes, holding
 * no place in the pool), so only names that exist can fill it.
 */
const FLOODED = Array.from({ length: 12 }, (_, i) => `Flooded_${i}`);

before(async () => {
  const uuids = await seed(db, [{ name: LOOKER.name, password: LOOKER.password }, ...FLOODED.map((name) => ({ name, password: 'flooded-password' }))]);
  LOOKER.uuid = uuids.get(LOOKER.name)!;
  small = await startServer(['--db', db, '--hash-concurrency', '2', '--hash-queue', '4', '--join-ttl', '600']);
  // The player joins before any flood: the look-ups during the floods must find this join.
  const { accessToken } = await login(small, LOOKER.name, LOOKER.password);
  assert.equal(await join(small, accessToken, LOOKER.uuid, LOOKER.serverID), true);
});

after(async () => {
  await small?.stop();
  tmp.cleanup();
});



let unique = 0;
/** A client address never used before, in 127/8: a direct caller with no earlier failures, so no throttle. */
const freshAddress = (): string => `127.1.${(unique >> 8) & 255}.${(unique++ & 255) || 1}`;

/**
 * How long a login here may go unanswered: only a hang's end. A flood's last one admitted waits for
 * every hash queued before it (the default queue holds 64), and a machine whose cores are busy with
 * other work stretches each hash to a few times its second: past 30 s on such a machine.
 */
const FLOOD_ANSWER_MS = 300_000;

/** `count` concurrent wrong passwords for the flooded players, each from an address of its own. */
function flood(port: number, count: number): Promise<Timed[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => timedPost(port, '/auth', { login: FLOODED[i % FLOODED.length], password: 'guess' }, FLOOD_ANSWER_MS, freshAddress())));
}

const fmt = (ms: number): string => `${ms.toFixed(0)} ms`;

/** Asserts a 503 is the busy envelope with a Retry-After of whole seconds. */
function assertBusy(r: Timed): void {
  assert.equal(r.status, 503);
  assert.match(r.contentType ?? '', /^application\/json\b/i);
  assert.deepEqual(r.body, BUSY);
  assert.match(r.retryAfter ?? '(none)', /^[1-9]\d*$/, 'a 503 carries Retry-After in whole seconds');
}

describe('a full hash queue (--hash-concurrency 2 --hash-queue 4)', () => {
  test('answers 503 "busy" with Retry-After, held a second (so a flood cannot spin on it) and not after the queue, while the admitted logins get 401', async (t) => {
    // One hash time, measured on the idle server: the yardstick for "at once".
    const idle: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await timedPost(small.port, '/auth', { login: FLOODED[i]!, password: 'guess' }, FLOOD_ANSWER_MS, freshAddress());
      assert.equal(r.status, 401);
      idle.push(r.ms);
    }
    const hashMs = Math.min(...idle);

    const answers = await flood(small.port, 60);
    const busy = answers.filter((r) => r.status === 503);
    const admitted = answers.filter((r) => r.status !== 503);
    for (const r of admitted) {
      assert.equal(r.status, 401, `only 401 or 503 expected, got ${r.status} ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body, WRONG);
    }
    // 2 running and 4 waiting fit; a slot freed during the burst may admit a few more.
    assert.ok(admitted.length >= 6, `at least 6 logins should fit in the pool and its queue, got ${admitted.length}`);
    assert.ok(busy.length >= 30, `most of 60 logins should find the queue full, got ${busy.length} 503s`);

    const slowest = Math.max(...admitted.map((r) => r.doneAt));
    const slowestMs = Math.max(...admitted.map((r) => r.ms));
    const busyMs = busy.map((r) => r.ms).sort((a, b) => a - b);
    t.diagnostic(
      `one hash on the idle server: ${fmt(hashMs)}; 60 at once: ${admitted.length} × 401 (slowest ${fmt(slowestMs)}), ` +
        `${busy.length} × 503 (median ${fmt(busyMs[busyMs.length >> 1]!)}, slowest ${fmt(busyMs.at(-1)!)})`,
    );
    for (const r of busy) {
      assertBusy(r);
      assert.ok(r.ms >= HELD_REFUSAL_MS - 50, `a 503 is held a second, as a flood's refusals are: this one came after ${fmt(r.ms)}`);
      assert.ok(r.doneAt < slowest, `a 503 (after ${fmt(r.ms)}) must arrive before the slowest admitted login (${fmt(slowestMs)}): it waits for no one's hash`);
    }

    // The pool drains: once the burst is over, a login is admitted again.
    const after = await timedPost(small.port, '/auth', { login: LOOKER.name, password: LOOKER.password });
    assert.equal(after.status, 200, JSON.stringify(after.body));
  });

  test('/hasJoined and /profile keep answering within 1 s while /auth is flooded for 2 s', async (t) => {
    const FLOOD_MS = 2000;
    const LIMIT_MS = 1000;
    const started = performance.now();
    let floodOver = false;
    let floods = 0;
    let busyCount = 0;
    let admittedCount = 0;

    const flooding = (async () => {
      try {
        while (performance.now() - started < FLOOD_MS && floods < 100) {
          floods++;
          for (const r of await flood(small.port, 60)) {
            if (r.status === 503) {
              assertBusy(r);
              busyCount++;
            } else {
              assert.equal(r.status, 401, JSON.stringify(r.body));
              admittedCount++;
            }
          }
        }
      } finally {
        floodOver = true;
      }
    })();

    const latencies: number[] = [];
    const looking = (async () => {
      // Let the first burst fill the pool before looking.
      await sleep(50);
      while (!floodOver && latencies.length < 2000) {
        const joined = await timedPost(small.port, '/hasJoined', { username: LOOKER.name.toUpperCase(), serverID: LOOKER.serverID });
        assert.equal(joined.status, 200, JSON.stringify(joined.body));
        assert.deepEqual(joined.body, { success: true, result: { userUUID: LOOKER.uuid } });
        const profile = await timedPost(small.port, '/profile', { userUUID: LOOKER.uuid.replaceAll('-', '') });
        assert.equal(profile.status, 200, JSON.stringify(profile.body));
        assert.deepEqual(profile.body, { success: true, result: { username: LOOKER.name } });
        for (const r of [joined, profile]) {
          latencies.push(r.ms);
          assert.ok(r.ms < LIMIT_MS, `a look-up took ${fmt(r.ms)} during the flood (limit ${fmt(LIMIT_MS)})`);
        }
        await sleep(20);
      }
    })();

    await Promise.all([flooding, looking]);
    latencies.sort((a, b) => a - b);
    t.diagnostic(
      `${floods} bursts of 60 logins: ${admittedCount} × 401, ${busyCount} × 503; ${latencies.length} look-ups, ` +
        `median ${fmt(latencies[latencies.length >> 1] ?? 0)}, slowest ${fmt(latencies.at(-1) ?? 0)}`,
    );
    assert.ok(busyCount > 0, 'the flood should have saturated /auth (no 503 seen)');
    assert.ok(latencies.length >= 10, `too few look-ups ran during the flood: ${latencies.length}`);
  });
});

/** Resident memory of a process in bytes, from /proc (Linux). */
function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

describe('memory under a flood (default pool settings)', () => {
  const hasProc = existsSync('/proc/self/status');

  test('the server stays under 400 MiB while 500 logins arrive at once', { skip: hasProc ? false : 'no /proc on this system' }, async (t) => {
    const LIMIT = 400 * 1024 * 1024;
    const [cmd, ...pre] = serverCommand();
    const child = spawn(cmd!, [...pre, 'serve', '--port', '0', '--db', db], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    try {
      const port = await new Promise<number>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error(`server did not start\n${out}\n${err}`)), 60_000);
        child.once('exit', (code) => fail(new Error(`server exited (${code})\n${out}\n${err}`)));
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          const m = /listening on http:\/\/\S+?:(\d+)/.exec(out);
          if (m) {
            clearTimeout(timer);
            ready(Number(m[1]));
          }
        });
      });
      const pid = child.pid!;
      const baseline = rssBytes(pid);
      assert.ok(baseline !== undefined, `cannot read /proc/${pid}/status`);

      let peak = baseline;
      let samples = 0;
      const sampler = setInterval(() => {
        const rss = rssBytes(pid);
        if (rss !== undefined) {
          samples++;
          peak = Math.max(peak, rss);
        }
      }, 20);
      let answers: Timed[];
      try {
        answers = await flood(port, 500);
      } finally {
        clearInterval(sampler);
      }
      peak = Math.max(peak, rssBytes(pid) ?? 0);

      const count = (s: number): number => answers.filter((r) => r.status === s).length;
      const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(0)} MiB`;
      t.diagnostic(`RSS: ${mib(baseline)} at rest, ${mib(peak)} at peak (${samples} samples); answers: ${count(401)} × 401, ${count(429)} × 429, ${count(503)} × 503`);
      // 429 too: the floods before this one may have brought a flooded name to its ceiling of failures.
      assert.equal(count(401) + count(429) + count(503), 500, 'every login gets 401, 429 or 503');
      assert.ok(count(503) > 0, 'a flood of 500 should overflow the default queue of 64');
      assert.ok(peak < LIMIT, `the server used ${mib(peak)} during the flood (limit ${mib(LIMIT)})`);
      for (const r of answers.filter((a) => a.status === 503)) assertBusy(r);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    }
  });
});
