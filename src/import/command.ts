// `import SOURCE ...`: players of another system (AuthMe, drasl, a web cabinet's export) added
// with the password hashes that system keeps, and a report of what was taken and what was not.
import { resolve } from 'node:path';
import { DB_OPTIONS } from '../cli/options.ts';
import { parseCommandLine, UsageError, type CommandLine } from '../cli/usage.ts';
import type { UserCommandLine, UserIo } from '../cli/user.ts';
import type { Service } from '../service/service.ts';
import type { CreateResult } from '../store/store.ts';
import { toPlayer, type Refused, type RowField } from './players.ts';
import { guessFormat, readSource, SOURCE_FORMATS, type ImportRow, type SourceFormat } from './read/rows.ts';
import type { Recognized } from './hashes/formats.ts';

export const IMPORT_HELP = `Importing players (takes --db PATH, or MCAUTH_DB, or --config FILE):
  import SOURCE [--format authme|drasl|csv|json] [--dry-run] [--on-conflict skip|fail]
      adds the players of another system with the password hashes it keeps: each logs in with
      the old password, which is then hashed anew with scrypt. The format is guessed from the
      file when not given. A player whose name (in any case) or UUID is taken is skipped, or
      with --on-conflict fail stops the import with nothing written. --dry-run writes nothing
      and prints the same report.`;

/** The words of the report for why a row was not imported. */
const WHY: Record<Exclude<CreateResult, 'created'> | RowField, string> = {
  name_taken: 'name taken (in any case)',
  id_taken: 'UUID taken',
  invite_invalid: 'invite not valid', // never: an import takes no invite
  name: 'invalid name',
  uuid: 'invalid UUID',
  hash: 'unknown hash format',
  skinUrl: 'invalid skin URL',
  capeUrl: 'invalid cape URL',
};

/** Skipped rows listed one by one in the report, after the counts. */
const MAX_LISTED_ROWS = 20;

const n = (count: number): string => count.toLocaleString('en');

/** Counts by key, in the order first seen, as "key: count" lines. */
function tally(keys: string[]): string[] {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts].map(([key, count]) => `  ${key}: ${n(count)}`);
}

interface Outcome {
  row: ImportRow;
  hash?: Recognized;
  /** Why it was not imported; none: it was (or, in a dry run, would be). */
  why?: string;
  problem?: string;
}

function report(source: string, format: SourceFormat, outcomes: Outcome[], dryRun: boolean): string {
  const taken = outcomes.filter((o) => o.why === undefined);
  const skipped = outcomes.filter((o) => o.why !== undefined);
  const lines = [
    `Read ${n(outcomes.length)} players from ${resolve(source)} (${format})`,
    `${dryRun ? 'Would import' : 'Imported'}: ${n(taken.length)}`,
    ...tally(taken.map((o) => `hash ${o.hash!.format}`)),
    `Skipped: ${n(skipped.length)}`,
    ...tally(skipped.map((o) => o.why!)),
  ];
  const unchecked = taken.filter((o) => o.hash!.needs === 'argon2').length;
  if (unchecked > 0) {
    const who = unchecked === 1 ? '1 player has an argon2 hash' : `${n(unchecked)} players have argon2 hashes`;
    lines.push(`Warning: ${who}, which this runtime cannot check (crypto.argon2 needs Node 24.7 or later): they cannot log in until the server runs on such a Node`);
  }
  if (skipped.length > 0) {
    lines.push(`Skipped players${skipped.length > MAX_LISTED_ROWS ? ` (the first ${MAX_LISTED_ROWS})` : ''}:`);
    for (const o of skipped.slice(0, MAX_LISTED_ROWS)) lines.push(`  ${o.row.where} ${JSON.stringify(o.row.name)}: ${o.problem ?? o.why}`);
  }
  if (dryRun) lines.push('Dry run: nothing was written');
  return lines.join('\n');
}

async function run(service: Service, { values, positionals: [source] }: CommandLine, { settings }: UserIo): Promise<string> {
  const given = values.format;
  if (given !== undefined && !SOURCE_FORMATS.includes(given as SourceFormat)) throw new UsageError(`--format must be one of ${SOURCE_FORMATS.join(', ')}`);
  const onConflict = values['on-conflict'] ?? 'skip';
  if (onConflict !== 'skip' && onConflict !== 'fail') throw new UsageError('--on-conflict must be skip or fail');
  const dryRun = values['dry-run'] === true;
  const format = (given as SourceFormat | undefined) ?? guessFormat(source!);
  const createdAt = Date.now();
  const outcomes: Outcome[] = [];
  const users = [];
  for (const row of readSource(source!, format)) {
    const player = toPlayer(row, settings.allowHttpTextures, createdAt);
    if ('field' in player) {
      const refused: Refused = player;
      outcomes.push({ row, why: WHY[refused.field], problem: refused.problem });
    } else {
      outcomes.push({ row, hash: player.hash });
      users.push(player.user);
    }
  }
  const stored = outcomes.filter((o) => o.why === undefined);
  const results = await service.importUsers(users, dryRun ? 'never' : onConflict === 'fail' ? 'unless-taken' : 'always');
  results.forEach((result, i) => {
    if (result !== 'created') stored[i]!.why = WHY[result];
  });
  const said = report(source!, format, outcomes, dryRun);
  if (onConflict === 'fail' && results.some((r) => r !== 'created')) {
    throw new Error(`${said}\n${dryRun ? 'With --on-conflict fail, nothing would be' : 'Stopped by --on-conflict fail: nothing was'} imported, as a name or UUID is taken`);
  }
  return said;
}

/**
 * Parses `import SOURCE ...`, as parseUserCommand does `user ...`. An import may create the
 * database (it can be the first thing done on a new host); a dry run does not.
 */
export function parseImportCommand(argv: string[]): UserCommandLine {
  const options = { ...DB_OPTIONS, format: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'on-conflict': { type: 'string' } } as const;
  const line = parseCommandLine(argv, options, ['SOURCE']);
  return { line, creates: line.values['dry-run'] !== true, run: (service, io) => run(service, line, io) };
}
