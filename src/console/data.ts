// What the admin page reads and keeps beyond the store's interface: players found by a prefix of
// their name or UUID, counts for its dashboard, logins a minute, and the audit trail of admin
// actions. None of it is the core's: each backend reads the core's tables as they are (never
// writing them) and keeps its own tables beside them.
import { MEMORY_DB } from '../memory/store.ts';
import { isPostgresUrl } from '../postgres/url.ts';
import type { Store } from '../store/store.ts';

/** A player as a search lists them. */
export interface FoundPlayer {
  id: string;
  name: string;
  locked: boolean;
}

/** One admin action, as the audit trail keeps it: never a password, code or token. */
export interface AuditEntry {
  /** ms since the epoch. */
  at: number;
  /** The admin, by name. */
  admin: string;
  action: string;
  playerId: string;
  playerName: string;
  /** What the action was given, where it is no secret (a lock's reason, a new name). */
  detail: string;
}

/** Logins in a span: ok and failed (wrong password, locked). */
export interface LoginCounts {
  ok: number;
  failed: number;
}

/** A row of the core's login_failures, as the throttle keeps it. */
export interface FailureRow {
  key: string;
  failures: number;
  lastAt: number;
}

export interface ConsoleData {
  /** Where the data is, for the dashboard: a SQLite path, a masked PostgreSQL URL, or ':memory:'. */
  where: string;
  /** Players whose lower-case name starts with `prefix` and comes after `after`, in that order; an index range. */
  findByName(prefix: string, after: string, limit: number): Promise<FoundPlayer[]>;
  /** Players whose UUID (dashed, lower-case) starts with `prefix` and comes after `after`, in that order; an index range. */
  findById(prefix: string, after: string, limit: number): Promise<FoundPlayer[]>;
  countLocked(): Promise<number>;
  /** The throttle's rows with a failure since `since` and at least `failures` failures; null where they cannot be read (in memory). */
  failureRows(since: number, failures: number): Promise<FailureRow[] | null>;
  /** Adds counts to the minute starting at `minute` (ms). */
  addLogins(minute: number, counts: LoginCounts): Promise<void>;
  /** Logins counted in the minutes from `since` on. */
  logins(since: number): Promise<LoginCounts>;
  /** Bytes the database takes; null when unknown (in memory). */
  size(): Promise<number | null>;
  audit(entry: AuditEntry): Promise<void>;
  /** A player's latest entries, the newest first. */
  auditOf(playerId: string, limit: number): Promise<AuditEntry[]>;
  close(): Promise<void>;
}

/** Longest search text: a name is 16 characters, a dashed UUID 36. */
export const MAX_SEARCH_CHARS = 36;

/** The tables the admin page keeps beside the core's (its audit trail, its login counts): `db copy` leaves them, neither copied nor taken for another program's. */
export const CONSOLE_TABLES = ['console_audit', 'console_logins'];

/** How long login counts are kept: the dashboard shows the last day. */
export const KEEP_LOGIN_MINUTES_MS = 2 * 24 * 60 * 60 * 1000;

/** The exclusive upper bound of the lower-case names starting with `prefix`, in byte order (SQLite's, and PostgreSQL's COLLATE "C" of name_key). */
export const nameEnd = (prefix: string): string => `${prefix}\uffff`;

const HEX_NEXT = '0123456789abcdefg';
/**
 * The exclusive upper bound of the UUIDs starting with `prefix` (dashed, lower-case hex): its
 * last digit raised by one. Right in byte order and in a linguistic collation alike (PostgreSQL's
 * users.id has the database's), where dashes may be ignored.
 */
export function idEnd(prefix: string): string {
  const p = prefix.replace(/-$/, '');
  return p === '' ? 'g' : p.slice(0, -1) + HEX_NEXT[HEX_NEXT.indexOf(p.at(-1)!) + 1];
}

/**
 * A search's query, the same on every SQL backend: players whose `column` runs from the first
 * parameter (`>=` from a prefix; `>` past the last key of the page before) up to the second, in
 * order, at most the third: one range of an index, whatever the page. `param` writes the n-th
 * parameter in the backend's form.
 */
export const findQuery = (column: 'name_key' | 'id', op: '>=' | '>', param: (n: number) => string): string =>
  `SELECT id, name, locked_at IS NOT NULL AS locked FROM users WHERE ${column} ${op} ${param(1)} AND ${column} < ${param(2)} ORDER BY ${column} LIMIT ${param(3)}`;

/**
 * The dashboard's count of locked players, and the index it reads, the same on every SQL backend:
 * an index of the locked players alone (few), so the count reads them, not a million rows.
 * The admin page's own index on the core's table, made where it is missing (on PostgreSQL without
 * holding the players' writes back). A migration of the core that drops or rebuilds
 * users.locked_at drops this index first: SQLite refuses to drop an indexed column.
 */
export const LOCKED_INDEX_NAME = 'console_locked_users';
export const LOCKED_INDEX = `CREATE INDEX IF NOT EXISTS ${LOCKED_INDEX_NAME} ON users (locked_at) WHERE locked_at IS NOT NULL`;
export const LOCKED_COUNT_QUERY = 'SELECT count(*) AS n FROM users WHERE locked_at IS NOT NULL';

/** Where a page of a search starts: at the prefix, or past `after` when it is a key of the prefix's (the last of the page before). */
export const pageStart = (prefix: string, after: string): { op: '>=' | '>'; from: string } => (after !== '' && after >= prefix ? { op: '>', from: after } : { op: '>=', from: prefix });

/** The admin page's data for the database `db` the store was opened on; PostgreSQL's module is loaded only for a PostgreSQL URL. */
export async function openConsoleData(db: string, store: Store, env: Record<string, string | undefined>): Promise<ConsoleData> {
  if (db === MEMORY_DB) return (await import('./memory-data.ts')).createMemoryData(store);
  if (isPostgresUrl(db)) return (await import('../postgres/console-data.ts')).openPostgresConsoleData(db, env);
  return (await import('./sqlite-data.ts')).openSqliteConsoleData(db);
}
