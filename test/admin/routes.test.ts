// The admin API and texture serving in process, over the in-memory store (test/e2e/ runs them
// through the built server too).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveServeConfig } from '../../src/cli/options.ts';
import { startServer, type RunningServer } from '../../src/serve.ts';
import { createMemoryStore } from '../../src/memory/store.ts';
import { chunk, encodePng, textureName } from '../helpers/png.ts';
import { captureLog, silentLog } from '../helpers/log.ts';
import { adminBodyWithoutTimes } from '../e2e/util.ts';

const TOKEN = 'admin-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };

describe('admin API', () => {
  let server: RunningServer;
  let base: string;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...headers, ...(body === undefined || Buffer.isBuffer(body) ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text.startsWith('{') ? adminBodyWithoutTimes(JSON.parse(text)) : undefined, text };
  };

  before(async () => {
    const config = { ...resolveServeConfig({}, {}), port: 0, db: ':memory:', basePath: '/mc', publicUrl: 'https://auth.example', adminToken: TOKEN, apiKey: 'api-key-0123456789' };
    server = await startServer(config, createMemoryStore(), silentLog());
    base = `http://127.0.0.1:${server.port}/mc`;
  });
  after(() => server.stop());

  test('needs the admin token as a bearer token; the API key does not open it', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: 'Bearer api-key-0123456789' }] as Record<string, string>[]) {
      const r = await call('GET', '/admin/users', undefined, headers);
      assert.deepEqual([r.status, r.json.error], [401, 'Missing or wrong admin token']);
    }
    assert.equal((await call('GET', `/admin/users?key=${TOKEN}`, undefined, {})).status, 401);
  });

  test('creates, finds, pages, patches, revokes and removes players', async () => {
    const alice = await call('POST', '/admin/users', { name: 'Alice', password: 'open-sesame', uuid: '0F1E2D3C4B5A49688776A5B4C3D2E1F0' });
    assert.deepEqual(alice.json.result, { name: 'Alice', uuid: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', isAlex: false, skinUrl: null, capeUrl: null, locked: false, lockedAt: null, lockReason: null });
    assert.equal((await call('POST', '/admin/users', { name: 'ALICE', password: 'open-sesame' })).status, 409);
    assert.equal((await call('POST', '/admin/users', { name: 'Bob', password: 'open-sesame', uuid: 'x', offlineUuid: true })).json.error, 'Give uuid or offlineUuid, not both');
    assert.equal((await call('POST', '/admin/users', { name: 'Bob', password: 'open-sesame', offlineUuid: 'yes' })).json.error, 'Field "offlineUuid" must be a boolean');
    await call('POST', '/admin/users', { name: 'Bob', password: 'open-sesame', offlineUuid: true });
    await call('POST', '/admin/users', { name: 'carol', password: 'open-sesame' });
    const page = (await call('GET', '/admin/users?limit=2')).json.result;
    assert.deepEqual([page.users.map((u: { name: string }) => u.name), page.next], [['Alice', 'Bob'], 'Bob']);
    const rest = (await call('GET', `/admin/users?limit=2&after=${page.next}`)).json.result;
    assert.deepEqual([rest.users.map((u: { name: string }) => u.name), rest.next], [['carol'], null]);
    assert.equal((await call('GET', '/admin/users?limit=501')).json.error, 'limit must be a whole number from 1 to 500');
    assert.equal((await call('GET', '/admin/users/0f1e2d3c4b5a49688776a5b4c3d2e1f0')).json.result.name, 'Alice');
    assert.equal((await call('GET', '/admin/users/nobody')).status, 404);
    assert.equal((await call('GET', '/admin/users/%E0%A4%A')).status, 404);
    const patched = await call('PATCH', '/admin/users/alice', { skinUrl: 'https://s.example/a.png', isAlex: true, capeUrl: null });
    assert.deepEqual(patched.json.result, { ...alice.json.result, skinUrl: 'https://s.example/a.png', isAlex: true });
    assert.equal((await call('PATCH', '/admin/users/alice', {})).status, 400);
    const typed = await fetch(`${base}/admin/users`, { method: 'POST', headers: { ...AUTH, 'content-type': 'text/plain' }, body: '{"name":"Eve","password":"open-sesame"}' });
    assert.equal(typed.status, 415, 'admin JSON bodies are held to the same Content-Type rule');
    assert.equal((await call('PATCH', '/admin/users/alice', { isAlex: 'yes' })).json.error, 'Field "isAlex" must be a boolean');
    assert.equal((await call('PATCH', '/admin/users/alice', { skinUrl: 'ftp://x' })).status, 400);
    assert.equal((await call('POST', '/admin/users/alice/password', { password: 'new-password' })).status, 200);
    assert.equal((await call('POST', '/admin/users/alice/revoke')).status, 200);
    assert.equal((await call('DELETE', '/admin/users/carol')).json.result.name, 'carol');
    assert.equal((await call('DELETE', '/admin/users/carol')).status, 404);
  });

  test('hosted skins and capes: uploaded, refused with a reason, served with caching headers', async () => {
    const skin = encodePng(64, 64, { extra: [chunk('tEXt', Buffer.from('Comment\0secret'))] });
    const up = await call('PUT', '/admin/users/bob/skin?model=slim', skin, { ...AUTH, 'content-type': 'image/png' });
    const url: string = up.json.result.skinUrl;
    assert.match(url, /^https:\/\/auth\.example\/mc\/textures\/[0-9a-f]{64}$/);
    assert.equal(up.json.result.isAlex, true);
    const hash = url.slice(url.lastIndexOf('/') + 1);
    const got = await fetch(`${base}/textures/${hash}`);
    const bytes = Buffer.from(await got.arrayBuffer());
    assert.equal(got.headers.get('content-type'), 'image/png');
    assert.equal(got.headers.get('etag'), `"${hash}"`);
    assert.equal(got.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(textureName(bytes), hash);
    assert.ok(!bytes.includes(Buffer.from('secret')), 'the tEXt chunk is not served');
    assert.equal((await fetch(`${base}/textures/${hash}`, { headers: { 'if-none-match': `W/"${hash}"` } })).status, 304);
    const head = await fetch(`${base}/textures/${hash}`, { method: 'HEAD' });
    assert.deepEqual([head.status, head.headers.get('content-length'), (await head.arrayBuffer()).byteLength], [200, String(bytes.length), 0]);
    assert.equal((await call('GET', `/textures/${'0'.repeat(64)}`, undefined, {})).json.error, 'Unknown texture');
    assert.equal((await call('PUT', '/admin/users/bob/cape', encodePng(128, 128))).json.error, 'cape must be 64×32, got 128×128');
    assert.equal((await call('PUT', '/admin/users/bob/cape', Buffer.from('not a png'))).json.error, 'cape: not a PNG file');
    assert.equal((await call('PUT', '/admin/users/bob/cape?model=slim', encodePng(64, 32))).status, 400);
    assert.equal((await call('PUT', '/admin/users/bob/skin?model=thin', skin)).json.error, 'model must be slim or classic');
    assert.equal((await call('PUT', '/admin/users/bob/skin', skin, { ...AUTH, 'content-type': 'image/jpeg' })).status, 415);
    assert.equal((await call('PUT', '/admin/users/bob/cape', encodePng(64, 32))).json.result.isAlex, true, 'a cape leaves the model');
    assert.equal((await call('DELETE', '/admin/users/bob/cape')).json.result.capeUrl, null);
    assert.equal((await call('DELETE', '/admin/users/bob/skin')).json.result.skinUrl, null);
    assert.equal((await fetch(`${base}/textures/${hash}`)).status, 404, 'no one wears it: gone');
  });
});

test('uploads need --public-url; once textures exist, a server without it starts and warns once', async () => {
  const store = createMemoryStore();
  const config = { ...resolveServeConfig({}, {}), port: 0, db: ':memory:', adminToken: TOKEN };
  const server = await startServer(config, store, silentLog());
  try {
    await fetch(`http://127.0.0.1:${server.port}/admin/users`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Dave', password: 'open-sesame' }) });
    const r = await fetch(`http://127.0.0.1:${server.port}/admin/users/dave/skin`, { method: 'PUT', headers: AUTH, body: new Uint8Array(encodePng(64, 64)) });
    assert.deepEqual([r.status, ((await r.json()) as { error: string }).error], [409, 'Hosted textures need the server to run with --public-url']);
  } finally {
    await server.stop();
  }
  const dave = (await store.findUserByName('dave'))!;
  await store.setTextures(dave.id, { skinHash: 'h', upload: { hash: 'h', png: Buffer.from('x') } });
  // A refusal to start would make a service manager restart it in a loop.
  const captured = captureLog('info');
  const again = await startServer(config, store, captured.log);
  await again.stop();
  const warnings = captured.lines().filter((l) => l.level === 40);
  assert.equal(warnings.length, 1, captured.text());
  assert.match(warnings[0]!.msg, /hosted skins or capes.*set --public-url/);
});
