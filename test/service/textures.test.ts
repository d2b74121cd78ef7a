import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textureFields } from '../../src/service/textures.ts';
import type { User } from '../../src/store/store.ts';

const base: User = { id: 'x', name: 'Alice', passwordHash: 'h', skinUrl: null, capeUrl: null, isAlex: true };

test('extended: isAlex comes with a skin only, URLs only when set', () => {
  assert.deepEqual(textureFields(base, 'extended'), {});
  assert.deepEqual(textureFields({ ...base, skinUrl: 's', isAlex: false }, 'extended'), { isAlex: false, skinUrl: 's' });
  assert.deepEqual(textureFields({ ...base, skinUrl: 's', capeUrl: 'c' }, 'extended'), { isAlex: true, skinUrl: 's', capeUrl: 'c' });
  assert.deepEqual(textureFields({ ...base, capeUrl: 'c' }, 'extended'), { capeUrl: 'c' });
});

test('base: none of the optional fields, whatever the player has', () => {
  assert.deepEqual(textureFields({ ...base, skinUrl: 's', capeUrl: 'c' }, 'base'), {});
});
