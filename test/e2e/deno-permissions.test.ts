// dist/server.js on Deno with the narrowest permissions instead of -A (runs only with
// MCAUTH_TEST_RUNTIME=deno): the network on loopback, read and write of the database file alone,
// and the MCAUTH_* variables the program reads. The server serves and writes, the CLI adds a
// player, each permission is needed, and a path or address outside them is refused with a
// message and an exit (never a permission prompt or a hang).
//
// Found by trying (Deno 2.9): the database's -wal, -shm and -journal files and its folder need no
// grant (SQLite opens them itself; Deno checks only the path given to node:sqlite), and running
// dist/server.js needs no --allow-read of the file itself (the main module is loaded by Deno).
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { envName, SERVE_OPTIONS, USER_SETTINGS } from '../../src/cli/options.ts';
import { fetchReply, ROOT, RUNTIME, runProc, SERVER_JS, spawnListening, tempDir, type ProcResult, type Reply } from '../helpers/process.ts';
import { assertOk } from './util.ts';

const DENO = join(ROOT, 'node_modules', '.bin', 'deno');
const SKIP = RUNTIME === 'deno' ? false : 'runs only on Deno (MCAUTH_TEST_RUNTIME=deno, as in npm run test:deno)';

/** Every variable the program reads: each server option's, and MCAUTH_CONFIG. */
const ENV_NAMES = [...SERVE_OPTIONS.map((o) => envName(o.flag)), envName('config')];

const tmp = tempDir();
after(() => tmp.cleanup());
const db = join(tmp.dir, 'narrow.db');

interface Grants {
  net?: string;
  read?: string[];
  write?: string[];
  env?: string[];
}

/** The grants the server needs: loopback, its database file, its variables. */
const SERVER_GRANTS: Grants = { net: '127.0.0.1', read: [db], write: [db], env: ENV_NAMES };
/** The grants a user command needs: its database file, and the two variables that can name it. */
const USER_GRANTS: Grants = { read: [db], write: [db], env: ['MCAUTH_DB', 'MCAUTH_CONFIG', ...USER_SETTINGS.map((key) => envName(SERVE_OPTIONS.find((o) => o.key === key)!.flag))] };

/** `deno run` with exactly these grants (never -A; --no-prompt: a missing grant fails, never asks). */
function denoCommand(grants: Grants, args: string[]): string[] {
  return [
    DENO,
    'run',
    '--no-prompt',
    ...(grants.net ? [`--allow-net=${grants.net}`] : []),
    ...(grants.read ? [`--allow-read=${grants.read.join(',')}`] : []),
    ...(grants.write ? [`--allow-write=${grants.write.join(',')}`] : []),
    ...(grants.env ? [`--allow-env=${grants.env.join(',')}`] : []),
    SERVER_JS,
    ...args,
  ];
}

/** Runs to the end; a refusal must come at once, so a short timeout tells a hang from an exit. */
function runDeno(grants: Grants, args: string[], stdin?: string): Promise<ProcResult> {
  return runProc(denoCommand(grants, args), { stdin: stdin ?? '', timeoutMs: 60_000 });
}

/** Asserts an exit with a failure status and Deno's permission message naming `what`. */
function assertDenied(r: ProcResult, what: string): void {
  assert.equal(r.timedOut, false, `no exit within the timeout (a prompt or a hang)\n${r.stderr}`);
  assert.notEqual(r.code, 0, `it ran without the grant\n${r.stdout}`);
  assert.ok(r.stderr.includes(`Requires ${what}`), `stderr does not say "Requires ${what}":\n${r.stderr}`);
}

interface Narrow {
  port: number;
  post: (path: string, body: unknown) => Promise<Reply>;
  stop: () => Promise<number | null>;
}

/** Starts the server on Deno with `grants`, resolving on its listen line. */
async function startDeno(grants: Grants, args: string[]): Promise<Narrow> {
  const s = await spawnListening(denoCommand(grants, args));
  const post = (path: string, body: unknown): Promise<Reply> =>
    fetchReply(`http://127.0.0.1:${s.port}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { port: s.port, post, stop: async () => (await s.stop()).code };
}

describe('Deno with the narrowest permissions', () => {
  // Rule: the user commands work with read and write of the database file, MCAUTH_DB, MCAUTH_CONFIG and the settings they use only.
  test('user add works with the database file and MCAUTH_DB, MCAUTH_CONFIG and the settings it reads only', { skip: SKIP }, async () => {
    const r = await runDeno(USER_GRANTS, ['user', 'add', 'Alice', '--db', db], 'alice-pw\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Added Alice [0-9a-f-]{36}\nCreated a new database at \S+\n$/);
    const list = await runDeno(USER_GRANTS, ['user', 'list', '--db', db]);
    assert.match(list.stdout, /^Alice {2}/, list.stderr);
  });

  // Rule: the server works on loopback, its database file and its variables: it reads, writes
  // (a login, a join) and stops cleanly.
  test('the server logs in, joins and stops with net 127.0.0.1, the db file and MCAUTH_* only', { skip: SKIP }, async () => {
    if (!existsSync(db)) assert.equal((await runDeno(USER_GRANTS, ['user', 'add', 'Alice', '--db', db], 'alice-pw\n')).code, 0);
    const s = await startDeno(SERVER_GRANTS, ['serve', '--db', db, '--port', '0']);
    let code: number | null;
    try {
      const auth = assertOk(await s.post('/auth', { login: 'Alice', password: 'alice-pw' }));
      assert.equal(auth.username, 'Alice');
      // SQLite made its WAL files beside the database without a grant for them.
      assert.ok(existsSync(`${db}-wal`) && existsSync(`${db}-shm`), 'the -wal and -shm files exist');
      assert.equal(assertOk(await s.post('/join', { accessToken: auth.accessToken, userUUID: auth.userUUID, serverID: 'narrow' })), true);
      assert.equal(assertOk(await s.post('/hasJoined', { username: 'Alice', serverID: 'narrow' })).userUUID, auth.userUUID);
    } finally {
      code = await s.stop();
    }
    assert.equal(code, 0, 'a clean stop: the database closes under the same grants');
  });

  // Rule: the account page and invites need no grant beyond the same ones: invite create runs
  // with the user commands' grants, the server serves the page and signs a player up with it.
  test('invite create, the account page and a sign-up by invite work under the same grants', { skip: SKIP }, async () => {
    if (!existsSync(db)) assert.equal((await runDeno(USER_GRANTS, ['user', 'add', 'Alice', '--db', db], 'alice-pw\n')).code, 0);
    const made = await runDeno(USER_GRANTS, ['invite', 'create', '--db', db]);
    assert.equal(made.code, 0, made.stderr);
    const code = /^Code: ([0-9a-f]{32})$/m.exec(made.stdout)?.[1];
    assert.ok(code, made.stdout);
    const s = await startDeno(SERVER_GRANTS, ['serve', '--db', db, '--port', '0', '--account-page', '--registration', 'invite']);
    let stopped: number | null;
    try {
      const page = await fetchReply(`http://127.0.0.1:${s.port}/account`);
      assert.equal(page.status, 200, page.text);
      assert.match(page.text, /<form/);
      const joined = assertOk(await s.post('/account/register', { name: 'Invitee', password: 'invitee-password', invite: code }));
      assert.equal(joined.username, 'Invitee');
      assert.equal(assertOk(await s.post('/auth', { login: 'Invitee', password: 'invitee-password' })).userUUID, joined.userUUID);
    } finally {
      stopped = await s.stop();
    }
    assert.equal(stopped, 0);
  });

  // Rule: a config file is read with its path added to --allow-read, and only then.
  test('a config file needs its own read grant', { skip: SKIP }, async () => {
    const file = join(tmp.dir, 'config.json');
    writeFileSync(file, JSON.stringify({ db, basePath: '/mc' }));
    assertDenied(await runDeno(SERVER_GRANTS, ['--config', file, '--print-config']), `read access to "${file}"`);
    const r = await runDeno({ ...SERVER_GRANTS, read: [db, file] }, ['--config', file, '--print-config']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).basePath, '/mc');
  });

  // Rule: a database outside the grants is refused, with a message, at once, and not created.
  test('a database outside the grants is refused', { skip: SKIP }, async () => {
    const outside = join(tmp.dir, 'outside.db');
    assertDenied(await runDeno(SERVER_GRANTS, ['serve', '--db', outside, '--port', '0']), `read access to "${outside}"`);
    assertDenied(await runDeno(USER_GRANTS, ['user', 'list', '--db', outside]), `read access to "${outside}"`);
    // Read alone is not enough: the server writes.
    assertDenied(await runDeno({ ...SERVER_GRANTS, read: [db, outside] }, ['serve', '--db', outside, '--port', '0']), `write access to "${outside}"`);
    assert.equal(existsSync(outside), false);
  });

  // Rule: listening anywhere but the granted address is refused, with an exit.
  test('an address outside --allow-net is refused', { skip: SKIP }, async () => {
    assertDenied(await runDeno(SERVER_GRANTS, ['serve', '--db', db, '--port', '0', '--host', '0.0.0.0']), 'net access to "0.0.0.0:0"');
  });

  // Rule: each grant is needed: without it the program stops and says which one.
  test('every grant is needed', { skip: SKIP }, async () => {
    const serve = ['serve', '--db', db, '--port', '0'];
    assertDenied(await runDeno({ ...SERVER_GRANTS, net: undefined }, serve), 'net access to "127.0.0.1:0"');
    assertDenied(await runDeno({ ...SERVER_GRANTS, read: undefined }, serve), `read access to "${db}"`);
    assertDenied(await runDeno({ ...SERVER_GRANTS, write: undefined }, serve), `write access to "${db}"`);
    assertDenied(await runDeno({ ...SERVER_GRANTS, env: undefined }, serve), 'env access to "MCAUTH_CONFIG"');
    // Every variable's name is needed, the last one read as well as the first.
    for (const name of [ENV_NAMES[0]!, envName('shutdown-timeout')]) {
      assertDenied(await runDeno({ ...SERVER_GRANTS, env: ENV_NAMES.filter((n) => n !== name) }, serve), `env access to "${name}"`);
    }
    assertDenied(await runDeno({ ...USER_GRANTS, env: USER_GRANTS.env!.filter((n) => n !== 'MCAUTH_DB') }, ['user', 'list']), 'env access to "MCAUTH_DB"');
    assertDenied(await runDeno({ ...USER_GRANTS, env: USER_GRANTS.env!.filter((n) => n !== 'MCAUTH_PUBLIC_URL') }, ['user', 'list']), 'env access to "MCAUTH_PUBLIC_URL"');
  });
});
