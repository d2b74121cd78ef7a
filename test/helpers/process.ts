// Starts the built dist/server.js as a real process (on Node, or on Deno when
// MCAUTH_TEST_RUNTIME=deno) and talks to it over HTTP. Every end-to-end test goes through here.
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const SERVER_JS = join(ROOT, 'dist', 'server.js');
export const RUNTIME = process.env.MCAUTH_TEST_RUNTIME === 'deno' ? 'deno' : 'node';

/** The command that runs dist/server.js (or a copy of it at `script`) on the runtime under test. */
export function serverCommand(script = SERVER_JS): string[] {
  if (RUNTIME === 'deno') return [join(ROOT, 'node_modules', '.bin', 'deno'), 'run', '-A', script];
  return [process.execPath, script];
}

/**
 * The environment for a child: the test's own, without MCAUTH_* settings that could leak in, and
 * without NODE_V8_COVERAGE: c8 cannot map the bundle's uncovered ranges back to src/ (it counts
 * them as covered), so coverage is measured on the in-process tests only.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { DENO_NO_UPDATE_CHECK: '1' };
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MCAUTH_') && k !== 'NODE_V8_COVERAGE') env[k] = v;
  return { ...env, ...extra };
}

/** A fresh temp folder, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'mcauth-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ProcResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
}

/**
 * Runs a command to completion, feeding `stdin` (then closed); killed after `timeoutMs` (60 s by
 * default: a bound for a command that hangs, wide enough for a CLI start and a hash on a machine
 * whose cores are busy with other work).
 */
export function runProc(command: string[], opts: RunOptions = {}): Promise<ProcResult> {
  const [cmd, ...args] = command;
  return new Promise((done, fail) => {
    const child = spawn(cmd!, args, { cwd: opts.cwd, env: childEnv(opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin.on('error', () => {});
    child.on('error', (e) => {
      clearTimeout(timer);
      fail(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr, timedOut });
    });
    child.stdin.end(opts.stdin ?? '');
  });
}

/** Runs `server.js ...args` on the runtime under test. */
export function runCli(args: string[], opts: RunOptions = {}): Promise<ProcResult> {
  return runProc([...serverCommand(), ...args], opts);
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/**
 * Sends a request and reads the answer, parsing it as JSON where it is. The connection is closed
 * after the answer unless `init` names a `connection` header: a server's stop waits for its
 * clients to drop their kept-alive connections (src/serve.ts, the keep-alive race), so one left
 * in fetch's pool would hold every stop for seconds.
 */
export async function fetchReply(url: string, init: RequestInit = {}): Promise<Reply> {
  const headers = new Headers(init.headers);
  if (!headers.has('connection')) headers.set('connection', 'close');
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** How a child ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** When the exit was seen, on the test's clock (performance.now()). */
  at: number;
}

/** A server process that has said where it listens. */
export interface Listening {
  child: ChildProcess;
  /** The line that says where it listens. */
  line: string;
  host: string;
  port: number;
  exited: Promise<Exit>;
  /** Whether the process has not ended yet. */
  running: () => boolean;
  stdout: () => string;
  stderr: () => string;
  /**
   * Resolves on the first value `probe` finds in stdout (checked now and on each new output),
   * rejects when it throws or after `ms`, naming `what`.
   */
  waitFor: <T>(what: string, probe: (stdout: string) => T | undefined, ms?: number) => Promise<T>;
  /** SIGTERM (unless it has ended), then the exit. */
  stop: () => Promise<Exit>;
}

const LISTEN_LINE = /listening on http:\/\/(\S+?):(\d+)/;
/** How long a server may take to listen before it is taken for hung: wide, for a busy machine. */
const START_MS = 60_000;

/**
 * Spawns `command` (the whole command line) and resolves once stdout has the line that says
 * where it listens; rejects when it exits first, or after START_MS (it is then killed).
 */
export function spawnListening(command: string[], opts: { env?: Record<string, string>; cwd?: string } = {}): Promise<Listening> {
  const [cmd, ...args] = command;
  const child = spawn(cmd!, args, { cwd: opts.cwd, env: childEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let ended = false;
  const exited = new Promise<Exit>((r) =>
    child.once('exit', (code, signal) => {
      ended = true;
      r({ code, signal, at: performance.now() });
    }),
  );
  const running = (): boolean => !ended;
  let asked = false;
  let listened = false;
  const stop = (): Promise<Exit> => {
    asked = true;
    if (running()) child.kill('SIGTERM');
    return exited;
  };
  // A server that ends unasked with a failing status or by a signal no test sends (a crash, an
  // abort), says why in the run's output, once its standard error is all read: a test that then
  // fails sees only a refused connection.
  child.once('close', (code, signal) => {
    const crashed = signal === null ? code !== 0 : !['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGSTOP'].includes(signal);
    if (listened && !asked && crashed) process.stderr.write(`test helper: server ${child.pid} (${command.slice(1).join(' ')}) ended (${signal ?? `status ${code}`}), unasked:\n${err.slice(-4000)}\n`);
  });
  const waiters = new Set<() => void>();
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const w of waiters) w();
  });
  const waitFor = <T>(what: string, probe: (stdout: string) => T | undefined, ms = 30_000): Promise<T> =>
    new Promise((found, fail) => {
      const finish = (): void => {
        waiters.delete(check);
        clearTimeout(timer);
      };
      const check = (): void => {
        let value: T | undefined;
        try {
          value = probe(out);
        } catch (e) {
          finish();
          fail(e);
          return;
        }
        if (value === undefined) return;
        finish();
        found(value);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        fail(new Error(`no ${what} within ${ms} ms\nstdout:\n${out}\nstderr:\n${err}`));
      }, ms);
      waiters.add(check);
      check();
    });
  return new Promise((ready, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`server did not start in time\n${out}\n${err}`));
    }, START_MS);
    child.once('error', (e) => {
      clearTimeout(timer);
      fail(e);
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      fail(new Error(`server exited (${code}) before listening\n${out}\n${err}`));
    });
    const onOutput = (): void => {
      const m = LISTEN_LINE.exec(out);
      if (!m) return;
      waiters.delete(onOutput);
      clearTimeout(timer);
      listened = true;
      const line = out.split('\n').find((l) => l.includes('listening on')) ?? out;
      ready({ child, line, host: m[1]!, port: Number(m[2]), exited, running, stdout: () => out, stderr: () => err, waitFor, stop });
    };
    waiters.add(onOutput);
  });
}

export interface RawServer {
  /** The line that says where it listens. */
  line: string;
  host: string;
  port: number;
  stdout: () => string;
  stderr: () => string;
  /** As Listening's: the first value `probe` finds in stdout (the log is written a turn after the answer it tells of). */
  waitFor: Listening['waitFor'];
  /** SIGTERM, then the exit code. */
  stop: () => Promise<number | null>;
}

/**
 * Starts `server.js ...args` exactly as given (or a copy at `script`; under `wrap`, a command
 * that runs the rest, such as prlimit) and resolves on the line that says where it listens.
 */
export async function startRaw(args: string[], opts: { env?: Record<string, string>; cwd?: string; script?: string; wrap?: string[] } = {}): Promise<RawServer> {
  const s = await spawnListening([...(opts.wrap ?? []), ...serverCommand(opts.script), ...args], opts);
  return { line: s.line, host: s.host, port: s.port, stdout: s.stdout, stderr: s.stderr, waitFor: s.waitFor, stop: async () => (await s.stop()).code };
}

export interface RunningServer extends RawServer {
  url: string;
  post: (path: string, body: unknown) => Promise<Reply>;
  request: (path: string, init?: RequestInit) => Promise<Reply>;
}

/**
 * With MCAUTH_TEST_YGGDRASIL set (npm run test:postgres), the Yggdrasil API is switched on in
 * every server a test starts without it, so the JSON API's tests run unchanged beside it. It signs
 * with one key a process, made once (2048 bits: the server takes any RSA key from a file, and
 * one of 4096 takes seconds to make).
 */
function yggdrasilToo(args: string[]): string[] {
  if (!process.env.MCAUTH_TEST_YGGDRASIL || args.includes('--yggdrasil')) return [];
  const file = join(tmpdir(), `mcauth-test-yggdrasil-${process.pid}.pem`);
  if (!existsSync(file)) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    process.once('exit', () => rmSync(file, { force: true }));
  }
  return ['--yggdrasil', '--yggdrasil-key', file];
}

/**
 * Starts `server.js serve --port 0 ...args` on loopback. `--db` is not added: pass it (a path in
 * a temp folder, or :memory:).
 */
export async function startServer(args: string[], env: Record<string, string> = {}): Promise<RunningServer> {
  const raw = await startRaw(['serve', '--port', '0', ...args, ...yggdrasilToo(args)], { env });
  const url = `http://127.0.0.1:${raw.port}`;
  const request = (path: string, init: RequestInit = {}): Promise<Reply> => fetchReply(url + path, init);
  return {
    ...raw,
    url,
    request,
    post: (path, body) =>
      request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) }),
  };
}

/** Runs `work` on a server started by startServer(args), and stops the server after, whatever `work` did. */
export async function withServer<T>(args: string[], work: (s: RunningServer) => Promise<T>): Promise<T> {
  const s = await startServer(args);
  try {
    return await work(s);
  } finally {
    await s.stop();
  }
}

/** What the server says, and exits with, when its port is taken. */
const PORT_TAKEN = /cannot listen on \S+: the address is in use/;

/**
 * Starts `server.js serve --port P ...args(P)` on a port P free a moment before: for a server
 * whose arguments must name its own port (as --public-url does), which `--port 0` cannot give.
 * Another process may take P between the check and the server's listen; the server then exits
 * saying the address is in use, and it is started again on another port (`args` is called again).
 */
export async function startServerOnFreePort(args: (port: number) => string[], env: Record<string, string> = {}, tries = 5): Promise<RunningServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const s = await startServer(['--port', String(port), ...args(port)], env);
      if (s.port !== port) throw new Error(`asked for port ${port}, the server listens on ${s.port}`);
      return s;
    } catch (err) {
      if (attempt >= tries || !PORT_TAKEN.test((err as Error).message)) throw err;
    }
  }
}

/** Adds a user through the CLI and returns its UUID (as the CLI prints it). */
export async function addUser(db: string, name: string, password: string, extra: string[] = [], env: Record<string, string> = {}): Promise<string> {
  const r = await runCli(['user', 'add', name, '--db', db, ...extra], { stdin: password + '\n', env });
  if (r.code !== 0) throw new Error(`user add failed${r.timedOut ? ' (no end within its time; killed)' : ''}: ${r.stderr}`);
  const m = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(r.stdout);
  if (!m) throw new Error(`user add printed no UUID: ${r.stdout}`);
  return m[0];
}

export interface Timed {
  status: number;
  retryAfter: string | undefined;
  contentType: string | undefined;
  /** Parsed JSON, or the text when it is not JSON. */
  body: any;
  /** When the request was sent and when its answer had arrived, in ms on the test's clock. */
  sentAt: number;
  doneAt: number;
  ms: number;
}

/**
 * A POST on a connection of its own (no pooling, so no request waits for a free socket), timed;
 * rejects when the connection breaks (as on SIGKILL). `from`: the loopback address to send from
 * (all of 127/8 reaches a server on 127.0.0.1), for tests of per-client rules.
 */
export function timedPost(port: number, path: string, body: unknown, timeoutMs = 30_000, from?: string): Promise<Timed> {
  const payload = Buffer.from(JSON.stringify(body));
  return new Promise((done, fail) => {
    const sentAt = performance.now();
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path, agent: false, localAddress: from, headers: { 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          const doneAt = performance.now();
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            parsed = Buffer.concat(chunks).toString('utf8');
          }
          const retry = res.headers['retry-after'];
          done({
            status: res.statusCode ?? 0,
            retryAfter: Array.isArray(retry) ? retry[0] : retry,
            contentType: res.headers['content-type'],
            body: parsed,
            sentAt,
            doneAt,
            ms: doneAt - sentAt,
          });
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer to ${path} within ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end(payload);
  });
}

/**
 * Ports freePort chooses among: below Linux's ephemeral range (32768 and up), which the kernel
 * hands out to every `--port 0` server and every outgoing connection of the files running at the
 * same time. A port of that range, free when chosen, could be taken by one of them before the
 * server it was chosen for listened ("the address is in use"); one of these only by another
 * freePort, one chance in thousands.
 */
const FIXED_PORTS = { from: 20_000, count: 12_000 };

/** A port free on loopback right now (for a server whose --public-url must name its own port). */
export async function freePort(): Promise<number> {
  // A port taken is tried again, a few hundred times at most; any other failure to listen is the test's.
  for (let tries = 0; ; tries++) {
    const port = FIXED_PORTS.from + Math.floor(Math.random() * FIXED_PORTS.count);
    const s = createServer();
    const free = await new Promise<boolean>((resolve, reject) => {
      s.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' && tries < 300 ? resolve(false) : reject(err)));
      s.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise<void>((r) => s.close(() => r()));
      return port;
    }
  }
}

export interface Spawned {
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then the exit status once stdout and stderr are closed. */
  stop: () => Promise<number | null>;
}

/**
 * Starts the server on a fixed free port (no "listening" line to read the port from at these
 * levels) and resolves once GET /health answers.
 */
export async function spawnOnPort(args: string[]): Promise<Spawned & { port: number }> {
  const port = await freePort();
  const [cmd, ...pre] = serverCommand();
  const child = spawn(cmd!, [...pre, 'serve', '--port', String(port), ...args], { env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const closed = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  const stop = (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return closed;
  };
  const until = Date.now() + START_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${out}\n${err}`);
    try {
      if ((await fetchReply(`http://127.0.0.1:${port}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) {
      await stop();
      throw new Error(`the server did not answer /health in time:\n${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { port, stdout: () => out, stderr: () => err, stop };
}
