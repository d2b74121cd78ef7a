// Players get in while someone floods /auth (default flags unless named). A flood of random
// names costs no hash (an unknown name waits in the pool's line as a check would, then as long as
// a recent check ran, and is refused like a wrong password), and the hash pool is shared fairly,
// so players logging in meanwhile are answered within 2 s (see QUICK_MS for a busy machine): with
// the flood from one address, from 64 (on SQLite, and on PostgreSQL over two workers), and through
// a relay the players use too; and a flood over many players' names with made-up clientTokens
// gives way to launchers that logged in before.
// After a burst, unknown and known names still take the same time. (A guesser of one player's
// password: guessers.test.ts.)
//
// The machine these run on may have 2 busy cores, and a hash takes most of a second of one. So
// the flood, 200 requests at a time and each lane sending again as soon as it has its answer (as
// fast as the server answers: an unknown name's answer comes after the failed-login floor, and a
// per-address refusal is held a second), runs on raw sockets and reads no more of an answer than
// its status, so that the test process does not starve the server; players log in two at a time
// (their own hashes must not queue behind each other, or the test measures them and not the
// flood); and the flood lasts 6 s, or on until the players are done, so that every login is
// measured under it (60 logins two at a time take about 5 s on an idle machine).
// Every client is bound to its own loopback address (all of 127/8 reaches the server on Linux).
import { test, describe, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { copyFileSync, existsSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { RUNTIME, tempDir, withServer, type RunningServer } from '../helpers/process.ts';
import { databaseServer, postgresMissing } from '../helpers/postgres.ts';
import { call, type Answer } from '../helpers/call.ts';
import { pool } from '../helpers/pool.ts';
import { seedPlayers } from '../helpers/players.ts';
import { sleep } from './util.ts';
import { hashPassword } from '../../src/crypto/password.ts';

const tmp = tempDir();
/** Every player of the file, seeded once; each server below runs on a copy of its own. */
const seeded = pathJoin(tmp.dir, 'players.db');
const db = pathJoin(tmp.dir, 'flood.db');
const KEY = 'flood-api-key-0123456789';
const PASSWORD = 'player-Pass-7Hq2';
const ALL = Array.from({ length: 88 }, (_, i) => `Player${i}`);
const PLAYERS = ALL.slice(0, 20);
const LOGINS_EACH = 3;
/**
 * A player's login slower than this counts as failed; or, where a machine busy with other work
 * makes a password hash (timed here, in the test's process, not through the server) take longer
 * than a sixth of it, slower than six of those: two players' hashes run at a time, on cores that
 * the flood's sockets and the other work share. So the rule holds what the flood adds, not the
 * machine's speed: a flood that held players behind it would cost them a queue of hashes, tens.
 */
const QUICK_MS = 2000;
const QUICK_HASHES = 6;
const FLOOD_MS = 6_000;
const FLOOD_IN_FLIGHT = 200;
/** A player's login not answered by then is failed for certain; the players go on with the next. */
const LOGIN_TIMEOUT_MS = 10_000;
/** However slow the machine, the players are done (or the test failed) by then. */
const PLAYERS_MS = 120_000;

const bearer = { authorization: `Bearer ${KEY}` };
/** 64 addresses a flood comes from. */
const FLOOD_64 = Array.from({ length: 64 }, (_, i) => `127.0.2.${i + 1}`);
/** The phase's PostgreSQL cluster (or the file's own), where there is one: taken at the top level, as databaseServer asks. */
const pg = postgresMissing ? undefined : await databaseServer();

/** A copy of the seeded players' database at `file`, its write-ahead log too if the seeding server left one. */
function copySeeded(file: string): void {
  for (const suffix of ['', '-wal']) if (existsSync(seeded + suffix)) copyFileSync(seeded + suffix, file + suffix);
}

before(async () => {
  await seedPlayers(seeded, ALL, PASSWORD);
  copySeeded(db);
});

after(() => tmp.cleanup());

/** The server for one test, on the shared database with its players; stopped after `work`. */
const onDb = <T>(args: string[], work: (s: RunningServer) => Promise<T>): Promise<T> => withServer(['--db', db, ...args], work);

interface FloodTally {
  sent: number;
  /** Answers by status. */
  statuses: Record<number, number>;
  /** Connections that broke before their answer. */
  broken: number;
  /** Still waiting for their answer when the flood stopped. */
  unanswered: number;
}

interface Flood {
  /** Resolves on the flood's first answer: it is under way. */
  underway: Promise<void>;
  /** Stops at once (requests in flight are cut) and returns what was sent and answered. */
  stop: () => FloodTally;
}

/**
 * Logins of random names nobody has, `inFlight` at a time, each lane from one of `from` in turn
 * (`headers`: more header lines, each ending in CRLF). A lane sends its next request as soon as its
 * answer is in, on the same connection unless the server closed it (then the server, closing
 * first, holds the TIME_WAIT, and the client's ports are not used up). Only the status is read.
 */
function startFlood(port: number, from: string[], inFlight: number, headers = ''): Flood {
  const tally: FloodTally = { sent: 0, statuses: {}, broken: 0, unanswered: 0 };
  let stopped = false;
  const sockets = new Set<net.Socket>();
  let started!: () => void;
  const underway = new Promise<void>((r) => (started = r));
  // 16 characters, the longest name there is: 'F' and 15 random hex digits.
  const randomName = (): string => 'F' + randomBytes(10).toString('hex').slice(0, 15);
  const request = (): string => {
    const body = `{"login":"${randomName()}","password":"flood-guess"}`;
    return `POST /auth HTTP/1.1\r\nhost: flood\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n${headers}\r\n${body}`;
  };

  const lane = (address: string): void => {
    let socket: net.Socket | undefined;
    let waiting = false;
    let received = '';
    const send = (): void => {
      if (stopped) return;
      if (socket === undefined) socket = open();
      received = '';
      waiting = true;
      tally.sent++;
      socket.write(request());
    };
    const open = (): net.Socket => {
      const s = net.connect({ host: '127.0.0.1', port, localAddress: address });
      sockets.add(s);
      s.setEncoding('latin1');
      s.on('data', (d: string) => {
        if (!waiting) return;
        received += d;
        const end = received.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = received.slice(0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (received.length < end + 4 + length) return;
        waiting = false;
        const status = Number(head.slice(9, 12));
        tally.statuses[status] = (tally.statuses[status] ?? 0) + 1;
        started();
        // A connection the server closes: the next request goes out once it has (on 'close').
        if (!/\r\nconnection: *close/i.test(head)) send();
      });
      s.on('error', () => {}); // seen as a close
      s.on('close', () => {
        sockets.delete(s);
        if (socket !== s) return;
        socket = undefined;
        if (waiting) {
          waiting = false;
          if (!stopped) tally.broken++;
          // A connection that failed (not one the server closed after its answer) is not
          // retried in a tight loop.
          setTimeout(send, 10);
        } else send();
      });
      return s;
    };
    send();
  };

  for (let i = 0; i < inFlight; i++) lane(from[i % from.length]!);
  return {
    underway,
    stop: () => {
      stopped = true;
      for (const s of sockets) {
        s.destroy();
      }
      tally.unanswered = tally.sent - tally.broken - Object.values(tally.statuses).reduce((a, b) => a + b, 0);
      return tally;
    },
  };
}

interface Login {
  name: string;
  status: number;
  ms: number;
  /** Why it failed, when it did not get 200. */
  detail?: string;
}

/**
 * Each player logs in LOGINS_EACH times (through `via` when given, else each from 127.0.1.N of
 * its own), two logins at a time, timed from send to answer. Once more have failed than `allowed`
 * the rest are not sent (the test has failed already) and count as failed.
 */
async function playersLogIn(port: number, allowed: number, quickMs: number, via?: { from: string; headers: Record<string, string> }): Promise<Login[]> {
  const names = Array.from({ length: PLAYERS.length * LOGINS_EACH }, (_, i) => PLAYERS[i % PLAYERS.length]!);
  let failed = 0;
  const deadline = performance.now() + PLAYERS_MS;
  return pool(names, 2, async (name): Promise<Login> => {
    if (failed > allowed || performance.now() > deadline) return { name, status: 0, ms: Infinity, detail: 'not sent' };
    const from = via?.from ?? `127.0.1.${PLAYERS.indexOf(name) + 1}`;
    const sent = performance.now();
    const r = await call(port, '/auth', { from, headers: via?.headers, body: { login: name, password: PASSWORD }, timeoutMs: LOGIN_TIMEOUT_MS }).catch(
      (err: Error): Answer => ({ status: 0, body: err.message, headers: {} }),
    );
    const login: Login = { name, status: r.status, ms: performance.now() - sent };
    if (r.status !== 200) login.detail = typeof r.body === 'string' ? r.body : r.body?.error;
    if (r.status !== 200 || login.ms > quickMs) failed++;
    return login;
  });
}

/**
 * Floods from `floodFrom` while the players log in (from the flood's first answer on), for at
 * least FLOOD_MS; asserts at least `share` of the logins succeed within QUICK_MS (see there).
 */
async function floodWhilePlayersLogIn(t: TestContext, s: RunningServer, floodFrom: string[], share: number, relay?: { from: string; headers: Record<string, string> }): Promise<void> {
  const total = PLAYERS.length * LOGINS_EACH;
  const allowed = Math.floor(total * (1 - share));
  const hashes: number[] = [];
  for (let i = 0; i < 3; i++) {
    const began = performance.now();
    await hashPassword(PASSWORD);
    hashes.push(performance.now() - began);
  }
  const hashMs = hashes.sort((a, b) => a - b)[1]!;
  const quickMs = Math.max(QUICK_MS, QUICK_HASHES * hashMs);
  const flood = startFlood(s.port, floodFrom, FLOOD_IN_FLIGHT, relay ? `authorization: Bearer ${KEY}\r\n` : '');
  const began = performance.now();
  let tally: FloodTally | undefined;
  try {
    // The players start on the flood's first answer, or after 10 s without one (a flood held unanswered).
    await Promise.race([flood.underway, sleep(10_000)]);
    const logins = await playersLogIn(s.port, allowed, quickMs, relay);
    await sleep(FLOOD_MS - (performance.now() - began));
    tally = flood.stop();
    const seconds = Math.round((performance.now() - began) / 100) / 10;
    const quick = logins.filter((l) => l.status === 200 && l.ms <= quickMs).length;
    const failures = logins
      .filter((l) => l.status !== 200 || l.ms > quickMs)
      .map((l) => `${l.name}: ${l.status} after ${Math.round(l.ms)} ms${l.detail ? ` (${l.detail})` : ''}`);
    const summary = `${quick} of ${total} logins succeeded within ${Math.round(quickMs)} ms (a hash here: ${Math.round(hashMs)} ms), under a ${seconds} s flood that got ${JSON.stringify(tally)}; the others:\n${failures.join('\n')}`;
    const times = logins.map((l) => l.ms).sort((a, b) => a - b);
    t.diagnostic(`${quick} of ${total} within ${Math.round(quickMs)} ms (a hash ${Math.round(hashMs)} ms); login ms median ${Math.round(times[total >> 1]!)}, slowest ${Math.round(times.at(-1)!)}; flood ${JSON.stringify(tally)} in ${seconds} s`);
    assert.ok(quick >= share * total, summary);
    // It was a flood, and it was refused as one: never let in, never an error.
    assert.ok(tally.sent >= 4 * FLOOD_IN_FLIGHT, summary);
    assert.deepEqual(Object.keys(tally.statuses).filter((status) => !['401', '429', '503'].includes(status)), [], summary);
  } finally {
    tally ?? flood.stop();
  }
}

describe('a flood of random names does not keep players out', () => {
  test('from one address (127.0.1.200): 95% of the players\' logins, each from its own address, succeed within 2 s (or six hashes)', async (t) => {
    await onDb([], (s) => floodWhilePlayersLogIn(t, s, ['127.0.1.200'], 0.95));
  });

  test('from 64 addresses: 80% of the players\' logins succeed within 2 s (or six hashes)', async (t) => {
    await onDb([], (s) => floodWhilePlayersLogIn(t, s, FLOOD_64, 0.8));
  });

  test('through a relay with --api-key, the players logging in through it too: 95% within 2 s (or six hashes)', async (t) => {
    const relay = { from: '127.0.1.60', headers: bearer };
    await onDb(['--api-key', KEY], (s) => floodWhilePlayersLogIn(t, s, [relay.from], 0.95, relay));
  });

  // The flood whose every guess reaches the store (a failure counted, per-address budgets not
  // yet spent), on the other store, where every count is a query, and over two workers, each
  // with its share of the pool and of the per-address budgets.
  test('on PostgreSQL, over two workers (one on Deno, which has no node:cluster), from 64 addresses: 80% within 2 s (or six hashes)', { skip: postgresMissing }, async (t) => {
    const url = pg!.url(await pg!.newDatabase('flood'));
    await seedPlayers(url, PLAYERS, PASSWORD);
    await withServer(['--db', url, ...(RUNTIME === 'deno' ? [] : ['--workers', '2'])], (s) => floodWhilePlayersLogIn(t, s, FLOOD_64, 0.8));
  });
});

describe('after a burst, a quiet server', () => {
  test('20 known names (a wrong password) and 20 unknown names take the same time: medians within 10%', async (t) => {
    const [known, burst] = [ALL.slice(0, 20), ALL.slice(20)];
    const file = pathJoin(tmp.dir, 'burst.db');
    copySeeded(file);
    // Two hashes at a time: the burst's last logins queue for 32 checks' time, seconds, well past
    // the 1 s failed-login floor, so a time drawn from checks that counted their queueing would show.
    await withServer(['--db', file, '--hash-concurrency', '2'], async (s) => {
      // 68 wrong logins of 68 players at once, each from its own address: they fill the hash
      // pool (2 running, 64 waiting; the rest refused), and the last ones queue for seconds.
      const answers = await Promise.all(burst.map((name, i) => call(s.port, '/auth', { from: `127.0.3.${i + 1}`, body: { login: name, password: 'a-wrong-guess' } })));
      assert.ok(answers.every((a) => [401, 503].includes(a.status)), answers.map((a) => a.status).join());
      // Then, quiet: known and unknown names in turn, four lanes (their checks, a tenth of the 1 s
      // floor each, queue behind each other well within it).
      const logins = known.flatMap((name, i) => [
        { kind: 'known', name },
        { kind: 'unknown', name: `Nobody${i}_${randomBytes(3).toString('hex')}` },
      ]);
      const times: Record<string, number[]> = { known: [], unknown: [] };
      await pool(logins, 4, async ({ kind, name }, i) => {
        const sent = performance.now();
        const r = await call(s.port, '/auth', { from: `127.0.4.${i + 1}`, body: { login: name, password: 'a-wrong-guess' } });
        assert.equal(r.status, 401, `${kind} ${name}: ${JSON.stringify(r.body)}`);
        times[kind]!.push(performance.now() - sent);
      });
      const median = (ms: number[]): number => ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
      const [k, u] = [median(times.known!), median(times.unknown!)];
      t.diagnostic(`medians after the burst: known ${Math.round(k)} ms, unknown ${Math.round(u)} ms`);
      assert.ok(Math.abs(k - u) <= 0.1 * Math.max(k, u), `known ${Math.round(k)} ms, unknown ${Math.round(u)} ms`);
    });
  });
});

describe('a flood through the relay spread over 80 players\' names with made-up clientTokens (about 15 a second)', () => {
  const names = ALL.slice(0, 80);
  const file = pathJoin(tmp.dir, 'relay-flood.db');
  before(() => copySeeded(file));

  /**
   * Logins of `names` with random passwords and clientTokens, one lane for each of `from`, each
   * sending again once answered and `paceMs` after its last, until the function returned is
   * called, which cuts the logins still waiting (counted as status 0) and returns the answers.
   */
  function guessNames(port: number, from: string[], paceMs: number): () => Promise<Record<number, number>> {
    // Stopping ends the lanes' waits between logins too (up to a pace, 13 s with 200 lanes).
    const stopped = new AbortController();
    const statuses: Record<number, number> = {};
    // Each login on a connection of its own (as without an agent), all of them cut at once at the end.
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const lanes = from.map(async (address) => {
      while (!stopped.signal.aborted) {
        const sent = performance.now();
        const body = { username: names[Math.floor(Math.random() * names.length)], password: randomBytes(9).toString('base64'), clientToken: randomBytes(16).toString('hex') };
        const a = await call(port, '/auth', { from: address, body, agent, timeoutMs: 20_000 }).catch(() => ({ status: 0 }) as Answer);
        statuses[a.status] = (statuses[a.status] ?? 0) + 1;
        await delay(Math.max(0, paceMs - (performance.now() - sent)), undefined, { signal: stopped.signal }).catch(() => undefined);
      }
    });
    return async () => {
      stopped.abort();
      agent.destroy();
      await Promise.all(lanes);
      return statuses;
    };
  }

  /** 60 logins through the relay (three at a time) of players whose launchers logged in once before: how many were in within 2 s. */
  async function realLogins(t: TestContext, port: number, launchers: Map<string, string>): Promise<number> {
    const times = await pool(Array.from({ length: 60 }, (_, i) => names[i % 20]!), 3, async (name) => {
      const sent = performance.now();
      const r = await call(port, '/auth', { body: { username: name, password: PASSWORD, clientToken: launchers.get(name) }, timeoutMs: 20_000 }).catch(() => ({ status: 0 }) as Answer);
      return r.status === 200 ? performance.now() - sent : Infinity;
    });
    const sorted = [...times].sort((a, b) => a - b);
    t.diagnostic(`real logins: ${times.filter((ms) => ms <= 2000).length} of 60 within 2 s; median ${Math.round(sorted[30]!)} ms, slowest ${sorted.slice(-3).map((ms) => (ms === Infinity ? 'failed' : Math.round(ms))).join(', ')}`);
    return times.filter((ms) => ms <= 2000).length;
  }

  for (const [label, from, share] of [
    ['100 lanes through the relay: 95% of 60 real logins through it within 2 s', Array.from({ length: 100 }, () => '127.0.0.1'), 57],
    ['from 100 addresses, 2 lanes each: 80% of 60 real logins through the relay within 2 s', Array.from({ length: 200 }, (_, i) => `127.0.6.${(i % 100) + 1}`), 48],
  ] as const) {
    test(label, async (t) => {
      await withServer(['--db', file], async (s) => {
        // Each player's launcher logged in once before, with its own clientToken, as a LauncherServer of the 0.0.5 line forwards it.
        const launchers = new Map(names.slice(0, 20).map((name) => [name, randomBytes(16).toString('hex')]));
        await pool([...launchers], 4, async ([name, clientToken]) => {
          assert.equal((await call(s.port, '/auth', { body: { username: name, password: PASSWORD, clientToken } })).status, 200);
        });
        const stop = guessNames(s.port, [...from], (from.length / 15) * 1000);
        try {
          await sleep(3000);
          const quick = await realLogins(t, s.port, launchers);
          assert.ok(quick >= share, `${quick} of 60 real logins within 2 s`);
        } finally {
          t.diagnostic(`the flood's answers: ${JSON.stringify(await stop())}`);
        }
      });
    });
  }
});
