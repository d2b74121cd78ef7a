import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createWindowLimit } from '../../src/ops/window-limit.ts';

test('allows N calls a key a window, then says how long to wait; keys are apart', () => {
  const { take } = createWindowLimit(2, 60_000);
  assert.deepEqual([take('a', 0), take('a', 1000), take('a', 15_000)], [0, 0, 45]);
  assert.equal(take('b', 15_000), 0, 'another key has its own count');
  assert.equal(take('a', 59_999), 1);
  assert.equal(take('a', 60_000), 0, 'a new window');
});

test('a call given back leaves room for another; nothing to give back is no change', () => {
  const limit = createWindowLimit(1, 1000);
  assert.equal(limit.take('a', 0), 0);
  assert.equal(limit.take('a', 1), 1, 'refused calls are not counted');
  limit.giveBack('a');
  assert.equal(limit.take('a', 2), 0);
  limit.giveBack('nobody');
  limit.giveBack('a');
  limit.giveBack('a');
  assert.equal(limit.take('a', 3), 0, 'never below none');
  assert.equal(limit.take('a', 4), 1);
});
