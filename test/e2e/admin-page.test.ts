// The admin page (--admins, with --account-page) against the built server on a real database
// (SQLite, or PostgreSQL under npm run test:postgres): off without either switch; the page
// served without the admin token while the admin API keeps it; its API closed to callers without
// a token (401) and to players who are not admins (403, every route, nothing changed); changes
// from another site refused; every action an admin takes, through the service's rules; the
// audit trail in the log and the database, without a secret; the dashboard's counts, also those
// of --workers 2 added up; the same with --db :memory:, through the store's interface; and
// under --base-path.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RUNTIME, startServer, tempDir, type Reply, type RunningServer } from '../helpers/process.ts';
import { seedPlayers } from '../helpers/players.ts';
import { storedRows, testDb } from '../helpers/test-db.ts';
import { VERSION } from '../../src/version.ts';
import { assertFail, assertOk, until } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'admin-page.db');
const ADMIN_TOKEN = 'admin-page-test-admin-token-0123';
const PW = 'admin-page-password';
const PAGED = Array.from({ length: 25 }, (_, i) => `Paged_${String(i).padStart(2, '0')}`);

let on: RunningServer; // --account-page --admins boss,Helper --admin-token, logging at info
let noAdmins: RunningServer; // --account-page alone
let noPage: RunningServer; // --admins alone
let uuids: Map<string, string>;

before(async () => {
  uuids = await seedPlayers(db, ['Boss', 'Plain', 'Target', 'Victim', 'Renamed_Not', ...PAGED], PW);
  [on, noAdmins, noPage] = await Promise.all([
    startServer(['--db', db, '--account-page', '--admins', 'boss, Helper', '--admin-token', ADMIN_TOKEN, '--log-level', 'info', '--log-format', 'json', '--registration', 'invite']),
    startServer(['--db', db, '--account-page']),
    startServer(['--db', db, '--admins', 'Boss']),
  ]);
});

after(async () => {
  await Promise.all([on, noAdmins, noPage].map((s) => s?.stop()));
  tmp.cleanup();
});

const signIn = async (s: RunningServer, name: string): Promise<string> => assertOk(await s.post('/account/login', { name, password: PW })).accessToken;

/** A call of the admin page's API, `{base}/account/admin/PATH`. */
function call(s: RunningServer, method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const h: Record<string, string> = { ...headers };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  if (body !== undefined) h['content-type'] = 'application/json';
  return s.request(`/account/admin/${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** The admin API's view of a player (with --admin-token), to see that nothing changed. */
const adminView = async (who: string): Promise<Reply> => on.request(`/admin/users/${who}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

/** Every route of the admin page's API, with a body where it takes one. */
const routes = (uuid: string, inviteId: string): [string, string, unknown?][] => [
  ['GET', 'me'],
  ['GET', 'dashboard'],
  ['GET', 'players?by=name&q=t'],
  ['GET', `players/${uuid}`],
  ['DELETE', `players/${uuid}`, { name: 'Target' }],
  ['POST', `players/${uuid}/lock`, { reason: 'no' }],
  ['POST', `players/${uuid}/unlock`],
  ['POST', `players/${uuid}/rename`, { name: 'Stolen_Name' }],
  ['POST', `players/${uuid}/reset-link`],
  ['DELETE', `players/${uuid}/skin`],
  ['DELETE', `players/${uuid}/cape`],
  ['GET', 'invites'],
  ['POST', 'invites', { uses: 3 }],
  ['DELETE', `invites/${inviteId}`],
];

describe('off', () => {
  test('without --admins or without --account-page, the page and its API are not there (404); --admins alone warns at start', async () => {
    for (const s of [noAdmins, noPage]) {
      assert.equal((await s.request('/admin/')).status, 404);
      assert.equal((await s.request('/admin')).status, 404);
      assert.equal((await call(s, 'GET', 'dashboard', 'anything')).status, 404);
    }
    assert.match(noPage.stdout() + noPage.stderr(), /--admins has no effect without --account-page/);
    assert.doesNotMatch(noAdmins.stdout() + noAdmins.stderr(), /--admins/);
  });
});

describe('the page', () => {
  test('is served at {base}/admin/ and {base}/admin without the admin token, under the account page\'s CSP and headers', async () => {
    for (const path of ['/admin/', '/admin']) {
      const r = await on.request(path);
      assert.equal(r.status, 200, r.text);
      assert.match(r.headers.get('content-type')!, /^text\/html/);
      assert.match(r.headers.get('content-security-policy')!, /default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-[A-Za-z0-9+/=]+';.*frame-ancestors 'none'/);
      assert.equal(r.headers.get('x-frame-options'), 'DENY');
      assert.equal(r.headers.get('cache-control'), 'no-store');
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
      assert.match(r.text, /<title>Admin<\/title>/);
    }
  });

  test('every other path under /admin/ is still the admin API\'s, behind its token', async () => {
    assertFail(await on.request('/admin/users'), 401, 'Missing or wrong admin token');
    assertFail(await on.request('/admin/users/Target'), 401, 'Missing or wrong admin token');
    assert.equal((await adminView('Target')).status, 200);
    // The page is GET only: nothing else is let past the token there.
    assert.equal((await on.request('/admin/', { method: 'POST' })).status, 405);
  });
});

describe('who may call the API', () => {
  test('without a live token: 401 on every route', async () => {
    for (const [method, path, body] of routes(uuids.get('Target')!, '0123456789ab')) {
      for (const token of [undefined, 'not-a-token']) assertFail(await call(on, method, path, token, body), 401, 'Sign in again');
    }
  });

  test('a player who is not an admin: 403 on every route, and nothing changes', async () => {
    const made = assertOk(await on.request('/admin/invites', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}' }));
    const target = uuids.get('Target')!;
    const before = (await adminView('Target')).body;
    const invitesBefore = (await on.request('/admin/invites', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body;
    const plain = await signIn(on, 'Plain');
    for (const [method, path, body] of routes(target, made.id)) {
      assertFail(await call(on, method, path, plain, body), 403, 'You are not an admin here');
    }
    assert.deepEqual((await adminView('Target')).body, before);
    assert.deepEqual((await on.request('/admin/invites', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body, invitesBefore);
    assert.deepEqual(await storedRows(db, 'SELECT * FROM console_audit WHERE player_id = ?', target), []);
    // Still signed in: 403 is not a sign-out.
    assert.equal((await on.request('/account/me', { headers: { authorization: `Bearer ${plain}` } })).status, 200);
  });

  test('an admin named in any case is one; `Helper`, named but not registered, changes nothing', async () => {
    const boss = await signIn(on, 'BOSS');
    assert.deepEqual(assertOk(await call(on, 'GET', 'me', boss)), { name: 'Boss', uuid: uuids.get('Boss') });
    // The account page's own view says so (its page then links to the admin page); a plain player's does not.
    assert.equal(assertOk(await on.request('/account/me', { headers: { authorization: `Bearer ${boss}` } })).admin, true);
    const plain = assertOk(await on.request('/account/me', { headers: { authorization: `Bearer ${await signIn(on, 'Plain')}` } }));
    assert.equal(Object.hasOwn(plain, 'admin'), false);    // An admin's name is kept: no one signs up with it (the owner makes that player with `user add`),
    // though the invite is good (without the rule, Helper would be made, and be an admin).
    const code = assertOk(await on.request('/admin/invites', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: '{}' })).code;
    for (const name of ['Helper', 'hELPER']) {
      assertFail(await on.post('/account/register', { name, password: 'helper-Pass-123', invite: code }), 403, 'This name is kept for an admin of this server; choose another');
    }
  });

  test('a change from another site is refused (403) before anything else; a same-origin one is not', async () => {
    const boss = await signIn(on, 'Boss');
    const victim = uuids.get('Victim')!;
    const host = new URL(on.url).host;
    const crossSite: Record<string, string>[] = [{ origin: 'http://evil.example' }, { origin: `http://${host}.evil.example` }, { origin: 'null' }, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }];
    for (const headers of crossSite) {
      assertFail(await call(on, 'POST', `players/${victim}/lock`, boss, { reason: 'csrf' }, headers), 403, 'Changes are taken from this page only');
    }
    assert.equal((await adminView(victim)).body.result.locked, false);
    // Reading is no change: another site's fetch could not read the answer anyway (no CORS).
    assert.equal((await call(on, 'GET', 'dashboard', boss, undefined, { origin: 'http://evil.example' })).status, 200);
    const same = await call(on, 'POST', `players/${victim}/lock`, boss, {}, { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' });
    assert.equal(assertOk(same).locked, true);
    assertOk(await call(on, 'POST', `players/${victim}/unlock`, boss));
  });
});

describe('what an admin does', () => {
  let boss = '';
  before(async () => {
    boss = await signIn(on, 'Boss');
  });

  test('finds players by the start of their name (any case) or UUID, twenty at a time', async () => {
    const first = assertOk(await call(on, 'GET', 'players?by=name&q=PAGED_', boss));
    assert.deepEqual(first.players.map((p: { name: string }) => p.name), PAGED.slice(0, 20));
    assert.equal(first.next, 'paged_19');
    const rest = assertOk(await call(on, 'GET', `players?by=name&q=paged_&after=${first.next}`, boss));
    assert.deepEqual(rest.players.map((p: { name: string }) => p.name), PAGED.slice(20));
    assert.equal(rest.next, null);
    const target = uuids.get('Target')!;
    for (const q of [target.slice(0, 13), target.replaceAll('-', '').slice(0, 12).toUpperCase()]) {
      const byId = assertOk(await call(on, 'GET', `players?by=uuid&q=${q}`, boss));
      assert.ok(byId.players.some((p: { id: string }) => p.id === target), q);
      assert.ok(byId.players.every((p: { id: string }) => p.id.startsWith(target.slice(0, 13))), q);
    }
    assertFail(await call(on, 'GET', 'players?by=name&q=no%20spaces', boss), 400, 'A name holds letters, digits and _ only');
    assertFail(await call(on, 'GET', 'players?by=uuid&q=xyz', boss), 400, 'A UUID holds hex digits and dashes only');
  });

  test('locks with a reason (the player cannot log in) and unlocks; each in the audit trail and the log', async () => {
    const target = uuids.get('Target')!;
    const locked = assertOk(await call(on, 'POST', `players/${target}/lock`, boss, { reason: 'griefing spawn' }));
    assert.equal(locked.locked, true);
    assert.equal(locked.lockReason, 'griefing spawn');
    assert.deepEqual(locked.audit.map((e: { action: string; admin: string; detail: string }) => [e.action, e.admin, e.detail]), [['lock', 'Boss', 'griefing spawn']]);
    assert.equal((await on.post('/account/login', { name: 'Target', password: PW })).status, 403);
    const unlocked = assertOk(await call(on, 'POST', `players/${target}/unlock`, boss));
    assert.equal(unlocked.locked, false);
    assert.deepEqual(unlocked.audit.map((e: { action: string }) => e.action), ['unlock', 'lock']);
    await on.waitFor('the log line of the unlock', (out) => (/"msg":"admin action"[^\n]*/.test(out) && out.includes('"action":"unlock"') ? true : undefined));
    const line = JSON.parse(on.stdout().split('\n').find((l) => l.includes('"detail":"griefing spawn"'))!);
    assert.deepEqual([line.admin, line.action, line.player, line.uuid, line.detail], ['Boss', 'lock', 'Target', target, 'griefing spawn']);
  });

  test('renames, through the service\'s rules (a taken name: 409)', async () => {
    const target = uuids.get('Target')!;
    assert.equal((await call(on, 'POST', `players/${target}/rename`, boss, { name: 'plain' })).status, 409);
    assert.equal(assertOk(await call(on, 'POST', `players/${target}/rename`, boss, { name: 'Target_Two' })).name, 'Target_Two');
    assert.equal(assertOk(await call(on, 'POST', `players/${target}/rename`, boss, { name: 'Target' })).name, 'Target');
  });

  test('makes a reset link whose code works once, and keeps the code out of the log and the trail', async () => {
    const target = uuids.get('Target')!;
    const made = assertOk(await call(on, 'POST', `players/${target}/reset-link`, boss));
    assert.match(made.code, /^[0-9a-f]{32}$/);
    assert.equal(made.link, null, 'no --public-url: the page makes the link of its own address');
    assertOk(await on.post('/account/reset', { code: made.code, password: `${PW}-new` }));
    assertOk(await on.post('/account/login', { name: 'Target', password: `${PW}-new` }));
    const rows = await storedRows(db, 'SELECT action, detail FROM console_audit WHERE player_id = ?', target);
    assert.ok(rows.some((r) => r.action === 'reset link'));
    assert.ok(!JSON.stringify(rows).includes(made.code));
    await on.waitFor('the reset link\'s log line', (out) => (out.includes('"action":"reset link"') ? true : undefined));
    assert.ok(!on.stdout().includes(made.code), 'the code is in no log line');
    assert.ok(!on.stdout().includes(boss), 'the token is in no log line');
  });

  test('clears a skin and a cape', async () => {
    const target = uuids.get('Target')!;
    const set = await on.request(`/admin/users/${target}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ skinUrl: 'https://textures.example/skin.png', capeUrl: 'https://textures.example/cape.png' }),
    });
    assertOk(set);
    const shown = assertOk(await call(on, 'GET', `players/${target}`, boss));
    assert.equal(shown.skinUrl, 'https://textures.example/skin.png');
    assert.equal(assertOk(await call(on, 'DELETE', `players/${target}/skin`, boss)).skinUrl, null);
    const bare = assertOk(await call(on, 'DELETE', `players/${target}/cape`, boss));
    assert.deepEqual([bare.skinUrl, bare.capeUrl, bare.skinHash, bare.capeHash], [null, null, null, null]);
  });

  test('removes a player only once their name is typed', async () => {
    const victim = uuids.get('Renamed_Not')!;
    assertFail(await call(on, 'DELETE', `players/${victim}`, boss, { name: 'Target' }), 400, "Type the player's name, Renamed_Not, to remove them");
    assert.equal((await adminView(victim)).status, 200);
    assert.deepEqual(assertOk(await call(on, 'DELETE', `players/${victim}`, boss, { name: 'renamed_not' })), { removed: 'Renamed_Not' });
    assert.equal((await adminView(victim)).status, 404);
    assert.equal((await call(on, 'GET', `players/${victim}`, boss)).status, 404);
    const rows = await storedRows(db, 'SELECT admin, action, player_name FROM console_audit WHERE player_id = ?', victim);
    assert.deepEqual(rows.map((r) => [r.admin, r.action, r.player_name]), [['Boss', 'remove', 'Renamed_Not']]);
  });

  test('creates, lists and revokes invites; the code is shown once and logged nowhere', async () => {
    const made = assertOk(await call(on, 'POST', 'invites', boss, { uses: 2, expiresIn: 3600 }));
    assert.match(made.code, /^[0-9a-f]{32}$/);
    assert.equal(made.usesLeft, 2);
    const listed = assertOk(await call(on, 'GET', 'invites', boss)).invites;
    assert.ok(listed.some((i: { id: string }) => i.id === made.id));
    assert.ok(!JSON.stringify(listed).includes(made.code));
    assertFail(await call(on, 'POST', 'invites', boss, { uses: 0 }), 400, 'The uses must be a whole number from 1 to 10000');
    assert.deepEqual(assertOk(await call(on, 'DELETE', `invites/${made.id}`, boss)), { id: made.id });
    assert.equal((await call(on, 'DELETE', `invites/${made.id}`, boss)).status, 404);
    await on.waitFor('the revocation\'s log line', (out) => (out.includes('"action":"revoke invite"') ? true : undefined));
    assert.ok(!on.stdout().includes(made.code));
    // Last, as it puts the code in a path (which the request log then shows): refused, as the admin API refuses it.
    assertFail(await call(on, 'DELETE', `invites/${made.code}`, boss), 400, "Give the invite's id, as the list shows it");
  });

  test('the dashboard counts players, locked ones, logins ok and failed, and says where the database is', async () => {
    const first = assertOk(await call(on, 'GET', 'dashboard', boss));
    assert.equal(first.players, 4 + PAGED.length);
    assert.equal(first.version, VERSION);
    assert.ok(first.uptimeSeconds >= 0);
    assert.ok(first.databaseBytes > 0);
    assert.equal(first.database, db.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1********@'));
    await call(on, 'POST', `players/${uuids.get('Plain')}/lock`, boss, {});
    assert.equal((await on.post('/account/login', { name: 'Plain', password: 'wrong-password' })).status, 401);
    assert.equal((await on.post('/auth', { login: 'Plain', password: 'wrong-password' })).status, 401);
    // Counted in memory and written every few seconds: the dashboard sees them once written.
    let seen = first;
    const counted = await until(async () => {
      seen = assertOk(await call(on, 'GET', 'dashboard', boss));
      return seen.lastHour.failed >= first.lastHour.failed + 2;
    }, 15_000);
    assert.ok(counted, JSON.stringify(seen));
    assert.ok(seen.lastHour.ok >= 1, 'the sign-ins of this file');
    assert.ok(seen.lastDay.failed >= seen.lastHour.failed);
    assert.equal(seen.locked, first.locked + 1);
    assert.equal(typeof seen.throttled, 'number');
  });
});

describe('with --db :memory:', () => {
  test('works through the store\'s interface, keeping its own data in memory; throttled names and the size are not counted', async () => {
    const s = await startServer(['--db', ':memory:', '--account-page', '--admins', 'Boss', '--admin-token', ADMIN_TOKEN]);
    try {
      for (const name of ['Boss', 'Trial_One', 'Trial_Two']) {
        const made = await s.request('/admin/users', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, password: PW }) });
        assertOk(made);
      }
      const boss = await signIn(s, 'Boss');
      const dash = assertOk(await call(s, 'GET', 'dashboard', boss));
      assert.deepEqual([dash.players, dash.locked, dash.throttled, dash.database, dash.databaseBytes], [3, 0, null, ':memory:', null]);
      const found = assertOk(await call(s, 'GET', 'players?by=name&q=trial', boss)).players;
      assert.deepEqual(found.map((p: { name: string }) => p.name), ['Trial_One', 'Trial_Two']);
      const locked = assertOk(await call(s, 'POST', `players/${found[1].id}/lock`, boss, { reason: 'trial' }));
      assert.deepEqual(locked.audit.map((e: { action: string; detail: string }) => [e.action, e.detail]), [['lock', 'trial']]);
      assert.equal(assertOk(await call(s, 'GET', 'dashboard', boss)).locked, 1);
      const byId = assertOk(await call(s, 'GET', `players?by=uuid&q=${found[1].id.slice(0, 6)}`, boss)).players;
      assert.ok(byId.some((p: { id: string }) => p.id === found[1].id));
    } finally {
      await s.stop();
    }
  });
});

describe('under --base-path', () => {
  test('the page is at {base}/admin/ and knows its base; its API and the sign-in are under {base}/account/; nothing at the root', async () => {
    const s = await startServer(['--db', ':memory:', '--account-page', '--admins', 'Boss', '--admin-token', ADMIN_TOKEN, '--base-path', '/mc']);
    try {
      const made = await s.request('/mc/admin/users', { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Boss', password: PW }) });
      assertOk(made);
      const page = await s.request('/mc/admin/');
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /data-base="\/mc"/);
      assert.equal((await s.request('/admin/')).status, 404);
      const boss = assertOk(await s.post('/mc/account/login', { name: 'Boss', password: PW })).accessToken;
      const me = await s.request('/mc/account/admin/me', { headers: { authorization: `Bearer ${boss}` } });
      assert.equal(assertOk(me).name, 'Boss');
      assert.equal((await s.request('/account/admin/me', { headers: { authorization: `Bearer ${boss}` } })).status, 404);
    } finally {
      await s.stop();
    }
  });
});

describe('with --workers 2', { skip: RUNTIME === 'deno' ? 'Deno has no node:cluster' : false }, () => {
  test("the dashboard's login counts are every worker's, added in the database", async () => {
    const workersDb = await testDb(tmp.dir, 'workers.db');
    await seedPlayers(workersDb, ['Boss', 'Counted'], PW);
    const s = await startServer(['--db', workersDb, '--account-page', '--admins', 'Boss', '--workers', '2']);
    try {
      // Each call on a connection of its own: node:cluster deals them to the workers in turn.
      for (let i = 0; i < 6; i++) assertOk(await s.post('/auth', { login: 'Counted', password: PW }));
      for (let i = 0; i < 3; i++) assert.equal((await s.post('/auth', { login: 'Counted', password: 'wrong-password' })).status, 401);
      const boss = await signIn(s, 'Boss');
      let seen: { lastHour: { ok: number; failed: number } } | undefined;
      const counted = await until(async () => {
        seen = assertOk(await call(s, 'GET', 'dashboard', boss));
        return seen!.lastHour.ok === 7 && seen!.lastHour.failed === 3;
      }, 15_000);
      assert.ok(counted, JSON.stringify(seen));
    } finally {
      await s.stop();
    }
  });
});
