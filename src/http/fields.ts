// Reading the expected fields of a parsed body, refusing any other shape with a 400.
import { HttpError } from './envelope.ts';

export type JsonObject = Record<string, unknown>;

export function requireObject(body: unknown): JsonObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Request body must be a JSON object');
  }
  return body as JsonObject;
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
