// A PostgreSQL database that goes away under load (a throwaway cluster of the file's own, see
// test/helpers/postgres.ts): stopped or frozen, the nodes (one on a two-host URL) answer in time
// and in the envelope, logins too, and serve again once it is back. These time the nodes under a
// load of their own while the database goes, so the file runs alone (test/file-groups.ts). (A
// failover, with a bound of 15 s, runs with the rest: postgres-failover.test.ts.) Without
// PostgreSQL on the machine these skip, saying so.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { postgresMissing, startCluster, PG_PASSWORD, PG_USER, type Cluster } from '../helpers/postgres.ts';
import { startServer, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { seedPlayers } from '../helpers/players.ts';
import { until } from './util.ts';

const PW = 'player-Pass-7Hq2';

const login = (s: RunningServer, name: string, password = PW, from?: string): Promise<Answer> => call(s.port, '/auth', { from, body: { login: name, password } });
/** A node's scrape of /metrics. */
const scrape = async (s: RunningServer): Promise<string> => (await call(s.port, '/metrics')).body as string;
/** One outcome's count in a scrape. */
const count = (scraped: string, metric: string, outcome: string): number => Number(new RegExp(`^${metric}\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(scraped)?.[1]);

describe('two nodes on one PostgreSQL database', { skip: postgresMissing }, () => {
  let cluster: Cluster;
  let a: RunningServer;
  /** On the documented two-host form of the URL, its second host one that refuses. */
  let b: RunningServer;
  const uuids = new Map<string, string>();

  before(async () => {
    cluster = await startCluster();
    const args = ['--join-ttl', '3600', '--metrics'];
    const twoHosts = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${cluster.port},127.0.0.1:9/${PG_USER}?target_session_attrs=read-write`;
    [a, b] = await Promise.all([startServer(['--db', cluster.url(), ...args]), startServer(['--db', twoHosts, ...args])]);
    for (const [name, id] of await seedPlayers(cluster.url(), ['Node0', 'Node2'], PW)) uuids.set(name, id);
    // A join for the load's look-ups to find.
    const token = (await login(a, 'Node0')).body.result.accessToken;
    const joined = await call(a.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Node0'), serverID: 'srv-cross-1' } });
    assert.deepEqual(joined.body, { success: true, result: true });
  });

  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await cluster?.remove();
  });

  // Lost as a stopped server is (its connections closed, new ones refused), or as a frozen one is
  // (SIGSTOP: nothing answered, nothing closed, new connections accepted by the kernel and left).
  const ways = [
    { how: 'stopped', lose: async () => cluster.stop('fast'), back: async () => cluster.start() },
    { how: 'frozen (SIGSTOP)', lose: async () => cluster.freeze(), back: async (thaw: unknown) => (thaw as () => void)() },
  ];
  for (const { how, lose, back } of ways) {
  test(`the database ${how} under load: requests, logins included, answered within 2 s (503; false in-band on /join), /health 503; back: served`, async () => {
    const token = (await login(a, 'Node2')).body.result.accessToken;
    // Under load: look-ups, joins and logins go on, 4 at a time, through the loss and the return.
    let loading = true;
    const answered: string[] = [];
    const lane = async (i: number): Promise<void> => {
      for (let n = 0; loading; n++) {
        const node = (i + n) % 2 === 0 ? a : b;
        const r =
          n % 3 === 0
            ? await call(node.port, '/hasJoined', { body: { username: 'Node0', serverID: 'srv-cross-1' } })
            : n % 3 === 1
              ? await call(node.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Node2'), serverID: `srv-load-${i}` } })
              : await login(node, 'Node0');
        answered.push(`${r.status} ${JSON.stringify(r.body).slice(0, 80)}`);
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(lane));
    // The counts this test adds: its own, not the test's before it on the same nodes.
    const before = await Promise.all([a, b].map(scrape));
    const lost = await lose();
    try {
      for (const node of [a, b]) {
        const timed = async (what: () => Promise<Answer>): Promise<Answer> => {
          const sent = performance.now();
          const r = await what();
          assert.ok(performance.now() - sent <= 2000, `answered after ${Math.round(performance.now() - sent)} ms`);
          return r;
        };
        const away = { success: false, error: 'The database is temporarily unavailable; try again in a moment' };
        const hasJoined = await timed(() => call(node.port, '/hasJoined', { body: { username: 'Node2', serverID: 'srv-away' } }));
        assert.deepEqual([hasJoined.status, hasJoined.body], [503, away]);
        const join = await timed(() => call(node.port, '/join', { body: { accessToken: token, userUUID: uuids.get('Node2'), serverID: 'srv-away' } }));
        assert.deepEqual([join.status, join.body], [200, { success: true, result: false }]);
        const loggedIn = await timed(() => login(node, 'Node2'));
        assert.deepEqual([loggedIn.status, loggedIn.body], [503, away]);
        const profiles = await timed(() => call(node.port, '/profiles', { body: ['Node2'] }));
        assert.deepEqual([profiles.status, profiles.body], [200, { success: true, result: [] }]);
        const health = await timed(() => call(node.port, '/health'));
        assert.equal(health.status, 503);
      }
    } finally {
      await back(lost);
    }
    // The nodes reconnect by themselves.
    for (const node of [a, b]) {
      assert.ok(await until(async () => (await call(node.port, '/health')).status === 200, 15_000), 'health after the return');
      assert.ok(await until(async () => (await login(node, 'Node2')).status === 200, 15_000), 'a login after the return');
    }
    loading = false;
    await load;
    // The outage is counted as `error` on every endpoint, which an alert watches (docs/operations.md), never as a caller's `invalid` or `refused` or a full pool's `busy`.
    for (const [i, node] of [a, b].entries()) {
      const after = await scrape(node);
      const added = (metric: string, outcome: string): number => count(after, metric, outcome) - count(before[i]!, metric, outcome);
      for (const metric of ['auth_logins_total', 'auth_joins_total', 'auth_has_joined_total', 'auth_profiles_total']) {
        assert.ok(added(metric, 'error') >= 1, `${metric}{outcome="error"} counts the outage:\n${after}`);
      }
      const strays = [
        ['auth_logins_total', 'busy'], ['auth_logins_total', 'invalid'], ['auth_logins_total', 'bad_credentials'], ['auth_logins_total', 'throttled'],
        ['auth_joins_total', 'invalid'], ['auth_joins_total', 'bad_token'], ['auth_has_joined_total', 'invalid'], ['auth_profiles_total', 'refused'],
      ];
      for (const [metric, outcome] of strays) assert.equal(added(metric!, outcome!), 0, `${metric}{outcome="${outcome}"}:\n${after}`);
    }
    // Every request of the load was answered (a broken connection would have thrown above), in
    // the envelope: a result (a join's `true` or in-band `false`, a hit, a login), a miss (that
    // join has expired), or the database's 503.
    const kind = (line: string): string =>
      line.startsWith('200 {"success":true') ? 'ok' : line.startsWith('404 {"success":false') ? 'miss' : line.startsWith('503 {"success":false,"error":"The database is temporarily unavailable') ? '503' : line;
    assert.deepEqual([...new Set(answered.map(kind))].filter((k) => !['ok', 'miss', '503'].includes(k)), [], 'every answer of the load was a result, a miss or the 503');
    assert.ok(answered.length >= 20, `${answered.length} answers under load`);
  });
  }
});
