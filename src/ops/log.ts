// The log: one line an event on stdout. `json` is pino's shape (`level` as pino's number, `time`
// in ms since the epoch, `msg`), so that tools made for pino read it; `pretty` is one readable
// line for a person at a terminal. Callers pass the fields; no caller passes a body, a header or
// a query string, which is where secrets travel.
import type { Writable } from 'node:stream';

export const LOG_LEVELS = ['silent', 'error', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** pino's numbers for the levels used here. */
const PINO_LEVEL = { error: 50, warn: 40, info: 30, debug: 20 } as const;
type At = keyof typeof PINO_LEVEL;
/** The least severe event each --log-level shows: warnings show at info and debug, not at error. */
const THRESHOLD: Record<LogLevel, number> = { silent: Infinity, error: 50, info: 30, debug: 20 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  /** An unexpected failure; `err`'s stack goes into the line (and nowhere else). */
  error: (msg: string, fields?: LogFields, err?: unknown) => void;
  /** Something the admin should fix; the server keeps running. */
  warn: (msg: string, fields?: LogFields) => void;
  info: (msg: string, fields?: LogFields) => void;
  debug: (msg: string, fields?: LogFields) => void;
}

/** pino's shape of an error: its type, message and stack. */
function serializeError(err: unknown): LogFields {
  return err instanceof Error ? { type: err.name, message: err.message, stack: err.stack } : { type: typeof err, message: String(err) };
}

/** The fields a JSON line always has, the logger's own. */
const OWN_FIELDS = ['level', 'time', 'pid', 'msg'];

/** Lines held before a buffered logger writes them at once, whatever the time. */
const MAX_BUFFERED_CHARS = 64 * 1024;
/**
 * How long a buffered logger gathers lines into one write. A write is a system call of some
 * microseconds, to a pipe or the journal: made once a turn of the event loop, which serves a few
 * requests under load, it cost more than the lines it wrote (bench/log-line.ts, 3 lines a turn:
 * 5.9 µs a line with a write a turn, 2.6 gathered).
 */
const GATHER_MS = 25;

/** `auto` is `pretty` when `out` is a terminal, else `json` (a file, a pipe, the journal). */
export function resolveLogFormat(format: LogFormat, out: Writable): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return (out as Writable & { isTTY?: boolean }).isTTY === true ? 'pretty' : 'json';
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Local time to the millisecond, `2026-11-23 15:20:50.123`: a terminal's reader thinks in it. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const date = `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
  return `${date} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** Control characters escaped, so that no text can start a line of its own (or forge one). */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) =>
    c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\t' ? '\\t' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A field's value: bare when it is one plain word, else as JSON (quoted, escaped, one line). */
function prettyValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=\\\u0000-\u001f\u007f\u2028\u2029]+$/.test(value) ? value : oneLine(JSON.stringify(value));
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === null) return String(value);
  return oneLine(JSON.stringify(value) ?? String(value));
}

/**
 * One readable line: local time, level, message, then the fields as key=value; an error's stack
 * on the lines after it, indented. A request line reads as an access log does:
 * `POST /auth 401 210.9 ms bad_credentials reqId=2 player=Alice client=127.0.0.1`.
 */
function prettyLine(at: At, time: number, msg: string, fields: LogFields): string {
  const rest: LogFields = { ...fields };
  let text = oneLine(msg);
  if (msg === 'request' && typeof rest.method === 'string' && typeof rest.path === 'string') {
    const outcome = typeof rest.outcome === 'string' ? ` ${rest.outcome}` : '';
    text = `${oneLine(rest.method)} ${prettyValue(rest.path)} ${String(rest.status)} ${String(rest.ms)} ms${outcome}`;
    for (const key of ['method', 'path', 'status', 'ms', 'outcome']) delete rest[key];
  }
  let stack = '';
  const err = typeof rest.err === 'object' && rest.err !== null ? (rest.err as LogFields) : undefined;
  if (err && typeof err.stack === 'string') {
    delete rest.err;
    stack = err.stack.split('\n').map((l) => `\n    ${oneLine(l)}`).join('');
  } else if (err) {
    rest.err = `${String(err.type)}: ${String(err.message)}`;
  }
  const pairs = Object.entries(rest)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${oneLine(k)}=${prettyValue(v)}`)
    .join('');
  return `${localTime(time)} ${at.toUpperCase().padEnd(5)} ${text}${pairs}${stack}\n`;
}

/**
 * A logger writing to `out` in `format` (json by default). A buffered one gathers the lines of
 * GATHER_MS into one write (one system call, not one a request, nor one a turn), and writes what
 * it holds when the process exits; a crash (SIGKILL) loses at most the lines of that while.
 */
export function createLogger(
  level: LogLevel,
  out: Writable,
  { now = Date.now, buffered = false, format = 'json', gatherMs = GATHER_MS }: { now?: () => number; buffered?: boolean; format?: LogFormat; gatherMs?: number } = {},
): Logger {
  const pretty = resolveLogFormat(format, out) === 'pretty';
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
    // Unreferenced: held lines keep no process from exiting (the exit writes them).
    if (held === '') setTimeout(flush, gatherMs).unref();
    held += line;
    if (held.length > MAX_BUFFERED_CHARS) flush();
  };
  const write = (at: At, msg: string, fields: LogFields = {}): void => {
    if (PINO_LEVEL[at] < THRESHOLD[level]) return;
    if (pretty) {
      // The logger's own fields are shown in their places, not again as key=value.
      const { level: _l, time: _t, pid: _p, msg: _m, ...rest } = fields;
      return emit(prettyLine(at, now(), msg, rest));
    }
    // The logger's own fields come first (as pino orders them), msg last, and a caller's never
    // replace them: the caller's are written between, as JSON.stringify writes them, without a copy.
    const mine = OWN_FIELDS.some((key) => Object.hasOwn(fields, key));
    const theirs = JSON.stringify(mine ? Object.fromEntries(Object.entries(fields).filter(([key]) => !OWN_FIELDS.includes(key))) : fields).slice(1, -1);
    emit(`{"level":${PINO_LEVEL[at]},"time":${now()},"pid":${process.pid}${theirs && ','}${theirs},"msg":${JSON.stringify(msg)}}\n`);
  };
  return {
    error: (msg, fields, err) => write('error', msg, err === undefined ? fields : { ...fields, err: serializeError(err) }),
    warn: (msg, fields) => write('warn', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    debug: (msg, fields) => write('debug', msg, fields),
  };
}
