import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textureFields } from '../../src/service/textures.ts';
import type { User } from '../../src/store/store.ts';

const H = 'https://auth.example/textures/';
const base: User = { id: 'x', name: 'Alice', passwordHash: 'h', skinUrl: null, skinHash: null, capeUrl: null, capeHash: null, isAlex: true, createdAt: 0, lastLoginAt: null, lockedAt: null, lockReason: null };

test('extended: isAlex comes with a skin only, URLs only when set', () => {
  assert.deepEqual(textureFields(base, 'extended', H), {});
  assert.deepEqual(textureFields({ ...base, skinUrl: 's', isAlex: false }, 'extended', H), { isAlex: false, skinUrl: 's' });
  assert.deepEqual(textureFields({ ...base, skinUrl: 's', capeUrl: 'c' }, 'extended', H), { isAlex: true, skinUrl: 's', capeUrl: 'c' });
  assert.deepEqual(textureFields({ ...base, capeUrl: 'c' }, 'extended', H), { capeUrl: 'c' });
});

test('a hosted texture is answered with its public address', () => {
  assert.deepEqual(textureFields({ ...base, skinHash: 'ab', capeHash: 'cd' }, 'extended', H), { isAlex: true, skinUrl: `${H}ab`, capeUrl: `${H}cd` });
});

test('without a public address a hosted texture is left out, not answered with a path', () => {
  assert.deepEqual(textureFields({ ...base, skinHash: 'ab', capeUrl: 'c' }, 'extended', undefined), { capeUrl: 'c' });
});

test('base: none of the optional fields, whatever the player has', () => {
  assert.deepEqual(textureFields({ ...base, skinUrl: 's', capeUrl: 'c' }, 'base', H), {});
});
