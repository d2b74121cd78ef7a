// `X-Content-Type-Options: nosniff` on every JSON and texture answer: success and failure
// envelopes, texture downloads (200, HEAD, 304) and the answers written by hand to what Node's
// HTTP parser refused (a malformed request line, headers too large).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { startServer, runCli, tempDir } from '../helpers/process.ts';
import type { Reply, RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { encodePng } from '../helpers/png.ts';
import { assertFail, assertOk } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'headers.db');
const PW = 'correct-horse-1';

let server: RunningServer;
/** The path of Alice's hosted skin: {base}/textures/{sha256}. */
let skinPath = '';

before(async () => {
  await seedPlayer(db, 'Alice', PW);
  const png = pathJoin(tmp.dir, 'alice.png');
  writeFileSync(png, encodePng(64, 64));
  const r = await runCli(['user', 'skin', 'Alice', png, '--db', db]);
  assert.equal(r.code, 0, r.stderr);
  server = await startServer(['--db', db, '--public-url', 'https://auth.example.org']);
  const { skinUrl } = assertOk(await server.post('/profile', { userUUID: (await server.post('/auth', { login: 'Alice', password: PW })).body.result.userUUID }));
  skinPath = new URL(skinUrl).pathname;
  assert.match(skinPath, /^\/textures\/[0-9a-f]{64}$/);
});

after(async () => {
  await server?.stop();
  tmp.cleanup();
});

function assertNosniff(r: Reply, what: string): void {
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff', `${what}: status ${r.status}, ${r.text}`);
}

describe('envelopes', () => {
  test('success envelopes', async () => {
    const auth = await server.post('/auth', { login: 'Alice', password: PW });
    assertOk(auth);
    assertNosniff(auth, 'POST /auth');
    const health = await server.request('/health');
    assertOk(health);
    assertNosniff(health, 'GET /health');
  });

  test('failure envelopes', async () => {
    const cases: [string, () => Promise<Reply>, number, string][] = [
      ['a 400 of a field', () => server.post('/auth', { username: 'al ice', password: PW }), 400, 'Field "username" is not a valid player name'],
      ['a 400 of the body', () => server.post('/auth', '{'), 400, 'Request body is not valid JSON'],
      ['a 401', () => server.post('/auth', { login: 'Alice', password: 'wrong-horse-1' }), 401, 'Wrong login or password'],
      ['a 404', () => server.post('/nowhere', {}), 404, 'Unknown endpoint'],
      ['a 405', () => server.request('/auth'), 405, 'Method not allowed: use POST'],
      ['a 415', () => server.request('/auth', { method: 'POST', headers: { 'content-type': 'text/html' }, body: '{}' }), 415, 'Content-Type must be application/json'],
      ['an unknown texture', () => server.request(`/textures/${'0'.repeat(64)}`), 404, 'Unknown texture'],
    ];
    for (const [what, send, status, error] of cases) {
      const r = await send();
      assertFail(r, status, error);
      assertNosniff(r, what);
    }
  });
});

describe('texture downloads', () => {
  test('GET and HEAD (200) and a matching If-None-Match (304)', async () => {
    const got = await server.request(skinPath);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('content-type'), 'image/png');
    assertNosniff(got, 'GET');
    const head = await server.request(skinPath, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assertNosniff(head, 'HEAD');
    const etag = got.headers.get('etag');
    assert.ok(etag);
    const cached = await server.request(skinPath, { headers: { 'if-none-match': etag } });
    assert.equal(cached.status, 304);
    assertNosniff(cached, '304');
  });
});

/** Sends `data` on a connection of its own and resolves with all the server sends before it closes. */
function raw(data: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = net.connect({ host: '127.0.0.1', port: server.port });
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', () => {}); // a reset shows as a close
    socket.once('close', () => done(text));
    socket.setTimeout(10_000, () => {
      socket.destroy();
      fail(new Error(`no close within 10 s; got: ${JSON.stringify(text)}`));
    });
    socket.write(data);
  });
}

/** The status line, the headers (lower-cased names) and the parsed body of one raw answer. */
function parse(text: string): { status: number; headers: Map<string, string>; body: unknown } {
  const end = text.indexOf('\r\n\r\n');
  assert.ok(end > 0, `not an HTTP answer: ${JSON.stringify(text)}`);
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]), headers, body: JSON.parse(text.slice(end + 4)) };
}

describe('what Node\'s HTTP parser refuses', () => {
  test('a malformed request line: the 400 envelope, with nosniff', async () => {
    const answer = parse(await raw('GARBAGE\r\n\r\n'));
    assert.equal(answer.status, 400);
    assert.deepEqual(answer.body, { success: false, error: 'Malformed HTTP request' });
    assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
  });

  test('headers over 16 KiB: the 431 envelope, with nosniff', async () => {
    const answer = parse(await raw(`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`));
    assert.equal(answer.status, 431);
    assert.deepEqual(answer.body, { success: false, error: 'Request headers are too large' });
    assert.equal(answer.headers.get('x-content-type-options'), 'nosniff');
  });
});
