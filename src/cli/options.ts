// The server's options: each with its flag, environment variable, default and check.
import { createForeignHashes } from '../import/plug.ts';
import { quote } from '../service/errors.ts';
import { FAILED_LOGIN_FLOOR_MS, MAX_PASSWORD_BYTES, MAX_TTL_SECONDS, NAME_PATTERN } from '../limits.ts';
import {
  DEFAULT_DB,
  DEFAULT_HOST,
  DEFAULT_JOIN_TTL_SECONDS,
  DEFAULT_MAX_PROFILES,
  DEFAULT_PORT,
  DEFAULT_TOKEN_TTL_SECONDS,
  DEFAULT_HASH_CONCURRENCY,
  DEFAULT_HASH_QUEUE,
  DEFAULT_HEADERS_TIMEOUT_SECONDS,
  DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS,
  DEFAULT_MAX_CONNECTIONS,
  DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
  DEFAULT_ADDRESS_LOGIN_LIMIT,
  LOOPBACK,
  DEFAULT_REQUEST_TIMEOUT_SECONDS,
  DEFAULT_SHUTDOWN_TIMEOUT_SECONDS,
  DEFAULT_MIN_PASSWORD_CHARS,
  DEFAULT_REGISTRATIONS_PER_ADDRESS,
  DEFAULT_REGISTRATIONS_PER_HOUR,
  DEFAULT_RESET_TTL_SECONDS,
  MAX_RESET_TTL_SECONDS,
  MIN_API_KEY_CHARS,
  MAX_PROFILES_CAP,
  MAX_WORKERS,
} from './defaults.ts';
import type { ServiceOptions, Variant } from '../service/context.ts';
import { MEMORY_DB } from '../memory/store.ts';
import { normalizeBasePath } from '../http/router.ts';
import { addressList } from '../http/client-address.ts';
import type { Synchronous } from '../store/sqlite.ts';
import { UsageError, type OptionTypes } from './usage.ts';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '../ops/log.ts';
import { maskDbUrl } from '../postgres/url.ts';
import { MAX_SERVER_NAME_CHARS } from '../account/page.ts';

export interface ServeConfig {
  host: string;
  port: number;
  db: string;
  basePath: string;
  variant: Variant;
  joinTtl: number;
  tokenTtl: number;
  maxProfiles: number;
  hashConcurrency: number;
  hashQueue: number;
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
  /** '' when callers need no key. */
  apiKey: string;
  synchronous: Synchronous;
  addressLoginLimit: number;
  /** '' when textures are not hosted for the public; no trailing slash. */
  publicUrl: string;
  hdTextures: boolean;
  /** '' when the admin API is off. */
  adminToken: string;
  metrics: boolean;
  logLevel: LogLevel;
  /** auto: pretty when standard output is a terminal, else json. */
  logFormat: LogFormat;
  shutdownTimeout: number;
  workers: number;
  /** Shortest new password, in code points. */
  minPasswordLength: number;
  /** Accept external texture URLs over plain http:// too. */
  allowHttpTextures: boolean;
  /** Proxies (addresses, CIDR ranges, comma-separated) whose X-Forwarded-For gives the client's address; '' none. */
  trustProxy: string;
  /** Relays (addresses, CIDR ranges, comma-separated): per-address rules never apply to them; '' none. */
  relay: string;
  /** Serves the account page and its API under {base}/account. */
  accountPage: boolean;
  /** Players (names, comma-separated, any case) who may use the admin page at {base}/admin/ (with --account-page); '' none. */
  admins: string;
  /** The server's name in the account page's title and heading; '' none. */
  serverName: string;
  /** Who may create an account on the page: no one, holders of an invite code, anyone. */
  registration: 'off' | 'invite' | 'open';
  /** The UUID a player who signs up gets. */
  registrationUuid: 'random' | 'offline';
  registrationsPerAddress: number;
  registrationsPerHour: number;
  /** How long a password-reset link stays valid, in seconds. */
  resetTtl: number;
  /** Serves the Yggdrasil API (authlib-injector's) under {base}/yggdrasil/. */
  yggdrasil: boolean;
  /** A PEM file with the Yggdrasil API's signing key; '' keeps one in the database. */
  yggdrasilKey: string;
}

interface OptionSpec {
  key: keyof ServeConfig;
  flag: string;
  arg: string;
  fallback: string;
  help: string;
  /** Never printed: --help shows no value of it. */
  secret?: boolean;
  /** A flag without a value (--hd-textures); its environment variable takes true/false, 1/0, yes/no, on/off (any case), a config file true/false. */
  boolean?: boolean;
  /** A flag that may be given without its value, which then means this (--trust-proxy); a config file may give true/false. */
  bare?: string;
  /** A whole number: a config file gives it as a JSON number. */
  number?: boolean;
  /** The value, or a reason it is refused ("must be ..."). */
  parse: (text: string) => string | number | boolean | { refused: string };
}

const text = (t: string): string | { refused: string } => (t === '' ? { refused: 'must not be empty' } : t);

const integer = (min: number, max: number) => ({
  number: true,
  parse: (t: string): number | { refused: string } =>
    /^\d+$/.test(t) && Number(t) >= min && Number(t) <= max ? Number(t) : { refused: `must be a whole number from ${min} to ${max}` },
});

// The forms environment files and service managers commonly use for a switch, in any case.
const TRUE_WORDS = ['true', '1', 'yes', 'on'];
const FALSE_WORDS = ['false', '0', 'no', 'off'];

/** true or false for one of the usual words, else undefined. */
const switchWord = (t: string): boolean | undefined => (TRUE_WORDS.includes(t.toLowerCase()) ? true : FALSE_WORDS.includes(t.toLowerCase()) ? false : undefined);

const flag = {
  boolean: true,
  parse: (t: string): boolean | { refused: string } => (t === '' ? false : (switchWord(t) ?? { refused: 'must be true or false (or 1/0, yes/no, on/off)' })),
};

/** Text a person reads on one line (no newline or other control character, no lone surrogate), trimmed, at most `max` code points. */
const line =
  (max: number) =>
  (t: string): string | { refused: string } =>
    t.isWellFormed() && !/\p{Cc}/u.test(t) && [...t.trim()].length <= max ? t.trim() : { refused: `must be one line of at most ${max} characters` };

/** A list of IP addresses and CIDR ranges, or '' for none. */
const addresses = (t: string): string | { refused: string } => {
  try {
    addressList(t);
    return t.split(',').map((e) => e.trim()).filter((e) => e !== '').join(',');
  } catch (err) {
    return { refused: `must be IP addresses or CIDR ranges, comma-separated: ${(err as Error).message}` };
  }
};

/** Player names, comma-separated (spaces around them dropped), or '' for none. */
const playerNames = (t: string): string | { refused: string } => {
  const names = t.split(',').map((e) => e.trim()).filter((e) => e !== '');
  return names.every((n) => NAME_PATTERN.test(n)) ? names.join(',') : { refused: 'must be player names (3 to 16 letters, digits or _), comma-separated' };
};

const oneOf =
  (...allowed: string[]) =>
  (t: string): string | { refused: string } =>
    allowed.includes(t) ? t : { refused: `must be ${allowed.slice(0, -1).join(', ')} or ${allowed.at(-1)}` };

/** A segment of a base path: what RFC 3986 lets a path segment hold as it is, or %-escaped, but ";" and ",". */
const BASE_PATH_SEGMENT = /^(?:[A-Za-z0-9._~!$&'()*+=:@-]|%[0-9A-Fa-f]{2})+$/;

/**
 * A base path: segments a request's path can hold as written, between single slashes (a
 * leading or trailing one is dropped), none of them only dots. It goes into every route and into
 * the account page's cookie Path, where a ";" or "," would add an attribute of its own, and a
 * space, "?", "#", "\\" or "//" (which proxies merge) would name a path no request matches.
 */
function basePath(t: string): string | { refused: string } {
  const trimmed = t.replace(/^\/+|\/+$/g, '');
  const segments = trimmed === '' ? [] : trimmed.split('/');
  const ok = segments.every((s) => BASE_PATH_SEGMENT.test(s) && !/^\.+$/.test(s));
  return ok ? t : { refused: 'must be a URL path, such as /mc: segments between single slashes, without ; , spaces, ? or #' };
}

export const SERVE_OPTIONS: OptionSpec[] = [
  { key: 'host', flag: 'host', arg: 'HOST', fallback: DEFAULT_HOST, help: 'address to listen on (loopback: only this host can call it); another without --api-key starts with a warning; under systemd socket activation (LISTEN_FDS) the socket decides instead', parse: text },
  { key: 'port', flag: 'port', arg: 'N', fallback: String(DEFAULT_PORT), help: 'port to listen on (0: any free port); under systemd socket activation the socket decides instead', ...integer(0, 65535) },
  { key: 'db', flag: 'db', arg: 'PATH', fallback: DEFAULT_DB, help: 'SQLite file, created if missing; :memory: keeps everything in memory; postgres://USER@HOST:PORT/DB (libpq URL forms, several hosts with target_session_attrs=read-write, sslmode): a PostgreSQL database, with the driver installed (npm install postgres@3) and the password in the URL, PGPASSWORD or the file MCAUTH_DB_PASSWORD_FILE names', parse: text },
  { key: 'basePath', flag: 'base-path', arg: 'PATH', fallback: '', help: 'prefix of every endpoint, such as /mc (no ; , spaces, ? or #)', parse: basePath },
  {
    key: 'variant',
    flag: 'variant',
    arg: 'base|extended',
    fallback: 'extended',
    help: 'base leaves isAlex, skinUrl and capeUrl out of every answer',
    parse: oneOf('base', 'extended'),
  },
  { key: 'joinTtl', flag: 'join-ttl', arg: 'SECONDS', fallback: String(DEFAULT_JOIN_TTL_SECONDS), help: 'how long a join stays valid for /hasJoined', ...integer(1, MAX_TTL_SECONDS) },
  { key: 'tokenTtl', flag: 'token-ttl', arg: 'SECONDS', fallback: String(DEFAULT_TOKEN_TTL_SECONDS), help: 'how long an access token stays valid', ...integer(1, MAX_TTL_SECONDS) },
  { key: 'maxProfiles', flag: 'max-profiles', arg: 'N', fallback: String(DEFAULT_MAX_PROFILES), help: 'most names one /profiles call looks up (the first N as sent)', ...integer(1, MAX_PROFILES_CAP) },
  {
    key: 'apiKey',
    flag: 'api-key',
    arg: 'KEY',
    fallback: '',
    secret: true,
    help: `a secret every caller must send (Authorization: Bearer KEY, or ?key=KEY); at least ${MIN_API_KEY_CHARS} of A-Z a-z 0-9 . _ ~ -`,
    // URL-safe characters only: the key travels in a query string, where + & % would change it.
    parse: (t) => (t === '' || API_KEY_PATTERN.test(t) ? t : { refused: `must be at least ${MIN_API_KEY_CHARS} of A-Z a-z 0-9 . _ ~ -` }),
  },
  {
    key: 'addressLoginLimit',
    flag: 'address-login-limit',
    arg: 'N',
    fallback: String(DEFAULT_ADDRESS_LOGIN_LIMIT),
    help: 'logins (/auth and the account page) one direct client address may make a minute; relays are exempt; 0: no limit',
    ...integer(0, 1_000_000),
  },
  {
    key: 'synchronous',
    flag: 'synchronous',
    arg: 'normal|full',
    fallback: 'normal',
    help: 'normal: a crash of the process loses nothing; full: power loss neither, at one fsync a write',
    parse: oneOf('normal', 'full'),
  },
  {
    key: 'publicUrl',
    flag: 'public-url',
    arg: 'URL',
    fallback: '',
    help: 'the address players\' games reach this service at (such as https://auth.example.org); hosted skin and cape URLs start with it; without it, answers leave hosted ones out (the start warns when there are some)',
    parse: (t) => {
      if (t === '') return t;
      const url = URL.canParse(t) ? new URL(t) : undefined;
      const ok = (url?.protocol === 'http:' || url?.protocol === 'https:') && url.search === '' && url.hash === '';
      return ok ? t.replace(/\/+$/, '') : { refused: 'must be an http:// or https:// address without a query' };
    },
  },
  {
    key: 'allowHttpTextures',
    flag: 'allow-http-textures',
    arg: '',
    fallback: 'false',
    help: 'accept external skin and cape URLs over plain http:// (by default only https://)',
    ...flag,
  },
  {
    key: 'hdTextures',
    flag: 'hd-textures',
    arg: '',
    fallback: 'false',
    help: 'accept skins and capes at whole multiples of the game\'s sizes (HD packs)',
    ...flag,
  },
  {
    key: 'adminToken',
    flag: 'admin-token',
    arg: 'TOKEN',
    fallback: '',
    secret: true,
    help: `turns on the admin API; requests carry Authorization: Bearer TOKEN; at least ${MIN_API_KEY_CHARS} printable ASCII characters, no spaces`,
    // Printable ASCII: headers arrive as latin1, so another character could never match.
    parse: (t) => (t === '' || ADMIN_TOKEN_PATTERN.test(t) ? t : { refused: `must be at least ${MIN_API_KEY_CHARS} printable ASCII characters, no spaces` }),
  },
  { key: 'hashConcurrency', flag: 'hash-concurrency', arg: 'N', fallback: String(DEFAULT_HASH_CONCURRENCY), help: 'password hashes computed at once', ...integer(1, 64) },
  { key: 'hashQueue', flag: 'hash-queue', arg: 'N', fallback: String(DEFAULT_HASH_QUEUE), help: 'logins that may wait for a hash; more get 503 without waiting in line (held a second, so a flood cannot spin on it)', ...integer(0, 10_000) },
  { key: 'headersTimeout', flag: 'headers-timeout', arg: 'SECONDS', fallback: String(DEFAULT_HEADERS_TIMEOUT_SECONDS), help: 'time a client has to send its headers', ...integer(1, 3600) },
  { key: 'requestTimeout', flag: 'request-timeout', arg: 'SECONDS', fallback: String(DEFAULT_REQUEST_TIMEOUT_SECONDS), help: 'time a client has to send its whole request', ...integer(1, 3600) },
  { key: 'keepAliveTimeout', flag: 'keep-alive-timeout', arg: 'SECONDS', fallback: String(DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS), help: 'idle time before a kept-alive connection is closed', ...integer(1, 3600) },
  { key: 'maxConnections', flag: 'max-connections', arg: 'N', fallback: String(DEFAULT_MAX_CONNECTIONS), help: 'open connections of direct callers (each worker), and as many again of relays, trusted proxies and callers with the API key; at the bound, the connection of the address holding the most that has sent nothing (else is idle) is closed, and one with nothing to close is answered 503 (false on /join)', ...integer(1, 1_000_000) },
  {
    key: 'maxConnectionsPerAddress',
    flag: 'max-connections-per-address',
    arg: 'N',
    fallback: String(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS),
    help: 'open connections one direct client address may hold, all workers together; relays, trusted proxies and requests with --api-key are exempt',
    ...integer(1, 1_000_000),
  },
  { key: 'metrics', flag: 'metrics', arg: '', fallback: 'false', help: 'serves GET {base}/metrics in Prometheus\' format (behind --api-key when that is set)', ...flag },
  {
    key: 'minPasswordLength',
    flag: 'min-password-length',
    arg: 'N',
    fallback: String(DEFAULT_MIN_PASSWORD_CHARS),
    help: `shortest new password, 1 to ${MAX_PASSWORD_BYTES} characters (code points); existing shorter ones still log in`,
    ...integer(1, MAX_PASSWORD_BYTES),
  },
  {
    key: 'trustProxy',
    flag: 'trust-proxy',
    arg: '[LIST]',
    fallback: '',
    bare: 'true',
    help: `proxies (IP addresses, CIDR ranges, comma-separated) whose requests take the client address (logs, limits) from the last X-Forwarded-For entry; without a list, or true: loopback (${LOOPBACK}); false: none`,
    parse: (t) => (switchWord(t) === true ? LOOPBACK : switchWord(t) === false ? '' : addresses(t)),
  },
  {
    key: 'relay',
    flag: 'relay',
    arg: 'LIST',
    fallback: LOOPBACK,
    help: 'relays (IP addresses, CIDR ranges, comma-separated; \'\' none), such as a LauncherServer calling for all its players: per-address limits never apply to them (nor to a caller with --api-key); a trusted proxy is never one',
    parse: addresses,
  },
  { key: 'accountPage', flag: 'account-page', arg: '', fallback: 'false', help: 'serves the account page, GET {base}/account, and its API under {base}/account/ (no API key needed there)', ...flag },
  {
    key: 'admins',
    flag: 'admins',
    arg: 'NAMES',
    fallback: '',
    help: 'players (names, comma-separated, any case) who sign in to the admin page, GET {base}/admin/, with their own password; needs --account-page',
    parse: playerNames,
  },
  {
    key: 'yggdrasil',
    flag: 'yggdrasil',
    arg: '',
    fallback: 'false',
    help: "serves the Yggdrasil API of authlib-injector under {base}/yggdrasil/, for HMCL, PCL, PrismLauncher and game servers with authlib-injector (no API key needed there)",
    ...flag,
  },
  {
    key: 'yggdrasilKey',
    flag: 'yggdrasil-key',
    arg: 'FILE',
    fallback: '',
    help: 'a PEM file with the RSA private key the Yggdrasil API signs with (one moved from another Yggdrasil server); without it, one made at the first start is kept in the database',
    parse: (t) => t,
  },
  {
    key: 'serverName',
    flag: 'server-name',
    arg: 'NAME',
    fallback: '',
    help: `the server's name, shown in the account page's title and heading ("Your account on NAME"; without it, "Your account"); one line of at most ${MAX_SERVER_NAME_CHARS} characters`,
    parse: line(MAX_SERVER_NAME_CHARS),
  },
  {
    key: 'registration',
    flag: 'registration',
    arg: 'off|invite|open',
    fallback: 'off',
    help: 'who may create an account on the account page: no one, holders of an invite code (invite create), or anyone',
    parse: oneOf('off', 'invite', 'open'),
  },
  {
    key: 'registrationUuid',
    flag: 'registration-uuid',
    arg: 'random|offline',
    fallback: 'random',
    help: 'the UUID a player who signs up gets: a random one, or the one offline-mode servers derive from the name',
    parse: oneOf('random', 'offline'),
  },
  {
    key: 'registrationsPerAddress',
    flag: 'registrations-per-address',
    arg: 'N',
    fallback: String(DEFAULT_REGISTRATIONS_PER_ADDRESS),
    help: 'accounts one client address may create an hour on the account page',
    ...integer(1, 1_000_000),
  },
  {
    key: 'registrationsPerHour',
    flag: 'registrations-per-hour',
    arg: 'N',
    fallback: String(DEFAULT_REGISTRATIONS_PER_HOUR),
    help: 'accounts all addresses together may create an hour on the account page',
    ...integer(1, 1_000_000),
  },
  {
    key: 'resetTtl',
    flag: 'reset-ttl',
    arg: 'SECONDS',
    fallback: String(DEFAULT_RESET_TTL_SECONDS),
    help: 'how long a password-reset link stays valid (user reset-link reads MCAUTH_RESET_TTL or the config file)',
    ...integer(1, MAX_RESET_TTL_SECONDS),
  },
  { key: 'logLevel', flag: 'log-level', arg: LOG_LEVELS.join('|'), fallback: 'info', help: 'info: a line a request; debug: also the settings at start; error: failures only', parse: oneOf(...LOG_LEVELS) },
  { key: 'logFormat', flag: 'log-format', arg: LOG_FORMATS.join('|'), fallback: 'auto', help: 'json: a JSON line an event; pretty: a readable line; auto: pretty on a terminal, else json', parse: oneOf(...LOG_FORMATS) },
  {
    key: 'workers',
    flag: 'workers',
    arg: 'N',
    fallback: '1',
    help: 'server processes sharing the port and the database (node:cluster; Node only), such as one a core; SIGHUP replaces them one at a time with the file on disk',
    ...integer(1, MAX_WORKERS),
  },
  {
    key: 'shutdownTimeout',
    flag: 'shutdown-timeout',
    arg: 'SECONDS',
    fallback: String(DEFAULT_SHUTDOWN_TIMEOUT_SECONDS),
    help: 'on SIGTERM or SIGINT, how long requests in flight may take before their connections are cut',
    ...integer(0, 3600),
  },
];

const ADMIN_TOKEN_PATTERN = new RegExp(`^[\\x21-\\x7e]{${MIN_API_KEY_CHARS},}$`);
const API_KEY_PATTERN = new RegExp(`^[A-Za-z0-9._~-]{${MIN_API_KEY_CHARS},}$`);

export const envName = (flag: string): string => `MCAUTH_${flag.toUpperCase().replaceAll('-', '_')}`;

/** The command line with a bare flag that may go without its value (--trust-proxy, then another flag or nothing) given the value it then means. */
export const withBareValues = (argv: string[]): string[] =>
  argv.map((arg, i) => {
    const option = SERVE_OPTIONS.find((o) => o.bare !== undefined && arg === `--${o.flag}`);
    return option && (argv[i + 1] ?? '-').startsWith('-') ? `${arg}=${option.bare}` : arg;
  });

export const SERVE_OPTION_TYPES: OptionTypes = Object.fromEntries(
  SERVE_OPTIONS.map((o) => [o.flag, { type: o.boolean ? ('boolean' as const) : ('string' as const) }]),
);

/** A config file's settings (keys are options' camelCase names), and the file's path for messages. */
export interface ConfigFile {
  path: string;
  values: Record<string, unknown>;
}

const NO_FILE: ConfigFile = { path: '', values: {} };

/** A config file's value as option text; JSON types must match the option's (a port is a number). */
function fromFile(option: OptionSpec, value: unknown, file: ConfigFile): string {
  const want = option.boolean ? 'boolean' : option.number ? 'number' : 'string';
  if (option.bare !== undefined && typeof value === 'boolean') return String(value);
  if (typeof value !== want || (want === 'number' && !Number.isInteger(value))) {
    throw new UsageError(`${file.path}: "${option.key}" must be a JSON ${want === 'number' ? 'whole number' : want}`);
  }
  return String(value);
}

/**
 * The settings the `user` and `invite` commands use (the password policy, texture rules, where
 * links point, how long a reset link lives): the only variables they read, so Deno's
 * --allow-env for them stays short.
 */
export const USER_SETTINGS: (keyof ServeConfig)[] = ['minPasswordLength', 'allowHttpTextures', 'hdTextures', 'publicUrl', 'basePath', 'resetTtl'];

/**
 * Each option from its flag, else its environment variable, else the config file, else its
 * default. With `only`, the other options take their defaults without their variables being read.
 */
export function resolveServeConfig(
  flags: Record<string, unknown>,
  env: Record<string, string | undefined>,
  file: ConfigFile = NO_FILE,
  only?: (keyof ServeConfig)[],
): ServeConfig {
  const config: Record<string, unknown> = {};
  const check = (option: OptionSpec, raw: string, source: string): unknown => {
    const value = option.parse(raw);
    if (typeof value === 'object') throw new UsageError(`${source} ${value.refused}${option.secret ? '' : `, got ${quote(raw)}`}`);
    return value;
  };
  for (const option of SERVE_OPTIONS) {
    const flag = flags[option.flag];
    // An empty variable is a value (an empty --base-path), except for a secret: a blank line in
    // an environment file must not switch off the key the config file sets.
    const read = only === undefined || only.includes(option.key);
    const fromEnv = !read || (option.secret && env[envName(option.flag)] === '') ? undefined : env[envName(option.flag)];
    // Every value in the file is checked, also one a flag overrides: the file must be right on its own.
    const inFile = file.values[option.key] === undefined ? undefined : check(option, fromFile(option, file.values[option.key], file), `${file.path}: "${option.key}"`);
    config[option.key] =
      typeof flag === 'string' || typeof flag === 'boolean'
        ? check(option, String(flag), `--${option.flag}`)
        : fromEnv !== undefined
          ? check(option, fromEnv, envName(option.flag))
          : (inFile ?? check(option, option.fallback, `--${option.flag}`));
  }
  // Game servers hold the API key: it must not also open the admin API.
  if (config.adminToken !== '' && config.adminToken === config.apiKey) {
    throw new UsageError('--admin-token must differ from --api-key');
  }
  // Node refuses a header timeout longer than the request timeout; say so in the options' words.
  if ((config.headersTimeout as number) > (config.requestTimeout as number)) {
    throw new UsageError('--headers-timeout must not be longer than --request-timeout');
  }
  return config as unknown as ServeConfig;
}

/** The settings with every secret that is set shown as ********: for --print-config and the log. */
export function maskSecrets(config: ServeConfig): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...config };
  for (const option of SERVE_OPTIONS) if (option.secret && shown[option.key] !== '') shown[option.key] = '********';
  shown.db = maskDbUrl(config.db);
  return shown;
}

/** The options of the commands that work on a database file (user, backup): where it is. */
export const DB_OPTIONS = { db: { type: 'string' }, config: { type: 'string' } } as const;

/** The db path for the user and backup commands: --db, else MCAUTH_DB, else the config file, else the default. */
export function resolveDb(flag: unknown, env: Record<string, string | undefined>, file: ConfigFile = NO_FILE): string {
  const inFile = file.values.db;
  const fromEnv = env[envName('db')];
  const [db, source] =
    typeof flag === 'string'
      ? [flag, '--db']
      : fromEnv !== undefined
        ? [fromEnv, envName('db')]
        : inFile !== undefined
          ? [fromFile(SERVE_OPTIONS.find((o) => o.key === 'db')!, inFile, file), `${file.path}: "db"`]
          : [DEFAULT_DB, '--db'];
  if (db === '') throw new UsageError(`${source} must not be empty`);
  if (db === MEMORY_DB) throw new UsageError('this command needs a database file: :memory: is gone when the command ends');
  return db;
}

/** The service's settings as the defaults give them (for tests and embedders). */
export function defaultServiceOptions(): ServiceOptions {
  return toServiceOptions(resolveServeConfig({}, {}));
}

export function toServiceOptions(config: ServeConfig): ServiceOptions {
  const { variant, joinTtl, tokenTtl, maxProfiles, hashConcurrency, hashQueue, minPasswordLength, allowHttpTextures, resetTtl } = config;
  const hostedBase = config.publicUrl === '' ? undefined : `${config.publicUrl}${normalizeBasePath(config.basePath)}/textures/`;
  return {
    variant,
    joinTtlSeconds: joinTtl,
    tokenTtlSeconds: tokenTtl,
    maxProfiles,
    hashConcurrency,
    hashQueue,
    failedLoginFloorMs: FAILED_LOGIN_FLOOR_MS,
    hostedBase,
    minPasswordLength,
    allowHttpTextures,
    resetTtlSeconds: resetTtl,
    // Imported players' hashes: inert until one of them logs in.
    foreignHashes: createForeignHashes(hashConcurrency),
  };
}

export function optionsHelp(): string {
  const rows = SERVE_OPTIONS.map((o) => {
    const def = o.fallback === '' ? 'none' : o.fallback;
    return `  --${o.flag}${o.arg ? ` ${o.arg}` : ''}\n      ${o.help}\n      env ${envName(o.flag)}, default ${def}`;
  });
  return rows.join('\n');
}
