// /join and /hasJoined: the client's join of a game server, and the game server's check of it.
import { digestToken } from '../crypto/token.ts';
import { parseUuid } from '../uuid.ts';
import type { Context } from './context.ts';
import { invalid, notFound } from './errors.ts';
import { textureFields, type TextureFields } from './textures.ts';

export interface HasJoinedResult extends TextureFields {
  userUUID: string;
}

/** A malformed userUUID is a malformed request; every other call gets a `true` or `false`. */
export function requireUuid(text: string): string {
  const id = parseUuid(text);
  if (id === undefined) throw invalid('Field "userUUID" is not a valid UUID');
  return id;
}

function requireServerId(serverId: string): void {
  if (serverId === '') throw invalid('Field "serverID" must not be empty');
}

/**
 * Records the join when the token is live and belongs to the player. An unknown, expired or
 * foreign token is `false`, not an error: the LauncherServer turns an error envelope from /join
 * into a server error instead of "Invalid credentials".
 */
export async function join(ctx: Context, accessToken: string, userUUID: string, serverId: string): Promise<boolean> {
  const id = requireUuid(userUUID);
  requireServerId(serverId);
  return ctx.store.recordJoin(digestToken(accessToken), id, serverId, ctx.now());
}

export async function hasJoined(ctx: Context, username: string, serverId: string): Promise<HasJoinedResult> {
  requireServerId(serverId);
  const since = ctx.now() - ctx.options.joinTtlSeconds * 1000;
  const user = await ctx.store.findJoin(username, serverId, since);
  if (!user) throw notFound('Player has not joined this server');
  return { userUUID: user.id, ...textureFields(user, ctx.options.variant) };
}
