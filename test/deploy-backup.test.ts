// deploy/mcauth-backup.service and its timer, the scheduled backup docs/operations.md gives: the
// service's own ExecStart and ExecStartPost lines, run here with only their paths moved into a
// temp folder (and systemd's `%%` and `$$` read as systemd reads them), make a dated copy of a
// live database that holds its players and is readable by its owner only, and remove copies
// older than 14 days but no newer one; systemd-analyze verify accepts both units where it exists.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { seedPlayer } from './helpers/players.ts';
import { ROOT, SERVER_JS, tempDir } from './helpers/process.ts';

const SERVICE = readFileSync(join(ROOT, 'deploy', 'mcauth-backup.service'), 'utf8');
const TIMER = readFileSync(join(ROOT, 'deploy', 'mcauth-backup.timer'), 'utf8');
const tmp = tempDir();

/** The value of `key=` in the unit (the first), as systemd passes it on: `%%` is `%`, `$$` is `$`. */
function line(unit: string, key: string): string {
  const value = new RegExp(`^${key}=(.*)$`, 'm').exec(unit)?.[1];
  assert.ok(value, `${key}= is set`);
  return value.replaceAll('%%', '%').replaceAll('$$', '$');
}

/** A command line of the unit with the host's paths moved under `dir`, run by sh; its result. */
function runLine(command: string, dir: string): ReturnType<typeof spawnSync> {
  const moved = command
    .replace('/opt/mcauth/mcauth', `${process.execPath} ${SERVER_JS}`)
    .replace('/etc/mcauth/config.json', join(dir, 'config.json'))
    .replaceAll('/var/lib/mcauth-backups', join(dir, 'backups'));
  assert.notEqual(moved, command, 'paths were moved');
  return spawnSync('sh', ['-c', moved], { encoding: 'utf8', timeout: 60_000 });
}

test('the backup service makes a dated copy of the live database, owner-readable only, and drops copies over 14 days old', async () => {
  const dir = join(tmp.dir, 'host');
  mkdirSync(join(dir, 'backups'), { recursive: true });
  const db = join(dir, 'mcauth.db');
  await seedPlayer(db, 'Backed_Up', 'backup-Pass-1');
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ db }));
  const old = join(dir, 'backups', 'mcauth-2020-01-01T033000Z.db');
  writeFileSync(old, 'an old copy');
  const monthAgo = Date.now() / 1000 - 30 * 24 * 3600;
  utimesSync(old, monthAgo, monthAgo);
  const recent = join(dir, 'backups', 'mcauth-recent.db');
  writeFileSync(recent, 'a copy of last week');

  const made = runLine(line(SERVICE, 'ExecStart'), dir);
  assert.equal(made.status, 0, `${made.stdout}\n${made.stderr}`);
  const pruned = runLine(line(SERVICE, 'ExecStartPost'), dir);
  assert.equal(pruned.status, 0, `${pruned.stdout}\n${pruned.stderr}`);

  const copies = readdirSync(join(dir, 'backups')).sort();
  const dated = copies.filter((f) => /^mcauth-\d{4}-\d\d-\d\dT\d{6}Z\.db$/.test(f) && f !== 'mcauth-2020-01-01T033000Z.db');
  assert.equal(dated.length, 1, `one new dated copy: ${copies.join(', ')}`);
  assert.deepEqual(copies.filter((f) => !dated.includes(f)), ['mcauth-recent.db'], 'the month-old copy is gone, the recent one kept');
  const copy = join(dir, 'backups', dated[0]!);
  assert.equal(statSync(copy).mode & 0o077, 0, 'no access for group or others');
  const names = new DatabaseSync(copy, { readOnly: true }).prepare('SELECT name FROM users').all().map((row) => row.name);
  assert.deepEqual(names, ['Backed_Up']);
});

test('the timer runs the service daily, made up after downtime', () => {
  assert.match(line(TIMER, 'OnCalendar'), /^\*-\*-\* \d\d:\d\d:\d\d$/);
  assert.equal(line(TIMER, 'Persistent'), 'true');
  assert.equal(line(TIMER, 'WantedBy'), 'timers.target');
  assert.equal(line(SERVICE, 'User'), 'mcauth', 'the same dynamic user as mcauth.service, which owns the database');
  const program = /^ExecStart=(\S+)/m.exec(readFileSync(join(ROOT, 'deploy', 'mcauth.service'), 'utf8'))?.[1];
  assert.ok(line(SERVICE, 'ExecStart').includes(`exec ${program} backup `), `the same program as mcauth.service's ExecStart, ${program}`);
});

const analyze = spawnSync('systemd-analyze', ['--version']).status === 0;
test('systemd-analyze verify accepts both units', { skip: analyze ? false : 'systemd-analyze is not installed' }, () => {
  const dir = join(tmp.dir, 'units');
  mkdirSync(dir, { recursive: true });
  // Its ExecStart's program must exist here: /bin/sh and find do; node is what the shell runs.
  writeFileSync(join(dir, 'mcauth-backup.service'), SERVICE);
  writeFileSync(join(dir, 'mcauth-backup.timer'), TIMER);
  const r = spawnSync('systemd-analyze', ['verify', join(dir, 'mcauth-backup.service'), join(dir, 'mcauth-backup.timer')], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SYSTEMD_LOG_COLOR: '0', SYSTEMD_PAGER: '' },
  });
  const problems = `${r.stdout}\n${r.stderr}`.split('\n').filter((l) => l.includes(dir) || /mcauth-backup\.(service|timer)/.test(l));
  assert.deepEqual([r.status, problems], [0, []]);
});
