import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textureSizeProblem, uploadSizeProblem } from '../../src/textures/rules.ts';

test('the game sizes, and whole multiples up to 16 times only with HD', () => {
  assert.equal(textureSizeProblem('skin', 64, 64, false), undefined);
  assert.equal(textureSizeProblem('skin', 64, 32, false), undefined);
  assert.equal(textureSizeProblem('cape', 64, 32, false), undefined);
  assert.equal(textureSizeProblem('cape', 128, 128, false), 'cape must be 64×32, got 128×128');
  assert.equal(textureSizeProblem('skin', 128, 128, false), 'skin must be 64×64 or 64×32, got 128×128');
  assert.equal(textureSizeProblem('skin', 1024, 512, true), undefined);
  assert.equal(textureSizeProblem('cape', 128, 64, true), undefined);
  assert.equal(textureSizeProblem('skin', 96, 96, true), 'skin must be 64×64 or 64×32 (or a whole multiple up to 16 times), got 96×96');
  // A header may claim any size; a game client would allocate width × height × 4 bytes for it.
  assert.match(textureSizeProblem('skin', 2048, 2048, true) ?? '', /got 2048×2048/);
  assert.match(textureSizeProblem('cape', 1_920_000, 960_000, true) ?? '', /got 1920000×960000/);
});

test('an upload of at most 1 MiB', () => {
  assert.equal(uploadSizeProblem(1024 * 1024), undefined);
  assert.equal(uploadSizeProblem(1024 * 1024 + 1), 'a texture must be at most 1048576 bytes, got 1048577');
});
