import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAddressLimit } from '../../src/http/address-limit.ts';

test('allows N calls an address a minute, then says how long to wait; addresses are apart', () => {
  const limit = createAddressLimit(2);
  assert.deepEqual([limit('a', 0), limit('a', 1000), limit('a', 15_000)], [0, 0, 45]);
  assert.equal(limit('b', 15_000), 0, 'another address has its own count');
  assert.equal(limit('a', 59_999), 1);
  assert.equal(limit('a', 60_000), 0, 'a new minute');
});
