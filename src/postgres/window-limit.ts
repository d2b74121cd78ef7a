// Limits in fixed windows of time counted in the database, so that every node sharing it counts
// toward one total: the account page's registration limits hold across nodes as in one process.
// Same rules as src/ops/window-limit.ts: a window starts at a key's first call and lasts
// `windowMs`; past the limit a call counts nothing and is told how long until the window ends.
import type { Sql } from 'postgres';
import type { SharedWindowLimit, WindowLimits } from '../ops/window-limit.ts';

/** Limits kept in `sql`'s database (table window_counts, see schema.ts). */
export function databaseWindowLimits(sql: Sql): WindowLimits {
  return (name, limit, windowMs): SharedWindowLimit => {
    const keyOf = (key: string): string => `${name} ${key}`;
    return {
      take: (key, now, opensAt = now) =>
        sql.begin(async (tx) => {
          const k = keyOf(key);
          // The row is made if missing, then locked: two nodes counting one key take turns.
          await tx`INSERT INTO window_counts (key, started_at, count) VALUES (${k}, ${opensAt}, 0) ON CONFLICT (key) DO NOTHING`;
          const [row] = await tx<{ started_at: string; count: number }[]>`SELECT started_at, count FROM window_counts WHERE key = ${k} FOR UPDATE`;
          const ended = Number(row!.started_at) + windowMs <= now;
          if (!ended && row!.count >= limit) return Math.ceil((Number(row!.started_at) + windowMs - now) / 1000);
          await tx`UPDATE window_counts SET started_at = ${ended ? opensAt : Number(row!.started_at)}, count = ${ended ? 1 : row!.count + 1} WHERE key = ${k}`;
          // Windows over, of this limit's other keys, are dropped; rows another node holds are left to it.
          await tx`DELETE FROM window_counts WHERE key IN (SELECT key FROM window_counts WHERE starts_with(key, ${`${name} `}) AND started_at <= ${now - windowMs} AND key <> ${k} FOR UPDATE SKIP LOCKED)`;
          return 0;
        }),
      giveBack: async (key) => {
        await sql`UPDATE window_counts SET count = count - 1 WHERE key = ${keyOf(key)} AND count > 0`;
      },
    };
  };
}
