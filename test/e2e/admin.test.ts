// The admin API: off (every /admin path 404) unless --admin-token or MCAUTH_ADMIN_TOKEN is set;
// then every /admin request must carry `Authorization: Bearer TOKEN` (not ?key=, not the API key)
// or gets a 401 envelope. Players are created, listed in pages, looked up by name or UUID,
// removed, given a new password and logged out; hosted skins and capes are uploaded as PNG bodies
// (up to 1 MiB, beyond the 64 KiB JSON limit) and removed; external URLs and the arm model are
// patched. Every refusal says why. Done when an admin creates a player over HTTP, uploads a skin,
// the player logs in and joins, and the game server's /hasJoined gives a skinUrl that serves
// exactly the uploaded PNG.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { startServer, startServerOnFreePort, tempDir, runCli, fetchReply } from '../helpers/process.ts';
import { testDb } from '../helpers/test-db.ts';
import type { RunningServer, Reply } from '../helpers/process.ts';
import { beforeIend, chunk, encodePng, padTo, randomPng, textureName } from '../helpers/png.ts';
import { UUID_DASHED, adminBodyWithoutTimes, assertFail, assertOk, undash, withoutTimes } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'admin.db');
const pagedDb = await testDb(tmp.dir, 'paged.db');
const noUrlDb = await testDb(tmp.dir, 'no-url.db');
const MiB = 1024 * 1024;
const ADMIN = 'Adm1n-token-for-tests-0123456789';
const ENV_ADMIN = 'env-admin-token-zz9-plural-alpha';
const KEY = 'api-key-for-admin-tests-012345';
const NO_TOKEN = 'Missing or wrong admin token';

let admin: RunningServer; // --admin-token ADMIN, --api-key KEY, --public-url = its own address
let off: RunningServer; // no admin token, same database
let envAdmin: RunningServer; // MCAUTH_ADMIN_TOKEN, --base-path /mc, --hd-textures, --public-url https://cdn.example.org/
let noUrl: RunningServer; // --admin-token ADMIN, no --public-url
let pub = '';

before(async () => {
  [admin, off, envAdmin, noUrl] = await Promise.all([
    // Its --public-url is its own address: started again on another port if its port is taken meanwhile.
    startServerOnFreePort((port) => ['--db', db, '--admin-token', ADMIN, '--api-key', KEY, '--public-url', (pub = `http://127.0.0.1:${port}`)]),
    startServer(['--db', db]),
    startServer(['--db', pagedDb, '--base-path', '/mc', '--hd-textures', '--public-url', 'https://cdn.example.org/'], { MCAUTH_ADMIN_TOKEN: ENV_ADMIN }),
    startServer(['--db', noUrlDb, '--admin-token', ADMIN]),
  ]);
  assert.equal(pub, admin.url);
});

after(async () => {
  await Promise.all([admin?.stop(), off?.stop(), envAdmin?.stop(), noUrl?.stop()]);
  tmp.cleanup();
});

interface CallOptions {
  /** The admin token to send as Bearer; null: no Authorization header. ADMIN when left out. */
  token?: string | null;
  headers?: Record<string, string>;
  /** A Buffer is sent as is (no Content-Type unless given); anything else as JSON. */
  body?: unknown;
}

/** An admin request; the players in its answer come without their times (see withoutTimes). */
async function call(s: RunningServer, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? (s === envAdmin ? ENV_ADMIN : ADMIN) : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: Buffer | string | undefined;
  if (Buffer.isBuffer(opts.body)) body = opts.body;
  else if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const reply = await s.request(path, { method, headers: { ...headers, ...opts.headers }, body });
  return { ...reply, body: adminBodyWithoutTimes(reply.body) };
}

/** A POST to the game-facing endpoints of the admin server, with the API key. */
function game(path: string, body: unknown): Promise<Reply> {
  return admin.request(path, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify(body) });
}

async function create(name: string, password = `${name}-password`, s: RunningServer = admin, prefix = ''): Promise<any> {
  return assertOk(await call(s, 'POST', `${prefix}/admin/users`, { body: { name, password } }));
}

async function loginToken(name: string, password = `${name}-password`): Promise<string> {
  const r = assertOk(await game('/auth', { login: name, password }));
  assert.equal(typeof r.accessToken, 'string');
  return r.accessToken;
}

async function joins(token: string, uuid: string, serverID = 'admin-test-server'): Promise<boolean> {
  const r = assertOk(await game('/join', { accessToken: token, userUUID: uuid, serverID }));
  assert.equal(typeof r, 'boolean');
  return r;
}


/** The admin view of a player. */
const view = (name: string, uuid: string, more: { isAlex?: boolean; skinUrl?: string | null; capeUrl?: string | null } = {}) => ({
  name,
  uuid,
  isAlex: more.isAlex ?? false,
  skinUrl: more.skinUrl ?? null,
  capeUrl: more.capeUrl ?? null,
  locked: false,
  lockedAt: null,
  lockReason: null,
});

async function textureStatus(hash: string, s: RunningServer = admin, prefix = ''): Promise<number> {
  return (await fetch(`${s.url}${prefix}/textures/${hash}`)).status;
}

/** The PNG with `extra` chunks just before IEND. */

/** Sends `size` bytes as a chunked body (no Content-Length) in 64 KiB writes; resolves to status and body. */
function putChunked(path: string, size: number): Promise<{ status: number; body: any }> {
  return new Promise((done, fail) => {
    const req = request(
      { host: '127.0.0.1', port: admin.port, method: 'PUT', path, agent: false, headers: { authorization: `Bearer ${ADMIN}`, 'transfer-encoding': 'chunked' } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    const piece = Buffer.alloc(64 * 1024, 1);
    let left = size;
    const write = (): void => {
      while (left > 0) {
        const n = Math.min(left, piece.length);
        left -= n;
        if (!req.write(piece.subarray(0, n))) {
          req.once('drain', write);
          return;
        }
      }
      req.end();
    };
    write();
  });
}

/** Every admin endpoint, with a body where it takes one. */
const ENDPOINTS = (who: string): [string, string, unknown][] => [
  ['POST', '/admin/users', { name: 'Intruder', password: 'intruder-pw' }],
  ['GET', '/admin/users', undefined],
  ['GET', `/admin/users/${who}`, undefined],
  ['DELETE', `/admin/users/${who}`, undefined],
  ['PATCH', `/admin/users/${who}`, { skinUrl: 'https://evil.example/s.png' }],
  ['POST', `/admin/users/${who}/password`, { password: 'taken-over' }],
  ['POST', `/admin/users/${who}/revoke`, undefined],
  ['PUT', `/admin/users/${who}/skin`, encodePng(64, 64, { seed: 999 })],
  ['DELETE', `/admin/users/${who}/skin`, undefined],
  ['PUT', `/admin/users/${who}/cape`, encodePng(64, 32, { seed: 999 })],
  ['DELETE', `/admin/users/${who}/cape`, undefined],
];

describe('off unless --admin-token', () => {
  test('without --admin-token every /admin path is 404, token or not', async () => {
    const target = await create('OffTarget');
    for (const [method, path, body] of [...ENDPOINTS('OffTarget'), ['GET', '/admin/nope', undefined] as [string, string, unknown]]) {
      for (const token of [null, ADMIN]) {
        const r = await call(off, method, path, { token, body });
        assert.equal(r.status, 404, `${method} ${path} with ${token ? 'the token' : 'no token'}: ${r.status} ${r.text}`);
        assertFail(r, 404, 'Unknown endpoint');
      }
    }
    // Nothing happened to the player.
    assert.deepEqual(assertOk(await call(admin, 'GET', '/admin/users/OffTarget')), view('OffTarget', target.uuid));
    await loginToken('OffTarget');
  });
});

describe('the admin token', () => {
  test('a missing or wrong token is a 401 envelope on every admin path, and does nothing', async () => {
    const target = await create('Target');
    const wrong: [string, Record<string, string>, string][] = [
      ['no token', {}, ''],
      ['a wrong token', { authorization: 'Bearer wrong-token-0123456789abcdef' }, ''],
      ['the token in another case', { authorization: `Bearer ${ADMIN.toUpperCase()}` }, ''],
      ['the token without its last character', { authorization: `Bearer ${ADMIN.slice(0, -1)}` }, ''],
      ['the token with one more character', { authorization: `Bearer ${ADMIN}x` }, ''],
      ['the token without a scheme', { authorization: ADMIN }, ''],
      ['Basic with the token', { authorization: `Basic ${Buffer.from(`admin:${ADMIN}`).toString('base64')}` }, ''],
      ['the token as ?key=', {}, `?key=${ADMIN}`],
      ['the token as ?token=', {}, `?token=${ADMIN}`],
      ['the API key as Bearer', { authorization: `Bearer ${KEY}` }, ''],
      ['the API key as ?key=', {}, `?key=${KEY}`],
      ['the token in another header', { 'x-admin-token': ADMIN, cookie: `token=${ADMIN}` }, ''],
    ];
    for (const [label, headers, query] of wrong) {
      for (const [method, path, body] of [...ENDPOINTS('Target'), ['GET', '/admin/nope', undefined] as [string, string, unknown]]) {
        const r = await call(admin, method, path + query, { token: null, headers, body });
        assertFail(r, 401, NO_TOKEN);
        assert.equal(r.headers.get('www-authenticate'), 'Bearer', `${label}: ${method} ${path}`);
      }
    }
    // Nothing was done: Target is as it was, with its password; no Intruder.
    assert.deepEqual(assertOk(await call(admin, 'GET', '/admin/users/Target')), view('Target', target.uuid));
    await loginToken('Target');
    assertFail(await call(admin, 'GET', '/admin/users/Intruder'), 404, 'No player named "Intruder"');
  });

  test('the token works with the scheme in any case; it does not open the game endpoints', async () => {
    assert.equal(assertOk(await call(admin, 'GET', '/admin/users/Target', { token: null, headers: { authorization: `bearer ${ADMIN}` } })).name, 'Target');
    const auth = { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` }, body: JSON.stringify({ login: 'Target', password: 'Target-password' }) };
    assertFail(await admin.request('/auth', auth), 401, 'Missing or wrong API key');
    assertFail(await admin.request(`/auth?key=${ADMIN}`, { ...auth, headers: { 'content-type': 'application/json' } }), 401, 'Missing or wrong API key');
  });

  test('MCAUTH_ADMIN_TOKEN turns it on, under the base path only', async () => {
    const made = assertOk(await call(envAdmin, 'POST', '/mc/admin/users', { body: { name: 'EnvMade', password: 'env-password' } }));
    assert.equal(made.name, 'EnvMade');
    assertFail(await call(envAdmin, 'GET', '/mc/admin/users/EnvMade', { token: ADMIN }), 401, NO_TOKEN);
    assertFail(await call(envAdmin, 'GET', '/admin/users/EnvMade'), 404, 'Unknown endpoint');
    assert.equal(assertOk(await call(envAdmin, 'GET', '/mc/admin/users/envmade')).uuid, made.uuid);
  });

  test('a token under 16 characters is refused at start (exit 2) without being printed', async () => {
    const short = 'Sh0rt-admin-15c';
    assert.equal(short.length, 15);
    const r = await runCli(['serve', '--port', '0', '--db', db, '--admin-token', short], { timeoutMs: 60_000 });
    assert.equal(r.timedOut, false, 'the server started');
    assert.equal(r.code, 2, `exit ${r.code}\n${r.stderr}`);
    assert.match(r.stderr, /--admin-token/);
    assert.ok(!r.stderr.includes(short) && !r.stdout.includes(short), r.stderr);
  });

  test('a wrong method is 405', async () => {
    assertFail(await call(admin, 'PUT', '/admin/users'), 405, 'Method not allowed: use POST, GET, HEAD');
    assertFail(await call(admin, 'GET', '/admin/users/Target/revoke'), 405, 'Method not allowed: use POST');
  });
});

describe('players', () => {
  test('POST /admin/users creates a player who can log in', async () => {
    const made = assertOk(await call(admin, 'POST', '/admin/users', { body: { name: 'Creator', password: 'creator-pw' } }));
    assert.match(made.uuid, UUID_DASHED);
    assert.deepEqual(made, view('Creator', made.uuid));
    const auth = assertOk(await game('/auth', { login: 'creator', password: 'creator-pw' }));
    assert.equal(auth.username, 'Creator');
    assert.equal(auth.userUUID, made.uuid);
    // A given UUID, undashed and upper case, is stored dashed and lower case.
    const given = '7D1B2C3A4E5F40718293A4B5C6D7E8F9';
    assert.deepEqual(assertOk(await call(admin, 'POST', '/admin/users', { body: { name: 'Given', password: 'given-pw', uuid: given } })), view('Given', '7d1b2c3a-4e5f-4071-8293-a4b5c6d7e8f9'));
    // The UUID an offline-mode server gives the name: version 3 of "OfflinePlayer:<name>".
    const md5 = createHash('md5').update('OfflinePlayer:Offliner').digest();
    md5[6] = (md5[6]! & 0x0f) | 0x30;
    md5[8] = (md5[8]! & 0x3f) | 0x80;
    const hex = md5.toString('hex');
    const offline = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    assert.deepEqual(assertOk(await call(admin, 'POST', '/admin/users', { body: { name: 'Offliner', password: 'off-password', offlineUuid: true } })), view('Offliner', offline));
    assert.equal(assertOk(await call(admin, 'POST', '/admin/users', { body: { name: 'NotOffline', password: 'x-password', offlineUuid: false } })).name, 'NotOffline');
  });

  test('POST /admin/users refusals say why, and create nothing', async () => {
    const cases: [string, unknown, number, string][] = [
      ['the name taken', { name: 'Creator', password: 'some-password' }, 409, 'The name "Creator" is taken'],
      ['the name taken in another case', { name: 'cREATOR', password: 'some-password' }, 409, 'The name "cREATOR" is taken'],
      ['the UUID taken', { name: 'UuidThief', password: 'some-password', uuid: '7d1b2c3a-4e5f-4071-8293-a4b5c6d7e8f9' }, 409, 'The UUID 7d1b2c3a-4e5f-4071-8293-a4b5c6d7e8f9 belongs to another player'],
      ['a short name', { name: 'ab', password: 'some-password' }, 400, 'Invalid name "ab": use 3 to 16 letters, digits and _'],
      ['a name with a space', { name: 'bad name', password: 'some-password' }, 400, 'Invalid name "bad name": use 3 to 16 letters, digits and _'],
      ['a 17-character name', { name: 'a'.repeat(17), password: 'some-password' }, 400, `Invalid name "${'a'.repeat(17)}": use 3 to 16 letters, digits and _`],
      ['an invalid UUID', { name: 'BadUuid', password: 'some-password', uuid: 'not-a-uuid' }, 400, 'Invalid UUID "not-a-uuid"'],
      ['uuid and offlineUuid', { name: 'Both', password: 'some-password', uuid: '7d1b2c3a-4e5f-4071-8293-a4b5c6d7e8f0', offlineUuid: true }, 400, 'Give uuid or offlineUuid, not both'],
      ['no password', { name: 'NoPass' }, 400, 'Field "password" is missing'],
      ['an empty password', { name: 'EmptyPass', password: '' }, 400, 'The password must not be empty'],
      ['no name', { password: 'some-password' }, 400, 'Field "name" is missing'],
      ['a numeric uuid', { name: 'NumUuid', password: 'some-password', uuid: 5 }, 400, 'Field "uuid" must be a string'],
      ['a string offlineUuid', { name: 'StrOffline', password: 'some-password', offlineUuid: 'yes' }, 400, 'Field "offlineUuid" must be a boolean'],
      ['an array', ['Creator'], 400, 'Request body must be a JSON object'],
      ['no JSON', '{"name":', 400, 'Request body is not valid JSON'],
    ];
    for (const [label, body, status, message] of cases) {
      const r = await call(admin, 'POST', '/admin/users', { body });
      assert.equal(r.status, status, `${label}: ${r.text}`);
      assertFail(r, status, message);
    }
    // The same body limit as the rest: 64 KiB.
    const big = { name: 'BigBody', password: 'some-password', pad: 'x'.repeat(70 * 1024) };
    assertFail(await call(admin, 'POST', '/admin/users', { body: big }), 413, 'Request body is larger than 65536 bytes');
    for (const name of ['UuidThief', 'BadUuid', 'Both', 'NoPass', 'EmptyPass', 'NumUuid', 'StrOffline', 'BigBody']) {
      assertFail(await call(admin, 'GET', `/admin/users/${name}`), 404, `No player named "${name}"`);
    }
  });

  test('GET /admin/users pages by name: after=NAME (any case), limit=N (1 to 500), next', async () => {
    const names = ['pg_golf', 'Pg_Alpha', 'pg_charlie', 'PG_delta', 'pg_Bravo', 'Pg_echo', 'pg_foxtrot'];
    await Promise.all(names.map((n) => create(n, 'pg-password', envAdmin, '/mc')));
    const ordered = [...names].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
    const list = async (q: string): Promise<any> => assertOk(await call(envAdmin, 'GET', `/mc/admin/users${q}`));
    const all = await list('?limit=500');
    assert.equal(all.next, null);
    const mine = all.users.filter((u: any) => names.includes(u.name));
    assert.deepEqual(mine.map((u: any) => u.name), ordered);
    for (const u of mine) assert.deepEqual(Object.keys(u), ['name', 'uuid', 'isAlex', 'skinUrl', 'capeUrl', 'locked', 'lockedAt', 'lockReason']);
    assert.deepEqual(await list(''), all, 'the default page holds everything here');
    // Pages of 3, following next, give the whole list in order.
    const seen: any[] = [];
    let after: string | null = '';
    let pages = 0;
    while (after !== null) {
      const page: any = await list(`?limit=3${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      assert.ok(page.users.length <= 3);
      if (page.next !== null) assert.equal(page.next, page.users.at(-1).name);
      seen.push(...page.users);
      after = page.next;
      assert.ok(++pages < 20);
    }
    assert.deepEqual(seen, all.users);
    // after in another case than stored.
    const i = all.users.findIndex((u: any) => u.name === 'pg_charlie');
    assert.deepEqual((await list('?after=PG_CHARLIE&limit=2')).users, all.users.slice(i + 1, i + 3));
    assert.deepEqual((await list('?after=pg_charlie&limit=2')).next, all.users[i + 2].name);
    assert.deepEqual(await list('?after=zzzzzz'), { users: [], next: null });
    for (const bad of ['0', '501', '-1', 'abc', '1.5', '', '1e2', '%205']) {
      assertFail(await call(envAdmin, 'GET', `/mc/admin/users?limit=${bad}`), 400, 'limit must be a whole number from 1 to 500');
    }
    assert.ok((await list('?limit=500')).users.length >= 7);
    assertFail(await call(envAdmin, 'GET', '/mc/admin/users?limit=2&afer=pg_charlie'), 400, 'Unknown query parameter "afer": this call takes limit, after');
  });

  test('GET /admin/users/{name-or-uuid}: name in any case, UUID dashed or not; unknown is 404', async () => {
    const made = await create('Lookup');
    const expected = view('Lookup', made.uuid);
    for (const who of ['Lookup', 'lookup', 'LOOKUP', made.uuid, undash(made.uuid), made.uuid.toUpperCase(), undash(made.uuid).toUpperCase()]) {
      assert.deepEqual(assertOk(await call(admin, 'GET', `/admin/users/${who}`)), expected, who);
    }
    assertFail(await call(admin, 'GET', '/admin/users/Nobody'), 404, 'No player named "Nobody"');
    assertFail(await call(admin, 'GET', '/admin/users/00000000-0000-4000-8000-000000000000'), 404, 'No player with UUID 00000000-0000-4000-8000-000000000000');
    assertFail(await call(admin, 'GET', '/admin/users/no%20such'), 404, 'No player named "no such"');
  });

  test('DELETE /admin/users/{who}: gone, /auth fails, and an old token can no longer join, at once', async () => {
    const made = await create('Doomed');
    const skin = encodePng(64, 64, { seed: 200 });
    assertOk(await call(admin, 'PUT', '/admin/users/Doomed/skin', { body: skin }));
    const token = await loginToken('Doomed');
    assert.equal(await joins(token, made.uuid), true);
    assert.deepEqual(assertOk(await call(admin, 'DELETE', '/admin/users/dOOMED')), view('Doomed', made.uuid, { skinUrl: `${pub}/textures/${textureName(skin)}` }));
    assert.equal(await joins(token, made.uuid), false);
    assertFail(await call(admin, 'GET', '/admin/users/Doomed'), 404, 'No player named "Doomed"');
    assertFail(await game('/auth', { login: 'Doomed', password: 'Doomed-password' }), 401, 'Wrong login or password');
    assertFail(await game('/hasJoined', { username: 'Doomed', serverID: 'admin-test-server' }), 404, 'Player has not joined this server');
    assertFail(await call(admin, 'DELETE', '/admin/users/Doomed'), 404, 'No player named "Doomed"');
    assert.equal(await textureStatus(textureName(skin)), 404, 'the skin no one wears is gone');
    // By UUID, undashed.
    const other = await create('Doomed2');
    assert.equal(assertOk(await call(admin, 'DELETE', `/admin/users/${undash(other.uuid)}`)).name, 'Doomed2');
    assertFail(await call(admin, 'GET', `/admin/users/${other.uuid}`), 404, `No player with UUID ${other.uuid}`);
  });

  test('POST /admin/users/{who}/password: the new password works, the old one and its tokens do not', async () => {
    const made = await create('Changer', 'old-password');
    const [t1, t2] = [await loginToken('Changer', 'old-password'), await loginToken('Changer', 'old-password')];
    assert.equal(await joins(t1, made.uuid), true);
    assert.deepEqual(assertOk(await call(admin, 'POST', '/admin/users/changer/password', { body: { password: 'new-password' } })), view('Changer', made.uuid));
    assert.equal(await joins(t1, made.uuid), false);
    assert.equal(await joins(t2, made.uuid), false);
    assertFail(await game('/auth', { login: 'Changer', password: 'old-password' }), 401, 'Wrong login or password');
    assert.equal(await joins(await loginToken('Changer', 'new-password'), made.uuid), true);
    assertFail(await call(admin, 'POST', '/admin/users/Changer/password', { body: {} }), 400, 'Field "password" is missing');
    assertFail(await call(admin, 'POST', '/admin/users/Changer/password', { body: { password: '' } }), 400, 'The password must not be empty');
    assertFail(await call(admin, 'POST', '/admin/users/Changer/password', { body: { password: 'x'.repeat(257) } }), 400, 'The password must be at most 256 bytes');
    assertFail(await call(admin, 'POST', '/admin/users/Changer/password'), 400, 'Request body is empty');
    assertFail(await call(admin, 'POST', '/admin/users/Nobody/password', { body: { password: 'some-password' } }), 404, 'No player named "Nobody"');
    await loginToken('Changer', 'new-password');
  });

  test('POST /admin/users/{who}/revoke (no body): every live token of the player joins false at once; a new login works', async () => {
    const made = await create('Revoked');
    const bystander = await create('Bystander');
    const tokens = [await loginToken('Revoked'), await loginToken('Revoked'), await loginToken('Revoked')];
    const other = await loginToken('Bystander');
    for (const t of tokens) assert.equal(await joins(t, made.uuid), true);
    const r = await admin.request('/admin/users/Revoked/revoke', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    assert.deepEqual(withoutTimes(assertOk(r)), view('Revoked', made.uuid));
    for (const t of tokens) assert.equal(await joins(t, made.uuid), false);
    assert.equal(await joins(other, bystander.uuid), true, "another player's token is untouched");
    const fresh = await loginToken('Revoked');
    assert.equal(await joins(fresh, made.uuid), true);
    // By UUID, with a body that is ignored.
    assert.equal(assertOk(await call(admin, 'POST', `/admin/users/${made.uuid}/revoke`, { body: {} })).name, 'Revoked');
    assert.equal(await joins(fresh, made.uuid), false);
    assertFail(await call(admin, 'POST', '/admin/users/Nobody/revoke'), 404, 'No player named "Nobody"');
  });
});

describe('hosted skins and capes', () => {
  const skins = [encodePng(64, 64, { seed: 300 }), encodePng(64, 64, { seed: 301 }), encodePng(64, 32, { seed: 302 }), encodePng(64, 64, { seed: 303 })];
  const cape = encodePng(64, 32, { seed: 310 });
  let skinner: any;

  test('PUT .../skin and .../cape store the PNG; ?model is optional and the model stays when left out', async () => {
    skinner = await create('Skinner');
    const url = (png: Buffer): string => `${pub}/textures/${textureName(png)}`;
    // No Content-Type, no model: classic for a first skin.
    assert.deepEqual(assertOk(await call(admin, 'PUT', '/admin/users/Skinner/skin', { body: skins[0] })), view('Skinner', skinner.uuid, { skinUrl: url(skins[0]!) }));
    const served = await fetch(url(skins[0]!));
    assert.equal(served.status, 200);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(skins[0]!));
    const put = (path: string, png: Buffer, type?: string): Promise<Reply> =>
      call(admin, 'PUT', path, { body: png, headers: type === undefined ? {} : { 'content-type': type } });
    assert.deepEqual(assertOk(await put('/admin/users/skinner/skin?model=slim', skins[1]!, 'image/png')), view('Skinner', skinner.uuid, { isAlex: true, skinUrl: url(skins[1]!) }));
    assert.equal(await textureStatus(textureName(skins[0]!)), 404, 'the replaced skin is gone');
    assert.deepEqual(assertOk(await put(`/admin/users/${skinner.uuid}/skin`, skins[2]!, 'IMAGE/PNG')), view('Skinner', skinner.uuid, { isAlex: true, skinUrl: url(skins[2]!) }));
    assert.deepEqual(assertOk(await put('/admin/users/Skinner/skin?model=classic', skins[3]!)), view('Skinner', skinner.uuid, { skinUrl: url(skins[3]!) }));
    assert.deepEqual(assertOk(await put('/admin/users/Skinner/skin', skins[3]!)), view('Skinner', skinner.uuid, { skinUrl: url(skins[3]!) }), 'classic stays');
    assert.deepEqual(assertOk(await put('/admin/users/Skinner/cape', cape, 'image/png')), view('Skinner', skinner.uuid, { skinUrl: url(skins[3]!), capeUrl: url(cape) }));
    const auth = assertOk(await game('/auth', { login: 'Skinner', password: 'Skinner-password' }));
    assert.equal(auth.skinUrl, url(skins[3]!));
    assert.equal(auth.capeUrl, url(cape));
    assert.equal(auth.isAlex, false);
    assertFail(await put('/admin/users/Nobody/skin', skins[0]!), 404, 'No player named "Nobody"');
  });

  test('upload refusals say why and change nothing', async () => {
    const before = assertOk(await call(admin, 'GET', '/admin/users/Skinner'));
    const good = encodePng(64, 64, { seed: 320 });
    const badCrc = Buffer.from(good);
    badCrc[badCrc.length - 13]! ^= 0xff; // the last byte of IDAT's CRC
    const idatFirst = Buffer.concat([good.subarray(0, 8), good.subarray(33, -12), good.subarray(8, 33), good.subarray(-12)]);
    const noIdat = Buffer.concat([good.subarray(0, 33), chunk('IEND')]);
    const cases: [string, string, Buffer, Record<string, string>, number, string][] = [
      ['text/plain', '/skin', good, { 'content-type': 'text/plain' }, 415, 'Content-Type must be image/png'],
      ['application/octet-stream', '/skin', good, { 'content-type': 'application/octet-stream' }, 415, 'Content-Type must be image/png'],
      ['application/json on a cape', '/cape', cape, { 'content-type': 'application/json' }, 415, 'Content-Type must be image/png'],
      ['image/jpeg', '/skin', good, { 'content-type': 'image/jpeg' }, 415, 'Content-Type must be image/png'],
      ['?model=fat', '/skin?model=fat', good, {}, 400, 'model must be slim or classic'],
      ['?model=SLIM', '/skin?model=SLIM', good, {}, 400, 'model must be slim or classic'],
      ['?model=', '/skin?model=', good, {}, 400, 'model must be slim or classic'],
      ['a model on a cape', '/cape?model=slim', cape, {}, 400, 'a cape has no model'],
      // A typo is refused, not ignored into a classic skin.
      ['?modle=slim', '/skin?modle=slim', good, {}, 400, 'Unknown query parameter "modle": this call takes model'],
      ['a 128×128 cape', '/cape', encodePng(128, 128), {}, 400, 'cape must be 64×32, got 128×128'],
      ['a 64×64 cape', '/cape', encodePng(64, 64), {}, 400, 'cape must be 64×32, got 64×64'],
      ['a 100×100 skin', '/skin', encodePng(100, 100), {}, 400, 'skin must be 64×64 or 64×32, got 100×100'],
      ['a 128×128 skin without --hd-textures', '/skin', encodePng(128, 128), {}, 400, 'skin must be 64×64 or 64×32, got 128×128'],
      ['a bad CRC', '/skin', badCrc, {}, 400, 'skin: the PNG chunk IDAT has a bad CRC'],
      ['a truncated file', '/skin', good.subarray(0, 60), {}, 400, 'skin: the PNG file is truncated'],
      ['a truncated cape', '/cape', cape.subarray(0, -1), {}, 400, 'cape: the PNG file is truncated'],
      ['a JPEG', '/skin', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xd9]), {}, 400, 'skin: not a PNG file'],
      ['an empty body', '/skin', Buffer.alloc(0), {}, 400, 'skin: not a PNG file'],
      ['JSON', '/skin', Buffer.from('{"png":"x"}'), {}, 400, 'skin: not a PNG file'],
      ['IDAT before IHDR', '/skin', idatFirst, {}, 400, 'skin: the PNG file does not start with IHDR'],
      ['data after IEND', '/skin', Buffer.concat([good, Buffer.from('tail')]), {}, 400, 'skin: the PNG file has data after IEND'],
      ['no image data', '/skin', noIdat, {}, 400, 'skin: the PNG file has no image data'],
      ['a second IHDR', '/skin', beforeIend(good, [good.subarray(8, 33)]), {}, 400, 'skin: the PNG file has a second IHDR'],
      ['an unknown critical chunk', '/skin', beforeIend(good, [chunk('ABCD', Buffer.from('x'))]), {}, 400, 'skin: the PNG file has an unknown critical chunk ABCD'],
    ];
    for (const [label, path, body, headers, status, message] of cases) {
      const r = await call(admin, 'PUT', `/admin/users/Skinner${path}`, { body, headers });
      assert.equal(r.status, status, `${label}: ${r.text}`);
      assertFail(r, status, message);
    }
    assert.deepEqual(assertOk(await call(admin, 'GET', '/admin/users/Skinner')), before, 'a refused upload changed the player');
    for (const png of [good, encodePng(128, 128), encodePng(100, 100), encodePng(64, 64)]) assert.equal(await textureStatus(textureName(png)), 404, 'a refused image is stored');
  });

  test('uploads: over 1 MiB is 413; over the 64 KiB JSON limit and up to 1 MiB is accepted', async () => {
    const before = assertOk(await call(admin, 'GET', '/admin/users/Skinner'));
    const image = encodePng(64, 64, { seed: 330 });
    for (const path of ['/admin/users/Skinner/skin', '/admin/users/Skinner/cape']) {
      const png = path.endsWith('cape') ? encodePng(64, 32, { seed: 331 }) : image;
      assertFail(await call(admin, 'PUT', path, { body: padTo(png, MiB + 1) }), 413, `Request body is larger than ${MiB} bytes`);
    }
    // Without a Content-Length, sent as it comes.
    const chunked = await putChunked('/admin/users/Skinner/skin', MiB + 1);
    assert.equal(chunked.status, 413);
    assert.deepEqual(chunked.body, { success: false, error: `Request body is larger than ${MiB} bytes` });
    assert.deepEqual(assertOk(await call(admin, 'GET', '/admin/users/Skinner')), before);
    // 1 MiB exactly, and 300 KiB: stored without the padding.
    for (const size of [MiB, 300 * 1024]) {
      const png = encodePng(64, 64, { seed: size });
      assert.equal(assertOk(await call(admin, 'PUT', '/admin/users/Skinner/skin', { body: padTo(png, size) })).skinUrl, `${pub}/textures/${textureName(png)}`);
      assert.ok(Buffer.from(await (await fetch(`${pub}/textures/${textureName(png)}`)).arrayBuffer()).equals(png));
    }
    // Real pixels that do not compress, on the --hd-textures server: a 256×256 skin (about 257 KiB) is
    // stored and served byte for byte; a 512×512 one is over 1 MiB as received.
    const hdUser = await create('HdSkinner', 'hd-password', envAdmin, '/mc');
    const big = randomPng(256, 256);
    assert.ok(big.length > 64 * 1024 && big.length < MiB, `size ${big.length}`);
    const stored = assertOk(await call(envAdmin, 'PUT', '/mc/admin/users/HdSkinner/skin?model=slim', { body: big, headers: { 'content-type': 'image/png' } }));
    assert.deepEqual(stored, view('HdSkinner', hdUser.uuid, { isAlex: true, skinUrl: `https://cdn.example.org/mc/textures/${textureName(big)}` }));
    const served = await fetch(`${envAdmin.url}/mc/textures/${textureName(big)}`);
    assert.ok(Buffer.from(await served.arrayBuffer()).equals(big));
    const huge = randomPng(512, 512);
    assert.ok(huge.length > MiB, `size ${huge.length}`);
    assertFail(await call(envAdmin, 'PUT', '/mc/admin/users/HdSkinner/skin', { body: huge }), 413, `Request body is larger than ${MiB} bytes`);
    assert.equal(await textureStatus(textureName(huge), envAdmin, '/mc'), 404);
  });

  test('DELETE .../skin and .../cape clear them; a texture no one wears is gone', async () => {
    const now = assertOk(await call(admin, 'GET', '/admin/users/Skinner'));
    assert.ok(now.skinUrl !== null && now.capeUrl !== null);
    const [skinHash, capeHash] = [now.skinUrl.slice(-64), now.capeUrl.slice(-64)];
    assert.deepEqual(assertOk(await call(admin, 'DELETE', '/admin/users/Skinner/skin')), { ...now, skinUrl: null });
    assert.equal(await textureStatus(skinHash), 404);
    assert.equal(await textureStatus(capeHash), 200);
    assert.deepEqual(assertOk(await call(admin, 'DELETE', `/admin/users/${skinner.uuid}/cape`)), { ...now, skinUrl: null, capeUrl: null });
    assert.equal(await textureStatus(capeHash), 404);
    assert.deepEqual(assertOk(await call(admin, 'DELETE', '/admin/users/Skinner/cape')), { ...now, skinUrl: null, capeUrl: null }, 'again: nothing to clear');
    const auth = assertOk(await game('/auth', { login: 'Skinner', password: 'Skinner-password' }));
    assert.equal(auth.skinUrl, undefined);
    assert.equal(auth.capeUrl, undefined);
    assertFail(await call(admin, 'DELETE', '/admin/users/Nobody/skin'), 404, 'No player named "Nobody"');
    assertFail(await call(admin, 'DELETE', '/admin/users/Nobody/cape'), 404, 'No player named "Nobody"');
  });

  test('PATCH /admin/users/{who}: external skinUrl, capeUrl and isAlex; null clears; refusals say why', async () => {
    const made = await create('Patcher');
    const hosted = encodePng(64, 64, { seed: 340 });
    assertOk(await call(admin, 'PUT', '/admin/users/Patcher/skin', { body: hosted }));
    const ext = { skinUrl: 'https://cdn.example.org/s.png', capeUrl: 'https://cdn.example.org/c.png' };
    assert.deepEqual(assertOk(await call(admin, 'PATCH', '/admin/users/patcher', { body: { skinUrl: ext.skinUrl, isAlex: true } })), view('Patcher', made.uuid, { isAlex: true, skinUrl: ext.skinUrl }));
    assert.equal(await textureStatus(textureName(hosted)), 404, 'the hosted skin it replaced is gone');
    assert.deepEqual(assertOk(await call(admin, 'PATCH', `/admin/users/${made.uuid}`, { body: { capeUrl: ext.capeUrl } })), view('Patcher', made.uuid, { isAlex: true, ...ext }));
    const auth = assertOk(await game('/auth', { login: 'Patcher', password: 'Patcher-password' }));
    assert.deepEqual([auth.skinUrl, auth.capeUrl, auth.isAlex], [ext.skinUrl, ext.capeUrl, true]);
    const refusals: [string, unknown, string][] = [
      ['an ftp URL', { skinUrl: 'ftp://cdn.example.org/s.png' }, 'Invalid URL "ftp://cdn.example.org/s.png": use an https:// address (http:// only with --allow-http-textures)'],
      ['not a URL', { capeUrl: 'not a url' }, 'Invalid URL "not a url": use an https:// address (http:// only with --allow-http-textures)'],
      ['a NUL in a URL', { skinUrl: 'https://cdn.example.org/s\u0000.png' }, 'A texture URL must not hold control characters'],
      ['a tab in a URL', { capeUrl: 'https://cdn.exa\tmple.org/c.png' }, 'A texture URL must not hold control characters'],
      ['a relative URL', { skinUrl: '/s.png' }, 'Invalid URL "/s.png": use an https:// address (http:// only with --allow-http-textures)'],
      ['a numeric skinUrl', { skinUrl: 5 }, 'Field "skinUrl" must be a string or null'],
      ['a boolean capeUrl', { capeUrl: true }, 'Field "capeUrl" must be a string or null'],
      ['a string isAlex', { isAlex: 'true' }, 'Field "isAlex" must be a boolean'],
      ['a null isAlex', { isAlex: null }, 'Field "isAlex" must be a boolean'],
      ['an empty object', {}, 'Nothing to change: give skinUrl, capeUrl or isAlex'],
      ['an unknown field', { model: 'slim' }, 'Unknown field "model": this call takes skinUrl, capeUrl, isAlex'],
      ['an array', [ext.skinUrl], 'Request body must be a JSON object'],
      ['a good field with a bad one', { skinUrl: null, isAlex: 1 }, 'Field "isAlex" must be a boolean'],
    ];
    for (const [label, body, message] of refusals) {
      const r = await call(admin, 'PATCH', '/admin/users/Patcher', { body });
      assert.equal(r.status, 400, `${label}: ${r.text}`);
      assertFail(r, 400, message);
    }
    assert.deepEqual(assertOk(await call(admin, 'GET', '/admin/users/Patcher')), view('Patcher', made.uuid, { isAlex: true, ...ext }), 'a refusal changed the player');
    assertFail(await call(admin, 'PATCH', '/admin/users/Nobody', { body: { isAlex: true } }), 404, 'No player named "Nobody"');
    assert.deepEqual(assertOk(await call(admin, 'PATCH', '/admin/users/Patcher', { body: { skinUrl: null } })), view('Patcher', made.uuid, { isAlex: true, capeUrl: ext.capeUrl }));
    assert.deepEqual(assertOk(await call(admin, 'PATCH', '/admin/users/Patcher', { body: { capeUrl: null, isAlex: false } })), view('Patcher', made.uuid));
    const after = assertOk(await game('/auth', { login: 'Patcher', password: 'Patcher-password' }));
    assert.deepEqual([after.skinUrl, after.capeUrl, after.isAlex], [undefined, undefined, undefined]);
  });

  test('without --public-url, uploads are refused (409) and nothing is stored; external URLs still work', async () => {
    const made = await create('NoUrl', 'nourl-pw', noUrl);
    const png = encodePng(64, 64, { seed: 350 });
    assertFail(await call(noUrl, 'PUT', '/admin/users/NoUrl/skin', { body: png }), 409, 'Hosted textures need the server to run with --public-url');
    assertFail(await call(noUrl, 'PUT', '/admin/users/NoUrl/cape', { body: encodePng(64, 32) }), 409, 'Hosted textures need the server to run with --public-url');
    assert.equal(await textureStatus(textureName(png), noUrl), 404);
    assert.deepEqual(assertOk(await call(noUrl, 'PATCH', '/admin/users/NoUrl', { body: { skinUrl: 'https://cdn.example.org/n.png' } })), view('NoUrl', made.uuid, { skinUrl: 'https://cdn.example.org/n.png' }));
  });
});

describe('done when', () => {
  test('an admin creates a player and uploads a skin; the player logs in and joins; hasJoined gives a skinUrl that serves exactly that PNG', async () => {
    const skin = encodePng(64, 64, { seed: 400 }); // image chunks only: stored as uploaded
    const hero = assertOk(await call(admin, 'POST', '/admin/users', { body: { name: 'Hero', password: 'hero-secret' } }));
    const uploaded = assertOk(await call(admin, 'PUT', `/admin/users/${hero.uuid}/skin?model=slim`, { body: skin, headers: { 'content-type': 'image/png' } }));
    const expectedUrl = `${pub}/textures/${textureName(skin)}`;
    assert.equal(uploaded.skinUrl, expectedUrl);
    const auth = assertOk(await game('/auth', { login: 'Hero', password: 'hero-secret' }));
    assert.deepEqual({ ...auth, accessToken: '' }, { username: 'Hero', userUUID: hero.uuid, accessToken: '', isAlex: true, skinUrl: expectedUrl });
    assert.equal(await joins(auth.accessToken, hero.uuid, 'hero-server'), true);
    const joined = assertOk(await game('/hasJoined', { username: 'Hero', serverID: 'hero-server' }));
    assert.deepEqual(joined, { userUUID: hero.uuid, isAlex: true, skinUrl: expectedUrl });
    // The game client downloads it without any key.
    const res = await fetchReply(joined.skinUrl);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    const bytes = Buffer.from(await (await fetch(joined.skinUrl)).arrayBuffer());
    assert.ok(bytes.equals(skin), 'the served PNG is not the uploaded one');
    assert.equal(textureName(bytes), joined.skinUrl.slice(-64));
  });
});
