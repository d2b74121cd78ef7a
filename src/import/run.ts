// `import SOURCE ...`: players of another system (AuthMe, drasl, a web cabinet's export) added
// with the password hashes that system keeps, and a report of what was taken and what was not.
import { resolve } from 'node:path';
import type { Service } from '../service/service.ts';
import type { CreateResult } from '../store/store.ts';
import type { Recognized } from './hashes/formats.ts';
import { toPlayer, type RowField } from './players.ts';
import { guessFormat, readSource, type ImportRow, type SourceFormat } from './read/rows.ts';

/** A source read whole: its rows, and the format they were read as. */
export interface Source {
  path: string;
  format: SourceFormat;
  rows: ImportRow[];
}

/** Reads `path` as `format`, or as the format guessed from the file; refuses a file it cannot read. */
export function readPlayers(path: string, format?: SourceFormat): Source {
  const as = format ?? guessFormat(path);
  return { path, format: as, rows: readSource(path, as) };
}

export interface ImportOptions {
  /** Write nothing; report the same. */
  dryRun: boolean;
  /** A name or UUID taken: skip that player, or stop with nothing written. */
  onConflict: 'skip' | 'fail';
  allowHttpTextures: boolean;
}

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

/** `count` and `word`, plural unless there is one: "1 player", "2 players". */
const counted = (count: number, word: string): string => `${n(count)} ${word}${count === 1 ? '' : 's'}`;

/** Counts by key, in the order first seen, as "key: count" lines. */
function tally(keys: string[]): string[] {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return [...counts].map(([key, count]) => `  ${key}: ${n(count)}`);
}

interface Outcome {
  row: ImportRow;
  hash?: Recognized;
  /** Why it was not imported; none: it was (or would be). */
  why?: string;
  problem?: string;
}

function report({ path, format }: Source, outcomes: Outcome[], wrote: boolean, dryRun: boolean): string {
  const taken = outcomes.filter((o) => o.why === undefined);
  const skipped = outcomes.filter((o) => o.why !== undefined);
  const lines = [
    `Read ${counted(outcomes.length, 'player')} from ${resolve(path)} (${format})`,
    `${wrote ? 'Imported' : 'Would import'}: ${n(taken.length)}`,
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
    lines.push(`Skipped ${skipped.length === 1 ? 'player' : 'players'}${skipped.length > MAX_LISTED_ROWS ? ` (the first ${MAX_LISTED_ROWS})` : ''}:`);
    for (const o of skipped.slice(0, MAX_LISTED_ROWS)) lines.push(`  ${o.row.where} ${JSON.stringify(o.row.name)}: ${o.problem ?? o.why}`);
  }
  if (dryRun) lines.push('Dry run: nothing was written');
  return lines.join('\n');
}

/**
 * Checks each player of `source`, stores those that pass in one transaction, and returns the
 * report. With onConflict 'fail' and a name or UUID taken, nothing is written and the report is
 * thrown as the error's message.
 */
export async function importPlayers(service: Service, source: Source, options: ImportOptions): Promise<string> {
  const { dryRun, onConflict } = options;
  const createdAt = Date.now();
  const outcomes: Outcome[] = [];
  const users = [];
  for (const row of source.rows) {
    const player = toPlayer(row, options.allowHttpTextures, createdAt);
    if ('field' in player) {
      outcomes.push({ row, why: WHY[player.field], problem: player.problem });
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
  const stopped = onConflict === 'fail' && results.some((r) => r !== 'created');
  const said = report(source, outcomes, !dryRun && !stopped, dryRun);
  if (stopped) {
    throw new Error(`${said}\n${dryRun ? 'With --on-conflict fail, nothing would be' : 'Stopped by --on-conflict fail: nothing was'} imported, as a name or UUID is taken`);
  }
  return said;
}
