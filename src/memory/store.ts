// The in-memory store (`--db :memory:`): for tests and trials; everything is gone on exit.
import type { CreateResult, Invite, Store, TextureChange, User } from '../store/store.ts';

/** The --db value that chooses it. */
export const MEMORY_DB = ':memory:';

export function createMemoryStore(): Store {
  const users = new Map<string, User>(); // by id
  const idByName = new Map<string, string>(); // lower-case name -> id
  const tokens = new Map<string, { userId: string; expiresAt: number; client?: string }>(); // by digest, in the order stored
  const joins = new Map<string, { serverId: string; at: number; ip?: string }>(); // by user id
  const failures = new Map<string, { failures: number; lastAt: number }>(); // by the service's keys, in order of the last failure
  const textures = new Map<string, Buffer>(); // by hash
  const invites = new Map<string, Invite>(); // by digest
  const resets = new Map<string, { digest: string; expiresAt: number }>(); // by user id
  const secrets = new Map<string, string>(); // by name
  const worn = (hash: string): boolean => [...users.values()].some((u) => u.skinHash === hash || u.capeHash === hash);
  const dropUnworn = (hashes: (string | null)[]): void => {
    for (const hash of hashes) if (hash !== null && !worn(hash)) textures.delete(hash);
  };

  const liveReset = (digest: string, now: number): string | undefined => [...resets].find(([, r]) => r.digest === digest && r.expiresAt > now)?.[0];
  const copy = (u: User | undefined): User | undefined => (u ? { ...u } : undefined);
  // A Player is fields of a User: the whole copy serves as one.
  const findUserById = async (id: string): Promise<User | undefined> => copy(users.get(id));
  const byName = (name: string): User | undefined => {
    const id = idByName.get(name.toLowerCase());
    return id === undefined ? undefined : users.get(id);
  };
  const endSessions = (id: string, keep?: string): void => {
    for (const [digest, t] of tokens) if (t.userId === id && digest !== keep) tokens.delete(digest);
    joins.delete(id);
  };
  /** A new player, unless the name (any case) or the id is taken. Hosted textures are set afterwards. */
  const insertUser = (user: User, invite?: { digest: string; now: number }): CreateResult => {
    if (idByName.has(user.name.toLowerCase())) return 'name_taken';
    const used = invite && invites.get(invite.digest);
    if (invite && !(used && used.usesLeft > 0 && used.expiresAt > invite.now)) return 'invite_invalid';
    if (users.has(user.id)) return 'id_taken';
    if (used) used.usesLeft--;
    users.set(user.id, { ...user, skinHash: null, capeHash: null, lastLoginAt: null, lockedAt: null, lockReason: null });
    idByName.set(user.name.toLowerCase(), user.id);
    return 'created';
  };

  return {
    countUsers: async () => users.size,
    listUsers: async (after = '', limit = Infinity) =>
      [...users.values()]
        .filter((u) => u.name.toLowerCase() > after.toLowerCase())
        .sort((a, b) => (a.name.toLowerCase() < b.name.toLowerCase() ? -1 : 1))
        .slice(0, limit)
        .map((u) => ({ ...u })),
    endSessions: async (id) => endSessions(id),
    findUserByName: async (name) => copy(byName(name)),
    findUserById,
    findPlayer: findUserById,
    // byName gives one object a player, so the Set keeps each once.
    findUsersByNames: async (names) => [...new Set(names.map(byName))].flatMap((u) => (u ? [{ ...u }] : [])),
    createUser: async (user, invite): Promise<CreateResult> => insertUser(user, invite),
    async createUsers(list, commit) {
      const results = list.map((user) => insertUser(user));
      if (commit === 'always' || (commit === 'unless-taken' && results.every((r) => r === 'created'))) return results;
      results.forEach((r, i) => r === 'created' && (users.delete(list[i]!.id), idByName.delete(list[i]!.name.toLowerCase())));
      return results;
    },
    async renameUser(id, name) {
      const u = users.get(id);
      const holder = idByName.get(name.toLowerCase());
      if (holder !== undefined && holder !== id) return 'name_taken';
      if (!u) return 'not_found';
      idByName.delete(u.name.toLowerCase());
      idByName.set(name.toLowerCase(), id);
      u.name = name;
      return 'renamed';
    },
    async setPasswordHash(id, hash, end, keep, replacing) {
      const u = users.get(id);
      if (!u || (replacing !== undefined && u.passwordHash !== replacing)) return;
      u.passwordHash = hash;
      if (!end) return;
      endSessions(id, keep);
      resets.delete(id);
    },
    async setLock(id, lock) {
      const u = users.get(id);
      if (!u) return false;
      u.lockedAt = lock ? (u.lockedAt ?? lock.at) : null;
      u.lockReason = lock?.reason ?? null;
      if (lock) endSessions(id);
      return true;
    },
    async setTextures(id, change: TextureChange) {
      const u = users.get(id);
      if (!u) return;
      const before = [u.skinHash, u.capeHash];
      if (change.upload && !textures.has(change.upload.hash)) textures.set(change.upload.hash, Buffer.from(change.upload.png));
      if (change.skinUrl !== undefined || change.skinHash !== undefined) Object.assign(u, { skinUrl: change.skinUrl ?? null, skinHash: change.skinHash ?? null });
      if (change.capeUrl !== undefined || change.capeHash !== undefined) Object.assign(u, { capeUrl: change.capeUrl ?? null, capeHash: change.capeHash ?? null });
      if (change.isAlex !== undefined) u.isAlex = change.isAlex;
      dropUnworn(before);
    },
    async findTexture(hash) {
      const png = textures.get(hash);
      return png && Buffer.from(png);
    },
    countTextures: async () => textures.size,
    async textureHosts() {
      const urls = [...users.values()].flatMap((u) => [u.skinUrl, u.capeUrl]).filter((url) => url !== null);
      return [...new Set(urls.map((url) => /\/\/([^/]*)/.exec(url)?.[1] ?? ''))];
    },
    async deleteUser(id) {
      const u = users.get(id);
      if (!u) return false;
      users.delete(id);
      dropUnworn([u.skinHash, u.capeHash]);
      idByName.delete(u.name.toLowerCase());
      resets.delete(id);
      endSessions(id);
      return true;
    },
    async recordLogin(userId, verifiedHash, digest, now, expiresAt, maxLive, client) {
      const u = users.get(userId);
      if (!u || u.lockedAt !== null || u.passwordHash !== verifiedHash) return false;
      u.lastLoginAt = now;
      tokens.set(digest, { userId, expiresAt, client });
      // A Map keeps the order of storing: newest last, whatever the clocks said.
      const live = [...tokens].filter(([, t]) => t.userId === userId && t.expiresAt > now).map(([d]) => d);
      const keep = new Set(live.reverse().slice(0, maxLive));
      for (const [d, t] of tokens) if (t.userId === userId && !keep.has(d)) tokens.delete(d);
      return true;
    },
    async recordJoin(digest, userId, serverId, now, ip) {
      const t = tokens.get(digest);
      if (!t || t.userId !== userId || t.expiresAt <= now) return false;
      joins.set(userId, { serverId, at: now, ip });
      return true;
    },
    async findJoin(name, serverId, since, ip) {
      const u = byName(name);
      const j = u && joins.get(u.id);
      return j && j.serverId === serverId && j.at > since && (ip === undefined || j.ip === ip) ? copy(u) : undefined;
    },
    async hasClient(name, client, now) {
      const user = byName(name);
      return user !== undefined && [...tokens.values()].some((t) => t.userId === user.id && t.client === client && t.expiresAt > now);
    },
    async findUserByToken(digest, now) {
      const t = tokens.get(digest);
      return t && t.expiresAt > now ? copy(users.get(t.userId)) : undefined;
    },
    deleteToken: async (digest) => tokens.delete(digest),
    async keepSecret(name, value) {
      if (value !== undefined && !secrets.has(name)) secrets.set(name, value);
      return secrets.get(name);
    },
    async createInvite(invite) {
      for (const [d, i] of invites) if (i.usesLeft <= 0 || i.expiresAt <= invite.createdAt) invites.delete(d);
      invites.set(invite.digest, { ...invite });
    },
    listInvites: async (now) =>
      [...invites.values()]
        .filter((i) => i.usesLeft > 0 && i.expiresAt > now)
        .sort((a, b) => a.expiresAt - b.expiresAt || (a.digest < b.digest ? -1 : 1))
        .map((i) => ({ ...i })),
    async deleteInvites(prefix) {
      const gone = [...invites.keys()].filter((d) => d.startsWith(prefix));
      for (const d of gone) invites.delete(d);
      return gone.length;
    },
    async setResetCode(userId, digest, expiresAt) {
      if (!users.has(userId)) return false;
      resets.set(userId, { digest, expiresAt });
      return true;
    },
    findResetCode: async (digest, now) => liveReset(digest, now),
    async useResetCode(digest, now, hash) {
      const id = liveReset(digest, now);
      if (id === undefined) return undefined;
      resets.delete(id);
      users.get(id)!.passwordHash = hash;
      endSessions(id);
      return id;
    },
    async updateLoginFailures(keys, forgetBefore, update) {
      const counts = keys.map((key) => failures.get(key)).map((row) => (row && row.lastAt >= forgetBefore ? { ...row } : { failures: 0, lastAt: 0 }));
      update(counts).forEach((count, i) => {
        if (!count) return;
        // A new failure goes to the end, so the map stays in order of the last failure and the sweep
        // stops at the first live one; a count taken back keeps its place, a cleared one goes.
        if (count.lastAt > (failures.get(keys[i]!)?.lastAt ?? 0) || count.lastAt < forgetBefore) failures.delete(keys[i]!);
        if (count.lastAt >= forgetBefore) failures.set(keys[i]!, { ...count });
      });
      for (const [key, f] of failures) {
        if (f.lastAt >= forgetBefore) break;
        failures.delete(key);
      }
    },
    async ping() {},
    async backup() {
      throw new Error('an in-memory store has no file to copy');
    },
    async close() {},
  };
}
