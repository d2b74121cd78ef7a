// The password-guessing throttle: failed logins are counted per login name (in the store, so the
// count holds across restarts and processes). After FREE_LOGIN_FAILURES, each attempt must wait
// a delay that doubles with every failure, up to THROTTLE_MAX_MS: slow enough to stop guessing,
// never a lockout that a guesser could impose on a player for long.
import { FORGET_FAILURES_AFTER_MS, FREE_LOGIN_FAILURES, THROTTLE_BASE_MS, THROTTLE_MAX_MS } from '../limits.ts';
import type { HashSlot } from '../crypto/hash-pool.ts';
import type { LoginFailures } from '../store/store.ts';
import type { Context } from './context.ts';
import { busy, ServiceError } from './errors.ts';

/** When the next attempt is allowed (0: at once). */
export function throttledUntil({ failures, lastAt }: LoginFailures): number {
  if (failures < FREE_LOGIN_FAILURES) return 0;
  return lastAt + Math.min(THROTTLE_BASE_MS * 2 ** (failures - FREE_LOGIN_FAILURES), THROTTLE_MAX_MS);
}

/**
 * Refuses a throttled name (429), then a login the hash pool has no room for (503: not an
 * attempt, so it counts nothing); otherwise takes a hash slot (the caller releases it) and
 * counts the attempt as a failure before any hash is computed, in one atomic step of the store,
 * so that guesses sent in parallel (or to another process on the same database) already see it.
 * A success clears the count.
 */
export async function admitLoginAttempt(ctx: Context, name: string): Promise<HashSlot> {
  const now = ctx.now();
  // The hash slot is taken inside the store's atomic step: taken later, several requests could
  // see room for one, be counted, and then find no slot.
  let slot: HashSlot | undefined;
  let until: number;
  try {
    until = await ctx.store.beginLoginAttempt(name, now, now - FORGET_FAILURES_AFTER_MS, (failures) => {
      const wait = throttledUntil(failures);
      if (wait > now) return wait;
      slot = ctx.pool.reserve();
      return slot ? 0 : Infinity;
    });
  } catch (err) {
    slot?.release();
    throw err;
  }
  if (until === Infinity) throw busy();
  if (until > now) {
    const seconds = Math.ceil((until - now) / 1000);
    throw new ServiceError('throttled', `Too many failed logins for this name; try again in ${seconds} s`, seconds);
  }
  return slot!;
}
