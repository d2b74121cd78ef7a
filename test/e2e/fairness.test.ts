// Fair under abuse, with the default flags: one hostile address cannot keep real players out.
// Per-address rules (the login budget, --address-login-limit; the connection cap,
// --max-connections-per-address) hold direct callers, and never a relay: a caller with the API
// key, or one whose address is in --relay (by default this host: a LauncherServer beside the
// service), which calls for a whole community from one address. --trust-proxy takes the client
// from X-Forwarded-For only from a listed proxy. A connection that got an error answer is
// closed by the server even when the client never closes its side. Every client is bound to its
// own loopback address (all of 127/8 reaches the server on Linux).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Agent } from 'node:http';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, RUNTIME } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { pool } from '../helpers/pool.ts';
import { addPlayers } from '../helpers/players.ts';
import { sleep } from './util.ts';

const tmp = tempDir();
const ADMIN = 'fairness-admin-token-0123';
const KEY = 'fairness-api-key-0123456789';
const PASSWORD = 'player-Pass-7Hq2';

after(() => tmp.cleanup());

/** A raw TCP connection from `from`, told when it closes; `halfOpen`: it never closes its side on its own. */
interface Conn {
  socket: net.Socket;
  text: () => string;
  closed: Promise<void>;
  isClosed: () => boolean;
}

function connect(port: number, from: string, halfOpen = false): Promise<Conn> {
  return new Promise((ready, fail) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from, allowHalfOpen: halfOpen });
    let text = '';
    let isClosed = false;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    const closed = new Promise<void>((r) =>
      socket.once('close', () => {
        isClosed = true;
        r();
      }),
    );
    socket.once('error', (e) => (isClosed ? undefined : fail(e)));
    socket.once('connect', () => {
      socket.on('error', () => {}); // a reset shows as a close
      ready({ socket, text: () => text, closed, isClosed: () => isClosed });
    });
  });
}

/** Waits until `ok()` holds, checking every 20 ms (after `step`, when given), up to `ms`; returns whether it did. */
async function waitUntil(ok: () => boolean, ms: number, step?: () => Promise<void>): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    await step?.();
    if (ok()) return true;
    if (Date.now() > end) return false;
    await sleep(step ? 200 : 20);
  }
}

/** The request lines of a server's JSON log. */
const requestLines = (s: RunningServer): any[] =>
  s
    .stdout()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'request');

/** A counter's value in a /metrics text. */
const sample = (text: string, series: string): number => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

const login = (port: number, name: string, from: string, key?: string): Promise<Answer> =>
  call(port, key ? `/auth?key=${key}` : '/auth', { from, body: { login: name, password: PASSWORD } });

describe('1,100 idle connections from one address (default flags)', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(['--db', pathJoin(tmp.dir, 'flood.db'), '--admin-token', ADMIN]);
    await addPlayers(s.port, ADMIN, ['Steve'], PASSWORD);
  });
  after(() => s.stop());

  test('held for 25 s: /health from another address answers within a second, every second, and a player logs in', async () => {
    const held = await pool(Array.from({ length: 1100 }, (_, i) => i), 50, () => connect(s.port, '127.0.1.50'));
    const started = Date.now();
    const late: string[] = [];
    let checks = 0;
    let loggedIn = false;
    while (Date.now() - started < 25_000) {
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
    assert.ok(checks >= 15, `only ${checks} checks in 25 s`);
    assert.deepEqual(late, [], 'every /health answered 200 within a second');
    // The server closed those over the address's cap (64) at once or very soon; the test closed none.
    const open = held.filter((c) => !c.isClosed()).length;
    assert.ok(open <= 64, `${open} of the 1,100 are still open`);
    for (const c of held) c.socket.destroy();
  });
});

describe('relays are never held to per-address rules', () => {
  test('a relay on this host without an API key (default flags): 100 logins of 20 players sent within 10 s, then 50 more, none refused', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'relay.db'), '--admin-token', ADMIN]);
    try {
      const names = Array.from({ length: 20 }, (_, i) => `Player${i}`);
      await addPlayers(s.port, ADMIN, names, PASSWORD);
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
    const s = await startServer(['--db', pathJoin(tmp.dir, 'keyed.db'), '--admin-token', ADMIN, '--api-key', KEY, '--metrics']);
    try {
      const names = Array.from({ length: 20 }, (_, i) => `Keyed${i}`);
      const uuids = await addPlayers(s.port, ADMIN, names, PASSWORD);
      const from = '127.0.1.60';
      const tokens = new Map<string, string>();
      const started = performance.now();
      // 200 logins (past the 120 a direct address gets) sent at up to 8 a second, at most 8 waiting
      // at once (so that a slow machine's hash pool cannot be what refuses one).
      const logins = await pool(Array.from({ length: 200 }, (_, i) => names[i % 20]!), 8, async (name, i) => {
        await sleep(Math.max(0, i * 125 - (performance.now() - started)));
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
      for (const reason of ['address_budget', 'address_connections', 'connections', 'throttle', 'pool_share']) assert.equal(sample(metrics.body, `auth_refusals_total{reason="${reason}"}`), 0, reason);
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
      assert.equal(sample(metrics.body, 'auth_refusals_total{reason="address_budget"}'), 2);
      const refused = requestLines(s).filter((l) => l.status === 429);
      assert.deepEqual(refused.map((l) => [l.path, l.reason, l.client]), Array(2).fill(['/auth', 'address_budget', '127.0.1.70']));
    } finally {
      await s.stop();
    }
  });
});

describe('held refusals', () => {
  const bad = '{"login":"x","password":"y"}';
  const auth = (headers = ''): string => `POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}Content-Length: ${bad.length}\r\n\r\n${bad}`;

  test('a client that pipelines more requests behind a held refusal has its connection cut, unanswered', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'pipelined.db'), '--address-login-limit', '1']);
    try {
      const from = '127.0.1.73';
      assert.equal((await call(s.port, '/auth', { from, body: JSON.parse(bad) })).status, 400, 'the budget of one, used');
      const c = await connect(s.port, from);
      c.socket.write(auth() + auth() + auth());
      assert.ok(await waitUntil(() => c.isClosed(), 8000), `not closed: ${JSON.stringify(c.text())}`);
      assert.equal(c.text(), '', 'no held answer is written to a connection that pipelined past it');
    } finally {
      await s.stop();
    }
  });

  test('behind a trusted proxy a refusal is not held: the proxy\'s connection, shared by its clients, gets its answers', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'proxied-refusal.db'), '--address-login-limit', '1', '--trust-proxy', '127.0.1.74']);
    try {
      const c = await connect(s.port, '127.0.1.74');
      // Three logins of one client, pipelined on the proxy's one connection: 400 (counted), then two 429s.
      c.socket.write([1, 2, 3].map(() => auth('X-Forwarded-For: 203.0.113.9\r\n')).join(''));
      // An answer follows the body before it on the same line: status lines are found anywhere.
      assert.ok(await waitUntil(() => (c.text().match(/HTTP\/1\.1 \d{3}/g) ?? []).length === 3, 8000), `answers: ${JSON.stringify(c.text())}`);
      assert.deepEqual(c.text().match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 400', 'HTTP/1.1 429', 'HTTP/1.1 429']);
      assert.ok(!c.isClosed(), 'the proxy\'s connection is kept');
      c.socket.destroy();
    } finally {
      await s.stop();
    }
  });
});

describe('--trust-proxy', () => {
  /** The client each request's log line names. */
  async function clients(s: RunningServer, calls: [string, string | undefined][]): Promise<string[]> {
    for (const [from, forwarded] of calls) {
      assert.equal((await call(s.port, '/health', { from, headers: forwarded ? { 'x-forwarded-for': forwarded } : {} })).status, 200);
    }
    assert.ok(await waitUntil(() => requestLines(s).length >= calls.length, 5000), s.stdout());
    return requestLines(s).map((l) => l.client);
  }

  test('with a list and a CIDR range: the header is honoured only from a listed peer', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'proxy-list.db'), '--trust-proxy', '127.0.1.10,127.0.2.0/24']);
    try {
      const seen = await clients(s, [
        ['127.0.1.10', '203.0.113.9'],
        ['127.0.2.77', '10.0.0.1, 198.51.100.7'],
        ['127.0.1.11', '203.0.113.9'],
        ['127.0.3.1', '203.0.113.9'],
        ['127.0.1.10', undefined],
        ['127.0.0.1', '203.0.113.9'],
      ]);
      assert.deepEqual(seen, ['203.0.113.9', '198.51.100.7', '127.0.1.11', '127.0.3.1', '127.0.1.10', '127.0.0.1']);
    } finally {
      await s.stop();
    }
  });

  test('the old boolean form (no list) means loopback: honoured from 127.0.0.1, not from 127.0.1.10', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'proxy-bare.db'), '--trust-proxy', '--log-format', 'json']);
    try {
      const seen = await clients(s, [
        ['127.0.0.1', '203.0.113.9'],
        ['127.0.1.10', '203.0.113.9'],
      ]);
      assert.deepEqual(seen, ['203.0.113.9', '127.0.1.10']);
    } finally {
      await s.stop();
    }
  });
});

describe('connections', () => {
  test('a connection that got a 408 is closed by the server though the client never closes its side', async () => {
    // One connection an address: the slot the 408 connection holds is free only once the server has closed it.
    const s = await startServer(['--db', pathJoin(tmp.dir, 'linger.db'), '--headers-timeout', '1', '--max-connections-per-address', '1']);
    try {
      const from = '127.0.1.40';
      const c = await connect(s.port, from, true);
      c.socket.write('GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      assert.ok(await waitUntil(() => c.text().includes('\r\n\r\n{'), 8000), `no 408: ${JSON.stringify(c.text())}`);
      assert.match(c.text(), /^HTTP\/1\.1 408 /);
      // The client neither sends nor closes its side. A probe from its address gets 503 while the
      // slot is held, and 200 once the server has closed the connection (within its 2 s linger).
      const statuses: number[] = [];
      const freed = await waitUntil(() => statuses.at(-1) === 200, 10_000, async () => {
        statuses.push((await call(s.port, '/health', { from, timeoutMs: 5000 }).catch(() => ({ status: 0 }) as Answer)).status);
      });
      assert.ok(freed, `the server never closed the connection: probes got ${statuses.join(', ')}`);
      assert.ok(!c.socket.writableEnded, 'the client closed its side');
      c.socket.destroy();
    } finally {
      await s.stop();
    }
  });

  test('--max-connections-per-address 2: a third connection\'s request is refused (503; false in-band on /join) and an idle one closed soon; /health from another address answers', async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'cap.db'), '--max-connections-per-address', '2', '--metrics']);
    try {
      const from = '127.0.1.90';
      const held = [await connect(s.port, from), await connect(s.port, from)];
      // Answered after a second (HELD_REFUSAL_MS), then closed.
      const refused = async (req: string): Promise<string> => {
        const c = await connect(s.port, from);
        const sent = performance.now();
        c.socket.write(req);
        assert.ok(await waitUntil(() => c.isClosed(), 8000), `not closed: ${JSON.stringify(c.text())}`);
        assert.ok(performance.now() - sent >= 950, `answered after ${Math.round(performance.now() - sent)} ms`);
        return c.text();
      };
      const health = await refused('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.match(health, /^HTTP\/1\.1 503 /);
      assert.match(health, /\r\nretry-after: 1\r\n/i);
      assert.ok(health.endsWith('{"success":false,"error":"Too many connections from this address; try again in a moment"}'), health);
      const body = '{"accessToken":"x","userUUID":"00000000-0000-4000-8000-000000000000","serverID":"s"}';
      const join = await refused(`POST /join HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      assert.match(join, /^HTTP\/1\.1 200 /);
      assert.ok(join.endsWith('{"success":true,"result":false}'), join);
      // Idle over the cap: closed within a few seconds, before --headers-timeout (10 s) would.
      const idle = await connect(s.port, from);
      const opened = Date.now();
      assert.ok(await waitUntil(() => idle.isClosed(), 5000), 'an idle connection over the cap was kept');
      assert.ok(Date.now() - opened < 5000);
      assert.equal((await call(s.port, '/health', { from: '127.0.1.91' })).status, 200);
      assert.ok(held.every((c) => !c.isClosed()), 'the two under the cap are kept');
      const metrics = await call(s.port, '/metrics', { from: '127.0.1.91' });
      assert.equal(sample(metrics.body, 'auth_refusals_total{reason="address_connections"}'), 2);
      const lines = requestLines(s).filter((l) => l.reason === 'address_connections');
      assert.deepEqual(lines.map((l) => [l.path, l.status, l.client]), [['/health', 503, from], ['/join', 200, from]]);
      for (const c of held) c.socket.destroy();
    } finally {
      await s.stop();
    }
  });

  test('--workers 2 --address-login-limit 10: the budget holds for the workers together (each counts half)', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'workers-budget.db'), '--workers', '2', '--address-login-limit', '10']);
    try {
      // 30 logins of names no one has (no hash, no throttle), each on a connection of its own, so
      // node:cluster deals them to both workers; four at a time, since each refusal is held a second.
      const answers = await pool(Array.from({ length: 30 }, (_, i) => i), 4, (i) => call(s.port, '/auth', { from: '127.0.1.97', body: { login: `Nobody_${i}`, password: 'x' } }));
      const counted = answers.filter((a) => a.status === 401).length;
      assert.equal(counted + answers.filter((a) => a.status === 429).length, 30, answers.map((a) => a.status).join(' '));
      // Each worker lets 5 through: 10 in all, where counting the whole budget each would let up to 20.
      assert.ok(counted >= 5 && counted <= 10, `${counted} of 30 logins let through`);
    } finally {
      await s.stop();
    }
  });

  test('--workers 2 --max-connections-per-address 10: the cap holds for the workers together (each holds half)', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    const s = await startServer(['--db', pathJoin(tmp.dir, 'workers.db'), '--workers', '2', '--max-connections-per-address', '10']);
    try {
      const conns = await pool(Array.from({ length: 40 }, (_, i) => i), 10, () => connect(s.port, '127.0.1.95'));
      // Over the cap, the idle ones are closed within the grace (1 s); the rest wait for --headers-timeout (10 s).
      assert.ok(await waitUntil(() => conns.filter((c) => !c.isClosed()).length <= 10, 6000), `${conns.filter((c) => !c.isClosed()).length} of 40 still open`);
      const open = conns.filter((c) => !c.isClosed());
      assert.ok(open.length >= 2, `only ${open.length} kept`);
      // Those kept are served.
      open[0]!.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.ok(await waitUntil(() => open[0]!.text().includes('"status":"ok"'), 5000), open[0]!.text());
      assert.equal((await call(s.port, '/health', { from: '127.0.1.96' })).status, 200);
      for (const c of conns) c.socket.destroy();
    } finally {
      await s.stop();
    }
  });
});
