// Command-line parsing on node:util's parseArgs, with refusals that say what to do instead.
import { parseArgs } from 'node:util';
import { quote } from '../service/errors.ts';

/** A malformed command line: printed with a pointer to --help, exit status 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type OptionTypes = Record<string, { type: 'string' | 'boolean' }>;

export interface CommandLine {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parses `argv` against `options`, allowing exactly `positionals` names as positional arguments. */
export function parseCommandLine(argv: string[], options: OptionTypes, positionals: string[]): CommandLine {
  let parsed: CommandLine;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true }) as CommandLine;
  } catch (err) {
    const text = (err as Error).message;
    const unknown = /Unknown option '([^']+)'/.exec(text);
    if (unknown) throw new UsageError(`unknown option ${quote(unknown[1]!)}`);
    const missing = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument missing/.exec(text);
    throw new UsageError(missing ? `${missing[1]} needs a value` : text.split('\n')[0]!);
  }
  if (parsed.positionals.length !== positionals.length) {
    const expected = positionals.length === 0 ? 'no arguments' : positionals.join(' ');
    throw new UsageError(`expected ${expected}, got ${parsed.positionals.length === 0 ? 'none' : parsed.positionals.map(quote).join(' ')}`);
  }
  return parsed;
}
