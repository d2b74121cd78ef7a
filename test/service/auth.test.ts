// The login rules against the in-memory store, with a clock the test moves.
import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { randomBytes, scryptSync } from 'node:crypto';
import { SCRYPT_PARAMS, verifyPassword } from '../../src/crypto/password.ts';
import type { ForeignHashes } from '../../src/service/context.ts';
import { defaultServiceOptions } from '../../src/cli/options.ts';
import { createService } from '../../src/service/service.ts';
import { createMemoryStore } from '../../src/memory/store.ts';

const OPTIONS = { ...defaultServiceOptions(), tokenTtlSeconds: 60 };

function setup() {
  let now = 1_000_000;
  const store = createMemoryStore();
  const service = createService(store, { ...OPTIONS }, () => now);
  return { store, service, advance: (ms: number) => (now += ms) };
}

test('a login hands out a token that joins until the token TTL has passed', async () => {
  const { service, advance } = setup();
  const alice = await service.addUser({ name: 'Alice', password: 'open-sesame' });
  const { accessToken } = await service.login('alice', 'open-sesame');
  advance(59_999);
  assert.equal(await service.join(accessToken, alice.id, 's'), true);
  advance(1);
  assert.equal(await service.join(accessToken, alice.id, 's'), false);
});

test('a join is found until the join TTL has passed', async () => {
  const { service, advance } = setup();
  const alice = await service.addUser({ name: 'Alice', password: 'open-sesame' });
  const { accessToken } = await service.login('Alice', 'open-sesame');
  await service.join(accessToken, alice.id, 's');
  advance(29_999);
  assert.deepEqual(await service.hasJoined('ALICE', 's'), { userUUID: alice.id });
  advance(1);
  await assert.rejects(async () => service.hasJoined('alice', 's'), { kind: 'not_found' });
});

test('a hash with old parameters is replaced on the next successful login only', async () => {
  const { store, service } = setup();
  const alice = await service.addUser({ name: 'Alice', password: 'open-sesame' });
  // "open-sesame" as a release with N=2^12, p=1 would have stored it.
  const salt = randomBytes(16);
  const old = `scrypt$4096$8$1$${salt.toString('base64')}$${scryptSync('open-sesame', salt, 32, { N: 4096, r: 8, p: 1 }).toString('base64')}`;
  await store.setPasswordHash(alice.id, old, false);
  await assert.rejects(service.login('alice', 'wrong'), { kind: 'unauthorized' });
  assert.equal((await store.findUserById(alice.id))!.passwordHash, old, 'a failed login changes nothing');
  await service.login('alice', 'open-sesame');
  const { N, r, p } = SCRYPT_PARAMS;
  assert.ok((await store.findUserById(alice.id))!.passwordHash.startsWith(`scrypt$${N}$${r}$${p}$`));
  await service.login('alice', 'open-sesame');
});

test('an unknown login and a wrong password are one refusal', async () => {
  const { service } = setup();
  await service.addUser({ name: 'Alice', password: 'open-sesame' });
  for (const [login, password] of [['alice', 'nope'], ['nobody', 'nope']] as const) {
    await assert.rejects(service.login(login, password), { name: 'ServiceError', kind: 'unauthorized', message: 'Wrong login or password' });
  }
});

test('a name outside the rule finds no one, even when toLowerCase() folds it onto a player', async () => {
  const { service } = setup();
  const kate = await service.addUser({ name: 'kate', password: 'open-sesame' });
  const { accessToken } = await service.login('KATE', 'open-sesame');
  await service.join(accessToken, kate.id, 's');
  const kelvin = '\u212Aate'; // KELVIN SIGN: "\u212Aate".toLowerCase() === "kate"
  await assert.rejects(service.login(kelvin, 'open-sesame'), { kind: 'invalid', message: 'Field "login" is not a valid player name' });
  await assert.rejects(async () => service.hasJoined(kelvin, 's'), { kind: 'invalid', message: 'Field "username" is not a valid player name' });
  assert.deepEqual(await service.profiles([kelvin]), { found: [], ignored: 1 });
});

test('an unknown login costs a password verification, like a wrong password', async () => {
  const { service } = setup();
  await service.addUser({ name: 'Alice', password: 'open-sesame' });
  const median = async (login: string): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const start = performance.now();
      await service.login(login, 'wrong').catch(() => undefined);
      times.push(performance.now() - start);
    }
    return times.sort((a, b) => a - b)[2]!;
  };
  const [wrong, unknown] = [await median('alice'), await median('nobody')];
  // Without waiting a check's time an unknown login takes well under a millisecond against ~10+ ms;
  // the bound is loose on purpose (this is not a benchmark; bench/ measures it closely).
  assert.ok(unknown > wrong / 2, `unknown ${unknown.toFixed(1)} ms, wrong password ${wrong.toFixed(1)} ms`);
});

// Rule: a lock or a password change that lands while a login's password is being checked wins:
// the login gets no token (403 for the lock, 401 for the changed password).
test('a lock or a new password landing during the hash check refuses the login', async () => {
  for (const [change, kind, message] of [
    ['lock', 'forbidden', 'This account is locked: mid-login'],
    ['passwd', 'unauthorized', 'Wrong login or password'],
  ] as const) {
    const store = createMemoryStore();
    const service = createService(store, { ...OPTIONS });
    const alice = await service.addUser({ name: 'Alice', password: 'open-sesame' });
    const recordLogin = store.recordLogin.bind(store);
    // The change lands just before the login would store its token.
    store.recordLogin = async (...args) => {
      if (change === 'lock') await service.lockUser('Alice', 'mid-login');
      else await service.changePassword('Alice', 'a-new-password');
      return recordLogin(...args);
    };
    await assert.rejects(service.login('alice', 'open-sesame'), { kind, message }, change);
    store.recordLogin = recordLogin;
    assert.equal((await store.findUserById(alice.id))!.lastLoginAt, null, `${change}: no login was recorded`);
  }
});

/** A foreign format for the tests: "plain$" and the password; unknown when it lacks the prefix. */
const plainHashes: ForeignHashes = {
  recognize: (hash) => (hash.startsWith('plain$') ? { stored: hash } : { problem: 'unknown hash format' }),
  verify: async (password, stored) => stored === `plain$${password}`,
};

/** How many scrypt calls `work` makes (node:crypto's scrypt, spied on for every importer of it). */
async function scryptCalls(work: () => Promise<unknown>): Promise<number> {
  const crypto = createRequire(import.meta.url)('node:crypto') as typeof import('node:crypto');
  const spy = mock.method(crypto, 'scrypt');
  syncBuiltinESMExports();
  try {
    await work().catch(() => {});
    return spy.mock.callCount();
  } finally {
    spy.mock.restore();
    syncBuiltinESMExports();
  }
}

test('an imported hash: checked by the plugged-in format, replaced by scrypt at the first login; a wrong password costs no scrypt', async () => {
  let now = 1_000_000;
  const store = createMemoryStore();
  const service = createService(store, { ...OPTIONS, foreignHashes: plainHashes }, () => now++);
  const alice = await service.addUser({ name: 'Alice', hash: 'plain$old-password' });
  assert.equal((await store.findUserById(alice.id))!.passwordHash, 'plain$old-password');
  await assert.rejects(service.addUser({ name: 'Bob', hash: 'md5:abc' }), { kind: 'invalid', message: 'Field "hash": unknown hash format' });
  // Wrong: 401, the hash stays, and no scrypt: the failed-login floor, not a scrypt, gives it a native one's time.
  assert.equal(await scryptCalls(() => service.login('alice', 'wrong-password')), 0);
  await assert.rejects(service.login('alice', 'wrong-password'), { kind: 'unauthorized' });
  assert.equal((await store.findUserById(alice.id))!.passwordHash, 'plain$old-password');
  assert.equal(await scryptCalls(() => service.login('alice', 'old-password')), 1);
  const stored = (await store.findUserById(alice.id))!.passwordHash;
  assert.match(stored, /^scrypt\$/);
  assert.equal(await verifyPassword('old-password', stored), true);
  assert.ok((await service.login('ALICE', 'old-password')).accessToken);
  await assert.rejects(service.login('alice', 'wrong-password'), { kind: 'unauthorized' });
});

test('a start computes no hash; unknown names before any check wait for one hash, made once, as long as it took; then they hash nothing', async () => {
  let service!: ReturnType<typeof createService>;
  assert.equal(await scryptCalls(async () => (service = createService(createMemoryStore(), OPTIONS))), 0);
  // Three at once, the process's first logins: one hash for all (a flood of them at a start costs one).
  const first = await scryptCalls(() => Promise.all(['nobody', 'no-one', 'none'].map((name) => assert.rejects(service.login(name, 'wrong'), { kind: 'unauthorized' }))));
  assert.equal(first, 1);
  assert.equal(await scryptCalls(() => service.login('nobody-else', 'wrong')), 0, 'a check was timed: it waits as long, hashing nothing');
  await service.addUser({ name: 'Alice', password: 'open-sesame' });
  assert.equal(await scryptCalls(() => service.login('alice', 'wrong')), 1, 'a known name is checked');
  // A fresh service whose first login is a known name's: that check is timed, and no other hash is ever made.
  const other = createService(createMemoryStore(), OPTIONS);
  await other.addUser({ name: 'Bob', password: 'open-sesame' });
  assert.equal(await scryptCalls(() => other.login('bob', 'wrong')), 1);
  assert.equal(await scryptCalls(() => other.login('nobody', 'wrong')), 0);
});

test('without the importer plugged in, a foreign hash is refused at creation', async () => {
  const service = createService(createMemoryStore(), { ...OPTIONS, foreignHashes: undefined });
  await assert.rejects(service.addUser({ name: 'Bob', hash: 'plain$x' }), { kind: 'invalid', message: 'Field "hash": no foreign hash format is known here' });
});

test("an imported player's check holds a place in the hash pool, as a scrypt does: a full pool is 503 busy", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const slow: ForeignHashes = { ...plainHashes, verify: async (password, stored) => (await held, stored === `plain$${password}`) };
  const store = createMemoryStore();
  const service = createService(store, { ...OPTIONS, hashConcurrency: 1, hashQueue: 0, foreignHashes: slow });
  await service.addUser({ name: 'Alice', hash: 'plain$old-password' });
  await service.addUser({ name: 'Bob', hash: 'plain$bob-password' });
  const first = service.login('alice', 'old-password');
  await assert.rejects(service.login('bob', 'bob-password'), { kind: 'busy' });
  release();
  assert.ok((await first).accessToken);
  assert.ok((await service.login('bob', 'bob-password')).accessToken, 'the place is given back');
});

test('a refresh replaces a live token; one the store cannot complete leaves the old token, and of two at once one wins', async () => {
  const { store, service } = setup();
  await service.addUser({ name: 'Alice', password: 'open-sesame' });
  const { accessToken } = await service.login('Alice', 'open-sesame');
  const client = { id: '', shared: false };
  // The store fails as the new token is stored: the old one still works.
  const recordLogin = mock.method(store, 'recordLogin', async () => {
    throw new Error('the database went away');
  });
  await assert.rejects(service.replaceToken(accessToken, client), /went away/);
  recordLogin.mock.restore();
  assert.equal((await service.userByToken(accessToken))?.name, 'Alice');
  // Two at once with the same token: one new token lives, the other refresh gets none.
  const both = await Promise.all([service.replaceToken(accessToken, client, '.a'), service.replaceToken(accessToken, client, '.b')]);
  const won = both.filter((r) => r !== undefined);
  assert.equal(won.length, 1);
  assert.equal(await service.userByToken(accessToken), undefined);
  assert.equal((await service.userByToken(won[0]!.accessToken))?.name, 'Alice');
  assert.equal(await service.replaceToken('no-such-token', client), undefined);
});
