// The admin page's data (src/console/data.ts), one set of cases run against each backend: SQLite,
// in memory, and PostgreSQL under `npm run test:postgres` (test/helpers/test-db.ts). On SQLite,
// also that the searches read a range of an index, never a scan of the players, and the count of
// locked players the index of the locked ones.
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { findQuery, LOCKED_COUNT_QUERY, openConsoleData, type ConsoleData } from '../../src/console/data.ts';
import { throttledNames } from '../../src/console/throttled.ts';
import { countLogins } from '../../src/console/logins.ts';
import type { AnsweredRequest } from '../../src/http/app.ts';
import { FREE_LOGIN_FAILURES, NAME_FAILURE_CEILING, THROTTLE_MAX_MS } from '../../src/limits.ts';
import { createMemoryStore, MEMORY_DB } from '../../src/memory/store.ts';
import { isPostgresUrl } from '../../src/postgres/url.ts';
import { openPostgresStore } from '../../src/postgres/connect.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store, User } from '../../src/store/store.ts';
import { tempDir } from '../helpers/process.ts';
import { retriedOnConnectTimeout } from '../helpers/retry-connect.ts';
import { testDb } from '../helpers/test-db.ts';

const tmp = tempDir();
const fileDb = await testDb(tmp.dir, 'console.db');
after(() => tmp.cleanup());

const user = (name: string, id: string): User => ({
  id, name, passwordHash: 'x', skinUrl: null, skinHash: null, capeUrl: null, capeHash: null, isAlex: false, createdAt: 1, lastLoginAt: null, lockedAt: null, lockReason: null,
});
const PLAYERS = [
  user('Alpha', '0000aaaa-0000-4000-8000-000000000001'),
  user('alpine', '0000aaaa-0000-4000-8000-000000000002'),
  user('Alps', '0000aaab-0000-4000-8000-000000000003'),
  user('al_x', '0000aaff-0000-4000-8000-000000000004'),
  user('Beta', '9fff0000-0000-4000-8000-000000000005'),
  user('Alb', 'a0000000-0000-4000-8000-000000000006'),
];

async function open(db: string): Promise<Store> {
  if (db === MEMORY_DB) return createMemoryStore();
  return isPostgresUrl(db) ? openPostgresStore(db, {}, { serving: false }) : openSqliteStore(db);
}

for (const db of [fileDb, MEMORY_DB]) {
  describe(`the admin page's data on ${db === MEMORY_DB ? 'memory' : isPostgresUrl(db) ? 'PostgreSQL' : 'SQLite'}`, () => {
    let store: Store;
    let data: ConsoleData;
    test('opens beside the store', async () => {
      store = await retriedOnConnectTimeout(() => open(db));
      assert.deepEqual(await retriedOnConnectTimeout(() => store.createUsers(PLAYERS, 'always')), PLAYERS.map(() => 'created'));
      data = await retriedOnConnectTimeout(() => openConsoleData(db, store, {}));
    });

    test('finds players by the start of their name, in any case, a page at a time', async () => {
      const first = await data.findByName('al', '', 3);
      assert.deepEqual(first.map((p) => p.name), ['al_x', 'Alb', 'Alpha']);
      const rest = await data.findByName('al', 'alpha', 3);
      assert.deepEqual(rest.map((p) => p.name), ['alpine', 'Alps']);
      // A page's start that is no key of the prefix's starts at the prefix: nothing outside it is listed.
      assert.deepEqual((await data.findByName('alp', 'a', 10)).map((p) => p.name), ['Alpha', 'alpine', 'Alps']);
      assert.deepEqual((await data.findByName('alp', 'alps', 10)).map((p) => p.name), []);
      assert.deepEqual((await data.findByName('alp', '', 10)).map((p) => p.name), ['Alpha', 'alpine', 'Alps']);
      assert.deepEqual(await data.findByName('zz', '', 10), []);
      assert.equal((await data.findByName('', '', 100)).length, PLAYERS.length);
    });

    test('finds players by the start of their UUID, a page at a time', async () => {
      assert.deepEqual((await data.findById('0000aaaa-', '', 10)).map((p) => p.name), ['Alpha', 'alpine']);
      assert.deepEqual((await data.findById('0000aa', '', 10)).map((p) => p.name), ['Alpha', 'alpine', 'Alps', 'al_x']);
      assert.deepEqual((await data.findById('0000aa', PLAYERS[1]!.id, 10)).map((p) => p.name), ['Alps', 'al_x']);
      assert.deepEqual((await data.findById('9', '', 10)).map((p) => p.name), ['Beta']);
      assert.deepEqual((await data.findById('0000aaf', '', 10)).map((p) => p.name), ['al_x']);
    });

    test('counts locked players, and says a found one is locked', async () => {
      assert.equal(await data.countLocked(), 0);
      await store.setLock(PLAYERS[4]!.id, { at: Date.now(), reason: null });
      assert.equal(await data.countLocked(), 1);
      assert.deepEqual(await data.findByName('beta', '', 1), [{ id: PLAYERS[4]!.id, name: 'Beta', locked: true }]);
    });

    test('adds logins a minute and sums them since a time', async () => {
      await data.addLogins(60_000, { ok: 2, failed: 1 });
      await data.addLogins(60_000, { ok: 1, failed: 0 });
      await data.addLogins(120_000, { ok: 0, failed: 4 });
      assert.deepEqual(await data.logins(0), { ok: 3, failed: 5 });
      assert.deepEqual(await data.logins(120_000), { ok: 0, failed: 4 });
    });

    test("keeps the audit trail, a player's newest entries first", async () => {
      const id = PLAYERS[0]!.id;
      await data.audit({ at: 1, admin: 'Boss', action: 'lock', playerId: id, playerName: 'Alpha', detail: 'why' });
      await data.audit({ at: 2, admin: 'Boss', action: 'unlock', playerId: id, playerName: 'Alpha', detail: '' });
      await data.audit({ at: 3, admin: 'Boss', action: 'lock', playerId: PLAYERS[1]!.id, playerName: 'alpine', detail: '' });
      const trail = await data.auditOf(id, 10);
      assert.deepEqual(trail.map((e) => [e.at, e.action, e.admin, e.playerName, e.detail]), [[2, 'unlock', 'Boss', 'Alpha', ''], [1, 'lock', 'Boss', 'Alpha', 'why']]);
      assert.equal((await data.auditOf(id, 1)).length, 1);
    });

    test("counts the names the throttle holds now, by its own rule (null in memory, which cannot read them)", async () => {
      const now = Date.now();
      const rows: [string, number, number][] = [
        ['victim', NAME_FAILURE_CEILING, now], // past the name's ceiling: held for everyone
        ['bob 10.0.0.1', FREE_LOGIN_FAILURES + 1, now], // one client of bob's held
        ['bob', FREE_LOGIN_FAILURES + 1, now], // under the ceiling: not held for all
        ['carol', FREE_LOGIN_FAILURES, now], // under the ceiling
        ['dave ?', 40, now], // checks of a held-back name, not failures
        ['erin 10.0.0.2', FREE_LOGIN_FAILURES + 2, now - THROTTLE_MAX_MS - 1], // long since past
      ];
      for (const [key, failures, lastAt] of rows) await store.updateLoginFailures([key], 0, () => [{ failures, lastAt }]);
      assert.equal(await throttledNames(data, now), db === MEMORY_DB ? null : 2);
    });

    test('closes', async () => {
      await data.close();
      await store.close();
    });
  });
}

/** Every search query: by name and by UUID, a first page and a later one. */
const SEARCHES = [['name_key', '>='], ['name_key', '>'], ['id', '>='], ['id', '>']] as const;

test('on SQLite, the searches read a range of an index, never a scan of the players', { skip: isPostgresUrl(fileDb) }, () => {
  const db = new DatabaseSync(fileDb, { readOnly: true });
  try {
    for (const query of SEARCHES.map(([column, op]) => findQuery(column, op, () => '?'))) {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${query}`).all('a', 'b', 20).map((r) => String(r.detail));
      assert.ok(plan.some((d) => /^SEARCH users USING (COVERING )?INDEX \S+ \(\w+>\? AND \w+<\?\)/.test(d)), plan.join('\n'));
      assert.ok(!plan.some((d) => /SCAN/.test(d)), plan.join('\n'));
    }
    // The dashboard's count of locked players reads the index of the locked ones alone.
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${LOCKED_COUNT_QUERY}`).all().map((r) => String(r.detail));
    assert.deepEqual(plan, ['SEARCH users USING COVERING INDEX console_locked_users (locked_at>?)']);
  } finally {
    db.close();
  }
});

test('login counts come from the answered logins of /auth, the account page and the Yggdrasil API, a minute at a time', async () => {
  const added: [number, { ok: number; failed: number }][] = [];
  const data = { addLogins: async (minute: number, counts: { ok: number; failed: number }) => void added.push([minute, counts]) } as unknown as ConsoleData;
  const counter = countLogins(data, (err) => assert.fail(String(err)), () => 90_000);
  const answered = (route: string, status: number, outcome?: string): AnsweredRequest => ({ route, status, outcome, seconds: 0, method: 'POST', path: route, client: '' });
  counter.observe(answered('/auth', 200, 'ok'));
  counter.observe(answered('/auth', 401, 'bad_credentials'));
  counter.observe(answered('/auth', 403, 'locked'));
  counter.observe(answered('/auth', 429, 'throttled')); // never checked: neither
  counter.observe(answered('/account/login', 200));
  counter.observe(answered('/account/login', 401));
  counter.observe(answered('/account/login', 400)); // malformed: neither
  counter.observe(answered('/yggdrasil/authserver/authenticate', 200));
  counter.observe(answered('/join', 200, 'ok')); // no login
  await counter.stop();
  assert.deepEqual(added, [[60_000, { ok: 3, failed: 3 }]]);
});

test('on PostgreSQL, the searches can read a range of an index (a table this small is read whole when scanning is allowed)', { skip: !isPostgresUrl(fileDb) }, async () => {
  const sql = (await import('postgres')).default(fileDb, { max: 1, onnotice: () => {} });
  try {
    await sql.begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      for (const [column, op] of SEARCHES) {
        const literal = findQuery(column, op, (n) => ["'a'", "'b'", '20'][n - 1]!);
        const plan = (await tx.unsafe(`EXPLAIN ${literal}`)).map((r) => String(r['QUERY PLAN']));
        assert.match(plan.join('\n'), /Index (Only )?Scan using \w+ on users[\s\S]*Index Cond: \(\(\w+ >=? 'a'::text\) AND \(\w+ < 'b'::text\)/, plan.join('\n'));
      }
      const locked = (await tx.unsafe(`EXPLAIN ${LOCKED_COUNT_QUERY}`)).map((r) => String(r['QUERY PLAN']));
      assert.match(locked.join('\n'), /Index Only Scan using console_locked_users on users|Bitmap Index Scan on console_locked_users/, locked.join('\n'));
    });
  } finally {
    await sql.end();
  }
});
