// The load generator of the benchmark: wrk when it is installed (a C program, one thread: it keeps
// even the bare baseline busy), autocannon otherwise (in this process; it cannot, so rates it
// reports are the generator's as much as the server's). Both send POST bodies (or GET paths) taken
// in turn from a list made ahead, and report the same figures.
import autocannon from 'autocannon';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Generator = 'wrk' | 'autocannon';

export interface LoadSpec {
  url: string;
  path: string;
  /** JSON bodies, sent in turn; for GET, the paths (query included) instead. */
  bodies: string[];
  method?: 'GET' | 'POST';
  connections: number;
  seconds: number;
  /** Requests a second in all; only autocannon can hold a rate. */
  rate?: number;
}

export interface LoadResult {
  /** Requests answered in the run. */
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Answers whose status was not 2xx. */
  non2xx: number;
}

/** wrk when it runs here, else autocannon. */
export function availableGenerator(): Generator {
  return spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon';
}

/** The generator's name and version, as a report names it: "wrk 4.1.0", "autocannon 9.0.0". */
export function generatorVersion(generator: Generator): string {
  if (generator === 'wrk') {
    // wrk prints its version before its usage, and exits 1.
    const r = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
    return /^wrk \S+/m.exec(`${r.stdout}${r.stderr}`)?.[0] ?? 'wrk';
  }
  const { version } = createRequire(import.meta.url)('autocannon/package.json') as { version: string };
  return `autocannon ${version}`;
}

export function runLoad(generator: Generator, spec: LoadSpec): Promise<LoadResult> {
  return generator === 'wrk' && spec.rate === undefined ? runWrk(spec) : runAutocannon(spec);
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  let next = 0;
  const r = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    requests: [
      spec.method === 'GET'
        ? { method: 'GET', path: spec.path, setupRequest: (req: object) => ({ ...req, path: spec.bodies[next++ % spec.bodies.length] }) }
        : {
            method: 'POST',
            path: spec.path,
            headers: { 'content-type': 'application/json' },
            setupRequest: (req: object) => ({ ...req, body: spec.bodies[next++ % spec.bodies.length] }),
          },
    ],
  });
  return { requests: r.requests.total, rps: r.requests.total / spec.seconds, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors + r.timeouts, non2xx: r.non2xx };
}

/**
 * The wrk script: every request formatted once in `init`, then handed out in turn (formatting one
 * a request would cost wrk more than some requests cost the server); `done` prints the figures as
 * one JSON line.
 */
function wrkScript(path: string, bodies: string[], method: 'GET' | 'POST' = 'POST'): string {
  // JSON's string escapes of ASCII text (\" and \\) are Lua's too.
  const list = bodies.map((b) => JSON.stringify(b)).join(',\n');
  return `local bodies = {\n${list}\n}
local prepared = {}
local n = 0
init = function(args)
  for i, body in ipairs(bodies) do
    ${method === 'GET' ? 'prepared[i] = wrk.format("GET", body)' : `prepared[i] = wrk.format("POST", ${JSON.stringify(path)}, { ["Content-Type"] = "application/json" }, body)`}
  end
end
request = function()
  n = n % #prepared + 1
  return prepared[n]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {"requests":%d,"us":%d,"errors":%d,"non2xx":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
`;
}

async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  if (spec.bodies.some((b) => !/^[\x20-\x7e]*$/.test(b))) throw new Error('wrk bodies must be printable ASCII');
  const dir = mkdtempSync(join(tmpdir(), 'mcauth-wrk-'));
  try {
    const script = join(dir, 'post.lua');
    writeFileSync(script, wrkScript(spec.path, spec.bodies, spec.method));
    // One thread: the generator has one core of its own (see run.ts).
    const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--timeout', '30s', '-s', script, spec.url];
    const out = await new Promise<string>((done, fail) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString('utf8')));
      child.once('error', fail);
      child.once('exit', (code) => (code === 0 ? done(text) : fail(new Error(`wrk exited (${code}):\n${text}`))));
    });
    const line = /^WRK (\{.*\})$/m.exec(out);
    if (!line) throw new Error(`wrk printed no figures:\n${out}`);
    const r = JSON.parse(line[1]!) as { requests: number; us: number; errors: number; non2xx: number; p50: number; p99: number };
    return { requests: r.requests, rps: r.requests / (r.us / 1e6), p50: r.p50 / 1000, p99: r.p99 / 1000, errors: r.errors, non2xx: r.non2xx };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
