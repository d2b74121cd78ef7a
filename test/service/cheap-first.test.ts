// The routes that hash check what is cheap before any hash: a guessed reset code, a taken name
// or an invite code that is not live is refused without one. The proof: a service whose hash
// pool has no slot and no queue refuses every hash as busy; these are refused for what they
// are instead, while a request that does need a hash (a live code, a free name) finds it busy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultServiceOptions } from '../../src/cli/options.ts';
import { createService } from '../../src/service/service.ts';
import { createInvites } from '../../src/invites/invites.ts';
import { createMemoryStore } from '../../src/memory/store.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import type { Store } from '../../src/store/store.ts';

const PASSWORD = 'open-sesame-1';

for (const [kind, open] of [
  ['in memory', async () => createMemoryStore()],
  ['SQLite', () => openSqliteStore(':memory:')],
] as [string, () => Promise<Store>][]) {
  test(`${kind}: a guessed reset code, a taken name and a dead invite are refused without a hash`, async () => {
    const store = await open();
    const setup = createService(store, defaultServiceOptions());
    const noHash = createService(store, { ...defaultServiceOptions(), hashConcurrency: 0, hashQueue: 0 });
    await setup.addUser({ name: 'Alice', password: PASSWORD });
    const { code } = await setup.createResetCode('Alice');
    const invites = createInvites(store);
    const revoked = await invites.create(1);
    await invites.revoke(revoked.code);
    const live = await invites.create(1);

    await assert.rejects(noHash.resetPassword('0'.repeat(32), PASSWORD), { kind: 'invalid', message: 'This reset link is not valid' });
    await assert.rejects(noHash.register({ name: 'ALICE', password: PASSWORD }), { kind: 'conflict' });
    await assert.rejects(noHash.register({ name: 'Bob', password: PASSWORD, invite: revoked.code }), { kind: 'forbidden', message: 'This invite code is not valid' });
    await assert.rejects(noHash.register({ name: 'Bob', password: PASSWORD, invite: 'never-issued' }), { kind: 'forbidden' });
    // What passes the cheap checks needs a hash, and the pool has none to give.
    await assert.rejects(noHash.resetPassword(code, PASSWORD), { kind: 'busy' });
    await assert.rejects(noHash.register({ name: 'Bob', password: PASSWORD, invite: live.code }), { kind: 'busy' });
    // Nothing was used up by the refusals: the code and the invite still work with a hash.
    assert.equal((await setup.resetPassword(code, 'new-password-1')).name, 'Alice');
    assert.equal((await setup.register({ name: 'Bob', password: PASSWORD, invite: live.code })).username, 'Bob');
    await store.close();
  });
}
