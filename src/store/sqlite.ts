// The SQLite store: one file in WAL mode, shared safely by the server and CLI processes.
import type { StatementSync } from 'node:sqlite';
import { BUSY_TIMEOUT_MS, SQLITE_CACHE_KIB } from '../limits.ts';
import { migrate } from './schema.ts';
import { endSharedRead, sharedRead, transaction } from './transaction.ts';
import type { CreateResult, Invite, Player, Store, User } from './store.ts';

/** The columns of a Player, all in the indexes players_by_name and players_by_id. */
const PLAYER_COLUMNS = `users.id, users.name, users.skin_url AS skinUrl, users.skin_hash AS skinHash,
  users.cape_url AS capeUrl, users.cape_hash AS capeHash, users.is_alex AS isAlex`;
const USER_COLUMNS = `${PLAYER_COLUMNS}, users.password_hash AS passwordHash, users.created_at AS createdAt,
  users.last_login_at AS lastLoginAt, users.locked_at AS lockedAt, users.lock_reason AS lockReason`;

/** A row of USER_COLUMNS as a User: the model flag is stored as 0 or 1. */
const toUser = (row: unknown): User | undefined => (row ? { ...(row as User), isAlex: (row as { isAlex: unknown }).isAlex === 1 } : undefined);
/**
 * A row of PLAYER_COLUMNS as a Player, field by field: the look-ups' rows, where a copy of the
 * driver's row whole (a spread) cost more than half of reading it.
 */
const toPlayer = (row: unknown): Player | undefined => {
  if (!row) return undefined;
  const { id, name, skinUrl, skinHash, capeUrl, capeHash, isAlex } = row as Record<keyof Player, never>;
  return { id, name, skinUrl, skinHash, capeUrl, capeHash, isAlex: isAlex === 1 };
};

/**
 * Opens (creating and migrating when needed) the database at `path`. node:sqlite is imported
 * here, dynamically, so that an older Node reaches the version check in server.ts first.
 */
export type Synchronous = 'normal' | 'full';

export async function openSqliteStore(path: string, synchronous: Synchronous = 'normal'): Promise<Store> {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec('PRAGMA foreign_keys = ON');
    db.exec(`PRAGMA cache_size = -${SQLITE_CACHE_KIB}`);
    // NORMAL (with WAL): a commit reaches the operating system before the answer goes out, so a
    // crash of the process loses nothing, and no fsync blocks the event loop on every write.
    // FULL also survives power loss, at the price of one fsync per commit.
    db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    await migrate(db);
  } catch (err) {
    db.close();
    throw err;
  }
  let closed = false;
  const sql = (text: string): StatementSync => db.prepare(text);
  const q = {
    ping: sql('SELECT 1 FROM users LIMIT 1'),
    backup: sql('VACUUM INTO ?'),
    count: sql('SELECT count(*) AS n FROM users'),
    list: sql(`SELECT ${USER_COLUMNS} FROM users WHERE name_key > ? ORDER BY name_key LIMIT ?`),
    byName: sql(`SELECT ${USER_COLUMNS} FROM users WHERE name_key = ?`),
    byId: sql(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`),
    player: sql(`SELECT ${PLAYER_COLUMNS} FROM users INDEXED BY players_by_id WHERE id = ?`),
    byNames: sql(`SELECT ${PLAYER_COLUMNS} FROM users INDEXED BY players_by_name WHERE name_key IN (SELECT value FROM json_each(?))`),
    insertUser: sql(
      `INSERT INTO users (id, name, name_key, password_hash, skin_url, cape_url, is_alex, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    setHash: sql('UPDATE users SET password_hash = ?1 WHERE id = ?2 AND (?3 IS NULL OR password_hash = ?3)'),
    rename: sql('UPDATE users SET name = ?, name_key = ? WHERE id = ?'),
    // A lock already in place keeps its time: a new reason does not make it younger.
    setLock: sql('UPDATE users SET locked_at = CASE WHEN ?1 IS NULL THEN NULL ELSE coalesce(locked_at, ?1) END, lock_reason = ?2 WHERE id = ?3'),
    setLastLogin: sql('UPDATE users SET last_login_at = ? WHERE id = ?'),
    deleteJoin: sql('DELETE FROM joins WHERE user_id = ?'),
    setSkin: sql('UPDATE users SET skin_url = ?, skin_hash = ? WHERE id = ?'),
    setCape: sql('UPDATE users SET cape_url = ?, cape_hash = ? WHERE id = ?'),
    setModel: sql('UPDATE users SET is_alex = ? WHERE id = ?'),
    insertTexture: sql('INSERT OR IGNORE INTO textures (hash, png) VALUES (?, ?)'),
    dropTexture: sql(
      `DELETE FROM textures WHERE hash = ?1
       AND NOT EXISTS (SELECT 1 FROM users WHERE skin_hash = ?1) AND NOT EXISTS (SELECT 1 FROM users WHERE cape_hash = ?1)`,
    ),
    texture: sql('SELECT png FROM textures WHERE hash = ?'),
    countTextures: sql('SELECT count(*) AS n FROM textures'),
    // What follows `//` in each URL, up to the next `/` (the URLs are absolute http or https ones).
    textureHosts: sql("SELECT DISTINCT substr(u, 1, instr(u || '/', '/') - 1) AS host FROM (SELECT substr(skin_url, instr(skin_url, '//') + 2) AS u FROM users WHERE skin_url IS NOT NULL UNION ALL SELECT substr(cape_url, instr(cape_url, '//') + 2) FROM users WHERE cape_url IS NOT NULL)"),
    deleteUser: sql('DELETE FROM users WHERE id = ?'),
    deleteTokens: sql('DELETE FROM tokens WHERE user_id = ?1 AND digest IS NOT ?2'),
    insertToken: sql('INSERT INTO tokens (digest, user_id, issued_at, expires_at, client) VALUES (?, ?, ?, ?, ?)'),
    hasClient: sql(
      `SELECT 1 FROM users JOIN tokens ON tokens.user_id = users.id
       WHERE users.name_key = ? AND tokens.client = ? AND tokens.expires_at > ? LIMIT 1`,
    ),
    pruneTokens: sql(
      `DELETE FROM tokens WHERE user_id = ?1 AND (expires_at <= ?2 OR rowid NOT IN (
         SELECT rowid FROM tokens WHERE user_id = ?1 AND expires_at > ?2 ORDER BY rowid DESC LIMIT ?3))`,
    ),
    // One statement checks the token and records the join, so a revocation cannot slip between.
    recordJoin: sql(
      `INSERT INTO joins (user_id, server_id, joined_at, ip)
       SELECT user_id, ?3, ?4, ?5 FROM tokens WHERE digest = ?1 AND user_id = ?2 AND expires_at > ?4
       ON CONFLICT (user_id) DO UPDATE SET server_id = excluded.server_id, joined_at = excluded.joined_at, ip = excluded.ip`,
    ),
    failures: sql('SELECT failures, last_at FROM login_failures WHERE name_key = ?'),
    setFailures: sql('INSERT OR REPLACE INTO login_failures (name_key, failures, last_at) VALUES (?, ?, ?)'),
    forgetFailures: sql('DELETE FROM login_failures WHERE last_at < ?'),
    findJoin: sql(
      `SELECT ${PLAYER_COLUMNS} FROM users INDEXED BY players_by_name JOIN joins ON joins.user_id = users.id
       WHERE users.name_key = ?1 AND joins.server_id = ?2 AND joins.joined_at > ?3 AND (?4 IS NULL OR joins.ip = ?4)`,
    ),
    byToken: sql(`SELECT ${USER_COLUMNS} FROM tokens JOIN users ON users.id = tokens.user_id WHERE tokens.digest = ? AND tokens.expires_at > ?`),
    deleteToken: sql('DELETE FROM tokens WHERE digest = ?'),
    addSecret: sql('INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING'),
    secret: sql('SELECT value FROM secrets WHERE name = ?'),
    liveInvite: sql('SELECT 1 FROM invites WHERE digest = ? AND uses_left > 0 AND expires_at > ?'),
    useInvite: sql('UPDATE invites SET uses_left = uses_left - 1 WHERE digest = ?'),
    insertInvite: sql('INSERT INTO invites (digest, uses_left, created_at, expires_at) VALUES (?, ?, ?, ?)'),
    pruneInvites: sql('DELETE FROM invites WHERE uses_left <= 0 OR expires_at <= ?'),
    invites: sql(
      `SELECT digest, uses_left AS usesLeft, created_at AS createdAt, expires_at AS expiresAt FROM invites
       WHERE uses_left > 0 AND expires_at > ? ORDER BY expires_at, digest`,
    ),
    deleteInvites: sql('DELETE FROM invites WHERE substr(digest, 1, length(?1)) = ?1'),
    setReset: sql('INSERT OR REPLACE INTO reset_codes (user_id, digest, expires_at) SELECT id, ?2, ?3 FROM users WHERE id = ?1'),
    useReset: sql('DELETE FROM reset_codes WHERE digest = ? AND expires_at > ? RETURNING user_id'),
    findReset: sql('SELECT user_id FROM reset_codes WHERE digest = ? AND expires_at > ?'),
    dropReset: sql('DELETE FROM reset_codes WHERE user_id = ?'),
  };

  /** Inside a transaction: a new player, unless the name (any case) or the id is taken. Hosted textures are set afterwards. */
  const insertUser = (user: User, invite?: { digest: string; now: number }): CreateResult => {
    const key = user.name.toLowerCase();
    if (q.byName.get(key)) return 'name_taken';
    if (invite && !q.liveInvite.get(invite.digest, invite.now)) return 'invite_invalid';
    const model = user.isAlex ? 1 : 0;
    const { changes } = q.insertUser.run(user.id, user.name, key, user.passwordHash, user.skinUrl, user.capeUrl, model, user.createdAt);
    if (changes !== 1) return 'id_taken';
    if (invite) q.useInvite.run(invite.digest);
    return 'created';
  };
  /** Inside a transaction: tokens (but `keep`) and the join go together, so no hasJoined succeeds after a revocation. */
  const endSessions = (id: string, keep: string | null = null): void => {
    q.deleteTokens.run(id, keep);
    q.deleteJoin.run(id);
  };

  return {
    countUsers: async () => Number((q.count.get() as { n: number }).n),
    listUsers: async (after = '', limit = -1) => q.list.all(after.toLowerCase(), limit).map((row) => toUser(row)!),
    endSessions: async (id) => transaction(db, () => endSessions(id)),
    findUserByName: async (name) => toUser(sharedRead(db, () => q.byName.get(name.toLowerCase()))),
    findUserById: async (id) => toUser(q.byId.get(id)),
    findPlayer: (id) => toPlayer(sharedRead(db, () => q.player.get(id))),
    findUsersByNames: (names) => {
      const keys = JSON.stringify(names.map((n) => n.toLowerCase()));
      return sharedRead(db, () => q.byNames.all(keys)).map((row) => toPlayer(row)!);
    },
    createUser: async (user, invite): Promise<CreateResult> => transaction(db, () => insertUser(user, invite)),
    async createUsers(users, commit) {
      return transaction(
        db,
        () => users.map((user) => insertUser(user)),
        (results) => commit === 'always' || (commit === 'unless-taken' && results.every((r) => r === 'created')),
      );
    },
    renameUser: async (id, name) => transaction(db, () => {
      const holder = toUser(q.byName.get(name.toLowerCase()));
      if (holder && holder.id !== id) return 'name_taken';
      return q.rename.run(name, name.toLowerCase(), id).changes === 1 ? 'renamed' : 'not_found';
    }),
    setPasswordHash: async (id, hash, end, keep, replacing) => transaction(db, () => {
      q.setHash.run(hash, id, replacing ?? null);
      if (!end) return;
      endSessions(id, keep);
      q.dropReset.run(id);
    }),
    setLock: async (id, lock) => transaction(db, () => {
      if (q.setLock.run(lock?.at ?? null, lock?.reason ?? null, id).changes === 0) return false;
      if (lock) endSessions(id);
      return true;
    }),
    setTextures: async (id, change) => transaction(db, () => {
      const before = toUser(q.byId.get(id));
      if (!before) return;
      if (change.upload) q.insertTexture.run(change.upload.hash, change.upload.png);
      if (change.skinUrl !== undefined || change.skinHash !== undefined) q.setSkin.run(change.skinUrl ?? null, change.skinHash ?? null, id);
      if (change.capeUrl !== undefined || change.capeHash !== undefined) q.setCape.run(change.capeUrl ?? null, change.capeHash ?? null, id);
      if (change.isAlex !== undefined) q.setModel.run(change.isAlex ? 1 : 0, id);
      for (const hash of [before.skinHash, before.capeHash]) if (hash !== null) q.dropTexture.run(hash);
    }),
    async findTexture(hash) {
      const row = q.texture.get(hash) as { png: Uint8Array } | undefined;
      return row && Buffer.from(row.png.buffer, row.png.byteOffset, row.png.byteLength);
    },
    countTextures: async () => Number((q.countTextures.get() as { n: number }).n),
    textureHosts: async () => (q.textureHosts.all() as { host: string }[]).map((row) => row.host),
    // Tokens and joins go with the user (ON DELETE CASCADE); textures no one wears, here.
    deleteUser: async (id) => transaction(db, () => {
      const before = toUser(q.byId.get(id));
      if (!before) return false;
      q.deleteUser.run(id);
      for (const hash of [before.skinHash, before.capeHash]) if (hash !== null) q.dropTexture.run(hash);
      return true;
    }),
    recordLogin: async (userId, verifiedHash, digest, now, expiresAt, maxLive, client) => transaction(db, () => {
      const user = toUser(q.byId.get(userId));
      if (!user || user.lockedAt !== null || user.passwordHash !== verifiedHash) return false;
      q.insertToken.run(digest, userId, now, expiresAt, client ?? null);
      q.pruneTokens.run(userId, now, maxLive);
      q.setLastLogin.run(now, userId);
      return true;
    }),
    recordJoin: (digest, userId, serverId, now, ip) =>
      transaction(db, () => q.recordJoin.run(digest, userId, serverId, now, ip ?? null).changes === 1),
    findJoin: (name, serverId, since, ip) => toPlayer(sharedRead(db, () => q.findJoin.get(name.toLowerCase(), serverId, since, ip ?? null))),
    findUserByToken: async (digest, now) => toUser(q.byToken.get(digest, now)),
    deleteToken: async (digest) => transaction(db, () => q.deleteToken.run(digest).changes === 1),
    keepSecret: async (name, value) => transaction(db, () => {
      if (value !== undefined) q.addSecret.run(name, value);
      return (q.secret.get(name) as { value: string } | undefined)?.value;
    }),
    hasClient: async (name, client, now) => q.hasClient.get(name.toLowerCase(), client, now) !== undefined,
    createInvite: async (invite) => transaction(db, () => {
      q.pruneInvites.run(invite.createdAt);
      q.insertInvite.run(invite.digest, invite.usesLeft, invite.createdAt, invite.expiresAt);
    }),
    listInvites: async (now) => q.invites.all(now).map((row) => ({ ...row }) as unknown as Invite),
    deleteInvites: async (prefix) => transaction(db, () => Number(q.deleteInvites.run(prefix).changes)),
    setResetCode: async (userId, digest, expiresAt) => transaction(db, () => q.setReset.run(userId, digest, expiresAt).changes === 1),
    findResetCode: async (digest, now) => (q.findReset.get(digest, now) as { user_id: string } | undefined)?.user_id,
    useResetCode: async (digest, now, hash) => transaction(db, () => {
      const row = q.useReset.get(digest, now) as { user_id: string } | undefined;
      if (!row) return undefined;
      q.setHash.run(hash, row.user_id);
      endSessions(row.user_id);
      return row.user_id;
    }),
    async updateLoginFailures(keys, forgetBefore, update) {
      // IMMEDIATE: the read and the write are one step for every process sharing the file.
      transaction(db, () => {
        const rows = keys.map((key) => q.failures.get(key) as { failures: number; last_at: number } | undefined);
        const none = () => ({ failures: 0, lastAt: 0 });
        const counts = rows.map((row) => (row && row.last_at >= forgetBefore ? { failures: row.failures, lastAt: row.last_at } : none()));
        update(counts).forEach((count, i) => count && q.setFailures.run(keys[i]!, count.failures, count.lastAt));
        q.forgetFailures.run(forgetBefore);
      });
    },
    async ping() {
      q.ping.get();
    },
    async backup(target) {
      // One read transaction: the copy is the database as of one moment, whatever others write meanwhile.
      endSharedRead(db);
      q.backup.run(target);
    },
    async close() {
      // A flag of our own: DatabaseSync.isOpen exists only from Node 22.15.
      if (closed) return;
      closed = true;
      endSharedRead(db);
      // Copies what the write-ahead log holds into the database file, without waiting for other
      // processes; when this is the last connection, closing it finishes the job and removes the log.
      try {
        db.exec('PRAGMA wal_checkpoint(PASSIVE)');
      } finally {
        db.close();
      }
    },
  };
}
