// The benchmark: `npm run bench -- [--users N] [--duration S] [--warmup S] [--connections N]
// [--rounds N] [--generator wrk|autocannon] [--scale 100000,1000000] [--scale-duration S]
// [--compare FILE] [--postgres]`.
//
// In one run it seeds a database with N players (each with a live token and a fresh join) and
// loads, on that database: the floor (bench/floor.ts: node:http, JSON.parse, one Map look-up,
// JSON.stringify), a bare node:http baseline, the popular stack (fastify with JSON-schema
// validation over node:sqlite, bench/fastify.ts) and the built dist/server.js: /hasJoined (with
// its log line, and again with --log-level error), /profile, /profiles (10 names), /join,
// /hasJoined at 80% of its peak (for its p99), then 2 workers. It loads them in --rounds rounds,
// each server in turn in each (A B C A B C ...), a path's servers one after the other, so that a
// change in the machine's load weighs on all of them alike: a row's figures are the medians of its rounds', and each ratio the median of
// the rounds' ratios. When the baseline's or the floor's CPU a request moves more than
// MAX_REFERENCE_SPREAD between rounds, the run quotes no ratio. Then /auth, in rounds of its own
// that alternate it with the raw scrypt rate it is set against.
// Each row gives the server's CPU time a request, from /proc (utime + stime of the server and its
// workers over the requests answered): a figure the load generator cannot flatter, unlike
// requests/s when the generator, not the server, is the limit; the row says which was. The load
// comes from wrk when it is installed, from autocannon otherwise (bench/load.ts).
// Then, for each player count of --scale, a fresh server on a database of that size: time to
// listen, idle RSS after start, CPU a request and peak RSS under load. Server and load run on
// separate cores where `taskset` exists. It prints tables and writes the same under bench/results/.
// --compare loads another build of the server (an earlier dist/server.js, copied aside) in the same
// rounds, on every endpoint but /auth: a before and after that one run's conditions hold alike.
// --postgres adds, at each size of --scale, dist/server.js on a throwaway PostgreSQL cluster (the
// tests' helper, test/helpers/postgres.ts) holding the same players: /hasJoined, /join and /auth
// on one node, then on two, with the CPU the database spent a request beside the nodes'; these
// rows are loaded once, after the rounds.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, sign } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { availableGenerator, generatorVersion, runLoad, type Generator, type LoadResult } from './load.ts';
import { bodiesOf, ENDPOINTS, YGGDRASIL_HAS_JOINED } from './requests.ts';
import type { Cluster } from '../test/helpers/postgres.ts';
import { seed, seedPostgres } from './seed.ts';

const ROOT = join(import.meta.dirname, '..');
const SERVER_JS = join(ROOT, 'dist', 'server.js');
const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    generator: { type: 'string' },
    scale: { type: 'string', default: '100000,1000000' },
    'scale-duration': { type: 'string', default: '5' },
    compare: { type: 'string' },
    postgres: { type: 'boolean', default: false },
  },
});
const USERS = Number(values.users);
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
const SCALE_DURATION = Number(values['scale-duration']);
/**
 * Seconds of each /auth round and of the raw scrypt rate after it. Logins end in bursts (the hash
 * pool's four at once share a core: a second or so apart here), so a window counts one burst more
 * or less as its edges fall: a quarter of 5 s's count here, a sixteenth of 20 s's.
 */
const AUTH_DURATION = Math.max(DURATION, 20);
const SCALE = values.scale === '' ? [] : values.scale.split(',').map(Number);
const numbers: [string, number][] = [
  ['users', USERS],
  ['duration', DURATION],
  ['warmup', WARMUP],
  ['connections', CONNECTIONS],
  ['rounds', ROUNDS],
  ['scale-duration', SCALE_DURATION],
  ...SCALE.map((n): [string, number] => ['scale', n]),
];
for (const [name, n] of numbers) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be whole numbers above 0`);
}
if (values.generator !== undefined && values.generator !== 'wrk' && values.generator !== 'autocannon') throw new Error('--generator must be wrk or autocannon');
const GENERATOR: Generator = (values.generator as Generator | undefined) ?? availableGenerator();
// Off unless asked: a plain run needs no PostgreSQL, and these rows take minutes of their own.
// Checked first, so that a run cannot fail for want of it at its end.
const PG = values.postgres ? await import('../test/helpers/postgres.ts') : undefined;
if (PG?.postgresMissing) throw new Error(`--postgres: ${PG.postgresMissing}`);

// Pinning: the server on core 0, this process and the load generator on core 1.
const PINNED = availableParallelism() >= 2 && spawnSync('taskset', ['--version']).status === 0;
if (PINNED) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)]);
const onServerCore = (command: string[]): string[] => (PINNED ? ['taskset', '-c', '0', ...command] : command);
const onAllCores = (command: string[]): string[] => (PINNED ? ['taskset', '-c', '0,1', ...command] : command);
/** The cores the rows on every core share: the two pinned ones, or all of them. */
const ALL_CORES = PINNED ? 2 : availableParallelism();

/** Clock ticks a second in /proc/PID/stat (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** A process above this share of a core was busy all along: it, not what fed it, set the rate. */
const BUSY = 0.9;
/**
 * The most the baseline's or the floor's CPU a request may move between rounds (largest ÷
 * smallest) for a run to quote ratios: past it the machine's load changed under the run, and a
 * ratio would measure that change as much as the servers.
 */
const MAX_REFERENCE_SPREAD = 1.25;

interface Started {
  child: ChildProcess;
  url: string;
  /** From spawn to listening, in ms. */
  startMs: number;
}

/** Servers started and not yet stopped: stopped in the end should the run fail. */
const running = new Set<Started>();

/**
 * Starts a server and resolves once its output names the address it listens on; or, given the
 * `port` it was told to use, once that port takes a connection (at --log-level error mcauth
 * prints no listening line).
 */
function start(command: string[], port?: number): Promise<Started> {
  const began = performance.now();
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ready, fail) => {
    let out = '';
    const listening = (url: string): void => {
      const s = { child, url, startMs: performance.now() - began };
      running.add(s);
      ready(s);
    };
    const onData = (d: Buffer): void => {
      out += d.toString('utf8');
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m && port === undefined) listening(m[1]!);
      // Once it listens, its lines are read and dropped unlooked-at: this process shares the
      // load generator's core, and scanning a line a request would take from the generator.
      if (m) child.stdout!.off('data', onData).resume();
      if (out.length > 1e6) out = out.slice(-1000);
    };
    // The server logs a line a request: keep reading, or the pipe fills and stalls it.
    child.stdout!.on('data', onData);
    child.once('exit', (code) => fail(new Error(`${command.join(' ')} exited (${code}) before listening:\n${out}`)));
    const probe = (): void => {
      const socket = connect(port!, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        listening(`http://127.0.0.1:${port}`);
      });
      socket.once('error', () => {
        if (child.exitCode === null) setTimeout(probe, 20);
      });
    };
    if (port !== undefined) probe();
  });
}

/** A port free now, for a server that will not say which it took. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer().once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => done(port));
    });
  });
}

function stop(s: Started): Promise<void> {
  running.delete(s);
  return new Promise((done) => {
    s.child.once('exit', () => done());
    s.child.kill('SIGTERM');
  });
}

/** The process and its children (cluster workers). */
function family(pid: number): number[] {
  const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  return [pid, ...children.flatMap(family)];
}

/** The fields of /proc/PID/stat after the command's name (utime is [11], cutime [13]); none when it is gone. */
function stat(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  } catch {
    return [];
  }
}

const ticksOf = (fields: string[], from: number, to: number): number => fields.slice(from, to + 1).reduce((sum, f) => sum + Number(f), 0);

/** CPU seconds used so far by the processes (utime + stime). */
function cpuSeconds(pids: number[]): number {
  return pids.reduce((ticks, pid) => ticks + ticksOf(stat(pid), 11, 12), 0) / TICKS;
}

/**
 * CPU seconds used so far by the load generator: this process's (autocannon runs in it) and,
 * through its cutime + cstime, those of the children it has reaped (each wrk, once it exits).
 */
function generatorCpuSeconds(): number {
  return ticksOf(stat(process.pid), 11, 14) / TICKS;
}

/**
 * CPU seconds used so far by a PostgreSQL cluster: its postmaster (the pid in the data folder's
 * postmaster.pid), its live children (backends, checkpointer, autovacuum...) and, through the
 * postmaster's cutime + cstime, the children it has reaped: a backend that exits mid-load counts.
 */
function clusterCpuSeconds(postmaster: number): number {
  return ticksOf(stat(postmaster), 11, 14) / TICKS + cpuSeconds(family(postmaster).slice(1));
}

/** A field of /proc/PID/status in MiB (0 when the process is gone). */
function statusMiB(pid: number, field: string): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Peak resident memory (VmHWM) of the processes, in MiB: the largest, and their sum. */
function peakRss(pids: number[]): { max: number; sum: number } {
  const each = pids.map((pid) => statusMiB(pid, 'VmHWM'));
  return { max: Math.max(0, ...each), sum: each.reduce((a, b) => a + b, 0) };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the server has finished the work the warm-up left queued (logins keep hashing
 * after their clients are gone): under 20% of a core over 200 ms, or 30 s at most.
 */
async function idle(cpu: () => number): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const before = cpu();
    await sleep(200);
    if (cpu() - before < 0.04) return;
  }
}

interface Load extends LoadResult {
  /** Cores the server (every node of the row) used while loaded (1.0: one core fully). */
  serverCpu: number;
  /** Cores the load generator used meanwhile (its core is core 1 when pinned). */
  generatorCpu: number;
  /** Server CPU time a request answered, in µs: of all the row's nodes, over the requests of all. */
  cpuUs: number;
  /** Cores the database used while loaded (the PostgreSQL rows). */
  dbCpu?: number;
  /** The database's CPU time a request answered, in µs (the PostgreSQL rows). */
  dbCpuUs?: number;
  /** The most of a core other processes used meanwhile (see quietness). */
  others: number;
  /** Windows loaded again because other processes used more than MAX_OTHERS of a core. */
  retried: number;
}

interface LoadOptions {
  seconds?: number;
  /** GET: the bodies are the paths to ask for. */
  method?: 'GET' | 'POST';
  /** Caps requests/s, shared out among the servers (autocannon only). */
  rate?: number;
  /** CPU seconds the database has used so far, counted apart from the servers'. */
  database?: () => number;
  /** The servers run on every core, not on core 0 alone. */
  allCores?: boolean;
}

/**
 * The most of a core other processes may use while a window is measured: past it the window is
 * loaded again, up to QUIET_TRIES times (the machine is shared, and their work moves a round's
 * figures by more than the differences measured).
 */
const MAX_OTHERS = 0.1;
const QUIET_TRIES = 6;

/**
 * CPU seconds each core has been busy so far (/proc/stat's user, nice, system, irq and softirq
 * time: a process's system time there counts in part as softirq, a network's work above all).
 */
function coreSeconds(): number[] {
  const cores = readFileSync('/proc/stat', 'utf8').split('\n').filter((line) => /^cpu\d+ /.test(line));
  return cores.map((line) => [1, 2, 3, 6, 7].reduce((sum, i) => sum + Number(line.split(/\s+/)[i]), 0) / TICKS);
}

/**
 * The share of a core other processes used over `seconds`, from each core's CPU (`cores`, the
 * change of coreSeconds) less what the run's own used: pinned, the server's on core 0 and the
 * load generator's and this process's on core 1, each core's own; else all of it over all cores.
 */
function quietness(cores: number[], seconds: number, { server, generator, pinned }: { server: number; generator: number; pinned: boolean }): number {
  if (pinned) return Math.max(cores[0]! - server, cores[1]! - generator) / seconds;
  return (cores.reduce((a, b) => a + b, 0) - server - generator) / seconds;
}

/**
 * Loads `path` on every server of `on` at once, the connections shared out among them, with
 * `bodies` in turn. The counts are summed; p50 and p99 are the slowest server's, since one
 * generator's latencies cannot be merged with another's into a percentile.
 */
async function loadAll(on: Started[], path: string, bodies: string[], seconds: number, rate?: number, method?: 'GET' | 'POST'): Promise<LoadResult> {
  const each = await Promise.all(
    on.map((s) => runLoad(GENERATOR, { url: s.url, path, bodies, seconds, method, connections: Math.ceil(CONNECTIONS / on.length), ...(rate ? { rate: rate / on.length } : {}) })),
  );
  const sum = (field: 'requests' | 'rps' | 'errors' | 'non2xx'): number => each.reduce((total, r) => total + r[field], 0);
  return { requests: sum('requests'), rps: sum('rps'), p50: Math.max(...each.map((r) => r.p50)), p99: Math.max(...each.map((r) => r.p99)), errors: sum('errors'), non2xx: sum('non2xx') };
}

/**
 * Loads `path` on `on` (one server, or several nodes at once), after a warm-up; again, when other
 * processes used more than MAX_OTHERS of a core meanwhile (up to QUIET_TRIES windows in all).
 */
async function load(on: Started | Started[], path: string, bodies: string[], { seconds = DURATION, rate, database, method, allCores }: LoadOptions = {}): Promise<Load> {
  const servers = Array.isArray(on) ? on : [on];
  await loadAll(servers, path, bodies, WARMUP, rate, method);
  const pids = servers.flatMap((s) => family(s.child.pid!));
  for (let tries = 1; ; tries++) {
    await idle(() => cpuSeconds(pids) + (database?.() ?? 0));
    const [cpuBefore, generatorBefore, dbBefore, coresBefore] = [cpuSeconds(pids), generatorCpuSeconds(), database?.() ?? 0, coreSeconds()];
    const began = performance.now();
    const r = await loadAll(servers, path, bodies, seconds, rate, method);
    const elapsed = (performance.now() - began) / 1000;
    const cpu = cpuSeconds(pids) - cpuBefore;
    const generator = generatorCpuSeconds() - generatorBefore;
    const db = (database?.() ?? 0) - dbBefore;
    const cores = coreSeconds().map((c, i) => c - coresBefore[i]!);
    // The database's CPU counts with the servers': it runs on their cores.
    const others = quietness(cores, elapsed, { server: cpu + db, generator, pinned: PINNED && !allCores && !database });
    if (others > MAX_OTHERS && tries < QUIET_TRIES) {
      process.stdout.write(`  (other processes used ${(others * 100).toFixed(0)}% of a core meanwhile: loaded again)\n`);
      continue;
    }
    const perRequest = (used: number): number => (r.requests > 0 ? (used * 1e6) / r.requests : NaN);
    return {
      ...r,
      serverCpu: cpu / elapsed,
      generatorCpu: generator / elapsed,
      cpuUs: perRequest(cpu),
      ...(database ? { dbCpu: db / elapsed, dbCpuUs: perRequest(db) } : {}),
      others,
      retried: tries - 1,
    };
  }
}

/**
 * CPU a signature of a signed profile costs (the Yggdrasil API signs each player's textures once
 * in ten minutes, src/yggdrasil/profiles.ts): a 4096-bit key, a property of the size it signs.
 */
function signatureCost(count = 200): number {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 4096 });
  const value = Buffer.from(JSON.stringify({ timestamp: Date.now(), profileId: 'f'.repeat(32), profileName: 'player12345', textures: { SKIN: { url: `https://auth.example.org/textures/${'a'.repeat(64)}` } } })).toString('base64');
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) sign('sha1', Buffer.from(value), privateKey);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

/** Raw scrypt rate with the service's parameters, `concurrency` at once, on the server's core. */
function scryptRate(concurrency: number): number {
  const [cmd, ...args] = onServerCore([process.execPath, '--import', 'tsx', join(ROOT, 'bench', 'scrypt-rate.ts'), String(concurrency), String(AUTH_DURATION)]);
  const r = spawnSync(cmd!, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scrypt-rate failed: ${r.stderr}`);
  return Number(r.stdout.trim());
}

/** Seeds `users` players at `db`, then reads the file once so the operating system holds it, as it would after a while in service. */
async function seeded(db: string, users: number, createSchema?: (path: string) => void): Promise<number> {
  process.stdout.write(`Seeding ${users} players...`);
  const seconds = await seed(db, users, createSchema);
  process.stdout.write(` ${seconds.toFixed(1)} s\n`);
  for await (const _ of createReadStream(db)); // read, not kept
  return seconds;
}

/** The endpoints of the PostgreSQL rows, and the player counts they run at (--scale's; --users without it). */
const POSTGRES_PATHS = ['/hasJoined', '/join', '/auth'];
const POSTGRES_SIZES = SCALE.length > 0 ? SCALE : [USERS];

const serverArgs = (db: string, { file = SERVER_JS, port = 0 }: { file?: string; port?: number } = {}): string[] => [
  file,
  'serve',
  '--db',
  db,
  '--port',
  String(port),
  '--join-ttl',
  '86400',
];

/** The paths the floor and fastify serve. */
const FLOOR_PATHS = ['/hasJoined', '/profile'];
const BASELINE = 'baseline (bare node:http)';
const LOG_OFF = '/hasJoined (log off)';
const TWO_WORKERS = '/hasJoined, 2 workers (all cores)';
/** The rows whose steadiness between rounds decides whether the run quotes ratios. */
const REFERENCES = [...FLOOR_PATHS.map((path) => `floor ${path}`), BASELINE];

/** A row of the table: what is loaded, and what it is compared with. */
interface RowSpec {
  endpoint: string;
  path: string;
  /** Compared with fastify's row of the same path, if fastify serves it. */
  vsFastify?: boolean;
  /** No ratio: /auth is measured against the raw scrypt rate instead. */
  noRatio?: boolean;
  /** The server has every core (its workers, or beside PostgreSQL), shared with the generator. */
  allCores?: boolean;
  /** Held at a set rate, by this generator: the rate, not the server, is its limit. */
  rateBy?: Generator;
}

/** One load of a row: its figures and the peak RSS of its server so far. */
interface Measured extends Load {
  peakRssMiB: number;
}

/**
 * What set a row's rate. On one core: the server, when it was busy all along; else the generator,
 * when it was; else neither (a machine busy with other work, or a server waiting). On every core:
 * the cores, when server, database and generator together kept them busy.
 */
type Limit = 'server' | 'generator' | 'neither' | 'the cores' | 'the rate';

function limitOf(spec: RowSpec, m: Load): Limit {
  if (spec.rateBy) return 'the rate';
  if (spec.allCores && m.serverCpu + (m.dbCpu ?? 0) + m.generatorCpu >= BUSY * ALL_CORES) return 'the cores';
  if (!spec.allCores && m.serverCpu >= BUSY) return 'server';
  return m.generatorCpu >= BUSY ? 'generator' : 'neither';
}

interface Row extends Measured {
  endpoint: string;
  limit: Limit;
  /** Largest ÷ smallest CPU a request of its rounds. */
  spread?: number;
  /** Medians of the per-round ratios of CPU a request; none when the run was unsteady. */
  vsFloor?: Ratio;
  vsBaseline?: Ratio;
  vsFastify?: Ratio;
  /** The generator that loaded this row, when it is not the run's. */
  generator?: Generator;
  /** Each round's figures: one, for a row loaded once. */
  rounds: Measured[];
}

function median(xs: number[]): number {
  const sorted = xs.toSorted((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A row's figures over its rounds: the median of each, but the counts summed and the peak RSS the largest. */
function summarize(rounds: Measured[]): Measured {
  const med = (field: (m: Measured) => number): number => median(rounds.map(field));
  const total = (field: 'requests' | 'errors' | 'non2xx'): number => rounds.reduce((sum, m) => sum + m[field], 0);
  return {
    requests: total('requests'),
    rps: med((m) => m.rps),
    p50: med((m) => m.p50),
    p99: med((m) => m.p99),
    errors: total('errors'),
    non2xx: total('non2xx'),
    serverCpu: med((m) => m.serverCpu),
    generatorCpu: med((m) => m.generatorCpu),
    cpuUs: med((m) => m.cpuUs),
    others: Math.max(...rounds.map((m) => m.others)),
    retried: rounds.reduce((sum, m) => sum + m.retried, 0),
    ...(rounds[0]!.dbCpuUs === undefined ? {} : { dbCpu: med((m) => m.dbCpu!), dbCpuUs: med((m) => m.dbCpuUs!) }),
    peakRssMiB: Math.max(...rounds.map((m) => m.peakRssMiB)),
  };
}

/** The median of the rounds' ratios, and their lowest and highest. */
interface Ratio {
  median: number;
  low: number;
  high: number;
}

/**
 * A row's CPU a request ÷ the reference's in the same round, over the rounds. A row loaded once
 * (after the rounds) is set against the reference of each round.
 */
function ratio(row: Measured[], reference: Measured[]): Ratio {
  const each = reference.map((ref, i) => (row.length === 1 ? row[0]! : row[i]!).cpuUs / ref.cpuUs);
  return { median: median(each), low: Math.min(...each), high: Math.max(...each) };
}

const spreadOf = (rounds: Measured[]): number => Math.max(...rounds.map((m) => m.cpuUs)) / Math.min(...rounds.map((m) => m.cpuUs));

/** Every load of the run, by row, in the order of the first round. */
const loaded = new Map<string, { spec: RowSpec; rounds: Measured[] }>();

/** Loads a row once (in `round`, if it is one of the rounds'), keeps its figures and reports them. */
async function measure(spec: RowSpec, on: Started | Started[], bodies: string[], options: LoadOptions = {}, round?: number): Promise<Measured> {
  const servers = Array.isArray(on) ? on : [on];
  const l = await load(servers, spec.path, bodies, { ...options, allCores: spec.allCores });
  const m: Measured = { ...l, peakRssMiB: peakRss(servers.flatMap((s) => family(s.child.pid!))).max };
  const entry = loaded.get(spec.endpoint) ?? { spec, rounds: [] };
  entry.rounds.push(m);
  loaded.set(spec.endpoint, entry);
  const when = round === undefined ? '' : `round ${round}/${ROUNDS} `;
  const db = l.dbCpuUs === undefined ? '' : `, ${l.dbCpuUs.toFixed(1)} µs of the database's`;
  const failed = l.errors + l.non2xx > 0 ? ` (${l.errors} errors, ${l.non2xx} not 2xx)` : '';
  const cpu = `server ${(l.serverCpu * 100).toFixed(0)}%, generator ${(l.generatorCpu * 100).toFixed(0)}%, other processes ${(l.others * 100).toFixed(0)}% of a core`;
  process.stdout.write(`${when}${spec.endpoint}: ${l.rps.toFixed(0)} requests/s, ${l.cpuUs.toFixed(1)} µs of server CPU a request${db}; ${cpu}${failed}\n`);
  return m;
}

interface ScaleRow {
  users: number;
  startMs: number;
  idleRssMiB: number;
  cpuUs: Record<string, number>;
  peakRssMiB: number;
}

const node = process.execPath;
const dir = mkdtempSync(join(tmpdir(), 'mcauth-bench-'));
try {
  const db = join(dir, 'bench.db');
  const seedSeconds = await seeded(db, USERS);
  const bodies = Object.fromEntries([...ENDPOINTS, YGGDRASIL_HAS_JOINED].map((e) => [e.path, bodiesOf(e, USERS)]));
  const generatorName = generatorVersion(GENERATOR);
  const generatorNote =
    GENERATOR === 'wrk' ? 'one thread, a process of its own' : values.generator === 'autocannon' ? 'in this process, as asked' : 'in this process: wrk is not installed';
  process.stdout.write(`Load generator: ${generatorName} (${generatorNote})\n`);

  // Every server of the rounds starts now and stays up; those not loaded idle meanwhile.
  const floor = await start(onServerCore([node, join(ROOT, 'bench', 'floor.ts'), String(USERS)]));
  const baseline = await start(onServerCore([node, join(ROOT, 'bench', 'baseline.ts')]));
  await sleep(1000);
  const baselineIdleRss = statusMiB(baseline.child.pid!, 'VmRSS');
  const fastify = await start(onServerCore([node, join(ROOT, 'bench', 'fastify.ts'), db]));
  let other: Started | undefined;
  if (values.compare !== undefined) {
    // The same players in a database of the other build's own schema (it may refuse a newer one).
    const otherDb = join(dir, 'compare.db');
    await seeded(otherDb, USERS, (path) => {
      const r = spawnSync(node, [values.compare!, 'user', 'add', 'SchemaOnly', '--db', path], { input: 'schema-only-password\n', encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${values.compare} could not create its database: ${r.stderr}`);
    });
    other = await start(onServerCore([node, ...serverArgs(otherDb, { file: values.compare })]));
  }
  const server = await start(onServerCore([node, ...serverArgs(db)]));
  // The same server without its log line a request: /hasJoined's difference to it is that line's cost.
  const quietPort = await freePort();
  const quiet = await start(onServerCore([node, ...serverArgs(db, { port: quietPort }), '--log-level', 'error']), quietPort);
  // The same server with the Yggdrasil API on, for its hasJoined beside the JSON API's.
  const yggdrasilPort = await freePort();
  const yggdrasil = await start(onServerCore([node, ...serverArgs(db, { port: yggdrasilPort }), '--yggdrasil']), yggdrasilPort);
  // Two workers on both cores (the load generator shares them: the figure is what one machine does).
  const two = await start(onAllCores([node, ...serverArgs(db), '--workers', '2']));

  const lookUps = ENDPOINTS.filter((e) => e.path !== '/auth');
  for (let round = 1; round <= ROUNDS; round++) {
    const turn = (spec: RowSpec, on: Started, options?: LoadOptions): Promise<Measured> => measure(spec, on, bodies[spec.path]!, options, round);
    let peakRate = 0;
    // A path's rows one after the other (floor, baseline, fastify, --compare's build, this one):
    // a ratio sets figures of the same minute against each other, as the machine's speed drifts.
    for (const e of lookUps) {
      const path = e.path;
      if (FLOOR_PATHS.includes(path)) await turn({ endpoint: `floor ${path}`, path }, floor);
      if (path === '/hasJoined') await turn({ endpoint: BASELINE, path }, baseline);
      if (FLOOR_PATHS.includes(path)) await turn({ endpoint: `fastify ${path}`, path }, fastify);
      if (other) await turn({ endpoint: `${e.label} (--compare)`, path, vsFastify: true }, other);
      const m = await turn({ endpoint: e.label, path, vsFastify: true }, server);
      if (path !== '/hasJoined') continue;
      peakRate = m.rps;
      await turn({ endpoint: LOG_OFF, path: e.path, vsFastify: true }, quiet);
      const y = YGGDRASIL_HAS_JOINED;
      await turn({ endpoint: y.label, path: y.path }, yggdrasil, { method: 'GET' });
    }
    // wrk cannot hold a rate: this row is autocannon's.
    await turn({ endpoint: '/hasJoined at 80% of its peak', path: '/hasJoined', rateBy: 'autocannon' }, server, { rate: Math.floor(peakRate * 0.8) });
    await turn({ endpoint: TWO_WORKERS, path: '/hasJoined', allCores: true }, two);
  }
  const twoPeak = peakRss(family(two.child.pid!));
  const signatureUs = signatureCost();
  process.stdout.write(`Yggdrasil: one signature of a profile's textures (SHA1withRSA, 4096 bits): ${signatureUs.toFixed(0)} µs of CPU\n`);
  for (const s of [floor, baseline, fastify, other, quiet, yggdrasil, two]) if (s) await stop(s);

  // /auth is set against the raw scrypt rate, not against the other servers: the two alternate,
  // a round each, and the ratio is the median of the rounds' own, as the other rows' are.
  const rssBeforeAuth = peakRss(family(server.child.pid!)).max;
  const hashConcurrency = 4;
  const scryptRounds: number[] = [];
  const authToScryptRounds: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const auth = await measure({ endpoint: '/auth', path: '/auth', noRatio: true }, server, bodies['/auth']!, { seconds: AUTH_DURATION }, round);
    // The hashes of logins still running when the load ended must not share the core with it.
    await idle(() => cpuSeconds(family(server.child.pid!)));
    const rate = scryptRate(hashConcurrency);
    scryptRounds.push(rate);
    authToScryptRounds.push(auth.rps / rate);
    process.stdout.write(`round ${round}/${ROUNDS} raw scrypt: ${rate.toFixed(2)} hashes/s (${hashConcurrency} at once, same core)\n`);
  }
  const scrypt = median(scryptRounds);
  const peak = peakRss(family(server.child.pid!)).max;
  await stop(server);

  // Each size on a fresh server: start, idle RSS, then CPU a request of every endpoint but /auth.
  const scale: ScaleRow[] = [];
  for (const users of SCALE) {
    const file = users === USERS ? db : join(dir, `scale-${users}.db`);
    if (file !== db) await seeded(file, users);
    const s = await start(onServerCore([node, ...serverArgs(file)]));
    await sleep(1000);
    await idle(() => cpuSeconds([s.child.pid!]));
    const idleRssMiB = statusMiB(s.child.pid!, 'VmRSS');
    const cpuUs: Record<string, number> = {};
    for (const e of ENDPOINTS.filter((e) => e.path !== '/auth')) cpuUs[e.path] = (await load(s, e.path, bodiesOf(e, users), { seconds: SCALE_DURATION })).cpuUs;
    const at = { users, startMs: s.startMs, idleRssMiB, cpuUs, peakRssMiB: peakRss([s.child.pid!]).max };
    scale.push(at);
    process.stdout.write(`${users} players: start ${at.startMs.toFixed(0)} ms, idle RSS ${idleRssMiB.toFixed(1)} MiB, peak ${at.peakRssMiB.toFixed(1)} MiB\n`);
    await stop(s);
    if (file !== db) rmSync(file, { force: true });
  }

  // PostgreSQL: one cluster for the run, a database of its own for each size, dropped after it;
  // on it one node, then two (two processes, the connections shared out between them).
  const postgresSeedSeconds: Record<number, number> = {};
  let postgresVersion: string | undefined;
  if (PG) {
    const cluster: Cluster = await PG.startCluster();
    // A signal skips the `finally` below: the cluster is removed first.
    const onSignal = (): void => void cluster.remove().finally(() => process.exit(130));
    process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
    try {
      const postmaster = Number(readFileSync(join(cluster.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // Started from this process, the cluster inherited its core, the generator's: both, as the nodes have.
      if (PINNED) for (const pid of family(postmaster)) spawnSync('taskset', ['-a', '-cp', '0,1', String(pid)]);
      const database = (): number => clusterCpuSeconds(postmaster);
      postgresVersion = (await cluster.psql('SHOW server_version')).trim();
      for (const users of POSTGRES_SIZES) {
        const name = `bench_${users}`;
        await cluster.psql(`CREATE DATABASE ${name}`, 'postgres');
        process.stdout.write(`Seeding ${users} players into PostgreSQL...`);
        postgresSeedSeconds[users] = await seedPostgres(cluster.url(name), users);
        process.stdout.write(` ${postgresSeedSeconds[users]!.toFixed(1)} s\n`);
        for (const count of [1, 2]) {
          const nodes: Started[] = [];
          try {
            for (let i = 0; i < count; i++) nodes.push(await start(onAllCores([node, ...serverArgs(cluster.url(name))])));
            for (const e of ENDPOINTS.filter((e) => POSTGRES_PATHS.includes(e.path))) {
              const endpoint = `postgres ${count} node${count > 1 ? 's' : ''} ${e.label} (${users} players)`;
              await measure({ endpoint, path: e.path, allCores: true, noRatio: e.path === '/auth' }, nodes, bodiesOf(e, users), { database });
            }
          } finally {
            await Promise.all(nodes.map(stop));
          }
        }
        await cluster.psql(`DROP DATABASE ${name} WITH (FORCE)`, 'postgres');
      }
    } finally {
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      await cluster.remove();
    }
  }

  // Ratios only from a steady run: the baseline and the floor, which do the same work every
  // round, must have cost about the same in each.
  const references = REFERENCES.map((endpoint) => ({ endpoint, rounds: loaded.get(endpoint)!.rounds }));
  const unsteady = references.filter((r) => spreadOf(r.rounds) > MAX_REFERENCE_SPREAD);
  const steady = unsteady.length === 0;
  const floorOf = (path: string) => (loaded.get(`floor ${path}`) ?? loaded.get('floor /hasJoined')!).rounds;
  const rows: Row[] = [...loaded.values()].map(({ spec, rounds }) => {
    const figures = summarize(rounds);
    const fastifyRounds = spec.vsFastify ? loaded.get(`fastify ${spec.path}`)?.rounds : undefined;
    const ratios =
      steady && !spec.noRatio
        ? {
            vsFloor: ratio(rounds, floorOf(spec.path)),
            vsBaseline: ratio(rounds, loaded.get(BASELINE)!.rounds),
            ...(fastifyRounds ? { vsFastify: ratio(rounds, fastifyRounds) } : {}),
          }
        : {};
    return {
      endpoint: spec.endpoint,
      ...figures,
      limit: limitOf(spec, figures),
      ...(rounds.length > 1 ? { spread: spreadOf(rounds) } : {}),
      ...ratios,
      ...(spec.rateBy ? { generator: spec.rateBy } : {}),
      rounds,
    };
  });
  const rowOf = (endpoint: string): Row => rows.find((r) => r.endpoint === endpoint)!;
  // What the log line costs: /hasJoined less /hasJoined (log off), round by round.
  const logOff = loaded.get(LOG_OFF)!.rounds;
  const logLineUs = loaded.get('/hasJoined')!.rounds.map((m, i) => m.cpuUs - logOff[i]!.cpuUs);

  const report = {
    when: new Date().toISOString(),
    users: USERS,
    seedSeconds,
    runtime: `node ${process.versions.node}`,
    generator: GENERATOR,
    generatorVersion: generatorName,
    compare: values.compare,
    pinned: PINNED,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    authDurationSeconds: AUTH_DURATION,
    rounds: ROUNDS,
    steady,
    referenceSpread: Object.fromEntries(references.map((r) => [r.endpoint, spreadOf(r.rounds)])),
    logLineUs: { median: median(logLineUs), rounds: logLineUs },
    yggdrasilSignatureUs: signatureUs,
    startToListeningMs: server.startMs,
    peakRssMiB: { baseline: rowOf(BASELINE).peakRssMiB, beforeAuth: rssBeforeAuth, overall: peak, twoWorkersEach: twoPeak.max, twoWorkersSum: twoPeak.sum },
    idleRssMiB: { baseline: baselineIdleRss },
    scryptPerSecond: { median: scrypt, rounds: scryptRounds },
    authToScrypt: { median: median(authToScryptRounds), rounds: authToScryptRounds },
    scalingOneToTwoWorkers: rowOf(TWO_WORKERS).rps / rowOf('/hasJoined').rps,
    rows,
    scale,
    ...(PG ? { postgres: { version: postgresVersion, seedSeconds: postgresSeedSeconds } } : {}),
  };

  const fmt = (n: number | undefined, digits = 0): string => (n === undefined || Number.isNaN(n) ? '' : n.toFixed(digits));
  const times = (n: number | undefined, digits = 2): string => (n === undefined ? '' : `${n.toFixed(digits)}×`);
  const ratioCell = (r: Ratio | undefined): string => (r === undefined ? '' : `${times(r.median)} (${r.low.toFixed(2)}–${r.high.toFixed(2)})`);
  const percent = (n: number | undefined): string => (n === undefined ? '' : `${fmt(n * 100)}%`);
  // The database's CPU a request, a column of its own when there are PostgreSQL rows.
  const dbColumn = PG !== undefined;
  const lines = [
    `| Endpoint | Requests/s | p50 ms | p99 ms | server CPU | generator CPU | limit | CPU µs/request | spread | vs floor | vs baseline | vs fastify | peak RSS MiB |${dbColumn ? ' db CPU µs/request |' : ''}`,
    `|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|${dbColumn ? '---:|' : ''}`,
    ...rows.map((r) => {
      const by = r.generator ? ` (${r.generator})` : '';
      const cells = [
        `${r.endpoint}${by}`,
        fmt(r.rps),
        fmt(r.p50, 1),
        fmt(r.p99, 1),
        percent(r.serverCpu),
        percent(r.generatorCpu),
        r.limit,
        fmt(r.cpuUs, 1),
        times(r.spread),
        ratioCell(r.vsFloor),
        ratioCell(r.vsBaseline),
        ratioCell(r.vsFastify),
        fmt(r.peakRssMiB, 1),
        ...(dbColumn ? [fmt(r.dbCpuUs, 1)] : []),
      ];
      return `| ${cells.join(' | ')} |`;
    }),
  ];
  const paths = ENDPOINTS.filter((e) => e.path !== '/auth');
  const scaleLines = [
    `| Players | start ms | idle RSS MiB | ${paths.map((e) => `${e.label} µs`).join(' | ')} | peak RSS MiB |`,
    `|---:|---:|---:|${paths.map(() => '---:|').join('')}---:|`,
    ...scale.map((s) => `| ${s.users} | ${fmt(s.startMs)} | ${fmt(s.idleRssMiB, 1)} | ${paths.map((e) => fmt(s.cpuUs[e.path], 1)).join(' | ')} | ${fmt(s.peakRssMiB, 1)} |`),
  ];
  // Rows loaded to their peak whose rate neither the server nor the cores it shares set.
  const notServer = rows.filter((r) => r.limit === 'generator' || r.limit === 'neither');
  const listed = (rs: { endpoint: string; spread?: number }[]): string => rs.map((r) => `${r.endpoint} ${times(r.spread)}`).join(', ');
  const summary = [
    `${USERS} players, ${CONNECTIONS} connections; ${ROUNDS} round${ROUNDS > 1 ? 's' : ''}, ${DURATION} s a row after ${WARMUP} s of warm-up; node ${process.versions.node}.`,
    `Each round loads every path in turn, and each path's servers one after the other: floor, baseline, fastify,${values.compare === undefined ? '' : ' --compare,'} dist/server.js. A row's figures are the median of its rounds' (requests, errors summed); /auth: ${ROUNDS} round${ROUNDS > 1 ? 's' : ''} of its own after them, ${AUTH_DURATION} s each, each followed by the raw scrypt rate for as long${PG ? '; the postgres rows: one pass after that' : ''}.`,
    ...(values.compare === undefined ? [] : [`(--compare): ${values.compare}.`]),
    `Load generator: ${generatorName} (${generatorNote}).`,
    PINNED ? 'Server on core 0, load generator on core 1 (taskset); the 2-worker row runs on both.' : 'Not pinned: taskset is missing or there is one core; server and load share the cores.',
    notServer.length === 0
      ? 'The server, not the load generator, was the limit of every row loaded to its peak (limit: server, or the cores).'
      : `The server was NOT the limit of: ${notServer.map((r) => `${r.endpoint} (${r.limit})`).join(', ')}. Their requests/s are not the server's peak; their CPU µs/request still counts.`,
    'floor: node:http, reads the body, JSON.parse, one Map look-up of the player, JSON.stringify of the envelope (bench/floor.ts); baseline: the same but the look-up, one fixed answer (bench/baseline.ts).',
    'limit: what set the rate. server: the server used at least 90% of its core; generator: the load generator (this process and wrk, on their core) did, the server not; neither: both under 90% (a machine busy with other work, or a server waiting); the cores: server, database and generator together kept every core busy; the rate: held at a set rate.',
    'CPU µs/request: utime + stime of the server (and its workers) over the requests answered (lower is better); spread: its largest ÷ smallest over the rounds.',
    'vs floor, vs baseline, vs fastify: ratios of CPU µs/request, each the median of the per-round ratios (a row loaded once: against each round\'s), with their range. vs floor: the floor on the same path, else its /hasJoined.',
    `Quiet windows: each window is loaded again while other processes use more than ${MAX_OTHERS * 100}% of a core (/proc/stat, less this run's own processes; at most ${QUIET_TRIES} windows): ${rows.reduce((n, r) => n + r.retried, 0)} windows were loaded again; in those kept, other processes used at most ${fmt(Math.max(...rows.map((r) => r.others)) * 100)}% of a core.`,
    ROUNDS === 1
      ? 'One round: whether the baseline and the floor held steady between rounds is not checked.'
      : steady
        ? `Steady: between rounds, CPU µs/request moved ${listed(references.map((r) => ({ endpoint: r.endpoint, spread: spreadOf(r.rounds) })))} (at most ${MAX_REFERENCE_SPREAD}× allowed).`
        : `UNSTEADY: between rounds, CPU µs/request of ${listed(unsteady.map((r) => ({ endpoint: r.endpoint, spread: spreadOf(r.rounds) })))} moved more than the ${MAX_REFERENCE_SPREAD}× allowed: the machine's load changed under the run. No ratio is quoted; run it again on a quiet machine.`,
    `The request log line (--log-level info, the default) costs ${fmt(median(logLineUs), 1)} µs of server CPU a request: /hasJoined less ${LOG_OFF} (--log-level error), the median of the rounds' ${logLineUs.map((us) => fmt(us, 1)).join(', ')}${steady ? '' : '; of an unsteady run, so read with care'}.`,
    'Peak RSS is the peak so far (VmHWM).',
    `/auth: ${fmt(rowOf('/auth').rps, 1)} logins/s and a raw scrypt rate of ${fmt(scrypt, 1)}/s (${hashConcurrency} at once, same core, alternated with /auth), the medians; /auth to scrypt: ${fmt(report.authToScrypt.median * 100)}%, the median of the rounds' own ${authToScryptRounds.map((r) => `${fmt(r * 100)}%`).join(', ')}.`,
    `Peak RSS of the server: ${fmt(rssBeforeAuth, 1)} MiB before /auth, ${fmt(peak, 1)} MiB overall; the baseline's: ${fmt(rowOf(BASELINE).peakRssMiB, 1)} MiB (idle after start ${fmt(baselineIdleRss, 1)} MiB); 2 workers: ${fmt(twoPeak.max, 1)} MiB the largest.`,
    `From start to listening: ${fmt(server.startMs)} ms. 1 → 2 workers: ${fmt(report.scalingOneToTwoWorkers, 2)}×.`,
    ...(PG
      ? [
          `postgres rows: dist/server.js --db on a throwaway PostgreSQL ${postgresVersion} cluster (the tests' settings: fsync off; the rest its defaults), seeded in ${POSTGRES_SIZES.map((n) => `${fmt(postgresSeedSeconds[n], 1)} s (${n})`).join(', ')}.`,
          `Nodes and database on ${PINNED ? 'both cores, the load generator on core 1' : 'every core, with the load generator'}; 2 nodes: two processes, the ${CONNECTIONS} connections shared out between them.`,
          'CPU µs/request there: of every node (summed) over the requests of all; db CPU µs/request: of the cluster\'s processes (postmaster, backends and their reaped ones); p50 and p99: the slower node\'s.',
        ]
      : []),
  ];
  const scaleNote = `Each size on a fresh server: idle RSS (VmRSS) once it has started and settled, then ${SCALE_DURATION} s a row; peak RSS under that load, /auth aside.`;
  process.stdout.write(`\n${lines.join('\n')}\n\n${summary.join('\n')}\n${scale.length ? `\n${scaleLines.join('\n')}\n\n${scaleNote}\n` : ''}`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = join(ROOT, 'bench', 'results', `${report.when.replaceAll(':', '-')}-${USERS}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`Written to ${file}\n`);
} finally {
  // Should the run fail midway, no server outlives it.
  for (const s of running) s.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
