// Limits of calls a key (a client address, or one key for all) in fixed windows of time, kept in
// memory: each process counts its own calls, which is what a flood costs it. --address-login-limit
// counts logins an address a minute; the account page counts registrations an hour.

/** Addresses a limit per client address remembers at most; when full, those whose window has ended are dropped. */
const MAX_TRACKED_ADDRESSES = 100_000;

export interface WindowLimit {
  /**
   * Counts a call of `key` at `now` and gives 0; over the limit (`limit`, else the one it was
   * made with), counts nothing and gives the seconds until its window ends. A window the call
   * opens starts at `opensAt` (a moment after `now`, when what the call asked for was done).
   */
  take: (key: string, now: number, opensAt?: number, limit?: number) => number;
  /** Takes back a counted call of `key` (one that turned out not to count). */
  giveBack: (key: string) => void;
}

/**
 * A limit whose counts may live elsewhere (in a database several nodes share, see
 * src/postgres/window-limit.ts), so its answers may come later.
 */
export interface SharedWindowLimit {
  take: (key: string, now: number, opensAt?: number) => number | Promise<number>;
  giveBack: (key: string) => void | Promise<void>;
}

/** Makes the limits a capability counts: `name` tells one limit's keys from another's (no name may begin with another and a space). */
export type WindowLimits = (name: string, limit: number, windowMs: number) => SharedWindowLimit;

export function createWindowLimit(made: number, windowMs: number): WindowLimit {
  const windows = new Map<string, { start: number; count: number }>();
  return {
    take: (key, now, opensAt = now, limit = made) => {
      let window = windows.get(key);
      if (!window || now - window.start >= windowMs) {
        if (windows.size >= MAX_TRACKED_ADDRESSES) for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
        window = { start: opensAt, count: 0 };
        windows.set(key, window);
      }
      if (window.count >= limit) return Math.ceil((window.start + windowMs - now) / 1000);
      window.count++;
      return 0;
    },
    giveBack: (key) => {
      const window = windows.get(key);
      if (window && window.count > 0) window.count--;
    },
  };
}
