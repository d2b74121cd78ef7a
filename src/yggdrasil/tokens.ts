// The Yggdrasil API's access tokens carry the clientToken they were issued with, after the random
// part: a refresh that sends none must still answer with it, and the store keeps only digests.
// The tail cannot be forged: the token is looked up by the digest of the whole of it.
import { createHash, timingSafeEqual } from 'node:crypto';

const SEPARATOR = '.';

/** What follows the random part of a token issued to `clientToken`. */
export const tokenTail = (clientToken: string): string => SEPARATOR + Buffer.from(clientToken).toString('base64url');

/** The clientToken a token was issued with; undefined for a token of the JSON API, which has none. */
export function clientTokenOf(accessToken: string): string | undefined {
  const at = accessToken.indexOf(SEPARATOR);
  return at === -1 ? undefined : Buffer.from(accessToken.slice(at + 1), 'base64url').toString();
}

/** Whether a sent clientToken is the token's, compared in constant time (digests of equal length). */
export function sameClientToken(sent: string, held: string | undefined): boolean {
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return held !== undefined && timingSafeEqual(digest(sent), digest(held));
}
