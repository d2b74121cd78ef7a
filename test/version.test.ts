// src/version.ts is what --version prints; the bundle cannot read package.json at run time, so
// the constant must be kept equal to package.json's "version" by hand, and this checks it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { test } from 'node:test';
import { main } from '../src/cli/main.ts';
import { VERSION } from '../src/version.ts';
import { ROOT } from './helpers/process.ts';

test('VERSION equals package.json\'s version', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(VERSION, pkg.version);
});

test('--version prints "mcauth VERSION" and nothing else, and exits 0', async () => {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) => new Writable({ write: (chunk, _enc, next) => (append(String(chunk)), next()) });
  const code = await main(['--version'], { stdin: Readable.from(['']), stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), env: {} });
  assert.deepEqual({ code, stdout, stderr }, { code: 0, stdout: `mcauth ${VERSION}\n`, stderr: '' });
});
