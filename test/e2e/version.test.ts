// `server.js --version` on the built bundle (Node, or Deno with MCAUTH_TEST_RUNTIME=deno):
// package.json's version, and nothing else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, runCli } from '../helpers/process.ts';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

test('--version prints "mcauth VERSION" and exits 0', async () => {
  const r = await runCli(['--version']);
  assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, { code: 0, stdout: `mcauth ${VERSION}\n`, stderr: '' });
});
