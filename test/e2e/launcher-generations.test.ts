// Every LauncherServer generation in use logs in and plays, against the real server on a real
// SQLite file. Each generation posts exactly what its JsonAuthProvider posts (POST, only
// `Content-Type: application/json`) and the checks read exactly what it reads:
// - 0.0.4 (February 2024): /auth {"login", "password"}; /profiles as a bare array;
// - development builds from August 2024: the same, but /profiles as {"usernames": [...]};
// - the 0.0.5 line (2025): /auth gets the launcher's Yggdrasil-style body unchanged and it reads
//   accessToken, clientToken and selectedProfile {id undashed, name}; it re-dashes
//   selectedProfile.id for /join.
// Also: the refusals of the two /auth shapes, and --variant base with the Yggdrasil shape.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join as pathJoin } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startServer, runCli, tempDir, fetchReply } from '../helpers/process.ts';
import type { Reply, RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { UUID_DASHED, assertFail, assertOk, undash } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'generations.db');
const PW = 'correct-horse-1';
const SKIN = 'https://skins.example.org/alice.png';
const HEX32 = /^[0-9a-f]{32}$/;

let extended: RunningServer;
let base: RunningServer;
const uuid: Record<string, string> = {};
let serverIds = 0;

before(async () => {
  const [alice, bob] = await Promise.all([seedPlayer(db, 'Alice', PW), seedPlayer(db, 'Bob', PW)]);
  Object.assign(uuid, { Alice: alice, Bob: bob });
  // A skin makes the optional fields (and their absence under --variant base) meaningful.
  const set = await runCli(['user', 'set', 'Alice', '--skin-url', SKIN, '--slim', '--db', db]);
  assert.equal(set.code, 0, set.stderr);
  [extended, base] = await Promise.all([startServer(['--db', db]), startServer(['--db', db, '--variant', 'base'])]);
});

after(async () => {
  await Promise.all([extended?.stop(), base?.stop()]);
  tmp.cleanup();
});

/** What every generation's HttpHelper.postJson sends: POST, a JSON body, Content-Type: application/json, nothing else. */
function launcherPost(s: RunningServer, path: string, body: unknown): Promise<Reply> {
  return fetchReply(s.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

/** The LauncherServer adds the dashes to selectedProfile.id before it calls /join. */
const dash = (hex: string): string => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

const nextServerId = (): string => `-${(++serverIds).toString(16)}a9f3c0e4b1d2`;

/** The optional fields a LauncherServer reads, checked for their types; the rest of `result` is returned. */
function optional(result: Record<string, unknown>): Record<string, unknown> {
  const { isAlex, skinUrl, capeUrl, ...rest } = result;
  if (isAlex !== undefined) assert.equal(typeof isAlex, 'boolean');
  if (skinUrl !== undefined) assert.equal(typeof skinUrl, 'string');
  if (capeUrl !== undefined) assert.equal(typeof capeUrl, 'string');
  return rest;
}

/** /join, /hasJoined and /profile as every generation calls them (dashed UUIDs), for one player. */
async function playSession(s: RunningServer, accessToken: string, userUUID: string, name: string): Promise<void> {
  const serverID = nextServerId();
  assert.equal(assertOk(await launcherPost(s, '/join', { accessToken, userUUID, serverID })), true);
  const joined = assertOk(await launcherPost(s, '/hasJoined', { username: name, serverID }));
  assert.deepEqual(optional(joined), { userUUID });
  const profile = assertOk(await launcherPost(s, '/profile', { userUUID }));
  assert.deepEqual(optional(profile), { username: name });
}

describe('0.0.4 (February 2024)', () => {
  test('/auth {"login", "password"}; /join, /hasJoined, /profile with a dashed UUID; /profiles as a bare array', async () => {
    const result = assertOk(await launcherPost(extended, '/auth', { login: 'alice', password: PW }));
    const { username, userUUID, accessToken, ...rest } = result;
    assert.equal(username, 'Alice', 'the name as registered');
    assert.equal(userUUID, uuid.Alice);
    assert.match(userUUID, UUID_DASHED);
    assert.equal(typeof accessToken, 'string');
    assert.deepEqual(rest, { isAlex: true, skinUrl: SKIN }, 'the optional fields, and no Yggdrasil ones');
    await playSession(extended, accessToken, userUUID, 'Alice');
    const profiles = assertOk(await launcherPost(extended, '/profiles', ['Alice', 'Bob']));
    assert.deepEqual(profiles, [
      { id: uuid.Alice, name: 'Alice' },
      { id: uuid.Bob, name: 'Bob' },
    ]);
  });
});

describe('development builds from August 2024', () => {
  test('/auth {"login", "password"}; the session calls; /profiles as {"usernames": [...]}', async () => {
    const { username, userUUID, accessToken, ...rest } = assertOk(await launcherPost(extended, '/auth', { login: 'Bob', password: PW }));
    assert.deepEqual({ username, userUUID }, { username: 'Bob', userUUID: uuid.Bob });
    assert.equal(typeof accessToken, 'string');
    assert.deepEqual(rest, {}, 'Bob has no skin or cape');
    await playSession(extended, accessToken, userUUID, 'Bob');
    const profiles = assertOk(await launcherPost(extended, '/profiles', { usernames: ['bob', 'ALICE'] }));
    assert.deepEqual(profiles, [
      { id: uuid.Bob, name: 'Bob' },
      { id: uuid.Alice, name: 'Alice' },
    ]);
  });
});

describe('the 0.0.5 line (2025): the launcher\'s Yggdrasil-style body, forwarded unchanged', () => {
  const launcherBody = (username: string, extra: Record<string, unknown> = {}) => ({
    username,
    password: PW,
    ...extra,
    agent: { name: 'Minecraft', version: 1 },
    requestUser: true,
  });

  test('with a clientToken: accessToken, the clientToken echoed, selectedProfile {id undashed, name as registered}; then a join with the id re-dashed', async () => {
    const clientToken = '6f9c0e7a2b3d4c5e8f1a0b2c3d4e5f60';
    const result = assertOk(await launcherPost(extended, '/auth', launcherBody('aLiCe', { clientToken })));
    // What the LauncherServer reads.
    assert.equal(typeof result.accessToken, 'string');
    assert.equal(result.clientToken, clientToken);
    assert.deepEqual(result.selectedProfile, { id: undash(uuid.Alice!), name: 'Alice' });
    assert.match(result.selectedProfile.id, HEX32);
    // The contract's fields are there too.
    assert.deepEqual(Object.keys(result).sort(), ['accessToken', 'clientToken', 'isAlex', 'selectedProfile', 'skinUrl', 'userUUID', 'username']);
    assert.equal(result.userUUID, uuid.Alice);
    // The launcher joins with selectedProfile.id; the LauncherServer dashes it for /join.
    await playSession(extended, result.accessToken, dash(result.selectedProfile.id), 'Alice');
    const profiles = assertOk(await launcherPost(extended, '/profiles', { usernames: ['Alice'] }));
    assert.deepEqual(profiles, [{ id: uuid.Alice, name: 'Alice' }]);
  });

  test('a wrong password with a clientToken is counted for that clientToken, which the database holds only as a digest', async () => {
    const clientToken = '0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e';
    const r = await launcherPost(extended, '/auth', { ...launcherBody('Bob', { clientToken }), password: 'wrong-password' });
    assert.equal(r.status, 401);
    const conn = new DatabaseSync(db, { readOnly: true });
    try {
      const keys = (conn.prepare('SELECT name_key FROM login_failures').all() as { name_key: string }[]).map((row) => row.name_key);
      assert.deepEqual(keys.filter((k) => k.includes(clientToken)), [], keys.join(', '));
      assert.deepEqual(keys.filter((k) => k.startsWith('bob token ')), [`bob token ${createHash('sha256').update(clientToken).digest('hex')}`]);
    } finally {
      conn.close();
    }
  });

  test('without a clientToken: a new one, 32 lower-case hex digits, different each login', async () => {
    const first = assertOk(await launcherPost(extended, '/auth', launcherBody('Bob')));
    const second = assertOk(await launcherPost(extended, '/auth', launcherBody('Bob')));
    assert.match(first.clientToken, HEX32);
    assert.match(second.clientToken, HEX32);
    assert.notEqual(first.clientToken, second.clientToken);
    assert.deepEqual(first.selectedProfile, { id: undash(uuid.Bob!), name: 'Bob' });
    await playSession(extended, first.accessToken, dash(first.selectedProfile.id), 'Bob');
  });

  test('a client token of 128 characters is echoed; a wrong password is the same 401 as in the contract\'s shape', async () => {
    const long = 'x'.repeat(128);
    assert.equal(assertOk(await launcherPost(extended, '/auth', launcherBody('Bob', { clientToken: long }))).clientToken, long);
    assertFail(await launcherPost(extended, '/auth', { username: 'Bob', password: 'wrong-horse-1' }), 401, 'Wrong login or password');
  });

  test('--variant base: selectedProfile and clientToken, but no isAlex, skinUrl or capeUrl', async () => {
    const result = assertOk(await launcherPost(base, '/auth', launcherBody('Alice', { clientToken: 'abc' })));
    assert.deepEqual(Object.keys(result).sort(), ['accessToken', 'clientToken', 'selectedProfile', 'userUUID', 'username']);
    assert.equal(result.clientToken, 'abc');
    assert.deepEqual(result.selectedProfile, { id: undash(uuid.Alice!), name: 'Alice' });
    const serverID = nextServerId();
    assert.equal(assertOk(await launcherPost(base, '/join', { accessToken: result.accessToken, userUUID: dash(result.selectedProfile.id), serverID })), true);
    assert.deepEqual(assertOk(await launcherPost(base, '/hasJoined', { username: 'Alice', serverID })), { userUUID: uuid.Alice });
    // The contract's shape on the same server: no optional fields either.
    assert.deepEqual(Object.keys(assertOk(await launcherPost(base, '/auth', { login: 'Alice', password: PW }))).sort(), ['accessToken', 'userUUID', 'username']);
  });
});

describe('/auth refusals of the two shapes', () => {
  const cases: [string, unknown, string][] = [
    ['both login and username', { login: 'Alice', username: 'Alice', password: PW }, 'Give "login" or "username", not both'],
    ['both, even when one is not a string', { login: null, username: 'Alice', password: PW }, 'Give "login" or "username", not both'],
    ['neither', { password: PW }, 'Field "login" is missing'],
    ['username that cannot be a player name', { username: 'al ice', password: PW }, 'Field "username" is not a valid player name'],
    ['username too short', { username: 'Al', password: PW, clientToken: 'abc' }, 'Field "username" is not a valid player name'],
    ['username not a string', { username: 42, password: PW }, 'Field "username" must be a string'],
    ['username without a password', { username: 'Alice' }, 'Field "password" is missing'],
    ['clientToken not a string', { username: 'Alice', password: PW, clientToken: 123 }, 'Field "clientToken" must be a string'],
    ['clientToken over 128 characters', { username: 'Alice', password: PW, clientToken: 'x'.repeat(129) }, 'Field "clientToken" is longer than 128 characters'],
    ['clientToken with a lone surrogate', { username: 'Alice', password: PW, clientToken: 'ab\ud800' }, 'Field "clientToken" is not well-formed Unicode'],
  ];
  for (const [what, body, error] of cases) {
    test(`${what}: 400 ${error}`, async () => {
      assertFail(await launcherPost(extended, '/auth', body), 400, error);
    });
  }

  test('a null clientToken counts as none: a new one is made', async () => {
    const result = assertOk(await launcherPost(extended, '/auth', { username: 'Bob', password: PW, clientToken: null }));
    assert.match(result.clientToken, /^[0-9a-f]{32}$/);
  });

  test('the contract\'s shape ignores a clientToken, as it ignores any other key', async () => {
    const result = assertOk(await launcherPost(extended, '/auth', { login: 'Bob', password: PW, clientToken: 123, agent: {} }));
    assert.deepEqual(Object.keys(result).sort(), ['accessToken', 'userUUID', 'username']);
  });
});
