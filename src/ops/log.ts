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

/** Lines held before a buffered logger writes them at once, whatever the tick. */
const MAX_BUFFERED_CHARS = 64 * 1024;

/**
 * A logger writing to `out`. A buffered one gathers the lines of one turn of the event loop
 * into one write (one system call, not one a request), and writes what it holds when the
 * process exits; a crash (SIGKILL) loses at most the lines of that turn.
 */
export function createLogger(level: LogLevel, out: Writable, { now = Date.now, buffered = false }: { now?: () => number; buffered?: boolean } = {}): Logger {
  let held = '';
  const flush = (): void => {
    if (held === '') return;
    const text = held;
    held = '';
    out.write(text);
  };
  if (buffered) process.once('exit', flush);
  const emit = (line: string): void => {
    if (!buffered) return void out.write(line);
    if (held === '') setImmediate(flush);
    held += line;
    if (held.length > MAX_BUFFERED_CHARS) flush();
  };
  const write = (at: keyof typeof PINO_LEVEL, msg: string, fields: LogFields = {}): void => {
    if (PINO_LEVEL[at] < THRESHOLD[level]) return;
    // The logger's own fields come first (as pino orders them), and a caller's never replace them.
    const line: LogFields = { level: 0, time: 0, pid: 0, ...fields, msg };
    line.level = PINO_LEVEL[at];
    line.time = now();
    line.pid = process.pid;
    emit(`${JSON.stringify(line)}\n`);
  };
  return {
    error: (msg, fields, err) => write('error', msg, err === undefined ? fields : { ...fields, err: serializeError(err) }),
    info: (msg, fields) => write('info', msg, fields),
    debug: (msg, fields) => write('debug', msg, fields),
  };
}
