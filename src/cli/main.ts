// The one program: `serve` (the default) or `user ...`, and how each failure is reported.
import { closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { listeningLine, startServer, startupWarnings, trustedPeer, type ListenAddress, type RunningServer } from '../serve.ts';
import { quote, ServiceError } from '../service/errors.ts';
import { createService } from '../service/service.ts';
import { createInvites } from '../invites/invites.ts';
import { createMemoryStore, MEMORY_DB } from '../memory/store.ts';
import { openSqliteStore, type Synchronous } from '../store/sqlite.ts';
import type { Store } from '../store/store.ts';
import { createLogger, type Logger } from '../ops/log.ts';
import { endBySignal, isWorker, startWorkers, tellPrimaryListening } from './workers.ts';
import { systemdSocketFd } from './systemd-socket.ts';
import { createDealer, joinDeal } from './deal.ts';
import { primaryLimits } from './primary-limits.ts';
import { BACKUP_HELP, backUp } from './backup.ts';
import { readConfigFile } from './config-file.ts';
import { DB_OPTIONS, maskSecrets, toServiceOptions, USER_SETTINGS, optionsHelp, resolveDb, resolveServeConfig, SERVE_OPTION_TYPES, withBareValues, envName, type ConfigFile, type ServeConfig } from './options.ts';
import { parseCommandLine, UsageError } from './usage.ts';
import { parseUserCommand, USER_HELP, type UserCommandLine } from './user.ts';
import { INVITE_HELP, parseInviteCommand } from './invite.ts';
import { IMPORT_HELP, parseImportCommand } from './import.ts';
import { DB_HELP, runDbCommand } from './db.ts';
import { VERSION } from '../version.ts';
import { limitsOf, openPostgresStore } from '../postgres/connect.ts';
import { dbLabel, isPostgresUrl } from '../postgres/url.ts';


/** Where the program reads and writes: the process's own streams, or a test's. */
export interface Io {
  stdin: Readable & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  stdout: Writable;
  stderr: Writable;
  env: Record<string, string | undefined>;
}

const HELP = `mcauth: an authentication backend for Minecraft launchers (AuroraLauncher's json auth).

Usage:
  node server.js [serve] [options]     start the server
  node server.js user COMMAND ...      manage players
  node server.js invite COMMAND ...    manage invites to sign up on the account page
  node server.js import SOURCE ...     add the players of another system, keeping their passwords
  node server.js backup FILE           copy the database, also while the server runs
  node server.js db copy --from SOURCE --to TARGET
                                       move a community between SQLite and PostgreSQL

Server options (a flag wins over its environment variable, which wins over the config file):
  --config FILE
      settings as JSON, keyed by the options' names in camelCase (--join-ttl: joinTtl)
      env ${envName('config')}
  --print-config
      prints the settings in effect (secrets masked) and exits
${optionsHelp()}
  --help
      prints this text
  --version
      prints the version and exits

${USER_HELP}

${INVITE_HELP}

${IMPORT_HELP}

${BACKUP_HELP}

${DB_HELP}
`;

/** --config FILE, else MCAUTH_CONFIG, else no file. */
function configFile(flag: unknown, io: Io): ConfigFile | undefined {
  const path = typeof flag === 'string' ? flag : io.env[envName('config')];
  return path === undefined ? undefined : readConfigFile(path);
}

/** Why SQLite could not open `db`, in the admin's terms. */
function openHint(db: string): string {
  if (existsSync(db) && statSync(db).isDirectory()) return ' (it is a folder; give a file in it)';
  if (!existsSync(dirname(resolve(db)))) return ' (its folder does not exist)';
  return ' (may this user write there?)';
}

/**
 * Makes the file of a new SQLite database at `db` when there is none. It will hold password
 * hashes: made 0600 (whatever the umask) before SQLite opens it, which would make it 0644 less the
 * umask; SQLite gives its -wal and -shm files the same mode. Returns the files this call may take
 * back (see removeFiles): the database and those of its -wal and -shm that are not there yet;
 * none when it made no file.
 */
function createDatabaseFile(db: string): string[] {
  if (db === MEMORY_DB || isPostgresUrl(db) || existsSync(db)) return [];
  // Under Deno's narrowest grants (the database file alone) a sidecar cannot even be looked at:
  // one that cannot be seen is left alone, as one that was there.
  const sidecars = [`${db}-wal`, `${db}-shm`].filter((path) => !seenOrHidden(path));
  try {
    closeSync(openSync(db, 'wx', 0o600));
    return [db, ...sidecars];
  } catch {
    // EEXIST: another process made it this instant (an empty file is a new database to SQLite).
    // Anything else (no folder, no permission): SQLite's open below fails and says why.
    return [];
  }
}

/** Whether a path exists, or may not be looked at (a Deno grant that does not name it). */
function seenOrHidden(path: string): boolean {
  try {
    return existsSync(path);
  } catch {
    return true;
  }
}

/** Removes files a failed start made, so that it leaves no database behind; only ever those createDatabaseFile named, never one that was there before. */
function removeFiles(paths: string[]): void {
  for (const path of paths) rmSync(path, { force: true });
}

/**
 * Opens the store at `db`. Only `serve` and `user add` create a missing (or empty) file: a
 * command that reads (list, backup, ...) refuses a path with no database instead of starting an
 * empty one.
 */
async function open(db: string, { create, synchronous, env, serving = false }: { create: boolean; synchronous?: Synchronous; env: Io['env']; serving?: boolean }): Promise<Store> {
  if (isPostgresUrl(db)) {
    try {
      return await openPostgresStore(db, env, { serving });
    } catch (err) {
      throw new Error(`cannot open the database ${dbLabel(db)}: ${(err as Error).message}`);
    }
  }
  if (!create && db !== MEMORY_DB) {
    if (!existsSync(db)) throw new Error(`there is no database at "${resolve(db)}"`);
    // SQLite takes an empty file for a new database; to a command that only reads it is more
    // likely a copy that failed. (Where a database may be created, an empty file is also what
    // another process creating it at this moment leaves for an instant: it is taken as new.)
    const file = statSync(db);
    if (file.isFile() && file.size === 0) {
      throw new Error(`cannot open the database "${resolve(db)}": the file is empty (a copy that failed?); remove it to start a new database`);
    }
  }
  if (create) createDatabaseFile(db);
  try {
    return db === MEMORY_DB ? createMemoryStore() : await openSqliteStore(db, synchronous);
  } catch (err) {
    const reason = (err as Error).message;
    throw new Error(`cannot open the database "${resolve(db)}": ${reason}${/unable to open/.test(reason) ? openHint(db) : ''}`);
  }
}

/**
 * A `user`, `invite` or `import` command, with the service set up as the server would be from the
 * environment and the config file (the password policy, which texture URLs count, where links
 * point). Its output names the database it used, by absolute path, so a command run in the
 * wrong folder is noticed.
 */
async function runUser(argv: string[], io: Io, parse: (argv: string[]) => UserCommandLine = parseUserCommand): Promise<number> {
  const { line, run, creates } = parse(argv);
  const file = configFile(line.values.config, io);
  const settings = resolveServeConfig({}, io.env, file, USER_SETTINGS);
  const db = resolveDb(line.values.db, io.env, file);
  const isNew = !isPostgresUrl(db) && (!existsSync(db) || statSync(db).size === 0);
  const store = await open(db, { create: creates, env: io.env });
  // Said after the result, and after a refusal too: "No player named Bob" names the file it looked in.
  const where = `${creates && isNew ? 'Created a new database at' : 'Database:'} ${dbLabel(db)}`;
  try {
    const said = await run(createService(store, toServiceOptions(settings)), { stdin: io.stdin, stderr: io.stderr, settings, invites: createInvites(store) });
    io.stdout.write(`${said}\n${where}\n`);
    return 0;
  } catch (err) {
    if (err instanceof Error && !(err instanceof UsageError)) err.message += `\n${where}`;
    throw err;
  } finally {
    await store.close();
  }
}

async function runBackup(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, DB_OPTIONS, ['FILE']);
  const db = resolveDb(values.db, io.env, configFile(values.config, io));
  const store = await open(db, { create: false, env: io.env });
  const where = `Database: ${dbLabel(db)}`;
  try {
    io.stdout.write(`${await backUp(store, positionals[0]!)}\n${where}\n`);
    return 0;
  } catch (err) {
    // As a refused user command: "exists already" names the database it would have copied.
    if (err instanceof Error) err.message += `\n${where}`;
    throw err;
  } finally {
    await store.close();
  }
}

async function runServer(argv: string[], io: Io): Promise<number | undefined> {
  if (argv[0] !== undefined && !argv[0].startsWith('-')) throw new UsageError(`unknown command ${quote(argv[0])}`);
  const types = { ...SERVE_OPTION_TYPES, config: { type: 'string' }, 'print-config': { type: 'boolean' } } as const;
  const { values } = parseCommandLine(withBareValues(argv), types, []);
  const file = configFile(values.config, io);
  const config = resolveServeConfig(values, io.env, file);
  if (values['print-config']) {
    io.stdout.write(`${JSON.stringify(maskSecrets(config), null, 2)}\n`);
    return 0;
  }
  const log = createLogger(config.logLevel, io.stdout, { buffered: true, format: config.logFormat });
  // SIGHUP's default action ends a process: from here on none of the server's does (a terminal or
  // `systemctl kill` may send it to the whole group while a reload's new worker starts).
  process.on('SIGHUP', () => {});
  if (config.workers > 1 && !isWorker()) return runPrimary(config, log, io, file);
  if (!isWorker()) log.debug('settings in effect', { settings: maskSecrets(config) });
  // A worker is dealt connections from its primary's socket from systemd (src/cli/deal.ts).
  const systemdFd = systemdSocketFd(io.env, isWorker() ? process.ppid : process.pid);
  const dealt = isWorker() && systemdFd !== undefined ? joinDeal() : undefined;
  // Made here to know whether this start made it (a worker finds its primary's).
  const created = createDatabaseFile(config.db);
  let store: Store | undefined;
  let running: RunningServer;
  try {
    store = await open(config.db, { create: true, synchronous: config.synchronous, env: io.env, serving: true });
    // With --workers, the primary logs the start-up warnings, once.
    running = await startServer(config, store, log, { configFile: file, warnings: !isWorker(), systemdFd, dealt, limits: limitsOf(store) ?? (isWorker() ? primaryLimits() : undefined) });
  } catch (err) {
    // A start that fails (the port in use) leaves no new database behind.
    await store?.close().catch(() => {});
    removeFiles(created);
    throw err;
  }
  // With --workers, the primary says where they listen, once.
  if (isWorker()) {
    log.debug(`worker ${running.banner}`);
    tellPrimaryListening({ host: running.host, port: running.port, systemdFd });
  } else {
    log.info(running.banner);
    // One process cannot replace itself; better said than the default action, which would end it.
    process.on('SIGHUP', () => log.info('mcauth ignores SIGHUP: only --workers above 1 reload; to run a new file, restart it (under socket activation no connection is refused meanwhile)'));
  }
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A worker ignores a second signal: the primary relays the one its group may have had already.
      if (isWorker()) return;
      // Otherwise a second signal (of either kind) ends the process at once.
      return endBySignal(signal);
    }
    stopping = true;
    const n = running.inFlight();
    log.info(`mcauth stopping on ${signal}: accepting no new connections; ${n} ${n === 1 ? 'request' : 'requests'} in flight may take up to ${config.shutdownTimeout} s`);
    void running
      .stop()
      .then((cut) => {
        if (cut > 0) log.error(`mcauth cut off ${cut} ${cut === 1 ? 'request' : 'requests'} still in flight after ${config.shutdownTimeout} s`);
        log.info('mcauth stopped: every answered write is in the database, which is closed');
      })
      .catch((err: unknown) => log.error('mcauth could not close the database cleanly', {}, err))
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return undefined;
}

/** --workers above 1: checks the database (creating and migrating it) once, then starts the workers. */
async function runPrimary(config: ServeConfig, log: Logger, io: Io, file: ConfigFile | undefined): Promise<undefined> {
  // Deno's node:cluster cannot fork; say so instead of failing obscurely.
  if (process.versions.deno !== undefined) throw new UsageError('--workers above 1 needs node:cluster, which Deno does not provide; run one process a port instead');
  if (config.db === MEMORY_DB) throw new UsageError('--workers above 1 need a database file: each worker would have an in-memory store of its own');
  // A scrape would reach one worker or another, and its counters would jump between theirs.
  if (config.metrics) throw new UsageError('--metrics cannot be used with --workers above 1: each scrape would count one worker of several');
  // A stop asked for while the database is checked (which may wait on an unreachable PostgreSQL),
  // before startWorkers takes the signals over: the start ends at once, with status 0 as a stop's,
  // not by the signal's default action. No transaction is open between two awaits, which is
  // where a handler runs; a database this start made is not left behind.
  let created: string[] = [];
  const stopEarly = (signal: NodeJS.Signals): void => {
    log.info(`mcauth stopped on ${signal} before its workers started`);
    removeFiles(created);
    process.exit(0);
  };
  process.on('SIGTERM', stopEarly).on('SIGINT', stopEarly);
  log.debug('settings in effect', { settings: maskSecrets(config) });
  created = createDatabaseFile(config.db);
  const store = await open(config.db, { create: true, synchronous: config.synchronous, env: io.env }).catch((err: unknown) => {
    removeFiles(created);
    throw err;
  });
  const users = await store.countUsers();
  const hostedTextures = await store.countTextures();
  await store.close();
  const fd = systemdSocketFd(io.env, process.pid);
  let at: ListenAddress;
  try {
    const onError = (err: Error): void => log.error('mcauth could not accept a connection on the socket systemd passed', {}, err);
    const dealer = fd === undefined ? undefined : createDealer(fd, config.workers, trustedPeer(config), onError);
    process.off('SIGTERM', stopEarly).off('SIGINT', stopEarly);
    at = await startWorkers(config.workers, log, dealer);
  } catch (err) {
    // The workers have ended (startWorkers waits for them): none opens the file again.
    removeFiles(created);
    io.stderr.write(`mcauth: ${(err as Error).message}\n`);
    process.exit(1);
  }
  // The warnings judge the address really listened on (systemd's socket's, not --host).
  for (const w of startupWarnings({ ...config, host: at.host }, { port: at.port, hostedTextures, configFile: file })) log.warn(w);
  log.info(listeningLine(config, at, users, config.workers));
  return undefined;
}

/** Runs the command line; resolves to an exit status, or undefined while the server runs. */
export async function main(argv: string[], io: Io): Promise<number | undefined> {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(HELP);
      return 0;
    }
    if (argv.includes('--version')) {
      io.stdout.write(`mcauth ${VERSION}\n`);
      return 0;
    }
    if (argv[0] === 'user') return await runUser(argv.slice(1), io);
    if (argv[0] === 'invite') return await runUser(argv.slice(1), io, parseInviteCommand);
    if (argv[0] === 'import') return await runUser(argv.slice(1), io, parseImportCommand);
    if (argv[0] === 'backup') return await runBackup(argv.slice(1), io);
    if (argv[0] === 'db') return await runDbCommand(argv.slice(1), io);
    return await runServer(argv[0] === 'serve' ? argv.slice(1) : argv, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`mcauth: ${err.message} (see --help)\n`);
      return 2;
    }
    io.stderr.write(err instanceof ServiceError ? `${err.message}\n` : `mcauth: ${(err as Error).message}\n`);
    return 1;
  }
}
