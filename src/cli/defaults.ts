// The command line's defaults, and the bounds of its flags' values that only it checks: what a
// server runs with when its owner sets nothing. The core's own limits (among them bounds the
// core checks too, such as MAX_TTL_SECONDS) are in src/limits.ts.

/** Shortest new password by default (--min-password-length), in code points: NIST SP 800-63B's floor for a password its user chose. */
export const DEFAULT_MIN_PASSWORD_CHARS = 8;

/** Password hashes computed at once: libuv's default thread pool has 4 threads. */
export const DEFAULT_HASH_CONCURRENCY = 4;

/** Logins that may wait for a hash slot; more get 503 without waiting in line. At 16 MiB a hash, memory stays bounded. */
export const DEFAULT_HASH_QUEUE = 64;

/** A client must send its headers within this (slowloris). */
export const DEFAULT_HEADERS_TIMEOUT_SECONDS = 10;

/** A client must send its whole request within this (a stalled body). */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;

/** An idle keep-alive connection is closed after this. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS = 5;

/** Open connections served; the requests of more are answered 503 (false on /join) and their connections closed. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/**
 * Open connections one client address may hold (--max-connections-per-address); relays and
 * trusted proxies are exempt. A browser opens 6 a host, a household or LAN party a few dozen;
 * 64 keeps one address from taking more than a sixteenth of --max-connections.
 */
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 64;

/** Shortest --api-key accepted: a key that can be guessed protects nothing. */
export const MIN_API_KEY_CHARS = 16;

export const DEFAULT_PORT = 8080;

/**
 * This host's addresses: the relays by default (--relay; a LauncherServer usually runs beside
 * this service, often without the API key), and the proxies --trust-proxy means without a list
 * (its old boolean form: a proxy on this host).
 */
export const LOOPBACK = '127.0.0.1,::1';

/** Loopback by default: only this host can call the service until an admin decides otherwise. */
export const DEFAULT_HOST = '127.0.0.1';

export const DEFAULT_DB = 'mcauth.db';

/** A client joins and the game server asks hasJoined within seconds. */
export const DEFAULT_JOIN_TTL_SECONDS = 30;

export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;

/** A LauncherServer sends at most 10 names; 100 leaves room for web cabinets. */
export const DEFAULT_MAX_PROFILES = 100;

/** Highest --max-profiles: enough for any caller, small enough to keep one query cheap. */
export const MAX_PROFILES_CAP = 10_000;

/** How long a stop waits for requests in flight before it cuts their connections and closes the store. */
export const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 10;

/** Most --workers: far beyond any core count this is meant for; each worker holds its own memory. */
export const MAX_WORKERS = 64;

/**
 * Logins one direct client address may make a minute (--address-login-limit): a LAN party of 30
 * behind one address, each mistyping a few times, stays well under it; a script guessing
 * passwords across many names is held to 2 a second. Relays are exempt.
 */
export const DEFAULT_ADDRESS_LOGIN_LIMIT = 120;

/** A reset link lives an hour by default (--reset-ttl): a one-time link should be short-lived (OWASP's Forgot Password advice). */
export const DEFAULT_RESET_TTL_SECONDS = 60 * 60;

/** Longest --reset-ttl: a week; a link that lives longer is a second password. */
export const MAX_RESET_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Registrations one client address may make an hour (--registrations-per-address): a household, not a script. */
export const DEFAULT_REGISTRATIONS_PER_ADDRESS = 5;

/** Registrations an hour from all addresses (--registrations-per-hour): a flood of new players stops here whatever its addresses. */
export const DEFAULT_REGISTRATIONS_PER_HOUR = 60;
