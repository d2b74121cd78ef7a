// The optional fields of the extended variant, as the contract and the LauncherServer expect them.
import type { User } from '../store/store.ts';
import type { Variant } from './context.ts';

export interface TextureFields {
  isAlex?: boolean;
  skinUrl?: string;
  capeUrl?: string;
}

/** Fields the player has: `isAlex` whenever there is a skin, URLs when set; none in the base variant. */
export function textureFields(user: User, variant: Variant): TextureFields {
  if (variant === 'base') return {};
  const fields: TextureFields = {};
  if (user.skinUrl !== null) {
    fields.isAlex = user.isAlex;
    fields.skinUrl = user.skinUrl;
  }
  if (user.capeUrl !== null) fields.capeUrl = user.capeUrl;
  return fields;
}
