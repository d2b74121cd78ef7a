// The HTTP layer in process (router, body, envelope, fields), over the in-memory store.
// test/e2e/ runs the same paths through the built server; these give c8 its line coverage.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { resolveServeConfig, type ServeConfig } from '../../src/cli/options.ts';
import { startServer, type RunningServer } from '../../src/serve.ts';
import { createMemoryStore } from '../../src/memory/store.ts';
import type { Store } from '../../src/store/store.ts';
import { captureLog, silentLog } from '../helpers/log.ts';

const CONFIG: ServeConfig = { ...resolveServeConfig({}, {}), port: 0, db: ':memory:', basePath: '/mc/', tokenTtl: 60, maxProfiles: 3 };

function call(port: number, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; type: string | undefined; allow: string | undefined; body: any }>((done, fail) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => done({ status: res.statusCode!, type: res.headers['content-type'], allow: res.headers.allow, body: JSON.parse(text) }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe('HTTP layer', () => {
  let server: RunningServer;
  const captured = captureLog('error');
  const errors = (): string[] => captured.lines().map((l) => l.msg);
  let store: Store;
  const post = (path: string, body: unknown) => call(server.port, 'POST', `/mc${path}`, typeof body === 'string' ? body : JSON.stringify(body));

  before(async () => {
    store = createMemoryStore();
    server = await startServer(CONFIG, store, captured.log);
  });
  after(() => server.stop());

  test('the banner says where it listens, under the base path, and how many users', () => {
    assert.equal(server.banner, `mcauth listening on http://127.0.0.1:${server.port}/mc (0 users in memory)`);
  });

  test('routes: 404 outside the base path or for unknown paths, 405 with Allow for other methods', async () => {
    assert.deepEqual((await call(server.port, 'POST', '/auth', '{}')).body, { success: false, error: 'Unknown endpoint' });
    assert.equal((await call(server.port, 'POST', '/mc/nope?x=1', '{}')).status, 404);
    const wrong = await call(server.port, 'GET', '/mc/profile?userUUID=x');
    assert.deepEqual([wrong.status, wrong.allow, wrong.body.error], [405, 'POST', 'Method not allowed: use POST']);
    assert.equal(wrong.type, 'application/json; charset=utf-8');
  });

  test('bodies: empty, not JSON, not UTF-8, wrong shape, wrong field types', async () => {
    const cases: [string | Buffer, string][] = [
      ['', 'Request body is empty'],
      ['{"login":', 'Request body is not valid JSON'],
      [Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), 'Request body is not valid JSON'],
      ['[1]', 'Request body must be a JSON object'],
      ['null', 'Request body must be a JSON object'],
      ['{"login":"Alice","password":5}', 'Field "password" must be a string'],
      ['{"__proto__":{"login":"x"},"password":"p"}', 'Field "login" is missing'],
    ];
    for (const [body, error] of cases) {
      const reply = await call(server.port, 'POST', '/mc/auth', body);
      assert.deepEqual([reply.status, reply.body], [400, { success: false, error }], String(body));
    }
  });

  test('a body over 64 KiB is a 413 the client can read, declared or streamed', async () => {
    const big = Buffer.alloc(200 * 1024, 0x20);
    const declared = await call(server.port, 'POST', '/mc/auth', big);
    assert.deepEqual([declared.status, declared.body.error], [413, 'Request body is larger than 65536 bytes']);
    const streamed = await call(server.port, 'POST', '/mc/auth', big, { 'transfer-encoding': 'chunked' });
    assert.equal(streamed.status, 413);
  });

  test('a refused request cannot make the server read without end: past 4 MiB it is cut off', async () => {
    const { answer, sent } = await new Promise<{ answer: string; sent: number }>((done) => {
      let answer = '';
      let sent = 0;
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write(`POST /mc/nope HTTP/1.1\r\nhost: x\r\ncontent-length: ${16 * 1024 * 1024}\r\n\r\n`);
        const piece = Buffer.alloc(64 * 1024, 0x61);
        const pump = (): void => {
          while (!socket.destroyed && sent < 16 * 1024 * 1024 && socket.write(piece)) sent += piece.length;
          if (!socket.destroyed && sent < 16 * 1024 * 1024) socket.once('drain', () => ((sent += piece.length), pump()));
        };
        pump();
      });
      socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
      socket.on('error', () => {});
      socket.on('close', () => done({ answer, sent }));
      setTimeout(() => socket.destroy(), 5000).unref(); // the server never closed: fails below
    });
    assert.match(answer, /^HTTP\/1\.1 404/);
    assert.ok(sent < 16 * 1024 * 1024, `the server read all ${sent} bytes`);
  });

  test('/profiles: both shapes, the first entries up to the limit, invalid names and entries not found, nothing refused', async () => {
    await store.createUser({ id: '00000000-0000-4000-8000-00000000000a', name: 'Alice', passwordHash: 'x', skinUrl: null, skinHash: null, capeUrl: null, capeHash: null, isAlex: false, createdAt: 0, lastLoginAt: null, lockedAt: null, lockReason: null });
    const alice = [{ id: '00000000-0000-4000-8000-00000000000a', name: 'Alice' }];
    assert.deepEqual((await post('/profiles', ['ALICE', 'alice', 'x'])).body.result, alice);
    assert.deepEqual((await post('/profiles', { usernames: ['alice'] })).body.result, alice);
    assert.deepEqual((await post('/profiles', ['no such', 'a'])).body.result, []);
    assert.deepEqual((await post('/profiles', ['a', 'b', 'c', 'Alice'])).body, { success: true, result: [] });
    assert.deepEqual((await post('/profiles', { names: [] })).body, { success: true, result: [] });
    assert.deepEqual((await post('/profiles', [null, 'alice'])).body, { success: true, result: alice });
  });

  test('refusals of the service map to their statuses', async () => {
    assert.equal((await post('/auth', { login: 'Nobody', password: 'x' })).status, 401);
    assert.equal((await post('/profile', { userUUID: 'nope' })).status, 400);
    assert.equal((await post('/profile', { userUUID: '00000000000040008000000000000fff' })).status, 404);
    assert.equal((await post('/hasJoined', { username: 'Alice', serverID: '' })).body.error, 'Field "serverID" must not be empty');
    assert.deepEqual((await post('/join', { accessToken: 'x', userUUID: '00000000-0000-4000-8000-00000000000a', serverID: 's' })).body, { success: true, result: false });
  });

  test('a request Node cannot parse still gets an envelope', async () => {
    const raw = await new Promise<string>((done, fail) => {
      const socket = connect(server.port, '127.0.0.1', () => socket.end('NOT HTTP AT ALL\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8').on('data', (d: string) => (text += d));
      socket.on('close', () => done(text)).on('error', fail);
    });
    const [head, body] = raw.split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(head!, /content-type: application\/json/);
    assert.deepEqual(JSON.parse(body!), { success: false, error: 'Malformed HTTP request' });
  });

  test('a client that leaves mid-body is no error of the server: nothing is logged or written', async () => {
    const logged = errors().length;
    await new Promise<void>((done) => {
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write('POST /mc/auth HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"login":"Al');
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => done());
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(errors().length, logged, errors().join('\n'));
    assert.equal((await post('/profiles', ['x'])).status, 200, 'still serving');
  });

  test('an unexpected error is a 500 with no details; the details go to the log', async () => {
    const broken = store.findPlayer;
    store.findPlayer = async () => {
      throw new Error('disk on fire');
    };
    try {
      const reply = await post('/profile', { userUUID: '00000000-0000-4000-8000-00000000000a' });
      assert.deepEqual([reply.status, reply.body], [500, { success: false, error: 'Internal server error' }]);
      assert.deepEqual(errors(), ['POST /mc/profile: unexpected error']);
      const [line] = captured.lines();
      assert.equal(line!.level, 50);
      assert.match(line!.err.stack, /disk on fire\n\s+at /, 'the stack is in the log line');
    } finally {
      store.findPlayer = broken;
    }
  });

  // GET {base}/health: 200 {status:"ok"} while the store answers; a 503 envelope when its ping
  // fails (a rejection or a throw), with the cause in the log at level 50 and not in the answer.
  test('/health answers 503 with the envelope when the store does not answer, and logs why', async () => {
    const health = () => call(server.port, 'GET', '/mc/health');
    assert.deepEqual(await health(), { status: 200, type: 'application/json; charset=utf-8', allow: undefined, body: { success: true, result: { status: 'ok' } } });
    const ping = store.ping;
    const logged = captured.lines().length;
    try {
      store.ping = async () => {
        throw new Error('database disk image is malformed');
      };
      const rejected = await health();
      assert.deepEqual([rejected.status, rejected.type, rejected.body], [503, 'application/json; charset=utf-8', { success: false, error: 'The database does not answer' }]);
      store.ping = () => {
        throw new Error('the connection is not open');
      };
      const thrown = await health();
      assert.deepEqual([thrown.status, thrown.body], [503, { success: false, error: 'The database does not answer' }]);
      const lines = captured.lines().slice(logged);
      assert.deepEqual(
        lines.map((l) => [l.level, l.msg, l.err?.message]),
        [
          [50, 'health check: the database does not answer', 'database disk image is malformed'],
          [50, 'health check: the database does not answer', 'the connection is not open'],
        ],
      );
      assert.match(lines[0]!.err.stack, /database disk image is malformed\n\s+at /, 'the cause\'s stack is in the log');
    } finally {
      store.ping = ping;
    }
    assert.equal((await health()).status, 200, 'healthy again once the store answers');
  });
});

test('the server refuses a port in use with a clear message', async () => {
  const first = await startServer({ ...CONFIG, basePath: '' }, createMemoryStore(), silentLog());
  try {
    await assert.rejects(startServer({ ...CONFIG, port: first.port }, createMemoryStore(), silentLog()), /cannot listen on 127\.0\.0\.1:\d+: the address is in use/);
  } finally {
    await first.stop();
  }
});

describe('HTTP layer with an API key', () => {
  const KEY = 'k'.repeat(20);
  let server: RunningServer;
  before(async () => {
    server = await startServer({ ...CONFIG, basePath: '', apiKey: KEY, addressLoginLimit: 8 }, createMemoryStore(), silentLog());
  });
  after(() => server.stop());

  test('no key, a wrong key or another scheme: 401 with WWW-Authenticate', async () => {
    for (const headers of [{}, { authorization: `Bearer ${KEY}x` }, { authorization: `Basic ${KEY}` }] as Record<string, string>[]) {
      const reply = await call(server.port, 'POST', '/profiles', '[]', headers);
      assert.deepEqual([reply.status, reply.body.error], [401, 'Missing or wrong API key'], JSON.stringify(headers));
    }
    assert.equal((await call(server.port, 'POST', `/nope?key=${KEY}x`, '{}')).status, 401);
  });

  test('the key as a bearer token or in the query opens every endpoint; /health is open without it', async () => {
    assert.equal((await call(server.port, 'POST', '/profiles', '[]', { authorization: `bearer ${KEY}` })).status, 200);
    assert.equal((await call(server.port, 'POST', `/profiles?x=1&key=${KEY}`, '[]')).status, 200);
    assert.deepEqual((await call(server.port, 'GET', '/health')).body, { success: true, result: { status: 'ok' } });
    assert.equal((await call(server.port, 'POST', '/health')).status, 405, 'open, but only for GET');
  });

  test('a body that is not JSON by its Content-Type is a 415', async () => {
    const typed = (type: string) => call(server.port, 'POST', `/profile?key=${KEY}`, '{"userUUID":"00000000000040008000000000000fff"}', { 'content-type': type });
    assert.deepEqual((await typed('text/plain')).body, { success: false, error: 'Content-Type must be application/json' });
    assert.equal((await typed('application/json; charset=iso-8859-1')).status, 415);
    assert.equal((await typed('Application/JSON; charset="UTF-8"')).status, 404, 'read, and the player not found');
  });

  test('a throttled refusal carries Retry-After', async () => {
    for (let i = 0; i < 4; i++) await call(server.port, 'POST', `/auth?key=${KEY}`, '{"login":"Nobody","password":"x"}');
    // The 5th and 6th at once: whichever is counted second finds the wait of the first (counted
    // on arrival, before its hash), however slow the machine's hashing.
    const send = () =>
      new Promise<{ status: number; retry: string | undefined }>((done) => {
        request({ host: '127.0.0.1', port: server.port, method: 'POST', path: `/auth?key=${KEY}` }, (res) => {
          res.resume();
          done({ status: res.statusCode!, retry: res.headers['retry-after'] });
        }).end('{"login":"nobody","password":"x"}');
      });
    const answers = await Promise.all([send(), send()]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [401, 429]);
    assert.equal(answers.find((a) => a.status === 429)!.retry, '1');
  });

  test('--address-login-limit: a caller with the API key is a relay, never counted against its address', async () => {
    // 6 logins above plus 4 here make 10, past the limit of 8: none is refused for its address.
    for (let i = 0; i < 4; i++) assert.equal((await call(server.port, 'POST', `/auth?key=${KEY}`, '{"login":"Other","password":"x"}')).status, 401);
  });
});

describe('HTTP layer without an API key, from an address that is no relay', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer({ ...CONFIG, basePath: '', relay: '', addressLoginLimit: 3 }, createMemoryStore(), silentLog());
  });
  after(() => server.stop());

  test('--address-login-limit: the 4th login a minute from one address is a 429', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await call(server.port, 'POST', '/auth', '{"login":"Other","password":"x"}')).status, 401);
    const over = await call(server.port, 'POST', '/auth', '{"login":"Other","password":"x"}');
    assert.equal(over.status, 429);
    assert.match(over.body.error, /^Too many logins from this address; try again in \d+ s$/);
    assert.equal((await call(server.port, 'POST', '/profiles', '[]')).status, 200, 'only /auth is limited');
  });
});

// Rule: /auth gives up a login whose client closed the connection while it waited for a hash
// slot: no scrypt work for an answer no one will read.
test('a login whose client left while it waited for a hash slot is not hashed', async () => {
  const store = createMemoryStore();
  const server = await startServer({ ...CONFIG, basePath: '', hashConcurrency: 1, hashQueue: 8, metrics: true }, store, silentLog());
  try {
    const { createService } = await import('../../src/service/service.ts');
    const { defaultServiceOptions } = await import('../../src/cli/options.ts');
    await createService(store, defaultServiceOptions()).addUser({ name: 'Alice', password: 'right-password' });
    // A login checked finds the password right and records a token: count those.
    let checked = 0;
    const record = store.recordLogin.bind(store);
    store.recordLogin = (...args) => {
      checked++;
      return record(...args);
    };
    const body = '{"login":"Alice","password":"right-password"}';
    const kept = call(server.port, 'POST', '/auth', body, { 'content-type': 'application/json' });
    // Three more that queue behind it, whose clients leave at once.
    await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<void>((done) => {
            const socket = connect(server.port, '127.0.0.1', () => {
              socket.write(`POST /auth HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
              setTimeout(() => socket.destroy(), 20);
            });
            socket.on('close', () => done());
          }),
      ),
    );
    assert.equal((await kept).status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(checked, 1, 'only the login whose client stayed was checked');
    const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
    assert.match(metrics, /^http_requests_total\{route="\/auth",status="499"\} 3$/m, 'the three abandoned logins count as left (499)');
  } finally {
    await server.stop();
  }
});
