// The log: one JSON line an event on stdout, in pino's shape (`level` as pino's number, `time` in
// ms since the epoch, `msg`), so that tools made for pino read it. Callers pass the fields; no
// caller passes a body, a header or a query string, which is where secrets travel.
import type { Writable } from 'node:stream';

export const LOG_LEVELS = ['silent', 'error', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** pino's numbers for the levels used here. */
const PINO_LEVEL = { error: 50, info: 30, debug: 20 } as const;
const THRESHOLD: Record<LogLevel, number> = { silent: Infinity, error: 50, info: 30, debug: 20 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  /** An unexpected failure; `err`'s stack goes into the line (and nowhere else). */
  error: (msg: string, fields?: LogFields, err?: unknown) => void;
  info: (msg: string, fields?: LogFields) => void;
  debug: (msg: string, fields?: LogFields) => void;
}

/** pino's shape of an error: its type, message and stack. */
function serializeError(err: unknown): LogFields {
  return err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : { type: typeof err, message: String(err) };
}

export function createLogger(level: LogLevel, out: Writable, now: () => number = Date.now): Logger {
  const write = (at: keyof typeof PINO_LEVEL, msg: string, fields: LogFields = {}): void => {
    if (PINO_LEVEL[at] < THRESHOLD[level]) return;
    // The logger's own fields come first (as pino orders them), and a caller's never replace them.
    const line: LogFields = { level: 0, time: 0, pid: 0, ...fields, msg };
    line.level = PINO_LEVEL[at];
    line.time = now();
    line.pid = process.pid;
    out.write(`${JSON.stringify(line)}\n`);
  };
  return {
    error: (msg, fields, err) => write('error', msg, err === undefined ? fields : { ...fields, err: serializeError(err) }),
    info: (msg, fields) => write('info', msg, fields),
    debug: (msg, fields) => write('debug', msg, fields),
  };
}
