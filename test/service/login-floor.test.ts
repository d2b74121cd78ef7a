// The failed-login floor, timed on the real clock: no failure is answered before it, for a known
// name as for an unknown one, and a right password does not wait for it. It times a password
// hash against the floor, so the file runs alone (test/file-groups.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hashPassword } from '../../src/crypto/password.ts';
import { setup } from './throttle-setup.ts';

test('no failed login is answered before the floor, for a known name as for an unknown one; a right password does not wait for it', async () => {
  const timed = async (work: Promise<unknown>): Promise<number> => {
    const started = performance.now();
    await work.catch(() => undefined);
    return performance.now() - started;
  };
  // A right password costs a scrypt (the test hash is replaced by one), which a machine busy with
  // other work makes longer: the floor is 400 ms, or four of those there, for the two to differ.
  const floorMs = Math.max(400, 4 * (await timed(hashPassword('a-password'))));
  const { service, addPlayer } = setup({ failedLoginFloorMs: floorMs });
  await addPlayer('Alice');
  await timed(service.login('alice', 'warm-up')); // a check timed, so the unknown name waits instead of hashing
  for (const name of ['alice', 'nobody']) {
    const ms = await timed(service.login(name, 'wrong'));
    assert.ok(ms >= floorMs - 5, `${name}: a failure answered after ${ms.toFixed(0)} ms (floor ${floorMs.toFixed(0)} ms)`);
  }
  const right = await timed(service.login('alice', 'right-password'));
  assert.ok(right < floorMs - 5, `the right password waited ${right.toFixed(0)} ms (floor ${floorMs.toFixed(0)} ms)`);
});
