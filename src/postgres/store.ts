// The PostgreSQL store: one database shared by several mcauth nodes. Every change that takes more
// than one statement runs in one transaction, and what must not interleave across nodes is held
// apart by row locks (a player's row, a token's row, a failure count's row) or, for textures, an
// advisory lock. Locks are taken in one order, the player's row before the rows that hang off it,
// so that two nodes do not deadlock.
// The driver is passed in configured (see connect.ts); only its types are imported here.
import type { ISql, Sql, TransactionSql } from 'postgres';
import type { CreateResult, Invite, Player, Store, User } from '../store/store.ts';
import { migrate } from './schema.ts';

/** A BIGINT as the driver hands it over: a string, unless the pool was configured otherwise. */
type Millis = string | number | bigint;

interface PlayerRow {
  id: string;
  name: string;
  skin_url: string | null;
  skin_hash: string | null;
  cape_url: string | null;
  cape_hash: string | null;
  is_alex: boolean;
}

interface UserRow extends PlayerRow {
  password_hash: string;
  created_at: Millis;
  last_login_at: Millis | null;
  locked_at: Millis | null;
  lock_reason: string | null;
}

interface InviteRow {
  digest: string;
  uses_left: number;
  created_at: Millis;
  expires_at: Millis;
}

// Times in milliseconds stay far below 2^53: a number holds them exactly.
const toMillis = (value: Millis | null): number | null => (value === null ? null : Number(value));

const toPlayer = (row: PlayerRow): Player => ({
  id: row.id,
  name: row.name,
  skinUrl: row.skin_url,
  skinHash: row.skin_hash,
  capeUrl: row.cape_url,
  capeHash: row.cape_hash,
  isAlex: row.is_alex === true,
});

const toUser = (row: UserRow): User => ({
  ...toPlayer(row),
  passwordHash: row.password_hash,
  createdAt: Number(row.created_at),
  lastLoginAt: toMillis(row.last_login_at),
  lockedAt: toMillis(row.locked_at),
  lockReason: row.lock_reason,
});

const toInvite = (row: InviteRow): Invite => ({
  digest: row.digest,
  usesLeft: Number(row.uses_left),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});

/** PostgreSQL's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * Advisory lock (class, key) held while a transaction names or drops hosted textures: the check
 * that no one wears a texture and a player starting to wear it cannot cross. Texture changes are
 * rare, so one lock serves them all. The class keeps it apart from other two-key advisory locks.
 */
const TEXTURE_LOCK = [0x6d636175, 1] as const;

/**
 * Players an import writes at once: their inserts go to the server together, not one round trip
 * each, while the statements waiting in memory stay few.
 */
const IMPORT_BATCH = 1000;

/** Thrown inside a transaction to roll it back when its result says not to keep it. */
const ROLLBACK = Symbol('rollback');

/**
 * Runs `work` in one transaction, committed unless `keep` says no. READ COMMITTED is named, not
 * left to the database's default: the locking here relies on each statement seeing what others
 * committed before it started, and on a statement that waited for a row seeing the row's latest.
 */
async function transaction<T>(sql: Sql, work: (tx: TransactionSql) => Promise<T>, keep: (result: T) => boolean = () => true): Promise<T> {
  let result!: T;
  try {
    await sql.begin('isolation level read committed', async (tx) => {
      result = await work(tx);
      if (!keep(result)) throw ROLLBACK;
    });
  } catch (err) {
    if (err !== ROLLBACK) throw err;
  }
  return result;
}

/** Connects the store to the database behind `sql`, migrating its schema first. */
export async function createPostgresStore(sql: Sql): Promise<Store> {
  await migrate(sql);

  // Column lists, as fragments of the queries that read a Player or a User. No other table of a
  // join below has a column of these names.
  const PLAYER = sql`id, name, skin_url, skin_hash, cape_url, cape_hash, is_alex`;
  const USER = sql`id, name, skin_url, skin_hash, cape_url, cape_hash, is_alex, password_hash, created_at, last_login_at, locked_at, lock_reason`;

  /** Stores a new player unless its name (any case) or id is taken; whether it did. */
  const insertUser = async (tx: TransactionSql, user: User): Promise<boolean> => {
    const inserted = await tx`
      INSERT INTO users (id, name, name_key, password_hash, skin_url, cape_url, is_alex, created_at)
      VALUES (${user.id}, ${user.name}, ${user.name.toLowerCase()}, ${user.passwordHash}, ${user.skinUrl}, ${user.capeUrl}, ${user.isAlex}, ${user.createdAt})
      ON CONFLICT DO NOTHING`;
    return inserted.count === 1;
  };

  const nameTaken = async (db: ISql, name: string): Promise<boolean> => (await db`SELECT 1 FROM users WHERE name_key = ${name.toLowerCase()}`).length > 0;

  /**
   * Tokens (but `keep`) and then the join: a join being recorded holds its token's row, so it
   * lands wholly before this (and its join is deleted here) or after (and finds no token).
   */
  const endSessions = async (tx: TransactionSql, id: string, keep?: string): Promise<void> => {
    await tx`DELETE FROM tokens WHERE user_id = ${id} ${keep === undefined ? tx`` : tx`AND digest <> ${keep}`}`;
    await tx`DELETE FROM joins WHERE user_id = ${id}`;
  };

  /** Deletes the textures among `hashes` that no player wears; under TEXTURE_LOCK. */
  const dropUnworn = async (tx: TransactionSql, hashes: (string | null)[]): Promise<void> => {
    for (const hash of new Set(hashes)) {
      if (hash === null) continue;
      await tx`DELETE FROM textures WHERE hash = ${hash}
               AND NOT EXISTS (SELECT 1 FROM users WHERE skin_hash = ${hash}) AND NOT EXISTS (SELECT 1 FROM users WHERE cape_hash = ${hash})`;
    }
  };

  /**
   * The player's texture hashes, its row locked against other changes; undefined when there is
   * none. NO KEY UPDATE, the lock an UPDATE takes: it leaves alone the key-share lock a join or a
   * reset code referring to the player takes, so neither deadlocks with this.
   */
  const lockForTextures = async (tx: TransactionSql, id: string): Promise<Pick<PlayerRow, 'skin_hash' | 'cape_hash'> | undefined> => {
    const [row] = await tx<Pick<PlayerRow, 'skin_hash' | 'cape_hash'>[]>`SELECT skin_hash, cape_hash FROM users WHERE id = ${id} FOR NO KEY UPDATE`;
    if (row) await tx`SELECT pg_advisory_xact_lock(${TEXTURE_LOCK[0]}, ${TEXTURE_LOCK[1]})`;
    return row;
  };

  return {
    countUsers: async () => Number((await sql<{ n: Millis }[]>`SELECT count(*) AS n FROM users`)[0]!.n),
    listUsers: async (after = '', limit) =>
      (await sql<UserRow[]>`SELECT ${USER} FROM users WHERE name_key > ${after.toLowerCase()} ORDER BY name_key ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}`).map(toUser),
    findUserByName: async (name) => (await sql<UserRow[]>`SELECT ${USER} FROM users WHERE name_key = ${name.toLowerCase()}`).map(toUser)[0],
    findUserById: async (id) => (await sql<UserRow[]>`SELECT ${USER} FROM users WHERE id = ${id}`).map(toUser)[0],
    findPlayer: async (id) => (await sql<PlayerRow[]>`SELECT ${PLAYER} FROM users WHERE id = ${id}`).map(toPlayer)[0],
    async findUsersByNames(names) {
      if (names.length === 0) return [];
      const keys = names.map((name) => name.toLowerCase());
      return (await sql<PlayerRow[]>`SELECT ${PLAYER} FROM users WHERE name_key = ANY(${sql.array(keys)}::text[])`).map(toPlayer);
    },

    // The invite's use is taken by an UPDATE that re-checks uses_left on the row's latest version,
    // so of two nodes taking its last use one finds none left; a player not created gives it back.
    createUser: (user, invite) =>
      transaction(
        sql,
        async (tx): Promise<CreateResult> => {
          if (await nameTaken(tx, user.name)) return 'name_taken';
          if (invite) {
            const used = await tx`UPDATE invites SET uses_left = uses_left - 1 WHERE digest = ${invite.digest} AND uses_left > 0 AND expires_at > ${invite.now}`;
            if (used.count === 0) return 'invite_invalid';
          }
          if (await insertUser(tx, user)) return 'created';
          // Taken meanwhile by another node under this name, or under this id.
          return (await nameTaken(tx, user.name)) ? 'name_taken' : 'id_taken';
        },
        (result) => result === 'created',
      ),

    createUsers: (users, commit) =>
      transaction(
        sql,
        async (tx): Promise<CreateResult[]> => {
          const created: boolean[] = [];
          for (let i = 0; i < users.length; i += IMPORT_BATCH) {
            created.push(...(await Promise.all(users.slice(i, i + IMPORT_BATCH).map((user) => insertUser(tx, user)))));
          }
          // Why each one left out was: its name held by a player already there or by one created
          // earlier in the list (the store checks the name first); else its id.
          const keys = users.map((user) => user.name.toLowerCase());
          const creatorOf = new Map<string, number>(); // name key -> the entry that created it
          keys.forEach((key, i) => created[i] && creatorOf.set(key, i));
          const leftOut = keys.filter((_, i) => !created[i]);
          const held = new Set(
            leftOut.length === 0 ? [] : (await tx<{ name_key: string }[]>`SELECT name_key FROM users WHERE name_key = ANY(${tx.array(leftOut)}::text[])`).map((row) => row.name_key),
          );
          return keys.map((key, i): CreateResult => {
            if (created[i]) return 'created';
            const creator = creatorOf.get(key);
            return (creator === undefined ? held.has(key) : creator < i) ? 'name_taken' : 'id_taken';
          });
        },
        (results) => commit === 'always' || (commit === 'unless-taken' && results.every((r) => r === 'created')),
      ),

    // One statement; the unique name_key refuses a name taken meanwhile by another node.
    async renameUser(id, name) {
      try {
        const renamed = await sql`UPDATE users SET name = ${name}, name_key = ${name.toLowerCase()} WHERE id = ${id}`;
        if (renamed.count === 1) return 'renamed';
      } catch (err) {
        if ((err as { code?: unknown }).code === UNIQUE_VIOLATION) return 'name_taken';
        throw err;
      }
      // No such player: a taken name is still said first, as the other stores do.
      return (await nameTaken(sql, name)) ? 'name_taken' : 'not_found';
    },

    // The UPDATE locks the player's row first, as a login does: see recordLogin.
    setPasswordHash: (id, hash, end, keep, replacing) =>
      transaction(sql, async (tx) => {
        const set = await tx`UPDATE users SET password_hash = ${hash} WHERE id = ${id} ${replacing === undefined ? tx`` : tx`AND password_hash = ${replacing}`}`;
        if (set.count === 0 || !end) return;
        await endSessions(tx, id, keep);
        await tx`DELETE FROM reset_codes WHERE user_id = ${id}`;
      }),

    setLock: (id, lock) =>
      transaction(sql, async (tx) => {
        // A lock already in place keeps its time: a new reason does not make it younger.
        const set = lock
          ? await tx`UPDATE users SET locked_at = coalesce(locked_at, ${lock.at}), lock_reason = ${lock.reason} WHERE id = ${id}`
          : await tx`UPDATE users SET locked_at = NULL, lock_reason = NULL WHERE id = ${id}`;
        if (set.count === 0) return false;
        if (lock) await endSessions(tx, id);
        return true;
      }),

    setTextures: (id, change) =>
      transaction(sql, async (tx) => {
        const before = await lockForTextures(tx, id);
        if (!before) return;
        const { upload } = change;
        if (upload) await tx`INSERT INTO textures (hash, png) VALUES (${upload.hash}, ${upload.png}) ON CONFLICT DO NOTHING`;
        if (change.skinUrl !== undefined || change.skinHash !== undefined) {
          await tx`UPDATE users SET skin_url = ${change.skinUrl ?? null}, skin_hash = ${change.skinHash ?? null} WHERE id = ${id}`;
        }
        if (change.capeUrl !== undefined || change.capeHash !== undefined) {
          await tx`UPDATE users SET cape_url = ${change.capeUrl ?? null}, cape_hash = ${change.capeHash ?? null} WHERE id = ${id}`;
        }
        if (change.isAlex !== undefined) await tx`UPDATE users SET is_alex = ${change.isAlex} WHERE id = ${id}`;
        await dropUnworn(tx, [before.skin_hash, before.cape_hash]);
      }),
    async findTexture(hash) {
      const [row] = await sql<{ png: Uint8Array }[]>`SELECT png FROM textures WHERE hash = ${hash}`;
      return row && Buffer.from(row.png);
    },
    countTextures: async () => Number((await sql<{ n: Millis }[]>`SELECT count(*) AS n FROM textures`)[0]!.n),
    textureHosts: async () =>
      (
        await sql<{ host: string }[]>`SELECT DISTINCT host FROM (SELECT substring(skin_url from '//([^/]*)') AS host FROM users WHERE skin_url IS NOT NULL
          UNION ALL SELECT substring(cape_url from '//([^/]*)') FROM users WHERE cape_url IS NOT NULL) AS t WHERE host IS NOT NULL`
      ).map((row) => row.host),

    endSessions: (id) => transaction(sql, (tx) => endSessions(tx, id)),

    // Sessions are ended before the row goes (the rest goes with it, ON DELETE CASCADE), in the
    // order a join takes its locks; textures no one wears any more, here.
    deleteUser: (id) =>
      transaction(sql, async (tx) => {
        const before = await lockForTextures(tx, id);
        if (!before) return false;
        await endSessions(tx, id);
        await tx`DELETE FROM users WHERE id = ${id}`;
        await dropUnworn(tx, [before.skin_hash, before.cape_hash]);
        return true;
      }),

    // The UPDATE checks the lock and the hash on the row's latest version and holds the row: a
    // lock, removal or password change lands wholly before (and this stores nothing) or after
    // (and ends the token stored here). Two logins of one player take turns, so pruning counts right.
    recordLogin: (userId, verifiedHash, digest, now, expiresAt, maxLive, client) =>
      transaction(sql, async (tx) => {
        const seen = await tx`UPDATE users SET last_login_at = ${now} WHERE id = ${userId} AND locked_at IS NULL AND password_hash = ${verifiedHash}`;
        if (seen.count === 0) return false;
        await tx`INSERT INTO tokens (digest, user_id, issued_at, expires_at, client) VALUES (${digest}, ${userId}, ${now}, ${expiresAt}, ${client ?? null})`;
        await tx`DELETE FROM tokens WHERE user_id = ${userId} AND (expires_at <= ${now} OR stored NOT IN (
                   SELECT stored FROM tokens WHERE user_id = ${userId} AND expires_at > ${now} ORDER BY stored DESC LIMIT ${maxLive}))`;
        return true;
      }),
    // One statement checks the token and records the join, holding the token's row (FOR SHARE)
    // until it commits: an ending of sessions cannot slip between, see endSessions above.
    recordJoin: async (digest, userId, serverId, now, ip) =>
      (
        await sql`
          WITH token AS (SELECT user_id FROM tokens WHERE digest = ${digest} AND user_id = ${userId} AND expires_at > ${now} FOR SHARE)
          INSERT INTO joins (user_id, server_id, joined_at, ip) SELECT user_id, ${serverId}::text, ${now}::bigint, ${ip ?? null}::text FROM token
          ON CONFLICT (user_id) DO UPDATE SET server_id = excluded.server_id, joined_at = excluded.joined_at, ip = excluded.ip`
      ).count === 1,
    findJoin: async (name, serverId, since, ip) =>
      (
        await sql<PlayerRow[]>`SELECT ${PLAYER} FROM users JOIN joins ON joins.user_id = users.id
                               WHERE name_key = ${name.toLowerCase()} AND server_id = ${serverId} AND joined_at > ${since}
                               ${ip === undefined ? sql`` : sql`AND joins.ip = ${ip}`}`
      ).map(toPlayer)[0],
    hasClient: async (name, client, now) =>
      (await sql`SELECT 1 FROM users JOIN tokens ON tokens.user_id = users.id WHERE users.name_key = ${name.toLowerCase()} AND tokens.client = ${client} AND tokens.expires_at > ${now} LIMIT 1`).length > 0,
    findUserByToken: async (digest, now) =>
      (await sql<UserRow[]>`SELECT ${USER} FROM tokens JOIN users ON users.id = tokens.user_id WHERE digest = ${digest} AND expires_at > ${now}`).map(toUser)[0],
    deleteToken: async (digest) => (await sql`DELETE FROM tokens WHERE digest = ${digest}`).count === 1,
    async keepSecret(name, value) {
      if (value !== undefined) await sql`INSERT INTO secrets (name, value) VALUES (${name}, ${value}) ON CONFLICT DO NOTHING`;
      return (await sql<{ value: string }[]>`SELECT value FROM secrets WHERE name = ${name}`)[0]?.value;
    },

    createInvite: (invite) =>
      transaction(sql, async (tx) => {
        await tx`DELETE FROM invites WHERE uses_left <= 0 OR expires_at <= ${invite.createdAt}`;
        await tx`INSERT INTO invites (digest, uses_left, created_at, expires_at) VALUES (${invite.digest}, ${invite.usesLeft}, ${invite.createdAt}, ${invite.expiresAt})`;
      }),
    listInvites: async (now) =>
      (await sql<InviteRow[]>`SELECT digest, uses_left, created_at, expires_at FROM invites WHERE uses_left > 0 AND expires_at > ${now} ORDER BY expires_at, digest`).map(toInvite),
    deleteInvites: async (prefix) => (await sql`DELETE FROM invites WHERE starts_with(digest, ${prefix})`).count,

    // The player's row (key share: it may not be deleted meanwhile) before the code's row, in the
    // order a removal takes them.
    setResetCode: (userId, digest, expiresAt) =>
      transaction(sql, async (tx) => {
        if ((await tx`SELECT 1 FROM users WHERE id = ${userId} FOR KEY SHARE`).length === 0) return false;
        await tx`INSERT INTO reset_codes (user_id, digest, expires_at) VALUES (${userId}, ${digest}, ${expiresAt})
                 ON CONFLICT (user_id) DO UPDATE SET digest = excluded.digest, expires_at = excluded.expires_at`;
        return true;
      }),
    findResetCode: async (digest, now) =>
      (await sql<{ user_id: string }[]>`SELECT user_id FROM reset_codes WHERE digest = ${digest} AND expires_at > ${now}`)[0]?.user_id,
    // The player's row is locked before the code is taken, as a password change takes them; the
    // DELETE decides: of two uses at once, the second finds the code gone.
    useResetCode: (digest, now, hash) =>
      transaction(sql, async (tx) => {
        const [code] = await tx<{ user_id: string }[]>`SELECT user_id FROM reset_codes WHERE digest = ${digest}`;
        if (!code) return undefined;
        await tx`SELECT 1 FROM users WHERE id = ${code.user_id} FOR NO KEY UPDATE`;
        const [used] = await tx<{ user_id: string }[]>`DELETE FROM reset_codes WHERE digest = ${digest} AND expires_at > ${now} RETURNING user_id`;
        if (!used) return undefined;
        await tx`UPDATE users SET password_hash = ${hash} WHERE id = ${used.user_id}`;
        await endSessions(tx, used.user_id);
        return used.user_id;
      }),

    updateLoginFailures: (keys, forgetBefore, update) =>
      transaction(sql, async (tx) => {
        // Every key gets a row (a count of none where it had none), and the rows are locked in
        // one order: two nodes counting under one key take turns, and neither loses the other's
        // count; two counting under several keys cannot deadlock.
        const unique = tx.array([...new Set(keys)]);
        await tx`INSERT INTO login_failures (name_key, failures, last_at)
                 SELECT key, 0, 0 FROM unnest(${unique}::text[]) AS key ORDER BY key COLLATE "C" ON CONFLICT DO NOTHING`;
        const rows = await tx<{ name_key: string; failures: number; last_at: Millis }[]>`
          SELECT name_key, failures, last_at FROM login_failures WHERE name_key = ANY(${unique}::text[]) ORDER BY name_key FOR UPDATE`;
        // A row another node's sweep deleted while this waited is missing here: a count of none.
        const byKey = new Map(rows.map((row) => [row.name_key, row]));
        const counts = keys.map((key) => {
          const row = byKey.get(key);
          return row && Number(row.last_at) >= forgetBefore ? { failures: Number(row.failures), lastAt: Number(row.last_at) } : { failures: 0, lastAt: 0 };
        });
        const next = update(counts);
        for (const [i, count] of next.entries()) {
          if (!count) continue;
          await tx`INSERT INTO login_failures (name_key, failures, last_at) VALUES (${keys[i]!}, ${count.failures}, ${count.lastAt})
                   ON CONFLICT (name_key) DO UPDATE SET failures = excluded.failures, last_at = excluded.last_at`;
        }
        // Rows another node holds are its to count (or sweep): skipping them keeps two sweeps
        // from waiting on each other.
        await tx`DELETE FROM login_failures WHERE name_key IN (
                   SELECT name_key FROM login_failures WHERE last_at < ${forgetBefore} FOR UPDATE SKIP LOCKED)`;
      }),

    async ping() {
      await sql`SELECT 1`;
    },
    async backup() {
      throw new Error('a PostgreSQL database is backed up with pg_dump, not mcauth backup');
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}
