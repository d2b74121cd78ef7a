// The store's contract: every implementation runs this same suite (memory.test.ts, sqlite.test.ts).
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { Invite, LoginFailures, Player, Store, User } from '../../src/store/store.ts';

export function user(name: string, id: string, extra: Partial<User> = {}): User {
  return {
    id,
    name,
    passwordHash: HASH,
    skinUrl: null,
    skinHash: null,
    capeUrl: null,
    capeHash: null,
    isAlex: false,
    createdAt: 500,
    lastLoginAt: null,
    lockedAt: null,
    lockReason: null,
    ...extra,
  };
}

/** The fields of a Player, and no more (an implementation may return more). */
const player = (u: Player | undefined): Player | undefined =>
  u && { id: u.id, name: u.name, skinUrl: u.skinUrl, skinHash: u.skinHash, capeUrl: u.capeUrl, capeHash: u.capeHash, isAlex: u.isAlex };

/** The hash every test user has (see user()): what a login verified. */
const HASH = 'scrypt$1$1$1$AA==$AA==';
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';
const C = '00000000-0000-4000-8000-00000000000c';

const invite = (digest: string, usesLeft: number, createdAt: number, expiresAt: number): Invite => ({ digest, usesLeft, createdAt, expiresAt });

export function storeCases(label: string, open: () => Promise<Store>): void {
  describe(`store contract: ${label}`, () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    test('creates users, unique by name in any case and by id', async () => {
      assert.equal(await store.createUser(user('Alice', A)), 'created');
      assert.equal(await store.createUser(user('ALICE', B)), 'name_taken');
      assert.equal(await store.createUser(user('Bob', A)), 'id_taken');
      assert.equal(await store.countUsers(), 1);
      assert.deepEqual(await store.findUserByName('aLICE'), user('Alice', A));
      assert.deepEqual(await store.findUserById(A), user('Alice', A));
      assert.equal(await store.findUserById(B), undefined);
      assert.deepEqual(player(await store.findPlayer(A)), player(user('Alice', A)));
      assert.equal(await store.findPlayer(B), undefined);
      assert.equal(await store.findUserByName('Bob'), undefined);
    });

    test('lists users by name and finds several names at once', async () => {
      await store.createUser(user('bob', B));
      await store.createUser(user('Alice', A));
      assert.deepEqual((await store.listUsers()).map((u) => u.name), ['Alice', 'bob']);
      const found = await store.findUsersByNames(['ALICE', 'alice', 'BOB', 'carol']);
      assert.deepEqual(found.map((u) => u.name).sort(), ['Alice', 'bob']);
      assert.deepEqual(await store.findUsersByNames([]), []);
    });

    test('sets and clears textures field by field', async () => {
      await store.createUser(user('Alice', A));
      await store.setTextures(A, { skinUrl: 'https://s/1.png', isAlex: true });
      await store.setTextures(A, { capeUrl: 'https://s/c.png' });
      assert.deepEqual(await store.findUserById(A), user('Alice', A, { skinUrl: 'https://s/1.png', capeUrl: 'https://s/c.png', isAlex: true }));
      assert.deepEqual(player(await store.findPlayer(A)), player(user('Alice', A, { skinUrl: 'https://s/1.png', capeUrl: 'https://s/c.png', isAlex: true })));
      await store.setTextures(A, { skinUrl: null, isAlex: false });
      assert.deepEqual(await store.findUserById(A), user('Alice', A, { capeUrl: 'https://s/c.png' }));
      await store.setTextures(A, { capeUrl: null });
      assert.deepEqual(await store.findUserById(A), user('Alice', A));
    });

    test('lists the hosts of textures kept on other sites, each once', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('bob', B));
      assert.deepEqual(await store.textureHosts(), []);
      await store.setTextures(A, { skinUrl: 'https://skins.example.net/a.png', capeUrl: 'https://user@capes.example.org:8443/c/a.png' });
      await store.setTextures(B, { skinUrl: 'https://skins.example.net/b.png' });
      assert.deepEqual((await store.textureHosts()).sort(), ['skins.example.net', 'user@capes.example.org:8443']);
      await store.setTextures(A, { skinUrl: null, capeUrl: null });
      await store.setTextures(B, { skinUrl: null });
      assert.deepEqual(await store.textureHosts(), []);
    });

    test('a token records joins for its owner only, until it expires', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      await store.recordLogin(A, HASH, 'd1', 1000, 2000, 16);
      assert.equal(await store.recordJoin('d1', B, 'srv', 1500), false, 'foreign token');
      assert.equal(await store.recordJoin('nope', A, 'srv', 1500), false, 'unknown token');
      assert.equal(await store.findJoin('alice', 'srv', 0), undefined, 'a refused join records nothing');
      assert.equal(await store.recordJoin('d1', A, 'srv', 1999), true);
      assert.equal(await store.recordJoin('d1', A, 'srv', 2000), false, 'expired at expiresAt');
    });

    test('a join kept with its address is found with that address only; one without matches none', async () => {
      await store.createUser(user('Alice', A));
      await store.recordLogin(A, HASH, 'd1', 1000, 10_000, 16);
      assert.equal(await store.recordJoin('d1', A, 'srv', 1500, '10.0.0.7'), true);
      assert.equal((await store.findJoin('alice', 'srv', 0))?.id, A, 'no address asked: any');
      assert.equal((await store.findJoin('alice', 'srv', 0, '10.0.0.7'))?.id, A);
      assert.equal(await store.findJoin('alice', 'srv', 0, '10.0.0.8'), undefined);
      assert.equal(await store.recordJoin('d1', A, 'srv', 1600), true);
      assert.equal(await store.findJoin('alice', 'srv', 0, '10.0.0.7'), undefined, 'a join replaced by one without an address');
    });

    test('deletes one token, leaving the others', async () => {
      await store.createUser(user('Alice', A));
      await store.recordLogin(A, HASH, 'd1', 1000, 10_000, 16);
      await store.recordLogin(A, HASH, 'd2', 1000, 10_000, 16);
      assert.equal(await store.deleteToken('d1'), true);
      assert.equal(await store.deleteToken('d1'), false, 'gone already');
      assert.equal(await store.findUserByToken('d1', 1001), undefined);
      assert.equal((await store.findUserByToken('d2', 1001))?.id, A);
    });

    test('keeps a secret: the first value stored stays, read without one', async () => {
      assert.equal(await store.keepSecret('key'), undefined);
      assert.equal(await store.keepSecret('key', 'first'), 'first');
      assert.equal(await store.keepSecret('key', 'second'), 'first', 'a later offer changes nothing');
      assert.equal(await store.keepSecret('key'), 'first');
      assert.equal(await store.keepSecret('other'), undefined);
    });

    test('keeps the newest live tokens and drops expired ones', async () => {
      await store.createUser(user('Alice', A));
      for (let i = 1; i <= 4; i++) await store.recordLogin(A, HASH, `d${i}`, 1000, 10_000, 3);
      assert.equal(await store.recordJoin('d1', A, 's', 1001), false, 'the oldest went first');
      for (const d of ['d2', 'd3', 'd4']) assert.equal(await store.recordJoin(d, A, 's', 1001), true, d);
      await store.recordLogin(A, HASH, 'late', 20_000, 30_000, 3);
      assert.equal(await store.recordJoin('late', A, 's', 20_001), true);
    });

    test('finds the latest join by name, server and age', async () => {
      await store.createUser(user('Alice', A));
      await store.setTextures(A, { skinUrl: 'https://s/1.png' });
      await store.recordLogin(A, HASH, 'd', 0, 1e12, 16);
      await store.recordJoin('d', A, 'one', 100);
      assert.deepEqual(player(await store.findJoin('ALICE', 'one', 99)), player(user('Alice', A, { skinUrl: 'https://s/1.png' })));
      assert.equal(await store.findJoin('alice', 'one', 100), undefined, 'not younger than the limit');
      assert.equal(await store.findJoin('alice', 'two', 0), undefined);
      await store.recordJoin('d', A, 'two', 200);
      assert.equal(await store.findJoin('alice', 'one', 0), undefined, 'replaced by the later join');
      assert.ok(await store.findJoin('alice', 'two', 0));
    });

    test('a new password hash can end every session at once', async () => {
      await store.createUser(user('Alice', A));
      await store.recordLogin(A, HASH, 'd1', 0, 1e12, 16);
      await store.recordLogin(A, HASH, 'd2', 0, 1e12, 16);
      await store.setPasswordHash(A, 'kept-sessions', false);
      assert.equal(await store.recordJoin('d1', A, 's', 1), true);
      await store.setPasswordHash(A, 'new', true);
      assert.equal((await store.findUserById(A))?.passwordHash, 'new');
      assert.equal(await store.recordJoin('d1', A, 's', 1), false);
      assert.equal(await store.recordJoin('d2', A, 's', 1), false);
    });

    test('hosted textures: stored once by hash, shared, and deleted when no one wears them', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      const png = Buffer.from('png-bytes');
      await store.setTextures(A, { skinHash: 'h1', upload: { hash: 'h1', png }, isAlex: true });
      await store.setTextures(B, { capeHash: 'h1', upload: { hash: 'h1', png: Buffer.from('ignored: same hash') } });
      assert.deepEqual(await store.findTexture('h1'), png);
      assert.equal(await store.countTextures(), 1);
      assert.deepEqual(await store.findUserById(A), user('Alice', A, { skinHash: 'h1', isAlex: true }));
      assert.deepEqual(player(await store.findPlayer(A)), player(user('Alice', A, { skinHash: 'h1', isAlex: true })));
      // An external URL replaces the hosted skin; Bob still wears h1 as a cape, so it stays.
      await store.setTextures(A, { skinUrl: 'https://s/a.png' });
      assert.deepEqual(await store.findUserById(A), user('Alice', A, { skinUrl: 'https://s/a.png', isAlex: true }));
      assert.ok(await store.findTexture('h1'));
      await store.setTextures(B, { capeHash: null });
      assert.equal(await store.findTexture('h1'), undefined, 'no one wears it any more');
      await store.setTextures(B, { skinHash: 'h2', upload: { hash: 'h2', png } });
      await store.deleteUser(B);
      assert.equal(await store.countTextures(), 0, 'deleted with its last wearer');
      await store.setTextures('no-such-user', { skinHash: 'h3', upload: { hash: 'h3', png } });
      assert.equal(await store.countTextures(), 0, 'nothing stored for no one');
    });

    test('login failures: read and written in one step under the keys given, forgotten when quiet', async () => {
      const seen: LoginFailures[][] = [];
      /** Counts one more failure under every key, unless `refuse`. */
      const count = (keys: string[], now: number, forgetBefore = 0, refuse = false): Promise<void> =>
        store.updateLoginFailures(keys, forgetBefore, (counts) => {
          seen.push(counts);
          return refuse ? counts.map(() => undefined) : counts.map((c) => ({ failures: c.failures + 1, lastAt: now }));
        });
      await count(['alice', 'alice 1.2.3.4'], 100);
      await count(['alice', 'alice 5.6.7.8'], 110);
      await count(['alice 1.2.3.4', 'alice'], 120);
      assert.deepEqual(seen.at(-1), [{ failures: 1, lastAt: 100 }, { failures: 2, lastAt: 110 }], 'each key its own count, in the order asked');
      await count(['alice'], 130, 0, true);
      await count(['alice', 'bob'], 140);
      assert.deepEqual(seen.at(-1), [{ failures: 3, lastAt: 120 }, { failures: 0, lastAt: 0 }], 'undefined left the count as it was');
      // Everything before 500 is forgotten: alice starts from none, and the others are dropped.
      await count(['alice'], 1000, 500);
      assert.deepEqual(seen.at(-1), [{ failures: 0, lastAt: 0 }]);
      await count(['alice 1.2.3.4', 'bob'], 1001);
      assert.deepEqual(seen.at(-1), [{ failures: 0, lastAt: 0 }, { failures: 0, lastAt: 0 }], 'dropped when quiet');
      await store.updateLoginFailures(['alice'], 0, () => [{ failures: 0, lastAt: 0 }]);
      await count(['alice'], 1002);
      assert.deepEqual(seen.at(-1), [{ failures: 0, lastAt: 0 }], 'a count set to none');
    });

    test('deleting a user takes its tokens and join along', async () => {
      await store.createUser(user('Alice', A));
      await store.recordLogin(A, HASH, 'd', 0, 1e12, 16);
      await store.recordJoin('d', A, 's', 1);
      assert.equal(await store.deleteUser(A), true);
      assert.equal(await store.deleteUser(A), false);
      assert.equal(await store.findJoin('alice', 's', 0), undefined);
      await store.createUser(user('Alice', A));
      assert.equal(await store.recordJoin('d', A, 's', 2), false, 'the old token died with the user');
    });

    test('a login records its time and a token; a locked or missing user gets neither', async () => {
      await store.createUser(user('Alice', A));
      assert.equal(await store.recordLogin(A, HASH, 'd1', 1000, 1e12, 16), true);
      assert.equal((await store.findUserById(A))!.lastLoginAt, 1000);
      assert.equal(await store.setLock(A, { at: 1100, reason: 'cheating' }), true);
      assert.equal(await store.recordLogin(A, HASH, 'd2', 1200, 1e12, 16), false);
      assert.equal(await store.recordJoin('d2', A, 's', 1300), false, 'no token was stored for the locked user');
      assert.equal((await store.findUserById(A))!.lastLoginAt, 1000, 'a refused login is no login');
      assert.equal(await store.recordLogin(B, HASH, 'd3', 1200, 1e12, 16), false);
      assert.equal(await store.recordJoin('d3', B, 's', 1300), false);
    });

    test('a login whose verified hash was replaced meanwhile records nothing; a rehash does not undo a new password', async () => {
      await store.createUser(user('Alice', A));
      await store.setPasswordHash(A, 'changed-by-admin', true);
      assert.equal(await store.recordLogin(A, HASH, 'd', 1000, 1e12, 16), false);
      assert.equal(await store.recordJoin('d', A, 's', 1001), false, 'no token was stored');
      await store.setPasswordHash(A, 'rehash-of-old', false, undefined, HASH);
      assert.equal((await store.findUserById(A))!.passwordHash, 'changed-by-admin');
      await store.setPasswordHash(A, 'rehash-of-new', false, undefined, 'changed-by-admin');
      assert.equal((await store.findUserById(A))!.passwordHash, 'rehash-of-new');
    });

    test('a lock ends every token and the join at once, keeps the user, and an unlock lifts it', async () => {
      await store.createUser(user('Alice', A));
      await store.recordLogin(A, HASH, 'd', 0, 1e12, 16);
      assert.equal(await store.recordJoin('d', A, 's', 10), true);
      assert.equal(await store.setLock(A, { at: 20, reason: 'cheating' }), true);
      assert.equal(await store.findJoin('alice', 's', 0), undefined, 'the join is gone');
      assert.equal(await store.recordJoin('d', A, 's', 30), false, 'the token is gone');
      assert.deepEqual(await store.findUserByName('alice'), user('Alice', A, { lastLoginAt: 0, lockedAt: 20, lockReason: 'cheating' }));
      assert.equal(await store.setLock(A, { at: 25, reason: 'still cheating' }), true);
      assert.deepEqual(await store.findUserById(A), user('Alice', A, { lastLoginAt: 0, lockedAt: 20, lockReason: 'still cheating' }), 'locked since the first lock');
      assert.equal(await store.setLock(A, null), true);
      assert.deepEqual(await store.findUserById(A), user('Alice', A, { lastLoginAt: 0 }));
      assert.equal(await store.recordJoin('d', A, 's', 40), false, 'an unlock brings no token back');
      assert.equal(await store.setLock(B, { at: 1, reason: null }), false);
    });

    test('ending sessions or changing the password with endSessions takes the join too', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      for (const [id, d] of [[A, 'a'], [B, 'b']] as const) {
        await store.recordLogin(id, HASH, d, 0, 1e12, 16);
        assert.equal(await store.recordJoin(d, id, 's', 10), true);
      }
      await store.endSessions(A);
      assert.equal(await store.findJoin('alice', 's', 0), undefined);
      assert.equal(await store.recordJoin('a', A, 's', 20), false);
      await store.setPasswordHash(B, 'new', false);
      assert.equal((await store.findJoin('bob', 's', 0))?.id, B, 'without endSessions the join stays');
      await store.setPasswordHash(B, 'newer', true);
      assert.equal(await store.findJoin('bob', 's', 0), undefined);
      assert.equal(await store.recordJoin('b', B, 's', 30), false);
    });

    test('createUsers: one transaction; taken names (any case) and ids, also earlier in the list, are left out', async () => {
      await store.createUser(user('Alice', A));
      const D = '00000000-0000-4000-8000-00000000000d';
      const list = [
        user('Bob', B, { skinUrl: 'https://s.example/b.png', capeUrl: 'https://s.example/c.png', isAlex: true, passwordHash: '$2y$10$x' }),
        user('ALICE', C),
        user('Carol', A),
        user('bob', D),
        user('Dave', B),
        user('Carol', C),
      ];
      const results = ['created', 'name_taken', 'id_taken', 'name_taken', 'id_taken', 'created'];
      // A dry run and a refusal to keep any when one is taken write nothing, and say the same.
      assert.deepEqual(await store.createUsers(list, 'never'), results);
      assert.deepEqual(await store.createUsers(list, 'unless-taken'), results);
      assert.equal(await store.countUsers(), 1);
      assert.equal(await store.findUserById(B), undefined);
      assert.deepEqual(await store.createUsers(list, 'always'), results);
      assert.equal(await store.countUsers(), 3);
      assert.deepEqual(await store.findUserByName('BOB'), list[0], 'stored whole, with its external textures and hash');
      assert.equal((await store.findUserById(C))?.name, 'Carol');
      // Again: every one is taken now, and nothing changes.
      assert.deepEqual(await store.createUsers(list, 'always'), ['name_taken', 'name_taken', 'name_taken', 'name_taken', 'id_taken', 'name_taken']);
      assert.equal(await store.countUsers(), 3);
      // None taken: 'unless-taken' keeps them all.
      assert.deepEqual(await store.createUsers([user('Erin', D)], 'unless-taken'), ['created']);
      assert.equal((await store.findUserByName('erin'))?.id, D);
      assert.deepEqual(await store.createUsers([], 'always'), []);
    });

    test('a rename keeps the id, tokens and join, frees the old name, and refuses a name taken in any case', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      await store.recordLogin(A, HASH, 'd', 0, 1e12, 16);
      await store.recordJoin('d', A, 's', 10);
      assert.equal(await store.renameUser(A, 'BOB'), 'name_taken');
      assert.equal(await store.renameUser(A, 'Alicia'), 'renamed');
      assert.equal(await store.findUserByName('alice'), undefined);
      assert.equal((await store.findUserByName('ALICIA'))?.id, A);
      assert.equal((await store.findJoin('alicia', 's', 0))?.id, A, 'the join follows the player');
      assert.equal(await store.recordJoin('d', A, 's2', 20), true, 'the token still works');
      assert.equal(await store.createUser(user('Alice', '00000000-0000-4000-8000-00000000000c')), 'created', 'the old name is free');
      assert.equal(await store.renameUser(A, 'alicia'), 'renamed', 'a change of case only');
      assert.equal((await store.findUserById(A))?.name, 'alicia');
      assert.equal(await store.renameUser('00000000-0000-4000-8000-0000000000ff', 'Nobody'), 'not_found');
    });
    test('an invite: each creation takes one use while it lives; none left, expired or unknown creates nothing', async () => {
      await store.createInvite(invite('i2', 2, 0, 1000));
      assert.equal(await store.createUser(user('Alice', A), { digest: 'i2', now: 10 }), 'created');
      assert.deepEqual(await store.listInvites(10), [invite('i2', 1, 0, 1000)]);
      assert.equal(await store.createUser(user('ALICE', B), { digest: 'i2', now: 10 }), 'name_taken', 'a taken name takes no use');
      assert.equal(await store.createUser(user('Bob', A), { digest: 'i2', now: 10 }), 'id_taken', 'a taken id takes no use');
      assert.equal(await store.createUser(user('Bob', B), { digest: 'nope', now: 10 }), 'invite_invalid');
      assert.equal(await store.createUser(user('Bob', B), { digest: 'i2', now: 1000 }), 'invite_invalid', 'expired at expiresAt');
      assert.equal(await store.findUserByName('bob'), undefined);
      assert.equal(await store.createUser(user('Bob', B), { digest: 'i2', now: 999 }), 'created');
      assert.equal(await store.createUser(user('Carol', C), { digest: 'i2', now: 999 }), 'invite_invalid', 'used up');
      assert.deepEqual(await store.listInvites(0), [], 'a used-up invite is not listed');
      assert.equal(await store.countUsers(), 2);
    });

    test('two creations with an invite of one use at once: exactly one is created', async () => {
      await store.createInvite(invite('once', 1, 0, 1000));
      const results = await Promise.all([store.createUser(user('Alice', A), { digest: 'once', now: 1 }), store.createUser(user('Bob', B), { digest: 'once', now: 1 })]);
      assert.deepEqual(results.sort(), ['created', 'invite_invalid']);
      assert.equal(await store.countUsers(), 1);
    });

    test('invites are listed live, soonest expiry first; old ones dropped; deleted by digest prefix', async () => {
      await store.createInvite(invite('aa11', 1, 0, 500));
      await store.createInvite(invite('bb22', 3, 0, 300));
      await store.createInvite(invite('cc33', 1, 0, 900));
      assert.deepEqual((await store.listInvites(100)).map((i) => i.digest), ['bb22', 'aa11', 'cc33']);
      assert.deepEqual((await store.listInvites(300)).map((i) => i.digest), ['aa11', 'cc33'], 'expired at expiresAt');
      // A new invite drops those expired by its creation.
      await store.createInvite(invite('dd44', 1, 600, 2000));
      assert.equal(await store.deleteInvites('aa11'), 0, 'expired and dropped already');
      assert.equal(await store.deleteInvites('cc'), 1);
      assert.equal(await store.deleteInvites('cc33'), 0);
      assert.deepEqual(await store.listInvites(600), [invite('dd44', 1, 600, 2000)]);
    });

    test('a live token finds its user; an expired, unknown or ended one none', async () => {
      await store.createUser(user('Alice', A));
      await store.recordLogin(A, HASH, 'd1', 100, 1000, 16);
      assert.deepEqual(await store.findUserByToken('d1', 999), user('Alice', A, { lastLoginAt: 100 }));
      assert.equal(await store.findUserByToken('d1', 1000), undefined, 'expired at expiresAt');
      assert.equal(await store.findUserByToken('d2', 500), undefined);
      await store.endSessions(A);
      assert.equal(await store.findUserByToken('d1', 500), undefined);
    });

    test('a client a live token was issued to is known for that player, by name in any case; expired, ended or pruned, it is not', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      await store.recordLogin(A, HASH, 'd1', 100, 1000, 3, 'launcher-1');
      await store.recordLogin(A, HASH, 'd2', 100, 1e12, 3);
      assert.equal(await store.hasClient('aLiCe', 'launcher-1', 999), true);
      assert.equal(await store.hasClient('Alice', 'launcher-1', 1000), false, 'expired at expiresAt');
      assert.equal(await store.hasClient('Bob', 'launcher-1', 500), false, "another player's name");
      assert.equal(await store.hasClient('Alice', 'launcher-2', 500), false);
      assert.equal(await store.hasClient('Nobody', 'launcher-1', 500), false);
      await store.recordLogin(B, HASH, 'b1', 100, 1e12, 3, 'launcher-2');
      for (const d of ['d3', 'd4', 'd5']) await store.recordLogin(A, HASH, d, 200, 1e12, 3, 'launcher-3');
      assert.equal(await store.hasClient('Alice', 'launcher-1', 500), false, 'pruned past the live tokens kept');
      assert.equal(await store.hasClient('Alice', 'launcher-3', 500), true);
      await store.endSessions(A);
      assert.equal(await store.hasClient('Alice', 'launcher-3', 500), false, 'ended');
      assert.equal(await store.hasClient('Bob', 'launcher-2', 500), true);
    });

    test('a new password can end every session but one token; the join ends too', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      for (const d of ['keep', 'other']) await store.recordLogin(A, HASH, d, 0, 1e12, 16);
      await store.recordLogin(B, HASH, 'bob', 0, 1e12, 16);
      assert.equal(await store.recordJoin('other', A, 's', 10), true);
      await store.setPasswordHash(A, 'new', true, 'keep');
      assert.equal(await store.findJoin('alice', 's', 0), undefined, 'the join is gone');
      assert.equal(await store.recordJoin('other', A, 's', 20), false);
      assert.equal(await store.recordJoin('keep', A, 's', 20), true, 'the kept token still works');
      assert.equal(await store.recordJoin('bob', B, 's', 20), true, "another player's token is untouched");
      await store.setPasswordHash(A, 'newer', true, 'bob');
      assert.equal(await store.recordJoin('keep', A, 's', 30), false, "keeping another player's token keeps none of this one's");
      assert.equal(await store.recordJoin('bob', B, 's', 30), true);
    });

    test('a reset code sets the password and ends every session once, while it lives; a new one voids the old', async () => {
      await store.createUser(user('Alice', A));
      await store.createUser(user('Bob', B));
      assert.equal(await store.setResetCode(A, 'r1', 1000), true);
      assert.equal(await store.setResetCode(A, 'r2', 1000), true);
      assert.equal(await store.findResetCode('r1', 10), undefined, 'voided by the newer code');
      assert.equal(await store.findResetCode('r2', 999), A, 'live before expiresAt');
      assert.equal(await store.findResetCode('r2', 1000), undefined, 'expired at expiresAt');
      assert.equal(await store.useResetCode('r1', 10, 'h1'), undefined, 'voided by the newer code');
      await store.recordLogin(A, HASH, 'd', 0, 1e12, 16);
      await store.recordJoin('d', A, 's', 5);
      assert.equal(await store.useResetCode('r2', 1000, 'h2'), undefined, 'expired at expiresAt');
      assert.equal((await store.findUserById(A))?.passwordHash, user('Alice', A).passwordHash, 'a refused code writes nothing');
      assert.equal(await store.useResetCode('r2', 999, 'h2'), A);
      assert.equal((await store.findUserById(A))?.passwordHash, 'h2');
      assert.equal(await store.findJoin('alice', 's', 0), undefined);
      assert.equal(await store.recordJoin('d', A, 's', 1000), false, 'every token ended');
      assert.equal(await store.useResetCode('r2', 999, 'h3'), undefined, 'used once');
      assert.equal(await store.findResetCode('r2', 999), undefined, 'gone once used');
      assert.equal(await store.setResetCode(C, 'r3', 1000), false, 'no such user');
      assert.equal(await store.useResetCode('r3', 0, 'h'), undefined);
    });

    test('a password change that ends sessions, or a removal, voids the reset code', async () => {
      await store.createUser(user('Alice', A));
      await store.setResetCode(A, 'r1', 1000);
      await store.setPasswordHash(A, 'rehashed', false);
      assert.equal(await store.useResetCode('r1', 0, 'reset'), A, 'a new hash of the same password (a rehash at login) keeps it');
      await store.setResetCode(A, 'r2', 1000);
      await store.setPasswordHash(A, 'changed', true);
      assert.equal(await store.useResetCode('r2', 0, 'h'), undefined);
      assert.equal((await store.findUserById(A))?.passwordHash, 'changed');
      await store.setResetCode(A, 'r3', 1000);
      await store.deleteUser(A);
      await store.createUser(user('Alice', A));
      assert.equal(await store.useResetCode('r3', 0, 'h'), undefined, 'gone with the player');
    });
  });
}
