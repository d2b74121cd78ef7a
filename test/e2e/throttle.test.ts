// The password-guessing throttle: 5 free failures a name, then 429 with Retry-After and a
// message saying when to try again; a wait that doubles with every further failure; a success
// resets it; unknown names throttle like existing ones; the count is per name in any letter case,
// kept in the database (across a restart and across two servers on one file); and a throttled
// attempt computes no hash (it answers far faster than a wrong password).
//
// A failure is counted (and its wait starts) when it arrives, before its hash. On a loaded
// machine a hash can take most of the 1 s wait, so the attempt that must meet the wait is not
// sent after the last failure's answer but while that failure is being hashed, once the
// database shows it counted (see lastFailure): an event, not a guess of how long arrival takes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join as pathJoin } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startServer, tempDir } from '../helpers/process.ts';
import type { RunningServer, Reply } from '../helpers/process.ts';
import { seed, seedPlayer } from '../helpers/players.ts';
import { assertFail, assertOk, sleep } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'throttle.db');
const WRONG = 'Wrong login or password';
const throttledMessage = (seconds: number): string => `Too many failed logins for this name; try again in ${seconds} s`;

let server: RunningServer;
/**
 * This host is no relay here (the relay list names an address no test uses): these tests call
 * from 127.0.0.1 as one direct client, whose failures count for the name and its address.
 */
const DIRECT = ['--relay', '192.0.2.1'];

before(async () => {
  await seed(db, [
    { name: 'Guess', password: 'guess-pw' },
    { name: 'Twin', password: 'twin-password' },
    { name: 'Casey', password: 'casey-pw' },
    { name: 'Other', password: 'other-pw' },
    { name: 'Shared', password: 'shared-pw' },
    { name: 'Slow', password: 'slow-password' },
  ]);
  server = await startServer([...DIRECT, '--db', db]);
});

after(async () => {
  await server?.stop();
  tmp.cleanup();
});

const attempt = (s: RunningServer, login: string, password: string): Promise<Reply> => s.post('/auth', { login, password });

/** Fails `n` times with a wrong password, one after the other, each an ordinary 401. */
async function failTimes(s: RunningServer, login: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) assertFail(await attempt(s, login, `wrong-${i}`), 401, WRONG);
}

/** The failed logins the database counts for `login` now (0 for none), read as another process would. */
function failuresOf(login: string, file = db): number {
  const conn = new DatabaseSync(file, { readOnly: true });
  try {
    conn.exec('PRAGMA busy_timeout = 5000');
    const row = conn.prepare('SELECT failures FROM login_failures WHERE name_key = ?').get(login.toLowerCase()) as { failures: number } | undefined;
    return Number(row?.failures ?? 0);
  } finally {
    conn.close();
  }
}

/** Resolves once the server has counted more than `before` failures of `login`. */
async function countedPast(login: string, before: number, file = db): Promise<void> {
  const until = Date.now() + 20_000;
  while (failuresOf(login, file) <= before) {
    if (Date.now() > until) assert.fail(`the server never counted failure ${before + 1} of ${login}`);
    await sleep(5);
  }
}

/**
 * Sends one more failure and, once the server has counted it but while it is still being
 * hashed, runs `probe`; then checks the failure was an ordinary 401. `countedBy` is a time by
 * which the failure was surely counted (the probe's answer saw it), `sentAt` one before it.
 */
async function lastFailure<T>(s: RunningServer, login: string, probe: () => Promise<T>, file = db): Promise<{ result: T; sentAt: number; countedBy: number }> {
  const sentAt = Date.now();
  const before = failuresOf(login, file);
  const failing = attempt(s, login, 'wrong-last');
  try {
    await countedPast(login, before, file);
    const result = await probe();
    const countedBy = Date.now();
    return { result, sentAt, countedBy };
  } finally {
    assertFail(await failing, 401, WRONG);
  }
}

/** Asserts a 429 with an integer Retry-After of at least 1 and the message that names it; returns the seconds. */
function assertThrottled(r: Reply, seconds?: number): number {
  const header = r.headers.get('retry-after');
  assert.match(header ?? '(none)', /^[1-9]\d*$/, `Retry-After of: ${r.text}`);
  const wait = Number(header);
  if (seconds !== undefined) assert.equal(wait, seconds, `Retry-After of: ${r.text}`);
  assertFail(r, 429, throttledMessage(wait));
  return wait;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(run: () => Promise<Reply>): Promise<{ ms: number; r: Reply }> {
  const t0 = performance.now();
  const r = await run();
  return { ms: performance.now() - t0, r };
}

describe('a throttled attempt', () => {
  test('answers fast: no hash is computed', async () => {
    // Warm up the connection and the server.
    assertFail(await attempt(server, 'Ghost_Warm', 'x'), 401, WRONG);
    const wrong: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { ms, r } = await timed(() => attempt(server, 'Slow', `wrong-${i}`));
      assertFail(r, 401, WRONG);
      wrong.push(ms);
    }
    const throttled: number[] = [];
    const fifth = timed(() => attempt(server, 'Slow', 'wrong-4'));
    await countedPast('Slow', 4);
    for (let i = 0; i < 5; i++) {
      const { ms, r } = await timed(() => attempt(server, 'Slow', 'slow-password'));
      assertThrottled(r);
      throttled.push(ms);
    }
    const last = await fifth;
    assertFail(last.r, 401, WRONG);
    wrong.push(last.ms);
    const [w, t] = [median(wrong), median(throttled)];
    assert.ok(t < w / 2, `throttled median ${t.toFixed(1)} ms is not under half the wrong-password median ${w.toFixed(1)} ms`);
  });
});

// Each test uses names of its own; the two groups run at once.
describe('throttling', { concurrency: true }, () => {
  describe('the wait, its growth and its reset', () => {
    test('5 failures, then 429 even for the right password; the wait passes, then doubles; a success resets the count', async () => {
      await failTimes(server, 'Guess', 4);
      // The 6th attempt, even with the right password, is refused for about 1 s; so is a wrong
      // one. Both are sent while the 5th is being hashed, so a slow hash cannot outlast the wait.
      const fifth = await lastFailure(server, 'Guess', async () => [await attempt(server, 'Guess', 'guess-pw'), await attempt(server, 'Guess', 'wrong')]);
      assertThrottled(fifth.result[0]!, 1);
      assertThrottled(fifth.result[1]!, 1);
      await sleep(Math.max(0, fifth.countedBy + 1050 - Date.now()));

      // After the wait one more attempt is allowed (a 401: lastFailure checks it); it fails, and
      // the wait is now 2 s: 6 failures, so the two 429s did not count. (When a request sent later
      // arrives depends on the machine's load, so the wait is read from Retry-After, not probed.)
      const sixth = await lastFailure(server, 'Guess', () => attempt(server, 'Guess', 'guess-pw'));
      assertThrottled(sixth.result, 2);
      await sleep(Math.max(0, sixth.countedBy + 2050 - Date.now()));

      // The right password after the wait: a success, which resets the count.
      assert.equal(assertOk(await attempt(server, 'Guess', 'guess-pw')).username, 'Guess');
      await failTimes(server, 'Guess', 4);
      const again = await lastFailure(server, 'Guess', () => attempt(server, 'Guess', 'guess-pw'));
      assertThrottled(again.result, 1);
    });

    test('the count is per name, in any letter case; other names are not affected', async () => {
      for (const name of ['casey', 'CASEY', 'CaSeY', 'cAsEy']) assertFail(await attempt(server, name, 'wrong'), 401, WRONG);
      const { result } = await lastFailure(server, 'Casey', async () => [
        await attempt(server, 'Casey', 'casey-pw'),
        await attempt(server, 'CASEY', 'casey-pw'),
        // Another player logs in as usual meanwhile.
        await attempt(server, 'Other', 'other-pw'),
      ]);
      assertThrottled(result[0]!, 1);
      assertThrottled(result[1]!, 1);
      assert.equal(assertOk(result[2]!).username, 'Other');
    });
  });

  describe('who shares a count', () => {
    test('unknown and existing names throttle identically: same statuses, messages and Retry-After', async () => {
      const replies = async (name: string, password: string): Promise<[number, string, string | null][]> => {
        const seen: Reply[] = [];
        for (let i = 0; i < 4; i++) seen.push(await attempt(server, name, `${password}-wrong-${i}`));
        const { result } = await lastFailure(server, name, async () => [await attempt(server, name, password), await attempt(server, name, `${password}-wrong`)]);
        return [...seen, ...result].map((r) => [r.status, r.text, r.headers.get('retry-after')]);
      };
      const existing = await replies('Twin', 'twin-password');
      const unknown = await replies('Ghost_Twin', 'twin-password');
      assert.deepEqual(unknown, existing);
      assert.deepEqual(
        existing.map(([status]) => status),
        [401, 401, 401, 401, 429, 429],
      );
      assert.deepEqual(JSON.parse(existing[5]![1]), { success: false, error: throttledMessage(1) });
      assert.equal(existing[5]![2], '1');
    });

    test('counters hold across a restart on the same database', async () => {
      const dir = tempDir();
      const file = pathJoin(dir.dir, 'restart.db');
      let s: RunningServer | undefined;
      try {
        await seedPlayer(file, 'Restart', 'restart-pw');
        s = await startServer([...DIRECT, '--db', file]);
        await failTimes(s, 'Restart', 2);
        await s.stop();
        s = await startServer([...DIRECT, '--db', file]);
        await failTimes(s, 'restart', 2);
        await s.stop();
        // Four failures before two restarts: the fifth here is the one that throttles.
        s = await startServer([...DIRECT, '--db', file]);
        const after5 = s;
        const { result } = await lastFailure(after5, 'RESTART', () => attempt(after5, 'Restart', 'restart-pw'), file);
        assertThrottled(result, 1);
      } finally {
        await s?.stop();
        dir.cleanup();
      }
    });

    test('counters are shared by two servers on one database: 3 failures on A and 2 on B throttle both', async () => {
      const b = await startServer([...DIRECT, '--db', db]);
      try {
        await failTimes(server, 'Shared', 3);
        await failTimes(b, 'shared', 1);
        const { result } = await lastFailure(b, 'SHARED', async () => [await attempt(server, 'Shared', 'shared-pw'), await attempt(b, 'Shared', 'shared-pw')]);
        assertThrottled(result[0]!, 1);
        assertThrottled(result[1]!, 1);
      } finally {
        await b.stop();
      }
    });
  });
});
