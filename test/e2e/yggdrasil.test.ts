// The Yggdrasil API (--yggdrasil), end to end: the real server on a real database, called as
// HMCL, PCL, PrismLauncher and authlib-injector on a game server call it. Each rule of the
// specification and of the issue has its check here; signatures are verified with node:crypto
// against the key the metadata publishes.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import { fetchReply, RUNTIME, runCli, startRaw, startServer, startServerOnFreePort, tempDir, type Reply, type RunningServer } from '../helpers/process.ts';
import { seed } from '../helpers/players.ts';
import { offlineUuid } from '../../src/uuid.ts';
import { randomPng, textureName } from '../helpers/png.ts';
import { call } from '../helpers/call.ts';
import { testDb } from '../helpers/test-db.ts';
import { databaseServer, postgresMissing } from '../helpers/postgres.ts';
import { assertOk, login as jsonLogin, requestLines, sleep, undash, until } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'yggdrasil.db');
const keptDb = await testDb(tmp.dir, 'kept-key.db');
/** The phase's PostgreSQL cluster (or the file's own), where there is one: taken at the top level, as databaseServer asks. */
const pg = postgresMissing ? undefined : await databaseServer();
const PASSWORD = 'ygg-password-1';
const INVALID_CREDENTIALS = 'Invalid credentials. Invalid username or password.';
/** The specification's interval between two accepted logins of one account, and a margin. */
const INTERVAL_MS = 1000;
const AFTER_INTERVAL_MS = INTERVAL_MS + 100;

// One key for the servers given --yggdrasil-key, of 2048 bits: the server takes any RSA key from
// a file, and one of 4096 costs half a second of CPU to make (the key a server makes itself is
// checked for 4096 bits below).
const keyFile = joinPath(tmp.dir, 'signing.pem');
const ownKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
writeFileSync(keyFile, ownKey.privateKey.export({ type: 'pkcs8', format: 'pem' }));

let s: RunningServer; // --yggdrasil --yggdrasil-key, --public-url (its own address), --account-page --registration open
let ids: Record<string, string> = {};

const Y = (path: string): string => `/yggdrasil${path}`;
const post = (path: string, body: unknown, server = s): Promise<Reply> => server.post(Y(path), body);
const get = (path: string, server = s, headers: Record<string, string> = {}): Promise<Reply> => server.request(Y(path), { headers });

/** The specification's failure: the status, `{error, errorMessage}` and nothing else. */
function assertYggFail(r: Reply, status: number, error: string, message?: string): void {
  assert.equal(r.status, status, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['error', 'errorMessage'], r.text);
  assert.equal(r.body.error, error);
  if (message !== undefined) assert.equal(r.body.errorMessage, message);
}

/** Every access token and clientToken the server answered with: none may reach its log. */
const secrets = new Set<string>();

async function authenticate(name: string, password = PASSWORD, extra: Record<string, unknown> = {}, server = s): Promise<any> {
  const r = await post('/authserver/authenticate', { username: name, password, agent: { name: 'Minecraft', version: 1 }, ...extra }, server);
  assert.equal(r.status, 200, r.text);
  secrets.add(r.body.accessToken).add(r.body.clientToken);
  return r.body;
}

/** When each player's last accepted login or sign-out was answered: the next is a second later at least (the interval of the specification). */
const lastLogin = new Map<string, number>();
async function spaced<T>(name: string, call: () => Promise<T>): Promise<T> {
  const wait = (lastLogin.get(name) ?? 0) + AFTER_INTERVAL_MS - Date.now();
  if (wait > 0) await sleep(wait);
  try {
    return await call();
  } finally {
    lastLogin.set(name, Date.now());
  }
}
const loginAs = (name: string, extra: Record<string, unknown> = {}): Promise<any> => spaced(name, () => authenticate(name, PASSWORD, extra));

/** Each player's last token from fresh(), to refresh for the next. */
const kept = new Map<string, string>();
/**
 * A live token of the player for a test whose subject is not the login: a refresh of the last
 * one (no password to hash, no interval to wait out), or a login for the first.
 */
async function fresh(name: string): Promise<any> {
  const last = kept.get(name);
  const r = last === undefined ? undefined : await post('/authserver/refresh', { accessToken: last });
  const body = r?.status === 200 ? r.body : await loginAs(name);
  kept.set(name, body.accessToken);
  secrets.add(body.accessToken);
  return body;
}

const validate = async (accessToken: string, clientToken?: string): Promise<number> =>
  (await post('/authserver/validate', { accessToken, ...(clientToken !== undefined && { clientToken }) })).status;

const SKIN = randomPng(64, 64);
const CAPE = randomPng(64, 32);

before(async () => {
  // The throttle's test guesses at names no player has: they are held alike, and cost no hash.
  const names = ['Steve', 'Alex', 'Plain', 'Locky', 'Renamed', 'Gone', 'Capped', 'Changer', 'Signer'];
  // With their offline UUIDs, as `user add --offline-uuid` gives them.
  const added = await seed(db, names.map((name) => ({ name, password: PASSWORD, uuid: offlineUuid(name) })));
  ids = Object.fromEntries(added);
  const skin = joinPath(tmp.dir, 'skin.png');
  const cape = joinPath(tmp.dir, 'cape.png');
  writeFileSync(skin, SKIN);
  writeFileSync(cape, CAPE);
  s = await startServerOnFreePort((port) => {
    const pub = `http://127.0.0.1:${port}`;
    return ['--db', db, '--yggdrasil', '--yggdrasil-key', keyFile, '--public-url', pub, '--account-page', '--registration', 'open', '--server-name', 'Ygg Test'];
  });
  const env = { MCAUTH_PUBLIC_URL: s.url };
  for (const [args, what] of [
    [['user', 'skin', 'Steve', skin], 'skin'],
    [['user', 'cape', 'Steve', cape], 'cape'],
    [['user', 'skin', 'Alex', skin, '--slim'], 'slim skin'],
  ] as [string[], string][]) {
    const r = await runCli([...args, '--db', db], { env });
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
  }
});

after(async () => {
  await s?.stop();
  tmp.cleanup();
});

describe('the API root', () => {
  test('GET /yggdrasil/ answers the metadata: names, links, features, skin domains and the public key', async () => {
    for (const path of ['/', '']) {
      const r = await get(path);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(Object.keys(r.body).sort(), ['meta', 'signaturePublickey', 'skinDomains']);
      const { meta } = r.body;
      assert.equal(meta.serverName, 'Ygg Test');
      assert.equal(meta.implementationName, 'mcauth');
      assert.match(meta.implementationVersion, /^\d+\.\d+\.\d+/);
      assert.equal(meta['feature.non_email_login'], true);
      assert.equal(meta['feature.enable_profile_key'], true);
      assert.deepEqual(meta.links, { homepage: `${s.url}/account`, register: `${s.url}/account` });
      assert.deepEqual(r.body.skinDomains, ['127.0.0.1']);
      const key = createPublicKey(r.body.signaturePublickey);
      assert.equal(key.export({ type: 'spki', format: 'pem' }), ownKey.publicKey.export({ type: 'spki', format: 'pem' }));
    }
  });

  test('skinDomains also lists the hosts of skins and capes kept on other sites (user set --skin-url, --cape-url)', async () => {
    const file = await testDb(tmp.dir, 'skin-domains.db');
    await seed(file, [{ name: 'Elsewhere', password: PASSWORD }]);
    const set = await runCli(['user', 'set', 'Elsewhere', '--skin-url', 'https://skins.example.net/a.png', '--cape-url', 'https://capes.example.org:8443/c.png', '--db', file]);
    assert.equal(set.code, 0, set.stderr);
    const other = await startServer(['--db', file, '--yggdrasil', '--yggdrasil-key', keyFile, '--public-url', 'https://auth.example.com']);
    try {
      const r = await get('/', other);
      assert.deepEqual(r.body.skinDomains.sort(), ['auth.example.com', 'capes.example.org', 'skins.example.net']);
    } finally {
      await other.stop();
    }
  });

  test('every answer carries X-Authlib-Injector-API-Location, the site root and the JSON API included', async () => {
    for (const r of [await s.request('/'), await s.request('/health'), await get('/'), await s.post('/auth', { login: 'Steve', password: 'wrong' })]) {
      assert.equal(r.headers.get('x-authlib-injector-api-location'), '/yggdrasil/');
    }
  });

  test('under --base-path, the API and the header follow it; the site root above it carries the header too', async () => {
    const based = await startServer(['--db', ':memory:', '--base-path', '/mc', '--yggdrasil', '--yggdrasil-key', keyFile]);
    try {
      const root = await based.request('/mc/yggdrasil/');
      assert.equal(root.status, 200, root.text);
      assert.equal(root.headers.get('x-authlib-injector-api-location'), '/mc/yggdrasil/');
      assert.equal((await based.request('/')).headers.get('x-authlib-injector-api-location'), '/mc/yggdrasil/');
      assert.equal((await based.request('/yggdrasil/')).status, 404);
    } finally {
      await based.stop();
    }
  });

  test('without --yggdrasil the routes are not there and no answer carries the header', async () => {
    // Started as given: startServer would switch the API on under npm run test:postgres.
    const off = await startRaw(['serve', '--port', '0', '--db', ':memory:']);
    try {
      const r = await fetchReply(`http://127.0.0.1:${off.port}/yggdrasil/`);
      assert.equal(r.status, 404);
      assert.equal(r.headers.get('x-authlib-injector-api-location'), null);
    } finally {
      await off.stop();
    }
  });
});

describe('authserver', () => {
  test('authenticate: the one profile selected and available, a sent clientToken echoed, requestUser adds the user', async () => {
    const r = await loginAs('Steve', { clientToken: 'my-launcher-token', requestUser: true });
    assert.equal(r.clientToken, 'my-launcher-token');
    assert.equal(typeof r.accessToken, 'string');
    const profile = { id: undash(ids.Steve!), name: 'Steve' };
    assert.deepEqual(r.selectedProfile, profile);
    assert.deepEqual(r.availableProfiles, [profile]);
    assert.deepEqual(r.user, { id: undash(ids.Steve!), properties: [] });
    assert.equal(await validate(r.accessToken, 'my-launcher-token'), 204);
  });

  test('authenticate without a clientToken: one is made (32 hex digits), and no user without requestUser', async () => {
    const r = await loginAs('Plain');
    assert.match(r.clientToken, /^[0-9a-f]{32}$/);
    assert.equal(r.user, undefined);
    // A name in another case is the same player.
    const again = await loginAs('Plain', { username: 'pLAIN', clientToken: null });
    assert.equal(again.selectedProfile.name, 'Plain');
  });

  test('a wrong password, an unknown name and an e-mail address all get the same 403 (a throttled name too: below)', async () => {
    for (const username of ['Steve', 'NoSuchPlayer', 'steve@example.com']) {
      const r = await post('/authserver/authenticate', { username, password: 'not-the-password' });
      assertYggFail(r, 403, 'ForbiddenOperationException', INVALID_CREDENTIALS);
    }
  });

  test('the login interval: a second accepted login within a second is refused; a wrong password never starts it', async () => {
    // Wrong passwords first, as fast as they come: they do not count as accepted logins.
    const first = await spaced('Changer', async () => {
      for (let i = 0; i < 2; i++) assertYggFail(await post('/authserver/authenticate', { username: 'Changer', password: 'wrong' }), 403, 'ForbiddenOperationException');
      return authenticate('Changer');
    });
    const sent = performance.now();
    const second = await post('/authserver/authenticate', { username: 'changer', password: PASSWORD });
    assertYggFail(second, 403, 'ForbiddenOperationException', INVALID_CREDENTIALS);
    // Held to the failed-login floor (1 s), as a wrong password is: its time does not tell the password was right.
    assert.ok(performance.now() - sent >= 950, `refused after ${Math.round(performance.now() - sent)} ms`);
    assert.equal(await validate(first.accessToken), 204, 'the first login\'s token stands');
    assert.equal(typeof (await loginAs('Changer')).accessToken, 'string');
    // Two at once, a second later: one is accepted, the other refused.
    await sleep(AFTER_INTERVAL_MS);
    const both = await Promise.all([0, 1].map(() => post('/authserver/authenticate', { username: 'Changer', password: PASSWORD })));
    assert.deepEqual(both.map((r) => r.status).sort(), [200, 403], both.map((r) => r.text).join('\n'));
    lastLogin.set('Changer', Date.now());
  });

  test('refresh: a new token with the same clientToken (sent or not), the old one ended; a failed refresh leaves it valid', async () => {
    const auth = await loginAs('Steve');
    const wrong = await post('/authserver/refresh', { accessToken: auth.accessToken, clientToken: 'someone-else' });
    assertYggFail(wrong, 403, 'ForbiddenOperationException', 'Invalid token.');
    const other = await post('/authserver/refresh', { accessToken: auth.accessToken, selectedProfile: { id: undash(ids.Alex!), name: 'Alex' } });
    assertYggFail(other, 403, 'ForbiddenOperationException');
    const none = await post('/authserver/refresh', { accessToken: auth.accessToken, selectedProfile: { id: '992960dfc7a54afca041760004499434', name: 'Nobody' } });
    assertYggFail(none, 400, 'IllegalArgumentException');
    assert.equal(await validate(auth.accessToken), 204);

    const r = await post('/authserver/refresh', { accessToken: auth.accessToken, requestUser: true });
    assert.equal(r.status, 200, r.text);
    assert.notEqual(r.body.accessToken, auth.accessToken);
    assert.equal(r.body.clientToken, auth.clientToken);
    assert.deepEqual(r.body.selectedProfile, auth.selectedProfile);
    assert.deepEqual(r.body.user, { id: undash(ids.Steve!), properties: [] });
    assert.equal(await validate(auth.accessToken), 403);
    assertYggFail(await post('/authserver/refresh', { accessToken: auth.accessToken }), 403, 'ForbiddenOperationException');
    // Refreshed again, with the clientToken sent and the own profile selected.
    const next = await post('/authserver/refresh', { accessToken: r.body.accessToken, clientToken: auth.clientToken, selectedProfile: auth.selectedProfile });
    assert.equal(next.status, 200, next.text);
    assert.equal(next.body.clientToken, auth.clientToken);
    assert.equal(await validate(next.body.accessToken, auth.clientToken), 204);
  });

  test('validate 204/403, with a clientToken checked when sent; invalidate 204 always, ending only that token', async () => {
    const one = await loginAs('Alex');
    const two = await loginAs('Alex');
    assert.equal(await validate(one.accessToken, one.clientToken), 204);
    assert.equal(await validate(one.accessToken, 'not-its-client'), 403);
    assertYggFail(await post('/authserver/validate', { accessToken: 'fa0e97770dec465aa3c5db8d70162857' }), 403, 'ForbiddenOperationException', 'Invalid token.');
    assert.equal((await post('/authserver/invalidate', { accessToken: 'fa0e97770dec465aa3c5db8d70162857' })).status, 204);
    assert.equal((await post('/authserver/invalidate', { accessToken: one.accessToken, clientToken: 'not-its-client' })).status, 204);
    assert.equal(await validate(one.accessToken), 403);
    assert.equal(await validate(two.accessToken), 204);
  });

  test('signout ends every token of the account, of both APIs; a wrong password ends none; a second within a second is refused', async () => {
    const ygg = await loginAs('Signer');
    const json = await jsonLogin(s, 'Signer', PASSWORD);
    assertYggFail(await post('/authserver/signout', { username: 'Signer', password: 'wrong' }), 403, 'ForbiddenOperationException', INVALID_CREDENTIALS);
    assert.equal(await validate(ygg.accessToken), 204);
    const r = await spaced('Signer', () => post('/authserver/signout', { username: 'Signer', password: PASSWORD }));
    assert.equal(r.status, 204, r.text);
    assert.equal(await validate(ygg.accessToken), 403);
    assert.equal(await validate(json.accessToken), 403);
    assertYggFail(await post('/authserver/signout', { username: 'Signer', password: PASSWORD }), 403, 'ForbiddenOperationException');
  });

  test('the JSON API\'s throttle holds these logins: failures through either API count together, from one address', async () => {
    // Failed logins answer a second after their check at the earliest (the floor); the fifth
    // failure of a name from one address holds its next attempt a second, the sixth two, the
    // seventh four: so, counted together, five failures on one API and three on the other bring a
    // refusal, even where a check takes seconds. Counted apart, the other's three bring none.
    const guesses = async (from: string, first: [string, (name: string) => unknown], then: [string, (name: string) => unknown], name: string): Promise<number[]> => {
      for (let i = 0; i < 5; i++) await call(s.port, first[0], { from, body: first[1](name) });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(s.port, then[0], { from, body: then[1](name) })).status);
      return statuses;
    };
    const json: [string, (name: string) => unknown] = ['/auth', (login) => ({ login, password: 'wrong' })];
    const ygg: [string, (name: string) => unknown] = [Y('/authserver/authenticate'), (username) => ({ username, password: 'wrong' })];
    const [jsonAfterYgg, yggAfterJson] = await Promise.all([guesses('127.0.1.90', ygg, json, 'Throttled'), guesses('127.0.1.91', json, ygg, 'Throttled2')]);
    assert.ok(jsonAfterYgg.includes(429), `the JSON API after five failures on the Yggdrasil API: ${jsonAfterYgg}`);
    // On the Yggdrasil API a throttled login is refused as any other: 403, its reason in the log.
    assert.deepEqual([...new Set(yggAfterJson)], [403]);
    assert.ok(await until(async () => requestLines(s).some((l) => l.path === Y('/authserver/authenticate') && l.reason === 'throttle' && l.client === '127.0.1.91'), 5000));
  });

  test('malformed bodies are 400 IllegalArgumentException, never a 500', async () => {
    const cases: [string, string | unknown][] = [
      ['/authserver/authenticate', '{"username": "Steve", "password": '],
      ['/authserver/authenticate', { username: 'Steve' }],
      ['/authserver/authenticate', { username: 'Steve', password: 7 }],
      ['/authserver/authenticate', { username: 'Steve', password: PASSWORD, clientToken: 'x'.repeat(129) }],
      ['/authserver/authenticate', [1, 2]],
      ['/authserver/refresh', { accessToken: 5 }],
      ['/authserver/refresh', { accessToken: 'a', selectedProfile: 'Steve' }],
      ['/authserver/validate', {}],
      ['/authserver/invalidate', 'null'],
      ['/authserver/signout', { username: 'Steve' }],
      ['/sessionserver/session/minecraft/join', { accessToken: 'a', selectedProfile: 'not-a-uuid', serverId: 'x' }],
      ['/sessionserver/session/minecraft/join', { accessToken: 'a', serverId: 'x' }],
      ['/api/profiles/minecraft', { names: ['Steve'] }],
    ];
    for (const [path, body] of cases) assertYggFail(await post(path, body), 400, 'IllegalArgumentException');
    assertYggFail(await s.request(Y('/authserver/validate'), { method: 'POST', body: 'x'.repeat(100_000), headers: { 'content-type': 'application/json' } }), 413, 'IllegalArgumentException');
  });
});

describe('tokens end with the account, on both APIs at once', () => {
  const live = async (name: string): Promise<{ ygg: string; json: string }> => ({ ygg: (await loginAs(name)).accessToken, json: (await jsonLogin(s, name, PASSWORD)).accessToken });
  const assertEnded = async (tokens: { ygg: string; json: string }): Promise<void> => {
    assert.equal(await validate(tokens.ygg), 403);
    assert.equal(await validate(tokens.json), 403);
  };

  test('a password change, a lock, a rename and a removal', async () => {
    const changed = await live('Changer');
    assert.equal((await runCli(['user', 'passwd', 'Changer', '--db', db], { stdin: `${PASSWORD}\n` })).code, 0);
    await assertEnded(changed);

    const locked = await live('Locky');
    assert.equal((await runCli(['user', 'lock', 'Locky', '--db', db, '--reason', 'cheating'])).code, 0);
    await assertEnded(locked);
    const refused = await spaced('Locky', () => post('/authserver/authenticate', { username: 'Locky', password: PASSWORD }));
    assertYggFail(refused, 403, 'ForbiddenOperationException', 'This account is locked: cheating');

    // A launcher keeps the name it logged in with: a rename ends its sessions, and the next login is under the new name.
    const renamed = await live('Renamed');
    assert.equal((await runCli(['user', 'rename', 'Renamed', 'NewName', '--db', db])).code, 0);
    await assertEnded(renamed);
    assert.equal((await loginAs('NewName')).selectedProfile.name, 'NewName');

    const gone = await live('Gone');
    assert.equal((await runCli(['user', 'remove', 'Gone', '--db', db])).code, 0);
    await assertEnded(gone);
  });

  test('the per-player token cap holds across both APIs; a login refused within the second issues no token for it to make room for', async () => {
    // One token here, then fifteen of the JSON API: the cap of 16 is full.
    const first = await loginAs('Capped');
    const json: string[] = [];
    for (let i = 0; i < 15; i++) json.push((await jsonLogin(s, 'Capped', PASSWORD)).accessToken);
    // One more here: the oldest, the first, goes.
    await loginAs('Capped');
    assert.equal(await validate(first.accessToken), 403);
    // A login within the second after it is refused, and stores nothing: had it, the oldest left
    // (the first of the JSON API's) would have gone to make room.
    assertYggFail(await post('/authserver/authenticate', { username: 'Capped', password: PASSWORD }), 403, 'ForbiddenOperationException');
    assert.equal(await validate(json[0]!), 204);
  });
});

describe('sessionserver', () => {
  const serverId = (): string => randomBytes(16).toString('hex');
  const hasJoined = (name: string, id: string, ip?: string): Promise<Reply> =>
    get(`/sessionserver/session/minecraft/hasJoined?username=${name}&serverId=${id}${ip === undefined ? '' : `&ip=${ip}`}`);

  test('join 204 with a live token of the profile, 403 "Invalid token." otherwise', async () => {
    const auth = await fresh('Steve');
    const ok = await post('/sessionserver/session/minecraft/join', { accessToken: auth.accessToken, selectedProfile: auth.selectedProfile.id, serverId: serverId() });
    assert.equal(ok.status, 204, ok.text);
    for (const [token, profile] of [
      ['fa0e97770dec465aa3c5db8d70162857', auth.selectedProfile.id],
      [auth.accessToken, undash(ids.Alex!)],
      [auth.accessToken, '992960dfc7a54afca041760004499434'],
    ]) {
      const r = await post('/sessionserver/session/minecraft/join', { accessToken: token, selectedProfile: profile, serverId: serverId() });
      assertYggFail(r, 403, 'ForbiddenOperationException', 'Invalid token.');
    }
  });

  test('hasJoined: 200 with the signed profile after a join, 204 for another name, server, or none; ip must match', async () => {
    const auth = await fresh('Steve');
    const id = serverId();
    await post('/sessionserver/session/minecraft/join', { accessToken: auth.accessToken, selectedProfile: auth.selectedProfile.id, serverId: id });
    const r = await hasJoined('Steve', id);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.id, undash(ids.Steve!));
    assert.equal(r.body.name, 'Steve');
    assert.equal(r.body.properties[0].name, 'textures');
    assert.ok(verify('sha1', Buffer.from(r.body.properties[0].value), ownKey.publicKey, Buffer.from(r.body.properties[0].signature, 'base64')));
    assert.equal((await hasJoined('Alex', id)).status, 204);
    assert.equal((await hasJoined('Steve', serverId())).status, 204);
    assert.equal((await hasJoined('not a name!', id)).status, 204);
    assert.equal((await hasJoined('Steve', id, '127.0.0.1')).status, 200);
    assert.equal((await hasJoined('Steve', id, '10.1.2.3')).status, 204);
    assertYggFail(await get('/sessionserver/session/minecraft/hasJoined?username=Steve'), 400, 'IllegalArgumentException');
  });

  test('hasJoined ip: an IPv6 join address matches any address of its /64, and no other', async () => {
    const file = await testDb(tmp.dir, 'ipv6.db');
    await seed(file, [{ name: 'Sixer', password: PASSWORD }]);
    // The join comes through a trusted proxy, which says the player's IPv6 address.
    const six = await startServer(['--db', file, '--yggdrasil', '--yggdrasil-key', keyFile, '--trust-proxy', '127.0.1.200']);
    try {
      const auth = await authenticate('Sixer', PASSWORD, {}, six);
      const id = serverId();
      const joined = await call(six.port, Y('/sessionserver/session/minecraft/join'), {
        from: '127.0.1.200',
        headers: { 'x-forwarded-for': '2001:db8:1:2::5' },
        body: { accessToken: auth.accessToken, selectedProfile: auth.selectedProfile.id, serverId: id },
      });
      assert.equal(joined.status, 204, JSON.stringify(joined.body));
      const at = async (ip: string): Promise<number> => (await get(`/sessionserver/session/minecraft/hasJoined?username=Sixer&serverId=${id}&ip=${encodeURIComponent(ip)}`, six)).status;
      assert.deepEqual(await Promise.all(['2001:db8:1:2::5', '2001:db8:1:2::99', '2001:db8:1:2:ffff:ffff:ffff:ffff'].map(at)), [200, 200, 200]);
      assert.deepEqual(await Promise.all(['2001:db8:1:3::5', '2001:db8:1::5', '127.0.0.1'].map(at)), [204, 204, 204]);
    } finally {
      await six.stop();
    }
  });

  test('a join through either API is one join: the JSON API sees a Yggdrasil join, and the other way round', async () => {
    const auth = await fresh('Alex');
    const viaYgg = serverId();
    await post('/sessionserver/session/minecraft/join', { accessToken: auth.accessToken, selectedProfile: auth.selectedProfile.id, serverId: viaYgg });
    assert.equal(assertOk(await s.post('/hasJoined', { username: 'Alex', serverID: viaYgg })).userUUID, ids.Alex);

    const json = await jsonLogin(s, 'Alex', PASSWORD);
    const viaJson = serverId();
    assert.equal(assertOk(await s.post('/join', { accessToken: json.accessToken, userUUID: ids.Alex, serverID: viaJson })), true);
    assert.equal((await hasJoined('Alex', viaJson)).status, 200);
    // The JSON API's join came from a relay or a launcher whose address is not the player's: no ip is kept, so none matches.
    assert.equal((await hasJoined('Alex', viaJson, '127.0.0.1')).status, 204);
  });

  test('profile: the textures property (skin, slim model, cape), signed only with unsigned=false; 204 for an unknown UUID', async () => {
    const textures = (r: Reply) => JSON.parse(Buffer.from(r.body.properties[0].value, 'base64').toString());
    const steve = await get(`/sessionserver/session/minecraft/profile/${undash(ids.Steve!)}`);
    assert.equal(steve.status, 200, steve.text);
    assert.deepEqual(Object.keys(steve.body.properties[0]).sort(), ['name', 'value']);
    const payload = textures(steve);
    assert.equal(payload.profileId, undash(ids.Steve!));
    assert.equal(payload.profileName, 'Steve');
    assert.equal(typeof payload.timestamp, 'number');
    // Named by the specification's texture hash of their pixels.
    assert.equal(payload.textures.SKIN.url, `${s.url}/textures/${textureName(SKIN)}`);
    assert.equal(payload.textures.SKIN.metadata, undefined);
    assert.equal(payload.textures.CAPE.url, `${s.url}/textures/${textureName(CAPE)}`);
    const png = await fetch(payload.textures.SKIN.url);
    assert.equal(png.status, 200);
    assert.equal(png.headers.get('content-type'), 'image/png');

    const alex = await get(`/sessionserver/session/minecraft/profile/${ids.Alex}?unsigned=false`);
    assert.deepEqual(textures(alex).textures.SKIN.metadata, { model: 'slim' });
    assert.equal(textures(alex).textures.CAPE, undefined);
    const property = alex.body.properties[0];
    assert.ok(verify('sha1', Buffer.from(property.value), ownKey.publicKey, Buffer.from(property.signature, 'base64')));

    const plain = await get(`/sessionserver/session/minecraft/profile/${undash(ids.Plain!)}?unsigned=true`);
    assert.deepEqual(textures(plain).textures, {});
    assert.equal(plain.body.properties[0].signature, undefined);
    assert.equal((await get('/sessionserver/session/minecraft/profile/992960dfc7a54afca041760004499434')).status, 204);
    assert.equal((await get('/sessionserver/session/minecraft/profile/not-a-uuid')).status, 204);
  });

  test('api/profiles/minecraft: names to {id, name}, unknown names left out, each once, a long list no failure', async () => {
    const r = await post('/api/profiles/minecraft', ['steve', 'NoSuchPlayer', 'Alex', 'STEVE', 'not a name!', 42]);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, [
      { id: undash(ids.Steve!), name: 'Steve' },
      { id: undash(ids.Alex!), name: 'Alex' },
    ]);
    assert.deepEqual((await post('/api/profiles/minecraft', [])).body, []);
    const many = Array.from({ length: 500 }, (_, i) => `P${i}`);
    assert.equal((await post('/api/profiles/minecraft', [...many, 'Steve'])).status, 200);
  });
});

describe('texture upload and removal (where textures are hosted)', () => {
  type Form = { body: Buffer; type: string };
  /**
   * A form as launchers send it, made whole before it is sent: a refusal answered before the body
   * is read closes the connection (the test asks for that), and a body still being streamed then
   * would fail to send.
   */
  const formOf = (fields: [string, Buffer, string?][]): Form => {
    const boundary = `----mcauth${randomBytes(8).toString('hex')}`;
    const parts = fields.map(([name, data, filename]) =>
      Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: image/png` : ''}\r\n\r\n`),
        data,
        Buffer.from('\r\n'),
      ]),
    );
    return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
  };
  const form = (png: Buffer, model?: string): Form => formOf([...(model === undefined ? [] : [['model', Buffer.from(model)] as [string, Buffer]]), ['file', png, 'texture.png']]);
  const upload = (token: string | undefined, id: string, kind: string, sent: Form | string, contentType?: string): Promise<Reply> =>
    s.request(Y(`/api/user/profile/${id}/${kind}`), {
      method: 'PUT',
      body: typeof sent === 'string' ? sent : new Uint8Array(sent.body),
      headers: {
        ...(token !== undefined && { authorization: `Bearer ${token}` }),
        'content-type': typeof sent === 'string' ? contentType! : sent.type,
      },
    });
  const textures = async (id: string): Promise<any> => {
    const r = await get(`/sessionserver/session/minecraft/profile/${id}`);
    return JSON.parse(Buffer.from(r.body.properties.find((p: any) => p.name === 'textures').value, 'base64').toString()).textures;
  };

  test('PUT a skin (slim) and a cape as multipart, then DELETE them: 204 each, and the profile says so', async () => {
    const auth = await fresh('Plain');
    const id = undash(ids.Plain!);
    const skin = randomPng(64, 64);
    assert.equal((await upload(auth.accessToken, id, 'skin', form(skin, 'slim'))).status, 204);
    assert.equal((await upload(auth.accessToken, id, 'cape', form(randomPng(64, 32)))).status, 204);
    let now = await textures(id);
    assert.deepEqual(now.SKIN.metadata, { model: 'slim' });
    assert.match(now.CAPE.url, /\/textures\/[0-9a-f]{64}$/);
    const png = await fetch(now.SKIN.url);
    assert.equal(png.status, 200);
    // A skin with the model left empty is the classic one.
    assert.equal((await upload(auth.accessToken, id, 'skin', form(skin, ''))).status, 204);
    assert.equal((await textures(id)).SKIN.metadata, undefined);
    for (const kind of ['skin', 'cape']) {
      const r = await s.request(Y(`/api/user/profile/${id}/${kind}`), { method: 'DELETE', headers: { authorization: `Bearer ${auth.accessToken}` } });
      assert.equal(r.status, 204, r.text);
    }
    now = await textures(id);
    assert.deepEqual(now, {});
    // The profile says uploads are taken here.
    const profile = await get(`/sessionserver/session/minecraft/profile/${id}`);
    assert.deepEqual(profile.body.properties.find((p: any) => p.name === 'uploadableTextures'), { name: 'uploadableTextures', value: 'skin,cape' });
  });

  test('refused: no token (401), another player\'s profile (403), not skin or cape (404), a bad PNG or form (400)', async () => {
    const auth = await fresh('Plain');
    const id = undash(ids.Plain!);
    assertYggFail(await upload(undefined, id, 'skin', form(randomPng(64, 64))), 401, 'ForbiddenOperationException');
    assertYggFail(await upload('nope', id, 'skin', form(randomPng(64, 64))), 401, 'ForbiddenOperationException');
    assertYggFail(await upload(auth.accessToken, undash(ids.Steve!), 'skin', form(randomPng(64, 64))), 403, 'ForbiddenOperationException');
    assertYggFail(await upload(auth.accessToken, id, 'hat', form(randomPng(64, 64))), 404, 'NotFoundException');
    for (const [body, what] of [
      [form(randomBytes(2000)), 'not a PNG'],
      [form(randomPng(64, 48)), 'a skin of the wrong size'],
      [form(randomPng(64, 64), 'thick'), 'an unknown model'],
    ] as [Form, string][]) {
      const r = await upload(auth.accessToken, id, 'skin', body);
      assert.equal(r.status, 400, `${what}: ${r.text}`);
      assertYggFail(r, 400, 'IllegalArgumentException');
    }
    assertYggFail(await upload(auth.accessToken, id, 'skin', 'just text', 'text/plain'), 400, 'IllegalArgumentException');
    assertYggFail(await upload(auth.accessToken, id, 'skin', 'no end', 'multipart/form-data; boundary=xyz'), 400, 'IllegalArgumentException');
    assertYggFail(await upload(auth.accessToken, id, 'skin', formOf([['model', Buffer.from('slim')]])), 400, 'IllegalArgumentException');
    // Nothing of it changed the player.
    assert.deepEqual(await textures(id), {});
  });
});

describe('minecraftservices (chat signing of 1.19 and later)', () => {
  test('player certificates: a key pair whose public key the service signed (v1 and v2), checked with publickeys', async () => {
    const auth = await fresh('Plain');
    const bearer = { authorization: `Bearer ${auth.accessToken}` };
    assertYggFail(await s.request(Y('/minecraftservices/player/certificates'), { method: 'POST' }), 401, 'ForbiddenOperationException');
    const r = await s.request(Y('/minecraftservices/player/certificates'), { method: 'POST', headers: bearer });
    assert.equal(r.status, 200, r.text);
    const cert = r.body;
    const keys = (await get('/minecraftservices/publickeys')).body;
    const verifier = createPublicKey({ key: Buffer.from(keys.playerCertificateKeys[0].publicKey, 'base64'), format: 'der', type: 'spki' });
    assert.equal(keys.profilePropertyKeys[0].publicKey, keys.playerCertificateKeys[0].publicKey);
    const der = Buffer.from(cert.keyPair.publicKey.replace(/-----[A-Z ]+-----|\n/g, ''), 'base64');
    const expires = Date.parse(cert.expiresAt);
    assert.ok(expires > Date.now() && Date.parse(cert.refreshedAfter) < expires);
    assert.ok(verify('sha1', Buffer.from(`${expires}${cert.keyPair.publicKey}`), verifier, Buffer.from(cert.publicKeySignature, 'base64')), 'v1');
    const expiry = Buffer.alloc(8);
    expiry.writeBigInt64BE(BigInt(expires));
    const v2 = Buffer.concat([Buffer.from(undash(ids.Plain!), 'hex'), expiry, der]);
    assert.ok(verify('sha1', v2, verifier, Buffer.from(cert.publicKeySignatureV2, 'base64')), 'v2');
    // The private key is the public key's pair.
    const priv = Buffer.from(cert.keyPair.privateKey.replace(/-----[A-Z ]+-----|\n/g, ''), 'base64');
    assert.equal(createPublicKey(createPrivateKey({ key: priv, format: 'der', type: 'pkcs8' })).export({ type: 'spki', format: 'der' }).toString('base64'), der.toString('base64'));
  });

  test('player attributes and the blocklist, with the Bearer token only', async () => {
    const auth = await fresh('Plain');
    const bearer = { authorization: `Bearer ${auth.accessToken}` };
    const attributes = await get('/minecraftservices/player/attributes', s, bearer);
    assert.equal(attributes.body.privileges.onlineChat.enabled, true);
    assert.equal(attributes.body.privileges.multiplayerServer.enabled, true);
    assert.equal(attributes.body.profanityFilterPreferences.profanityFilterOn, false);
    assert.deepEqual((await get('/minecraftservices/privacy/blocklist', s, bearer)).body, { blockedProfiles: [] });
    assert.equal((await get('/minecraftservices/privacy/blocklist')).status, 401);
    assert.equal((await get('/minecraftservices/player/attributes', s, { authorization: 'Bearer nope' })).status, 401);
  });
});

describe('the signing key', () => {
  test('made at the first start, kept in the database: a restart signs with the same key, and no line of the log holds it', async () => {
    const first = await startServer(['--db', keptDb, '--yggdrasil']);
    const pem = (await first.request('/yggdrasil/')).body.signaturePublickey;
    await first.stop();
    const again = await startServer(['--db', keptDb, '--yggdrasil']);
    try {
      assert.equal((await again.request('/yggdrasil/')).body.signaturePublickey, pem);
      // A backup holds it too (of a SQLite file; db-copy.test.ts copies it between SQLite and PostgreSQL).
      if (!keptDb.startsWith('postgres')) {
        const copy = joinPath(tmp.dir, 'kept-backup.db');
        assert.equal((await runCli(['backup', copy, '--db', keptDb])).code, 0);
        const restored = await startServer(['--db', copy, '--yggdrasil']);
        assert.equal((await restored.request('/yggdrasil/')).body.signaturePublickey, pem);
        await restored.stop();
      }
      assert.equal(createPublicKey(pem).asymmetricKeyDetails?.modulusLength, 4096);
      // No --public-url: no texture is hosted, so none is uploaded either.
      assert.equal((await again.request('/yggdrasil/api/user/profile/992960dfc7a54afca041760004499434/skin', { method: 'PUT' })).status, 404);
      for (const out of [first.stdout() + first.stderr(), again.stdout() + again.stderr()]) assert.doesNotMatch(out, /PRIVATE KEY|BEGIN/);
    } finally {
      await again.stop();
    }
  });

  test('--workers 2 on a new database: both workers make a key at once, and both sign with the one stored first', { skip: RUNTIME === 'deno' ? '--workers is Node only' : false }, async () => {
    const two = await startServer(['--db', await testDb(tmp.dir, 'two-workers.db'), '--yggdrasil', '--workers', '2']);
    try {
      // A connection of its own each: node:cluster deals them to the workers in turn.
      const keys = new Set<string>();
      for (let i = 0; i < 8; i++) keys.add((await fetchReply(`${two.url}/yggdrasil/`)).body.signaturePublickey);
      assert.equal(keys.size, 1);
    } finally {
      await two.stop();
    }
  });

  test('--yggdrasil-key that cannot be read, or holds no RSA key, stops the start with a clear message', async () => {
    const notKey = joinPath(tmp.dir, 'not-a-key.pem');
    writeFileSync(notKey, 'hello');
    for (const [file, said] of [
      [joinPath(tmp.dir, 'missing.pem'), /cannot read --yggdrasil-key .*missing\.pem: no such file/],
      [notKey, /--yggdrasil-key .*not-a-key\.pem holds no RSA private key in PEM/],
    ] as [string, RegExp][]) {
      const r = await runCli(['serve', '--port', '0', '--db', ':memory:', '--yggdrasil', '--yggdrasil-key', file]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, said);
    }
  });
});

describe('the login interval across processes', () => {
  /** An authenticate of `name` on a connection of its own, from `from`: its status. */
  const authenticateAt = async (port: number, name: string): Promise<number> =>
    (await call(port, Y('/authserver/authenticate'), { body: { username: name, password: PASSWORD } })).status;

  test('--workers 2: a second accepted login on the other worker within the second is refused', { skip: RUNTIME === 'deno' ? '--workers is Node only' : false }, async () => {
    const file = await testDb(tmp.dir, 'interval-workers.db');
    await seed(file, [{ name: 'Twice', password: PASSWORD }]);
    const two = await startServer(['--db', file, '--workers', '2', '--yggdrasil', '--yggdrasil-key', keyFile]);
    try {
      // A connection of its own each: node:cluster deals them to the workers in turn, so each
      // pair's second login reaches the worker that did not accept the first.
      for (let pair = 0; pair < 3; pair++) {
        if (pair > 0) await sleep(AFTER_INTERVAL_MS);
        assert.deepEqual([await authenticateAt(two.port, 'Twice'), await authenticateAt(two.port, 'twice')], [200, 403], `pair ${pair + 1}`);
      }
      // The refusals came from the worker that had not accepted the login before them.
      const path = Y('/authserver/authenticate');
      await until(async () => requestLines(two).filter((l) => l.path === path).length === 6, 5000);
      const lines = requestLines(two)
        .filter((l) => l.path === path)
        .sort((a, b) => a.time - b.time);
      const pairs = [0, 2, 4].map((i) => `${lines[i].status} by ${lines[i].pid}, ${lines[i + 1].status} by ${lines[i + 1].pid}`);
      assert.ok([0, 2, 4].some((i) => lines[i].pid !== lines[i + 1].pid), pairs.join('; '));
    } finally {
      await two.stop();
    }
  });

  test('on PostgreSQL, two nodes: a second accepted login on the other node within the second is refused', { skip: postgresMissing }, async () => {
    const url = pg!.url(await pg!.newDatabase('interval_nodes'));
    await seed(url, [{ name: 'Twice', password: PASSWORD }]);
    const nodes = [await startServer(['--db', url, '--yggdrasil', '--yggdrasil-key', keyFile]), await startServer(['--db', url, '--yggdrasil', '--yggdrasil-key', keyFile])];
    try {
      for (const [first, second] of [[0, 1], [1, 0]] as const) {
        if (first === 1) await sleep(AFTER_INTERVAL_MS);
        assert.deepEqual([await authenticateAt(nodes[first]!.port, 'Twice'), await authenticateAt(nodes[second]!.port, 'Twice')], [200, 403], `node ${first + 1}, then ${second + 1}`);
      }
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
    }
  });
});

describe('signing under load', () => {
  test('one address may cause 120 new profile signatures a minute: then 429 with Retry-After; kept ones are free, other addresses and the relay unaffected', async () => {
    const file = await testDb(tmp.dir, 'signatures.db');
    const added = await seed(file, Array.from({ length: 124 }, (_, i) => ({ name: `Signed${i}`, password: PASSWORD })));
    const uuids = [...added.values()].map(undash);
    const signer = await startServer(['--db', file, '--yggdrasil', '--yggdrasil-key', keyFile]);
    try {
      const profile = (uuid: string, from: string) => call(signer.port, Y(`/sessionserver/session/minecraft/profile/${uuid}?unsigned=false`), { from });
      for (const uuid of uuids.slice(0, 120)) {
        const r = await profile(uuid, '127.0.1.150');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(typeof r.body.properties[0].signature, 'string');
      }
      const sent = performance.now();
      const refused = await profile(uuids[120]!, '127.0.1.150');
      assert.equal(refused.status, 429, JSON.stringify(refused.body));
      assert.ok(performance.now() - sent >= 950, `the refusal was held ${Math.round(performance.now() - sent)} ms, not a second`);
      assert.deepEqual(Object.keys(refused.body).sort(), ['error', 'errorMessage']);
      assert.ok(Number(refused.headers['retry-after']) >= 1, String(refused.headers['retry-after']));
      // A signature kept from before costs nothing, so it is answered; another address, and the relay, are not held to this one's budget.
      assert.equal((await profile(uuids[0]!, '127.0.1.150')).status, 200);
      assert.equal((await profile(uuids[121]!, '127.0.1.151')).status, 200);
      assert.equal((await profile(uuids[122]!, '127.0.0.1')).status, 200);
      // Unsigned profiles need no signature, so no budget.
      assert.equal((await call(signer.port, Y(`/sessionserver/session/minecraft/profile/${uuids[123]}`), { from: '127.0.1.150' })).status, 200);
    } finally {
      await signer.stop();
    }
  });
});

describe('the log', () => {
  test('a route a line for every Yggdrasil endpoint called, and no token or clientToken in any line', async () => {
    const log = s.stdout() + s.stderr();
    assert.ok(secrets.size > 10);
    for (const secret of secrets) assert.ok(!log.includes(secret), 'a token or clientToken reached the log');
    const routes = new Set(requestLines(s).map((l) => l.path));
    for (const path of ['/authserver/authenticate', '/authserver/refresh', '/authserver/validate', '/sessionserver/session/minecraft/join']) assert.ok(routes.has(Y(path)), path);
  });
});
