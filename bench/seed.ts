// Seeds a database for the benchmark: N players, each with a live token and a fresh join, written
// straight into SQLite in one transaction, or into PostgreSQL with COPY. Every player has the same
// password, hashed once, so seeding a million players takes seconds, not the hours a million
// scrypt hashes would.
import { DatabaseSync } from 'node:sqlite';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres, { type PendingQuery, type Row } from 'postgres';
import { hashPassword } from '../src/crypto/password.ts';
import { digestToken } from '../src/crypto/token.ts';
import { createPostgresStore } from '../src/postgres/store.ts';
import { openSqliteStore } from '../src/store/sqlite.ts';
import { nameOf, tokenOf, uuidOf } from './players.ts';

export const PASSWORD = 'bench-password';
export const SERVER_ID = 'bench-server';

/**
 * Creates the schema through the store (or `createSchema`: another build's, whose schema may be
 * older), then fills it; returns the seconds it took.
 */
export async function seed(path: string, users: number, createSchema?: (path: string) => void): Promise<number> {
  const started = performance.now();
  if (createSchema) createSchema(path);
  else await (await openSqliteStore(path)).close();
  const hash = await hashPassword(PASSWORD);
  const db = new DatabaseSync(path);
  db.exec('PRAGMA synchronous = OFF');
  const now = Date.now();
  const expires = now + 24 * 3600 * 1000;
  const user = db.prepare('INSERT INTO users (id, name, name_key, password_hash, is_alex, created_at) VALUES (?, ?, ?, ?, 0, ?)');
  const token = db.prepare('INSERT INTO tokens (digest, user_id, issued_at, expires_at) VALUES (?, ?, ?, ?)');
  const join = db.prepare('INSERT INTO joins (user_id, server_id, joined_at) VALUES (?, ?, ?)');
  db.exec('BEGIN');
  for (let i = 0; i < users; i++) {
    const id = uuidOf(i);
    const name = nameOf(i);
    user.run(id, name, name, hash, now);
    token.run(digestToken(tokenOf(i)), id, now, expires);
    join.run(id, SERVER_ID, now);
  }
  db.exec('COMMIT');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return (performance.now() - started) / 1000;
}

/** Rows handed to a COPY at once: a million players go over in bounded memory. */
const COPY_BATCH = 10_000;

/** Streams `line(i)` for every player into `copy` (a COPY … FROM STDIN), COPY_BATCH rows a write. */
async function copyRows(copy: PendingQuery<Row[]>, users: number, line: (i: number) => string): Promise<void> {
  function* batches(): Generator<string> {
    for (let from = 0; from < users; from += COPY_BATCH) {
      let text = '';
      for (let i = from; i < Math.min(from + COPY_BATCH, users); i++) text += line(i);
      yield text;
    }
  }
  await pipeline(Readable.from(batches()), await copy.writable());
}

/**
 * The same players as `seed`, in the PostgreSQL database at `url`: the schema through the store's
 * own migration, then the rows with COPY (text format: no value here holds a tab, newline or
 * backslash), then VACUUM ANALYZE, as autovacuum would have left a database in service (planner
 * statistics, hint bits and the visibility map set, so a load does not pay for them); returns the
 * seconds it took.
 */
export async function seedPostgres(url: string, users: number): Promise<number> {
  const started = performance.now();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await createPostgresStore(sql);
    const hash = await hashPassword(PASSWORD);
    const now = Date.now();
    const expires = now + 24 * 3600 * 1000;
    await copyRows(sql`COPY users (id, name, name_key, password_hash, created_at) FROM STDIN`, users, (i) => `${uuidOf(i)}\t${nameOf(i)}\t${nameOf(i)}\t${hash}\t${now}\n`);
    await copyRows(sql`COPY tokens (digest, user_id, issued_at, expires_at) FROM STDIN`, users, (i) => `${digestToken(tokenOf(i))}\t${uuidOf(i)}\t${now}\t${expires}\n`);
    await copyRows(sql`COPY joins (user_id, server_id, joined_at) FROM STDIN`, users, (i) => `${uuidOf(i)}\t${SERVER_ID}\t${now}\n`);
    await sql`VACUUM ANALYZE users, tokens, joins`;
    await sql`CHECKPOINT`;
  } finally {
    await sql.end();
  }
  return (performance.now() - started) / 1000;
}
