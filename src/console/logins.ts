// Logins counted for the admin page's dashboard, from the record every answered request leaves
// (src/http/app.ts, AnsweredRequest): counted in memory, a minute at a time, and added to the
// database every few seconds, so that the counts of every worker and every node add up.
import type { AnsweredRequest } from '../http/app.ts';
import type { ConsoleData, LoginCounts } from './data.ts';

/** How often the counts go to the database: the dashboard is at most this late. */
export const FLUSH_INTERVAL_MS = 5000;

const MINUTE_MS = 60 * 1000;

/** The login routes, and whether an answer means a login went through (null: neither, as a malformed request). */
const LOGIN_ROUTES: Record<string, (r: AnsweredRequest) => boolean | null> = {
  // /auth notes its outcome; a wrong password and a locked player are the failures.
  '/auth': (r) => (r.outcome === 'ok' ? true : r.outcome === 'bad_credentials' || r.outcome === 'locked' ? false : null),
  // The account page's sign-in and the Yggdrasil API's authenticate say it by their status.
  '/account/login': (r) => byStatus(r.status),
  '/yggdrasil/authserver/authenticate': (r) => byStatus(r.status),
};

function byStatus(status: number): boolean | null {
  if (status === 200) return true;
  return status === 401 || status === 403 ? false : null;
}

export interface LoginCounter {
  observe: (r: AnsweredRequest) => void;
  /** Writes what is counted; the timer stops with `stop`, which writes the rest. */
  flush: () => Promise<void>;
  stop: () => Promise<void>;
}

export function countLogins(data: ConsoleData, onError: (err: unknown) => void, now: () => number = Date.now): LoginCounter {
  let pending = new Map<number, LoginCounts>();
  const flush = async (): Promise<void> => {
    const batch = pending;
    pending = new Map();
    for (const [minute, counts] of batch) await data.addLogins(minute, counts).catch(onError);
  };
  const timer = setInterval(() => void flush(), FLUSH_INTERVAL_MS);
  timer.unref();
  return {
    observe: (r) => {
      const went = LOGIN_ROUTES[r.route]?.(r);
      if (went === undefined || went === null) return;
      const minute = Math.floor(now() / MINUTE_MS) * MINUTE_MS;
      const counts = pending.get(minute) ?? { ok: 0, failed: 0 };
      if (went) counts.ok++;
      else counts.failed++;
      pending.set(minute, counts);
    },
    flush,
    stop: async () => {
      clearInterval(timer);
      await flush();
    },
  };
}
