// Every answer is the envelope, on every route and status: each refusal the server can give,
// walked once, from the API key to a database that does not answer, including the ones Node's
// HTTP server would otherwise give without a body (a connection over the cap, CONNECT, an
// unsupported Expect). /join and /profiles answer each refusal in-band instead: a LauncherServer
// throws on `success:false` from them, and nothing catches it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, type Reply, type RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { IN_BAND } from './util.ts';

const KEY = 'envelope-test-key-0123456789';
const tmp = tempDir();
const db = pathJoin(tmp.dir, 'envelope.db');
let server: RunningServer; // --api-key, one hash at a time and no queue, --headers-timeout 1
let capped: RunningServer; // --max-connections 1
let aliceUuid = '';
/** Players logging in at once: a name is checked once at a time, so it takes several names to want several slots. */
const SHED = ['Shed_1', 'Shed_2', 'Shed_3', 'Shed_4'];

before(async () => {
  [aliceUuid] = await Promise.all([seedPlayer(db, 'Alice', 'alice-pw-1'), ...SHED.map((name) => seedPlayer(db, name, 'shed-password'))]);
  [server, capped] = await Promise.all([
    startServer(['--db', db, '--api-key', KEY, '--hash-concurrency', '1', '--hash-queue', '0', '--headers-timeout', '1']),
    startServer(['--db', db, '--max-connections', '1']),
  ]);
});

after(async () => {
  await Promise.all([server?.stop(), capped?.stop()]);
  tmp.cleanup();
});

/** What a route answers a refusal with: the failure envelope, or its in-band result. */
function assertEnvelope(what: string, r: { status: number; contentType: string; body: unknown; text: string }, path: string, status: number): void {
  assert.match(r.contentType, /^application\/json\b/i, `${what}: content-type of ${r.text}`);
  if (Object.hasOwn(IN_BAND, path)) {
    assert.deepEqual([r.status, r.body], [200, { success: true, result: IN_BAND[path] }], `${what}: ${r.text}`);
    return;
  }
  assert.equal(r.status, status, `${what}: ${r.text}`);
  const body = r.body as { success: unknown; error: unknown };
  assert.deepEqual(Object.keys(body ?? {}).sort(), ['error', 'success'], `${what}: ${r.text}`);
  assert.equal(body.success, false, what);
  assert.equal(typeof body.error, 'string', what);
}

const fromReply = (r: Reply) => ({ status: r.status, contentType: r.headers.get('content-type') ?? '', body: r.body, text: r.text });

/** POSTs `body` (a string as it is, anything else as JSON) with the key unless told otherwise. */
function post(s: RunningServer, path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }): Promise<Reply> {
  return s.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** Writes `data` on a new connection and reads until the server closes it: one answer, parsed. */
function raw(port: number, data: string, closeAfterMs = 10_000): Promise<{ status: number; contentType: string; body: unknown; text: string }> {
  return new Promise((done, fail) => {
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(data));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {}); // a reset shows as a close
    const timer = setTimeout(() => socket.destroy(new Error('still open')), closeAfterMs);
    socket.on('close', () => {
      clearTimeout(timer);
      const end = text.indexOf('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
      if (end === -1 || !status) return fail(new Error(`no answer before the close: ${JSON.stringify(text)}`));
      const head = text.slice(0, end);
      const bodyText = text.slice(end + 4);
      let body: unknown;
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = undefined;
      }
      done({ status, contentType: /\r\ncontent-type: *([^\r]*)/i.exec(head)?.[1] ?? '', body, text });
    });
  });
}

describe('every refusal is the envelope', () => {
  test('the API key, routing, the body and its fields', async () => {
    const join = { accessToken: 'x', userUUID: aliceUuid, serverID: 's' };
    assertEnvelope('no API key', fromReply(await post(server, '/join', join, {})), '(before the route)', 401);
    assertEnvelope('an unknown path', fromReply(await post(server, '/nope', {})), '/nope', 404);
    for (const path of ['/auth', '/join', '/hasJoined', '/profile', '/profiles']) {
      assertEnvelope(`GET ${path}`, fromReply(await server.request(path, { headers: { authorization: `Bearer ${KEY}` } })), '(not routed)', 405);
      assertEnvelope(`${path}: text/plain`, fromReply(await post(server, path, '{}', { authorization: `Bearer ${KEY}`, 'content-type': 'text/plain' })), path, 415);
      assertEnvelope(`${path}: not JSON`, fromReply(await post(server, path, '{')), path, 400);
      assertEnvelope(`${path}: empty`, fromReply(await post(server, path, '')), path, 400);
      assertEnvelope(`${path}: a number`, fromReply(await post(server, path, '42')), path, 400);
      const limit = path === '/join' || path === '/profiles' ? 512 * 1024 : 64 * 1024;
      assertEnvelope(`${path}: too large`, fromReply(await post(server, path, ' '.repeat(limit + 1))), path, 413);
    }
    assertEnvelope('/join: a field of the wrong type', fromReply(await post(server, '/join', { ...join, serverID: 7 })), '/join', 400);
    assertEnvelope('/profile: not a UUID', fromReply(await post(server, '/profile', { userUUID: 'nope' })), '/profile', 400);
    assertEnvelope('/profile: no such player', fromReply(await post(server, '/profile', { userUUID: '00000000-0000-4000-8000-000000000000' })), '/profile', 404);
    assertEnvelope('/hasJoined: no join', fromReply(await post(server, '/hasJoined', { username: 'Alice', serverID: 'never' })), '/hasJoined', 404);
    assertEnvelope('/auth: wrong password', fromReply(await post(server, '/auth', { login: 'Alice', password: 'wrong-pw' })), '/auth', 401);
  });

  test('what Node\'s HTTP parser refuses: a malformed request, headers too large or too slow, CONNECT, an unknown Expect', async () => {
    const { port } = server;
    assertEnvelope('a malformed request line', await raw(port, 'NOT HTTP AT ALL\r\n\r\n'), '(parser)', 400);
    assertEnvelope('headers too large', await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`), '(parser)', 431);
    assertEnvelope('headers too slow (--headers-timeout 1)', await raw(port, 'GET /health HTTP/1.1\r\nHost: x\r\n'), '(parser)', 408);
    assertEnvelope('CONNECT', await raw(port, 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n'), '(connect)', 405);
    const expect = await raw(port, `POST /join HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nContent-Type: application/json\r\nExpect: something-else\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
    assertEnvelope('an Expect other than 100-continue', expect, '(expect)', 417);
  });

  test('the throttle (429), a full hash pool (503), and the connection cap (503; false on /join)', async () => {
    let throttled: Reply | undefined;
    for (let i = 0; i < 12 && !throttled; i++) {
      const r = await post(server, '/auth', { login: 'Guessed', password: `guess-${i}` });
      if (r.status === 429) throttled = r;
      else assertEnvelope(`guess ${i}`, fromReply(r), '/auth', 401);
    }
    assert.ok(throttled, 'a 429 within 12 guesses');
    assertEnvelope('throttled', fromReply(throttled), '/auth', 429);

    // One hash at a time and no queue: of logins sent together, all but the first are shed.
    const logins = await Promise.all(SHED.map((login) => post(server, '/auth', { login, password: 'shed-password' })));
    const shed = logins.filter((r) => r.status === 503);
    assert.ok(shed.length >= 1, `some logins shed: ${logins.map((r) => r.status)}`);
    for (const r of shed) assertEnvelope('a full hash pool', fromReply(r), '/auth', 503);

    // --max-connections 1: hold one connection, then every request on another is refused.
    const held = net.connect({ host: '127.0.0.1', port: capped.port });
    await new Promise<void>((ready) => held.once('connect', () => ready()));
    try {
      for (const path of ['/health', '/join', '/profiles']) {
        const body = path === '/health' ? '' : path === '/join' ? JSON.stringify({ accessToken: 'x', userUUID: aliceUuid, serverID: 's' }) : '["Alice"]';
        const method = path === '/health' ? 'GET' : 'POST';
        const r = await raw(capped.port, `${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        assertEnvelope(`over the connection cap: ${path}`, r, path, 503);
      }
    } finally {
      held.destroy();
    }
  });

  test('a database that does not answer: 500 where it is needed, 503 from /health, in-band on /join and /profiles', async () => {
    const conn = new DatabaseSync(db);
    try {
      conn.exec('PRAGMA busy_timeout = 5000');
      for (const t of ['tokens', 'joins', 'login_failures', 'users']) conn.exec(`DROP TABLE IF EXISTS ${t}`);
    } finally {
      conn.close();
    }
    assertEnvelope('/auth', fromReply(await post(server, '/auth', { login: 'Alice', password: 'alice-pw-1' })), '/auth', 500);
    assertEnvelope('/hasJoined', fromReply(await post(server, '/hasJoined', { username: 'Alice', serverID: 's' })), '/hasJoined', 500);
    assertEnvelope('/join', fromReply(await post(server, '/join', { accessToken: 'x', userUUID: aliceUuid, serverID: 's' })), '/join', 500);
    assertEnvelope('/profiles', fromReply(await post(server, '/profiles', ['Alice'])), '/profiles', 500);
    assertEnvelope('/health', fromReply(await server.request('/health')), '/health', 503);
  });
});
