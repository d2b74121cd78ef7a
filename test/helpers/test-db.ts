// Where a test file keeps its data: a SQLite file in its temp folder, or with
// MCAUTH_TEST_DB=postgres (`npm run test:postgres`) a database of its own on the phase's throwaway
// PostgreSQL cluster (see postgres.ts): the same tests of the contract, the variants, logins, the
// account page, the admin API and hosted textures, run over the other store.
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { databaseServer, postgresMissing } from './postgres.ts';

const ON_POSTGRES = process.env.MCAUTH_TEST_DB === 'postgres';
if (ON_POSTGRES && postgresMissing) process.stderr.write(`MCAUTH_TEST_DB=postgres, but ${postgresMissing}: these tests run on SQLite\n`);

/** A new, empty database for `name`: the file `name` in `dir`, or on PostgreSQL a URL. Call it at a file's top level. */
export async function testDb(dir: string, name: string): Promise<string> {
  if (!ON_POSTGRES || postgresMissing) return join(dir, name);
  const server = await databaseServer();
  return server.url(await server.newDatabase(name));
}

const isUrl = (db: string): boolean => /^postgres(ql)?:\/\//.test(db);

/**
 * The rows `query` finds in a test's database, read as the server left them: a SQLite file opened
 * read-only (its WAL is read too), or on PostgreSQL a connection of its own. `?` marks a parameter
 * in either.
 */
export async function storedRows(db: string, query: string, ...params: string[]): Promise<Record<string, unknown>[]> {
  if (!isUrl(db)) {
    const conn = new DatabaseSync(db, { readOnly: true });
    try {
      return conn.prepare(query).all(...params).map((row) => ({ ...row }));
    } finally {
      conn.close();
    }
  }
  let n = 0;
  const sql = (await import('postgres')).default(db, { max: 1, onnotice: () => {} });
  try {
    return [...(await sql.unsafe(query.replace(/\?/g, () => `$${++n}`), params))].map((row) => ({ ...row }));
  } finally {
    await sql.end();
  }
}

/** The names of the tables the store made in a test's database. */
export async function storedTables(db: string): Promise<string[]> {
  const query = isUrl(db)
    ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'"
    : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
  return (await storedRows(db, query)).map((t) => String(t.name));
}
