// /join and /hasJoined: UUID forms, false (not an error) for bad tokens and for malformed joins
// (a LauncherServer's join handler dies on an error envelope), 400 for malformed hasJoined
// checks, any non-empty serverID, the latest join replacing the earlier, and --join-ttl.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startServer, tempDir } from '../helpers/process.ts';
import { testDb } from '../helpers/test-db.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { assertFail, assertOk, login, join, sleep, undash } from './util.ts';

/** Asserts the answer of every refused join: status 200, `{success: true, result: false}`. */
const assertJoinRefused = (r: { status: number; body: unknown; text: string }): void => assert.deepEqual([r.status, r.body], [200, { success: true, result: false }], r.text);

const tmp = tempDir();
const db = await testDb(tmp.dir, 'auth.db');

let server: RunningServer;
let short: RunningServer; // --join-ttl 1
let shortJoinAt = 0;
let shortToken = '';
let aliceUuid = '';
let ttlUuid = '';
let bobUuid = '';
let aliceToken = '';
let bobToken = '';

before(async () => {
  [aliceUuid, bobUuid, ttlUuid] = await Promise.all([
    seedPlayer(db, 'Alice', 'alice-pw'),
    seedPlayer(db, 'Bob_2', 'bob-password'),
    seedPlayer(db, 'Ttl_User', 'ttl-password'), // only used on the short-TTL server
  ]);
  [server, short] = await Promise.all([startServer(['--db', db]), startServer(['--db', db, '--join-ttl', '1'])]);
  [aliceToken, bobToken, shortToken] = (
    await Promise.all([login(server, 'Alice', 'alice-pw'), login(server, 'Bob_2', 'bob-password'), login(short, 'Ttl_User', 'ttl-password')])
  ).map((r) => r.accessToken as string);
  // A join on the short-TTL server, checked at the end so the wait overlaps the other tests.
  assert.equal(await join(short, shortToken, ttlUuid, 'ttl-server'), true);
  shortJoinAt = Date.now();
  assert.deepEqual(assertOk(await short.post('/hasJoined', { username: 'Ttl_User', serverID: 'ttl-server' })), { userUUID: ttlUuid });
});

after(async () => {
  await Promise.all([server?.stop(), short?.stop()]);
  tmp.cleanup();
});

const FALSE = { success: true, result: false };

async function hasJoined(s: RunningServer, username: string, serverID: string) {
  return s.post('/hasJoined', { username, serverID });
}

describe('/join', () => {
  test('accepts userUUID dashed or undashed, lower or upper case', async () => {
    const forms = [aliceUuid, aliceUuid.toUpperCase(), undash(aliceUuid), undash(aliceUuid).toUpperCase()];
    for (const [i, form] of forms.entries()) {
      const serverID = `4ed1f46bbe04bc756bcb17c0c7ce3e463${i}`;
      assert.equal(await join(server, aliceToken, form, serverID), true, form);
      assert.deepEqual(assertOk(await hasJoined(server, 'Alice', serverID)), { userUUID: aliceUuid }, form);
    }
  });

  test('an unknown token answers {"success":true,"result":false}', async () => {
    for (const accessToken of [randomUUID(), undash(randomUUID()), 'not-a-token', '', aliceToken + '0']) {
      const r = await server.post('/join', { accessToken, userUUID: aliceUuid, serverID: 'abc' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body, FALSE, accessToken);
    }
  });

  test("another player's token answers false, and records no join", async () => {
    const r1 = await server.post('/join', { accessToken: bobToken, userUUID: aliceUuid, serverID: 'stolen-1' });
    assert.equal(r1.status, 200);
    assert.deepEqual(r1.body, FALSE);
    const r2 = await server.post('/join', { accessToken: aliceToken, userUUID: undash(bobUuid), serverID: 'stolen-2' });
    assert.deepEqual(r2.body, FALSE);
    // A well-formed UUID of nobody.
    const r3 = await server.post('/join', { accessToken: aliceToken, userUUID: randomUUID(), serverID: 'stolen-3' });
    assert.deepEqual(r3.body, FALSE);
    assertFail(await hasJoined(server, 'Alice', 'stolen-1'), 404, 'Player has not joined this server');
    assertFail(await hasJoined(server, 'Bob_2', 'stolen-2'), 404, 'Player has not joined this server');
  });

  test('a malformed userUUID is false, not an error envelope, and records nothing', async () => {
    const bad = [
      'not-a-uuid',
      '',
      undash(aliceUuid).slice(0, 31),
      undash(aliceUuid) + '0',
      'g' + undash(aliceUuid).slice(1),
      `{${aliceUuid}}`,
      // The right digits with the dashes in the wrong places.
      `${undash(aliceUuid).slice(0, 9)}-${undash(aliceUuid).slice(9, 12)}-${undash(aliceUuid).slice(12, 16)}-${undash(aliceUuid).slice(16, 20)}-${undash(aliceUuid).slice(20)}`,
      ` ${aliceUuid}`,
    ];
    for (const userUUID of bad) {
      assertJoinRefused(await server.post('/join', { accessToken: aliceToken, userUUID, serverID: 'malformed-uuid' }));
    }
    assertJoinRefused(await server.post('/join', { accessToken: randomUUID(), userUUID: 'zzz', serverID: 'malformed-uuid' }));
    assertFail(await hasJoined(server, 'Alice', 'malformed-uuid'), 404, 'Player has not joined this server');
  });

  test('missing fields, wrong types, an empty serverID, a lone surrogate and a control character are false', async () => {
    const ok = { accessToken: aliceToken, userUUID: aliceUuid, serverID: 'abc' };
    for (const field of ['accessToken', 'userUUID', 'serverID'] as const) {
      const missing: Record<string, unknown> = { ...ok };
      delete missing[field];
      assertJoinRefused(await server.post('/join', missing));
      for (const wrong of [null, 42, true, ['abc'], { v: 'abc' }]) {
        assertJoinRefused(await server.post('/join', { ...ok, [field]: wrong }));
      }
    }
    assertJoinRefused(await server.post('/join', { ...ok, serverID: '' }));
    assertJoinRefused(await server.post('/join', { ...ok, serverID: 'ab\ud800' }));
    for (const serverID of ['ab\u0000', 'ab\n', '\u007f']) assertJoinRefused(await server.post('/join', { ...ok, serverID }));
    for (const body of [[], 'x', null, 7]) assertJoinRefused(await server.post('/join', body));
  });

  test('a serverID that is not hex is accepted', async () => {
    for (const serverID of ['my server ☃', '-6ba2d1c4e8f3a5b7c9d0e1f2a3b4c5d6e7f8091', 'x']) {
      assert.equal(await join(server, aliceToken, aliceUuid, serverID), true, serverID);
      assert.deepEqual(assertOk(await hasJoined(server, 'alice', serverID)), { userUUID: aliceUuid }, serverID);
    }
  });
});

describe('/hasJoined', () => {
  test('finds the join by name in any letter case and answers userUUID', async () => {
    const serverID = '1f2e3d4c5b6a79880a9b8c7d6e5f4a3b2c1d0e9f';
    assert.equal(await join(server, bobToken, bobUuid, serverID), true);
    for (const name of ['Bob_2', 'bob_2', 'BOB_2', 'bOb_2']) {
      const result = assertOk(await hasJoined(server, name, serverID));
      assert.deepEqual(result, { userUUID: bobUuid }, name);
    }
  });

  test('a wrong serverID, an unknown name, or no join at all is a 404 envelope; an impossible name a 400', async () => {
    const serverID = 'right-server';
    assert.equal(await join(server, bobToken, bobUuid, serverID), true);
    assertFail(await hasJoined(server, 'Bob_2', 'wrong-server'), 404, 'Player has not joined this server');
    assertFail(await hasJoined(server, 'Bob_2', serverID.toUpperCase()), 404, 'Player has not joined this server');
    assertFail(await hasJoined(server, 'Nobody', serverID), 404, 'Player has not joined this server');
    assertFail(await hasJoined(server, 'b!', serverID), 400, 'Field "username" is not a valid player name');
    // Alice's latest join is not to this server.
    assertFail(await hasJoined(server, 'Alice', serverID), 404, 'Player has not joined this server');
  });

  test('missing fields, wrong types, an empty serverID and control characters are 400', async () => {
    assertFail(await server.post('/hasJoined', { serverID: 'abc' }), 400, 'Field "username" is missing');
    assertFail(await server.post('/hasJoined', { username: 'Alice' }), 400, 'Field "serverID" is missing');
    assertFail(await server.post('/hasJoined', { username: 7, serverID: 'abc' }), 400, 'Field "username" must be a string');
    assertFail(await server.post('/hasJoined', { username: 'Alice', serverID: 1 }), 400, 'Field "serverID" must be a string');
    assertFail(await server.post('/hasJoined', { username: 'Alice', serverID: '' }), 400, 'Field "serverID" must not be empty');
    // PostgreSQL refuses a NUL in text: refused before any store sees it, on every store.
    for (const serverID of ['ab\u0000', 'a\u001fb', 'x\u0085']) {
      assertFail(await server.post('/hasJoined', { username: 'Alice', serverID }), 400, 'Field "serverID" must not hold control characters');
    }
  });

  test('a later join replaces the earlier one', async () => {
    assert.equal(await join(server, aliceToken, aliceUuid, 'first-server'), true);
    assert.deepEqual(assertOk(await hasJoined(server, 'Alice', 'first-server')), { userUUID: aliceUuid });
    assert.equal(await join(server, aliceToken, aliceUuid, 'second-server'), true);
    assertFail(await hasJoined(server, 'Alice', 'first-server'), 404, 'Player has not joined this server');
    assert.deepEqual(assertOk(await hasJoined(server, 'Alice', 'second-server')), { userUUID: aliceUuid });
    // A join with a different token of the same player replaces it too.
    const other = (await login(server, 'alice', 'alice-pw')).accessToken as string;
    assert.equal(await join(server, other, aliceUuid, 'third-server'), true);
    assertFail(await hasJoined(server, 'Alice', 'second-server'), 404, 'Player has not joined this server');
    assert.deepEqual(assertOk(await hasJoined(server, 'Alice', 'third-server')), { userUUID: aliceUuid });
    // Joins are per player: Bob's join did not disturb Alice's, and the other way round.
    assert.equal(await join(server, bobToken, bobUuid, 'bob-server'), true);
    assert.deepEqual(assertOk(await hasJoined(server, 'Alice', 'third-server')), { userUUID: aliceUuid });
    assert.deepEqual(assertOk(await hasJoined(server, 'Bob_2', 'bob-server')), { userUUID: bobUuid });
  });
});

describe('join expiry (--join-ttl 1)', () => {
  test('a join older than --join-ttl is not found', async () => {
    await sleep(Math.max(0, shortJoinAt + 2000 - Date.now()));
    assertFail(await hasJoined(short, 'Ttl_User', 'ttl-server'), 404, 'Player has not joined this server');
    // The token itself is still good: a new join is found again.
    assert.equal(await join(short, shortToken, ttlUuid, 'ttl-server'), true);
    assert.deepEqual(assertOk(await hasJoined(short, 'ttl_user', 'ttl-server')), { userUUID: ttlUuid });
  });
});
