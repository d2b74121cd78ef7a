// The rules every input of the service is held to, in one place.
import { MAX_PASSWORD_BYTES, MAX_SERVER_ID_CHARS, MAX_TOKEN_CHARS, NAME_PATTERN } from '../limits.ts';
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

/** A login or username field: a name that cannot exist is a malformed request. */
export function requirePlayerName(field: string, name: string): void {
  if (!isPlayerName(name)) throw invalid(`Field "${field}" is not a valid player name`);
}

const tooLong = (password: string): boolean => Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES;

/**
 * Lone surrogates cannot be encoded: they would become U+FFFD, so "\ud800" and "\udfff" would be
 * one password (or one serverID). Refused instead.
 */
function requireWellFormed(field: string, text: string): void {
  if (!text.isWellFormed()) throw invalid(`Field "${field}" is not well-formed Unicode`);
}

export function requirePasswordSize(password: string): void {
  requireWellFormed('password', password);
  if (tooLong(password)) throw invalid(`Field "password" is longer than ${MAX_PASSWORD_BYTES} bytes`);
}

export function requireTokenSize(token: string): void {
  if (token.length > MAX_TOKEN_CHARS) throw invalid(`Field "accessToken" is longer than ${MAX_TOKEN_CHARS} characters`);
}

export function requireNewName(name: string): void {
  if (!isPlayerName(name)) throw invalid(`Invalid name "${name}": use 3 to 16 letters, digits and _`);
}

export function requireNewPassword(password: string): void {
  if (password === '') throw invalid('The password must not be empty');
  if (!password.isWellFormed()) throw invalid('The password is not well-formed Unicode');
  if (tooLong(password)) throw invalid(`The password must be at most ${MAX_PASSWORD_BYTES} bytes`);
}

/** A malformed userUUID is a malformed request (an error envelope, not `false`). */
export function requireUuid(text: string): string {
  const id = parseUuid(text);
  if (id === undefined) throw invalid('Field "userUUID" is not a valid UUID');
  return id;
}

export function requireServerId(serverId: string): void {
  if (serverId === '') throw invalid('Field "serverID" must not be empty');
  requireWellFormed('serverID', serverId);
  if (serverId.length > MAX_SERVER_ID_CHARS) throw invalid(`Field "serverID" is longer than ${MAX_SERVER_ID_CHARS} characters`);
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
