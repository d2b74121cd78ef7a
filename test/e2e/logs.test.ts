// The log on standard output: one JSON line an event in pino's shape (level 20/30/40/50, time in
// ms, pid, msg). At debug, the settings in effect come first with secrets masked; a "listening on"
// line; one "request" line a request with reqId, method, path (never the query string), status,
// ms, the outcome of /auth, /join and /hasJoined, the client address, and the player: for /auth
// the name sent (`login`, else `username`) when it is a valid name, for /admin/users/:who... the
// path's player, decoded and cut to 64 characters. On SIGTERM a "stopping" and a "stopped" line.
// No secret ever reaches stdout or stderr: not a password (a login's, a failed login's, one sent
// as the login name, a player added over the admin API), an access token, the API key (also when
// it came in the URL's ?key=), nor the admin token. --log-level error writes failures only, silent
// nothing. --trust-proxy takes the client from the last X-Forwarded-For entry, for the log and
// --address-login-limit alike; without it the header is ignored. --log-format pretty writes one
// readable line an event instead of JSON.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join as pathJoin } from 'node:path';
import { fetchReply, spawnOnPort, startServer, tempDir, type Spawned } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { assertFail, assertOk, sleep } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'logs.db');
// Secrets distinct from each other and from anything else the server could print.
const KEY = 'logs-Api-Key-5f3a9c0e1d2b4a67';
const ADMIN_TOKEN = 'logs-Admin-Token-8e1f0c2d9b7a';
const ALICE_PW = 'alice-Pass-7Qx2Lw';
const WRONG_PW = 'wrong-Pass-4Zk9Hd';
const CAROL_PW = 'carol-Pass-3Vm8Tn';
const BEARER = { authorization: `Bearer ${KEY}` };

let aliceUuid = '';

before(async () => {
  aliceUuid = await seedPlayer(db, 'Alice', ALICE_PW);
});

after(() => tmp.cleanup());

/** Every line of a log, parsed; fails naming a line that is not a JSON object. */
function parseLines(text: string): Record<string, any>[] {
  assert.ok(text === '' || text.endsWith('\n'), 'the log ends with a whole line');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      let parsed: unknown;
      assert.doesNotThrow(() => (parsed = JSON.parse(l)), `not JSON: ${l}`);
      assert.ok(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), `not an object: ${l}`);
      return parsed as Record<string, any>;
    });
}

/** Waits until `check` holds, up to `ms`; fails with `what` otherwise. */
async function waitFor(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** POSTs JSON with extra headers. */
const post = (s: RunningServer, path: string, body: unknown, headers: Record<string, string> = {}) =>
  s.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('a session at --log-level debug with an API key and an admin token', () => {
  let stdout = '';
  let stderr = '';
  let code: number | null = null;
  const tokens: string[] = [];
  /** [method, path, status, outcome, player] of each request, in order. */
  const sent: [string, string, number, string | undefined, string | undefined][] = [];
  const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

  before(async () => {
    const s = await startServer(['--db', db, '--log-level', 'debug', '--api-key', KEY, '--admin-token', ADMIN_TOKEN]);
    try {
      const good = await post(s, '/auth', { login: 'Alice', password: ALICE_PW }, BEARER);
      tokens.push(assertOk(good).accessToken);
      sent.push(['POST', '/auth', 200, 'ok', 'Alice']);

      assertFail(await post(s, `/auth?key=${KEY}`, { login: 'Alice', password: WRONG_PW }), 401, 'Wrong login or password');
      sent.push(['POST', '/auth', 401, 'bad_credentials', 'Alice']);

      assert.equal(assertOk(await post(s, `/join?key=${KEY}`, { accessToken: tokens[0], userUUID: aliceUuid, serverID: 'logs-server' })), true);
      sent.push(['POST', '/join', 200, 'ok', undefined]);

      assertOk(await post(s, '/hasJoined', { username: 'Alice', serverID: 'logs-server' }, BEARER));
      sent.push(['POST', '/hasJoined', 200, 'hit', undefined]);

      assertOk(await post(s, `/profiles?x=1&key=${KEY}`, ['Alice']));
      sent.push(['POST', '/profiles', 200, 'ok', undefined]);

      // Refusals answered in-band carry their reason (see the test of reasons below).
      assert.equal(assertOk(await post(s, `/join?key=${KEY}`, { accessToken: 'x'.repeat(601), userUUID: aliceUuid, serverID: 's' })), false);
      sent.push(['POST', '/join', 200, 'invalid', undefined]);
      assert.equal(assertOk(await post(s, `/join?key=${KEY}`, { accessToken: aliceUuid, userUUID: aliceUuid, serverID: 's' })), false);
      sent.push(['POST', '/join', 200, 'bad_token', undefined]);
      assert.deepEqual(assertOk(await post(s, `/profiles?key=${KEY}`, ['Alice', 1, 'no such!'])).length, 1);
      sent.push(['POST', '/profiles', 200, 'partial', undefined]);

      assertOk(await s.request('/admin/users', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }));
      sent.push(['GET', '/admin/users', 200, undefined, undefined]);

      assert.equal(assertOk(await post(s, '/admin/users', { name: 'Carol', password: CAROL_PW }, { authorization: `Bearer ${ADMIN_TOKEN}` })).name, 'Carol');
      sent.push(['POST', '/admin/users', 200, undefined, 'Carol']);

      tokens.push(assertOk(await post(s, '/auth', { login: 'Carol', password: CAROL_PW }, BEARER)).accessToken);
      sent.push(['POST', '/auth', 200, 'ok', 'Carol']);

      assertFail(await post(s, `/profiles?key=${KEY}-not`, ['Alice']), 401, 'Missing or wrong API key');
      sent.push(['POST', '/profiles', 401, undefined, undefined]);

      // Yggdrasil's field for the name.
      assert.equal((await post(s, '/auth', { username: 'Alice', password: WRONG_PW }, BEARER)).status, 401);
      sent.push(['POST', '/auth', 401, 'bad_credentials', 'Alice']);

      // A password typed as the name is not a valid name: no player.
      assert.equal((await post(s, '/auth', { login: WRONG_PW, password: ALICE_PW }, BEARER)).status, 400);
      sent.push(['POST', '/auth', 400, 'invalid', undefined]);

      // Admin changes name their player as registered ("%43arol" is Carol).
      assertOk(await s.request('/admin/users/%43arol/revoke', { method: 'POST', headers: ADMIN }));
      sent.push(['POST', '/admin/users/%43arol/revoke', 200, undefined, 'Carol']);

      // A lock is an admin change; the locked player's right password is a 403 the log calls locked.
      assertOk(await post(s, '/admin/users/Carol/lock', { reason: 'logs test' }, ADMIN));
      sent.push(['POST', '/admin/users/Carol/lock', 200, undefined, 'Carol']);
      assertFail(await post(s, '/auth', { login: 'Carol', password: CAROL_PW }, BEARER), 403, 'This account is locked: logs test');
      sent.push(['POST', '/auth', 403, 'locked', 'Carol']);

      const long = 'x'.repeat(100);
      const removed = await s.request(`/admin/users/${long}`, { method: 'DELETE', headers: ADMIN });
      assert.ok(removed.status >= 400 && removed.status < 500, removed.text);
      sent.push(['DELETE', `/admin/users/${long}`, removed.status, undefined, 'x'.repeat(64)]);
    } finally {
      code = await s.stop();
    }
    // The exit may be seen before the last output is read: wait for the last line.
    await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
    stdout = s.stdout();
    stderr = s.stderr();
  });

  test('SIGTERM stops it with status 0', () => {
    assert.equal(code, 0, stderr);
  });

  test('every line is a JSON object in pino\'s shape: level, time in ms, pid, msg', () => {
    const lines = parseLines(stdout);
    assert.ok(lines.length >= sent.length + 4, `settings, listening, requests, stopping, stopped:\n${stdout}`);
    const pids = new Set(lines.map((l) => l.pid));
    assert.equal(pids.size, 1, 'one pid');
    for (const l of lines) {
      assert.ok([20, 30, 50].includes(l.level), `level of ${JSON.stringify(l)}`);
      assert.ok(Number.isInteger(l.time) && Math.abs(l.time - Date.now()) < 10 * 60_000, `time in ms since the epoch: ${JSON.stringify(l)}`);
      assert.ok(Number.isInteger(l.pid) && l.pid > 0, `pid of ${JSON.stringify(l)}`);
      assert.equal(typeof l.msg, 'string', `msg of ${JSON.stringify(l)}`);
    }
    const times = lines.map((l) => l.time);
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'times never go back');
  });

  test('first the settings in effect at level 20, with the API key and admin token masked', () => {
    const [first] = parseLines(stdout);
    assert.equal(first!.level, 20);
    assert.equal(first!.msg, 'settings in effect');
    assert.equal(first!.settings.apiKey, '********');
    assert.equal(first!.settings.adminToken, '********');
    assert.equal(first!.settings.logLevel, 'debug');
    assert.equal(first!.settings.db, db);
  });

  test('a "listening on" line, then one request line a request, then "stopping" and "stopped"', () => {
    const lines = parseLines(stdout);
    const listening = lines.findIndex((l) => /listening on http:\/\/127\.0\.0\.1:\d+/.test(l.msg));
    assert.ok(listening > 0, 'a listening line after the settings');
    assert.equal(lines[listening]!.level, 30);
    const requests = lines.filter((l) => l.msg === 'request');
    assert.equal(requests.length, sent.length, 'one line a request');
    assert.ok(lines.indexOf(requests[0]!) > listening, 'requests after listening');
    const [stopping, stopped] = lines.slice(-2);
    assert.match(stopping!.msg, /^mcauth stopping on SIGTERM\b/);
    assert.match(stopped!.msg, /^mcauth stopped\b/);
    assert.deepEqual([stopping!.level, stopped!.level], [30, 30]);
  });

  test('request lines: reqId, method, path without the query, status, ms, client, and the outcome and player where there are', () => {
    const requests = parseLines(stdout).filter((l) => l.msg === 'request');
    assert.deepEqual(
      requests.map((l) => [l.method, l.path, l.status, l.outcome, l.player]),
      sent,
    );
    for (const l of requests) {
      assert.equal(l.level, 30);
      assert.ok(Number.isInteger(l.reqId) && l.reqId > 0, `reqId of ${JSON.stringify(l)}`);
      assert.equal(typeof l.ms, 'number');
      assert.ok(l.ms >= 0 && l.ms < 60_000, `ms of ${JSON.stringify(l)}`);
      assert.ok(!l.path.includes('?'), `no query string in ${l.path}`);
      if (!['/auth', '/join', '/hasJoined', '/profiles'].includes(l.path)) assert.ok(!('outcome' in l), `no outcome on ${l.path}`);
      const keys = Object.keys(l).filter((k) => !['level', 'time', 'pid', 'msg'].includes(k));
      const optional = ['outcome', 'player', 'reason'].filter((k) => k in l);
      const expected = ['reqId', 'method', 'path', 'status', 'ms', 'client', ...optional];
      assert.deepEqual(keys.sort(), expected.sort(), 'nothing else: no body, no header');
      assert.equal(l.client, '127.0.0.1', `client of ${JSON.stringify(l)}`);
    }
    assert.equal(new Set(requests.map((l) => l.reqId)).size, requests.length, 'reqIds are distinct');
    assert.deepEqual(
      requests.filter((l) => l.path === '/auth').map((l) => [l.outcome, l.player]),
      [['ok', 'Alice'], ['bad_credentials', 'Alice'], ['ok', 'Carol'], ['bad_credentials', 'Alice'], ['invalid', undefined], ['locked', 'Carol']],
    );
  });

  test('a join or look-up refused in-band says why; nothing else carries a reason', () => {
    const requests = parseLines(stdout).filter((l) => l.msg === 'request');
    assert.deepEqual(
      requests.filter((l) => 'reason' in l).map((l) => [l.path, l.outcome, l.reason]),
      [
        ['/join', 'invalid', 'Field "accessToken" is longer than 600 characters'],
        ['/profiles', 'partial', '2 of 3 entries not looked up: not a player name, or past the limit'],
      ],
    );
  });

  test('no secret appears in stdout or stderr: passwords, access tokens, API key, admin token', () => {
    assert.equal(tokens.length, 2);
    const secrets: Record<string, string> = {
      'Alice\'s password': ALICE_PW,
      'the failed login\'s password': WRONG_PW,
      'the added player\'s password': CAROL_PW,
      'Alice\'s access token': tokens[0]!,
      'Carol\'s access token': tokens[1]!,
      'the access token without dashes': tokens[0]!.replaceAll('-', ''),
      'the API key': KEY,
      'the admin token': ADMIN_TOKEN,
    };
    for (const [what, secret] of Object.entries(secrets)) {
      assert.ok(!stdout.includes(secret), `${what} is in stdout`);
      assert.ok(!stderr.includes(secret), `${what} is in stderr`);
    }
  });
});

test('--log-level info (the default): request lines, no debug line', async () => {
  const s = await startServer(['--db', db]);
  try {
    assertFail(await s.post('/auth', { login: 'Alice', password: WRONG_PW }), 401, 'Wrong login or password');
  } finally {
    await s.stop();
  }
  await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
  const lines = parseLines(s.stdout());
  assert.deepEqual(lines.filter((l) => l.level === 20), [], 'no debug line');
  assert.deepEqual(
    lines.filter((l) => l.msg === 'request').map((l) => [l.path, l.status, l.outcome]),
    [['/auth', 401, 'bad_credentials']],
  );
  assert.ok(!s.stdout().includes(WRONG_PW));
});

/**
 * Logs in, fails a login, asks for an unknown path, then leaves a request half-sent and stops
 * the server with --shutdown-timeout 0, which cuts it off: a failure the log reports at level 50.
 */
async function sessionWithACutOff(s: Spawned & { port: number }): Promise<number | null> {
  const url = `http://127.0.0.1:${s.port}`;
  const postJson = (body: unknown) => fetchReply(`${url}/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const socket = connect(s.port, '127.0.0.1');
  socket.on('error', () => {});
  let code: number | null;
  try {
    assertOk(await postJson({ login: 'Alice', password: ALICE_PW }));
    assertFail(await postJson({ login: 'Alice', password: WRONG_PW }), 401, 'Wrong login or password');
    assertFail(await fetchReply(`${url}/nope?key=${KEY}`), 404, 'Unknown endpoint');
    await new Promise<void>((done) => socket.write('POST /auth HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"login":', () => done()));
    // A request on another connection, answered after the half-sent one has arrived.
    assert.equal((await fetchReply(`${url}/health`)).status, 200);
    await sleep(100);
  } finally {
    code = await s.stop();
    socket.destroy();
  }
  return code;
}

describe('quieter levels (a fixed port: there is no listening line to read it from)', () => {
  test('--log-level error: no request or info line, only the failure, at level 50', async () => {
    const s = await spawnOnPort(['--db', db, '--log-level', 'error', '--shutdown-timeout', '0']);
    assert.equal(await sessionWithACutOff(s), 0, s.stderr());
    const lines = parseLines(s.stdout());
    assert.deepEqual(lines.filter((l) => l.msg === 'request'), [], 'no request line');
    assert.equal(lines.length, 1, `only the failure:\n${s.stdout()}`);
    assert.equal(lines[0]!.level, 50);
    assert.match(lines[0]!.msg, /^mcauth cut off 1 request still in flight/);
    assert.ok(!s.stdout().includes(ALICE_PW) && !s.stdout().includes(WRONG_PW));
  });

  test('--log-level silent: nothing at all on stdout, not even a failure', async () => {
    const s = await spawnOnPort(['--db', db, '--log-level', 'silent', '--shutdown-timeout', '0']);
    assert.equal(await sessionWithACutOff(s), 0, s.stderr());
    assert.equal(s.stdout(), '');
  });
});

describe('the client address: --trust-proxy and --address-login-limit', () => {
  const proxyDb = pathJoin(tmp.dir, 'proxy.db');
  const DORA_PW = 'dora-Pass-6Rb1Kc';
  before(async () => {
    await seedPlayer(proxyDb, 'Dora', DORA_PW);
  });

  // Dora fails 4 logins in all here (the 429s are not counted): under the 5 her name's throttle allows.
  /** Fails a login of Dora's with X-Forwarded-For `forwarded` (none when undefined); the status. */
  const wrongLogin = async (s: RunningServer, forwarded?: string): Promise<number> =>
    (await post(s, '/auth', { login: 'Dora', password: WRONG_PW }, forwarded === undefined ? {} : { 'x-forwarded-for': forwarded })).status;

  /** [status, outcome, player, client] of each request line. */
  const requestLines = (s: RunningServer): unknown[][] =>
    parseLines(s.stdout())
      .filter((l) => l.msg === 'request')
      .map((l) => [l.status, l.outcome, l.player, l.client]);

  test('with --trust-proxy: the last X-Forwarded-For entry is the client, in the log and for the limit; no header: the socket\'s', async () => {
    const s = await startServer(['--db', proxyDb, '--trust-proxy', '--address-login-limit', '1']);
    const statuses: number[] = [];
    try {
      statuses.push(await wrongLogin(s, '203.0.113.9'));
      // Another address (the first entry is the client's own word, not counted): not limited.
      statuses.push(await wrongLogin(s, '203.0.113.9, 198.51.100.7'));
      // The first address again, whatever comes before it: over the limit of 1.
      statuses.push(await wrongLogin(s, '10.1.2.3,  203.0.113.9 '));
      statuses.push(await wrongLogin(s));
      // Malformed: the socket's address, which has had its one login this minute.
      statuses.push(await wrongLogin(s, 'unknown'));
    } finally {
      await s.stop();
    }
    await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
    assert.deepEqual(statuses, [401, 401, 429, 401, 429]);
    assert.deepEqual(requestLines(s), [
      [401, 'bad_credentials', 'Dora', '203.0.113.9'],
      [401, 'bad_credentials', 'Dora', '198.51.100.7'],
      [429, 'throttled', 'Dora', '203.0.113.9'],
      [401, 'bad_credentials', 'Dora', '127.0.0.1'],
      [429, 'throttled', 'Dora', '127.0.0.1'],
    ]);
  });

  test('without --trust-proxy: X-Forwarded-For is ignored, in the log and for the limit', async () => {
    // --relay '': the test calls from 127.0.0.1, a relay by default, which the limit does not count.
    const s = await startServer(['--db', proxyDb, '--address-login-limit', '1', '--relay', '']);
    const statuses: number[] = [];
    try {
      statuses.push(await wrongLogin(s, '203.0.113.9'));
      statuses.push(await wrongLogin(s, '198.51.100.7'));
    } finally {
      await s.stop();
    }
    await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
    assert.deepEqual(statuses, [401, 429], 'both count as 127.0.0.1');
    assert.deepEqual(requestLines(s), [
      [401, 'bad_credentials', 'Dora', '127.0.0.1'],
      [429, 'throttled', 'Dora', '127.0.0.1'],
    ]);
    assert.ok(!s.stdout().includes('203.0.113.9') && !s.stdout().includes('198.51.100.7'), 'the header is not logged');
  });
});

test('the account page names its player too: sign-up, sign-in (failed or not), signed-in calls and a reset; never a password or token', async () => {
  const pageDb = pathJoin(tmp.dir, 'account-logs.db');
  const ERIN_PW = 'erin-Pass-2Hq7Vd';
  const ERIN_NEW_PW = 'erin-New-Pass-9Kc4Ws';
  const s = await startServer(['--db', pageDb, '--account-page', '--registration', 'open', '--admin-token', ADMIN_TOKEN]);
  const expected: [string, number, string | undefined][] = [];
  let token = '';
  let resetCode = '';
  try {
    assertOk(await post(s, '/account/register', { name: 'Erin', password: ERIN_PW }));
    expected.push(['/account/register', 200, 'Erin']);
    assertFail(await post(s, '/account/login', { name: 'Erin', password: WRONG_PW }), 401, 'Wrong login or password');
    expected.push(['/account/login', 401, 'Erin']);
    // A password typed as the name is not a valid name: no player.
    assert.equal((await post(s, '/account/login', { name: WRONG_PW, password: ERIN_PW })).status, 400);
    expected.push(['/account/login', 400, undefined]);
    token = assertOk(await post(s, '/account/login', { name: 'Erin', password: ERIN_PW })).accessToken;
    expected.push(['/account/login', 200, 'Erin']);
    const signedIn = { authorization: `Bearer ${token}` };
    assertOk(await s.request('/account/me', { headers: signedIn }));
    expected.push(['/account/me', 200, 'Erin']);
    assertFail(await post(s, '/account/password', { current: WRONG_PW, new: ERIN_NEW_PW }, signedIn), 401, 'The current password is wrong');
    expected.push(['/account/password', 401, 'Erin']);
    assertOk(await post(s, '/account/logout-all', {}, signedIn));
    expected.push(['/account/logout-all', 200, 'Erin']);
    const link = assertOk(await post(s, '/admin/users/Erin/reset-link', {}, { authorization: `Bearer ${ADMIN_TOKEN}` }));
    expected.push(['/admin/users/Erin/reset-link', 200, 'Erin']);
    resetCode = link.code;
    assertOk(await post(s, '/account/reset', { code: link.code, password: ERIN_NEW_PW }));
    expected.push(['/account/reset', 200, 'Erin']);
  } finally {
    await s.stop();
  }
  await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
  const requests = parseLines(s.stdout()).filter((l) => l.msg === 'request');
  assert.deepEqual(requests.map((l) => [l.path, l.status, l.player]), expected);
  for (const l of requests) assert.equal(l.client, '127.0.0.1');
  for (const secret of [ERIN_PW, ERIN_NEW_PW, WRONG_PW, token, resetCode, ADMIN_TOKEN]) {
    assert.ok(!s.stdout().includes(secret) && !s.stderr().includes(secret), 'a secret was logged');
  }
});

test('--log-format pretty: one readable line an event, not JSON; a request line carries player and client', async () => {
  const s = await startServer(['--db', db, '--log-format', 'pretty']);
  try {
    assertFail(await s.post('/auth', { login: 'Alice', password: WRONG_PW }), 401, 'Wrong login or password');
  } finally {
    await s.stop();
  }
  await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
  const lines = s.stdout().split('\n');
  assert.equal(lines.pop(), '', 'ends with a whole line');
  const TIME = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}`;
  for (const line of lines) {
    assert.throws(() => JSON.parse(line), SyntaxError, `JSON: ${line}`);
    assert.match(line, new RegExp(`^${TIME} (INFO |WARN |ERROR|DEBUG) \\S`), line);
  }
  assert.match(lines[0]!, new RegExp(`^${TIME} INFO  mcauth listening on http://127\\.0\\.0\\.1:\\d+ \\(`));
  assert.deepEqual(
    lines.filter((l) => l.includes('/auth')).map((l) => l.replace(/^\S+ \S+ /, '').replace(/ [\d.]+ ms /, ' MS ms ')),
    ['INFO  POST /auth 401 MS ms bad_credentials reqId=1 player=Alice client=127.0.0.1'],
  );
  assert.match(lines.at(-1)!, new RegExp(`^${TIME} INFO  mcauth stopped: `));
  assert.ok(!s.stdout().includes(WRONG_PW));
});
