// An account's life, end to end on a real SQLite file: the password policy (8 code points by
// default, --min-password-length, existing shorter passwords still log in), locks (403 with the
// reason for the right password, the usual 401 for a wrong one, sessions and joins ended at once,
// profiles still answered), renames (UUID and textures kept, sessions ended, old name free), the last
// login and creation time (user list, user show, admin API), ending sessions ends the join too,
// the database named in every user command's output, and the admin API's refusal of unknown
// fields and of overlong quotes.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { encodePng } from '../helpers/png.ts';
import { startServer, tempDir, runCli, addUser } from '../helpers/process.ts';
import type { RunningServer, Reply } from '../helpers/process.ts';
import { assertFail, assertOk, join, login, sleep } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'life.db');
const ADMIN = 'lifecycle-admin-token-0123456789';
const PASSWORD = 'correct-horse-1';
/** The line a user command ends with: the database it used. */
const DB_LINE = `Database: ${db}\n`;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

let s: RunningServer; // default policy, admin API on
let strict: RunningServer; // --min-password-length 12, same database

before(async () => {
  [s, strict] = await Promise.all([
    startServer(['--db', db, '--admin-token', ADMIN]),
    startServer(['--db', db, '--admin-token', ADMIN, '--min-password-length', '12']),
  ]);
});

after(async () => {
  await Promise.all([s?.stop(), strict?.stop()]);
  tmp.cleanup();
});

function admin(server: RunningServer, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return server.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

const cli = (args: string[], stdin = '', env: Record<string, string> = {}) => runCli(['user', ...args, '--db', db], { stdin, env });

describe('password policy', () => {
  // Rule: a new password has at least 8 code points by default, in the CLI and the admin API.
  test('8 characters by default: 7 are refused with the number, 8 are taken', async () => {
    const short = await cli(['add', 'Shorty'], 'seven-7\n');
    assert.deepEqual([short.code, short.stderr], [1, `The password must be at least 8 characters\n${DB_LINE}`]);
    assertFail(await admin(s, 'POST', '/admin/users', { name: 'Shorty', password: 'seven-7' }), 400, 'The password must be at least 8 characters');
    assertOk(await admin(s, 'POST', '/admin/users', { name: 'Shorty', password: 'eight-88' }));
    assert.equal((await login(s, 'Shorty', 'eight-88')).username, 'Shorty');
    const passwd = await cli(['passwd', 'Shorty'], 'short\n');
    assert.deepEqual([passwd.code, passwd.stderr], [1, `The password must be at least 8 characters\n${DB_LINE}`]);
    assertFail(await admin(s, 'POST', '/admin/users/Shorty/password', { password: 'short' }), 400, 'The password must be at least 8 characters');
  });

  // Rule: characters are code points: 8 emoji (16 UTF-16 units) are 8, 7 emoji are 7.
  test('counted in code points, not UTF-16 units', async () => {
    assertFail(await admin(s, 'POST', '/admin/users', { name: 'Emoji', password: '😀'.repeat(7) }), 400, 'The password must be at least 8 characters');
    assertOk(await admin(s, 'POST', '/admin/users', { name: 'Emoji', password: '😀'.repeat(8) }));
    assert.equal((await login(s, 'Emoji', '😀'.repeat(8))).username, 'Emoji');
  });

  // Rule: --min-password-length sets the number (server, and the CLI through its variable).
  test('--min-password-length and MCAUTH_MIN_PASSWORD_LENGTH', async () => {
    assertFail(await admin(strict, 'POST', '/admin/users', { name: 'Strict', password: 'eleven-char' }), 400, 'The password must be at least 12 characters');
    assertOk(await admin(strict, 'POST', '/admin/users', { name: 'Strict', password: 'twelve-chars' }));
    const cliStrict = await cli(['add', 'Strict2'], 'eleven-char\n', { MCAUTH_MIN_PASSWORD_LENGTH: '12' });
    assert.deepEqual([cliStrict.code, cliStrict.stderr], [1, `The password must be at least 12 characters\n${DB_LINE}`]);
    for (const n of ['0', '257']) {
      const bad = await runCli(['serve', '--min-password-length', n, '--db', ':memory:']);
      assert.equal(bad.code, 2, n);
      assert.match(bad.stderr, /--min-password-length must be a whole number from 1 to 256/, n);
    }
  });

  // Rule: existing shorter passwords still log in.
  test('a password set under a looser policy still logs in', async () => {
    await addUser(db, 'OldTimer', 'abc', [], { MCAUTH_MIN_PASSWORD_LENGTH: '1' });
    assert.equal((await login(s, 'OldTimer', 'abc')).username, 'OldTimer');
    assert.equal((await login(strict, 'OldTimer', 'abc')).username, 'OldTimer');
  });
});

describe('lock', () => {
  // Rule: a locked player's right password gets 403 with the reason; a wrong one the usual 401.
  // Locking ends every token and join at once; /profile and /profiles still answer.
  test('user lock: 403 for the right password, 401 for a wrong one; tokens and join end; profiles answer', async () => {
    const uuid = await addUser(db, 'Locky', PASSWORD);
    const { accessToken } = await login(s, 'Locky', PASSWORD);
    assert.equal(await join(s, accessToken, uuid, 'lock-server'), true);
    assertOk(await s.post('/hasJoined', { username: 'Locky', serverID: 'lock-server' }));

    const locked = await cli(['lock', 'locky', '--reason', 'griefing spawn']);
    assert.equal(locked.code, 0, locked.stderr);
    assert.match(locked.stdout, /^Locked Locky; their sessions have ended\n/);
    assertFail(await s.post('/hasJoined', { username: 'Locky', serverID: 'lock-server' }), 404, 'Player has not joined this server');
    assert.equal(await join(s, accessToken, uuid, 'lock-server'), false);
    assertFail(await s.post('/auth', { login: 'Locky', password: PASSWORD }), 403, 'This account is locked: griefing spawn');
    assertFail(await s.post('/auth', { login: 'Locky', password: 'not-the-password' }), 401, 'Wrong login or password');
    assert.equal(assertOk(await s.post('/profile', { userUUID: uuid })).username, 'Locky');
    assert.deepEqual(assertOk(await s.post('/profiles', ['Locky'])), [{ id: uuid, name: 'Locky' }]);

    const shown = await cli(['show', 'Locky']);
    assert.match(shown.stdout, /^lock: {7}locked since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: griefing spawn$/m);

    const unlocked = await cli(['unlock', 'Locky']);
    assert.equal(unlocked.code, 0, unlocked.stderr);
    const again = await login(s, 'Locky', PASSWORD);
    assert.equal(await join(s, again.accessToken, uuid, 'lock-server'), true);
    assert.equal(await join(s, accessToken, uuid, 'lock-server'), false, 'an unlock brings no old token back');
  });

  // Rule: the admin API locks (with or without a reason) and unlocks, and shows the lock.
  test('admin API: POST .../lock {reason?}, POST .../unlock', async () => {
    const uuid = await addUser(db, 'AdminLocked', PASSWORD);
    const { accessToken } = await login(s, 'AdminLocked', PASSWORD);
    const r = assertOk(await admin(s, 'POST', '/admin/users/adminlocked/lock', {}));
    assert.equal(r.locked, true);
    assert.match(r.lockedAt, ISO);
    assert.equal(r.lockReason, null);
    assertFail(await s.post('/auth', { login: 'AdminLocked', password: PASSWORD }), 403, 'This account is locked');
    assert.equal(await join(s, accessToken, uuid, 'x'), false);
    assertFail(await admin(s, 'POST', '/admin/users/AdminLocked/lock', { reason: 'a\nb' }), 400, 'The reason must be text on one line');
    assertFail(await admin(s, 'POST', '/admin/users/AdminLocked/lock', { reason: 'r'.repeat(201) }), 400, 'The reason must be at most 200 characters');
    assert.equal(assertOk(await admin(s, 'POST', '/admin/users/AdminLocked/lock', { reason: 'chargeback' })).lockReason, 'chargeback');
    assertFail(await s.post('/auth', { login: 'AdminLocked', password: PASSWORD }), 403, 'This account is locked: chargeback');
    const open = assertOk(await admin(s, 'POST', `/admin/users/${uuid}/unlock`));
    assert.deepEqual([open.locked, open.lockedAt, open.lockReason], [false, null, null]);
    assert.equal((await login(s, 'AdminLocked', PASSWORD)).username, 'AdminLocked');
  });
});

describe('rename', () => {
  // Rule: the UUID and textures stay, the sessions end (a launcher keeps the name it logged in
  // with); the old name is free; a name taken in any case is refused.
  test('user rename keeps UUID and skin, ends the sessions, frees the old name, refuses a taken one', async () => {
    const uuid = await addUser(db, 'OldName', PASSWORD);
    await addUser(db, 'Taken', PASSWORD);
    assert.equal((await cli(['set', 'OldName', '--skin-url', 'https://skins.example/o.png', '--slim'])).code, 0);
    const { accessToken } = await login(s, 'OldName', PASSWORD);
    const taken = await cli(['rename', 'OldName', 'TAKEN']);
    assert.deepEqual([taken.code, taken.stderr], [1, `The name "TAKEN" is taken\n${DB_LINE}`]);
    const invalid = await cli(['rename', 'OldName', 'no spaces']);
    assert.deepEqual([invalid.code, invalid.stderr], [1, `Invalid name "no spaces": use 3 to 16 letters, digits and _\n${DB_LINE}`]);

    const renamed = await cli(['rename', 'oldname', 'NewName']);
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.match(renamed.stdout, new RegExp(`^Renamed OldName to NewName \\(${uuid}\\)\\n`));
    assert.equal(await join(s, accessToken, uuid, 'rename-server'), false, 'the token ended with the old name');
    const again = await login(s, 'NewName', PASSWORD);
    assert.equal(await join(s, again.accessToken, uuid, 'rename-server'), true);
    assert.deepEqual(assertOk(await s.post('/hasJoined', { username: 'newname', serverID: 'rename-server' })), { userUUID: uuid, isAlex: true, skinUrl: 'https://skins.example/o.png' });
    assertFail(await s.post('/hasJoined', { username: 'OldName', serverID: 'rename-server' }), 404, 'Player has not joined this server');
    assert.deepEqual(assertOk(await s.post('/profile', { userUUID: uuid })), { username: 'NewName', isAlex: true, skinUrl: 'https://skins.example/o.png' });
    assert.equal((await login(s, 'NewName', PASSWORD)).userUUID, uuid);
    assertFail(await s.post('/auth', { login: 'OldName', password: PASSWORD }), 401, 'Wrong login or password');
    const reused = await addUser(db, 'OldName', PASSWORD);
    assert.notEqual(reused, uuid, 'the old name is free for a new player');
  });

  test('admin API: POST .../rename {name}', async () => {
    const made = assertOk(await admin(s, 'POST', '/admin/users', { name: 'AdmRename', password: PASSWORD }));
    assertFail(await admin(s, 'POST', '/admin/users/AdmRename/rename', { name: 'taken' }), 409, 'The name "taken" is taken');
    const r = assertOk(await admin(s, 'POST', '/admin/users/AdmRename/rename', { name: 'AdmRenamed' }));
    assert.deepEqual([r.name, r.uuid], ['AdmRenamed', made.uuid]);
    assert.equal(assertOk(await admin(s, 'POST', `/admin/users/${made.uuid}/rename`, { name: 'admrenamed' })).name, 'admrenamed', 'a change of case only');
  });
});

describe('last login and creation time', () => {
  // Rule: the time of the last successful /auth is kept and shown by user list, user show and the admin API, with the creation time.
  test('user show, user list and the admin API show created and last login', async () => {
    const before = Date.now();
    await addUser(db, 'Seen', PASSWORD);
    let view = assertOk(await admin(s, 'GET', '/admin/users/Seen'));
    assert.ok(Date.parse(view.createdAt) >= before - 1000 && Date.parse(view.createdAt) <= Date.now());
    assert.equal(view.lastLoginAt, null);
    assert.match((await cli(['show', 'Seen'])).stdout, /^last login: never$/m);

    const loggedIn = Date.now();
    await login(s, 'Seen', PASSWORD);
    const answered = Date.now();
    // Times are kept in ms: a failed login that stamped its time would show a later one.
    await sleep(20);
    assertFail(await s.post('/auth', { login: 'Seen', password: 'wrong-password' }), 401, 'Wrong login or password');
    view = assertOk(await admin(s, 'GET', '/admin/users/seen'));
    assert.match(view.lastLoginAt, ISO);
    assert.ok(Date.parse(view.lastLoginAt) >= loggedIn - 1000 && Date.parse(view.lastLoginAt) <= answered, 'the successful login, not the failed one after it');
    const shown = (await cli(['show', 'Seen'])).stdout;
    const stamp = (ms: string) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
    assert.match(shown, new RegExp(`^name: {7}Seen$`, 'm'));
    assert.match(shown, new RegExp(`^created: {4}${stamp(view.createdAt)}$`, 'm'));
    assert.match(shown, new RegExp(`^last login: ${stamp(view.lastLoginAt)}$`, 'm'));
    assert.ok(!/scrypt|\$/.test(shown), 'no password hash');
    const line = (await cli(['list'])).stdout.split('\n').find((l) => l.startsWith('Seen '));
    assert.ok(line?.includes(`created ${stamp(view.createdAt)}  last login ${stamp(view.lastLoginAt)}`), String(line));
  });
});

describe('ending sessions ends the join', () => {
  // Rule: passwd, revoke, lock and remove delete the join in the same step: no hasJoined succeeds after.
  for (const [how, end] of [
    ['user passwd', (name: string) => cli(['passwd', name], 'another-password\n').then((r) => assert.equal(r.code, 0, r.stderr))],
    ['admin revoke', (name: string) => admin(s, 'POST', `/admin/users/${name}/revoke`).then((r) => void assertOk(r))],
    ['user lock', (name: string) => cli(['lock', name]).then((r) => assert.equal(r.code, 0, r.stderr))],
    ['admin remove', (name: string) => admin(s, 'DELETE', `/admin/users/${name}`).then((r) => void assertOk(r))],
  ] as [string, (name: string) => Promise<void>][]) {
    test(`${how}: the join made just before no longer counts`, async () => {
      const name = `End_${how.replace(/\W/g, '_')}`.slice(0, 16);
      const uuid = await addUser(db, name, PASSWORD);
      const { accessToken } = await login(s, name, PASSWORD);
      assert.equal(await join(s, accessToken, uuid, 'end-server'), true);
      assertOk(await s.post('/hasJoined', { username: name, serverID: 'end-server' }));
      await end(name);
      assertFail(await s.post('/hasJoined', { username: name, serverID: 'end-server' }), 404, 'Player has not joined this server');
    });
  }
});

describe('traps', () => {
  // Rule: every user command and backup name the absolute path of the database; user add on a path with no database says it created one.
  test('the database used is named by absolute path; a new one is announced', async () => {
    const fresh = await runCli(['user', 'add', 'First', '--db', 'fresh.db'], { stdin: `${PASSWORD}\n`, cwd: tmp.dir });
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout.split('\n')[1], `Created a new database at ${pathJoin(tmp.dir, 'fresh.db')}`);
    const second = await runCli(['user', 'add', 'Second', '--db', 'fresh.db'], { stdin: `${PASSWORD}\n`, cwd: tmp.dir });
    assert.equal(second.stdout.split('\n')[1], `Database: ${pathJoin(tmp.dir, 'fresh.db')}`);
    for (const args of [['user', 'list'], ['user', 'show', 'First'], ['user', 'lock', 'First'], ['user', 'unlock', 'First'], ['user', 'rename', 'First', 'Primo'], ['user', 'remove', 'Second'], ['backup', 'copy.db']]) {
      const r = await runCli([...args, '--db', 'fresh.db'], { cwd: tmp.dir });
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stdout.endsWith(`Database: ${pathJoin(tmp.dir, 'fresh.db')}\n`), `${args.join(' ')}: ${r.stdout}`);
    }
  });

  // Rule: user skin / user cape warn when no public URL is set where they can see it (environment, config file).
  test('user skin and user cape warn without a public URL in the environment or the config file', async () => {
    await addUser(db, 'Painter', PASSWORD);
    const png = pathJoin(tmp.dir, 'painter.png');
    writeFileSync(png, encodePng(64, 64, { seed: 7 }));
    const cape = pathJoin(tmp.dir, 'painter-cape.png');
    writeFileSync(cape, encodePng(64, 32, { seed: 8 }));
    const config = pathJoin(tmp.dir, 'painter.json');
    writeFileSync(config, JSON.stringify({ db, publicUrl: 'https://auth.example.org' }));
    const warning = /warning: no public URL in MCAUTH_PUBLIC_URL or a --config file: a server started without --public-url leaves this (skin|cape) out of its answers/;
    for (const [kind, file] of [['skin', png], ['cape', cape]]) {
      const bare = await cli([kind!, 'Painter', file!]);
      assert.equal(bare.code, 0, bare.stderr);
      assert.match(bare.stderr, warning);
      const viaEnv = await cli([kind!, 'Painter', file!], '', { MCAUTH_PUBLIC_URL: 'https://auth.example.org' });
      assert.deepEqual([viaEnv.code, viaEnv.stderr], [0, '']);
      const viaFile = await runCli(['user', kind!, 'Painter', file!, '--config', config]);
      assert.deepEqual([viaFile.code, viaFile.stderr], [0, '']);
    }
  });

  // Rule: the admin API refuses unknown fields with 400 naming the field; no silent random UUID.
  test('admin API: an unknown field is a 400 naming it, and nothing is created', async () => {
    assertFail(
      await admin(s, 'POST', '/admin/users', { name: 'Typo', password: PASSWORD, offlineUUID: true }),
      400,
      'Unknown field "offlineUUID": this call takes name, password, hash, uuid, offlineUuid',
    );
    assertFail(await admin(s, 'GET', '/admin/users/Typo'), 404, 'No player named "Typo"');
    assertFail(await admin(s, 'PATCH', '/admin/users/Seen', { skinURL: 'https://x.example/a.png' }), 400, 'Unknown field "skinURL": this call takes skinUrl, capeUrl, isAlex');
    assertFail(await admin(s, 'POST', '/admin/users/Seen/password', { password: PASSWORD, confirm: PASSWORD }), 400, 'Unknown field "confirm": this call takes password');
    assertFail(await admin(s, 'POST', '/admin/users/Seen/lock', { why: 'x' }), 400, 'Unknown field "why": this call takes reason');
    assertFail(await admin(s, 'POST', '/admin/users/Seen/rename', { newName: 'x' }), 400, 'Unknown field "newName": this call takes name');
  });

  // Rule: error messages quote at most 64 characters of any input.
  test('messages quote at most 64 characters of an input', async () => {
    const long = 'z'.repeat(500);
    const cut = `"${'z'.repeat(64)}…"`;
    assertFail(await admin(s, 'GET', `/admin/users/${long}`), 404, `No player named ${cut}`);
    assertFail(await admin(s, 'POST', '/admin/users', { name: long, password: PASSWORD }), 400, `Invalid name ${cut}: use 3 to 16 letters, digits and _`);
    assertFail(await admin(s, 'POST', '/admin/users', { name: 'Quoted', password: PASSWORD, uuid: long }), 400, `Invalid UUID ${cut}`);
    assertFail(await admin(s, 'POST', '/admin/users', { name: 'Quoted', password: PASSWORD, [long]: 1 }), 400, `Unknown field ${cut}: this call takes name, password, hash, uuid, offlineUuid`);
    assertFail(
      await admin(s, 'PATCH', '/admin/users/Seen', { skinUrl: `ftp://${long}` }),
      400,
      `Invalid URL "ftp://${'z'.repeat(58)}…": use an https:// address (http:// only with --allow-http-textures)`,
    );
    const r = await cli(['passwd', long], `${PASSWORD}\n`);
    assert.equal(r.stderr, `No player named ${cut}\n${DB_LINE}`);
  });

  // Rule: external texture URLs are https (http only with --allow-http-textures), at most 2,048 characters, without a user or password.
  test('external texture URLs: https, bounded, no credentials', async () => {
    const https = 'https://skins.example/a.png';
    assertOk(await admin(s, 'PATCH', '/admin/users/Seen', { skinUrl: https }));
    assertFail(await admin(s, 'PATCH', '/admin/users/Seen', { skinUrl: 'http://skins.example/a.png' }), 400, 'Invalid URL "http://skins.example/a.png": use an https:// address (http:// only with --allow-http-textures)');
    assertFail(await admin(s, 'PATCH', '/admin/users/Seen', { capeUrl: 'https://user:pw@skins.example/c.png' }), 400, 'Invalid URL "https://user:pw@skins.example/c.png": a texture URL must not carry a user or password');
    assertFail(await admin(s, 'PATCH', '/admin/users/Seen', { capeUrl: 'https://user@skins.example/c.png' }), 400, 'Invalid URL "https://user@skins.example/c.png": a texture URL must not carry a user or password');
    const longest = `https://skins.example/${'a'.repeat(2048 - 'https://skins.example/'.length)}`;
    assertOk(await admin(s, 'PATCH', '/admin/users/Seen', { skinUrl: longest }));
    assertFail(await admin(s, 'PATCH', '/admin/users/Seen', { skinUrl: `${longest}a` }), 400, 'A texture URL must be at most 2048 characters');
    const http = await startServer(['--db', db, '--admin-token', ADMIN, '--allow-http-textures']);
    try {
      assert.equal(assertOk(await admin(http, 'PATCH', '/admin/users/Seen', { skinUrl: 'http://skins.example/a.png' })).skinUrl, 'http://skins.example/a.png');
      assertFail(await admin(http, 'PATCH', '/admin/users/Seen', { skinUrl: 'ftp://skins.example/a.png' }), 400, 'Invalid URL "ftp://skins.example/a.png": use an https:// address (or http://)');
    } finally {
      await http.stop();
    }
    const cliHttp = await cli(['set', 'Seen', '--cape-url', 'http://skins.example/c.png']);
    assert.equal(cliHttp.code, 1);
    const cliAllowed = await cli(['set', 'Seen', '--cape-url', 'http://skins.example/c.png'], '', { MCAUTH_ALLOW_HTTP_TEXTURES: 'true' });
    assert.equal(cliAllowed.code, 0, cliAllowed.stderr);
  });
});
