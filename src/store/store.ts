// The store: what the service needs to keep, and nothing of its rules. Methods are asynchronous
// (the look-ups of the five endpoints may answer at once: see Answer) and every expiry is decided
// from stored timestamps (milliseconds since the epoch) passed in by the caller, so a networked
// database could implement this interface as well.

/**
 * What a look-up of the five endpoints gives: the value at once (SQLite reads in the same turn)
 * or a promise of it (a database across the network). A request that needs no promise makes none.
 */
export type Answer<T> = T | Promise<T>;

/** `next` of an answer: at once for a value, after it for a promise. */
export function then<T, R>(answer: Answer<T>, next: (value: T) => R): Answer<R> {
  return answer instanceof Promise ? (answer.then(next) as Promise<R>) : next(answer);
}

export interface User {
  /** Dashed lower-case UUID. */
  id: string;
  /** The name as registered. */
  name: string;
  passwordHash: string;
  /** An external skin's address; at most one of skinUrl and skinHash is set. */
  skinUrl: string | null;
  /** A hosted skin: the SHA-256 (lower-case hex) of its PNG in the store. */
  skinHash: string | null;
  capeUrl: string | null;
  capeHash: string | null;
  /** Slim (thin-arm) skin model. */
  isAlex: boolean;
  /** When the player was created (ms since the epoch). */
  createdAt: number;
  /** The last successful login; null: never. */
  lastLoginAt: number | null;
  /** When the player was locked; null: not locked. A locked player cannot log in or join. */
  lockedAt: number | null;
  /** Why, as the admin said it; shown to the player at login. */
  lockReason: string | null;
}

/** What the public look-ups answer with, and all they read. */
export type Player = Pick<User, 'id' | 'name' | 'skinUrl' | 'skinHash' | 'capeUrl' | 'capeHash' | 'isAlex'>;

/**
 * A change of a player's textures. Naming either field of a kind (skinUrl or skinHash) replaces
 * that kind whole: `{ skinUrl: null }` leaves no skin, `{ skinHash }` a hosted one only.
 * `upload` is the PNG of a hash named here, stored when the store does not have it yet.
 */
export type TextureChange = Partial<Pick<User, 'skinUrl' | 'skinHash' | 'capeUrl' | 'capeHash' | 'isAlex'>> & {
  upload?: { hash: string; png: Buffer };
};

export type CreateResult = 'created' | 'name_taken' | 'id_taken' | 'invite_invalid';

/** Failed logins counted under one key: how many in a row, and when the last was. */
export type LoginFailures = { failures: number; lastAt: number };

/** An invitation to register, kept only as the SHA-256 digest (lower-case hex) of its code. */
export interface Invite {
  digest: string;
  /** Registrations it may still make. */
  usesLeft: number;
  createdAt: number;
  expiresAt: number;
}

export interface Store {
  countUsers(): Promise<number>;
  /** In order of lower-case name; only names after `after` (any case); at most `limit`. */
  listUsers(after?: string, limit?: number): Promise<User[]>;
  /** Case-insensitive. */
  findUserByName(name: string): Promise<User | undefined>;
  findUserById(id: string): Promise<User | undefined>;
  /** The public fields of the player with this id (what /profile answers with). */
  findPlayer(id: string): Answer<Player | undefined>;
  /** Case-insensitive; players in no particular order, each once. */
  findUsersByNames(names: string[]): Answer<Player[]>;
  /**
   * Stores a new player; lastLoginAt and the lock start empty, hosted textures are set afterwards.
   * With `invite`, takes one use of that invite, live at `now`, in the same transaction; without
   * one left, creates nothing ('invite_invalid'), so one use cannot make two players.
   */
  createUser(user: User, invite?: { digest: string; now: number }): Promise<CreateResult>;
  /**
   * Stores many new players (an import) in one transaction, each as createUser would, with its
   * external texture URLs; one whose name (any case) or id is taken, also by one earlier in the
   * list, is left out. Kept when `commit` is 'always', or 'unless-taken' and none was left out;
   * otherwise nothing is written (a dry run). One result a player, in order.
   */
  createUsers(users: User[], commit: 'always' | 'unless-taken' | 'never'): Promise<CreateResult[]>;
  /** Gives the player another name (unique in any case); id, textures, tokens and join stay (the service then ends the sessions). */
  renameUser(id: string, name: string): Promise<'renamed' | 'name_taken' | 'not_found'>;
  /**
   * Replaces the hash; with `endSessions`, also ends every session (tokens and join) of the user
   * but the token `keepToken` (a digest), and voids its reset code, atomically. With `replacing`,
   * only while the stored hash is still that one (a login's rehash must not undo a password
   * changed meanwhile).
   */
  setPasswordHash(id: string, hash: string, endSessions: boolean, keepToken?: string, replacing?: string): Promise<void>;
  /** Locks (ending every session, atomically; a lock in place keeps its time, the reason is replaced) or, with null, unlocks the user. False when there is none. */
  setLock(id: string, lock: { at: number; reason: string | null } | null): Promise<boolean>;
  /** Applies the change; a hosted texture no player uses any more is deleted in the same transaction. */
  setTextures(id: string, change: TextureChange): Promise<void>;
  /** The PNG of a hosted texture. */
  findTexture(hash: string): Promise<Buffer | undefined>;
  countTextures(): Promise<number>;
  /** The host (and port, if any) of every skin and cape kept on another site (the URLs an admin set), each once. */
  textureHosts(): Promise<string[]>;
  /** Ends every session of the user: its tokens and its join, atomically. */
  endSessions(id: string): Promise<void>;
  /** Deletes the user with its tokens and join (and textures no one else uses). False when there was none. */
  deleteUser(id: string): Promise<boolean>;

  /**
   * A successful login: stores a token digest and the time of the login; then drops the user's
   * expired tokens and all but the `maxLive` most recently stored (by order of storing, not by
   * clock, so the new one always stays), in the same transaction. False, and nothing written,
   * when the user is locked or gone, or its hash is no longer `verifiedHash` (a lock, removal
   * or password change may land while the password is being checked). `client`: a digest of
   * who logged in (see hasClient), kept with the token.
   */
  recordLogin(
    userId: string,
    verifiedHash: string,
    digest: string,
    now: number,
    expiresAt: number,
    maxLive: number,
    client?: string,
  ): Promise<boolean>;
  /** Whether the user named `name` (any case) holds a token issued to `client` that expires after `now`. */
  hasClient(name: string, client: string, now: number): Promise<boolean>;
  /**
   * Records a join (replacing the user's previous one) when the token `digest` belongs to
   * `userId` and expires after `now`; false, and nothing written, otherwise. `ip`: the address
   * the join came from, when the caller knows the player's own.
   */
  recordJoin(digest: string, userId: string, serverId: string, now: number, ip?: string): Answer<boolean>;
  /**
   * The user named `name` (any case) whose latest join is to `serverId` and later than `since`;
   * with `ip`, only a join recorded from that address.
   */
  findJoin(name: string, serverId: string, since: number, ip?: string): Answer<Player | undefined>;
  /** The user whose token `digest` expires after `now`. */
  findUserByToken(digest: string, now: number): Promise<User | undefined>;
  /** Deletes the token `digest`; false when there was none. */
  deleteToken(digest: string): Promise<boolean>;
  /**
   * The secret stored under `name` (a signing key a capability keeps), if any. With `value`, when
   * there is none yet, stores it first: every process offering one at once gets the same back.
   */
  keepSecret(name: string, value?: string): Promise<string | undefined>;

  /** Stores an invite; drops the ones used up or expired by its `createdAt`. */
  createInvite(invite: Invite): Promise<void>;
  /** Invites with uses left that expire after `now`, the soonest first. */
  listInvites(now: number): Promise<Invite[]>;
  /** Deletes the invites whose digest starts with `prefix` (not empty); how many there were. */
  deleteInvites(prefix: string): Promise<number>;
  /** Gives the user a reset code (its digest), replacing any earlier one: one live code a player. False when there is no such user. */
  setResetCode(userId: string, digest: string, expiresAt: number): Promise<boolean>;
  /** The id of the user whose reset code `digest` is live at `now`; nothing is changed. */
  findResetCode(digest: string, now: number): Promise<string | undefined>;
  /**
   * With the reset code `digest`, live at `now`: voids it, sets the hash and ends every session
   * of its user, atomically, and returns the user's id; undefined, and nothing written, without one.
   */
  useResetCode(digest: string, now: number, hash: string): Promise<string | undefined>;

  /**
   * One atomic step over the failure counts under `keys` (what they name is the service's
   * business): reads each (without a row, or with its last failure before `forgetBefore`: 0 and
   * 0), stores what `update` returns for it (undefined: left as it is), and drops the rows quiet
   * since `forgetBefore`.
   */
  updateLoginFailures(keys: string[], forgetBefore: number, update: (counts: LoginFailures[]) => (LoginFailures | undefined)[]): Promise<void>;

  /** Reads from the database, throwing when it cannot: whether the store works right now. */
  ping(): Promise<void>;
  /** Writes a consistent copy of the whole database, taken while others may write, to a new file at `path`. */
  backup(path: string): Promise<void>;

  close(): Promise<void>;
}
