// GET {base}/metrics: only with --metrics (else 404 "Unknown endpoint"), in Prometheus' text
// format (read by the strict parser in test/helpers/prometheus.ts), behind --api-key when that is
// set (Bearer or ?key=), while /health stays open. Each login, join and hasJoined moves its
// outcome counter (ok, bad_credentials, locked, throttled, busy, invalid; ok, bad_token, invalid; hit,
// miss, invalid) and http_requests_total{route,status} by exactly one; route labels are route
// patterns, never raw paths; the duration histogram counts every request of its route.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { ROOT, startServer, runCli, tempDir, timedPost } from '../helpers/process.ts';
import type { RunningServer, Timed } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { FREE_LOGIN_FAILURES } from '../../src/limits.ts';
import { countOf, histogram, METRIC_TYPES, OUTCOMES, parseExposition, samplesNamed, valueOf, type Exposition } from '../helpers/prometheus.ts';
import { assertFail, assertOk, login, join } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'metrics.db');
const KEY = 'metrics-Key-0123456789abcdef';
/** Every route label a scrape may carry: the router's patterns, and `unmatched`. */
const ROUTES = new Set(['/auth', '/join', '/hasJoined', '/profile', '/profiles', '/health', '/metrics', '/textures/:hash', 'unmatched']);

let plain: RunningServer; // no --metrics
let metered: RunningServer; // --metrics
let busy: RunningServer; // --metrics, one hash at a time and no queue
const BUSY_NAMES = ['Busy', 'Busy_1', 'Busy_2', 'Busy_3'];
let keyed: RunningServer; // --metrics --api-key KEY
let aliceUuid = '';
const testStart = Date.now() / 1000;

before(async () => {
  [aliceUuid] = await Promise.all([seedPlayer(db, 'Alice', 'alice-pw'), ...BUSY_NAMES.map((name) => seedPlayer(db, name, 'busy-password')), seedPlayer(db, 'Locked', 'locked-pw')]);
  const lock = await runCli(['user', 'lock', 'Locked', '--db', db]);
  assert.equal(lock.code, 0, lock.stderr);
  [plain, metered, busy, keyed] = await Promise.all([
    startServer(['--db', db]),
    startServer(['--db', db, '--metrics']),
    startServer(['--db', db, '--metrics', '--hash-concurrency', '1', '--hash-queue', '0']),
    startServer(['--db', db, '--metrics', '--api-key', KEY]),
  ]);
});

after(async () => {
  await Promise.all([plain?.stop(), metered?.stop(), busy?.stop(), keyed?.stop()]);
  tmp.cleanup();
});

/** GETs /metrics (with `init`), asserts a 200 in the text format, and parses it. */
async function scrape(s: RunningServer, path = '/metrics', init: RequestInit = {}): Promise<Exposition> {
  const r = await s.request(path, init);
  assert.equal(r.status, 200, `scrape of ${path}: ${r.text}`);
  assert.match(r.headers.get('content-type') ?? '(none)', /^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return parseExposition(r.text);
}

/** How much each series moved from one scrape to the next. */
const mover = (before: Exposition, after: Exposition) => (name: string, labels: Record<string, string> = {}) =>
  countOf(after, name, labels) - countOf(before, name, labels);

describe('without --metrics', () => {
  test('GET /metrics is an unknown endpoint', async () => {
    assertFail(await plain.request('/metrics'), 404, 'Unknown endpoint');
  });
});

describe('with --metrics', () => {
  test('a scrape is valid text with every documented family, each outcome reported', async () => {
    const e = await scrape(metered);
    const types = Object.fromEntries([...e.families.values()].map((f) => [f.name, f.type]));
    assert.deepEqual(types, METRIC_TYPES);
    for (const f of e.families.values()) assert.ok(f.help, `HELP of ${f.name}`);
    for (const [name, outcomes] of Object.entries(OUTCOMES)) {
      assert.deepEqual(samplesNamed(e, name).map((s) => s.labels.outcome), outcomes, `outcomes of ${name}`);
    }
    assert.ok(valueOf(e, 'process_resident_memory_bytes')! > 1024 * 1024, 'resident memory in bytes');
    const started = valueOf(e, 'process_start_time_seconds')!;
    assert.ok(started > testStart - 120 && started < Date.now() / 1000 + 5, `start time ${started} in seconds since the epoch`);
    const lag = valueOf(e, 'nodejs_eventloop_lag_seconds')!;
    assert.ok(lag >= 0 && lag < 10, `event-loop lag ${lag} in seconds`);
  });

  // Rule: the alerts docs/operations.md gives watch series a scrape has: each metric and label
  // value its rules name is in the exposition (a renamed outcome would leave an alert that never fires).
  test('every series the documented alert rules name is in a scrape', async () => {
    const e = await scrape(metered);
    const page = readFileSync(pathJoin(ROOT, 'docs', 'operations.md'), 'utf8');
    const rules = [...page.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!).find((y) => y.includes('alert:'));
    assert.ok(rules, 'the page has its alert rules');
    const named = [...rules.matchAll(/\b((?:auth|http|process|nodejs)_\w+)(?:\{(\w+)="(\w+)"\})?/g)];
    assert.ok(named.length >= 5, `${named.length} series named`);
    for (const [, name, label, value] of named) {
      const labels = label === undefined ? {} : { [label]: value! };
      assert.ok(samplesNamed(e, name!).some((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v)), `${name}${label ? `{${label}="${value}"}` : ''} is scraped`);
    }
  });

  test('only GET (and HEAD): another method is a 405', async () => {
    assertFail(await metered.request('/metrics', { method: 'POST' }), 405, 'Method not allowed: use GET, HEAD');
  });

  test('each login, join, hasJoined and profiles call moves its outcome and its route and status by exactly one', async () => {
    const before = await scrape(metered);

    // Logins: 2 ok, 1 wrong password, guesses of another name until one is throttled (the 6th:
    // 5 are free; a later one only if a slow machine let the 1 s wait pass), 1 invalid.
    const token = (await login(metered, 'Alice', 'alice-pw')).accessToken as string;
    await login(metered, 'alice', 'alice-pw');
    assertFail(await metered.post('/auth', { login: 'Alice', password: 'wrong-pw' }), 401, 'Wrong login or password');
    let guesses = 0;
    for (;;) {
      const r = await metered.post('/auth', { login: 'Guesser', password: `guess-${guesses}` });
      if (r.status === 429) break;
      assertFail(r, 401, 'Wrong login or password');
      guesses++;
      assert.ok(guesses <= FREE_LOGIN_FAILURES + 3, 'a 429 soon after the free failures');
    }
    assert.ok(guesses >= FREE_LOGIN_FAILURES, `only ${guesses} failures were free`);
    assertFail(await metered.post('/auth', { login: 'x!', password: 'p' }), 400, 'Field "login" is not a valid player name');
    assertFail(await metered.post('/auth', { login: 'Locked', password: 'locked-pw' }), 403, 'This account is locked');

    // Joins: 1 ok, 1 with an unknown token, 1 invalid (answered false too).
    assert.equal(await join(metered, token, aliceUuid, 'metrics-server'), true);
    assert.equal(await join(metered, randomUUID(), aliceUuid, 'metrics-server'), false);
    assert.equal(await join(metered, token, 'nope', 's'), false);

    // hasJoined: 1 hit, 1 miss, 1 invalid.
    assert.equal(assertOk(await metered.post('/hasJoined', { username: 'Alice', serverID: 'metrics-server' })).userUUID, aliceUuid);
    assertFail(await metered.post('/hasJoined', { username: 'Alice', serverID: 'another-server' }), 404, 'Player has not joined this server');
    assertFail(await metered.post('/hasJoined', { username: 'Alice', serverID: '' }), 400, 'Field "serverID" must not be empty');

    // Look-ups: 1 ok, 1 partial (an entry not a name), 1 refused (not JSON): all answered 200.
    assertOk(await metered.post('/profiles', ['Alice']));
    assert.equal(assertOk(await metered.post('/profiles', ['Alice', 7])).length, 1);
    assert.deepEqual(assertOk(await metered.request('/profiles', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[' })), []);

    // Others: an unknown path with a query, a texture that is not there.
    assertFail(await metered.request('/no/such/path?secret=1'), 404, 'Unknown endpoint');
    assertFail(await metered.request(`/textures/${'ab'.repeat(32)}`), 404, 'Unknown texture');

    const after = await scrape(metered);
    const moved = mover(before, after);
    const outcomes = Object.fromEntries(Object.entries(OUTCOMES).map(([name, list]) => [name, Object.fromEntries(list.map((o) => [o, moved(name, { outcome: o })]))]));
    assert.deepEqual(outcomes, {
      auth_logins_total: { ok: 2, bad_credentials: 1 + guesses, locked: 1, throttled: 1, busy: 0, invalid: 1, error: 0 },
      auth_joins_total: { ok: 1, bad_token: 1, invalid: 1, error: 0 },
      auth_has_joined_total: { hit: 1, miss: 1, invalid: 1, error: 0 },
      auth_profiles_total: { ok: 1, partial: 1, refused: 1, error: 0 },
    });

    // Every request series that moved, and by how much (the earlier scrape is the /metrics one).
    const requests: Record<string, number> = {};
    for (const s of samplesNamed(after, 'http_requests_total')) {
      const n = moved('http_requests_total', s.labels);
      if (n !== 0) requests[`${s.labels.route} ${s.labels.status}`] = n;
    }
    assert.deepEqual(requests, {
      '/metrics 200': 1,
      '/auth 200': 2,
      '/auth 401': 1 + guesses,
      '/auth 429': 1,
      '/auth 400': 1,
      '/auth 403': 1,
      '/join 200': 3,
      '/hasJoined 200': 1,
      '/hasJoined 404': 1,
      '/hasJoined 400': 1,
      '/profiles 200': 3,
      'unmatched 404': 1,
      '/textures/:hash 404': 1,
    });
    for (const s of samplesNamed(after, 'http_requests_total')) {
      assert.ok(ROUTES.has(s.labels.route!), `route label ${JSON.stringify(s.labels.route)} is a pattern`);
      assert.deepEqual(Object.keys(s.labels).sort(), ['route', 'status']);
    }

    // The histogram: valid, and it counted every request of its route.
    const [was, now] = [histogram(before, 'http_request_duration_seconds'), histogram(after, 'http_request_duration_seconds')];
    const of = (series: typeof now, route: string) => series.find((s) => s.labels.route === route) ?? { count: 0, sum: 0 };
    for (const s of now) assert.ok(ROUTES.has(s.labels.route!), `histogram route ${JSON.stringify(s.labels.route)} is a pattern`);
    assert.deepEqual(
      ['/auth', '/join', '/hasJoined', '/textures/:hash', 'unmatched'].map((r) => of(now, r).count - of(was, r).count),
      [6 + guesses, 3, 3, 1, 1],
    );
    assert.ok(of(now, '/auth').sum > of(was, '/auth').sum, 'the logins took some time');
    assert.equal(valueOf(after, 'auth_scrypt_running'), 0, 'no hash runs at rest');
    assert.equal(valueOf(after, 'auth_scrypt_queue_length'), 0, 'no login waits at rest');
  });

  test('a login refused because every hash slot is taken counts as busy (--hash-concurrency 1 --hash-queue 0)', async () => {
    const before = await scrape(busy);
    const answers: Timed[] = [];
    // Logins of four players at once on connections of their own (a name is checked once at a
    // time, so it takes four names to want four slots): one hashes, the rest find no slot. Up to
    // 5 rounds, in case the machine served one round one at a time.
    for (let round = 0; round < 5 && !answers.some((a) => a.status === 503); round++) {
      answers.push(...(await Promise.all(BUSY_NAMES.map((login) => timedPost(busy.port, '/auth', { login, password: 'busy-password' })))));
    }
    const count = (status: number) => answers.filter((a) => a.status === status).length;
    assert.equal(count(200) + count(503), answers.length, `only 200 and 503: ${answers.map((a) => a.status)}`);
    assert.ok(count(503) > 0, 'some login found the hash slot taken');
    const after = await scrape(busy);
    const moved = mover(before, after);
    assert.deepEqual(
      OUTCOMES.auth_logins_total!.map((o) => [o, moved('auth_logins_total', { outcome: o })]),
      [['ok', count(200)], ['bad_credentials', 0], ['locked', 0], ['throttled', 0], ['busy', count(503)], ['invalid', 0], ['error', 0]],
    );
    assert.equal(moved('http_requests_total', { route: '/auth', status: '503' }), count(503));
    assert.equal(moved('http_requests_total', { route: '/auth', status: '200' }), count(200));
    assert.equal(moved('http_request_duration_seconds_count', { route: '/auth' }), answers.length);
  });
});

describe('with --metrics and --api-key', () => {
  test('/metrics needs the key: 401 without it or with a wrong one, 200 as Bearer or ?key=', async () => {
    assertFail(await keyed.request('/metrics'), 401, 'Missing or wrong API key');
    assertFail(await keyed.request('/metrics', { headers: { authorization: `Bearer ${KEY}x` } }), 401, 'Missing or wrong API key');
    assertFail(await keyed.request(`/metrics?key=${KEY}x`), 401, 'Missing or wrong API key');
    const bearer = await scrape(keyed, '/metrics', { headers: { authorization: `Bearer ${KEY}` } });
    assert.equal(valueOf(bearer, 'http_requests_total', { route: '/metrics', status: '401' }), 3, 'the refusals are counted under their route');
    assert.equal(valueOf(bearer, 'http_requests_total', { route: 'unmatched', status: '401' }), undefined, 'not as unmatched');
    const inQuery = await scrape(keyed, `/metrics?key=${KEY}`);
    assert.equal(valueOf(inQuery, 'http_requests_total', { route: '/metrics', status: '200' }), 1);
  });

  test('/health stays open without the key', async () => {
    assert.deepEqual(assertOk(await keyed.request('/health')), { status: 'ok' });
  });
});

// Rule: the Yggdrasil API's requests are counted under a route label of each endpoint's pattern,
// never the raw path (a UUID, a name, a server id), and no token reaches the scrape.
describe('with --metrics and --yggdrasil', () => {
  test('each endpoint called counts under its own route pattern; no UUID, name or token in the scrape', async () => {
    const keyFile = pathJoin(tmp.dir, 'ygg-metrics.pem');
    writeFileSync(keyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const ygg = await startServer(['--db', pathJoin(tmp.dir, 'ygg-metrics.db'), '--metrics', '--yggdrasil', '--yggdrasil-key', keyFile]);
    try {
      const uuid = randomUUID().replaceAll('-', '');
      const token = randomUUID().replaceAll('-', '');
      const serverId = randomUUID().replaceAll('-', '');
      assert.equal((await ygg.request('/yggdrasil/')).status, 200);
      assert.equal((await ygg.request(`/yggdrasil/sessionserver/session/minecraft/profile/${uuid}?unsigned=false`)).status, 204);
      assert.equal((await ygg.request(`/yggdrasil/sessionserver/session/minecraft/hasJoined?username=Nobody_1&serverId=${serverId}`)).status, 204);
      const post = (path: string, body: unknown) => ygg.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal((await post('/yggdrasil/authserver/validate', { accessToken: token })).status, 403);
      const text = (await ygg.request('/metrics')).text;
      const scraped = parseExposition(text);
      for (const [route, status] of [
        ['/yggdrasil/', '200'],
        ['/yggdrasil/sessionserver/session/minecraft/profile/:uuid', '204'],
        ['/yggdrasil/sessionserver/session/minecraft/hasJoined', '204'],
        ['/yggdrasil/authserver/validate', '403'],
      ]) {
        assert.equal(valueOf(scraped, 'http_requests_total', { route: route!, status: status! }), 1, `${route} ${status}\n${text}`);
      }
      for (const secret of [uuid, token, 'Nobody_1', serverId]) assert.ok(!text.includes(secret), `${secret} in the scrape`);
    } finally {
      await ygg.stop();
    }
  });
});
