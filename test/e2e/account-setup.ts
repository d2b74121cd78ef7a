// The account page's end-to-end files (account.test.ts, account-session.test.ts) share this: six
// servers on real databases (SQLite files, or PostgreSQL under npm run test:postgres), started
// before a file's tests and stopped after them, and the calls the tests make of them.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { runCli, startServer, startServerOnFreePort, tempDir } from '../helpers/process.ts';
import type { Reply, RunningServer } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { storedRows, storedTables, testDb } from '../helpers/test-db.ts';
import { assertOk } from './util.ts';

export const tmp = tempDir();
export const db = await testDb(tmp.dir, 'account.db');
export const openDb = await testDb(tmp.dir, 'open.db');
export const limitedDb = await testDb(tmp.dir, 'limited.db');
export const untrustedDb = await testDb(tmp.dir, 'untrusted.db');
export const limitsDb = await testDb(tmp.dir, 'registration-limits.db');
export const defaultLimitsDb = await testDb(tmp.dir, 'default-limits.db');
/** The database as the CLI names it: a PostgreSQL URL with its password masked. */
export const shownDb = db.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1********@');
export const KEY = 'account-test-api-key-0123456789';
export const ADMIN = 'account-test-admin-token-012345';
export const MANY = ['--registrations-per-address', '1000', '--registrations-per-hour', '1000'];
export const SIGN_IN = 'Sign in again';
export const BAD_INVITE = 'This invite code is not valid';
export const BAD_RESET = 'This reset link is not valid';
/** The limited server's --server-name (from MCAUTH_SERVER_NAME): owner input that must reach the page as text. */
export const SERVER_NAME = `Craft <b>"&"</b> 'Co'`;

export let off: RunningServer; // no --account-page, same database as `invites`
export let closed: RunningServer; // --account-page, registration off (the default), same database
export let invites: RunningServer; // --registration invite, --api-key, --admin-token, --public-url (its own address)
export let open: RunningServer; // --registration open --registration-uuid offline, no --public-url
export let limited: RunningServer; // --registration open, --trust-proxy, --address-login-limit 3, --reset-ttl 1, MCAUTH_SERVER_NAME
export let untrusted: RunningServer; // --registration open, 1 an address, no --trust-proxy, no relay (the test calls from 127.0.0.1)
export let pub = ''; // the invites server's address, its --public-url

before(async () => {
  await seedPlayer(db, 'Veteran', 'veteran-password');
  [off, closed, invites, open, limited, untrusted] = await Promise.all([
    startServer(['--db', db]),
    startServer(['--db', db, '--account-page']),
    // Its public URL names its own port: started again on another if that port is taken meanwhile.
    startServerOnFreePort((port) => ['--db', db, '--account-page', '--registration', 'invite', ...MANY, '--api-key', KEY, '--admin-token', ADMIN, '--public-url', `http://127.0.0.1:${port}`]),
    startServer(['--db', openDb, '--account-page', '--registration', 'open', '--registration-uuid', 'offline', ...MANY]),
    startServer(
      ['--db', limitedDb, '--account-page', '--registration', 'open', ...MANY, '--trust-proxy', '--address-login-limit', '3'],
      { MCAUTH_RESET_TTL: '1', MCAUTH_ADMIN_TOKEN: ADMIN, MCAUTH_SERVER_NAME: SERVER_NAME },
    ),
    startServer(['--db', untrustedDb, '--account-page', '--registration', 'open', '--registrations-per-address', '1', '--relay', '']),
  ]);
  pub = invites.url;
});

after(async () => {
  await Promise.all([off, closed, invites, open, limited, untrusted].map((s) => s?.stop()));
  tmp.cleanup();
});

export interface CallOptions {
  /** An access token, sent as Bearer. */
  token?: string;
  /** A Buffer is sent as is; anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
}

/** A call of the account API, `{base}/account/PATH`, with no API key. */
export function call(s: RunningServer, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
  let body: Buffer | string | undefined;
  if (Buffer.isBuffer(opts.body)) body = opts.body;
  else if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  return s.request(`/account/${path}`, { method, headers, body });
}

export const post = (s: RunningServer, path: string, body: unknown, opts: CallOptions = {}): Promise<Reply> => call(s, 'POST', path, { ...opts, body });

/** The game endpoints, with the API key where the server wants it. */
export function game(s: RunningServer, path: string, body: unknown): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(s === invites ? { authorization: `Bearer ${KEY}` } : {}) };
  return s.request(path, { method: 'POST', headers, body: JSON.stringify(body) });
}

export function admin(s: RunningServer, method: string, path: string, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
  return s.request(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** Signs up and returns the answer's result (asserting success). */
export async function register(s: RunningServer, name: string, password = `${name}-password`, more: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<any> {
  return assertOk(await post(s, 'register', { name, password, ...more }, { headers }));
}

export async function signIn(s: RunningServer, name: string, password = `${name}-password`): Promise<string> {
  return assertOk(await post(s, 'login', { name, password })).accessToken;
}

export const joins = async (s: RunningServer, token: string, uuid: string, serverID = 'account-test'): Promise<boolean> => assertOk(await game(s, '/join', { accessToken: token, userUUID: uuid, serverID }));
export const hasJoined = (s: RunningServer, name: string, serverID = 'account-test'): Promise<Reply> => game(s, '/hasJoined', { username: name, serverID });

/** A new invite made with the CLI on the invites server's database: its code, id and printed text. */
export async function inviteCode(extra: string[] = [], env: Record<string, string> = {}): Promise<{ code: string; id: string; stdout: string }> {
  const r = await runCli(['invite', 'create', '--db', db, ...extra], { env });
  assert.equal(r.code, 0, r.stderr);
  const m = /^Invite ([0-9a-f]{12}) .*\nCode: ([0-9a-f]{32})\n/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return { id: m[1]!, code: m[2]!, stdout: r.stdout };
}

/** A reset link from the CLI: the code it carries. */
export async function resetCode(database: string, name: string, env: Record<string, string> = {}): Promise<string> {
  const r = await runCli(['user', 'reset-link', name, '--db', database], { env });
  assert.equal(r.code, 0, r.stderr);
  const m = /#reset=([0-9a-f]{32})\n|\n([0-9a-f]{32})\n/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return m[1] ?? m[2]!;
}

/** The UUID an offline-mode server gives a name: version 3 of "OfflinePlayer:<name>". */
export function offlineUuid(name: string): string {
  const md5 = createHash('md5').update(`OfflinePlayer:${name}`).digest();
  md5[6] = (md5[6]! & 0x0f) | 0x30;
  md5[8] = (md5[8]! & 0x3f) | 0x80;
  const hex = md5.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A code's digest as src/crypto/token.ts must make it, computed here on its own: SHA-256, lower-case hex. */
export const sha256Hex = (code: string): string => createHash('sha256').update(code, 'utf8').digest('hex');

export async function assertNowhere(database: string, code: string): Promise<string[]> {
  const bytes = Buffer.from(code, 'hex');
  const forms = [code.toLowerCase(), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url')];
  const texts: string[] = [];
  const onFile = !/^postgres(ql)?:/.test(database);
  const tables = [...(onFile ? ['sqlite_master'] : []), ...(await storedTables(database))];
  assert.ok(tables.includes('invites') && tables.includes('reset_codes'), tables.join(', '));
  for (const table of tables) {
    for (const row of await storedRows(database, `SELECT * FROM "${table.replaceAll('"', '""')}"`)) {
      for (const [column, value] of Object.entries(row)) {
        const where = `${table}.${column}`;
        if (typeof value === 'string') {
          texts.push(value);
          const lower = value.toLowerCase();
          for (const form of forms) assert.ok(!lower.includes(form.toLowerCase()) && !value.includes(form), `${where} holds the code ${code}`);
        } else if (value instanceof Uint8Array) {
          const blob = Buffer.from(value);
          assert.ok(!blob.includes(bytes) && !blob.toString('latin1').toLowerCase().includes(code), `${where} holds the code ${code}`);
        }
      }
    }
  }
  for (const file of onFile ? [database, `${database}-wal`].filter((f) => existsSync(f)) : []) {
    const raw = readFileSync(file);
    assert.ok(!raw.includes(bytes) && !raw.toString('latin1').toLowerCase().includes(code), `${file} holds the code ${code}`);
  }
  return texts;
}

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
