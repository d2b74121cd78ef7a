// `import` in process, through the program's main: the whole report of a source with every kind
// of row, the refusals of the command line, and a file that cannot be read.
// test/e2e/import.test.ts runs it through the built server and logs the players in.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { after, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { tempDir } from '../helpers/process.ts';

const { dir, cleanup } = tempDir();
after(cleanup);
const DB = join(dir, 'import.db');

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) => new Writable({ write: (chunk, _enc, next) => (append(String(chunk)), next()) });
  const code = await main(argv, { stdin: Readable.from(['']), stdout: sink((s) => (stdout += s)), stderr: sink((s) => (stderr += s)), env: { MCAUTH_DB: DB } });
  return { code, stdout, stderr };
}

const BCRYPT = '$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW';
const SHA = `$SHA$0123456789abcdef$${'ab'.repeat(32)}`;

test('the report: read, imported by hash format, skipped by reason, and the skipped rows one by one', async () => {
  const source = join(dir, 'players.json');
  const rows = [
    { name: 'Alice', hash: BCRYPT, uuid: '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0' },
    { name: 'Bob', hash: SHA, skinUrl: 'https://cdn.example.org/bob.png', isAlex: true },
    { name: 'ALICE', hash: BCRYPT },
    { name: 'Carol', hash: SHA, uuid: '0F1E2D3C4B5A49688776A5B4C3D2E1F0' },
    { name: 'x', hash: SHA },
    { name: 'Dave', hash: SHA, uuid: 'not-a-uuid' },
    { name: 'Erin', hash: 'md5:0123' },
    { name: 'Frank', hash: SHA, skinUrl: 'http://cdn.example.org/f.png' },
    { name: 'Gina', hash: SHA, capeUrl: 'ftp://cdn.example.org/g.png' },
  ];
  writeFileSync(source, JSON.stringify(rows));
  const r = await run(['import', source, '--on-conflict', 'skip']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      `Read 9 players from ${source} (json)`,
      'Imported: 2',
      '  hash bcrypt: 1',
      '  hash authme-sha256: 1',
      'Skipped: 7',
      '  name taken (in any case): 1',
      '  UUID taken: 1',
      '  invalid name: 1',
      '  invalid UUID: 1',
      '  unknown hash format: 1',
      '  invalid skin URL: 1',
      '  invalid cape URL: 1',
      'Skipped players:',
      '  row 3 "ALICE": name taken (in any case)',
      '  row 4 "Carol": UUID taken',
      '  row 5 "x": Invalid name "x": use 3 to 16 letters, digits and _',
      '  row 6 "Dave": Invalid UUID "not-a-uuid"',
      '  row 7 "Erin": unknown hash format',
      '  row 8 "Frank": Invalid URL "http://cdn.example.org/f.png": use an https:// address (http:// only with --allow-http-textures)',
      '  row 9 "Gina": Invalid URL "ftp://cdn.example.org/g.png": use an https:// address (http:// only with --allow-http-textures)',
      `Created a new database at ${DB}`,
      '',
    ].join('\n'),
  );
  const bob = await run(['user', 'show', 'Bob']);
  assert.match(bob.stdout, /skin: +https:\/\/cdn\.example\.org\/bob\.png \(slim\)/);
});

test('one player read, and one skipped, are each said in the singular', async () => {
  const source = join(dir, 'one.json');
  writeFileSync(source, JSON.stringify([{ name: 'x', hash: SHA }]));
  const r = await run(['import', source, '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Read 1 player from .*one\.json \(json\)$/m);
  assert.match(r.stdout, /^Skipped player:$/m);
});

test('more than 20 skipped rows: the first 20 are listed', async () => {
  const source = join(dir, 'many.csv');
  writeFileSync(source, ['name,hash', ...Array.from({ length: 25 }, (_, i) => `bad-${i},${SHA}`)].join('\n'));
  const r = await run(['import', source, '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Skipped players \(the first 20\):$/m);
  assert.equal(r.stdout.match(/^ {2}line \d+ "bad-\d+": /gm)?.length, 20);
  assert.match(r.stdout, /^Dry run: nothing was written$/m);
});

test('refusals: an unknown --format or --on-conflict, no SOURCE, a file that cannot be read', async () => {
  assert.deepEqual(await run(['import', 'x.csv', '--format', 'yaml']), { code: 2, stdout: '', stderr: 'mcauth: unknown --format "yaml": use authme, drasl, csv, json (see --help)\n' });
  assert.deepEqual(await run(['import', 'x.csv', '--on-conflict', 'merge']), { code: 2, stdout: '', stderr: 'mcauth: unknown --on-conflict "merge": use skip or fail (see --help)\n' });
  assert.equal((await run(['import'])).code, 2);
  // Refused before any database is opened: none is created for a file that cannot be read.
  const fresh = join(dir, 'never-made.db');
  const missing = await run(['import', join(dir, 'nowhere.csv'), '--format', 'csv', '--db', fresh]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^mcauth: .*nowhere\.csv: cannot be read: ENOENT/);
  const empty = join(dir, 'empty.json');
  writeFileSync(empty, '');
  assert.equal((await run(['import', empty, '--db', fresh])).code, 1);
  assert.equal(existsSync(fresh), false);
});
