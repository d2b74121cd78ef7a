// The benchmark: `npm run bench -- [--users N] [--duration S] [--warmup S] [--connections N]`.
//
// In one run it seeds a database with N players (each with a live token and a fresh join),
// starts a bare node:http baseline and the built dist/server.js on that database, and loads each
// with autocannon: /hasJoined, /profile, /profiles (10 names), /join and /auth with random
// players, then /hasJoined at 80% of its peak (for its p99), then 2 workers. It also measures
// the raw scrypt rate and how long the server takes to start listening. Server and load run on
// separate cores where `taskset` exists. It prints a table and writes the same under
// bench/results/.
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { nameOf, PASSWORD, seed, SERVER_ID, tokenOf, uuidOf } from './seed.ts';

const ROOT = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
  },
});
const USERS = Number(values.users);
const DURATION = Number(values.duration);
const WARMUP = Number(values.warmup);
const CONNECTIONS = Number(values.connections);
for (const [name, n] of Object.entries({ users: USERS, duration: DURATION, warmup: WARMUP, connections: CONNECTIONS })) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a whole number above 0`);
}

// Pinning: the server on core 0, this process (the load generator) on core 1.
const PINNED = availableParallelism() >= 2 && spawnSync('taskset', ['--version']).status === 0;
if (PINNED) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)]);
const onServerCore = (command: string[]): string[] => (PINNED ? ['taskset', '-c', '0', ...command] : command);
const onAllCores = (command: string[]): string[] => (PINNED ? ['taskset', '-c', '0,1', ...command] : command);

const pick = (): number => Math.floor(Math.random() * USERS);
/** Random request bodies made ahead for each load. */
const BODIES = 10_000;
const json = { 'content-type': 'application/json' };

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

/** CPU seconds used so far by the processes (utime + stime, in clock ticks of 1/100 s). */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / 100;
}

/** Resident memory now, in MiB: anonymous (the heap, SQLite's cache) and file-backed (the runtime's own code). */
function rssSplit(pid: number): { anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
  return { anon: kib('RssAnon'), file: kib('RssFile') };
}

/** Peak resident memory (VmHWM) of the processes, in MiB: the largest, and their sum. */
function peakRss(pids: number[]): { max: number; sum: number } {
  const each = pids.map((pid) => {
    try {
      return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    } catch {
      return 0;
    }
  });
  return { max: Math.max(0, ...each), sum: each.reduce((a, b) => a + b, 0) };
}

/**
 * Waits until the server has finished the work the warm-up left queued (logins keep hashing
 * after their clients are gone): under 20% of a core over 200 ms, or 30 s at most.
 */
async function idle(pids: number[]): Promise<void> {
  for (let i = 0; i < 150; i++) {
    const before = cpuSeconds(pids);
    await new Promise((r) => setTimeout(r, 200));
    if (cpuSeconds(pids) - before < 0.04) return;
  }
}

interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** Cores the server used while loaded (1.0: one core fully). */
  serverCpu: number;
}

/** Loads `path` with requests whose bodies `body` makes, after a warm-up; `rate` caps requests/s. */
async function load(s: Started, path: string, body: () => unknown, rate?: number): Promise<Load> {
  // Bodies made ahead and taken in turn: making one a request would cost the load generator
  // more than some requests cost the server.
  const bodies = Array.from({ length: BODIES }, () => JSON.stringify(body()));
  let next = 0;
  const options = (duration: number) => ({
    url: s.url,
    connections: CONNECTIONS,
    duration,
    ...(rate ? { overallRate: rate } : {}),
    requests: [{ method: 'POST' as const, path, headers: json, setupRequest: (req: object) => ({ ...req, body: bodies[next++ % BODIES] }) }],
  });
  await autocannon(options(WARMUP));
  const pids = family(s.child.pid!);
  await idle(pids);
  const cpuBefore = cpuSeconds(pids);
  const began = performance.now();
  const r = await autocannon(options(DURATION));
  const serverCpu = (cpuSeconds(pids) - cpuBefore) / ((performance.now() - began) / 1000);
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx, serverCpu };
}

/** Raw scrypt rate with the service's parameters, `concurrency` at once, on the server's core. */
function scryptRate(concurrency: number): number {
  const [cmd, ...args] = onServerCore([process.execPath, '--import', 'tsx', join(ROOT, 'bench', 'scrypt-rate.ts'), String(concurrency), String(DURATION)]);
  const r = spawnSync(cmd!, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scrypt-rate failed: ${r.stderr}`);
  return Number(r.stdout.trim());
}

const ENDPOINTS: { path: string; label: string; body: () => unknown }[] = [
  { path: '/hasJoined', label: '/hasJoined', body: () => ({ username: nameOf(pick()), serverID: SERVER_ID }) },
  { path: '/profile', label: '/profile', body: () => ({ userUUID: uuidOf(pick()) }) },
  { path: '/profiles', label: '/profiles (10 names)', body: () => Array.from({ length: 10 }, () => nameOf(pick())) },
  {
    path: '/join',
    label: '/join',
    body: () => {
      const i = pick();
      return { accessToken: tokenOf(i), userUUID: uuidOf(i), serverID: SERVER_ID };
    },
  },
  { path: '/auth', label: '/auth', body: () => ({ login: nameOf(pick()), password: PASSWORD }) },
];

const dir = mkdtempSync(join(tmpdir(), 'mcauth-bench-'));
try {
  const db = join(dir, 'bench.db');
  process.stdout.write(`Seeding ${USERS} players...`);
  const seedSeconds = await seed(db, USERS);
  process.stdout.write(` ${seedSeconds.toFixed(1)} s\n`);
  // Reads the file once, so the operating system holds it in memory as it would after a while in
  // service: the first load is then not a measure of the disk.
  readFileSync(db);

  const node = process.execPath;
  const serverArgs = [join(ROOT, 'dist', 'server.js'), 'serve', '--db', db, '--port', '0', '--join-ttl', '86400'];

  const rows: Record<string, unknown>[] = [];
  const baseline = await start(onServerCore([node, join(ROOT, 'bench', 'baseline.ts')]));
  const base = await load(baseline, '/hasJoined', ENDPOINTS[0]!.body);
  const baselineRss = peakRss([baseline.child.pid!]).max;
  await stop(baseline);
  process.stdout.write(`baseline: ${base.rps.toFixed(0)} requests/s\n`);
  rows.push({ endpoint: 'baseline (bare node:http)', ...base, ratio: 1, peakRssMiB: baselineRss });
  const generatorLimited = base.serverCpu < 0.9;

  const server = await start(onServerCore([node, ...serverArgs]));
  const results: Record<string, Load> = {};
  let rssBeforeAuth = 0;
  for (const e of ENDPOINTS) {
    if (e.path === '/auth') rssBeforeAuth = peakRss(family(server.child.pid!)).max;
    results[e.path] = await load(server, e.path, e.body);
    process.stdout.write(`${e.label}: ${results[e.path]!.rps.toFixed(0)} requests/s\n`);
    rows.push({ endpoint: e.label, ...results[e.path], ratio: results[e.path]!.rps / base.rps, peakRssMiB: peakRss(family(server.child.pid!)).max });
  }
  const peak = peakRss(family(server.child.pid!)).max;
  const split = rssSplit(server.child.pid!);
  const steady = await load(server, '/hasJoined', ENDPOINTS[0]!.body, Math.floor(results['/hasJoined']!.rps * 0.8));
  rows.push({ endpoint: '/hasJoined at 80% of its peak', ...steady, ratio: steady.rps / base.rps, peakRssMiB: peakRss(family(server.child.pid!)).max });
  await stop(server);

  const hashConcurrency = 4;
  process.stdout.write('Measuring the raw scrypt rate...\n');
  const scrypt = scryptRate(hashConcurrency);

  // Two workers on both cores (the load generator shares them: the figure is what one machine does).
  const two = await start(onAllCores([node, ...serverArgs, '--workers', '2']));
  const twoWorkers = await load(two, '/hasJoined', ENDPOINTS[0]!.body);
  const twoPeak = peakRss(family(two.child.pid!));
  await stop(two);
  rows.push({ endpoint: '/hasJoined, 2 workers (all cores)', ...twoWorkers, ratio: twoWorkers.rps / base.rps, peakRssMiB: twoPeak.max });

  const report = {
    when: new Date().toISOString(),
    users: USERS,
    seedSeconds,
    runtime: `node ${process.versions.node}`,
    pinned: PINNED,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    generatorLimited,
    startToListeningMs: server.startMs,
    peakRssMiB: { baseline: baselineRss, beforeAuth: rssBeforeAuth, overall: peak, twoWorkersEach: twoPeak.max, twoWorkersSum: twoPeak.sum },
    rssAfterAuthMiB: split,
    scryptPerSecond: scrypt,
    authToScrypt: results['/auth']!.rps / scrypt,
    scalingOneToTwoWorkers: twoWorkers.rps / results['/hasJoined']!.rps,
    rows,
  };

  const fmt = (n: number, digits = 0): string => n.toFixed(digits);
  const lines = [
    `| Endpoint | Requests/s | p50 ms | p99 ms | vs baseline | server CPU | peak RSS MiB |`,
    `|---|---:|---:|---:|---:|---:|---:|`,
    ...rows.map((r) => {
      const l = r as unknown as Load & { endpoint: string; ratio: number; peakRssMiB: number };
      // A server below 90% of its core was waiting for requests: the load generator held it back.
      const held = l.serverCpu < 0.9 && !l.endpoint.includes('80%') ? ' *' : '';
      return `| ${l.endpoint} | ${fmt(l.rps)} | ${fmt(l.p50, 1)} | ${fmt(l.p99, 1)} | ${fmt(l.ratio * 100)}% | ${fmt(l.serverCpu * 100)}%${held} | ${fmt(l.peakRssMiB, 1)} |`;
    }),
  ];
  const summary = [
    `${USERS} players, ${CONNECTIONS} connections, ${DURATION} s a row after ${WARMUP} s of warm-up; node ${process.versions.node}.`,
    PINNED ? 'Server on core 0, load generator on core 1 (taskset); the 2-worker row runs on both.' : 'Not pinned: taskset is missing or there is one core; server and load share the cores.',
    generatorLimited
      ? `The load generator was the limit: the baseline server used only ${fmt(base.serverCpu * 100)}% of its core.`
      : `The baseline server used ${fmt(base.serverCpu * 100)}% of its core: the load generator was not the limit.`,
    '* server below 90% of its core: the load generator, not the server, set that row\'s rate. Peak RSS is the peak so far (VmHWM).',
    `/auth: ${fmt(results['/auth']!.rps, 1)} logins/s against a raw scrypt rate of ${fmt(scrypt, 1)}/s (${hashConcurrency} at once, same core): ${fmt(report.authToScrypt * 100)}%.`,
    `Peak RSS of the server: ${fmt(rssBeforeAuth, 1)} MiB before /auth, ${fmt(peak, 1)} MiB overall (after /auth ${fmt(split.anon, 1)} MiB anonymous, ${fmt(split.file, 1)} MiB file-backed: the runtime's code); the baseline's: ${fmt(baselineRss, 1)} MiB; 2 workers: ${fmt(twoPeak.max, 1)} MiB the largest.`,
    `From start to listening: ${fmt(server.startMs)} ms. 1 → 2 workers: ${fmt(report.scalingOneToTwoWorkers, 2)}×.`,
  ];
  process.stdout.write(`\n${lines.join('\n')}\n\n${summary.join('\n')}\n`);
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = join(ROOT, 'bench', 'results', `${report.when.replaceAll(':', '-')}-${USERS}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`Written to ${file}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
