// SQLite transactions: the write transaction every change runs in, and the read transaction the
// reads of one turn of the event loop share.
import type { DatabaseSync } from 'node:sqlite';

/** Connections holding a read transaction that the reads of one turn of the event loop share. */
const sharing = new WeakSet<DatabaseSync>();

/** Ends the shared read transaction, if any: before a write, so that nothing written waits for the turn's end. */
export function endSharedRead(db: DatabaseSync): void {
  if (sharing.delete(db)) db.exec('COMMIT');
}

/**
 * Runs `read` in the read transaction shared by the rest of this turn of the event loop: one for
 * all the requests served in the turn, not one each (two fcntl locks on the shared memory and a
 * check of the log index apiece). What another process commits is seen from the next turn.
 */
export function sharedRead<T>(db: DatabaseSync, read: () => T): T {
  if (!sharing.has(db)) {
    db.exec('BEGIN');
    sharing.add(db);
    setImmediate(() => endSharedRead(db));
  }
  return read();
}

/** Runs `work` in a write transaction, taking the write lock up front so it cannot deadlock; committed unless `keep` says no. */
export function transaction<T>(db: DatabaseSync, work: () => T, keep: (result: T) => boolean = () => true): T {
  endSharedRead(db);
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec(keep(result) ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
