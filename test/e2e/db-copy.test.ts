// `db copy`: a community on a SQLite file (players, one locked and one with a hosted skin, a live
// token and a join, an invite, a reset code, failed logins) copied to PostgreSQL while its server
// runs, then served from there as it was: the old password logs in, the old token joins, the copied
// join is found, the skin downloads, the invite and the reset code work, the lock holds. Then
// PostgreSQL to a new SQLite file and to a second PostgreSQL database, with equal counts; a target
// holding anything refused without --replace and emptied with it; progress on standard error; the
// database's password in no output. Without PostgreSQL on the machine the copies skip, saying so.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { databaseServer, postgresMissing, PG_PASSWORD, PG_USER, type DatabaseServer } from '../helpers/postgres.ts';
import { runCli, startServerOnFreePort, tempDir, type ProcResult, type RunningServer } from '../helpers/process.ts';
import { call } from '../helpers/call.ts';
import { addPlayers } from '../helpers/players.ts';
import { TABLES as COPIED } from '../../src/postgres/copy.ts';
import { encodePng, textureName } from '../helpers/png.ts';
import { CONSOLE_TABLES } from '../../src/console/data.ts';

const ADMIN = 'copy-admin-token-0123456';
const PW = 'player-Pass-5Rt8';
const admin = { authorization: `Bearer ${ADMIN}` };
const TABLES = ['textures', 'users', 'tokens', 'joins', 'invites', 'reset_codes', 'login_failures', 'secrets'];
/** Failed-login rows put straight into PostgreSQL, so that a copy takes several batches and reports progress within a table. */
const FILLER = 25_000;


/** Every output of the test's processes, searched for the database's password at the end. */
const outputs: string[] = [];
async function cli(args: string[], env: Record<string, string> = {}): Promise<ProcResult> {
  const r = await runCli(args, { env, timeoutMs: 60_000 });
  outputs.push(r.stdout, r.stderr);
  return r;
}

/** The rows of each table as the report on standard output gives them; fails when a count differs from the source's. */
function reported(r: ProcResult): Record<string, number> {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
  assert.doesNotMatch(r.stdout, /source:/, 'a count that differs');
  const counts: Record<string, number> = {};
  for (const m of r.stdout.matchAll(/^ {2}(\w+) +(\d+)$/gm)) counts[m[1]!] = Number(m[2]);
  assert.deepEqual(Object.keys(counts), TABLES, r.stdout);
  return counts;
}

/** Each table's rows in a SQLite file, read-only (a server may hold it). */
function fileCounts(path: string): Record<string, number> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, Number((db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n)]));
  } finally {
    db.close();
  }
}

/** Every row of every table of a SQLite file, as text: what must not change when it is read. */
function fileRows(path: string): string {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return JSON.stringify(TABLES.map((t) => db.prepare(`SELECT * FROM ${t} ORDER BY 1`).all()), (_, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v));
  } finally {
    db.close();
  }
}

async function databaseCounts(cluster: DatabaseServer, db: string): Promise<Record<string, number>> {
  const out = await cluster.psql(TABLES.map((t) => `SELECT count(*) FROM ${t};`).join(' '), db);
  const numbers = out.trim().split('\n').map(Number);
  return Object.fromEntries(TABLES.map((t, i) => [t, numbers[i]!]));
}

const server: DatabaseServer | undefined = postgresMissing ? undefined : await databaseServer();

test('db copy refuses malformed command lines with status 2', async () => {
  for (const [args, message] of [
    [['db'], 'expected COMMAND, got none'],
    [['db', 'move', '--from', 'a.db', '--to', 'postgres://h/db'], 'unknown command "db move": db has one command, copy'],
    [['db', 'copy', '--from', 'a.db'], 'db copy needs --from SOURCE and --to TARGET'],
    [['db', 'copy', '--from', 'a.db', '--to', 'b.db'], 'use backup FILE'],
    [['db', 'copy', '--from', 'postgres://u:secret-pw@h/db', '--to', 'postgres://u:secret-pw@h/db'], 'the same database'],
  ] as const) {
    const r = await cli([...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.includes(message), r.stderr);
    assert.ok(!r.stderr.includes('secret-pw'), r.stderr);
  }
});

describe('db copy between SQLite and PostgreSQL', { skip: postgresMissing }, () => {
  const tmp = tempDir();
  const file = pathJoin(tmp.dir, 'community.db');
  const skin = encodePng(64, 64, { seed: 7 });
  let cluster: DatabaseServer;
  /** The database the file is copied to; `second`, the one a copy of that is copied to. */
  let main = '';
  let second = '';
  let onFile: RunningServer;
  let uuids: Map<string, string>;
  let token = '';
  let inviteCode = '';
  let resetCode = '';
  /** What the file held when it was copied. */
  let fileHeld: Record<string, number>;

  before(async () => {
    cluster = server!;
    main = await cluster.newDatabase('community');
    // With --yggdrasil: its signing key, made at this start, is copied with the rest.
    onFile = await startServerOnFreePort((port) => ['--db', file, '--admin-token', ADMIN, '--public-url', `http://127.0.0.1:${port}`, '--join-ttl', '3600', '--yggdrasil']);
    uuids = await addPlayers(onFile.port, ADMIN, ['Alice', 'Bob', 'Carol'], PW);
    token = (await call(onFile.port, '/auth', { body: { login: 'Alice', password: PW } })).body.result.accessToken;
    const joined = await call(onFile.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Alice'), serverID: 'srv-before' } });
    assert.deepEqual(joined.body, { success: true, result: true });
    assert.equal((await call(onFile.port, '/auth', { body: { login: 'Carol', password: 'a-wrong-guess' } })).status, 401);
    assert.equal((await call(onFile.port, '/admin/users/Bob/lock', { headers: admin, body: { reason: 'griefing' } })).status, 200);
    const uploaded = await onFile.request('/admin/users/Carol/skin?model=slim', { method: 'PUT', headers: { ...admin, 'content-type': 'image/png' }, body: skin });
    assert.equal(uploaded.status, 200, uploaded.text);
    const invite = await cli(['invite', 'create', '--db', file]);
    inviteCode = /\nCode: ([0-9a-f]{32})\n/.exec(invite.stdout)?.[1] ?? assert.fail(invite.stdout + invite.stderr);
    const reset = await cli(['user', 'reset-link', 'Carol', '--db', file]);
    resetCode = /(?:#reset=|\n)([0-9a-f]{32})\n/.exec(reset.stdout)?.[1] ?? assert.fail(reset.stdout + reset.stderr);
  });

  after(async () => {
    await onFile?.stop();
    tmp.cleanup();
  });

  test('a SQLite file copied to PostgreSQL while its server runs: every table, the file unchanged', async () => {
    fileHeld = fileCounts(file);
    assert.deepEqual({ ...fileHeld }, { textures: 1, users: 3, tokens: 1, joins: 1, invites: 1, reset_codes: 1, login_failures: fileHeld.login_failures, secrets: 1 });
    assert.ok(fileHeld.login_failures! >= 1, 'the failed login is counted');
    const rowsBefore = fileRows(file);
    const r = await cli(['db', 'copy', '--from', file, '--to', cluster.url(main)]);
    assert.deepEqual(reported(r), fileHeld);
    assert.equal(r.stdout.split('\n')[0], `Copied ${file} to postgres://${PG_USER}:********@127.0.0.1:${cluster.port}/${main}:`);
    for (const t of TABLES) assert.match(r.stderr, new RegExp(`^${t}: ${fileHeld[t]} of ${fileHeld[t]} ${fileHeld[t] === 1 ? 'row' : 'rows'}$`, 'm'), r.stderr);
    assert.deepEqual(await databaseCounts(cluster, main), fileHeld);
    assert.equal(fileRows(file), rowsBefore, 'reading the source changed it');
    assert.equal((await call(onFile.port, '/health')).status, 200, 'the server on the file is unbothered');
  });

  test('a server on the PostgreSQL copy serves the community as it was', async () => {
    await onFile.stop();
    outputs.push(onFile.stdout(), onFile.stderr());
    const s = await startServerOnFreePort((port) => [
      '--db', cluster.url(main), '--admin-token', ADMIN, '--public-url', `http://127.0.0.1:${port}`, '--join-ttl', '3600', '--account-page', '--registration', 'invite',
    ]);
    try {
      const seen = await call(s.port, '/hasJoined', { body: { username: 'Alice', serverID: 'srv-before' } });
      assert.equal(seen.body.result?.userUUID, uuids.get('Alice'), JSON.stringify(seen.body));
      const joined = await call(s.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Alice'), serverID: 'srv-after' } });
      assert.deepEqual(joined.body, { success: true, result: true }, 'the old token joins');
      assert.equal((await call(s.port, '/auth', { body: { login: 'Alice', password: PW } })).status, 200, 'the old password');

      const locked = await call(s.port, '/auth', { body: { login: 'Bob', password: PW } });
      assert.deepEqual([locked.status, locked.body.error], [403, 'This account is locked: griefing']);

      const carol = await call(s.port, '/profile', { body: { userUUID: uuids.get('Carol') } });
      assert.deepEqual([carol.body.result?.skinUrl, carol.body.result?.isAlex], [`${s.url}/textures/${textureName(skin)}`, true], JSON.stringify(carol.body));
      const download = await fetch(`${s.url}/textures/${textureName(skin)}`);
      assert.equal(download.status, 200);
      assert.deepEqual(Buffer.from(await download.arrayBuffer()), skin);

      const signedUp = await s.post('/account/register', { name: 'Dave', password: 'dave-Pass-3Wq9', invite: inviteCode });
      assert.equal(signedUp.status, 200, signedUp.text);
      const reset = await s.post('/account/reset', { code: resetCode, password: 'carol-New-Pass-1' });
      assert.deepEqual(reset.body, { success: true, result: { username: 'Carol' } }, reset.text);
      assert.equal((await call(s.port, '/auth', { body: { login: 'Carol', password: 'carol-New-Pass-1' } })).status, 200);
    } finally {
      outputs.push(s.stdout(), s.stderr());
      await s.stop();
    }
  });

  test('PostgreSQL to a new SQLite file (0600) and to a second PostgreSQL database: equal counts, progress within a table', async () => {
    await cluster.psql(`INSERT INTO login_failures (name_key, failures, last_at) SELECT 'filler_' || g, 1, 0 FROM generate_series(1, ${FILLER}) AS g`, main);
    const held = await databaseCounts(cluster, main);
    assert.equal(held.users, 4);

    const back = pathJoin(tmp.dir, 'back.db');
    const toFile = await cli(['db', 'copy', '--from', cluster.url(main), '--to', back]);
    assert.deepEqual(reported(toFile), held);
    assert.deepEqual(fileCounts(back), held);
    assert.equal(statSync(back).mode & 0o777, 0o600);
    assert.match(toFile.stderr, /^login_failures: 10000 of \d+ rows\nlogin_failures: 20000 of \d+ rows\nlogin_failures: (\d+) of \1 rows$/m, toFile.stderr);
    const bob = await cli(['user', 'show', 'Bob', '--db', back]);
    assert.match(bob.stdout, /^lock: +locked since .*: griefing$/m, bob.stdout);
    const carol = await cli(['user', 'show', 'Carol', '--db', back]);
    assert.match(carol.stdout, new RegExp(`^skin: +hosted ${textureName(skin)} \\(slim\\)$`, 'm'), carol.stdout);

    second = await cluster.newDatabase('second');
    // The password from PGPASSWORD here, not the URL.
    const bare = (db: string): string => cluster.url(db).replace(`:${PG_PASSWORD}@`, '@');
    const toSecond = await cli(['db', 'copy', '--from', bare(main), '--to', bare(second)], { PGPASSWORD: PG_PASSWORD });
    assert.deepEqual(reported(toSecond), held);
    assert.deepEqual(await databaseCounts(cluster, second), held);
    // Tokens keep their order of storing: the newest stays the newest.
    assert.equal(
      await cluster.psql('SELECT string_agg(digest, \',\' ORDER BY stored) FROM tokens', second),
      await cluster.psql('SELECT string_agg(digest, \',\' ORDER BY stored) FROM tokens', main),
    );
  });

  test('a target that holds anything is refused without --replace, and emptied and copied over with it', async () => {
    const secondUrl = cluster.url(second);
    const before = await databaseCounts(cluster, second);
    const refused = await cli(['db', 'copy', '--from', file, '--to', secondUrl]);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, new RegExp(`^mcauth: nothing was copied to postgres://${PG_USER}:\\*{8}@127\\.0\\.0\\.1:${cluster.port}/${second}: the target is not empty \\([^)]*users: 4[^)]*\\); give --replace`, 'm'), refused.stderr);
    assert.deepEqual(await databaseCounts(cluster, second), before, 'a refusal writes nothing');

    const replaced = await cli(['db', 'copy', '--from', file, '--to', secondUrl, '--replace']);
    assert.deepEqual(reported(replaced), fileHeld);
    assert.deepEqual(await databaseCounts(cluster, second), fileHeld);

    const back = pathJoin(tmp.dir, 'back.db');
    const refusedFile = await cli(['db', 'copy', '--from', secondUrl, '--to', back]);
    assert.equal(refusedFile.code, 1);
    assert.match(refusedFile.stderr, new RegExp(`^mcauth: nothing was copied to ${back}: the target is not empty \\(.*\\); give --replace`, 'm'), refusedFile.stderr);
    assert.deepEqual(reported(await cli(['db', 'copy', '--from', secondUrl, '--to', back, '--replace'])), fileHeld);
    assert.deepEqual(fileCounts(back), fileHeld);
  });

  test("a target holding any table that is not mcauth's is refused before anything is written, --replace or not", async () => {
    const other = pathJoin(tmp.dir, 'forum.db');
    const forum = new DatabaseSync(other);
    forum.exec("CREATE TABLE posts (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO posts (body) VALUES ('hello')");
    forum.close();
    const fileTables = (): string[] => {
      const db = new DatabaseSync(other, { readOnly: true });
      try {
        return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((t) => t.name);
      } finally {
        db.close();
      }
    };
    const foreign = await cluster.newDatabase('shop');
    await cluster.psql('CREATE TABLE orders (id integer); CREATE TABLE users (id text)', foreign);
    const databaseTables = async (): Promise<string> => (await cluster.psql("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = 'public'", foreign)).trim();
    for (const replace of [[], ['--replace']]) {
      const toFile = await cli(['db', 'copy', '--from', cluster.url(main), '--to', other, ...replace]);
      assert.equal(toFile.code, 1, toFile.stderr);
      assert.match(toFile.stderr, new RegExp(`^mcauth: cannot open the target ${other}: the target holds tables that are not mcauth's \\(posts\\): it is another program's database, and nothing was written to it`, 'm'), toFile.stderr);
      assert.deepEqual(fileTables(), ['posts'], 'no table of mcauth was made in the file');
      const toDatabase = await cli(['db', 'copy', '--from', file, '--to', cluster.url(foreign), ...replace]);
      assert.equal(toDatabase.code, 1, toDatabase.stderr);
      assert.match(toDatabase.stderr, /the target holds tables that are not mcauth's \(orders\): it is another program's database, and nothing was written to it/, toDatabase.stderr);
      assert.equal(await databaseTables(), 'orders,users', 'no table of mcauth was made in the database');
    }
  });

  // Rule: the admin page's own tables (an audit trail, login counts) are mcauth's: a database a
  // server with --admins ran on is no other program's, and can be copied over with --replace.
  test("a target holding the admin page's tables is mcauth's: --replace copies over it", async () => {
    const served = pathJoin(tmp.dir, 'served-with-admins.db');
    assert.equal((await cli(['db', 'copy', '--from', cluster.url(main), '--to', served])).code, 0);
    const db = new DatabaseSync(served);
    db.exec(CONSOLE_TABLES.map((table) => `CREATE TABLE ${table} (x INTEGER)`).join('; '));
    db.close();
    const again = await cli(['db', 'copy', '--from', cluster.url(main), '--to', served, '--replace']);
    assert.equal(again.code, 0, again.stderr);
    const target = await cluster.newDatabase('served_with_admins');
    assert.equal((await cli(['db', 'copy', '--from', file, '--to', cluster.url(target)])).code, 0);
    await cluster.psql(CONSOLE_TABLES.map((table) => `CREATE TABLE ${table} (x integer)`).join('; '), target);
    const toDatabase = await cli(['db', 'copy', '--from', file, '--to', cluster.url(target), '--replace']);
    assert.equal(toDatabase.code, 0, toDatabase.stderr);
  });

  test('a copy that fails says why, the password masked, and leaves no new file behind', async () => {
    const target = pathJoin(tmp.dir, 'never.db');
    const wrong = await cli(['db', 'copy', '--from', cluster.url(main).replace(PG_PASSWORD, 'not-the-password'), '--to', target]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^mcauth: cannot open the source postgres:\/\/mcauth:\*{8}@/m, wrong.stderr);
    assert.ok(!wrong.stderr.includes('not-the-password'), wrong.stderr);
    assert.equal(existsSync(target), false);

    const nothing = await cluster.newDatabase('nothing');
    const empty = await cli(['db', 'copy', '--from', cluster.url(nothing), '--to', target]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, new RegExp(`^mcauth: cannot open the source postgres://mcauth:\\*{8}@\\S+/${nothing}: it holds no mcauth database$`, 'm'), empty.stderr);
    assert.equal(existsSync(target), false);

    // Refused by the target once it is made (a player's skin missing from a source whose check
    // was dropped): rolled back, and the new file goes again.
    const broken = await cluster.newDatabase('broken');
    assert.equal((await cli(['db', 'copy', '--from', file, '--to', cluster.url(broken)])).code, 0);
    await cluster.psql("ALTER TABLE users DROP CONSTRAINT users_skin_hash_fkey; UPDATE users SET skin_hash = 'gone' WHERE name = 'Carol'", broken);
    const refused = await cli(['db', 'copy', '--from', cluster.url(broken), '--to', target]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, new RegExp(`^mcauth: nothing was copied to ${target}: FOREIGN KEY constraint failed$`, 'm'), refused.stderr);
    assert.equal(existsSync(target), false);
  });

  test('db copy knows every table and column of both schemas: a column a migration adds cannot be left behind', async () => {
    const known = COPIED.map((t) => [t.name, Object.keys(t.columns).sort()] as const).sort(([x], [y]) => x.localeCompare(y));
    // Not community data: the schema's version, and short-lived limit counts (PostgreSQL's own).
    const notCopied = new Set(['mcauth_schema', 'window_counts']);
    const conn = new DatabaseSync(file, { readOnly: true });
    try {
      const names = (conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
      const inFile = names.map((name) => [name, (conn.prepare(`PRAGMA table_info(${name})`).all() as { name: string }[]).map((c) => c.name).sort()] as const);
      assert.deepEqual(inFile, known, 'the SQLite schema');
    } finally {
      conn.close();
    }
    const rows = await cluster.psql("SELECT table_name || ' ' || string_agg(column_name, ' ' ORDER BY column_name) FROM information_schema.columns WHERE table_schema = 'public' GROUP BY table_name ORDER BY table_name", main);
    const inDatabase = rows
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .filter(([name]) => !notCopied.has(name!))
      // Tokens' order of storing, which the target numbers anew.
      .map(([name, ...columns]) => [name!, columns.filter((c) => !(name === 'tokens' && c === 'stored')).sort()] as const);
    assert.deepEqual(inDatabase, known, 'the PostgreSQL schema');
  });

  test('no output of the copies, the commands or the servers shows the database password', () => {
    assert.ok(outputs.length > 10);
    for (const text of outputs) assert.ok(!text.includes(PG_PASSWORD), `the database password in:\n${text}`);
  });
});
