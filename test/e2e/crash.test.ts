// Crash safety: logins and joins under load, `user add` commands writing to the same database
// meanwhile (the busy timeout lets them wait for the server's lock), then SIGKILL in the middle
// of it all. After a restart on the same file, every acknowledged token and join is there, every
// added player exists, and SQLite's integrity check says ok.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join as pathJoin } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { runCli, tempDir, serverCommand, spawnListening, timedPost } from '../helpers/process.ts';
import type { Listening, ProcResult } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { UUID_DASHED, sleep } from './util.ts';

const tmp = tempDir();
const db = pathJoin(tmp.dir, 'crash.db');

after(() => tmp.cleanup());

/** Starts `server.js serve --port 0 ...args` and keeps the child, so the test can SIGKILL it. */
const spawnServer = (args: string[]): Promise<Listening> => spawnListening([...serverCommand(), 'serve', '--port', '0', ...args]);

interface Player {
  name: string;
  password: string;
  uuid: string;
  /** Tokens the server answered with (acknowledged logins). */
  tokens: string[];
  /** The serverID of the last join answered with `true`. */
  lastJoin: string | undefined;
  /** A join sent but not answered when the server died: it may or may not have been recorded. */
  pendingJoin: string | undefined;
}

/** Fewer logins a player than the 16 live tokens a player may hold, so none is pruned. */
const MAX_STEPS = 12;
const TRAFFIC_MS = 1500;
/**
 * The kill waits for every `user add` to end (and the rest): this bounds only a hang. On a machine
 * whose cores are busy, five CLI starts, each with a hash, took more than the 10 s it once was.
 */
const TRAFFIC_CAP_MS = 60_000;

test('after SIGKILL under load, every acknowledged token, join and added player is there, and integrity_check is ok', async (t) => {
  const players: Player[] = Array.from({ length: 7 }, (_, i) => ({
    name: `Crash_${i}`,
    password: `crash-pw-${i}`,
    uuid: '',
    tokens: [],
    lastJoin: undefined,
    pendingJoin: undefined,
  }));
  const uuids = await Promise.all(players.map((p) => seedPlayer(db, p.name, p.password)));
  players.forEach((p, i) => (p.uuid = uuids[i]!));

  const first = await spawnServer(['--db', db]);
  let killed = false;
  let inFlight = 0;
  let requests = 0;
  let joins = 0;
  const started = performance.now();
  const cliNames = ['Cli_Add_0', 'Cli_Add_1', 'Cli_Add_2', 'Cli_Add_3', 'Cli_Add_4'];
  /** `user add` commands that ended while the server was still serving. */
  let cliDone = 0;
  let lockerDone = false;
  /** Set when the traffic itself failed: the kill then comes at once. */
  let failed = false;
  const everyoneJoined = (): boolean => players.every((p) => p.lastJoin !== undefined);
  const trafficOver = (): boolean => {
    const elapsed = performance.now() - started;
    if (killed || failed || elapsed >= TRAFFIC_CAP_MS) return true;
    return elapsed >= TRAFFIC_MS && everyoneJoined() && cliDone === cliNames.length && lockerDone;
  };

  /** Records one join of `p` with `accessToken`: acknowledged only once answered with true. */
  const joinOnce = async (p: Player, accessToken: string, serverID: string): Promise<void> => {
    p.pendingJoin = serverID;
    inFlight++;
    requests++;
    const joined = await timedPost(first.port, '/join', { accessToken, userUUID: p.uuid, serverID }).finally(() => inFlight--);
    assert.deepEqual(joined.body, { success: true, result: true });
    p.lastJoin = serverID;
    p.pendingJoin = undefined;
    joins++;
  };

  // Each player: a login, then joins to serverIDs unique to each step; several players at once.
  const traffic = players.map(async (p, n) => {
    // The last player logs in once and then only joins, so that a join is in flight at the kill.
    const [logins, joinsPerLogin] = n === players.length - 1 ? [1, 50_000] : [MAX_STEPS, 3];
    for (let step = 0; step < logins && !killed; step++) {
      try {
        inFlight++;
        requests++;
        const auth = await timedPost(first.port, '/auth', { login: p.name, password: p.password }).finally(() => inFlight--);
        assert.equal(auth.status, 200, JSON.stringify(auth.body));
        p.tokens.push(auth.body.result.accessToken);
        for (let j = 0; j < joinsPerLogin && !killed; j++) await joinOnce(p, auth.body.result.accessToken, `srv-${p.name}-${step}-${j}`);
      } catch (err) {
        if (killed) return; // the request died with the server: not acknowledged
        failed = true;
        throw err;
      }
    }
  });
  const trafficDone = Promise.all(traffic);
  trafficDone.catch(() => {}); // awaited after the kill

  // A third writer (this test) takes the write lock for 150 ms at a time: the server's writes
  // and the CLI's must wait for it. Without a busy timeout they would fail at once; the other
  // writers' own transactions are far too short to make such a collision likely.
  let locks = 0;
  const locking = (async () => {
    const file = new DatabaseSync(db);
    try {
      file.exec('PRAGMA busy_timeout = 5000');
      while (performance.now() - started < TRAFFIC_MS && !failed) {
        file.exec('BEGIN IMMEDIATE');
        try {
          await sleep(150);
        } finally {
          file.exec('COMMIT');
        }
        locks++;
        await sleep(100);
      }
    } finally {
      file.close();
      lockerDone = true;
    }
  })();
  locking.catch(() => {}); // awaited after the kill

  // Meanwhile the CLI adds players to the same file; each must succeed despite the server's
  // writes, and the kill waits until all have ended, so each ran while the server served.
  const cli: Promise<ProcResult>[] = [];
  const launching = (async () => {
    for (const name of cliNames) {
      const run = runCli(['user', 'add', name, '--db', db], { stdin: `${name}-pw\n`, timeoutMs: 60_000 });
      cli.push(run.finally(() => void (killed || cliDone++)));
      await sleep(TRAFFIC_MS / cliNames.length);
    }
  })();

  // SIGKILL while requests are on their way.
  while (!trafficOver()) await sleep(10);
  const inFlightAtKill = inFlight;
  const killedAfter = performance.now() - started;
  killed = true;
  first.child.kill('SIGKILL');
  const death = await first.exited;
  assert.equal(death.signal, 'SIGKILL');
  await trafficDone;
  await locking;
  await launching;
  const cliResults = await Promise.all(cli);

  const tokens = players.reduce((n, p) => n + p.tokens.length, 0);
  t.diagnostic(
    `${requests} requests in ${(killedAfter / 1000).toFixed(1)} s before the kill, ${inFlightAtKill} in flight at it; ` +
      `${tokens} acknowledged tokens, ${joins} acknowledged joins (the last of each of ${players.filter((p) => p.lastJoin).length} players checked), ` +
      `${players.filter((p) => p.pendingJoin).length} joins unanswered at the kill; meanwhile ${cliDone} user add commands, and the test held the write lock ${locks} times`,
  );
  assert.ok(inFlightAtKill > 0, 'the kill should come while requests are in flight');
  assert.equal(cliDone, cliNames.length, 'every user add should have ended while the server was serving');
  assert.ok(everyoneJoined(), `every player should have had a join acknowledged before the kill: ${players.map((p) => `${p.name}=${p.lastJoin}`).join(', ')}`);
  const cliUuids = cliResults.map((r, i) => {
    assert.equal(r.code, 0, `user add ${cliNames[i]} exited ${r.code}${r.timedOut ? ' (timed out)' : ''}: ${r.stderr}`);
    const m = /^Added (\S+) (\S+)$/m.exec(r.stdout);
    assert.ok(m, `user add printed: ${r.stdout}`);
    assert.equal(m[1], cliNames[i]);
    assert.match(m[2]!, UUID_DASHED);
    return m[2]!;
  });

  // Restarted on the same file; a long join TTL so no join expires while it is checked.
  const second = await spawnServer(['--db', db, '--join-ttl', '3600']);
  try {
    for (const p of players) {
      // The last acknowledged join is found, unless a later join, sent but never answered,
      // was recorded after all (then that one is the latest).
      const last = await timedPost(second.port, '/hasJoined', { username: p.name, serverID: p.lastJoin });
      if (last.status !== 200 && p.pendingJoin !== undefined) {
        const pending = await timedPost(second.port, '/hasJoined', { username: p.name, serverID: p.pendingJoin });
        assert.deepEqual(pending.body, { success: true, result: { userUUID: p.uuid } }, `${p.name}: neither ${p.lastJoin} nor ${p.pendingJoin} is recorded`);
      } else {
        assert.deepEqual(last.body, { success: true, result: { userUUID: p.uuid } }, `${p.name}: the acknowledged join ${p.lastJoin} is lost`);
      }
    }
    // Every acknowledged token still works (checked after the joins, since /join replaces them).
    for (const p of players) {
      for (const [i, accessToken] of p.tokens.entries()) {
        const r = await timedPost(second.port, '/join', { accessToken, userUUID: p.uuid, serverID: `after-restart-${i}` });
        assert.deepEqual(r.body, { success: true, result: true }, `${p.name}: acknowledged token #${i} is lost`);
      }
    }
    // Every player the CLI added is there.
    for (const [i, uuid] of cliUuids.entries()) {
      const r = await timedPost(second.port, '/profile', { userUUID: uuid });
      assert.deepEqual(r.body, { success: true, result: { username: cliNames[i] } }, `${cliNames[i]} is missing`);
    }
    const listed = await timedPost(second.port, '/profiles', [...cliNames, ...players.map((p) => p.name)]);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.result.map((e: { name: string }) => e.name),
      [...cliNames, ...players.map((p) => p.name)],
    );
  } finally {
    await second.stop();
  }
  assert.doesNotMatch(first.stderr() + second.stderr(), /unexpected error/);

  const file = new DatabaseSync(db);
  try {
    assert.deepEqual(file.prepare('PRAGMA integrity_check').all().map((r) => ({ ...r })), [{ integrity_check: 'ok' }]);
  } finally {
    file.close();
  }
});
