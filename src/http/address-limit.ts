// An optional limit of /auth calls per client address and minute (--address-login-limit; off
// by default: the usual caller is one LauncherServer, and every player shares its address).
// Kept in memory: it guards this process's CPU, which is what a flood from one address costs.

const WINDOW_MS = 60_000;
/** Addresses remembered at most; when full, windows that have ended are dropped. */
const MAX_ADDRESSES = 100_000;

/** A check that counts one call of `address` at `now`: 0 when allowed, else seconds to wait. */
export function createAddressLimit(perMinute: number): (address: string, now: number) => number {
  const windows = new Map<string, { start: number; count: number }>();
  return (address, now) => {
    let window = windows.get(address);
    if (!window || now - window.start >= WINDOW_MS) {
      if (windows.size >= MAX_ADDRESSES) for (const [a, w] of windows) if (now - w.start >= WINDOW_MS) windows.delete(a);
      window = { start: now, count: 0 };
      windows.set(address, window);
    }
    window.count++;
    return window.count > perMinute ? Math.ceil((window.start + WINDOW_MS - now) / 1000) : 0;
  };
}
