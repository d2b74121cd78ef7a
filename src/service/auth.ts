// /auth: a player name and password for a new access token; and what a player holding a token
// may do on their own (the account page): sign up, change the password.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Standing } from '../crypto/hash-pool.ts';
import { hashPassword, needsRehash, verifyPassword } from '../crypto/password.ts';
import { digestToken, issueToken } from '../crypto/token.ts';
import { MAX_TOKEN_CHARS, MAX_TOKENS_PER_USER } from '../limits.ts';
import type { User } from '../store/store.ts';
import { addUser, hashInPool, inPool, reread, type NewUser } from './accounts.ts';
import { requireNewPassword, requirePasswordSize, requirePlayerName } from './checks.ts';
import type { Context } from './context.ts';
import { noPlace, ServiceError } from './errors.ts';
import { textureFields, type TextureFields } from './textures.ts';
import { admitLoginAttempt, clearLoginFailures, deviceDigest, uncountLoginAttempt, UNNAMED_CLIENT, type LoginClient } from './throttle.ts';

export interface AuthResult extends TextureFields {
  username: string;
  userUUID: string;
  accessToken: string;
}

/** One message for an unknown login and a wrong password, so a caller cannot tell which logins exist. */
export const BAD_CREDENTIALS = 'Wrong login or password';

const callerGone = (): ServiceError => new ServiceError('busy', 'The caller left before its login was checked');
const locked = (reason: string | null): ServiceError => new ServiceError('forbidden', `This account is locked${reason ? `: ${reason}` : ''}`);

/** Each service's first timed check, while it is made (see firstTimedCheck). */
const firstChecks = new WeakMap<Context, Promise<string>>();

/**
 * Makes sure the pool has timed a check, for an unknown name to wait as long as one: when none
 * was yet (the first login of a process is an unknown name's), a hash of a random password with
 * today's parameters, in a slot of the pool, which times it as it times a check. Made once, when
 * first needed, not at every start; the unknown names that come meanwhile wait for the same one.
 */
function firstTimedCheck(ctx: Context): Promise<string> {
  let made = firstChecks.get(ctx);
  if (made === undefined) {
    made = inPool(ctx, undefined, () => hashPassword(randomUUID()));
    firstChecks.set(ctx, made);
    // Refused (a full pool): the next unknown name tries again.
    made.catch(() => firstChecks.delete(ctx));
  }
  return made;
}

/**
 * Checks a password against a stored hash: scrypt, or an imported player's foreign hash (a wrong
 * one is then answered at the failed-login floor like any other, so the format does not show).
 */
async function checkPassword(ctx: Context, password: string, stored: string): Promise<boolean> {
  const foreign = ctx.options.foreignHashes;
  return stored.startsWith('scrypt$') || !foreign ? verifyPassword(password, stored) : foreign.verify(password, stored);
}

export interface LoginOptions {
  /** The request field the name came in, for messages: `login`, or `username` (Yggdrasil's shape). */
  field?: string;
  /** Aborts when the caller is gone: a login still waiting for its hash slot then gives the slot up without hashing, and its attempt is taken back from the throttle's count. */
  callerLeft?: AbortSignal;
  /** Who is logging in, for the throttle and the hash pool's shares. */
  from?: LoginClient;
  /** Appended to the new token (see issueToken). */
  tokenTail?: string;
  /** Asked once the password is known right, before a token is issued: false refuses the login as a wrong password is refused. */
  admit?: () => Promise<boolean>;
}

/**
 * Checks `password` against `stored` in the hash pool, one check of a name at a time. An unknown
 * name (no `stored`) takes its place in the pool's line as a check does, so it waits as long as
 * the load of the moment makes a check wait (and a full pool refuses it alike); given its slot,
 * it leaves it at once, costing no one a slot's time, and waits as long as one of the recent
 * checks ran. So neither the time, at any load, nor the answer tells it from a wrong password,
 * and it costs no CPU (but for one hash a process, when it comes before any check: firstTimedCheck).
 */
async function checkInTurn(
  ctx: Context,
  name: string,
  password: string,
  stored: string | undefined,
  { address }: LoginClient,
  standing: Standing,
  callerLeft?: AbortSignal,
): Promise<boolean> {
  // No turn when NAME_QUEUE logins of the name wait already (or its place went to a more likely login): busy.
  const key = name.toLowerCase();
  const over = await ctx.pool.turn(key, standing);
  if (!over) throw noPlace('busy');
  try {
    const arrived = performance.now();
    if (stored === undefined && ctx.pool.recentCheckMs() === undefined) await firstTimedCheck(ctx);
    // What waiting for the first timed check took counts toward the check's time it waits.
    const waited = performance.now() - arrived;
    const matches = await inPool(
      ctx,
      address,
      async () => {
        // Asked here for known and unknown names alike, or the answer would tell them apart.
        if (callerLeft?.aborted) throw callerGone();
        return stored === undefined ? false : checkPassword(ctx, password, stored);
      },
      { timed: stored !== undefined, standing, name: key },
    );
    if (stored === undefined) await sleep(Math.max(0, ctx.pool.recentCheckMs()! - waited));
    return matches;
  } finally {
    over();
  }
}

/** A login attempt of `name` through the throttle: the player `find` gives, when `password` is theirs. */
async function attempt(
  ctx: Context,
  name: string,
  password: string,
  from: LoginClient,
  find: () => Promise<User | undefined>,
  callerLeft?: AbortSignal,
  admit?: () => Promise<boolean>,
): Promise<User | undefined> {
  const { standing, counted } = await admitLoginAttempt(ctx, name, password, from);
  const began = performance.now();
  let user: User | undefined;
  let matches: boolean;
  try {
    user = await find();
    matches = await checkInTurn(ctx, name, password, user?.passwordHash, from, standing, callerLeft);
  } catch (err) {
    // Never checked, so it reveals nothing: it must not count toward the throttle either, or a
    // launcher that times out and retries in a login flood would throttle its own player.
    await uncountLoginAttempt(ctx, name, counted);
    throw err;
  }
  // Held until the floor, off the pool and the name's turn: no hash format answers sooner than
  // another. A right password `admit` refuses is answered, held and counted as a wrong one: its
  // time and the throttle's later answers do not tell it was right.
  if (!matches || (admit && !(await admit()))) {
    await sleep(Math.max(0, ctx.options.failedLoginFloorMs - (performance.now() - began)));
    return undefined;
  }
  await clearLoginFailures(ctx, name, counted);
  return user;
}

/** Checks the password and issues a token. */
export async function login(ctx: Context, name: string, password: string, options: LoginOptions = {}): Promise<AuthResult> {
  const { field = 'login', callerLeft, from = UNNAMED_CLIENT, tokenTail, admit } = options;
  // Over a limit: refused before any work, and not counted as a failed login.
  requirePlayerName(field, name);
  requirePasswordSize(password);
  const user = await attempt(ctx, name, password, from, () => ctx.store.findUserByName(name), callerLeft, admit);
  if (!user) throw new ServiceError('unauthorized', BAD_CREDENTIALS);
  // Only after the password: to a guesser a locked account looks like any other.
  if (user.lockedAt !== null) throw locked(user.lockReason);

  const session = await startSession(ctx, user, from, tokenTail);
  // Only while the hash is still the one checked: a password changed meanwhile stays. The login
  // has succeeded: a rehash a busy database cannot take now waits for the next login, rather than
  // answer 503 for a token already issued (a retry would then race this write).
  if (needsRehash(user.passwordHash)) {
    await ctx.store.setPasswordHash(user.id, await hashPassword(password), false, undefined, user.passwordHash).catch((err: unknown) => {
      if (!(err instanceof ServiceError && err.kind === 'busy')) throw err;
    });
  }
  return session;
}

/**
 * Issues a token to the player whose hash was just checked, kept with who it went to. Refused when
 * a lock, a removal or a password change landed meanwhile: the change wins, and the login is
 * answered as it would be now.
 */
async function startSession(ctx: Context, user: User, to?: LoginClient, tail?: string): Promise<AuthResult> {
  const { token, digest } = issueToken(tail);
  const now = ctx.now();
  const expiresAt = now + ctx.options.tokenTtlSeconds * 1000;
  const client = deviceDigest(to?.issueTo ?? to?.device);
  if (!(await ctx.store.recordLogin(user.id, user.passwordHash, digest, now, expiresAt, MAX_TOKENS_PER_USER, client))) {
    const after = await ctx.store.findUserById(user.id);
    throw after?.lockedAt != null ? locked(after.lockReason) : new ServiceError('unauthorized', BAD_CREDENTIALS);
  }
  const textures = textureFields(user, ctx.options.variant, ctx.options.hostedBase);
  return { username: user.name, userUUID: user.id, accessToken: token, ...textures };
}

/** Creates the player (by the same rules as addUser) and logs them in. */
export async function register(ctx: Context, input: NewUser): Promise<AuthResult> {
  return startSession(ctx, await addUser(ctx, input));
}

/**
 * A new token for the player of a live one, which ends (Yggdrasil's refresh): `to` names its
 * client as a login's would. Undefined, and nothing changed, when `token` is not live.
 */
export async function replaceToken(ctx: Context, token: string, to: LoginClient, tail?: string): Promise<AuthResult | undefined> {
  const user = await userByToken(ctx, token);
  if (!user) return undefined;
  // The new one stored first, so that a refresh that fails leaves the old one. Of two replacing
  // one token at once, the one that ends it keeps its new token; the other ends its own.
  const session = await startSession(ctx, user, to, tail);
  if (await ctx.store.deleteToken(digestToken(token))) return session;
  await ctx.store.deleteToken(digestToken(session.accessToken));
  return undefined;
}

/** The player a live access token belongs to; none for a locked player, whose tokens count for nothing. */
export async function userByToken(ctx: Context, token: string): Promise<User | undefined> {
  const user = token.length > MAX_TOKEN_CHARS ? undefined : await ctx.store.findUserByToken(digestToken(token), ctx.now());
  return user?.lockedAt === null ? user : undefined;
}

/**
 * A new password from a player who proves the current one. The proof is a login attempt: it
 * goes through the throttle and the hash pool, and a wrong one counts as a failed login of the
 * name. Every other session and the join end; the token `keep` stays.
 */
export async function changeOwnPassword(
  ctx: Context,
  user: User,
  keep: string,
  current: string,
  password: string,
  from = UNNAMED_CLIENT,
): Promise<User> {
  requirePasswordSize(current, 'current');
  requireNewPassword(password, ctx.options.minPasswordLength);
  if (!(await attempt(ctx, user.name, current, from, async () => user))) {
    throw new ServiceError('unauthorized', 'The current password is wrong');
  }
  await ctx.store.setPasswordHash(user.id, await hashInPool(ctx, password, from.address), true, digestToken(keep));
  return reread(ctx, user);
}
