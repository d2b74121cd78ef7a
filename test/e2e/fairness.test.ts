// Fair under abuse, with the default flags: one hostile address, or 64 holding idle connections
// (on SQLite, and on PostgreSQL over two workers), cannot keep real players out, nor the relay;
// one address cannot run the process out of file descriptors.
// The per-address login budget (--address-login-limit) holds direct callers, and never a relay:
// a caller with the API key, or one whose address is in --relay (by default this host: a
// LauncherServer beside the service), which calls for a whole community from one address. These
// time the server under a load of their own, or must land their logins inside the budget's
// window, so the file runs alone (test/file-groups.ts); the other per-address rules are in
// address-rules.test.ts. Every client is bound to its own loopback address (all of 127/8 reaches
// the server on Linux).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { join as pathJoin } from 'node:path';
import { RUNTIME, startRaw, startServer, tempDir } from '../helpers/process.ts';
import { databaseServer, postgresMissing } from '../helpers/postgres.ts';
import type { RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { pool } from '../helpers/pool.ts';
import { seedPlayers } from '../helpers/players.ts';
import { metricSample, requestLines, sleep, until } from './util.ts';
import { connect, type Conn } from '../helpers/raw-connection.ts';

const tmp = tempDir();
const KEY = 'fairness-api-key-0123456789';
const PASSWORD = 'player-Pass-7Hq2';

after(() => tmp.cleanup());

/** The phase's PostgreSQL cluster (or the file's own), where there is one: taken at the top level, as databaseServer asks. */
const pg = postgresMissing ? undefined : await databaseServer();

const login = (port: number, name: string, from: string, key?: string): Promise<Answer> =>
  call(port, key ? `/auth?key=${key}` : '/auth', { from, body: { login: name, password: PASSWORD } });

describe('1,100 idle connections from one address (default flags)', () => {
  let s: RunningServer;
  before(async () => {
    const db = pathJoin(tmp.dir, 'flood.db');
    await seedPlayers(db, ['Steve'], PASSWORD);
    s = await startServer(['--db', db]);
  });
  after(() => s.stop());

  // Held past the 10 s headers timeout, which closes the ones within the cap that sent nothing.
  test('held for 12 s: /health from another address answers within a second, every second, and a player logs in', async (t) => {
    const held = await pool(Array.from({ length: 1100 }, (_, i) => i), 50, () => connect(s.port, '127.0.1.50'));
    // Closed whatever the assertions say: one left open would keep this file's process from ending.
    t.after(() => {
      for (const c of held) c.socket.destroy();
    });
    const started = Date.now();
    const late: string[] = [];
    let checks = 0;
    let loggedIn = false;
    while (Date.now() - started < 12_000) {
      const sent = performance.now();
      const health = await call(s.port, '/health', { from: '127.0.1.51', timeoutMs: 5000 }).catch((err: Error) => ({ status: 0, body: err.message }) as Answer);
      const ms = performance.now() - sent;
      checks++;
      if (health.status !== 200 || ms > 1000) late.push(`${Math.round((Date.now() - started) / 1000)} s: ${health.status} after ${Math.round(ms)} ms`);
      if (!loggedIn && Date.now() - started > 5000) {
        const r = await login(s.port, 'Steve', '127.0.1.52');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        loggedIn = true;
      }
      await sleep(Math.max(0, 1000 - (performance.now() - sent)));
    }
    assert.ok(loggedIn);
    assert.ok(checks >= 8, `only ${checks} checks in 12 s`);
    assert.deepEqual(late, [], 'every /health answered 200 within a second');
    // The server closed those over the address's cap (64) at once or very soon; the test closed none.
    const open = held.filter((c) => !c.isClosed()).length;
    assert.ok(open <= 64, `${open} of the 1,100 are still open`);
  });
});

/**
 * Keeps `each` idle connections open from every address of `from`: one that closes is opened
 * again `againMs` later, until the function returned is called (which closes them all). The
 * connections send nothing. `opened` counts the connections made so far.
 */
function holdIdle(port: number, from: string[], each: number, againMs: number): { opened: () => number; stop: () => void } {
  let running = true;
  let opened = 0;
  const open = new Set<Conn>();
  const keep = async (address: string): Promise<void> => {
    while (running) {
      const c = await connect(port, address).catch(() => undefined);
      // Made while stop() ran: no one else will close it. An idle connection the kernel took
      // with a SYN cookie into a full backlog can stay established here with no peer at all,
      // and would keep this file's process from ever ending.
      if (c && !running) c.socket.destroy();
      else if (c) {
        opened++;
        open.add(c);
        await c.closed;
        open.delete(c);
      }
      await sleep(againMs);
    }
  };
  for (const address of from) for (let i = 0; i < each; i++) void keep(address);
  return {
    opened: () => opened,
    stop: () => {
      running = false;
      for (const c of open) c.socket.destroy();
    },
  };
}

/**
 * 64 addresses hold 61 idle connections each, opening one again 50 ms after one closes, while the
 * relay and 10 addresses not taking part log in (players `names`, seeded) on server `s`: 95% of
 * 60 logins within 2 s, and /health from another address answers.
 */
async function loginsBesideIdleHolders(s: RunningServer, names: string[]): Promise<void> {
  const holders = holdIdle(s.port, Array.from({ length: 64 }, (_, i) => `127.0.2.${i + 1}`), 61, 50);
  try {
    // Under way: twice --max-connections (1,024) opened.
    assert.ok(await until(async () => holders.opened() >= 2048, 60_000), `only ${holders.opened()} connections opened`);
    // 60 logins, two at a time: through the relay (127.0.0.1, this host, a relay by default) and from 10 other addresses.
    const times = await pool(Array.from({ length: 60 }, (_, i) => i), 2, async (i) => {
      const from = i % 2 === 0 ? '127.0.0.1' : `127.0.5.${(i % 10) + 1}`;
      const sent = performance.now();
      const r = await login(s.port, names[i % 10]!, from).catch((err: Error) => ({ status: 0, body: err.message }) as Answer);
      return r.status === 200 ? performance.now() - sent : Infinity;
    });
    const quick = times.filter((ms) => ms <= 2000).length;
    const health = await call(s.port, '/health', { from: '127.0.5.20', timeoutMs: 5000 });
    assert.equal(health.status, 200, JSON.stringify(health.body));
    assert.ok(quick >= 57, `${quick} of 60 logins within 2 s; slowest: ${times.sort((a, b) => b - a).slice(0, 5).map(Math.round).join(', ')} ms`);
  } finally {
    holders.stop();
  }
}

describe('64 addresses, each holding 61 idle connections (under its cap of 64) and opening one again 50 ms after it closes (default flags)', () => {
  const names = Array.from({ length: 10 }, (_, i) => `Idle${i}`);

  test('the relay and 10 addresses not taking part log in: 95% of 60 within 2 s; /health from another address answers', async () => {
    const db = pathJoin(tmp.dir, 'idle-many.db');
    await seedPlayers(db, names, PASSWORD);
    const s = await startServer(['--db', db]);
    try {
      await loginsBesideIdleHolders(s, names);
    } finally {
      await s.stop();
    }
  });

  test(`the same on PostgreSQL${RUNTIME === 'deno' ? '' : ', over two workers'}`, { skip: postgresMissing }, async () => {
    const url = pg!.url(await pg!.newDatabase('idle_many'));
    await seedPlayers(url, names, PASSWORD);
    const s = await startServer(['--db', url, ...(RUNTIME === 'deno' ? [] : ['--workers', '2'])]);
    try {
      await loginsBesideIdleHolders(s, names);
    } finally {
      await s.stop();
    }
  });
});

describe('every accepted socket is counted until it closes', () => {
  test('one address opening 1,100 connections again and again cannot run a 400-descriptor process out of them: /health from another address and a login answer', async () => {
    const db = pathJoin(tmp.dir, 'descriptors.db');
    await seedPlayers(db, ['Steve'], PASSWORD);
    const s = await startRaw(['serve', '--port', '0', '--db', db, '--max-connections', '150'], { wrap: ['prlimit', '--nofile=400:400'] });
    const holders = holdIdle(s.port, ['127.0.1.70'], 1100, 50);
    try {
      assert.ok(await until(async () => holders.opened() >= 2000, 60_000), `only ${holders.opened()} connections opened`);
      for (let i = 0; i < 5; i++) {
        const health = await call(s.port, '/health', { from: '127.0.1.71', timeoutMs: 5000 });
        assert.equal(health.status, 200, JSON.stringify(health.body));
      }
      const r = await login(s.port, 'Steve', '127.0.1.72');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.doesNotMatch(s.stderr() + s.stdout(), /EMFILE|too many open files/i);
    } finally {
      holders.stop();
      await s.stop();
    }
  });
});

describe('relays are never held to per-address rules', () => {
  test('a relay on this host without an API key (default flags): 100 logins of 20 players sent within 10 s, then 50 more, none refused', async () => {
    const db = pathJoin(tmp.dir, 'relay.db');
    const names = Array.from({ length: 20 }, (_, i) => `Player${i}`);
    await seedPlayers(db, names, PASSWORD);
    const s = await startServer(['--db', db]);
    try {
      const started = performance.now();
      // As a LauncherServer relays them: one every 100 ms, all from 127.0.0.1, each on its own
      // connection. At most 32 wait at once, so that a slow machine's hash pool (a bound of its
      // own, 64 waiting) cannot be what refuses one.
      const answers = await pool(Array.from({ length: 100 }, (_, i) => names[i % 20]!), 32, async (name, i) => {
        await sleep(Math.max(0, i * 100 - (performance.now() - started)));
        return login(s.port, name, '127.0.0.1');
      });
      const seconds = Math.round((performance.now() - started) / 100) / 10;
      assert.deepEqual(answers.filter((a) => a.status !== 200).map((a) => [a.status, a.body]), [], `answered in ${seconds} s`);
      // 50 more in the same minute, past the 120 a direct address gets: cheap ones (refused for
      // their form, 400, after the budget would have counted them), still never 429.
      const more = await pool(Array.from({ length: 50 }, (_, i) => i), 8, () => call(s.port, '/auth', { body: { login: 'x', password: 'y' } }));
      assert.deepEqual(more.filter((a) => a.status !== 400).map((a) => [a.status, a.body]), []);
    } finally {
      await s.stop();
    }
  });

  test('a relay with --api-key from 127.0.1.60: 200 logins, then 2,000 joins on 100 connections at once: no refusal', async () => {
    const db = pathJoin(tmp.dir, 'keyed.db');
    const names = Array.from({ length: 20 }, (_, i) => `Keyed${i}`);
    const uuids = await seedPlayers(db, names, PASSWORD);
    const s = await startServer(['--db', db, '--api-key', KEY, '--metrics']);
    try {
      const from = '127.0.1.60';
      const tokens = new Map<string, string>();
      // 200 logins (past the 120 a direct address gets in a minute), at most 8 waiting at once (so
      // that a slow machine's hash pool cannot be what refuses one).
      const logins = await pool(Array.from({ length: 200 }, (_, i) => names[i % 20]!), 8, async (name) => {
        const r = await login(s.port, name, from, KEY);
        if (r.status === 200) tokens.set(name, r.body.result.accessToken);
        return r;
      });
      assert.deepEqual(logins.filter((a) => a.status !== 200).map((a) => [a.status, a.body]), []);
      // Then 2,000 joins as fast as they are answered (here well over a minute's worth a second),
      // on 100 connections at once: more than --max-connections-per-address (64) lets a direct client hold.
      const agent = new Agent({ keepAlive: true, maxSockets: 100, localAddress: from });
      const joins = await pool(Array.from({ length: 2000 }, (_, i) => names[i % 20]!), 100, (name, i) =>
        call(s.port, `/join?key=${KEY}`, { from, agent, body: { accessToken: tokens.get(name), userUUID: uuids.get(name), serverID: `server-${i}` } }),
      );
      agent.destroy();
      assert.deepEqual(joins.filter((a) => a.status !== 200 || a.body.result !== true).slice(0, 5).map((a) => [a.status, a.body]), []);
      const metrics = await call(s.port, `/metrics?key=${KEY}`);
      for (const reason of ['address_budget', 'address_connections', 'connections', 'throttle', 'pool_share']) assert.equal(metricSample(metrics.body, `auth_refusals_total{reason="${reason}"}`), 0, reason);
    } finally {
      await s.stop();
    }
  });
});

describe('the per-address login budget (default flags: 120 a minute)', () => {
  test('a direct address gets 429 past it, counted in the metrics and logged with its reason and client; a relay never does', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'budget.db'), '--metrics']);
    try {
      // Logins refused for their form are cheap and still counted: no scrypt work for 120 of them.
      const bad = { login: 'x', password: 'y' };
      // Eight at a time: which of the 121 is counted last depends on arrival, so the statuses are counted, not read by index.
      const direct = await pool(Array.from({ length: 121 }, (_, i) => i), 8, () => call(s.port, '/auth', { from: '127.0.1.70', body: bad }));
      assert.deepEqual(
        direct.map((a) => a.status).filter((status) => status !== 400),
        [429],
      );
      const over = direct.find((a) => a.status === 429)!;
      assert.equal(over.status, 429, JSON.stringify(over.body));
      assert.match(over.body.error, /^Too many logins from this address; try again in \d+ s$/);
      assert.ok(Number(over.headers['retry-after']) > 0);
      // A refusal is held back a second (HELD_REFUSAL_MS), so that a flood waiting for its answers is slowed.
      const sent = performance.now();
      const again = await call(s.port, '/auth', { from: '127.0.1.70', body: bad });
      assert.equal(again.status, 429);
      assert.ok(performance.now() - sent >= 950, `answered after ${Math.round(performance.now() - sent)} ms`);
      assert.equal((await call(s.port, '/auth', { from: '127.0.1.71', body: bad })).status, 400, 'another address has its own budget');
      const relay = await pool(Array.from({ length: 130 }, (_, i) => i), 8, () => call(s.port, '/auth', { from: '127.0.0.1', body: bad }));
      assert.deepEqual(relay.filter((a) => a.status !== 400).map((a) => a.status), [], 'this host is a relay');
      const metrics = await call(s.port, '/metrics');
      assert.equal(metricSample(metrics.body, 'auth_refusals_total{reason="address_budget"}'), 2);
      const refused = requestLines(s).filter((l) => l.status === 429);
      assert.deepEqual(refused.map((l) => [l.path, l.reason, l.client]), Array(2).fill(['/auth', 'address_budget', '127.0.1.70']));
    } finally {
      await s.stop();
    }
  });
});
