// Throwaway PostgreSQL clusters for the tests: Debian's server binaries (the `postgresql`
// package; .ci/run installs it), a cluster in a temp folder on a loopback port, stopped and
// removed by whoever made it: a test that stops or breaks its cluster makes its own; the others
// take databases on the one cluster of their phase (test/run-files.ts --postgres), or, run
// alone, on one of their file's own (databaseServer). PostgreSQL refuses to run as root, so as root (CI) its
// commands run as the `postgres` user the package creates. Without the binaries the tests that
// need a cluster skip, saying so; with MCAUTH_TEST_POSTGRES=required (.ci/run) they fail instead.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { freePort } from './process.ts';

/** The directory of the newest installed server's binaries (initdb, pg_ctl, pg_basebackup). */
function serverBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')));
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  return newest && join(root, newest, 'bin');
}

const BIN = serverBin();
const AS_ROOT = process.getuid?.() === 0;

/** Why the PostgreSQL tests cannot run here, or undefined when they can; required in CI. */
export const postgresMissing: string | undefined = (() => {
  const why = BIN ? undefined : 'PostgreSQL is not installed (Debian: apt-get install postgresql)';
  if (why && process.env.MCAUTH_TEST_POSTGRES === 'required') throw new Error(`MCAUTH_TEST_POSTGRES=required, but ${why}`);
  return why;
})();

/** The role every cluster has, with this password. */
export const PG_USER = 'mcauth';
export const PG_PASSWORD = 'pg-Secret-4f2a9c71';

/** Runs one of the server's binaries (as `postgres` when this is root); rejects with its output when it fails. */
export function pgRun(tool: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const command = AS_ROOT ? ['runuser', '-u', 'postgres', '--', join(BIN!, tool), ...args] : [join(BIN!, tool), ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${tool} ${args.join(' ')} exited ${code}:\n${out}`))));
  });
}

export interface Cluster {
  /** postgres://mcauth:…@127.0.0.1:PORT/DB for `db` (default: the cluster's own `mcauth` database). */
  url: (db?: string) => string;
  port: number;
  dir: string;
  /** pg_ctl stop: 'fast' (clients cut, a clean shutdown) or 'immediate' (as a crash). */
  stop: (mode?: 'fast' | 'immediate') => Promise<void>;
  /**
   * Freezes every process of the running cluster (the postmaster and its backends) with SIGSTOP:
   * a database that answers nothing and closes nothing. The function it returns lets them go on.
   */
  freeze: () => () => void;
  /** Starts it again after a stop, on the same port; resolves once it takes connections. */
  start: () => Promise<void>;
  /** Runs SQL with psql as the cluster's superuser; its output. */
  psql: (sql: string, db?: string) => Promise<string>;
  /** Stops it (if running) and removes its folder. */
  remove: () => Promise<void>;
  /** What another process passes to databaseServer() (in SHARED_CLUSTER_ENV) to use it: its port and socket folder. */
  shareable: string;
}

/** Runs SQL with psql as the superuser of the cluster on `port` with its socket in `socketDir`; its output. */
function psqlOn(port: number, socketDir: string, sql: string, db: string): Promise<string> {
  return pgRun('psql', ['-h', socketDir, '-p', String(port), '-U', PG_USER, '-d', db, '-v', 'ON_ERROR_STOP=1', '-tA', '-c', sql]);
}

/** The processes whose parent is `pid`, as /proc tells. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        // The parent is the second field after the command's name, which is in parentheses and may hold spaces.
        const stat = readFileSync(join('/proc', entry, 'stat'), 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(entry)] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

/** SIGSTOPs the postmaster of the cluster in `data` and every process it started; returns what SIGCONTs them. */
function freezeCluster(data: string): () => void {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const frozen = [postmaster, ...childrenOf(postmaster)];
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
  return () => {
    for (const pid of frozen) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // ended meanwhile
      }
    }
  };
}

/** The uid and gid of the `postgres` user, as this system has them. */
function postgresIds(): [number, number] {
  const field = (file: string): number => Number(readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('postgres:'))?.split(':')[2]);
  return [field('/etc/passwd'), field('/etc/group')];
}

/** Hands `path` over to `postgres` when this is root (PostgreSQL runs as that user then). */
function handOver(path: string): void {
  if (AS_ROOT) chownSync(path, ...postgresIds());
}

/** A new folder for a cluster's files, which `postgres` may write. */
function clusterFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcauth-pg-'));
  handOver(dir);
  return dir;
}

/**
 * The cluster whose data is in `data` (its socket and log in `dir`), on `port`, with
 * `settings` (postgresql.conf lines) added to what its data folder holds; started.
 */
async function runCluster(dir: string, data: string, port: number, settings: string[]): Promise<Cluster & { promote: () => Promise<void> }> {
  // Later lines win: these over what initdb or a base backup wrote.
  const conf = [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`, 'fsync = off', 'max_connections = 200', ...settings];
  writeFileSync(join(data, 'postgresql.auto.conf'), conf.join('\n') + '\n', { flag: 'a' });
  const ctl = (...args: string[]): Promise<string> => pgRun('pg_ctl', ['-D', data, '-w', '-t', '60', ...args]);
  let running = false;
  const cluster = {
    url: (db = PG_USER) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`,
    port,
    dir: data,
    stop: async (mode: 'fast' | 'immediate' = 'fast') => {
      await ctl('-m', mode, 'stop');
      running = false;
    },
    start: async () => {
      await ctl('-l', join(dir, 'log'), 'start');
      running = true;
    },
    promote: async () => void (await ctl('promote')),
    freeze: () => freezeCluster(data),
    psql: (sql: string, db = PG_USER) => psqlOn(port, dir, sql, db),
    shareable: JSON.stringify({ port, socketDir: dir }),
    remove: async () => {
      if (running) await cluster.stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}

/** How many ports a cluster tries: another process may take a free port before the cluster listens on it. */
const PORT_TRIES = 5;

/** runCluster on a port free a moment before; on another when that one was taken meanwhile. */
async function runOnFreePort(dir: string, data: string, settings: string[]): Promise<Cluster & { promote: () => Promise<void> }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runCluster(dir, data, await freePort(), settings);
    } catch (err) {
      const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : '';
      if (attempt >= PORT_TRIES || !/Address already in use/.test(log)) throw err;
    }
  }
}

/**
 * A new cluster: initdb in a temp folder (role `mcauth` with PG_PASSWORD, scram over TCP, a
 * database `mcauth`), started on a free loopback port with `settings` (postgresql.conf lines).
 */
export async function startCluster(settings: string[] = []): Promise<Cluster> {
  if (postgresMissing) throw new Error(postgresMissing);
  const dir = clusterFolder();
  const data = join(dir, 'data');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, PG_PASSWORD + '\n');
  chmodSync(pwfile, 0o600);
  handOver(pwfile);
  await pgRun('initdb', ['-D', data, '-U', PG_USER, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-sync']);
  const cluster = await runOnFreePort(dir, data, settings);
  await cluster.psql(`CREATE DATABASE ${PG_USER}`, 'postgres');
  return cluster;
}

/**
 * A synchronous streaming standby of `primary`: a base backup of it in a folder of its own,
 * started on a free port as a hot standby named `standby`, which the primary then waits for on
 * every commit (`synchronous_standby_names`): what the primary acknowledges, the standby holds.
 * `promote` makes it a primary (once the old one is gone).
 */
export async function startStandby(primary: Cluster): Promise<Cluster & { promote: () => Promise<void> }> {
  const dir = clusterFolder();
  const data = join(dir, 'data-standby');
  await pgRun('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', PG_USER, '-D', data, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'], { PGPASSWORD: PG_PASSWORD });
  const conninfo = `host=127.0.0.1 port=${primary.port} user=${PG_USER} password=${PG_PASSWORD} application_name=standby`;
  // Configured as an owner configures both nodes alike: it too waits for a synchronous standby
  // named `standby`, which it will not have once promoted (docs/postgresql.md's recipe clears it).
  const standby = await runOnFreePort(dir, data, ['hot_standby = on', `primary_conninfo = '${conninfo}'`, "synchronous_standby_names = 'standby'"]);
  await primary.psql("ALTER SYSTEM SET synchronous_standby_names = 'standby'");
  await primary.psql('SELECT pg_reload_conf()');
  // Synchronous from here: the primary reports the standby as such once it has caught up.
  for (let i = 0; i < 600; i++) {
    if ((await primary.psql("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'")).trim() === 'sync') return standby;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the standby did not become synchronous within 60 s');
}

/** Where test/run-files.ts --postgres tells its test files the phase's cluster is (Cluster.shareable). */
export const SHARED_CLUSTER_ENV = 'MCAUTH_TEST_PG_CLUSTER';

/** A cluster that a test file takes databases on, and never stops. */
export interface DatabaseServer {
  port: number;
  /** postgres://mcauth:…@127.0.0.1:PORT/DB */
  url: (db: string) => string;
  /** Runs SQL with psql as the cluster's superuser; its output. */
  psql: (sql: string, db?: string) => Promise<string>;
  /** A new, empty database named after `name`, and no other's on the cluster: its name. */
  newDatabase: (name: string) => Promise<string>;
}

let ownCluster: Promise<Cluster> | undefined;

/**
 * The cluster this file takes its databases on: the phase's (when test/run-files.ts started one),
 * else one of the file's own, started at the first call and removed after the file's tests. Call
 * it at the file's top level before its first test, where that removal is registered as the
 * file's after hook (registered later, the hook could run once the tests before it have ended).
 */
export async function databaseServer(): Promise<DatabaseServer> {
  if (postgresMissing) throw new Error(postgresMissing);
  let shared = process.env[SHARED_CLUSTER_ENV];
  if (!shared) {
    if (!ownCluster) {
      const started = startCluster();
      ownCluster = started;
      after(async () => (await started).remove());
    }
    shared = (await ownCluster).shareable;
  }
  const { port, socketDir } = JSON.parse(shared) as { port: number; socketDir: string };
  const psql = (sql: string, db = PG_USER): Promise<string> => psqlOn(port, socketDir, sql, db);
  return {
    port,
    url: (db) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`,
    psql,
    newDatabase: async (name) => {
      // Random: files that share the cluster may be given the same name, and a later file the same process id.
      const db = `${name.replace(/\W+/g, '_').toLowerCase().slice(0, 40)}_${randomBytes(6).toString('hex')}`;
      await psql(`CREATE DATABASE ${db}`, 'postgres');
      return db;
    },
  };
}
