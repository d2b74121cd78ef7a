// /join and /hasJoined: the client's join of a game server, and the game server's check of it.
import { digestToken } from '../crypto/token.ts';
import { requirePlayerName, requireServerId, requireTokenSize, requireUuid } from './checks.ts';
import type { Context } from './context.ts';
import { notFound } from './errors.ts';
import { textureFields, type TextureFields } from './textures.ts';
import { then, type Answer, type Player } from '../store/store.ts';

export type HasJoinedResult = TextureFields & { userUUID: string };

/**
 * Records the join when the token is live and belongs to the player: `false` for an unknown,
 * expired or foreign token. A malformed field is refused (the HTTP layer answers that in-band too).
 */
export function join(ctx: Context, accessToken: string, userUUID: string, serverId: string, ip?: string): Answer<boolean> {
  const id = requireUuid(userUUID);
  requireTokenSize(accessToken);
  requireServerId(serverId);
  return ctx.store.recordJoin(digestToken(accessToken), id, serverId, ctx.now(), ip);
}

/** The player who joined `serverId` within --join-ttl (with `ip`, from that address). */
export function joinedPlayer(ctx: Context, username: string, serverId: string, ip?: string): Answer<Player> {
  requirePlayerName('username', username);
  requireServerId(serverId);
  return then(ctx.store.findJoin(username, serverId, ctx.now() - ctx.options.joinTtlSeconds * 1000, ip), (user) => {
    if (!user) throw notFound('Player has not joined this server');
    return user;
  });
}

export function hasJoined(ctx: Context, username: string, serverId: string): Answer<HasJoinedResult> {
  return then(joinedPlayer(ctx, username, serverId), (user) => ({ userUUID: user.id, ...textureFields(user, ctx.options.variant, ctx.options.hostedBase) }));
}
