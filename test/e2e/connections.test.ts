// Slow and misbehaving clients: --headers-timeout cuts off slow headers with a 408, --request-timeout
// a stalled body, --keep-alive-timeout an idle kept-alive connection, --max-connections refuses
// connections beyond the cap; headers over 16 KiB get a 431; and a client that disconnects
// mid-request leaves nothing half-done (no join recorded, no token issued).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { assertFail, assertOk, login, sleep } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'connections.db');
const TOO_LONG = { success: false, error: 'Request took too long' };

let headers: RunningServer; // --headers-timeout 1 (--request-timeout 10, so that it cannot be what cuts)
let timeouts: RunningServer; // --headers-timeout 1 --request-timeout 2
let keepAlive: RunningServer; // --keep-alive-timeout 1
let capped: RunningServer; // --max-connections 3
let aliceUuid = '';

before(async () => {
  aliceUuid = await seedPlayer(db, 'Alice', 'alice-pw');
  [headers, timeouts, keepAlive, capped] = await Promise.all([
    startServer(['--db', db, '--headers-timeout', '1', '--request-timeout', '10']),
    startServer(['--db', db, '--headers-timeout', '1', '--request-timeout', '2']),
    startServer(['--db', db, '--keep-alive-timeout', '1']),
    startServer(['--db', db, '--max-connections', '3']),
  ]);
});

after(async () => {
  await Promise.all([headers?.stop(), timeouts?.stop(), keepAlive?.stop(), capped?.stop()]);
  tmp.cleanup();
});

/** A raw TCP connection to a server, recording what it receives and when it is closed. */
interface Conn {
  socket: net.Socket;
  /** Everything received so far. */
  text: () => string;
  /** Resolves with the time (Date.now()) the connection closed, from either side. */
  closed: Promise<number>;
  isClosed: () => boolean;
  write: (data: string | Buffer) => Promise<void>;
}

function connect(port: number): Promise<Conn> {
  return new Promise((ready, fail) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let text = '';
    let isClosed = false;
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {}); // a reset shows as a close
    const closed = new Promise<number>((r) =>
      socket.on('close', () => {
        isClosed = true;
        r(Date.now());
      }),
    );
    socket.once('error', (e) => fail(e));
    socket.once('connect', () =>
      ready({
        socket,
        text: () => text,
        closed,
        isClosed: () => isClosed,
        write: (data) => new Promise((done) => socket.write(data, () => done())),
      }),
    );
  });
}

/** Waits until `ok()` holds, up to `ms`; returns whether it did. */
async function waitUntil(ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) return false;
    await sleep(10);
  }
  return true;
}

/** Parses the raw HTTP/1.1 answers received on a connection (with Content-Length bodies). */
function answers(text: string): { status: number; headers: string; body: any }[] {
  const out: { status: number; headers: string; body: any }[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return out;
    const head = rest.slice(0, end);
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head);
    const len = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (!m || rest.length < end + 4 + len) return out;
    const raw = rest.slice(end + 4, end + 4 + len);
    let body: any;
    try {
      body = JSON.parse(Buffer.from(raw, 'latin1').toString('utf8'));
    } catch {
      body = raw;
    }
    out.push({ status: Number(m[1]), headers: head, body });
    rest = rest.slice(end + 4 + len);
  }
}

const request = (method: string, path: string, body = '', headers: Record<string, string> = {}): string => {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1'];
  const all: Record<string, string> = { ...(body !== '' ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}), ...headers };
  for (const [k, v] of Object.entries(all)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
};

/** Asserts that, before it cut the connection, the server sent exactly the 408 envelope. */
function assertCutWith408(c: Conn): void {
  const got = answers(c.text());
  assert.equal(got.length, 1, `expected one answer, got: ${JSON.stringify(c.text())}`);
  assert.equal(got[0]!.status, 408, c.text());
  assert.match(got[0]!.headers, /\r\ncontent-type: application\/json/i);
  assert.deepEqual(got[0]!.body, TOO_LONG);
}

describe('timeouts', { concurrency: true }, () => {
  test('--headers-timeout 1: half the headers, then nothing: 408 and a close after 0.9 s and before 4 s', async () => {
    const c = await connect(headers.port);
    const sent = Date.now();
    await c.write('POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty');
    const closedAt = await Promise.race([c.closed, sleep(6000).then(() => 0)]);
    assert.ok(closedAt !== 0, 'the server never closed the connection');
    const after = closedAt - sent;
    assert.ok(after >= 900, `closed after only ${after} ms`);
    assert.ok(after < 4000, `closed after ${after} ms`);
    assertCutWith408(c);
  });

  test('--headers-timeout 1: a connection that sends nothing at all is closed after 0.9 s and before 4 s', async () => {
    const c = await connect(headers.port);
    const opened = Date.now();
    const closedAt = await Promise.race([c.closed, sleep(6000).then(() => 0)]);
    assert.ok(closedAt !== 0, 'the server never closed the connection');
    const after = closedAt - opened;
    assert.ok(after >= 900 && after < 4000, `closed after ${after} ms`);
    if (c.text() !== '') assertCutWith408(c);
  });

  test('--headers-timeout 1: headers trickled a byte at a time are still cut off before 4 s', async () => {
    const c = await connect(headers.port);
    const sent = Date.now();
    const head = 'POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ' + 'a'.repeat(200);
    for (let i = 0; i < head.length && !c.isClosed() && Date.now() - sent < 6000; i++) {
      await c.write(head[i]!);
      await sleep(100);
    }
    const after = (await Promise.race([c.closed, sleep(100).then(() => 0)])) - sent;
    assert.ok(c.isClosed(), 'the server never closed the connection');
    assert.ok(after >= 900 && after < 4000, `closed after ${after} ms`);
    assertCutWith408(c);
  });

  test('--request-timeout 2: headers and part of a body, then a stall: cut off after 1.9 s and before 4 s', async () => {
    const c = await connect(timeouts.port);
    const sent = Date.now();
    await c.write('POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"login":"Alice",');
    const closedAt = await Promise.race([c.closed, sleep(6000).then(() => 0)]);
    assert.ok(closedAt !== 0, 'the server never closed the connection');
    const after = closedAt - sent;
    assert.ok(after >= 1900, `closed after only ${after} ms`);
    assert.ok(after < 4000, `closed after ${after} ms`);
    assertCutWith408(c);
  });

  test('--request-timeout 2: a body trickled a byte at a time is still cut off before 4.5 s', async () => {
    const c = await connect(timeouts.port);
    const sent = Date.now();
    await c.write('POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n');
    const body = '{"login":"Alice","password":"' + 'p'.repeat(150);
    for (let i = 0; i < body.length && !c.isClosed() && Date.now() - sent < 6000; i++) {
      await c.write(body[i]!);
      await sleep(100);
    }
    const after = (await Promise.race([c.closed, sleep(100).then(() => 0)])) - sent;
    assert.ok(c.isClosed(), 'the server never closed the connection');
    assert.ok(after >= 1900 && after < 4500, `closed after ${after} ms`);
    assertCutWith408(c);
  });

  test('--keep-alive-timeout 1: an idle kept-alive connection is closed within 1 s and the 3 s grace (6 s at most) of the last answer', async () => {
    const c = await connect(keepAlive.port);
    await c.write(request('GET', '/health'));
    assert.ok(await waitUntil(() => answers(c.text()).length === 1, 3000), c.text());
    // Kept alive: a second request on the same connection a moment later is answered.
    await sleep(200);
    await c.write(request('POST', '/profile', JSON.stringify({ userUUID: aliceUuid })));
    assert.ok(await waitUntil(() => answers(c.text()).length === 2, 3000), c.text());
    const answeredAt = Date.now();
    const [first, second] = answers(c.text());
    assert.equal(first!.status, 200);
    assert.deepEqual(second!.body, { success: true, result: { username: 'Alice' } });
    assert.ok(!c.isClosed(), 'closed right after the answer: not kept alive');
    const closedAt = await Promise.race([c.closed, sleep(9000).then(() => 0)]);
    assert.ok(closedAt !== 0, 'the idle connection was never closed');
    assert.ok(closedAt - answeredAt < 6000, `closed ${closedAt - answeredAt} ms after the last answer`);
    assert.ok(closedAt - answeredAt >= 500, `closed only ${closedAt - answeredAt} ms after the last answer`);
  });
});

describe('--max-connections 3', () => {
  test('with 3 connections held, a 4th and 5th are refused (503, or false on /join) and closed; the 3 still work; after they close, new ones work', async () => {
    const held: Conn[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await connect(capped.port);
      await c.write(request('GET', '/health'));
      assert.ok(await waitUntil(() => answers(c.text()).length === 1, 3000), `connection ${i + 1}: ${c.text()}`);
      held.push(c);
    }
    // More: answered (a LauncherServer throws on a connection closed without an answer, and on
    // a failure envelope from /join), then closed.
    const refused = async (req: string): Promise<ReturnType<typeof answers>[number]> => {
      const c = await connect(capped.port);
      await c.write(req);
      const closedAt = await Promise.race([c.closed, sleep(10_000).then(() => 0)]);
      assert.ok(closedAt !== 0, `a connection over the cap was kept open; it got: ${JSON.stringify(c.text())}`);
      const [answer, ...more] = answers(c.text());
      assert.equal(more.length, 0, c.text());
      assert.ok(answer, c.text());
      return answer;
    };
    const join = await refused(request('POST', '/join', JSON.stringify({ accessToken: 'x', userUUID: aliceUuid, serverID: 's' })));
    assert.deepEqual([join.status, join.body], [200, { success: true, result: false }]);
    const health = await refused(request('GET', '/health'));
    assert.deepEqual([health.status, health.body], [503, { success: false, error: 'Too many connections; try again in a moment' }]);
    assert.match(health.headers, /\r\nretry-after: 1\r\n/i);
    // The 3 held connections still work.
    for (const [i, c] of held.entries()) {
      assert.ok(!c.isClosed(), `held connection ${i + 1} was closed`);
      await c.write(request('POST', '/profile', JSON.stringify({ userUUID: aliceUuid })));
      assert.ok(await waitUntil(() => answers(c.text()).length === 2, 3000), `held connection ${i + 1}: ${c.text()}`);
      assert.deepEqual(answers(c.text())[1]!.body, { success: true, result: { username: 'Alice' } });
    }
    // Closed, they make room again.
    for (const c of held) c.socket.end();
    await Promise.all(held.map((c) => c.closed));
    let served = false;
    for (let tries = 0; tries < 20 && !served; tries++) {
      await sleep(50);
      try {
        const c = await connect(capped.port);
        await c.write(request('GET', '/health'));
        served = await waitUntil(() => answers(c.text()).length === 1, 1000);
        c.socket.destroy();
      } catch {
        // not yet
      }
    }
    assert.ok(served, 'no new connection was served after the held ones closed');
    assert.deepEqual(assertOk(await capped.request('/health')), { status: 'ok' });
  });
});

describe('a client that disconnects mid-request', () => {
  /** Counts rows of a table through a read-only connection of the test's own. */
  function countRows(table: 'tokens' | 'joins'): number {
    const conn = new DatabaseSync(db, { readOnly: true });
    try {
      conn.exec('PRAGMA busy_timeout = 5000');
      return Number((conn.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
    } finally {
      conn.close();
    }
  }

  /** Sends `head` and `body` on a fresh connection, then drops it. */
  async function sendAndVanish(port: number, head: string, body: string): Promise<void> {
    const c = await connect(port);
    await c.write(head + body);
    await sleep(100);
    c.socket.destroy();
    await c.closed;
  }

  const POST_HEAD = (path: string, length: number): string =>
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  const CHUNKED_HEAD = (path: string): string => `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;

  test('a /join cut off mid-body records no join, and the server still answers', async () => {
    const token = (await login(timeouts, 'Alice', 'alice-pw')).accessToken as string;
    const joinsBefore = countRows('joins');
    const body = (serverID: string): string => JSON.stringify({ accessToken: token, userUUID: aliceUuid, serverID });
    // Part of a valid body; a whole valid body short of its Content-Length; a whole one, chunked, without the last chunk.
    await sendAndVanish(timeouts.port, POST_HEAD('/join', 200), body('cut-1').slice(0, 60));
    await sendAndVanish(timeouts.port, POST_HEAD('/join', 200), body('cut-2'));
    await sendAndVanish(timeouts.port, CHUNKED_HEAD('/join'), chunk(body('cut-3')));
    await sleep(200);
    for (const serverID of ['cut-1', 'cut-2', 'cut-3']) {
      assertFail(await timeouts.post('/hasJoined', { username: 'Alice', serverID }), 404, 'Player has not joined this server');
    }
    assert.equal(countRows('joins'), joinsBefore, 'a join row was written');
    // The control: the same raw request, complete, is recorded.
    const c = await connect(timeouts.port);
    await c.write(POST_HEAD('/join', Buffer.byteLength(body('whole'))) + body('whole'));
    assert.ok(await waitUntil(() => answers(c.text()).length === 1, 3000), c.text());
    assert.deepEqual(answers(c.text())[0]!.body, { success: true, result: true });
    c.socket.destroy();
    assert.deepEqual(assertOk(await timeouts.post('/hasJoined', { username: 'Alice', serverID: 'whole' })), { userUUID: aliceUuid });
  });

  test('an /auth cut off mid-body issues no token, and the server still answers', async () => {
    const body = JSON.stringify({ login: 'Alice', password: 'alice-pw' });
    const before = countRows('tokens');
    await sendAndVanish(timeouts.port, POST_HEAD('/auth', 100), body.slice(0, 20));
    await sendAndVanish(timeouts.port, POST_HEAD('/auth', 100), body);
    await sendAndVanish(timeouts.port, POST_HEAD('/auth', Buffer.byteLength(body) + 1), body);
    await sendAndVanish(timeouts.port, CHUNKED_HEAD('/auth'), chunk(body));
    // Give a hash that might have started time to finish.
    await sleep(500);
    assert.equal(countRows('tokens'), before, 'a token was issued for a request that never ended');
    // The control: a complete login adds exactly one token.
    assert.equal((await login(timeouts, 'Alice', 'alice-pw')).username, 'Alice');
    assert.equal(countRows('tokens'), before + 1);
    assert.doesNotMatch(timeouts.stderr(), /unexpected error|failed after/, timeouts.stderr());
  });
});

describe('request headers over 16 KiB', () => {
  test('are answered with a 431 envelope, and the server serves on', async () => {
    for (const bytes of [17 * 1024, 64 * 1024]) {
      const c = await connect(timeouts.port);
      await c.write(`POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(bytes)}\r\nContent-Length: 2\r\n\r\n{}`).catch(() => {});
      await Promise.race([c.closed, sleep(3000)]);
      const got = answers(c.text());
      assert.equal(got.length, 1, JSON.stringify(c.text()));
      assert.equal(got[0]!.status, 431, c.text());
      assert.match(got[0]!.headers, /\r\ncontent-type: application\/json/i);
      assert.deepEqual(got[0]!.body, { success: false, error: 'Request headers are too large' });
      c.socket.destroy();
    }
    // Many headers adding up to more than 16 KiB count too.
    const c = await connect(timeouts.port);
    const many = Array.from({ length: 200 }, (_, i) => `X-H${i}: ${'b'.repeat(100)}`).join('\r\n');
    await c.write(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n${many}\r\n\r\n`).catch(() => {});
    await Promise.race([c.closed, sleep(3000)]);
    assert.equal(answers(c.text())[0]?.status, 431, c.text());
    c.socket.destroy();
    assert.deepEqual(assertOk(await timeouts.request('/health')), { status: 'ok' });
  });
});
