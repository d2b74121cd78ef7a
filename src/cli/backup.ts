// `backup FILE`: a consistent copy of the database, taken while the server may be writing.
import { closeSync, existsSync, linkSync, openSync, rmSync } from 'node:fs';
import { quote } from '../service/errors.ts';
import type { Store } from '../store/store.ts';

export const BACKUP_HELP = `backup FILE [--db PATH | --config FILE]
      writes a copy of the database to FILE, a new file; safe while the server runs`;

/**
 * Copies the store to `target`. The copy is written beside it under a temporary name and linked
 * to `target` when complete, so `target` is either absent or a whole database, never half of one.
 */
export async function backUp(store: Store, target: string): Promise<string> {
  const exists = (): Error => new Error(`${quote(target)} exists already; a backup never overwrites a file`);
  if (existsSync(target)) throw exists();
  const partial = `${target}.partial-${process.pid}`;
  try {
    // Made empty first, readable by its owner only: the copy holds every password hash.
    // (VACUUM INTO writes into an empty file and keeps its mode.)
    closeSync(openSync(partial, 'wx', 0o600));
    await store.backup(partial);
    // A hard link, unlike a rename, fails when something (even a dangling link) took the name meanwhile.
    linkSync(partial, target);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // A file system error's code alone: its message repeats the whole path.
    throw e.code === 'EEXIST' ? exists() : new Error(`cannot write the backup ${quote(target)}: ${e.syscall ? e.code : e.message}`);
  } finally {
    rmSync(partial, { force: true });
  }
  return `Backed up the database to ${target}`;
}
