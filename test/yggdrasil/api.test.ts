// The Yggdrasil API in process, over the in-memory store (test/e2e/yggdrasil.test.ts runs every
// rule through the built server on real databases, Node and Deno; these give c8 its line coverage
// of src/yggdrasil/ and the service functions behind it).
import assert from 'node:assert/strict';
import { createPublicKey, generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { defaultServiceOptions, resolveServeConfig } from '../../src/cli/options.ts';
import { createMemoryStore } from '../../src/memory/store.ts';
import { createService } from '../../src/service/service.ts';
import { startServer, type RunningServer } from '../../src/serve.ts';
import { loadSigningKey } from '../../src/yggdrasil/keys.ts';
import { formFields } from '../../src/yggdrasil/multipart.ts';
import { clientTokenOf, sameClientToken, tokenTail } from '../../src/yggdrasil/tokens.ts';
import { silentLog } from '../helpers/log.ts';
import { randomPng } from '../helpers/png.ts';

const ADMIN = 'yggdrasil-admin-token-0123456789';
const PASSWORD = 'ygg-unit-password';

const dir = mkdtempSync(join(tmpdir(), 'mcauth-ygg-unit-'));
const keyFile = join(dir, 'key.pem');
const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
writeFileSync(keyFile, key.privateKey.export({ type: 'pkcs8', format: 'pem' }));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('Yggdrasil API', () => {
  let server: RunningServer;
  let base: string;
  const ids: Record<string, string> = {};
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const json = body !== undefined && !(body instanceof FormData) && typeof body !== 'string';
    const res = await fetch(base + path, {
      method,
      headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : json ? JSON.stringify(body) : (body as FormData | string),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : undefined };
  };
  const Y = (path: string) => `/yggdrasil${path}`;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const authenticate = (username: string, extra: Record<string, unknown> = {}) => call('POST', Y('/authserver/authenticate'), { username, password: PASSWORD, ...extra });

  before(async () => {
    const config = {
      ...resolveServeConfig({}, {}),
      port: 0,
      db: ':memory:',
      basePath: '/mc',
      publicUrl: 'https://auth.example',
      adminToken: ADMIN,
      accountPage: true,
      registration: 'open' as const,
      relay: '',
      yggdrasil: true,
      yggdrasilKey: keyFile,
    };
    server = await startServer(config, createMemoryStore(), silentLog());
    base = `http://127.0.0.1:${server.port}/mc`;
    for (const name of ['Alice', 'Bob', 'Carol', 'Dave']) {
      const r = await call('POST', '/admin/users', { name, password: PASSWORD }, bearer(ADMIN));
      assert.equal(r.status, 200, r.text);
      ids[name] = r.json.result.uuid.replaceAll('-', '');
    }
  });
  after(() => server.stop());

  test('the root: metadata, links to the account page, the key, and the header on every answer', async () => {
    const r = await call('GET', Y('/'));
    assert.equal(r.status, 200);
    assert.equal(r.json.meta.implementationName, 'mcauth');
    assert.deepEqual(r.json.meta.links, { homepage: 'https://auth.example/mc/account', register: 'https://auth.example/mc/account' });
    assert.deepEqual(r.json.skinDomains, ['auth.example']);
    assert.equal(createPublicKey(r.json.signaturePublickey).export({ type: 'spki', format: 'pem' }), key.publicKey.export({ type: 'spki', format: 'pem' }));
    assert.equal(r.headers.get('x-authlib-injector-api-location'), '/mc/yggdrasil/');
    assert.equal((await call('GET', '/')).headers.get('x-authlib-injector-api-location'), '/mc/yggdrasil/');
  });

  test('authenticate, refresh, validate, invalidate and signout, with their refusals', async () => {
    const bad = await call('POST', Y('/authserver/authenticate'), { username: 'alice@example.com', password: PASSWORD });
    assert.deepEqual([bad.status, bad.json], [403, { error: 'ForbiddenOperationException', errorMessage: 'Invalid credentials. Invalid username or password.' }]);
    const auth = (await authenticate('Alice', { clientToken: 'launcher-1', requestUser: true })).json;
    assert.equal(auth.clientToken, 'launcher-1');
    assert.deepEqual(auth.user, { id: ids.Alice, properties: [] });
    assert.equal((await authenticate('Alice')).status, 403, 'a second accepted login within a second');
    const validate = async (accessToken: string, clientToken?: string) => (await call('POST', Y('/authserver/validate'), { accessToken, clientToken })).status;
    assert.equal(await validate(auth.accessToken, 'launcher-1'), 204);
    assert.equal(await validate(auth.accessToken, 'launcher-2'), 403);
    assert.equal((await call('POST', Y('/authserver/refresh'), { accessToken: auth.accessToken, selectedProfile: { id: ids.Bob, name: 'Bob' } })).status, 403);
    assert.equal((await call('POST', Y('/authserver/refresh'), { accessToken: auth.accessToken, selectedProfile: { id: '0'.repeat(32), name: 'X' } })).status, 400);
    const refreshed = await call('POST', Y('/authserver/refresh'), { accessToken: auth.accessToken, selectedProfile: auth.selectedProfile, requestUser: true });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.equal(refreshed.json.clientToken, 'launcher-1');
    assert.equal(await validate(auth.accessToken), 403);
    assert.equal((await call('POST', Y('/authserver/refresh'), { accessToken: auth.accessToken })).status, 403);
    assert.equal((await call('POST', Y('/authserver/invalidate'), { accessToken: refreshed.json.accessToken })).status, 204);
    assert.equal(await validate(refreshed.json.accessToken), 403);
    // A token of the JSON API refreshed here gets a clientToken.
    const json = (await call('POST', '/auth', { login: 'Dave', password: PASSWORD })).json.result;
    const adopted = await call('POST', Y('/authserver/refresh'), { accessToken: json.accessToken });
    assert.match(adopted.json.clientToken, /^[0-9a-f]{32}$/);
    const signedOut = await call('POST', Y('/authserver/signout'), { username: 'Dave', password: PASSWORD });
    assert.equal(signedOut.status, 204, signedOut.text);
    assert.equal(await validate(adopted.json.accessToken), 403);
    assert.equal((await call('POST', Y('/authserver/signout'), { username: 'Dave', password: PASSWORD })).status, 403);
    assert.equal((await call('POST', Y('/authserver/validate'), [])).status, 400);
  });

  test('join, hasJoined (with ip), profile, profiles', async () => {
    const auth = (await authenticate('Bob')).json;
    const serverId = randomBytes(8).toString('hex');
    assert.equal((await call('POST', Y('/sessionserver/session/minecraft/join'), { accessToken: auth.accessToken, selectedProfile: ids.Bob, serverId })).status, 204);
    assert.equal((await call('POST', Y('/sessionserver/session/minecraft/join'), { accessToken: 'nope', selectedProfile: ids.Bob, serverId })).status, 403);
    const joined = await call('GET', Y(`/sessionserver/session/minecraft/hasJoined?username=Bob&serverId=${serverId}&ip=127.0.0.1`));
    assert.equal(joined.status, 200, joined.text);
    const property = joined.json.properties[0];
    assert.ok(verify('sha1', Buffer.from(property.value), key.publicKey, Buffer.from(property.signature, 'base64')));
    assert.equal((await call('GET', Y(`/sessionserver/session/minecraft/hasJoined?username=Bob&serverId=${serverId}&ip=10.0.0.1`))).status, 204);
    assert.equal((await call('GET', Y(`/sessionserver/session/minecraft/hasJoined?username=no!&serverId=${serverId}`))).status, 204);
    assert.equal((await call('GET', Y('/sessionserver/session/minecraft/hasJoined?username=Bob'))).status, 400);
    const profile = await call('GET', Y(`/sessionserver/session/minecraft/profile/${ids.Bob}?unsigned=false`));
    assert.deepEqual(profile.json.properties.map((p: { name: string }) => p.name), ['textures', 'uploadableTextures']);
    assert.equal((await call('GET', Y(`/sessionserver/session/minecraft/profile/${ids.Bob}`))).json.properties[0].signature, undefined);
    assert.equal((await call('GET', Y('/sessionserver/session/minecraft/profile/nope'))).status, 204);
    const found = await call('POST', Y('/api/profiles/minecraft'), ['bob', 'nobody', 'ALICE']);
    assert.deepEqual(found.json, [{ id: ids.Bob, name: 'Bob' }, { id: ids.Alice, name: 'Alice' }]);
    assert.equal((await call('POST', Y('/api/profiles/minecraft'), { names: [] })).status, 400);
  });

  test('texture upload and removal; certificates, public keys, attributes, blocklist', async () => {
    const auth = (await authenticate('Carol')).json;
    const form = (png: Buffer, model?: string) => {
      const f = new FormData();
      if (model !== undefined) f.append('model', model);
      f.append('file', new Blob([new Uint8Array(png)], { type: 'image/png' }), 'skin.png');
      return f;
    };
    const path = Y(`/api/user/profile/${ids.Carol}/skin`);
    assert.equal((await call('PUT', path, form(randomPng(64, 64), 'slim'), bearer(auth.accessToken))).status, 204);
    assert.equal((await call('PUT', path, form(randomPng(64, 64), 'fat'), bearer(auth.accessToken))).status, 400);
    assert.equal((await call('PUT', path, new FormData(), bearer(auth.accessToken))).status, 400);
    assert.equal((await call('PUT', Y(`/api/user/profile/${ids.Bob}/skin`), form(randomPng(64, 64)), bearer(auth.accessToken))).status, 403);
    assert.equal((await call('PUT', Y(`/api/user/profile/${ids.Carol}/hat`), form(randomPng(64, 64)), bearer(auth.accessToken))).status, 404);
    assert.equal((await call('PUT', path, form(randomPng(64, 64)))).status, 401);
    assert.equal((await call('DELETE', path, undefined, bearer(auth.accessToken))).status, 204);

    const cert = await call('POST', Y('/minecraftservices/player/certificates'), undefined, bearer(auth.accessToken));
    assert.equal(cert.status, 200, cert.text);
    const again = await call('POST', Y('/minecraftservices/player/certificates'), undefined, bearer(auth.accessToken));
    assert.equal(again.json.keyPair.publicKey, cert.json.keyPair.publicKey, 'the same certificate until it is due for renewal');
    const expires = Date.parse(cert.json.expiresAt);
    assert.ok(verify('sha1', Buffer.from(`${expires}${cert.json.keyPair.publicKey}`), key.publicKey, Buffer.from(cert.json.publicKeySignature, 'base64')));
    const keys = await call('GET', Y('/minecraftservices/publickeys'));
    assert.equal(keys.json.profilePropertyKeys.length, 1);
    assert.equal((await call('GET', Y('/minecraftservices/player/attributes'), undefined, bearer(auth.accessToken))).json.privileges.onlineChat.enabled, true);
    assert.deepEqual((await call('GET', Y('/minecraftservices/privacy/blocklist'), undefined, bearer(auth.accessToken))).json, { blockedProfiles: [] });
    assert.equal((await call('GET', Y('/minecraftservices/privacy/blocklist'))).status, 401);
  });
});

describe('the signing key', () => {
  test('made once and kept in the store; a file wins; a bad file is refused', async () => {
    const service = createService(createMemoryStore(), defaultServiceOptions());
    const made = await loadSigningKey(service, '');
    assert.equal(createPublicKey(made.publicPem).asymmetricKeyDetails?.modulusLength, 4096);
    assert.equal((await loadSigningKey(service, '')).publicPem, made.publicPem);
    assert.equal((await loadSigningKey(service, keyFile)).publicPem, key.publicKey.export({ type: 'spki', format: 'pem' }));
    const notKey = join(dir, 'not.pem');
    writeFileSync(notKey, 'hello');
    await assert.rejects(loadSigningKey(service, notKey), /holds no RSA private key/);
    await assert.rejects(loadSigningKey(service, join(dir, 'missing.pem')), /no such file/);
    const ec = join(dir, 'ec.pem');
    writeFileSync(ec, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await assert.rejects(loadSigningKey(service, ec), /must be an RSA key/);
  });
});

describe('tokens and forms', () => {
  test('a token carries its clientToken, compared in constant time', () => {
    const token = `${'a'.repeat(36)}${tokenTail('launcher ✓')}`;
    assert.equal(clientTokenOf(token), 'launcher ✓');
    assert.equal(clientTokenOf('a'.repeat(36)), undefined);
    assert.ok(sameClientToken('launcher ✓', clientTokenOf(token)));
    assert.ok(!sameClientToken('launcher', clientTokenOf(token)));
    assert.ok(!sameClientToken('launcher', undefined));
  });

  test('multipart/form-data: fields by name; anything malformed refused', () => {
    const type = 'multipart/form-data; boundary=XyZ';
    const body = Buffer.from('preamble\r\n--XyZ\r\nContent-Disposition: form-data; name="model"\r\n\r\nslim\r\n--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--XyZ--\r\n');
    const fields = formFields(body, type);
    assert.equal(fields.get('model')?.toString(), 'slim');
    assert.equal(fields.get('file')?.toString(), 'PNG');
    const refused: [string, string | undefined][] = [
      ['--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--XyZ--', 'text/plain'],
      ['--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--XyZ--', undefined],
      ['no boundary here', type],
      ['--XyZ junk', type],
      ['--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nnever ends', type],
      ['--XyZ\r\nContent-Type: text/plain\r\n\r\nx\r\n--XyZ--', type],
      ['--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\ny\r\n--XyZ--', type],
    ];
    for (const [text, contentType] of refused) assert.throws(() => formFields(Buffer.from(text), contentType), { status: 400 }, text);
    const many = Array.from({ length: 9 }, (_, i) => `--XyZ\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nx\r\n`).join('') + '--XyZ--';
    assert.throws(() => formFields(Buffer.from(many), type), /more than 8 fields/);
  });
});
