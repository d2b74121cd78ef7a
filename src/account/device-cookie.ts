// The account page's device cookie (OWASP's Blocking Brute Force Attacks, "device cookies"): set
// after a successful sign-in, sent back only with the next sign-in. A browser that brings it is
// one a player signed in with before (src/service/throttle.ts: the page's live token was issued
// to it), so its sign-in is held by its own failures only, never by the name's
// ceiling that other people's guesses filled. It proves nothing by itself and opens nothing: it is
// no session, and a value the service never issued a token to is an unknown client like any. Each
// sign-in names a new device (src/account/api.ts), so a value planted in a browser never becomes
// one the player signed in with.
import type { IncomingMessage } from 'node:http';

const NAME = 'mcauth_device';
const VALUE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How long a browser keeps it: the longest browsers allow (400 days), past any --token-ttl but the longest; it names the browser only while a token issued to it lives. */
const MAX_AGE_SECONDS = 400 * 24 * 60 * 60;

/** The device the browser names with a well-formed cookie, if it sent one. */
export function sentDevice(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=', 2);
    if (name === NAME && value !== undefined && VALUE.test(value)) return value;
  }
  return undefined;
}

/**
 * The Set-Cookie header that keeps `device` in the browser: only for the sign-in path (`path`, the
 * page's API's), out of reach of scripts, never sent from another site, and only over HTTPS
 * (browsers count http://localhost as secure too).
 */
export const deviceCookie = (device: string, path: string): string =>
  `${NAME}=${device}; Path=${path}; Max-Age=${MAX_AGE_SECONDS}; HttpOnly; Secure; SameSite=Strict`;
