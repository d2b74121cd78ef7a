// `npm run bench:profile -- [--path /hasJoined] [--users N] [--duration S] [--warmup S]
// [--server FILE] [--top N] [--log-level info|error]`: where a request's CPU goes, by source file.
//
// It seeds a database, starts the server from its TypeScript source (`src/server.ts`: Node runs
// it as written, so every function keeps its file; --server takes another checkout's) under
// `--cpu-prof`, on core 0, loads one endpoint with the benchmark's requests from core 1 (wrk, or
// autocannon without it), stops the server and reads the profile it wrote. Only the samples taken
// while the measured load ran count (the start and the warm-up do not): each one's time is the
// self time of the function it caught, summed by source file (node's own modules by name, V8's
// builtins and the system calls as native code, the garbage collector apart) and divided by the
// requests answered in the window: µs of CPU a request, under the profiler (which adds to all).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { availableGenerator, runLoad } from './load.ts';
import { bodiesOf, ENDPOINTS } from './requests.ts';
import { seed } from './seed.ts';

const ROOT = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    path: { type: 'string', default: '/hasJoined' },
    users: { type: 'string', default: '100000' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    server: { type: 'string', default: join(ROOT, 'src', 'server.ts') },
    top: { type: 'string', default: '25' },
    'log-level': { type: 'string', default: 'info' },
  },
});
const endpoint = ENDPOINTS.find((e) => e.path === values.path);
if (!endpoint || endpoint.path === '/auth') throw new Error(`--path must be one of ${ENDPOINTS.filter((e) => e.path !== '/auth').map((e) => e.path).join(', ')}`);
const USERS = Number(values.users);
const SERVER_DIR = join(values.server, '..', '..');

const pinned = spawnSync('taskset', ['--version']).status === 0;
if (pinned) spawnSync('taskset', ['-a', '-cp', '1', String(process.pid)]);

/** A V8 CPU profile (`.cpuprofile`), as much of it as is read here. */
interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a profile node's self time is counted: its source file, node's module, native code or the GC. */
function placeOf({ functionName, url }: Profile['nodes'][number]['callFrame']): string | undefined {
  if (functionName === '(idle)' || functionName === '(root)') return undefined;
  if (functionName === '(garbage collector)') return 'GC';
  if (functionName === '(program)') return 'native: (program)';
  if (url === '') return `native: ${functionName || '(anonymous)'}`;
  if (url.startsWith('file:')) {
    const file = fileURLToPath(url);
    return file.startsWith(SERVER_DIR) ? relative(SERVER_DIR, file) : file;
  }
  return url;
}

/** µs of self time by place, and by function, of the samples taken between `from` and `to` (µs of the monotonic clock). */
function selfTimes(profile: Profile, from: number, to: number): { places: Map<string, number>; functions: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const places = new Map<string, number>();
  const functions = new Map<string, number>();
  let at = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i]!;
    at += delta;
    if (at < from || at > to) continue;
    const node = byId.get(profile.samples[i]!)!;
    const place = placeOf(node.callFrame);
    if (place === undefined) continue;
    places.set(place, (places.get(place) ?? 0) + delta);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${place}`;
    functions.set(fn, (functions.get(fn) ?? 0) + delta);
  }
  return { places, functions };
}

const now = (): number => Number(process.hrtime.bigint() / 1000n);

const dir = mkdtempSync(join(tmpdir(), 'mcauth-profile-'));
try {
  const db = join(dir, 'bench.db');
  process.stdout.write(`Seeding ${USERS} players...`);
  await seed(db, USERS);
  process.stdout.write(' done\n');
  const node = process.execPath;
  const args = ['--cpu-prof', '--cpu-prof-dir', dir, '--cpu-prof-interval', '250', values.server];
  args.push('serve', '--db', db, '--port', '0', '--join-ttl', '86400', '--log-level', values['log-level']);
  const command = pinned ? ['taskset', '-c', '0', node, ...args] : [node, ...args];
  const server = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((ready, fail) => {
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString('utf8');
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      // Then its lines are read and dropped: the pipe must not fill.
      if (m) server.stdout.off('data', onData).resume() && ready(m[1]!);
    };
    server.stdout.on('data', onData);
    server.once('exit', (code) => fail(new Error(`the server exited (${code}) before listening:\n${out}`)));
  });
  const generator = availableGenerator();
  const bodies = bodiesOf(endpoint, USERS);
  const spec = { url: url + endpoint.path, path: endpoint.path, bodies, connections: Number(values.connections) };
  await runLoad(generator, { ...spec, seconds: Number(values.warmup) });
  const from = now();
  const load = await runLoad(generator, { ...spec, seconds: Number(values.duration) });
  const to = now();
  await new Promise<void>((done) => {
    server.once('exit', () => done());
    server.kill('SIGTERM');
  });
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the server wrote no profile');
  const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
  if (profile.startTime > from) throw new Error('the profile began after the load: its clock is not the one read here');
  const { places, functions } = selfTimes(profile, from, to);
  const busy = [...places.values()].reduce((a, b) => a + b, 0);
  const perRequest = (us: number): string => (us / load.requests).toFixed(2).padStart(8);
  const share = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>, top: number): string[] =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => `${perRequest(us)} ${share(us)}  ${name}`);
  const failed = load.errors + load.non2xx;
  process.stdout.write(
    [
      `${endpoint.label}: ${load.requests} requests in ${Number(values.duration)} s (${generator}), ${failed} failed; ` +
        `${(busy / load.requests).toFixed(1)} µs of sampled CPU a request (server ${relative(ROOT, values.server) || values.server}, --log-level ${values['log-level']})`,
      '',
      'µs/request  share  by source file (self time)',
      ...rows(places, Infinity),
      '',
      `µs/request  share  the ${values.top} busiest functions`,
      ...rows(functions, Number(values.top)),
      '',
    ].join('\n'),
  );
  if (failed > 0) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
