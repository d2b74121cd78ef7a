// The admin page's data on SQLite: a connection of its own to the store's file, reading the
// core's tables (never writing them) and keeping its own, made if missing, with its index of the
// locked players.
import { findQuery, idEnd, KEEP_LOGIN_MINUTES_MS, LOCKED_COUNT_QUERY, LOCKED_INDEX, nameEnd, pageStart, type AuditEntry, type ConsoleData, type FoundPlayer } from './data.ts';

/** How long a statement waits for another connection's write lock (the server's own, other workers'). */
const BUSY_TIMEOUT_MS = 5000;

const SQLITE_TABLES = `
  CREATE TABLE IF NOT EXISTS console_audit (
    at INTEGER NOT NULL,
    admin TEXT NOT NULL,
    action TEXT NOT NULL,
    player_id TEXT NOT NULL,
    player_name TEXT NOT NULL,
    detail TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS console_audit_by_player ON console_audit (player_id, at);
  CREATE TABLE IF NOT EXISTS console_logins (
    minute INTEGER PRIMARY KEY,
    ok INTEGER NOT NULL,
    failed INTEGER NOT NULL
  );`;

const found = (rows: Record<string, unknown>[]): FoundPlayer[] => rows.map((r) => ({ id: String(r.id), name: String(r.name), locked: r.locked === 1 }));

/** Opens it on the file at `path`; node:sqlite is imported here, dynamically, as the store does, so that an older Node reaches the version check first. */
export async function openSqliteConsoleData(path: string): Promise<ConsoleData> {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(path);
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec(SQLITE_TABLES);
  db.exec(LOCKED_INDEX);
  const search = {
    name_key: { '>=': db.prepare(findQuery('name_key', '>=', () => '?')), '>': db.prepare(findQuery('name_key', '>', () => '?')) },
    id: { '>=': db.prepare(findQuery('id', '>=', () => '?')), '>': db.prepare(findQuery('id', '>', () => '?')) },
  };
  const find = (column: 'name_key' | 'id', prefix: string, after: string, limit: number): FoundPlayer[] => {
    const { op, from } = pageStart(prefix, after);
    return found(search[column][op].all(from, column === 'id' ? idEnd(prefix) : nameEnd(prefix), limit));
  };
  const locked = db.prepare(LOCKED_COUNT_QUERY);
  const failures = db.prepare('SELECT name_key AS key, failures, last_at AS lastAt FROM login_failures WHERE last_at > ? AND failures >= ?');
  const addLogins = db.prepare('INSERT INTO console_logins (minute, ok, failed) VALUES (?, ?, ?) ON CONFLICT (minute) DO UPDATE SET ok = ok + excluded.ok, failed = failed + excluded.failed');
  const dropLogins = db.prepare('DELETE FROM console_logins WHERE minute < ?');
  const logins = db.prepare('SELECT coalesce(sum(ok), 0) AS ok, coalesce(sum(failed), 0) AS failed FROM console_logins WHERE minute >= ?');
  const audit = db.prepare('INSERT INTO console_audit (at, admin, action, player_id, player_name, detail) VALUES (?, ?, ?, ?, ?, ?)');
  const auditOf = db.prepare('SELECT at, admin, action, player_id AS playerId, player_name AS playerName, detail FROM console_audit WHERE player_id = ? ORDER BY at DESC LIMIT ?');
  return {
    where: path,
    findByName: async (prefix, after, limit) => find('name_key', prefix, after, limit),
    findById: async (prefix, after, limit) => find('id', prefix, after, limit),
    countLocked: async () => Number(locked.get()!.n),
    failureRows: async (since, least) => failures.all(since, least).map((r) => ({ key: String(r.key), failures: Number(r.failures), lastAt: Number(r.lastAt) })),
    addLogins: async (minute, { ok, failed }) => {
      addLogins.run(minute, ok, failed);
      dropLogins.run(minute - KEEP_LOGIN_MINUTES_MS);
    },
    logins: async (since) => {
      const row = logins.get(since)!;
      return { ok: Number(row.ok), failed: Number(row.failed) };
    },
    size: async () => {
      const pages = db.prepare('PRAGMA page_count').get()!.page_count;
      const bytes = db.prepare('PRAGMA page_size').get()!.page_size;
      return Number(pages) * Number(bytes);
    },
    audit: async (e) => void audit.run(e.at, e.admin, e.action, e.playerId, e.playerName, e.detail),
    auditOf: async (playerId, limit) => auditOf.all(playerId, limit).map((r) => ({ ...r }) as unknown as AuditEntry),
    close: async () => db.close(),
  };
}
