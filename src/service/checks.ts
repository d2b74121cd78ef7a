// The rules every input of the service is held to, in one place.
import { NAME_PATTERN } from '../limits.ts';
import { parseUuid } from '../uuid.ts';
import { invalid } from './errors.ts';

/**
 * True for names that can exist. Every look-up by name goes through this first: a store folds
 * case with toLowerCase(), which maps some non-ASCII letters (the Kelvin sign U+212A) onto ASCII
 * ones, so a name outside the rule could otherwise find a player.
 */
export function isPlayerName(name: string): boolean {
  return NAME_PATTERN.test(name);
}

export function requireNewName(name: string): void {
  if (!isPlayerName(name)) throw invalid(`Invalid name "${name}": use 3 to 16 letters, digits and _`);
}

export function requireNewPassword(password: string): void {
  if (password === '') throw invalid('The password must not be empty');
}

/** A malformed userUUID is a malformed request (an error envelope, not `false`). */
export function requireUuid(text: string): string {
  const id = parseUuid(text);
  if (id === undefined) throw invalid('Field "userUUID" is not a valid UUID');
  return id;
}

export function requireServerId(serverId: string): void {
  if (serverId === '') throw invalid('Field "serverID" must not be empty');
}

export function requireUrl(url: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:') throw invalid(`Invalid URL "${url}": use an http:// or https:// address`);
}
