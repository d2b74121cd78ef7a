// The PostgreSQL schema and its migrations, versioned by the one row of `mcauth_schema`.
// Migration N takes the schema from version N to N+1; a released step is never edited.
// PostgreSQL keeps its own count: its version 1 is the SQLite schema's latest, translated.
import type { Sql, TransactionSql } from 'postgres';

export const MIGRATIONS: string[] = [
  // Times are milliseconds since the epoch (BIGINT). name_key and the invite digests compare and
  // sort byte by byte (COLLATE "C"), as SQLite and the in-memory store do, whatever the
  // database's locale: a listing's order and its `after` cursor agree across the stores.
  `CREATE TABLE mcauth_schema (version INTEGER NOT NULL);
   CREATE UNIQUE INDEX mcauth_schema_one_row ON mcauth_schema ((true)); -- one row at most
   INSERT INTO mcauth_schema (version) VALUES (1);
   -- Hosted skins and capes, content-addressed and shared between the players who wear them.
   CREATE TABLE textures (
     hash TEXT PRIMARY KEY, -- SHA-256 of png, lower-case hex
     png BYTEA NOT NULL
   );
   CREATE TABLE users (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     name_key TEXT COLLATE "C" NOT NULL UNIQUE, -- lower-case name: unique in any case
     password_hash TEXT NOT NULL,
     skin_url TEXT,
     skin_hash TEXT REFERENCES textures (hash),
     cape_url TEXT,
     cape_hash TEXT REFERENCES textures (hash),
     is_alex BOOLEAN NOT NULL DEFAULT false,
     created_at BIGINT NOT NULL,
     last_login_at BIGINT,
     locked_at BIGINT,
     lock_reason TEXT
   );
   -- A texture is deleted when no one wears it: these answer "does anyone?".
   CREATE INDEX users_by_skin ON users (skin_hash);
   CREATE INDEX users_by_cape ON users (cape_hash);
   CREATE TABLE tokens (
     digest TEXT PRIMARY KEY, -- SHA-256 of the token; the token itself is never stored
     user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
     stored BIGINT GENERATED ALWAYS AS IDENTITY, -- the order of storing, which pruning keeps the newest of
     issued_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE INDEX tokens_by_user ON tokens (user_id, stored);
   CREATE TABLE joins (
     user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
     server_id TEXT NOT NULL,
     joined_at BIGINT NOT NULL
   );
   -- Failed logins under the service's keys, for the password-guessing throttle.
   CREATE TABLE login_failures (
     name_key TEXT COLLATE "C" PRIMARY KEY,
     failures INTEGER NOT NULL,
     last_at BIGINT NOT NULL
   );
   CREATE INDEX login_failures_by_time ON login_failures (last_at);
   -- Players on their own (the account page): invites to register, and password-reset codes.
   CREATE TABLE invites (
     digest TEXT COLLATE "C" PRIMARY KEY, -- SHA-256 of the code; the code itself is never stored
     uses_left INTEGER NOT NULL,
     created_at BIGINT NOT NULL,
     expires_at BIGINT NOT NULL
   );
   CREATE TABLE reset_codes (
     user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE, -- one a player: a new code voids the old
     digest TEXT NOT NULL UNIQUE, -- SHA-256 of the code
     expires_at BIGINT NOT NULL
   );`,
  // Limits counted for all nodes together (the account page's registration limits): a count a
  // key in a window of time that began at started_at.
  `CREATE TABLE window_counts (
     key TEXT COLLATE "C" PRIMARY KEY, -- the limit's name, a space, what it counts (an address, or '')
     started_at BIGINT NOT NULL,
     count INTEGER NOT NULL
   );
   CREATE INDEX window_counts_by_start ON window_counts (started_at);`,
  // Who each token was issued to (a digest of its clientToken or address): a client that logged
  // in before is held by its own failed logins only.
  `ALTER TABLE tokens ADD COLUMN client TEXT;`,
  // The Yggdrasil API (src/yggdrasil/): the address a join came from, and the key it signs with.
  `ALTER TABLE joins ADD COLUMN ip TEXT;
   CREATE TABLE secrets (
     name TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * The key of the advisory lock a migration holds: any fixed number, the same in every release
 * ('mcauth' in ASCII). Advisory locks are per database, so one cluster may hold many mcauths.
 */
const MIGRATION_LOCK = 0x6d6361757468;

/** The database's schema version; 0 for a new one, which has no version table yet. */
async function schemaVersion(tx: TransactionSql): Promise<number> {
  const [found] = await tx<{ present: boolean }[]>`SELECT to_regclass('mcauth_schema') IS NOT NULL AS present`;
  if (!found?.present) return 0;
  const [row] = await tx<{ version: number }[]>`SELECT version FROM mcauth_schema`;
  return row ? Number(row.version) : 0;
}

/**
 * Brings the schema up to date. Several nodes may start on the same new database at once: each
 * reads and raises the version in one transaction holding the migration lock, so exactly one of
 * them migrates and the others wait, then find the work done. A newer schema is refused, and the
 * transaction that found it writes nothing.
 */
export async function migrate(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    const version = await schemaVersion(tx);
    if (version > SCHEMA_VERSION) throw new Error(`the database has schema version ${version}, newer than this program's ${SCHEMA_VERSION}; use a newer mcauth`);
    if (version === SCHEMA_VERSION) return;
    // DDL is transactional in PostgreSQL: a step that fails leaves the database as it was.
    for (let v = version; v < SCHEMA_VERSION; v++) await tx.unsafe(MIGRATIONS[v]!);
    await tx`UPDATE mcauth_schema SET version = ${SCHEMA_VERSION}`;
  });
}
