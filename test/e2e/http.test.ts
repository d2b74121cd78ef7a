// HTTP-level behaviour: JSON envelope and content type on every answer, 404/405, empty,
// malformed and non-object bodies, invalid UTF-8, the 64 KiB limit (413, readable by the
// client), --base-path, 500 with details only in the log, and the server surviving it all.
// /join and /profiles answer each refusal in-band instead (see assertRefused), their limit 512 KiB.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir } from '../helpers/process.ts';
import type { RunningServer, Reply } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { assertFail, assertOk, assertJsonType, assertRefused } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'auth.db');
const LIMIT = 65536;
const TOO_LARGE = 'Request body is larger than 65536 bytes';
const ENDPOINTS = ['/auth', '/join', '/hasJoined', '/profile', '/profiles'];
const OBJECT_ENDPOINTS = ['/auth', '/join', '/hasJoined', '/profile'];

let server: RunningServer;
let aliceUuid = '';

before(async () => {
  aliceUuid = await seedPlayer(db, 'Alice', 'alice-pw');
  server = await startServer(['--db', db]);
});

after(async () => {
  await server?.stop();
  tmp.cleanup();
});

function postRaw(s: RunningServer, path: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<Reply> {
  return s.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

async function assertStillServes(s: RunningServer): Promise<void> {
  const r = assertOk(await s.post('/auth', { login: 'Alice', password: 'alice-pw' }));
  assert.equal(r.username, 'Alice');
  assert.deepEqual(assertOk(await s.post('/profile', { userUUID: aliceUuid })), { username: 'Alice' });
}

/**
 * POSTs `total` bytes of spaces with node:http, written as fast as the socket takes them in
 * `chunkSize` pieces, chunked or with a Content-Length, and reads the answer. A socket error
 * before the whole answer has been read fails (a server that closes an oversized upload without
 * reading it makes the kernel reset the connection, and the client loses the answer); one after
 * it is fine.
 */
function postStreamed(
  port: number,
  path: string,
  total: number,
  chunkSize: number,
  withLength: boolean,
): Promise<{ status: number; contentType: string; text: string }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (withLength) headers['content-length'] = String(total);
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text });
      });
      res.on('error', (e) => {
        if (!answered) reject(new Error(`the answer could not be read: ${e.message}`));
      });
    });
    req.on('error', (e) => {
      if (!answered) reject(new Error(`request failed before the answer was read: ${e.message}`));
    });
    const piece = Buffer.alloc(chunkSize, 0x20);
    void (async () => {
      for (let sent = 0; sent < total && !answered && !req.destroyed; sent += chunkSize) {
        const ok = req.write(sent + chunkSize <= total ? piece : piece.subarray(0, total - sent));
        if (!ok) {
          await new Promise<void>((go) => {
            const on = () => {
              req.off('drain', on);
              req.off('close', on);
              go();
            };
            req.on('drain', on);
            req.on('close', on);
          });
        }
      }
      if (!req.destroyed) req.end();
    })();
  });
}

describe('envelope and routing', () => {
  test('an unknown path is 404 "Unknown endpoint"', async () => {
    for (const path of ['/', '/nope', '/auth/extra', '/mc/auth', '/authx']) {
      assertFail(await server.post(path, { login: 'Alice', password: 'alice-pw' }), 404, 'Unknown endpoint');
    }
  });

  test('a method other than POST is 405 on every endpoint', async () => {
    for (const path of ENDPOINTS) {
      assertFail(await server.request(path), 405, 'Method not allowed: use POST');
    }
    assertFail(await server.request('/auth', { method: 'PUT', body: '{}' }), 405, 'Method not allowed: use POST');
    assertFail(await server.request('/join', { method: 'DELETE' }), 405, 'Method not allowed: use POST');
    assertFail(await server.request('/profiles', { method: 'PATCH', body: '[]' }), 405, 'Method not allowed: use POST');
  });

  test('an empty body is 400 on every endpoint', async () => {
    for (const path of ENDPOINTS) {
      assertRefused(await postRaw(server, path, ''), path, 400, 'Request body is empty');
    }
    assertFail(await server.request('/auth', { method: 'POST' }), 400, 'Request body is empty');
  });

  test('malformed JSON is 400', async () => {
    for (const body of ['{"login":', '{login: "Alice"}', "{'login':'Alice'}", 'Alice', '{"login":"Alice","password":"x"} trailing', '[1,2,]']) {
      for (const path of ENDPOINTS) {
        assertRefused(await postRaw(server, path, body), path, 400, 'Request body is not valid JSON');
      }
    }
  });

  test('a JSON value that is not an object is 400 where an object is expected', async () => {
    for (const body of ['[]', '["Alice"]', '42', '"Alice"', 'null', 'true']) {
      for (const path of OBJECT_ENDPOINTS) {
        assertRefused(await postRaw(server, path, body), path, 400, 'Request body must be a JSON object');
      }
    }
  });

  test('a body that is not UTF-8 is 400, not a mangled name', async () => {
    const invalid = [
      Buffer.concat([Buffer.from('{"login":"Al'), Buffer.from([0xff, 0xfe]), Buffer.from('ice","password":"alice-pw"}')]),
      Buffer.concat([Buffer.from('{"login":"Alice","password":"alice-pw'), Buffer.from([0xc3]), Buffer.from('"}')]),
      Buffer.concat([Buffer.from('{"login":"Alice","password":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')]),
      Buffer.concat([Buffer.from('{"login":"Alice","password":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
    ];
    for (const body of invalid) {
      assertFail(await postRaw(server, '/auth', body), 400, 'Request body is not valid JSON');
    }
    for (const path of ['/profiles', '/profile']) {
      assertRefused(await postRaw(server, path, invalid[0]!), path, 400, 'Request body is not valid JSON');
    }
    // Valid multi-byte UTF-8 is fine.
    assertFail(await server.post('/auth', { login: 'Alice', password: 'pässwörd☃' }), 401, 'Wrong login or password');
  });

  test('every answer, success or failure, is a JSON envelope with content-type application/json', async () => {
    const replies: Reply[] = [
      await server.post('/auth', { login: 'Alice', password: 'alice-pw' }),
      await server.post('/profiles', ['Alice']),
      await server.post('/join', { accessToken: 'x', userUUID: aliceUuid, serverID: 'y' }),
      await server.post('/nope', {}),
      await server.request('/auth'),
      await postRaw(server, '/auth', '{'),
      await server.post('/hasJoined', { username: 'Alice', serverID: 'never' }),
    ];
    for (const r of replies) {
      assertJsonType(r);
      assert.equal(typeof r.body, 'object', r.text);
      assert.equal(typeof r.body.success, 'boolean', r.text);
      if (r.body.success) {
        assert.equal(r.status, 200);
        assert.deepEqual(Object.keys(r.body).sort(), ['result', 'success']);
      } else {
        assert.ok(r.status >= 400, r.text);
        assert.deepEqual(Object.keys(r.body).sort(), ['error', 'success']);
        assert.equal(typeof r.body.error, 'string');
      }
    }
  });
});

describe('body size limit (64 KiB)', () => {
  // Valid JSON padded with spaces to an exact byte length.
  const padded = (bytes: number) => {
    const json = JSON.stringify({ login: 'Alice', password: 'wrong' });
    return json + ' '.repeat(bytes - Buffer.byteLength(json));
  };

  test('exactly 65536 bytes is accepted', async () => {
    assertFail(await postRaw(server, '/auth', padded(LIMIT)), 401, 'Wrong login or password');
  });

  test('65537 bytes is 413', async () => {
    assertFail(await postRaw(server, '/auth', padded(LIMIT + 1)), 413, TOO_LARGE);
  });

  test('the limit counts bytes, not characters', async () => {
    const body = JSON.stringify({ login: 'Alice', password: '☃'.repeat(30_000) }); // ~90 KB, 30 000 characters
    assert.ok(body.length < LIMIT && Buffer.byteLength(body) > LIMIT);
    assertFail(await postRaw(server, '/auth', body), 413, TOO_LARGE);
  });

  test('200 KiB with a Content-Length: the client reads the 413 envelope', async () => {
    const body = Buffer.from(padded(200 * 1024));
    for (const path of ['/auth', '/hasJoined', '/nope']) {
      const r = await postRaw(server, path, body);
      if (path === '/nope') {
        // An unknown path may be answered before or after the size check; either way an envelope.
        assert.ok(r.status === 404 || r.status === 413, r.text);
        assertJsonType(r);
        continue;
      }
      assertFail(r, 413, TOO_LARGE);
    }
  });

  for (const [label, withLength] of [
    ['with a Content-Length', true],
    ['chunked, without Content-Length', false],
  ] as const) {
    for (const [size, chunk] of [
      [200 * 1024, 8 * 1024],
      [200 * 1024, 64 * 1024],
      [512 * 1024, 64 * 1024],
    ] as const) {
      test(`${size / 1024} KiB in ${chunk / 1024} KiB writes via node:http ${label}, as fast as the socket takes them: the client reads the 413 envelope`, async () => {
        for (const path of ['/auth', '/hasJoined']) {
          const r = await postStreamed(server.port, path, size, chunk, withLength);
          assert.equal(r.status, 413, r.text);
          assert.match(r.contentType, /^application\/json\b/i);
          assert.deepEqual(JSON.parse(r.text), { success: false, error: TOO_LARGE });
        }
      });
    }
  }

  test('200 KiB as a fetch ReadableStream (duplex: half): the client reads the 413 envelope', async () => {
    const total = 200 * 1024;
    const chunk = new Uint8Array(8 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(server.url + '/auth', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    });
    const text = await res.text();
    assert.equal(res.status, 413, text);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/i);
    assert.deepEqual(JSON.parse(text), { success: false, error: TOO_LARGE });
  });

  test('the server survives all of the above', async () => {
    await assertStillServes(server);
  });
});

describe('/join: bodies up to 512 KiB, what a LauncherServer can forward; /profiles: up to what --max-profiles names take', () => {
  const RELAYED_LIMIT = 512 * 1024;
  /** `json` padded with spaces to an exact byte length. */
  const pad = (json: string, bytes: number) => json + ' '.repeat(bytes - Buffer.byteLength(json));

  test('a join of exactly 512 KiB is read and recorded; profiles of 300 KB, as a LauncherServer forwards them, are answered [] unread', async () => {
    const { accessToken } = assertOk(await server.post('/auth', { login: 'Alice', password: 'alice-pw' }));
    const join = JSON.stringify({ accessToken, userUUID: aliceUuid, serverID: 'padded-join' });
    assert.equal(assertOk(await postRaw(server, '/join', pad(join, RELAYED_LIMIT))), true);
    assert.deepEqual(assertOk(await server.post('/hasJoined', { username: 'Alice', serverID: 'padded-join' })), { userUUID: aliceUuid });
    // Ten entries of 30,000 characters each, as a LauncherServer forwards them, and Alice.
    const names = [...Array.from({ length: 9 }, () => '\ufffd'.repeat(10_000)), 'Alice'];
    assert.ok(Buffer.byteLength(JSON.stringify(names)) > 256 * 1024);
    assert.deepEqual(assertOk(await server.post('/profiles', names)), []);
    assert.deepEqual(assertOk(await server.post('/profiles', names.slice(-1))), [{ id: aliceUuid, name: 'Alice' }]);
  });

  for (const withLength of [true, false]) {
    test(`one byte more is refused in-band, and the client reads the answer (${withLength ? 'with a Content-Length' : 'chunked'})`, async () => {
      for (const [path, result] of [['/join', false], ['/profiles', []]] as const) {
        const r = await postStreamed(server.port, path, RELAYED_LIMIT + 1, 64 * 1024, withLength);
        assert.equal(r.status, 200, r.text);
        assert.match(r.contentType, /^application\/json\b/i);
        assert.deepEqual(JSON.parse(r.text), { success: true, result });
      }
    });
  }
});

describe('--base-path /mc', () => {
  let mc: RunningServer;
  before(async () => {
    mc = await startServer(['--db', db, '--base-path', '/mc']);
  });
  after(async () => {
    await mc?.stop();
  });

  test('serves the endpoints under /mc', async () => {
    const r = assertOk(await mc.post('/mc/auth', { login: 'alice', password: 'alice-pw' }));
    assert.equal(r.username, 'Alice');
    assert.equal(assertOk(await mc.post('/mc/join', { accessToken: r.accessToken, userUUID: aliceUuid, serverID: 's' })), true);
    assert.deepEqual(assertOk(await mc.post('/mc/hasJoined', { username: 'Alice', serverID: 's' })), { userUUID: aliceUuid });
    assert.deepEqual(assertOk(await mc.post('/mc/profile', { userUUID: aliceUuid })), { username: 'Alice' });
    assert.deepEqual(assertOk(await mc.post('/mc/profiles', ['ALICE'])), [{ id: aliceUuid, name: 'Alice' }]);
    assertFail(await mc.request('/mc/auth'), 405, 'Method not allowed: use POST');
  });

  test('404s the endpoints without the prefix, and look-alike prefixes', async () => {
    for (const path of ['/auth', '/profiles', '/mc', '/mc/', '/mcauth', '/mc/mc/auth']) {
      assertFail(await mc.post(path, { login: 'Alice', password: 'alice-pw' }), 404, 'Unknown endpoint');
    }
  });
});

describe('unexpected errors', () => {
  const broken = tempDir();
  const brokenDb = pathJoin(broken.dir, 'broken.db');
  let s: RunningServer;
  before(async () => {
    await seedPlayer(brokenDb, 'Victim', 'victim-pw');
    s = await startServer(['--db', brokenDb]);
  });
  after(async () => {
    await s?.stop();
    broken.cleanup();
  });

  test('a store failure is 500 "Internal server error" with details only in the log, and the server lives on', async () => {
    assertOk(await s.post('/auth', { login: 'Victim', password: 'victim-pw' }));
    // Pull the tables out from under the running server.
    const conn = new DatabaseSync(brokenDb);
    try {
      conn.exec('PRAGMA busy_timeout = 5000');
      const tables = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
      assert.ok(tables.length > 0);
      for (const t of tables) conn.exec(`DROP TABLE IF EXISTS "${String(t.name).replaceAll('"', '""')}"`);
    } finally {
      conn.close();
    }
    const r = await s.post('/auth', { login: 'Victim', password: 'victim-pw' });
    assertFail(r, 500, 'Internal server error');
    assert.doesNotMatch(r.text, /table|sqlite|at /i);
    const r2 = await s.post('/profile', { userUUID: '00000000-0000-4000-8000-000000000000' });
    assertFail(r2, 500, 'Internal server error');
    // The LauncherServer's join and bulk look-up die on a failure envelope: a database that does
    // not answer is a refusal in-band there.
    assert.equal(assertOk(await s.post('/join', { accessToken: '00000000-0000-4000-8000-000000000000', userUUID: '00000000-0000-4000-8000-000000000000', serverID: 's' })), false);
    assert.deepEqual(assertOk(await s.post('/profiles', ['Victim'])), []);
    // The details belong in the log, written a turn of the event loop after the answer.
    await s.waitFor('the error in the log', (stdout) => (/no such table/i.test(stdout) ? true : undefined));
    assert.match(s.stdout() + s.stderr(), /no such table/i, 'the details belong in the log');
    // Still alive: requests that need no store are answered as usual.
    assertFail(await s.post('/nope', {}), 404, 'Unknown endpoint');
    assertFail(await postRaw(s, '/auth', '{'), 400, 'Request body is not valid JSON');
  });
});
