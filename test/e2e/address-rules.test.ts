// Per-address rules besides the login budget (fairness.test.ts), with their flags: the
// connection cap (--max-connections-per-address, each worker holding its share, or, under socket
// activation, where the primary deals each address to one worker, the whole cap), room made at --max-connections by closing a connection of the address
// holding the most while the relay and keyed callers are counted apart, a refusal held a
// second (and not behind a trusted proxy, whose connection its clients share), --trust-proxy
// taking the client from X-Forwarded-For only from a listed proxy, and a connection that got an
// error answer closed by the server even when the client never closes its side. Every client is
// bound to its own loopback address (all of 127/8 reaches the server on Linux).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, RUNTIME, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { pool } from '../helpers/pool.ts';
import { connect } from '../helpers/raw-connection.ts';
import { startActivated } from '../helpers/socket-activation.ts';
import { metricSample, requestLines, sleep } from './util.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

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

/**
 * Opens `count` connections from `from` (16 at a time), all held open, then asks /health on
 * each; resolves once each is answered or closed, with each one's status ('closed' if none).
 */
async function healthOnEach(port: number, count: number, from: string): Promise<{ statuses: string[]; conns: Awaited<ReturnType<typeof connect>>[] }> {
  const conns = await pool(Array.from({ length: count }, (_, i) => i), 16, () => connect(port, from));
  for (const c of conns) c.socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  assert.ok(await waitUntil(() => conns.every((c) => /HTTP\/1\.1 \d{3}/.test(c.text()) || c.isClosed()), 10_000), 'not all answered');
  return { statuses: conns.map((c) => /HTTP\/1\.1 (\d{3})/.exec(c.text())?.[1] ?? 'closed'), conns };
}

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
      assert.equal(metricSample(metrics.body, 'auth_refusals_total{reason="address_connections"}'), 2);
      const lines = requestLines(s).filter((l) => l.reason === 'address_connections');
      assert.deepEqual(lines.map((l) => [l.path, l.status, l.client]), [['/health', 503, from], ['/join', 200, from]]);
      for (const c of held) c.socket.destroy();
    } finally {
      await s.stop();
    }
  });

  test('--max-connections 4, all held by one address: a newcomer from another is served (one of the idle ones closed for it), and the relay and a caller with the API key are counted apart, never refused', async () => {
    const KEY = 'address-rules-key-0123456789';
    const s = await startServer(['--db', pathJoin(tmp.dir, 'room.db'), '--max-connections', '4', '--api-key', KEY]);
    try {
      const filler = await pool([0, 1, 2, 3], 4, () => connect(s.port, '127.0.1.110'));
      const health = (from: string, path = '/health'): Promise<Answer> => call(s.port, path, { from, timeoutMs: 5000 });
      assert.equal((await health('127.0.1.111')).status, 200, 'a newcomer from an address not taking part');
      assert.ok(await waitUntil(() => filler.some((c) => c.isClosed()), 5000), 'a connection of the address holding the most was closed for it');
      assert.equal(filler.filter((c) => c.isClosed()).length, 1, 'one, and only one');
      // Four more of the filler's: each closes one of its own, never what others hold or send.
      const more = await pool([0, 1, 2, 3], 4, () => connect(s.port, '127.0.1.110'));
      assert.ok(await waitUntil(() => [...filler, ...more].filter((c) => !c.isClosed()).length <= 4, 5000), 'the filler keeps at most the bound');
      const keyed = await call(s.port, `/profiles?key=${KEY}`, { from: '127.0.1.112', body: [] });
      assert.deepEqual([keyed.status, keyed.body], [200, { success: true, result: [] }], 'a caller with the API key');
      assert.equal((await health('127.0.0.1')).status, 200, 'the relay (this host)');
      for (const c of [...filler, ...more]) c.socket.destroy();
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

  test('under socket activation, --workers 2: every connection of one address goes to one worker, which holds the whole cap: of 72, exactly 64 are served; the relay\'s go to both workers', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    const s = await startActivated(['--db', pathJoin(tmp.dir, 'activated-cap.db'), '--workers', '2'], 1);
    try {
      await s.waitForLine('both workers listening', (l) => /2 workers/.test(String(l.msg)));
      const { statuses, conns } = await healthOnEach(s.port, 72, '127.0.1.97');
      assert.equal(statuses.filter((st) => st === '200').length, 64, statuses.join(' '));
      // The relay's connections (127.0.0.1 by default), one request each, are dealt in turn.
      for (let i = 0; i < 20; i++) assert.equal((await call(s.port, '/health', { from: '127.0.0.1' })).status, 200);
      const servedBy = (client: string): Set<number> => new Set(s.lines().filter((l) => l.msg === 'request' && l.client === client && l.status === 200).map((l) => l.pid!));
      assert.ok(await waitUntil(() => servedBy('127.0.0.1').size === 2, 5000), `the relay's requests were served by ${[...servedBy('127.0.0.1')].join(', ')}`);
      assert.equal(servedBy('127.0.1.97').size, 1, 'one address, one worker');
      for (const c of conns) c.socket.destroy();
      assert.equal(await s.end(), 0, s.output());
    } finally {
      s.kill();
    }
  });

  test('under socket activation, --workers 2 --max-connections-per-address 10 --address-login-limit 10: both hold for the workers together, exactly, and for a client behind a trusted proxy too', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    const s = await startActivated(['--db', pathJoin(tmp.dir, 'activated-exact.db'), '--workers', '2', '--max-connections-per-address', '10', '--address-login-limit', '10', '--trust-proxy', '127.0.1.100'], 1);
    try {
      await s.waitForLine('both workers listening', (l) => /2 workers/.test(String(l.msg)));
      const { statuses, conns } = await healthOnEach(s.port, 16, '127.0.1.98');
      assert.equal(statuses.filter((st) => st === '200').length, 10, statuses.join(' '));
      for (const c of conns) c.socket.destroy();
      // 16 logins of names no one has (no hash, no throttle), each on a connection of its own,
      // four at a time (each refusal is held a second): exactly 10 are let through.
      const answers = await pool(Array.from({ length: 16 }, (_, i) => i), 4, (i) => call(s.port, '/auth', { from: '127.0.1.99', body: { login: `Nobody_${i}`, password: 'x' } }));
      const statuses2 = answers.map((a) => a.status);
      assert.equal(statuses2.filter((st) => st === 401).length, 10, statuses2.join(' '));
      assert.equal(statuses2.filter((st) => st === 429).length, 6, statuses2.join(' '));
      // Through the proxy, whose connections are dealt in turn, each worker counts its share: 5 and 5.
      const proxied = await pool(Array.from({ length: 16 }, (_, i) => i), 4, (i) =>
        call(s.port, '/auth', { from: '127.0.1.100', headers: { 'x-forwarded-for': '203.0.113.5' }, body: { login: `Nobody_${i}`, password: 'x' } }),
      );
      const statuses3 = proxied.map((a) => a.status);
      assert.equal(statuses3.filter((st) => st === 401).length, 10, statuses3.join(' '));
      const servedBy = (client: string): Set<number> => new Set(s.lines().filter((l) => l.msg === 'request' && l.client === client).map((l) => l.pid!));
      assert.ok(await waitUntil(() => s.lines().filter((l) => l.msg === 'request' && l.client === '203.0.113.5').length === 16, 5000), 'every proxied login logged');
      assert.equal(servedBy('203.0.113.5').size, 2, 'the proxy\'s connections went to both workers');
      // The proxy's own requests (no X-Forwarded-For) are counted in shares too: its connections reach both workers.
      const own = await pool(Array.from({ length: 16 }, (_, i) => i), 4, (i) => call(s.port, '/auth', { from: '127.0.1.100', body: { login: `Nobody_${i}`, password: 'x' } }));
      const statuses4 = own.map((a) => a.status);
      assert.equal(statuses4.filter((st) => st === 401).length, 10, statuses4.join(' '));
      assert.equal(await s.end(), 0, s.output());
    } finally {
      s.kill();
    }
  });

  test('under socket activation, --workers 2: a worker killed: the other serves every address, then its replacement takes its place', { skip: RUNTIME === 'deno' ? 'node:cluster (--workers) is Node only' : false }, async () => {
    const s = await startActivated(['--db', pathJoin(tmp.dir, 'activated-crash.db'), '--workers', '2'], 1);
    try {
      await s.waitForLine('both workers listening', (l) => /2 workers/.test(String(l.msg)));
      const workerPids = (): number[] => [...new Set(s.lines().filter((l) => l.msg === 'request').map((l) => l.pid!))];
      const healthFromEach = async (): Promise<number[]> => pool(Array.from({ length: 40 }, (_, i) => i), 8, async (i) => (await call(s.port, '/health', { from: `127.0.6.${i + 1}`, timeoutMs: 10_000 })).status);
      assert.deepEqual(new Set(await healthFromEach()), new Set([200]));
      assert.ok(await waitUntil(() => workerPids().length === 2, 5000), `40 addresses reached ${workerPids().length} worker(s)`);
      const [killed] = workerPids();
      process.kill(killed!, 'SIGKILL');
      // Once the primary knows (a connection dealt to it before then goes with it), every address is answered.
      await s.waitForLine('a worker started in its place', (l) => /ended \(SIGKILL\); starting another/.test(String(l.msg)));
      assert.deepEqual(new Set(await healthFromEach()), new Set([200]));
      assert.ok(await waitUntil(() => workerPids().length >= 3, 20_000, async () => void (await healthFromEach())), `served by ${workerPids().join(', ')}: the replacement was dealt nothing`);
      assert.equal(await s.end(), 0, s.output());
    } finally {
      s.kill();
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
