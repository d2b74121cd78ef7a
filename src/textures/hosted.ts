// Hosted skins and capes: an uploaded PNG, checked here (src/textures/rules.ts), becomes the
// player's texture through the service's setTextures, which keeps it in the store.
import { invalid } from '../service/errors.ts';
import type { Service } from '../service/service.ts';
import type { TextureChange, User } from '../store/store.ts';
import { readTexture, type TextureKind } from './rules.ts';

export interface HostedUpload {
  kind: TextureKind;
  /** The file or request body as received. */
  bytes: Buffer;
  /** Skins only; left out, the player's model stays (classic for a first skin). */
  isAlex?: boolean;
  /** Accept whole multiples of the sizes (--hd-textures). */
  hd: boolean;
}

/**
 * Stores an uploaded skin or cape for the player (by name or UUID): a real PNG of the right size,
 * kept with its image chunks only and addressed by the texture hash of its pixels.
 */
export async function setHostedTexture(service: Service, who: string, upload: HostedUpload): Promise<User> {
  const texture = readTexture(upload.kind, upload.bytes, upload.hd);
  if ('problem' in texture) throw invalid(texture.problem);
  const user = await service.findUser(who);
  // A skin's model: as given; else the player's, classic for a first skin. A cape leaves it be.
  const isAlex = upload.isAlex ?? (user.skinUrl === null && user.skinHash === null ? false : user.isAlex);
  const change: TextureChange = upload.kind === 'cape' ? { upload: texture, capeHash: texture.hash } : { upload: texture, skinHash: texture.hash, isAlex };
  return service.setTextures(user.id, change);
}
