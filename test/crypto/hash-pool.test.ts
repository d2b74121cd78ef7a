import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createHashPool } from '../../src/crypto/hash-pool.ts';

test('runs up to the concurrency at once, queues up to the queue size, refuses the rest at once', async () => {
  const pool = createHashPool(2, 1);
  const a = pool.reserve()!;
  const b = pool.reserve()!;
  const c = pool.reserve()!;
  assert.equal(pool.reserve(), undefined, 'running and queue are full');
  assert.deepEqual([pool.running, pool.waiting], [2, 1]);
  let cStarted = false;
  void c.ready.then(() => (cStarted = true));
  await a.ready;
  await b.ready;
  await Promise.resolve();
  assert.equal(cStarted, false, 'the queued slot waits');
  a.release();
  await c.ready;
  assert.deepEqual([pool.running, pool.waiting], [2, 0], 'the freed slot went to the waiter');
  b.release();
  c.release();
  c.release(); // twice is harmless
  assert.deepEqual([pool.running, pool.waiting], [0, 0]);
});

test('a waiter that gives up leaves the queue without taking a slot', async () => {
  const pool = createHashPool(1, 2);
  const a = pool.reserve()!;
  const b = pool.reserve()!;
  const c = pool.reserve()!;
  b.release(); // gave up while waiting (say, its login was throttled)
  assert.deepEqual([pool.running, pool.waiting], [1, 1]);
  a.release();
  await c.ready;
  assert.deepEqual([pool.running, pool.waiting], [1, 0]);
  c.release();
  assert.deepEqual([pool.running, pool.waiting], [0, 0]);
});
