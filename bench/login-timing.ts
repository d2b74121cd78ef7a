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
// time. Then it imports N players a foreign hash format (bcrypt, phpass, AuthMe's SHA-256,
// PBKDF2, argon2 where the runtime has it, drasl's scrypt, each at a cost real systems use) and
// times a wrong password against each, next to the scrypt players': an imported player's login
// costs its format's work more than a migrated one's (see docs/importing.md). At the
// end the server is stopped and the temporary folder removed.
import * as nodeCrypto from 'node:crypto';
import { createHash, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
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
const { addUser, runCli, SERVER_JS, startServer, tempDir } = await import('../test/helpers/process.ts');
const { hashBcrypt } = await import('../src/import/hashes/bcrypt.ts');
const { verifyPhpass } = await import('../src/import/hashes/phpass.ts');

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

const IMPORTED_PASSWORD = 'the-imported-password';

/** phpass's own base64 (its encode64), for the WordPress hash made below. */
function phpassBase64(bytes: Buffer): string {
  const itoa64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const value = bytes[i]! | ((bytes[i + 1] ?? 0) << 8) | ((bytes[i + 2] ?? 0) << 16);
    const chars = i + 1 >= bytes.length ? 2 : i + 2 >= bytes.length ? 3 : 4;
    for (let c = 0; c < chars; c++) out += itoa64[(value >> (6 * c)) & 0x3f];
  }
  return out;
}

/** WordPress's portable hash ($P$B: 2^13 rounds of MD5), checked against the project's verifier. */
function wordpressHash(password: string): string {
  const salt = 'Bench123';
  let hash = createHash('md5').update(salt + password).digest();
  for (let i = 0; i < 2 ** 13; i++) hash = createHash('md5').update(Buffer.concat([hash, Buffer.from(password)])).digest();
  const stored = `$P$B${salt}${phpassBase64(hash)}`;
  if (!verifyPhpass(password, stored)) throw new Error('the phpass hash made here does not verify');
  return stored;
}

/** One hash of IMPORTED_PASSWORD a format, at the cost the named system uses by default, and the slowest formats at the caps. */
function foreignHashes(): [string, string][] {
  const b64 = (b: Buffer): string => b.toString('base64').replace(/=+$/, '');
  const sha = (t: string): string => createHash('sha256').update(t).digest('hex');
  const salt = randomBytes(16);
  const argon2Sync = (nodeCrypto as { argon2Sync?: (algorithm: string, options: object) => Buffer }).argon2Sync;
  const rows: [string, string][] = [
    ['bcrypt, cost 10 (AuthMe, most web cabinets)', hashBcrypt(Buffer.from(IMPORTED_PASSWORD), 10, salt)],
    ['phpass $P$B, 2^13 rounds (WordPress)', wordpressHash(IMPORTED_PASSWORD)],
    ["AuthMe's $SHA$", `$SHA$0123456789abcdef$${sha(sha(IMPORTED_PASSWORD) + '0123456789abcdef')}`],
    ['PBKDF2-SHA256, 600,000 rounds (Django 4.2)', `pbkdf2_sha256$600000$benchsalt$${pbkdf2Sync(IMPORTED_PASSWORD, 'benchsalt', 600000, 32, 'sha256').toString('base64')}`],
    ['bcrypt, cost 13 (the cap)', hashBcrypt(Buffer.from(IMPORTED_PASSWORD), 13, salt)],
    ['PBKDF2-SHA256, 2,000,000 rounds (the cap)', `pbkdf2_sha256$2000000$benchsalt$${pbkdf2Sync(IMPORTED_PASSWORD, 'benchsalt', 2000000, 32, 'sha256').toString('base64')}`],
    ["drasl's scrypt (N=2^15, r=8, p=1)", `drasl-scrypt$${salt.toString('base64')}$${scryptSync(IMPORTED_PASSWORD, salt, 32, { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }).toString('base64')}`],
  ];
  if (runtime === 'node' && argon2Sync) {
    const tag = argon2Sync('argon2id', { message: IMPORTED_PASSWORD, nonce: salt, parallelism: 1, tagLength: 32, memory: 65536, passes: 4 });
    rows.push(['argon2id, m=64 MiB, t=4, p=1 (PHP)', `$argon2id$v=19$m=65536,t=4,p=1$${b64(salt)}$${b64(tag)}`]);
    const capped = argon2Sync('argon2id', { message: IMPORTED_PASSWORD, nonce: salt, parallelism: 1, tagLength: 32, memory: 262144, passes: 2 });
    rows.push(['argon2id, m=256 MiB, t=2, p=1 (the cap)', `$argon2id$v=19$m=262144,t=2,p=1$${b64(salt)}$${b64(capped)}`]);
  }
  return rows;
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
    const formats = foreignHashes();
    const imported = formats.map((_, f) => names.map((_, i) => `Imp_${f}_${String(i).padStart(2, '0')}`));
    const source = join(dir, 'imported.json');
    writeFileSync(source, JSON.stringify(formats.flatMap(([, hash], f) => imported[f]!.map((name) => ({ name, hash })))));
    const done = await runCli(['import', source, '--db', db]);
    if (done.code !== 0) throw new Error(`the import failed: ${done.stderr}`);

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

    // A wrong password against each imported format, round by round: never a right one, so
    // none is migrated, and a different player each round, so the throttle never applies.
    const foreign = formats.map((): number[] => []);
    for (let i = 0; i < rounds; i++) {
      for (let f = 0; f < formats.length; f++) foreign[f]!.push(await badLogin(port, imported[f]![i]!, `not-the-password-${i}`));
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
        `imported players, a wrong password (n=${rounds} each), against ${ms(mE)} for a scrypt player:`,
        ...formats.map(([label], f) => {
          const sorted = foreign[f]!.sort((a, b) => a - b);
          const m = quantile(sorted, 0.5);
          return `  ${label.padEnd(46)} median ${ms(m).padStart(9)}, p90 ${ms(quantile(sorted, 0.9)).padStart(9)}, ${m - mE >= 0 ? '+' : ''}${ms(m - mE)} (${(m / mE).toFixed(2)}x)`;
        }),
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
