// Managing players: the rules the CLI and the admin API both go through.
import { randomUUID } from 'node:crypto';
import type { Standing } from '../crypto/hash-pool.ts';
import { hashPassword } from '../crypto/password.ts';
import type { TextureChange, User } from '../store/store.ts';
import { MAX_LOCK_REASON_CHARS } from '../limits.ts';
import { offlineUuid, parseUuid } from '../uuid.ts';
import { isPlayerName, requireNewName, requireNewPassword, requireUrl } from './checks.ts';
import type { Context } from './context.ts';
import { invalid, noPlace, notFound, quote, ServiceError } from './errors.ts';
import { digestToken } from '../crypto/token.ts';

export interface NewUser {
  name: string;
  /** The password, by the policy; or, instead, `hash`. */
  password?: string;
  /** A hash written by another system (admin API, import), kept until the first login. */
  hash?: string;
  /** A UUID to give the player, dashed or not. */
  uuid?: string;
  /** Give the UUID an offline-mode server derives from the name. */
  offlineUuid?: boolean;
  /** An invite code: one of its uses is taken with the creation, or nothing is created. */
  invite?: string;
}

/**
 * Runs `work` in a slot of the hash pool (for `address`, a direct caller's; of `standing`, for the
 * check of `name` whose turn it has: see HashPool.reserve): refused at once when there is no
 * place. `timed`: false for work that hashes nothing.
 */
export async function inPool<T>(
  ctx: Context,
  address: string | undefined,
  work: () => Promise<T>,
  { timed = true, standing, name }: { timed?: boolean; standing?: Standing; name?: string } = {},
): Promise<T> {
  const slot = ctx.pool.reserve(address, standing, name);
  if (typeof slot === 'string') throw noPlace(slot);
  try {
    const ready = await slot.ready;
    if (ready !== true) throw noPlace(ready);
    return await work();
  } finally {
    slot.release(timed);
  }
}

/** Hashes in a slot of the hash pool, like a login. */
export const hashInPool = (ctx: Context, password: string, address?: string): Promise<string> => inPool(ctx, address, () => hashPassword(password));

/** A player by name (any case) or by UUID (dashed or not). */
export async function findUser(ctx: Context, name: string): Promise<User> {
  const id = parseUuid(name);
  const user = id !== undefined ? await ctx.store.findUserById(id) : isPlayerName(name) ? await ctx.store.findUserByName(name) : undefined;
  if (!user) throw notFound(id !== undefined ? `No player with UUID ${id}` : `No player named ${quote(name)}`);
  return user;
}

/** The string to store for a foreign hash, or a refusal saying why it cannot be taken. */
export function foreignHash(ctx: Context, hash: string): string {
  const known = ctx.options.foreignHashes?.recognize(hash) ?? { problem: 'no foreign hash format is known here' };
  if ('problem' in known) throw invalid(`Field "hash": ${known.problem}`);
  return known.stored;
}

const nameTaken = (name: string): ServiceError => new ServiceError('conflict', `The name ${quote(name)} is taken`);
/** One message for an unknown, used, expired or revoked code: which it was is no one's business. */
const badInvite = (): ServiceError => new ServiceError('forbidden', 'This invite code is not valid');

export async function addUser(ctx: Context, input: NewUser): Promise<User> {
  requireNewName(input.name);
  const { hash, password = '' } = input;
  if (hash === undefined) requireNewPassword(password, ctx.options.minPasswordLength);
  const id = input.uuid !== undefined ? parseUuid(input.uuid) : input.offlineUuid ? offlineUuid(input.name) : randomUUID();
  if (id === undefined) throw invalid(`Invalid UUID ${quote(input.uuid!)}`);
  const invite = input.invite === undefined ? undefined : { digest: digestToken(input.invite), now: ctx.now() };
  // What is cheap first (a flood of sign-ups with taken names or guessed codes costs no hash);
  // createUser checks both again, atomically.
  if (await ctx.store.findUserByName(input.name)) throw nameTaken(input.name);
  if (invite && !(await ctx.store.listInvites(invite.now)).some((live) => live.digest === invite.digest)) throw badInvite();
  const passwordHash = hash === undefined ? await hashInPool(ctx, password) : foreignHash(ctx, hash);
  const user: User = {
    id,
    name: input.name,
    passwordHash,
    skinUrl: null,
    skinHash: null,
    capeUrl: null,
    capeHash: null,
    isAlex: false,
    createdAt: ctx.now(),
    lastLoginAt: null,
    lockedAt: null,
    lockReason: null,
  };
  const created = await ctx.store.createUser(user, invite);
  if (created === 'name_taken') throw nameTaken(input.name);
  if (created === 'invite_invalid') throw badInvite();
  if (created === 'id_taken') throw new ServiceError('conflict', `The UUID ${id} belongs to another player`);
  return user;
}

/** Sets a new password and ends every session of the player: a changed password logs out everywhere. */
export async function changePassword(ctx: Context, name: string, password: string): Promise<User> {
  requireNewPassword(password, ctx.options.minPasswordLength);
  const user = await findUser(ctx, name);
  await ctx.store.setPasswordHash(user.id, await hashInPool(ctx, password), true);
  return user;
}

export async function removeUser(ctx: Context, name: string): Promise<User> {
  const user = await findUser(ctx, name);
  await ctx.store.deleteUser(user.id);
  return user;
}

/** Players in name order; with `after`, those whose name comes after it; at most `limit`. */
export function listUsers(ctx: Context, after?: string, limit?: number): Promise<User[]> {
  return ctx.store.listUsers(after, limit);
}

/** Sets or clears (null) skin and cape URLs and the arm model. */
export async function setTextures(ctx: Context, name: string, change: TextureChange): Promise<User> {
  for (const url of [change.skinUrl, change.capeUrl]) if (typeof url === 'string') requireUrl(url, ctx.options.allowHttpTextures);
  const user = await findUser(ctx, name);
  await ctx.store.setTextures(user.id, change);
  return reread(ctx, user);
}

/** Ends every session of the player at once: tokens and join. */
export async function revokeSessions(ctx: Context, who: string): Promise<User> {
  const user = await findUser(ctx, who);
  await ctx.store.endSessions(user.id);
  return user;
}

/**
 * Locks the player: kept with everything they have, but no login, token or join works until
 * unlocked. Ends every session at once. `reason` is shown to the player at login.
 */
export async function lockUser(ctx: Context, who: string, reason?: string): Promise<User> {
  if (reason !== undefined) {
    if (!reason.isWellFormed() || /\p{Cc}/u.test(reason)) throw invalid('The reason must be text on one line');
    if ([...reason].length > MAX_LOCK_REASON_CHARS) throw invalid(`The reason must be at most ${MAX_LOCK_REASON_CHARS} characters`);
  }
  const user = await findUser(ctx, who);
  return reread(ctx, user, await ctx.store.setLock(user.id, { at: ctx.now(), reason: reason?.trim() || null }));
}

export async function unlockUser(ctx: Context, who: string): Promise<User> {
  const user = await findUser(ctx, who);
  return reread(ctx, user, await ctx.store.setLock(user.id, null));
}

/**
 * A new name for the player; the UUID and textures stay, and the old name is free. Every session
 * ends: a launcher keeps the name it logged in with, and would join under one no game server finds.
 */
export async function renameUser(ctx: Context, who: string, name: string): Promise<User> {
  requireNewName(name);
  const user = await findUser(ctx, who);
  const result = await ctx.store.renameUser(user.id, name);
  if (result === 'name_taken') throw nameTaken(name);
  if (result === 'renamed') await ctx.store.endSessions(user.id);
  return reread(ctx, user, result === 'renamed');
}

/** A player removed by another process between the look-up and the change. */
export const gone = (user: User): ServiceError => notFound(`No player named ${quote(user.name)}`);

/** The player as stored after a change; gone meanwhile, or not `found` by the change itself: not found. */
export async function reread(ctx: Context, user: User, found = true): Promise<User> {
  const now = found ? await ctx.store.findUserById(user.id) : undefined;
  if (!now) throw gone(user);
  return now;
}
