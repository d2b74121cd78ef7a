// Chooses the store for a `--db` value.
import { createMemoryStore } from './memory.ts';
import { openSqliteStore, type Synchronous } from './sqlite.ts';
import type { Store } from './store.ts';

export const MEMORY_DB = ':memory:';

export function openStore(db: string, synchronous?: Synchronous): Promise<Store> {
  return db === MEMORY_DB ? Promise.resolve(createMemoryStore()) : openSqliteStore(db, synchronous);
}
