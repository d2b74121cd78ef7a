// The setup docs/postgresql.md gives an owner, run as written on a throwaway cluster (see
// test/helpers/postgres.ts): its SQL block as the superuser, then a node as the role it makes,
// which creates the schema and serves. Without the database's ownership (only CONNECT, the
// mistake the page warns of), PostgreSQL 15 and later refuse the schema: the test sees that too,
// so a page that dropped `OWNER` would fail here. Without PostgreSQL on the machine these skip.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { postgresMissing, startCluster, type Cluster } from '../helpers/postgres.ts';
import { ROOT, runCli, startServer } from '../helpers/process.ts';

/** The role and database the page names (`mcauth`, also the test cluster's superuser) become this one. */
const ROLE = 'community';
const PASSWORD = 'setup-Pass-83jd';

/** The statements of the page's SQL block under "Setting it up", one a line. */
function documentedStatements(): string[] {
  const page = readFileSync(join(ROOT, 'docs', 'postgresql.md'), 'utf8');
  const section = page.slice(page.indexOf('## Setting it up'));
  const block = /^ *```sql\n([\s\S]*?)^ *```$/m.exec(section)?.[1];
  assert.ok(block, 'the page has its SQL block');
  return block
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => line.replace(/\bmcauth\b/g, ROLE).replace("'choose-a-password'", `'${PASSWORD}'`));
}

describe('docs/postgresql.md: setting it up', { skip: postgresMissing }, () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await cluster?.remove();
  });

  const urlOf = (role: string, db: string): string => cluster.url().replace(/\/\/[^@]+@/, `//${role}:${PASSWORD}@`).replace(/\/[^/?]+$/, `/${db}`);

  test('the role and database the page makes: a node as that role creates the schema and serves', async () => {
    const statements = documentedStatements();
    assert.deepEqual(
      statements.map((s) => s.split(' ').slice(0, 2).join(' ')),
      ['CREATE ROLE', 'CREATE DATABASE'],
    );
    // One at a time: CREATE DATABASE cannot run inside the transaction psql -c makes of several.
    for (const statement of statements) await cluster.psql(statement, 'postgres');
    const server = await startServer(['--db', urlOf(ROLE, ROLE)]);
    try {
      assert.equal((await server.request('/health')).status, 200);
      const added = await runCli(['user', 'add', 'Owner_1', '--db', urlOf(ROLE, ROLE)], { stdin: `${PASSWORD}\n` });
      assert.equal(added.code, 0, added.stderr);
    } finally {
      await server.stop();
    }
    assert.equal((await cluster.psql(`SELECT tableowner FROM pg_tables WHERE tablename = 'users'`, ROLE)).trim(), ROLE);
  });

  test('a database the role does not own (only CONNECT): refused, "permission denied for schema public"', async () => {
    await cluster.psql(`CREATE ROLE visitor LOGIN PASSWORD '${PASSWORD}'`, 'postgres');
    await cluster.psql('CREATE DATABASE borrowed', 'postgres');
    await cluster.psql('GRANT CONNECT ON DATABASE borrowed TO visitor', 'postgres');
    const run = await runCli(['user', 'list', '--db', urlOf('visitor', 'borrowed')]);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stderr, /permission denied for schema public/);
  });
});
