// No refused connection across a restart or an upgrade. A LauncherServer's HTTP client (undici,
// with its keep-alive pool, as Node's fetch here) throws on a refused or broken connection, and
// nothing in it catches that: its process ends. So a client runs login, join and hasJoined cycles
// through the restarts here, on kept-alive connections and on fresh ones, and every request must
// get a JSON envelope: no ECONNREFUSED, no reset, no "other side closed".
// - Socket activation: a holder process plays systemd (test/helpers/socket-holder.ts) and the
//   server is stopped and started again three times; connections wait in the holder's backlog.
// - --workers 2 and SIGHUP: the workers are replaced one at a time by new processes of the file
//   on disk, which the test has replaced by a marked build; a worker that cannot start leaves the
//   old ones serving.
// The keep-alive race (a server closing an idle connection just as the client sends on it) is
// provoked at each stop: idle pooled connections are reused by a burst of requests sent as the
// signal goes out, and a lane keeps reusing pooled connections after short pauses.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join as pathJoin } from 'node:path';
import { RUNTIME, SERVER_JS, serverCommand, spawnListening, tempDir, timedPost, type Listening } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { listenBacklog, startActivated, type OutputLine } from '../helpers/socket-activation.ts';
import { SYSTEMD_SOCKET_BACKLOG } from '../../src/cli/systemd-socket.ts';
import { sleep } from './util.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** Cycles of the client between two steps of a test: enough that every step meets live traffic. */
const CYCLES_A_STEP = 8;
/** Bounds of the client's loop, whatever happens to the server. */
const MAX_CYCLES = 5000;
const MAX_TRAFFIC_MS = 180_000;
/** Parallel requests of a burst: enough that several kept-alive connections sit idle in the pool. */
const BURST = 6;

interface Player {
  name: string;
  password: string;
  uuid: string;
}

/** Players for the client's lanes, one each: a join replaces the player's previous one. */
async function addPlayers(db: string, count: number): Promise<Player[]> {
  const players: Player[] = [];
  for (let i = 0; i < count; i++) {
    const name = `Lane${i}`;
    const password = `lane-password-${i}`;
    players.push({ name, password, uuid: await seedPlayer(db, name, password) });
  }
  return players;
}

type Send = (path: string, body: unknown) => Promise<unknown>;

/** A POST through Node's fetch: undici's global pool, keep-alive, as the LauncherServer sends. */
const pooled =
  (url: string): Send =>
  async (path, body) => {
    const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return JSON.parse(await res.text());
  };

/** A POST on a connection of its own. */
const fresh =
  (port: number): Send =>
  async (path, body) =>
    (await timedPost(port, path, body)).body;

const isEnvelope = (b: any): boolean =>
  typeof b === 'object' && b !== null && ((b.success === true && 'result' in b) || (b.success === false && typeof b.error === 'string'));

/** What went wrong with a request, with the cause undici hides under "fetch failed". */
function describeError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  return `${e.message}${e.cause ? ` (${e.cause.code ?? ''} ${e.cause.message ?? ''})` : ''}`;
}

interface Traffic {
  cycles: () => number;
  /** Resolves once `n` more cycles have been done than now. */
  moreCycles: (n: number) => Promise<void>;
  /** Fills the pool with idle kept-alive connections. */
  warm: () => Promise<void>;
  /** Sends BURST requests at once on the pool (on its idle connections). */
  burst: () => Promise<void>;
  /** Ends the loops; resolves to what was wrong, and the joins acknowledged. */
  finish: () => Promise<{ failures: string[]; joins: number; requests: number }>;
}

/**
 * The client: a lane a player, looping login, join and hasJoined (lane 0 on fresh connections,
 * the others on the pool), a lane that reuses pooled connections after pauses of a few ms, and
 * six lanes of look-ups on fresh connections back to back, so that connections are always being
 * made, and some are waiting to be accepted, whenever a server stops.
 * Every join answered true must be seen by the hasJoined after it (a player has one join: the
 * next replaces it, so each is checked before its lane's next).
 */
function startTraffic(url: string, port: number, players: Player[]): Traffic {
  const failures: string[] = [];
  let cycles = 0;
  let joins = 0;
  let requests = 0;
  let stopped = false;
  const started = performance.now();
  const onCycle = new Set<() => void>();
  const going = (): boolean => !stopped && cycles < MAX_CYCLES && performance.now() - started < MAX_TRAFFIC_MS;

  const call = async (send: Send, path: string, body: unknown): Promise<any> => {
    requests++;
    try {
      const answer = await send(path, body);
      if (!isEnvelope(answer)) failures.push(`${path}: not an envelope: ${JSON.stringify(answer)}`);
      return answer;
    } catch (err) {
      failures.push(`${path}: ${describeError(err)}`);
      return undefined;
    }
  };

  const lane = async (player: Player, send: Send): Promise<void> => {
    for (let i = 0; going(); i++) {
      const auth = await call(send, '/auth', { login: player.name, password: player.password });
      if (auth?.success === true) {
        const serverID = `${player.name}-${i}`;
        const joined = await call(send, '/join', { accessToken: auth.result.accessToken, userUUID: player.uuid, serverID });
        if (joined?.success === true && joined.result === true) {
          joins++;
          const seen = await call(send, '/hasJoined', { username: player.name, serverID });
          if (seen !== undefined && !(seen.success === true && seen.result?.userUUID === player.uuid)) {
            failures.push(`acknowledged join ${serverID} not seen: ${JSON.stringify(seen)}`);
          }
        } else if (joined !== undefined) {
          failures.push(`join ${serverID} with a fresh token not acknowledged: ${JSON.stringify(joined)}`);
        }
      } else if (auth !== undefined) {
        failures.push(`login of ${player.name} refused: ${JSON.stringify(auth)}`);
      }
      cycles++;
      for (const w of onCycle) w();
    }
  };

  const send = pooled(url);
  const lookUp = (): Promise<unknown> => call(send, '/hasJoined', { username: players[0]!.name, serverID: 'none' });
  const reuse = async (): Promise<void> => {
    while (going()) {
      await Promise.all([lookUp(), lookUp(), lookUp()]);
      await sleep(Math.random() * 5);
    }
  };
  const connect = fresh(port);
  const connecting = async (): Promise<void> => {
    while (going()) await call(connect, '/hasJoined', { username: players[0]!.name, serverID: 'none' });
  };
  const loops = [...players.map((p, i) => lane(p, i === 0 ? connect : send)), reuse(), ...Array.from({ length: process.env.LANES ? Number(process.env.LANES) : 6 }, connecting)];

  return {
    cycles: () => cycles,
    moreCycles: (n) => {
      const target = cycles + n;
      return new Promise((done, fail) => {
        const check = (): void => {
          if (cycles >= target) {
            onCycle.delete(check);
            done();
          } else if (!going()) {
            onCycle.delete(check);
            fail(new Error(`the client's loop ended at ${cycles} cycles; failures: ${failures.join('\n')}`));
          }
        };
        onCycle.add(check);
        check();
      });
    },
    warm: async () => void (await Promise.all(Array.from({ length: BURST }, lookUp))),
    burst: async () => void (await Promise.all(Array.from({ length: BURST }, lookUp))),
    finish: async () => {
      stopped = true;
      await Promise.all(loops);
      return { failures, joins, requests };
    },
  };
}

/** The pids that answered requests, from the servers' request log lines. */
const answeredBy = (lines: OutputLine[]): Set<number> => new Set(lines.filter((l) => l.msg === 'request').map((l) => l.pid!));

// Rule: under socket activation a restart refuses no connection and breaks none, and loses no
// acknowledged join: the connections made while no server runs wait for the next one.
for (const workers of [1, 2]) {
  const skip = workers > 1 && RUNTIME === 'deno' ? 'Deno has no node:cluster' : false;
  // With --workers, the primary deals the connections (src/cli/deal.ts): it listens only once
  // its workers serve, and stops listening before they stop.
  test(`socket activation${workers > 1 ? ', --workers 2' : ''}: a client sees no refused or broken connection through 3 restarts, and every acknowledged join`, { timeout: 300_000, skip }, async () => {
    const db = pathJoin(tmp.dir, `activated-${workers}.db`);
    const players = await addPlayers(db, 3);
    const s = await startActivated(['--db', db, '--join-ttl', '3600', ...(workers > 1 ? ['--workers', String(workers)] : [])], 4);
    try {
      const banner = s.lines().find((l) => l.msg?.startsWith('mcauth listening on'))!;
      const cluster = workers > 1 ? `, ${workers} workers` : '';
      assert.match(banner.msg!, new RegExp(`^mcauth listening on http://127\\.0\\.0\\.1:${s.port} \\(3 users in .*${cluster}, on the socket systemd passed as fd 3\\)$`), banner.msg!);
      // The socket keeps the unit's Backlog= (the holder makes it so, as systemd does): Node
      // listens on it again, with its own 511 unless told the unit's.
      assert.equal(listenBacklog(s.port), SYSTEMD_SOCKET_BACKLOG, 'the backlog of the socket the server listens on');
      const traffic = startTraffic(s.url, s.port, players);
      const pids = [s.pid()];
      for (let i = 0; i < 3; i++) {
        await traffic.moreCycles(CYCLES_A_STEP);
        await traffic.warm();
        const restarted = s.restart();
        // Sent as the stop begins, on connections idle in the pool: the keep-alive race, if there is one.
        const burst = traffic.burst();
        const { exitCode, pid } = await restarted;
        await burst;
        assert.equal(exitCode, 0, s.output());
        pids.push(pid);
      }
      await traffic.moreCycles(CYCLES_A_STEP);
      const { failures, joins, requests } = await traffic.finish();
      assert.deepEqual(failures, [], `${failures.length} of ${requests} requests went wrong`);
      assert.ok(joins >= 4 * CYCLES_A_STEP - 3, `only ${joins} joins`);
      assert.equal(new Set(pids).size, 4, `four servers in turn: ${pids}`);
      // One process: each answered requests itself; with workers, its workers did.
      if (workers === 1) {
        const answering = answeredBy(s.lines());
        for (const pid of pids) assert.ok(answering.has(pid), `server ${pid} answered no request`);
      }
      assert.equal(await s.end(), 0, s.output());
    } finally {
      s.kill();
    }
  });
}

/** A server with --workers 2 whose primary the test signals. */
interface Cluster {
  url: string;
  port: number;
  primary: number;
  lines: () => OutputLine[];
  waitForLine: (what: string, probe: (line: OutputLine) => boolean, ms?: number) => Promise<OutputLine>;
  end: () => Promise<number | null | undefined>;
  kill: () => void;
}

/** `script serve --workers 2 ...args`: on --port 0, or under socket activation. */
async function startCluster(script: string, args: string[], activated: boolean): Promise<Cluster> {
  const all = ['--workers', '2', ...args];
  if (activated) {
    const s = await startActivated(all, 1, script);
    return { url: s.url, port: s.port, primary: s.pid(), lines: s.lines, waitForLine: s.waitForLine, end: s.end, kill: s.kill };
  }
  const s: Listening = await spawnListening([...serverCommand(script), 'serve', '--port', '0', '--log-format', 'json', ...all]);
  const lines = (): OutputLine[] =>
    s
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{') && l.endsWith('}'))
      .map((l) => JSON.parse(l) as OutputLine);
  return {
    url: `http://127.0.0.1:${s.port}`,
    port: s.port,
    primary: s.child.pid!,
    lines,
    waitForLine: (what, probe, ms = 60_000) => s.waitFor(what, () => lines().find(probe), ms),
    end: async () => (await s.stop()).code,
    kill: () => void s.child.kill('SIGKILL'),
  };
}

/** dist/server.js with a first statement that says, in a log line, that this build runs and where. */
function markedBuild(): string {
  const [shebang, ...rest] = readFileSync(SERVER_JS, 'utf8').split('\n');
  const mark = `process.stdout.write(JSON.stringify({ msg: 'marked build', pid: process.pid }) + '\\n');`;
  return [shebang, mark, ...rest].join('\n');
}

/** Replaces `script` as an upgrade does: the new file is written beside it and renamed over it. */
function replaceScript(script: string, text: string): void {
  writeFileSync(`${script}.new`, text);
  renameSync(`${script}.new`, script);
}

const msgStarts = (prefix: string) => (l: OutputLine) => l.msg?.startsWith(prefix) === true;
const pidsIn = (msg: string): number[] => [...msg.matchAll(/\b\d{2,}\b/g)].map((m) => Number(m[0]));

describe('--workers 2 and SIGHUP', { skip: RUNTIME === 'deno' ? 'Deno has no node:cluster' : false }, () => {
  for (const activated of [false, true]) {
    // Rule: SIGHUP replaces every worker, one at a time, with a new process of the file on disk,
    // each listening before its old one stops; a second SIGHUP during the reload is queued; no
    // request is refused, broken or lost meanwhile.
    test(`${activated ? 'under socket activation' : 'on --port 0'}: two SIGHUPs replace the workers twice with the new file, and the client sees nothing of it`, { timeout: 300_000 }, async () => {
      const dir = pathJoin(tmp.dir, activated ? 'hup-activated' : 'hup-port');
      const script = pathJoin(tmp.dir, `server-${activated ? 'a' : 'p'}.js`);
      copyFileSync(SERVER_JS, script);
      const db = `${dir}.db`;
      const players = await addPlayers(db, 3);
      // debug: each worker logs when it listens.
      const c = await startCluster(script, ['--db', db, '--join-ttl', '3600', '--log-level', 'debug'], activated);
      try {
        const traffic = startTraffic(c.url, c.port, players);
        await traffic.moreCycles(CYCLES_A_STEP);
        assert.equal(c.lines().filter(msgStarts('marked build')).length, 0, 'the first workers run the first file');
        replaceScript(script, markedBuild());

        process.kill(c.primary, 'SIGHUP');
        await c.waitForLine('the reload', msgStarts('mcauth reloading on SIGHUP'));
        process.kill(c.primary, 'SIGHUP');
        await c.waitForLine('the second SIGHUP queued', msgStarts('mcauth reload on SIGHUP queued'));
        await c.waitForLine('the second reload done', () => c.lines().filter(msgStarts('mcauth reloaded:')).length === 2);
        await traffic.moreCycles(CYCLES_A_STEP);
        const { failures, joins, requests } = await traffic.finish();
        assert.deepEqual(failures, [], `${failures.length} of ${requests} requests went wrong`);
        assert.ok(joins >= 2 * CYCLES_A_STEP - 3, `only ${joins} joins`);

        const replacements = c.lines().filter(msgStarts('mcauth reload: worker '));
        assert.equal(replacements.length, 4, 'two workers replaced, twice');
        const [oldPids, newPids] = [replacements.map((l) => pidsIn(l.msg!)[0]!), replacements.map((l) => pidsIn(l.msg!)[1]!)];
        const [first, second] = c.lines().filter(msgStarts('mcauth reloaded:'));
        assert.deepEqual(pidsIn(first!.msg!).sort(), newPids.slice(0, 2).sort(), first!.msg!);
        const serving = pidsIn(second!.msg!);
        assert.deepEqual(serving.sort(), newPids.slice(2).sort(), second!.msg!);
        // Each new worker listened before its old one was told to stop (by the times in their lines,
        // on this machine's one clock), and the old ones stopped.
        for (const [i, pid] of oldPids.entries()) {
          await c.waitForLine(`worker ${pid} stopped`, (l) => l.pid === pid && l.msg?.startsWith('mcauth stopped:') === true);
          const listened = c.lines().find((l) => l.pid === newPids[i] && l.msg?.startsWith('worker mcauth listening') === true);
          const stopping = c.lines().find((l) => l.pid === pid && l.msg?.startsWith('mcauth stopping on SIGTERM') === true);
          assert.ok(listened && stopping, `the lines of worker ${newPids[i]} listening and of ${pid} stopping`);
          assert.ok((listened.time as number) <= (stopping.time as number), `worker ${newPids[i]} listened at ${listened.time}, after ${pid} began to stop at ${stopping.time}`);
        }
        // Every new process ran the file as it is on disk now; none of the first ones did.
        const marked = c.lines().filter(msgStarts('marked build')).map((l) => l.pid!);
        assert.deepEqual(marked.sort(), [...newPids].sort(), 'the marked build ran in exactly the new workers');

        // Only the new workers answer now.
        const before = c.lines().length;
        for (let i = 0; i < 6; i++) assert.equal((await timedPost(c.port, '/hasJoined', { username: 'Lane1', serverID: 'none' })).status, 404);
        // Each request line is written a turn of the event loop after its answer.
        await c.waitForLine('the six answers in the request log', () => c.lines().slice(before).filter((l) => l.msg === 'request').length >= 6);
        assert.deepEqual([...answeredBy(c.lines().slice(before))].filter((pid) => !serving.includes(pid)), [], 'answered by a worker that should have stopped');
        assert.equal(await c.end(), 0);
      } finally {
        c.kill();
      }
    });
  }

  // Rule: a new worker that cannot start during a reload does not take the service down: the
  // old one keeps serving, and the log says so.
  test('a reload whose new worker cannot start keeps the old workers serving', { timeout: 120_000 }, async () => {
    const script = pathJoin(tmp.dir, 'server-broken.js');
    copyFileSync(SERVER_JS, script);
    const db = pathJoin(tmp.dir, 'hup-broken.db');
    const c = await startCluster(script, ['--db', db], false);
    try {
      replaceScript(script, "throw new Error('a broken build');\n");
      process.kill(c.primary, 'SIGHUP');
      const stopped = await c.waitForLine('the failed reload', msgStarts('mcauth reload stopped:'));
      assert.match(stopped.msg!, /a new worker could not start \(worker \d+ ended: exit 1; see its message above\); the 2 workers serving \(\d+, \d+\) keep serving$/, stopped.msg!);
      assert.equal(c.lines().filter(msgStarts('mcauth reload: worker ')).length, 0, 'no worker was replaced');
      for (let i = 0; i < 4; i++) assert.equal((await timedPost(c.port, '/hasJoined', { username: 'Nobody', serverID: 'none' })).status, 404);
      assert.equal(await c.end(), 0);
    } finally {
      c.kill();
    }
  });
});
