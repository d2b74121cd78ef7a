// Login timing: an unknown login and a wrong password for an existing one must take the same
// time, or the timing tells an attacker which names exist. This script measures both against
// the built server (dist/server.js; it builds nothing) and says whether their medians are
// within 10% of each other; it exits with status 1 when they are not.
//
//   node --import tsx bench/login-timing.ts [--runtime node|deno] [--rounds N]
//
// It creates a temporary database with 40 players through the CLI, starts the server on it,
// warms up, then alternates N wrong-password logins (each on a different player, so the
// password-guessing throttle never applies) with N logins of distinct unknown names, one at a
// time. At the end the server is stopped and the temporary folder removed.
import { existsSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const PLAYERS = 40;
const CLI_BATCH = 4;
const WARM_UP = 4;
const TOLERANCE = 0.1;

const { values } = parseArgs({
  options: { runtime: { type: 'string', default: 'node' }, rounds: { type: 'string', default: String(PLAYERS) } },
});
const runtime = values.runtime;
const rounds = Number(values.rounds);
if (runtime !== 'node' && runtime !== 'deno') usage('--runtime must be node or deno');
if (!Number.isInteger(rounds) || rounds < 1 || rounds > PLAYERS) usage(`--rounds must be a whole number from 1 to ${PLAYERS}`);
// The test helpers start the server; they pick the runtime from this variable when loaded.
process.env.MCAUTH_TEST_RUNTIME = runtime;
const { addUser, SERVER_JS, startServer, tempDir } = await import('../test/helpers/process.ts');

function usage(message: string): never {
  process.stderr.write(`login-timing: ${message}\n`);
  process.exit(2);
}

// One kept-alive connection: no connection setup in the measured time.
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One login; the time from sending to the whole answer, in ms. */
function timedLogin(port: number, login: string, password: string): Promise<{ ms: number; status: number; text: string }> {
  const payload = Buffer.from(JSON.stringify({ login, password }));
  return new Promise((done, fail) => {
    const start = performance.now();
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/auth', agent, headers: { 'content-type': 'application/json', 'content-length': payload.length } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => done({ ms: performance.now() - start, status: res.statusCode ?? 0, text }));
        res.on('error', fail);
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', fail);
    req.end(payload);
  });
}

const EXPECTED = { status: 401, text: JSON.stringify({ success: false, error: 'Wrong login or password' }) };

/** A login attempt that must fail exactly as every bad login does: same status, same body. */
async function badLogin(port: number, login: string, password: string): Promise<number> {
  const r = await timedLogin(port, login, password);
  if (r.status !== EXPECTED.status || r.text !== EXPECTED.text) {
    throw new Error(`login "${login}" answered ${r.status} ${r.text}; expected ${EXPECTED.status} ${EXPECTED.text}`);
  }
  return r.ms;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

async function main(): Promise<number> {
  if (!existsSync(SERVER_JS)) usage(`${SERVER_JS} is missing: run npm run build first`);
  const { dir, cleanup } = tempDir();
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const db = join(dir, 'bench.db');
    const names = Array.from({ length: PLAYERS }, (_, i) => `Bench_${String(i).padStart(2, '0')}`);
    const t0 = performance.now();
    // The first command creates the schema alone; the rest run in parallel batches.
    await addUser(db, names[0]!, `pw-${names[0]}`);
    for (let i = 1; i < names.length; i += CLI_BATCH) {
      await Promise.all(names.slice(i, i + CLI_BATCH).map((n) => addUser(db, n, `pw-${n}`)));
    }
    process.stdout.write(`runtime ${runtime}: ${PLAYERS} players added in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);

    server = await startServer(['--db', db]);
    const { port } = server;

    // Warm up both paths (JIT, the dummy hash, the connection). A wrong password on a player is
    // followed by the right one, which clears the player's failure count again.
    for (let i = 0; i < WARM_UP; i++) {
      await badLogin(port, names[i]!, 'wrong-password');
      await badLogin(port, `warm_nobody_${i}`, 'wrong-password');
      const ok = await timedLogin(port, names[i]!, `pw-${names[i]}`);
      if (ok.status !== 200) throw new Error(`the warm-up login of ${names[i]} answered ${ok.status} ${ok.text}`);
    }

    // Alternating, and swapping which goes first every round, so drift hits both sides alike.
    const existing: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const known = (): Promise<number> => badLogin(port, names[i]!, `not-the-password-${i}`);
      const nobody = (): Promise<number> => badLogin(port, `Nobody_${String(i).padStart(2, '0')}`, `not-the-password-${i}`);
      if (i % 2 === 0) {
        existing.push(await known());
        unknown.push(await nobody());
      } else {
        unknown.push(await nobody());
        existing.push(await known());
      }
    }

    existing.sort((a, b) => a - b);
    unknown.sort((a, b) => a - b);
    const mE = quantile(existing, 0.5);
    const mU = quantile(unknown, 0.5);
    const ratio = mU / mE;
    const within = Math.abs(ratio - 1) <= TOLERANCE;
    const ms = (x: number): string => `${x.toFixed(1)} ms`;
    process.stdout.write(
      [
        `wrong password, existing player (n=${rounds}): median ${ms(mE)}, p90 ${ms(quantile(existing, 0.9))}`,
        `unknown login (n=${rounds}):                   median ${ms(mU)}, p90 ${ms(quantile(unknown, 0.9))}`,
        `ratio unknown/existing (medians): ${ratio.toFixed(3)}`,
        `within 10%: ${within ? 'yes' : 'no'}`,
        '',
      ].join('\n'),
    );
    return within ? 0 : 1;
  } finally {
    agent.destroy();
    await server?.stop();
    cleanup();
  }
}

main().then(
  (code) => (process.exitCode = code),
  (err: unknown) => {
    process.stderr.write(`login-timing: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  },
);
