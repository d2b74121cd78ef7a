// What the route groups capabilities add (admin API, account and admin pages, texture uploads)
// share: bodies and query strings holding only the fields a call takes, and times in answers.
// The five endpoints take neither: a LauncherServer sends fields of its own beside theirs.
import type { IncomingMessage } from 'node:http';
import { readJson } from '../http/body.ts';
import { HttpError } from '../http/envelope.ts';
import { requireObject, type JsonObject } from '../http/fields.ts';
import { queryOf } from '../http/router.ts';
import { quote } from '../service/errors.ts';

/** Refuses the first of `keys` that is not `known`: a typo must be refused, not silently ignored into a different result. */
function refuseUnknown(what: string, keys: Iterable<string>, known: string[]): void {
  const unknown = [...keys].find((key) => !known.includes(key));
  if (unknown !== undefined) throw new HttpError(400, `Unknown ${what} ${quote(unknown)}: this call takes ${known.join(', ')}`);
}

/** The JSON object of the body, holding no field but `known` (`offlineUUID` for `offlineUuid` is refused). */
export async function jsonBody(req: IncomingMessage, known: string[]): Promise<JsonObject> {
  const body = requireObject(await readJson(req));
  refuseUnknown('field', Object.keys(body), known);
  return body;
}

/** The query string's parameters, holding none but `known` (`?modle=slim` is refused). */
export function knownQuery(req: IncomingMessage, known: string[]): URLSearchParams {
  const query = queryOf(req);
  refuseUnknown('query parameter', query.keys(), known);
  return query;
}

/** A time in an answer: ISO 8601, or null for none. */
export const isoTime = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
