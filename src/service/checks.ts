// The rules every input of the service is held to, in one place.
import { MAX_PASSWORD_BYTES, MAX_SERVER_ID_CHARS, MAX_TEXTURE_URL_CHARS, MAX_TOKEN_CHARS, NAME_PATTERN } from '../limits.ts';
import { parseUuid } from '../uuid.ts';
import { invalid, quote } from './errors.ts';

/**
 * True for names that can exist. Every look-up by name goes through this first: a store folds
 * case with toLowerCase(), which maps some non-ASCII letters (the Kelvin sign U+212A) onto ASCII
 * ones, so a name outside the rule could otherwise find a player.
 */
export const isPlayerName = (name: string): boolean => NAME_PATTERN.test(name);

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

export function requirePasswordSize(password: string, field = 'password'): void {
  requireWellFormed(field, password);
  if (tooLong(password)) throw invalid(`Field "${field}" is longer than ${MAX_PASSWORD_BYTES} bytes`);
}

export function requireTokenSize(token: string): void {
  if (token.length > MAX_TOKEN_CHARS) throw invalid(`Field "accessToken" is longer than ${MAX_TOKEN_CHARS} characters`);
}

export function requireNewName(name: string): void {
  if (!isPlayerName(name)) throw invalid(`Invalid name ${quote(name)}: use 3 to 16 letters, digits and _`);
}

/**
 * A password being set (not one logging in: an existing shorter one still works). Its length
 * is counted in code points, as a person counts characters: an emoji is one, not two.
 */
export function requireNewPassword(password: string, minChars: number): void {
  if (password === '') throw invalid('The password must not be empty');
  if (!password.isWellFormed()) throw invalid('The password is not well-formed Unicode');
  if ([...password].length < minChars) throw invalid(`The password must be at least ${minChars} characters`);
  if (tooLong(password)) throw invalid(`The password must be at most ${MAX_PASSWORD_BYTES} bytes`);
}

export function requireUuid(text: string): string {
  const id = parseUuid(text);
  if (id === undefined) throw invalid('Field "userUUID" is not a valid UUID');
  return id;
}

/** Text a store keeps or looks up: a control character (NUL above all, which PostgreSQL refuses) has no place in it. */
function requireNoControls(what: string, text: string): void {
  if (/\p{Cc}/u.test(text)) throw invalid(`${what} must not hold control characters`);
}

export function requireServerId(serverId: string): void {
  if (serverId === '') throw invalid('Field "serverID" must not be empty');
  requireWellFormed('serverID', serverId);
  requireNoControls('Field "serverID"', serverId);
  if (serverId.length > MAX_SERVER_ID_CHARS) throw invalid(`Field "serverID" is longer than ${MAX_SERVER_ID_CHARS} characters`);
}

/**
 * An external skin or cape address: https (plain http only when allowed: a game fetching over
 * http can be fed another image on the way), bounded, and without a user or password part
 * (a credential in a URL every game client is handed would be public).
 */
export function requireUrl(url: string, allowHttp: boolean): void {
  if (url.length > MAX_TEXTURE_URL_CHARS) throw invalid(`A texture URL must be at most ${MAX_TEXTURE_URL_CHARS} characters`);
  requireNoControls('A texture URL', url);
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  // Written out with `//` (`https:host/a.png` parses too): the Yggdrasil API reads the host from what is kept.
  const ok = /^https?:\/\//i.test(url) && (parsed?.protocol === 'https:' || (allowHttp && parsed?.protocol === 'http:'));
  if (!ok) {
    const schemes = allowHttp ? ' (or http://)' : ' (http:// only with --allow-http-textures)';
    throw invalid(`Invalid URL ${quote(url)}: use an https:// address${schemes}`);
  }
  if (parsed!.username !== '' || parsed!.password !== '') throw invalid(`Invalid URL ${quote(url)}: a texture URL must not carry a user or password`);
}
