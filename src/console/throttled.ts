// Names the password-guessing throttle holds back now, read from its own rows (src/service/throttle.ts
// keeps a name's failures under `name`, a client's under `name CLIENT`, and a held-back name's checks
// under `name ?` and `name !`), judged by its own rule and numbers.
import { FREE_LOGIN_FAILURES, NAME_FAILURE_CEILING, THROTTLE_MAX_MS } from '../limits.ts';
import { throttledUntil } from '../service/throttle.ts';
import type { ConsoleData } from './data.ts';

/** How many names wait for their next login at `now`: for every client (past the name's ceiling) or for one. Null when the rows cannot be read. */
export async function throttledNames(data: ConsoleData, now: number): Promise<number | null> {
  // No throttle lasts longer than THROTTLE_MAX_MS after a name's last failure, nor starts before FREE_LOGIN_FAILURES.
  const rows = await data.failureRows(now - THROTTLE_MAX_MS, FREE_LOGIN_FAILURES);
  if (rows === null) return null;
  const names = new Set<string>();
  for (const { key, failures, lastAt } of rows) {
    const space = key.indexOf(' ');
    const client = space === -1 ? undefined : key.slice(space + 1);
    if (client === '?' || client === '!') continue; // checks of a held-back name, not failures
    const free = client === undefined ? NAME_FAILURE_CEILING : FREE_LOGIN_FAILURES;
    if (throttledUntil({ failures, lastAt }, free) > now) names.add(space === -1 ? key : key.slice(0, space));
  }
  return names.size;
}
