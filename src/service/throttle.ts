// The password-guessing throttle. Failed logins are counted per name and client (in the store, so
// the counts hold across restarts, processes and nodes), so that a guesser slows down only itself:
// after FREE_LOGIN_FAILURES a client waits a delay that doubles with every failure, up to
// THROTTLE_MAX_MS. The failures of a name from all clients together have a ceiling,
// NAME_FAILURE_CEILING, past which the name waits for every client that has not logged in to it
// before: that holds a guesser who spreads over many clients (rotating clientTokens, addresses).
// A launcher that has (a live token of the player was issued to its clientToken, from whatever
// address: OWASP's "device cookie") is held by its own failures only, counted for it and not for
// its address, so no one else's guessing locks it out, not even from behind the same NAT. A name
// held back by others (the ceiling, or a relay whose players all count as one client) still has a
// password checked every THROTTLED_CHECK_MS, one already refused here under throttle: a player
// who retries the same password gets in, a guesser with new ones does not. Clients with an
// identity and those without (a relay's players) take turns at these checks apart, so a guesser
// replaying with a clientToken cannot take the checks of a player who sends none.
import { createHmac, randomBytes } from 'node:crypto';
import { digestToken } from '../crypto/token.ts';
import {
  FORGET_FAILURES_AFTER_MS,
  FREE_LOGIN_FAILURES,
  MAX_REMEMBERED_RETRIES,
  MAX_THROTTLED_CHECK_MS,
  NAME_FAILURE_CEILING,
  THROTTLE_BASE_MS,
  THROTTLE_MAX_MS,
  THROTTLED_CHECK_MS,
} from '../limits.ts';
import type { Standing } from '../crypto/hash-pool.ts';
import type { LoginFailures } from '../store/store.ts';
import type { Context } from './context.ts';
import { ServiceError } from './errors.ts';

/**
 * Who a login comes from. `id` counts its failures apart from other clients': a direct caller's
 * address, or the clientToken a relay forwards (a launcher that logged in to the name before is
 * counted by its `device` instead, from any caller: see admitLoginAttempt). `shared` when it
 * stands for many players (a relay that forwards no clientToken): its throttle is then others'
 * doing, as the ceiling is.
 */
export interface LoginClient {
  id: string;
  shared: boolean;
  /** A direct caller's address, which shares the hash pool with other direct callers; none for a relay. */
  address?: string;
  /** The launcher, by the clientToken it sent (as `token DIGEST`), from any caller: what a token issued to it is kept with. */
  device?: string;
  /** The device the token is issued to, when not `device` (the account page names a new one at each sign-in). */
  issueTo?: string;
}

/** A login from a caller the service is not told of (the CLI, tests): one client. */
export const UNNAMED_CLIENT: LoginClient = { id: '', shared: false };

/** When the next attempt is allowed (0: at once), after `free` failures that go unthrottled. */
export function throttledUntil({ failures, lastAt }: LoginFailures, free = FREE_LOGIN_FAILURES): number {
  if (failures < free) return 0;
  return lastAt + Math.min(THROTTLE_BASE_MS * 2 ** (failures - free), THROTTLE_MAX_MS);
}

/** The store's keys of a login's counts: the name's, the name's from this client, and the checks of the name held back by others (for clients with an identity, or without). */
const keysOf = (name: string, client: LoginClient): string[] =>
  [name, `${name} ${client.id}`, `${name} ${client.shared ? '!' : '?'}`].map((key) => key.toLowerCase());

/** A launcher (`token DIGEST`) as the store keeps it with the tokens issued to it (see Store.hasClient); none for a login that names none. */
export const deviceDigest = (device: string | undefined): string | undefined => (device === undefined ? undefined : digestToken(device));

/** The key of the digests in Context.refusedRetries; it never leaves this process. */
const retryKey = randomBytes(32);

/**
 * Counts the attempt as a failure of the name and of its client before any hash is computed, in
 * one atomic step of the store, so that guesses sent in parallel (or to another process on the
 * same database) already see it; a success clears it. Refuses a throttled attempt (429). Resolves
 * to the attempt's standing in a full hash pool (a known client's first, then a name's that few
 * have failed) and the client its failures were counted for, which uncounting or clearing them
 * names: a known launcher itself, whatever its address.
 */
export async function admitLoginAttempt(
  ctx: Context,
  name: string,
  password: string,
  from: LoginClient,
): Promise<{ standing: Standing; counted: LoginClient }> {
  const now = ctx.now();
  const retry = createHmac('sha256', retryKey).update(`${name.toLowerCase()}\n${password}`).digest('base64');
  const device = deviceDigest(from.device);
  const known = device !== undefined && (await ctx.store.hasClient(name, device, now));
  const client = known ? { ...from, id: from.device! } : from;
  let wait = 0;
  let standing: Standing = known ? 2 : 1;
  await ctx.store.updateLoginFailures(keysOf(name, client), now - FORGET_FAILURES_AFTER_MS, ([all, mine, checks]) => {
    if (!known && all.failures >= FREE_LOGIN_FAILURES) standing = 0;
    const own = client.shared ? 0 : throttledUntil(mine);
    const byOthers = known ? 0 : Math.max(throttledUntil(all, NAME_FAILURE_CEILING), client.shared ? throttledUntil(mine) : 0);
    // Each check of a held-back name since its last success doubles the interval: replayed guesses gain little.
    const interval = Math.min(THROTTLED_CHECK_MS * 2 ** checks.failures, MAX_THROTTLED_CHECK_MS);
    // A held-back name has a password checked only when this one was refused here before and no
    // check of the name ran within the interval; any other attempt on it is refused.
    const refused = !ctx.refusedRetries.has(retry) || checks.lastAt > now - interval;
    if (own > now) {
      wait = own - now;
    } else if (byOthers > now && refused) {
      wait = Math.min(byOthers - now, THROTTLED_CHECK_MS);
    } else {
      return [all, mine, byOthers > now ? checks : undefined].map((f) => f && { failures: f.failures + 1, lastAt: now });
    }
    return [undefined, undefined, undefined];
  });
  if (wait === 0) return { standing, counted: client };
  ctx.refusedRetries.delete(retry);
  ctx.refusedRetries.add(retry);
  if (ctx.refusedRetries.size > MAX_REMEMBERED_RETRIES) ctx.refusedRetries.delete(ctx.refusedRetries.values().next().value!);
  const seconds = Math.ceil(wait / 1000);
  throw new ServiceError('throttled', `Too many failed logins for this name; try again in ${seconds} s`, seconds, 'throttle');
}

/** Takes back a counted attempt that was never checked, so it reveals nothing and counts for nothing (a held-back name's checks stay counted). */
export async function uncountLoginAttempt(ctx: Context, name: string, client: LoginClient): Promise<void> {
  const less = (f: LoginFailures): LoginFailures => ({ ...f, failures: Math.max(0, f.failures - 1) });
  const forgetBefore = ctx.now() - FORGET_FAILURES_AFTER_MS;
  await ctx.store.updateLoginFailures(keysOf(name, client), forgetBefore, (counts) => counts.map((f, i) => (i < 2 ? less(f) : undefined)));
}

/**
 * Forgets the failures of the name, of this client and the name's checks of both kinds (the
 * password was right), and those of the launcher it sent, counted while it was known (it may be
 * again, once this login's token is issued to it); other clients' stay.
 */
export async function clearLoginFailures(ctx: Context, name: string, client: LoginClient): Promise<void> {
  const launcher = client.device !== undefined && client.device !== client.id ? [`${name} ${client.device}`.toLowerCase()] : [];
  const keys = [...keysOf(name, client), `${name} ${client.shared ? '?' : '!'}`.toLowerCase(), ...launcher];
  const cleared = (counts: LoginFailures[]): LoginFailures[] => counts.map(() => ({ failures: 0, lastAt: 0 }));
  await ctx.store.updateLoginFailures(keys, ctx.now() - FORGET_FAILURES_AFTER_MS, cleared);
}
