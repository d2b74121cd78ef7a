// Runs the built server under socket activation as systemd would: test/helpers/socket-holder.ts
// holds a listening socket on 127.0.0.1 that nothing accepts on but the server it runs as fd 3,
// and starts the next server when one ends, so a restart leaves connections in the backlog.
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { childEnv, ROOT, serverCommand } from './process.ts';

const HOLDER = join(ROOT, 'test', 'helpers', 'socket-holder.ts');

/** One JSON line of the output: a server's log line, or the holder's. */
export interface OutputLine {
  msg?: string;
  pid?: number;
  holder?: 'listening' | 'exited';
  port?: number;
  code?: number | null;
  [field: string]: unknown;
}

export interface ActivatedServer {
  port: number;
  url: string;
  /** The pid of the server the holder runs now (its listening line's). */
  pid: () => number;
  /** Every JSON line so far. */
  lines: () => OutputLine[];
  output: () => string;
  /** Resolves on the first line `probe` accepts, rejects after `ms`. */
  waitForLine: (what: string, probe: (line: OutputLine) => boolean, ms?: number) => Promise<OutputLine>;
  /** SIGTERM to the server, its exit (with its status), then the next server's listening line. */
  restart: () => Promise<{ exitCode: number | null | undefined; pid: number }>;
  /** SIGTERM to the last server; resolves with its exit status once the holder has ended. */
  end: () => Promise<number | null | undefined>;
  /** Kills whatever is left (after a failed test). */
  kill: () => void;
}

const WAIT_MS = 60_000;

/**
 * The backlog of the socket listening on 127.0.0.1:`port`, as the kernel holds it (`ss`, of
 * iproute2, which .ci/run installs: a listening socket's Send-Q is its backlog).
 */
export function listenBacklog(port: number): number {
  const line = execFileSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' }).trim();
  const [state, , backlog] = line.split(/\s+/);
  if (state !== 'LISTEN') throw new Error(`no socket listens on port ${port}: ${JSON.stringify(line)}`);
  return Number(backlog);
}

/**
 * Starts the holder with `runs` servers of `server.js serve ...args` (or a copy at `script`, or
 * `command` instead of the runtime and server.js: the release's executable) and resolves once the
 * first listens. `env`: added to the holder's, which the servers inherit.
 */
export async function startActivated(args: string[], runs: number, script?: string, { command = serverCommand(script), env = {} }: { command?: string[]; env?: Record<string, string> } = {}): Promise<ActivatedServer> {
  const child = spawn(process.execPath, [HOLDER, String(runs), ...command, 'serve', '--log-format', 'json', ...args], {
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const parsed: OutputLine[] = [];
  let pending = '';
  const waiters = new Set<() => void>();
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    pending += d;
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const l of complete) if (l.startsWith('{')) parsed.push(JSON.parse(l) as OutputLine);
    for (const w of waiters) w();
  });
  let holderEnded = false;
  const holderExit = new Promise<void>((r) => child.once('exit', () => ((holderEnded = true), r(), waiters.forEach((w) => w()))));

  const output = (): string => `stdout:\n${out}\nstderr:\n${err}`;
  const waitForLine = (what: string, probe: (line: OutputLine) => boolean, ms = WAIT_MS): Promise<OutputLine> =>
    new Promise((found, fail) => {
      const check = (): void => {
        const line = parsed.find(probe);
        if (line) {
          finish();
          found(line);
        } else if (holderEnded) {
          finish();
          fail(new Error(`the holder ended before ${what}\n${output()}`));
        }
      };
      const finish = (): void => {
        waiters.delete(check);
        clearTimeout(timer);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        fail(new Error(`no ${what} within ${ms} ms\n${output()}`));
      }, ms);
      waiters.add(check);
      check();
    });

  const banners = (): OutputLine[] => parsed.filter((l) => l.msg?.startsWith('mcauth listening on') === true);
  const nthBanner = (n: number): Promise<OutputLine> => waitForLine(`listening line ${n}`, (l) => banners()[n - 1] === l);
  const exitOf = (pid: number): Promise<OutputLine> => waitForLine(`exit of ${pid}`, (l) => l.holder === 'exited' && l.pid === pid);

  const { port } = await waitForLine('holder listening', (l) => l.holder === 'listening');
  await nthBanner(1);
  const pid = (): number => banners().at(-1)!.pid!;
  return {
    port: port!,
    url: `http://127.0.0.1:${port}`,
    pid,
    lines: () => parsed,
    output,
    waitForLine,
    restart: async () => {
      const old = pid();
      const count = banners().length;
      process.kill(old, 'SIGTERM');
      const exited = await exitOf(old);
      const next = await nthBanner(count + 1);
      return { exitCode: exited.code, pid: next.pid! };
    },
    end: async () => {
      const last = pid();
      process.kill(last, 'SIGTERM');
      const exited = await exitOf(last);
      await holderExit;
      return exited.code;
    },
    kill: () => {
      if (holderEnded) return;
      try {
        process.kill(pid(), 'SIGKILL');
      } catch {
        // it had ended
      }
      child.kill('SIGKILL');
    },
  };
}
