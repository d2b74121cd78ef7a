// The store contract on PostgreSQL, and what only a database shared by several nodes asks: that
// they migrate, count failures and take invites at once without stepping on each other. A new
// database for every case, on the phase's throwaway cluster.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Sql } from 'postgres';
import { SCHEMA_VERSION } from '../../src/postgres/schema.ts';
import { createPostgresStore } from '../../src/postgres/store.ts';
import type { LoginFailures, Store } from '../../src/store/store.ts';
import { databaseServer, postgresMissing, type DatabaseServer } from '../helpers/postgres.ts';
import { storeCases, user } from './store.case.ts';

const A = '00000000-0000-4000-8000-00000000000a';

const cluster: DatabaseServer | undefined = postgresMissing ? undefined : await databaseServer();

describe('postgres', { skip: postgresMissing }, () => {
  /** A new, empty database on the cluster: its name. */
  const newDatabase = (): Promise<string> => cluster!.newDatabase('case');
  /** A pool of its own on `db`, as a node has. */
  const connect = async (db: string): Promise<Sql> => (await import('postgres')).default(cluster!.url(db), { max: 4, onnotice: () => {} });
  const openNode = async (db: string): Promise<Store> => createPostgresStore(await connect(db));
  const version = async (db: string): Promise<string> => (await cluster!.psql('SELECT version FROM mcauth_schema', db)).trim();

  storeCases('postgres', async () => openNode(await newDatabase()));

  test('postgres: nodes starting on one new database at once all open it, and the schema is made once', async () => {
    const db = await newDatabase();
    // Unguarded, all but one would fail on tables that another has just created.
    const nodes = await Promise.all([1, 2, 3, 4].map(() => openNode(db)));
    assert.equal(await version(db), String(SCHEMA_VERSION));
    assert.equal(await nodes[0]!.createUser(user('Alice', A)), 'created');
    assert.equal((await nodes[3]!.findUserByName('alice'))?.id, A, 'one schema, shared');
    await Promise.all(nodes.map((node) => node.close()));
    // Opened again, it is not migrated again: the data stays.
    const again = await openNode(db);
    assert.equal(await again.countUsers(), 1);
    await again.close();
  });

  test('postgres: a database from a newer schema is refused, not changed', async () => {
    const db = await newDatabase();
    await (await openNode(db)).close();
    await cluster!.psql(`UPDATE mcauth_schema SET version = ${SCHEMA_VERSION + 1}`, db);
    const sql = await connect(db);
    await assert.rejects(createPostgresStore(sql), {
      message: `the database has schema version ${SCHEMA_VERSION + 1}, newer than this program's ${SCHEMA_VERSION}; use a newer mcauth`,
    });
    await sql.end();
    assert.equal(await version(db), String(SCHEMA_VERSION + 1));
  });

  test('postgres: two nodes counting failures under the same keys at once lose no count', async () => {
    const db = await newDatabase();
    const nodes = [await openNode(db), await openNode(db)];
    const keys = ['alice', 'alice 10.0.0.1'];
    // The nodes name the keys in opposite orders: the locks must still not deadlock.
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        nodes[i % 2]!.updateLoginFailures(i % 2 ? [...keys].reverse() : keys, 0, (counts) => counts.map((c) => ({ failures: c.failures + 1, lastAt: 1000 + i }))),
      ),
    );
    let seen: LoginFailures[] = [];
    await nodes[0]!.updateLoginFailures(keys, 0, (counts) => {
      seen = counts;
      return counts.map(() => undefined);
    });
    assert.deepEqual(
      seen.map((c) => c.failures),
      [50, 50],
    );
    await Promise.all(nodes.map((node) => node.close()));
  });

  test('postgres: an invite of one use, taken by two nodes at once, makes one player', async () => {
    const db = await newDatabase();
    const nodes = [await openNode(db), await openNode(db)];
    await nodes[0]!.createInvite({ digest: 'once', usesLeft: 1, createdAt: 0, expiresAt: 1000 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => nodes[i % 2]!.createUser(user(`Player${i}`, `00000000-0000-4000-8000-0000000000${String(i).padStart(2, '0')}`), { digest: 'once', now: 1 })),
    );
    assert.deepEqual(
      results.filter((r) => r === 'created'),
      ['created'],
    );
    assert.equal(await nodes[1]!.countUsers(), 1);
    await Promise.all(nodes.map((node) => node.close()));
  });

  test('postgres: a lock by one node amid logins and joins on another leaves no token and no join', async () => {
    const db = await newDatabase();
    const [player, admin] = [await openNode(db), await openNode(db)];
    const hash = user('Alice', A).passwordHash;
    await player.createUser(user('Alice', A));
    await player.recordLogin(A, hash, 'first', 0, 1e12, 100);
    const digests = Array.from({ length: 20 }, (_, i) => `d${i}`);
    await Promise.all([
      ...digests.map((d) => player.recordLogin(A, hash, d, 1, 1e12, 100)),
      ...digests.map((_, i) => player.recordJoin('first', A, `server${i}`, 2)),
      admin.setLock(A, { at: 3, reason: null }),
    ]);
    // Each login and join landed before the lock (and was ended by it) or after (and was refused).
    for (const d of ['first', ...digests]) assert.equal(await player.findUserByToken(d, 4), undefined, d);
    for (let i = 0; i < digests.length; i++) assert.equal(await player.findJoin('alice', `server${i}`, 0), undefined, `server${i}`);
    await Promise.all([player.close(), admin.close()]);
  });

  test('postgres: backup is left to pg_dump', async () => {
    const store = await openNode(await newDatabase());
    await assert.rejects(store.backup('/nowhere'), { message: 'a PostgreSQL database is backed up with pg_dump, not mcauth backup' });
    await store.ping();
    await store.close();
  });
});
