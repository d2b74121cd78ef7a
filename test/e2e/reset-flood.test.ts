// A flood of guessed reset codes costs no hash (the code is looked up first), so it cannot keep
// players out: random codes from one address against --account-page, 50 at a time (at least
// 400, and on until the players are done), while 20 players, each from an address of its own,
// log in twice, two players at a time (so that on a busy machine the logins' own hashes do not
// queue behind each other): at least 95% of their logins succeed within 2 s. Before the change
// each guess took a hash slot, and the logins queued behind 50 of them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, timedPost, type RunningServer, type Timed } from '../helpers/process.ts';
import { seedPlayers } from '../helpers/players.ts';

const PLAYERS = 20;
const LOGINS_EACH = 2;
const GUESSES = 400;
const GUESSES_IN_FLIGHT = 50;
const GUESSER = '127.0.1.200';
const PASSWORD = 'player-password-1';

const tmp = tempDir();
let server: RunningServer;

before(async () => {
  const db = pathJoin(tmp.dir, 'reset-flood.db');
  await seedPlayers(db, Array.from({ length: PLAYERS }, (_, i) => `Player${i}`), PASSWORD);
  server = await startServer(['--db', db, '--account-page']);
});

after(async () => {
  await server?.stop();
  tmp.cleanup();
});

test('400 guessed reset codes from one address: 95% of the players\' logins succeed within 2 s', async () => {
  const answers: Timed[] = [];
  let flooding!: () => void;
  const underway = new Promise<void>((resolve) => (flooding = resolve));
  let sent = 0;
  let playing = true;
  const guesser = async (): Promise<void> => {
    while (sent < GUESSES || playing) {
      sent++;
      answers.push(await timedPost(server.port, '/account/reset', { code: randomBytes(16).toString('hex'), password: 'guessed-password-1' }, 60_000, GUESSER));
      if (answers.length === GUESSES_IN_FLIGHT) flooding();
    }
  };
  const guesses = Promise.all(Array.from({ length: GUESSES_IN_FLIGHT }, guesser));

  // The players start once the flood is under way (its first 50 guesses answered).
  await underway;
  const logins: Timed[] = [];
  let next = 0;
  const players = async (): Promise<void> => {
    for (let at = next++; at < PLAYERS * LOGINS_EACH; at = next++) {
      const i = at % PLAYERS;
      logins.push(await timedPost(server.port, '/auth', { login: `Player${i}`, password: PASSWORD }, 60_000, `127.0.1.${i + 1}`));
    }
  };
  await Promise.all([players(), players()]);
  playing = false;
  await guesses;

  assert.ok(answers.length >= GUESSES, `${answers.length} guesses`);
  for (const a of answers) assert.deepEqual([a.status, a.body], [400, { success: false, error: 'This reset link is not valid' }]);
  const quick = logins.filter((l) => l.status === 200 && l.ms <= 2000).length;
  const detail = logins.map((l) => `${l.status}/${Math.round(l.ms)}ms`).join(' ');
  assert.ok(quick >= 0.95 * logins.length, `${quick} of ${logins.length} logins succeeded within 2 s: ${detail}`);
});
