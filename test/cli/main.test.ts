// The program in process: user commands on a real SQLite file, refusals and their exit statuses.
// test/e2e/cli.test.ts runs the same through the built server.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { after, test } from 'node:test';
import { main } from '../../src/cli/main.ts';
import { readNewPassword } from '../../src/cli/password-input.ts';
import { encodePng } from '../helpers/png.ts';
import { tempDir } from '../helpers/process.ts';

const { dir, cleanup } = tempDir();
after(cleanup);
const DB = join(dir, 'cli.db');

/** What a command said before its database line, with the times of `user list` taken out (they change). */
const said = (stdout: string): string => stdout.replace(/^(Database:|Created a new database at) .*\n/m, '').replace(/ {2}created \S+ \S+ UTC {2}last login (never|\S+ \S+ UTC)/g, '');
const DB_LINE = `Database: ${DB}\n`;

async function run(argv: string[], stdin = '', env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) => new Writable({ write: (chunk, _enc, next) => (append(String(chunk)), next()) });
  const code = await main(argv, {
    stdin: Readable.from([stdin]),
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    env: { MCAUTH_DB: DB, ...env },
  });
  return { code, stdout, stderr };
}

test('user commands add, list, set, passwd and remove players', async () => {
  const added = await run(['user', 'add', 'Alice', '--uuid', '0F1E2D3C4B5A49688776A5B4C3D2E1F0'], 'open-sesame\nignored');
  assert.deepEqual(added, { code: 0, stdout: `Added Alice 0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0\nCreated a new database at ${DB}\n`, stderr: '' });
  assert.equal((await run(['user', 'add', 'Notch', '--offline-uuid'], 'open-sesame')).stdout, `Added Notch b50ad385-829d-3141-a216-7e7d7539ba7f\n${DB_LINE}`);
  const set = await run(['user', 'set', 'alice', '--skin-url', 'https://s.example/a.png', '--slim', '--cape-url', 'https://s.example/c.png']);
  assert.equal(said(set.stdout), 'Updated Alice: Alice  0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0  skin https://s.example/a.png (slim)  cape https://s.example/c.png\n');
  const list = (await run(['user', 'list'])).stdout;
  assert.match(list, /^Alice .* created \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC {2}last login never\n/);
  assert.ok(list.endsWith(DB_LINE), list);
  assert.equal(said(list), 'Alice  0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0  skin https://s.example/a.png (slim)  cape https://s.example/c.png\nNotch  b50ad385-829d-3141-a216-7e7d7539ba7f\n');
  assert.equal(said((await run(['user', 'set', 'Alice', '--no-skin', '--no-cape', '--classic'])).stdout), 'Updated Alice: Alice  0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0\n');
  assert.equal((await run(['user', 'passwd', 'ALICE'], 'new-password\n')).stdout, `Changed the password of Alice; their sessions have ended\n${DB_LINE}`);
  assert.equal((await run(['user', 'remove', 'notch'])).stdout, `Removed Notch\n${DB_LINE}`);
  assert.equal((await run(['user', 'remove', 'alice', '--db', DB])).stdout, `Removed Alice\n${DB_LINE}`);
  assert.equal((await run(['user', 'list'])).stdout, `No players yet\n${DB_LINE}`);
});

test('user skin and user cape store hosted textures from files, and refuse bad ones', async () => {
  const file = (name: string, bytes: Buffer): string => (writeFileSync(join(dir, name), bytes), join(dir, name));
  await run(['user', 'add', 'Skinny'], 'open-sesame');
  const skin = await run(['user', 'skin', 'skinny', file('s.png', encodePng(64, 32)), '--slim']);
  assert.match(said(skin.stdout), /^Updated Skinny: Skinny {2}\S+ {2}skin hosted [0-9a-f]{64} \(slim\)\n$/);
  const cape = await run(['user', 'cape', 'Skinny', file('hd.png', encodePng(128, 64)), '--hd-textures']);
  assert.match(said(cape.stdout), /cape hosted [0-9a-f]{64}\n$/);
  assert.deepEqual(await run(['user', 'cape', 'Skinny', join(dir, 'hd.png')]), { code: 1, stdout: '', stderr: `cape must be 64×32, got 128×64\n${DB_LINE}` });
  assert.deepEqual(await run(['user', 'skin', 'Skinny', join(dir, 'none.png')]), { code: 1, stdout: '', stderr: `mcauth: cannot read "${join(dir, 'none.png')}": ENOENT\n${DB_LINE}` });
  const big = file('big.png', Buffer.alloc(1024 * 1024 + 1));
  assert.equal((await run(['user', 'skin', 'Skinny', big])).stderr, `a texture must be at most 1048576 bytes, got 1048577\n${DB_LINE}`);
  assert.equal((await run(['user', 'skin', 'Skinny', big, '--slim', '--classic'])).code, 2);
  // A device that never ends is read no further than the limit.
  assert.equal((await run(['user', 'skin', 'Skinny', '/dev/zero'])).stderr, `a texture must be at most 1048576 bytes, got 1048577\n${DB_LINE}`);
});

test('invite create, list and revoke: the code shown once, an id after, the link with a public URL', async () => {
  const url = { MCAUTH_PUBLIC_URL: 'https://auth.example.org', MCAUTH_BASE_PATH: 'mc' };
  const made = await run(['invite', 'create', '--uses', '3', '--expires', '60'], '', url);
  const [, id, code] = /^Invite ([0-9a-f]{12}) for 3 players, valid until \S+ \S+ UTC; its code is shown only now:\nCode: ([0-9a-f]{32})\n/.exec(made.stdout) ?? [];
  assert.ok(id && code, made.stdout);
  assert.equal(made.stdout, `${made.stdout.split('\n')[0]}\nCode: ${code}\nLink: https://auth.example.org/mc/account#invite=${code}\n${DB_LINE}`);
  const plain = await run(['invite', 'create']);
  assert.match(plain.stdout, /^Invite [0-9a-f]{12} for 1 player, valid until .*\nCode: [0-9a-f]{32}\nDatabase: /, 'no link without a public URL');
  assert.equal(plain.stderr, "mcauth: warning: no public URL in MCAUTH_PUBLIC_URL or a --config file: the link is the account page's address ({--public-url}{base}/account) followed by #invite= and this code\n");
  assert.equal(made.stderr, '', 'no warning with a public URL');
  const list = (await run(['invite', 'list'])).stdout;
  assert.match(list, new RegExp(`^${id} {2}3 uses left {2}expires \\S+ \\S+ UTC {2}created \\S+ \\S+ UTC\n[0-9a-f]{12} {2}1 use left `), list);
  assert.equal((await run(['invite', 'revoke', code!])).stdout, `Revoked invite ${id}\n${DB_LINE}`);
  const other = /Invite ([0-9a-f]{12})/.exec(plain.stdout)![1]!;
  assert.equal((await run(['invite', 'revoke', other])).stdout, `Revoked invite ${other}\n${DB_LINE}`, 'by its id');
  assert.equal((await run(['invite', 'list'])).stdout, `No invites that can still be used\n${DB_LINE}`);
  assert.deepEqual(await run(['invite', 'revoke', other]), { code: 1, stdout: '', stderr: `No invite "${other}"\n${DB_LINE}` });
  assert.deepEqual(await run(['invite', 'create', '--uses', '0']), { code: 1, stdout: '', stderr: `The uses must be a whole number from 1 to 10000\n${DB_LINE}` });
  assert.deepEqual(await run(['invite', 'create', '--expires', '0']), { code: 1, stdout: '', stderr: `The expiry must be a whole number of seconds from 1 to 315360000\n${DB_LINE}` });
});

test('user reset-link prints a one-time link (or the code alone, with a warning) valid for --reset-ttl', async () => {
  await run(['user', 'add', 'Forgetful'], 'open-sesame');
  const linked = await run(['user', 'reset-link', 'forgetful'], '', { MCAUTH_PUBLIC_URL: 'https://auth.example.org', MCAUTH_RESET_TTL: '120' });
  const [, until, code] = /^Reset link for Forgetful, valid once until (\S+ \S+) UTC; any earlier one is void:\nhttps:\/\/auth\.example\.org\/account#reset=([0-9a-f]{32})\n/.exec(linked.stdout) ?? [];
  assert.ok(code, linked.stdout);
  const minutes = (Date.parse(`${until!.replace(' ', 'T')}Z`) - Date.now()) / 60_000;
  assert.ok(minutes > 1 && minutes <= 2, `valid for 2 minutes: ${until}`);
  assert.equal(linked.stderr, '');
  const bare = await run(['user', 'reset-link', 'Forgetful']);
  assert.match(bare.stdout, /^Reset link for Forgetful, valid once until .*; any earlier one is void:\n[0-9a-f]{32}\nDatabase: /);
  assert.match(bare.stderr, /^mcauth: warning: no public URL in MCAUTH_PUBLIC_URL or a --config file: the link is the account page's address/);
  assert.deepEqual(await run(['user', 'reset-link', 'Nobody']), { code: 1, stdout: '', stderr: `No player named "Nobody"\n${DB_LINE}` });
});

test('refusals exit 1 with the reason on standard error', async () => {
  await run(['user', 'add', 'Bob'], 'open-sesame');
  await run(['user', 'add', 'Kate'], 'open-sesame'); // "\u212Aate" folds to "kate" with toLowerCase()
  const cases: [string[], string, string][] = [
    [['user', 'add', 'ab'], 'open-sesame', 'Invalid name "ab": use 3 to 16 letters, digits and _\n'],
    [['user', 'add', 'BOB'], 'open-sesame', 'The name "BOB" is taken\n'],
    [['user', 'add', 'Carol'], '\n', 'The password must not be empty\n'],
    [['user', 'add', 'Carol', '--uuid', 'xyz'], 'open-sesame', 'Invalid UUID "xyz"\n'],
    [['user', 'passwd', 'nobody'], 'open-sesame', 'No player named "nobody"\n'],
    [['user', 'set', 'Bob', '--skin-url', 'ftp://x/y.png'], '', 'Invalid URL "ftp://x/y.png": use an https:// address (http:// only with --allow-http-textures)\n'],
    [['user', 'set', 'Bob', '--cape-url', ''], '', 'Invalid URL "": use an https:// address (http:// only with --allow-http-textures)\n'],
    // A URL parses without its `//`; kept so, its host could not be read back (skinDomains).
    [['user', 'set', 'Bob', '--skin-url', 'https:cdn.example.org/b.png'], '', 'Invalid URL "https:cdn.example.org/b.png": use an https:// address (http:// only with --allow-http-textures)\n'],
    [['user', 'passwd', '\u212Aate'], 'open-sesame', 'No player named "\u212Aate"\n'],
    [['user', 'add', 'Dave', '--db', join(dir, 'no', 'such', 'dir.db')], 'open-sesame', `mcauth: cannot open the database "${join(dir, 'no', 'such', 'dir.db')}": unable to open database file (its folder does not exist)\n`],
  ];
  // Every refusal after the database was opened names it, as a success does.
  for (const [argv, stdin, stderr] of cases) {
    const opened = !stderr.includes('cannot open the database');
    assert.deepEqual(await run(argv, stdin), { code: 1, stdout: '', stderr: opened ? `${stderr}${DB_LINE}` : stderr }, argv.join(' '));
  }
  const bob = (await run(['user', 'list'])).stdout.split('\n')[0]!.split('  ')[1]!;
  assert.equal((await run(['user', 'add', 'Carol', '--uuid', bob], 'open-sesame')).stderr, `The UUID ${bob} belongs to another player\n${DB_LINE}`);
});

test('malformed command lines exit 2 and point to --help', async () => {
  const cases: [string[], string][] = [
    [['user'], 'user needs a command: add, passwd, remove, list, show, lock, unlock, rename, set, skin, cape, reset-link'],
    [['invite'], 'invite needs a command: create, list, revoke'],
    [['invite', 'frob'], 'unknown invite command "frob"'],
    [['invite', 'create', '--uses', 'two'], '--uses must be a whole number'],
    [['invite', 'create', '--expires=-5'], '--expires must be a whole number'],
    [['invite', 'revoke'], 'expected CODE, got none'],
    [['user', 'frob', 'x'], 'unknown user command "frob"'],
    [['user', 'rename', 'x'], 'expected NAME NEW, got "x"'],
    [['user', 'add', 'Eve', '--uuid', 'x', '--offline-uuid'], 'give --uuid or --offline-uuid, not both'],
    [['user', 'set', 'Eve'], 'nothing to change: give at least one option'],
    [['user', 'set', 'Eve', '--slim', '--classic'], 'give --slim or --classic, not both'],
    [['user', 'set', 'Eve', '--skin-url', 'https://x/y', '--no-skin'], 'give --skin-url or --no-skin, not both'],
    [['user', 'list', 'extra'], 'expected no arguments, got "extra"'],
    // Any input is quoted back cut to 64 characters.
    [['user', 'list', 'y'.repeat(200)], `expected no arguments, got "${'y'.repeat(64)}…"`],
    [[`--${'z'.repeat(200)}`], `unknown option "--${'z'.repeat(62)}…"`],
    [['user', 'show', 'Eve', `--${'z'.repeat(200)}`], `unknown option "--${'z'.repeat(62)}…"`],
    [['frobnicate'.repeat(20)], `unknown command "${'frobnicate'.repeat(20).slice(0, 64)}…"`],
    [['frobnicate'], 'unknown command "frobnicate"'],
    [['serve', '--port', 'x'], '--port must be a whole number from 0 to 65535, got "x"'],
    [['--colour'], 'unknown option "--colour"'],
    [['user', 'list', '--db', ':memory:'], 'this command needs a database file: :memory: is gone when the command ends'],
  ];
  for (const [argv, message] of cases) assert.deepEqual(await run(argv), { code: 2, stdout: '', stderr: `mcauth: ${message} (see --help)\n` }, argv.join(' '));
});

test('--help lists the commands and exits 0', async () => {
  const { code, stdout } = await run(['user', 'add', '--help']);
  assert.equal(code, 0);
  const texts = ['serve', '--join-ttl SECONDS', 'MCAUTH_TOKEN_TTL', 'user add NAME', 'user set NAME', 'user reset-link NAME', 'invite create', '--account-page'];
  texts.push('user show NAME', 'user lock NAME [--reason TEXT]', 'user unlock NAME', 'user rename NAME NEW', '--version', 'Database: /absolute/path', '1 to 256 characters');
  for (const text of texts) assert.ok(stdout.includes(text), text);
});

test('on a terminal the password is read twice without echo, and must match', async () => {
  const terminal = () => Object.assign(new PassThrough(), { isTTY: true, raw: [] as boolean[], setRawMode(raw: boolean) { this.raw.push(raw); } });
  let prompts = '';
  const output = new Writable({ write: (chunk, _enc, next) => ((prompts += String(chunk)), next()) });
  const input = terminal();
  const read = readNewPassword(input, output);
  input.write('pw1\u007f2\r');
  setImmediate(() => input.write('pw2\n'));
  assert.equal(await read, 'pw2');
  assert.deepEqual(input.raw, [true, false, true, false]);
  assert.equal(prompts, 'Password: \nRepeat password: \n', 'prompts only, nothing typed');
  const mismatch = terminal();
  const refused = readNewPassword(mismatch, output);
  mismatch.write('a\r');
  setImmediate(() => mismatch.write('b\r'));
  await assert.rejects(refused, /The passwords do not match/);
  const interrupted = terminal();
  const cancelled = readNewPassword(interrupted, output);
  interrupted.write('abc\u0003');
  await assert.rejects(cancelled, /cancelled/);
  assert.equal(interrupted.raw.at(-1), false, 'the terminal is left in cooked mode');
});
