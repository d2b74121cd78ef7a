// The account API in process, over the in-memory store (test/e2e/account.test.ts and
// account-session.test.ts run every rule through the built server on real SQLite files; these
// give c8 its line coverage of src/account/ and the service functions behind it).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveServeConfig } from '../../src/cli/options.ts';
import { startServer, type RunningServer } from '../../src/serve.ts';
import { createMemoryStore } from '../../src/memory/store.ts';
import { encodePng, textureName } from '../helpers/png.ts';
import { silentLog } from '../helpers/log.ts';

const ADMIN = 'account-admin-token-0123456789';
const KEY = 'account-api-key-0123456789';

describe('account API', () => {
  let server: RunningServer;
  let base: string;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const json = body !== undefined && !Buffer.isBuffer(body);
    const res = await fetch(base + path, {
      method,
      headers: { ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
  };
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const invite = async (uses?: number) => (await call('POST', '/admin/invites', uses === undefined ? {} : { uses }, bearer(ADMIN))).json.result;

  before(async () => {
    const config = {
      ...resolveServeConfig({}, {}),
      port: 0,
      db: ':memory:',
      basePath: '/mc',
      publicUrl: 'https://auth.example',
      adminToken: ADMIN,
      apiKey: KEY,
      accountPage: true,
      registration: 'invite' as const,
      registrationUuid: 'offline' as const,
      registrationsPerAddress: 5,
      addressLoginLimit: 100,
      // The test calls from 127.0.0.1, a relay by default: the per-address rules would not count it.
      relay: '',
      minPasswordLength: 10,
    };
    server = await startServer(config, createMemoryStore(), silentLog());
    base = `http://127.0.0.1:${server.port}/mc`;
  });
  after(() => server.stop());

  test('the page, without the API key, built for the settings', async () => {
    const page = await call('GET', '/account');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(Number(page.headers.get('content-length')), Buffer.byteLength(page.text));
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal((await call('GET', '/accounting')).status, 401, 'only the page and what is under /account/ are open');
  });

  test('sign up by invite, sign in, change the password, sign out everywhere', async () => {
    const code = (await invite()).code;
    assert.equal((await call('POST', '/account/register', { name: 'Alice', password: 'alice-password' })).json.error, 'This invite code is not valid');
    const made = (await call('POST', '/account/register', { name: 'Alice', password: 'alice-password', invite: code })).json.result;
    assert.equal(made.userUUID.slice(14, 15), '3', 'the offline-mode UUID (version 3)');
    assert.equal((await call('POST', '/account/register', { name: 'Bob', password: 'bob-password', invite: code })).status, 403, 'used up');
    const token = (await call('POST', '/account/login', { name: 'alice', password: 'alice-password' })).json.result.accessToken;
    assert.deepEqual(Object.keys((await call('GET', '/account/me', undefined, bearer(token))).json.result), ['name', 'uuid', 'isAlex', 'skinUrl', 'capeUrl', 'createdAt', 'lastLoginAt']);
    assert.equal((await call('POST', '/account/password', { current: 'wrong-password', new: 'alice-password-2' }, bearer(token))).status, 401);
    assert.equal((await call('POST', '/account/password', { current: 'alice-password', new: 'short-one' }, bearer(token))).json.error, 'The password must be at least 10 characters');
    assert.equal((await call('POST', '/account/password', { current: 'x'.repeat(257), new: 'alice-password-2' }, bearer(token))).json.error, 'Field "current" is longer than 256 bytes');
    assert.equal((await call('POST', '/account/password', { current: 'alice-password', new: 'alice-password-2' }, bearer(token))).json.result.name, 'Alice');
    assert.equal((await call('POST', '/account/password', { current: 'alice-password-2', new: 'alice-password-3' }, bearer(made.accessToken))).status, 401, 'the other session ended');
    assert.equal((await call('POST', '/account/logout-all', undefined, bearer(token))).json.result, true);
    assert.equal((await call('GET', '/account/me', undefined, bearer(token))).json.error, 'Sign in again');
  });

  test('skins and capes', async () => {
    const code = (await invite()).code;
    const { accessToken } = (await call('POST', '/account/register', { name: 'Skinner', password: 'skinner-password', invite: code })).json.result;
    const skin = encodePng(64, 64, { seed: 5 });
    const me = (await call('PUT', '/account/skin?model=slim', skin, bearer(accessToken))).json.result;
    assert.deepEqual([me.skinUrl, me.isAlex], [`https://auth.example/mc/textures/${textureName(skin)}`, true]);
    assert.equal((await call('PUT', '/account/cape', encodePng(64, 32), bearer(accessToken))).json.result.capeUrl?.length > 0, true);
    assert.equal((await call('DELETE', '/account/skin', undefined, bearer(accessToken))).json.result.skinUrl, null);
    assert.equal((await call('DELETE', '/account/cape', undefined, bearer(accessToken))).json.result.capeUrl, null);
  });

  test('invites and reset links in the admin API', async () => {
    const made = await invite(2);
    assert.equal(made.link, `https://auth.example/mc/account#invite=${made.code}`);
    const listed = (await call('GET', '/admin/invites', undefined, bearer(ADMIN))).json.result.invites;
    assert.ok(listed.some((i: { id: string }) => i.id === made.id));
    assert.deepEqual((await call('DELETE', `/admin/invites/${made.id}`, undefined, bearer(ADMIN))).json.result, { id: made.id });
    const link = (await call('POST', '/admin/users/alice/reset-link', undefined, bearer(ADMIN))).json.result;
    assert.equal(link.link, `https://auth.example/mc/account#reset=${link.code}`);
    assert.equal((await call('POST', '/account/reset', { code: link.code, password: 'short' })).status, 400);
    assert.deepEqual((await call('POST', '/account/reset', { code: link.code, password: 'alice-reset-password' })).json.result, { username: 'Alice' });
    assert.equal((await call('POST', '/account/reset', { code: link.code, password: 'alice-reset-password' })).json.error, 'This reset link is not valid');
    assert.equal((await call('POST', '/account/login', { name: 'Alice', password: 'alice-reset-password' })).status, 200);
  });

  test('registrations an address: refusals of form are given back, then 429', async () => {
    // Counted so far: Alice without a code, Alice, Bob with a used code, Skinner.
    assert.equal((await call('POST', '/account/register', { name: 'x', password: 'long-enough-pw', invite: 'x' })).status, 400, 'free');
    assert.equal((await call('POST', '/account/register', { name: 'Carol', password: 'carol-password', invite: (await invite()).code })).status, 200, 'the fifth');
    const over = await call('POST', '/account/register', { name: 'Dave', password: 'dave-password', invite: (await invite()).code });
    assert.equal(over.status, 429, over.text);
    assert.match(over.json.error, /^Too many registrations from this address; try again in \d+ s$/);
  });
});
