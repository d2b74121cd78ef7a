// readSource: every row of an import SOURCE, read as the format given (or guessed by guessFormat).
// Each file is read once, whole: the largest sources (100,000+ players) are a few MiB.
import { readFileSync } from 'node:fs';
import { readAuthmeDatabase, readAuthmeExport } from './authme.ts';
import { readCsvRows } from './csv.ts';
import { readDraslDatabase } from './drasl.ts';
import { readJsonRows } from './json.ts';
import { SQLITE_MAGIC } from './sqlite.ts';
import { type ImportRow, ImportSourceError, type SourceFormat } from './types.ts';

export { guessFormat } from './guess.ts';
export { type ImportRow, ImportSourceError, SOURCE_FORMATS, type SourceFormat } from './types.ts';

/** Reads every row of the file at `path`; an ImportSourceError names the file and what is wrong where. */
export function readSource(path: string, format: SourceFormat): ImportRow[] {
  try {
    const bytes = readBytes(path);
    const isSqlite = bytes.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC);
    switch (format) {
      case 'authme':
        return isSqlite ? readAuthmeDatabase(path) : readAuthmeExport(decode(bytes));
      case 'drasl':
        if (!isSqlite) throw new ImportSourceError("not a SQLite database, as drasl's (drasl.db) is");
        return readDraslDatabase(path);
      case 'csv':
      case 'json':
        if (isSqlite) throw new ImportSourceError(`a SQLite database, not ${format} text; try --format authme or --format drasl`);
        return format === 'csv' ? readCsvRows(decode(bytes)) : readJsonRows(decode(bytes));
    }
  } catch (err) {
    if (err instanceof ImportSourceError) throw new ImportSourceError(`${path}: ${err.message}`, { cause: err });
    throw err;
  }
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ImportSourceError(`cannot be read: ${(err as Error).message}`);
  }
}

/**
 * The file as UTF-8 text, without its byte order mark. Anything else is refused rather than
 * decoded to replacement characters, which would change names and hashes without a word.
 */
function decode(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ImportSourceError('not UTF-8 text; save it as UTF-8 and import it again');
  }
}
