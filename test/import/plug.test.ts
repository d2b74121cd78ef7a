// The importer's plug into the service: recognising a hash for the admin API and checking one at
// login, bcrypt in a worker thread, in the service's terms.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createForeignHashes } from '../../src/import/plug.ts';

// Solar Designer's crypt_blowfish wrapper.c vector (see bcrypt.test.ts).
const BCRYPT = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';

test('recognises what it can store, says why not otherwise, and checks a password against what it stored', async () => {
  const plug = createForeignHashes(1);
  assert.deepEqual(plug.recognize(BCRYPT), { format: 'bcrypt', stored: BCRYPT });
  assert.deepEqual(plug.recognize('5f4dcc3b5aa765d61d8327deb882cf99'), { problem: 'unknown hash format' });
  assert.equal(await plug.verify('U*U', BCRYPT), true);
  assert.equal(await plug.verify('U*V', BCRYPT), false);
});

test('a stored string that is no foreign hash is an error, never a yes', async () => {
  await assert.rejects(createForeignHashes(1).verify('x', 'scrypt$1$1$1$AA==$AA=='));
});
