// Profiles as the Yggdrasil API serializes them: the UUID undashed, and the `textures` property
// (base64 JSON of the skin and cape addresses) signed with the service's key when asked.
import type { Player } from '../store/store.ts';
import type { SigningKey } from './keys.ts';

/** A signed property is reused this long: a 4096-bit signature costs milliseconds of CPU, and game servers ask again and again. */
const SIGNED_FOR_MS = 10 * 60 * 1000;
/** Most signed properties remembered; past it, the oldest go first. */
const MAX_SIGNED = 10_000;

export const undashed = (id: string): string => id.replaceAll('-', '');

/** A signed profile refused: a new signature was not to be made for its caller now. */
export class Refused extends Error {}

export interface Property {
  name: string;
  value: string;
  signature?: string;
}

export interface ProfileWriter {
  /** `{id, name}`: what the token and the look-ups answer with. */
  brief: (player: Pick<Player, 'id' | 'name'>) => { id: string; name: string };
  /**
   * `{id, name, properties}`, each property signed when `signed`. `mayMake`, asked before a
   * signature is made afresh (none kept): false refuses the profile with `Refused`.
   */
  complete: (player: Player, signed: boolean, mayMake?: () => boolean) => { id: string; name: string; properties: Property[] };
}

/**
 * `textureUrl` gives a skin's or cape's public address (none: the player has none a game can
 * load); `uploadable`: players may upload theirs through the API (said in `uploadableTextures`).
 */
export function createProfileWriter(
  key: SigningKey,
  textureUrl: (url: string | null, hash: string | null) => string | undefined,
  uploadable: boolean,
  now = Date.now,
): ProfileWriter {
  const uploads: Property[] = uploadable ? [{ name: 'uploadableTextures', value: 'skin,cape' }] : [];
  const signedUploads = uploads.map((p) => ({ ...p, signature: key.sign(p.value) }));
  /** Signed `textures` properties by what they say, with when they were made. */
  const signed = new Map<string, { property: Property; at: number }>();

  const textures = (player: Player, at: number): string => {
    const skin = textureUrl(player.skinUrl, player.skinHash);
    const cape = textureUrl(player.capeUrl, player.capeHash);
    const payload = {
      timestamp: at,
      profileId: undashed(player.id),
      profileName: player.name,
      textures: {
        ...(skin !== undefined && { SKIN: { url: skin, ...(player.isAlex && { metadata: { model: 'slim' } }) } }),
        ...(cape !== undefined && { CAPE: { url: cape } }),
      },
    };
    return Buffer.from(JSON.stringify(payload)).toString('base64');
  };

  const signedTextures = (player: Player, mayMake = (): boolean => true): Property => {
    const what = JSON.stringify([player.id, player.name, player.skinUrl, player.skinHash, player.capeUrl, player.capeHash, player.isAlex]);
    const at = now();
    const kept = signed.get(what);
    if (kept && at - kept.at < SIGNED_FOR_MS) return kept.property;
    if (!mayMake()) throw new Refused();
    const value = textures(player, at);
    const property = { name: 'textures', value, signature: key.sign(value) };
    signed.delete(what);
    if (signed.size >= MAX_SIGNED) signed.delete(signed.keys().next().value!);
    signed.set(what, { property, at });
    return property;
  };

  return {
    brief: (player) => ({ id: undashed(player.id), name: player.name }),
    complete: (player, sign, mayMake) => ({
      id: undashed(player.id),
      name: player.name,
      properties: sign ? [signedTextures(player, mayMake), ...signedUploads] : [{ name: 'textures', value: textures(player, now()) }, ...uploads],
    }),
  };
}
