// Backups: `backup FILE` copies the live database (VACUUM INTO, one read transaction) while the
// server and `user` commands keep writing; the copy is a whole database of the current schema
// holding everything committed before the backup began, and a server runs on it. The command
// never overwrites a file, refuses :memory:, and leaves nothing behind when it fails.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join as pathJoin, resolve as resolvePath } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { SCHEMA_VERSION } from '../../src/store/schema.ts';
import { addUser, runCli, startServer, tempDir, timedPost } from '../helpers/process.ts';
import type { ProcResult } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { assertOk, join, login, sleep } from './util.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

function assertNoStack(r: ProcResult): void {
  assert.doesNotMatch(r.stderr, /^\s{4}at /m, `stack trace on stderr:\n${r.stderr}`);
}

/** Files in `dir` that a backup writes before its rename. */
const partials = (dir: string): string[] => readdirSync(dir).filter((f) => f.includes('.partial'));

const digest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Players inserted straight into the file so the copy takes a while and writes overlap it. */
const FILLER = 40_000;

// Rule: a backup taken while logins issue tokens and `user add` commands add players is a whole
// database (integrity_check ok) of the current schema version, holds every player and token
// committed before it began, and a server started on it logs in an old player.
test('a backup during logins and `user add` commands is whole, current, and serves', { timeout: 120_000 }, async (t) => {
  const db = pathJoin(tmp.dir, 'live.db');
  const copy = pathJoin(tmp.dir, 'copy.db');
  const players = Array.from({ length: 8 }, (_, i) => ({ name: `Backup_${i}`, password: `backup-pw-${i}`, uuid: '' }));
  const uuids = await Promise.all(players.map((p) => seedPlayer(db, p.name, p.password)));
  players.forEach((p, i) => (p.uuid = uuids[i]!));
  {
    const file = new DatabaseSync(db);
    try {
      file.exec('BEGIN');
      const insert = file.prepare('INSERT INTO users (id, name, name_key, password_hash, is_alex, created_at) VALUES (?, ?, ?, ?, 0, ?)');
      for (let i = 0; i < FILLER; i++) {
        const name = `Filler_${i}`;
        insert.run(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, name, name.toLowerCase(), `not-a-hash-${'x'.repeat(100)}`, Date.now());
      }
      file.exec('COMMIT');
    } finally {
      file.close();
    }
  }

  const s = await startServer(['--db', db]);
  let stop = false;
  /** Logins answered with a token: who, which token, when it was sent and when the answer arrived. */
  const tokens: { player: number; token: string; sentAt: number; doneAt: number }[] = [];
  /** Each player's joins in the order sent (a player's requests go one at a time). */
  const joins: { serverID: string; sentAt: number; doneAt: number }[][] = players.map(() => []);
  /** Players added by the CLI: name, UUID, when the command started and ended. */
  const added: { name: string; uuid: string; startedAt: number; doneAt: number }[] = [];
  let backup: ProcResult | undefined;
  let backupStart = 0;
  let backupEnd = 0;
  /** Sizes of the target file whenever it was seen while the backup ran. */
  const seenSizes: number[] = [];
  try {
    // Four loops, each with two players of its own: a login (a new token), then joins with it
    // (each a write, and far cheaper than a login's scrypt, so writes keep coming).
    let round = 0;
    const loops = Array.from({ length: 4 }, async (_, loop) => {
      for (let n = 0; !stop; n++) {
        const player = loop * 2 + (n % 2);
        const p = players[player]!;
        const auth = await timedPost(s.port, '/auth', { login: p.name, password: p.password });
        assert.equal(auth.status, 200, `login of ${p.name} during the backup: ${JSON.stringify(auth.body)}`);
        tokens.push({ player, token: auth.body.result.accessToken, sentAt: auth.sentAt, doneAt: auth.doneAt });
        for (let j = 0; j < 10 && !stop; j++) {
          const serverID = `srv-${player}-${round++}`;
          const r = await timedPost(s.port, '/join', { accessToken: auth.body.result.accessToken, userUUID: p.uuid, serverID });
          assert.deepEqual(r.body, { success: true, result: true }, `join of ${p.name} during the backup`);
          joins[player]!.push({ serverID, sentAt: r.sentAt, doneAt: r.doneAt });
        }
      }
    });
    const adding = (async () => {
      for (let i = 0; !stop; i++) {
        const startedAt = performance.now();
        const uuid = await addUser(db, `Added_${i}`, `added-pw-${i}`);
        added.push({ name: `Added_${i}`, uuid, startedAt, doneAt: performance.now() });
      }
    })();
    const writing = Promise.all([...loops, adding]);
    writing.catch(() => {}); // awaited below

    // Once the writes are under way (every player has joined), the backup.
    const cap = performance.now() + 30_000;
    while ((joins.some((j) => j.length === 0) || added.length < 2) && performance.now() < cap) await sleep(10);
    backupStart = performance.now();
    const running = runCli(['backup', copy, '--db', db], { timeoutMs: 60_000 });
    // Meanwhile, watch the target: it must never be seen before it is whole.
    let watching = true;
    const watch = (async () => {
      while (watching) {
        try {
          seenSizes.push(statSync(copy).size);
        } catch {
          // not there yet
        }
        await new Promise((r) => setImmediate(r));
      }
    })();
    backup = await running;
    backupEnd = performance.now();
    watching = false;
    await watch;
    // The writes go on a little longer, then stop.
    await sleep(300);
    stop = true;
    await writing;
    // The server is not harmed: it still logs in.
    await login(s, players[0]!.name, players[0]!.password);
  } finally {
    stop = true;
    await s.stop();
  }

  assert.ok(backup);
  assert.equal(backup.code, 0, `backup exited ${backup.code}${backup.timedOut ? ' (timed out)' : ''}: ${backup.stderr}`);
  assert.equal(backup.stdout, `Backed up the database to ${copy}\nDatabase: ${db}\n`);
  assert.equal(backup.stderr, '');
  assert.deepEqual(partials(tmp.dir), [], 'a temporary file was left beside the copy');
  // Written under another name and renamed when whole: the target never showed a partial size.
  const size = statSync(copy).size;
  assert.deepEqual(seenSizes.filter((n) => n !== size), [], `the copy was seen before it was whole (final size ${size})`);

  // The writes did overlap the backup: logins or joins were in flight and a `user add` ran while it ran.
  const during = (x: { sentAt: number; doneAt: number }): boolean => x.sentAt < backupEnd && x.doneAt > backupStart;
  const writesDuring = tokens.filter(during).length + joins.flat().filter(during).length;
  const addsDuring = added.filter((a) => a.startedAt < backupEnd && a.doneAt > backupStart).length;
  t.diagnostic(
    `backup took ${Math.round(backupEnd - backupStart)} ms; ${tokens.length} logins, ${joins.flat().length} joins and ${added.length} user adds in all; ` +
      `${writesDuring} logins and joins in flight and ${addsDuring} user adds running during the backup; the target was seen ${seenSizes.length} times while it ran`,
  );
  assert.ok(writesDuring > 0, 'no login or join was in flight while the backup ran');
  assert.ok(addsDuring > 0, 'no user add ran while the backup ran');

  const tokensBefore = tokens.filter((x) => x.doneAt < backupStart);
  const addedBefore = added.filter((a) => a.doneAt < backupStart);
  assert.ok(addedBefore.length > 0 && tokensBefore.length > 0);
  /** Each player's last token answered before the backup began (the newest then, so not yet pruned). */
  const lastBefore = new Map(tokensBefore.map((x) => [x.player, x.token]));

  const file = new DatabaseSync(copy);
  try {
    assert.deepEqual(file.prepare('PRAGMA integrity_check').all().map((r) => ({ ...r })), [{ integrity_check: 'ok' }]);
    assert.deepEqual({ ...file.prepare('PRAGMA user_version').get() }, { user_version: SCHEMA_VERSION });
    const byName = file.prepare('SELECT id FROM users WHERE name = ?');
    for (const p of players) assert.deepEqual({ ...byName.get(p.name) }, { id: p.uuid }, `${p.name} is not in the copy`);
    for (const a of addedBefore) assert.deepEqual({ ...byName.get(a.name) }, { id: a.uuid }, `${a.name}, added before the backup, is not in the copy`);
    const filler = file.prepare("SELECT count(*) AS n FROM users WHERE name LIKE 'Filler\\_%' ESCAPE '\\'").get();
    assert.deepEqual({ ...filler }, { n: FILLER });
    const token = file.prepare('SELECT user_id FROM tokens WHERE digest = ?');
    for (const [player, value] of lastBefore) {
      assert.deepEqual({ ...token.get(digest(value)) }, { user_id: players[player]!.uuid }, `a token of ${players[player]!.name} answered before the backup is not in the copy`);
    }
    // A player's join in the copy is the last one answered before the backup began, or a later one.
    const joined = file.prepare('SELECT server_id FROM joins WHERE user_id = ?');
    for (const [player, p] of players.entries()) {
      const sent = joins[player]!;
      const floor = sent.findLastIndex((j) => j.doneAt < backupStart);
      assert.ok(floor >= 0, `${p.name} joined before the backup`);
      const row = joined.get(p.uuid) as { server_id: string } | undefined;
      const at = sent.findIndex((j) => j.serverID === row?.server_id);
      assert.ok(at >= floor, `${p.name}'s join in the copy is ${row?.server_id}, older than ${sent[floor]!.serverID}, answered before the backup began`);
    }
  } finally {
    file.close();
  }

  // A server on the copy: an old player logs in, a token from before the backup joins, and a
  // player the CLI added before the backup is found.
  const c = await startServer(['--db', copy]);
  try {
    const p = players[1]!;
    assert.equal((await login(c, p.name, p.password)).userUUID, p.uuid);
    const [player, value] = [...lastBefore][0]!;
    assert.equal(await join(c, value, players[player]!.uuid, 'after-restore'), true);
    const a = addedBefore[0]!;
    assert.deepEqual(assertOk(await c.post('/profile', { userUUID: a.uuid })), { username: a.name });
  } finally {
    await c.stop();
  }
});

/** A small database with one player, for the refusals. */
const small = pathJoin(tmp.dir, 'small.db');
let smallReady: Promise<string> | undefined;
const smallDb = async (): Promise<string> => {
  smallReady ??= seedPlayer(small, 'Small', 'small-pw');
  await smallReady;
  return small;
};

// Rule: the copy holds every password hash: it is readable by its owner only, whatever the umask.
test('the backup file is readable by its owner only', async () => {
  const db = await smallDb();
  const target = pathJoin(tmp.dir, 'private-copy.db');
  const r = await runCli(['backup', target, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(statSync(target).mode & 0o777, 0o600);
});

// Rule: a backup never overwrites a file: an existing FILE is refused with status 1 and a
// message saying it exists, and its bytes stay as they were.
test('backup refuses a FILE that exists: status 1, the file untouched', async () => {
  const db = await smallDb();
  const dir = pathJoin(tmp.dir, 'exists');
  mkdirSync(dir);
  const target = pathJoin(dir, 'precious.db');
  const bytes = Buffer.from('precious bytes that are not a database\n');
  writeFileSync(target, bytes);
  const r = await runCli(['backup', target, '--db', db]);
  assert.equal(r.code, 1, `exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, /exists/, r.stderr);
  assert.ok(r.stderr.includes(target), `the message does not name ${target}: ${r.stderr}`);
  assertNoStack(r);
  assert.equal(r.stdout, '');
  assert.deepEqual(readFileSync(target), bytes, 'the existing file was changed');
  assert.deepEqual(readdirSync(dir), ['precious.db']);
});

// Rule: nor is a name replaced that a link holds, even a link to nothing (which existsSync
// calls absent): the copy is linked into place, which fails on any name already taken.
test('backup refuses a FILE that is a dangling symbolic link, and leaves it as it was', async () => {
  const db = await smallDb();
  const dir = pathJoin(tmp.dir, 'dangling');
  mkdirSync(dir);
  const target = pathJoin(dir, 'link.db');
  symlinkSync(pathJoin(dir, 'nowhere'), target);
  const r = await runCli(['backup', target, '--db', db]);
  assert.equal(r.code, 1, `exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, /exists already; a backup never overwrites a file/, r.stderr);
  // As a refused user command, it names the database it would have copied.
  assert.ok(r.stderr.endsWith(`\nDatabase: ${resolvePath(db)}\n`), r.stderr);
  assertNoStack(r);
  assert.ok(lstatSync(target).isSymbolicLink(), 'the link was replaced');
  assert.deepEqual(readdirSync(dir), ['link.db'], 'the temporary copy was left behind');
});

// Rule: `--db :memory:` has nothing to back up: a malformed command line, status 2, no file.
test('backup --db :memory: is refused with status 2', async () => {
  const target = pathJoin(tmp.dir, 'memory-copy.db');
  const r = await runCli(['backup', target, '--db', ':memory:']);
  assert.equal(r.code, 2, `exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, /:memory:/, r.stderr);
  assertNoStack(r);
  assert.ok(!existsSync(target), 'a file was written');
});

// Rule: the copy is written under a temporary name and renamed when whole, so a failed backup
// (here: the target's folder does not exist) exits 1 and leaves nothing behind.
test('backup into a missing folder fails with status 1 and leaves nothing behind', async () => {
  const db = await smallDb();
  const parent = pathJoin(tmp.dir, 'parent');
  mkdirSync(parent);
  const missing = pathJoin(parent, 'missing');
  const target = pathJoin(missing, 'copy.db');
  const r = await runCli(['backup', target, '--db', db]);
  assert.equal(r.code, 1, `exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.ok(r.stderr.includes(target), `the message does not name ${target}: ${r.stderr}`);
  assertNoStack(r);
  assert.equal(r.stdout, '');
  assert.ok(!existsSync(missing), 'the missing folder was created');
  assert.deepEqual(readdirSync(parent), [], 'something was left behind');
  assert.deepEqual(partials(tmp.dir), []);
});

// Rule: backup finds the database the way the other commands do: --config FILE, or MCAUTH_DB.
test('backup takes the database from --config FILE and from MCAUTH_DB', async () => {
  const db = await smallDb();
  const config = pathJoin(tmp.dir, 'backup-config.json');
  writeFileSync(config, JSON.stringify({ db }));
  const viaConfig = pathJoin(tmp.dir, 'via-config.db');
  const viaEnv = pathJoin(tmp.dir, 'via-env.db');
  const a = await runCli(['backup', viaConfig, '--config', config]);
  assert.equal(a.code, 0, a.stderr);
  assert.equal(a.stdout, `Backed up the database to ${viaConfig}\nDatabase: ${db}\n`);
  const b = await runCli(['backup', viaEnv], { env: { MCAUTH_DB: db } });
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout, `Backed up the database to ${viaEnv}\nDatabase: ${db}\n`);
  for (const copy of [viaConfig, viaEnv]) {
    const file = new DatabaseSync(copy);
    try {
      assert.deepEqual(file.prepare('SELECT name FROM users').all().map((r) => ({ ...r })), [{ name: 'Small' }], copy);
    } finally {
      file.close();
    }
  }
});
