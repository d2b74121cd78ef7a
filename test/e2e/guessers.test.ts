// A guesser of one player's password throttles itself, not the player (default flags unless
// named): failed logins are counted per name and client (the address; for a relay its
// clientToken, else the relay), a login refused as busy is counted as no failure, and a throttled
// name still gets a check now and then for a password already refused under throttle (a player
// retrying), so a player behind the same relay as a guesser gets in too. The guessers come back when Retry-After tells them, so these tests
// wait out real throttle windows; they time nothing under a load of their own, and run beside
// other test files. Every client is bound to its own loopback address (all of 127/8 reaches the
// server on Linux).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, withServer, RUNTIME, type Reply, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { seedPlayer, seedPlayers } from '../helpers/players.ts';
import { pool } from '../helpers/pool.ts';
import { assertFail, sleep } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'guessers.db');
const KEY = 'guessers-api-key-0123456789';
const PASSWORD = 'player-Pass-7Hq2';

const bearer = { authorization: `Bearer ${KEY}` };
const attemptOn = (s: RunningServer, login: string, password: string): Promise<Reply> => s.post('/auth', { login, password });
const WRONG = 'Wrong login or password';

before(() => seedPlayers(db, ['Guessed', 'Relayed', 'Clustered', 'Rotated'], PASSWORD));

after(() => tmp.cleanup());

/** The server for one test, on the shared database with its players; stopped after `work`. */
const onDb = <T>(args: string[], work: (s: RunningServer) => Promise<T>): Promise<T> => withServer(['--db', db, ...args], work);

const guess = (port: number, name: string, from: string, password: string, headers: Record<string, string> = {}): Promise<Answer> =>
  call(port, '/auth', { from, headers, body: { login: name, password } });

/** Asserts a 429 for failed logins, with a whole number of seconds to wait in Retry-After; returns them. */
function assertThrottled(r: Answer, what: string): number {
  assert.equal(r.status, 429, `${what}: ${JSON.stringify(r.body)}`);
  assert.match(String(r.headers['retry-after']), /^[1-9]\d*$/, `${what}: Retry-After`);
  return Number(r.headers['retry-after']);
}

describe('a guesser throttles itself, not the player', () => {
  test('12 wrong guesses from one address, then the player\'s login from another: accepted; the guesser\'s next attempt is refused', async () => {
    await onDb([], async (s) => {
      const guesser = '127.0.1.30';
      // A guesser who comes back whenever told to (after each Retry-After), so that its wait has
      // grown to 8 s by the end: longer than the player's login takes on a busy machine, so its
      // next attempt comes within that wait whatever the machine.
      const answers: Answer[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await guess(s.port, 'Guessed', guesser, `wrong-guess-${i}`);
        answers.push(r);
        if (r.status === 429) {
          const wait = assertThrottled(r, `guess ${i + 1}`);
          if (i < 11) await sleep(wait * 1000); // after the last, the player comes at once
        } else assert.deepEqual([r.status, r.body], [401, { success: false, error: WRONG }], `guess ${i + 1}`);
      }
      const statuses = answers.map((r) => r.status);
      assert.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401], 'five free failures');
      assert.ok(statuses.includes(429), `the guesser was never throttled: ${statuses.join(' ')}`);

      const player = await guess(s.port, 'Guessed', '127.0.1.31', PASSWORD);
      assert.equal(player.status, 200, `the player's login from another address, after the guesser's ${statuses.join(' ')}: ${player.status} ${JSON.stringify(player.body)}`);
      assert.equal(typeof player.body.result.accessToken, 'string');

      // The player's success counts for the player's client only: the guesser is still throttled.
      assertThrottled(await guess(s.port, 'Guessed', guesser, 'wrong-guess-next'), 'the guesser after the player got in');
    });
  });

  test('through a relay with --api-key (no clientToken), guessing at 2 a second: the player, retrying every 2 s, gets in within 20 s', async () => {
    await onDb(['--api-key', KEY], async (s) => {
      const relay = '127.0.1.61';
      const guesses: Promise<Answer>[] = [];
      let guessing = true;
      // The player comes once the guesser has made the wait 8 s (its 8th failure): the wait's
      // own openings are then 8 and 24 s away, so the player gets in by the rule for a password
      // retried under throttle, not by being first when one opens. Bounded: 30 s at most.
      let throttledLong!: () => void;
      const arrives = new Promise<void>((r) => (throttledLong = r));
      const seen: string[] = [];
      const guesser = (async () => {
        const began = performance.now();
        for (let i = 0; guessing; i++) {
          // 2 a second, each on its own connection, whether or not the last was answered.
          const r = guess(s.port, 'Relayed', relay, randomBytes(9).toString('base64'), bearer).then((a) => {
            seen.push(`${a.status}${a.headers['retry-after'] ? `/${a.headers['retry-after']}` : ''}`);
            if (a.status === 429 && Number(a.headers['retry-after']) >= 8) throttledLong();
            return a;
          });
          guesses.push(r);
          if (performance.now() - began > 30_000) throttledLong();
          await sleep(Math.max(0, (i + 1) * 500 - (performance.now() - began)));
        }
      })();
      try {
        await arrives;
        const started = performance.now();
        const tries: string[] = [];
        let player: Answer | undefined;
        for (let i = 0; performance.now() - started <= 20_000; i++) {
          await sleep(Math.max(0, i * 2000 - (performance.now() - started)));
          const r = await guess(s.port, 'Relayed', relay, PASSWORD, bearer);
          tries.push(`${r.status} at ${Math.round((performance.now() - started) / 100) / 10} s`);
          if (r.status === 200) {
            player = r;
            break;
          }
          assertThrottled(r, `the player's try ${i + 1}`);
        }
        const ms = performance.now() - started;
        assert.ok(player && ms <= 20_000, `the player's tries: ${tries.join(', ')}; the guesser's answers: ${seen.join(' ')}`);
      } finally {
        guessing = false;
        await guesser;
      }
      const answered = await Promise.all(guesses);
      assert.deepEqual(answered.filter((a) => a.status !== 401 && a.status !== 429).map((a) => [a.status, a.body]), [], 'the guesses were refused');
    });
  });

  test('rotating clientTokens through the relay (10 × 5 wrong guesses, then a new token every 250 ms and a replayed guess every 150 ms): the player whose launcher logged in before gets in at once; one who sends no clientToken, retrying every 3 s, within 2 of the name\'s bounded checks', async () => {
    await onDb([], async (s) => {
      // As a LauncherServer of the 0.0.5 line forwards its launchers' bodies: from this host, a relay by default.
      // The name's checks are made one at a time, and five wait at once below (up to NAME_QUEUE
      // in the flood): on a machine so busy that a check takes seconds, an answer can take longer
      // than call's usual 30 s (R34, both cores kept busy by another process) without any rule broken.
      const relayed = (password: string, clientToken?: string): Promise<Answer> =>
        call(s.port, '/auth', { from: '127.0.0.1', body: { username: 'Rotated', password, ...(clientToken === undefined ? {} : { clientToken }) }, timeoutMs: 120_000 });
      const launcher = randomBytes(16).toString('hex');
      assert.equal((await relayed(PASSWORD, launcher)).status, 200, 'the launcher logged in once before');
      // Five tokens at a time: more logins of one name waiting than NAME_QUEUE (8) would be refused busy.
      await pool(Array.from({ length: 10 }, () => randomBytes(16).toString('hex')), 5, async (token) => {
        for (let i = 0; i < 5; i++) assert.equal((await relayed(randomBytes(9).toString('base64'), token)).status, 401);
      });
      let guessing = true;
      const seen: number[] = [];
      const every = async (ms: number, send: () => Promise<Answer>): Promise<void> => {
        for (const began = performance.now(); guessing; ) {
          void send().then((a) => seen.push(a.status), () => seen.push(0));
          await sleep(ms - ((performance.now() - began) % ms));
        }
      };
      const replayToken = randomBytes(16).toString('hex');
      const attacker = Promise.all([every(250, () => relayed(randomBytes(9).toString('base64'), randomBytes(16).toString('hex'))), every(150, () => relayed('a-replayed-guess', replayToken))]);
      try {
        await sleep(2000);
        const known = await relayed(PASSWORD, launcher);
        assert.equal(known.status, 200, `the known launcher: ${JSON.stringify(known.body)}`);
        const tries: string[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await relayed(PASSWORD);
          tries.push(String(r.status));
          if (r.status === 200) break;
          assertThrottled(r, `try ${i + 1} without a clientToken`);
          await sleep(3000);
        }
        assert.equal(tries.at(-1), '200', `the player without a clientToken: ${tries.join(', ')}`);
      } finally {
        guessing = false;
        await attacker;
      }
      // Refused, every one: checked and wrong, throttled, or (on a machine so busy that a check
      // takes seconds and more than NAME_QUEUE of the name wait) turned away as busy unchecked.
      assert.ok(seen.every((status) => status === 401 || status === 429 || status === 503), `the attacker's answers: ${[...new Set(seen)].join(', ')}`);
    });
  });

  test('--workers 2: from one address, 5 and a few failures are checked before 429, across both workers; the player from another address gets in', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    await onDb(['--workers', '2'], async (s) => {
      const guesser = '127.0.1.32';
      // Each on its own connection: the cluster deals them to both workers in turn.
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await guess(s.port, 'Clustered', guesser, `wrong-guess-${i}`)).status);
      const checked = statuses.filter((x) => x === 401).length;
      // Each is sent once the one before is answered: a hash longer than the 1 s (then 2 s) wait
      // lets one more be checked on a busy machine, never more than that.
      assert.ok(checked >= 5 && checked <= 7, `${checked} of 20 checked: ${statuses.join(' ')}`);
      assert.deepEqual(statuses.filter((x) => x !== 401 && x !== 429), [], statuses.join(' '));
      assert.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
      const pids = new Set(
        s
          .stdout()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l))
          .filter((l) => l.msg === 'request' && l.path === '/auth' && l.client === guesser)
          .map((l) => l.pid),
      );
      assert.equal(pids.size, 2, `the guesses were answered by workers ${[...pids].join(', ')}`);
      const player = await guess(s.port, 'Clustered', '127.0.1.33', PASSWORD);
      assert.equal(player.status, 200, `the player's login from another address after ${statuses.join(' ')}: ${player.status} ${JSON.stringify(player.body)}`);
    });
  });
});

test('a login refused as busy (503) is no failed login', async () => {
  const dir = tempDir();
  const file = pathJoin(dir.dir, 'busy.db');
  let s: RunningServer | undefined;
  try {
    const FILLERS = ['Filler_0', 'Filler_1', 'Filler_2'];
    await Promise.all(['Busy', ...FILLERS].map((name) => seedPlayer(file, name, 'busy-password')));
    // A relay (this host, by default): a full pool refuses it as busy, never as an address's share.
    s = await startServer(['--db', file, '--hash-concurrency', '1', '--hash-queue', '0']);
    const busy = s;
    // 4 wrong guesses at once, just after 3 other players' logins: one hash slot, no queue, so
    // most are refused unhashed (a name is checked once at a time, so it takes other names to
    // hold the slot). Which are refused depends on the machine; every round checks the count.
    // A few rounds, as a miscount may depend on how the requests interleave.
    let shed = 0;
    for (let round = 0; round < 3; round++) {
      // The others first, so that the guesses mostly find the slot taken.
      const others = Promise.all(FILLERS.map((name) => attemptOn(busy, name, 'busy-password')));
      await new Promise((r) => setTimeout(r, 30));
      const burst = await Promise.all(Array.from({ length: 4 }, (_, i) => attemptOn(busy, 'Busy', `burst-${round}-${i}`)));
      await others;
      const statuses = burst.map((r) => r.status).join(' ');
      const counted = burst.filter((r) => r.status === 401).length;
      shed += burst.length - counted;
      for (const r of burst) {
        assert.notEqual(r.status, 429, `round ${round}: ${statuses}: throttled after ${counted} hashed guesses, so 503s were counted as failed logins`);
        if (r.status !== 401) assertFail(r, 503, 'The server is busy; try again in a moment');
      }

      // Only the hashed guesses count: 4 failures in all leave the right password free to log in.
      for (let i = counted; i < 4; i++) {
        const f = await attemptOn(busy, 'Busy', `after-${i}`);
        assert.equal(f.status, 401, `round ${round}: after ${statuses}, failure ${i + 1} of 4 got ${f.text}: a 503 was counted as a failed login`);
        assertFail(f, 401, WRONG);
      }
      const r = await attemptOn(busy, 'Busy', 'busy-password');
      assert.equal(r.status, 200, `round ${round}: after ${statuses} and ${4 - counted} more failures, a 503 was counted as a failed login: ${r.text}`);
    }
    assert.ok(shed > 0, 'some guesses were refused as busy');
  } finally {
    await s?.stop();
    dir.cleanup();
  }
});
