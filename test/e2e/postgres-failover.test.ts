// A failover: the primary PostgreSQL server lost (stopped at once, or its host gone without a
// byte), the synchronous standby promoted as docs/postgresql.md says: both nodes serve again
// within 15 s, and every join acknowledged before is there. The bound is loose enough for a busy
// machine, so the file runs with the rest (test/file-groups.ts); a database lost under a load
// timed to 2 s is postgres-outage.test.ts. Each test has throwaway clusters of its own (see
// test/helpers/postgres.ts). Without PostgreSQL on the machine these skip, saying so.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { startRelay } from '../helpers/relay.ts';
import { postgresMissing, startCluster, startStandby, PG_PASSWORD, PG_USER } from '../helpers/postgres.ts';
import { ROOT, startServer, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { seedPlayers } from '../helpers/players.ts';
import { until } from './util.ts';

const PW = 'player-Pass-7Hq2';

/** What docs/postgresql.md says to run on a standby just promoted: its ```sql block that follows "After promoting a standby". */
const PAGE = readFileSync(pathJoin(ROOT, 'docs', 'postgresql.md'), 'utf8');
const PROMOTED_RECIPE = /^ *```sql\n([\s\S]*?)^ *```$/m.exec(PAGE.slice(PAGE.indexOf('**After promoting a standby**')))![1]!;

const login = (s: RunningServer, name: string, password = PW): Promise<Answer> => call(s.port, '/auth', { body: { login: name, password } });

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
      nodes.push(...(await Promise.all([0, 1].map(() => startServer(['--db', url, '--join-ttl', '3600'])))));
      const names = Array.from({ length: 60 }, (_, i) => `Fail${i}`);
      const uuids = await seedPlayers(url, names, PW);
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
