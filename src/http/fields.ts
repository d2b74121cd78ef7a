// Reading the expected fields of a parsed body, refusing any other shape with a 400.
import type { IncomingMessage } from 'node:http';
import { quote } from '../service/errors.ts';
import { readJson } from './body.ts';
import { HttpError } from './envelope.ts';
import { queryOf } from './router.ts';

export type JsonObject = Record<string, unknown>;

export function requireObject(body: unknown): JsonObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Request body must be a JSON object');
  }
  return body as JsonObject;
}

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

/** The field `name` as a string. Only own properties count, so `__proto__` tricks read nothing (and find the field missing). */
export function stringField(body: JsonObject, name: string): string {
  const value = Object.hasOwn(body, name) ? body[name] : undefined;
  // JSON holds no undefined, so undefined here is an absent field.
  if (typeof value !== 'string') throw new HttpError(400, `Field "${name}" ${value === undefined ? 'is missing' : 'must be a string'}`);
  return value;
}

/** The fields `names` of an object body, in order, each a string. */
export function stringFields<const N extends string[]>(body: unknown, ...names: N): { [K in keyof N]: string } {
  const object = requireObject(body);
  return names.map((name) => stringField(object, name)) as { [K in keyof N]: string };
}

/**
 * `/profiles` takes a bare array (as a LauncherServer sends it) or `{"usernames": [...]}`. Its
 * entries are checked by the service: one that is not a name is not found, not a refusal.
 */
export function nameList(body: unknown): unknown[] {
  if (Array.isArray(body)) return body;
  const list = typeof body === 'object' && body !== null && Object.hasOwn(body, 'usernames') ? (body as JsonObject).usernames : undefined;
  if (!Array.isArray(list)) throw new HttpError(400, 'Request body must be an array of names or {"usernames": [...]}');
  return list;
}
