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

test('a window opened at a later moment than the call counts from that moment; a call that came before it is in it', () => {
  const { take } = createWindowLimit(1, 1000);
  // Came at 0, done (the window opened) at 700.
  assert.equal(take('a', 0, 700), 0);
  assert.equal(take('a', 300, 900), 2, 'came before the window opened: in it, refused (1.4 s to its end)');
  assert.equal(take('a', 1600, 1800), 1, 'came 900 ms after it opened');
  assert.equal(take('a', 1700, 1750), 0, 'came a second after it opened: a new window');
  // The limit a call is counted against may be given with it.
  assert.equal(take('b', 0, 0, 2), 0);
  assert.equal(take('b', 1, 1, 2), 0);
  assert.equal(take('b', 2, 2, 2), 1);
});
