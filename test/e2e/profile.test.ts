// /profile by UUID and /profiles by names: both body shapes, case, duplicates, impossible and
// unknown names, order, empty lists, bad entries, and the --max-profiles limit. /profiles
// refuses nothing with an error envelope (a LauncherServer's bulk look-up dies on one).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startServer, tempDir } from '../helpers/process.ts';
import { testDb } from '../helpers/test-db.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { UUID_DASHED, assertFail, assertOk, undash } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'auth.db');

let server: RunningServer; // default --max-profiles (100)
let small: RunningServer; // --max-profiles 3
const id: Record<string, string> = {};

before(async () => {
  const [alice, bob, carol, sixteen] = await Promise.all([
    seedPlayer(db, 'Alice', 'password-a'),
    seedPlayer(db, 'bob_2', 'password-b'),
    seedPlayer(db, 'Carol99', 'password-c', '7F3E2D1C0B0A49888776655443322110'),
    seedPlayer(db, 'Sixteen_Chars_OK', 'password-s'),
  ]);
  Object.assign(id, { alice, bob, carol, sixteen });
  [server, small] = await Promise.all([startServer(['--db', db]), startServer(['--db', db, '--max-profiles', '3'])]);
});

after(async () => {
  await Promise.all([server?.stop(), small?.stop()]);
  tmp.cleanup();
});

describe('/profile', () => {
  test('finds the player by dashed or undashed UUID in any letter case', async () => {
    for (const form of [id.alice!, id.alice!.toUpperCase(), undash(id.alice!), undash(id.alice!).toUpperCase()]) {
      assert.deepEqual(assertOk(await server.post('/profile', { userUUID: form })), { username: 'Alice' }, form);
    }
    assert.equal(id.carol, '7f3e2d1c-0b0a-4988-8776-655443322110');
    assert.deepEqual(assertOk(await server.post('/profile', { userUUID: '7F3E2D1C-0B0A-4988-8776-655443322110' })), { username: 'Carol99' });
    assert.deepEqual(assertOk(await server.post('/profile', { userUUID: id.bob })), { username: 'bob_2' });
  });

  test('an unknown UUID is a 404 envelope', async () => {
    assertFail(await server.post('/profile', { userUUID: randomUUID() }), 404, 'No player with this UUID');
    assertFail(await server.post('/profile', { userUUID: undash(randomUUID()) }), 404, 'No player with this UUID');
    assertFail(await server.post('/profile', { userUUID: '00000000-0000-0000-0000-000000000000' }), 404, 'No player with this UUID');
  });

  test('a malformed UUID is a 400 envelope', async () => {
    const u = undash(id.alice!);
    const bad = [
      'not-a-uuid',
      '',
      'Alice',
      u.slice(0, 31),
      u + 'a',
      'z' + u.slice(1),
      `{${id.alice}}`,
      `${u.slice(0, 9)}-${u.slice(9, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`,
      `${id.alice} `,
    ];
    for (const userUUID of bad) {
      assertFail(await server.post('/profile', { userUUID }), 400, 'Field "userUUID" is not a valid UUID');
    }
  });

  test('a missing or non-string userUUID is 400', async () => {
    assertFail(await server.post('/profile', {}), 400, 'Field "userUUID" is missing');
    assertFail(await server.post('/profile', { userUUID: null }), 400, 'Field "userUUID" must be a string');
    assertFail(await server.post('/profile', { userUUID: 123 }), 400, 'Field "userUUID" must be a string');
    assertFail(await server.post('/profile', { uuid: id.alice }), 400, 'Field "userUUID" is missing');
  });
});

describe('/profiles', () => {
  const request = [
    'CAROL99',
    'alice',
    'nobody_here',
    'ALICE',
    'a',
    'bad name!',
    'x'.repeat(20),
    'Sixteen_Chars_OK_', // 17 characters: cannot exist
    'Bob_2',
    'carol99',
    'sixteen_chars_ok',
    '',
  ];
  const expected = () => [
    { id: id.carol, name: 'Carol99' },
    { id: id.alice, name: 'Alice' },
    { id: id.bob, name: 'bob_2' },
    { id: id.sixteen, name: 'Sixteen_Chars_OK' },
  ];

  test('a bare array: any case, duplicates collapsed, unknown and impossible names left out, order kept', async () => {
    const result = assertOk(await server.post('/profiles', request));
    assert.deepEqual(result, expected());
    for (const item of result) assert.match(item.id, UUID_DASHED);
  });

  test('{"usernames": [...]} gives the same answer', async () => {
    assert.deepEqual(assertOk(await server.post('/profiles', { usernames: request })), expected());
  });

  test('order follows the request', async () => {
    assert.deepEqual(assertOk(await server.post('/profiles', ['bob_2', 'sixteen_chars_ok', 'alice'])), [
      { id: id.bob, name: 'bob_2' },
      { id: id.sixteen, name: 'Sixteen_Chars_OK' },
      { id: id.alice, name: 'Alice' },
    ]);
    assert.deepEqual(assertOk(await server.post('/profiles', { usernames: ['Alice', 'Bob_2'] })), [
      { id: id.alice, name: 'Alice' },
      { id: id.bob, name: 'bob_2' },
    ]);
  });

  test('names that break the naming rule are left out, not trimmed or matched loosely', async () => {
    assert.deepEqual(assertOk(await server.post('/profiles', ['Carol99 ', ' Alice', 'Ali%', 'Ali_e', 'Alic'])), []);
  });

  test('an empty list gives []', async () => {
    assert.deepEqual(assertOk(await server.post('/profiles', [])), []);
    assert.deepEqual(assertOk(await server.post('/profiles', { usernames: [] })), []);
    assert.deepEqual(assertOk(await server.post('/profiles', ['nobody_here', 'a'])), []);
  });

  test('an entry that is not a string is not found, and the rest are looked up', async () => {
    for (const body of [['Alice', 5], [null, 'alice'], ['Alice', ['Bob_2']], { usernames: ['Alice', {}] }, { usernames: [true, 'ALICE', 1.5, false] }]) {
      assert.deepEqual(assertOk(await server.post('/profiles', body)), [{ id: id.alice, name: 'Alice' }], JSON.stringify(body));
    }
    assert.deepEqual(assertOk(await server.post('/profiles', [1])), []);
  });

  test('a body that is neither an array nor {"usernames": [...]} is answered with an empty list', async () => {
    for (const body of [{}, { usernames: 'Alice' }, { names: ['Alice'] }, { usernames: null }, { usernames: { 0: 'Alice' } }, '"Alice"', '42', 'null']) {
      assert.deepEqual(assertOk(await server.post('/profiles', body)), [], JSON.stringify(body));
    }
  });

  test('past the default limit (100), the first 100 entries are looked up', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => `Player${i}`);
    hundred[50] = 'Alice';
    assert.deepEqual(assertOk(await server.post('/profiles', hundred)), [{ id: id.alice, name: 'Alice' }]);
    assert.deepEqual(assertOk(await server.post('/profiles', [...hundred, 'Bob_2'])), [{ id: id.alice, name: 'Alice' }]);
    assert.deepEqual(assertOk(await server.post('/profiles', { usernames: [...hundred.slice(1), 'Bob_2', 'Carol99'] })), [
      { id: id.alice, name: 'Alice' },
      { id: id.bob, name: 'bob_2' },
    ]);
  });

  test('a body is read up to what --max-profiles names take (100 bytes each), escaped to the last character; a longer one is answered [] unread', async () => {
    /** `name` as a JSON string with every character written as a \\u escape: the longest form of it. */
    const escaped = (name: string): string => `"${[...name].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
    const longest = [escaped('Sixteen_Chars_OK'), ...Array.from({ length: 98 }, () => escaped('Nobody_Sixteen_X')), escaped('Alice')];
    assert.deepEqual(assertOk(await server.post('/profiles', `[${longest.join(',')}]`)), [
      { id: id.sixteen, name: 'Sixteen_Chars_OK' },
      { id: id.alice, name: 'Alice' },
    ]);
    // 40,000 names (about 469 KB): refused before it is parsed, in-band, as every /profiles refusal.
    const flood = JSON.stringify(['Alice', ...Array.from({ length: 40_000 }, (_, i) => `Flooder_${i}`)]);
    assert.deepEqual(assertOk(await server.post('/profiles', flood)), []);
    assert.deepEqual(assertOk(await small.post('/profiles', `[${[escaped('Alice'), escaped('Carol99'), escaped('Sixteen_Chars_OK')].join(', ')}]`)), [
      { id: id.alice, name: 'Alice' },
      { id: id.carol, name: 'Carol99' },
      { id: id.sixteen, name: 'Sixteen_Chars_OK' },
    ]);
    assert.deepEqual(assertOk(await small.post('/profiles', JSON.stringify(['Alice', ...Array.from({ length: 40 }, () => 'Nobody')]))), []);
  });

  test('--max-profiles 3: the first three entries as sent (even invalid or duplicate ones) are looked up', async () => {
    assert.deepEqual(assertOk(await small.post('/profiles', ['a', 'bad name!', 7, 'Carol99'])), []);
    assert.deepEqual(assertOk(await small.post('/profiles', { usernames: ['Alice', 'a', 'bad name!', 'Carol99'] })), [{ id: id.alice, name: 'Alice' }]);
    assert.deepEqual(assertOk(await small.post('/profiles', ['Alice', 'alice', 'ALICE', 'Bob_2'])), [{ id: id.alice, name: 'Alice' }]);
    assert.deepEqual(assertOk(await small.post('/profiles', ['Alice', 'a', 'bad name!'])), [{ id: id.alice, name: 'Alice' }]);
    assert.deepEqual(assertOk(await small.post('/profiles', { usernames: ['carol99', 'BOB_2', 'alice'] })), [
      { id: id.carol, name: 'Carol99' },
      { id: id.bob, name: 'bob_2' },
      { id: id.alice, name: 'Alice' },
    ]);
  });
});
