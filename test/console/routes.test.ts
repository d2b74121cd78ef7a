// The admin page's API in process, over the in-memory store (test/e2e/admin-page.test.ts runs
// every rule through the built server on real SQLite and PostgreSQL databases; this gives c8 its
// line coverage of src/console/api.ts): each route as an admin, each refused to a plain player,
// the page beside the admin API's token, and the audit trail of a player.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveServeConfig } from '../../src/cli/options.ts';
import { consoleArea, type ConsoleOptions } from '../../src/console/api.ts';
import { createMemoryStore } from '../../src/memory/store.ts';
import { startServer, type RunningServer } from '../../src/serve.ts';
import type { Service } from '../../src/service/service.ts';
import { silentLog } from '../helpers/log.ts';

const ADMIN_TOKEN = 'console-routes-admin-token-0123456789';
const PASSWORD = 'console-Pass-0123';

describe('the admin page\'s API in process', () => {
  let server: RunningServer;
  let base: string;
  const call = async (method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
  };
  const ok = async (method: string, path: string, token: string, body?: unknown) => {
    const r = await call(method, path, token, body);
    assert.equal(r.status, 200, `${method} ${path}: ${r.text}`);
    return r.json.result;
  };
  const signIn = async (name: string): Promise<string> => (await ok('POST', '/account/login', '', { name, password: PASSWORD })).accessToken;
  const addPlayer = async (name: string): Promise<string> => (await ok('POST', '/admin/users', ADMIN_TOKEN, { name, password: PASSWORD })).uuid;
  let boss: string;
  let plain: string;

  before(async () => {
    const config = { ...resolveServeConfig({}, {}), port: 0, db: ':memory:', adminToken: ADMIN_TOKEN, accountPage: true, admins: 'Boss', relay: '', publicUrl: 'https://auth.example' };
    server = await startServer(config, createMemoryStore(), silentLog());
    base = `http://127.0.0.1:${server.port}`;
    await addPlayer('Boss');
    await addPlayer('Plain');
    boss = await signIn('boss');
    plain = await signIn('Plain');
  });
  after(async () => {
    await server?.stop();
  });

  test('the page is served without the admin token; the admin API beside it still needs it', async () => {
    for (const path of ['/admin', '/admin/']) {
      const page = await call('GET', path);
      assert.equal(page.status, 200);
      assert.match(page.text, /^<!doctype html>/i);
    }
    assert.equal((await call('GET', '/admin/users')).status, 401);
    assert.equal((await call('GET', '/admin/users', ADMIN_TOKEN)).status, 200);
  });

  test('an admin: me, the dashboard, search by name and UUID, a player and every action, invites; each in the trail', async () => {
    assert.equal((await ok('GET', '/account/admin/me', boss)).name, 'Boss');
    const dashboard = await ok('GET', '/account/admin/dashboard', boss);
    assert.equal(dashboard.players, 2);
    assert.equal(typeof dashboard.uptimeSeconds, 'number');
    const uuid = await addPlayer('Target_1');
    const byName = await ok('GET', '/account/admin/players?by=name&q=TARGET', boss);
    assert.deepEqual(byName.players.map((p: { name: string }) => p.name), ['Target_1']);
    assert.equal(byName.next, null);
    const byId = await ok('GET', `/account/admin/players?by=uuid&q=${uuid.replaceAll('-', '').slice(0, 12)}`, boss);
    assert.deepEqual(byId.players.map((p: { uuid?: string; id?: string }) => p.uuid ?? p.id), [uuid]);
    assert.equal((await call('GET', '/account/admin/players?by=uuid&q=xyz', boss)).status, 400);
    assert.equal((await call('GET', '/account/admin/players?by=name&q=t&after=no%20spaces', boss)).status, 400, 'a next key not of the search\'s form');
    assert.equal((await call('GET', `/account/admin/players?by=uuid&q=&after=${'z'.repeat(40)}`, boss)).status, 400);

    await ok('POST', `/account/admin/players/${uuid}/lock`, boss, { reason: 'Griefing' });
    assert.equal((await call('POST', '/account/login', '', { name: 'Target_1', password: PASSWORD })).status, 403, 'locked');
    await ok('POST', `/account/admin/players/${uuid}/unlock`, boss, {});
    await ok('POST', `/account/admin/players/${uuid}/rename`, boss, { name: 'Target_2' });
    assert.equal((await call('POST', `/account/admin/players/${uuid}/rename`, boss, { name: 'Plain' })).status, 409, 'a taken name');
    const reset = await ok('POST', `/account/admin/players/${uuid}/reset-link`, boss);
    assert.match(reset.link, /^https:\/\/auth\.example\/account#reset=[0-9a-f]+$/);
    await ok('DELETE', `/account/admin/players/${uuid}/skin`, boss);
    await ok('DELETE', `/account/admin/players/${uuid}/cape`, boss);
    const player = await ok('GET', `/account/admin/players/${uuid}`, boss);
    const trail = JSON.stringify(player);
    for (const action of ['lock', 'unlock', 'rename', 'reset link', 'clear skin', 'clear cape']) assert.ok(trail.includes(`"${action}"`), `the trail holds ${action}: ${trail}`);
    assert.ok(!trail.includes(reset.code), 'no reset code in the trail');

    assert.equal((await call('DELETE', `/account/admin/players/${uuid}`, boss, { name: 'Target_1' })).status, 400, 'the name typed must be the player\'s');
    await ok('DELETE', `/account/admin/players/${uuid}`, boss, { name: 'Target_2' });
    assert.equal((await call('GET', `/account/admin/players/${uuid}`, boss)).status, 404);

    const made = await ok('POST', '/account/admin/invites', boss, { uses: 2, expiresIn: 3600 });
    assert.equal((await call('POST', '/account/admin/invites', boss, { uses: 'two' })).status, 400);
    assert.deepEqual((await ok('GET', '/account/admin/invites', boss)).invites.map((i: { id: string }) => i.id), [made.id]);
    assert.equal((await call('DELETE', `/account/admin/invites/${made.code}`, boss)).status, 400, 'by its id, never its code');
    await ok('DELETE', `/account/admin/invites/${made.id}`, boss);
    assert.deepEqual((await ok('GET', '/account/admin/invites', boss)).invites, []);
  });

  test('a plain player gets 403 on every route, no token 401, and a change from another site 403', async () => {
    const uuid = await addPlayer('Untouched');
    const routes: [string, string, unknown?][] = [
      ['GET', '/account/admin/me'],
      ['GET', '/account/admin/dashboard'],
      ['GET', '/account/admin/players?by=name&q=u'],
      ['GET', `/account/admin/players/${uuid}`],
      ['DELETE', `/account/admin/players/${uuid}`, { name: 'Untouched' }],
      ['POST', `/account/admin/players/${uuid}/lock`, {}],
      ['POST', `/account/admin/players/${uuid}/unlock`, {}],
      ['POST', `/account/admin/players/${uuid}/rename`, { name: 'Renamed' }],
      ['DELETE', `/account/admin/players/${uuid}/skin`],
      ['DELETE', `/account/admin/players/${uuid}/cape`],
      ['POST', `/account/admin/players/${uuid}/reset-link`],
      ['GET', '/account/admin/invites'],
      ['POST', '/account/admin/invites', {}],
      ['DELETE', `/account/admin/invites/${'0'.repeat(12)}`],
    ];
    // The list is every route of the API's, as the area declares them: a route added later fails here until it is listed.
    const declared = Object.entries(consoleArea({} as Service, { admins: [], page: { basePath: '' } } as unknown as ConsoleOptions).routes)
      .filter(([pattern]) => pattern.startsWith('/account/admin/'))
      .flatMap(([pattern, methods]) => Object.keys(methods).map((method) => `${method} ${pattern}`));
    const tried = routes.map(([method, path]) => `${method} ${path.replace(/\?.*$/, '').replace(uuid, ':uuid').replace('0'.repeat(12), ':id')}`);
    assert.deepEqual([...tried].sort(), [...declared].sort());
    for (const [method, path, body] of routes) {
      assert.equal((await call(method, path, plain, body)).status, 403, `${method} ${path} as a plain player`);
      assert.equal((await call(method, path, undefined, body)).status, 401, `${method} ${path} without a token`);
    }
    assert.equal((await call('POST', `/account/admin/players/${uuid}/lock`, boss, {}, { origin: 'https://evil.example' })).status, 403);
    const still = await ok('GET', `/account/admin/players/${uuid}`, boss);
    assert.equal(still.name, 'Untouched');
    assert.equal(still.locked, false);
  });
});
