// The server's options: each with its flag, environment variable, default and check.
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
  DEFAULT_REQUEST_TIMEOUT_SECONDS,
  MIN_API_KEY_CHARS,
  MAX_PROFILES_CAP,
  MAX_TTL_SECONDS,
} from '../limits.ts';
import type { ServiceOptions, Variant } from '../service/context.ts';
import { MEMORY_DB } from '../store/open.ts';
import { normalizeBasePath } from '../http/router.ts';
import type { Synchronous } from '../store/sqlite.ts';
import { UsageError, type OptionTypes } from './usage.ts';

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
  /** '' when callers need no key. */
  apiKey: string;
  synchronous: Synchronous;
  addressLoginLimit: number;
  /** '' when textures are not hosted for the public; no trailing slash. */
  publicUrl: string;
  hdTextures: boolean;
  /** '' when the admin API is off. */
  adminToken: string;
}

interface OptionSpec {
  key: keyof ServeConfig;
  flag: string;
  arg: string;
  fallback: string;
  help: string;
  /** Never printed: --help shows no value of it. */
  secret?: boolean;
  /** A flag without a value (--hd-textures); its environment variable takes true/false/1/0. */
  boolean?: boolean;
  /** The value, or a reason it is refused ("must be ..."). */
  parse: (text: string) => string | number | boolean | { refused: string };
}

const text = (t: string): string | { refused: string } => (t === '' ? { refused: 'must not be empty' } : t);

const integer =
  (min: number, max: number) =>
  (t: string): number | { refused: string } =>
    /^\d+$/.test(t) && Number(t) >= min && Number(t) <= max
      ? Number(t)
      : { refused: `must be a whole number from ${min} to ${max}` };

export const SERVE_OPTIONS: OptionSpec[] = [
  { key: 'host', flag: 'host', arg: 'HOST', fallback: DEFAULT_HOST, help: 'address to listen on (loopback: only this host can call it)', parse: text },
  { key: 'port', flag: 'port', arg: 'N', fallback: String(DEFAULT_PORT), help: 'port to listen on (0: any free port)', parse: integer(0, 65535) },
  { key: 'db', flag: 'db', arg: 'PATH', fallback: DEFAULT_DB, help: 'SQLite file, created if missing; :memory: keeps everything in memory', parse: text },
  { key: 'basePath', flag: 'base-path', arg: 'PATH', fallback: '', help: 'prefix of every endpoint, such as /mc', parse: (t) => t },
  {
    key: 'variant',
    flag: 'variant',
    arg: 'base|extended',
    fallback: 'extended',
    help: 'base leaves isAlex, skinUrl and capeUrl out of every answer',
    parse: (t) => (t === 'base' || t === 'extended' ? t : { refused: 'must be base or extended' }),
  },
  { key: 'joinTtl', flag: 'join-ttl', arg: 'SECONDS', fallback: String(DEFAULT_JOIN_TTL_SECONDS), help: 'how long a join stays valid for /hasJoined', parse: integer(1, MAX_TTL_SECONDS) },
  { key: 'tokenTtl', flag: 'token-ttl', arg: 'SECONDS', fallback: String(DEFAULT_TOKEN_TTL_SECONDS), help: 'how long an access token stays valid', parse: integer(1, MAX_TTL_SECONDS) },
  { key: 'maxProfiles', flag: 'max-profiles', arg: 'N', fallback: String(DEFAULT_MAX_PROFILES), help: 'most names one /profiles call may send', parse: integer(1, MAX_PROFILES_CAP) },
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
    fallback: '0',
    help: '/auth calls one client address may make a minute; 0: no limit (every player behind one LauncherServer shares its address)',
    parse: integer(0, 1_000_000),
  },
  {
    key: 'synchronous',
    flag: 'synchronous',
    arg: 'normal|full',
    fallback: 'normal',
    help: 'normal: a crash of the process loses nothing; full: power loss neither, at one fsync a write',
    parse: (t) => (t === 'normal' || t === 'full' ? t : { refused: 'must be normal or full' }),
  },
  {
    key: 'publicUrl',
    flag: 'public-url',
    arg: 'URL',
    fallback: '',
    help: 'the address players\' games reach this service at (such as https://auth.example.org); hosted skin and cape URLs start with it',
    parse: (t) => {
      if (t === '') return t;
      const url = URL.canParse(t) ? new URL(t) : undefined;
      const ok = (url?.protocol === 'http:' || url?.protocol === 'https:') && url.search === '' && url.hash === '';
      return ok ? t.replace(/\/+$/, '') : { refused: 'must be an http:// or https:// address without a query' };
    },
  },
  {
    key: 'hdTextures',
    flag: 'hd-textures',
    arg: '',
    fallback: 'false',
    boolean: true,
    help: 'accept skins and capes at whole multiples of the game\'s sizes (HD packs)',
    parse: (t) => (['true', '1'].includes(t) ? true : ['false', '0', ''].includes(t) ? false : { refused: 'must be true or false' }),
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
  { key: 'hashConcurrency', flag: 'hash-concurrency', arg: 'N', fallback: String(DEFAULT_HASH_CONCURRENCY), help: 'password hashes computed at once', parse: integer(1, 64) },
  { key: 'hashQueue', flag: 'hash-queue', arg: 'N', fallback: String(DEFAULT_HASH_QUEUE), help: 'logins that may wait for a hash; more get 503 at once', parse: integer(0, 10_000) },
  { key: 'headersTimeout', flag: 'headers-timeout', arg: 'SECONDS', fallback: String(DEFAULT_HEADERS_TIMEOUT_SECONDS), help: 'time a client has to send its headers', parse: integer(1, 3600) },
  { key: 'requestTimeout', flag: 'request-timeout', arg: 'SECONDS', fallback: String(DEFAULT_REQUEST_TIMEOUT_SECONDS), help: 'time a client has to send its whole request', parse: integer(1, 3600) },
  { key: 'keepAliveTimeout', flag: 'keep-alive-timeout', arg: 'SECONDS', fallback: String(DEFAULT_KEEP_ALIVE_TIMEOUT_SECONDS), help: 'idle time before a kept-alive connection is closed', parse: integer(1, 3600) },
  { key: 'maxConnections', flag: 'max-connections', arg: 'N', fallback: String(DEFAULT_MAX_CONNECTIONS), help: 'open connections at most', parse: integer(1, 1_000_000) },
];

const ADMIN_TOKEN_PATTERN = new RegExp(`^[\\x21-\\x7e]{${MIN_API_KEY_CHARS},}$`);
const API_KEY_PATTERN = new RegExp(`^[A-Za-z0-9._~-]{${MIN_API_KEY_CHARS},}$`);

export const envName = (flag: string): string => `MCAUTH_${flag.toUpperCase().replaceAll('-', '_')}`;

export const SERVE_OPTION_TYPES: OptionTypes = Object.fromEntries(
  SERVE_OPTIONS.map((o) => [o.flag, { type: o.boolean ? ('boolean' as const) : ('string' as const) }]),
);

/** Each option from its flag, else its environment variable, else its default. */
export function resolveServeConfig(flags: Record<string, unknown>, env: Record<string, string | undefined>): ServeConfig {
  const config: Record<string, unknown> = {};
  for (const option of SERVE_OPTIONS) {
    const flag = flags[option.flag];
    const fromEnv = env[envName(option.flag)];
    const [raw, source] =
      typeof flag === 'string' || typeof flag === 'boolean' ? [String(flag), `--${option.flag}`] : fromEnv !== undefined ? [fromEnv, envName(option.flag)] : [option.fallback, `--${option.flag}`];
    const value = option.parse(raw);
    if (typeof value === 'object') throw new UsageError(`${source} ${value.refused}${option.secret ? '' : `, got "${raw}"`}`);
    config[option.key] = value;
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

/** The db path for user commands: --db, else MCAUTH_DB, else the default. */
export function resolveDb(flag: unknown, env: Record<string, string | undefined>): string {
  const db = typeof flag === 'string' ? flag : (env[envName('db')] ?? DEFAULT_DB);
  if (db === '') throw new UsageError('--db must not be empty');
  if (db === MEMORY_DB) throw new UsageError('user commands need a database file: :memory: is gone when the command ends');
  return db;
}

/** The service's settings as the defaults give them (the user commands use none of them). */
export function defaultServiceOptions(): ServiceOptions {
  return toServiceOptions(resolveServeConfig({}, {}));
}

export function toServiceOptions(config: ServeConfig): ServiceOptions {
  const { variant, joinTtl, tokenTtl, maxProfiles, hashConcurrency, hashQueue, hdTextures } = config;
  const hostedBase = config.publicUrl === '' ? undefined : `${config.publicUrl}${normalizeBasePath(config.basePath)}/textures/`;
  return { variant, joinTtlSeconds: joinTtl, tokenTtlSeconds: tokenTtl, maxProfiles, hashConcurrency, hashQueue, hostedBase, hdTextures };
}

export function optionsHelp(): string {
  const rows = SERVE_OPTIONS.map((o) => {
    const def = o.fallback === '' ? 'none' : o.fallback;
    return `  --${o.flag}${o.arg ? ` ${o.arg}` : ''}\n      ${o.help}\n      env ${envName(o.flag)}, default ${def}`;
  });
  return rows.join('\n');
}
