// A PostgreSQL database that goes away under load (a throwaway cluster of the file's own, see
// test/helpers/postgres.ts): stopped or frozen, the nodes (one on a two-host URL) answer in time
// and in the envelope, logins too, and serve again once it is back; lost to a failover, both serve again from the promoted standby within 15 s and
// every join acknowledged is there. These time the nodes under a load of their own while the
// database goes, so the file runs alone (test/file-groups.ts). Without PostgreSQL on the machine
// these skip, saying so.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { startRelay } from '../helpers/relay.ts';
import { postgresMissing, startCluster, startStandby, PG_PASSWORD, PG_USER, type Cluster } from '../helpers/postgres.ts';
import { ROOT, startServer, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { addPlayers } from '../helpers/players.ts';
import { until } from './util.ts';

const ADMIN = 'pg-admin-token-0123456';
const PW = 'player-Pass-7Hq2';

/** What docs/postgresql.md says to run on a standby just promoted: its one ```sql block. */
const PROMOTED_RECIPE = /^ *```sql\n([\s\S]*?)^ *```$/m.exec(readFileSync(pathJoin(ROOT, 'docs', 'postgresql.md'), 'utf8'))![1]!;

const login = (s: RunningServer, name: string, password = PW, from?: string): Promise<Answer> => call(s.port, '/auth', { from, body: { login: name, password } });

describe('two nodes on one PostgreSQL database', { skip: postgresMissing }, () => {
  let cluster: Cluster;
  let a: RunningServer;
  /** On the documented two-host form of the URL, its second host one that refuses. */
  let b: RunningServer;
  const uuids = new Map<string, string>();

  before(async () => {
    cluster = await startCluster();
    const args = ['--admin-token', ADMIN, '--join-ttl', '3600'];
    const twoHosts = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${cluster.port},127.0.0.1:9/${PG_USER}?target_session_attrs=read-write`;
    [a, b] = await Promise.all([startServer(['--db', cluster.url(), ...args]), startServer(['--db', twoHosts, ...args])]);
    for (const [name, id] of await addPlayers(a.port, ADMIN, ['Node0', 'Node2'], PW)) uuids.set(name, id);
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

describe('failover to a synchronous standby', { skip: postgresMissing }, () => {
  // The primary lost as a stopped server is (its connections reset), or as a host that vanished
  // is (a relay in front of it cut: no byte and no reset, which only time would end).
  for (const vanished of [false, true]) {
  const how = vanished ? "the primary's host vanished (no byte, no reset)" : 'the primary stopped at once';
  test(`${how}, the standby promoted: both nodes serve again within 15 s, and every join acknowledged is there`, async (t) => {
    const primary = await startCluster();
    const standby = await startStandby(primary);
    const relay = vanished ? await startRelay(primary.port) : undefined;
    // libpq's multi-host form: the nodes keep to whichever host takes writes.
    const url = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${relay?.port ?? primary.port},127.0.0.1:${standby.port}/${PG_USER}?target_session_attrs=read-write`;
    const nodes: RunningServer[] = [];
    try {
      // --join-ttl: a join acknowledged at the start still counts when it is checked at the end.
      nodes.push(...(await Promise.all([0, 1].map(() => startServer(['--db', url, '--admin-token', ADMIN, '--join-ttl', '3600'])))));
      const names = Array.from({ length: 60 }, (_, i) => `Fail${i}`);
      const uuids = await addPlayers(nodes[0]!.port, ADMIN, names, PW);
      // Cycles of a login on one node and a join on the other, each player once, 4 at a time,
      // going on through the failover; a join answered `true` is acknowledged.
      const acknowledged: { name: string; serverID: string }[] = [];
      const refused: string[] = [];
      let next = 0;
      let enough!: () => void;
      const underWay = new Promise<void>((r) => (enough = r));
      const lane = async (): Promise<void> => {
        for (let i = next++; i < names.length; i = next++) {
          const name = names[i]!;
          const [first, second] = i % 2 === 0 ? [nodes[0]!, nodes[1]!] : [nodes[1]!, nodes[0]!];
          const r = await login(first, name).catch(() => undefined);
          const serverID = `srv-failover-${i}`;
          const joined = r?.status === 200 ? await call(second.port, '/join', { body: { accessToken: r.body.result.accessToken, userUUID: uuids.get(name), serverID } }).catch(() => undefined) : undefined;
          if (joined?.body?.result === true) acknowledged.push({ name, serverID });
          else refused.push(`${name}: ${r?.status} ${JSON.stringify(joined?.body ?? r?.body)}`);
          if (acknowledged.length >= 12) enough();
        }
      };
      const load = Promise.all([lane(), lane(), lane(), lane()]);
      await underWay;
      // The loss counts from the cut (or from the stop, where nothing is cut).
      const stopped = performance.now();
      relay?.cut();
      await primary.stop('immediate');
      await standby.promote();
      // Statement by statement, as psql runs a script (one -c string would be one transaction, which ALTER SYSTEM refuses).
      for (const statement of PROMOTED_RECIPE.split(';').map((s) => s.trim()).filter((s) => s !== '')) await standby.psql(statement);
      for (const node of nodes) {
        assert.ok(await until(async () => (await call(node.port, '/health')).status === 200, 15_000 - (performance.now() - stopped)), 'a node did not serve again');
      }
      const back = performance.now() - stopped;
      assert.ok(back <= 15_000, `served again after ${Math.round(back)} ms`);
      t.diagnostic(`both nodes served again ${Math.round(back)} ms after the primary was lost`);
      await load;
      assert.ok(acknowledged.length >= 12, `acknowledged: ${acknowledged.length}; refused: ${refused.join('; ')}`);
      for (const { name, serverID } of acknowledged) {
        for (const node of nodes) {
          const seen = await call(node.port, '/hasJoined', { body: { username: name, serverID } });
          assert.equal(seen.body.result?.userUUID, uuids.get(name), `the acknowledged join of ${name} (${serverID}) after the failover: ${JSON.stringify(seen.body)}`);
        }
      }
      // The promoted standby takes writes: without the recipe's step its commits wait for a standby it does not have.
      for (const [i, node] of nodes.entries()) {
        const r = await login(node, names[i]!);
        assert.equal(r.status, 200, `a login on the promoted standby: ${JSON.stringify(r.body)}`);
        const joined = await call(node.port, '/join', { body: { accessToken: r.body.result.accessToken, userUUID: uuids.get(names[i]!), serverID: 'srv-after-failover' } });
        assert.deepEqual(joined.body, { success: true, result: true }, 'a join on the promoted standby');
      }
    } catch (err) {
      for (const node of nodes) t.diagnostic(`node on ${node.port}: ${node.stderr()}\n${node.stdout().split('\n').filter((l) => !l.includes('"msg":"request"')).join('\n')}`);
      throw err;
    } finally {
      await Promise.all(nodes.map((n) => n.stop()));
      await relay?.close();
      await standby.remove();
      await primary.remove();
    }
  });
  }
});
