import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashPassword, needsRehash, SCRYPT_PARAMS, verifyPassword } from '../../src/crypto/password.ts';
import { digestToken, issueToken } from '../../src/crypto/token.ts';

test('a hash names scrypt and its parameters, with a random salt', async () => {
  const { N, r, p } = SCRYPT_PARAMS;
  const a = await hashPassword('hunter2');
  const b = await hashPassword('hunter2');
  assert.match(a, new RegExp(`^scrypt\\$${N}\\$${r}\\$${p}\\$[A-Za-z0-9+/=]{24}\\$[A-Za-z0-9+/=]{44}$`));
  assert.notEqual(a, b);
  assert.ok(!a.includes('hunter2'));
});

test('verifies the right password only', async () => {
  const hash = await hashPassword('correct horse');
  assert.equal(await verifyPassword('correct horse', hash), true);
  assert.equal(await verifyPassword('correct hors', hash), false);
  assert.equal(await verifyPassword('', hash), false);
});

test('a hash is verified with the parameters it names, and one with other parameters asks for a rehash', async () => {
  const old = await hashPassword('pw');
  const [, , , , salt, key] = old.split('$');
  assert.equal(needsRehash(old), false);
  // Same key material under a different parameter set must not verify: parameters are honoured.
  const weaker = `scrypt$1024$8$1$${salt}$${key}`;
  assert.equal(needsRehash(weaker), true);
  assert.equal(await verifyPassword('pw', weaker), false);
});

test('an unknown hash format is an error, not a match', async () => {
  await assert.rejects(verifyPassword('pw', 'plain:pw'), /unknown format/);
  await assert.rejects(verifyPassword('pw', 'scrypt$x$8$1$AA==$AA=='), /unknown format/);
  assert.equal(needsRehash('plain:pw'), true);
});

test('tokens are random UUIDs handed out with their SHA-256 digest', () => {
  const { token, digest } = issueToken();
  assert.match(token, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(digest, digestToken(token));
  assert.equal(digestToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.notEqual(issueToken().token, token);
});
