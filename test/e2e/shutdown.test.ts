// Graceful shutdown: on SIGTERM or SIGINT the server stops accepting connections, lets requests
// in flight finish (for up to --shutdown-timeout, 10 s by default), leaves idle kept-alive
// connections to their clients and their keep-alive timeout, checkpoints and closes the store, and exits 0; a second signal while it stops
// ends it at once. The requests here are written by hand on raw sockets, so a test can hold one
// half-sent for as long as it likes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join as pathJoin } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { serverCommand, spawnListening, tempDir, type Exit, type Listening } from '../helpers/process.ts';
import { seedPlayer } from '../helpers/players.ts';
import { UUID_DASHED, sleep } from './util.ts';

const tmp = tempDir();
after(() => tmp.cleanup());

/** One JSON line of the server's log. */
interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

interface Spawned extends Listening {
  /** The log so far, parsed (a line that is not JSON fails the test). */
  log: () => LogLine[];
  /** Resolves on the first log line whose msg matches, rejects after `ms`. */
  waitForLog: (pattern: RegExp, ms?: number) => Promise<LogLine>;
  /** Resolves on the exit, rejects after `ms` (the process is then killed). */
  exit: (ms?: number) => Promise<Exit>;
}

function parseLog(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        throw new Error(`a log line is not JSON: ${l}`);
      }
    });
}

/** Starts `server.js serve --port 0 ...args` and keeps the child, so the test sends the signals. */
async function spawnServer(args: string[]): Promise<Spawned> {
  const s = await spawnListening([...serverCommand(), 'serve', '--port', '0', ...args]);
  const log = (): LogLine[] => {
    const out = s.stdout();
    return parseLog(out.slice(0, out.lastIndexOf('\n') + 1));
  };
  const waitForLog = (pattern: RegExp, ms = 15_000): Promise<LogLine> =>
    s.waitFor(`log line matching ${pattern}`, () => log().find((l) => pattern.test(l.msg)), ms);
  const exit = (ms = 15_000): Promise<Exit> =>
    new Promise((done, fail) => {
      const timer = setTimeout(() => {
        s.child.kill('SIGKILL');
        fail(new Error(`the server did not exit within ${ms} ms\nstdout:\n${s.stdout()}\nstderr:\n${s.stderr()}`));
      }, ms);
      void s.exited.then((e) => {
        clearTimeout(timer);
        done(e);
      });
    });
  return { ...s, log, waitForLog, exit };
}

/** Kills a server a test left running (after a failed assertion), and waits for it. */
async function reap(s: Spawned | undefined): Promise<void> {
  if (s && s.running()) {
    s.child.kill('SIGKILL');
    await s.exited;
  }
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The first final (non-1xx) answer in `text`, once all of its body (by content-length) is there. */
function parseAnswer(text: string): Answer | undefined {
  let rest = text;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const [statusLine, ...headerLines] = rest.slice(0, end).split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine!)?.[1]);
    if (!status) throw new Error(`not an HTTP answer: ${JSON.stringify(rest)}`);
    rest = rest.slice(end + 4);
    if (status < 200) continue; // 100 Continue: the final answer follows
    const headers: Record<string, string> = {};
    for (const h of headerLines) {
      const colon = h.indexOf(':');
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length']);
    if (!Number.isInteger(length)) throw new Error(`no content-length in ${JSON.stringify(text)}`);
    // Every answer here is ASCII JSON, so characters are bytes.
    if (rest.length < length) return undefined;
    return { status, headers, body: rest.slice(0, length) };
  }
}

interface Raw {
  socket: Socket;
  /** Everything received so far. */
  received: () => string;
  /** Resolves once the server has closed the connection (or it broke). */
  closed: Promise<void>;
  /** Resolves once what was received matches, rejects after `ms` or when the connection closes first. */
  waitFor: (pattern: RegExp, ms?: number) => Promise<void>;
  /** Resolves on the final answer, rejects after `ms` or when the connection closes first. */
  answer: (ms?: number) => Promise<Answer>;
}

/** A plain TCP connection to the server; the test writes the HTTP by hand. */
function openRaw(port: number): Promise<Raw> {
  return new Promise((ready, fail) => {
    const socket = connect(port, '127.0.0.1');
    socket.setEncoding('latin1');
    let text = '';
    let isClosed = false;
    const waiters = new Set<() => void>();
    const closed = new Promise<void>((r) =>
      socket.once('close', () => {
        isClosed = true;
        for (const w of waiters) w();
        r();
      }),
    );
    socket.on('data', (d: string) => {
      text += d;
      for (const w of waiters) w();
    });
    const until = <T>(what: string, probe: () => T | undefined, ms: number): Promise<T> =>
      new Promise((done, failWait) => {
        const check = (): void => {
          let value: T | undefined;
          try {
            value = probe();
          } catch (err) {
            finish();
            failWait(err);
            return;
          }
          if (value !== undefined) {
            finish();
            done(value);
          } else if (isClosed) {
            finish();
            failWait(new Error(`the connection closed before ${what}; received: ${JSON.stringify(text)}`));
          }
        };
        const finish = (): void => {
          waiters.delete(check);
          clearTimeout(timer);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          failWait(new Error(`no ${what} within ${ms} ms; received: ${JSON.stringify(text)}`));
        }, ms);
        waiters.add(check);
        check();
      });
    socket.once('error', () => {}); // a reset shows as the close
    socket.once('connect', () =>
      ready({
        socket,
        received: () => text,
        closed,
        waitFor: async (pattern, ms = 10_000) => void (await until(`match of ${pattern}`, () => (pattern.test(text) ? true : undefined), ms)),
        answer: (ms = 10_000) => until('answer', () => parseAnswer(text), ms),
      }),
    );
    socket.once('error', fail);
  });
}

/** Tries to open a connection: 'connected', or the error's code (ECONNREFUSED), or 'timeout'. */
function tryConnect(port: number, ms = 5000): Promise<string> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      done('timeout');
    }, ms);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      done('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      done(err.code ?? err.message);
    });
  });
}

const CONTINUE = /^HTTP\/1\.1 100 Continue\r\n\r\n/;

/**
 * Sends the head of a POST /auth and the first bytes of its body, and returns the rest of the
 * body once the login is in flight. `Expect: 100-continue` makes the server answer `100 Continue`
 * as it hands the request to the app, so the test knows when the request is in flight without
 * guessing with a sleep.
 */
async function startSlowLogin(raw: Raw, login: string, password: string): Promise<string> {
  const body = JSON.stringify({ login, password });
  const head =
    'POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  raw.socket.write(head + body.slice(0, 12));
  await raw.waitFor(CONTINUE, 10_000);
  return body.slice(12);
}

/**
 * Starts `server.js serve --port 0 ...args`, opens a raw connection to it and runs `body`; then
 * closes the connection and kills the server if the test left it running.
 */
async function withServer(args: string[], body: (s: Spawned, raw: Raw) => Promise<void>): Promise<void> {
  let s: Spawned | undefined;
  let raw: Raw | undefined;
  try {
    s = await spawnServer(args);
    raw = await openRaw(s.port);
    await body(s, raw);
  } finally {
    raw?.socket.destroy();
    await reap(s);
  }
}

/** Sends `signal` and waits for the exit; `ms` is how long after the signal it came. */
async function signalAndExit(s: Spawned, signal: NodeJS.Signals): Promise<Exit & { ms: number }> {
  const sent = performance.now();
  s.child.kill(signal);
  const exit = await s.exit(15_000);
  return { ...exit, ms: exit.at - sent };
}

/** Asserts how the process ended, showing its output when that is not it. */
function assertExit(s: Spawned, exit: Exit, expected: Pick<Exit, 'code' | 'signal'>): void {
  assert.deepEqual({ code: exit.code, signal: exit.signal }, expected, s.stdout() + s.stderr());
}

/** The log lines of the stop, each found exactly once (or absent). */
function stopLines(s: Spawned, signal: string): { stopping: LogLine[]; stopped: LogLine[]; cut: LogLine[] } {
  const lines = s.log();
  return {
    stopping: lines.filter((l) => l.msg.startsWith(`mcauth stopping on ${signal}:`)),
    stopped: lines.filter((l) => l.msg.startsWith('mcauth stopped:')),
    cut: lines.filter((l) => l.msg.startsWith('mcauth cut off')),
  };
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  // Rule: on SIGTERM (and SIGINT alike) the listener closes at once, a request in flight still
  // gets its answer, and only then does the process exit 0, with the write-ahead log
  // checkpointed and the answered write in the database file.
  test(`${signal}: a slow /auth in flight is answered, new connections are refused, then exit 0 with the store checkpointed`, { timeout: 60_000 }, async () => {
    const db = pathJoin(tmp.dir, `slow-${signal}.db`);
    const uuid = await seedPlayer(db, 'Slowpoke', 'slow-password');
    await withServer(['--db', db], async (s, raw) => {
      const rest = await startSlowLogin(raw, 'Slowpoke', 'slow-password');

      s.child.kill(signal);
      const stopping = await s.waitForLog(new RegExp(`^mcauth stopping on ${signal}:`));
      assert.equal(stopping.level, 30, JSON.stringify(stopping));
      assert.match(stopping.msg, /\b1 request in flight\b/, stopping.msg);
      assert.match(stopping.msg, /up to 10 s\b/, `the default shutdown timeout is 10 s: ${stopping.msg}`);

      // The listener is closed: a new connection is refused, while the old one is still served.
      await sleep(100);
      assert.equal(await tryConnect(s.port), 'ECONNREFUSED', 'a new connection after the stop began');

      // The server waits for the rest of the body rather than cutting the request off.
      await sleep(500);
      assert.ok(s.running(), `the server exited with a request in flight:\n${s.stdout()}`);
      raw.socket.write(rest);
      const answer = await raw.answer(10_000);
      assert.equal(answer.status, 200, answer.body);
      // The answer does not promise a kept-alive connection that the stop is about to close.
      assert.equal(answer.headers.connection, 'close', JSON.stringify(answer.headers));
      const envelope = JSON.parse(answer.body);
      assert.equal(envelope.success, true, answer.body);
      assert.equal(envelope.result.userUUID, uuid);
      assert.match(envelope.result.accessToken, UUID_DASHED);

      assertExit(s, await s.exit(15_000), { code: 0, signal: null });
      // The server closed the connection once its answer was out.
      await raw.closed;

      const { stopping: all, stopped, cut } = stopLines(s, signal);
      assert.equal(all.length, 1, s.stdout());
      assert.equal(stopped.length, 1, `no "mcauth stopped" line:\n${s.stdout()}`);
      assert.equal(stopped[0]!.level, 30);
      assert.deepEqual(cut, [], 'nothing was cut off');
      // In the log: the stop began, the slow login was answered, then the server stopped.
      const lines = s.log();
      const began = lines.findIndex((l) => l.msg.startsWith('mcauth stopping on'));
      const answered = lines.findIndex((l) => l.msg === 'request' && l.path === '/auth' && l.status === 200);
      const ended = lines.findIndex((l) => l.msg.startsWith('mcauth stopped:'));
      assert.ok(began < answered && answered < ended, `order of the stop's lines:\n${s.stdout()}`);
      assert.deepEqual(lines.filter((l) => l.level >= 50), [], 'no error logged');

      // Checkpointed: the log was folded into the database file and emptied or removed.
      const wal = `${db}-wal`;
      assert.ok(!existsSync(wal) || statSync(wal).size === 0, `${wal} holds ${existsSync(wal) ? statSync(wal).size : 0} bytes after the stop`);
      // And the write answered during the stop is in the file (tokens are stored as SHA-256 digests).
      const file = new DatabaseSync(db);
      try {
        const digest = createHash('sha256').update(envelope.result.accessToken, 'utf8').digest('hex');
        assert.deepEqual({ ...file.prepare('SELECT count(*) AS n FROM tokens WHERE digest = ?').get(digest) }, { n: 1 });
        assert.deepEqual(file.prepare('PRAGMA integrity_check').all().map((r) => ({ ...r })), [{ integrity_check: 'ok' }]);
      } finally {
        file.close();
      }
    });
  });
}

// Rule: an idle kept-alive connection is left open through the stop, for the client to drop (as
// the Keep-Alive hint told it) or to send one more request on: closing it could cross that
// request, which the client would see fail. A request on it is answered with `Connection: close`,
// then the connection closes and the process exits without waiting out the keep-alive timeout.
test('an idle kept-alive connection stays open through the stop, and a request on it is answered with Connection: close', { timeout: 60_000 }, async () => {
  const db = pathJoin(tmp.dir, 'idle.db');
  await withServer(['--db', db, '--keep-alive-timeout', '60'], async (s, raw) => {
    raw.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const health = await raw.answer(10_000);
    assert.equal(health.status, 200, health.body);
    assert.match(health.headers.connection ?? '', /keep-alive/i, 'the connection should be kept alive');
    assert.match(health.headers['keep-alive'] ?? '', /^timeout=60$/, 'the hint that tells the client when to drop it');

    s.child.kill('SIGTERM');
    const stopping = await s.waitForLog(/^mcauth stopping on SIGTERM:/);
    assert.match(stopping.msg, /\b0 requests in flight\b/, stopping.msg);
    await sleep(300);
    assert.ok(!raw.socket.destroyed && s.running(), 'the idle connection was closed at the stop');

    const before = raw.received().length;
    const sent = performance.now();
    raw.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await raw.waitFor(/HTTP\/1\.1 200[^]*HTTP\/1\.1 200/);
    const late = parseAnswer(raw.received().slice(before))!;
    assert.equal(late.status, 200, late.body);
    assert.equal(late.headers.connection, 'close', JSON.stringify(late.headers));
    await raw.closed;
    const exit = await s.exit(15_000);
    assertExit(s, exit, { code: 0, signal: null });
    assert.ok(exit.at - sent < 3000, `exited ${Math.round(exit.at - sent)} ms after the last answer, with --keep-alive-timeout 60`);
    const { stopped, cut } = stopLines(s, 'SIGTERM');
    assert.equal(stopped.length, 1, s.stdout());
    assert.deepEqual(cut, [], 'an idle connection is no request to cut off');
  });
});

// Rule: an idle kept-alive connection its client never uses again is closed by its keep-alive
// timeout (the server's own timer, 3 s after the hint on Node), not held to --shutdown-timeout.
test('an idle kept-alive connection the client forgets is closed by its keep-alive timeout, then exit 0', { timeout: 60_000 }, async () => {
  const db = pathJoin(tmp.dir, 'forgotten.db');
  await withServer(['--db', db, '--keep-alive-timeout', '1'], async (s, raw) => {
    raw.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal((await raw.answer(10_000)).status, 200);
    const exit = await signalAndExit(s, 'SIGTERM');
    assertExit(s, exit, { code: 0, signal: null });
    assert.ok(exit.ms < 8000, `the stop took ${Math.round(exit.ms)} ms with --keep-alive-timeout 1 (the shutdown timeout is 10 s)`);
    await raw.closed;
    assert.deepEqual(stopLines(s, 'SIGTERM').cut, [], 'an idle connection is no request to cut off');
  });
});

// Rule: --shutdown-timeout bounds the wait: a request whose body never arrives is cut off
// after that many seconds, the cut is logged at level 50 with the count, and the exit is still 0.
test('--shutdown-timeout 1: a request that never completes is cut off after about 1 s, logged, and the exit is 0', { timeout: 60_000 }, async () => {
  const db = pathJoin(tmp.dir, 'cut.db');
  await seedPlayer(db, 'Stalled', 'stall-pw');
  await withServer(['--db', db, '--shutdown-timeout', '1'], async (s, raw) => {
    await startSlowLogin(raw, 'Stalled', 'stall-pw');

    const exit = await signalAndExit(s, 'SIGTERM');
    assertExit(s, exit, { code: 0, signal: null });
    assert.ok(exit.ms >= 900, `exited after ${Math.round(exit.ms)} ms: the request in flight was not given its second`);
    assert.ok(exit.ms < 5000, `exited after ${Math.round(exit.ms)} ms, with --shutdown-timeout 1`);
    await raw.closed;
    assert.doesNotMatch(raw.received().replace(CONTINUE, ''), /^HTTP\//, 'a request cut off gets no answer');

    const { stopping, stopped, cut } = stopLines(s, 'SIGTERM');
    assert.equal(stopping.length, 1, s.stdout());
    assert.match(stopping[0]!.msg, /\b1 request in flight may take up to 1 s\b/, stopping[0]!.msg);
    assert.equal(cut.length, 1, `no cut-off line:\n${s.stdout()}`);
    assert.equal(cut[0]!.level, 50, JSON.stringify(cut[0]));
    assert.match(cut[0]!.msg, /^mcauth cut off 1 request still in flight after 1 s$/, cut[0]!.msg);
    assert.equal(stopped.length, 1, s.stdout());
  });
});

// Rule: a second signal while the server stops ends it at once (the signal's default action),
// without waiting out the shutdown timeout.
for (const [first, second] of [['SIGTERM', 'SIGTERM'], ['SIGTERM', 'SIGINT']] as const) {
  test(`${first} then ${second} during the stop ends the process at once`, { timeout: 60_000 }, async () => {
    const db = pathJoin(tmp.dir, `twice-${second}.db`);
    await seedPlayer(db, 'Twice', 'twice-pw');
    await withServer(['--db', db], async (s, raw) => {
      await startSlowLogin(raw, 'Twice', 'twice-pw');

      s.child.kill(first);
      await s.waitForLog(new RegExp(`^mcauth stopping on ${first}:`));
      await sleep(200);
      assert.ok(s.running(), 'the first signal should leave the server waiting for the request in flight');
      const exit = await signalAndExit(s, second);
      assertExit(s, exit, { code: null, signal: second });
      assert.ok(exit.ms < 3000, `the second signal took ${Math.round(exit.ms)} ms to end the process`);
      assert.equal(stopLines(s, first).stopped.length, 0, 'a killed server does not say it stopped');
    });
  });
}
