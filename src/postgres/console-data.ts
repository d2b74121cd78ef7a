// The admin page's data on PostgreSQL (src/console/data.ts): a small pool of its own, opened as
// the store's is, reading the core's tables (never writing them) and keeping its own tables,
// made if missing, with its index of the locked players. Loaded only when the database is PostgreSQL.
import { findQuery, idEnd, KEEP_LOGIN_MINUTES_MS, LOCKED_COUNT_QUERY, LOCKED_INDEX, LOCKED_INDEX_NAME, nameEnd, pageStart, type AuditEntry, type ConsoleData, type FoundPlayer } from '../console/data.ts';
import { connectPostgres, firstAnswer, withCallDeadlines } from './connect.ts';
import { maskDbUrl } from './url.ts';
import type { Sql } from 'postgres';

/** Connections the admin page keeps: its calls are few, an admin's clicks. */
const CONSOLE_POOL_SIZE = 2;

const TABLES = `
  CREATE TABLE IF NOT EXISTS console_audit (
    at BIGINT NOT NULL,
    admin TEXT NOT NULL,
    action TEXT NOT NULL,
    player_id TEXT NOT NULL,
    player_name TEXT NOT NULL,
    detail TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS console_audit_by_player ON console_audit (player_id, at);
  CREATE TABLE IF NOT EXISTS console_logins (
    minute BIGINT PRIMARY KEY,
    ok BIGINT NOT NULL,
    failed BIGINT NOT NULL
  );`;

type Row = Record<string, unknown>;
const found = (rows: Row[]): FoundPlayer[] => rows.map((r) => ({ id: String(r.id), name: String(r.name), locked: r.locked === true }));
const dollar = (n: number): string => `$${n}`;

/**
 * The index of the locked players, made only where it is missing: CREATE INDEX, even IF NOT
 * EXISTS, would wait for a lock on users behind any long write (an import, a copy) and hold every
 * login's write behind it; CONCURRENTLY builds it without holding the players' writes back.
 */
async function makeLockedIndex(sql: Sql): Promise<void> {
  const [index] = await sql<Row[]>`SELECT to_regclass(${LOCKED_INDEX_NAME}) IS NOT NULL AS made`;
  if (index!.made !== true) await sql.unsafe(LOCKED_INDEX.replace('CREATE INDEX', 'CREATE INDEX CONCURRENTLY'));
}

export async function openPostgresConsoleData(url: string, env: Record<string, string | undefined>): Promise<ConsoleData> {
  const sql = await connectPostgres(url, env, { connections: CONSOLE_POOL_SIZE });
  try {
    await firstAnswer(sql);
    // Nodes starting at once may make the tables together: one at a time, under a lock of this transaction.
    await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext('mcauth console tables'))`;
      await tx.unsafe(TABLES);
    });
    await makeLockedIndex(sql);
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
  // Each call bounded as the store's are: an admin's click on a database that is away gets its 503 in time.
  return withCallDeadlines(sql, {
    where: maskDbUrl(url),
    findByName: async (prefix, after, limit) => {
      const { op, from } = pageStart(prefix, after);
      return found([...(await sql.unsafe(findQuery('name_key', op, dollar), [from, nameEnd(prefix), limit]))]);
    },
    findById: async (prefix, after, limit) => {
      const { op, from } = pageStart(prefix, after);
      return found([...(await sql.unsafe(findQuery('id', op, dollar), [from, idEnd(prefix), limit]))]);
    },
    countLocked: async () => Number((await sql.unsafe<Row[]>(LOCKED_COUNT_QUERY))[0]!.n),
    failureRows: async (since, least) =>
      (await sql<Row[]>`SELECT name_key, failures, last_at FROM login_failures WHERE last_at > ${since} AND failures >= ${least}`).map((r) => ({
        key: String(r.name_key),
        failures: Number(r.failures),
        lastAt: Number(r.last_at),
      })),
    addLogins: async (minute, { ok, failed }) => {
      await sql`INSERT INTO console_logins (minute, ok, failed) VALUES (${minute}, ${ok}, ${failed})
                ON CONFLICT (minute) DO UPDATE SET ok = console_logins.ok + excluded.ok, failed = console_logins.failed + excluded.failed`;
      await sql`DELETE FROM console_logins WHERE minute < ${minute - KEEP_LOGIN_MINUTES_MS}`;
    },
    logins: async (since) => {
      const [row] = await sql<Row[]>`SELECT coalesce(sum(ok), 0) AS ok, coalesce(sum(failed), 0) AS failed FROM console_logins WHERE minute >= ${since}`;
      return { ok: Number(row!.ok), failed: Number(row!.failed) };
    },
    size: async () => Number((await sql<Row[]>`SELECT pg_database_size(current_database()) AS n`)[0]!.n),
    audit: async (e) => void (await sql`INSERT INTO console_audit (at, admin, action, player_id, player_name, detail) VALUES (${e.at}, ${e.admin}, ${e.action}, ${e.playerId}, ${e.playerName}, ${e.detail})`),
    auditOf: async (playerId, limit) =>
      (await sql<Row[]>`SELECT at, admin, action, player_id, player_name, detail FROM console_audit WHERE player_id = ${playerId} ORDER BY at DESC LIMIT ${limit}`).map(
        (r): AuditEntry => ({ at: Number(r.at), admin: String(r.admin), action: String(r.action), playerId: String(r.player_id), playerName: String(r.player_name), detail: String(r.detail) }),
      ),
    close: () => sql.end({ timeout: 1 }),
  } satisfies ConsoleData, ['close']);
}
