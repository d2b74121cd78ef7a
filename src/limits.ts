// Every limit and default of the service, each with its reason, in one place.

/** The game's rule for player names: 3 to 16 of A-Z a-z 0-9 _. */
export const NAME_PATTERN = /^[A-Za-z0-9_]{3,16}$/;

/** Largest request body read; a login or join is a few hundred bytes, 100 names about 2 KiB. */
export const MAX_BODY_BYTES = 64 * 1024;

/** After a 413, how much more of the refused body is read and dropped so the client sees the answer. */
export const MAX_DRAIN_BYTES = 1024 * 1024;

/** Live tokens a player may hold (one a device); the oldest go first. */
export const MAX_TOKENS_PER_USER = 16;

export const DEFAULT_PORT = 8080;
/** Loopback by default: only this host can call the service until an admin decides otherwise. */
export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_DB = 'mcauth.db';
/** A client joins and the game server asks hasJoined within seconds. */
export const DEFAULT_JOIN_TTL_SECONDS = 30;
export const DEFAULT_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;
/** A LauncherServer sends at most 10 names; 100 leaves room for web cabinets. */
export const DEFAULT_MAX_PROFILES = 100;

/** Longest --join-ttl and --token-ttl: ten years. */
export const MAX_TTL_SECONDS = 10 * 365 * 24 * 60 * 60;

/** Highest --max-profiles: enough for any caller, small enough to keep one query cheap. */
export const MAX_PROFILES_CAP = 10_000;

/** How long a stop waits for requests in flight before it closes the store anyway. */
export const STOP_TIMEOUT_MS = 10_000;

/** How long a connection waits for a database lock held by another process (the CLI, a worker). */
export const BUSY_TIMEOUT_MS = 5000;
