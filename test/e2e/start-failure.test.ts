// A start that fails (its port is taken) leaves no new database behind: the file it created, and
// its -wal and -shm, are gone when it exits; a database that was there before is kept, whole.
// The same with --workers, whose primary creates the file before its workers fail to listen.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { runCli, RUNTIME, tempDir } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';

const tmp = tempDir();
let taken: Server;
let port = 0;

before(async () => {
  // The port is held by this process for the whole file: every start below finds it in use.
  taken = createServer();
  await new Promise<void>((listening) => taken.listen(0, '127.0.0.1', listening));
  port = (taken.address() as { port: number }).port;
});

after(async () => {
  await new Promise((closed) => taken.close(closed));
  tmp.cleanup();
});

/** The files of the temporary folder whose names start with `name` (the database, its -wal, -shm, -journal). */
const filesOf = (name: string): string[] => readdirSync(tmp.dir).filter((f) => f.startsWith(name));

async function failedStart(db: string, extra: string[] = []): Promise<void> {
  const r = await runCli(['serve', '--db', db, '--host', '127.0.0.1', '--port', String(port), ...extra], { timeoutMs: 60_000 });
  assert.equal(r.timedOut, false, 'it kept running');
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stderr, /cannot listen on 127\.0\.0\.1:\d+: the address is in use/);
  assert.doesNotMatch(r.stderr, /^\s{4}at /m, 'no stack trace');
}

describe('a start that fails', () => {
  // Rule: a server that fails to start leaves no new database file behind.
  test('removes the database it created, with its -wal and -shm', async () => {
    await failedStart(join(tmp.dir, 'fresh.db'));
    assert.deepEqual(filesOf('fresh.db'), []);
  });

  // Rule: a database that was there before a failed start is never removed.
  test('keeps a database that was there before, whole', async () => {
    const db = join(tmp.dir, 'kept.db');
    await seedPlayer(db, 'Keeper', 'keeper-password');
    await failedStart(db);
    assert.ok(existsSync(db));
    const listed = await runCli(['user', 'list', '--db', db]);
    assert.match(listed.stdout, /^Keeper /, listed.stdout + listed.stderr);
  });

  test('with --workers 2, removes the database the primary created', { skip: RUNTIME === 'deno' ? 'Deno has no node:cluster' : false }, async () => {
    await failedStart(join(tmp.dir, 'cluster.db'), ['--workers', '2']);
    assert.deepEqual(filesOf('cluster.db'), []);
  });
});
