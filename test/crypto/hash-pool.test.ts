import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHashPool, type HashSlot, type NoPlace } from '../../src/crypto/hash-pool.ts';

const slot = (got: HashSlot | NoPlace): HashSlot => {
  assert.equal(typeof got, 'object', `a place, not ${String(got)}`);
  return got as HashSlot;
};

test('runs up to the concurrency at once, queues up to the queue size, refuses the rest at once', async () => {
  const pool = createHashPool(2, 1);
  const a = slot(pool.reserve());
  const b = slot(pool.reserve());
  const c = slot(pool.reserve());
  assert.equal(pool.reserve(), 'busy', 'running and queue are full');
  assert.deepEqual([pool.running, pool.waiting], [2, 1]);
  let cStarted = false;
  void c.ready.then(() => (cStarted = true));
  assert.equal(await a.ready, true);
  await b.ready;
  await Promise.resolve();
  assert.equal(cStarted, false, 'the queued slot waits');
  a.release();
  assert.equal(await c.ready, true);
  assert.deepEqual([pool.running, pool.waiting], [2, 0], 'the freed slot went to the waiter');
  b.release();
  c.release();
  c.release(); // twice is harmless
  assert.deepEqual([pool.running, pool.waiting], [0, 0]);
});

test('a waiter that gives up leaves the queue without taking a slot', async () => {
  const pool = createHashPool(1, 2);
  const a = slot(pool.reserve());
  const b = slot(pool.reserve());
  const c = slot(pool.reserve());
  b.release(); // gave up while waiting (say, its caller left)
  assert.deepEqual([pool.running, pool.waiting], [1, 1]);
  a.release();
  await c.ready;
  assert.deepEqual([pool.running, pool.waiting], [1, 0]);
  c.release();
  assert.deepEqual([pool.running, pool.waiting], [0, 0]);
});

test('full: the address holding the most places gives its newest waiting one to a newcomer, and is itself refused', async () => {
  const pool = createHashPool(1, 4);
  const flood = [slot(pool.reserve('10.0.0.1')), slot(pool.reserve('10.0.0.1')), slot(pool.reserve('10.0.0.1')), slot(pool.reserve('10.0.0.1'))];
  const other = slot(pool.reserve('10.0.0.2'));
  assert.equal(pool.reserve('10.0.0.1'), 'share', 'the biggest holder gets no more');
  const newcomer = slot(pool.reserve('10.0.0.3')); // a newcomer finds a place
  assert.equal(await flood[3]!.ready, 'share', "the flood's newest waiting place went to the newcomer");
  assert.deepEqual([pool.running, pool.waiting], [1, 4]);
  // Now 10.0.0.1 holds 3, the others 1 each: 10.0.0.2 may still take one of its places (3 >= 1 + 2).
  slot(pool.reserve('10.0.0.2'));
  assert.equal(await flood[2]!.ready, 'share');
  // Two each for 10.0.0.1 and 10.0.0.2, one for 10.0.0.3: no one holds two more than it.
  assert.equal(pool.reserve('10.0.0.3'), 'share', 'holding a place, refused as a share');
  const late = [slot(pool.reserve('10.0.0.4')), slot(pool.reserve('10.0.0.5'))]; // each takes from a holder of two
  assert.equal(pool.reserve('10.0.0.6'), 'busy', 'one place each now: holding none and no one to take from, busy');
  assert.equal(pool.reserve(), 'busy', 'a relay (no address) never takes a place from anyone');
  assert.deepEqual([pool.running, pool.waiting], [1, 4]);
  for (const s of [...flood, other, newcomer, ...late]) s.release();
  assert.deepEqual([pool.running, pool.waiting], [0, 0]);
});

test("a relay's places (no address) are never taken by direct callers", async () => {
  const pool = createHashPool(1, 2);
  const relayed = [slot(pool.reserve()), slot(pool.reserve()), slot(pool.reserve())];
  assert.equal(pool.reserve('10.0.0.1'), 'busy');
  for (const s of relayed) s.release();
});

test('one check of a name at a time: a second turn waits for the first to be over; past the name queue, none', async () => {
  const pool = createHashPool(4, 4, 2);
  const first = (await pool.turn('alice'))!;
  let secondIn = false;
  const second = pool.turn('alice')!.then((over) => ((secondIn = true), over));
  const third = pool.turn('alice')!;
  assert.equal(pool.turn('alice'), undefined, 'two wait already');
  const other = (await pool.turn('bob'))!; // another name is not held up
  await new Promise((r) => setImmediate(r));
  assert.equal(secondIn, false);
  first();
  (await second)!();
  (await third)!();
  other();
  (await pool.turn('alice'))!(); // nothing left waiting
});

test("a name's line serves the login of the highest standing first; full, its newest of the lowest gives its place up to a more likely one", async () => {
  const pool = createHashPool(4, 4, 2);
  const first = (await pool.turn('alice', 0))!;
  const order: string[] = [];
  const waiting = (label: string, standing: 0 | 1 | 2) => pool.turn('alice', standing)!.then((over) => (order.push(label), over));
  const guess = waiting('guess', 0);
  const fresh = waiting('fresh', 1);
  assert.equal(pool.turn('alice', 0), undefined, 'full, and no one less likely waits');
  const known = waiting('known', 2);
  assert.equal(await guess, undefined, "the guess gave its place up");
  first();
  (await known)!();
  (await fresh)!();
  assert.deepEqual(order, ['guess', 'known', 'fresh']);
});

test("a more likely login waiting for a name's turn lends its standing to the place of the login that has the turn", async () => {
  const pool = createHashPool(1, 4, 4);
  const running = slot(pool.reserve(undefined, 0));
  const bob = slot(pool.reserve(undefined, 0, 'bob'));
  assert.ok(await pool.turn('alice', 0), "alice's turn");
  const alice = slot(pool.reserve(undefined, 0, 'alice')); // has alice's turn, waits behind bob
  void pool.turn('alice', 2); // a login whose launcher logged in before waits for that turn
  const order: string[] = [];
  void alice.ready.then(() => order.push('alice'));
  void bob.ready.then(() => order.push('bob'));
  running.release();
  await alice.ready;
  alice.release();
  await bob.ready;
  bob.release();
  assert.deepEqual(order, ['alice', 'bob'], "alice's place went first, on the standing lent to it");
});

test('the time of a recent check is drawn from the last ones, from its start to its release: queueing and untimed slots are left out', async () => {
  const pool = createHashPool(1, 1);
  assert.equal(pool.recentCheckMs(), undefined, 'none before the first check');
  const a = slot(pool.reserve());
  const b = slot(pool.reserve()); // waits behind a: its queueing is not its check's time
  await new Promise((r) => setTimeout(r, 30));
  a.release();
  await b.ready;
  b.release();
  const untimed = slot(pool.reserve());
  await untimed.ready;
  await new Promise((r) => setTimeout(r, 200));
  untimed.release(false);
  const drawn = new Set(Array.from({ length: 50 }, () => pool.recentCheckMs()));
  assert.ok([...drawn].every((ms) => ms !== undefined && ms < 100), [...drawn].join());
  assert.ok([...drawn].some((ms) => ms! >= 25), `a's 30 ms is among them: ${[...drawn].join()}`);
});

test('full: the login least likely to be real gives its newest waiting place to a newcomer more likely to be, and a freed slot goes to the most likely first', async () => {
  const pool = createHashPool(1, 3);
  // Relays all (no holder): only standing tells their logins apart.
  const running = slot(pool.reserve(undefined, 0));
  const [flood1, flood2, fresh] = [slot(pool.reserve(undefined, 0)), slot(pool.reserve(undefined, 0)), slot(pool.reserve(undefined, 1))];
  assert.equal(pool.reserve(undefined, 0), 'busy', 'as unlikely as the least likely waiting: refused');
  const known = slot(pool.reserve(undefined, 2));
  assert.equal(await flood2.ready, 'busy', 'the newest of the least likely gave its place up');
  const another = slot(pool.reserve(undefined, 2));
  assert.equal(await flood1.ready, 'busy');
  assert.equal(pool.reserve(undefined, 1), 'busy', 'nothing waits that is less likely than it');
  const order: string[] = [];
  for (const [name, s] of [['fresh', fresh], ['known', known], ['another', another]] as const) void s.ready.then(() => order.push(name));
  running.release();
  await known.ready;
  known.release();
  await another.ready;
  another.release();
  await fresh.ready;
  fresh.release();
  assert.deepEqual(order, ['known', 'another', 'fresh'], 'the most likely first, then in turn');
});

// The flood holds four places (one running, three waiting) from one address, or as relays,
// which count as one caller; the player, holding one, is served next all the same.
for (const [flooder, who] of [['10.0.0.1', 'a direct address'], [undefined, 'relays']] as const) {
  test(`a freed slot goes to the waiting caller holding the fewest places, not to the first in line: a flood from ${who}`, async () => {
    const pool = createHashPool(1, 10);
    const flood = [1, 2, 3, 4].map(() => slot(pool.reserve(flooder)));
    const player = slot(pool.reserve('10.0.0.2'));
    let playerStarted = false;
    void player.ready.then(() => (playerStarted = true));
    flood[0]!.release();
    await Promise.resolve();
    assert.equal(playerStarted, true, `the player, holding one place, goes before ${who} holding three`);
    for (const s of [...flood, player]) s.release();
    assert.deepEqual([pool.running, pool.waiting], [0, 0]);
  });
}
