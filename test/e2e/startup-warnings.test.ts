// Start-up warnings: one line each at level 40 (warn), before the listening line, and the server
// keeps running. Each appears exactly once when its condition holds, and not otherwise:
// - hosted skins or capes in the database but no --public-url (the server serves, leaving them
//   out of answers, instead of refusing to start and being restarted in a loop);
// - the database file (or its -wal, -shm) open to group or others, naming the file and chmod 600;
// - a --config file (or MCAUTH_CONFIG) holding a secret (apiKey, adminToken) and open to group or
//   others (one without a secret is meant to be readable: see deploy/mcauth.service);
// - a --host other than loopback (127.0.0.0/8, ::1, localhost) without --api-key;
// - --registration invite or open without --account-page (no one can sign up).
// Warnings show at --log-level info and debug, not at error or silent; with --workers the primary
// logs them once. And the database and its -wal and -shm files are made 0600 whatever the umask
// (here 022, the usual one), by the server and by `user add` on a new path.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { addUser, fetchReply, runCli, RUNTIME, spawnOnPort, startServer, tempDir } from '../helpers/process.ts';
import type { RunningServer } from '../helpers/process.ts';
import { encodePng } from '../helpers/png.ts';
import { assertOk, sleep } from './util.ts';

const tmp = tempDir();
// Children inherit the umask: 022 is the common default, under which SQLite alone makes 0644 files.
const umaskBefore = process.umask(0o022);
after(() => {
  process.umask(umaskBefore);
  tmp.cleanup();
});

const KEY = 'warn-Api-Key-0123456789abcdef';
const PW = 'correct-horse-1';
let fresh = 0;
/** A path in the temp folder where no file is yet. */
const newPath = (name: string): string => pathJoin(tmp.dir, `${++fresh}-${name}`);

/** The permission bits of `path`. */
const modeOf = (path: string): number => statSync(path).mode & 0o777;

/** Waits until `check` holds, up to 10 s; fails with `what` otherwise. */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > until) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The messages of the level-40 lines of a JSON log. */
function warningsIn(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, any>)
    .filter((l) => l.level === 40)
    .map((l) => l.msg as string);
}

/**
 * Starts the server with `args`, runs `during` while it serves (it checks /health first), stops
 * it and returns its warnings; also asserts that they come before the listening line.
 */
async function warningsOf(args: string[], env: Record<string, string> = {}, during?: (s: RunningServer) => Promise<void>): Promise<string[]> {
  const s = await startServer(args, env);
  try {
    assert.equal((await fetchReply(`${s.url}/health`)).status, 200, 'it serves');
    await during?.(s);
  } finally {
    assert.equal(await s.stop(), 0, s.stderr());
  }
  await waitFor(() => s.stdout().includes('mcauth stopped'), 'the "stopped" line');
  const lines = s.stdout().split('\n');
  const listening = lines.findIndex((l) => l.includes('listening on http://'));
  assert.deepEqual(warningsIn(lines.slice(listening).join('\n')), [], 'no warning after the listening line');
  return warningsIn(s.stdout());
}

/** A database at a new path holding one player, made by `user add`. */
async function dbWithPlayer(name: string): Promise<string> {
  const db = newPath(name);
  await addUser(db, 'Wendy', PW);
  return db;
}

test('none of the conditions: no warning', async () => {
  assert.deepEqual(await warningsOf(['--db', await dbWithPlayer('quiet.db')]), []);
  assert.deepEqual(await warningsOf(['--db', ':memory:']), []);
});

describe('hosted textures without --public-url', () => {
  test('one warning naming --public-url; the server runs and leaves the texture out of answers', async () => {
    const db = await dbWithPlayer('hosted.db');
    const png = newPath('skin.png');
    writeFileSync(png, encodePng(64, 64, { seed: 7 }));
    const stored = await runCli(['user', 'skin', 'Wendy', png, '--db', db]);
    assert.equal(stored.code, 0, stored.stderr);
    const warnings = await warningsOf(['--db', db], {}, async (s) => {
      const result = assertOk(await s.post('/auth', { login: 'Wendy', password: PW }));
      assert.equal(result.skinUrl ?? null, null, `no address for the hosted skin: ${JSON.stringify(result)}`);
      assert.equal(assertOk(await s.post('/join', { accessToken: result.accessToken, userUUID: result.userUUID, serverID: 'warn-srv' })), true);
      const joined = assertOk(await s.post('/hasJoined', { username: 'Wendy', serverID: 'warn-srv' }));
      const profile = assertOk(await s.post('/profile', { userUUID: result.userUUID }));
      assert.equal(joined.userUUID, result.userUUID);
      assert.equal(profile.username, 'Wendy');
      for (const [what, answer] of [['/hasJoined', joined], ['/profile', profile]]) {
        assert.equal(answer.skinUrl ?? null, null, `${what}: no address for the hosted skin: ${JSON.stringify(answer)}`);
      }
    });
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /hosted skins or capes/);
    assert.match(warnings[0]!, /set --public-url/);
    assert.deepEqual(await warningsOf(['--db', db, '--public-url', 'https://auth.example.org']), [], 'with --public-url: none');
  });
});

describe('a database file open to other users', () => {
  test('one warning naming the file and chmod 600; none once it is 0600', async () => {
    const db = await dbWithPlayer('open.db');
    chmodSync(db, 0o644);
    const warnings = await warningsOf(['--db', db]);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.ok(warnings[0]!.includes(`${db} (mode 0644)`), warnings[0]);
    assert.match(warnings[0]!, /password hashes/);
    assert.match(warnings[0]!, /chmod 600/);
    chmodSync(db, 0o640);
    assert.equal((await warningsOf(['--db', db])).length, 1, 'group read counts too');
    chmodSync(db, 0o600);
    assert.deepEqual(await warningsOf(['--db', db]), []);
  });
});

describe('a config file with a secret, open to other users', () => {
  test('one warning naming the file and chmod 600, by --config or MCAUTH_CONFIG; none at 0600 or without a secret', async () => {
    const db = await dbWithPlayer('config.db');
    const withKey = newPath('with-key.json');
    writeFileSync(withKey, JSON.stringify({ db, apiKey: KEY }));
    chmodSync(withKey, 0o644);
    for (const [args, env] of [[['--config', withKey], {}], [[], { MCAUTH_CONFIG: withKey }]] as [string[], Record<string, string>][]) {
      const warnings = await warningsOf(args, env);
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.ok(warnings[0]!.includes(`${withKey} (mode 0644)`), warnings[0]);
      assert.match(warnings[0]!, /apiKey/);
      assert.ok(warnings[0]!.includes(`chmod 600 ${withKey}`), warnings[0]);
      assert.ok(!warnings[0]!.includes(KEY), 'not the key itself');
    }
    chmodSync(withKey, 0o600);
    assert.deepEqual(await warningsOf(['--config', withKey]), []);
    const noSecret = newPath('no-secret.json');
    writeFileSync(noSecret, JSON.stringify({ db, joinTtl: 30 }));
    chmodSync(noSecret, 0o644);
    assert.deepEqual(await warningsOf(['--config', noSecret]), [], 'a file without secrets may be readable');
  });
});

describe('--registration without --account-page', () => {
  test('one warning that no one can sign up, naming --account-page; none with it or with registration off', async () => {
    const db = await dbWithPlayer('registration.db');
    for (const mode of ['invite', 'open']) {
      const warnings = await warningsOf(['--db', db, '--registration', mode], {}, async (s) => {
        assert.equal((await s.post('/account/register', { name: 'Newbie', password: PW })).status, 404, 'the API is off');
      });
      assert.deepEqual(warnings, [`--registration ${mode} has no effect without --account-page: no one can sign up, as the page and its API are off; set --account-page too`]);
      assert.deepEqual(await warningsOf(['--db', db, '--registration', mode, '--account-page']), []);
    }
    assert.deepEqual(await warningsOf(['--db', db, '--registration', 'off']), []);
  });
});

describe('--shutdown-timeout shorter than --keep-alive-timeout and its grace', () => {
  // Rule: a stop that ends before idle kept-alive connections are dropped by their clients cuts
  // them, and one may cross a request just sent on it (which ends a LauncherServer).
  test('one warning naming both and the least safe value; none at that value', async () => {
    const db = await dbWithPlayer('shutdown.db');
    assert.deepEqual(await warningsOf(['--db', db, '--shutdown-timeout', '7', '--keep-alive-timeout', '5']), [
      '--shutdown-timeout 7 is shorter than --keep-alive-timeout 5 and the 3 s that follow it: a stop may cut an idle kept-alive connection just as its client sends on it, and a LauncherServer crashes on that; give --shutdown-timeout 8 or more',
    ]);
    assert.deepEqual(await warningsOf(['--db', db, '--shutdown-timeout', '8', '--keep-alive-timeout', '5']), []);
  });
});

describe('a non-loopback --host without --api-key', () => {
  test('one warning saying what is exposed and what fixes it; none with --api-key or on loopback', async () => {
    const db = await dbWithPlayer('host.db');
    // 0.0.0.0 also listens on loopback, which is all this test connects to.
    const warnings = await warningsOf(['--db', db, '--host', '0.0.0.0']);
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(warnings[0]!, /^--host 0\.0\.0\.0 is not loopback and there is no --api-key: anyone who can reach port \d+ on any address of this host can log players in, record joins, and look up every player; set --api-key/);
    assert.match(warnings[0]!, /or listen on 127\.0\.0\.1$/);
    assert.deepEqual(await warningsOf(['--db', db, '--host', '0.0.0.0', '--api-key', KEY]), []);
    assert.deepEqual(await warningsOf(['--db', db, '--host', '127.0.0.1']), []);
  });
});

/** The whole standard output of a server started on a fixed port (at levels with no listening line), once it answered /health and stopped. */
async function stdoutAtFixedPort(args: string[]): Promise<string> {
  const s = await spawnOnPort(args);
  assert.equal(await s.stop(), 0, s.stderr());
  return s.stdout();
}

test('every condition at once: four warnings, one each, at info and debug; none at error', async () => {
  const db = await dbWithPlayer('all.db');
  const png = newPath('cape.png');
  writeFileSync(png, encodePng(64, 32, { seed: 9 }));
  assert.equal((await runCli(['user', 'cape', 'Wendy', png, '--db', db])).code, 0);
  chmodSync(db, 0o644);
  const config = newPath('all.json');
  writeFileSync(config, JSON.stringify({ adminToken: 'warn-Admin-Token-0123456789' }));
  chmodSync(config, 0o644);
  const args = ['--db', db, '--host', '0.0.0.0', '--config', config];
  for (const level of ['info', 'debug']) {
    const warnings = await warningsOf([...args, '--log-level', level]);
    assert.equal(warnings.length, 4, `at ${level}:\n${warnings.join('\n')}`);
    for (const about of [/--public-url/, new RegExp(`${db.replace(/[.]/g, '\\.')} \\(mode 0644\\)`), /config file holds adminToken/, /no --api-key/]) {
      assert.equal(warnings.filter((w) => about.test(w)).length, 1, `${about} once at ${level}:\n${warnings.join('\n')}`);
    }
  }
  assert.equal(await stdoutAtFixedPort([...args, '--log-level', 'error']), '', 'at error: no warning (and nothing else)');
});

test('--workers 2: the primary logs each warning once', { skip: RUNTIME === 'deno' ? 'Deno has no node:cluster' : false }, async () => {
  const db = await dbWithPlayer('workers.db');
  const warnings = await warningsOf(['--db', db, '--host', '0.0.0.0', '--workers', '2']);
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0]!, /no --api-key/);
});

describe('the database is made 0600 whatever the umask (022 here)', () => {
  test('by the server on a new path: the file, its -wal and its -shm, while it runs', async () => {
    const db = newPath('served.db');
    const s = await startServer(['--db', db]);
    try {
      assertOk(await s.post('/profiles', ['Nobody']));
      for (const file of [db, `${db}-wal`, `${db}-shm`]) {
        assert.ok(existsSync(file), `${file} exists while the server runs`);
        assert.equal(modeOf(file).toString(8), '600', file);
      }
    } finally {
      await s.stop();
    }
    assert.equal(modeOf(db).toString(8), '600', 'after the stop');
  });

  test('by `user add` on a new path (and the server then opens it without a warning)', async () => {
    const db = newPath('added.db');
    await addUser(db, 'Wendy', PW);
    assert.equal(modeOf(db).toString(8), '600');
    for (const file of [`${db}-wal`, `${db}-shm`]) if (existsSync(file)) assert.equal(modeOf(file).toString(8), '600', file);
    assert.deepEqual(await warningsOf(['--db', db]), []);
  });

  test('an existing file keeps its mode: only a new one is made 0600', async () => {
    const db = await dbWithPlayer('kept.db');
    chmodSync(db, 0o640);
    assert.equal((await runCli(['user', 'list', '--db', db])).code, 0);
    assert.equal(modeOf(db).toString(8), '640');
  });
});
