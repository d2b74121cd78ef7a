import assert from 'node:assert/strict';
import { test } from 'node:test';
import { offlineUuid, parseUuid } from '../src/uuid.ts';

test('parses dashed and undashed UUIDs in any case to dashed lower case', () => {
  const canonical = '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0';
  assert.equal(parseUuid(canonical), canonical);
  assert.equal(parseUuid(canonical.toUpperCase()), canonical);
  assert.equal(parseUuid('0F1E2D3C4B5A49688776A5B4C3D2E1F0'), canonical);
});

test('refuses what is not a UUID', () => {
  for (const bad of ['', 'abc', '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f', '0f1e2d3c4b5a49688776a5b4c3d2e1f0a', 'gf1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', '0f1e2d3c-4b5a4968-8776-a5b4c3d2e1f0-']) {
    assert.equal(parseUuid(bad), undefined, bad);
  }
});

test('offline UUIDs match what offline-mode servers derive', () => {
  // The well-known value of Java's UUID.nameUUIDFromBytes("OfflinePlayer:Notch").
  assert.equal(offlineUuid('Notch'), 'b50ad385-829d-3141-a216-7e7d7539ba7f');
  assert.match(offlineUuid('Alice'), /^[0-9a-f]{8}-[0-9a-f]{4}-3[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(offlineUuid('Alice'), offlineUuid('alice'));
});
