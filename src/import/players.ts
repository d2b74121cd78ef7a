// A row read from another system as a new player of this service: held to the rules of a new
// player (name, UUID, texture URLs), its password hash kept as that system wrote it.
import { requireNewName, requireUrl } from '../service/checks.ts';
import { invalid, quote, ServiceError } from '../service/errors.ts';
import type { User } from '../store/store.ts';
import { offlineUuid, parseUuid } from '../uuid.ts';
import { recognizeHash, type Recognized } from './hashes/formats.ts';
import type { ImportRow } from './read/rows.ts';

export type RowField = 'name' | 'uuid' | 'hash' | 'skinUrl' | 'capeUrl';

/** Why a row cannot be a player: the field at fault, and the problem in words. */
export interface Refused {
  field: RowField;
  problem: string;
}

/**
 * `row` as a player to store, with the format of its hash; or why not. Without a UUID (AuthMe
 * keeps none) the player gets the offline-mode UUID of the name, so what a server keeps of the
 * player (inventories, permissions) carries over.
 */
export function toPlayer(row: ImportRow, allowHttpTextures: boolean, createdAt: number): { user: User; hash: Recognized } | Refused {
  const { name, uuid, skinUrl, capeUrl } = row;
  let field: RowField = 'name';
  try {
    requireNewName(name);
    field = 'uuid';
    const id = uuid === undefined || uuid === '' ? offlineUuid(name) : parseUuid(uuid);
    if (id === undefined) throw invalid(`Invalid UUID ${quote(uuid!)}`);
    field = 'skinUrl';
    if (skinUrl) requireUrl(skinUrl, allowHttpTextures);
    field = 'capeUrl';
    if (capeUrl) requireUrl(capeUrl, allowHttpTextures);
    const hash = recognizeHash(row.hash);
    if ('problem' in hash) return { field: 'hash', problem: hash.problem };
    const user: User = {
      id,
      name,
      passwordHash: hash.stored,
      skinUrl: skinUrl || null,
      skinHash: null,
      capeUrl: capeUrl || null,
      capeHash: null,
      isAlex: row.isAlex ?? false,
      createdAt,
      lastLoginAt: null,
      lockedAt: null,
      lockReason: null,
    };
    return { user, hash };
  } catch (err) {
    if (err instanceof ServiceError) return { field, problem: err.message };
    throw err;
  }
}
