// The `authme` format: AuthMeReloaded's SQLite file (plugins/AuthMe/authme.db), or a CSV or TSV
// export of its MySQL table. Column and table names are AuthMe's defaults (DatabaseSettings:
// table "authme", columns "username", "realname", "password"); AuthMe's other columns (ip,
// lastlogin, location, email, totp, ...) mean nothing here and are ignored.
// AuthMe keeps no UUIDs by default, so none is read: the caller gives each player its offline UUID.
import type { DatabaseSync } from 'node:sqlite';
import { readDelimited } from './delimited.ts';
import { openSource, readingFrom, tablesOf } from './sqlite.ts';
import { type ImportRow, ImportSourceError } from './types.ts';

const TABLE = 'authme';
/** The login name, lower-cased (AuthMe looks players up by it). */
const NAME = 'username';
/** The player's own spelling of the name. */
const REAL_NAME = 'realname';
const PASSWORD = 'password';

/** How a MySQL export writes NULL: mysql's batch output and phpMyAdmin write NULL, SELECT ... INTO OUTFILE writes \N. */
const SQL_NULLS: ReadonlySet<string> = new Set(['NULL', '\\N']);

/** The name AuthMe shows until the player next joins when it has no spelling of its own (PlayerAuth.Builder, OnJoinVerifier). */
const PLACEHOLDER_REAL_NAME = 'Player';

/**
 * The player's name: `realname` when it is the same name as `username` in another case, as it is
 * for every player who joined since AuthMe began keeping it. Otherwise `realname` is empty, the
 * placeholder "Player", or stale, and `username` is the name the player logs in with.
 */
export function authmeName(username: string, realname: string): string {
  if (realname === '' || (realname === PLACEHOLDER_REAL_NAME && username !== 'player')) return username;
  return username === '' || realname.toLowerCase() === username.toLowerCase() ? realname : username;
}

/** The table holding AuthMe's players: "authme", or else the only table with AuthMe's three columns. */
export function findAuthmeTable(tables: Map<string, Set<string>>): string | undefined {
  if (tables.has(TABLE)) return TABLE;
  const like = [...tables].filter(([, columns]) => columns.has(NAME) && columns.has(REAL_NAME) && columns.has(PASSWORD));
  return like.length === 1 ? like[0]![0] : undefined;
}

/** Whether a header row (lower-cased names) is that of AuthMe's table. */
export function isAuthmeHeader(columns: readonly string[]): boolean {
  return columns.includes(NAME) && columns.includes(PASSWORD);
}

export function readAuthmeDatabase(path: string): ImportRow[] {
  const db = openSource(path);
  return readingFrom(db, () => readTable(db));
}

function readTable(db: DatabaseSync): ImportRow[] {
  const tables = tablesOf(db);
  const table = findAuthmeTable(tables);
  if (!table) throw new ImportSourceError(`no table "${TABLE}", AuthMe's; its tables: ${[...tables.keys()].join(', ') || 'none'}`);
  const columns = tables.get(table)!;
  const missing = [NAME, PASSWORD].filter((c) => !columns.has(c));
  if (missing.length > 0) {
    throw new ImportSourceError(`the table "${table}" has no column ${missing.map((c) => `"${c}"`).join(' or ')} (AuthMe's default names; renamed columns are not supported)`);
  }
  const realname = columns.has(REAL_NAME) ? REAL_NAME : `NULL AS ${REAL_NAME}`;
  // AuthMe's id column is not the rowid (its type is "INTEGER AUTO_INCREMENT"), and is often NULL.
  const select = db.prepare(`SELECT rowid AS at, ${NAME} AS name, ${realname}, ${PASSWORD} AS password FROM "${table}" ORDER BY rowid`);
  return (select.all() as Record<string, unknown>[]).map((r) => ({
    where: `row ${r.at}`,
    name: authmeName(text(r.name), text(r.realname)),
    hash: text(r.password),
  }));
}

/** A cell as text: NULL as empty, anything else as SQLite would print it. */
function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  return value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : String(value);
}

/** A CSV or TSV export of AuthMe's MySQL table, with its header row. */
export function readAuthmeExport(source: string): ImportRow[] {
  const { header, headerLine, records } = readDelimited(source, SQL_NULLS);
  const lower = header.map((name) => name.toLowerCase());
  const missing = [NAME, PASSWORD].filter((c) => !lower.includes(c));
  if (missing.length > 0) {
    throw new ImportSourceError(`line ${headerLine}: no column ${missing.map((c) => `"${c}"`).join(' or ')}; an AuthMe export names its columns ${NAME}, ${REAL_NAME}, ${PASSWORD}, ...`);
  }
  const [name, realname, password] = [NAME, REAL_NAME, PASSWORD].map((c) => lower.indexOf(c)) as [number, number, number];
  return records.map(({ line, fields }) => ({
    where: `line ${line}`,
    name: authmeName(fields[name] ?? '', realname === -1 ? '' : (fields[realname] ?? '')),
    hash: fields[password] ?? '',
  }));
}
