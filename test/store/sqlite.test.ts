import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, test } from 'node:test';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/store/schema.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import { tempDir } from '../helpers/process.ts';
import { storeCases, user } from './store.case.ts';

const { dir, cleanup } = tempDir();
after(cleanup);
let n = 0;

storeCases('sqlite', () => openSqliteStore(join(dir, `case-${++n}.db`)));

test('sqlite: the file is in WAL mode at the current schema version', async () => {
  const path = join(dir, 'wal.db');
  await (await openSqliteStore(path)).close();
  const db = new DatabaseSync(path);
  assert.equal((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal');
  assert.equal((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, SCHEMA_VERSION);
  db.close();
});

test('sqlite: data survives reopening, and a second open does not migrate again', async () => {
  const path = join(dir, 'reopen.db');
  const first = await openSqliteStore(path);
  await first.createUser(user('Alice', '00000000-0000-4000-8000-00000000000a'));
  await first.close();
  const second = await openSqliteStore(path);
  assert.equal(await second.countUsers(), 1);
  await second.close();
});

test('sqlite: a database of every earlier version is migrated with its data', async () => {
  for (let version = 1; version < SCHEMA_VERSION; version++) {
    const path = join(dir, `v${version}.db`);
    const old = new DatabaseSync(path);
    for (const step of MIGRATIONS.slice(0, version)) old.exec(step);
    old.exec(`PRAGMA user_version = ${version}`);
    old.exec(`INSERT INTO users (id, name, name_key, password_hash, skin_url, is_alex, created_at)
              VALUES ('00000000-0000-4000-8000-00000000000a', 'Alice', 'alice', 'h', 'https://s/a.png', 1, 0)`);
    old.close();
    const store = await openSqliteStore(path);
    assert.deepEqual(
      await store.findUserByName('alice'),
      user('Alice', '00000000-0000-4000-8000-00000000000a', { passwordHash: 'h', skinUrl: 'https://s/a.png', isAlex: true, createdAt: 0 }),
      `from version ${version}`,
    );
    assert.equal(await store.countTextures(), 0);
    await store.close();
  }
});

test('sqlite: tokens are kept only as the digests handed in', async () => {
  const path = join(dir, 'digest.db');
  const store = await openSqliteStore(path);
  await store.createUser(user('Alice', '00000000-0000-4000-8000-00000000000a'));
  await store.recordLogin('00000000-0000-4000-8000-00000000000a', user('Alice', 'x').passwordHash, 'the-digest', 0, 1e12, 16);
  await store.close();
  const db = new DatabaseSync(path);
  assert.deepEqual(db.prepare('SELECT digest FROM tokens').all().map((r) => ({ ...r })), [{ digest: 'the-digest' }]);
  db.close();
});

test('sqlite: a database from a newer schema is refused, not changed', async () => {
  const path = join(dir, 'newer.db');
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
  db.close();
  const before = readFileSync(path);
  await assert.rejects(openSqliteStore(path), /newer than this program/);
  assert.deepEqual(readFileSync(path), before, 'not even switched to WAL');
});

test('sqlite: a file that is not a database is refused', async () => {
  const path = join(dir, 'junk.db');
  writeFileSync(path, 'this is not a database, just text that is long enough to have a header'.repeat(20));
  await assert.rejects(openSqliteStore(path), /not a database/);
});

/** The end of this turn of the event loop, when a shared read transaction ends. */
const nextTurn = (): Promise<void> => new Promise((done) => setImmediate(done));

// Rule: reads share one read transaction for one turn of the event loop, no longer: what another
// process (a worker, the CLI) commits is seen from the next turn, however busy this one is.
test('sqlite: a change committed by another connection is seen from the next turn', async () => {
  const path = join(dir, 'turns.db');
  const server = await openSqliteStore(path);
  const cli = await openSqliteStore(path);
  const id = '00000000-0000-4000-8000-00000000000a';
  await server.createUser(user('Alice', id));
  for (let round = 0; round < 3; round++) {
    await cli.recordLogin(id, user('Alice', id).passwordHash, `digest${round}`, 0, 1e12, 16);
    assert.equal(await cli.recordJoin(`digest${round}`, id, 'srv', 1000), true);
    assert.equal((await server.findJoin('alice', 'srv', 0))?.id, id, `round ${round}: the join is seen`);
    await cli.setLock(id, { at: 2000, reason: null }); // ends the join
    await nextTurn();
    assert.equal(await server.findJoin('alice', 'srv', 0), undefined, `round ${round}: the lock is seen from the next turn`);
    assert.equal((await server.findUserById(id))?.lockedAt, 2000);
    await cli.setLock(id, null);
    await cli.renameUser(id, `Alice${round}`);
    await nextTurn();
    assert.equal((await server.findUserById(id))?.name, `Alice${round}`, `round ${round}: the rename is seen from the next turn`);
    await cli.renameUser(id, 'Alice');
    await nextTurn();
  }
  await cli.close();
  await server.close();
});

// Rule: nothing acknowledged waits for the turn's end: a write after a read in the same turn is
// committed (seen by another connection, and kept through a crash) when its call resolves.
test('sqlite: a write after a read in the same turn is committed when it resolves', async () => {
  const path = join(dir, 'write-after-read.db');
  const store = await openSqliteStore(path);
  const id = '00000000-0000-4000-8000-00000000000a';
  await store.createUser(user('Alice', id));
  await store.recordLogin(id, user('Alice', id).passwordHash, 'digest', 0, 1e12, 16);
  await nextTurn();
  const other = new DatabaseSync(path);
  const joins = other.prepare('SELECT server_id FROM joins');
  assert.ok(await store.findUserById(id)); // opens this turn's shared read
  assert.equal(await store.recordJoin('digest', id, 'srv', 1000), true);
  assert.deepEqual(joins.all().map((r) => ({ ...r })), [{ server_id: 'srv' }]);
  assert.ok(await store.findJoin('alice', 'srv', 0));
  await store.setLock(id, { at: 2000, reason: null });
  assert.deepEqual(joins.all(), []);
  other.close();
  await store.close();
});
