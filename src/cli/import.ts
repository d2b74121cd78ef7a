// `import SOURCE ...`: the command line of the importer (src/import/).
import { importPlayers, readPlayers } from '../import/run.ts';
import { SOURCE_FORMATS, type SourceFormat } from '../import/read/rows.ts';
import { quote } from '../service/errors.ts';
import { DB_OPTIONS } from './options.ts';
import { parseCommandLine, UsageError } from './usage.ts';
import type { UserCommandLine } from './user.ts';

export const IMPORT_HELP = `Importing players (takes --db PATH, or MCAUTH_DB, or --config FILE):
  import SOURCE [--format authme|drasl|csv|json] [--dry-run] [--on-conflict skip|fail]
      adds the players of another system with the password hashes it keeps: each logs in with
      the old password, which is then hashed anew with scrypt. The format is guessed from the
      file when not given. A player whose name (in any case) or UUID is taken is skipped, or
      with --on-conflict fail stops the import with nothing written. --dry-run writes nothing
      and prints the same report.`;

const OPTIONS = { ...DB_OPTIONS, format: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'on-conflict': { type: 'string' } } as const;

/**
 * Parses `import SOURCE ...`, as parseUserCommand does `user ...`, and reads the source whole:
 * a file that cannot be read is refused before any database is opened. An import may create the
 * database (it can be the first thing done on a new host); a dry run does not.
 */
export function parseImportCommand(argv: string[]): UserCommandLine {
  const line = parseCommandLine(argv, OPTIONS, ['SOURCE']);
  const { format, 'dry-run': dryRun = false, 'on-conflict': onConflict = 'skip' } = line.values;
  if (format !== undefined && !SOURCE_FORMATS.includes(format as SourceFormat)) {
    throw new UsageError(`unknown --format ${quote(String(format))}: use ${SOURCE_FORMATS.join(', ')}`);
  }
  if (onConflict !== 'skip' && onConflict !== 'fail') throw new UsageError(`unknown --on-conflict ${quote(String(onConflict))}: use skip or fail`);
  const source = readPlayers(line.positionals[0]!, format as SourceFormat | undefined);
  return {
    line,
    creates: dryRun !== true,
    run: (service, { settings }) => importPlayers(service, source, { dryRun: dryRun === true, onConflict, allowHttpTextures: settings.allowHttpTextures }),
  };
}
