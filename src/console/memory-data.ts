// The admin page's data with `--db :memory:` (trials and tests only): players read through the
// store's interface, a page at a time, and the rest kept in this process.
import type { Store, User } from '../store/store.ts';
import type { AuditEntry, ConsoleData, FoundPlayer, LoginCounts } from './data.ts';

/** Players read from the store at a time. */
const BATCH = 500;

export function createMemoryData(store: Store): ConsoleData {
  const minutes = new Map<number, LoginCounts>();
  const trail: AuditEntry[] = [];
  /** Every player, in order of lower-case name, a batch at a time. */
  async function* everyone(): AsyncGenerator<User> {
    for (let after = ''; ; ) {
      const batch = await store.listUsers(after, BATCH);
      yield* batch;
      if (batch.length < BATCH) return;
      after = batch.at(-1)!.name;
    }
  }
  const find = async (keyOf: (u: User) => string, prefix: string, after: string, limit: number): Promise<FoundPlayer[]> => {
    const hits: User[] = [];
    for await (const u of everyone()) if (keyOf(u).startsWith(prefix) && keyOf(u) > after) hits.push(u);
    hits.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : 1));
    return hits.slice(0, limit).map((u) => ({ id: u.id, name: u.name, locked: u.lockedAt !== null }));
  };
  return {
    where: ':memory:',
    findByName: (prefix, after, limit) => find((u) => u.name.toLowerCase(), prefix, after, limit),
    findById: (prefix, after, limit) => find((u) => u.id, prefix, after, limit),
    countLocked: async () => {
      let n = 0;
      for await (const u of everyone()) if (u.lockedAt !== null) n++;
      return n;
    },
    failureRows: async () => null,
    addLogins: async (minute, { ok, failed }) => {
      const had = minutes.get(minute) ?? { ok: 0, failed: 0 };
      minutes.set(minute, { ok: had.ok + ok, failed: had.failed + failed });
    },
    logins: async (since) => {
      const sum = { ok: 0, failed: 0 };
      for (const [minute, c] of minutes) if (minute >= since) (sum.ok += c.ok), (sum.failed += c.failed);
      return sum;
    },
    size: async () => null,
    audit: async (e) => void trail.push(e),
    auditOf: async (playerId, limit) => trail.filter((e) => e.playerId === playerId).reverse().slice(0, limit),
    close: async () => {},
  };
}
