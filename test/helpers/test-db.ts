// Where a test file keeps its data: a SQLite file in its temp folder, or with
// MCAUTH_TEST_DB=postgres (`npm run test:postgres`) a database of its own on a throwaway
// PostgreSQL cluster, one for the file (see postgres.ts), removed after its tests: the same
// tests of the contract, the variants, the admin API and hosted textures, run over the other store.
import { join } from 'node:path';
import { after } from 'node:test';
import { postgresMissing, startCluster, type Cluster } from './postgres.ts';

const ON_POSTGRES = process.env.MCAUTH_TEST_DB === 'postgres';
if (ON_POSTGRES && postgresMissing) process.stderr.write(`MCAUTH_TEST_DB=postgres, but ${postgresMissing}: these tests run on SQLite\n`);

let cluster: Promise<Cluster> | undefined;
let made = 0;

/** A new, empty database for `name`: the file `name` in `dir`, or on PostgreSQL a URL. Call it at a file's top level. */
export async function testDb(dir: string, name: string): Promise<string> {
  if (!ON_POSTGRES || postgresMissing) return join(dir, name);
  if (!cluster) {
    const started = startCluster();
    cluster = started;
    after(async () => (await started).remove());
  }
  const db = `t${++made}_${name.replace(/\W+/g, '_')}`.toLowerCase();
  await (await cluster).psql(`CREATE DATABASE ${db}`, 'postgres');
  return (await cluster).url(db);
}
