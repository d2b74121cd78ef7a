// /profile and /profiles: public look-ups by UUID and by name.
import { isPlayerName, requireUuid } from './checks.ts';
import type { Context } from './context.ts';
import { notFound } from './errors.ts';
import { textureFields, type TextureFields } from './textures.ts';
import { then, type Answer, type Player } from '../store/store.ts';

export type ProfileResult = TextureFields & { username: string };

export type ProfilesEntry = Pick<Player, 'id' | 'name'>;

export function profile(ctx: Context, userUUID: string): Answer<ProfileResult> {
  return then(ctx.store.findPlayer(requireUuid(userUUID)), (user) => {
    if (!user) throw notFound('No player with this UUID');
    return { username: user.name, ...textureFields(user, ctx.options.variant, ctx.options.hostedBase) };
  });
}

/** What /profiles found, and how many of the entries sent were not looked up. */
export type ProfilesResult = { found: ProfilesEntry[]; ignored: number };

/**
 * Names to id/name pairs, in the order asked, each player once. Nothing sent is refused: a
 * LauncherServer's bulk look-up does not catch a refusal, and one ends its process. So only the
 * first maxProfiles entries are looked up, and an entry that is not a valid name (a number, a
 * name breaking the naming rule) is not found, as an unknown name is.
 */
export function profiles(ctx: Context, names: readonly unknown[]): Answer<ProfilesResult> {
  const valid = names.slice(0, ctx.options.maxProfiles).filter((n) => typeof n === 'string' && isPlayerName(n)) as string[];
  const wanted = [...new Set(valid.map((n) => n.toLowerCase()))];
  return then(wanted.length === 0 ? [] : ctx.store.findUsersByNames(wanted), (users) => {
    const byKey = new Map(users.map((u) => [u.name.toLowerCase(), u]));
    const found = wanted.flatMap((key) => byKey.get(key) ?? []).map(({ id, name }) => ({ id, name }));
    return { found, ignored: names.length - valid.length };
  });
}
