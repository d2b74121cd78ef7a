// /profile and /profiles: public look-ups by UUID and by name.
import { isPlayerName, requireUuid } from './checks.ts';
import type { Context } from './context.ts';
import { invalid, notFound } from './errors.ts';
import { textureFields, type TextureFields } from './textures.ts';

export interface ProfileResult extends TextureFields {
  username: string;
}

export interface ProfilesEntry {
  id: string;
  name: string;
}

export async function profile(ctx: Context, userUUID: string): Promise<ProfileResult> {
  const user = await ctx.store.findPlayer(requireUuid(userUUID));
  if (!user) throw notFound('No player with this UUID');
  return { username: user.name, ...textureFields(user, ctx.options.variant, ctx.options.hostedBase) };
}

/**
 * Names to id/name pairs, in the order asked, each player once. The limit counts the names as
 * sent; names that break the naming rule cannot exist and are left out, as are unknown ones.
 */
export async function profiles(ctx: Context, names: string[]): Promise<ProfilesEntry[]> {
  if (names.length > ctx.options.maxProfiles) {
    throw invalid(`Too many names: at most ${ctx.options.maxProfiles} a request`);
  }
  const wanted = [...new Set(names.filter(isPlayerName).map((n) => n.toLowerCase()))];
  if (wanted.length === 0) return [];
  const found = new Map((await ctx.store.findUsersByNames(wanted)).map((u) => [u.name.toLowerCase(), u]));
  return wanted.flatMap((key) => {
    const user = found.get(key);
    return user ? [{ id: user.id, name: user.name }] : [];
  });
}
