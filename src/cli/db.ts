// `db copy --from SOURCE --to TARGET [--replace]`: the command line of the copy between databases
// (src/postgres/copy.ts), and the report it ends with.
import type { Writable } from 'node:stream';
import { copyDatabase, type TableCount } from '../postgres/copy.ts';
import { dbLabel } from '../postgres/url.ts';
import { isPostgresUrl } from '../postgres/url.ts';
import { quote } from '../service/errors.ts';
import { MEMORY_DB } from '../memory/store.ts';
import { parseCommandLine, UsageError } from './usage.ts';

export const DB_HELP = `Moving a community between databases:
  db copy --from SOURCE --to TARGET [--replace]
      copies everything (players with their password hashes and locks, tokens, joins, invites,
      reset codes, hosted textures, failed-login counts) from SOURCE to TARGET, each a SQLite
      file or a postgres:// URL, one of them a URL. The source is read as of one moment and not
      changed; the target is written in one transaction, a new file created. A target that
      holds anything is refused unless --replace, which deletes all of it first. Ends with each
      table's rows, counted in both; exits 1 when they differ.`;

const OPTIONS = { from: { type: 'string' }, to: { type: 'string' }, replace: { type: 'boolean' } } as const;

/** One line a table: its name and its rows in the target, and the source's count too where that differs. */
function report(counts: TableCount[]): string {
  const width = Math.max(...counts.map(({ table }) => table.length));
  return counts.map(({ table, source, target }) => `  ${table.padEnd(width)}  ${target}${source === target ? '' : ` (source: ${source})`}`).join('\n');
}

/** Runs `db copy ...`; its exit status. Progress goes to standard error, the report to standard output. */
/** Where the command writes, and the environment it reads (the database password's variables). */
interface DbIo {
  stdout: Writable;
  stderr: Writable;
  env: Record<string, string | undefined>;
}

export async function runDbCommand(argv: string[], io: DbIo): Promise<number> {
  const { values, positionals } = parseCommandLine(argv, OPTIONS, ['COMMAND']);
  if (positionals[0] !== 'copy') throw new UsageError(`unknown command ${quote(`db ${positionals[0]}`)}: db has one command, copy`);
  const { from, to, replace = false } = values;
  if (typeof from !== 'string' || typeof to !== 'string') throw new UsageError('db copy needs --from SOURCE and --to TARGET');
  if (from === MEMORY_DB || to === MEMORY_DB) throw new UsageError(`${MEMORY_DB} holds nothing another process could copy`);
  // Two SQLite files: `backup` copies one, consistently and with less work.
  if (!isPostgresUrl(from) && !isPostgresUrl(to)) throw new UsageError('db copy needs a postgres:// URL for --from or --to; to copy a SQLite file to another, use backup FILE');
  if (from === to) throw new UsageError('--from and --to name the same database');

  const counts = await copyDatabase(from, to, { replace: replace === true, env: io.env, progress: (line) => io.stderr.write(`${line}\n`) });
  io.stdout.write(`Copied ${dbLabel(from)} to ${dbLabel(to)}:\n${report(counts)}\n`);
  const differ = counts.filter(({ source, target }) => source !== target).map(({ table }) => table);
  if (differ.length === 0) return 0;
  // The source was read as of one moment; only a writer on the target could have changed it since.
  io.stderr.write(`mcauth: the target's rows differ from the source's in ${differ.join(', ')}: did something write to the target meanwhile?\n`);
  return 1;
}
