// `npm run release` (deploy/release.ts), built once into a temp folder, and its executable run as
// an owner runs it, with no Node on the PATH (a folder holding only the few tools the README's
// blocks call): SHA256SUMS checks with `sha256sum -c` (and fails on a changed file), and a second
// build makes the same bytes; the README's
// quick start runs as written on it; --version and --help say what the .js says on Node; every
// command works (every user and invite command, --print-config, import with a bcrypt hash
// checked at login in a hash worker thread, backup; db copy with PostgreSQL); `serve --workers 2` answers from two processes of the
// executable, and a SIGHUP after an `install` over it replaces them;
// it takes systemd's socket (LISTEN_FDS) with its workers; and it reaches PostgreSQL through the
// driver installed beside it as docs/deployment.md unpacks it, and says where to install the
// driver when it is not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildRelease, DEPLOY_FILES, type Release } from '../deploy/release.ts';
import { VERSION } from '../src/version.ts';
import { databaseServer, postgresMissing, type DatabaseServer } from './helpers/postgres.ts';
import { fetchReply, ROOT, runProc, spawnListening, tempDir, timedPost } from './helpers/process.ts';
import { commands, quickStart, runQuickStart } from './helpers/quickstart.ts';
import { hasCurl } from './helpers/shell-blocks.ts';
import { encodePng } from './helpers/png.ts';
import { startActivated } from './helpers/socket-activation.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** The tools the README's blocks and the helpers call, and nothing else: no node. */
const TOOLS = ['sh', 'curl', 'sed', 'sha256sum', 'install', 'cat', 'mkdir', 'tar', 'gzip'];
const BIN = join(tmp.dir, 'bin');
mkdirSync(BIN);
for (const tool of TOOLS) {
  const found = ['/usr/bin', '/bin', '/usr/local/bin'].map((d) => join(d, tool)).find((p) => existsSync(p));
  if (found) symlinkSync(found, join(BIN, tool));
}
/** The environment of every command here: a PATH without node. */
const ENV = { PATH: BIN };

/** A bcrypt hash in PHP's $2y$ form, of '&^%te$t?Pw@_' (test/import/bcrypt.test.ts). */
const BCRYPT_2Y = '$2y$10$be6f11548dc5fb4088410ONdC0dXnJ04y1RHcJh5fVF3XK5d.qgqK';

// Registered at the top, before the first test, as databaseServer asks.
const pg: Promise<DatabaseServer> | undefined = postgresMissing ? undefined : databaseServer();

let release: Release;
/** The executable, and a run of it with ENV in `cwd` (the release's folder unless said). */
let exe: string;
const run = (args: string[], opts: { stdin?: string; cwd?: string } = {}) => runProc([exe, ...args], { cwd: release.dir, env: ENV, ...opts });

before(() => {
  release = buildRelease(join(tmp.dir, 'release'));
  exe = release.executable;
});

/** POSTs JSON to a server on loopback. */
const post = (port: number, path: string, body: unknown) =>
  fetchReply(`http://127.0.0.1:${port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('npm run release', () => {
  test('the PATH the executable runs with has no node', () => {
    const r = spawnSync('sh', ['-c', 'command -v node'], { env: ENV });
    assert.notEqual(r.status, 0, `node is on the test's PATH: ${r.stdout}`);
  });

  test('makes the .js, the executable, the files of deploy/ a host takes, and SHA256SUMS, which sha256sum -c checks', async () => {
    assert.equal(basename(release.script), `mcauth-${VERSION}.js`);
    assert.equal(basename(release.executable), `mcauth-${VERSION}-${process.platform}-${process.arch}`);
    for (const name of DEPLOY_FILES) assert.equal(readFileSync(join(release.dir, name), 'utf8'), readFileSync(join(ROOT, 'deploy', name), 'utf8'), name);
    const checked = await runProc(['sha256sum', '-c', 'SHA256SUMS'], { cwd: release.dir, env: ENV });
    assert.equal(checked.code, 0, checked.stdout + checked.stderr);
    const named = [basename(release.executable), basename(release.script), ...DEPLOY_FILES];
    assert.deepEqual(checked.stdout.trim().split('\n').sort(), named.map((f) => `${f}: OK`).sort());
    // The check can fail: a changed byte is found.
    const changed = join(tmp.dir, 'changed');
    mkdirSync(changed);
    copyFileSync(release.sums, join(changed, 'SHA256SUMS'));
    linkSync(release.executable, join(changed, basename(release.executable)));
    writeFileSync(join(changed, basename(release.script)), readFileSync(release.script, 'utf8').replace('mcauth', 'mcautH'));
    const refused = await runProc(['sha256sum', '-c', 'SHA256SUMS'], { cwd: changed, env: ENV });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stdout, new RegExp(`${basename(release.script)}: FAILED`));
  });

  test('built again from the same commit, it is the same bytes: SHA256SUMS can be checked by building anew', () => {
    const again = buildRelease(join(tmp.dir, 'release-again'));
    assert.equal(readFileSync(again.sums, 'utf8'), readFileSync(release.sums, 'utf8'));
  });

  test("the README's quick start runs as written on the release files", { skip: hasCurl ? false : 'curl is not installed' }, async () => {
    const owner = join(tmp.dir, 'owner');
    mkdirSync(owner);
    linkSync(release.executable, join(owner, basename(release.executable)));
    copyFileSync(release.sums, join(owner, 'SHA256SUMS'));
    const { release: block } = quickStart();
    assert.ok(block.includes(basename(release.executable)), `the README names ${basename(release.executable)}`);
    const installed = await runProc(['sh', '-e', '-c', commands(block).join('\n')], { cwd: owner, env: ENV });
    assert.equal(installed.code, 0, installed.stdout + installed.stderr);
    assert.equal(installed.stdout, `${basename(release.executable)}: OK\nmcauth ${VERSION}\n`);
    await runQuickStart(owner, ENV);
  });

  test('--version and --help say what the .js says on Node', async () => {
    for (const args of [['--version'], ['--help']]) {
      const [own, js] = await Promise.all([run(args), runProc([process.execPath, release.script, ...args])]);
      assert.equal(own.code, 0, own.stderr);
      assert.equal(own.stderr, '');
      assert.equal(own.stdout, js.stdout, args[0]);
    }
  });

  test('runs the commands: user, invite, import (bcrypt, checked in a hash worker at login), backup', async () => {
    const dir = join(tmp.dir, 'commands');
    mkdirSync(dir);
    const db = join(dir, 'mcauth.db');
    const ok = async (args: string[], stdin?: string): Promise<string> => {
      const r = await run(args, { cwd: dir, ...(stdin === undefined ? {} : { stdin }) });
      assert.equal(r.code, 0, `${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    };
    assert.match(await ok(['user', 'add', 'Alice', '--db', db], 'correct-horse\n'), /^Added Alice /);
    assert.match(await ok(['invite', 'create', '--db', db]), /[A-Za-z0-9_-]{16,}/);
    writeFileSync(join(dir, 'players.json'), JSON.stringify([{ name: 'Bob', hash: BCRYPT_2Y }]));
    assert.match(await ok(['import', 'players.json', '--db', db]), /Imported: 1/);
    assert.match(await ok(['user', 'list', '--db', db]), /Alice[\s\S]*Bob|Bob[\s\S]*Alice/);
    await ok(['backup', join(dir, 'copy.db'), '--db', db]);
    assert.match(await ok(['user', 'show', 'Bob', '--db', join(dir, 'copy.db')]), /Bob/);

    const server = await spawnListening([exe, 'serve', '--port', '0', '--db', join(dir, 'copy.db')], { cwd: dir, env: ENV });
    try {
      const login = await post(server.port, '/auth', { login: 'Bob', password: '&^%te$t?Pw@_' });
      assert.equal(login.body?.success, true, login.text);
    } finally {
      await server.stop();
    }
  });

  test('runs every other command: user passwd, rename, lock, unlock, set, skin, cape, reset-link, remove; invite list, revoke; --print-config', async () => {
    const dir = join(tmp.dir, 'more-commands');
    mkdirSync(dir);
    const db = join(dir, 'mcauth.db');
    const ok = async (args: string[], stdin?: string): Promise<string> => {
      const r = await run([...args, '--db', db], { cwd: dir, ...(stdin === undefined ? {} : { stdin }) });
      assert.equal(r.code, 0, `${args.join(' ')}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    };
    await ok(['user', 'add', 'Carol'], 'first-password\n');
    await ok(['user', 'passwd', 'Carol'], 'second-password\n');
    await ok(['user', 'rename', 'Carol', 'Caroline']);
    await ok(['user', 'lock', 'Caroline', '--reason', 'a test']);
    assert.match(await ok(['user', 'show', 'Caroline']), /^lock: .*a test/m);
    await ok(['user', 'unlock', 'Caroline']);
    await ok(['user', 'set', 'Caroline', '--cape-url', 'https://textures.example.org/cape.png']);
    assert.match(await ok(['user', 'show', 'Caroline']), /^cape: +https:\/\/textures\.example\.org\/cape\.png/m);
    writeFileSync(join(dir, 'skin.png'), encodePng(64, 64));
    writeFileSync(join(dir, 'cape.png'), encodePng(64, 32, { seed: 2 }));
    await ok(['user', 'skin', 'Caroline', 'skin.png', '--slim']);
    await ok(['user', 'cape', 'Caroline', 'cape.png']);
    const shown = await ok(['user', 'show', 'Caroline']);
    assert.match(shown, /^skin: +hosted [0-9a-f]+ \(slim\)$/m);
    assert.match(shown, /^cape: +hosted [0-9a-f]+$/m, 'the hosted cape replaced the URL');
    assert.match(shown, /^lock: +not locked$/m);
    assert.match(await ok(['user', 'reset-link', 'Caroline']), /\n[0-9a-f]{32}\n/);
    await ok(['invite', 'create']);
    const id = /^(\S+) {2}1 use left/m.exec(await ok(['invite', 'list']))?.[1];
    assert.ok(id, 'invite list names the invite');
    assert.match(await ok(['invite', 'revoke', id]), /^Revoked invite /);
    assert.doesNotMatch(await ok(['invite', 'list']), new RegExp(id));
    await ok(['user', 'add', 'Erin'], 'erin-password\n');
    await ok(['user', 'remove', 'Erin']);
    assert.doesNotMatch(await ok(['user', 'list']), /Erin/);
    const printed = await run(['--print-config', '--port', '25599'], { cwd: dir });
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /25599/);

    // The server the executable starts on that database logs the player in by the new name and password.
    const server = await spawnListening([exe, 'serve', '--port', '0', '--db', db], { cwd: dir, env: ENV });
    try {
      const login = await post(server.port, '/auth', { login: 'Caroline', password: 'second-password' });
      assert.equal(login.body?.success, true, login.text);
    } finally {
      await server.stop();
    }
  });

  test('serve --workers 2 answers from two processes of the executable, and a SIGHUP replaces them with the executable installed over it', async () => {
    const dir = join(tmp.dir, 'workers');
    mkdirSync(dir);
    const installed = join(dir, 'mcauth');
    copyFileSync(exe, installed);
    const server = await spawnListening([installed, 'serve', '--port', '0', '--db', join(dir, 'mcauth.db'), '--workers', '2', '--log-format', 'json'], { cwd: dir, env: ENV });
    /** The pids that answered the first `n` requests, once the log holds them. */
    const answeredBy = (n: number): Promise<Set<number>> =>
      server.waitFor(`${n} request lines`, (out) => {
        const lines = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg?: string; pid: number });
        const answered = lines.filter((l) => l.msg === 'request').map((l) => l.pid);
        return answered.length >= n ? new Set(answered.slice(0, n)) : undefined;
      });
    try {
      assert.match(server.line, /2 workers/);
      for (let i = 0; i < 8; i++) assert.equal((await timedPost(server.port, '/profiles', ['Alice'])).status, 200);
      const first = await answeredBy(8);
      assert.equal(first.size, 2, `answered by ${[...first].join(', ')}`);
      // An upgrade: `install` replaces the running file (cp could not: "Text file busy"), then a reload.
      const upgraded = await runProc(['install', '-m', '0755', exe, installed], { env: ENV });
      assert.equal(upgraded.code, 0, upgraded.stderr);
      server.child.kill('SIGHUP');
      await server.waitFor('the reload', (out) => (/mcauth reloaded: the 2 workers serving/.test(out) ? true : undefined));
      // Once the old workers have stopped: a connection made as the last one is told to stop can
      // be dealt to it and go unanswered, on node as here (a fault of the reload, not the release's).
      await server.waitFor('the old workers stopped', (out) => ((out.match(/mcauth stopped: every answered write/g) ?? []).length >= 2 ? true : undefined));
      for (let i = 0; i < 8; i++) assert.equal((await timedPost(server.port, '/profiles', ['Alice'])).status, 200);
      const all = await answeredBy(16);
      assert.equal(all.size, 4, `new workers answer after the reload: ${[...all].join(', ')}`);
    } finally {
      assert.equal((await server.stop()).code, 0);
    }
  });

  test("takes systemd's socket (LISTEN_FDS) with --workers 2", async () => {
    const dir = join(tmp.dir, 'socket');
    mkdirSync(dir);
    const db = join(dir, 'mcauth.db');
    assert.equal((await run(['user', 'add', 'Alice', '--db', db], { stdin: 'correct-horse\n' })).code, 0);
    const s = await startActivated(['--db', db, '--workers', '2'], 1, undefined, { command: [exe], env: ENV });
    try {
      const listening = s.lines().find((l) => l.msg?.startsWith('mcauth listening on') === true);
      assert.match(listening?.msg ?? '', /on the socket systemd passed as fd 3/);
      const login = await post(s.port, '/auth', { login: 'Alice', password: 'correct-horse' });
      assert.equal(login.body?.success, true, login.text);
      assert.equal(await s.end(), 0);
    } finally {
      s.kill();
    }
  });

  test('reaches PostgreSQL (db copy, user list, serve) with the driver installed beside it, and says where to install it when it is not', { skip: postgresMissing ?? false }, async () => {
    const server = await pg!;
    const url = server.url(await server.newDatabase('release'));
    const dir = join(tmp.dir, 'opt-mcauth');
    mkdirSync(dir);
    const installed = join(dir, 'mcauth');
    linkSync(release.executable, installed);
    const missing = await runProc([installed, 'user', 'list', '--db', url], { cwd: tmp.dir, env: ENV });
    assert.equal(missing.code, 1, missing.stderr);
    assert.ok(missing.stderr.includes(`in the executable's folder (${dir}) run: npm install postgres@3`), missing.stderr);

    // docs/deployment.md's way for a host without npm: the driver packed where npm is (here the
    // installed one, packed offline, for `npm pack postgres@3`), then the page's own lines unpack it.
    const packed = await runProc(['npm', 'pack', join(ROOT, 'node_modules', 'postgres'), '--ignore-scripts', '--pack-destination', dir], { cwd: tmp.dir });
    assert.equal(packed.code, 0, packed.stderr);
    const page = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');
    const block = /```sh\nnpm pack postgres@3[^\n]*\n([\s\S]*?)```/.exec(page)?.[1];
    assert.ok(block, 'the page unpacks the driver in a block after npm pack');
    const unpacked = await runProc(['sh', '-e', '-c', commands(block.replaceAll('/opt/mcauth', dir)).join('\n')], { cwd: dir, env: ENV });
    assert.equal(unpacked.code, 0, unpacked.stdout + unpacked.stderr);
    const sqlite = join(dir, 'mcauth.db');
    const added = await runProc([installed, 'user', 'add', 'Carol', '--db', sqlite], { cwd: tmp.dir, env: ENV, stdin: 'correct-horse\n' });
    assert.equal(added.code, 0, added.stderr);
    const copied = await runProc([installed, 'db', 'copy', '--from', sqlite, '--to', url], { cwd: tmp.dir, env: ENV });
    assert.equal(copied.code, 0, copied.stdout + copied.stderr);
    const listed = await runProc([installed, 'user', 'list', '--db', url], { cwd: tmp.dir, env: ENV });
    assert.match(listed.stdout, /^Carol /m, listed.stderr);
    const serving = await spawnListening([installed, 'serve', '--port', '0', '--db', url], { cwd: tmp.dir, env: ENV });
    try {
      const login = await post(serving.port, '/auth', { login: 'Carol', password: 'correct-horse' });
      assert.equal(login.body?.success, true, login.text);
    } finally {
      await serving.stop();
    }
  });
});
