// The optional fields isAlex, skinUrl and capeUrl: sent exactly when set (isAlex whenever a
// skin is), in /auth, /hasJoined and /profile; never with --variant base; `user set` changes
// seen by a running server at once.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, runCli, tempDir } from '../helpers/process.ts';
import { testDb } from '../helpers/test-db.ts';
import type { RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { assertOk, login, join } from './util.ts';

const tmp = tempDir();
const db = await testDb(tmp.dir, 'auth.db');

const SKIN = 'https://x.example/s.png';
const SKIN2 = 'https://x.example/skins/other.png';
const CAPE = 'https://x.example/c.png';

const PW = 'variant-pw';
const id: Record<string, string> = {};
let extended: RunningServer;
let base: RunningServer;
let joinCounter = 0;

async function userSet(name: string, ...flags: string[]): Promise<void> {
  const r = await runCli(['user', 'set', name, '--db', db, ...flags]);
  assert.equal(r.code, 0, `user set ${name} ${flags.join(' ')}: ${r.stderr}`);
}

type Optional = { isAlex?: boolean; skinUrl?: string; capeUrl?: string };

/** The optional part of /auth, /hasJoined and /profile for one player, asserting the rest. */
async function answers(s: RunningServer, name: string): Promise<{ auth: Optional; hasJoined: Optional; profile: Optional }> {
  const uuid = id[name]!;
  const { username, userUUID, accessToken, ...auth } = await login(s, name, PW);
  assert.equal(username, name);
  assert.equal(userUUID, uuid);
  assert.equal(typeof accessToken, 'string');
  const serverID = `variant-${++joinCounter}`;
  assert.equal(await join(s, accessToken, uuid, serverID), true);
  const { userUUID: joinedUuid, ...hasJoined } = assertOk(await s.post('/hasJoined', { username: name, serverID }));
  assert.equal(joinedUuid, uuid);
  const { username: profileName, ...profile } = assertOk(await s.post('/profile', { userUUID: uuid }));
  assert.equal(profileName, name);
  return { auth, hasJoined, profile };
}

/** Asserts all three answers carry exactly `expected` as optional fields. */
async function expectOptional(s: RunningServer, name: string, expected: Optional): Promise<void> {
  const got = await answers(s, name);
  assert.deepEqual(got.auth, expected, `/auth for ${name}`);
  assert.deepEqual(got.hasJoined, expected, `/hasJoined for ${name}`);
  assert.deepEqual(got.profile, expected, `/profile for ${name}`);
}

before(async () => {
  const names = ['Plain', 'SlimSkin', 'ClassicSkin', 'DefaultSkin', 'CapeOnly', 'Everything', 'Changing'];
  const uuids = await Promise.all(names.map((n) => seedPlayer(db, n, PW)));
  names.forEach((n, i) => (id[n] = uuids[i]!));
  await Promise.all([
    userSet('SlimSkin', '--skin-url', SKIN, '--slim'),
    userSet('ClassicSkin', '--skin-url', SKIN, '--classic'),
    userSet('DefaultSkin', '--skin-url', SKIN2),
    userSet('CapeOnly', '--cape-url', CAPE),
    userSet('Everything', '--skin-url', SKIN, '--cape-url', CAPE, '--slim'),
  ]);
  [extended, base] = await Promise.all([startServer(['--db', db]), startServer(['--db', db, '--variant', 'base'])]);
});

after(async () => {
  await Promise.all([extended?.stop(), base?.stop()]);
  tmp.cleanup();
});

describe('extended variant (the default)', () => {
  test('a player with no skin and no cape gets none of the three fields', async () => {
    await expectOptional(extended, 'Plain', {});
  });

  test('a slim skin: isAlex true and skinUrl', async () => {
    await expectOptional(extended, 'SlimSkin', { isAlex: true, skinUrl: SKIN });
  });

  test('a classic skin: isAlex false and skinUrl', async () => {
    await expectOptional(extended, 'ClassicSkin', { isAlex: false, skinUrl: SKIN });
  });

  test('a skin set without a model flag still sends isAlex as a boolean', async () => {
    const got = await answers(extended, 'DefaultSkin');
    for (const part of [got.auth, got.hasJoined, got.profile]) {
      assert.equal(typeof part.isAlex, 'boolean');
      assert.deepEqual(part, { isAlex: part.isAlex, skinUrl: SKIN2 });
    }
    assert.equal(got.auth.isAlex, false, 'the default arm model is the classic one');
  });

  test('a cape without a skin: capeUrl only, no isAlex', async () => {
    await expectOptional(extended, 'CapeOnly', { capeUrl: CAPE });
  });

  test('skin and cape: all three', async () => {
    await expectOptional(extended, 'Everything', { isAlex: true, skinUrl: SKIN, capeUrl: CAPE });
  });

  test('isAlex is a JSON boolean in the raw answer', async () => {
    const r = await extended.post('/profile', { userUUID: id.SlimSkin });
    assert.match(r.text, /"isAlex"\s*:\s*true/);
    const c = await extended.post('/profile', { userUUID: id.ClassicSkin });
    assert.match(c.text, /"isAlex"\s*:\s*false/);
  });
});

describe('--variant base', () => {
  for (const name of ['Plain', 'SlimSkin', 'ClassicSkin', 'CapeOnly', 'Everything']) {
    test(`${name}: none of isAlex, skinUrl, capeUrl in any answer`, async () => {
      await expectOptional(base, name, {});
    });
  }

  test('/profiles has the same shape in both variants', async () => {
    const want = [{ id: id.Everything, name: 'Everything' }];
    assert.deepEqual(assertOk(await base.post('/profiles', ['everything'])), want);
    assert.deepEqual(assertOk(await extended.post('/profiles', ['everything'])), want);
  });
});

describe('`user set` on the database of running servers', () => {
  test('every change is seen at once, without a restart', async () => {
    await expectOptional(extended, 'Changing', {});

    await userSet('Changing', '--skin-url', SKIN, '--slim');
    await expectOptional(extended, 'Changing', { isAlex: true, skinUrl: SKIN });

    await userSet('Changing', '--classic');
    await expectOptional(extended, 'Changing', { isAlex: false, skinUrl: SKIN });

    await userSet('Changing', '--cape-url', CAPE);
    await expectOptional(extended, 'Changing', { isAlex: false, skinUrl: SKIN, capeUrl: CAPE });

    await userSet('Changing', '--skin-url', SKIN2, '--slim');
    await expectOptional(extended, 'Changing', { isAlex: true, skinUrl: SKIN2, capeUrl: CAPE });

    // With no skin, isAlex goes too, whatever the stored arm model.
    await userSet('Changing', '--no-skin');
    await expectOptional(extended, 'Changing', { capeUrl: CAPE });

    await userSet('Changing', '--no-cape');
    await expectOptional(extended, 'Changing', {});

    // The base-variant server, on the same database, still leaves them out.
    await userSet('Changing', '--skin-url', SKIN, '--cape-url', CAPE, '--slim');
    await expectOptional(base, 'Changing', {});
    await expectOptional(extended, 'Changing', { isAlex: true, skinUrl: SKIN, capeUrl: CAPE });
  });
});
