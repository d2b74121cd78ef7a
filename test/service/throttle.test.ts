// The password-guessing throttle and the hash pool, against the in-memory store and a test clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultServiceOptions } from '../../src/cli/options.ts';
import { createService } from '../../src/service/service.ts';
import { throttledUntil } from '../../src/service/throttle.ts';
import { createMemoryStore } from '../../src/store/memory.ts';
import type { Store } from '../../src/store/store.ts';

/** A store that counts password-hash look-ups: each login that reaches scrypt reads the user first. */
function counting(store: Store): Store & { lookups: number } {
  const counted = Object.assign(Object.create(store) as Store, { lookups: 0 });
  counted.findUserByName = (name) => {
    counted.lookups++;
    return store.findUserByName(name);
  };
  return counted;
}

function setup(options = {}) {
  let now = 10_000_000;
  const store = counting(createMemoryStore());
  const service = createService(store, { ...defaultServiceOptions(), ...options }, () => now);
  return { store, service, advance: (ms: number) => (now += ms) };
}

test('the wait is 0 for 5 failures, then 1 s, doubling, at most 15 minutes', () => {
  assert.equal(throttledUntil({ failures: 4, lastAt: 100 }), 0);
  assert.equal(throttledUntil({ failures: 5, lastAt: 100 }), 1100);
  assert.equal(throttledUntil({ failures: 6, lastAt: 100 }), 2100);
  assert.equal(throttledUntil({ failures: 9, lastAt: 100 }), 16_100);
  assert.equal(throttledUntil({ failures: 40, lastAt: 100 }), 100 + 15 * 60 * 1000);
});

test('from the 6th attempt after 5 failures: 429 with the wait, and no password verified', async () => {
  const { store, service, advance } = setup();
  await service.addUser({ name: 'Alice', password: 'right-password' });
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  const verified = store.lookups;
  await assert.rejects(service.login('ALICE', 'right-password'), {
    kind: 'throttled',
    retryAfter: 1,
    message: 'Too many failed logins for this name; try again in 1 s',
  });
  assert.equal(store.lookups, verified, 'a throttled attempt reads no hash and computes none');
  advance(1000);
  await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'right-password'), { kind: 'throttled', retryAfter: 2 });
  advance(2000);
  await service.login('alice', 'right-password');
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' }, 'a success reset the count');
});

test('unknown names are throttled the same way, and a name forgotten after an hour starts again', async () => {
  const { service, advance } = setup();
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('Nobody', 'x'), { kind: 'unauthorized' });
  await assert.rejects(service.login('nobody', 'x'), { kind: 'throttled' });
  advance(60 * 60 * 1000 + 1);
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('nobody', 'x'), { kind: 'unauthorized' });
});

test('refusals over a limit do no work and count no failure', async () => {
  const { store, service } = setup();
  await service.addUser({ name: 'Alice', password: 'right-password' });
  const before = store.lookups;
  for (let i = 0; i < 10; i++) {
    await assert.rejects(service.login('alice', 'x'.repeat(257)), { kind: 'invalid', message: 'Field "password" is longer than 256 bytes' });
  }
  await assert.rejects(service.login('alice', '€'.repeat(86)), { kind: 'invalid' }, '258 bytes in 86 characters');
  // A lone surrogate would be hashed as U+FFFD, making "\ud800x" and "\udfffx" one password.
  await assert.rejects(service.login('alice', '\ud800x'), { kind: 'invalid', message: 'Field "password" is not well-formed Unicode' });
  await assert.rejects(service.addUser({ name: 'Bob', password: '\udfffx' }), { kind: 'invalid', message: 'The password is not well-formed Unicode' });
  await assert.rejects(service.hasJoined('alice', '\udfff'), { kind: 'invalid', message: 'Field "serverID" is not well-formed Unicode' });
  assert.equal(store.lookups, before);
  await service.login('alice', 'right-password');
});

test('parallel guesses once the wait is over: only one reaches the hash', async () => {
  const { store, service, advance } = setup();
  await service.addUser({ name: 'Alice', password: 'right-password' });
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  advance(1000);
  const before = store.lookups;
  // The first is counted as a failure before its hash is computed, so the other nine see it.
  const results = await Promise.allSettled(Array.from({ length: 10 }, () => service.login('alice', 'guess')));
  const kinds = results.map((r) => (r.status === 'rejected' ? (r.reason as { kind: string }).kind : 'ok')).sort();
  assert.deepEqual(kinds, ['throttled', 'throttled', 'throttled', 'throttled', 'throttled', 'throttled', 'throttled', 'throttled', 'throttled', 'unauthorized']);
  assert.equal(store.lookups, before + 1);
});

test('when every hash slot and queue place is taken, a login is refused at once with busy', async () => {
  const { service } = setup({ hashConcurrency: 1, hashQueue: 1 });
  await service.addUser({ name: 'Alice', password: 'right-password' });
  const first = service.login('alice', 'right-password');
  const second = service.login('alice', 'right-password');
  await assert.rejects(service.login('alice', 'right-password'), { kind: 'busy', retryAfter: 1, message: 'The server is busy; try again in a moment' });
  assert.deepEqual(service.hashLoad(), { running: 1, waiting: 1 });
  await Promise.all([first, second]);
  assert.deepEqual(service.hashLoad(), { running: 0, waiting: 0 });
});

test('a throttled name gets its 429 even while the pool is full, and a busy refusal counts no failure', async () => {
  const { service } = setup({ hashConcurrency: 1, hashQueue: 0 });
  await service.addUser({ name: 'Alice', password: 'right-password' });
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('nobody', 'x'), { kind: 'unauthorized' });
  const holding = service.login('alice', 'right-password');
  while (service.hashLoad().running === 0) await new Promise((r) => setImmediate(r));
  await assert.rejects(service.login('nobody', 'x'), { kind: 'throttled' });
  for (let i = 0; i < 8; i++) await assert.rejects(service.login('Alice', 'wrong'), { kind: 'busy' });
  await holding;
  for (let i = 0; i < 5; i++) await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' }, 'the busy refusals counted nothing');
  assert.deepEqual(service.hashLoad(), { running: 0, waiting: 0 });
});

// Rule: a login whose caller left while it waited for a hash slot gives the slot up unhashed
// (a restart's flood of logins that time out costs no scrypt work), and counts as an attempt.
test('a login whose caller left while it waited is dropped without hashing', async () => {
  const { store, service } = setup({ hashConcurrency: 1, hashQueue: 4 });
  await service.addUser({ name: 'Alice', password: 'right-password' });
  const before = store.lookups;
  const running = service.login('alice', 'right-password');
  const left = new AbortController();
  const waiting = service.login('alice', 'right-password', { callerLeft: left.signal });
  const staying = service.login('alice', 'right-password', { callerLeft: new AbortController().signal });
  assert.deepEqual(service.hashLoad(), { running: 1, waiting: 2 });
  left.abort();
  await assert.rejects(waiting, { kind: 'busy', message: 'The caller left before its login was checked' });
  await running;
  await staying;
  assert.equal(store.lookups, before + 2, 'the abandoned login read no hash and computed none');
  assert.deepEqual(service.hashLoad(), { running: 0, waiting: 0 });
});

// Rule: an abandoned login counts nothing toward the throttle: a launcher that times out and
// retries during a login flood must not throttle its own player.
test('abandoned logins do not count toward the throttle', async () => {
  const { service } = setup({ hashConcurrency: 1, hashQueue: 8 });
  await service.addUser({ name: 'Alice', password: 'right-password' });
  for (let i = 0; i < 4; i++) await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  const holding = service.login('bob', 'x');
  const left = new AbortController();
  const abandoned = service.login('alice', 'right-password', { callerLeft: left.signal });
  left.abort();
  await assert.rejects(holding, { kind: 'unauthorized' });
  await assert.rejects(abandoned, { kind: 'busy' });
  // 4 real failures only (5 are free): a 5th wrong password is checked, and only then the 6th throttled.
  await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  await assert.rejects(service.login('alice', 'wrong'), { kind: 'throttled' });
});
