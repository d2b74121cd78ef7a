// A PostgreSQL database as the store (`--db postgres://…`): how its URL is told from a SQLite
// path and shown with its password masked, where the password comes from, how the driver
// (postgres.js, an optional peer dependency) is loaded only then, and how a database that is away
// is answered: within a bound, as "temporarily unavailable", never as a hang or a crash.
import { readFileSync } from 'node:fs';
import { recoverable } from '../runtime.ts';
import { executableDir, isSea, requireBesideExecutable } from '../sea.ts';
import type { Options, Sql } from 'postgres';
import { DB_UNAVAILABLE, ServiceError } from '../service/errors.ts';
import type { Store } from '../store/store.ts';
import { createPostgresStore } from './store.ts';
import { turnHosts } from './url.ts';
import { databaseWindowLimits } from './window-limit.ts';
import type { WindowLimits } from '../ops/window-limit.ts';

/** The command that installs the driver, said when it is missing. */
export const INSTALL_DRIVER = 'npm install postgres@3';

/**
 * How long a connection may take to open (the TCP connect, TLS and the login), and how long any
 * store call may take before its request is answered 503: a database that is away (stopped,
 * failing over, cut off by the network) must not hold requests longer than callers wait.
 */
const CONNECT_TIMEOUT_S = 1;
const CALL_DEADLINE_MS = 1500;
/**
 * How long a start or a command waits for the database's first answer. With several hosts the
 * driver tries them in turn for ever when all refuse; one host that refuses fails at once.
 */
const FIRST_ANSWER_MS = 10_000;
/**
 * How long a call may go unanswered before its connection is taken for lost and its pool
 * replaced. A host that vanished (powered off, cut off) sends nothing, not even a reset: the
 * pool's connections would wait on it until TCP gives up, about 15 minutes, while a promoted
 * standby stood ready. A new pool connects afresh to whichever host takes writes.
 */
const STUCK_MS = 5000;
/** Connections a node keeps to the database; each process of --workers has its own pool. */
const POOL_SIZE = 10;

type Driver = (url: string, options: Options<Record<string, never>>) => Sql;

/**
 * Loads postgres.js from where this program runs: beside server.js, or in the single executable,
 * whose own `import` reaches only the built-in modules, from node_modules/ in the executable's
 * folder (its CommonJS build). Missing, an error that says how to install it.
 */
async function loadDriver(): Promise<Driver> {
  const sea = isSea();
  try {
    // Left to run time by the build (--external:postgres): server.js holds no third-party code.
    if (sea) return requireBesideExecutable()('postgres') as Driver;
    return ((await import('postgres')) as { default: Driver }).default;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || /Cannot find (module|package)|not found/i.test(String((err as Error).message))) {
      const where = sea ? `the executable's folder (${executableDir()})` : 'the folder of server.js';
      throw new Error(`a PostgreSQL database needs the driver postgres.js, which is not installed; in ${where} run: ${INSTALL_DRIVER}`);
    }
    throw err;
  }
}

/** The password: MCAUTH_DB_PASSWORD_FILE's first line when that is set; else the URL's, else PGPASSWORD (which the driver reads itself). */
function passwordFromFile(env: Record<string, string | undefined>): string | undefined {
  const path = env.MCAUTH_DB_PASSWORD_FILE;
  if (path === undefined || path === '') return undefined;
  try {
    return readFileSync(path, 'utf8').split(/\r?\n/)[0];
  } catch (err) {
    throw new Error(`cannot read MCAUTH_DB_PASSWORD_FILE "${path}": ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Errors that say the database cannot be reached right now (as opposed to a fault of a query). */
function isUnreachable(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? '');
  // The driver's own codes, the socket's, and PostgreSQL's classes 08 (connection), 57P (shutting
  // down, starting up) and 25006 (a standby, read-only, before it is promoted).
  return /^(CONNECT_TIMEOUT|CONNECTION_(CLOSED|ENDED|DESTROYED)|E[A-Z]+|08...|57P0[1-3]|25006)$/.test(code) || err instanceof DeadlineError;
}

class DeadlineError extends Error {}

const unavailable = (): ServiceError => new ServiceError('busy', 'The database is temporarily unavailable; try again in a moment', 1, DB_UNAVAILABLE);

/**
 * `call` held to CALL_DEADLINE_MS, and an unreachable database answered as the service's 'busy'
 * (503, `false` in-band on /join): the caller gets its answer in time, and the driver reconnects
 * on a later call by itself. A call that runs out its time may still commit later; it was never
 * acknowledged.
 */
function bounded<A extends unknown[], R>(pool: Pool, call: (...args: A) => R | Promise<R>, deadlineMs = CALL_DEADLINE_MS, late?: () => void): (...args: A) => Promise<R> {
  return async (...args) => {
    let timer: NodeJS.Timeout | undefined;
    // No timer at all for no deadline: setTimeout would take Infinity for 1 ms.
    const deadline = new Promise<never>((_, reject) => {
      if (deadlineMs === Infinity) return;
      timer = setTimeout(() => {
        late?.();
        reject(new DeadlineError('deadline'));
      }, deadlineMs);
    });
    const madeAt = performance.now();
    const made = Promise.resolve().then(() => call(...args));
    try {
      return await Promise.race([made, deadline]);
    } catch (err) {
      if (err instanceof DeadlineError) watchStuck(pool, made, madeAt);
      else if ((err as { code?: unknown }).code === 'CONNECT_TIMEOUT') turnAway(pool);
      if (isUnreachable(err)) throw unavailable();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Calls without a deadline (an unreachable database still answered 503): an import's one
 * transaction and closing take as long as they take. A database that is away fails them at once,
 * as it fails every call.
 */
const UNBOUNDED = new Set(['close', 'createUsers']);

/**
 * A login's failure count, bounded as every call of a request is, but never committed after its
 * deadline: answered 503, the login was never checked, and counting it would let a player
 * retrying through a slow database throttle themselves. Its update, run inside the transaction
 * once the rows are locked, refuses (and so rolls back) when the deadline has passed; only a
 * count whose last statements were already sent can still land.
 */
function boundedCount(pool: Pool, count: Store['updateLoginFailures']): Store['updateLoginFailures'] {
  return (keys, forgetBefore, update) => {
    let late = false;
    const checked: typeof update = (counts) => {
      if (late) throw new DeadlineError('deadline');
      return update(counts);
    };
    return bounded(pool, () => count(keys, forgetBefore, checked), CALL_DEADLINE_MS, () => (late = true))();
  };
}

/** Every function of `calls` bounded (those named in `unbounded` only answered 503 when the database is away); other fields as they are. */
function boundEach<T extends object>(pool: Pool, calls: T, unbounded: Set<string>): T {
  const entries = Object.entries(calls) as [string, unknown][];
  const bound = (name: string, call: unknown): unknown =>
    typeof call === 'function' ? bounded(pool, call as (...args: unknown[]) => unknown, unbounded.has(name) ? Infinity : CALL_DEADLINE_MS) : call;
  return Object.fromEntries(entries.map(([name, call]) => [name, bound(name, call)])) as T;
}

/** The store with every call bounded but UNBOUNDED's. */
function withDeadlines(store: Store, pool: Pool): Store {
  return { ...boundEach(pool, store, UNBOUNDED), updateLoginFailures: boundedCount(pool, store.updateLoginFailures) };
}

/**
 * Calls of another part over a pool of connectPostgres's (the admin page's data) held to the
 * store's deadline, and answered 503 when the database is away, as the store's are.
 */
export const withCallDeadlines = <T extends object>(sql: Sql, calls: T, unbounded: string[] = []): T => boundEach(pools.get(sql)!, calls, new Set(unbounded));

/** A driver instance behind replaceablePool's proxy, and what its replacing needs. */
interface Pool {
  /** Replaces the driver instance; the old one's queries get `graceS` seconds to end (then are cut). */
  replace: (graceS?: number) => void;
  replacedAt: number;
  /** Whether the URL names several hosts, which a replacement turns (see turnHosts). */
  turnable: boolean;
  /** A pool replaced by watchStuck is still ending: no other replacement until it has. */
  closing: boolean;
}

const pools = new WeakMap<Sql, Pool>();

/**
 * After a connection attempt to a URL of several hosts ran out its time: the pool is replaced,
 * its hosts turned by one (at most once a CONNECT_TIMEOUT_S). The driver starts each of its
 * connections at the first host of the URL, so with a silent first host every connection of a
 * pool would wait out its own timeout there, one after another, before any tried the promoted
 * standby. (With one host there is nothing to turn, and the driver's own retries do.)
 */
function turnAway(pool: Pool): void {
  if (pool.turnable && performance.now() - pool.replacedAt >= CONNECT_TIMEOUT_S * 1000) pool.replace();
}

/**
 * After a call to `pool` ran out its time: when it is still unanswered STUCK_MS after it was
 * made, and the pool has not been replaced since, the pool is replaced (see STUCK_MS). A slow
 * database answers in the end; only a lost one leaves a call unanswered so long (a login's
 * failure count included). The old
 * pool's queries get STUCK_MS more to end, so a commit that was only slow (one waiting on a
 * lagging synchronous standby) is not cut; none is replaced again before the old one has
 * ended, so a slow database does not collect abandoned sessions.
 */
function watchStuck(pool: Pool, made: Promise<unknown>, madeAt: number): void {
  let answered = false;
  made.then(() => (answered = true), () => (answered = true));
  setTimeout(() => {
    if (!answered && pool.replacedAt < madeAt && !pool.closing) pool.replace(STUCK_MS / 1000);
  }, STUCK_MS - (performance.now() - madeAt)).unref();
}

/** The limits counted in each store's database (see limitsOf). */
const sharedLimits = new WeakMap<Store, WindowLimits>();

/** Where a store opened here counts the limits all nodes share: its database, each call bounded as the store's are. */
export const limitsOf = (store: Store): WindowLimits | undefined => sharedLimits.get(store);

/**
 * The pools open here, each able to replace its driver instance. postgres.js 3.4.9 can throw
 * from a timer when a connection closes with a write pending (porsager/postgres#1154, #1208:
 * `nextWrite` on a null socket), which nothing can catch and which leaves that connection unable
 * to send again. A database failing over closes connections just so; rather than end the
 * process, every pool is replaced by a new one (the old ended), and requests go on.
 */
const replaceable = new Set<() => void>();

/** Whether `err` is that fault of the driver's: thrown from its connection's write, from a timer. */
const isDriverFault = (err: Error): boolean => err instanceof TypeError && /nextWrite[^\n]*postgres[\\/](?:cjs[\\/])?src[\\/]connection\.js/.test(err.stack ?? '');

recoverable.push((err) => {
  if (!isDriverFault(err) || replaceable.size === 0) return undefined;
  for (const replace of replaceable) replace();
  return `the PostgreSQL driver failed on a connection that had closed (${err.message}); its connections were replaced`;
});

/**
 * The driver's other fault from a timer: a pool ended with a grace (a replaced one, see
 * replaceablePool) that still holds work when the grace is over is destroyed by an async
 * function whose rejection (CONNECTION_DESTROYED) nothing can catch. Seen under load on Deno,
 * with a database too slow for the calls' deadline. That pool was let go already, and its
 * queries were failed (answered 503); nothing else is touched.
 */
const isEndingFault = (err: Error): boolean =>
  (err as { code?: unknown }).code === 'CONNECTION_DESTROYED' && /destroy[^\n]*postgres[\\/](?:cjs[\\/])?src[\\/]index\.js/.test(err.stack ?? '');

recoverable.push((err) => {
  if (!isEndingFault(err) || replaceable.size === 0) return undefined;
  return `the PostgreSQL driver failed the last queries of a pool it had let go (${err.message}); the current pool is untouched`;
});

/** The ports of the database hosts the pools opened here connect to (see isLostConnect). */
const databasePorts = new Set<number>();

/**
 * A connect's failure raised where no one listens: on Deno, seen with a database stopped and a
 * refusing second host, after the driver had let that socket go (its listeners removed when it
 * closed). It must be a connect to a database host's port; mcauth makes no other outgoing
 * connection, so such an error is that socket's, and the driver has moved on from it already
 * (a query waiting on a connection gets its own error from the driver's next try).
 */
function isLostConnect(err: Error): boolean {
  const { syscall, port } = err as { syscall?: unknown; port?: unknown };
  const to = Number(port ?? /:(\d+)$/.exec(err.message)?.[1]);
  return syscall === 'connect' && databasePorts.has(to);
}

recoverable.push((err) => {
  if (!isLostConnect(err) || replaceable.size === 0) return undefined;
  return `the PostgreSQL driver left a failed connect unheard (${err.message}); it had let that socket go, and its pool goes on`;
});

/**
 * A driver instance that forwards every use to the current one of `open`'s, so that the pool
 * behind it can be replaced (see replaceable) without the store noticing; `end` ends it for good.
 * `open` is told how many pools came before: the hosts a replacement tries first turn by one.
 */
function replaceablePool(open: (before: number) => Sql, turnable: boolean): Sql {
  let opened = 0;
  let current = open(opened++);
  let ended = false;
  const pool: Pool = {
    replacedAt: performance.now(),
    turnable,
    closing: false,
    replace: (graceS = 0) => {
      if (ended) return;
      let fresh: Sql;
      try {
        fresh = open(opened);
      } catch {
        return; // (from a timer, or the uncaught-error handler) the current pool stays
      }
      opened++;
      const broken = current;
      current = fresh;
      pool.replacedAt = performance.now();
      if (graceS > 0) pool.closing = true;
      void broken.end({ timeout: graceS }).catch(() => {}).finally(() => (pool.closing = false));
    },
  };
  const { replace } = pool;
  replaceable.add(replace);
  const forward = (key: string | symbol): unknown => {
    const value = (current as unknown as Record<string | symbol, unknown>)[key];
    if (key === 'end') return (...args: unknown[]) => ((ended = true), replaceable.delete(replace), (value as (...a: unknown[]) => unknown).apply(current, args));
    return typeof value === 'function' ? value.bind(current) : value;
  };
  const proxy = new Proxy(current, {
    apply: (_target, _this, args: unknown[]) => (current as unknown as (...a: unknown[]) => unknown)(...args),
    get: (_target, key) => forward(key),
  });
  pools.set(proxy, pool);
  return proxy;
}

/**
 * The driver connected to `url` as every part of mcauth uses it: the password from where
 * passwordFromFile says, the timeouts above, a quiet log. `connections`: the pool's size (a
 * copy, which works in one transaction, needs one).
 */
export async function connectPostgres(url: string, env: Record<string, string | undefined>, { connections = POOL_SIZE } = {}): Promise<Sql> {
  const postgres = await loadDriver();
  const password = passwordFromFile(env);
  const sql = replaceablePool((before) => postgres(turnHosts(url, before), {
    ...(password === undefined ? {} : { password }),
    // libpq's read-write, as the driver can tell it: postgres.js takes a hot standby for
    // read-write (it asks a setting a standby leaves off), and a primary is what takes writes.
    ...(/[?&]target_session_attrs=read-write(&|$)/i.test(url) ? { target_session_attrs: 'primary' as const } : {}),
    max: connections,
    connect_timeout: CONNECT_TIMEOUT_S,
    // Seconds before trying to connect again after a failure: doubling, but never more than one,
    // so a node is back within a second of its database (the driver's own waits grow to 20 s).
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 1),
    // Notices (a migration's "already exists, skipping") are not for the log.
    onnotice: () => {},
    connection: { application_name: 'mcauth' },
  }), turnHosts(url, 1) !== url);
  for (const port of sql.options.port) databasePorts.add(Number(port));
  return sql;
}

/**
 * Waits for the database's first answer, up to FIRST_ANSWER_MS, and fails saying so without one:
 * what a start or a command does first (the driver connects at its first query).
 */
export async function firstAnswer(sql: Sql): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no host of the URL answered within ${FIRST_ANSWER_MS / 1000} s (refused, or silent)`)), FIRST_ANSWER_MS);
  });
  try {
    await Promise.race([sql`SELECT 1`, silent]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Opens the PostgreSQL store at `url` (migrating it under an advisory lock when it is behind).
 * `serving`: its calls are bounded (a server's); a command's (a `user list` of a large
 * community) take as long as they take.
 */
export async function openPostgresStore(url: string, env: Record<string, string | undefined>, { serving = true } = {}): Promise<Store> {
  const sql = await connectPostgres(url, env);
  try {
    await firstAnswer(sql);
    const opened = await createPostgresStore(sql);
    const pool = pools.get(sql)!;
    const store = serving ? withDeadlines(opened, pool) : opened;
    const limits = databaseWindowLimits(sql);
    sharedLimits.set(store, (name, limit, windowMs) => {
      const { take, giveBack } = limits(name, limit, windowMs);
      return { take: bounded(pool, take), giveBack: bounded(pool, giveBack) };
    });
    return store;
  } catch (err) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
}
