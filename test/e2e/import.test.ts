// `import`: players of AuthMe, drasl, a csv and a json file brought in with the hashes they had,
// through the real command line, then logged in over HTTP with their old passwords. Each
// fixture is made here from known passwords; bcrypt and phpass hashes are the reference
// implementations' published vectors (see test/import/ for their sources).
import assert from 'node:assert/strict';
import * as nodeCrypto from 'node:crypto';
import { createHash, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { offlineUuid } from '../../src/uuid.ts';
import { AUTHME_SCHEMA, DRASL_SCHEMA } from '../helpers/import-fixtures.ts';
import { addUser, runCli, RUNTIME, startServer, tempDir, type ProcResult, type RunningServer } from '../helpers/process.ts';
import { assertFail, assertOk } from './util.ts';

const tmp = tempDir();
after(tmp.cleanup);
const path = (name: string): string => join(tmp.dir, name);

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
/** AuthMe's default: $SHA$salt$ SHA-256(SHA-256(password) + salt), in hex (its Sha256.java). */
const authmeSha = (password: string, salt: string): string => `$SHA$${salt}$${sha256(sha256(password) + salt)}`;
/** Django's PBKDF2 form. */
const django = (password: string, salt: string, iterations: number): string =>
  `pbkdf2_sha256$${iterations}$${salt}$${pbkdf2Sync(password, salt, iterations, 32, 'sha256').toString('base64')}`;

// Published vectors: Solar Designer's crypt_blowfish (wrapper.c) for bcrypt; Openwall phpass
// (as passlib's phpass tests quote it) for $P$.
const BCRYPT_2A = { password: 'U*U', hash: '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW' };
const BCRYPT_2Y = { password: 'U*U*', hash: '$2y$05$CCCCCCCCCCCCCCCCCCCCC.VGOzA784oUp/Z0DY336zx7pLYAy0lwK' };
const PHPASS = { password: 'test12345', hash: '$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0' };

async function cli(args: string[]): Promise<ProcResult> {
  return runCli(args, { timeoutMs: 60_000 });
}

/** The stored password hash of a player, read from the database file beside the running server. */
function storedHash(db: string, name: string): string {
  const file = new DatabaseSync(db, { readOnly: true });
  try {
    return (file.prepare('SELECT password_hash FROM users WHERE name_key = ?').get(name.toLowerCase()) as { password_hash: string }).password_hash;
  } finally {
    file.close();
  }
}

function usersOf(db: string): unknown[] {
  const file = new DatabaseSync(db, { readOnly: true });
  try {
    return file.prepare('SELECT * FROM users ORDER BY name_key').all();
  } finally {
    file.close();
  }
}

/**
 * Logs in with the old password (200, the expected UUID), checks the hash is scrypt now, that
 * the old password still works, and that a wrong one is a 401.
 */
async function logsInAndMigrates(server: RunningServer, db: string, name: string, password: string, uuid: string): Promise<void> {
  const before = storedHash(db, name);
  assert.doesNotMatch(before, /^scrypt\$/, `${name} starts with a foreign hash`);
  assertFail(await server.post('/auth', { login: name, password: `${password}-wrong` }), 401, 'Wrong login or password');
  assert.equal(storedHash(db, name), before, 'a wrong password changes nothing');
  const first = assertOk(await server.post('/auth', { login: name, password }));
  assert.equal(first.userUUID, uuid, name);
  assert.match(storedHash(db, name), /^scrypt\$/, `${name}'s hash is scrypt after the first login`);
  assert.equal(assertOk(await server.post('/auth', { login: name, password })).userUUID, uuid, `${name} again, on scrypt`);
  assertFail(await server.post('/auth', { login: name, password: `${password}-wrong` }), 401, 'Wrong login or password');
}

describe('import from AuthMe', () => {
  const authme = path('authme.db');
  const db = path('authme-import.db');
  const players = {
    Steve: { password: 'steve-old-password', hash: authmeSha('steve-old-password', 'a2b6e8c0d4f1e3b5') },
    alex_2: BCRYPT_2A,
    Notch: BCRYPT_2Y,
    Wordpress: PHPASS,
  };

  test('the AuthMe file: a dry run and --on-conflict fail write nothing; then the import, its report, and a second import that changes nothing', async () => {
    const file = new DatabaseSync(authme);
    file.exec(AUTHME_SCHEMA);
    const insert = file.prepare('INSERT INTO authme (username, realname, password, regdate) VALUES (?, ?, ?, 0)');
    for (const [name, p] of Object.entries(players)) insert.run(name.toLowerCase(), name, p.hash);
    insert.run('taken', 'Taken', authmeSha('x', 'ffff'));
    insert.run('bad name', 'bad name', authmeSha('x', 'ffff'));
    insert.run('md5er', 'Md5er', '5f4dcc3b5aa765d61d8327deb882cf99');
    file.close();
    await addUser(db, 'TAKEN', 'taken-password');
    const before = usersOf(db);

    const dry = await cli(['import', authme, '--db', db, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^Read 7 players from .*authme\.db \(authme\)$/m);
    assert.match(dry.stdout, /^Would import: 4$/m);
    assert.match(dry.stdout, /^ {2}hash authme-sha256: 1$/m);
    assert.match(dry.stdout, /^ {2}hash bcrypt: 2$/m);
    assert.match(dry.stdout, /^ {2}hash phpass: 1$/m);
    assert.match(dry.stdout, /^Skipped: 3$/m);
    assert.match(dry.stdout, /^ {2}name taken \(in any case\): 1$/m);
    assert.match(dry.stdout, /^ {2}invalid name: 1$/m);
    assert.match(dry.stdout, /^ {2}unknown hash format: 1$/m);
    assert.match(dry.stdout, /^ {2}row \d+ "Md5er": unknown hash format$/m);
    assert.match(dry.stdout, /^Dry run: nothing was written$/m);
    assert.match(dry.stdout, new RegExp(`^Database: ${db.replaceAll('.', '\\.')}$`, 'm'));
    assert.deepEqual(usersOf(db), before);

    const fail = await cli(['import', authme, '--db', db, '--on-conflict', 'fail']);
    assert.equal(fail.code, 1);
    assert.match(fail.stderr, /^Would import: 4$/m);
    assert.match(fail.stderr, /Stopped by --on-conflict fail: nothing was imported, as a name or UUID is taken/);
    assert.deepEqual(usersOf(db), before);

    const done = await cli(['import', authme, '--db', db]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stdout, /^Imported: 4$/m);
    assert.equal(usersOf(db).length, 5);
    const once = usersOf(db);

    const again = await cli(['import', authme, '--db', db]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^Imported: 0$/m);
    assert.match(again.stdout, /^ {2}name taken \(in any case\): 5$/m);
    assert.deepEqual(usersOf(db), once, 'a second import changes nothing');
  });

  test('each player logs in with the old password and gets the offline-mode UUID; the hash becomes scrypt', async () => {
    const server = await startServer(['--db', db]);
    try {
      for (const [name, p] of Object.entries(players)) await logsInAndMigrates(server, db, name, p.password, offlineUuid(name));
    } finally {
      await server.stop();
    }
  });
});

describe('import from drasl, csv and json; the admin API', () => {
  const db = path('other-import.db');
  const drasl = { uuid: '9b2f6b7e-0c1d-4e2f-8a3b-4c5d6e7f8091', salt: randomBytes(16), password: 'kim-drasl-password' };
  const draslKey = scryptSync(drasl.password, drasl.salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
  const csvUuid = '0f1e2d3c-4b5a-4697-8877-665544332211';
  const xenforo = `a:1:{s:4:"hash";s:60:"${BCRYPT_2Y.hash}";}`;
  let argon2Here = false;
  const argon2Sync = (nodeCrypto as { argon2Sync?: (algorithm: string, options: object) => Buffer }).argon2Sync;

  test('drasl: the UUID and slim model kept, drasl\'s scrypt checked', async () => {
    const file = new DatabaseSync(path('drasl.db'));
    file.exec(DRASL_SCHEMA);
    file.prepare("INSERT INTO users (is_admin, is_locked, uuid, username, password_salt, password_hash, preferred_language, max_player_count) VALUES (0, 0, 'u-1', 'kim', ?, ?, 'en', -1)").run(drasl.salt, draslKey);
    file.prepare("INSERT INTO players (uuid, name, offline_uuid, skin_model, user_uuid) VALUES (?, 'Kim', 'x', 'slim', 'u-1')").run(drasl.uuid);
    file.close();
    const r = await cli(['import', path('drasl.db'), '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\(drasl\)$/m);
    assert.match(r.stdout, /^ {2}hash drasl-scrypt: 1$/m);
  });

  test('csv: Django PBKDF2, XenForo\'s serialized bcrypt, a UUID and textures; json: AuthMe\'s SHA-256 and argon2id', async () => {
    writeFileSync(
      path('cabinet.csv'),
      [
        'name,hash,uuid,skinUrl,capeUrl,isAlex',
        `Django,${django('django-password', 'seasalt', 1000)},${csvUuid},https://cdn.example.org/s.png,https://cdn.example.org/c.png,true`,
        `Xen,"${xenforo.replaceAll('"', '""')}",,,,`,
      ].join('\r\n'),
    );
    const csv = await cli(['import', path('cabinet.csv'), '--db', db]);
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(csv.stdout, /\(csv\)$/m);
    assert.match(csv.stdout, /^Imported: 2$/m);
    const rows: object[] = [{ name: 'Shaun', hash: authmeSha('shaun-password', '0123456789abcdef') }];
    if (argon2Sync) {
      const nonce = randomBytes(16);
      const tag = argon2Sync('argon2id', { message: 'argon-password', nonce, parallelism: 1, tagLength: 32, memory: 8192, passes: 2 });
      const b64 = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');
      rows.push({ name: 'Argon', hash: `$argon2id$v=19$m=8192,t=2,p=1$${b64(nonce)}$${b64(tag)}` });
    }
    writeFileSync(path('players.json'), JSON.stringify(rows));
    const json = await cli(['import', path('players.json'), '--db', db]);
    assert.equal(json.code, 0, json.stderr);
    assert.match(json.stdout, /\(json\)$/m);
    assert.match(json.stdout, new RegExp(`^Imported: ${rows.length}$`, 'm'));
    // Where the runtime has no crypto.argon2 (Deno, an older Node), the report says so.
    argon2Here = argon2Sync !== undefined && !/^Warning: 1 player has an argon2 hash, which this runtime cannot check/m.test(json.stdout);
    if (RUNTIME === 'node') assert.equal(argon2Here, argon2Sync !== undefined, 'this Node checks argon2');
  });

  test('every one logs in with the old password; the csv UUID, textures and model and the drasl UUID are kept', async () => {
    const server = await startServer(['--db', db, '--admin-token', 'import-admin-token-0123456789']);
    try {
      await logsInAndMigrates(server, db, 'Kim', drasl.password, drasl.uuid);
      await logsInAndMigrates(server, db, 'Django', 'django-password', csvUuid);
      const django = assertOk(await server.post('/auth', { login: 'Django', password: 'django-password' }));
      assert.deepEqual([django.skinUrl, django.capeUrl, django.isAlex], ['https://cdn.example.org/s.png', 'https://cdn.example.org/c.png', true]);
      await logsInAndMigrates(server, db, 'Xen', BCRYPT_2Y.password, offlineUuid('Xen'));
      await logsInAndMigrates(server, db, 'Shaun', 'shaun-password', offlineUuid('Shaun'));
      if (argon2Here) await logsInAndMigrates(server, db, 'Argon', 'argon-password', offlineUuid('Argon'));
      else if (argon2Sync) {
        const r = await server.post('/auth', { login: 'Argon', password: 'argon-password' });
        assert.equal(r.status, 503);
        assert.match(r.body.error, /^This account's password cannot be checked on this server: .*argon2/);
      }

      // The admin API takes a foreign hash instead of a password, by the same rules.
      const admin = { authorization: 'Bearer import-admin-token-0123456789', 'content-type': 'application/json' };
      const create = (body: object) => server.request('/admin/users', { method: 'POST', headers: admin, body: JSON.stringify(body) });
      const kim = assertOk(await server.request('/admin/users/Kim', { headers: admin }));
      assert.deepEqual([kim.uuid, kim.isAlex], [drasl.uuid, true], "drasl's slim model is kept");
      const made = assertOk(await create({ name: 'Adminned', hash: PHPASS.hash }));
      await logsInAndMigrates(server, db, 'Adminned', PHPASS.password, made.uuid);
      assertFail(await create({ name: 'Md5', hash: '5f4dcc3b5aa765d61d8327deb882cf99' }), 400, 'Field "hash": unknown hash format');
      assertFail(await create({ name: 'Both', hash: PHPASS.hash, password: 'a-password' }), 400, 'Give password or hash, not both');
    } finally {
      await server.stop();
    }
  });
});
