// The database schema and its migrations, versioned by SQLite's `user_version`.
// Migration N takes the schema from version N to N+1; a released step is never edited.
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './transaction.ts';

export const MIGRATIONS: string[] = [
  `CREATE TABLE users (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     name_key TEXT NOT NULL UNIQUE, -- lower-case name: unique in any case
     password_hash TEXT NOT NULL,
     skin_url TEXT,
     cape_url TEXT,
     is_alex INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE tokens (
     digest TEXT PRIMARY KEY, -- SHA-256 of the token; the token itself is never stored
     user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
     issued_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX tokens_by_user ON tokens (user_id);
   CREATE TABLE joins (
     user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
     server_id TEXT NOT NULL,
     joined_at INTEGER NOT NULL
   );`,
  // Failed logins a name, for the password-guessing throttle.
  `CREATE TABLE login_failures (
     name_key TEXT PRIMARY KEY, -- lower-case login name, whether or not such a player exists
     failures INTEGER NOT NULL,
     last_at INTEGER NOT NULL
   );
   CREATE INDEX login_failures_by_time ON login_failures (last_at);`,
  // Hosted skins and capes, content-addressed and shared between the players who wear them.
  `CREATE TABLE textures (
     hash TEXT PRIMARY KEY, -- SHA-256 of png, lower-case hex
     png BLOB NOT NULL
   );
   ALTER TABLE users ADD COLUMN skin_hash TEXT REFERENCES textures (hash);
   ALTER TABLE users ADD COLUMN cape_hash TEXT REFERENCES textures (hash);
   CREATE INDEX users_by_skin ON users (skin_hash);
   CREATE INDEX users_by_cape ON users (cape_hash);`,
  // The account's life: its last login, and a lock that keeps the player without deleting them.
  `ALTER TABLE users ADD COLUMN last_login_at INTEGER;
   ALTER TABLE users ADD COLUMN locked_at INTEGER;
   ALTER TABLE users ADD COLUMN lock_reason TEXT;`,
  // Players on their own (the account page): invites to register, and password-reset codes.
  `CREATE TABLE invites (
     digest TEXT PRIMARY KEY, -- SHA-256 of the code; the code itself is never stored
     uses_left INTEGER NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE TABLE reset_codes (
     user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE, -- one a player: a new code voids the old
     digest TEXT NOT NULL UNIQUE, -- SHA-256 of the code
     expires_at INTEGER NOT NULL
   );`,
  // The public look-ups read one page each where they read three or four: a join kept in the
  // order of its player, and the fields a look-up answers with in indexes by name and by UUID.
  `CREATE TABLE joins_by_user (
     user_id TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
     server_id TEXT NOT NULL,
     joined_at INTEGER NOT NULL
   ) WITHOUT ROWID;
   INSERT INTO joins_by_user SELECT user_id, server_id, joined_at FROM joins;
   DROP TABLE joins;
   ALTER TABLE joins_by_user RENAME TO joins;
   CREATE INDEX players_by_name ON users (name_key, id, name, skin_url, skin_hash, cape_url, cape_hash, is_alex);
   CREATE INDEX players_by_id ON users (id, name, skin_url, skin_hash, cape_url, cape_hash, is_alex);`,
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

/** Runs `step`, retrying while another process holds the lock it needs (a new file opened by several at once). */
async function whenUnlocked<T>(step: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return step();
    } catch (err) {
      // Only a lock held elsewhere is worth a short, jittered wait; anything else is thrown at once.
      if (!/locked|busy/i.test(String((err as Error).message)) || attempt >= 50) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
    }
  }
}

/** The file's schema version; a version newer than this program's is refused. */
function refuseNewer(db: DatabaseSync): number {
  const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
  if (version > SCHEMA_VERSION) {
    throw new Error(`the database has schema version ${version}, newer than this program's ${SCHEMA_VERSION}; use a newer mcauth`);
  }
  return version;
}

/**
 * Switches the file to WAL and brings the schema up to date. Several processes may open the same
 * new file at once: the version is read and raised inside one IMMEDIATE transaction, so exactly
 * one of them migrates and the others (waiting up to the busy timeout) find the work done.
 */
export async function migrate(db: DatabaseSync): Promise<void> {
  refuseNewer(db); // before anything writes, even the switch to WAL
  await whenUnlocked(() => db.exec('PRAGMA journal_mode = WAL'));
  // From BEGIN to COMMIT nothing is awaited: another connection of this same process would
  // otherwise block the thread in its busy wait while this one holds the lock.
  transaction(db, () => {
    const version = refuseNewer(db);
    for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    if (version < SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  });
}
