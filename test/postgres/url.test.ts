import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPostgresUrl, maskDbUrl, turnHosts } from '../../src/postgres/url.ts';

test('postgres:// and postgresql:// (any case) are PostgreSQL; a path, :memory: and other schemes are not', () => {
  for (const db of ['postgres://u@h/db', 'postgresql://u@h:5432/db', 'POSTGRES://u@h/db']) assert.equal(isPostgresUrl(db), true, db);
  for (const db of ['mcauth.db', ':memory:', './postgres://x', 'mysql://u@h/db', 'file:postgres.db']) assert.equal(isPostgresUrl(db), false, db);
});

test('the password is masked wherever the URL holds it, and nothing else changes', () => {
  const cases: [string, string][] = [
    ['postgres://mcauth:s3cret@127.0.0.1:5432/auth', 'postgres://mcauth:********@127.0.0.1:5432/auth'],
    ['postgresql://u:p%40ss@h1:5432,h2:5432/db?target_session_attrs=read-write', 'postgresql://u:********@h1:5432,h2:5432/db?target_session_attrs=read-write'],
    // A password holding "@" or "/" as typed (not percent-encoded) is masked whole.
    ['postgres://u:a@b/c@host/db', 'postgres://u:********@host/db'],
    ['postgres://u@host/db?sslmode=require&password=s3cret&x=1', 'postgres://u@host/db?sslmode=require&password=********&x=1'],
    ['postgres://u@host/db?sslmode=verify-full&sslpassword=k3y', 'postgres://u@host/db?sslmode=verify-full&sslpassword=********'],
    // A "?" or "#" in the password as typed: the query is not where it seems to begin.
    ['postgres://u:pa?ss@host/db', 'postgres://u:********@host/db'],
    ['postgres://u:pa#s/s?x@host:5432/db?sslmode=disable', 'postgres://u:********@host:5432/db?sslmode=disable'],
    ['postgres://u@host/db', 'postgres://u@host/db'],
    ['postgres://host:5432/db', 'postgres://host:5432/db'],
    ['mcauth.db', 'mcauth.db'],
  ];
  for (const [db, shown] of cases) assert.equal(maskDbUrl(db), shown, db);
});

// Rule: a pool replaced because its host went silent tries the next host first (connect.ts).
test("a URL's hosts turn by one a replacement; one host, or what is not a host list, stays as it is", () => {
  const two = 'postgres://u:p%40ss@db1:5432,db2:5433/auth?target_session_attrs=read-write';
  assert.equal(turnHosts(two, 0), two);
  assert.equal(turnHosts(two, 1), 'postgres://u:p%40ss@db2:5433,db1:5432/auth?target_session_attrs=read-write');
  assert.equal(turnHosts(two, 2), two);
  assert.equal(turnHosts('postgresql://h1,h2,h3', 1), 'postgresql://h2,h3,h1');
  assert.equal(turnHosts('postgresql://h1,h2,h3', 2), 'postgresql://h3,h1,h2');
  // A host without a port has the first host's, as the driver reads the list: turned, it keeps it.
  assert.equal(turnHosts('postgres://u@db1:6432,db2/auth', 1), 'postgres://u@db2:6432,db1:6432/auth');
  // The first host without one (the default, or PGPORT) and another with one: not turned.
  assert.equal(turnHosts('postgres://u@db1,db2:6432/auth', 1), 'postgres://u@db1,db2:6432/auth');
  // One host; a password as typed holding "?" (the hosts cannot be told); an "@" and a "," in a parameter.
  assert.equal(turnHosts('postgres://u@db1/auth', 1), 'postgres://u@db1/auth');
  assert.equal(turnHosts('postgres://u:pa?ss,x@db1:1,db2:2/auth', 1), 'postgres://u:pa?ss,x@db1:1,db2:2/auth');
  assert.equal(turnHosts('postgres://u@db1,db2/auth?options=a@b,c', 1), 'postgres://u@db2,db1/auth?options=a@b,c');
});
