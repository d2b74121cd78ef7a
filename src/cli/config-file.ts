// --config FILE: the server's settings as one JSON object, keyed by the options' camelCase names.
import { quote } from '../service/errors.ts';
import { readFileSync } from 'node:fs';
import { jsonShapeProblem } from '../json-shape.ts';
import { SERVE_OPTIONS, type ConfigFile } from './options.ts';
import { UsageError } from './usage.ts';

const KEYS = new Set<string>(SERVE_OPTIONS.map((o) => o.key));

/** A key as written without case, dashes and underscores: public-url, PUBLIC_URL and publicurl all mean publicUrl. */
const loose = (key: string): string => key.toLowerCase().replaceAll(/[-_]/g, '');

/** The hint for an unknown key: the known key it is a spelling of, else how keys are named. */
function keyHint(key: string): string {
  const meant = [...KEYS].find((known) => loose(known) === loose(key));
  return meant === undefined ? "keys are the options' names in camelCase, such as joinTtl" : `did you mean ${quote(meant)}?`;
}

/** Reads and checks the file: JSON, one object, only known keys (values are checked with the flags'). */
export function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // The code alone: the runtime's message repeats the whole path.
    throw new Error(`cannot read the config file ${quote(path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  // A byte-order mark, which some editors write, is no part of the JSON.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  const problem = jsonShapeProblem(text);
  if (problem !== undefined) throw new UsageError(`the config file ${quote(path)} ${problem}`);
  let values: unknown;
  try {
    values = JSON.parse(text);
  } catch (err) {
    // Only where: the runtime's message quotes the text around the error, which may be a secret.
    const at = /position (\d+)/.exec((err as Error).message);
    const where = at ? ` (at line ${text.slice(0, Number(at[1])).split('\n').length})` : '';
    throw new UsageError(`the config file ${quote(path)} is not valid JSON${where}`);
  }
  if (typeof values !== 'object' || values === null || Array.isArray(values)) {
    throw new UsageError(`the config file ${quote(path)} must hold one JSON object`);
  }
  for (const key of Object.keys(values)) {
    if (!KEYS.has(key)) throw new UsageError(`${path}: unknown key ${quote(key)} (${keyHint(key)})`);
  }
  return { path, values: values as Record<string, unknown> };
}
