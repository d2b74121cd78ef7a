// 1,100 idle connections from one address, with the default flags, held for 25 s: the server
// closes those over the address's cap, and meanwhile answers /health from another address within a
// second, every second, and lets a player log in. It times the server under a load of its own,
// so it runs alone (test/file-groups.ts). Every client is bound to its own loopback address.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join as pathJoin } from 'node:path';
import { startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { call, type Answer } from '../helpers/call.ts';
import { pool } from '../helpers/pool.ts';
import { addPlayers } from '../helpers/players.ts';
import { connect } from '../helpers/raw-connection.ts';
import { sleep } from './util.ts';

const tmp = tempDir();
const ADMIN = 'connection-flood-admin-0123';
const PASSWORD = 'player-Pass-7Hq2';

after(() => tmp.cleanup());

const login = (port: number, name: string, from: string): Promise<Answer> => call(port, '/auth', { from, body: { login: name, password: PASSWORD } });

describe('1,100 idle connections from one address (default flags)', () => {
  let s: RunningServer;
  before(async () => {
    s = await startServer(['--db', pathJoin(tmp.dir, 'flood.db'), '--admin-token', ADMIN]);
    await addPlayers(s.port, ADMIN, ['Steve'], PASSWORD);
  });
  after(() => s.stop());

  test('held for 25 s: /health from another address answers within a second, every second, and a player logs in', async () => {
    const held = await pool(Array.from({ length: 1100 }, (_, i) => i), 50, () => connect(s.port, '127.0.1.50'));
    const started = Date.now();
    const late: string[] = [];
    let checks = 0;
    let loggedIn = false;
    while (Date.now() - started < 25_000) {
      const sent = performance.now();
      const health = await call(s.port, '/health', { from: '127.0.1.51', timeoutMs: 5000 }).catch((err: Error) => ({ status: 0, body: err.message }) as Answer);
      const ms = performance.now() - sent;
      checks++;
      if (health.status !== 200 || ms > 1000) late.push(`${Math.round((Date.now() - started) / 1000)} s: ${health.status} after ${Math.round(ms)} ms`);
      if (!loggedIn && Date.now() - started > 5000) {
        const r = await login(s.port, 'Steve', '127.0.1.52');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        loggedIn = true;
      }
      await sleep(Math.max(0, 1000 - (performance.now() - sent)));
    }
    assert.ok(loggedIn);
    assert.ok(checks >= 15, `only ${checks} checks in 25 s`);
    assert.deepEqual(late, [], 'every /health answered 200 within a second');
    // The server closed those over the address's cap (64) at once or very soon; the test closed none.
    const open = held.filter((c) => !c.isClosed()).length;
    assert.ok(open <= 64, `${open} of the 1,100 are still open`);
    for (const c of held) c.socket.destroy();
  });
});
