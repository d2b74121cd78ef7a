// The log in process: createLogger writes one JSON line an event in pino's shape (`level` 50
// error, 40 warn, 30 info, 20 debug; `time` in ms from the clock given; `pid`; the caller's
// fields; `msg`). A level keeps its own events and the more severe: silent writes nothing, error
// only failures (no warnings), info no debug, debug everything. An error's `err` carries its
// type, message and stack. The pretty format writes one readable line an event: local time,
// level, message, the fields as key=value (a request line as `METHOD PATH STATUS MS ms OUTCOME`),
// an error's stack on the lines after it, indented; no text can break a line. auto is pretty on a
// terminal (isTTY), json otherwise.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger, LOG_LEVELS, resolveLogFormat, type LogFormat, type LogLevel } from '../../src/ops/log.ts';

/** A logger at `level` whose clock reads `now`, and what it wrote, as chunks. */
function capture(level: LogLevel, now = 1_700_000_000_123, buffered = false, format?: LogFormat, isTTY?: boolean, gatherMs?: number) {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  if (isTTY !== undefined) Object.assign(out, { isTTY });
  const log = createLogger(level, out, { now: () => now, buffered, format, gatherMs });
  const text = (): string => chunks.join('');
  const lines = (): Record<string, any>[] => text().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  return { log, chunks, text, lines };
}

/** Logs one event at each level and returns the messages that were written. */
function written(level: LogLevel): string[] {
  const c = capture(level);
  c.log.error('an error', {}, new Error('x'));
  c.log.warn('a warning');
  c.log.info('an info');
  c.log.debug('a debug');
  return c.lines().map((l) => l.msg);
}

describe('createLogger', () => {
  test('the levels are silent, error, info and debug', () => {
    assert.deepEqual([...LOG_LEVELS], ['silent', 'error', 'info', 'debug']);
  });

  test('silent writes nothing at all', () => {
    const c = capture('silent');
    c.log.error('an error', { a: 1 }, new Error('x'));
    c.log.warn('a warning');
    c.log.info('an info');
    c.log.debug('a debug');
    assert.deepEqual(c.chunks, []);
  });

  test('each level keeps its own events and the more severe ones; warnings show at info and debug, not at error', () => {
    assert.deepEqual(written('error'), ['an error']);
    assert.deepEqual(written('info'), ['an error', 'a warning', 'an info']);
    assert.deepEqual(written('debug'), ['an error', 'a warning', 'an info', 'a debug']);
  });

  test('pino\'s level numbers: 50 error, 40 warn, 30 info, 20 debug', () => {
    const c = capture('debug');
    c.log.error('e');
    c.log.warn('w', { file: 'x.db' });
    c.log.info('i');
    c.log.debug('d');
    assert.deepEqual(
      c.lines().map((l) => [l.msg, l.level]),
      [['e', 50], ['w', 40], ['i', 30], ['d', 20]],
    );
    assert.equal(c.lines()[1]!.file, 'x.db');
  });

  test('one line an event, each a JSON object ending in a newline, even when the message has one', () => {
    const c = capture('info');
    c.log.info('two\nlines', { note: 'a\nb' });
    c.log.info('next');
    assert.equal(c.chunks.length, 2, 'one write an event');
    for (const chunk of c.chunks) {
      assert.match(chunk, /^\{.*\}\n$/s);
      assert.equal(chunk.indexOf('\n'), chunk.length - 1, `one line: ${JSON.stringify(chunk)}`);
    }
    assert.deepEqual(c.lines().map((l) => [l.msg, l.note]), [['two\nlines', 'a\nb'], ['next', undefined]]);
  });

  test('a line carries level, time from the clock, pid, the caller\'s fields and msg', () => {
    const c = capture('info', 1_234_567);
    c.log.info('request', { reqId: 7, method: 'POST', path: '/auth', status: 401, ms: 12.5, outcome: 'bad_credentials' });
    assert.deepEqual(c.lines(), [
      { level: 30, time: 1_234_567, pid: process.pid, reqId: 7, method: 'POST', path: '/auth', status: 401, ms: 12.5, outcome: 'bad_credentials', msg: 'request' },
    ]);
  });

  test('time defaults to the wall clock in milliseconds', () => {
    const chunks: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    const before = Date.now();
    createLogger('info', out).info('now');
    const { time } = JSON.parse(chunks[0]!);
    assert.ok(Number.isInteger(time) && time >= before && time <= Date.now(), `time ${time} is Date.now()`);
  });

  test('a field left undefined is left out; msg, level, time and pid are always the logger\'s own, and first', () => {
    const c = capture('info');
    c.log.info('request', { outcome: undefined, msg: 'not this', level: 99, time: -1, pid: -1 });
    c.log.info('');
    const [first, second] = c.lines();
    assert.equal(first!.msg, 'request');
    assert.deepEqual([first!.level, first!.pid], [30, process.pid]);
    assert.ok(first!.time > 0);
    assert.deepEqual(Object.keys(first!).slice(0, 3), ['level', 'time', 'pid']);
    assert.ok(!('outcome' in first!));
    assert.ok(Object.hasOwn(second!, 'msg'), 'an empty message is still a msg');
  });

  test('an error is serialized with its type, message and stack, next to the fields', () => {
    const c = capture('error');
    const err = new TypeError('disk on fire');
    c.log.error('POST /auth: unexpected error', { where: 'here' }, err);
    const [line] = c.lines();
    assert.equal(line!.level, 50);
    assert.equal(line!.msg, 'POST /auth: unexpected error');
    assert.equal(line!.where, 'here');
    assert.equal(line!.err.type, 'TypeError');
    assert.equal(line!.err.message, 'disk on fire');
    assert.equal(line!.err.stack, err.stack);
    assert.match(line!.err.stack, /^TypeError: disk on fire\n\s+at /);
  });

  test('something thrown that is not an Error is still described; no err without one', () => {
    const c = capture('error');
    c.log.error('thrown a string', {}, 'oops');
    c.log.error('thrown null', undefined, null);
    c.log.error('no error given', { a: 1 });
    const [str, nul, none] = c.lines();
    assert.deepEqual(str!.err, { type: 'string', message: 'oops' });
    assert.deepEqual(nul!.err, { type: 'object', message: 'null' });
    assert.ok(!('err' in none!));
    assert.equal(none!.a, 1);
  });
});

/** Resolves once `chunks` holds `n` writes. */
async function writes(chunks: string[], n: number): Promise<void> {
  while (chunks.length < n) await new Promise((r) => setTimeout(r, 5));
}

// Rule: a buffered logger gathers the lines of a short while (several turns of the event loop)
// into one write (one system call, not one a request nor one a turn), writes them soon after,
// and holds back no more than MAX_BUFFERED_CHARS.
test('a buffered logger writes the lines of several turns in one write, and early when they pile up', async () => {
  const c = capture('info', 1, true, undefined, undefined, 60_000);
  c.log.info('one');
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  c.log.info('two');
  assert.equal(c.chunks.length, 0, 'nothing written yet, turns later');
  const big = 'x'.repeat(40 * 1024);
  c.log.info(big);
  assert.equal(c.chunks.length, 0);
  c.log.info(big);
  assert.equal(c.chunks.length, 1, 'more than 64 KiB held: written at once, in one write');
  assert.deepEqual(c.lines().map((l) => l.msg.length), [3, 3, big.length, big.length]);
});

test('a buffered logger writes what it holds soon, unasked', async () => {
  const c = capture('info', 1, true);
  c.log.info('soon');
  await writes(c.chunks, 1);
  assert.deepEqual(c.lines().map((l) => l.msg), ['soon']);
});

/** Runs `work` with the process in time zone `tz` (Node reads TZ again when it is set). */
function inZone<T>(tz: string, work: () => T): T {
  const before = process.env.TZ;
  process.env.TZ = tz;
  try {
    return work();
  } finally {
    if (before === undefined) delete process.env.TZ;
    else process.env.TZ = before;
  }
}

/** 2026-11-23 15:20:50.123 UTC. */
const AT = Date.UTC(2026, 10, 23, 15, 20, 50, 123);

describe('the pretty format', () => {
  const pretty = (level: LogLevel = 'debug', now = AT) => capture(level, now, false, 'pretty');

  test('a request line reads as an access log: time, level, method, path, status, ms, outcome, then the rest as key=value', () => {
    const text = inZone('UTC', () => {
      const c = pretty();
      c.log.info('request', { reqId: 2, method: 'POST', path: '/auth', status: 401, ms: 210.91, outcome: 'bad_credentials', player: 'Alice', client: '127.0.0.1' });
      c.log.info('request', { reqId: 3, method: 'GET', path: '/health', status: 200, ms: 0.5, outcome: undefined, player: undefined, client: '::1' });
      return c.text();
    });
    assert.equal(
      text,
      '2026-11-23 15:20:50.123 INFO  POST /auth 401 210.91 ms bad_credentials reqId=2 player=Alice client=127.0.0.1\n' +
        '2026-11-23 15:20:50.123 INFO  GET /health 200 0.5 ms reqId=3 client=::1\n',
    );
  });

  test('the time is local, to the millisecond', () => {
    const c = inZone('Asia/Kolkata', () => {
      const c = pretty('info', AT + 1);
      c.log.info('x');
      return c;
    });
    assert.equal(c.text(), '2026-11-23 20:50:50.124 INFO  x\n');
  });

  test('levels are named and padded to one width; warn shows at info, not at error; json lines are not written', () => {
    const lines = inZone('UTC', () => {
      const c = pretty('info');
      c.log.error('e');
      c.log.warn('the database file x.db is open to others', { file: 'x.db' });
      c.log.info('i');
      c.log.debug('d');
      return c.text().split('\n');
    });
    assert.deepEqual(lines, [
      '2026-11-23 15:20:50.123 ERROR e',
      '2026-11-23 15:20:50.123 WARN  the database file x.db is open to others file=x.db',
      '2026-11-23 15:20:50.123 INFO  i',
      '',
    ]);
    const quiet = pretty('error');
    quiet.log.warn('w');
    assert.deepEqual(quiet.chunks, []);
  });

  test('values: plain words bare, anything else as JSON; undefined left out; the logger\'s own fields not repeated', () => {
    const c = inZone('UTC', () => {
      const c = pretty();
      c.log.debug('settings in effect', { settings: { db: 'a b.db', port: 0 }, empty: '', spaced: 'two words', eq: 'a=b', on: true, none: null, gone: undefined, level: 99, pid: 1, msg: 'no', time: 5 });
      return c;
    });
    assert.equal(c.text(), '2026-11-23 15:20:50.123 DEBUG settings in effect settings={"db":"a b.db","port":0} empty="" spaced="two words" eq="a=b" on=true none=null\n');
  });

  test('no message or value can start a line of its own', () => {
    const c = pretty();
    c.log.info('two\nlines\r\u2028', { note: 'a\nb', path: '/x\ny', key: 'tab\there' });
    c.log.info('request', { method: 'GET', path: '/a\nINFO forged', status: 200, ms: 1 });
    assert.equal(c.chunks.length, 2, 'one write an event');
    for (const chunk of c.chunks) assert.equal(chunk.indexOf('\n'), chunk.length - 1, `one line: ${JSON.stringify(chunk)}`);
    assert.match(c.chunks[0]!, / INFO  two\\nlines\\r\\u2028 note="a\\nb" path="\/x\\ny" key="tab\\there"\n$/);
    assert.match(c.chunks[1]!, / GET "\/a\\nINFO forged" 200 1 ms\n$/);
  });

  test('an error\'s stack follows on lines of its own, indented; something thrown without one stays on the line', () => {
    const c = inZone('UTC', () => {
      const c = pretty('error');
      const err = new TypeError('disk on fire');
      err.stack = 'TypeError: disk on fire\n    at open (db.ts:1:1)\n    at main (main.ts:2:2)';
      c.log.error('POST /auth: unexpected error', { where: 'here' }, err);
      c.log.error('thrown a string', {}, 'oops');
      return c;
    });
    assert.deepEqual(c.chunks, [
      '2026-11-23 15:20:50.123 ERROR POST /auth: unexpected error where=here\n' +
        '    TypeError: disk on fire\n' +
        '        at open (db.ts:1:1)\n' +
        '        at main (main.ts:2:2)\n',
      '2026-11-23 15:20:50.123 ERROR thrown a string err="string: oops"\n',
    ]);
  });

  test('auto is pretty on a terminal and json otherwise (a pipe, a file, the journal); json is the default', () => {
    const tty = capture('info', AT, false, 'auto', true);
    tty.log.info('hello');
    assert.match(tty.text(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} INFO  hello\n$/);
    const piped = capture('info', AT, false, 'auto', false);
    piped.log.info('hello');
    assert.deepEqual(piped.lines(), [{ level: 30, time: AT, pid: process.pid, msg: 'hello' }]);
    const plain = capture('info', AT, false, undefined, true);
    plain.log.info('hello');
    assert.equal(plain.lines()[0]!.msg, 'hello', 'no format given: json, even on a terminal');
    const forced = capture('info', AT, false, 'json', true);
    forced.log.info('hello');
    assert.equal(forced.lines()[0]!.msg, 'hello', 'json on a terminal when asked');
    const out = new Writable({ write: (_c, _e, done) => done() });
    assert.equal(resolveLogFormat('auto', out), 'json');
    assert.equal(resolveLogFormat('pretty', out), 'pretty');
    assert.equal(resolveLogFormat('auto', Object.assign(out, { isTTY: true })), 'pretty');
  });

  test('buffered, pretty lines are still gathered into one write', async () => {
    const c = capture('info', AT, true, 'pretty');
    c.log.info('one');
    c.log.warn('two');
    assert.equal(c.chunks.length, 0);
    await writes(c.chunks, 1);
    assert.equal(c.chunks.length, 1);
    assert.match(c.chunks[0]!, /^\S+ \S+ INFO  one\n\S+ \S+ WARN  two\n$/);
  });
});
