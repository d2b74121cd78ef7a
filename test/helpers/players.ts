// Players for a test to work with: made through the admin API of a running server, or written
// straight into its database where making them is not what the test is about.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { hashPassword } from '../../src/crypto/password.ts';
import { parseUuid } from '../../src/uuid.ts';
import type { User } from '../../src/store/store.ts';
import { call } from './call.ts';
import { pool } from './pool.ts';
import { withStore } from './store.ts';
import { retriedOnConnectTimeout } from './retry-connect.ts';

/**
 * Creates players with one password through the admin API (the server runs with --admin-token
 * `admin`), a few at a time; their UUIDs by name.
 */
export async function addPlayers(port: number, admin: string, names: string[], password: string): Promise<Map<string, string>> {
  const uuids = new Map<string, string>();
  // Each costs a password hash: a few at once keep a 2-core machine busy without queueing long.
  await pool(names, 4, async (name) => {
    const r = await call(port, '/admin/users', { body: { name, password }, headers: { authorization: `Bearer ${admin}` } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    uuids.set(name, r.body.result.uuid);
  });
  return uuids;
}

/** A player to seed: with `uuid` (dashed or not), that one; else a random one. */
export interface Seed {
  name: string;
  password: string;
  uuid?: string;
}

/**
 * The hash of each password seeded in this process, made once: every player seeded with a
 * password shares it (one salt, a valid hash all the same), so that seeding 88 players costs one
 * hash, not 88 (each 0.14 s of a core, which the tests around it wait for).
 */
const hashes = new Map<string, Promise<string>>();

function hashOf(password: string): Promise<string> {
  let hash = hashes.get(password);
  if (hash === undefined) {
    hash = hashPassword(password);
    hashes.set(password, hash);
  }
  return hash;
}

/**
 * Creates `players` in the database `db` (a SQLite file, made if missing, or a PostgreSQL URL),
 * through the store in this process, as an import stores them: for tests whose subject is not
 * how players are made (that is the admin API's, the CLI's and the account page's tests). A
 * server may be running on it: it sees them at its next request, as a node of several does.
 * Their UUIDs (dashed) by name.
 */
export async function seed(db: string, players: Seed[]): Promise<Map<string, string>> {
  const users = await Promise.all(players.map(userOf));
  const results = await retriedOnConnectTimeout(() => withStore(db, (store) => store.createUsers(users, 'unless-taken')));
  assert.deepEqual(results.filter((r) => r !== 'created'), [], `seeding ${users.map((u) => u.name).join(', ')}: a name or UUID taken`);
  return new Map(users.map((u) => [u.name, u.id]));
}

async function userOf({ name, password, uuid }: Seed): Promise<User> {
  return {
    id: uuid === undefined ? randomUUID() : (parseUuid(uuid) ?? assert.fail(`not a UUID: ${uuid}`)),
    name,
    passwordHash: await hashOf(password),
    skinUrl: null,
    skinHash: null,
    capeUrl: null,
    capeHash: null,
    isAlex: false,
    createdAt: Date.now(),
    lastLoginAt: null,
    lockedAt: null,
    lockReason: null,
  };
}

/** Seeds players of one password (see seed). */
export const seedPlayers = (db: string, names: string[], password: string): Promise<Map<string, string>> =>
  seed(db, names.map((name) => ({ name, password })));

/** Seeds one player (see seed); their UUID. */
export const seedPlayer = async (db: string, name: string, password: string, uuid?: string): Promise<string> =>
  (await seed(db, [{ name, password, uuid }])).get(name)!;
