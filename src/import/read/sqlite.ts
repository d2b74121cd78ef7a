// Opening a source database read-only, and the look at its tables that tells AuthMe's from drasl's.
import type { DatabaseSync } from 'node:sqlite';
import { ImportSourceError } from './types.ts';

/**
 * The first 16 bytes of every SQLite 3 database file (sqlite.org/fileformat.html, 1.3.1): the
 * 15 letters and a NUL. Filled in, not written `Buffer.from('...')`: a bundle check reads
 * `from '...'` as an import.
 */
export const SQLITE_MAGIC = Buffer.alloc(16, 'SQLite format 3\0', 'latin1');

/**
 * Opens `path` read-only, so an import can never change the source, even one a running server
 * still uses. node:sqlite is loaded here, not at startup: a csv or json import never needs it,
 * and on Node 22 loading it prints an experimental-feature warning.
 */
export function openSource(path: string): DatabaseSync {
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite');
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    // A damaged or non-SQLite file fails only at the first read.
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db?.close();
    throw new ImportSourceError(`cannot be opened as a SQLite database: ${(err as Error).message}`);
  }
}

/** Each table's column names, by table name, all lower-cased: SQLite matches names in any case. */
export function tablesOf(db: DatabaseSync): Map<string, Set<string>> {
  const tables = new Map<string, Set<string>>();
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").all();
  for (const { name } of names as { name: string }[]) {
    const columns = db.prepare('SELECT name FROM pragma_table_info(?)').all(name) as { name: string }[];
    tables.set(name.toLowerCase(), new Set(columns.map((c) => c.name.toLowerCase())));
  }
  return tables;
}

/** Runs `read`, closing `db` after it, and turns a SQLite failure midway into an ImportSourceError. */
export function readingFrom<T>(db: DatabaseSync, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ImportSourceError) throw err;
    throw new ImportSourceError(`cannot be read: ${(err as Error).message}`);
  } finally {
    db.close();
  }
}
