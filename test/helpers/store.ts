// The store of a test's database, opened in the test's own process as the server opens it: for
// writing what a test needs there but does not test the making of (players, a texture as an older
// version stored it).
import { closeSync, existsSync, openSync } from 'node:fs';
import { openPostgresStore } from '../../src/postgres/connect.ts';
import { isPostgresUrl } from '../../src/postgres/url.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/store.ts';

/** The last use of a store in this process: each waits for the one before (two opening one file at once would wait on each other's locks). */
let last: Promise<unknown> = Promise.resolve();

/**
 * Runs `work` on the store of `db` (a SQLite file, made if missing, or a PostgreSQL URL), closed
 * after. A server may be running on it: it sees what was written at its next request, as a node
 * of several does.
 */
export function withStore<T>(db: string, work: (store: Store) => Promise<T>): Promise<T> {
  const done = last.then(async () => {
    const postgres = isPostgresUrl(db);
    // A new file readable by its owner alone, as the server makes one (it warns of any other).
    if (!postgres && !existsSync(db)) closeSync(openSync(db, 'wx', 0o600));
    const store = postgres ? await openPostgresStore(db, {}, { serving: false }) : await openSqliteStore(db);
    try {
      return await work(store);
    } finally {
      await store.close();
    }
  });
  last = done.catch(() => undefined);
  return done;
}
