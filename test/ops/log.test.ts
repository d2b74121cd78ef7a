// The log in process: createLogger writes one JSON line an event in pino's shape (`level` 50
// error, 30 info, 20 debug; `time` in ms from the clock given; `pid`; the caller's fields; `msg`).
// A level keeps its own events and the more severe: silent writes nothing, error only failures,
// info no debug, debug everything. An error's `err` carries its type, message and stack.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger, LOG_LEVELS, type LogLevel } from '../../src/ops/log.ts';

/** A logger at `level` whose clock reads `now`, and what it wrote, as chunks. */
function capture(level: LogLevel, now = 1_700_000_000_123, buffered = false) {
  const chunks: string[] = [];
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const log = createLogger(level, out, { now: () => now, buffered });
  const text = (): string => chunks.join('');
  const lines = (): Record<string, any>[] => text().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
  return { log, chunks, text, lines };
}

/** Logs one event at each level and returns the messages that were written. */
function written(level: LogLevel): string[] {
  const c = capture(level);
  c.log.error('an error', {}, new Error('x'));
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
    c.log.info('an info');
    c.log.debug('a debug');
    assert.deepEqual(c.chunks, []);
  });

  test('each level keeps its own events and the more severe ones', () => {
    assert.deepEqual(written('error'), ['an error']);
    assert.deepEqual(written('info'), ['an error', 'an info']);
    assert.deepEqual(written('debug'), ['an error', 'an info', 'a debug']);
  });

  test('pino\'s level numbers: 50 error, 30 info, 20 debug', () => {
    const c = capture('debug');
    c.log.error('e');
    c.log.info('i');
    c.log.debug('d');
    assert.deepEqual(
      c.lines().map((l) => [l.msg, l.level]),
      [['e', 50], ['i', 30], ['d', 20]],
    );
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

// Rule: a buffered logger writes the lines of one turn of the event loop at once (one system
// call, not one a request), soon after, and holds back no more than MAX_BUFFERED_CHARS.
test('a buffered logger writes a turn\'s lines in one write, on the next turn, and early when they pile up', async () => {
  const c = capture('info', 1, true);
  c.log.info('one');
  c.log.info('two');
  assert.equal(c.chunks.length, 0, 'nothing written yet');
  await new Promise((r) => setImmediate(r));
  assert.equal(c.chunks.length, 1, 'one write for both lines');
  assert.deepEqual(c.lines().map((l) => l.msg), ['one', 'two']);
  const big = 'x'.repeat(40 * 1024);
  c.log.info(big);
  c.log.info(big);
  assert.equal(c.chunks.length, 2, 'more than 64 KiB held: written at once');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(c.lines().map((l) => l.msg.length), [3, 3, big.length, big.length]);
});
