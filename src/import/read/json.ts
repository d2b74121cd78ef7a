// The `json` format: an array of rows, or { "players": [rows] }, each row an object with mcauth's
// keys. As with the csv format, a key this reader does not know is refused, never skipped.
import { jsonShapeProblem } from '../../json-shape.ts';
import { type ImportRow, ImportSourceError, quote } from './types.ts';

const STRING_KEYS = ['name', 'hash', 'uuid', 'skinUrl', 'capeUrl'] as const;
const REQUIRED = new Set(['name', 'hash']);
const KEYS = new Set<string>([...STRING_KEYS, 'isAlex']);

export function readJsonRows(text: string): ImportRow[] {
  // Keys given twice, where JSON.parse would silently keep the last, are refused first.
  const problem = jsonShapeProblem(text);
  if (problem) throw new ImportSourceError(`not JSON this reader takes: it ${problem}`);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new ImportSourceError(`not valid JSON: ${(err as Error).message}`);
  }
  return playersOf(document).map((value, i) => toRow(value, `row ${i + 1}`));
}

function playersOf(document: unknown): unknown[] {
  if (Array.isArray(document)) return document;
  if (isObject(document)) {
    const extra = Object.keys(document).filter((key) => key !== 'players');
    if (extra.length > 0) throw new ImportSourceError(`unknown key${extra.length > 1 ? 's' : ''} ${extra.map(quote).join(', ')} beside "players"`);
    if (Array.isArray(document.players)) return document.players;
  }
  throw new ImportSourceError('the file must hold an array of players, or an object { "players": [...] }');
}

function toRow(value: unknown, where: string): ImportRow {
  if (!isObject(value)) throw new ImportSourceError(`${where} is ${describe(value)}, not an object`);
  const unknown = Object.keys(value).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) {
    throw new ImportSourceError(`${where}: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map(quote).join(', ')}; the keys are ${[...KEYS].join(', ')}`);
  }
  const row: ImportRow = { where, name: '', hash: '' };
  for (const key of STRING_KEYS) {
    const field = value[key];
    // null stands for "not given", as a database export writes it.
    if (field === undefined || field === null) {
      if (REQUIRED.has(key)) throw new ImportSourceError(`${where}: no "${key}"`);
    } else if (typeof field !== 'string') {
      throw new ImportSourceError(`${where}: "${key}" is ${describe(field)}, not a string`);
    } else if (field !== '' || REQUIRED.has(key)) {
      row[key] = field; // an empty optional string is "not given", as in the csv format
    }
  }
  const isAlex = value.isAlex;
  if (typeof isAlex === 'boolean') row.isAlex = isAlex;
  else if (isAlex !== undefined && isAlex !== null) throw new ImportSourceError(`${where}: "isAlex" is ${describe(isAlex)}, not true or false`);
  return row;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return `the string ${quote(value)}`;
  return `${typeof value === 'number' ? 'the number' : ''} ${String(value)}`.trim();
}
