// The optional fields of the extended variant, as the contract and the LauncherServer expect them.
import type { User } from '../store/store.ts';
import type { Variant } from './context.ts';

export interface TextureFields {
  isAlex?: boolean;
  skinUrl?: string;
  capeUrl?: string;
}

/** The address of a player's skin or cape: its external URL, or where this service hosts it. */
export function textureUrl(url: string | null, hash: string | null, hostedBase: string): string | undefined {
  return url ?? (hash === null ? undefined : hostedBase + hash);
}

/**
 * Fields the player has: `isAlex` whenever there is a skin, URLs when set; none in the base
 * variant. `hostedBase` is the public address of hosted textures, up to the hash.
 */
export function textureFields(user: User, variant: Variant, hostedBase: string): TextureFields {
  if (variant === 'base') return {};
  const fields: TextureFields = {};
  const skinUrl = textureUrl(user.skinUrl, user.skinHash, hostedBase);
  const capeUrl = textureUrl(user.capeUrl, user.capeHash, hostedBase);
  if (skinUrl !== undefined) {
    fields.isAlex = user.isAlex;
    fields.skinUrl = skinUrl;
  }
  if (capeUrl !== undefined) fields.capeUrl = capeUrl;
  return fields;
}
