// Players made through the admin API of a running server: far faster than a CLI process each.
import assert from 'node:assert/strict';
import { call } from './call.ts';
import { startServer } from './process.ts';
import { pool } from './pool.ts';

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

/** The admin token of the servers seedPlayers starts. */
const SEED_TOKEN = 'seed-players-admin-token-0123';

/** Creates players with one password in the database `db`, through a server started for that and stopped after; their UUIDs by name. */
export async function seedPlayers(db: string, names: string[], password: string): Promise<Map<string, string>> {
  const s = await startServer(['--db', db, '--admin-token', SEED_TOKEN]);
  try {
    return await addPlayers(s.port, SEED_TOKEN, names, password);
  } finally {
    await s.stop();
  }
}
