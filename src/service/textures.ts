// The optional fields of the extended variant, as the contract and the LauncherServer expect them.
import type { Player } from '../store/store.ts';
import type { Variant } from './context.ts';

export interface TextureFields {
  isAlex?: boolean;
  skinUrl?: string;
  capeUrl?: string;
}

/**
 * The address of a player's skin or cape: its external URL, or where this service hosts it.
 * Without a public address (no --public-url) a hosted texture has none a game could use.
 */
export function textureUrl(url: string | null, hash: string | null, hostedBase: string | undefined): string | undefined {
  return url ?? (hash === null || hostedBase === undefined ? undefined : hostedBase + hash);
}

/**
 * Fields the player has: `isAlex` whenever there is a skin, URLs when set; none in the base
 * variant. `hostedBase` is the public address of hosted textures, up to the hash.
 */
export function textureFields(user: Player, variant: Variant, hostedBase: string | undefined): TextureFields {
  if (variant === 'base') return {};
  const skinUrl = textureUrl(user.skinUrl, user.skinHash, hostedBase);
  const capeUrl = textureUrl(user.capeUrl, user.capeHash, hostedBase);
  return { ...(skinUrl !== undefined && { isAlex: user.isAlex, skinUrl }), ...(capeUrl !== undefined && { capeUrl }) };
}
