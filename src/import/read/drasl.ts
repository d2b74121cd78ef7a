// The `drasl` format: drasl's SQLite database (drasl.db in its state directory), read directly.
// Two layouts exist (drasl's db.go migrations, by PRAGMA user_version):
// - versions 0 to 3 (drasl up to 2.x): a `users` row is one account and its one player,
//   with `player_name`, its `uuid` the player's;
// - versions 4 to 6 (drasl 3.x and later): `players` rows, each with the `user_uuid` of the
//   `users` row that holds the password. A user without players has nothing to import.
// Skins and capes are not read: drasl stores only the hash of a file in its own state
// directory, served under its own base URL, neither of which the database holds.
import type { DatabaseSync } from 'node:sqlite';
import { openSource, readingFrom, tablesOf } from './sqlite.ts';
import { type ImportRow, ImportSourceError } from './types.ts';

/**
 * How a drasl password comes out: scrypt's salt and hash (drasl's model.go: N=32768, r=8, p=1,
 * 32 bytes), each in standard base64 with padding, after this prefix.
 */
export const DRASL_HASH_PREFIX = 'drasl-scrypt$';

/** The newest schema this reader was written against (drasl's CURRENT_USER_VERSION). */
const KNOWN_USER_VERSION = 6;

/** drasl's SkinModelSlim; "classic" is the other. */
const SLIM = 'slim';
const CLASSIC = 'classic';

type Layout = 'players' | 'users';

/** Which of drasl's layouts the tables have, if either. */
export function draslLayout(tables: Map<string, Set<string>>): Layout | undefined {
  const users = tables.get('users');
  if (!users?.has('password_hash') || !users.has('password_salt')) return undefined;
  const players = tables.get('players');
  if (players?.has('user_uuid') && players.has('name')) return 'players';
  return users.has('player_name') ? 'users' : undefined;
}

export function readDraslDatabase(path: string): ImportRow[] {
  const db = openSource(path);
  return readingFrom(db, () => readPlayers(db));
}

function readPlayers(db: DatabaseSync): ImportRow[] {
  const layout = draslLayout(tablesOf(db));
  if (!layout) {
    const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    const newer = version > KNOWN_USER_VERSION ? `; it is schema version ${version}, newer than this reader knows (${KNOWN_USER_VERSION})` : '';
    throw new ImportSourceError(`not drasl's database: no table "users" with password_hash and password_salt, and "players" (or users.player_name)${newer}`);
  }
  const select =
    layout === 'players'
      ? `SELECT 'player ' || p.uuid AS at, p.uuid, p.name, p.skin_model, u.password_salt AS salt, u.password_hash AS hash
         FROM players p LEFT JOIN users u ON u.uuid = p.user_uuid ORDER BY p.rowid`
      : `SELECT 'user ' || uuid AS at, uuid, player_name AS name, skin_model, password_salt AS salt, password_hash AS hash
         FROM users ORDER BY rowid`;
  return (db.prepare(select).all() as Record<string, unknown>[]).map((r) => {
    const row: ImportRow = { where: String(r.at ?? 'a player with no UUID'), name: String(r.name ?? ''), hash: draslHash(r.salt, r.hash, r.at) };
    if (typeof r.uuid === 'string' && r.uuid !== '') row.uuid = r.uuid;
    if (r.skin_model === SLIM || r.skin_model === CLASSIC) row.isAlex = r.skin_model === SLIM;
    return row;
  });
}

/** Salt and hash joined after DRASL_HASH_PREFIX; empty when the user has no password (one who signs in through OIDC only). */
function draslHash(salt: unknown, hash: unknown, where: unknown): string {
  if (salt === null || hash === null) return '';
  if (!(salt instanceof Uint8Array) || !(hash instanceof Uint8Array)) {
    throw new ImportSourceError(`${String(where)}: the password salt and hash are not blobs, as drasl writes them`);
  }
  if (salt.length === 0 || hash.length === 0) return '';
  return `${DRASL_HASH_PREFIX}${Buffer.from(salt).toString('base64')}$${Buffer.from(hash).toString('base64')}`;
}
