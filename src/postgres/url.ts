// A PostgreSQL URL as --db takes it: told from a SQLite path, and shown with its password masked
// (in a log line, an error, --print-config): a secret is never printed.
import { resolve } from 'node:path';

/** postgres:// or postgresql://, as libpq takes them; anything else is a SQLite path. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

const MASK = '********';

/**
 * The URL with its password masked, in the user part and as a `password` or `sslpassword`
 * parameter: what a log line, an error or --print-config shows. The user part is taken to end
 * at the last "@" of the whole URL, so a password holding "@", "/" or "?" is masked whole (an
 * "@" in a parameter masks more than the password, never less).
 */
export function maskDbUrl(db: string): string {
  if (!isPostgresUrl(db)) return db;
  const from = db.indexOf('://') + 3;
  const at = db.lastIndexOf('@');
  const colon = db.indexOf(':', from);
  const masked = at > from && colon !== -1 && colon < at ? `${db.slice(0, colon + 1)}${MASK}${db.slice(at)}` : db;
  return masked.replace(/([?&](?:ssl)?password=)[^&]*/gi, `$1${MASK}`);
}

/** How a database is named in what the program says: a file by its absolute path, a PostgreSQL URL with its password masked. */
export const dbLabel = (db: string): string => (isPostgresUrl(db) ? maskDbUrl(db) : resolve(db));

/**
 * The URL with its list of hosts (libpq's `h1:5432,h2:5432`) turned by `turns`: the host that was
 * first is last after one turn. A pool replaced because its host went silent (see connect.ts)
 * then tries the next host first, not the silent one again for each of its connections. The hosts
 * begin after the user part (up to the last "@" before any "?") and end at "/", "?" or "#"; what
 * does not read as a list of hosts (a password as typed holding those) is left as it is.
 */
export function turnHosts(url: string, turns: number): string {
  const query = url.indexOf('?');
  const from = Math.max(url.indexOf('://') + 3, url.lastIndexOf('@', query === -1 ? url.length : query) + 1);
  const end = url.slice(from).search(/[/?#]|$/) + from;
  const hosts = url.slice(from, end).split(',');
  const k = turns % hosts.length;
  if (k === 0 || !hosts.every((h) => /^(\[[\da-f:.]+\]|[\w.-]+)(:\d+)?$/i.test(h))) return url;
  // A host without a port takes the first host's (so the driver reads the list): turned, each
  // is written out with the port it had. When the first host has none (the default, or PGPORT)
  // while another has one, that port cannot be written here, and the list stays as it is.
  const port = /:(\d+)$/.exec(hosts[0]!)?.[1];
  if (port === undefined && hosts.some((h) => /:\d+$/.test(h))) return url;
  const ported = hosts.map((h) => (port === undefined || /:\d+$/.test(h) ? h : `${h}:${port}`));
  return url.slice(0, from) + [...ported.slice(k), ...ported.slice(0, k)].join(',') + url.slice(end);
}
