// The `csv` format: mcauth's own columns, a header row naming them (in any order and case).
// A column this reader does not know is refused rather than skipped: a typo such as "skin_url"
// would otherwise drop every skin without a word.
import { readDelimited } from './delimited.ts';
import { type ImportRow, ImportSourceError, quote } from './types.ts';

const COLUMNS = ['name', 'hash', 'uuid', 'skinUrl', 'capeUrl', 'isAlex'] as const;
type Column = (typeof COLUMNS)[number];
const REQUIRED: readonly Column[] = ['name', 'hash'];
const BY_LOWER_CASE = new Map<string, Column>(COLUMNS.map((c) => [c.toLowerCase(), c]));

/** isAlex as a spreadsheet may write it; empty leaves it unset. */
const BOOLEANS = new Map<string, boolean>([
  ['true', true],
  ['1', true],
  ['false', false],
  ['0', false],
]);

export function readCsvRows(text: string): ImportRow[] {
  const { header, headerLine, records } = readDelimited(text);
  const index = new Map<Column, number>();
  const unknown: string[] = [];
  header.forEach((name, i) => {
    const column = BY_LOWER_CASE.get(name.toLowerCase());
    if (!column) unknown.push(quote(name));
    else if (index.has(column)) throw new ImportSourceError(`line ${headerLine}: the column "${column}" is given twice`);
    else index.set(column, i);
  });
  if (unknown.length > 0) {
    throw new ImportSourceError(`line ${headerLine}: unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the columns are ${COLUMNS.join(', ')}`);
  }
  const missing = REQUIRED.filter((c) => !index.has(c));
  if (missing.length > 0) throw new ImportSourceError(`line ${headerLine}: no column ${missing.map((c) => `"${c}"`).join(' or ')}; the header must name at least ${REQUIRED.join(' and ')}`);

  const at = (fields: (string | null)[], column: Column): string => {
    const i = index.get(column);
    return i === undefined ? '' : (fields[i] ?? '');
  };
  return records.map(({ line, fields }) => {
    const row: ImportRow = { where: `line ${line}`, name: at(fields, 'name'), hash: at(fields, 'hash') };
    for (const column of ['uuid', 'skinUrl', 'capeUrl'] as const) {
      const value = at(fields, column);
      if (value !== '') row[column] = value;
    }
    const isAlex = at(fields, 'isAlex');
    if (isAlex !== '') {
      const value = BOOLEANS.get(isAlex.toLowerCase());
      if (value === undefined) throw new ImportSourceError(`line ${line}: isAlex is ${quote(isAlex)}; write true, false, 1, 0 or nothing`);
      row.isAlex = value;
    }
    return row;
  });
}
