// What the readers of `import SOURCE` hand on: one row per player, as the source holds it.
// Checking names, UUIDs and hashes is the caller's work; a reader only refuses a file it cannot read.

export type SourceFormat = 'authme' | 'drasl' | 'csv' | 'json';

/** The formats in the order --format lists them. */
export const SOURCE_FORMATS: readonly SourceFormat[] = ['authme', 'drasl', 'csv', 'json'];

export interface ImportRow {
  /** Where the row came from, for the report: "line 12", "row 12", "player 3f2a…". */
  where: string;
  name: string;
  /** The password hash exactly as the source holds it; drasl's salt and hash are joined as `drasl-scrypt$SALT$HASH` (base64). */
  hash: string;
  /** As the source wrote it. */
  uuid?: string;
  skinUrl?: string;
  capeUrl?: string;
  isAlex?: boolean;
}

/** A source file that cannot be read as the format asked for; the message names the file and the place. */
export class ImportSourceError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ImportSourceError';
  }
}

/** At most this much of a file's text is quoted back in a message, so an error stays one readable line. */
const MAX_QUOTED_CHARS = 64;

/** `text` in double quotes, cut to MAX_QUOTED_CHARS characters (marked with …). */
export function quote(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text);
}
