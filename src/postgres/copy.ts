// `db copy`: a community moved whole from one database to another (a SQLite file to PostgreSQL,
// PostgreSQL to a SQLite file or to another PostgreSQL database), every row as stored. The source
// is read as one moment and never written; the target is written in one transaction, so it holds
// either the whole copy or what it held before.
import { closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { ISql, TransactionSql } from 'postgres';
import { BUSY_TIMEOUT_MS } from '../limits.ts';
import { MIGRATIONS as SQLITE_MIGRATIONS, SCHEMA_VERSION as SQLITE_SCHEMA_VERSION } from '../store/schema.ts';
import { openSqliteStore } from '../store/sqlite.ts';
import { CONSOLE_TABLES } from '../console/data.ts';
import { connectPostgres, firstAnswer } from './connect.ts';
import { migrate, MIGRATIONS as POSTGRES_MIGRATIONS, SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION } from './schema.ts';
import { dbLabel, isPostgresUrl } from './url.ts';

/**
 * How a column's values differ between the schemas: a flag is INTEGER 0/1 in SQLite and BOOLEAN
 * in PostgreSQL, a time INTEGER or BIGINT (which the driver hands over as a string), a PNG BLOB or
 * BYTEA. In between they are booleans, numbers and Buffers.
 */
type Kind = 'text' | 'int' | 'bool' | 'bytes';
type Value = string | number | boolean | Uint8Array | null;
type Row = Record<string, Value>;

interface Table {
  name: string;
  columns: Record<string, Kind>;
  /** The order rows are read and written in, in each schema. */
  order: { sqlite: string; postgres: string };
  /** Rows read and written at once. */
  batch: number;
}

/** Rows a statement writes at once: one round trip each thousand, few statements waiting in memory. */
const BATCH_ROWS = 1000;
/** Textures are up to 1 MiB each: a batch of them stays within some MiB of memory. */
const TEXTURE_BATCH_ROWS = 16;
/** Rows between two lines of progress within a table. */
const PROGRESS_EVERY = 10_000;

const byKey = (key: string): Table['order'] => ({ sqlite: key, postgres: key });

/**
 * Every table of a community, a table before those that refer to it (src/store/schema.ts and
 * ./schema.ts hold the same columns). Tokens keep their order of storing, which a login's pruning
 * reads to keep a player's newest: SQLite's rowid, PostgreSQL's `stored`, numbered anew by the
 * target in the same order.
 */
export const TABLES: Table[] = [
  { name: 'textures', columns: { hash: 'text', png: 'bytes' }, order: byKey('hash'), batch: TEXTURE_BATCH_ROWS },
  {
    name: 'users',
    columns: {
      id: 'text', name: 'text', name_key: 'text', password_hash: 'text', skin_url: 'text', skin_hash: 'text', cape_url: 'text', cape_hash: 'text',
      is_alex: 'bool', created_at: 'int', last_login_at: 'int', locked_at: 'int', lock_reason: 'text',
    },
    order: byKey('id'),
    batch: BATCH_ROWS,
  },
  { name: 'tokens', columns: { digest: 'text', user_id: 'text', issued_at: 'int', expires_at: 'int', client: 'text' }, order: { sqlite: 'rowid', postgres: 'stored' }, batch: BATCH_ROWS },
  { name: 'joins', columns: { user_id: 'text', server_id: 'text', joined_at: 'int', ip: 'text' }, order: byKey('user_id'), batch: BATCH_ROWS },
  { name: 'invites', columns: { digest: 'text', uses_left: 'int', created_at: 'int', expires_at: 'int' }, order: byKey('digest'), batch: BATCH_ROWS },
  { name: 'reset_codes', columns: { user_id: 'text', digest: 'text', expires_at: 'int' }, order: byKey('user_id'), batch: BATCH_ROWS },
  { name: 'login_failures', columns: { name_key: 'text', failures: 'int', last_at: 'int' }, order: byKey('name_key'), batch: BATCH_ROWS },
  // The Yggdrasil API's signing key: players' caches of signed textures stay valid on the copy.
  { name: 'secrets', columns: { name: 'text', value: 'text' }, order: byKey('name'), batch: BATCH_ROWS },
];

/** The database that was read: one unchanging view of it. */
interface View {
  count: (table: Table) => Promise<number>;
  batches: (table: Table) => AsyncIterable<Row[]>;
}

interface Source {
  /** Runs `work` on one moment of the database. */
  read: <T>(work: (view: View) => Promise<T>) => Promise<T>;
  close: () => Promise<void>;
}

/** The target inside its one transaction. */
interface Writer {
  count: (table: Table) => Promise<number>;
  /** Deletes every row of every table. */
  empty: () => Promise<void>;
  insert: (table: Table, rows: Row[]) => Promise<void>;
}

interface Target {
  /** Runs `work` in one transaction: committed when it returns, rolled back when it throws. */
  write: (work: (writer: Writer) => Promise<void>) => Promise<void>;
  count: (table: Table) => Promise<number>;
  /** Closes it; after a failed copy, a file made for the copy is removed. */
  close: (failed: boolean) => Promise<void>;
}


/** A source's schema must be this program's: it is read as it is, never migrated. */
function checkSourceVersion(found: number, expected: number): void {
  if (found === 0) throw new Error('it holds no mcauth database');
  if (found > expected) throw new Error(`it has schema version ${found}, newer than this program's ${expected}; use a newer mcauth`);
  if (found < expected) {
    throw new Error(`it has schema version ${found}, older than this program's ${expected}; open it once with this mcauth (such as \`user list --db ...\`), which brings it up to date, then copy`);
  }
}

const sqliteValue = (kind: Kind, value: unknown): Value => (kind === 'bool' ? value === 1 : kind === 'bytes' ? Buffer.from(value as Uint8Array) : (value as Value));
// Times in milliseconds stay far below 2^53: a number holds them exactly.
const postgresValue = (kind: Kind, value: unknown): Value => (kind === 'int' && value !== null ? Number(value) : kind === 'bytes' ? Buffer.from(value as Uint8Array) : (value as Value));
const toRow = (table: Table, raw: Record<string, unknown>, value: (kind: Kind, value: unknown) => Value): Row =>
  Object.fromEntries(Object.entries(table.columns).map(([column, kind]) => [column, value(kind, raw[column])]));

/** A SQLite file, opened read-only: what a server running on it writes meanwhile is not seen, and nothing is written. */
async function openSqliteSource(path: string): Promise<Source> {
  // SQLite would take an empty file for a new database, with no tables to read.
  const file = existsSync(path) ? statSync(path) : undefined;
  if (!file) throw new Error('there is no such file');
  if (!file.isFile() || file.size === 0) throw new Error('it is not a database file (a folder, or an empty file)');
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // The first read: a file that is no SQLite database is refused here.
    checkSourceVersion((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, SQLITE_SCHEMA_VERSION);
  } catch (err) {
    db.close();
    throw err;
  }
  const view: View = {
    count: async (table) => Number((db.prepare(`SELECT count(*) AS n FROM ${table.name}`).get() as { n: number }).n),
    async *batches(table) {
      const columns = Object.keys(table.columns).join(', ');
      let batch: Row[] = [];
      for (const raw of db.prepare(`SELECT ${columns} FROM ${table.name} ORDER BY ${table.order.sqlite}`).iterate()) {
        batch.push(toRow(table, raw as Record<string, unknown>, sqliteValue));
        if (batch.length === table.batch) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    },
  };
  return {
    async read(work) {
      // One read transaction: every table is read as of its first read.
      db.exec('BEGIN');
      try {
        return await work(view);
      } finally {
        db.exec('COMMIT');
      }
    },
    close: async () => db.close(),
  };
}

const countIn = async (sql: ISql, table: Table): Promise<number> => Number((await sql<{ n: string }[]>`SELECT count(*) AS n FROM ${sql(table.name)}`)[0]!.n);

/** A PostgreSQL database, read in one REPEATABLE READ, READ ONLY transaction: the copy is of one moment. */
async function openPostgresSource(url: string, env: Record<string, string | undefined>): Promise<Source> {
  const sql = await connectPostgres(url, env, { connections: 1 });
  try {
    // The driver connects at its first query: a wrong password is told here, as the source's.
    await firstAnswer(sql);
    const [found] = await sql<{ present: boolean }[]>`SELECT to_regclass('mcauth_schema') IS NOT NULL AS present`;
    const [row] = found!.present ? await sql<{ version: number }[]>`SELECT version FROM mcauth_schema` : [];
    checkSourceVersion(row ? Number(row.version) : 0, POSTGRES_SCHEMA_VERSION);
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
  const view = (tx: TransactionSql): View => ({
    count: (table) => countIn(tx, table),
    async *batches(table) {
      const query = tx<Record<string, unknown>[]>`SELECT ${tx(Object.keys(table.columns))} FROM ${tx(table.name)} ORDER BY ${tx(table.order.postgres)}`;
      for await (const rows of query.cursor(table.batch)) yield rows.map((raw) => toRow(table, raw, postgresValue));
    },
  });
  return {
    async read<T>(work: (view: View) => Promise<T>): Promise<T> {
      let result!: T;
      await sql.begin('isolation level repeatable read, read only', async (tx) => {
        result = await work(view(tx));
      });
      return result;
    },
    close: () => sql.end({ timeout: 5 }),
  };
}

/** The tables a schema's migrations create, and the admin page's: mcauth's own, in any version. */
const tablesOf = (migrations: string[]): Set<string> => new Set([...migrations.flatMap((sql) => [...sql.matchAll(/CREATE TABLE (\w+)/g)].map((m) => m[1]!)), ...CONSOLE_TABLES]);

/**
 * Refuses a target that holds a table mcauth does not make, before anything is written to it:
 * it is another program's database, and the copy would add every password hash to it.
 */
function refuseForeign(tables: string[], own: Set<string>): void {
  const foreign = tables.filter((table) => !own.has(table)).sort();
  if (foreign.length === 0) return;
  const shown = foreign.length > 5 ? `${foreign.slice(0, 5).join(', ')} and ${foreign.length - 5} more` : foreign.join(', ');
  throw new Error(`the target holds tables that are not mcauth's (${shown}): it is another program's database, and nothing was written to it; copy to a new file or an empty database`);
}

/** The tables of an existing SQLite file, read before the store's open migrates it. */
async function sqliteTables(path: string): Promise<string[]> {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(path);
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").all() as { name: string }[]).map((t) => t.name);
  } finally {
    db.close();
  }
}

/** A SQLite file, created (readable by its owner only: it holds every password hash) and migrated when new. */
async function openSqliteTarget(path: string): Promise<Target> {
  let created = false;
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, 'wx', 0o600));
      created = true;
    } catch {
      // No folder, no permission: SQLite's open below fails and says why.
    }
  }
  const remove = (): void => {
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
  };
  let db: DatabaseSync;
  try {
    if (!created) refuseForeign(await sqliteTables(path), tablesOf(SQLITE_MIGRATIONS));
    // The store's own open: it makes or migrates the schema as `serve` would.
    await (await openSqliteStore(path)).close();
    const { DatabaseSync } = await import('node:sqlite');
    db = new DatabaseSync(path);
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec('PRAGMA foreign_keys = ON');
  } catch (err) {
    if (created) remove();
    throw err;
  }
  const statements = new Map<string, StatementSync>();
  const insert = (table: Table): StatementSync => {
    const columns = Object.keys(table.columns);
    if (!statements.has(table.name)) statements.set(table.name, db.prepare(`INSERT INTO ${table.name} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`));
    return statements.get(table.name)!;
  };
  const count = async (table: Table): Promise<number> => Number((db.prepare(`SELECT count(*) AS n FROM ${table.name}`).get() as { n: number }).n);
  const writer: Writer = {
    count,
    async empty() {
      for (const table of [...TABLES].reverse()) db.exec(`DELETE FROM ${table.name}`);
    },
    async insert(table, rows) {
      const statement = insert(table);
      const kinds = Object.entries(table.columns);
      for (const row of rows) statement.run(...kinds.map(([column, kind]) => (kind === 'bool' ? (row[column] ? 1 : 0) : (row[column] as Exclude<Value, boolean>))));
    },
  };
  return {
    async write(work) {
      // The write lock from the start: nothing else writes between the check that the target is
      // empty and the copy's last row.
      db.exec('BEGIN IMMEDIATE');
      try {
        await work(writer);
        db.exec('COMMIT');
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
    },
    count,
    async close(failed) {
      db.close();
      if (failed && created) remove();
    },
  };
}

/** A PostgreSQL database, its schema made or migrated as a node's start does. */
async function openPostgresTarget(url: string, env: Record<string, string | undefined>): Promise<Target> {
  const sql = await connectPostgres(url, env, { connections: 1 });
  try {
    await firstAnswer(sql);
    const tables = await sql<{ name: string }[]>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`;
    refuseForeign(tables.map((t) => t.name), tablesOf(POSTGRES_MIGRATIONS));
    await migrate(sql);
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
  const writer = (tx: TransactionSql): Writer => ({
    count: (table) => countIn(tx, table),
    async empty() {
      for (const table of [...TABLES].reverse()) await tx`DELETE FROM ${tx(table.name)}`;
    },
    async insert(table, rows) {
      await tx`INSERT INTO ${tx(table.name)} ${tx(rows, Object.keys(table.columns))}`;
    },
  });
  return {
    async write(work) {
      await sql.begin(async (tx) => {
        // Others may read meanwhile but not write: nothing lands between the check that the
        // target is empty and the copy's commit.
        await tx`LOCK TABLE ${tx(TABLES.map((table) => table.name))} IN EXCLUSIVE MODE`;
        await work(writer(tx));
      });
    },
    count: (table) => countIn(sql, table),
    close: () => sql.end({ timeout: 5 }),
  };
}

export interface CopyOptions {
  /** Empty a target that holds anything, instead of refusing it. */
  replace: boolean;
  env: Record<string, string | undefined>;
  /** Told a line of progress now and then. */
  progress: (line: string) => void;
}

export interface TableCount {
  table: string;
  source: number;
  target: number;
}

/** A target that holds anything is refused, or with --replace emptied: a copy never mixes two communities. */
async function emptyTarget(writer: Writer, replace: boolean): Promise<void> {
  const held: string[] = [];
  for (const table of TABLES) {
    const n = await writer.count(table);
    if (n > 0) held.push(`${table.name}: ${n}`);
  }
  if (held.length === 0) return;
  if (!replace) throw new Error(`the target is not empty (${held.join(', ')}); give --replace to delete all it holds and copy over it`);
  await writer.empty();
}

const rowCount = (n: number): string => `${n} ${n === 1 ? 'row' : 'rows'}`;

/** Copies one table, a batch at a time, saying how far it got; the rows the source holds. */
async function copyTable(view: View, writer: Writer, table: Table, progress: (line: string) => void): Promise<number> {
  const total = await view.count(table);
  let copied = 0;
  for await (const rows of view.batches(table)) {
    await writer.insert(table, rows);
    const before = copied;
    copied += rows.length;
    if (Math.floor(copied / PROGRESS_EVERY) > Math.floor(before / PROGRESS_EVERY) && copied < total) progress(`${table.name}: ${copied} of ${rowCount(total)}`);
  }
  progress(`${table.name}: ${copied} of ${rowCount(total)}`);
  return total;
}

/**
 * Copies the database `from` (a SQLite path or a PostgreSQL URL) to `to`, and counts every
 * table's rows in both: in the source as of the moment copied, in the target after the commit.
 */
export async function copyDatabase(from: string, to: string, { replace, env, progress }: CopyOptions): Promise<TableCount[]> {
  const [fromLabel, toLabel] = [dbLabel(from), dbLabel(to)];
  const cannotOpen = (which: string, label: string) => (err: unknown) => {
    throw new Error(`cannot open the ${which} ${label}: ${(err as Error).message}`);
  };
  const source = await (isPostgresUrl(from) ? openPostgresSource(from, env) : openSqliteSource(from)).catch(cannotOpen('source', fromLabel));
  try {
    const target = await (isPostgresUrl(to) ? openPostgresTarget(to, env) : openSqliteTarget(to)).catch(cannotOpen('target', toLabel));
    let failed = true;
    try {
      progress(`Copying ${fromLabel} to ${toLabel}`);
      const sourceCounts = await source
        .read(async (view) => {
          const counts: number[] = [];
          await target.write(async (writer) => {
            await emptyTarget(writer, replace);
            for (const table of TABLES) counts.push(await copyTable(view, writer, table, progress));
          });
          return counts;
        })
        .catch((err: unknown) => {
          // Rolled back: the target holds what it held before.
          throw new Error(`nothing was copied to ${toLabel}: ${(err as Error).message}`);
        });
      failed = false;
      const counts: TableCount[] = [];
      for (const [i, table] of TABLES.entries()) counts.push({ table: table.name, source: sourceCounts[i]!, target: await target.count(table) });
      return counts;
    } finally {
      await target.close(failed);
    }
  } finally {
    await source.close();
  }
}
