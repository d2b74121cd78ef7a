// Players on their own: the account page's API (--account-page), end to end on real SQLite files (on PostgreSQL under npm run test:postgres).
// Off unless switched on (every /account path 404); the page as page.ts renders it, under its
// Content-Security-Policy and other headers; sign-up closed, by invite (single-use by default,
// --uses, expiry, revocation, one use cannot make two players at once) or open, with random or
// offline-mode UUIDs; registrations limited an address (5 by default) and in all (429 with
// Retry-After; --trust-proxy names the address); sign-in is /auth's own login (the throttle, the
// lock, --address-login-limit are shared, an unknown name takes a wrong password's time);
// signed-in calls need the player's Bearer token, and no answer sets a cookie; a password change
// ends the other sessions and the join but keeps this token; skins and capes go through the admin
// API's checks; sign-out everywhere; reset links from the CLI and the admin API work once, within
// --reset-ttl (an hour by default), and a new one voids the old; invite and reset codes are kept
// only as their SHA-256. None of it needs the API key.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { renderPage } from '../../src/account/page.ts';
import { DEFAULT_MIN_PASSWORD_CHARS } from '../../src/cli/defaults.ts';
import { addUser, runCli, startServer, startServerOnFreePort, tempDir, withServer } from '../helpers/process.ts';
import type { Reply, RunningServer } from '../helpers/process.ts';
import { encodePng, padTo, sha } from '../helpers/png.ts';
import { storedRows, storedTables, testDb } from '../helpers/test-db.ts';
import { UUID_DASHED, assertFail, assertOk, sleep } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'account.db');
const openDb = await testDb(tmp.dir, 'open.db');
const limitedDb = await testDb(tmp.dir, 'limited.db');
const untrustedDb = await testDb(tmp.dir, 'untrusted.db');
const limitsDb = await testDb(tmp.dir, 'registration-limits.db');
const defaultLimitsDb = await testDb(tmp.dir, 'default-limits.db');
/** The database as the CLI names it: a PostgreSQL URL with its password masked. */
const shownDb = db.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1********@');
const KEY = 'account-test-api-key-0123456789';
const ADMIN = 'account-test-admin-token-012345';
const MANY = ['--registrations-per-address', '1000', '--registrations-per-hour', '1000'];
const SIGN_IN = 'Sign in again';
const BAD_INVITE = 'This invite code is not valid';
const BAD_RESET = 'This reset link is not valid';
/** The limited server's --server-name (from MCAUTH_SERVER_NAME): owner input that must reach the page as text. */
const SERVER_NAME = `Craft <b>"&"</b> 'Co'`;

let off: RunningServer; // no --account-page, same database as `invites`
let closed: RunningServer; // --account-page, registration off (the default), same database
let invites: RunningServer; // --registration invite, --api-key, --admin-token, --public-url (its own address)
let open: RunningServer; // --registration open --registration-uuid offline, no --public-url
let limited: RunningServer; // --registration open, --trust-proxy, --address-login-limit 3, --reset-ttl 1, MCAUTH_SERVER_NAME
let untrusted: RunningServer; // --registration open, 1 an address, no --trust-proxy, no relay (the test calls from 127.0.0.1)
let pub = ''; // the invites server's address, its --public-url

before(async () => {
  await addUser(db, 'Veteran', 'veteran-password');
  [off, closed, invites, open, limited, untrusted] = await Promise.all([
    startServer(['--db', db]),
    startServer(['--db', db, '--account-page']),
    // Its public URL names its own port: started again on another if that port is taken meanwhile.
    startServerOnFreePort((port) => ['--db', db, '--account-page', '--registration', 'invite', ...MANY, '--api-key', KEY, '--admin-token', ADMIN, '--public-url', `http://127.0.0.1:${port}`]),
    startServer(['--db', openDb, '--account-page', '--registration', 'open', '--registration-uuid', 'offline', ...MANY]),
    startServer(
      ['--db', limitedDb, '--account-page', '--registration', 'open', ...MANY, '--trust-proxy', '--address-login-limit', '3'],
      { MCAUTH_RESET_TTL: '1', MCAUTH_ADMIN_TOKEN: ADMIN, MCAUTH_SERVER_NAME: SERVER_NAME },
    ),
    startServer(['--db', untrustedDb, '--account-page', '--registration', 'open', '--registrations-per-address', '1', '--relay', '']),
  ]);
  pub = invites.url;
});

after(async () => {
  await Promise.all([off, closed, invites, open, limited, untrusted].map((s) => s?.stop()));
  tmp.cleanup();
});

interface CallOptions {
  /** An access token, sent as Bearer. */
  token?: string;
  /** A Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** A call of the account API, `{base}/account/PATH`, with no API key. */
function call(s: RunningServer, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  let body: Buffer | string | undefined;
  if (Buffer.isBuffer(opts.body)) body = opts.body;
  else if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  return s.request(`/account/${path}`, { method, headers, body });
}

const post = (s: RunningServer, path: string, body: unknown, opts: CallOptions = {}): Promise<Reply> => call(s, 'POST', path, { ...opts, body });

/** The game endpoints, with the API key where the server wants it. */
function game(s: RunningServer, path: string, body: unknown): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(s === invites ? { authorization: `Bearer ${KEY}` } : {}) };
  return s.request(path, { method: 'POST', headers, body: JSON.stringify(body) });
}

function admin(s: RunningServer, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return s.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** Signs up and returns the answer's result (asserting success). */
async function register(s: RunningServer, name: string, password = `${name}-password`, more: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<any> {
  return assertOk(await post(s, 'register', { name, password, ...more }, { headers }));
}

async function signIn(s: RunningServer, name: string, password = `${name}-password`): Promise<string> {
  return assertOk(await post(s, 'login', { name, password })).accessToken;
}

const joins = async (s: RunningServer, token: string, uuid: string, serverID = 'account-test'): Promise<boolean> => assertOk(await game(s, '/join', { accessToken: token, userUUID: uuid, serverID }));
const hasJoined = (s: RunningServer, name: string, serverID = 'account-test'): Promise<Reply> => game(s, '/hasJoined', { username: name, serverID });

/** A new invite made with the CLI on the invites server's database: its code, id and printed text. */
async function inviteCode(extra: string[] = [], env: Record<string, string> = {}): Promise<{ code: string; id: string; stdout: string }> {
  const r = await runCli(['invite', 'create', '--db', db, ...extra], { env });
  assert.equal(r.code, 0, r.stderr);
  const m = /^Invite ([0-9a-f]{12}) .*\nCode: ([0-9a-f]{32})\n/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return { id: m[1]!, code: m[2]!, stdout: r.stdout };
}

/** A reset link from the CLI: the code it carries. */
async function resetCode(database: string, name: string, env: Record<string, string> = {}): Promise<string> {
  const r = await runCli(['user', 'reset-link', name, '--db', database], { env });
  assert.equal(r.code, 0, r.stderr);
  const m = /#reset=([0-9a-f]{32})\n|\n([0-9a-f]{32})\n/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return m[1] ?? m[2]!;
}

/** The UUID an offline-mode server gives a name: version 3 of "OfflinePlayer:<name>". */
function offlineUuid(name: string): string {
  const md5 = createHash('md5').update(`OfflinePlayer:${name}`).digest();
  md5[6] = (md5[6]! & 0x0f) | 0x30;
  md5[8] = (md5[8]! & 0x3f) | 0x80;
  const hex = md5.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A code's digest as src/crypto/token.ts must make it, computed here on its own: SHA-256, lower-case hex. */
const sha256Hex = (code: string): string => createHash('sha256').update(code, 'utf8').digest('hex');

async function assertNowhere(database: string, code: string): Promise<string[]> {
  const bytes = Buffer.from(code, 'hex');
  const forms = [code.toLowerCase(), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')];
  const texts: string[] = [];
  const onFile = !/^postgres(ql)?:/.test(database);
  const tables = [...(onFile ? ['sqlite_master'] : []), ...(await storedTables(database))];
  assert.ok(tables.includes('invites') && tables.includes('reset_codes'), tables.join(', '));
  for (const table of tables) {
    for (const row of await storedRows(database, `SELECT * FROM "${table.replaceAll('"', '""')}"`)) {
      for (const [column, value] of Object.entries(row)) {
        const where = `${table}.${column}`;
        if (typeof value === 'string') {
          texts.push(value);
          const lower = value.toLowerCase();
          for (const form of forms) assert.ok(!lower.includes(form.toLowerCase()) && !value.includes(form), `${where} holds the code ${code}`);
        } else if (value instanceof Uint8Array) {
          const blob = Buffer.from(value);
          assert.ok(!blob.includes(bytes) && !blob.toString('latin1').toLowerCase().includes(code), `${where} holds the code ${code}`);
        }
      }
    }
  }
  for (const file of onFile ? [database, `${database}-wal`].filter((f) => existsSync(f)) : []) {
    const raw = readFileSync(file);
    assert.ok(!raw.includes(bytes) && !raw.toString('latin1').toLowerCase().includes(code), `${file} holds the code ${code}`);
  }
  return texts;
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('off unless --account-page', () => {
  test('without --account-page every /account path is 404, and nothing happens', async () => {
    const token = await signIn(closed, 'Veteran', 'veteran-password');
    const calls: [string, string, unknown][] = [
      ['GET', '', undefined],
      ['POST', 'register', { name: 'Sneaky', password: 'sneaky-password' }],
      ['POST', 'login', { name: 'Veteran', password: 'veteran-password' }],
      ['GET', 'me', undefined],
      ['POST', 'password', { current: 'veteran-password', new: 'taken-over-1' }],
      ['PUT', 'skin', encodePng(64, 64)],
      ['DELETE', 'skin', undefined],
      ['PUT', 'cape', encodePng(64, 32)],
      ['DELETE', 'cape', undefined],
      ['POST', 'logout-all', undefined],
      ['POST', 'reset', { code: 'x', password: 'taken-over-1' }],
      ['GET', 'nope', undefined],
    ];
    for (const [method, path, body] of calls) {
      const r = path === '' ? await off.request('/account', { method }) : await call(off, method, path, { token, body });
      assertFail(r, 404, 'Unknown endpoint');
    }
    assert.equal(assertOk(await call(closed, 'GET', 'me', { token })).name, 'Veteran', 'the session lives on');
    assert.match(await signIn(closed, 'Veteran', 'veteran-password'), UUID_DASHED, 'the password is unchanged');
    assertFail(await post(closed, 'login', { name: 'Sneaky', password: 'sneaky-password' }), 401, 'Wrong login or password');
  });

  // Rule: the page comes over HTTP, on either runtime, as src/account/page.ts renders it, with
  // all of its headers: a Content-Security-Policy under which only the page's own inline script
  // and style apply (named by their SHA-256: no 'unsafe-inline', no other origin), no framing, no
  // Referer, no sniffing, no caching.
  test('with it, GET {base}/account is the page: HTML, with no API key, and its security headers', async () => {
    for (const [s, registration] of [[closed, 'off'], [invites, 'invite']] as const) {
      const page = await s.request('/account');
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /^<!doctype html>/i);
      const rendered = renderPage({ registration, minPasswordLength: DEFAULT_MIN_PASSWORD_CHARS, basePath: '', serverName: '' });
      assert.equal(page.text, rendered.html, 'the page as rendered');
      for (const [name, value] of Object.entries(rendered.headers)) assert.equal(page.headers.get(name), value, name);
      assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(page.headers.get('cache-control'), 'no-store');
      // The policy read on its own, whatever page.ts says: the hashes are of the page's one
      // script and one style as served.
      const csp = page.headers.get('content-security-policy') ?? '';
      const directives = csp.split(';').map((d) => d.trim().split(/\s+/));
      const policy = new Map(directives.map(([name, ...sources]) => [name!, sources]));
      assert.equal(policy.size, directives.length, `no directive twice: ${csp}`);
      assert.deepEqual(directives[0], ['default-src', "'none'"]);
      const inline = (tag: string): string[] => {
        assert.equal(page.text.split(`<${tag}`).length, 2, `one <${tag}>`);
        return Array.from(page.text.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g')), (m) => `'sha256-${createHash('sha256').update(m[1]!, 'utf8').digest('base64')}'`);
      };
      assert.deepEqual(policy.get('script-src'), inline('script'), `script-src: ${csp}`);
      assert.deepEqual(policy.get('style-src'), inline('style'), `style-src: ${csp}`);
      for (const source of [...policy.get('script-src')!, ...policy.get('style-src')!]) assert.match(source, /^'sha256-[A-Za-z0-9+/]{43}='$/);
      assert.deepEqual(policy.get('connect-src'), ["'self'"]);
      assert.deepEqual(policy.get('frame-ancestors'), ["'none'"]);
      for (const [name, sources] of policy) {
        for (const source of sources) assert.doesNotMatch(source, /^'unsafe-|^'strict-dynamic'$|\*|^[a-z][a-z0-9+.-]*:\/\/|^(https?|wss?|ftp):$|\.[a-z]/i, `${name} ${source}`);
      }
    }
  });
});

describe('--server-name', () => {
  // Rule: the page is titled with the server's name (here from MCAUTH_SERVER_NAME), escaped, and
  // its script and style, so its CSP, are the same as without one.
  test('names the server in the page\'s title and heading, escaped; the CSP is unchanged', async () => {
    const page = await limited.request('/account');
    assert.equal(page.status, 200, page.text);
    const rendered = renderPage({ registration: 'open', minPasswordLength: DEFAULT_MIN_PASSWORD_CHARS, basePath: '', serverName: SERVER_NAME });
    assert.equal(page.text, rendered.html, 'the page as rendered with the name');
    const shown = 'Your account on Craft &#60;b&#62;&#34;&#38;&#34;&#60;/b&#62; &#39;Co&#39;';
    assert.ok(page.text.includes(`<title>${shown}</title>`) && page.text.includes(`<h1>${shown}</h1>`), page.text.slice(0, 600));
    const unnamed = await closed.request('/account');
    assert.equal(page.headers.get('content-security-policy'), unnamed.headers.get('content-security-policy'));
  });
});

describe('registration', () => {
  test('off (the default): 403 "Registration is closed"; signing in still works', async () => {
    assertFail(await post(closed, 'register', { name: 'Newcomer', password: 'newcomer-password' }), 403, 'Registration is closed');
    assertFail(await post(closed, 'register', { name: 'Newcomer', password: 'newcomer-password', invite: (await inviteCode()).code }), 403, 'Registration is closed');
    assert.match(await signIn(closed, 'Veteran', 'veteran-password'), UUID_DASHED);
  });

  test('open: a new player is created and signed in; an invite field is ignored', async () => {
    const made = await register(open, 'Opener', 'opener-password', { invite: 'anything at all' });
    assert.deepEqual(Object.keys(made).sort(), ['accessToken', 'userUUID', 'username']);
    assert.equal(made.username, 'Opener');
    assert.match(made.accessToken, UUID_DASHED);
    assert.equal(await joins(open, made.accessToken, made.userUUID), true, 'the new token joins');
    assert.equal(assertOk(await hasJoined(open, 'opener')).userUUID, made.userUUID);
    const me = assertOk(await call(open, 'GET', 'me', { token: made.accessToken }));
    assert.match(me.lastLoginAt, ISO, 'signing up is a login');
    assert.equal(assertOk(await game(open, '/auth', { login: 'Opener', password: 'opener-password' })).userUUID, made.userUUID);
  });

  test('--registration-uuid offline: the UUID an offline-mode server derives from the name', async () => {
    const made = await register(open, 'Notch', 'notch-password');
    assert.equal(made.userUUID, offlineUuid('Notch'));
    assert.equal(made.userUUID, 'b50ad385-829d-3141-a216-7e7d7539ba7f');
    // Without the flag: random (version 4).
    assert.match((await register(limited, 'Randomly', 'random-password', {}, { 'x-forwarded-for': '10.9.9.9' })).userUUID, /^[0-9a-f]{8}-[0-9a-f]{4}-4/);
  });

  test('the name and password rules hold; unknown and missing fields are refused; nothing is created', async () => {
    const cases: [unknown, number, string][] = [
      [{ name: 'ab', password: 'long-enough' }, 400, 'Invalid name "ab": use 3 to 16 letters, digits and _'],
      [{ name: 'has space', password: 'long-enough' }, 400, 'Invalid name "has space": use 3 to 16 letters, digits and _'],
      [{ name: 'OPENER', password: 'long-enough' }, 409, 'The name "OPENER" is taken'],
      [{ name: 'Shorty', password: 'seven-7' }, 400, 'The password must be at least 8 characters'],
      [{ name: 'Shorty', password: 'x'.repeat(257) }, 400, 'The password must be at most 256 bytes'],
      [{ name: 'Shorty', password: 'long-enough', uuid: 'b50ad385829d3141a2167e7d7539ba7f' }, 400, 'Unknown field "uuid": this call takes name, password, invite'],
      [{ name: 'Shorty' }, 400, 'Field "password" is missing'],
      [{ name: 5, password: 'long-enough' }, 400, 'Field "name" must be a string'],
      [['Shorty'], 400, 'Request body must be a JSON object'],
      ['{"name":"Shorty","name":"Other","password":"long-enough"}', 400, 'Request body has the key "name" twice'],
    ];
    for (const [body, status, message] of cases) assertFail(await post(open, 'register', body), status, message);
    assertFail(await open.request('/account/register', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }), 415, 'Content-Type must be application/json');
    assertFail(await call(open, 'GET', 'register'), 405, 'Method not allowed: use POST');
    assertFail(await post(open, 'login', { name: 'Shorty', password: 'long-enough' }), 401, 'Wrong login or password');
  });

  test('invite: a code is needed; unknown, missing and used codes get one message', async () => {
    const { code } = await inviteCode();
    assertFail(await post(invites, 'register', { name: 'NoCode', password: 'nocode-password' }), 403, BAD_INVITE);
    assertFail(await post(invites, 'register', { name: 'NoCode', password: 'nocode-password', invite: 'AAAAAAAAAAAAAAAAAAAAAA' }), 403, BAD_INVITE);
    assertFail(await post(invites, 'register', { name: 'NoCode', password: 'nocode-password', invite: '' }), 403, BAD_INVITE);
    assertFail(await post(invites, 'register', { name: 'NoCode', password: 'nocode-password', invite: 5 }), 400, 'Field "invite" must be a string');
    // A refusal of the name or password takes no use.
    assertFail(await post(invites, 'register', { name: 'Veteran', password: 'invited-password', invite: code }), 409, 'The name "Veteran" is taken');
    assertFail(await post(invites, 'register', { name: 'Invited', password: 'short', invite: code }), 400, 'The password must be at least 8 characters');
    const made = await register(invites, 'Invited', 'invited-password', { invite: code });
    assert.equal(made.username, 'Invited');
    assertFail(await post(invites, 'register', { name: 'Second', password: 'second-password', invite: code }), 403, BAD_INVITE);
    assertFail(await post(open, 'login', { name: 'Second', password: 'second-password' }), 401, 'Wrong login or password');
    assert.equal(await signIn(invites, 'Invited', 'invited-password').then((t) => typeof t), 'string');
  });

  test('invite: two sign-ups with a one-use code at once: exactly one player is made', async () => {
    const { code } = await inviteCode();
    const [a, b] = await Promise.all([
      post(invites, 'register', { name: 'RaceA', password: 'race-a-password', invite: code }),
      post(invites, 'register', { name: 'RaceB', password: 'race-b-password', invite: code }),
    ]);
    assert.deepEqual([a.status, b.status].sort(), [200, 403], `${a.text} ${b.text}`);
    const lost = a.status === 403 ? a : b;
    assertFail(lost, 403, BAD_INVITE);
    const names = await Promise.all(['RaceA', 'RaceB'].map(async (n) => (await admin(invites, 'GET', `/admin/users/${n}`)).status));
    assert.deepEqual(names.sort(), [200, 404]);
  });

  test('invite: --uses N makes N players; --expires ends it; revoked by code or id; listed by id only', async () => {
    const three = await inviteCode(['--uses', '3']);
    for (const name of ['Trio1', 'Trio2', 'Trio3']) await register(invites, name, 'trio-password', { invite: three.code });
    assertFail(await post(invites, 'register', { name: 'Trio4', password: 'trio-password', invite: three.code }), 403, BAD_INVITE);

    const brief = await inviteCode(['--expires', '1']);
    const lasting = await inviteCode(['--expires', '3600']);
    await sleep(1200);
    assertFail(await post(invites, 'register', { name: 'Late', password: 'late-password', invite: brief.code }), 403, BAD_INVITE);

    const list = await runCli(['invite', 'list', '--db', db]);
    assert.match(list.stdout, new RegExp(`^${lasting.id} {2}1 use left {2}expires `, 'm'));
    assert.ok(!list.stdout.includes(lasting.code), 'the list never shows a code');
    assert.ok(!list.stdout.includes(brief.id) && !list.stdout.includes(three.id), 'expired and used-up invites are not listed');

    const byId = await runCli(['invite', 'revoke', lasting.id, '--db', db]);
    assert.equal(byId.stdout, `Revoked invite ${lasting.id}\nDatabase: ${shownDb}\n`);
    assertFail(await post(invites, 'register', { name: 'Revoked', password: 'revoked-password', invite: lasting.code }), 403, BAD_INVITE);
    const another = await inviteCode();
    assert.equal((await runCli(['invite', 'revoke', another.code, '--db', db])).stdout, `Revoked invite ${another.id}\nDatabase: ${shownDb}\n`);
    assertFail(await post(invites, 'register', { name: 'Revoked', password: 'revoked-password', invite: another.code }), 403, BAD_INVITE);
    const again = await runCli(['invite', 'revoke', another.id, '--db', db]);
    assert.deepEqual([again.code, again.stderr], [1, `No invite "${another.id}"\nDatabase: ${shownDb}\n`]);
  });

  test('invite create prints the page link with the code in its fragment when a public URL is set', async () => {
    const { code, stdout } = await inviteCode([], { MCAUTH_PUBLIC_URL: pub, MCAUTH_BASE_PATH: '/mc' });
    assert.ok(stdout.includes(`\nLink: ${pub}/mc/account#invite=${code}\n`), stdout);
    assert.ok(!(await inviteCode()).stdout.includes('Link:'), 'no link without a public URL');
  });

  test('the admin API makes, lists and revokes invites', async () => {
    const made = assertOk(await admin(invites, 'POST', '/admin/invites', { uses: 2, expiresIn: 600 }));
    assert.deepEqual(Object.keys(made).sort(), ['code', 'createdAt', 'expiresAt', 'id', 'link', 'usesLeft']);
    assert.equal(made.usesLeft, 2);
    assert.equal(made.link, `${pub}/account#invite=${made.code}`);
    assert.ok(Math.abs(Date.parse(made.expiresAt) - Date.parse(made.createdAt) - 600_000) < 1, `${made.createdAt} ${made.expiresAt}`);
    await register(invites, 'ViaAdmin', 'via-admin-password', { invite: made.code });
    const listed = assertOk(await admin(invites, 'GET', '/admin/invites')).invites.find((i: any) => i.id === made.id);
    assert.deepEqual(listed, { id: made.id, usesLeft: 1, createdAt: made.createdAt, expiresAt: made.expiresAt });
    assert.deepEqual(assertOk(await admin(invites, 'DELETE', `/admin/invites/${made.id}`)), { id: made.id });
    assertFail(await post(invites, 'register', { name: 'ViaAdmin2', password: 'via-admin-password', invite: made.code }), 403, BAD_INVITE);
    assertFail(await admin(invites, 'DELETE', `/admin/invites/${made.id}`), 404, `No invite "${made.id}"`);
    const single = assertOk(await admin(invites, 'POST', '/admin/invites', {}));
    assert.equal(single.usesLeft, 1, 'single-use by default');
    assert.equal(Date.parse(single.expiresAt) - Date.parse(single.createdAt), 7 * 24 * 3600 * 1000, 'a week by default');
    assertFail(await admin(invites, 'DELETE', `/admin/invites/${single.code}`), 400, "Give the invite's id (12 hex digits, as the list shows it), not its code");
    assert.deepEqual(assertOk(await admin(invites, 'DELETE', `/admin/invites/${single.id}`)), { id: single.id });
    assertFail(await admin(invites, 'POST', '/admin/invites', { uses: 0 }), 400, 'The uses must be a whole number from 1 to 10000');
    assertFail(await admin(invites, 'POST', '/admin/invites', { uses: '2' }), 400, 'Field "uses" must be a number');
    assertFail(await admin(invites, 'POST', '/admin/invites', { expiresIn: 1.5 }), 400, 'The expiry must be a whole number of seconds from 1 to 315360000');
    assertFail(await admin(invites, 'POST', '/admin/invites', { use: 2 }), 400, 'Unknown field "use": this call takes uses, expiresIn');
    assertFail(await invites.request('/admin/invites'), 401, 'Missing or wrong admin token');
  });
});

describe('registration limits', () => {
  test('an address a window, then 429 with Retry-After; refusals of form are free; then the limit of all addresses', async () => {
    // Its own server: no other test's sign-up takes from its counts.
    await withServer(['--db', limitsDb, '--account-page', '--registration', 'open', '--registrations-per-address', '2', '--registrations-per-hour', '4', '--trust-proxy'], async (limits) => {
      const from = (address: string) => ({ 'x-forwarded-for': `203.0.113.7, ${address}` });
      await register(limits, 'AddrZero', 'addr-password', {}, from('10.9.9.9'));
      await register(limits, 'AddrOne', 'addr-password', {}, from('10.0.0.1'));
      await register(limits, 'AddrTwo', 'addr-password', {}, from('10.0.0.1'));
      const over = await post(limits, 'register', { name: 'AddrThree', password: 'addr-password' }, { headers: from('10.0.0.1') });
      assert.equal(over.status, 429, over.text);
      assert.match(over.body.error, /^Too many registrations from this address; try again in \d+ s$/);
      const wait = Number(over.headers.get('retry-after'));
      assert.ok(wait > 3500 && wait <= 3600, `Retry-After: ${wait}`);
      assert.equal(Number(/in (\d+) s/.exec(over.body.error)![1]), wait);
      // Refusals of the request's form do not count; a taken name does.
      assertFail(await post(limits, 'register', { name: 'AddrThree', password: 'short' }, { headers: from('10.0.0.2') }), 400, 'The password must be at least 8 characters');
      assertFail(await post(limits, 'register', { name: 'x', password: 'addr-password' }, { headers: from('10.0.0.2') }), 400, 'Invalid name "x": use 3 to 16 letters, digits and _');
      assertFail(await post(limits, 'register', { name: 'AddrOne', password: 'addr-password' }, { headers: from('10.0.0.2') }), 409, 'The name "AddrOne" is taken');
      // 10.9.9.9, 10.0.0.1 twice and the taken name: the 4 of the hour are gone, from any address.
      const all = await post(limits, 'register', { name: 'AddrFour', password: 'addr-password' }, { headers: from('10.0.0.3') });
      assert.equal(all.status, 429, all.text);
      assert.match(all.body.error, /^Too many registrations this hour: sign up with an invite code, or try again in \d+ s$/);
      assert.ok(Number(all.headers.get('retry-after')) > 0);
      assertFail(await post(limits, 'login', { name: 'AddrFour', password: 'addr-password' }), 401, 'Wrong login or password');
      // Past the hour's limit of all, open sign-up takes an invite code instead of closing: a live
      // one passes (and is used up), a wrong one is refused, and the limit per address still holds.
      const created = await runCli(['invite', 'create', '--db', limitsDb]);
      assert.equal(created.code, 0, created.stderr);
      const code = /[0-9a-f]{32}/.exec(created.stdout)![0];
      assertFail(await post(limits, 'register', { name: 'AddrFour', password: 'addr-password', invite: 'not-a-code' }, { headers: from('10.0.0.3') }), 403, 'This invite code is not valid');
      await register(limits, 'AddrFour', 'addr-password', { invite: code }, from('10.0.0.3'));
      assertFail(await post(limits, 'register', { name: 'AddrFive', password: 'addr-password', invite: code }, { headers: from('10.0.0.4') }), 403, 'This invite code is not valid');
      const perAddress = await post(limits, 'register', { name: 'AddrSix', password: 'addr-password', invite: code }, { headers: from('10.0.0.1') });
      assert.match(perAddress.body.error, /^Too many registrations from this address/);
    });
  });

  // Rule: without --registrations-per-address, an address signs up 5 times an hour, no more.
  test('by default 5 sign-ups an address an hour: the 6th gets 429 with Retry-After', async () => {
    // --relay '': the test calls from 127.0.0.1, a relay by default, which no per-address limit counts.
    await withServer(['--db', defaultLimitsDb, '--account-page', '--registration', 'open', '--relay', ''], async (plain) => {
      for (let i = 1; i <= 5; i++) await register(plain, `Default${i}`, 'default-password');
      const over = await post(plain, 'register', { name: 'Default6', password: 'default-password' });
      assert.equal(over.status, 429, over.text);
      assert.match(over.body.error, /^Too many registrations from this address; try again in \d+ s$/);
      const wait = Number(over.headers.get('retry-after'));
      assert.ok(wait > 3500 && wait <= 3600, `Retry-After: ${wait}`);
      assertFail(await post(plain, 'login', { name: 'Default6', password: 'default-password' }), 401, 'Wrong login or password');
    });
  });

  test('without --trust-proxy, X-Forwarded-For is ignored: every call counts for the peer', async () => {
    await register(untrusted, 'Peer1', 'peer-password', {}, { 'x-forwarded-for': '10.1.1.1' });
    const r = await post(untrusted, 'register', { name: 'Peer2', password: 'peer-password' }, { headers: { 'x-forwarded-for': '10.1.1.2' } });
    assert.equal(r.status, 429, r.text);
    assert.match(r.body.error, /^Too many registrations from this address/);
  });
});

// Each test uses names of its own, or a server of its own (--address-login-limit): they run at once.
describe('signing in', { concurrency: true }, () => {
  test('login answers as /auth does, with a token that joins', async () => {
    const r = assertOk(await post(invites, 'login', { name: 'veteran', password: 'veteran-password' }));
    assert.deepEqual(Object.keys(r).sort(), ['accessToken', 'userUUID', 'username']);
    assert.equal(r.username, 'Veteran');
    assert.equal(await joins(invites, r.accessToken, r.userUUID), true);
    assertFail(await post(invites, 'login', { name: 'Veteran', password: 'wrong-password' }), 401, 'Wrong login or password');
    assertFail(await post(invites, 'login', { name: 'Nobody', password: 'wrong-password' }), 401, 'Wrong login or password');
    assertFail(await post(invites, 'login', { name: 'no', password: 'x' }), 400, 'Field "name" is not a valid player name');
    assertFail(await post(invites, 'login', { login: 'Veteran', password: 'veteran-password' }), 400, 'Unknown field "login": this call takes name, password');
  });

  // Rule: an unknown name costs a password check, as a wrong password does, so the time of an
  // answer does not tell which names exist. Loose on purpose, for a loaded 2-core machine:
  // without waiting a check's time an unknown name answers some 100 times faster.
  test('an unknown name takes about as long as a wrong password', async () => {
    await register(open, 'Timed', 'timed-password');
    const time = async (name: string): Promise<number> => {
      const start = performance.now();
      assertFail(await post(open, 'login', { name, password: 'wrong-password' }), 401, 'Wrong login or password');
      return performance.now() - start;
    };
    await time('GhostWarmUp'); // the first unknown name may be the one that waits for the first timed check
    const unknown: number[] = [];
    const wrong: number[] = [];
    // In turns, so that a burst of load falls on both. A new unknown name each time; "Timed"
    // fails 5 times, under the throttle (it counts failures a name, and makes the 6th wait).
    for (let i = 0; i < 5; i++) {
      unknown.push(await time(`Ghost${i}`));
      wrong.push(await time('Timed'));
    }
    const median = (ms: number[]): number => [...ms].sort((a, b) => a - b)[2]!;
    const shown = (ms: number[]): string => ms.map((t) => t.toFixed(1)).join(', ');
    assert.ok(median(unknown) >= median(wrong) / 2, `unknown names ${shown(unknown)} ms; a wrong password ${shown(wrong)} ms`);
  });

  test('failed logins here throttle /auth too, as one count', async () => {
    await register(open, 'Guessed', 'guessed-password');
    // Six: the wait after the 5th (1 s) passes while its answer is held to the failed-login floor.
    for (let i = 0; i < 6; i++) assertFail(await post(open, 'login', { name: 'Guessed', password: `wrong-${i}-password` }), 401, 'Wrong login or password');
    const auth = await game(open, '/auth', { login: 'Guessed', password: 'guessed-password' });
    assert.equal(auth.status, 429, auth.text);
    assert.match(auth.body.error, /^Too many failed logins for this name; try again in \d+ s$/);
    // Another password: the one just refused would be checked on a retry, as a player retrying behind a relay is (this host is one).
    assert.equal((await post(open, 'login', { name: 'guessed', password: 'wrong-6-password' })).status, 429, 'and here');
  });

  test('a locked player with the right password gets 403; their token no longer signs in', async () => {
    const made = await register(invites, 'Lockee', 'lockee-password', { invite: (await inviteCode()).code });
    assertOk(await admin(invites, 'POST', '/admin/users/Lockee/lock', { reason: 'griefing' }));
    assertFail(await post(invites, 'login', { name: 'Lockee', password: 'lockee-password' }), 403, 'This account is locked: griefing');
    assertFail(await post(invites, 'login', { name: 'Lockee', password: 'wrong-password' }), 401, 'Wrong login or password');
    assertFail(await call(invites, 'GET', 'me', { token: made.accessToken }), 401, SIGN_IN);
  });

  test('--address-login-limit counts /auth and this login together', async () => {
    const at = { 'x-forwarded-for': '10.7.7.7' };
    const auth = () => limited.request('/auth', { method: 'POST', headers: { 'content-type': 'application/json', ...at }, body: JSON.stringify({ login: 'Nobody', password: 'nobody-password' }) });
    assert.equal((await auth()).status, 401);
    assert.equal((await post(limited, 'login', { name: 'Nobody', password: 'nobody-password' }, { headers: at })).status, 401);
    assert.equal((await auth()).status, 401);
    const over = await post(limited, 'login', { name: 'Nobody', password: 'nobody-password' }, { headers: at });
    assert.equal(over.status, 429, over.text);
    assert.match(over.body.error, /^Too many logins from this address; try again in \d+ s$/);
    assert.equal((await auth()).status, 429);
  });
});

describe('signed in', () => {
  let alice: { token: string; uuid: string };
  before(async () => {
    const made = await register(invites, 'Alice', 'alice-password', { invite: (await inviteCode()).code });
    alice = { token: made.accessToken, uuid: made.userUUID };
  });

  test('every signed-in call needs a live Bearer token: 401 "Sign in again" otherwise, and nothing happens', async () => {
    const calls: [string, string, unknown][] = [
      ['GET', 'me', undefined],
      ['POST', 'password', { current: 'alice-password', new: 'taken-over-1' }],
      ['PUT', 'skin', encodePng(64, 64)],
      ['DELETE', 'skin', undefined],
      ['PUT', 'cape', encodePng(64, 32)],
      ['DELETE', 'cape', undefined],
      ['POST', 'logout-all', undefined],
    ];
    const wrong: [string, Record<string, string>][] = [
      ['no header', {}],
      ['an unknown token', { authorization: 'Bearer 00000000-0000-4000-8000-000000000000' }],
      ['the token without a scheme', { authorization: alice.token }],
      ['Basic', { authorization: `Basic ${Buffer.from(`Alice:${alice.token}`).toString('base64')}` }],
      ['the API key', { authorization: `Bearer ${KEY}` }],
      ['a token over 64 characters', { authorization: `Bearer ${'a'.repeat(65)}` }],
      ['the token as a cookie', { cookie: `token=${alice.token}` }],
    ];
    for (const [label, headers] of wrong) {
      for (const [method, path, body] of calls) {
        const r = await call(invites, method, path, { headers: { ...headers, ...(Buffer.isBuffer(body) ? { 'content-type': 'image/png' } : {}) }, body });
        assertFail(r, 401, SIGN_IN);
        assert.equal(r.headers.get('www-authenticate'), 'Bearer', `${label}: ${method} ${path}`);
      }
    }
    const me = assertOk(await call(invites, 'GET', 'me', { token: alice.token }));
    assert.deepEqual([me.skinUrl, me.capeUrl], [null, null]);
    assert.equal(await joins(invites, alice.token, alice.uuid), true, 'the session lives on');
  });

  test('GET me: the player as they are', async () => {
    const me = assertOk(await call(invites, 'GET', 'me', { token: alice.token }));
    assert.deepEqual(Object.keys(me), ['name', 'uuid', 'isAlex', 'skinUrl', 'capeUrl', 'createdAt', 'lastLoginAt']);
    assert.deepEqual({ ...me, createdAt: '', lastLoginAt: '' }, { name: 'Alice', uuid: alice.uuid, isAlex: false, skinUrl: null, capeUrl: null, createdAt: '', lastLoginAt: '' });
    assert.match(me.createdAt, ISO);
    assert.match(me.lastLoginAt, ISO);
    assertFail(await call(invites, 'POST', 'me', { token: alice.token }), 405, 'Method not allowed: use GET');
  });

  test('skins and capes: uploaded with the admin API\'s checks, served, and removed', async () => {
    const skin = encodePng(64, 64, { seed: 12 });
    const put = (kind: string, body: Buffer, query = '', headers: Record<string, string> = { 'content-type': 'image/png' }) => call(invites, 'PUT', kind + query, { token: alice.token, body, headers });
    const withSkin = assertOk(await put('skin', skin, '?model=slim'));
    assert.deepEqual([withSkin.skinUrl, withSkin.isAlex], [`${pub}/textures/${sha(skin)}`, true]);
    assert.ok(Buffer.from(await (await fetch(withSkin.skinUrl)).arrayBuffer()).equals(skin), 'served as uploaded');
    const auth = assertOk(await game(invites, '/auth', { login: 'Alice', password: 'alice-password' }));
    assert.deepEqual([auth.skinUrl, auth.isAlex], [withSkin.skinUrl, true], 'the game sees it');
    const cape = encodePng(64, 32, { seed: 13 });
    assert.equal(assertOk(await put('cape', cape, '', {})).capeUrl, `${pub}/textures/${sha(cape)}`);
    const refusals: [string, Buffer, string, Record<string, string>, number, string][] = [
      ['a skin of the wrong size', encodePng(32, 32), '', {}, 400, 'skin must be 64×64 or 64×32, got 32×32'],
      ['not a PNG', Buffer.from('GIF89a not a png at all'), '', {}, 400, 'skin: not a PNG file'],
      ['a bad model', skin, '?model=wide', {}, 400, 'model must be slim or classic'],
      ['a misspelt parameter', skin, '?modle=slim', {}, 400, 'Unknown query parameter "modle": this call takes model'],
      ['another type', skin, '', { 'content-type': 'image/gif' }, 415, 'Content-Type must be image/png'],
      ['over 1 MiB', padTo(encodePng(64, 64, { seed: 14 }), 1024 * 1024 + 1), '', {}, 413, 'Request body is larger than 1048576 bytes'],
    ];
    for (const [label, body, query, headers, status, message] of refusals) {
      const r = await put('skin', body, query, headers);
      assert.equal(r.status, status, `${label}: ${r.text}`);
      assertFail(r, status, message);
    }
    assertFail(await put('cape', cape, '?model=slim'), 400, 'a cape has no model');
    const cleared = assertOk(await call(invites, 'DELETE', 'skin', { token: alice.token }));
    assert.equal(cleared.skinUrl, null);
    assert.equal(cleared.capeUrl, `${pub}/textures/${sha(cape)}`);
    assert.equal((await fetch(withSkin.skinUrl)).status, 404, 'a texture no one wears is gone');
    assert.equal(assertOk(await call(invites, 'DELETE', 'cape', { token: alice.token })).capeUrl, null);
  });

  test('without --public-url an upload is 409, as in the admin API', async () => {
    const made = await register(open, 'NoUrl', 'nourl-password');
    assertFail(await call(open, 'PUT', 'skin', { token: made.accessToken, body: encodePng(64, 64) }), 409, 'Hosted textures need the server to run with --public-url');
  });

  test('a password change proves the current one, ends every other session and the join, and keeps this one', async () => {
    const other = await signIn(invites, 'Alice', 'alice-password');
    assert.equal(await joins(invites, other, alice.uuid), true);
    assertFail(await post(invites, 'password', { current: 'wrong-password', new: 'alice-new-password' }, { token: alice.token }), 401, 'The current password is wrong');
    assertFail(await post(invites, 'password', { current: 'alice-password', new: 'short' }, { token: alice.token }), 400, 'The password must be at least 8 characters');
    assertFail(await post(invites, 'password', { current: 'alice-password', password: 'alice-new-password' }, { token: alice.token }), 400, 'Unknown field "password": this call takes current, new');
    assert.equal(await joins(invites, other, alice.uuid), true, 'refusals change nothing');
    const me = assertOk(await post(invites, 'password', { current: 'alice-password', new: 'alice-new-password' }, { token: alice.token }));
    assert.equal(me.name, 'Alice');
    assertFail(await hasJoined(invites, 'Alice'), 404, 'Player has not joined this server');
    assert.equal(await joins(invites, other, alice.uuid), false, 'the other session ended');
    assertFail(await call(invites, 'GET', 'me', { token: other }), 401, SIGN_IN);
    assert.equal(assertOk(await call(invites, 'GET', 'me', { token: alice.token })).name, 'Alice', 'this session lives on');
    assert.equal(await joins(invites, alice.token, alice.uuid), true);
    assertFail(await game(invites, '/auth', { login: 'Alice', password: 'alice-password' }), 401, 'Wrong login or password');
    assert.equal(assertOk(await game(invites, '/auth', { login: 'Alice', password: 'alice-new-password' })).username, 'Alice');
  });

  test('a wrong current password counts as a failed login of the name', async () => {
    const made = await register(open, 'Forgetter', 'forgetter-password');
    // Six: the wait after the 5th (1 s) passes while its answer is held to the failed-login floor.
    let sixth = 0;
    for (let i = 0; i < 6; i++) {
      sixth = performance.now();
      assertFail(await post(open, 'password', { current: `wrong-${i}-password`, new: 'forgetter-new-1' }, { token: made.accessToken }), 401, 'The current password is wrong');
    }
    // The wait after the 6th is 2 s from when it was counted, after it was sent: within them, the
    // name is throttled for /auth and for the page alike. (A machine so busy that the 6th's own
    // answer took that long leaves nothing to see, rather than a false failure.)
    const auth = await game(open, '/auth', { login: 'Forgetter', password: 'forgetter-password' });
    const again = await post(open, 'password', { current: 'wrong-6-password', new: 'forgetter-new-1' }, { token: made.accessToken });
    if (performance.now() - sixth < 2000) {
      assert.equal(auth.status, 429, auth.text);
      assert.equal(again.status, 429, again.text);
      assert.ok(Number(again.headers.get('retry-after')) > 0);
    }
  });

  test('logout-all ends every session, this one too, and the join', async () => {
    const made = await register(invites, 'Leaver', 'leaver-password', { invite: (await inviteCode()).code });
    const second = await signIn(invites, 'Leaver', 'leaver-password');
    assert.equal(await joins(invites, second, made.userUUID), true);
    assert.equal(assertOk(await post(invites, 'logout-all', undefined, { token: made.accessToken })), true);
    for (const token of [made.accessToken, second]) {
      assertFail(await call(invites, 'GET', 'me', { token }), 401, SIGN_IN);
      assert.equal(await joins(invites, token, made.userUUID), false);
    }
    assertFail(await hasJoined(invites, 'Leaver'), 404, 'Player has not joined this server');
    assert.match(await signIn(invites, 'Leaver', 'leaver-password'), UUID_DASHED, 'the password still signs in');
  });
});

describe('reset links', () => {
  test('from the CLI: a link that sets a new password once and ends every session and the join', async () => {
    const made = await register(invites, 'Resetter', 'resetter-password', { invite: (await inviteCode()).code });
    assert.equal(await joins(invites, made.accessToken, made.userUUID), true);
    const r = await runCli(['user', 'reset-link', 'resetter', '--db', db], { env: { MCAUTH_PUBLIC_URL: pub } });
    const code = /^Reset link for Resetter, valid once until .* UTC; any earlier one is void:\n(.*)#reset=([0-9a-f]{32})\nDatabase: /.exec(r.stdout);
    assert.ok(code, r.stdout);
    assert.equal(code[1], `${pub}/account`);
    assertFail(await post(invites, 'reset', { code: code[2], password: 'short' }), 400, 'The password must be at least 8 characters');
    assert.deepEqual(assertOk(await post(invites, 'reset', { code: code[2], password: 'resetter-new-password' })), { username: 'Resetter' });
    assertFail(await call(invites, 'GET', 'me', { token: made.accessToken }), 401, SIGN_IN);
    assert.equal(await joins(invites, made.accessToken, made.userUUID), false);
    assertFail(await hasJoined(invites, 'Resetter'), 404, 'Player has not joined this server');
    assertFail(await post(invites, 'login', { name: 'Resetter', password: 'resetter-password' }), 401, 'Wrong login or password');
    assert.match(await signIn(invites, 'Resetter', 'resetter-new-password'), UUID_DASHED);
    assertFail(await post(invites, 'reset', { code: code[2], password: 'resetter-third-pw' }), 400, BAD_RESET);
    assertFail(await post(invites, 'reset', { code: 'AAAAAAAAAAAAAAAAAAAAAA', password: 'resetter-third-pw' }), 400, BAD_RESET);
    assertFail(await post(invites, 'reset', { code: code[2], password: 'resetter-third-pw', name: 'Resetter' }), 400, 'Unknown field "name": this call takes code, password');
  });

  test('a new link voids the old; the code alone without a public URL', async () => {
    const first = await resetCode(db, 'Veteran');
    const bare = await runCli(['user', 'reset-link', 'Veteran', '--db', db]);
    assert.match(bare.stderr, /no public URL/);
    const second = /\n([0-9a-f]{32})\nDatabase: /.exec(bare.stdout)?.[1];
    assert.ok(second, bare.stdout);
    assertFail(await post(invites, 'reset', { code: first, password: 'veteran-new-password' }), 400, BAD_RESET);
    assert.deepEqual(assertOk(await post(invites, 'reset', { code: second, password: 'veteran-password' })), { username: 'Veteran' });
  });

  test('a link expires after --reset-ttl (CLI: MCAUTH_RESET_TTL; admin API: the server\'s)', async () => {
    await addUser(limitedDb, 'Expiring', 'expiring-password');
    const fromCli = await resetCode(limitedDb, 'Expiring', { MCAUTH_RESET_TTL: '1' });
    const fromAdmin = assertOk(await admin(limited, 'POST', '/admin/users/expiring/reset-link'));
    assert.deepEqual(Object.keys(fromAdmin).sort(), ['code', 'expiresAt', 'link', 'name']);
    assert.deepEqual([fromAdmin.name, fromAdmin.link], ['Expiring', null], 'no link without a public URL');
    assert.ok(Date.parse(fromAdmin.expiresAt) - Date.now() <= 1000);
    await sleep(1200);
    assertFail(await post(limited, 'reset', { code: fromCli, password: 'expiring-new-pw' }), 400, BAD_RESET);
    assertFail(await post(limited, 'reset', { code: fromAdmin.code, password: 'expiring-new-pw' }), 400, BAD_RESET);
    assert.match(await signIn(limited, 'Expiring', 'expiring-password'), UUID_DASHED, 'the password is unchanged');
  });

  // Rule: without --reset-ttl (and, for the CLI, MCAUTH_RESET_TTL) a link is valid for an hour.
  test('a link lasts an hour by default, from the admin API and from the CLI', async () => {
    const HOUR = 3600 * 1000;
    const SLACK = 5000;
    const stored = async (): Promise<number> => Number((await storedRows(db, "SELECT r.expires_at FROM reset_codes r JOIN users u ON u.id = r.user_id WHERE u.name_key = 'veteran'"))[0]?.expires_at);
    const within = (at: number, from: number, to: number, label: string): void =>
      assert.ok(at >= from + HOUR - SLACK && at <= to + HOUR + SLACK, `${label}: expires ${new Date(at).toISOString()}, asked between ${new Date(from).toISOString()} and ${new Date(to).toISOString()}`);
    let from = Date.now();
    const link = assertOk(await admin(invites, 'POST', '/admin/users/Veteran/reset-link'));
    within(Date.parse(link.expiresAt), from, Date.now(), 'admin API');
    assert.equal(await stored(), Date.parse(link.expiresAt), 'admin API: as stored');
    from = Date.now();
    const r = await runCli(['user', 'reset-link', 'Veteran', '--db', db]);
    const to = Date.now();
    assert.equal(r.code, 0, r.stderr);
    const until = /valid once until (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) UTC/.exec(r.stdout);
    assert.ok(until, r.stdout);
    within(Date.parse(`${until[1]}T${until[2]}Z`), from, to, 'CLI, as printed');
    within(await stored(), from, to, 'CLI, as stored');
  });

  test('the admin API makes links with the page address when a public URL is set', async () => {
    const link = assertOk(await admin(invites, 'POST', '/admin/users/Veteran/reset-link'));
    assert.equal(link.link, `${pub}/account#reset=${link.code}`);
    assertFail(await admin(invites, 'POST', '/admin/users/Nobody/reset-link'), 404, 'No player named "Nobody"');
    assert.deepEqual(assertOk(await post(invites, 'reset', { code: link.code, password: 'veteran-password' })), { username: 'Veteran' });
  });
});

describe('codes are kept as digests only', () => {
  // Rule: an invite code is stored only as its SHA-256 digest (hex; its id is the digest's first
  // 12 digits): a copy of the database lets no one sign up.
  test('an invite from the CLI or the admin API: its code is nowhere in the file; its digest is', async () => {
    const fromCli = await inviteCode(['--uses', '2']);
    const fromApi = assertOk(await admin(invites, 'POST', '/admin/invites', { uses: 3 }));
    for (const [label, { code, id }, uses] of [['CLI', fromCli, 2], ['admin API', fromApi, 3]] as const) {
      const digest = sha256Hex(code);
      assert.ok((await assertNowhere(db, code)).includes(digest), `${label}: the scan reads the invite's row`);
      assert.deepEqual(await storedRows(db, 'SELECT uses_left FROM invites WHERE digest = ?', digest), [{ uses_left: uses }], label);
      assert.equal(id, digest.slice(0, 12), `${label}: the id is the digest's first 12 hex digits`);
    }
    // The digest is what the sign-up finds the invite by.
    await register(invites, 'Digested', 'digested-password', { invite: fromApi.code });
    assert.deepEqual(await storedRows(db, 'SELECT uses_left FROM invites WHERE digest = ?', sha256Hex(fromApi.code)), [{ uses_left: 2 }]);
    await assertNowhere(db, fromApi.code);
  });

  // Rule: a reset code is stored only as its SHA-256 digest (hex): a copy of the database lets
  // no one take a player over.
  test('a reset link from the CLI or the admin API: its code is nowhere in the file; its digest is', async () => {
    const stored = (): Promise<Record<string, unknown>[]> => storedRows(db, "SELECT r.digest FROM reset_codes r JOIN users u ON u.id = r.user_id WHERE u.name_key = 'veteran'");
    const fromCli = await resetCode(db, 'Veteran');
    assert.ok((await assertNowhere(db, fromCli)).includes(sha256Hex(fromCli)), "CLI: the scan reads the link's row");
    assert.deepEqual(await stored(), [{ digest: sha256Hex(fromCli) }], 'CLI');
    const fromApi = assertOk(await admin(invites, 'POST', '/admin/users/Veteran/reset-link')).code;
    assert.ok((await assertNowhere(db, fromApi)).includes(sha256Hex(fromApi)), "admin API: the scan reads the link's row");
    await assertNowhere(db, fromCli);
    assert.deepEqual(await stored(), [{ digest: sha256Hex(fromApi) }], 'admin API');
    // The digest is what the reset finds the player by.
    assert.deepEqual(assertOk(await post(invites, 'reset', { code: fromApi, password: 'veteran-password' })), { username: 'Veteran' });
    assert.deepEqual(await stored(), [], 'used up');
  });
});

describe('no cookies', () => {
  // Rule: no answer sets a cookie (the token travels as a Bearer header only), so no other site
  // can make a browser act for the player (no CSRF).
  test('register, login, me, password, reset, logout-all and the page set no cookie, nor do their refusals, but for login\'s device cookie', async () => {
    const answers: [string, Reply][] = [];
    const seen = async (label: string, r: Promise<Reply>): Promise<Reply> => {
      const reply = await r;
      answers.push([label, reply]);
      return reply;
    };
    const made = assertOk(await seen('register', post(invites, 'register', { name: 'Cookieless', password: 'cookieless-password', invite: (await inviteCode()).code })));
    const token = assertOk(await seen('login', post(invites, 'login', { name: 'Cookieless', password: 'cookieless-password' }))).accessToken;
    assert.equal(assertOk(await seen('me', call(invites, 'GET', 'me', { token }))).uuid, made.userUUID);
    assertOk(await seen('password', post(invites, 'password', { current: 'cookieless-password', new: 'cookieless-new-password' }, { token })));
    const { code } = assertOk(await admin(invites, 'POST', '/admin/users/Cookieless/reset-link'));
    assert.deepEqual(assertOk(await seen('reset', post(invites, 'reset', { code, password: 'cookieless-third-pw' }))), { username: 'Cookieless' });
    const again = await signIn(invites, 'Cookieless', 'cookieless-third-pw');
    assert.equal(assertOk(await seen('logout-all', post(invites, 'logout-all', undefined, { token: again }))), true);
    assert.equal((await seen('the page', invites.request('/account'))).status, 200);
    assertFail(await seen('a wrong login', post(invites, 'login', { name: 'Cookieless', password: 'wrong-password' })), 401, 'Wrong login or password');
    assertFail(await seen('a taken name', post(invites, 'register', { name: 'Cookieless', password: 'cookieless-password', invite: (await inviteCode()).code })), 409, 'The name "Cookieless" is taken');
    assertFail(await seen('me signed out', call(invites, 'GET', 'me', { token })), 401, SIGN_IN);
    assertFail(await seen('a used reset code', post(invites, 'reset', { code, password: 'cookieless-fourth-pw' })), 400, BAD_RESET);
    for (const [label, r] of answers) {
      // The one cookie (device-cookie.ts, account-device.test.ts) is no session: it names a browser, never the player's token.
      const expected = label === 'login' ? [/^mcauth_device=[0-9a-f-]{36}; Path=\/account\/login; Max-Age=\d+; HttpOnly; Secure; SameSite=Strict$/] : [];
      const cookies = r.headers.getSetCookie();
      assert.equal(cookies.length, expected.length, `${label}: ${cookies.join(' | ')}`);
      expected.forEach((pattern, i) => assert.match(cookies[i]!, pattern, label));
      assert.ok(!cookies.some((c) => c.includes(token)), label);
    }
  });
});

describe('the API key', () => {
  test('is not needed under /account, even when set; /auth still needs it', async () => {
    assertFail(await invites.request('/auth', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'Veteran', password: 'veteran-password' }) }), 401, 'Missing or wrong API key');
    const token = await signIn(invites, 'Veteran', 'veteran-password');
    assert.equal(assertOk(await call(invites, 'GET', 'me', { token })).name, 'Veteran');
    assert.equal((await invites.request('/account')).status, 200);
    assertFail(await invites.request('/accounts'), 401, 'Missing or wrong API key');
  });
});
