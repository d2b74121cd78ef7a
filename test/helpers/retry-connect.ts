// A PostgreSQL cluster on a busy machine may not take a connection within the store's second
// (CONNECT_TIMEOUT, the driver's): nothing was sent on it, so the step is tried again, a few times.
// Any other error, and the last try's, is the caller's.

/** `step`, tried again while it fails for want of a connection, at most `tries` times in all. */
export async function retriedOnConnectTimeout<T>(step: () => Promise<T>, tries = 5): Promise<T> {
  for (let left = tries; ; left--) {
    try {
      return await step();
    } catch (err) {
      if (left <= 1 || (err as { code?: unknown }).code !== 'CONNECT_TIMEOUT') throw err;
    }
  }
}
