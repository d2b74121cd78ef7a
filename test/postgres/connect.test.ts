// The driver's known faults from timers keep the process up, each as src/postgres/connect.ts
// says: a write on a closed connection replaces the pool; the rejection of a let-go pool's last
// queries, and a failed connect to a database host that no one hears, leave it. Any other error
// ends the process.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Sql } from 'postgres';
import { connectPostgres } from '../../src/postgres/connect.ts';
import { recoverable } from '../../src/runtime.ts';

/** The error as the driver throws it, from a timer (stack as Node prints it). */
function driverFault(): TypeError {
  const err = new TypeError("Cannot read properties of null (reading 'write')");
  err.stack = `${err.name}: ${err.message}\n    at Immediate.nextWrite (file:///srv/mcauth/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:574:21)`;
  return err;
}

/** What the recoverable faults said of `err`: one message for a fault a part recovered from, none else. */
const recovered = (err: Error): string[] => recoverable.map((recover) => recover(err)).filter((said) => said !== undefined);

/** Runs `check` while a pool to nowhere is open (no connection is made until a query), and ends the pool. */
async function withPool(check: (sql: Sql) => void): Promise<void> {
  const sql = await connectPostgres('postgres://nobody@127.0.0.1:9/none', {});
  try {
    check(sql);
  } finally {
    await sql.end({ timeout: 0 });
  }
}

test("the driver's fault on a closed connection replaces the pool; other errors are left to end the process", async () => {
  await withPool((sql) => {
    const before = sql.options;
    const said = recovered(driverFault());
    assert.equal(said.length, 1);
    assert.match(said[0]!, /connections were replaced/);
    assert.notEqual(sql.options, before, 'a new pool behind the same handle');
    const other = new TypeError("Cannot read properties of null (reading 'write')");
    assert.deepEqual(recovered(other), [], 'a fault elsewhere is not recovered');
  });
  assert.deepEqual(recovered(driverFault()), [], 'with no pool open, nothing to recover');
});

/** The rejection of the driver's pool destroy, from a timer (stack as Deno printed it in a run of test/e2e/postgres.test.ts). */
function endingFault(): Error {
  const err = Object.assign(new Error('write CONNECTION_DESTROYED 127.0.0.1:22569'), { code: 'CONNECTION_DESTROYED' });
  err.stack = `Error: ${err.message}\n    at Object.terminate (file:///srv/mcauth/node_modules/postgres/src/connection.js:425:20)\n    at file:///srv/mcauth/node_modules/postgres/src/index.js:385:46\n    at Array.map (<anonymous>)\n    at Timeout.destroy [as _onTimeout] (file:///srv/mcauth/node_modules/postgres/src/index.js:385:35)`;
  return err;
}

test("the driver's rejection when it destroys a pool it let go does not end the process, and leaves the current pool", async () => {
  await withPool((sql) => {
    const before = sql.options;
    const said = recovered(endingFault());
    assert.equal(said.length, 1);
    assert.match(said[0]!, /a pool it had let go/);
    assert.equal(sql.options, before, 'the same pool');
    const elsewhere = Object.assign(new Error('write CONNECTION_DESTROYED'), { code: 'CONNECTION_DESTROYED' });
    assert.deepEqual(recovered(elsewhere), [], 'the code alone, from elsewhere, is not recovered');
  });
});

test("a failed connect to a database host raised where no one listens does not end the process while a pool is open; others, or with no pool, are left to", async () => {
  const refused = (): Error => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', syscall: 'connect', address: '127.0.0.1', port: 9 });
  await withPool((sql) => {
    const before = sql.options;
    const said = recovered(refused());
    assert.equal(said.length, 1);
    assert.match(said[0]!, /failed connect unheard \(connect ECONNREFUSED 127\.0\.0\.1:9\)/);
    assert.equal(sql.options, before, 'the same pool');
    assert.deepEqual(recovered(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', syscall: 'read' })), [], 'not a connect');
    const elsewhere = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8443'), { code: 'ECONNREFUSED', syscall: 'connect', address: '127.0.0.1', port: 8443 });
    assert.deepEqual(recovered(elsewhere), [], 'a connect to no database host');
    assert.equal(recovered(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED', syscall: 'connect' })).length, 1, 'its port read from the message');
  });
  assert.deepEqual(recovered(refused()), [], 'with no pool open, nothing to recover');
});
