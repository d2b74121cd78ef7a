// src/sea.ts outside the single executable (test/release.test.ts runs the executable itself):
// nothing differs from `node server.js`, and a cluster worker of the executable, handed the
// primary's script path before its arguments, reads the same arguments as the primary.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bundleUrl, isSea, programArgs } from '../src/sea.ts';

test('under node, the program is no single executable and has no bundle asset', () => {
  assert.equal(isSea(), false);
  assert.equal(bundleUrl(), undefined);
});

test("the program's arguments: after the script, and in a worker of the executable after the path it was handed", () => {
  const args = ['serve', '--workers', '2'];
  assert.deepEqual(programArgs(['/usr/bin/node', '/opt/mcauth/server.js', ...args], false, false), args);
  assert.deepEqual(programArgs(['/usr/bin/node', '/opt/mcauth/server.js', ...args], false, true), args);
  assert.deepEqual(programArgs(['/opt/mcauth/mcauth', './mcauth', ...args], true, false), args);
  assert.deepEqual(programArgs(['/opt/mcauth/mcauth', '/opt/mcauth/mcauth', './mcauth', ...args], true, true), args);
});
