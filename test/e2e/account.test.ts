// Players on their own: the account page's API (--account-page), end to end on real SQLite files
// (on PostgreSQL under npm run test:postgres), on the servers of account-setup.ts. Off unless
// switched on (every /account path 404); the page as page.ts renders it, under its
// Content-Security-Policy and other headers; sign-up closed, by invite (single-use by default,
// --uses, expiry, revocation, one use cannot make two players at once) or open, with random or
// offline-mode UUIDs; registrations limited an address (5 by default) and in all (429 with
// Retry-After; --trust-proxy names the address); no answer sets a cookie but sign-in's device
// cookie; invite and reset codes are kept only as their SHA-256. None of it needs the API key.
// (Signing in, signed-in calls and reset links: account-session.test.ts.)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { renderPage } from '../../src/account/page.ts';
import { DEFAULT_MIN_PASSWORD_CHARS } from '../../src/cli/defaults.ts';
import { runCli, withServer } from '../helpers/process.ts';
import type { Reply } from '../helpers/process.ts';
import { encodePng } from '../helpers/png.ts';
import { storedRows } from '../helpers/test-db.ts';
import { UUID_DASHED, assertFail, assertOk, sleep } from './util.ts';
import {
  db, limitsDb, defaultLimitsDb, shownDb, SIGN_IN, BAD_INVITE, BAD_RESET, SERVER_NAME, off, closed,
  invites, open, limited, untrusted, pub, call, post, game, admin, register, signIn, joins,
  hasJoined, inviteCode, resetCode, offlineUuid, sha256Hex, assertNowhere, ISO,
} from './account-setup.ts';

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

  // Rule: HEAD is answered as GET is, without the body (a link checker or uptime probe sends it).
  test('HEAD {base}/account: 200 with the page\'s headers and no body', async () => {
    const page = await closed.request('/account');
    const head = await closed.request('/account', { method: 'HEAD' });
    assert.equal(head.status, 200, head.text);
    assert.equal(head.text, '');
    for (const name of ['content-type', 'content-length', 'content-security-policy', 'cache-control']) assert.equal(head.headers.get(name), page.headers.get(name), name);
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
