// The caller secret: with --api-key (or MCAUTH_API_KEY) every request but GET {base}/health must
// carry the key, as `Authorization: Bearer KEY` or `?key=KEY`; anything else is a 401 envelope
// with WWW-Authenticate: Bearer, on every endpoint and unknown path. Without a key set none is
// needed. A short key is refused at start without being printed, and a key never reaches the
// server's output, not even when a request fails with a 500.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, runCli } from '../helpers/process.ts';
import type { RunningServer, Reply } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { connect } from '../helpers/raw-connection.ts';
import { HELD_REFUSAL_MS } from '../../src/limits.ts';
import { assertFail, assertOk, until } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'api-key.db');
const KEY = 'k3y-for-Tests-0123456789abcdef';
const ENV_KEY = 'another-env-key-ZZ9-plural-z-alpha';
const MISSING = 'Missing or wrong API key';

let keyed: RunningServer; // --api-key KEY
let envKeyed: RunningServer; // MCAUTH_API_KEY=ENV_KEY, --base-path /mc
let open: RunningServer; // no key
let aliceUuid = '';

before(async () => {
  aliceUuid = await seedPlayer(db, 'Alice', 'alice-pw');
  await seedPlayer(db, 'Keyless', 'keyless-pw');
  [keyed, envKeyed, open] = await Promise.all([
    startServer(['--db', db, '--api-key', KEY]),
    startServer(['--db', db, '--base-path', '/mc'], { MCAUTH_API_KEY: ENV_KEY }),
    startServer(['--db', db]),
  ]);
});

after(async () => {
  await Promise.all([keyed?.stop(), envKeyed?.stop(), open?.stop()]);
  tmp.cleanup();
});

/** A valid body for each endpoint (the join uses a token that may or may not be live). */
const bodies = (token = '00000000-0000-4000-8000-000000000000'): Record<string, unknown> => ({
  '/auth': { login: 'Alice', password: 'alice-pw' },
  '/join': { accessToken: token, userUUID: aliceUuid, serverID: 'key-server' },
  '/hasJoined': { username: 'Alice', serverID: 'key-server' },
  '/profile': { userUUID: aliceUuid },
  '/profiles': ['Alice'],
});

function post(s: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return s.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

function assertNoKey(r: Reply, label: string): void {
  assertFail(r, 401, MISSING);
  assert.equal(r.headers.get('www-authenticate'), 'Bearer', `WWW-Authenticate of ${label}`);
}

/** Ways to not carry the key: the headers to send and what to add to the path. */
const wrongWays = (key: string): [string, Record<string, string>, string][] => [
  ['no key', {}, ''],
  ['a wrong key', { authorization: 'Bearer wrong-key-0123456789abcdef' }, ''],
  ['the key in another letter case', { authorization: `Bearer ${key.toUpperCase()}` }, ''],
  ['the key without its last character', { authorization: `Bearer ${key.slice(0, -1)}` }, ''],
  ['the key with one more character', { authorization: `Bearer ${key}x` }, ''],
  ['Basic with the key as password', { authorization: `Basic ${Buffer.from(`user:${key}`).toString('base64')}` }, ''],
  ['Basic with the key itself', { authorization: `Basic ${key}` }, ''],
  ['the key with no scheme', { authorization: key }, ''],
  ['an empty Bearer', { authorization: 'Bearer ' }, ''],
  ['a wrong key in the query', {}, '?key=wrong-key-0123456789abcdef'],
  ['the key in another case in the query', {}, `?key=${encodeURIComponent(key.toUpperCase())}`],
  ['an empty key in the query', {}, '?key='],
  ['the key under another parameter name', {}, `?KEY=${encodeURIComponent(key)}&apikey=${encodeURIComponent(key)}`],
  ['the key in another header', { 'x-api-key': key, cookie: `key=${key}` }, ''],
];

describe('--api-key set', () => {
  test('every endpoint and every unknown path answers 401 with WWW-Authenticate: Bearer without the right key', async () => {
    const paths = [...Object.keys(bodies()), '/nope', '/', '/auth/', '/mc/auth'];
    // All at once, each on a connection of its own: every refusal is held a second.
    await Promise.all(
      wrongWays(KEY).flatMap(([label, headers, query]) => [
        ...paths.map(async (path) => assertNoKey(await post(keyed, path + query, bodies()[path] ?? {}, headers), `${label} on ${path}`)),
        // Other methods too: the key is checked before the route.
        (async () => assertNoKey(await keyed.request('/auth' + query, { headers }), `${label} on GET /auth`))(),
      ]),
    );
  });

  test("a refusal for the key is held a second, as a flood's are: guesses cost the guesser a connection a second, and pipelining past one cuts it", async () => {
    const sent = performance.now();
    assertNoKey(await post(keyed, '/profiles', ['Alice'], { authorization: 'Bearer wrong-key-0123456789abcdef' }), 'a wrong key');
    const waited = performance.now() - sent;
    assert.ok(waited >= HELD_REFUSAL_MS - 50, `answered after ${Math.round(waited)} ms`);
    const body = '["Alice"]';
    const guess = `POST /profiles?key=wrong HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const c = await connect(keyed.port, '127.0.1.91');
    c.socket.write(guess.repeat(20));
    assert.ok(await until(async () => c.isClosed(), 8000), `not closed: ${JSON.stringify(c.text())}`);
    assert.equal(c.text(), '', 'no held answer is written to a connection that pipelined past it');
  });

  test('with Authorization: Bearer KEY every endpoint works', async () => {
    const h = { authorization: `Bearer ${KEY}` };
    const auth = assertOk(await post(keyed, '/auth', bodies()['/auth'], h));
    assert.equal(auth.username, 'Alice');
    assert.equal(assertOk(await post(keyed, '/join', bodies(auth.accessToken)['/join'], h)), true);
    assert.deepEqual(assertOk(await post(keyed, '/hasJoined', bodies()['/hasJoined'], h)), { userUUID: aliceUuid });
    assert.deepEqual(assertOk(await post(keyed, '/profile', bodies()['/profile'], h)), { username: 'Alice' });
    assert.deepEqual(assertOk(await post(keyed, '/profiles', bodies()['/profiles'], h)), [{ id: aliceUuid, name: 'Alice' }]);
    // The scheme in any letter case, as HTTP allows.
    assert.deepEqual(assertOk(await post(keyed, '/profile', bodies()['/profile'], { authorization: `bearer ${KEY}` })), { username: 'Alice' });
    // With the key, the ordinary errors are back.
    assertFail(await post(keyed, '/nope', {}, h), 404, 'Unknown endpoint');
    assertFail(await keyed.request('/auth', { headers: h }), 405, 'Method not allowed: use POST');
  });

  test('with ?key=KEY in the URL every endpoint works', async () => {
    const q = `?key=${encodeURIComponent(KEY)}`;
    const auth = assertOk(await post(keyed, '/auth' + q, bodies()['/auth']));
    assert.equal(auth.username, 'Alice');
    assert.equal(assertOk(await post(keyed, '/join' + q, { ...(bodies(auth.accessToken)['/join'] as object), serverID: 'query-server' })), true);
    assert.deepEqual(assertOk(await post(keyed, '/hasJoined' + q, { username: 'alice', serverID: 'query-server' })), { userUUID: aliceUuid });
    assert.deepEqual(assertOk(await post(keyed, '/profile' + q, bodies()['/profile'])), { username: 'Alice' });
    assert.deepEqual(assertOk(await post(keyed, '/profiles' + q, bodies()['/profiles'])), [{ id: aliceUuid, name: 'Alice' }]);
    // Among other parameters, as a LauncherServer URL may have them.
    assert.deepEqual(assertOk(await post(keyed, `/profile?x=1&key=${encodeURIComponent(KEY)}&y=2`, bodies()['/profile'])), { username: 'Alice' });
  });

  test('requests refused for the key do no work: wrong-key guesses do not throttle the player', async () => {
    await Promise.all(Array.from({ length: 8 }, async (_, i) => assertNoKey(await post(keyed, '/auth?key=nope', { login: 'Keyless', password: `guess-${i}` }), 'a guess')));
    assert.equal(assertOk(await post(keyed, '/auth', { login: 'Keyless', password: 'keyless-pw' }, { authorization: `Bearer ${KEY}` })).username, 'Keyless');
  });

  test('GET /health stays open without a key', async () => {
    for (const path of ['/health', '/health?key=wrong']) {
      assert.deepEqual(assertOk(await keyed.request(path)), { status: 'ok' }, path);
    }
    assert.deepEqual(assertOk(await keyed.request('/health', { headers: { authorization: 'Bearer wrong' } })), { status: 'ok' });
  });
});

describe('MCAUTH_API_KEY and --base-path /mc', () => {
  test('the key from the environment is required under the base path', async () => {
    await Promise.all(wrongWays(ENV_KEY).map(async ([label, headers, query]) => assertNoKey(await post(envKeyed, '/mc/profile' + query, bodies()['/profile'], headers), label)));
    // The flag's key of the other server is no key here.
    assertNoKey(await post(envKeyed, '/mc/profile', bodies()['/profile'], { authorization: `Bearer ${KEY}` }), 'the other key');
    assert.deepEqual(assertOk(await post(envKeyed, '/mc/profile', bodies()['/profile'], { authorization: `Bearer ${ENV_KEY}` })), { username: 'Alice' });
    assert.deepEqual(assertOk(await post(envKeyed, `/mc/profiles?key=${encodeURIComponent(ENV_KEY)}`, ['alice'])), [{ id: aliceUuid, name: 'Alice' }]);
  });

  test('{base}/health is open; /health outside the base path is not', async () => {
    assert.deepEqual(assertOk(await envKeyed.request('/mc/health')), { status: 'ok' });
    assertNoKey(await envKeyed.request('/health'), 'GET /health outside the base path');
    assertNoKey(await envKeyed.request('/mc/health/x'), 'GET /mc/health/x');
    assertFail(await envKeyed.request(`/health?key=${encodeURIComponent(ENV_KEY)}`), 404, 'Unknown endpoint');
  });
});

describe('without --api-key', () => {
  test('no key is needed, and one sent anyway changes nothing', async () => {
    assert.deepEqual(assertOk(await open.post('/profile', bodies()['/profile'])), { username: 'Alice' });
    assert.deepEqual(assertOk(await post(open, '/profile?key=anything', bodies()['/profile'], { authorization: 'Bearer whatever' })), { username: 'Alice' });
    assert.equal(assertOk(await open.post('/auth', { login: 'Alice', password: 'alice-pw' })).username, 'Alice');
    assert.deepEqual(assertOk(await open.request('/health')), { status: 'ok' });
  });
});

describe('the key stays secret', () => {
  test('a key under 16 characters is refused at start (exit 2), and the message does not show it', async () => {
    const short = 'Sh0rt-key-15chr';
    assert.equal(short.length, 15);
    const viaFlag = await runCli(['serve', '--port', '0', '--db', db, '--api-key', short], { timeoutMs: 60_000 });
    const viaEnv = await runCli(['serve', '--port', '0', '--db', db], { env: { MCAUTH_API_KEY: short }, timeoutMs: 60_000 });
    for (const [label, r] of [['--api-key', viaFlag], ['MCAUTH_API_KEY', viaEnv]] as const) {
      assert.equal(r.timedOut, false, `${label}: the server started instead of refusing`);
      assert.equal(r.code, 2, `${label}: exit ${r.code}\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stderr, /16/, `${label}: the message should say the bound: ${r.stderr}`);
      assert.ok(!r.stderr.includes(short) && !r.stdout.includes(short), `${label}: the key was printed:\n${r.stdout}\n${r.stderr}`);
      assert.ok(!r.stderr.includes('Sh0rt'), `${label}: part of the key was printed: ${r.stderr}`);
    }
    // 16 characters are enough.
    const ok = await startServer(['--db', db, '--api-key', 'x'.repeat(16)]);
    try {
      assert.deepEqual(assertOk(await post(ok, '/profile', bodies()['/profile'], { authorization: `Bearer ${'x'.repeat(16)}` })), { username: 'Alice' });
      assertNoKey(await post(ok, '/profile', bodies()['/profile'], { authorization: `Bearer ${'x'.repeat(15)}` }), '15 of 16');
    } finally {
      await ok.stop();
    }
  });

  test('a key in the URL never reaches stdout or stderr, not even with a 500', async () => {
    const own = tempDir();
    const file = pathJoin(own.dir, 'secret.db');
    const secret = 'S3cret-in-the-URL-zq8w7e6r5t4y';
    const wrong = 'Wr0ng-in-the-URL-mn1b2v3c4x5z6';
    const q = `?key=${encodeURIComponent(secret)}`;
    await seedPlayer(file, 'Victim', 'victim-pw');
    const s = await startServer(['--db', file, '--api-key', secret]);
    try {
      // Failures of every kind with the key (or a wrong one) in the URL.
      assertFail(await post(s, '/nope' + q, {}), 404, 'Unknown endpoint');
      assertFail(await s.request('/auth' + q), 405, 'Method not allowed: use POST');
      assertFail(await s.request('/auth' + q, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }), 400, 'Request body is not valid JSON');
      assertFail(await post(s, '/auth' + q, { login: 'Victim', password: 'nope' }), 401, 'Wrong login or password');
      assertNoKey(await post(s, `/auth?key=${wrong}`, { login: 'Victim', password: 'victim-pw' }), 'a wrong key');
      assert.equal(assertOk(await post(s, '/auth' + q, { login: 'Victim', password: 'victim-pw' })).username, 'Victim');

      // Pull the tables out from under the server: every request that reaches the store is a 500.
      const conn = new DatabaseSync(file);
      try {
        conn.exec('PRAGMA busy_timeout = 5000');
        for (const t of ['tokens', 'joins', 'login_failures', 'users']) conn.exec(`DROP TABLE IF EXISTS ${t}`);
      } finally {
        conn.close();
      }
      assertFail(await post(s, '/auth' + q, { login: 'Victim', password: 'victim-pw' }), 500, 'Internal server error');
      assertFail(await post(s, '/profile' + q, { userUUID: '00000000-0000-4000-8000-000000000000' }), 500, 'Internal server error');
      // /profiles answers in-band (a LauncherServer's bulk look-up dies on a failure envelope).
      assert.deepEqual(assertOk(await post(s, `/profiles?a=1&key=${encodeURIComponent(secret)}&b=2`, ['Victim'])), []);
      assertFail(await post(s, '/hasJoined', { username: 'Victim', serverID: 'x' }, { authorization: `Bearer ${secret}` }), 500, 'Internal server error');
      // The log line is written a turn of the event loop after the answer.
      await s.waitFor('the 500s in the log', (stdout) => (/no such table/i.test(stdout) ? true : undefined));
      const out = s.stdout() + s.stderr();
      assert.match(out, /no such table/i, `the 500s were not logged at all:\n${out}`);
      for (const leaked of [secret, encodeURIComponent(secret), wrong, 'key=']) {
        assert.ok(!out.includes(leaked), `"${leaked}" appears in the server's output:\n${out}`);
      }
    } finally {
      await s.stop();
      own.cleanup();
    }
    // Nor at stop.
    assert.ok(!(s.stdout() + s.stderr()).includes(secret));
  });
});
