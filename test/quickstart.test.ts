// The README's quick start, run as written from a clone: its blocks after the release's and the
// clone's own, in a temp folder holding only dist/server.js, with `node dist/server.js` where they
// say `./mcauth` (as the README tells a contributor), and every answer of the curl session held
// to the answer the README shows under it. A quick start that fails as written is the first thing
// an owner meets. test/release.test.ts runs the same blocks on the release's executable.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { answerPattern, commands, quickStart, runQuickStart } from './helpers/quickstart.ts';
import { blockPath, builtCheckout, hasCurl } from './helpers/shell-blocks.ts';

let tmp: ReturnType<typeof builtCheckout> | undefined;
after(() => tmp?.cleanup());

test('the quick start runs as written from a clone, and every answer is the one it shows', { skip: hasCurl ? false : 'curl is not installed' }, async () => {
  const { release, clone } = quickStart();
  // The first two blocks are not run here: the release's is test/release.test.ts's; npm ci
  // fetches the dependencies and npm test is the whole suite, which this file is part of. The
  // clone's must say to build, which makes what the rest runs: the test stands in with the
  // dist/server.js the suite's own build made (in tmp).
  assert.ok(commands(release).includes('./mcauth --version'), 'the release block installs ./mcauth');
  assert.deepEqual(commands(clone), ['npm ci && npm run build', 'npm test']);
  tmp = builtCheckout();
  await runQuickStart(tmp.dir, { PATH: blockPath() }, 'node dist/server.js');
});

// The comparison can fail: a made-up value matches only where the README shows `…`.
test('a shown answer matches only its own shape', () => {
  assert.match('{"result":{"accessToken":"f00d"}}', answerPattern('{"result":{"accessToken":"…"}}'));
  assert.doesNotMatch('{"result":false}', answerPattern('{"result":true}'));
  assert.deepEqual(commands('# a comment\nnode dist/server.js   # serves\n'), ['node dist/server.js']);
});
