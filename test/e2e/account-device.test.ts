// The account page's device cookie (src/account/device-cookie.ts): a successful sign-in sets it,
// and a browser that brings it back signs in while other people's guesses hold the name past its
// ceiling (50 failures from all clients), as a launcher with a known clientToken does on /auth. A
// browser without it, or with a value the service never issued a token to, waits as anyone does.
// Every client is bound to its own loopback address (all of 127/8 reaches the server on Linux).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join as pathJoin } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { seedPlayers } from '../helpers/players.ts';
import { sleep } from './util.ts';

const tmp = tempDir();
const PASSWORD = 'player-Pass-7Hq2';
let s: RunningServer;

before(async () => {
  const db = pathJoin(tmp.dir, 'device.db');
  await seedPlayers(db, ['Cookie'], PASSWORD);
  s = await startServer(['--db', db, '--account-page', '--base-path', '/mc']);
});

after(async () => {
  await s?.stop();
  tmp.cleanup();
});

const signIn = (from: string, password: string, cookie?: string): Promise<Answer> =>
  call(s.port, '/mc/account/login', { from, body: { name: 'Cookie', password }, headers: cookie === undefined ? {} : { cookie } });

test('a sign-in sets the device cookie; past the name\'s ceiling it lets that browser in, and no other', async () => {
  // Someone planted a value in the player's browser before it signed in: the sign-in names a new one.
  const planted = randomUUID();
  const first = await signIn('127.0.1.80', PASSWORD, `mcauth_device=${planted}`);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const set = String(first.headers['set-cookie']);
  const cookie = /^mcauth_device=([0-9a-f-]{36}); Path=\/mc\/account\/login; Max-Age=34560000; HttpOnly; Secure; SameSite=Strict$/.exec(set);
  assert.ok(cookie, `Set-Cookie: ${set}`);
  assert.notEqual(cookie[1], planted, 'the planted value is not kept');

  // A failed sign-in sets none.
  const wrong = await signIn('127.0.1.81', 'a-wrong-guess');
  assert.equal(wrong.status, 401);
  assert.equal(wrong.headers['set-cookie'], undefined);

  // Others' guesses through the relay (this host), each with a new clientToken so that no
  // client's own count holds it, six at a time (each failure is answered after the 1 s floor),
  // coming back when told to: past the ceiling (50) each checked one doubles the name's wait,
  // which after the 53rd failure (the one above included) is 8 s, longer than the sign-ins below
  // take on a busy machine.
  let failures = 1;
  let sent = 0;
  const guess = async (): Promise<void> => {
    while (failures < 53) {
      assert.ok(sent++ < 300, `the name was held after ${failures} failures only`);
      const r = await call(s.port, '/mc/auth', { body: { username: 'Cookie', password: `guess-${sent}`, clientToken: randomUUID() } });
      if (r.status === 401) failures++;
      else {
        assert.equal(r.status, 429, JSON.stringify(r.body));
        await sleep(Number(r.headers['retry-after']) * 1000);
      }
    }
  };
  await Promise.all(Array.from({ length: 6 }, guess));

  // The name now waits for everyone else, the right password too: without the cookie, with a
  // made-up one, or with one planted before a sign-in (fixation), no password is checked.
  const without = await signIn('127.0.1.82', PASSWORD);
  assert.equal(without.status, 429, `without the cookie: ${JSON.stringify(without.body)}`);
  assert.equal(without.headers['set-cookie'], undefined);
  const madeUp = await signIn('127.0.1.83', 'another-wrong-guess', `mcauth_device=${randomUUID()}`);
  assert.equal(madeUp.status, 429, `a made-up cookie: ${JSON.stringify(madeUp.body)}`);
  const fixed = await signIn('127.0.1.83', 'a-third-wrong-guess', `mcauth_device=${planted}`);
  assert.equal(fixed.status, 429, `a cookie planted before the player's sign-in: ${JSON.stringify(fixed.body)}`);

  // The browser that signed in before, from another address and among other cookies: its
  // password is checked, a wrong one counting for it alone, and the right one lets it in.
  const device = `theme=dark; mcauth_device=${cookie[1]}`;
  const mistyped = await signIn('127.0.1.84', 'a-typo-Pass-7Hq2', device);
  assert.equal(mistyped.status, 401, `a wrong password with the cookie: ${JSON.stringify(mistyped.body)}`);
  const back = await signIn('127.0.1.84', PASSWORD, device);
  assert.equal(back.status, 200, `with the cookie: ${JSON.stringify(back.body)}`);
  // A new device each sign-in, which the cookie set names (the one before stays known while its token lives).
  const renewed = /^mcauth_device=([0-9a-f-]{36}); Path=\/mc\/account\/login;/.exec(String(back.headers['set-cookie']));
  assert.ok(renewed && renewed[1] !== cookie[1], String(back.headers['set-cookie']));
});
