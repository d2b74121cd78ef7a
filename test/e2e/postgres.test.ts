// Several nodes of dist/server.js on one PostgreSQL database (on the phase's throwaway cluster,
// see test/helpers/postgres.ts): what one node records, every other sees at once; the guessing
// throttle and the registration limits count across them; a node killed does not stop the others;
// the password of the database URL is never shown. (A database that is away:
// postgres-outage.test.ts; a failover: postgres-failover.test.ts.) Without PostgreSQL on the
// machine these skip, saying so.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { databaseServer, postgresMissing, PG_PASSWORD, type DatabaseServer } from '../helpers/postgres.ts';
import { RUNTIME, runCli, runProc, serverCommand, SERVER_JS, spawnListening, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { seedPlayers } from '../helpers/players.ts';
import { sleep, until } from './util.ts';

const ADMIN = 'pg-admin-token-0123456';
const PW = 'player-Pass-7Hq2';
const NAMES = Array.from({ length: 20 }, (_, i) => `Node${i}`);
const admin = { authorization: `Bearer ${ADMIN}` };

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
/** AuthMe's SHA-256 form of `password`: what an import brings, checked once at the first login. */
const authmeSha = (password: string, salt = '0f1e2d3c4b5a6978'): string => `$SHA$${salt}$${sha256(sha256(password) + salt)}`;

const login = (s: RunningServer, name: string, password = PW, from?: string): Promise<Answer> => call(s.port, '/auth', { from, body: { login: name, password } });

const server: DatabaseServer | undefined = postgresMissing ? undefined : await databaseServer();

describe('several nodes on one PostgreSQL database', { skip: postgresMissing }, () => {
  let cluster: DatabaseServer;
  /** The database the nodes share, and its URL. */
  let db: string;
  let url: string;
  let a: RunningServer;
  let b: RunningServer;
  const uuids = new Map<string, string>();

  before(async () => {
    cluster = server!;
    db = await cluster.newDatabase('nodes');
    url = cluster.url(db);
    // Both start at once: one migrates the new database, the other waits for it (an advisory lock).
    // --join-ttl: a join acknowledged early in a long test still counts when it is checked at its end.
    const args = ['--db', url, '--admin-token', ADMIN, '--join-ttl', '3600'];
    [a, b] = await Promise.all([startServer(args), startServer(args)]);
    for (const [name, id] of await seedPlayers(url, [...NAMES, 'Guessed', 'Changed', 'Locked', 'Renamed', 'Removed'], PW)) uuids.set(name, id);
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test('a join recorded through one node is seen by /hasJoined on the other at once', async () => {
    const token = (await login(a, 'Node0')).body.result.accessToken;
    const joined = await call(a.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Node0'), serverID: 'srv-cross-1' } });
    assert.deepEqual(joined.body, { success: true, result: true });
    const seen = await call(b.port, '/hasJoined', { body: { username: 'Node0', serverID: 'srv-cross-1' } });
    assert.equal(seen.body.result?.userUUID, uuids.get('Node0'), JSON.stringify(seen.body));
  });

  test('a password changed by the CLI, a lock, a rename and a removal through one node: the other holds them at its next request', async () => {
    const changed = await runCli(['user', 'passwd', 'Changed', '--db', url], { stdin: 'new-Pass-9Kd3\n' });
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal((await login(b, 'Changed')).status, 401, 'the old password, on the other node');
    assert.equal((await login(b, 'Changed', 'new-Pass-9Kd3')).status, 200, 'the new password, on the other node');

    const token = (await login(b, 'Locked')).body.result.accessToken;
    assert.equal((await call(a.port, '/admin/users/Locked/lock', { headers: admin, body: {} })).status, 200);
    const join = await call(b.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Locked'), serverID: 'srv-locked' } });
    assert.deepEqual(join.body, { success: true, result: false }, 'a session of a player locked on another node');
    assert.equal((await login(b, 'Locked')).status, 403);

    assert.equal((await call(b.port, '/admin/users/Renamed/rename', { headers: admin, body: { name: 'Renamed2' } })).status, 200);
    const profile = await call(a.port, '/profile', { body: { userUUID: uuids.get('Renamed') } });
    assert.equal(profile.body.result?.username, 'Renamed2');

    const removedToken = (await login(a, 'Removed')).body.result.accessToken;
    assert.equal((await call(a.port, '/admin/users/Removed', { method: 'DELETE', headers: admin })).status, 200);
    assert.equal((await login(b, 'Removed')).status, 401, 'a removed player, on the other node');
    assert.deepEqual((await call(b.port, '/join', { body: { accessToken: removedToken, userUUID: uuids.get('Removed'), serverID: 'srv-removed' } })).body, { success: true, result: false });
  });

  test('the guessing throttle counts across nodes: guesses over both get the free failures of one', async () => {
    const statuses: number[] = [];
    // One after another, each to the other node than the last.
    for (let i = 0; i < 12; i++) statuses.push((await login(i % 2 === 0 ? a : b, 'Guessed', `wrong-${i}`, '127.0.1.40')).status);
    const checked = statuses.filter((s) => s === 401).length;
    // Five free; each is sent once the one before is answered, so a hash slower than the first
    // wait (1 s) can let one more through on a busy machine, never five more.
    assert.ok(checked >= 5 && checked <= 7, `${checked} of 12 checked: ${statuses.join(' ')}`);
    assert.deepEqual(statuses.filter((s) => s !== 401 && s !== 429), [], statuses.join(' '));
    assert.equal((await login(b, 'Guessed', PW, '127.0.1.41')).status, 200, 'the player, from another address');
  });

  test('the registration limits count across nodes: sign-ups spread over two get the limits of one', async () => {
    const args = ['--db', url, '--account-page', '--registration', 'open', '--registrations-per-address', '2', '--registrations-per-hour', '3'];
    const [c, d] = await Promise.all([startServer(args), startServer(args)]);
    try {
      const register = (node: RunningServer, name: string, from: string): Promise<Answer> => call(node.port, '/account/register', { from, body: { name, password: PW } });
      const statuses = [await register(c, 'Signup1', '127.0.1.50'), await register(d, 'Signup2', '127.0.1.50'), await register(c, 'Signup3', '127.0.1.50')].map((r) => r.status);
      assert.deepEqual(statuses, [200, 200, 429], 'two from one address, over both nodes');
      assert.equal((await register(d, 'Signup4', '127.0.1.51')).status, 200, 'the third of the hour');
      const fourth = await register(c, 'Signup5', '127.0.1.52');
      assert.equal(fourth.status, 429, JSON.stringify(fourth.body));
      assert.match(fourth.body.error, /^Too many registrations this hour: sign up with an invite code/);
    } finally {
      await Promise.all([c.stop(), d.stop()]);
    }
  });

  test('a login whose failure count waits on a slow database past the deadline: 503 within 2 s, the count rolled back, not left to land later; then the player gets in', async () => {
    // Another session holds the failure counts for 3 s, longer than the 1.5 s deadline of every call.
    const held = cluster.psql('BEGIN; LOCK TABLE login_failures IN EXCLUSIVE MODE; SELECT pg_sleep(3); COMMIT;', db);
    const locks = "SELECT count(*) FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND relation = 'login_failures'::regclass";
    assert.ok(await until(async () => (await cluster.psql(`${locks} AND mode = 'ExclusiveLock' AND granted`, db)).trim() !== '0', 10_000), 'the lock was never taken');
    const sent = performance.now();
    const r = await login(a, 'Node6');
    const waited = performance.now() - sent;
    assert.deepEqual([r.status, r.body], [503, { success: false, error: 'The database is temporarily unavailable; try again in a moment' }]);
    assert.ok(waited < 2000, `answered after ${Math.round(waited)} ms`);
    await held;
    // The count waited on the lock; once it has it, it finds its deadline passed and rolls back.
    assert.ok(await until(async () => (await cluster.psql(locks, db)).trim() === '0', 10_000), 'the count never ended');
    const counted = await cluster.psql("SELECT count(*) FROM login_failures WHERE name_key LIKE 'node6%' AND failures > 0", db);
    assert.equal(counted.trim(), '0', 'no failure counted for the login answered 503');
    assert.equal((await login(a, 'Node6')).status, 200);
  });

  test('200 login-and-join cycles at once, spread over both nodes, each player once: every acknowledged join is seen by both', async () => {
    // 200 players in one import, with AuthMe's cheap hash: no 200 scrypt hashes up front (each
    // first login checks the old hash and stores a scrypt one, as a real import's players do).
    const tmp = tempDir();
    const names = Array.from({ length: 200 }, (_, i) => `Cycle${i}`);
    try {
      const file = pathJoin(tmp.dir, 'cycles.json');
      writeFileSync(file, JSON.stringify(names.map((name) => ({ name, hash: authmeSha(PW) }))));
      const imported = await runCli(['import', file, '--db', url]);
      assert.equal(imported.code, 0, imported.stderr);
    } finally {
      tmp.cleanup();
    }
    const deadline = performance.now() + 180_000;
    const results = await Promise.all(
      names.map(async (name, i) => {
        const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
        // 200 at once overflow a node's hash queue (--hash-queue 64): a 503 is a refusal, not a
        // loss, and the login is tried again, as a launcher would.
        // A login may wait in the queue behind the others' hashes: longer than call's usual 30 s on a busy machine.
        const tryLogin = (): Promise<Answer> => call(first.port, '/auth', { body: { login: name, password: PW }, timeoutMs: 150_000 });
        // A 503 whose database was too slow to take its count back too leaves it counted as a
        // failed login; after five such the name waits a second (429, Retry-After): also a
        // refusal, tried again after the wait it names, a few times at most (more would be the
        // throttle counting what it should not).
        let r = await tryLogin();
        let throttled = 0;
        while ((r.status === 503 || (r.status === 429 && ++throttled <= 3)) && performance.now() < deadline) {
          await sleep(r.status === 429 ? Number(r.headers['retry-after'] ?? 1) * 1000 : 200);
          r = await tryLogin();
        }
        assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body)}`);
        const serverID = `srv-cycle-${i}`;
        const uuid = r.body.result.userUUID as string;
        // A join answered `false` with a valid token met a database too slow for its deadline: not
        // acknowledged, so tried again as a player would, until it is.
        const tryJoin = async (): Promise<boolean> => (await call(second.port, '/join', { body: { accessToken: r.body.result.accessToken, userUUID: uuid, serverID } })).body.result === true;
        let joined = await tryJoin();
        while (!joined && performance.now() < deadline) {
          await sleep(200);
          joined = await tryJoin();
        }
        return { name, serverID, uuid, joined };
      }),
    );
    assert.deepEqual(results.filter((r) => !r.joined).map((r) => r.name), [], 'every join acknowledged');
    for (const { name, serverID, uuid } of results) {
      for (const node of [a, b]) {
        const seen = await call(node.port, '/hasJoined', { body: { username: name, serverID } });
        assert.equal(seen.body.result?.userUUID, uuid, `${name} on ${serverID}: ${JSON.stringify(seen.body)}`);
      }
    }
  });

  test('import into PostgreSQL: the imported player logs in on another node with the old password', async () => {
    const tmp = tempDir();
    try {
      const file = pathJoin(tmp.dir, 'players.json');
      writeFileSync(file, JSON.stringify([{ name: 'Imported', hash: authmeSha('imported-Pass-1') }]));
      const r = await runCli(['import', file, '--db', url]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^Imported: 1$/m);
      // The database may be slow to answer just after the cycles above on a busy machine: a 503 is tried again.
      const loggedIn = async (): Promise<boolean> => (await login(b, 'Imported', 'imported-Pass-1')).status === 200;
      assert.ok(await until(loggedIn, 30_000), 'the imported player logged in');
    } finally {
      tmp.cleanup();
    }
  });

  test('--metrics on PostgreSQL: a node counts its requests', async () => {
    const m = await startServer(['--db', url, '--metrics']);
    try {
      assert.equal((await login(m, 'Node3')).status, 200);
      const metrics = await call(m.port, '/metrics');
      assert.equal(metrics.status, 200);
      assert.match(String(metrics.body), /^http_requests_total\{route="\/auth",status="200"\} 1$/m);
    } finally {
      await m.stop();
    }
  });

  test('--workers 2 on PostgreSQL: each worker serves, and what one records the other sees', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    const w = await startServer(['--db', url, '--workers', '2']);
    try {
      // Each on a connection of its own: node:cluster deals them to both workers in turn.
      for (let i = 0; i < 4; i++) {
        const token = (await login(w, 'Node4')).body.result.accessToken;
        assert.deepEqual((await call(w.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Node4'), serverID: `srv-workers-${i}` } })).body, { success: true, result: true });
        assert.equal((await call(w.port, '/hasJoined', { body: { username: 'Node4', serverID: `srv-workers-${i}` } })).body.result?.userUUID, uuids.get('Node4'));
      }
    } finally {
      await w.stop();
    }
  });

  test('a node killed with SIGKILL: the others keep answering', async () => {
    const c = await spawnListening([...serverCommand(), 'serve', '--port', '0', '--db', url]);
    assert.equal((await call(c.port, '/auth', { body: { login: 'Node1', password: PW } })).status, 200);
    c.child.kill('SIGKILL');
    assert.equal((await c.exited).signal, 'SIGKILL');
    assert.equal((await login(a, 'Node1')).status, 200);
    assert.equal((await call(b.port, '/health')).status, 200);
  });

  test('the URL from MCAUTH_DB (postgresql://, sslmode) with its password from MCAUTH_DB_PASSWORD_FILE, which wins; or from the config file', async () => {
    const tmp = tempDir();
    try {
      const pwfile = pathJoin(tmp.dir, 'db-password');
      writeFileSync(pwfile, `${PG_PASSWORD}\n`, { mode: 0o600 });
      const byEnvUrl = url.replace('postgres://', 'postgresql://').replace(PG_PASSWORD, 'not-the-password') + '?sslmode=disable';
      const byEnv = await startServer([], { MCAUTH_DB: byEnvUrl, MCAUTH_DB_PASSWORD_FILE: pwfile });
      try {
        assert.equal((await login(byEnv, 'Node5')).status, 200);
        assert.ok(!byEnv.stdout().includes('not-the-password'), byEnv.stdout());
      } finally {
        await byEnv.stop();
      }
      const config = pathJoin(tmp.dir, 'config.json');
      writeFileSync(config, JSON.stringify({ db: url }), { mode: 0o600 });
      const byFile = await startServer(['--config', config]);
      try {
        assert.equal((await login(byFile, 'Node5')).status, 200);
      } finally {
        await byFile.stop();
      }
    } finally {
      tmp.cleanup();
    }
  });

  test("no log line, error or --print-config shows the database's password", async () => {
    const printed = await runProc([...serverCommand(), '--db', url, '--print-config']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, new RegExp(`"db": "postgres://mcauth:\\*{8}@127\\.0\\.0\\.1:\\d+/${db}"`));
    const wrong = await runCli(['user', 'list', '--db', url.replace(PG_PASSWORD, 'not-the-password')]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /cannot open the database postgres:\/\/mcauth:\*\*\*\*\*\*\*\*@/);
    for (const text of [printed.stdout, printed.stderr, wrong.stdout, wrong.stderr, a.stdout(), a.stderr(), b.stdout(), b.stderr()]) {
      assert.ok(!text.includes(PG_PASSWORD) && !text.includes('not-the-password'), text);
    }
  });
});

test('a PostgreSQL URL without the driver installed: exit 1, saying the command that installs it', async () => {
  const tmp = tempDir();
  try {
    // server.js alone, as an owner copies it: no node_modules beside it or above it.
    const script = pathJoin(tmp.dir, 'server.js');
    copyFileSync(SERVER_JS, script);
    const r = await runProc([...serverCommand(script), '--db', `postgres://mcauth:${PG_PASSWORD}@127.0.0.1:9/mcauth`], { cwd: tmp.dir });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /npm install postgres@3/);
    assert.ok(!r.stderr.includes(PG_PASSWORD), r.stderr);
  } finally {
    tmp.cleanup();
  }
});

test('a URL of several hosts that all refuse: `serve` and a command fail within 10 s, saying so (the driver would try them in turn for ever)', { skip: postgresMissing }, async () => {
  // Ports 1 and 9 of loopback refuse: nothing listens there.
  const url = `postgres://mcauth:${PG_PASSWORD}@127.0.0.1:1,127.0.0.1:9/mcauth`;
  for (const args of [['--db', url, '--port', '0'], ['user', 'list', '--db', url]]) {
    const sent = performance.now();
    const r = await runProc([...serverCommand(), ...args], { timeoutMs: 30_000 });
    const took = performance.now() - sent;
    assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /cannot open the database postgres:\/\/mcauth:\*{8}@127\.0\.0\.1:1,127\.0\.0\.1:9\/mcauth: no host of the URL answered within 10 s/, r.stderr);
    assert.ok(took < 15_000, `${args[0]} took ${Math.round(took)} ms`);
    assert.ok(!r.stderr.includes(PG_PASSWORD), r.stderr);
  }
});
