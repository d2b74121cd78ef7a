// A logger whose lines a test reads back, parsed.
import { Writable } from 'node:stream';
import { createLogger, type Logger, type LogLevel } from '../../src/ops/log.ts';

export interface CapturedLog {
  log: Logger;
  /** Every line so far, parsed. */
  lines: () => Record<string, any>[];
  /** Every line so far, as written. */
  text: () => string;
}

export function captureLog(level: LogLevel = 'debug'): CapturedLog {
  let text = '';
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  return {
    log: createLogger(level, out),
    lines: () => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l)),
    text: () => text,
  };
}

/** A logger that writes nothing. */
export const silentLog = (): Logger => captureLog('silent').log;
