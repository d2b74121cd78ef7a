// Players on their own, signed in: the account page's API (--account-page) end to end on real
// SQLite files (on PostgreSQL under npm run test:postgres), on the servers of account-setup.ts.
// Sign-in is /auth's own login (the throttle, the lock, --address-login-limit are shared, an
// unknown name takes a wrong password's time); signed-in calls need the player's Bearer token; a
// password change ends the other sessions and the join but keeps this token; skins and capes go
// through the admin API's checks; sign-out everywhere; reset links from the CLI and the admin API
// work once, within --reset-ttl (an hour by default), and a new one voids the old. (Off unless
// switched on, the page, sign-up, invites, the codes' digests, cookies and the API key:
// account.test.ts.)
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { encodePng, padTo, textureName } from '../helpers/png.ts';
import { storedRows } from '../helpers/test-db.ts';
import { UUID_DASHED, assertFail, assertOk, sleep } from './util.ts';
import {
  db, limitedDb, KEY, SIGN_IN, BAD_RESET, invites, open, limited, pub, call, post, game, admin,
  register, signIn, joins, hasJoined, inviteCode, resetCode, ISO,
} from './account-setup.ts';

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
    assertFail(await call(invites, 'POST', 'me', { token: alice.token }), 405, 'Method not allowed: use GET, HEAD');
  });

  test('skins and capes: uploaded with the admin API\'s checks, served, and removed', async () => {
    const skin = encodePng(64, 64, { seed: 12 });
    const put = (kind: string, body: Buffer, query = '', headers: Record<string, string> = { 'content-type': 'image/png' }) => call(invites, 'PUT', kind + query, { token: alice.token, body, headers });
    const withSkin = assertOk(await put('skin', skin, '?model=slim'));
    assert.deepEqual([withSkin.skinUrl, withSkin.isAlex], [`${pub}/textures/${textureName(skin)}`, true]);
    assert.ok(Buffer.from(await (await fetch(withSkin.skinUrl)).arrayBuffer()).equals(skin), 'served as uploaded');
    const auth = assertOk(await game(invites, '/auth', { login: 'Alice', password: 'alice-password' }));
    assert.deepEqual([auth.skinUrl, auth.isAlex], [withSkin.skinUrl, true], 'the game sees it');
    const cape = encodePng(64, 32, { seed: 13 });
    assert.equal(assertOk(await put('cape', cape, '', {})).capeUrl, `${pub}/textures/${textureName(cape)}`);
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
    assert.equal(cleared.capeUrl, `${pub}/textures/${textureName(cape)}`);
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
    await seedPlayer(limitedDb, 'Expiring', 'expiring-password');
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
