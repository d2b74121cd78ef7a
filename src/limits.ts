// Every limit of the core, each with its reason: bounds no flag changes. The command line's
// defaults and the bounds of its flags are in src/cli/defaults.ts.

/** The game's rule for player names: 3 to 16 of A-Z a-z 0-9 _. */
export const NAME_PATTERN = /^[A-Za-z0-9_]{3,16}$/;

/** Longest password accepted: refused before hashing, so a huge one costs no scrypt work. */
export const MAX_PASSWORD_BYTES = 256;
/** The game's server IDs are at most 41 characters (a signed SHA-1 in hex); room for other callers. */
export const MAX_SERVER_ID_CHARS = 64;
/**
 * The JSON API's tokens are 36 characters; the Yggdrasil API's carry their clientToken after 37
 * (at most 128 UTF-16 units, so 384 bytes of UTF-8, 512 characters of base64url).
 */
export const MAX_TOKEN_CHARS = 600;

/** JSON bodies here are at most two levels deep; anything deeper than this is refused unread. */
export const MAX_JSON_DEPTH = 8;
/** No field here is a number; a number literal longer than this (or beyond a double's range) is refused. */
export const MAX_JSON_NUMBER_CHARS = 32;

/** Failed logins of one name from one client that go unthrottled: room for a few typos. */
export const FREE_LOGIN_FAILURES = 5;
/**
 * Failed logins of one name from all clients together that go unthrottled: ten clients' free
 * tries, so only an attack spread over many clients reaches it, never a player's own typos.
 */
export const NAME_FAILURE_CEILING = 50;
/** How often a name held back by others' failures still has a password checked: a player retrying gets in within a retry or two. */
export const THROTTLED_CHECK_MS = 2500;
/** The longest wait between two such checks: each failed one doubles the wait, so replayed guesses get about one a minute. */
export const MAX_THROTTLED_CHECK_MS = 60 * 1000;
/** Passwords refused under throttle that are remembered (as keyed digests) to be checked on a retry; the oldest are forgotten first. */
export const MAX_REMEMBERED_RETRIES = 10_000;
/** The wait after the 5th failure; it doubles with every further one. */
export const THROTTLE_BASE_MS = 1000;
/** The longest wait, so that a guesser can never lock a player out for long. */
export const THROTTLE_MAX_MS = 15 * 60 * 1000;
/** A name with no failure for this long starts from zero again; its row is dropped. */
export const FORGET_FAILURES_AFTER_MS = 60 * 60 * 1000;

/**
 * No failed login (a wrong password, an unknown name) is answered sooner than this after its check
 * began: about the longest an imported hash may take here under its cost caps, so the time tells
 * no name from another, native, imported or unknown. It costs no CPU, and a right password none.
 */
export const FAILED_LOGIN_FLOOR_MS = 1000;
/**
 * Logins of one name that may wait while it is checked (a name is checked once at a time, and
 * its others hold no place in the pool); more get 503 without waiting. A player sends one or two.
 */
export const NAME_QUEUE = 8;

/**
 * How long a refusal by a per-address rule (the login budget, the connection cap) is held before
 * it is answered, its connection kept meanwhile. A flood that waits for its answers then gets
 * one a second on each connection its address may hold, instead of a refusal's worth of CPU as
 * fast as it can send; a client that heeds Retry-After never notices.
 */
export const HELD_REFUSAL_MS = 1000;

/** Longest reason given for a lock: one line a player reads at login. */
export const MAX_LOCK_REASON_CHARS = 200;

/** Longest external skin or cape URL: the common limit of browsers and CDNs; a game builds its textures property from it. */
export const MAX_TEXTURE_URL_CHARS = 2048;

/** Largest request body read; a login or join is a few hundred bytes, 100 names about 2 KiB. */
export const MAX_BODY_BYTES = 64 * 1024;
/**
 * The most one /profiles entry takes in a body: a 16-character name with every character
 * escaped (\u0041), its quotes, a comma and some spacing. A /profiles body is read up to
 * --max-profiles of them (100: about 10 KB); a longer one is refused in-band unread.
 */
export const MAX_PROFILES_ENTRY_BYTES = 100;
/**
 * Largest /join body read. A LauncherServer takes 100 KB from anyone and forwards it
 * re-serialized, which can grow it about 4.5 times (1e20 becomes 21 digits; an invalid UTF-8 byte
 * a 3-byte U+FFFD): about 450 KB. Past this the answer is the same in-band refusal as for any other.
 */
export const MAX_RELAYED_BODY_BYTES = 512 * 1024;

/**
 * After any refusal, how much more of the body is read and dropped so the client sees the answer;
 * past it the connection is cut. Four times the largest upload, so an upload a little over its
 * limit is drained whole and its 413 read, not lost to a cut connection.
 */
export const MAX_DRAIN_BYTES = 4 * 1024 * 1024;

/** Live tokens a player may hold (one a device); the oldest go first. */
export const MAX_TOKENS_PER_USER = 16;

/** Longest --join-ttl and --token-ttl: ten years. */
export const MAX_TTL_SECONDS = 10 * 365 * 24 * 60 * 60;

/** How long a connection waits for a database lock held by another process (the CLI, a worker). */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * SQLite's page cache a connection, in KiB (its default is 2,000): the pages the look-ups read
 * at 100,000 players (about 14 MiB) stay in it, where at the default a look-up of a random player
 * reads its leaves from the file again (a `pread` each, a third of the statement's time; 9 µs
 * against 3.4 at 16 MiB, no less at 64). Pages fill it as they are read: a small database takes
 * only its own size.
 */
export const SQLITE_CACHE_KIB = 16 * 1024;

/** Longest /auth clientToken (Yggdrasil's shape): launchers send 32 hex digits or a UUID, and it is echoed back, so it is bounded. */
export const MAX_CLIENT_TOKEN_CHARS = 128;

/** The longest player (a path's `who`) a log line carries: a name is 16, a dashed UUID 36. */
export const MAX_LOGGED_PLAYER_CHARS = 64;

