// --config FILE through the built server (on Node, or on Deno with MCAUTH_TEST_RUNTIME=deno):
// a server takes its settings from the file, the environment wins over the file and a flag over
// the environment, MCAUTH_CONFIG names the file, a bad file is refused at start (exit 2, the key
// named), --print-config masks secrets, and user commands use the file's db.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fetchReply, runCli, startRaw, tempDir, type RawServer, type Reply } from '../helpers/process.ts';
import { assertFail, assertOk } from './util.ts';

const tmp = tempDir();
/** The database named by the config file, and only there. */
const db = join(tmp.dir, 'from-config.db');
/** Where the CLI runs: a default `mcauth.db` would appear here if the file's db were ignored. */
const cwd = join(tmp.dir, 'cwd');
mkdirSync(cwd);

const API_KEY = 'config-file-api-key-0123';
const ADMIN_TOKEN = 'config-file-admin-token-0123';

let written = 0;
function configFile(content: unknown): string {
  const path = join(tmp.dir, `config-${++written}.json`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return path;
}

/** The file most tests start from: port 0 (a flag-less start must still get a free port), base path /mc, variant base. */
const FILE = { host: '127.0.0.1', port: 0, db, basePath: '/mc', variant: 'base', joinTtl: 45 };
let file = '';

interface Served extends RawServer {
  post: (path: string, body: unknown) => Promise<Reply>;
}

/** Starts `server.js ...args` exactly as given (no --port, no --db: they come from the file). */
async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const raw = await startRaw(args, { env, cwd });
  const post = (path: string, body: unknown): Promise<Reply> =>
    fetchReply(`http://127.0.0.1:${raw.port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { ...raw, post };
}

/** Asserts a login on `base` works and returns its result; the other bases get 404. */
async function loginAt(s: Served, base: string, others: string[]): Promise<Record<string, unknown>> {
  const result = assertOk(await s.post(`${base}/auth`, { login: 'Alice', password: 'alice-pw' }));
  for (const other of others) assertFail(await s.post(`${other}/auth`, { login: 'Alice', password: 'alice-pw' }), 404, 'Unknown endpoint');
  return result;
}

before(async () => {
  file = configFile(FILE);
  // user add and user set with --config: the player lands in the file's db (asserted below).
  const added = await runCli(['user', 'add', 'Alice', '--config', file], { stdin: 'alice-pw\n', cwd });
  assert.equal(added.code, 0, added.stderr);
  const set = await runCli(['user', 'set', 'Alice', '--config', file, '--skin-url', 'https://skins.example/a.png', '--slim'], { cwd });
  assert.equal(set.code, 0, set.stderr);
});

after(() => tmp.cleanup());

describe('a server started with --config', () => {
  // Rule: the file's settings apply: its port, db, base path and variant are observable.
  test('takes its settings from the file', async () => {
    const s = await serve(['serve', '--config', file]);
    try {
      assert.notEqual(s.port, 8080, 'port 0 from the file, not the default 8080');
      assert.ok(s.line.includes(db) && /\b1 user\b/.test(s.line), `the file's db: ${s.line}`);
      const result = await loginAt(s, '/mc', ['']);
      // variant "base": no isAlex, skinUrl or capeUrl although Alice has a slim skin.
      assert.deepEqual(Object.keys(result).sort(), ['accessToken', 'userUUID', 'username']);
    } finally {
      assert.equal(await s.stop(), 0);
    }
  });

  // Rule: an environment variable wins over the file.
  test('the environment wins over the file', async () => {
    const s = await serve(['--config', file], { MCAUTH_BASE_PATH: '/env', MCAUTH_VARIANT: 'extended' });
    try {
      const result = await loginAt(s, '/env', ['/mc', '']);
      assert.equal(result.isAlex, true, 'variant extended from MCAUTH_VARIANT');
      assert.equal(result.skinUrl, 'https://skins.example/a.png');
    } finally {
      await s.stop();
    }
  });

  // Rule: a flag wins over the environment (and so over the file).
  test('a flag wins over the environment', async () => {
    const s = await serve(['--config', file, '--base-path', '/flag', '--variant', 'base'], { MCAUTH_BASE_PATH: '/env', MCAUTH_VARIANT: 'extended' });
    try {
      const result = await loginAt(s, '/flag', ['/env', '/mc']);
      assert.equal('isAlex' in result, false, 'variant base from the flag');
    } finally {
      await s.stop();
    }
  });

  // Rule: MCAUTH_CONFIG names the file when --config is not given.
  test('MCAUTH_CONFIG names the file', async () => {
    const s = await serve(['serve'], { MCAUTH_CONFIG: file });
    try {
      assert.notEqual(s.port, 8080);
      await loginAt(s, '/mc', ['']);
    } finally {
      await s.stop();
    }
  });

  // Rule: --config wins over MCAUTH_CONFIG (a bad file named by the environment is not read).
  test('--config wins over MCAUTH_CONFIG', async () => {
    const s = await serve(['--config', file], { MCAUTH_CONFIG: configFile({ notAnOption: 1 }) });
    try {
      await loginAt(s, '/mc', ['']);
    } finally {
      await s.stop();
    }
  });

  // Rule: the account page's server name may come from the file (serverName).
  test('the server name from the file titles the account page', async () => {
    const s = await serve(['--config', configFile({ ...FILE, accountPage: true, serverName: 'Craftland' })]);
    try {
      const page = await fetchReply(`http://127.0.0.1:${s.port}/mc/account`);
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /<title>Your account on Craftland<\/title>[\s\S]*<h1>Your account on Craftland<\/h1>/);
    } finally {
      await s.stop();
    }
  });

  // Rule: secrets may come from the file, and are enforced.
  test('an API key from the file is required of callers', async () => {
    const s = await serve(['--config', configFile({ ...FILE, apiKey: API_KEY })]);
    try {
      assertFail(await s.post('/mc/auth', { login: 'Alice', password: 'alice-pw' }), 401, 'Missing or wrong API key');
      assertOk(await s.post(`/mc/auth?key=${API_KEY}`, { login: 'Alice', password: 'alice-pw' }));
    } finally {
      await s.stop();
    }
  });
});

describe('a bad file is refused at start', () => {
  /** Exit 2 at once (no server), the file and the key named on stderr, no stack trace. */
  async function assertRefused(content: unknown, ...named: string[]): Promise<void> {
    const path = configFile(content);
    const r = await runCli(['serve', '--config', path], { cwd });
    assert.equal(r.timedOut, false, 'it should have exited, not served');
    assert.equal(r.code, 2, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    assert.ok(!r.stdout.includes('listening'), r.stdout);
    for (const text of [path, ...named]) assert.ok(r.stderr.includes(text), `stderr does not name ${text}: ${r.stderr}`);
    assert.ok(!/^\s{4}at /m.test(r.stderr), `stack trace: ${r.stderr}`);
  }

  // Rule: an unknown key is refused, named.
  test('an unknown key: exit 2 naming it', async () => {
    await assertRefused({ ...FILE, listenPort: 8080 }, 'unknown key "listenPort"');
    await assertRefused({ ...FILE, 'join-ttl': 30 }, 'unknown key "join-ttl" (did you mean "joinTtl"?)');
    await assertRefused({ ...FILE, 'public-url': 'https://auth.example.org' }, 'unknown key "public-url" (did you mean "publicUrl"?)');
  });

  // Rule: an invalid value is refused, the key named.
  test('an invalid value: exit 2 naming the key', async () => {
    await assertRefused({ port: 70000 }, '"port"', 'from 0 to 65535');
    await assertRefused({ ...FILE, variant: 'full' }, '"variant"', 'base or extended');
    await assertRefused({ ...FILE, serverName: 'x'.repeat(65) }, '"serverName"', 'one line of at most 64 characters');
  });

  // Rule: a value of the wrong JSON type is refused, the key named.
  test('a wrong JSON type: exit 2 naming the key', async () => {
    await assertRefused({ ...FILE, port: '0' }, '"port" must be a JSON whole number');
    await assertRefused({ ...FILE, metrics: 'true' }, '"metrics" must be a JSON boolean');
  });

  // Rule: a file that is not a JSON object is refused.
  test('invalid JSON or not an object: exit 2', async () => {
    await assertRefused('{"port": 0', 'is not valid JSON');
    await assertRefused('["port", 0]', 'must hold one JSON object');
  });

  // Rule: a missing file is a failure naming it (exit 1), not a server on defaults.
  test('a missing file: exit 1 naming it', async () => {
    const missing = join(tmp.dir, 'missing.json');
    const r = await runCli(['serve', '--config', missing], { cwd });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(`cannot read the config file "${missing}"`), r.stderr);
  });
});

describe('--print-config', () => {
  // Rule: it prints the effective settings as JSON and exits 0, secrets masked, none on stdout.
  test('prints the settings in effect with secrets masked', async () => {
    const path = configFile({ ...FILE, apiKey: API_KEY, adminToken: ADMIN_TOKEN });
    const r = await runCli(['--config', path, '--print-config'], { env: { MCAUTH_JOIN_TTL: '99' }, cwd });
    assert.equal(r.code, 0, r.stderr);
    const printed = JSON.parse(r.stdout);
    assert.equal(printed.apiKey, '********');
    assert.equal(printed.adminToken, '********');
    assert.equal(printed.basePath, '/mc', 'from the file');
    assert.equal(printed.db, db, 'from the file');
    assert.equal(printed.joinTtl, 99, 'the environment over the file');
    assert.equal(printed.tokenTtl, 2_592_000, 'the default');
    for (const secret of [API_KEY, ADMIN_TOKEN]) {
      assert.ok(!r.stdout.includes(secret), 'a secret on stdout');
      assert.ok(!r.stderr.includes(secret), 'a secret on stderr');
    }
    assert.equal(existsSync(join(cwd, 'mcauth.db')), false, 'no database opened');
  });

  // Rule: secrets from the environment are masked too.
  test('masks secrets from the environment', async () => {
    const r = await runCli(['--print-config'], { env: { MCAUTH_CONFIG: file, MCAUTH_ADMIN_TOKEN: ADMIN_TOKEN }, cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).adminToken, '********');
    assert.equal(JSON.parse(r.stdout).apiKey, '', 'an unset secret is shown as unset');
    assert.ok(!r.stdout.includes(ADMIN_TOKEN));
  });
});

describe('user commands with --config', () => {
  // Rule: user add (in before) and user list use the file's db; no default db is created.
  test('use the file\'s db', async () => {
    assert.ok(existsSync(db), 'user add --config created the file\'s db');
    assert.equal(existsSync(join(cwd, 'mcauth.db')), false, 'and not the default mcauth.db');
    for (const [args, env] of [
      [['user', 'list', '--config', file], {}],
      [['user', 'list'], { MCAUTH_CONFIG: file }],
      [['user', 'list', '--db', db], {}],
    ] as [string[], Record<string, string>][]) {
      const r = await runCli(args, { env, cwd });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Alice {2}[0-9a-f-]{36} {2}skin https:\/\/skins\.example\/a\.png \(slim\) {2}created [^\n]* UTC {2}last login [^\n]*\nDatabase: \S+\n$/, args.join(' '));
      assert.equal(r.stdout.trimEnd().split('Database: ')[1], db, 'the database used, by absolute path');
    }
    assert.equal(existsSync(join(cwd, 'mcauth.db')), false);
  });

  // Rule: a user added with --config is seen by a server started with the same file.
  test('a player added with --config logs in on the server of that file', async () => {
    const s = await serve(['--config', file]);
    try {
      const added = await runCli(['user', 'add', 'Bob', '--config', file], { stdin: 'bob-password\n', cwd });
      assert.equal(added.code, 0, added.stderr);
      assert.equal(assertOk(await s.post('/mc/auth', { login: 'bob', password: 'bob-password' })).username, 'Bob');
    } finally {
      await s.stop();
    }
    const removed = await runCli(['user', 'remove', 'Bob', '--config', file], { cwd });
    assert.equal(removed.code, 0, removed.stderr);
  });

  // Rule: the file's db is checked for user commands too.
  test('refuse a file whose db is not a string', async () => {
    const path = configFile({ db: 42 });
    const r = await runCli(['user', 'list', '--config', path], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.ok(r.stderr.includes(`"db" must be a JSON string`), r.stderr);
  });
});
