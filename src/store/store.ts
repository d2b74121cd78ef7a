// The store: what the service needs to keep, and nothing of its rules. Methods are asynchronous
// and every expiry is decided from stored timestamps (milliseconds since the epoch) passed in by
// the caller, so a networked database could implement this interface as well.

export interface User {
  /** Dashed lower-case UUID. */
  id: string;
  /** The name as registered. */
  name: string;
  passwordHash: string;
  skinUrl: string | null;
  capeUrl: string | null;
  /** Slim (thin-arm) skin model. */
  isAlex: boolean;
}

export type TextureChange = Partial<Pick<User, 'skinUrl' | 'capeUrl' | 'isAlex'>>;

export type CreateResult = 'created' | 'name_taken' | 'id_taken';

/** Failed logins of one name: how many in a row, and when the last was. */
export interface LoginFailures {
  failures: number;
  lastAt: number;
}

export interface Store {
  countUsers(): Promise<number>;
  listUsers(): Promise<User[]>;
  /** Case-insensitive. */
  findUserByName(name: string): Promise<User | undefined>;
  findUserById(id: string): Promise<User | undefined>;
  /** Case-insensitive; users in no particular order, each once. */
  findUsersByNames(names: string[]): Promise<User[]>;
  createUser(user: User): Promise<CreateResult>;
  /** Replaces the hash; with `endSessions`, also deletes every token of the user, atomically. */
  setPasswordHash(id: string, hash: string, endSessions: boolean): Promise<void>;
  setTextures(id: string, change: TextureChange): Promise<void>;
  /** Deletes the user with its tokens and join. False when there was none. */
  deleteUser(id: string): Promise<boolean>;

  /**
   * Stores a token digest; then drops the user's expired tokens and all but the `maxLive` most
   * recently stored (by order of storing, not by clock, so the new one always stays), in the same
   * transaction.
   */
  addToken(userId: string, digest: string, now: number, expiresAt: number, maxLive: number): Promise<void>;
  /**
   * Records a join (replacing the user's previous one) when the token `digest` belongs to
   * `userId` and expires after `now`; false, and nothing written, otherwise.
   */
  recordJoin(digest: string, userId: string, serverId: string, now: number): Promise<boolean>;
  /** The user named `name` (any case) whose latest join is to `serverId` and later than `since`. */
  findJoin(name: string, serverId: string, since: number): Promise<User | undefined>;

  /**
   * One atomic step for a login attempt of `name` (any case). Reads its failures (none: 0 and
   * lastAt 0; a last failure before `forgetBefore` counts as none). When `throttledUntil` of them
   * is after `now`, returns that time and changes nothing. Otherwise counts the attempt as one
   * more failure at `now`, drops other names quiet since `forgetBefore`, and returns 0.
   */
  beginLoginAttempt(name: string, now: number, forgetBefore: number, throttledUntil: (f: LoginFailures) => number): Promise<number>;
  /** Forgets the failures of `name`: its login succeeded. */
  clearLoginFailures(name: string): Promise<void>;

  close(): Promise<void>;
}
