// Rule: a store's look-up may answer at once (SQLite) or with a promise (a database across the
// network), and the service goes on from either; a look-up that answers at once makes no promise.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { createMemoryStore } from '../../src/memory/store.ts';
import { createService } from '../../src/service/service.ts';
import { openSqliteStore } from '../../src/store/sqlite.ts';
import { then } from '../../src/store/store.ts';
import { defaultServiceOptions } from '../../src/cli/options.ts';
import { tempDir } from '../helpers/process.ts';

test('then() goes on at once from a value and after a promise, its failure a rejection', async () => {
  assert.equal(then(2, (n) => n * 3), 6);
  const later = then(Promise.resolve(2), (n) => n * 3);
  assert.ok(later instanceof Promise);
  assert.equal(await later, 6);
  await assert.rejects(Promise.resolve(then(Promise.resolve(1), () => assert.fail('no'))), /no/);
});

test("the service's look-ups answer at once on SQLite and with a promise on :memory:, alike", async () => {
  const tmp = tempDir();
  const sqlite = await openSqliteStore(join(tmp.dir, 'answer.db'));
  try {
    for (const [store, atOnce] of [[sqlite, true], [createMemoryStore(), false]] as const) {
      const service = createService(store, defaultServiceOptions());
      await service.addUser({ name: 'Alice', password: 'alice-secret-1' });
      const id = (await service.findUser('Alice'))!.id;
      const found = service.profile(id);
      assert.equal(found instanceof Promise, !atOnce);
      assert.equal((await found).username, 'Alice');
      // Not found: thrown at once, or a rejection.
      const missing = (): unknown => service.hasJoined('Alice', 'srv');
      if (atOnce) assert.throws(missing, { kind: 'not_found' });
      else await assert.rejects(missing() as Promise<unknown>, { kind: 'not_found' });
    }
  } finally {
    await sqlite.close();
    tmp.cleanup();
  }
});
