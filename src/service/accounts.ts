// Managing players: the rules the CLI (and any later admin interface) goes through.
import { randomUUID } from 'node:crypto';
import { hashPassword } from '../crypto/password.ts';
import type { TextureChange, User } from '../store/store.ts';
import { offlineUuid, parseUuid } from '../uuid.ts';
import { isPlayerName, requireNewName, requireNewPassword, requireUrl } from './checks.ts';
import type { Context } from './context.ts';
import { busy, invalid, notFound, ServiceError } from './errors.ts';

export interface NewUser {
  name: string;
  password: string;
  /** A UUID to give the player, dashed or not. */
  uuid?: string;
  /** Give the UUID an offline-mode server derives from the name. */
  offlineUuid?: boolean;
}

/** Hashes in a slot of the hash pool, like a login: 503 at once when the pool and its queue are full. */
async function hashInPool(ctx: Context, password: string): Promise<string> {
  const slot = ctx.pool.reserve();
  if (!slot) throw busy();
  try {
    await slot.ready;
    return await hashPassword(password);
  } finally {
    slot.release();
  }
}

export async function findUser(ctx: Context, name: string): Promise<User> {
  const user = isPlayerName(name) ? await ctx.store.findUserByName(name) : undefined;
  if (!user) throw notFound(`No player named "${name}"`);
  return user;
}

export async function addUser(ctx: Context, input: NewUser): Promise<User> {
  requireNewName(input.name);
  requireNewPassword(input.password);
  let id: string = randomUUID();
  if (input.offlineUuid) id = offlineUuid(input.name);
  if (input.uuid !== undefined) {
    const given = parseUuid(input.uuid);
    if (given === undefined) throw invalid(`Invalid UUID "${input.uuid}"`);
    id = given;
  }
  const user: User = { id, name: input.name, passwordHash: await hashInPool(ctx, input.password), skinUrl: null, capeUrl: null, isAlex: false };
  const created = await ctx.store.createUser(user);
  if (created === 'name_taken') throw new ServiceError('conflict', `The name "${input.name}" is taken`);
  if (created === 'id_taken') throw new ServiceError('conflict', `The UUID ${id} belongs to another player`);
  return user;
}

/** Sets a new password and ends every live token of the player: a changed password logs out everywhere. */
export async function changePassword(ctx: Context, name: string, password: string): Promise<User> {
  requireNewPassword(password);
  const user = await findUser(ctx, name);
  await ctx.store.setPasswordHash(user.id, await hashInPool(ctx, password), true);
  return user;
}

export async function removeUser(ctx: Context, name: string): Promise<User> {
  const user = await findUser(ctx, name);
  await ctx.store.deleteUser(user.id);
  return user;
}

export function listUsers(ctx: Context): Promise<User[]> {
  return ctx.store.listUsers();
}

/** Sets or clears (null) skin and cape URLs and the arm model. */
export async function setTextures(ctx: Context, name: string, change: TextureChange): Promise<User> {
  if (typeof change.skinUrl === 'string') requireUrl(change.skinUrl);
  if (typeof change.capeUrl === 'string') requireUrl(change.capeUrl);
  const user = await findUser(ctx, name);
  await ctx.store.setTextures(user.id, change);
  return { ...user, ...change };
}
