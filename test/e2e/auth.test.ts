// /auth: the answer, case-insensitive logins, one message for every bad login, many live
// tokens a player (at most 16), token expiry, and the end of tokens on a password change.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startServer, runCli, tempDir } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { storedRows, storedTables, testDb } from '../helpers/test-db.ts';
import { UUID_DASHED, UUID_ANY, assertFail, assertOk, login, join, sleep, undash } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'auth.db');

// Registered with an upper-case, undashed UUID: answers must still be dashed lower case.
const ALICE_UUID_GIVEN = '0A1B2C3D4E5F40718293A4B5C6D7E8F9';
const ALICE_UUID = '0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9';

let server: RunningServer;
let short: RunningServer; // --token-ttl 1
/** A token from `short`, and when it was issued: checked for expiry by the last test. */
let shortToken = { accessToken: '', userUUID: '', at: 0 };
const uuids: Record<string, string> = {};

before(async () => {
  const [alice, mixed, carol, dave, erin] = await Promise.all([
    seedPlayer(db, 'Alice', 'alice-secret', ALICE_UUID_GIVEN),
    seedPlayer(db, 'MiXeD_Case9', 'mixed pass'),
    seedPlayer(db, 'Carol', 'carol-secret'),
    seedPlayer(db, 'Dave', 'dave-old'),
    seedPlayer(db, 'Erin', 'erin-secret'),
    seedPlayer(db, 'Tess_Ttl', 'tess-secret'), // only used on the short-TTL server
  ]);
  Object.assign(uuids, { alice, mixed, carol, dave, erin });
  [server, short] = await Promise.all([startServer(['--db', db]), startServer(['--db', db, '--token-ttl', '1'])]);
  // Issued now; its expiry is checked at the end, so the wait overlaps the other tests.
  const asked = Date.now();
  const r = await login(short, 'Tess_Ttl', 'tess-secret');
  shortToken = { accessToken: r.accessToken, userUUID: r.userUUID, at: Date.now() };
  const joined = await join(short, r.accessToken, r.userUUID, 'fresh');
  // Live for a second from its issue (after `asked`): a busy machine may take longer than that to join.
  if (Date.now() - asked < 1000) assert.equal(joined, true);
});

after(async () => {
  await Promise.all([server?.stop(), short?.stop()]);
  tmp.cleanup();
});

describe('/auth', () => {
  test('answers username as registered, dashed lower-case userUUID and a UUID access token', async () => {
    const r = await login(server, 'Alice', 'alice-secret');
    assert.deepEqual(Object.keys(r).sort(), ['accessToken', 'userUUID', 'username']);
    assert.equal(r.username, 'Alice');
    assert.equal(r.userUUID, ALICE_UUID);
    assert.equal(uuids.alice, ALICE_UUID);
    assert.match(r.userUUID, UUID_DASHED);
    assert.equal(typeof r.accessToken, 'string');
    assert.match(r.accessToken, UUID_ANY);
    assert.equal(await join(server, r.accessToken, r.userUUID, 'abc123'), true);
  });

  test('login is matched in any letter case; the answer carries the name as registered', async () => {
    for (const name of ['mixed_case9', 'MIXED_CASE9', 'mIxEd_cAsE9', 'MiXeD_Case9']) {
      const r = await login(server, name, 'mixed pass');
      assert.equal(r.username, 'MiXeD_Case9', name);
      assert.equal(r.userUUID, uuids.mixed, name);
    }
  });

  test('wrong password and unknown login give the same 401 and the same message', async () => {
    const wrong = await server.post('/auth', { login: 'Alice', password: 'not-it' });
    const caseOfPassword = await server.post('/auth', { login: 'Alice', password: 'ALICE-SECRET' });
    const unknown = await server.post('/auth', { login: 'Nobody', password: 'alice-secret' });
    const emptyPassword = await server.post('/auth', { login: 'Alice', password: '' });
    for (const r of [wrong, caseOfPassword, unknown, emptyPassword]) {
      assertFail(r, 401, 'Wrong login or password');
    }
    assert.equal(wrong.text, unknown.text);
    // A name that cannot exist is a malformed request, refused before any work.
    assertFail(await server.post('/auth', { login: 'x', password: 'alice-secret' }), 400, 'Field "login" is not a valid player name');
  });

  test('missing or non-string fields are 400 with the field named', async () => {
    assertFail(await server.post('/auth', { password: 'alice-secret' }), 400, 'Field "login" is missing');
    assertFail(await server.post('/auth', { login: 'Alice' }), 400, 'Field "password" is missing');
    assertFail(await server.post('/auth', { login: 5, password: 'alice-secret' }), 400, 'Field "login" must be a string');
    assertFail(await server.post('/auth', { login: 'Alice', password: null }), 400, 'Field "password" must be a string');
    assertFail(await server.post('/auth', { login: ['Alice'], password: 'alice-secret' }), 400, 'Field "login" must be a string');
  });

  test('every login issues a new token and earlier tokens keep working', async () => {
    const a = await login(server, 'Carol', 'carol-secret');
    const b = await login(server, 'carol', 'carol-secret');
    const c = await login(server, 'CAROL', 'carol-secret');
    assert.equal(new Set([a.accessToken, b.accessToken, c.accessToken]).size, 3);
    assert.equal(await join(server, a.accessToken, uuids.carol!, 'server-a'), true);
    assert.equal(await join(server, b.accessToken, uuids.carol!, 'server-b'), true);
    assert.equal(await join(server, c.accessToken, uuids.carol!, 'server-c'), true);
    assert.equal(await join(server, a.accessToken, uuids.carol!, 'server-a'), true);
  });

  test('at most 16 live tokens: the 17th login ends the oldest', async () => {
    const tokens: string[] = [];
    for (let i = 0; i < 17; i++) tokens.push((await login(server, 'Erin', 'erin-secret')).accessToken);
    assert.equal(new Set(tokens).size, 17);
    assert.equal(await join(server, tokens[0]!, uuids.erin!, 'old'), false, 'the oldest token must be ended');
    for (let i = 1; i < 17; i++) {
      assert.equal(await join(server, tokens[i]!, uuids.erin!, `s${i}`), true, `token #${i + 1} must still be live`);
    }
    // One more login ends the (now) oldest, the second one.
    tokens.push((await login(server, 'Erin', 'erin-secret')).accessToken);
    assert.equal(await join(server, tokens[1]!, uuids.erin!, 'old'), false);
    assert.equal(await join(server, tokens[2]!, uuids.erin!, 'x'), true);
    assert.equal(await join(server, tokens[17]!, uuids.erin!, 'x'), true);
  });

  test('`user passwd` ends live tokens; the new password works and the old one fails', async () => {
    const t1 = await login(server, 'Dave', 'dave-old');
    const t2 = await login(server, 'Dave', 'dave-old');
    assert.equal(await join(server, t1.accessToken, uuids.dave!, 'before'), true);
    const r = await runCli(['user', 'passwd', 'Dave', '--db', db], { stdin: 'dave-new\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await join(server, t1.accessToken, uuids.dave!, 'after'), false);
    assert.equal(await join(server, t2.accessToken, uuids.dave!, 'after'), false);
    assertFail(await server.post('/auth', { login: 'Dave', password: 'dave-old' }), 401, 'Wrong login or password');
    const t3 = await login(server, 'dave', 'dave-new');
    assert.equal(t3.username, 'Dave');
    assert.equal(await join(server, t3.accessToken, uuids.dave!, 'after'), true);
  });

  test('tokens are stored only as SHA-256 digests and passwords only as named scrypt hashes', async () => {
    const tokens = [
      (await login(server, 'Alice', 'alice-secret')).accessToken as string,
      (await login(server, 'Alice', 'alice-secret')).accessToken as string,
    ];
    const texts: string[] = [];
    const blobs: Buffer[] = [];
    for (const table of await storedTables(db)) {
      for (const row of await storedRows(db, `SELECT * FROM "${table.replaceAll('"', '""')}"`)) {
        for (const v of Object.values(row)) {
          if (typeof v === 'string') texts.push(v);
          else if (v instanceof Uint8Array) blobs.push(Buffer.from(v));
        }
      }
    }
    const all = texts.join('\n').toLowerCase();
    for (const token of tokens) {
      const lower = token.toLowerCase();
      assert.ok(!all.includes(lower), 'a token is stored in plain text');
      assert.ok(!all.includes(undash(lower)), 'a token is stored in plain text (undashed)');
      const raw = Buffer.from(undash(lower), 'hex');
      assert.ok(!blobs.some((b) => b.includes(raw)), 'a token is stored as raw bytes');
      // Its SHA-256 digest is there, in some encoding.
      const digests = [lower, undash(lower)].map((s) => createHash('sha256').update(s).digest());
      digests.push(createHash('sha256').update(raw).digest());
      const found = digests.some(
        (d) =>
          texts.some((t) => t.toLowerCase().includes(d.toString('hex')) || t.includes(d.toString('base64')) || t.includes(d.toString('base64url'))) ||
          blobs.some((b) => b.equals(d)),
      );
      assert.ok(found, 'no SHA-256 digest of the token is stored');
    }
    for (const pw of ['alice-secret', 'carol-secret', 'dave-new', 'mixed pass']) {
      assert.ok(!texts.some((t) => t.includes(pw)), `password "${pw}" is stored in plain text`);
    }
    assert.ok(texts.some((t) => /scrypt/i.test(t)), 'no stored password hash names scrypt');
  });
});

describe('token expiry (--token-ttl 1)', () => {
  test('a token older than --token-ttl is no longer accepted by /join (result false)', async () => {
    await sleep(Math.max(0, shortToken.at + 2100 - Date.now()));
    const reply = await short.post('/join', { accessToken: shortToken.accessToken, userUUID: shortToken.userUUID, serverID: 'stale' });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { success: true, result: false });
    // A new login gives a fresh, working token.
    const again = await login(short, 'Tess_Ttl', 'tess-secret');
    assert.equal(await join(short, again.accessToken, again.userUUID, 'fresh'), true);
  });
});

test('the running server still answers a valid login', async () => {
  assertOk(await server.post('/auth', { login: 'Alice', password: 'alice-secret' }));
});
