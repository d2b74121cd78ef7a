// guessFormat: which format a SOURCE is, when --format is not given. A SQLite file is AuthMe's
// or drasl's by its tables; text starting with [ or { is json; other text is csv, or authme
// when its header names AuthMe's columns.
import { closeSync, openSync, readSync } from 'node:fs';
import { findAuthmeTable, isAuthmeHeader } from './authme.ts';
import { draslLayout } from './drasl.ts';
import { openSource, readingFrom, SQLITE_MAGIC, tablesOf } from './sqlite.ts';
import { ImportSourceError, type SourceFormat, SOURCE_FORMATS } from './types.ts';

/** How much of a file is read to guess: far more than any header line. */
const GUESS_BYTES = 64 * 1024;

const UTF16_MARKS = [Buffer.from([0xff, 0xfe]), Buffer.from([0xfe, 0xff])];

const PASS_FORMAT = `pass --format ${SOURCE_FORMATS.join(', ')}`;

export function guessFormat(path: string): SourceFormat {
  try {
    const head = readHead(path);
    if (head.length === 0) throw new ImportSourceError('the file is empty');
    if (head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return guessDatabase(path);
    // Spreadsheets save "Unicode text" as UTF-16, which starts with its byte order mark.
    if (UTF16_MARKS.some((mark) => head.subarray(0, 2).equals(mark))) throw new ImportSourceError('UTF-16 text; save it as UTF-8 and import it again');
    // A NUL byte is in no text file this reads: the file is something else.
    if (head.includes(0)) throw new ImportSourceError(`cannot tell its format: it is neither a SQLite database nor text; ${PASS_FORMAT}`);
    const text = new TextDecoder().decode(head).trimStart(); // the decoder drops a byte order mark
    if (text.startsWith('[') || text.startsWith('{')) return 'json';
    return isAuthmeHeader(headerNames(text)) ? 'authme' : 'csv';
  } catch (err) {
    if (err instanceof ImportSourceError) throw new ImportSourceError(`${path}: ${err.message}`, { cause: err });
    throw err;
  }
}

function readHead(path: string): Buffer {
  try {
    const fd = openSync(path, 'r');
    try {
      const head = Buffer.alloc(GUESS_BYTES);
      return head.subarray(0, readSync(fd, head, 0, GUESS_BYTES, 0));
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw new ImportSourceError(`cannot be read: ${(err as Error).message}`);
  }
}

function guessDatabase(path: string): SourceFormat {
  const db = openSource(path);
  const tables = readingFrom(db, () => tablesOf(db));
  const found: SourceFormat[] = [];
  if (findAuthmeTable(tables)) found.push('authme');
  if (draslLayout(tables)) found.push('drasl');
  if (found.length === 1) return found[0]!;
  if (found.length > 1) throw new ImportSourceError('a SQLite database with both AuthMe\'s and drasl\'s tables; pass --format authme or --format drasl');
  throw new ImportSourceError(
    `a SQLite database, but neither AuthMe's (a table "authme") nor drasl's (tables "users" and "players"); its tables: ${[...tables.keys()].join(', ') || 'none'}`,
  );
}

/** The first line's column names, lower-cased, without quotes: enough to recognise a header. */
function headerNames(text: string): string[] {
  const line = text.slice(0, text.search(/\r?\n|$/));
  return line.split(line.includes('\t') ? '\t' : ',').map((name) => name.trim().replace(/^"|"$/g, '').toLowerCase());
}
