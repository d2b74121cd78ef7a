// Starts the real caller, AuroraLauncher's LauncherServer, in front of a running dist/server.js.
// Its bundles are built from source outside this repository (../shared/launcherserver beside the
// repo, see its README) and are read from there at test time: a clone without them skips the
// tests that need them.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { childEnv, freePort, ROOT, type Exit } from './process.ts';

/** Where the bundles are: beside the repository, not in it. */
export const LAUNCHERSERVER_DIR = join(dirname(ROOT), 'shared', 'launcherserver');

/** One generation of the LauncherServer in use, and what sets it apart. */
export interface Generation {
  name: string;
  /** The LauncherServer bundle. */
  bundle: string;
  /** The launcher's own websocket client (AuroraAPI) of the same commit. */
  client: string;
  /** Whether it serves POST /authlib/api/profiles/minecraft (0.0.4 routes no bulk look-up). */
  routesProfiles: boolean;
  /** Whether a launcher must pass its verify step before it may log in. */
  verifies: boolean;
}

export const GENERATIONS: readonly Generation[] = [
  { name: '0.0.4 (February 2024)', bundle: 'LauncherServer-0.0.4.js', client: 'aurora-api-0.0.4.cjs', routesProfiles: false, verifies: false },
  { name: 'dev (October 2024)', bundle: 'LauncherServer-dev-2024-10.js', client: 'aurora-api-dev-2024-10.cjs', routesProfiles: true, verifies: true },
];

/** Preloaded into the LauncherServer: it checks for updates on the internet at start. */
const NO_EGRESS = 'no-egress.cjs';

/** Why a generation cannot run here (its files are absent), or undefined when it can. */
export function missingGeneration(gen: Generation): string | undefined {
  if (!existsSync(LAUNCHERSERVER_DIR)) return `no ${LAUNCHERSERVER_DIR}: the LauncherServer builds are kept beside the repository, not in it`;
  const missing = [gen.bundle, gen.client, NO_EGRESS].filter((f) => !existsSync(join(LAUNCHERSERVER_DIR, f)));
  return missing.length === 0 ? undefined : `${LAUNCHERSERVER_DIR} has no ${missing.join(', ')}`;
}

/** The path of one of the shared files (a bundle, a client). */
export const sharedFile = (name: string): string => join(LAUNCHERSERVER_DIR, name);

export interface RunningLauncherServer {
  generation: Generation;
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** Its working folder: config, keys (public.pem), logs. */
  dir: string;
  exited: Promise<Exit>;
  running: () => boolean;
  /** Its stdout and stderr so far (the last part of a long one). */
  output: () => string;
  /** Kills it and removes its folder. */
  stop: () => Promise<void>;
}

/** The dev build makes a 4096-bit RSA key pair at first start: seconds, more on a busy box. */
const READY_MS = 90_000;
const PROBE_TIMEOUT_MS = 5_000;
/** The pause between two probes of GET /authlib while it does not answer yet. */
const PROBE_PAUSE_MS = 100;
/** Output kept for a failure's message: its crash stack is at the end. */
const KEPT_OUTPUT_CHARS = 64 * 1024;
const PORT_TRIES = 5;

/** The texture host the config lists in `skinDomains`. */
export const LISTED_SKIN_DOMAIN = 'auth.example.org';

/** What the LauncherServer reads from LauncherServerConfig.hjson (hjson reads plain JSON too). */
function config(port: number, backend: string): string {
  const url = (route: string): string => `${backend}/${route}`;
  return JSON.stringify(
    {
      configVersion: 0,
      projectID: '00000000-0000-4000-8000-0000000000a1',
      projectName: 'mcauth-test',
      lang: 'en',
      branch: 'stable',
      env: 'dev',
      mirrors: [],
      auth: { type: 'json', authUrl: url('auth'), joinUrl: url('join'), hasJoinedUrl: url('hasJoined'), profileUrl: url('profile'), profilesUrl: url('profiles') },
      api: {
        host: '127.0.0.1',
        port,
        useSSL: false,
        ssl: { cert: '/path/to/cert.pem', key: '/path/to/key.pem' },
        disableListing: true,
        hideListing: true,
        // Where 0.0.4 and the 2024 builds read it (README.md's first block): GET /authlib lists it.
        injector: { skinDomains: [LISTED_SKIN_DOMAIN] },
      },
    },
    null,
    2,
  );
}

/** The status of GET `url` on a connection of its own, or undefined when nothing answers. */
function statusOf(url: string): Promise<number | undefined> {
  return new Promise((done) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode));
      res.on('error', () => done(undefined));
    });
    req.setTimeout(PROBE_TIMEOUT_MS, () => req.destroy());
    req.on('error', () => done(undefined));
    req.end();
  });
}

/**
 * Starts generation `gen` in a temp folder on a free loopback port, its auth provider pointed at
 * `backend` (http://127.0.0.1:PORT of a running dist/server.js), on the Node that runs the test.
 * Resolves once GET /authlib answers 200; rejects when it exits first (a port taken meanwhile is
 * tried again on another) or does not answer within READY_MS.
 */
export async function startLauncherServer(gen: Generation, backend: string): Promise<RunningLauncherServer> {
  const reason = missingGeneration(gen);
  if (reason) throw new Error(reason);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'mcauth-ls-'));
    try {
      return await startIn(dir, port, gen, backend);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      if (attempt >= PORT_TRIES || !/EADDRINUSE/.test((err as Error).message)) throw err;
    }
  }
}

async function startIn(dir: string, port: number, gen: Generation, backend: string): Promise<RunningLauncherServer> {
  copyFileSync(sharedFile(gen.bundle), join(dir, 'LauncherServer.js'));
  writeFileSync(join(dir, 'LauncherServerConfig.hjson'), config(port, backend));
  // stdin is /dev/null: its console must not wait on the test's terminal.
  const child = spawn(process.execPath, ['--require', sharedFile(NO_EGRESS), 'LauncherServer.js'], {
    cwd: dir,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: string): void => {
    out = (out + d).slice(-KEPT_OUTPUT_CHARS);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  // A test process that dies must not leave it running.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let ended = false;
  const exited = new Promise<Exit>((r) =>
    child.once('exit', (code, signal) => {
      ended = true;
      process.removeListener('exit', killOnExit);
      r({ code, signal, at: performance.now() });
    }),
  );
  const failedToSpawn = new Promise<never>((_, fail) => child.once('error', fail));
  failedToSpawn.catch(() => {}); // an error after the start is seen through `exited`
  const url = `http://127.0.0.1:${port}`;
  // Nothing in its output says it listens: its answer to GET /authlib is the event waited for.
  const until = performance.now() + READY_MS;
  const ready = (async (): Promise<boolean> => {
    while (!ended && performance.now() < until) {
      if ((await statusOf(`${url}/authlib`)) === 200) return true;
      if (!ended) await new Promise((r) => setTimeout(r, PROBE_PAUSE_MS));
    }
    return false;
  })();
  if ((await Promise.race([ready, exited, failedToSpawn])) !== true) {
    const timedOut = !ended;
    child.kill('SIGKILL');
    const exit = await exited;
    const how = timedOut ? `did not answer GET /authlib within ${READY_MS} ms` : `exited (${exit.code ?? exit.signal}) before it answered`;
    throw new Error(`LauncherServer ${gen.name} ${how}:\n${out}`);
  }
  return {
    generation: gen,
    url,
    port,
    dir,
    exited,
    running: () => !ended,
    output: () => out,
    stop: async () => {
      // Nothing of it is kept, so nothing needs an orderly stop.
      if (!ended) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The LauncherServer's public key (the dev generation's verify step), written at its first start. */
export function publicKeyOf(ls: RunningLauncherServer): string {
  return readFileSync(join(ls.dir, 'public.pem'), 'utf8');
}
