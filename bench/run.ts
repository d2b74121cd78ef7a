// The benchmark: `npm run bench -- [--users N] [--duration S] [--warmup S] [--connections N]
// [--generator wrk|autocannon] [--scale 100000,1000000] [--scale-duration S] [--compare FILE]
// [--postgres]`.
//
// In one run it seeds a database with N players (each with a live token and a fresh join) and
// loads, on that database, a bare node:http baseline, the popular stack (fastify with JSON-schema
// validation over node:sqlite, bench/fastify.ts) and the built dist/server.js: /hasJoined,
// /profile, /profiles (10 names), /join and /auth with random players, then /hasJoined at 80% of
// its peak (for its p99), then 2 workers. Each row gives the server's CPU time a request, from
// /proc (utime + stime of the server and its workers over the requests answered): a figure the
// load generator cannot flatter, unlike requests/s when the generator, not the server, is the
// limit. The load comes from wrk when it is installed, from autocannon otherwise (bench/load.ts).
// Then, for each player count of --scale, a fresh server on a database of that size: time to
// listen, idle RSS after start, CPU a request and peak RSS under load. Server and load run on
// separate cores where `taskset` exists. It prints tables and writes the same under bench/results/.
// --compare loads another build of the server (an earlier dist/server.js, copied aside) in the same
// run, on every endpoint but /auth: a before and after that one run's conditions hold alike.
// --postgres adds, at each size of --scale, dist/server.js on a throwaway PostgreSQL cluster (the
// tests' helper, test/helpers/postgres.ts) holding the same players: /hasJoined, /join and /auth
// on one node, then on two, with the CPU the database spent a request beside the nodes'.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { availableGenerator, runLoad, type Generator, type LoadResult } from './load.ts';
import type { Cluster } from '../test/helpers/postgres.ts';
import { nameOf, PASSWORD, seed, seedPostgres, SERVER_ID, tokenOf, uuidOf } from './seed.ts';

const ROOT = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
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
const SCALE_DURATION = Number(values['scale-duration']);
const SCALE = values.scale === '' ? [] : values.scale.split(',').map(Number);
const numbers: [string, number][] = [['users', USERS], ['duration', DURATION], ['warmup', WARMUP], ['connections', CONNECTIONS], ['scale-duration', SCALE_DURATION], ...SCALE.map((n): [string, number] => ['scale', n])];
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

/** Random request bodies made ahead for each load. */
const BODIES = 10_000;
/** Clock ticks a second in /proc/PID/stat (USER_HZ: 100 on Linux). */
const TICKS = 100;

interface Started {
  child: ChildProcess;
  url: string;
  /** From spawn to the listen line, in ms. */
  startMs: number;
}

/** Starts a process and resolves once its output names the address it listens on. */
function start(command: string[]): Promise<Started> {
  const began = performance.now();
  const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ready, fail) => {
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString('utf8');
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) ready({ child, url: m[1]!, startMs: performance.now() - began });
      if (out.length > 1e6) out = out.slice(-1000);
    };
    // The server logs a line a request: keep reading, or the pipe fills and stalls it.
    child.stdout!.on('data', onData);
    child.once('exit', (code) => fail(new Error(`${command.join(' ')} exited (${code}) before listening:\n${out}`)));
  });
}

function stop(s: Started): Promise<void> {
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
  /** Server CPU time a request answered, in µs: of all the row's nodes, over the requests of all. */
  cpuUs: number;
  /** The database's CPU time a request answered, in µs (the PostgreSQL rows). */
  dbCpuUs?: number;
}

interface LoadOptions {
  seconds?: number;
  /** Caps requests/s, shared out among the servers (autocannon only). */
  rate?: number;
  /** CPU seconds the database has used so far, counted apart from the servers'. */
  database?: () => number;
}

/**
 * Loads `path` on every server of `on` at once, the connections shared out among them, with
 * `bodies` in turn. The counts are summed; p50 and p99 are the slowest server's, since one
 * generator's latencies cannot be merged with another's into a percentile.
 */
async function loadAll(on: Started[], path: string, bodies: string[], seconds: number, rate?: number): Promise<LoadResult> {
  const each = await Promise.all(
    on.map((s) => runLoad(GENERATOR, { url: s.url, path, bodies, seconds, connections: Math.ceil(CONNECTIONS / on.length), ...(rate ? { rate: rate / on.length } : {}) })),
  );
  const sum = (field: 'requests' | 'rps' | 'errors' | 'non2xx'): number => each.reduce((total, r) => total + r[field], 0);
  return { requests: sum('requests'), rps: sum('rps'), p50: Math.max(...each.map((r) => r.p50)), p99: Math.max(...each.map((r) => r.p99)), errors: sum('errors'), non2xx: sum('non2xx') };
}

/** Loads `path` on `on` (one server, or several nodes at once), after a warm-up. */
async function load(on: Started | Started[], path: string, bodies: string[], { seconds = DURATION, rate, database }: LoadOptions = {}): Promise<Load> {
  const servers = Array.isArray(on) ? on : [on];
  await loadAll(servers, path, bodies, WARMUP, rate);
  const pids = servers.flatMap((s) => family(s.child.pid!));
  await idle(() => cpuSeconds(pids) + (database?.() ?? 0));
  const cpuBefore = cpuSeconds(pids);
  const dbBefore = database?.() ?? 0;
  const began = performance.now();
  const r = await loadAll(servers, path, bodies, seconds, rate);
  const cpu = cpuSeconds(pids) - cpuBefore;
  const db = (database?.() ?? 0) - dbBefore;
  const perRequest = (used: number): number => (r.requests > 0 ? (used * 1e6) / r.requests : NaN);
  return { ...r, serverCpu: cpu / ((performance.now() - began) / 1000), cpuUs: perRequest(cpu), ...(database ? { dbCpuUs: perRequest(db) } : {}) };
}

/** Raw scrypt rate with the service's parameters, `concurrency` at once, on the server's core. */
function scryptRate(concurrency: number): number {
  const [cmd, ...args] = onServerCore([process.execPath, '--import', 'tsx', join(ROOT, 'bench', 'scrypt-rate.ts'), String(concurrency), String(DURATION)]);
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

interface Endpoint {
  path: string;
  label: string;
  /** A request body about player `i` of `users`. */
  body: (pick: () => number) => unknown;
}

const ENDPOINTS: Endpoint[] = [
  { path: '/hasJoined', label: '/hasJoined', body: (pick) => ({ username: nameOf(pick()), serverID: SERVER_ID }) },
  { path: '/profile', label: '/profile', body: (pick) => ({ userUUID: uuidOf(pick()) }) },
  { path: '/profiles', label: '/profiles (10 names)', body: (pick) => Array.from({ length: 10 }, () => nameOf(pick())) },
  {
    path: '/join',
    label: '/join',
    body: (pick) => {
      const i = pick();
      return { accessToken: tokenOf(i), userUUID: uuidOf(i), serverID: SERVER_ID };
    },
  },
  { path: '/auth', label: '/auth', body: (pick) => ({ login: nameOf(pick()), password: PASSWORD }) },
];

/** Bodies made ahead, of random players among `users`: making one a request would cost the generator more than some requests cost the server. */
function bodiesOf(e: Endpoint, users: number): string[] {
  const pick = (): number => Math.floor(Math.random() * users);
  return Array.from({ length: BODIES }, () => JSON.stringify(e.body(pick)));
}

/** The endpoints of the PostgreSQL rows, and the player counts they run at (--scale's; --users without it). */
const POSTGRES_PATHS = ['/hasJoined', '/join', '/auth'];
const POSTGRES_SIZES = SCALE.length > 0 ? SCALE : [USERS];

const serverArgs = (db: string, file = join(ROOT, 'dist', 'server.js')): string[] => [file, 'serve', '--db', db, '--port', '0', '--join-ttl', '86400'];

interface Row extends Load {
  endpoint: string;
  /** CPU a request against the baseline's, and against fastify's on the same endpoint. */
  vsBaseline: number;
  vsFastify?: number;
  peakRssMiB: number;
  /** The generator that loaded this row, when it is not the run's. */
  generator?: Generator;
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
  const bodies = Object.fromEntries(ENDPOINTS.map((e) => [e.path, bodiesOf(e, USERS)]));
  process.stdout.write(`Load generator: ${GENERATOR}${GENERATOR === 'wrk' ? '' : ' (wrk is not installed)'}\n`);

  const rows: Row[] = [];
  const row = (endpoint: string, l: Load, peakRssMiB: number, base: Load | undefined, fastify?: Load, generator?: Generator): Row => {
    const r: Row = { endpoint, ...l, vsBaseline: base ? l.cpuUs / base.cpuUs : 1, peakRssMiB, ...(fastify ? { vsFastify: l.cpuUs / fastify.cpuUs } : {}), ...(generator ? { generator } : {}) };
    rows.push(r);
    const db = l.dbCpuUs === undefined ? '' : `, ${l.dbCpuUs.toFixed(1)} µs of the database's`;
    const failed = l.errors + l.non2xx > 0 ? ` (${l.errors} errors, ${l.non2xx} not 2xx)` : '';
    process.stdout.write(`${endpoint}: ${l.rps.toFixed(0)} requests/s, ${l.cpuUs.toFixed(1)} µs of server CPU a request${db}${failed}\n`);
    return r;
  };

  const baseline = await start(onServerCore([node, join(ROOT, 'bench', 'baseline.ts')]));
  await sleep(1000);
  const baselineIdleRss = statusMiB(baseline.child.pid!, 'VmRSS');
  const base = await load(baseline, '/hasJoined', bodies['/hasJoined']!);
  row('baseline (bare node:http)', base, peakRss([baseline.child.pid!]).max, undefined);
  await stop(baseline);
  const generatorLimited = base.serverCpu < 0.9;

  const fastify = await start(onServerCore([node, join(ROOT, 'bench', 'fastify.ts'), db]));
  const fastifyLoads: Record<string, Load> = {};
  for (const path of ['/hasJoined', '/profile']) {
    fastifyLoads[path] = await load(fastify, path, bodies[path]!);
    row(`fastify ${path}`, fastifyLoads[path]!, peakRss([fastify.child.pid!]).max, base);
  }
  await stop(fastify);

  if (values.compare !== undefined) {
    // The same players in a database of the other build's own schema (it may refuse a newer one).
    const otherDb = join(dir, 'compare.db');
    await seeded(otherDb, USERS, (path) => {
      const r = spawnSync(node, [values.compare!, 'user', 'add', 'SchemaOnly', '--db', path], { input: 'schema-only-password\n', encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${values.compare} could not create its database: ${r.stderr}`);
    });
    const other = await start(onServerCore([node, ...serverArgs(otherDb, values.compare)]));
    for (const e of ENDPOINTS.filter((e) => e.path !== '/auth')) {
      row(`${e.label} (--compare)`, await load(other, e.path, bodies[e.path]!), peakRss([other.child.pid!]).max, base, fastifyLoads[e.path]);
    }
    await stop(other);
    rmSync(otherDb, { force: true });
  }

  const server = await start(onServerCore([node, ...serverArgs(db)]));
  const results: Record<string, Load> = {};
  let rssBeforeAuth = 0;
  for (const e of ENDPOINTS) {
    if (e.path === '/auth') rssBeforeAuth = peakRss(family(server.child.pid!)).max;
    results[e.path] = await load(server, e.path, bodies[e.path]!);
    row(e.label, results[e.path]!, peakRss(family(server.child.pid!)).max, base, fastifyLoads[e.path]);
  }
  const peak = peakRss(family(server.child.pid!)).max;
  const rate = Math.floor(results['/hasJoined']!.rps * 0.8);
  const steady = await load(server, '/hasJoined', bodies['/hasJoined']!, { rate });
  row('/hasJoined at 80% of its peak', steady, peakRss(family(server.child.pid!)).max, base, undefined, 'autocannon');
  await stop(server);

  const hashConcurrency = 4;
  process.stdout.write('Measuring the raw scrypt rate...\n');
  const scrypt = scryptRate(hashConcurrency);

  // Two workers on both cores (the load generator shares them: the figure is what one machine does).
  const two = await start(onAllCores([node, ...serverArgs(db), '--workers', '2']));
  const twoWorkers = await load(two, '/hasJoined', bodies['/hasJoined']!);
  const twoPeak = peakRss(family(two.child.pid!));
  await stop(two);
  row('/hasJoined, 2 workers (all cores)', twoWorkers, twoPeak.max, base);

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
              const l = await load(nodes, e.path, bodiesOf(e, users), { database });
              row(`postgres ${count} node${count > 1 ? 's' : ''} ${e.label} (${users} players)`, l, peakRss(nodes.flatMap((n) => family(n.child.pid!))).max, base);
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

  const report = {
    when: new Date().toISOString(),
    users: USERS,
    seedSeconds,
    runtime: `node ${process.versions.node}`,
    generator: GENERATOR,
    compare: values.compare,
    pinned: PINNED,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    generatorLimited,
    startToListeningMs: server.startMs,
    peakRssMiB: { baseline: rows[0]!.peakRssMiB, beforeAuth: rssBeforeAuth, overall: peak, twoWorkersEach: twoPeak.max, twoWorkersSum: twoPeak.sum },
    idleRssMiB: { baseline: baselineIdleRss },
    scryptPerSecond: scrypt,
    authToScrypt: results['/auth']!.rps / scrypt,
    scalingOneToTwoWorkers: twoWorkers.rps / results['/hasJoined']!.rps,
    rows,
    scale,
    ...(PG ? { postgres: { version: postgresVersion, seedSeconds: postgresSeedSeconds } } : {}),
  };

  const fmt = (n: number | undefined, digits = 0): string => (n === undefined || Number.isNaN(n) ? '' : n.toFixed(digits));
  const times = (n: number | undefined): string => (n === undefined ? '' : `${n.toFixed(2)}×`);
  // The database's CPU a request, a column of its own when there are PostgreSQL rows.
  const dbColumn = PG !== undefined;
  const lines = [
    `| Endpoint | Requests/s | p50 ms | p99 ms | server CPU | CPU µs/request | vs baseline | vs fastify | peak RSS MiB |${dbColumn ? ' db CPU µs/request |' : ''}`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|${dbColumn ? '---:|' : ''}`,
    ...rows.map((r) => {
      // A server below 90% of its core was waiting for requests: the load generator held it back.
      // Not said of the PostgreSQL rows, whose nodes wait on the database too, and have both cores.
      const held = r.serverCpu < 0.9 && !r.endpoint.includes('80%') && !r.endpoint.includes('workers') && r.dbCpuUs === undefined ? ' *' : '';
      const by = r.generator ? ` (${r.generator})` : '';
      // /auth is measured against the raw scrypt rate, not the baseline (see below).
      const vsBaseline = r.endpoint.includes('/auth') ? '' : times(r.vsBaseline);
      return `| ${r.endpoint}${by} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.serverCpu * 100)}%${held} | ${fmt(r.cpuUs, 1)} | ${vsBaseline} | ${times(r.vsFastify)} | ${fmt(r.peakRssMiB, 1)} |${dbColumn ? ` ${fmt(r.dbCpuUs, 1)} |` : ''}`;
    }),
  ];
  const paths = ENDPOINTS.filter((e) => e.path !== '/auth');
  const scaleLines = [
    `| Players | start ms | idle RSS MiB | ${paths.map((e) => `${e.label} µs`).join(' | ')} | peak RSS MiB |`,
    `|---:|---:|---:|${paths.map(() => '---:|').join('')}---:|`,
    ...scale.map((s) => `| ${s.users} | ${fmt(s.startMs)} | ${fmt(s.idleRssMiB, 1)} | ${paths.map((e) => fmt(s.cpuUs[e.path], 1)).join(' | ')} | ${fmt(s.peakRssMiB, 1)} |`),
  ];
  const summary = [
    `${USERS} players, ${CONNECTIONS} connections, ${DURATION} s a row after ${WARMUP} s of warm-up; node ${process.versions.node}; load from ${GENERATOR}${GENERATOR === 'wrk' ? ' (one thread)' : ' (wrk is not installed)'}.`,
    ...(values.compare === undefined ? [] : [`(--compare): ${values.compare}, loaded in the same run before dist/server.js.`]),
    PINNED ? 'Server on core 0, load generator on core 1 (taskset); the 2-worker row runs on both.' : 'Not pinned: taskset is missing or there is one core; server and load share the cores.',
    generatorLimited
      ? `The load generator was the limit: the baseline server used only ${fmt(base.serverCpu * 100)}% of its core. CPU µs/request still compares.`
      : `The baseline server used ${fmt(base.serverCpu * 100)}% of its core: the load generator was not the limit.`,
    'CPU µs/request: utime + stime of the server (and its workers) over the requests answered; "vs" columns are ratios of it (lower is better).',
    '* server below 90% of its core: the load generator, not the server, set that row\'s rate. Peak RSS is the peak so far (VmHWM).',
    `/auth: ${fmt(results['/auth']!.rps, 1)} logins/s against a raw scrypt rate of ${fmt(scrypt, 1)}/s (${hashConcurrency} at once, same core): ${fmt(report.authToScrypt * 100)}%.`,
    `Peak RSS of the server: ${fmt(rssBeforeAuth, 1)} MiB before /auth, ${fmt(peak, 1)} MiB overall; the baseline's: ${fmt(rows[0]!.peakRssMiB, 1)} MiB (idle after start ${fmt(baselineIdleRss, 1)} MiB); 2 workers: ${fmt(twoPeak.max, 1)} MiB the largest.`,
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
  rmSync(dir, { recursive: true, force: true });
}
