// A PostgreSQL URL as --db takes it: told from a SQLite path, and shown with its password masked
// (in a log line, an error, --print-config): a secret is never printed.

/** postgres:// or postgresql://, as libpq takes them; anything else is a SQLite path. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

const MASK = '********';

/**
 * The URL with its password masked, in the user part and as a `password` parameter: what a log
 * line, an error or --print-config shows. The user part ends at the last "@" before the query, so
 * a password holding "@" or "/" is masked whole.
 */
export function maskDbUrl(db: string): string {
  if (!isPostgresUrl(db)) return db;
  const from = db.indexOf('://') + 3;
  const query = db.indexOf('?');
  const at = db.lastIndexOf('@', query === -1 ? db.length : query);
  const colon = db.indexOf(':', from);
  const masked = at > from && colon !== -1 && colon < at ? `${db.slice(0, colon + 1)}${MASK}${db.slice(at)}` : db;
  return masked.replace(/([?&]password=)[^&]*/gi, `$1${MASK}`);
}
